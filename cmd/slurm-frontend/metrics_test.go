package main

import (
	crand "crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/bench"
	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// The metrics endpoint's RPC counters are sdiag's: after a few squeue and
// sinfo calls, the counts by message type and by user read the same in
// both, for each release's sdiag.
func TestMetricsAgreeWithSdiag(t *testing.T) {
	mport := freePort(t)
	f := newFrontend(t, batchCluster, "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport))
	r := f.as(t).user("slurm")
	for i := 0; i < 3; i++ {
		r.mustRun("24.11", "squeue")
	}
	r.mustRun("22.05", "sinfo")
	r.mustRun("26.05", "sinfo")
	for _, rel := range releases {
		out := f.mustRun(rel, "sdiag")
		text := scrape(t, mport)
		sdiagCount := func(re string) int64 {
			m := regexp.MustCompile(re).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("%s sdiag: no %s in\n%s", rel, re, out)
			}
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return n
		}
		for _, c := range []struct{ sdiag, metric string }{
			{`REQUEST_JOB_INFO\s+\(\s*2003\)\s+count:(\d+)`, `slurm_frontend_rpc_requests_total\{type="REQUEST_JOB_INFO"\}`},
			{`REQUEST_PARTITION_INFO\s+\(\s*2009\)\s+count:(\d+)`, `slurm_frontend_rpc_requests_total\{type="REQUEST_PARTITION_INFO"\}`},
			{`(?m)^\s*slurm\s+\(\s*64030\)\s+count:(\d+)`, `slurm_frontend_rpc_user_requests_total\{user="slurm"\}`},
		} {
			want, got := sdiagCount(c.sdiag), metric(text, c.metric)
			if want == 0 || got != want {
				t.Errorf("%s: sdiag says %d, the metrics %d (%s)", rel, want, got, c.metric)
			}
		}
		if n := metric(text, `slurm_frontend_rpc_requests_total\{type="REQUEST_JOB_INFO"\}`); n != 3 {
			t.Errorf("%s: REQUEST_JOB_INFO counted %d, want 3", rel, n)
		}
	}
}

// sdiagTables parses sdiag's two RPC tables: counts by message type name
// and by user name.
func sdiagTables(out string) (byType, byUser map[string]int64) {
	byType, byUser = map[string]int64{}, map[string]int64{}
	row := regexp.MustCompile(`^\s*(\S+)\s+\(\s*\d+\)\s+count:(\d+)`)
	var cur map[string]int64
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, "statistics by message type"):
			cur = byType
		case strings.Contains(line, "statistics by user"):
			cur = byUser
		case strings.Contains(line, "Pending RPC statistics"):
			cur = nil
		}
		if m := row.FindStringSubmatch(line); m != nil && cur != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			cur[m[1]] = n
		}
	}
	return byType, byUser
}

// metricSum adds up every series matching re (a regexp of the series
// before the value, e.g. `name\{type="X",version="[^"]*"\}`).
func metricSum(text, re string) int64 {
	var sum int64
	for _, m := range regexp.MustCompile(`(?m)^`+re+` (\d+)$`).FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseInt(m[len(m)-1], 10, 64)
		sum += v
	}
	return sum
}

