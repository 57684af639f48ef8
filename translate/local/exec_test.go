package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// The test binary doubles as the shim ("shim run DIR", what
// /proc/self/exe shim is in the server) and as a throw-away server for
// the kill -9 test ("engine-child SPOOL OUTDIR").
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		if err := ShimMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "shim:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 4 && os.Args[1] == "engine-child" {
		engineChild(os.Args[2], os.Args[3])
		return
	}
	os.Exit(m.Run())
}

var (
	nsOnce sync.Once
	nsErr  error
)

// requireRunner skips when jobs cannot run here: they need root (uid
// switching, namespaces, cgroups) and permission to create PID and mount
// namespaces (not given in unprivileged containers).
func requireRunner(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running jobs needs root (setuid/setgid, PID and mount namespaces); not root")
	}
	nsOnce.Do(func() {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
		if err := cmd.Run(); err != nil {
			nsErr = fmt.Errorf("creating PID and mount namespaces is not permitted here: %v", err)
			return
		}
		cmd = exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{65534}}}
		if err := cmd.Run(); err != nil {
			nsErr = fmt.Errorf("cannot start a process as uid 65534 with groups (a user namespace?): %v", err)
		}
	})
	if nsErr != nil {
		t.Skip(nsErr)
	}
}

func testNode(name string, cpus uint16, memMB uint64, gres string) conf.Node {
	return conf.Node{Name: name, Addr: "127.0.0.1", CPUs: cpus, RealMemory: memMB, Gres: gres,
		Boards: 1, Sockets: 1, CoresPerSocket: cpus, ThreadsPerCore: 1, Weight: 1, State: "IDLE"}
}

func testConfig(nodes ...conf.Node) *conf.Config {
	cfg := conf.New()
	cfg.Nodes = nodes
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	cfg.Partitions = []conf.Partition{{Name: "p", Nodes: names, Default: true, State: "UP", MaxTime: conf.Infinite}}
	return cfg
}

type harness struct {
	t      *testing.T
	e      *Engine
	spool  string
	out    string // world-writable directory for job output
	mu     sync.Mutex
	cond   *sync.Cond
	events map[translate.SessionID][]translate.SessionEvent
	order  []translate.SessionEvent
	// holdRunning: RUNNING events are not acknowledged (the test calls
	// Ack), as a controller that has not yet shown the job running.
	holdRunning atomic.Bool
}

func newHarness(t *testing.T, cfg *conf.Config, spool string) *harness {
	t.Helper()
	if spool == "" {
		spool = filepath.Join(t.TempDir(), "spool") // under a 0700 directory: the script must still be reachable
	}
	h := &harness{t: t, spool: spool, events: map[translate.SessionID][]translate.SessionEvent{}}
	h.cond = sync.NewCond(&h.mu)
	h.e = New(cfg, WithSpoolDir(spool), WithLogger(log.New(testWriter{t}, "", log.Lmicroseconds)))
	if err := h.e.Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Let every job end before the directories go.
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			ss, _ := h.e.Sessions(context.Background())
			if !slices.ContainsFunc(ss, func(i translate.SessionInfo) bool { return !i.Status.Terminal() }) {
				break
			}
		}
		h.e.Close()
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(spool, "*", fShimLog))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
		}
	})
	out, err := os.MkdirTemp("", "slurmfe-out-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o777)
	t.Cleanup(func() { os.RemoveAll(out) })
	h.out = out
	go func() {
		for ev := range h.e.Events() {
			if ev.Status != translate.SessionRunning || !h.holdRunning.Load() {
				ev.Ack()
			}
			h.mu.Lock()
			h.events[ev.ID] = append(h.events[ev.ID], ev)
			h.order = append(h.order, ev)
			h.cond.Broadcast()
			h.mu.Unlock()
		}
	}()
	return h
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (h *harness) spec(job uint32, script string) translate.SessionSpec {
	return translate.SessionSpec{
		Name: fmt.Sprintf("slurm-%d", job), JobID: job, ResourceGroup: "p",
		UserName: "root", Script: script, Argv: []string{"slurm_script"},
		Env: []string{"PATH=/usr/bin:/bin"}, WorkDir: "/tmp",
		StdOut: filepath.Join(h.out, fmt.Sprintf("slurm-%d.out", job)),
		Nodes:  1, CPUsPerNode: 1, KillWait: time.Second,
	}
}

func (h *harness) create(spec translate.SessionSpec) translate.SessionID {
	h.t.Helper()
	id, err := h.e.CreateSession(context.Background(), spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// wait returns the first event of id with status st, failing after d.
func (h *harness) wait(id translate.SessionID, st translate.SessionStatus, d time.Duration) translate.SessionEvent {
	h.t.Helper()
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() { h.mu.Lock(); h.cond.Broadcast(); h.mu.Unlock() })
	defer timer.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		for _, ev := range h.events[id] {
			if ev.Status == st {
				return ev
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("session %s: no %s within %v; events: %+v", id, st, d, h.events[id])
		}
		h.cond.Wait()
	}
}

func (h *harness) statuses(id translate.SessionID) []translate.SessionStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []translate.SessionStatus
	for _, ev := range h.events[id] {
		out = append(out, ev.Status)
	}
	return out
}

func (h *harness) output(job uint32) string {
	b, _ := os.ReadFile(filepath.Join(h.out, fmt.Sprintf("slurm-%d.out", job)))
	return string(b)
}

// waitOutput waits until the job's output contains s.
func (h *harness) waitOutput(job uint32, s string, d time.Duration) {
	h.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(h.output(job), s) {
			return
		}
	}
	h.t.Fatalf("job %d: output has no %q within %v: %q", job, s, d, h.output(job))
}

