package main

import (
	"cmp"
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
	"syscall"
	"testing"
	"time"
)

// The batch tests run job scripts through the stock sbatch of each release
// against the server and its embedded engine, and check what a Slurm user
// sees: output files and their names, the job's environment, exit codes,
// states and reasons in squeue and scontrol, and the effect of scancel,
// scontrol hold/release/update, dependencies, arrays and time limits.
//
// Every expectation below was measured with the same scripts on a REAL
// slurmctld + slurmd (node n1) of the same release, on the same cluster
// (fakeCluster; KillWait=3 on both sides). The scenarios are written
// against a "side" so that they run unchanged against real Slurm:
// SLURM_FRONTEND_BATCH_REAL=1 go test -run TestBatchReal (batch_real_test.go)
// runs them there, which is how the expectations were checked.
//
// Where real Slurm differs between releases, the scenario says so.

// batchCluster is the reference cluster with a short SIGTERM→SIGKILL
// grace, so that time limits and cancels of TERM-trapping scripts end fast.
var batchCluster = strings.Replace(fakeCluster, "GresTypes=gpu\n", "GresTypes=gpu\nKillWait=3\n", 1)

// bside is one controller (ours or a real one) seen through one release's
// clients, with a fresh working directory under sharedDir.
type bside struct {
	name  string
	rel   string
	r     runner // root, in dir
	dir   string
	real  bool
	logs  func() string
	spool string // where our engine's jobs live ("" on real Slurm)

	mu   sync.Mutex
	jobs []string // ids this side submitted
}

func (s *bside) logTail() string {
	if s.logs == nil {
		return ""
	}
	return "controller log (last lines):\n" + lastLines(s.logs(), 40)
}

// oursSide is a side for our server f; the jobs it submitted are
// cancelled at the end of the test (before the server stops).
func oursSide(t *testing.T, f *frontend, rel string) *bside {
	dir := workDir(t, "batch-")
	s := &bside{name: "slurm-frontend", rel: rel, r: f.as(t).in(dir), dir: dir, logs: f.Logs, spool: f.stateDir}
	t.Cleanup(func() { s.cancelMine(t) })
	return s
}

// cancelMine cancels what this side submitted and has not ended.
func (s *bside) cancelMine(t *testing.T) {
	s.mu.Lock()
	ids := slices.Clone(s.jobs)
	s.mu.Unlock()
	if len(ids) > 0 {
		runClient(t, s.rel, s.r.conf, s.dir, nil, append([]string{"scancel"}, ids...)...)
	}
}

func (s *bside) as(user string) runner { return s.r.user(user) }

// onOurs runs a scenario against a fresh server of batchCluster, once
// for each release's clients (in parallel with other tests).
func onOurs(t *testing.T, scenario func(*testing.T, *bside)) {
	t.Parallel()
	f := newFrontend(t, batchCluster)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) { scenario(t, oursSide(t, f, rel)) })
	}
}

// with returns s reporting to t (for subtests of the test that made s).
func (s *bside) with(t *testing.T) *bside {
	r := s.r
	r.t = t
	return &bside{name: s.name, rel: s.rel, r: r, dir: s.dir, real: s.real, logs: s.logs, spool: s.spool}
}

var submittedRe = regexp.MustCompile(`^Submitted batch job (\d+)\n$`)

// sbatchAs submits with r and returns the job id sbatch printed.
func (s *bside) sbatchAs(t *testing.T, r runner, args ...string) string {
	t.Helper()
	out, errs, code := r.run(s.rel, append([]string{"sbatch"}, args...)...)
	m := submittedRe.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("%s: sbatch %s: exit %d\nstdout: %q\nstderr: %q\n%s", s.name, strings.Join(args, " "), code, out, errs, s.logTail())
	}
	if errs != "" {
		t.Errorf("%s: sbatch %s: unexpected stderr %q", s.name, strings.Join(args, " "), errs)
	}
	s.mu.Lock()
	s.jobs = append(s.jobs, m[1])
	s.mu.Unlock()
	return m[1]
}

func (s *bside) sbatch(t *testing.T, args ...string) string {
	t.Helper()
	return s.sbatchAs(t, s.r, args...)
}

// squeueState returns STATE and REASON of a job or array task as
// `squeue -t all` lists it; "" when squeue does not list it.
func (s *bside) squeueState(t *testing.T, id string) (string, string) {
	t.Helper()
	out, _, _ := s.r.run(s.rel, "squeue", "-h", "-r", "-t", "all", "-j", id, "-o", "%i|%T|%r")
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "|")
		if len(f) == 3 && f[0] == id {
			return f[1], f[2]
		}
	}
	return "", ""
}

var activeStates = map[string]bool{"": true, "PENDING": true, "RUNNING": true, "COMPLETING": true, "CONFIGURING": true, "SUSPENDED": true, "REQUEUED": true, "RESIZING": true, "SIGNALING": true, "STAGE_OUT": true}

// waitState polls squeue until ok(state, reason) or the deadline; it
// returns the last state and reason and whether ok was reached.
func (s *bside) waitState(t *testing.T, id string, d time.Duration, ok func(st, reason string) bool) (string, string, bool) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		st, reason := s.squeueState(t, id)
		if ok(st, reason) {
			return st, reason, true
		}
		if time.Now().After(end) {
			return st, reason, false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mustReach waits for state want (and reason, unless "") and fails the
// test otherwise.
func (s *bside) mustReach(t *testing.T, id, want, wantReason string, d time.Duration) {
	t.Helper()
	st, reason, ok := s.waitState(t, id, d, func(st, r string) bool { return st == want && (wantReason == "" || r == wantReason) })
	if !ok {
		t.Fatalf("%s: job %s: state %q reason %q after %v, want %s %s\n%s", s.name, id, st, reason, d, want, wantReason, s.logTail())
	}
}

// waitDone waits until the job has ended (any state other than pending,
// running, completing...).
func (s *bside) waitDone(t *testing.T, id string, d time.Duration) (string, string) {
	t.Helper()
	st, reason, ok := s.waitState(t, id, d, func(st, _ string) bool { return !activeStates[st] })
	if !ok {
		t.Fatalf("%s: job %s still %s (%s) after %v\n%s\n%s", s.name, id, st, reason, d, s.logTail(), jobProcs(cmp.Or(s.spool, s.dir)))
	}
	return st, reason
}

// jobProcs lists the processes of the embedded engine's jobs under dir
// (shims, container runtimes, and their descendants, which need not name
// dir) with where each one waits, and the ends of their shims' logs: what
// a job that does not end is stuck on.
func jobProcs(dir string) string {
	out, _ := exec.Command("ps", "-eo", "pid,ppid,user,stat,wchan:32,etime,args").Output()
	lines := strings.Split(string(out), "\n")
	ours := map[string]bool{}
	var logs []string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 2 && strings.Contains(l, dir) {
			ours[f[0]] = true
			if i := slices.Index(f, "run"); i > 0 && i+1 < len(f) && strings.HasSuffix(f[i-1], "shim") {
				logs = append(logs, filepath.Join(f[i+1], "shim.log"))
			}
		}
	}
	for grew := true; grew; { // descendants, whatever the pid order
		grew = false
		for _, l := range lines[1:] {
			if f := strings.Fields(l); len(f) > 2 && ours[f[1]] && !ours[f[0]] {
				ours[f[0]], grew = true, true
			}
		}
	}
	keep := lines[:1]
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 2 && ours[f[0]] {
			keep = append(keep, l)
		}
	}
	var b strings.Builder
	b.WriteString("processes:\n" + strings.Join(keep, "\n"))
	// What each waits on: its signals (a lost SIGCHLD), its descriptors
	// (what an epoll_wait watches).
	for _, l := range keep[1:] {
		pid := strings.Fields(l)[0]
		if strings.Contains(l, " serve ") {
			continue
		}
		var sig []string
		if st, err := os.ReadFile("/proc/" + pid + "/status"); err == nil {
			for _, sl := range strings.Split(string(st), "\n") {
				if k, _, ok := strings.Cut(sl, ":"); ok && (k == "SigPnd" || k == "ShdPnd" || k == "SigBlk" || k == "SigIgn" || k == "SigCgt" || k == "State") {
					sig = append(sig, strings.Join(strings.Fields(sl), " "))
				}
			}
		}
		var fds []string
		if ents, err := os.ReadDir("/proc/" + pid + "/fd"); err == nil {
			for _, e := range ents {
				if to, err := os.Readlink("/proc/" + pid + "/fd/" + e.Name()); err == nil {
					fds = append(fds, e.Name()+"->"+to)
				}
			}
		}
		fmt.Fprintf(&b, "\npid %s: %s; fds %s", pid, strings.Join(sig, ", "), strings.Join(fds, " "))
	}
	for _, p := range logs {
		if data, err := os.ReadFile(p); err == nil {
			fmt.Fprintf(&b, "\n%s (last lines):\n%s", p, lastLines(string(data), 10))
		}
	}
	return b.String()
}

