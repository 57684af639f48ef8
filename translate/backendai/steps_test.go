package backendai

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
)

// runLauncher runs the launcher command as the kernel runner would
// (/bin/sh -c, stdout and stderr piped) and takes its output as relay
// does, into files per task; it returns each task's stdout, stderr and
// raw status.
func runLauncher(t *testing.T, dir string, tasks []*translate.StepTask) (outs, errs []string, status []uint32) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	run := &stepRun{logf: t.Logf}
	var names [][2]string
	for i := range tasks {
		o, e := filepath.Join(dir, "o"+string(rune('0'+i))), filepath.Join(dir, "e"+string(rune('0'+i)))
		of, _ := os.Create(o)
		ef, _ := os.Create(e)
		run.procs = append(run.procs, &stepProc{run: run, out: of, err: ef, done: make(chan struct{})})
		names = append(names, [2]string{o, e})
	}
	cmdline, err := launcherCommand(tasks, stepKillWait)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdin = nil
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		run.frameLine(sc.Bytes())
	}
	cmd.Wait()
	if stderr.Len() > 0 {
		t.Errorf("the launcher wrote to its stderr: %q", stderr.String())
	}
	for i, p := range run.procs {
		if !p.ended {
			t.Errorf("task %d: no status", i)
			p.finish(0)
		}
		o, _ := os.ReadFile(names[i][0])
		e, _ := os.ReadFile(names[i][1])
		outs, errs, status = append(outs, string(o)), append(errs, string(e)), append(status, p.status)
	}
	return
}

func TestLauncher(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "A=1"}
	bin := string([]byte{0, 1, 2, 0xff, '\n', 'x'})
	os.WriteFile(filepath.Join(dir, "bin"), []byte(bin), 0o644)
	tasks := []*translate.StepTask{
		{Node: "n1", Argv: []string{"sh", "-c", "echo out $A; echo err >&2; cat bin; exit 5"}, Env: env, Cwd: dir},
		{Node: "n1", Argv: []string{"sh", "-c", "kill -USR1 $$"}, Env: env, Cwd: dir},
		{Node: "n1", Argv: []string{"no-such-command"}, Env: env, Cwd: dir},
		{Node: "n1", Argv: []string{"sh", "-c", "pwd; echo to-file"}, Env: env, Cwd: filepath.Join(dir, "missing"), OutPath: filepath.Join(dir, "f.out")},
		{Node: "n1", Argv: []string{"sh", "-c", "read x || echo eof"}, Env: env, Cwd: dir},
	}
	outs, errs, st := runLauncher(t, dir, tasks)
	if outs[0] != "out 1\n"+bin || errs[0] != "err\n" || st[0] != 5<<8 {
		t.Errorf("task 0: out %q err %q status %#x", outs[0], errs[0], st[0])
	}
	if st[1] != uint32(syscall.SIGUSR1) {
		t.Errorf("task 1 (killed by SIGUSR1): status %#x", st[1])
	}
	if st[2] != 2<<8 || !strings.Contains(errs[2], "slurmstepd-n1: error: execve(): no-such-command: No such file or directory") {
		t.Errorf("task 2 (no such command): status %#x, stderr %q", st[2], errs[2])
	}
	b, _ := os.ReadFile(filepath.Join(dir, "f.out"))
	if outs[3] != "" || string(b) != "/tmp\nto-file\n" || !strings.Contains(errs[3], "couldn't chdir to `"+filepath.Join(dir, "missing")+"'") {
		t.Errorf("task 3 (--output, missing cwd): relayed %q, file %q, stderr %q", outs[3], b, errs[3])
	}
	if outs[4] != "eof\n" || st[4] != 0 {
		t.Errorf("task 4 (stdin): %q status %#x", outs[4], st[4])
	}
}

// A large output goes through whole and in order.
func TestLauncherLargeOutput(t *testing.T) {
	dir := t.TempDir()
	tasks := []*translate.StepTask{{Node: "n1", Argv: []string{"sh", "-c", "seq 1 200000"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: dir}}
	outs, _, st := runLauncher(t, dir, tasks)
	out, _ := exec.Command("seq", "1", "200000").Output()
	if outs[0] != string(out) || st[0] != 0 {
		t.Errorf("seq 1 200000: %d bytes (want %d), status %#x", len(outs[0]), len(out), st[0])
	}
}

func TestRefuseStep(t *testing.T) {
	e := &Engine{}
	if err := e.RefuseStep(true, 1); !errors.Is(err, translate.ErrNotSupported) || !strings.Contains(err.Error(), "batch session") {
		t.Errorf("a step in a batch job: %v", err)
	}
	if err := e.RefuseStep(false, 2); !errors.Is(err, translate.ErrNotSupported) {
		t.Errorf("a two-node step: %v", err)
	}
	if err := e.RefuseStep(false, 1); err != nil {
		t.Errorf("a one-node step in an allocation: %v", err)
	}
}
