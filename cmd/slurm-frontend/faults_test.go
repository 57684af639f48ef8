package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The fault tests: the real server and the stock clients under the
// failures an operator meets: the server killed while it cancels or
// expands an array, a full or read-only state directory, a job's shim
// killed, the host's clock stepped. Each logs one "RESULT faults NAME:"
// line with its figures.

// newFaultFrontend is newFrontend with the state directory at stateDir
// ("" = the usual place) and the server not started yet, so that the
// caller can prepare the directory (mount a file system on it) first.
// Call f.start() and register t.Cleanup(f.stop) after the cleanups that
// must run after the server is gone (unmounting).
func newFaultFrontend(t *testing.T, clusterConf, stateDir string, serveArgs ...string) *frontend {
	t.Helper()
	needClients(t)
	bin := buildBinary(t)
	if err := os.MkdirAll(sharedDir, 0o1777); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(sharedDir, "e2e-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o1777)
	t.Cleanup(func() {
		if !t.Failed() || os.Getenv("SLURM_FRONTEND_KEEP") == "" {
			os.RemoveAll(dir)
		}
	})
	f := &frontend{t: t, dir: dir, stateDir: stateDir, port: freePort(t), args: serveArgs}
	if f.stateDir == "" {
		f.stateDir = filepath.Join(dir, "state")
	}
	f.configPath = filepath.Join(dir, "frontend.conf")
	if err := os.WriteFile(f.configPath, []byte(clusterConf), 0o644); err != nil {
		t.Fatal(err)
	}
	f.clientConf = filepath.Join(dir, "slurm.conf")
	out, err := exec.Command(bin, "client-conf", "--config", f.configPath,
		"--listen", fmt.Sprintf("127.0.0.1:%d", f.port)).Output()
	if err != nil {
		t.Fatalf("client-conf: %v", err)
	}
	if err := os.WriteFile(f.clientConf, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// faultClient runs a stock client with a deadline (for goroutines and for
// "must not hang" checks; no t.Fatal). code is -1 on a timeout.
func faultClient(rel, conf, dir string, timeout time.Duration, args ...string) (string, string, int, time.Duration) {
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRootDir(), "tools/run-client.sh"), rel, conf}, args...)...)
	cmd.Dir = dir
	cmd.Env = hermeticEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return "", err.Error(), -1, 0
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return out.String(), errb.String(), cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		return out.String(), errb.String() + fmt.Sprintf("\n(timed out after %v)", timeout), -1, time.Since(start)
	}
}

// jobRow is one record of `squeue -t all -r`.
type jobRow struct {
	id, arrayJob int
	task         string // array task id, "N/A" for other jobs
	state        string
	reason       string
	time         string // squeue's TIME (%M)
	left         string // squeue's TIME_LEFT (%L)
}

// listJobs returns every record squeue -t all -r shows, by job id (rows
// of ids listed twice go to dup).
func listJobs(rel, conf, dir string) (map[int]jobRow, []int, error) {
	out, errs, code, _ := faultClient(rel, conf, dir, 60*time.Second, "squeue", "-h", "-r", "-t", "all", "-o", "%A|%F|%K|%T|%r|%M|%L")
	if code != 0 {
		return nil, nil, fmt.Errorf("squeue: exit %d: %s", code, strings.TrimSpace(errs))
	}
	rows := map[int]jobRow{}
	var dup []int
	for _, l := range lines(out) {
		fs := strings.Split(l, "|")
		if len(fs) != 7 {
			return nil, nil, fmt.Errorf("squeue: bad line %q", l)
		}
		id, err := strconv.Atoi(fs[0])
		if err != nil {
			return nil, nil, fmt.Errorf("squeue: bad job id in %q", l)
		}
		aj, _ := strconv.Atoi(fs[1])
		if _, ok := rows[id]; ok {
			dup = append(dup, id)
		}
		rows[id] = jobRow{id: id, arrayJob: aj, task: fs[2], state: fs[3], reason: fs[4], time: fs[5], left: fs[6]}
	}
	return rows, dup, nil
}

// shimInfo is a live shim process of a server's spool.
type shimInfo struct {
	pid   int
	dir   string // its session directory
	jobID int
}

// shimsOf lists the live shims ("slurm-frontend shim run DIR") whose
// session directory is under spool, with the job each runs.
func shimsOf(spool string) []shimInfo {
	var out []shimInfo
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i := 0; i+2 < len(args); i++ {
			if args[i] == "shim" && args[i+1] == "run" && strings.HasPrefix(args[i+2], spool+"/") {
				if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
					if k := bytes.LastIndexByte(st, ')'); k > 0 && len(st) > k+2 && st[k+2] == 'Z' {
						break // a zombie: gone
					}
				}
				out = append(out, shimInfo{pid: pid, dir: args[i+2], jobID: sessionJob(args[i+2])})
				break
			}
		}
	}
	return out
}

// sessionJob reads the job id of a spool session directory (0 unknown).
func sessionJob(dir string) int {
	var rec struct {
		Spec struct{ JobID int }
	}
	b, err := os.ReadFile(filepath.Join(dir, "session.json"))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return 0
	}
	return rec.Spec.JobID
}

// jobCgroups are the cgroup directories the engine planned for a
// session (launch.json), if it enforces limits with cgroups.
func jobCgroups(dir string) []string {
	var lr struct {
		Cgroup *struct{ Dirs []string }
	}
	b, err := os.ReadFile(filepath.Join(dir, "launch.json"))
	if err != nil || json.Unmarshal(b, &lr) != nil || lr.Cgroup == nil {
		return nil
	}
	return lr.Cgroup.Dirs
}

// sessionsByJob counts the session directories of the spool per job.
func sessionsByJob(spool string) map[int]int {
	out := map[int]int{}
	ents, _ := os.ReadDir(spool)
	for _, e := range ents {
		if e.IsDir() {
			if id := sessionJob(filepath.Join(spool, e.Name())); id != 0 {
				out[id]++
			}
		}
	}
	return out
}

// reapJobs ends what the test's server still runs, so that no job
// outlives the test: scancel of everything (if the server is up), then,
// after a grace, SIGKILL of the remaining shims of its spool by pid
// (which ends their PID namespaces).
func reapJobs(t *testing.T, f *frontend) {
	spool := filepath.Join(f.stateDir, "spool")
	if len(shimsOf(spool)) == 0 {
		return
	}
	if f.alive() {
		faultClient("24.11", f.clientConf, f.dir, 30*time.Second, "scancel", "--user=root")
		faultClient("24.11", f.clientConf, f.dir, 30*time.Second, "scancel", "--user=slurm")
	}
	end := time.Now().Add(15 * time.Second)
	for len(shimsOf(spool)) > 0 && time.Now().Before(end) {
		time.Sleep(200 * time.Millisecond)
	}
	for _, s := range shimsOf(spool) {
		t.Logf("cleanup: SIGKILL of shim %d (job %d), still running", s.pid, s.jobID)
		syscall.Kill(s.pid, syscall.SIGKILL)
	}
}

// idLines reads a file of "ID ..." lines (what the jobs append) into
// id -> the rest of each line.
func idLines(t *testing.T, path string) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	b, _ := os.ReadFile(path)
	for _, l := range lines(string(b)) {
		fs := strings.Fields(l)
		if len(fs) == 0 {
			continue
		}
		id, err := strconv.Atoi(fs[0])
		if err != nil {
			t.Errorf("%s: bad line %q", filepath.Base(path), l)
			continue
		}
		out[id] = append(out[id], strings.Join(fs[1:], " "))
	}
	return out
}

// unixFloat parses "1712345678.123456789".
func unixFloat(s string) time.Time {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}
	}
	sec := int64(v)
	return time.Unix(sec, int64((v-float64(sec))*1e9))
}

// serverPanicked reports a panic or fatal runtime error in the log.
var panicRe = regexp.MustCompile(`(?m)^panic:|fatal error:|unexpected fault address|SIGBUS|DATA RACE`)

// crashLines is the start of a crash report in the server's log (the
// fault and the goroutine that took it), else its last lines.
func crashLines(logs string) string {
	if loc := panicRe.FindStringIndex(logs); loc != nil {
		start := strings.LastIndexByte(logs[:loc[0]], '\n') + 1
		return strings.Join(lines(logs[start:])[:min(40, len(lines(logs[start:])))], "\n")
	}
	return lastLines(logs, 40)
}

// nextIDAbove submits one held job and checks its id is above high; it
// returns the id (0 when the submission failed).
func nextIDAbove(t *testing.T, f *frontend, dir string, high int) int {
	t.Helper()
	out, errs, code, _ := faultClient("26.05", f.clientConf, dir, 60*time.Second, "sbatch", "--hold", "-o", "/dev/null", "--wrap", "true")
	m := submittedRe.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Errorf("sbatch after the faults: exit %d, %q %q", code, out, errs)
		return 0
	}
	next, _ := strconv.Atoi(m[1])
	if next <= high {
		t.Errorf("the next job got id %d, not above the highest id given out (%d): an id was reused", next, high)
	}
	faultClient("26.05", f.clientConf, dir, 30*time.Second, "scancel", m[1])
	return next
}

// ---------------------------------------------------------------------
// 1. kill -9 of the server in the middle of a cancel storm.

