package local

import (
	"context"
	"io"
	"os"
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