// showJob returns the fields of `scontrol show job ID` (one record).
func (s *bside) showJob(t *testing.T, id string) map[string]string {
	t.Helper()
	out, errs, code := s.r.run(s.rel, "scontrol", "show", "job", id)
	recs := records(out)
	if code != 0 || len(recs) != 1 {
		t.Fatalf("%s: scontrol show job %s: exit %d, %d records\nstdout:\n%s\nstderr:\n%s", s.name, id, code, len(recs), out, errs)
	}
	return parseKV(recs[0])
}

// wantKV checks fields of a scontrol record.
func (s *bside) wantKV(t *testing.T, what string, kv map[string]string, want map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got, ok := kv[k]; !ok || got != want[k] {
			t.Errorf("%s: %s: %s=%q (present %v), want %q", s.name, what, k, got, ok, want[k])
		}
	}
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFile waits until the file exists and contains substr; it returns
// the content.
func waitFile(path, substr string, d time.Duration) (string, bool) {
	end := time.Now().Add(d)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), substr) {
			return string(b), true
		}
		if time.Now().After(end) {
			return string(b), false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var envLine = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// parseEnv parses `env` output.
func parseEnv(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if g := envLine.FindStringSubmatch(l); g != nil {
			if _, dup := m[g[1]]; !dup {
				m[g[1]] = g[2]
			}
		}
	}
	return m
}

// procsWith returns the host pids whose command line contains every arg
// of want, in order, as whole arguments.
// procsGone waits up to d for the processes procsWith finds to end, and
// returns those still there.
func procsGone(d time.Duration, want ...string) []int {
	left := procsWith(want...)
	for end := time.Now().Add(d); len(left) > 0 && time.Now().Before(end); left = procsWith(want...) {
		time.Sleep(100 * time.Millisecond)
	}
	return left
}