// TestFaultCancelStorm: ~1,000 small jobs (running where they fit,
// pending beyond), scancel of all of them in groups from many
// concurrent clients of the three releases (REQUEST_KILL_JOB, and
// REQUEST_KILL_JOBS with --ctld), the server killed with SIGKILL in the
// middle and restarted on the same state; the groups whose scancel
// failed while it was down are cancelled again afterwards, as a user
// would. Every job whose cancel was acknowledged must end CANCELLED and
// never start after the acknowledgement; none may be lost, run twice,
// finish its script, have two sessions or keep a process; the next job
// gets an id above all.
func TestFaultCancelStorm(t *testing.T) {
	const (
		n         = 1000
		subConc   = 16
		group     = 10 // job ids per scancel
		cancConc  = 12 // scancel processes at once
		killAfter = 35 // scancel groups acknowledged before the SIGKILL
		sleepFor  = 150
	)
	f := newFrontend(t, batchCluster)
	t.Cleanup(func() { reapJobs(t, f) })
	dir := workDir(t, "cstorm-")
	ranPath, donePath := filepath.Join(dir, "ran.txt"), filepath.Join(dir, "done.txt")
	writeScript(t, dir, "job.sh", fmt.Sprintf("#!/bin/bash\necho \"$SLURM_JOB_ID $(date +%%s.%%N)\" >> %s\nsleep %d\necho \"$SLURM_JOB_ID $(date +%%s.%%N)\" >> %s\n", ranPath, sleepFor, donePath))
	spool := filepath.Join(f.stateDir, "spool")

	// Submit.
	t0 := time.Now()
	ids := make([]int, n)
	var wg sync.WaitGroup
	work := make(chan int)
	var subFail atomic.Int64
	for range subConc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out, errs, code, _ := faultClient(releases[i%3], f.clientConf, dir, 90*time.Second, "sbatch", "-J", "c"+strconv.Itoa(i), "--mem=10M", "-o", "/dev/null", "job.sh")
				if m := submittedRe.FindStringSubmatch(out); m != nil && code == 0 {
					ids[i], _ = strconv.Atoi(m[1])
				} else if subFail.Add(1) <= 3 {
					t.Errorf("sbatch #%d: exit %d %q %q", i, code, out, errs)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	submitTook := time.Since(t0)
	var jobs []int
	for _, id := range ids {
		if id != 0 {
			jobs = append(jobs, id)
		}
	}
	if len(jobs) < n*9/10 {
		t.Fatalf("only %d of %d submissions acknowledged", len(jobs), n)
	}
	// Let a good part of them start.
	running := 0
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		rows, _, err := listJobs("24.11", f.clientConf, dir)
		if err != nil {
			continue
		}
		running = 0
		for _, r := range rows {
			if r.state == "RUNNING" {
				running++
			}
		}
		if running >= 300 {
			break
		}
	}
	t.Logf("%d jobs submitted in %v; %d running when the cancel storm starts", len(jobs), submitTook.Round(time.Millisecond), running)

	// The storm: groups of ids in random order (running and pending
	// mixed), each one scancel.
	order := slices.Clone(jobs)
	rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var groups [][]int
	for i := 0; i < len(order); i += group {
		groups = append(groups, order[i:min(i+group, len(order))])
	}
	ackedAt := map[int]time.Time{} // job id -> when its scancel was acknowledged
	var mu sync.Mutex
	var failedGroups [][]int
	var ackedGroups atomic.Int64
	killNow := make(chan struct{})
	var killOnce sync.Once
	gwork := make(chan int)
	idRe := regexp.MustCompile(`\b\d+\b`)
	cancel := func(g int, ids []int) (acked []int, failed []int) {
		rel := releases[g%3]
		args := []string{"scancel"}
		if rel != "22.05" && g%2 == 0 {
			args = append(args, "--ctld") // REQUEST_KILL_JOBS
		}
		for _, id := range ids {
			args = append(args, strconv.Itoa(id))
		}
		_, errs, code, _ := faultClient(rel, f.clientConf, dir, 90*time.Second, args...)
		if code == 0 && strings.TrimSpace(errs) == "" {
			return ids, nil
		}
		// Acknowledged: the ids no error line names, if every error line
		// names one.
		named := map[int]bool{}
		general := false
		for _, l := range lines(errs) {
			found := false
			for _, m := range idRe.FindAllString(l, -1) {
				v, _ := strconv.Atoi(m)
				if slices.Contains(ids, v) {
					named[v], found = true, true
				}
			}
			general = general || !found
		}
		for _, id := range ids {
			if !general && !named[id] {
				acked = append(acked, id)
			} else {
				failed = append(failed, id)
			}
		}
		return acked, failed
	}
	for range cancConc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range gwork {
				acked, failed := cancel(g, groups[g])
				now := time.Now()
				mu.Lock()
				for _, id := range acked {
					ackedAt[id] = now
				}
				if len(failed) > 0 {
					failedGroups = append(failedGroups, failed)
				}
				mu.Unlock()
				if len(failed) == 0 && ackedGroups.Add(1) == killAfter {
					killOnce.Do(func() { close(killNow) })
				}
			}
		}()
	}
	stormStart := time.Now()
	go func() {
		for g := range groups {
			gwork <- g
		}
		close(gwork)
	}()
	stormDone := make(chan struct{})
	go func() { wg.Wait(); close(stormDone) }()
	select {
	case <-killNow:
	case <-stormDone:
		t.Errorf("the cancel storm ended before %d groups were acknowledged: no kill in the middle", killAfter)
	}
	mu.Lock()
	ackedAtKill := len(ackedAt)
	mu.Unlock()
	ps, _, err := f.stopWith(syscall.SIGKILL, 10*time.Second)
	killedAt := time.Now()
	if err != nil {
		t.Fatalf("SIGKILL: %v\n%s", err, lastLines(f.Logs(), 40))
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Errorf("server did not die of SIGKILL: %v", ps)
	}
	if err := f.tryStart(); err != nil {
		t.Fatalf("restart after SIGKILL: %v", err)
	}
	restartTook := time.Since(killedAt)
	<-stormDone
	stormTook := time.Since(stormStart)
	// What failed while the server was down is cancelled again.
	mu.Lock()
	retry := failedGroups
	failedGroups = nil
	mu.Unlock()
	retried := 0
	for g, ids := range retry {
		retried += len(ids)
		acked, failed := cancel(g, ids)
		now := time.Now()
		for _, id := range acked {
			ackedAt[id] = now
		}
		if len(failed) > 0 {
			t.Errorf("scancel %v after the restart failed for %v", ids, failed)
		}
	}
	t.Logf("cancel storm: %d groups in %v, SIGKILL after %d acknowledged cancels, restarted in %v; %d ids cancelled again after the restart",
		len(groups), stormTook.Round(time.Millisecond), ackedAtKill, restartTook.Round(time.Millisecond), retried)

	// Every acknowledged cancel ends its job: CANCELLED, no shim left.
	var rows map[int]jobRow
	var dups []int
	settleStart := time.Now()
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		rows, dups, err = listJobs("24.11", f.clientConf, dir)
		live := 0
		if err == nil {
			for id := range ackedAt {
				if activeStates[rows[id].state] {
					live++
				}
			}
		}
		shims := shimsOf(spool)
		if err == nil && live == 0 && len(shims) == 0 {
			break
		}
		if time.Now().After(end) {
			t.Errorf("60 s after the storm: %d acknowledged jobs still active, %d shims alive (squeue: %v)", live, len(shims), err)
			break
		}
	}
	settleTook := time.Since(settleStart)
	ran, done := idLines(t, ranPath), idLines(t, donePath)
	sessions := sessionsByJob(spool)
	var lost, notCancelled, ranTwice, startedAfter, finished, twoSessions, leftShims []string
	launchRace := 0
	for _, id := range jobs {
		r, ok := rows[id]
		acked, wasAcked := ackedAt[id]
		switch {
		case !ok:
			lost = append(lost, strconv.Itoa(id))
		case wasAcked && r.state != "CANCELLED":
			notCancelled = append(notCancelled, fmt.Sprintf("%d:%s", id, r.state))
		}
		if len(ran[id]) > 1 {
			ranTwice = append(ranTwice, fmt.Sprintf("%d(x%d)", id, len(ran[id])))
		}
		if len(ran[id]) > 0 && wasAcked {
			// A job handed to a node as the cancel came may start as it
			// is killed (slurmd's launch race); one that starts later
			// was never cancelled.
			if at := unixFloat(strings.Fields(ran[id][0])[0]); at.After(acked.Add(time.Second)) {
				startedAfter = append(startedAfter, fmt.Sprintf("%d(+%v)", id, at.Sub(acked).Round(time.Millisecond)))
			} else if at.After(acked) {
				launchRace++
			}
		}
		if len(done[id]) > 0 {
			finished = append(finished, strconv.Itoa(id))
		}
		if sessions[id] > 1 {
			twoSessions = append(twoSessions, fmt.Sprintf("%d(x%d)", id, sessions[id]))
		}
	}
	for _, s := range shimsOf(spool) {
		leftShims = append(leftShims, fmt.Sprintf("%d(pid %d)", s.jobID, s.pid))
	}
	report := func(what string, l []string) {
		if len(l) > 0 {
			sort.Strings(l)
			t.Errorf("%d jobs %s: %s", len(l), what, strings.Join(l[:min(len(l), 30)], " "))
		}
	}
	report("lost (not listed by squeue -t all)", lost)
	report("whose cancel was acknowledged are not CANCELLED", notCancelled)
	report("ran more than once", ranTwice)
	report("started more than 1 s after their cancel was acknowledged", startedAfter)
	report("ran their script to the end though cancelled", finished)
	report("had more than one session", twoSessions)
	report("still have a shim running", leftShims)
	if len(dups) > 0 {
		t.Errorf("squeue lists %d job ids twice: %v", len(dups), dups[:min(len(dups), 20)])
	}
	high := 0
	for id := range rows {
		high = max(high, id)
	}
	next := nextIDAbove(t, f, dir, high)
	if panicRe.MatchString(f.Logs()) {
		t.Errorf("server log has a panic:\n%s", lastLines(f.Logs(), 60))
	}
	t.Logf("RESULT faults cancel storm kill -9: %d jobs (%d running at the storm), %d scancel groups of %d from 3 releases in %v, SIGKILL after %d acknowledged cancels, restart %v; "+
		"%d cancels acknowledged, settled in %v; %d lost, %d not CANCELLED, %d ran twice, %d started after the cancel (+%d in the launch race), %d ran to the end, %d with two sessions, %d shims left; next id %d > %d",
		len(jobs), running, len(groups), group, stormTook.Round(time.Millisecond), ackedAtKill, restartTook.Round(time.Millisecond),
		len(ackedAt), settleTook.Round(time.Millisecond), len(lost), len(notCancelled), len(ranTwice), len(startedAfter), launchRace, len(finished), len(twoSessions), len(leftShims), next, high)
	// Starts the kernel held up, as the shims logged them.
	var slow []string
	ents, _ := os.ReadDir(spool)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(spool, e.Name(), "shim.log"))
		for _, l := range lines(string(b)) {
			if strings.Contains(l, "starting its process took") || strings.Contains(l, "to be shown RUNNING") {
				slow = append(slow, l)
			}
		}
	}
	if len(slow) > 0 {
		t.Logf("%d slow starts:\n%s", len(slow), strings.Join(slow[:min(len(slow), 20)], "\n"))
	}
	if len(startedAfter) > 0 {
		// What the engine recorded of them, and when: the spool's files
		// say whether the cancel reached the session before it started.
		var late []int
		for _, s := range startedAfter {
			id, _ := strconv.Atoi(s[:strings.IndexByte(s, '(')])
			late = append(late, id)
		}
		t.Logf("acknowledged at %s; SIGKILL at %s\n%s", fmtAcked(ackedAt, late), killedAt.Format("15:04:05.000"), dumpSessions(spool, late))
		for _, l := range lines(f.Logs()) {
			for _, id := range late {
				if strings.Contains(l, fmt.Sprintf("job %d", id)) || strings.Contains(l, fmt.Sprintf("job %d:", id)) {
					t.Logf("log: %s", l)
					break
				}
			}
		}
	}
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 60))
	}
}

