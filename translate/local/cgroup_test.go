package local

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The cgroup v2 plan against a directory laid out like a delegated v2
// subtree. This host mounts only cgroup v1 (memory and cpu are bound to
// v1 hierarchies, so a cgroup2 mount here cannot have them), so the
// kernel's enforcement on v2 is not exercised: this checks the files and
// values the engine writes and reads, the part that differs from v1
// (which TestMemoryLimitOOM and TestCPULimit exercise for real).
func TestCgroupV2Files(t *testing.T) {
	root := t.TempDir()
	home, base := filepath.Join(root, "server"), filepath.Join(root, "slurm-frontend.jobs")
	for _, d := range []string{home, base} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := cgroupSetup{Version: 2, Base: []string{base}, Home: []string{home}, Ctrl: []string{""}}
	p := s.plan("job-7", 3<<30, 1.5)
	if err := p.create(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "job-7")
	for file, want := range map[string]string{"memory.max": "3221225472", "cpu.max": "150000 100000"} {
		if b, err := os.ReadFile(filepath.Join(dir, file)); err != nil || string(b) != want {
			t.Errorf("%s: %q (%v), want %q", file, b, err, want)
		}
	}
	if n := p.oomKills(); n != 0 {
		t.Errorf("oomKills without memory.events: %d", n)
	}
	events := "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n"
	if err := os.WriteFile(filepath.Join(dir, "memory.events"), []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := p.oomKills(); n != 2 {
		t.Errorf("oomKills with memory.events %q: %d, want 2", events, n)
	}
	// No memory or CPU limit asked: nothing written.
	q := s.plan("job-8", 0, 0)
	if err := q.create(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(base, "job-8")); len(ents) != 0 {
		t.Errorf("a plan without limits wrote %d files", len(ents))
	}
}

// start puts the child in the job's cgroups (on this host's hierarchy,
// v1 or v2) and leaves the caller where it was.
func TestCgroupStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	s := probeCgroups()
	if s.Version == 0 {
		t.Skipf("no usable cgroups: %s", s.Why)
	}
	name := fmt.Sprintf("test_start_%d", os.Getpid())
	p := s.plan(name, 1<<30, 1)
	if err := p.create(); err != nil {
		t.Fatal(err)
	}
	defer p.remove()
	runtime.LockOSThread() // the thread start moves is this one
	defer runtime.UnlockOSThread()
	before, _ := os.ReadFile("/proc/thread-self/cgroup")
	var out bytes.Buffer
	cmd, cgErr, err, _ := p.start(func() *exec.Cmd {
		c := exec.Command("cat", "/proc/self/cgroup")
		c.Stdout = &out
		return c
	})
	if err != nil || cgErr != nil {
		t.Fatalf("start: %v, cgroups: %v", err, cgErr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && (s.Version == 2 || strings.Contains(f[1], "memory") || f[1] == "cpu,cpuacct" || f[1] == "cpu") &&
			!strings.HasSuffix(f[2], "/"+name) {
			t.Errorf("child's cgroup %q: not the job's %s", line, name)
		}
	}
	if after, _ := os.ReadFile("/proc/thread-self/cgroup"); !bytes.Equal(before, after) {
		t.Errorf("the caller's cgroups changed:\n%s\nto\n%s", before, after)
	}
}