func procsWith(want ...string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i := 0; i+len(want) <= len(args); i++ {
			if slices.Equal(args[i:i+len(want)], want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func shortHost() string {
	h, _ := os.Hostname()
	h, _, _ = strings.Cut(h, ".")
	return h
}

var nodeNameRe = regexp.MustCompile(`^n([1-9]|1[0-6])$`)

// ---------------------------------------------------------------------
// 1. A script with #SBATCH headers: output files, environment, exit codes,
// states.

func TestBatchScript(t *testing.T) {
	onOurs(t, batchScript)
}

func batchScript(t *testing.T, s *bside) {
	writeScript(t, s.dir, "env.sh", `#!/bin/bash
#SBATCH -J envjob
#SBATCH -o out-%j-%x-%u-%A_%a.txt
#SBATCH -e err-%j.txt
#SBATCH --export=ALL,FOO=bar
#SBATCH -n 2
#SBATCH -c 3
#SBATCH --mem=1G
env
echo to-stderr >&2
exit 3
`)
	start := time.Now()
	id := s.sbatch(t, "env.sh")
	ok := s.sbatch(t, "-J", "okjob", "-o", "ok-%j.out", "--wrap", "echo fine")

	t.Run("exit 3", func(t *testing.T) {
		st, reason := s.waitDone(t, id, 30*time.Second)
		if st != "FAILED" || reason != "NonZeroExitCode" {
			t.Errorf("%s: job %s (exit 3): squeue state %s reason %s, want FAILED NonZeroExitCode", s.name, id, st, reason)
		}
		kv := s.showJob(t, id)
		outPath := filepath.Join(s.dir, fmt.Sprintf("out-%s-envjob-root-%s_4294967294.txt", id, id))
		errPath := filepath.Join(s.dir, "err-"+id+".txt")
		s.wantKV(t, "scontrol show job "+id, kv, map[string]string{
			"JobState": "FAILED", "Reason": "NonZeroExitCode", "ExitCode": "3:0", "JobName": "envjob",
			"Partition": "cpu", "NumCPUs": "6", "NumTasks": "2", "CPUs/Task": "3", "MinMemoryNode": "1G",
			"StdOut": outPath, "StdErr": errPath, "WorkDir": s.dir, "BatchHost": kv["NodeList"],
		})
		node := kv["NodeList"]
		if !nodeNameRe.MatchString(node) {
			t.Errorf("%s: scontrol show job %s: NodeList=%q, want one node of partition cpu", s.name, id, node)
		}
		if st, err := time.ParseInLocation("2006-01-02T15:04:05", kv["StartTime"], time.Local); err != nil || st.Before(start.Truncate(time.Second)) {
			t.Errorf("%s: scontrol show job %s: StartTime=%q, want the time it ran", s.name, id, kv["StartTime"])
		}

		b, err := os.ReadFile(outPath)
		if err != nil {
			ls, _ := filepath.Glob(filepath.Join(s.dir, "*"))
			t.Fatalf("%s: output file: %v (directory has %v)", s.name, err, ls)
		}
		if e, _ := os.ReadFile(errPath); string(e) != "to-stderr\n" {
			t.Errorf("%s: %s: %q, want \"to-stderr\\n\"", s.name, errPath, e)
		}
		env := parseEnv(string(b))
		want := map[string]string{
			"FOO":                 "bar",
			"SLURM_EXPORT_ENV":    "ALL,FOO=bar",
			"LANG":                "C.UTF-8", // exported from the submitting environment (ALL)
			"USER":                "root",
			"ENVIRONMENT":         "BATCH",
			"SLURM_JOB_ID":        id,
			"SLURM_JOBID":         id,
			"SLURM_JOB_NAME":      "envjob",
			"SLURM_JOB_USER":      "root",
			"SLURM_JOB_UID":       "0",
			"SLURM_JOB_GID":       "0",
			"SLURM_JOB_PARTITION": "cpu",
			"SLURM_CLUSTER_NAME":  "refcluster",
			"SLURM_SUBMIT_DIR":    s.dir,
			"SLURM_SUBMIT_HOST":   shortHost(),
			"SLURM_NTASKS":        "2",
			"SLURM_NPROCS":        "2",
			"SLURM_CPUS_PER_TASK": "3",
			"SLURM_MEM_PER_NODE":  "1024",
			// What slurmd adds once the job is placed.
			"SLURM_JOB_NODELIST":      node,
			"SLURM_NODELIST":          node,
			"SLURMD_NODENAME":         node,
			"SLURM_TOPOLOGY_ADDR":     node,
			"SLURM_JOB_NUM_NODES":     "1",
			"SLURM_NNODES":            "1",
			"SLURM_JOB_CPUS_PER_NODE": "6",
			"SLURM_CPUS_ON_NODE":      "6",
			"SLURM_TASKS_PER_NODE":    "2",
			"SLURM_NODEID":            "0",
			"SLURM_PROCID":            "0",
			"SLURM_LOCALID":           "0",
			"SLURM_GTIDS":             "0",
		}
		// The node's config, as a configless slurmd gives its jobs (not
		// the submitter's: TestJobSlurmConf).
		if c := env["SLURM_CONF"]; !strings.HasPrefix(c, "/run/slurm-frontend/conf-") {
			t.Errorf("%s: job environment: SLURM_CONF=%q, want the node stand-ins' config", s.name, c)
		}
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if got, ok := env[k]; !ok || got != want[k] {
				t.Errorf("%s: job environment: %s=%q (present %v), want %q", s.name, k, got, ok, want[k])
			}
		}
		for k, v := range env {
			switch {
			case strings.HasPrefix(k, "SLURM_ARRAY_"):
				t.Errorf("%s: job environment of a non-array job has %s=%s", s.name, k, v)
			case strings.HasPrefix(k, "SLURM_RLIMIT_"):
				// sbatch sends the submitter's limits as SLURM_RLIMIT_*;
				// slurmd applies them and removes the variables.
				t.Errorf("%s: job environment has %s=%s (slurmd applies and removes SLURM_RLIMIT_*)", s.name, k, v)
			}
		}
		// Real 26.05 sets SLURM_JOB_START_TIME (22.05 does not): when
		// present it is the start time, not 0.
		if v, ok := env["SLURM_JOB_START_TIME"]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < start.Unix()-1 || n > time.Now().Unix()+1 {
				t.Errorf("%s: job environment: SLURM_JOB_START_TIME=%s, want the job's start time (about %d)", s.name, v, start.Unix())
			}
		}
		if t.Failed() {
			t.Logf("%s: job environment:\n%s", s.name, b)
		}
	})

	t.Run("exit 0", func(t *testing.T) {
		st, reason := s.waitDone(t, ok, 30*time.Second)
		if st != "COMPLETED" || reason != "None" {
			t.Errorf("%s: job %s (exit 0): squeue state %s reason %s, want COMPLETED None", s.name, ok, st, reason)
		}
		kv := s.showJob(t, ok)
		s.wantKV(t, "scontrol show job "+ok, kv, map[string]string{"JobState": "COMPLETED", "Reason": "None", "ExitCode": "0:0", "JobName": "okjob"})
		if b, _ := os.ReadFile(filepath.Join(s.dir, "ok-"+ok+".out")); string(b) != "fine\n" {
			t.Errorf("%s: ok-%s.out: %q, want \"fine\\n\"", s.name, ok, b)
		}
	})

	t.Run("squeue -t all", func(t *testing.T) {
		out := s.r.mustRun(s.rel, "squeue", "-t", "all")
		tb := parseTable(t, "squeue -t all", out)
		tb.wantHeader(t, "squeue -t all", "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)")
		rows := map[string][]string{}
		for _, r := range tb.rows {
			rows[r[0]] = r
		}
		node := s.showJob(t, ok)["NodeList"]
		for _, c := range []struct {
			id   string
			want []string
		}{
			{id, []string{id, "cpu", "envjob", "root", "F", "", "1", "(NonZeroExitCode)"}},
			{ok, []string{ok, "cpu", "okjob", "root", "CD", "", "1", node}},
		} {
			row := rows[c.id]
			if row == nil {
				t.Errorf("%s: squeue -t all does not list job %s:\n%s", s.name, c.id, out)
				continue
			}
			row = slices.Clone(row)
			row[5] = "" // TIME: seconds the job ran
			if !slices.Equal(row, c.want) {
				t.Errorf("%s: squeue -t all: job %s: %v, want %v", s.name, c.id, row, c.want)
			}
		}
	})
}

// ---------------------------------------------------------------------
// 2. sbatch --wait returns the job's exit code.

func TestBatchWait(t *testing.T) {
	onOurs(t, batchWait)
}

func batchWait(t *testing.T, s *bside) {
	for _, code := range []int{0, 3} {
		start := time.Now()
		out, errs, rc := s.r.run(s.rel, "sbatch", "--wait", "-o", "wait-%j.out", "--wrap", fmt.Sprintf("sleep 1; echo done; exit %d", code))
		m := submittedRe.FindStringSubmatch(out)
		if rc != code || m == nil || errs != "" {
			t.Errorf("%s: sbatch --wait (job exits %d): exit %d, stdout %q, stderr %q; want exit %d and \"Submitted batch job N\"\n%s",
				s.name, code, rc, out, errs, code, s.logTail())
			continue
		}
		if el := time.Since(start); el < time.Second {
			t.Errorf("%s: sbatch --wait returned after %v, before the job (sleep 1) can have ended", s.name, el)
		}
		// When sbatch --wait returns, the job has ended and its output is there.
		st, _ := s.squeueState(t, m[1])
		want := map[int]string{0: "COMPLETED", 3: "FAILED"}[code]
		if st != want {
			t.Errorf("%s: job %s is %s when sbatch --wait returned, want %s", s.name, m[1], st, want)
		}
		if b, _ := os.ReadFile(filepath.Join(s.dir, "wait-"+m[1]+".out")); string(b) != "done\n" {
			t.Errorf("%s: wait-%s.out: %q when sbatch --wait returned, want \"done\\n\"", s.name, m[1], b)
		}
	}
}

// ---------------------------------------------------------------------
// 3. Arrays with a concurrency limit.

func TestBatchArray(t *testing.T) {
	onOurs(t, batchArray)
}

func batchArray(t *testing.T, s *bside) {
	// Tasks wait for the file "go", so the test decides when they end.
	writeScript(t, s.dir, "arr.sh", `#!/bin/bash
#SBATCH -J arr
#SBATCH --array=1-4%2
#SBATCH -o arr-%A_%a.out
echo "start $SLURM_ARRAY_TASK_ID $(date +%s.%N)" >> times.txt
env
while [ ! -e go ]; do sleep 0.1; done
echo "end $SLURM_ARRAY_TASK_ID $(date +%s.%N)" >> times.txt
`)
	id := s.sbatch(t, "arr.sh")
	task := func(n int) string { return id + "_" + strconv.Itoa(n) }

	// Poll the number of running tasks for the whole test.
	var (
		mu         sync.Mutex
		maxRunning int
		seen       []string
		stop       = make(chan struct{})
		polled     = make(chan struct{})
	)
	go func() {
		defer close(polled)
		for {
			out, _, _ := runClient(t, s.rel, s.r.conf, s.dir, nil, "squeue", "-h", "-r", "-t", "running", "-j", id, "-o", "%i")
			n := len(lines(out))
			mu.Lock()
			if n > maxRunning {
				maxRunning = n
				seen = append(seen, strings.Join(lines(out), " "))
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-polled
	}()

	s.mustReach(t, task(1), "RUNNING", "", 30*time.Second)
	s.mustReach(t, task(2), "RUNNING", "", 30*time.Second)
	time.Sleep(500 * time.Millisecond) // a scheduler that ignores the limit would start 3 and 4 now

	t.Run("squeue collapsed", func(t *testing.T) {
		out := s.r.mustRun(s.rel, "squeue", "-j", id)
		tb := parseTable(t, "squeue -j "+id, out)
		var got [][]string
		for _, r := range tb.rows {
			r = slices.Clone(r)
			r[5] = "" // TIME
			got = append(got, r)
		}
		sort.Slice(got, func(i, j int) bool { return got[i][0] < got[j][0] })
		want := [][]string{
			{task(1), "cpu", "arr", "root", "R", "", "1", got0(got, 0, 7)},
			{task(2), "cpu", "arr", "root", "R", "", "1", got0(got, 1, 7)},
			{id + "_[3-4%2]", "cpu", "arr", "root", "PD", "", "1", "(JobArrayTaskLimit)"},
		}
		if !slices.EqualFunc(got, want, func(a, b []string) bool { return slices.Equal(a, b) }) {
			t.Errorf("%s: squeue -j %s:\n%s\nwant rows (TIME blanked) %v", s.name, id, out, want)
		}
		out = s.r.mustRun(s.rel, "squeue", "-h", "-r", "-j", id, "-o", "%i %T %r")
		gotL := sortedLines(out)
		wantL := sortedLines(task(1) + " RUNNING None\n" + task(2) + " RUNNING None\n" +
			task(3) + " PENDING JobArrayTaskLimit\n" + task(4) + " PENDING JobArrayTaskLimit\n")
		if gotL != wantL {
			t.Errorf("%s: squeue -r -j %s:\n%swant:\n%s", s.name, id, gotL, wantL)
		}
	})

	t.Run("scontrol show job task", func(t *testing.T) {
		kv := s.showJob(t, task(3))
		s.wantKV(t, "scontrol show job "+task(3), kv, map[string]string{
			"JobId": id, "ArrayJobId": id, "ArrayTaskId": "3", "ArrayTaskThrottle": "2",
			"JobState": "PENDING", "Reason": "JobArrayTaskLimit", "JobName": "arr",
		})
		for _, n := range []int{1, 2} {
			kv := s.showJob(t, task(n))
			s.wantKV(t, "scontrol show job "+task(n), kv, map[string]string{
				"ArrayJobId": id, "ArrayTaskId": strconv.Itoa(n), "JobState": "RUNNING",
				"StdOut": filepath.Join(s.dir, fmt.Sprintf("arr-%s_%d.out", id, n)),
			})
			// A started task is split off the array record with an id of its own.
			if kv["JobId"] == id {
				t.Errorf("%s: scontrol show job %s: JobId=%s, the array's own id (real Slurm gives a started task a new id while other tasks are pending)", s.name, task(n), kv["JobId"])
			}
		}
	})

	t.Run("scancel pending task", func(t *testing.T) {
		out, errs, code := s.r.run(s.rel, "scancel", task(4))
		if code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel %s: exit %d, stdout %q, stderr %q", s.name, task(4), code, out, errs)
		}
		time.Sleep(300 * time.Millisecond)
		out = s.r.mustRun(s.rel, "squeue", "-h", "-r", "-j", id, "-o", "%i %T %r")
		if strings.Contains(out, task(4)+" ") {
			t.Errorf("%s: squeue -r -j %s after scancel %s still lists it:\n%s", s.name, id, task(4), out)
		}
		out = s.r.mustRun(s.rel, "squeue", "-h", "-j", id, "-t", "pending", "-o", "%i %T %r")
		if want := id + "_[3%2] PENDING JobArrayTaskLimit\n"; out != want {
			t.Errorf("%s: squeue -t pending -j %s after scancel %s: %q, want %q", s.name, id, task(4), out, want)
		}
	})

	if err := os.WriteFile(filepath.Join(s.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 3} {
		if st, reason := s.waitDone(t, task(n), 30*time.Second); st != "COMPLETED" {
			t.Errorf("%s: %s ended %s (%s), want COMPLETED", s.name, task(n), st, reason)
		}
	}
	close(stop)
	<-polled

	t.Run("at most 2 running", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		if maxRunning > 2 {
			t.Errorf("%s: squeue showed %d tasks of %s running at once (--array=1-4%%2): %q", s.name, maxRunning, id, seen)
		}
		if maxRunning < 2 {
			t.Errorf("%s: squeue never showed 2 tasks of %s running at once: %q", s.name, id, seen)
		}
		b, _ := os.ReadFile(filepath.Join(s.dir, "times.txt"))
		type ev struct {
			at    float64
			delta int
		}
		var evs []ev
		for _, l := range lines(string(b)) {
			f := strings.Fields(l)
			if len(f) != 3 {
				continue
			}
			at, _ := strconv.ParseFloat(f[2], 64)
			evs = append(evs, ev{at, map[string]int{"start": 1, "end": -1}[f[0]]})
		}
		sort.Slice(evs, func(i, j int) bool {
			return evs[i].at < evs[j].at || evs[i].at == evs[j].at && evs[i].delta < evs[j].delta
		})
		cur, peak := 0, 0
		for _, e := range evs {
			cur += e.delta
			peak = max(peak, cur)
		}
		if peak > 2 || len(evs) != 6 {
			t.Errorf("%s: task start/end times (want 3 tasks, at most 2 at once; task 4 cancelled):\n%s", s.name, b)
		}
	})

	t.Run("task output and environment", func(t *testing.T) {
		for _, n := range []int{1, 2, 3} {
			p := filepath.Join(s.dir, fmt.Sprintf("arr-%s_%d.out", id, n))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("%s: %v", s.name, err)
				continue
			}
			env := parseEnv(string(b))
			kv := s.showJob(t, task(n))
			want := map[string]string{
				"SLURM_ARRAY_JOB_ID": id, "SLURM_ARRAY_TASK_ID": strconv.Itoa(n),
				"SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4", "SLURM_ARRAY_TASK_STEP": "1",
				"SLURM_JOB_ID": kv["JobId"], "SLURM_JOB_NAME": "arr",
			}
			for _, k := range []string{"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "SLURM_JOB_ID", "SLURM_JOB_NAME"} {
				if env[k] != want[k] {
					t.Errorf("%s: task %s: %s=%q, want %q", s.name, task(n), k, env[k], want[k])
				}
			}
		}
		// The last task to start takes over the array's own id.
		if kv := s.showJob(t, task(3)); kv["JobId"] != id {
			t.Errorf("%s: scontrol show job %s: JobId=%s, want %s (the last task to start keeps the array's id)", s.name, task(3), kv["JobId"], id)
		}
		if _, err := os.Stat(filepath.Join(s.dir, fmt.Sprintf("arr-%s_4.out", id))); err == nil {
			t.Errorf("%s: task %s ran although it was cancelled while pending", s.name, task(4))
		}
	})
}

// got0 returns got[i][j] or "" (to copy fields the test does not fix).
func got0(got [][]string, i, j int) string {
	if i < len(got) && j < len(got[i]) {
		if nodeNameRe.MatchString(got[i][j]) {
			return got[i][j]
		}
	}
	return "<a node>"
}

// ---------------------------------------------------------------------
// 4. Dependencies.

func TestBatchDependency(t *testing.T) {
	onOurs(t, batchDependency)
}

func batchDependency(t *testing.T, s *bside) {
	gate := func(file string) string { return "while [ ! -e " + file + " ]; do sleep 0.1; done" }
	a := s.sbatch(t, "-J", "depA", "-o", "A.out", "--wrap", gate("goA")+"; echo A done")
	b := s.sbatch(t, "-J", "depB", "-o", "B.out", "--dependency=afterok:"+a, "--wrap", "echo B ran")
	c := s.sbatch(t, "-J", "depC", "-o", "C.out", "--dependency=afternotok:"+a, "--wrap", "echo C ran")
	d := s.sbatch(t, "-J", "depD", "-o", "D.out", "--kill-on-invalid-dep=yes", "--dependency=afternotok:"+a, "--wrap", "echo D ran")
	e := s.sbatch(t, "-J", "depE", "-o", "E.out", "--dependency=afterany:"+a, "--wrap", "echo E ran")
	fail := s.sbatch(t, "-J", "depF", "-o", "/dev/null", "--wrap", "exit 1")
	g := s.sbatch(t, "-J", "depG", "-o", "G.out", "--dependency=afterok:"+fail, "--wrap", "echo G ran")
	single := fmt.Sprintf("single%d", rand.IntN(1e6))
	s1 := s.sbatch(t, "-J", single, "-o", "S1.out", "--wrap", "echo S1 start $(date +%s.%N); "+gate("goS")+"; echo S1 end $(date +%s.%N)")
	s.mustReach(t, s1, "RUNNING", "", 30*time.Second)
	s2 := s.sbatch(t, "-J", single, "-o", "S2.out", "--dependency=singleton", "--wrap", "echo S2 start $(date +%s.%N)")
	s.mustReach(t, a, "RUNNING", "", 30*time.Second)

	t.Run("pending on dependency", func(t *testing.T) {
		want := map[string]string{
			b:  "PENDING Dependency afterok:" + a + "(unfulfilled)",
			c:  "PENDING Dependency afternotok:" + a + "(unfulfilled)",
			d:  "PENDING Dependency afternotok:" + a + "(unfulfilled)",
			e:  "PENDING Dependency afterany:" + a + "(unfulfilled)",
			s2: "PENDING Dependency singleton(unfulfilled)",
		}
		// Stays so while A and S1 run.
		for range 5 {
			for id, w := range want {
				out := s.r.mustRun(s.rel, "squeue", "-h", "-t", "all", "-j", id, "-o", "%T %r %E")
				if got := strings.TrimSpace(out); got != w {
					t.Errorf("%s: squeue -o '%%T %%r %%E' -j %s: %q, want %q", s.name, id, got, w)
					delete(want, id)
				}
			}
			time.Sleep(300 * time.Millisecond)
		}
		kv := s.showJob(t, b)
		s.wantKV(t, "scontrol show job "+b, kv, map[string]string{"JobState": "PENDING", "Reason": "Dependency", "Dependency": "afterok:" + a + "(unfulfilled)"})
	})

	t.Run("afterok on a failed job", func(t *testing.T) {
		s.mustReach(t, g, "PENDING", "DependencyNeverSatisfied", 30*time.Second)
		kv := s.showJob(t, g)
		s.wantKV(t, "scontrol show job "+g, kv, map[string]string{"JobState": "PENDING", "Reason": "DependencyNeverSatisfied", "Dependency": "afterok:" + fail + "(failed)"})
	})

	for _, fn := range []string{"goA", "goS"} {
		if err := os.WriteFile(filepath.Join(s.dir, fn), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("afterok and afterany run", func(t *testing.T) {
		for _, c := range []struct{ id, file, text string }{{b, "B.out", "B ran\n"}, {e, "E.out", "E ran\n"}} {
			if st, reason := s.waitDone(t, c.id, 30*time.Second); st != "COMPLETED" {
				t.Errorf("%s: job %s ended %s (%s), want COMPLETED", s.name, c.id, st, reason)
			}
			if got, _ := os.ReadFile(filepath.Join(s.dir, c.file)); string(got) != c.text {
				t.Errorf("%s: %s: %q, want %q", s.name, c.file, got, c.text)
			}
			// Once satisfied, the dependency is cleared.
			kv := s.showJob(t, c.id)
			s.wantKV(t, "scontrol show job "+c.id, kv, map[string]string{"JobState": "COMPLETED", "Dependency": "(null)"})
		}
	})

	t.Run("afternotok never satisfied", func(t *testing.T) {
		s.mustReach(t, c, "PENDING", "DependencyNeverSatisfied", 30*time.Second)
		kv := s.showJob(t, c)
		s.wantKV(t, "scontrol show job "+c, kv, map[string]string{"JobState": "PENDING", "Reason": "DependencyNeverSatisfied", "Dependency": "afternotok:" + a + "(failed)"})
		if _, err := os.Stat(filepath.Join(s.dir, "C.out")); err == nil {
			t.Errorf("%s: job %s (afternotok on a job that succeeded) ran", s.name, c)
		}
	})

	t.Run("kill-on-invalid-dep", func(t *testing.T) {
		s.mustReach(t, d, "CANCELLED", "DependencyNeverSatisfied", 30*time.Second)
		kv := s.showJob(t, d)
		s.wantKV(t, "scontrol show job "+d, kv, map[string]string{"JobState": "CANCELLED", "Reason": "DependencyNeverSatisfied", "Dependency": "afternotok:" + a + "(failed)"})
		if _, err := os.Stat(filepath.Join(s.dir, "D.out")); err == nil {
			t.Errorf("%s: job %s (afternotok, kill-on-invalid-dep) ran", s.name, d)
		}
	})

	t.Run("singleton", func(t *testing.T) {
		if st, reason := s.waitDone(t, s2, 30*time.Second); st != "COMPLETED" {
			t.Errorf("%s: singleton job %s ended %s (%s), want COMPLETED", s.name, s2, st, reason)
		}
		s1out, _ := os.ReadFile(filepath.Join(s.dir, "S1.out"))
		s2out, _ := os.ReadFile(filepath.Join(s.dir, "S2.out"))
		var s1end, s2start float64
		fmt.Sscanf(lastField(string(s1out), "S1 end"), "%g", &s1end)
		fmt.Sscanf(lastField(string(s2out), "S2 start"), "%g", &s2start)
		if s1end == 0 || s2start == 0 || s2start < s1end {
			t.Errorf("%s: --dependency=singleton job %s started while %s (same name) ran:\nS1.out: %sS2.out: %s", s.name, s2, s1, s1out, s2out)
		}
	})

	t.Run("unknown job", func(t *testing.T) {
		out, errs, code := s.r.run(s.rel, "sbatch", "--dependency=afterok:999999", "-o", "/dev/null", "--wrap", "true")
		if s.rel == "22.05" {
			// Real 22.05 takes a dependency on a job it does not know as
			// already satisfied: the job is accepted and runs.
			m := submittedRe.FindStringSubmatch(out)
			if code != 0 || m == nil || errs != "" {
				t.Errorf("%s: sbatch --dependency=afterok:999999: exit %d, stdout %q, stderr %q; want the job accepted (as real 22.05 does)", s.name, code, out, errs)
				return
			}
			if st, reason := s.waitDone(t, m[1], 30*time.Second); st != "COMPLETED" {
				t.Errorf("%s: job %s (afterok:999999) ended %s (%s), want COMPLETED as on real 22.05", s.name, m[1], st, reason)
			}
			return
		}
		want := "sbatch: error: Batch job submission failed: Job dependency problem\n"
		if code != 1 || out != "" || errs != want {
			t.Errorf("%s: sbatch --dependency=afterok:999999: exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", s.name, code, out, errs, want)
		}
	})
}

// lastField returns what follows prefix on the last line that has it.
func lastField(s, prefix string) string {
	v := ""
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			v = strings.TrimSpace(strings.TrimPrefix(l, prefix))
		}
	}
	return v
}

// ---------------------------------------------------------------------
// 5. --begin, holds and releases.

func TestBatchBeginHold(t *testing.T) {
	onOurs(t, batchBeginHold)
}

func batchBeginHold(t *testing.T, s *bside) {
	submitted := time.Now()
	begin := s.sbatch(t, "-o", "begin.out", "--begin=now+60", "--wrap", "echo began")
	held := s.sbatch(t, "-o", "held.out", "-H", "--wrap", "echo released")
	other := s.sbatch(t, "-o", "other.out", "--begin=now+60", "--wrap", "echo other")

	t.Run("begin", func(t *testing.T) {
		s.mustReach(t, begin, "PENDING", "BeginTime", 10*time.Second)
		kv := s.showJob(t, begin)
		s.wantKV(t, "scontrol show job "+begin, kv, map[string]string{"JobState": "PENDING", "Reason": "BeginTime"})
		el, err := time.ParseInLocation("2006-01-02T15:04:05", kv["EligibleTime"], time.Local)
		if want := submitted.Add(60 * time.Second); err != nil || el.Before(want.Add(-2*time.Second)) || el.After(want.Add(5*time.Second)) {
			t.Errorf("%s: scontrol show job %s: EligibleTime=%q, want the --begin time (about %s)", s.name, begin, kv["EligibleTime"], want.Format("2006-01-02T15:04:05"))
		}
	})

	t.Run("held", func(t *testing.T) {
		s.mustReach(t, held, "PENDING", "JobHeldUser", 10*time.Second)
		time.Sleep(time.Second)
		if st, reason := s.squeueState(t, held); st != "PENDING" || reason != "JobHeldUser" {
			t.Errorf("%s: held job %s: %s %s a second later, want PENDING JobHeldUser", s.name, held, st, reason)
		}
		s.wantKV(t, "scontrol show job "+held, s.showJob(t, held), map[string]string{"JobState": "PENDING", "Reason": "JobHeldUser", "Priority": "0"})
	})

	t.Run("release", func(t *testing.T) {
		out, errs, code := s.r.run(s.rel, "scontrol", "release", held)
		if code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scontrol release %s: exit %d, stdout %q, stderr %q", s.name, held, code, out, errs)
		}
		if st, reason := s.waitDone(t, held, 30*time.Second); st != "COMPLETED" {
			t.Errorf("%s: released job %s ended %s (%s), want COMPLETED", s.name, held, st, reason)
		}
		if b, _ := os.ReadFile(filepath.Join(s.dir, "held.out")); string(b) != "released\n" {
			t.Errorf("%s: held.out: %q, want \"released\\n\"", s.name, b)
		}
	})

	t.Run("hold by root is an admin hold", func(t *testing.T) {
		// scontrol hold by an operator (root) holds as admin; release
		// leaves reason None (slurmctld's _release_job_rec; its
		// scheduler does not look at the job again before its begin
		// time, TestFidelity).
		if out, errs, code := s.r.run(s.rel, "scontrol", "hold", other); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scontrol hold %s: exit %d, stdout %q, stderr %q", s.name, other, code, out, errs)
		}
		s.mustReach(t, other, "PENDING", "JobHeldAdmin", 10*time.Second)
		if out, errs, code := s.r.run(s.rel, "scontrol", "release", other); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scontrol release %s: exit %d, stdout %q, stderr %q", s.name, other, code, out, errs)
		}
		s.mustReach(t, other, "PENDING", "None", 10*time.Second)
		s.r.run(s.rel, "scancel", other)
	})

	t.Run("update StartTime=now", func(t *testing.T) {
		out, errs, code := s.r.run(s.rel, "scontrol", "update", "jobid="+begin, "StartTime=now")
		if code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scontrol update jobid=%s StartTime=now: exit %d, stdout %q, stderr %q", s.name, begin, code, out, errs)
		}
		if st, reason := s.waitDone(t, begin, 30*time.Second); st != "COMPLETED" {
			t.Errorf("%s: job %s ended %s (%s), want COMPLETED", s.name, begin, st, reason)
		}
		if b, _ := os.ReadFile(filepath.Join(s.dir, "begin.out")); string(b) != "began\n" {
			t.Errorf("%s: begin.out: %q, want \"began\\n\"", s.name, b)
		}
	})
}