// fmtAcked lists when the cancels of jobs ids were acknowledged.
func fmtAcked(ackedAt map[int]time.Time, ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%d@%s ", id, ackedAt[id].Format("15:04:05.000"))
	}
	return b.String()
}

// dumpSessions describes the spool session directories of jobs ids: each
// file with its modification time, and the small ones' contents.
func dumpSessions(spool string, ids []int) string {
	var b strings.Builder
	ents, _ := os.ReadDir(spool)
	for _, e := range ents {
		dir := filepath.Join(spool, e.Name())
		id := sessionJob(dir)
		if !slices.Contains(ids, id) {
			continue
		}
		fmt.Fprintf(&b, "job %d session %s:\n", id, e.Name())
		files, _ := os.ReadDir(dir)
		for _, fe := range files {
			fi, err := fe.Info()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "  %-14s %s %6d", fe.Name(), fi.ModTime().Format("15:04:05.000000"), fi.Size())
			if name := fe.Name(); fi.Mode().IsRegular() && name != "session.json" && name != "launch.json" && (fi.Size() < 400 || name == "shim.log" && fi.Size() < 4000) {
				c, _ := os.ReadFile(filepath.Join(dir, name))
				fmt.Fprintf(&b, " %q", strings.TrimSpace(string(c)))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ---------------------------------------------------------------------
// 2. kill -9 of the server while an array is being expanded.

// TestFaultArrayExpansion: sbatch --array=0-999%50 of short tasks; the
// server killed with SIGKILL twice while tasks are split off the array's
// pending record and started, restarted on the same state each time.
// Every task must run exactly once under its own job id, the throttle
// hold (no more than 50 running, as squeue shows), squeue and scontrol
// show job must agree on the array's 1,000 records, and no id may be
// reused.
func TestFaultArrayExpansion(t *testing.T) {
	const (
		tasks    = 1000
		throttle = 50
	)
	f := newFrontend(t, batchCluster)
	t.Cleanup(func() { reapJobs(t, f) })
	dir := workDir(t, "array-")
	ranPath := filepath.Join(dir, "ran.txt")
	writeScript(t, dir, "task.sh", "#!/bin/bash\necho \"$SLURM_ARRAY_TASK_ID $SLURM_JOB_ID $SLURM_ARRAY_JOB_ID\" >> "+ranPath+"\nsleep 1\n")
	r := f.as(t).in(dir)
	t0 := time.Now()
	out := r.mustRun("24.11", "sbatch", fmt.Sprintf("--array=0-%d%%%d", tasks-1, throttle), "--mem=10M", "-o", "/dev/null", "task.sh")
	m := submittedRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sbatch: %q", out)
	}
	arrayID, _ := strconv.Atoi(m[1])

	// Watch the throttle while it runs.
	var maxRunning atomic.Int64
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(700 * time.Millisecond):
			}
			o, _, code, _ := faultClient("22.05", f.clientConf, dir, 30*time.Second, "squeue", "-h", "-r", "-t", "R", "-j", m[1], "-o", "%A")
			if code == 0 {
				if n := int64(len(lines(o))); n > maxRunning.Load() {
					maxRunning.Store(n)
				}
			}
		}
	}()
	countRan := func() int {
		b, _ := os.ReadFile(ranPath)
		return len(lines(string(b)))
	}
	var kills []string
	for _, at := range []int{150, 550} {
		for end := time.Now().Add(90 * time.Second); countRan() < at && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
		if countRan() < at {
			t.Fatalf("only %d tasks started in 90 s", countRan())
		}
		if _, _, err := f.stopWith(syscall.SIGKILL, 10*time.Second); err != nil {
			t.Fatalf("SIGKILL: %v", err)
		}
		killed := time.Now()
		started := countRan()
		if err := f.tryStart(); err != nil {
			t.Fatalf("restart: %v", err)
		}
		kills = append(kills, fmt.Sprintf("after %d tasks started (restart %v)", started, time.Since(killed).Round(time.Millisecond)))
	}

	// Wait for the whole array to end.
	var rows map[int]jobRow
	var dups []int
	var err error
	for end := time.Now().Add(150 * time.Second); ; time.Sleep(time.Second) {
		rows, dups, err = listJobs("24.11", f.clientConf, dir)
		active := 0
		if err == nil {
			for _, r := range rows {
				if r.arrayJob == arrayID && activeStates[r.state] {
					active++
				}
			}
		}
		if err == nil && active == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("array not done 150 s after the last restart: %d records active (%v)\n%s", active, err, lastLines(f.Logs(), 40))
		}
	}
	took := time.Since(t0)
	close(stopWatch)
	<-watchDone

	// What ran: each task once, under one job id.
	ranBy := map[int][]int{} // task -> job ids that ran it
	jobTask := map[int]int{} // job id -> task
	b, _ := os.ReadFile(ranPath)
	for _, l := range lines(string(b)) {
		fs := strings.Fields(l)
		if len(fs) != 3 {
			t.Errorf("ran.txt: bad line %q", l)
			continue
		}
		task, _ := strconv.Atoi(fs[0])
		job, _ := strconv.Atoi(fs[1])
		if aj, _ := strconv.Atoi(fs[2]); aj != arrayID {
			t.Errorf("task %d (job %d) ran with SLURM_ARRAY_JOB_ID %d, want %d", task, job, aj, arrayID)
		}
		ranBy[task] = append(ranBy[task], job)
		if prev, ok := jobTask[job]; ok && prev != task {
			t.Errorf("job id %d ran tasks %d and %d", job, prev, task)
		}
		jobTask[job] = task
	}
	var never, twice []string
	for task := range tasks {
		switch n := len(ranBy[task]); {
		case n == 0:
			never = append(never, strconv.Itoa(task))
		case n > 1:
			twice = append(twice, fmt.Sprintf("%d%v", task, ranBy[task]))
		}
	}
	// What squeue shows: one COMPLETED record per task, under the id
	// that ran it.
	byTask := map[int]jobRow{}
	var badRecords []string
	for _, r := range rows {
		if r.arrayJob != arrayID {
			continue
		}
		task, err := strconv.Atoi(r.task)
		if err != nil {
			badRecords = append(badRecords, fmt.Sprintf("%d:task=%s", r.id, r.task))
			continue
		}
		if prev, ok := byTask[task]; ok {
			badRecords = append(badRecords, fmt.Sprintf("task %d listed as %d and %d", task, prev.id, r.id))
		}
		byTask[task] = r
		if r.state != "COMPLETED" {
			badRecords = append(badRecords, fmt.Sprintf("%d_%d(%d):%s", arrayID, task, r.id, r.state))
		}
		if js := ranBy[task]; len(js) == 1 && js[0] != r.id {
			badRecords = append(badRecords, fmt.Sprintf("task %d ran as job %d but squeue lists it as %d", task, js[0], r.id))
		}
	}
	if len(byTask) != tasks {
		t.Errorf("squeue -r lists %d tasks of array %d, want %d", len(byTask), arrayID, tasks)
	}
	// scontrol show job ARRAY: the same records.
	recs := records(r.mustRun("26.05", "scontrol", "show", "job", m[1]))
	seen := map[string]bool{}
	for _, rec := range recs {
		kv := parseKV(rec)
		if kv["ArrayJobId"] != m[1] {
			badRecords = append(badRecords, "scontrol record with ArrayJobId="+kv["ArrayJobId"])
		}
		tid := kv["ArrayTaskId"]
		if seen[tid] {
			badRecords = append(badRecords, "scontrol shows ArrayTaskId="+tid+" twice")
		}
		seen[tid] = true
		if strings.ContainsAny(tid, "-,%") {
			badRecords = append(badRecords, "scontrol still shows a pending range ArrayTaskId="+tid)
		}
		if kv["JobState"] != "COMPLETED" {
			badRecords = append(badRecords, fmt.Sprintf("scontrol: JobId=%s ArrayTaskId=%s JobState=%s", kv["JobId"], tid, kv["JobState"]))
		}
		if task, err := strconv.Atoi(tid); err == nil {
			if row, ok := byTask[task]; ok && kv["JobId"] != strconv.Itoa(row.id) {
				badRecords = append(badRecords, fmt.Sprintf("task %s: scontrol JobId=%s, squeue %d", tid, kv["JobId"], row.id))
			}
		}
	}
	if len(recs) != tasks {
		t.Errorf("scontrol show job %d shows %d records, want %d", arrayID, len(recs), tasks)
	}
	report := func(what string, l []string) {
		if len(l) > 0 {
			t.Errorf("%d %s: %s", len(l), what, strings.Join(l[:min(len(l), 30)], " "))
		}
	}
	report("tasks never ran", never)
	report("tasks ran more than once", twice)
	report("inconsistent array records", badRecords)
	if len(dups) > 0 {
		t.Errorf("squeue lists job ids twice: %v", dups)
	}
	if mr := maxRunning.Load(); mr > throttle {
		t.Errorf("squeue showed %d tasks running at once, above the %%%d throttle", mr, throttle)
	}
	high := 0
	for id := range rows {
		high = max(high, id)
	}
	next := nextIDAbove(t, f, dir, high)
	if panicRe.MatchString(f.Logs()) {
		t.Errorf("server log has a panic:\n%s", lastLines(f.Logs(), 60))
	}
	t.Logf("RESULT faults array expansion kill -9: --array=0-%d%%%d, SIGKILL %s; done in %v; %d tasks ran, %d never, %d twice, %d inconsistent records, %d squeue records, %d scontrol records, at most %d running at once; next id %d > %d",
		tasks-1, throttle, strings.Join(kills, " and "), took.Round(time.Millisecond), len(ranBy), len(never), len(twice), len(badRecords), len(byTask), len(recs), maxRunning.Load(), next, high)
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 60))
	}
}

