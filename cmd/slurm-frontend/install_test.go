package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make install into a DESTDIR: the server, its shim, a data dir only root
// can enter, and a systemd unit that systemd accepts, keeping running jobs
// through a restart (KillMode=process).
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dest := t.TempDir()
	cmd := exec.Command("make", "install", "DESTDIR="+dest)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for path, mode := range map[string]os.FileMode{
		"usr/local/sbin/slurm-frontend":                0o755,
		"usr/local/sbin/slurm-frontend-shim":           0o755,
		"etc/systemd/system/slurm-frontend.service":    0o644,
		"usr/local/share/doc/slurm-frontend/README.md": 0o644,
		"var/lib/slurm-frontend":                       0o700 | os.ModeDir,
		"etc/slurm-frontend":                           0o755 | os.ModeDir,
	} {
		fi, err := os.Stat(filepath.Join(dest, path))
		if err != nil {
			t.Errorf("%s: %v", path, err)
		} else if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), mode)
		}
	}
	unit, err := os.ReadFile(filepath.Join(dest, "etc/systemd/system/slurm-frontend.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ExecStart=/usr/local/sbin/slurm-frontend serve --config /etc/slurm-frontend/slurm.conf\n",
		"KillMode=process\n", "Delegate=yes\n", "WantedBy=multi-user.target\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(string(unit), "@") {
		t.Errorf("unit has an unexpanded placeholder:\n%s", unit)
	}
	// systemd's own check, on a copy whose ExecStart is the installed
	// binary (verify wants it to exist).
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		cp := filepath.Join(t.TempDir(), "slurm-frontend.service")
		os.WriteFile(cp, []byte(strings.ReplaceAll(string(unit), "/usr/local/sbin/", filepath.Join(dest, "usr/local/sbin")+"/")), 0o644)
		if out, err := exec.Command("systemd-analyze", "verify", cp).CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	}
}