// ---------------------------------------------------------------------
// 6. scancel: of running jobs, signals, and who may act on which job.

func TestBatchCancel(t *testing.T) {
	onOurs(t, batchCancel)
}

func batchCancel(t *testing.T, s *bside) {
	// A unique sleep duration marks the job's process on this host.
	marker := strconv.Itoa(3000 + rand.IntN(6000))
	run := s.sbatch(t, "-J", "sleeper", "-o", "sleeper-%j.out", "--wrap", "echo started; sleep "+marker)
	s.mustReach(t, run, "RUNNING", "", 30*time.Second)
	if _, ok := waitFile(filepath.Join(s.dir, "sleeper-"+run+".out"), "started", 10*time.Second); !ok {
		t.Fatalf("%s: running job %s wrote nothing", s.name, run)
	}
	var pids []int
	for end := time.Now().Add(5 * time.Second); len(pids) == 0 && time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		pids = procsWith("sleep", marker)
	}
	if len(pids) == 0 {
		t.Fatalf("%s: no process 'sleep %s' of running job %s on this host", s.name, marker, run)
	}

	trap := writeScript(t, s.dir, "trap.sh", `#!/bin/bash
trap 'echo got USR1' USR1
trap 'echo got USR2' USR2
trap 'echo got TERM; exit 7' TERM
echo start
for i in $(seq 1500); do sleep 0.2; done
`)
	tj := s.sbatch(t, "-o", "trap-%j.out", trap)
	trapOut := filepath.Join(s.dir, "trap-"+tj+".out")
	s.mustReach(t, tj, "RUNNING", "", 30*time.Second)
	if _, ok := waitFile(trapOut, "start", 10*time.Second); !ok {
		t.Fatalf("%s: job %s did not start its script", s.name, tj)
	}
	held := s.sbatch(t, "-H", "-o", "/dev/null", "--wrap", "true")

	// As user slurm on root's jobs: refused, nothing changes.
	t.Run("other user refused", func(t *testing.T) {
		u := s.as("slurm")
		limitBefore := s.showJob(t, run)["TimeLimit"]
		for _, id := range []string{run, held} {
			out, errs, code := u.run(s.rel, "scancel", id)
			if want := "scancel: error: Kill job error on job id " + id + ": Access/permission denied\n"; code != 210 || out != "" || errs != want {
				t.Errorf("%s: scancel %s as slurm: exit %d, stdout %q, stderr %q; want exit 210 and %q", s.name, id, code, out, errs, want)
			}
			out, errs, code = u.run(s.rel, "scancel", "-s", "USR1", id)
			if want := "scancel: error: Kill job error on job id " + id + ": Access/permission denied\n"; code != 210 || out != "" || errs != want {
				t.Errorf("%s: scancel -s USR1 %s as slurm: exit %d, stdout %q, stderr %q; want exit 210 and %q", s.name, id, code, out, errs, want)
			}
			sep := " "
			if s.rel == "26.05" {
				sep = "" // 26.05's scontrol prints "slurm_suspend error:Invalid user id"
			}
			for _, verb := range []string{"hold", "release"} {
				out, errs, code := u.run(s.rel, "scontrol", verb, id)
				want := "Invalid user id for job " + id + "\nslurm_suspend error:" + sep + "Invalid user id\n"
				if code != 1 || out != "" || errs != want {
					t.Errorf("%s: scontrol %s %s as slurm: exit %d, stdout %q, stderr %q; want exit 1 and %q", s.name, verb, id, code, out, errs, want)
				}
			}
			out, errs, code = u.run(s.rel, "scontrol", "update", "jobid="+id, "TimeLimit=5")
			if want := "Invalid user id for job " + id + "\n"; code != 1 || out != "" || errs != want {
				t.Errorf("%s: scontrol update jobid=%s TimeLimit=5 as slurm: exit %d, stdout %q, stderr %q; want exit 1 and %q", s.name, id, code, out, errs, want)
			}
		}
		if st, _ := s.squeueState(t, run); st != "RUNNING" {
			t.Errorf("%s: job %s is %s after user slurm's attempts, want RUNNING", s.name, run, st)
		}
		if st, reason := s.squeueState(t, held); st != "PENDING" || reason != "JobHeldUser" {
			t.Errorf("%s: job %s is %s %s after user slurm's attempts, want PENDING JobHeldUser", s.name, held, st, reason)
		}
		if kv := s.showJob(t, run); kv["TimeLimit"] != limitBefore {
			t.Errorf("%s: job %s: TimeLimit=%s after user slurm's update, want %s as before", s.name, run, kv["TimeLimit"], limitBefore)
		}
		if b, _ := os.ReadFile(trapOut); strings.Contains(string(b), "got USR1") {
			t.Errorf("%s: user slurm's scancel -s USR1 reached root's job %s:\n%s", s.name, tj, b)
		}
	})

	// Real Slurm: without --batch or --full, scancel -s signals the job's
	// steps only, never the batch shell; a batch job without steps sees
	// nothing (measured with real 22.05, 24.11 and 26.05).
	since := func(path string, from int) func(string, time.Duration) (string, bool) {
		return func(substr string, d time.Duration) (string, bool) {
			end := time.Now().Add(d)
			for {
				b, _ := os.ReadFile(path)
				if len(b) >= from && strings.Contains(string(b[from:]), substr) {
					return string(b[from:]), true
				}
				if time.Now().After(end) {
					if len(b) >= from {
						return string(b[from:]), false
					}
					return string(b), false
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	size := func(path string) int { b, _ := os.ReadFile(path); return len(b) }

	t.Run("scancel -s USR1 (steps only)", func(t *testing.T) {
		if out, errs, code := s.r.run(s.rel, "scancel", "-s", "USR1", tj); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel -s USR1 %s: exit %d, stdout %q, stderr %q", s.name, tj, code, out, errs)
		}
		if b, ok := since(trapOut, 0)("USR1", 1500*time.Millisecond); ok {
			t.Errorf("%s: scancel -s USR1 %s (no --batch/--full) reached the batch script; real Slurm signals only the steps:\n%s", s.name, tj, b)
		}
	})

	t.Run("scancel -b -s USR1", func(t *testing.T) {
		wait := since(trapOut, size(trapOut))
		if out, errs, code := s.r.run(s.rel, "scancel", "-b", "-s", "USR1", tj); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel -b -s USR1 %s: exit %d, stdout %q, stderr %q", s.name, tj, code, out, errs)
		}
		if b, ok := wait("got USR1", 5*time.Second); !ok {
			t.Errorf("%s: scancel -b -s USR1 %s did not reach the script's trap; output since:\n%s", s.name, tj, b)
		} else if strings.Contains(b, "User defined signal 1") {
			// bash reports a foreground child killed by the signal before it runs the trap.
			t.Errorf("%s: scancel -b -s USR1 %s reached the script's children too (only the batch shell should get it):\n%s", s.name, tj, b)
		}
	})

	t.Run("scancel --full -s USR2", func(t *testing.T) {
		wait := since(trapOut, size(trapOut))
		if out, errs, code := s.r.run(s.rel, "scancel", "--full", "-s", "USR2", tj); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel --full -s USR2 %s: exit %d, stdout %q, stderr %q", s.name, tj, code, out, errs)
		}
		if b, ok := wait("got USR2", 5*time.Second); !ok {
			t.Errorf("%s: scancel --full -s USR2 %s did not reach the script's trap; output since:\n%s", s.name, tj, b)
		}
		if st, _ := s.squeueState(t, tj); st != "RUNNING" {
			t.Errorf("%s: job %s is %s after a trapped signal, want RUNNING", s.name, tj, st)
		}
	})

	t.Run("scancel running", func(t *testing.T) {
		if out, errs, code := s.r.run(s.rel, "scancel", run); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel %s: exit %d, stdout %q, stderr %q", s.name, run, code, out, errs)
		}
		st, reason := s.waitDone(t, run, 20*time.Second)
		if st != "CANCELLED" {
			t.Errorf("%s: job %s after scancel: %s (%s), want CANCELLED", s.name, run, st, reason)
		}
		kv := s.showJob(t, run)
		s.wantKV(t, "scontrol show job "+run, kv, map[string]string{"JobState": "CANCELLED"})
		// SIGTERM to every process of the job: the shell dies of it
		// (0:15) or, when its child died first, exits 128+15 (143:0);
		// real 22.05 showed both.
		if ec := kv["ExitCode"]; ec != "0:15" && ec != "143:0" {
			t.Errorf("%s: scontrol show job %s: ExitCode=%s, want 0:15 (or 143:0): scancel ends a job with SIGTERM", s.name, run, ec)
		}
		if left := procsGone(5*time.Second, "sleep", marker); len(left) > 0 {
			t.Errorf("%s: job %s cancelled, but its process 'sleep %s' is still there (pids %v)", s.name, run, marker, left)
		}
		out, _ := os.ReadFile(filepath.Join(s.dir, "sleeper-"+run+".out"))
		re := regexp.MustCompile(`(?m)^(slurmstepd-n\d+: |\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\] )error: \*\*\* JOB ` + run + ` ON n\d+ CANCELLED AT \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d( DUE to SIGNAL Terminated)? \*\*\*$`)
		if !re.Match(out) {
			t.Errorf("%s: sleeper-%s.out has no slurmstepd cancel line (as real slurmd writes):\n%s", s.name, run, out)
		}
	})

	t.Run("other user's own jobs", func(t *testing.T) {
		u := s.as("slurm")
		mine := s.sbatchAs(t, u, "-H", "-o", "mine-%j.out", "--wrap", "id -u; id -g")
		s.mustReach(t, mine, "PENDING", "JobHeldUser", 10*time.Second)
		kv := s.showJob(t, mine)
		s.wantKV(t, "scontrol show job "+mine, kv, map[string]string{"UserId": "slurm(64030)", "GroupId": "slurm(64030)"})
		if out, errs, code := u.run(s.rel, "scontrol", "release", mine); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scontrol release %s as its owner slurm: exit %d, stdout %q, stderr %q", s.name, mine, code, out, errs)
		}
		if st, reason := s.waitDone(t, mine, 30*time.Second); st != "COMPLETED" {
			t.Errorf("%s: slurm's job %s ended %s (%s), want COMPLETED", s.name, mine, st, reason)
		}
		p := filepath.Join(s.dir, "mine-"+mine+".out")
		if b, _ := os.ReadFile(p); string(b) != "64030\n64030\n" {
			t.Errorf("%s: slurm's job %s printed %q for id -u; id -g, want \"64030\\n64030\\n\"", s.name, mine, b)
		}
		if fi, err := os.Stat(p); err == nil {
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != 64030 || st.Gid != 64030 {
				t.Errorf("%s: %s is owned by %d:%d, want 64030:64030 (the job's user)", s.name, p, st.Uid, st.Gid)
			}
		}

		// Hold, release and cancel of one's own pending and running jobs.
		p2 := s.sbatchAs(t, u, "--begin=now+60", "-o", "/dev/null", "--wrap", "true")
		if out, errs, code := u.run(s.rel, "scontrol", "hold", p2); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scontrol hold %s as its owner: exit %d, stdout %q, stderr %q", s.name, p2, code, out, errs)
		}
		s.mustReach(t, p2, "PENDING", "JobHeldUser", 10*time.Second)
		if out, errs, code := u.run(s.rel, "scancel", p2); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel %s as its owner: exit %d, stdout %q, stderr %q", s.name, p2, code, out, errs)
		}
		s.mustReach(t, p2, "CANCELLED", "", 10*time.Second)

		r2 := s.sbatchAs(t, u, "-o", "/dev/null", "--wrap", "sleep 300")
		s.mustReach(t, r2, "RUNNING", "", 30*time.Second)
		// Real Slurm holds a running job too: it keeps running, with
		// priority 0 and reason JobHeldUser.
		if out, errs, code := u.run(s.rel, "scontrol", "hold", r2); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scontrol hold %s (running) as its owner: exit %d, stdout %q, stderr %q; real Slurm accepts", s.name, r2, code, out, errs)
		} else if st, reason := s.squeueState(t, r2); st != "RUNNING" || reason != "JobHeldUser" {
			t.Errorf("%s: running job %s after scontrol hold: %s %s, want RUNNING JobHeldUser", s.name, r2, st, reason)
		}
		if out, errs, code := u.run(s.rel, "scancel", r2); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel %s as its owner: exit %d, stdout %q, stderr %q", s.name, r2, code, out, errs)
		}
		s.mustReach(t, r2, "CANCELLED", "", 20*time.Second)
	})

	// scancel sends SIGTERM first (SIGKILL KillWait seconds later): a
	// script that traps it can clean up, and its exit code is kept.
	t.Run("scancel sends SIGTERM", func(t *testing.T) {
		wait := since(trapOut, size(trapOut))
		if out, errs, code := s.r.run(s.rel, "scancel", tj); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel %s: exit %d, stdout %q, stderr %q", s.name, tj, code, out, errs)
		}
		if st, reason := s.waitDone(t, tj, 20*time.Second); st != "CANCELLED" {
			t.Errorf("%s: job %s after scancel: %s (%s), want CANCELLED", s.name, tj, st, reason)
		}
		if b, ok := wait("got TERM", 3*time.Second); !ok {
			t.Errorf("%s: scancel %s: the script's TERM trap did not run (killed without SIGTERM?); output since:\n%s", s.name, tj, b)
		}
		s.wantKV(t, "scontrol show job "+tj, s.showJob(t, tj), map[string]string{"JobState": "CANCELLED", "ExitCode": "7:0"})
	})
	s.r.run(s.rel, "scancel", held)
}