// ---------------------------------------------------------------------
// 3. The state directory's file system full.

// mountFS mounts a file system of the given type and options on dir (a
// directory of this test) and unmounts it when the test ends, after the
// cleanups registered later (the server's stop).
func mountFS(t *testing.T, dir string, args ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", append(args, dir)...).CombinedOutput(); err != nil {
		t.Skipf("cannot mount (%v): %s", err, out)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil && err != syscall.EINVAL { // EINVAL: not mounted (any more)
			// A job's shim (its own mount namespace) may hold it a
			// little longer: detach.
			if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		}
	})
}

// waitLoopReleased waits until no loop device is attached to img, and
// says who still holds it if one stays ("" once it is free).
func waitLoopReleased(img string, patience time.Duration) string {
	var devs string
	for end := time.Now().Add(patience); ; time.Sleep(100 * time.Millisecond) {
		out, _ := exec.Command("losetup", "-j", img).Output()
		devs = strings.TrimSpace(string(out))
		if devs == "" {
			return ""
		}
		if time.Now().After(end) {
			break
		}
	}
	// Which processes' mount namespaces still have it mounted.
	dev, _, _ := strings.Cut(devs, ":")
	var holders []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if mi, err := os.ReadFile(filepath.Join("/proc", e.Name(), "mountinfo")); err == nil && bytes.Contains(mi, []byte(" "+dev+" ")) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			holders = append(holders, e.Name()+":"+strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "))
		}
	}
	return fmt.Sprintf("%s; mounted in the namespaces of %v", devs, holders)
}

// exitCode is a command's exit status (0 for nil, -1 when it did not run).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// fsFree is the space left to unprivileged writers on the file system of
// dir, in bytes.
func fsFree(dir string) int64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return -1
	}
	return int64(st.Bavail) * st.Bsize
}

// submitErrRe is how sbatch reports a refused submission.
var submitErrRe = regexp.MustCompile(`sbatch: error: Batch job submission failed: (.+)`)

// writingToFile is how the clients print ESLURM_WRITING_TO_FILE,
// slurmctld's answer to a submission it cannot write to its
// StateSaveLocation.
const writingToFile = "I/O error writing script/environment to file"

