package local

import (
	"os"
	"path/filepath"
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
	if err := p.enter(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs")); string(b) != "0" {
		t.Errorf("enter wrote %q to cgroup.procs, want \"0\" (the calling process)", b)
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