// ---------------------------------------------------------------------
// 7. Time limits.

// sbatch -t takes minutes, or MM:SS: --time=0:05 is 5 seconds, which
// slurmctld rounds up to whole minutes (00:01:00). Real slurmctld checks
// limits every 30 s, so a 1-minute job ends 60-90 s after it started:
// SIGTERM, then SIGKILL KillWait seconds later, state TIMEOUT.
func TestBatchTimeLimit(t *testing.T) {
	t.Parallel()
	f := newFrontend(t, batchCluster)
	// The jobs of all releases run at the same time (a minute each).
	checks := map[string]func(*testing.T){}
	sides := map[string]*bside{}
	for _, rel := range releases {
		sides[rel] = oursSide(t, f, rel)
		checks[rel] = batchTimeLimit(t, sides[rel])
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) { checks[rel](t) })
	}
}

// batchTimeLimit submits the time-limited job and returns the check to
// run (it waits for the job's end).
func batchTimeLimit(t *testing.T, s *bside) func(*testing.T) {
	writeScript(t, s.dir, "tl.sh", `#!/bin/bash
trap 'echo got TERM; sleep 1; echo still here' TERM
echo start
for i in $(seq 3000); do sleep 0.2; done
`)
	start := time.Now()
	id := s.sbatch(t, "--time=0:05", "-o", "tl-%j.out", "tl.sh")
	// A running job whose limit is lowered (scontrol update TimeLimit=)
	// ends at the new limit, counted from its start.
	lowered := s.sbatch(t, "--time=10", "-o", "tl-%j.out", "tl.sh")
	s.mustReach(t, lowered, "RUNNING", "", 30*time.Second)
	if out, errs, code := s.r.run(s.rel, "scontrol", "update", "jobid="+lowered, "TimeLimit=1"); code != 0 || out != "" || errs != "" {
		t.Errorf("%s: scontrol update jobid=%s TimeLimit=1 on the running job: exit %d, %q %q", s.name, lowered, code, out, errs)
	}
	if kv := s.showJob(t, lowered); kv["TimeLimit"] != "00:01:00" {
		t.Errorf("%s: after scontrol update TimeLimit=1, job %s shows TimeLimit=%s", s.name, lowered, kv["TimeLimit"])
	}

	t.Run("rounding "+s.rel, func(t *testing.T) {
		if kv := s.showJob(t, id); kv["TimeLimit"] != "00:01:00" {
			t.Errorf("%s: sbatch --time=0:05: TimeLimit=%s, want 00:01:00", s.name, kv["TimeLimit"])
		}
		for _, c := range []struct{ arg, want string }{{"0:61", "00:02:00"}, {"1:30", "00:02:00"}, {"0", "UNLIMITED"}, {"90", "01:30:00"}} {
			h := s.sbatch(t, "--hold", "--time="+c.arg, "-o", "/dev/null", "--wrap", "true")
			if kv := s.showJob(t, h); kv["TimeLimit"] != c.want {
				t.Errorf("%s: sbatch --time=%s: TimeLimit=%s, want %s", s.name, c.arg, kv["TimeLimit"], c.want)
			}
			s.r.run(s.rel, "scancel", h)
		}
	})

	return func(t *testing.T) {
		s := s.with(t)
		st, reason, _ := s.waitState(t, id, 150*time.Second, func(st, _ string) bool { return !activeStates[st] })
		took := time.Since(start)
		if st != "TIMEOUT" || reason != "TimeLimit" {
			t.Errorf("%s: job %s with --time=0:05: %s (%s) after %v, want TIMEOUT (TimeLimit)\n%s", s.name, id, st, reason, took.Round(time.Second), s.logTail())
		}
		if took < 60*time.Second {
			t.Errorf("%s: job %s ended after %v, before its 1-minute limit", s.name, id, took.Round(time.Second))
		}
		kv := s.showJob(t, id)
		s.wantKV(t, "scontrol show job "+id, kv, map[string]string{"JobState": "TIMEOUT", "Reason": "TimeLimit", "ExitCode": "0:9"})
		// Real: RunTime stops at the limit (00:01:00) or at the periodic
		// check after it (22.05: up to 00:01:30).
		if rt := kv["RunTime"]; rt < "00:01:00" || rt > "00:01:35" {
			t.Errorf("%s: scontrol show job %s: RunTime=%s, want 00:01:00 (or a little more)", s.name, id, rt)
		}
		out, _ := os.ReadFile(filepath.Join(s.dir, "tl-"+id+".out"))
		re := regexp.MustCompile(`(?m)^(slurmstepd-n\d+: |\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\] )error: \*\*\* JOB ` + id + ` ON n\d+ CANCELLED AT \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d DUE TO TIME LIMIT \*\*\*$`)
		if !re.Match(out) {
			t.Errorf("%s: tl-%s.out has no 'CANCELLED AT ... DUE TO TIME LIMIT' line (as real slurmd writes):\n%s", s.name, id, out)
		}
		// SIGTERM reached the script, which went on until SIGKILL (KillWait=3).
		if !strings.Contains(string(out), "got TERM\n") || !strings.Contains(string(out), "still here\n") {
			t.Errorf("%s: tl-%s.out: the script did not get SIGTERM before SIGKILL:\n%s", s.name, id, out)
		}
		out2 := s.r.mustRun(s.rel, "squeue", "-h", "-t", "all", "-j", id, "-o", "%t %r")
		if out2 != "TO TimeLimit\n" {
			t.Errorf("%s: squeue -t all -o '%%t %%r' -j %s: %q, want \"TO TimeLimit\\n\"", s.name, id, out2)
		}
		// The lowered one: its new 1-minute limit was enforced.
		st, reason, _ = s.waitState(t, lowered, 150*time.Second, func(st, _ string) bool { return !activeStates[st] })
		if took := time.Since(start); st != "TIMEOUT" || reason != "TimeLimit" || took < 60*time.Second {
			t.Errorf("%s: job %s, TimeLimit lowered to 1 while running: %s (%s) after %v, want TIMEOUT (TimeLimit) after its first minute", s.name, lowered, st, reason, took.Round(time.Second))
		}
		if rt := s.showJob(t, lowered)["RunTime"]; rt < "00:01:00" || rt > "00:01:35" {
			t.Errorf("%s: scontrol show job %s: RunTime=%s, want 00:01:00 (or a little more)", s.name, lowered, rt)
		}
	}
}