// TestFaultDiskFull: the state directory on a small tmpfs (8 MiB) of its
// own. Two jobs run; then held jobs with large scripts are submitted
// until the store cannot take more. sbatch must then get a Slurm error
// at once (no hang, no crash), squeue, sinfo and scontrol show job must
// keep answering, and nothing acknowledged may be lost; the jobs that
// end meanwhile must be seen ending. Once the file system is given room
// (remount, 64 MiB) submissions work again, and after a SIGKILL and a
// restart every acknowledged job is there.
func TestFaultDiskFull(t *testing.T) {
	base := t.TempDir()
	stateDir := filepath.Join(base, "state")
	mountFS(t, stateDir, "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs")
	f := newFaultFrontend(t, batchCluster, stateDir)
	f.start()
	t.Cleanup(f.stop)
	t.Cleanup(func() { reapJobs(t, f) })
	dir := workDir(t, "full-")
	r := f.as(t).in(dir)
	conf := f.clientConf

	// Two jobs that end while the store is full.
	var runners []string
	for i := range 2 {
		out := r.mustRun("24.11", "sbatch", "-J", "run"+strconv.Itoa(i), "--mem=10M", "-o", "/dev/null", "--wrap", "sleep 30")
		m := submittedRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sbatch: %q", out)
		}
		runners = append(runners, m[1])
	}
	for _, id := range runners {
		waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[atoi(id)].state == "RUNNING" })
	}

	// Fill the store with held jobs of 48 KiB scripts.
	script := "#!/bin/bash\n" + strings.Repeat("# "+strings.Repeat("x", 77)+"\n", 48<<10/80) + "true\n"
	writeScript(t, dir, "big.sh", script)
	var acked []int
	var refusal, refusedRel string
	var refusedIn time.Duration
	freeAtRefusal := int64(-1)
	for i := 0; i < 1000 && refusal == ""; i++ {
		rel := releases[i%3]
		out, errs, code, took := faultClient(rel, conf, dir, 30*time.Second, "sbatch", "--hold", "-J", "fill"+strconv.Itoa(i), "-o", "/dev/null", "big.sh")
		if m := submittedRe.FindStringSubmatch(out); m != nil && code == 0 {
			acked = append(acked, atoi(m[1]))
			continue
		}
		if code == -1 {
			t.Fatalf("sbatch #%d hung (%v) with the store at %d bytes free:\n%s\n%s", i, took, fsFree(stateDir), errs, lastLines(f.Logs(), 30))
		}
		time.Sleep(300 * time.Millisecond) // a dying server: let it go
		if !f.alive() {
			t.Fatalf("the server died when the store filled (after %d jobs, %d bytes free):\n%s", len(acked), fsFree(stateDir), crashLines(f.Logs()))
		}
		refusal, refusedRel, refusedIn, freeAtRefusal = strings.TrimSpace(errs), rel, took, fsFree(stateDir)
		if m := submitErrRe.FindStringSubmatch(errs); m == nil || m[1] != writingToFile {
			t.Errorf("sbatch (%s) on a full store: exit %d, not slurmctld's error for a StateSaveLocation it cannot write (%q):\n%s", rel, code, writingToFile, errs)
		}
	}
	if refusal == "" {
		t.Fatalf("the store took %d jobs of 48 KiB on an 8 MiB file system and never refused one", len(acked))
	}
	t.Logf("store full after %d held jobs (%d bytes free): %s sbatch got %q in %v", len(acked), freeAtRefusal, refusedRel, refusal, refusedIn.Round(time.Millisecond))

	// Then small ones, until even those do not fit.
	smallAcked := 0
	for i := 0; i < 2000; i++ {
		out, errs, code, _ := faultClient(releases[i%3], conf, dir, 30*time.Second, "sbatch", "--hold", "-o", "/dev/null", "--wrap", "true")
		if m := submittedRe.FindStringSubmatch(out); m != nil && code == 0 {
			acked = append(acked, atoi(m[1]))
			smallAcked++
			continue
		}
		if m := submitErrRe.FindStringSubmatch(errs); code == -1 || m == nil || m[1] != writingToFile {
			t.Fatalf("small sbatch on the full store: exit %d %q\n%s", code, errs, crashLines(f.Logs()))
		}
		break
	}
	t.Logf("then %d small held jobs until those were refused too (%d bytes free)", smallAcked, fsFree(stateDir))

	// Still full: every release gets the error at once; reads answer.
	for _, rel := range releases {
		out, errs, code, took := faultClient(rel, conf, dir, 30*time.Second, "sbatch", "--hold", "-o", "/dev/null", "big.sh")
		if m := submitErrRe.FindStringSubmatch(errs); code == 0 || m == nil || m[1] != writingToFile || took > 10*time.Second {
			t.Errorf("%s sbatch on the full store: exit %d in %v: %q %q", rel, code, took, out, errs)
		}
		if m := submittedRe.FindStringSubmatch(out); m != nil {
			acked = append(acked, atoi(m[1]))
		}
	}
	readsOK := 0
	for _, rel := range releases {
		for _, args := range [][]string{
			{"squeue", "-h", "-t", "all"},
			{"sinfo", "-h"},
			{"scontrol", "show", "job", strconv.Itoa(acked[0])},
			{"scontrol", "show", "job", strconv.Itoa(acked[len(acked)-1])},
			{"scontrol", "ping"},
		} {
			out, errs, code, took := faultClient(rel, conf, dir, 30*time.Second, args...)
			if code != 0 || took > 10*time.Second {
				t.Errorf("%s %v on the full store: exit %d in %v: %q %q", rel, args, code, took, out, errs)
			} else {
				readsOK++
			}
		}
	}
	// A cancel and a hold while full: refused or done, but what the
	// client was told must stay true.
	cancelID, holdID := acked[1], acked[2]
	_, cancelErrs, cancelCode, _ := faultClient("24.11", conf, dir, 30*time.Second, "scancel", strconv.Itoa(cancelID))
	_, releaseErrs, releaseCode, _ := faultClient("22.05", conf, dir, 30*time.Second, "scontrol", "release", strconv.Itoa(holdID))
	t.Logf("on the full store: scancel exit %d %q; scontrol release exit %d %q", cancelCode, strings.TrimSpace(cancelErrs), releaseCode, strings.TrimSpace(releaseErrs))
	// The two running jobs end (sleep 30) while the store is full.
	endedWhileFull := 0
	for _, id := range runners {
		if rows, ok := waitRowsOK(f, dir, 45*time.Second, func(rows map[int]jobRow) bool { return !activeStates[rows[atoi(id)].state] }); ok {
			endedWhileFull++
		} else {
			t.Errorf("job %s (sleep 30) ended while the store was full, but squeue still shows it %s", id, rows[atoi(id)].state)
		}
	}
	if !f.alive() {
		t.Fatalf("server died on the full store:\n%s", crashLines(f.Logs()))
	}

	// A crash and a restart while still full: the server either serves
	// or refuses to start with a clear message; it never dies of the
	// full disk.
	if _, _, err := f.stopWith(syscall.SIGKILL, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	fullStart := "served"
	if err := f.tryStart(); err != nil {
		fullStart = "refused"
		for _, l := range lines(err.Error()) {
			if strings.Contains(l, "not enough room to open the store") {
				fullStart = "refused: " + strings.TrimSpace(l)
			}
		}
		if fullStart == "refused" || panicRe.MatchString(err.Error()) {
			t.Errorf("restart on the full store failed without a clear reason:\n%v", err)
		}
	} else if out, errs, code, _ := faultClient("24.11", conf, dir, 30*time.Second, "squeue", "-h", "-t", "all"); code != 0 || len(lines(out)) < len(acked) {
		t.Errorf("restarted on the full store, squeue lists %d jobs of %d (exit %d %q)", len(lines(out)), len(acked)+2, code, errs)
	}
	t.Logf("restart on the full store: %s", fullStart)

	// Room again.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", stateDir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	if !f.alive() {
		f.start()
	}
	var afterID int
	var recoverIn time.Duration
	roomAt := time.Now()
	for end := time.Now().Add(20 * time.Second); afterID == 0; time.Sleep(500 * time.Millisecond) {
		out, errs, code, _ := faultClient("26.05", conf, dir, 30*time.Second, "sbatch", "--hold", "-o", "/dev/null", "big.sh")
		if m := submittedRe.FindStringSubmatch(out); m != nil && code == 0 {
			afterID = atoi(m[1])
			acked = append(acked, afterID)
			recoverIn = time.Since(roomAt)
			break
		}
		if time.Now().After(end) {
			t.Fatalf("sbatch still refused 20 s after the file system got room: %q %q\n%s", out, errs, lastLines(f.Logs(), 30))
		}
	}
	for _, id := range runners {
		if st, ok := waitRowsOK(f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[atoi(id)].state == "COMPLETED" }); !ok {
			t.Errorf("job %s (sleep 30, ended while the store was full) is %s, not COMPLETED, once the store has room", id, st[atoi(id)].state)
		}
	}
	before, _, err := listJobs("24.11", conf, dir)
	if err != nil {
		t.Fatal(err)
	}

	// Crash and restart on the same state: everything acknowledged is
	// there, as it was.
	if _, _, err := f.stopWith(syscall.SIGKILL, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := f.tryStart(); err != nil {
		t.Fatalf("restart on the store that was full: %v", err)
	}
	after, dups, err := listJobs("24.11", conf, dir)
	if err != nil {
		t.Fatal(err)
	}
	var lost, changed []string
	for _, id := range acked {
		if _, ok := after[id]; !ok {
			lost = append(lost, strconv.Itoa(id))
		}
	}
	for id, b := range before {
		if a := after[id]; a.state != b.state || a.reason != b.reason {
			changed = append(changed, fmt.Sprintf("%d:%s(%s)->%s(%s)", id, b.state, b.reason, a.state, a.reason))
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d acknowledged jobs lost: %v", len(lost), lost)
	}
	if len(changed) > 0 {
		t.Errorf("%d jobs changed across the restart: %v", len(changed), changed)
	}
	if len(dups) > 0 {
		t.Errorf("job ids listed twice after the restart: %v", dups)
	}
	// What the cancel and the release were told holds.
	if st := after[cancelID].state; (cancelCode == 0) != (st == "CANCELLED") {
		t.Errorf("scancel %d on the full store exited %d, and the job is %s after the restart", cancelID, cancelCode, st)
	}
	if rs := after[holdID].reason; (releaseCode == 0) == (rs == "JobHeldUser") {
		t.Errorf("scontrol release %d on the full store exited %d, and the job's reason is %s after the restart", holdID, releaseCode, rs)
	}
	high := 0
	for id := range after {
		high = max(high, id)
	}
	next := nextIDAbove(t, f, dir, high)
	if panicRe.MatchString(f.Logs()) {
		t.Errorf("server log has a panic:\n%s", lastLines(f.Logs(), 60))
	}
	t.Logf("RESULT faults disk full: 8 MiB tmpfs, %d held jobs of 48 KiB acknowledged before the first refusal (%d bytes free then), refused in %v with %q, then %d small ones; scancel exit %d, scontrol release exit %d; %d of %d reads answered while full; %d of 2 running jobs seen ending while full (kept in memory: %v); SIGKILL and restart while full: %s; "+
		"sbatch works %v after the remount to 64 MiB; after SIGKILL and restart %d of %d acknowledged jobs there, %d changed; next id %d > %d",
		len(acked)-smallAcked-1, freeAtRefusal, refusedIn.Round(time.Millisecond), refusal, smallAcked, cancelCode, releaseCode, readsOK, 5*len(releases), endedWhileFull, strings.Contains(f.Logs(), "kept in memory"), fullStart, recoverIn.Round(time.Millisecond),
		len(acked)-len(lost), len(acked), len(changed), next, high)
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 60))
	}
}

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