func TestScriptRunsAndWritesOutput(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	id := h.create(h.spec(1, "#!/bin/sh\necho hello from $0\n"))
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	if ev.ExitCode != 0 || ev.Signal != 0 || ev.Reason != "task-finished" {
		t.Fatalf("end: %+v", ev)
	}
	want := []translate.SessionStatus{translate.SessionPending, translate.SessionScheduled, translate.SessionRunning, translate.SessionTerminated}
	if got := h.statuses(id); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if got := ev.Nodes; !slices.Equal(got, []string{"n1"}) {
		t.Fatalf("nodes %v", got)
	}
	out := h.output(1)
	if !strings.HasPrefix(out, "hello from "+filepath.Join(h.spool, string(id), "job00001", "slurm_script")) {
		t.Fatalf("output %q", out)
	}
	fi, _ := os.Stat(filepath.Join(h.out, "slurm-1.out"))
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("output mode %v, want 0644", fi.Mode().Perm())
	}
	if exists(filepath.Join(h.spool, string(id), "job00001")) {
		t.Fatal("script directory left behind")
	}
	ss, _ := h.e.Sessions(context.Background())
	if len(ss) != 1 || ss[0].ID != id || ss[0].Status != translate.SessionTerminated || ss[0].JobID != 1 {
		t.Fatalf("Sessions: %+v", ss)
	}
}

// A job's script starts only once the engine's consumer has shown the
// job RUNNING (SessionEvent.Shown), as slurmctld marks a job running
// before it launches it: the job's own squeue must see it so.
func TestScriptStartsOnceShown(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	h.holdRunning.Store(true)
	id := h.create(h.spec(3, "#!/bin/sh\necho ran\n"))
	run := h.wait(id, translate.SessionRunning, 10*time.Second)
	if run.Shown == nil {
		t.Fatal("RUNNING event without Shown: nothing holds the script")
	}
	ss, _ := h.e.Sessions(context.Background())
	if len(ss) != 1 || ss[0].Status != translate.SessionRunning {
		t.Fatalf("Sessions while held: %+v, want RUNNING", ss)
	}
	time.Sleep(300 * time.Millisecond)
	if out := h.output(3); out != "" {
		t.Fatalf("the script ran before its job was shown RUNNING: %q", out)
	}
	run.Ack()
	if ev := h.wait(id, translate.SessionTerminated, 10*time.Second); ev.ExitCode != 0 || ev.Reason != "task-finished" {
		t.Fatalf("end: %+v", ev)
	}
	if out := h.output(3); out != "ran\n" {
		t.Fatalf("output %q, want \"ran\\n\"", out)
	}
}