// ---------------------------------------------------------------------
// Placement by memory: with SelectTypeParameters=CR_Core_Memory and no
// DefMemPerCPU/DefMemPerNode, a job without --mem (or with --mem=0) gets
// all the memory of its node (scontrol: mem=125G for n1): a second such
// job on the one-node partition debug waits, PENDING Resources, until the
// first ends (measured on real 22.05 and 26.05).

func TestBatchMemoryPlacement(t *testing.T) {
	t.Parallel()
	f := newFrontend(t, batchCluster)
	t.Run("--mem=0", func(t *testing.T) { batchMemoryPlacement(t, oursSide(t, f, "24.11"), "--mem=0") })
	// The real reference runs with DefMemPerNode (see batch_real_test.go),
	// so the default is only checked here.
	t.Run("no --mem", func(t *testing.T) { batchMemoryPlacement(t, oursSide(t, f, "26.05")) })
}

func batchMemoryPlacement(t *testing.T, s *bside, mem ...string) {
	a := s.sbatch(t, append([]string{"-p", "debug", "-o", "/dev/null", "--wrap", "sleep 300"}, mem...)...)
	s.mustReach(t, a, "RUNNING", "", 30*time.Second)
	b := s.sbatch(t, append([]string{"-p", "debug", "-o", "/dev/null", "--wrap", "sleep 300"}, mem...)...)
	if kv := s.showJob(t, b); !strings.Contains(kv["ReqTRES"]+kv["TRES"], "mem=125G") {
		t.Errorf("%s: scontrol show job %s (%v): TRES %q, want mem=125G (the whole node)", s.name, b, mem, kv["ReqTRES"]+kv["TRES"])
	}
	// The reason is None until the scheduler has looked at the job.
	if st, reason, _ := s.waitState(t, b, 20*time.Second, func(st, r string) bool { return st != "PENDING" || r == "Resources" }); st != "PENDING" || reason != "Resources" {
		t.Errorf("%s: second whole-node-memory job %s (%v) on partition debug (one node) while %s runs: %s %s, want PENDING Resources", s.name, b, mem, a, st, reason)
	}
	s.r.run(s.rel, "scancel", a)
	s.mustReach(t, b, "RUNNING", "", 30*time.Second)
	s.r.run(s.rel, "scancel", b)
}