// waitRowsOK polls squeue until ok(rows) or the deadline; it returns the
// last listing and whether ok was reached.
func waitRowsOK(f *frontend, dir string, d time.Duration, ok func(map[int]jobRow) bool) (map[int]jobRow, bool) {
	end := time.Now().Add(d)
	for {
		rows, _, err := listJobs("24.11", f.clientConf, dir)
		if err == nil && ok(rows) {
			return rows, true
		}
		if time.Now().After(end) {
			return rows, false
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitRows is waitRowsOK failing the test on the deadline.
func waitRows(t *testing.T, f *frontend, dir string, d time.Duration, ok func(map[int]jobRow) bool) map[int]jobRow {
	t.Helper()
	rows, reached := waitRowsOK(f, dir, d, ok)
	if !reached {
		t.Fatalf("squeue did not reach the expected state in %v:\n%v\n%s", d, rows, lastLines(f.Logs(), 30))
	}
	return rows
}

// ---------------------------------------------------------------------
// 4. The state directory made read-only under the server.

// TestFaultReadOnly: the state directory is an ext4 file system of its
// own (a loop-mounted image, errors=remount-ro) and the kernel makes it
// read-only under the running server, as it does when the disk fails
// (trigger_fs_error; a bind remount read-only is refused while the
// store has files open for writing). Writes must then be refused with a
// Slurm error (sbatch: ESLURM_WRITING_TO_FILE, as slurmctld answers when
// it cannot write its StateSaveLocation; scancel, scontrol hold and
// release), a cancel that is acknowledged must still end the job, reads
// must keep answering, and the server must neither crash nor hang, nor
// when stopped. After a file system check, the server restarts on the
// state and everything acknowledged is there as the clients were told.
// Finally a server started on a read-only state directory refuses to
// start, with a clear message.
func TestFaultReadOnly(t *testing.T) {
	base := t.TempDir()
	img := filepath.Join(base, "state.img")
	stateDir := filepath.Join(base, "state")
	if out, err := exec.Command("truncate", "-s", "256M", img).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v %s", err, out)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4: %v %s", err, out)
	}
	mountFS(t, stateDir, "-o", "loop,errors=remount-ro", img)
	os.Chmod(stateDir, 0o700)
	src, err := exec.Command("findmnt", "-no", "SOURCE", stateDir).Output()
	if err != nil {
		t.Fatal(err)
	}
	trigger := filepath.Join("/sys/fs/ext4", filepath.Base(strings.TrimSpace(string(src))), "trigger_fs_error")
	if _, err := os.Stat(trigger); err != nil {
		t.Skipf("no %s: %v", trigger, err)
	}
	f := newFaultFrontend(t, batchCluster, stateDir)
	f.start()
	t.Cleanup(f.stop)
	t.Cleanup(func() { reapJobs(t, f) })
	dir := workDir(t, "ro-")
	r := f.as(t).in(dir)
	conf := f.clientConf
	submit := func(args ...string) int {
		t.Helper()
		out := r.mustRun("24.11", append([]string{"sbatch", "-o", "/dev/null"}, args...)...)
		m := submittedRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sbatch %v: %q", args, out)
		}
		return atoi(m[1])
	}
	running := submit("-J", "running", "--mem=10M", "--wrap", "sleep 300")
	keep := submit("-J", "keep", "--mem=10M", "--wrap", "sleep 300") // its shim is killed before the check
	held1 := submit("-J", "held1", "--hold", "--wrap", "true")
	held2 := submit("-J", "held2", "--hold", "--wrap", "true")
	later := submit("-J", "later", "--begin=now+3600", "--wrap", "true")
	waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool {
		return rows[running].state == "RUNNING" && rows[keep].state == "RUNNING"
	})
	before, _, err := listJobs("24.11", conf, dir)
	if err != nil {
		t.Fatal(err)
	}

	// The disk fails: the kernel makes the file system read-only.
	if err := os.WriteFile(trigger, []byte("1\n"), 0); err != nil {
		t.Fatalf("trigger_fs_error: %v", err)
	}
	var st syscall.Statfs_t
	if err := os.WriteFile(filepath.Join(stateDir, "probe"), nil, 0o600); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("the state file system is not read-only after trigger_fs_error (%v)", err)
	}
	syscall.Statfs(stateDir, &st)
	t.Logf("statfs flags after trigger_fs_error: %#x", st.Flags)
	roAt := time.Now()

	// Writes are refused, with Slurm's errors, at once.
	type try struct {
		what string
		args []string
		rel  string
	}
	refused := map[string]string{} // what -> the client's message
	refusals := 0
	for _, tr := range []try{
		{"sbatch", []string{"sbatch", "-o", "/dev/null", "--wrap", "true"}, "22.05"},
		{"sbatch", []string{"sbatch", "-o", "/dev/null", "--wrap", "true"}, "24.11"},
		{"sbatch", []string{"sbatch", "-o", "/dev/null", "--wrap", "true"}, "26.05"},
		{"scancel held", []string{"scancel", strconv.Itoa(held1)}, "24.11"},
		{"scontrol hold", []string{"scontrol", "hold", strconv.Itoa(later)}, "26.05"},
		{"scontrol release", []string{"scontrol", "release", strconv.Itoa(held2)}, "22.05"},
	} {
		out, errs, code, took := faultClient(tr.rel, conf, dir, 30*time.Second, tr.args...)
		switch {
		case code == -1 || took > 10*time.Second:
			t.Errorf("%s %s on the read-only store took %v (exit %d): %q", tr.rel, tr.what, took, code, errs)
		case code == 0:
			t.Errorf("%s %s on the read-only store succeeded: %q %q", tr.rel, tr.what, out, errs)
		case strings.Contains(errs, "Unable to contact"):
			t.Errorf("%s %s on the read-only store: the server is gone: %q\n%s", tr.rel, tr.what, errs, crashLines(f.Logs()))
		case tr.what == "sbatch":
			if m := submitErrRe.FindStringSubmatch(errs); m == nil || m[1] != writingToFile {
				t.Errorf("%s sbatch on the read-only store: %q, want %q", tr.rel, errs, writingToFile)
			}
		}
		if code > 0 {
			refusals++
			first, _, _ := strings.Cut(strings.TrimSpace(errs), "\n")
			refused[tr.what] = first
		}
	}
	// A running job: a cancel the clients are told of must end it.
	_, cancelErrs, cancelCode, _ := faultClient("24.11", conf, dir, 30*time.Second, "scancel", strconv.Itoa(running))
	cancelOutcome := "refused: " + strings.TrimSpace(cancelErrs)
	if cancelCode == 0 {
		rows, ok := waitRowsOK(f, dir, 20*time.Second, func(rows map[int]jobRow) bool { return rows[running].state == "CANCELLED" })
		if !ok {
			t.Errorf("scancel %d (running) on the read-only store was acknowledged, but the job is %s 20 s later", running, rows[running].state)
		}
		for _, s := range shimsOf(filepath.Join(stateDir, "spool")) {
			if s.jobID == running {
				t.Errorf("scancel %d (running) on the read-only store was acknowledged, but its shim %d still runs", running, s.pid)
			}
		}
		cancelOutcome = "acknowledged, job " + rows[running].state
	}
	// Reads answer.
	readsOK, reads := 0, 0
	for _, rel := range releases {
		for _, args := range [][]string{{"squeue", "-h", "-t", "all"}, {"sinfo", "-h"}, {"scontrol", "show", "job", strconv.Itoa(held1)}, {"scontrol", "ping"}} {
			reads++
			out, errs, code, took := faultClient(rel, conf, dir, 30*time.Second, args...)
			if code != 0 || took > 10*time.Second {
				t.Errorf("%s %v on the read-only store: exit %d in %v: %q %q", rel, args, code, took, out, errs)
			} else {
				readsOK++
			}
		}
	}
	if !f.alive() {
		t.Fatalf("the server died on the read-only store:\n%s", crashLines(f.Logs()))
	}
	// The second job's shim is killed (the job cannot be cancelled
	// through a read-only store), so that nothing holds the file system
	// when it is checked.
	for _, s := range shimsOf(filepath.Join(stateDir, "spool")) {
		syscall.Kill(s.pid, syscall.SIGKILL)
	}
	rows, _ := waitRowsOK(f, dir, 20*time.Second, func(rows map[int]jobRow) bool { return !activeStates[rows[keep].state] })
	keepWhileRO := rows[keep].state
	ps, took, err := f.stopWith(syscall.SIGTERM, 15*time.Second)
	if err != nil || ps.ExitCode() != 0 {
		t.Errorf("stopping the server on the read-only store: %v, exit %v in %v\n%s", err, ps, took, crashLines(f.Logs()))
	} else if !strings.Contains(f.Logs(), "state store left open") {
		t.Errorf("the server stopped on a read-only store without saying its store was left unflushed:\n%s", lastLines(f.Logs(), 10))
	}
	roFor := time.Since(roAt)

	// The disk is checked and mounted again: everything the clients
	// were told is there.
	for end := time.Now().Add(10 * time.Second); len(shimsOf(filepath.Join(stateDir, "spool"))) > 0 && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Unmount(stateDir, 0); err != nil {
		t.Fatalf("unmount the read-only state: %v", err)
	}
	// The file system (and its error state) lives on while any mount
	// namespace holds it (a job's shim has its own), and mount -o loop
	// reuses a loop device still attached to the image: wait until the
	// kernel has let go of it, so that the check and the new mount see
	// the disk, not the old read-only superblock.
	if held := waitLoopReleased(img, 20*time.Second); held != "" {
		t.Fatalf("the read-only state is still held after unmount: %s", held)
	}
	fsck, err := exec.Command("e2fsck", "-fy", img).CombinedOutput()
	if code := exitCode(err); code < 0 || code > 1 { // 1: errors corrected
		t.Fatalf("e2fsck: %v\n%s", err, fsck)
	}
	if out, err := exec.Command("mount", "-o", "loop,errors=remount-ro", img, stateDir).CombinedOutput(); err != nil {
		t.Fatalf("mount again: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(stateDir, "probe"), nil, 0o600); err != nil {
		mi, _ := exec.Command("findmnt", "-o", "TARGET,SOURCE,OPTIONS", stateDir).CombinedOutput()
		t.Fatalf("the checked state is not writable after mounting it again (%v):\n%s\nfsck said:\n%s", err, mi, fsck)
	}
	os.Remove(filepath.Join(stateDir, "probe"))
	if err := f.tryStart(); err != nil {
		t.Fatalf("restart on the checked state: %v", err)
	}
	after, dups, err := listJobs("24.11", conf, dir)
	if err != nil {
		t.Fatal(err)
	}
	var lost, changed []string
	for id, b := range before {
		a, ok := after[id]
		switch {
		case !ok:
			lost = append(lost, strconv.Itoa(id))
		case id == running || id == keep:
			// Ended while the store was read-only: whatever its end, it
			// must not be running any more.
			if activeStates[a.state] {
				changed = append(changed, fmt.Sprintf("%d:%s (its processes are gone)", id, a.state))
			}
		case a.state != b.state || a.reason != b.reason:
			changed = append(changed, fmt.Sprintf("%d:%s(%s)->%s(%s)", id, b.state, b.reason, a.state, a.reason))
		}
	}
	if len(lost) > 0 || len(changed) > 0 || len(dups) > 0 {
		t.Errorf("after the read-only period and a restart: lost %v, changed %v, listed twice %v (fsck said:\n%s)", lost, changed, dups, fsck)
	}
	high := 0
	for id := range after {
		high = max(high, id)
	}
	next := nextIDAbove(t, f, dir, high)
	logs := f.Logs()
	if panicRe.MatchString(logs) {
		t.Errorf("server log has a panic:\n%s", crashLines(logs))
	}
	if _, _, err := f.stopWith(syscall.SIGTERM, 15*time.Second); err != nil {
		t.Fatal(err)
	}

	// A server started on a read-only state directory refuses to.
	if out, err := exec.Command("mount", "--bind", stateDir, stateDir).CombinedOutput(); err != nil {
		t.Fatalf("bind: %v %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", stateDir).CombinedOutput(); err != nil {
		syscall.Unmount(stateDir, 0)
		t.Fatalf("remount,bind,ro: %v %s", err, out)
	}
	startErr := f.tryStart()
	roStart := "served"
	if startErr == nil {
		t.Errorf("the server started on a read-only state directory")
		f.stop()
	} else {
		line := ""
		for _, l := range lines(f.Logs()[len(logs):]) {
			if strings.Contains(l, "slurm-frontend:") && strings.Contains(strings.ToLower(l), "read-only") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("the server refused a read-only state directory without saying so:\n%v", startErr)
		}
		roStart = "refused: " + line
	}
	if err := syscall.Unmount(stateDir, 0); err != nil {
		t.Errorf("unmount the bind: %v", err)
	}
	f.start()
	var msgs []string
	for what, m := range refused {
		msgs = append(msgs, what+": "+m)
	}
	sort.Strings(msgs)
	t.Logf("RESULT faults read-only state: ext4 made read-only under the server (trigger_fs_error) for %v; %d of 6 writes refused (%s); running job's scancel %s; %d of %d reads answered; job whose shim was then killed: %s; stop exit %v; after fsck and restart %d lost, %d changed; next id %d > %d; start on a read-only state dir %s",
		roFor.Round(time.Millisecond), refusals, strings.Join(msgs, "; "), cancelOutcome, readsOK, reads, keepWhileRO, ps, len(lost), len(changed), next, high, roStart)
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 60))
	}
}