func TestEnvironmentIsExactlyTheSpec(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	sp := h.spec(2, "#!/bin/sh\ntr '\\0' '\\n' < /proc/$$/environ\n")
	sp.Env = []string{"PATH=/usr/bin:/bin", "A=1", "B=two words", "EMPTY=", "SLURM_NODELIST=?"}
	id := h.create(sp)
	h.wait(id, translate.SessionTerminated, 10*time.Second)
	got := strings.Split(strings.TrimRight(h.output(2), "\n"), "\n")
	if want := []string{"PATH=/usr/bin:/bin", "A=1", "B=two words", "EMPTY=", "SLURM_NODELIST=n1"}; !slices.Equal(got, want) {
		t.Fatalf("environment\n%q\nwant\n%q", got, want)
	}
	// A Slurm job's environment gets what slurmd adds from the placement.
	sp = h.spec(3, "#!/bin/sh\ntr '\\0' '\\n' < /proc/$$/environ\n")
	sp.Env = []string{"PATH=/usr/bin:/bin", "SLURM_JOB_ID=3", "SLURM_TASK_PID=0", "HOSTNAME=login1",
		"SLURM_JOB_START_TIME=0", "SLURM_JOB_END_TIME=0"}
	sp.TimeLimit = time.Hour
	id = h.create(sp)
	run := h.wait(id, translate.SessionRunning, 10*time.Second)
	h.wait(id, translate.SessionTerminated, 10*time.Second)
	got = strings.Split(strings.TrimRight(h.output(3), "\n"), "\n")
	start := run.Time.Unix()
	want := []string{"PATH=/usr/bin:/bin", "SLURM_JOB_ID=3", "SLURM_TASK_PID=?", "HOSTNAME=n1",
		fmt.Sprintf("SLURM_JOB_START_TIME=%d", start), fmt.Sprintf("SLURM_JOB_END_TIME=%d", start+3600),
		"SLURM_JOB_NODELIST=n1", "SLURM_NODELIST=n1", "SLURM_JOB_NUM_NODES=1", "SLURM_NNODES=1",
		"SLURM_JOB_CPUS_PER_NODE=1", "SLURM_CPUS_ON_NODE=1", "SLURMD_NODENAME=n1", "SLURM_TOPOLOGY_ADDR=n1",
		"SLURM_TOPOLOGY_ADDR_PATTERN=node", "TMPDIR=/tmp"}
	if len(got) == len(want) && strings.HasPrefix(got[2], "SLURM_TASK_PID=") && got[2] != "SLURM_TASK_PID=0" {
		want[2] = got[2]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Slurm job environment\n%q\nwant\n%q", got, want)
	}
}