// TestMetricsMixedStorm: during a storm of stock clients of the three
// releases (sbatch, squeue, sinfo, scontrol, scancel, from two users at
// once) the endpoint's counters move from scrape to scrape, and after
// it every figure agrees with sdiag's: RPC counts by type and by user,
// jobs submitted; each count equals its latency histogram's and its
// replies by path; each release's requests are under its protocol
// version; the job gauges match squeue.
func TestMetricsMixedStorm(t *testing.T) {
	mport := freePort(t)
	f := newFrontend(t, batchCluster+"FrontendMetricsUserHistograms=yes\n", "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport))
	total := func(text string) int64 { return metricSum(text, `slurm_frontend_rpc_requests_total\{type="[^"]*"\}`) }
	stop := make(chan struct{})
	scrapes := make(chan int64, 1000)
	go func() {
		defer close(scrapes)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				// Often enough for a storm of about a second (the
				// clients' own start-up sets its length) to be seen
				// moving several times.
			}
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			scrapes <- total(string(b))
		}
	}()
	var wg sync.WaitGroup
	for _, rel := range releases {
		for _, user := range []string{"slurm", "nobody"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := f.as(t).user(user)
				for i := 0; i < 3; i++ {
					out := r.mustRun(rel, "sbatch", "--hold", "-o", "/dev/null", "--wrap", "true")
					id := strings.TrimSpace(strings.TrimPrefix(out, "Submitted batch job "))
					r.mustRun(rel, "squeue")
					r.mustRun(rel, "sinfo")
					r.mustRun(rel, "scontrol", "show", "job", id)
					if i < 2 {
						r.mustRun(rel, "scancel", id)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(stop)
	var seen []int64
	for n := range scrapes {
		seen = append(seen, n)
	}
	moves := 0
	for i := 1; i < len(seen); i++ {
		if seen[i] > seen[i-1] {
			moves++
		}
	}
	if moves < 3 {
		t.Errorf("the request counters moved in %d of %d scrapes during the storm: %v", moves, len(seen), seen)
	}
	t.Logf("RPCs counted at each scrape during the storm: %v", seen)
	// Quiet now: sdiag, then the scrape (which sees sdiag's own RPC too).
	for _, rel := range releases {
		out := f.mustRun(rel, "sdiag")
		text := scrape(t, mport)
		byType, byUser := sdiagTables(out)
		for name, want := range byType {
			if name == "REQUEST_STATS_INFO" {
				continue // this very sdiag may be counted after its reply
			}
			if got := metric(text, `slurm_frontend_rpc_requests_total\{type="`+name+`"\}`); got != want {
				t.Errorf("%s: %s: sdiag %d, metrics %d", rel, name, want, got)
			}
			if got := metric(text, `slurm_rpc_stats\{operation="`+name+`"\}`); got != want {
				t.Errorf("%s: %s: sdiag %d, the exporter's slurm_rpc_stats %d", rel, name, want, got)
			}
			hist := metricSum(text, `slurm_frontend_rpc_duration_seconds_count\{type="`+name+`",version="[^"]*"\}`)
			paths := metricSum(text, `slurm_frontend_rpc_replies_total\{type="`+name+`",path="[^"]*"\}`)
			if hist != want || paths != want {
				t.Errorf("%s: %s: sdiag %d, histogram count %d, replies by path %d", rel, name, want, hist, paths)
			}
		}
		for _, user := range []string{"slurm", "nobody"} {
			if got, want := metric(text, `slurm_frontend_rpc_user_requests_total\{user="`+user+`"\}`), byUser[user]; want == 0 || got != want {
				t.Errorf("%s: user %s: sdiag %d, metrics %d", rel, user, want, got)
			}
			hist := metric(text, `slurm_frontend_rpc_user_duration_seconds_count\{user="`+user+`"\}`)
			inf := metric(text, `slurm_frontend_rpc_user_duration_seconds_bucket\{user="`+user+`",le="\+Inf"\}`)
			if hist != byUser[user] || inf != hist {
				t.Errorf("%s: user %s: sdiag %d, latency histogram count %d, +Inf bucket %d", rel, user, byUser[user], hist, inf)
			}
		}
		if want := int64(sdiagField(t, out, `Jobs submitted:\s*(\d+)`)); metric(text, `slurm_frontend_jobs_total\{event="submitted"\}`) != want || want != 18 {
			t.Errorf("%s: jobs submitted: sdiag %d, metrics %d, want 18", rel, want, metric(text, `slurm_frontend_jobs_total\{event="submitted"\}`))
		}
	}
	text := scrape(t, mport)
	for _, v := range []string{"22.05", "24.11", "26.05"} {
		if n := metricSum(text, `slurm_frontend_rpc_duration_seconds_count\{type="REQUEST_SUBMIT_BATCH_JOB",version="`+v+`"\}`); n != 6 {
			t.Errorf("sbatch of %s: %d under its version, want 6", v, n)
		}
	}
	// Jobs: 6 held (one per release and user) left pending, 12 cancelled.
	pend := strings.Count(f.mustRun("24.11", "squeue", "-h", "-t", "PD", "-o", "%i"), "\n")
	if got := metric(text, `slurm_queue_pending`); got != int64(pend) || pend != 6 {
		t.Errorf("slurm_queue_pending %d, squeue lists %d pending, want 6", got, pend)
	}
	if got := metric(text, `slurm_frontend_jobs\{state="pending",partition="cpu"\}`); got != 6 {
		t.Errorf(`slurm_frontend_jobs{state="pending",partition="cpu"} = %d, want 6`, got)
	}
	if got := metric(text, `slurm_queue_cancelled`); got != 12 {
		t.Errorf("slurm_queue_cancelled %d, want 12", got)
	}
	if got := metric(text, `slurm_nodes_idle`); got != 16 {
		t.Errorf("slurm_nodes_idle %d, want 16\n%s", got, text)
	}
	if metric(text, `slurm_frontend_munge_replay_cache_entries`) < 1 {
		t.Errorf("the replay cache holds nothing after the storm")
	}
}

func sdiagField(t *testing.T, out, re string) int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sdiag: no %s in\n%s", re, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestGrafanaDashboard: every metric the shipped dashboard
// (tools/grafana/slurm-frontend.json) queries is one the endpoint
// serves, on a frontend with rate limits on the Backend.AI engine (the
// double) after a job and a few listings.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "tools", "grafana", "slurm-frontend.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	names := map[string]string{} // metric -> panel
	ident := regexp.MustCompile(`\b((?:slurm|process)_[a-z0-9_]+)`)
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range ident.FindAllStringSubmatch(tg.Expr, -1) {
				names[m[1]] = p.Title
			}
		}
	}
	if len(names) < 20 {
		t.Fatalf("the dashboard queries only %d metrics", len(names))
	}
	mport := freePort(t)
	_, f := baiFrontend(t, nil, fmt.Sprintf("FrontendMetricsListen=127.0.0.1:%d\nSlurmctldParameters=rl_enable\n", mport))
	dir, ru := slurmDir(t, f, "bai-metrics-")
	sub := ru.mustRun("24.11", "sbatch", "-o", filepath.Join(dir, "out"), "--mem=2G", "--wrap", "true")
	id := atoi(submittedRe.FindStringSubmatch(sub)[1])
	waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
	ru.mustRun("22.05", "sinfo")
	// A session the manager refuses (below the image's minimum memory):
	// an engine error.
	if _, _, code := ru.run("24.11", "sbatch", "-o", "/dev/null", "--mem=1G", "--wrap", "true"); code != 0 {
		t.Fatal("sbatch refused")
	}
	// A replayed credential: an authentication failure.
	m, err := bench.NewMinter("/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	ping, err := m.Frame(nil, crand.Reader, codec.REQUEST_PING, munge.UIDAny, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", f.port))
		if err != nil {
			t.Fatal(err)
		}
		c.Write(ping)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.ReadAll(c)
		c.Close()
	}
	var text string
	for deadline := time.Now().Add(30 * time.Second); ; {
		text = scrape(t, mport)
		if metric(text, `slurm_frontend_auth_failures_total\{reason="replayed"\}`) == 1 &&
			metricSum(text, `slurm_frontend_engine_errors_total\{engine="backendai",op="POST /session",kind="invalid_request"\}`) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no replayed credential or engine error counted:\n%s", text)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for name, panel := range names {
		if !regexp.MustCompile(`(?m)^` + name + `[{ ]`).MatchString(text) {
			t.Errorf("panel %q queries %s, which the endpoint does not serve", panel, name)
		}
	}
	if n := metricSum(text, `slurm_frontend_engine_request_duration_seconds_count\{engine="backendai",op="POST /session"\}`); n < 1 {
		t.Errorf("no session creation timed:\n%s", grepLines(text, "engine"))
	}
}