// ---------------------------------------------------------------------
// Resource limits of the submitting shell (PropagateResourceLimits=ALL,
// the default): sbatch forwards its soft limits as SLURM_RLIMIT_*,
// slurmstepd sets them on the job's processes and removes the variables.

func TestBatchRlimits(t *testing.T) {
	onOurs(t, batchRlimits)
}

func batchRlimits(t *testing.T, s *bside) {
	// Soft limits below any hard limit the node can have; /bin/sh's ulimit
	// reports -s in KiB.
	job := `ulimit -n; ulimit -c; ulimit -s; env | grep -c ^SLURM_RLIMIT_ || true`
	out, errs, rc := s.r.run(s.rel, "sh", "-c",
		`ulimit -S -n 777 && ulimit -S -c 0 && ulimit -S -s 4096 && exec sbatch --wait -o rl-%j.out --wrap "$0"`, job)
	m := submittedRe.FindStringSubmatch(out)
	if rc != 0 || m == nil || errs != "" {
		t.Fatalf("%s: sbatch --wait under ulimits: exit %d, stdout %q, stderr %q\n%s", s.name, rc, out, errs, s.logTail())
	}
	b, _ := os.ReadFile(filepath.Join(s.dir, "rl-"+m[1]+".out"))
	if want := "777\n0\n4096\n0\n"; string(b) != want {
		t.Errorf("%s: job %s under the submitting shell's limits printed %q, want %q (NOFILE, CORE, STACK, no SLURM_RLIMIT_* left)",
			s.name, m[1], b, want)
	}
}