// ---------------------------------------------------------------------
// 5. A job's shim killed.

// TestFaultShimKilled: the shim of a running job (the init of its PID
// namespace, "slurm-frontend shim run DIR") is killed with SIGKILL, three
// ways: while the server that started it runs, after a restart of the
// server (the shim re-attached), and while the server is down. Each time
// the job must end as slurmctld ends a job whose node died (NODE_FAIL,
// reason NodeDown), its processes must be gone, the node it held must
// take a new job that needs all of it, and the server must keep serving.
func TestFaultShimKilled(t *testing.T) {
	f := newFrontend(t, batchCluster)
	t.Cleanup(func() { reapJobs(t, f) })
	dir := workDir(t, "shimkill-")
	r := f.as(t).in(dir)
	spool := filepath.Join(f.stateDir, "spool")
	submit := func(node string, marker int) int {
		t.Helper()
		out := r.mustRun(releases[marker%3], "sbatch", "-w", node, "--exclusive", "-o", "/dev/null", "--wrap", fmt.Sprintf("sleep %d", marker))
		m := submittedRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sbatch: %q", out)
		}
		return atoi(m[1])
	}
	shimOf := func(id int) shimInfo {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			for _, s := range shimsOf(spool) {
				if s.jobID == id {
					return s
				}
			}
		}
		t.Fatalf("no shim runs job %d", id)
		return shimInfo{}
	}
	type variant struct {
		name   string
		node   string
		before func() // before the kill
		after  func() // after it
	}
	variants := []variant{
		{name: "server running (its child)", node: "n1"},
		{name: "after a restart (re-attached)", node: "n2", before: func() {
			if _, _, err := f.stopWith(syscall.SIGKILL, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			f.start()
		}},
		{name: "server down", node: "n3", before: func() {
			if _, _, err := f.stopWith(syscall.SIGTERM, 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}, after: func() { f.start() }},
	}
	var results []string
	for i, v := range variants {
		marker := 3001 + i
		id := submit(v.node, marker)
		waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "RUNNING" })
		if v.before != nil {
			v.before()
		}
		s := shimOf(id)
		cgroups := jobCgroups(s.dir)
		// RUNNING is reported once the script is started; its sleep
		// follows a moment later.
		for end := time.Now().Add(10 * time.Second); len(procsWith("sleep", strconv.Itoa(marker))) != 1 && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		if len(procsWith("sleep", strconv.Itoa(marker))) != 1 {
			t.Fatalf("job %d: no 'sleep %d' process", id, marker)
		}
		if err := syscall.Kill(s.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		if v.after != nil {
			v.after()
		}
		rows, ok := waitRowsOK(f, dir, 20*time.Second, func(rows map[int]jobRow) bool { return !activeStates[rows[id].state] })
		endedIn := time.Since(killed)
		row := rows[id]
		if !ok {
			t.Errorf("%s: job %d is still %s %v after its shim was killed", v.name, id, row.state, endedIn)
		} else if row.state != "NODE_FAIL" || row.reason != "NodeDown" {
			t.Errorf("%s: job %d ended %s (%s), want NODE_FAIL (NodeDown), as slurmctld ends a job whose node died", v.name, id, row.state, row.reason)
		}
		kv := parseKV(records(r.mustRun("24.11", "scontrol", "show", "job", strconv.Itoa(id)))[0])
		if left := procsGone(5*time.Second, "sleep", strconv.Itoa(marker)); len(left) > 0 {
			t.Errorf("%s: job %d's process sleep %d (pids %v) outlived its shim", v.name, id, marker, left)
		}
		var leftCg []string
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			leftCg = leftCg[:0]
			for _, d := range cgroups {
				if _, err := os.Stat(d); err == nil {
					leftCg = append(leftCg, d)
				}
			}
			if len(leftCg) == 0 || time.Now().After(end) {
				break
			}
		}
		if len(leftCg) > 0 {
			t.Errorf("%s: job %d's cgroups outlived its shim: %v", v.name, id, leftCg)
		}
		// The node is free: a job that needs all of it starts.
		next := submit(v.node, 4001+i)
		_, started := waitRowsOK(f, dir, 20*time.Second, func(rows map[int]jobRow) bool { return rows[next].state == "RUNNING" })
		if !started {
			t.Errorf("%s: %s is not free for a new exclusive job after job %d's shim was killed", v.name, v.node, id)
		}
		r.mustRun("22.05", "scancel", strconv.Itoa(next))
		results = append(results, fmt.Sprintf("%s: %s %s ExitCode=%s in %v, %d of %d cgroups left, node reused %v", v.name, row.state, row.reason, kv["ExitCode"], endedIn.Round(time.Millisecond), len(leftCg), len(cgroups), started))
	}
	for _, rel := range releases {
		r.mustRun(rel, "scontrol", "ping")
		r.mustRun(rel, "sinfo")
	}
	if panicRe.MatchString(f.Logs()) {
		t.Errorf("server log has a panic:\n%s", crashLines(f.Logs()))
	}
	t.Logf("RESULT faults shim killed: %s", strings.Join(results, "; "))
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 60))
	}
}

// ---------------------------------------------------------------------
// 6. The host's clock stepped.

// clockGuard steps CLOCK_REALTIME by offsets from the true time, the true
// time being computed from CLOCK_MONOTONIC since the guard was made, so
// that restoring it (offset 0) is exact whatever happened meanwhile. The
// test's cleanup and a watchdog (a monotonic timer) restore it.
type clockGuard struct {
	mu     sync.Mutex
	r0, m0 int64 // CLOCK_REALTIME and CLOCK_MONOTONIC, ns, read together
	off    time.Duration
}

func newClockGuard(t *testing.T, watchdog time.Duration) *clockGuard {
	g := &clockGuard{}
	var r, m, m2 unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &m)
	unix.ClockGettime(unix.CLOCK_REALTIME, &r)
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &m2)
	g.r0, g.m0 = r.Nano(), (m.Nano()+m2.Nano())/2
	restore := func() {
		if err := g.set(0); err != nil {
			t.Errorf("restoring the clock: %v", err)
		}
	}
	wd := time.AfterFunc(watchdog, restore)
	t.Cleanup(func() { wd.Stop(); restore() })
	return g
}

// set makes CLOCK_REALTIME the true time plus off.
func (g *clockGuard) set(off time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var m unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &m); err != nil {
		return err
	}
	ts := unix.NsecToTimespec(g.r0 + (m.Nano() - g.m0) + int64(off))
	if err := unix.ClockSettime(unix.CLOCK_REALTIME, &ts); err != nil {
		return err
	}
	g.off = off
	return nil
}

// squeueSecs parses squeue's TIME / TIME_LEFT ("[D-]H:MM:SS", "M:SS");
// ok false for "INVALID", "UNLIMITED" and other words.
func squeueSecs(s string) (int, bool) {
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		v, err := strconv.Atoi(d)
		if err != nil {
			return 0, false
		}
		days, s = v, rest
	}
	secs := 0
	for _, p := range strings.Split(s, ":") {
		v, err := strconv.Atoi(p)
		if err != nil {
			return 0, false
		}
		secs = secs*60 + v
	}
	return days*86400 + secs, true
}