func TestRunsAsUser(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	rootFile := filepath.Join(h.out, "root-owned")
	if err := os.WriteFile(rootFile, []byte("root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := h.spec(3, fmt.Sprintf("#!/bin/sh\nid -u; id -g; id -G\necho x >> %s && echo WROTE || echo DENIED\ncat $0 >/dev/null && echo READ-SCRIPT\n", rootFile))
	sp.UID, sp.GID, sp.Groups, sp.UserName = 65534, 65534, []uint32{65534}, "nobody"
	id := h.create(sp)
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	out := h.output(3)
	if ev.ExitCode != 0 || !strings.HasPrefix(out, "65534\n65534\n65534\n") || !strings.Contains(out, "DENIED") ||
		strings.Contains(out, "WROTE") || !strings.Contains(out, "READ-SCRIPT") {
		t.Fatalf("end %+v, output %q", ev, out)
	}
	fi, err := os.Stat(filepath.Join(h.out, "slurm-3.out"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 || fi.Mode().Perm() != 0o644 {
		t.Fatalf("output file owner %d:%d mode %v, want 65534:65534 0644", st.Uid, st.Gid, fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(rootFile); string(b) != "root\n" {
		t.Fatalf("root-owned file changed: %q", b)
	}
}

func TestExitCode(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	id := h.create(h.spec(4, "#!/bin/sh\nexit 3\n"))
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	if ev.ExitCode != 3 || ev.Signal != 0 || ev.Reason != "task-finished" {
		t.Fatalf("end: %+v", ev)
	}
}

func TestPIDNamespace(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	sp := h.spec(5, "#!/bin/sh\necho pid=$$ task_pid=$SLURM_TASK_PID\ncat /proc/1/cmdline | tr '\\0' ' '; echo\ngrep -c ' /proc proc ' /proc/self/mounts\nls /proc | grep -c '^[0-9]'\nls /proc/self/fd\n")
	sp.Env = append(sp.Env, "SLURM_TASK_PID=unknown")
	// A descriptor the server has without close-on-exec must not reach the job.
	leak, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := h.create(sp)
	h.wait(id, translate.SessionRunning, 10*time.Second)
	syscall.Close(leak)
	h.wait(id, translate.SessionTerminated, 10*time.Second)
	all := strings.Split(strings.TrimSpace(h.output(5)), "\n")
	lines, fds := all[:min(4, len(all))], all[min(4, len(all)):]
	if !slices.Equal(fds, []string{"0", "1", "2", "3"}) { // 3: ls reading /proc/self/fd
		t.Fatalf("a command of the job has descriptors %q, want 0 1 2 (and its own 3)", fds)
	}
	// pid 1 is the shim (it reaps and signals; a script as pid 1 would
	// ignore untrapped signals); its threads hold the next few pids, so
	// the script is the lowest free one, and SLURM_TASK_PID says which.
	var pid, taskPID int
	if len(lines) != 4 {
		t.Fatalf("output %q", h.output(5))
	}
	fmt.Sscanf(lines[0], "pid=%d task_pid=%d", &pid, &taskPID)
	var seen int
	fmt.Sscan(lines[3], &seen)
	// A fresh /proc (mounted over the host's): only this namespace's pids.
	if pid < 2 || pid > 32 || taskPID != pid || !strings.Contains(lines[1], "shim run") || lines[2] == "0" || seen < 3 || seen > 8 {
		t.Fatalf("output %q", h.output(5))
	}
	t.Logf("the script is pid %d of its namespace; it sees %s pids in /proc", pid, lines[3])
}

func TestTimeLimitTermThenKill(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	sp := h.spec(6, "#!/bin/bash\ntrap 'echo got TERM' TERM\ntrap 'echo got USR1' USR1\necho start\nwhile :; do sleep 0.1; done\n")
	sp.TimeLimit, sp.KillWait = 2*time.Second, time.Second
	sp.Signal, sp.Warn, sp.SignalBatchOnly = int(syscall.SIGUSR1), time.Second, true
	id := h.create(sp)
	run := h.wait(id, translate.SessionRunning, 10*time.Second)
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	took := ev.Time.Sub(run.Time)
	if ev.Reason != "task-timeout" || ev.Signal != int(syscall.SIGKILL) {
		t.Fatalf("end: %+v", ev)
	}
	if took < 2900*time.Millisecond || took > 4500*time.Millisecond {
		t.Fatalf("ended %v after start, want ~3 s (2 s limit + 1 s kill wait)", took)
	}
	out := h.output(6)
	iu, il, it := strings.Index(out, "got USR1"), strings.Index(out, "CANCELLED AT"), strings.Index(out, "got TERM")
	if iu < 0 || il < 0 || it < 0 || !(iu < il && il < it) ||
		!strings.Contains(out, "slurmstepd-n1: error: *** JOB 6 ON n1 CANCELLED AT ") || !strings.Contains(out, " DUE TO TIME LIMIT ***") {
		t.Fatalf("output %q", out)
	}
	t.Logf("timed out after %v", took)
}

func TestUpdateTimeLimitOfRunningJob(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	sp := h.spec(7, "#!/bin/sh\nsleep 30\n")
	id := h.create(sp)
	h.wait(id, translate.SessionRunning, 10*time.Second)
	if err := h.e.UpdateTimeLimit(context.Background(), id, time.Second); err != nil {
		t.Fatal(err)
	}
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	if ev.Reason != "task-timeout" || ev.Signal != int(syscall.SIGTERM) {
		t.Fatalf("end: %+v", ev)
	}
}

func TestDestroyPendingAndRunning(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	a := h.spec(10, "#!/bin/sh\necho running\nsleep 30\n")
	a.CPUsPerNode = 2
	ida := h.create(a)
	h.wait(ida, translate.SessionRunning, 10*time.Second)
	b := h.spec(11, "#!/bin/sh\necho should not run\n")
	idb := h.create(b)
	h.wait(idb, translate.SessionPending, 5*time.Second)
	if err := h.e.DestroySession(context.Background(), idb, false); err != nil {
		t.Fatal(err)
	}
	ev := h.wait(idb, translate.SessionCancelled, 5*time.Second)
	if ev.Reason != "user-requested" {
		t.Fatalf("cancel: %+v", ev)
	}
	h.waitOutput(10, "running", 5*time.Second)
	if err := h.e.DestroySession(context.Background(), ida, false); err != nil {
		t.Fatal(err)
	}
	h.wait(ida, translate.SessionTerminating, 5*time.Second)
	ev = h.wait(ida, translate.SessionTerminated, 10*time.Second)
	if ev.Reason != "user-requested" || ev.Signal != int(syscall.SIGTERM) {
		t.Fatalf("destroy: %+v", ev)
	}
	if out := h.output(10); !strings.Contains(out, "slurmstepd-n1: error: *** JOB 10 ON n1 CANCELLED AT ") || strings.Contains(out, "TIME LIMIT") {
		t.Fatalf("output %q", out)
	}
	if exists(filepath.Join(h.out, "slurm-11.out")) {
		t.Fatal("cancelled session ran")
	}
	if got := h.statuses(idb); !slices.Equal(got, []translate.SessionStatus{translate.SessionPending, translate.SessionCancelled}) {
		t.Fatalf("events of the cancelled session: %v", got)
	}
	// Forced destroy: SIGKILL at once, even with SIGTERM trapped.
	c := h.spec(12, "#!/bin/bash\ntrap '' TERM\necho up\nwhile :; do sleep 0.1; done\n")
	c.KillWait = 20 * time.Second
	idc := h.create(c)
	h.waitOutput(12, "up", 10*time.Second)
	t0 := time.Now()
	if err := h.e.DestroySession(context.Background(), idc, true); err != nil {
		t.Fatal(err)
	}
	ev = h.wait(idc, translate.SessionTerminated, 5*time.Second)
	if ev.Signal != int(syscall.SIGKILL) || time.Since(t0) > 2*time.Second {
		t.Fatalf("forced destroy: %+v after %v", ev, time.Since(t0))
	}
}

func TestPriorityOrder(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	blocker := h.spec(20, "#!/bin/sh\nsleep 1\n")
	blocker.CPUsPerNode = 2
	idb := h.create(blocker)
	h.wait(idb, translate.SessionRunning, 10*time.Second)
	ids := map[translate.SessionID]string{}
	for _, x := range []struct {
		job  uint32
		prio int64
		name string
	}{{21, 1, "low"}, {22, 10, "high"}, {23, 5, "mid"}, {24, 5, "mid2"}} {
		sp := h.spec(x.job, "#!/bin/sh\nsleep 0.2\n")
		sp.CPUsPerNode, sp.Priority = 2, x.prio
		ids[h.create(sp)] = x.name
	}
	for id := range ids {
		h.wait(id, translate.SessionTerminated, 20*time.Second)
	}
	var order []string
	h.mu.Lock()
	for _, ev := range h.order {
		if n, ok := ids[ev.ID]; ok && ev.Status == translate.SessionRunning {
			order = append(order, n)
		}
	}
	h.mu.Unlock()
	if want := []string{"high", "mid", "mid2", "low"}; !slices.Equal(order, want) {
		t.Fatalf("start order %v, want %v", order, want)
	}
}

func TestPlacementGPUsAndNeverFits(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	cfg := testConfig(testNode("g1", 4, 1000, "gpu:2"), testNode("c1", 4, 1000, ""))
	cfg.Partitions = append(cfg.Partitions, conf.Partition{Name: "gpu", Nodes: []string{"g1"}, State: "UP"})
	h := newHarness(t, cfg, "")
	// Can never fit: 2 nodes in a 1-node partition; more GPUs than any node; unknown partition.
	bad := h.spec(30, "#!/bin/sh\ntrue\n")
	bad.ResourceGroup, bad.Nodes = "gpu", 2
	id1 := h.create(bad)
	bad2 := h.spec(31, "#!/bin/sh\ntrue\n")
	bad2.GPUsPerNode, bad2.Priority = 3, 100
	id2 := h.create(bad2)
	bad3 := h.spec(32, "#!/bin/sh\ntrue\n")
	bad3.ResourceGroup = "nosuch"
	id3 := h.create(bad3)
	for _, id := range []translate.SessionID{id1, id2, id3} {
		if ev := h.wait(id, translate.SessionError, 5*time.Second); ev.Reason != "failed-to-start" {
			t.Fatalf("never fits: %+v", ev)
		}
	}
	// Two one-GPU jobs share g1 (the node is in partitions p and gpu); a third waits.
	var gids []translate.SessionID
	for i, part := range []string{"gpu", "p", "gpu"} {
		sp := h.spec(uint32(40+i), "#!/bin/sh\necho $CUDA_VISIBLE_DEVICES $SLURM_JOB_NODELIST\nsleep 1\n")
		sp.ResourceGroup, sp.GPUsPerNode = part, 1
		sp.Env = append(sp.Env, "SLURM_JOB_NODELIST=unknown")
		gids = append(gids, h.create(sp))
	}
	r0 := h.wait(gids[0], translate.SessionRunning, 10*time.Second)
	r1 := h.wait(gids[1], translate.SessionRunning, 10*time.Second)
	e0 := h.wait(gids[0], translate.SessionTerminated, 10*time.Second)
	e1 := h.wait(gids[1], translate.SessionTerminated, 10*time.Second)
	r2 := h.wait(gids[2], translate.SessionRunning, 10*time.Second)
	if !slices.Equal(r0.Nodes, []string{"g1"}) || !slices.Equal(r1.Nodes, []string{"g1"}) || r2.Time.Before(minTime(e0.Time, e1.Time)) {
		t.Fatalf("placement: %+v %+v %+v", r0, r1, r2)
	}
	for _, id := range gids {
		h.wait(id, translate.SessionTerminated, 10*time.Second)
	}
	outs := []string{strings.TrimSpace(h.output(40)), strings.TrimSpace(h.output(41))}
	slices.Sort(outs)
	if !slices.Equal(outs, []string{"0 g1", "1 g1"}) {
		t.Fatalf("GPU outputs %q", outs)
	}
	// ReqNodes and ExcNodes.
	sp := h.spec(50, "#!/bin/sh\ntrue\n")
	sp.ReqNodes = []string{"c1"}
	r := h.wait(h.create(sp), translate.SessionRunning, 10*time.Second)
	sp = h.spec(51, "#!/bin/sh\ntrue\n")
	sp.ExcNodes = []string{"g1"}
	r2 = h.wait(h.create(sp), translate.SessionRunning, 10*time.Second)
	sp = h.spec(52, "#!/bin/sh\ntrue\n")
	sp.Nodes, sp.Exclusive = 2, true
	r3 := h.wait(h.create(sp), translate.SessionRunning, 10*time.Second)
	if !slices.Equal(r.Nodes, []string{"c1"}) || !slices.Equal(r2.Nodes, []string{"c1"}) || !slices.Equal(r3.Nodes, []string{"g1", "c1"}) {
		t.Fatalf("req/exc/exclusive placement: %v %v %v", r.Nodes, r2.Nodes, r3.Nodes)
	}
}

func TestLaunchFailures(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	// Output file cannot be created (slurmd: job fails to launch).
	sp := h.spec(60, "#!/bin/sh\necho hi\n")
	sp.StdOut = "/nonexistent-dir/out"
	if ev := h.wait(h.create(sp), translate.SessionError, 10*time.Second); ev.Reason != "failed-to-start" || ev.Signal != 53 {
		t.Fatalf("unwritable output: %+v", ev)
	}
	// A user cannot create a file in a root-only directory.
	sp = h.spec(61, "#!/bin/sh\necho hi\n")
	sp.UID, sp.GID, sp.UserName = 65534, 65534, "nobody"
	sp.StdOut = filepath.Join(t.TempDir(), "out")
	if ev := h.wait(h.create(sp), translate.SessionError, 10*time.Second); ev.Reason != "failed-to-start" {
		t.Fatalf("output in a root-only directory: %+v", ev)
	}
	// No "#!": execve fails as under slurmstepd.
	id := h.create(h.spec(62, "echo no interpreter line\n"))
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	if ev.ExitCode != int(syscall.ENOEXEC) || !strings.Contains(h.output(62), "execve(): ") ||
		!strings.Contains(h.output(62), "slurm_script: Exec format error") {
		t.Fatalf("no #!: %+v %q", ev, h.output(62))
	}
	// Working directory the user cannot enter: /tmp instead, with slurmstepd's message.
	sp = h.spec(63, "#!/bin/sh\npwd\n")
	sp.WorkDir = "/nonexistent"
	h.wait(h.create(sp), translate.SessionTerminated, 10*time.Second)
	if out := h.output(63); !strings.HasPrefix(out, "slurmstepd-n1: error: couldn't chdir to `/nonexistent': No such file or directory: going to /tmp instead\n") ||
		!strings.HasSuffix(out, "\n/tmp\n") {
		t.Fatalf("chdir fallback: %q", out)
	}
	// Separate stderr, appended.
	errPath := filepath.Join(h.out, "err-64")
	os.WriteFile(errPath, []byte("old\n"), 0o644)
	sp = h.spec(64, "#!/bin/sh\necho out; echo err >&2\n")
	sp.StdErr, sp.AppendOut = errPath, true
	h.wait(h.create(sp), translate.SessionTerminated, 10*time.Second)
	if b, _ := os.ReadFile(errPath); string(b) != "old\nerr\n" || h.output(64) != "out\n" {
		t.Fatalf("stderr %q stdout %q", b, h.output(64))
	}
}

func TestSignalSession(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	id := h.create(h.spec(70, "#!/bin/bash\ntrap 'echo got USR1' USR1\necho ready\nfor i in $(seq 30); do sleep 0.1; done\necho loop-done\n"))
	h.wait(id, translate.SessionRunning, 10*time.Second)
	h.waitOutput(70, "ready", 5*time.Second)
	if err := h.e.SignalSession(context.Background(), id, int(syscall.SIGUSR1), true); err != nil {
		t.Fatal(err)
	}
	h.waitOutput(70, "got USR1", 5*time.Second)
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	if ev.ExitCode != 0 || !strings.Contains(h.output(70), "loop-done") {
		t.Fatalf("end %+v output %q", ev, h.output(70))
	}
	// Every process: the untrapped sleep dies of it too.
	id = h.create(h.spec(71, "#!/bin/bash\ntrap 'echo shell got USR2' USR2\nsleep 30 & child=$!\necho ready\nwait $child; echo child status $?\nsleep 0.5\n"))
	// Signals go to running sessions: the script can print before the
	// engine has seen it start.
	h.wait(id, translate.SessionRunning, 10*time.Second)
	h.waitOutput(71, "ready", 10*time.Second)
	if err := h.e.SignalSession(context.Background(), id, int(syscall.SIGUSR2), false); err != nil {
		t.Fatal(err)
	}
	h.wait(id, translate.SessionTerminated, 10*time.Second)
	if out := h.output(71); !strings.Contains(out, "shell got USR2") || !strings.Contains(out, "child status 140") {
		t.Fatalf("output %q", out)
	}
}

func TestMemoryLimitOOM(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	if h.e.x.cg.Version == 0 {
		t.Skipf("cgroups not usable here (%s)", h.e.x.cg.Why)
	}
	sp := h.spec(80, "#!/bin/sh\nhead -c 300000000 /dev/zero | tail > /dev/null\necho after\n")
	sp.MemPerNodeMB = 32
	id := h.create(sp)
	ev := h.wait(id, translate.SessionTerminated, 30*time.Second)
	if ev.Reason != "oom-killed" || !strings.Contains(h.output(80), "oom_kill event") {
		t.Fatalf("end %+v output %q", ev, h.output(80))
	}
}

func TestCPULimit(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	h := newHarness(t, testConfig(testNode("n1", 4, 1000, "")), "")
	if h.e.x.cg.Version == 0 {
		t.Skipf("cgroups not usable here (%s)", h.e.x.cg.Why)
	}
	spin := "timeout 1 sh -c 'while :; do :; done'"
	id := h.create(h.spec(81, fmt.Sprintf("#!/bin/sh\n%s &\n%s &\n%s &\nwait\n", spin, spin, spin)))
	h.wait(id, translate.SessionTerminated, 10*time.Second)
	var st statusRecord
	if err := readJSON(filepath.Join(h.spool, string(id), fStatus), &st); err != nil {
		t.Fatal(err)
	}
	// Three busy loops for 1 s with one CPU's quota: about 1 s of CPU.
	if cpu := st.UserCPU + st.SysCPU; cpu > 1300*time.Millisecond {
		t.Fatalf("CPU time %v in 1 s with a 1-CPU limit", cpu)
	} else {
		t.Logf("3 spinners, 1 s, 1-CPU limit: %v of CPU", cpu)
	}
}

// The server dies (here: the engine object is simply abandoned, its shim
// left alone); a new engine on the same spool finds the job running and
// reports its end.
func TestRestartReattaches(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	cfg := testConfig(testNode("n1", 2, 1000, ""))
	h1 := newHarness(t, cfg, "")
	id := h1.create(h1.spec(90, "#!/bin/sh\necho start\nsleep 3\necho done\n"))
	h1.wait(id, translate.SessionRunning, 10*time.Second)

	h2 := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), h1.spool)
	h2.out = h1.out
	ss, err := h2.e.Sessions(context.Background())
	if err != nil || len(ss) != 1 || ss[0].ID != id || ss[0].Status != translate.SessionRunning {
		t.Fatalf("Sessions after restart: %+v %v", ss, err)
	}
	ev := h2.wait(id, translate.SessionTerminated, 10*time.Second)
	if got := h2.statuses(id); !slices.Equal(got, []translate.SessionStatus{translate.SessionRunning, translate.SessionTerminated}) {
		t.Fatalf("events after restart: %v", got)
	}
	// The replayed RUNNING carries the real start time.
	if r1, r2 := h1.wait(id, translate.SessionRunning, 0), h2.wait(id, translate.SessionRunning, 0); !r1.Time.Equal(r2.Time) {
		t.Fatalf("start time %v before the restart, %v after", r1.Time, r2.Time)
	}
	if ev.ExitCode != 0 || ev.Reason != "task-finished" || h1.output(90) != "start\ndone\n" {
		t.Fatalf("end %+v output %q", ev, h1.output(90))
	}
	// A third engine sees it ended, and does not run it again.
	h3 := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), h1.spool)
	if ev := h3.wait(id, translate.SessionTerminated, 5*time.Second); ev.ExitCode != 0 {
		t.Fatalf("replayed end %+v", ev)
	}
	time.Sleep(300 * time.Millisecond)
	if h1.output(90) != "start\ndone\n" {
		t.Fatalf("ran twice? %q", h1.output(90))
	}
}

// engineChild is a server that gets kill -9'ed: it queues a running job
// and a pending one, prints their ids, and waits to die.
func engineChild(spool, out string) {
	e := New(testConfig(testNode("n1", 2, 1000, "")), WithSpoolDir(spool))
	mk := func(job uint32, script string) translate.SessionID {
		id, err := e.CreateSession(context.Background(), translate.SessionSpec{
			JobID: job, ResourceGroup: "p", Script: script, Argv: []string{"x"},
			Env: []string{"PATH=/usr/bin:/bin"}, WorkDir: "/tmp", StdOut: filepath.Join(out, fmt.Sprintf("slurm-%d.out", job)),
			AppendOut: true, Nodes: 1, CPUsPerNode: 2,
		})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		return id
	}
	a := mk(100, "#!/bin/sh\necho start\nsleep 2\necho done\n")
	for ev := range e.Events() {
		ev.Ack()
		if ev.ID == a && ev.Status == translate.SessionRunning {
			break
		}
	}
	b := mk(101, "#!/bin/sh\necho B ran\n")
	fmt.Println(a, b)
	select {}
}

func TestKill9ServerAndRestart(t *testing.T) {
	requireRunner(t)
	t.Parallel()
	spool := filepath.Join(t.TempDir(), "spool")
	out, _ := os.MkdirTemp("", "slurmfe-out-")
	defer os.RemoveAll(out)
	child := exec.Command(os.Args[0], "engine-child", spool, out)
	child.Stderr = os.Stderr
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 {
		child.Process.Kill()
		t.Fatalf("child said %q (%v)", line, err)
	}
	a, b := translate.SessionID(f[0]), translate.SessionID(f[1])
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	io.Copy(io.Discard, stdout)

	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), spool)
	h.out = out
	if ev := h.wait(a, translate.SessionTerminated, 10*time.Second); ev.ExitCode != 0 {
		t.Fatalf("a: %+v", ev)
	}
	if ev := h.wait(b, translate.SessionTerminated, 10*time.Second); ev.ExitCode != 0 {
		t.Fatalf("b: %+v", ev)
	}
	if got := h.statuses(a); got[0] != translate.SessionRunning {
		t.Fatalf("a after restart: %v", got)
	}
	if got := h.statuses(b); !slices.Equal(got, []translate.SessionStatus{translate.SessionPending, translate.SessionScheduled, translate.SessionRunning, translate.SessionTerminated}) {
		t.Fatalf("b after restart: %v", got)
	}
	// Appended output: a second run would show twice.
	if h.output(100) != "start\ndone\n" || h.output(101) != "B ran\n" {
		t.Fatalf("outputs %q %q", h.output(100), h.output(101))
	}
}
