package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestBatchDurability: a storm of concurrent submissions through the
// stock sbatch of all three releases, the server killed with SIGKILL three
// times in the middle of it (after killAt, 2*killAt and 3*killAt
// acknowledged submissions, while earlier jobs run) and restarted on the
// same state directory each time. Every job
// id an sbatch printed must exist exactly once afterwards and run exactly
// once (each job appends its id to one shared file), no id may be given
// twice, and the next submission gets an id above all of them. The jobs
// ask for little memory (--mem=100M), so that many share a node and the
// 1,000 finish within the test's wait (without --mem each would take a
// whole node: 12 at a time).
func TestBatchDurability(t *testing.T) {
	t.Parallel()
	const (
		n       = 1000 // submissions, as the issue asks
		conc    = 24   // sbatch processes at once
		killAt  = 250  // acknowledged submissions before the first SIGKILL
		jobTime = "2"  // seconds each job sleeps after recording itself
	)
	f := newFrontend(t, batchCluster)
	dir := workDir(t, "storm-")
	ranPath := filepath.Join(dir, "ran.txt")
	writeScript(t, dir, "storm.sh", "#!/bin/bash\necho $SLURM_JOB_ID >> "+ranPath+"\nsleep "+jobTime+"\n")

	type result struct {
		rel        string
		out, errs  string
		code       int
		err        error
		id         int // 0 = not acknowledged
		start, end time.Time
	}
	results := make([]result, n)
	var (
		acked   atomic.Int64
		killAts = []int64{killAt, 2 * killAt, 3 * killAt}
		kills   = []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
		wg      sync.WaitGroup
		work    = make(chan int)
	)
	conf := f.clientConf
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				rel := releases[i%len(releases)]
				res := result{rel: rel, start: time.Now()}
				res.out, res.errs, res.code, res.err = stormClient(rel, conf, dir, "sbatch", "-J", fmt.Sprintf("storm%d", i), "--mem=100M", "-o", "/dev/null", "storm.sh")
				res.end = time.Now()
				if m := submittedRe.FindStringSubmatch(res.out); m != nil && res.code == 0 {
					res.id, _ = strconv.Atoi(m[1])
					a := acked.Add(1)
					for k, at := range killAts {
						if a == at {
							close(kills[k])
						}
					}
				}
				results[i] = res
			}
		}()
	}
	go func() {
		for i := range n {
			work <- i
		}
		close(work)
	}()
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	var killedAt []time.Time
	for k, at := range killAts {
		select {
		case <-kills[k]:
		case <-allDone:
			t.Errorf("all %d submissions ended before %d were acknowledged (%d were): no kill mid-storm", n, at, acked.Load())
		}
		ps, _, err := f.stopWith(syscall.SIGKILL, 10*time.Second)
		killedAt = append(killedAt, time.Now())
		if err != nil {
			t.Fatalf("SIGKILL: %v\n%s", err, lastLines(f.Logs(), 40))
		}
		if ws, ok := ps.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Errorf("server did not die of SIGKILL: %v", ps)
		}
		ackedAtKill := acked.Load()
		if err := f.tryStart(); err != nil {
			t.Fatalf("restart after SIGKILL: %v", err)
		}
		t.Logf("SIGKILL #%d after %d acknowledged submissions; restarted %v later", k+1, ackedAtKill, time.Since(killedAt[k]).Round(time.Millisecond))
	}
	<-allDone
	t.Logf("%d of %d submissions acknowledged in all", acked.Load(), n)

	// What the clients were told.
	told := map[int]int{} // id -> submission index
	failures := map[string]int{}
	for i, r := range results {
		if r.id == 0 {
			key := strings.TrimSpace(r.errs)
			if r.err != nil {
				key = r.err.Error()
			}
			failures[fmt.Sprintf("exit %d: %s", r.code, key)]++
			continue
		}
		if j, dup := told[r.id]; dup {
			t.Errorf("job id %d was given to two submissions: #%d (%s, %s..%s) and #%d (%s, %s..%s)", r.id,
				j, results[j].rel, results[j].start.Format(time.StampMilli), results[j].end.Format(time.StampMilli),
				i, r.rel, r.start.Format(time.StampMilli), r.end.Format(time.StampMilli))
		}
		told[r.id] = i
	}
	for k, c := range failures {
		t.Logf("%d submissions not acknowledged: %s", c, k)
	}
	if len(told) < killAt {
		t.Fatalf("only %d submissions acknowledged", len(told))
	}

	// Wait until every acknowledged job has ended.
	r := f.as(t).in(dir)
	var listed map[int][]string // id -> states listed (more than one = listed twice)
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, errs, code := r.run("24.11", "squeue", "-h", "-t", "all", "-o", "%i %T")
		listed = map[int][]string{}
		if code == 0 {
			for _, l := range lines(out) {
				fs := strings.Fields(l)
				if len(fs) != 2 {
					continue
				}
				id, err := strconv.Atoi(fs[0])
				if err != nil {
					t.Errorf("squeue -t all: bad job id in %q", l)
					continue
				}
				listed[id] = append(listed[id], fs[1])
			}
		}
		active := 0
		for id := range told {
			if sts := listed[id]; len(sts) == 0 || activeStates[sts[0]] {
				active++
			}
		}
		if code == 0 && active == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("90 s after the storm, %d acknowledged jobs have not ended (squeue exit %d %s)", active, code, errs)
			break
		}
		time.Sleep(time.Second)
	}

	ran := map[int]int{}
	b, _ := os.ReadFile(ranPath)
	for _, l := range lines(string(b)) {
		id, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil {
			t.Errorf("ran.txt: bad line %q", l)
			continue
		}
		ran[id]++
	}

	var missing, twice, notRun, ranTwice, notCompleted []string
	ids := make([]int, 0, len(told))
	for id := range told {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		sts := listed[id]
		switch {
		case len(sts) == 0:
			missing = append(missing, strconv.Itoa(id))
		case len(sts) > 1:
			twice = append(twice, fmt.Sprintf("%d%v", id, sts))
		case sts[0] != "COMPLETED":
			notCompleted = append(notCompleted, fmt.Sprintf("%d:%s", id, sts[0]))
		}
		if ran[id] == 0 {
			notRun = append(notRun, strconv.Itoa(id))
		}
	}
	for id, c := range ran {
		if c > 1 {
			ranTwice = append(ranTwice, fmt.Sprintf("%d(x%d)", id, c))
		}
	}
	sort.Strings(ranTwice)
	report := func(what string, l []string) {
		if len(l) > 0 {
			t.Errorf("%d acknowledged jobs %s: %s", len(l), what, strings.Join(l, " "))
		}
	}
	report("missing from squeue -t all after the restart", missing)
	report("listed more than once by squeue -t all", twice)
	report("did not end COMPLETED", notCompleted)
	report("never ran (id not in ran.txt)", notRun)
	if len(ranTwice) > 0 {
		t.Errorf("%d jobs ran more than once: %s", len(ranTwice), strings.Join(ranTwice, " "))
		for _, d := range ranTwice[:min(3, len(ranTwice))] {
			id, _, _ := strings.Cut(d, "(")
			re := regexp.MustCompile(`\b(job|JobId=|session slurm-)` + id + `\b`)
			var ls []string
			for _, l := range lines(f.Logs()) {
				if re.MatchString(l) {
					ls = append(ls, l)
				}
			}
			n, _ := strconv.Atoi(id)
			i, ok := told[n]
			when := "not acknowledged to any client"
			if ok {
				when = fmt.Sprintf("submission #%d (%s) from %s to %s", i, results[i].rel, results[i].start.Format(time.StampMilli), results[i].end.Format(time.StampMilli))
			}
			kills := ""
			for _, k := range killedAt {
				kills += " " + k.Format(time.StampMilli)
			}
			t.Logf("job %s: %s; SIGKILL at%s; server log lines about it:\n%s", id, when, kills, strings.Join(ls, "\n"))
		}
	}
	for id := range ran {
		if _, ok := told[id]; !ok {
			if _, ok := listed[id]; !ok {
				t.Errorf("job %d ran, but no client was told about it and squeue does not list it", id)
			}
		}
	}

	// The sequence goes on above every id given out.
	high := 0
	for id := range told {
		high = max(high, id)
	}
	for id := range listed {
		high = max(high, id)
	}
	out, errs, code := r.run("26.05", "sbatch", "--hold", "--wrap", "true")
	m := submittedRe.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("sbatch after the storm: exit %d, %q %q", code, out, errs)
	}
	if next, _ := strconv.Atoi(m[1]); next <= high {
		t.Errorf("first job after the storm got id %d, not above the highest id given out (%d)", next, high)
	}
	if logs := f.Logs(); regexp.MustCompile(`(?m)^panic:|fatal error:|DATA RACE`).MatchString(logs) {
		t.Errorf("server log has a panic:\n%s", logs)
	}
	reused := 0
	if next, _ := strconv.Atoi(m[1]); next <= high {
		reused = 1
	}
	t.Logf("RESULT faults kill -9 in a submit storm: %d sbatch from 3 releases, %d acknowledged, server killed -9 3 times; "+
		"%d acknowledged jobs lost, %d listed twice, %d never ran, %d ran twice, %d ids given twice, %d reused",
		n, len(told), len(missing), len(twice), len(notRun), len(ranTwice), len(results)-len(told)-sum(failures), reused)
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 60))
	}
}

// stormClient is runClient for goroutines (no t.Fatal).
func stormClient(rel, conf, dir string, args ...string) (string, string, int, error) {
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRootDir(), "tools/run-client.sh"), rel, conf}, args...)...)
	cmd.Dir = dir
	cmd.Env = hermeticEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return "", "", -1, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		return out.String(), errb.String(), -1, fmt.Errorf("timed out after 90 s")
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode(), nil
}

func repoRootDir() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