// TestFaultClockStep: with jobs running (one with a one-minute time
// limit), held and waiting for a begin time, the host's CLOCK_REALTIME
// is stepped forward by an hour and, later, back to the true time (munged
// and the clients share the host's clock, so credentials are made and
// checked on the same one). The server must not crash, the clients of
// every release must keep working (ping, squeue, sinfo, sbatch), the
// time limit must be enforced on elapsed time (neither at the forward
// step nor an hour late), squeue must show every running job's true
// elapsed time (never negative: INVALID), and jobs submitted after a
// step must run normally.
func TestFaultClockStep(t *testing.T) {
	// It steps the host's clock: every other test running meanwhile (go
	// test runs packages in parallel) would see credentials expire or
	// come from the future. Only in the campaign, which runs it alone.
	if os.Getenv("SLURM_FRONTEND_RELIABILITY") == "" {
		t.Skip("steps the host's clock: run alone by make reliability (SLURM_FRONTEND_RELIABILITY=1)")
	}
	const step = time.Hour
	f := newFrontend(t, batchCluster)
	t.Cleanup(func() { reapJobs(t, f) })
	clock := newClockGuard(t, 150*time.Second)
	dir := workDir(t, "clock-")
	r := f.as(t).in(dir)
	conf := f.clientConf
	submit := func(rel string, args ...string) int {
		t.Helper()
		out, errs, code, _ := faultClient(rel, conf, dir, 30*time.Second, append([]string{"sbatch", "-o", "/dev/null"}, args...)...)
		m := submittedRe.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("%s sbatch %v (clock %+v): exit %d %q %q\n%s", rel, args, clock.off, code, out, errs, lastLines(f.Logs(), 20))
		}
		return atoi(m[1])
	}
	limited := submit("24.11", "-J", "limited", "-t", "1", "--mem=10M", "--wrap", "sleep 300")
	long := submit("22.05", "-J", "long", "--mem=10M", "--wrap", "sleep 300")
	held := submit("26.05", "-J", "held", "--hold", "--wrap", "true")
	begin := submit("24.11", "-J", "begin", "--begin=now+600", "--mem=10M", "--wrap", "true")
	waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool {
		return rows[limited].state == "RUNNING" && rows[long].state == "RUNNING"
	})
	startedAt := time.Now() // monotonic: when both were seen running

	// truth checks what squeue shows against the elapsed time measured
	// here; it returns a summary.
	var insane []string
	truth := func(when string, ids map[int]time.Time) string {
		rows, _, err := listJobs("24.11", conf, dir)
		if err != nil {
			t.Errorf("%s: %v", when, err)
			return err.Error()
		}
		var parts []string
		for id, since := range ids {
			row := rows[id]
			if row.state != "RUNNING" {
				continue
			}
			got, ok := squeueSecs(row.time)
			want := int(time.Since(since).Seconds())
			if !ok || got < 0 || got < want-5 || got > want+5 {
				insane = append(insane, fmt.Sprintf("%s: job %d TIME %s, elapsed %ds", when, id, row.time, want))
			}
			parts = append(parts, fmt.Sprintf("job%d=%s/%s", id, row.time, row.left))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	}
	clientsWork := func(when string) int {
		ok := 0
		for _, rel := range releases {
			for _, args := range [][]string{{"scontrol", "ping"}, {"squeue", "-h"}, {"sinfo", "-h"}} {
				out, errs, code, took := faultClient(rel, conf, dir, 30*time.Second, args...)
				if code != 0 || took > 10*time.Second {
					t.Errorf("%s: %s %v: exit %d in %v: %q %q", when, rel, args, code, took, out, errs)
				} else {
					ok++
				}
			}
		}
		return ok
	}
	time.Sleep(3 * time.Second)
	before := truth("before the step", map[int]time.Time{limited: startedAt, long: startedAt})

	// Forward by an hour.
	if err := clock.set(step); err != nil {
		t.Skipf("cannot set the clock: %v", err)
	}
	steppedAt := time.Now()
	worksFwd := clientsWork("after +1h")
	rows, _, _ := listJobs("24.11", conf, dir)
	if rows[limited].state != "RUNNING" {
		t.Errorf("the job with a 1-minute limit is %s right after the clock jumped an hour ahead, %v after it started", rows[limited].state, time.Since(startedAt).Round(time.Second))
	}
	quick := submit("26.05", "-J", "quick", "--mem=10M", "--wrap", "sleep 2")
	fresh := submit("22.05", "-J", "fresh", "--mem=10M", "--wrap", "sleep 300")
	rows = waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool {
		return rows[quick].state == "COMPLETED" && rows[fresh].state == "RUNNING"
	})
	freshAt := time.Now()
	beginState := rows[begin].state // --begin is a wall-clock time: an hour ahead, it has come
	time.Sleep(2 * time.Second)
	fwd := truth("after +1h", map[int]time.Time{limited: startedAt, long: startedAt, fresh: freshAt})
	quickKV := parseKV(records(r.mustRun("24.11", "scontrol", "show", "job", strconv.Itoa(quick)))[0])

	// Back to the true time.
	if err := clock.set(0); err != nil {
		t.Fatalf("restoring the clock: %v", err)
	}
	fwdFor := time.Since(steppedAt)
	worksBack := clientsWork("after stepping back")
	after := submit("24.11", "-J", "after", "--mem=10M", "--wrap", "sleep 2")
	time.Sleep(2 * time.Second)
	back := truth("after stepping back", map[int]time.Time{limited: startedAt, long: startedAt, fresh: freshAt})

	// The time limit, on elapsed time.
	rows, ok := waitRowsOK(f, dir, 90*time.Second-time.Since(startedAt), func(rows map[int]jobRow) bool { return rows[limited].state == "TIMEOUT" })
	limitAt := time.Since(startedAt)
	if !ok {
		t.Errorf("the job with a 1-minute limit is %s %v after it started", rows[limited].state, limitAt.Round(time.Second))
	} else if limitAt < 55*time.Second || limitAt > 75*time.Second {
		t.Errorf("the job with a 1-minute limit ended TIMEOUT %v after it started, not at its limit (+KillWait)", limitAt.Round(time.Second))
	}
	rows = waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[after].state == "COMPLETED" })
	if rows[held].state != "PENDING" || rows[held].reason != "JobHeldUser" {
		t.Errorf("the held job is %s (%s) after the clock steps", rows[held].state, rows[held].reason)
	}
	limKV := parseKV(records(r.mustRun("26.05", "scontrol", "show", "job", strconv.Itoa(limited)))[0])
	if len(insane) > 0 {
		t.Errorf("squeue showed times that are not the jobs' elapsed times:\n%s", strings.Join(insane, "\n"))
	}
	if !f.alive() || panicRe.MatchString(f.Logs()) {
		t.Errorf("server died or panicked:\n%s", crashLines(f.Logs()))
	}
	t.Logf("RESULT faults clock step: +%v for %v, then back; clients answered %d/9 after +1h and %d/9 after stepping back; TIME/TIME_LEFT before %s, at +1h %s, after back %s; "+
		"1-minute limit enforced at %v elapsed (RunTime=%s); job submitted at +1h ran (Submit %s Start %s End %s), --begin=now+600 job %s at +1h, held job %s; %d insane times",
		step, fwdFor.Round(time.Millisecond), worksFwd, worksBack, before, fwd, back, limitAt.Round(time.Second), limKV["RunTime"],
		quickKV["SubmitTime"], quickKV["StartTime"], quickKV["EndTime"], beginState, rows[held].state, len(insane))
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 60))
	}
}

// TestFaultSpoolFull: the engine's spool (the sessions' files, beside
// the store) on a file system of its own that fills up, while the store
// has room: a job the engine cannot record yet must wait (PENDING), not
// fail, and run once the spool has room again.
func TestFaultSpoolFull(t *testing.T) {
	base := t.TempDir()
	stateDir := filepath.Join(base, "state")
	spool := filepath.Join(stateDir, "spool")
	mountFS(t, spool, "-t", "tmpfs", "-o", "size=1m,mode=0711", "tmpfs")
	f := newFaultFrontend(t, batchCluster, stateDir)
	f.start()
	t.Cleanup(f.stop)
	t.Cleanup(func() { reapJobs(t, f) })
	dir := workDir(t, "spoolfull-")
	r := f.as(t).in(dir)
	// Fill the spool.
	ballast := filepath.Join(spool, "ballast")
	bf, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := bf.Write(make([]byte, 2<<20))
	bf.Close()
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("filling the spool: %v", werr)
	}
	out := r.mustRun("24.11", "sbatch", "--mem=10M", "-o", "/dev/null", "--wrap", "true")
	m := submittedRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sbatch: %q", out)
	}
	id := atoi(m[1])
	time.Sleep(3 * time.Second) // a few dispatcher passes
	rows, _, err := listJobs("24.11", f.clientConf, dir)
	if err != nil {
		t.Fatal(err)
	}
	whileFull := rows[id]
	if whileFull.state != "PENDING" {
		t.Errorf("job %d, which the engine could not record (spool full), is %s (%s), not PENDING", id, whileFull.state, whileFull.reason)
	}
	os.Remove(ballast)
	roomAt := time.Now()
	rows, ok := waitRowsOK(f, dir, 20*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
	if !ok {
		t.Errorf("job %d is %s (%s) 20 s after the spool got room, not COMPLETED", id, rows[id].state, rows[id].reason)
	}
	if panicRe.MatchString(f.Logs()) {
		t.Errorf("server log has a panic:\n%s", crashLines(f.Logs()))
	}
	t.Logf("RESULT faults spool full: job %d %s (%s) while the spool was full, %s %v after it got room", id, whileFull.state, whileFull.reason, rows[id].state, time.Since(roomAt).Round(time.Millisecond))
	if t.Failed() {
		t.Logf("server log (last lines):\n%s", lastLines(f.Logs(), 30))
	}
}

// The state directory removed under a running server (an operator's
// mistake, a cleanup script): the store's files are still open, so
// writes would go on "succeeding" into files no restart finds. What a
// user sees instead is the write refused with slurmctld's error for a
// state file it cannot write, while what was acknowledged before stays
// listed; the server still stops when told to.
func TestFaultStateDirRemoved(t *testing.T) {
	f := newFrontend(t, batchCluster)
	dir := workDir(t, "rmstate-")
	r := f.as(t).in(dir)
	out := r.mustRun("24.11", "sbatch", "--hold", "-J", "kept", "--wrap", "true")
	m := submittedRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sbatch: %q", out)
	}
	if err := os.RemoveAll(f.stateDir); err != nil {
		t.Fatal(err)
	}
	for _, rel := range releases {
		out, errs, code := r.run(rel, "sbatch", "--hold", "-J", "lost", "--wrap", "true")
		if code == 0 || !strings.Contains(errs, "Batch job submission failed: I/O error writing script/environment to file") {
			t.Errorf("%s: sbatch after the state directory was removed: exit %d\nstdout: %q\nstderr: %q", rel, code, out, errs)
		}
	}
	out = r.mustRun("24.11", "squeue", "-h", "-o", "%i %j")
	if out != m[1]+" kept\n" {
		t.Errorf("squeue: %q, want only the acknowledged job %s", out, m[1])
	}
	if _, took, err := f.stopWith(syscall.SIGTERM, 45*time.Second); err != nil {
		t.Errorf("stop: %v (after %v)", err, took)
	}
}