// TestJobSlurmConf: a job's own client commands reach the server, whatever
// the submitter's SLURM_CONF was (here a path that does not exist where
// the job runs): the job gets the node stand-ins' config, as a configless
// slurmd's job gets slurmd's, and SLURM_CONF_SERVER is not passed on.
func TestJobSlurmConf(t *testing.T) {
	onOurs(t, func(t *testing.T, s *bside) {
		id := s.sbatch(t, "--export=ALL,SLURM_CONF=/nonexistent/slurm.conf,SLURM_CONF_SERVER=nowhere:1", "-o", "conf-%j.out", "--wrap",
			`echo "conf=$SLURM_CONF server=${SLURM_CONF_SERVER-unset}"; squeue -h -j $SLURM_JOB_ID -o "%i %T"; scontrol show config | grep "^ClusterName"`)
		if st, reason := s.waitDone(t, id, 30*time.Second); st != "COMPLETED" {
			out, _ := os.ReadFile(filepath.Join(s.dir, "conf-"+id+".out"))
			t.Fatalf("%s: job %s: %s %s\n%s", s.name, id, st, reason, out)
		}
		b, _ := os.ReadFile(filepath.Join(s.dir, "conf-"+id+".out"))
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: job %s printed %q, want 3 lines", s.name, id, b)
		}
		conf, server, _ := strings.Cut(strings.TrimPrefix(lines[0], "conf="), " ")
		if !strings.HasPrefix(conf, "/run/slurm-frontend/conf-") || server != "server=unset" {
			t.Errorf("%s: job %s: SLURM_CONF=%q, %s; want the node stand-ins' config and no SLURM_CONF_SERVER", s.name, id, conf, server)
		}
		if lines[1] != id+" RUNNING" {
			t.Errorf("%s: squeue in job %s printed %q, want %q", s.name, id, lines[1], id+" RUNNING")
		}
		if f := strings.Fields(lines[2]); len(f) != 3 || f[2] != "refcluster" {
			t.Errorf("%s: scontrol show config in job %s: %q, want ClusterName = refcluster", s.name, id, lines[2])
		}
		if fi, err := os.Lstat(conf); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("%s: %s: %v %v, want a regular file of root's, mode 0644", s.name, conf, fi, err)
		}
	})
}
