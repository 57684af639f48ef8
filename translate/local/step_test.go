package local

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// runTask starts argv as a task of session id and returns its output and
// wait status.
func runTask(t *testing.T, h *harness, id translate.SessionID, task translate.StepTask) (string, uint32) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	task.Stdout, task.Stderr = w, w
	p, err := h.e.ExecTask(context.Background(), id, &task)
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	r.Close()
	st, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return string(out), st
}

// A step's task runs where the job runs: in its PID namespace (pid 1 is
// the shim), as its user, in its directory, with the environment given;
// its exit status and the signal that ends it come back raw, as
// slurmstepd reports them.
func TestExecTask(t *testing.T) {
	requireRunner(t)
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	sp := h.spec(7, "#!/bin/sh\nexec sleep 60\n")
	sp.UID, sp.GID, sp.UserName = 65534, 65534, "nobody"
	id := h.create(sp)
	h.wait(id, translate.SessionRunning, 10*time.Second)
	defer h.e.DestroySession(context.Background(), id, true)

	out, st := runTask(t, h, id, translate.StepTask{Node: "n1", UID: 65534, GID: 65534,
		Argv: []string{"sh", "-c", "echo uid=$(id -u) gid=$(id -g) cwd=$PWD step=$SLURM_STEP_ID; cat /proc/1/cmdline | tr '\\0' ' '; echo; exit 5"},
		Env:  []string{"PATH=/usr/bin:/bin", "SLURM_STEP_ID=0"}, Cwd: "/tmp"})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "uid=65534 gid=65534 cwd=/tmp step=0" || !strings.Contains(lines[1], "shim run") {
		t.Errorf("task output %q: want the job's user, directory, environment, and the shim as pid 1", out)
	}
	if st != 5<<8 {
		t.Errorf("exit 5: wait status %#x, want %#x", st, 5<<8)
	}

	// A command that does not exist: slurmstepd's message, exit code 2.
	out, st = runTask(t, h, id, translate.StepTask{Node: "n1", UID: 65534, GID: 65534, Argv: []string{"no-such-command"},
		Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/tmp"})
	if st != 2<<8 || !strings.Contains(out, "slurmstepd-n1: error: execve(): no-such-command: No such file or directory") {
		t.Errorf("missing command: status %#x output %q", st, out)
	}

	// Signalled: the raw status is the signal.
	r, w, _ := os.Pipe()
	p, err := h.e.ExecTask(context.Background(), id, &translate.StepTask{Node: "n1", UID: 65534, GID: 65534,
		Argv: []string{"sh", "-c", "echo up; exec sleep 100"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/tmp", Stdout: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	io.ReadFull(r, buf)
	r.Close()
	if p.PID() == 0 {
		t.Errorf("no host pid for the task")
	}
	if err := p.Signal(int(syscall.SIGTERM)); err != nil {
		t.Fatal(err)
	}
	if st, _ := p.Wait(); st != uint32(syscall.SIGTERM) {
		t.Errorf("SIGTERM: wait status %#x, want %#x", st, uint32(syscall.SIGTERM))
	}

	// A session that is not running takes no task.
	if _, err := h.e.ExecTask(context.Background(), "nope", &translate.StepTask{Argv: []string{"true"}}); err == nil {
		t.Errorf("a task in an unknown session started")
	}
}

// An allocation (salloc, srun outside a job) runs no script: its session
// holds the namespace and the cgroup for the job's steps, their tasks
// run in both, and it ends when destroyed (taking a task still running
// with it) or at its time limit.
func TestHeldAllocation(t *testing.T) {
	requireRunner(t)
	h := newHarness(t, testConfig(testNode("n1", 2, 1000, "")), "")
	marker := filepath.Join(h.out, "script-ran")
	sp := h.spec(8, "#!/bin/sh\ntouch "+marker+"\nexec sleep 60\n")
	sp.Interactive = true
	id := h.create(sp)
	h.wait(id, translate.SessionRunning, 10*time.Second)

	out, st := runTask(t, h, id, translate.StepTask{Node: "n1", Argv: []string{"sh", "-c",
		"cat /proc/1/cmdline | tr '\\0' ' '; echo; cat /proc/self/cgroup"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/tmp"})
	if st != 0 || !strings.Contains(out, "shim run") {
		t.Errorf("task in a held allocation: status %#x output %q: want the shim as pid 1", st, out)
	}
	x, _ := h.e.exec()
	if x.cg.Version != 0 && !strings.Contains(out, "/job_8_") {
		t.Errorf("the task is not in the job's cgroup: %q", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("an allocation ran its script")
	}

	// Destroyed (salloc's shell exits): a task still running ends too.
	r, w, _ := os.Pipe()
	p, err := h.e.ExecTask(context.Background(), id, &translate.StepTask{Node: "n1",
		Argv: []string{"sh", "-c", "echo up; exec sleep 100"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/tmp", Stdout: w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	io.ReadFull(r, buf)
	r.Close()
	if err := h.e.DestroySession(context.Background(), id, false); err != nil {
		t.Fatal(err)
	}
	ev := h.wait(id, translate.SessionTerminated, 10*time.Second)
	if st, _ := p.Wait(); st != uint32(syscall.SIGTERM) {
		t.Errorf("task at the allocation's end: wait status %#x, want SIGTERM", st)
	}
	if ev.Reason != translate.ReasonUserRequested {
		t.Errorf("destroyed allocation: reason %q", ev.Reason)
	}

	// Its time limit ends it as a job's does.
	sp = h.spec(9, "")
	sp.Interactive, sp.TimeLimit = true, time.Second
	id = h.create(sp)
	h.wait(id, translate.SessionRunning, 10*time.Second)
	ev = h.wait(id, translate.SessionTerminated, 10*time.Second)
	if ev.Reason != translate.ReasonTaskTimeout {
		t.Errorf("allocation past its time limit: reason %q, want %q", ev.Reason, translate.ReasonTaskTimeout)
	}
}
