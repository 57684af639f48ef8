package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sbatch --container=BUNDLE on the embedded engine: the script runs in
// the OCI bundle (here: one whose root is the Debian trixie root the
// tools install, so /etc/debian_version tells where it ran) as the
// submitting user, in the working directory, with the job's environment
// and output file; a path that is no bundle is refused at submission.
func TestBatchContainer(t *testing.T) {
	if _, err := exec.LookPath("crun"); err != nil {
		t.Skip("crun not installed (make setup installs it)")
	}
	root := "/opt/slurm-roots/trixie"
	want, err := os.ReadFile(filepath.Join(root, "etc/debian_version"))
	if err != nil {
		t.Skipf("no trixie root: %v", err)
	}
	onOurs(t, func(t *testing.T, s *bside) {
		bundle := filepath.Join(s.dir, "bundle")
		os.Mkdir(bundle, 0o755)
		spec := exec.Command("crun", "spec", "--rootless") // a bundle for rootless runtimes, as Slurm requires
		spec.Dir = bundle
		if out, err := spec.CombinedOutput(); err != nil {
			t.Fatalf("crun spec: %v %s", err, out)
		}
		var cfg map[string]any
		b, _ := os.ReadFile(filepath.Join(bundle, "config.json"))
		json.Unmarshal(b, &cfg)
		cfg["root"] = map[string]any{"path": root, "readonly": true}
		b, _ = json.Marshal(cfg)
		os.WriteFile(filepath.Join(bundle, "config.json"), b, 0o644)

		for _, user := range []string{"root", "slurm"} {
			r := s.as(user)
			id := s.sbatchAs(t, r, "--container="+bundle, "-o", "c-%j.out", "--wrap",
				"cat /etc/debian_version; id -u; pwd; echo $SLURM_JOB_ID; touch made-$SLURM_JOB_ID")
			// Generous: on a loaded machine a container's start and exit
			// have taken 80 s (crun waiting; the listing on failure says
			// on what).
			if st, reason := s.waitDone(t, id, 150*time.Second); st != "COMPLETED" {
				out, _ := os.ReadFile(filepath.Join(s.dir, "c-"+id+".out"))
				t.Fatalf("%s: container job %s as %s: %s %s\n%s\n%s", s.name, id, user, st, reason, out, s.logTail())
			}
			// Inside, the bundle's user: uid 0 of a rootless bundle's user
			// namespace, as under slurmstepd; on the host, the job's user.
			out, _ := os.ReadFile(filepath.Join(s.dir, "c-"+id+".out"))
			if w := string(want) + "0\n" + s.dir + "\n" + id + "\n"; string(out) != w {
				t.Errorf("%s: container job %s as %s printed %q, want %q", s.name, id, user, out, w)
			}
			uid := map[string]uint32{"root": 0, "slurm": 64030}[user]
			if fi, err := os.Stat(filepath.Join(s.dir, "made-"+id)); err != nil {
				t.Errorf("%s: container job %s as %s: %v", s.name, id, user, err)
			} else if owner := fi.Sys().(*syscall.Stat_t).Uid; owner != uid {
				t.Errorf("%s: a file container job %s made as %s belongs to uid %d on the host, want %d", s.name, id, user, owner, uid)
			}
			if kv := s.showJob(t, id); kv["Container"] != bundle {
				t.Errorf("%s: scontrol show job %s: Container=%q, want %q", s.name, id, kv["Container"], bundle)
			}
		}
		// scancel ends a job in its container, processes included.
		marker := "3" + id3(s.rel) + "1"
		id := s.sbatch(t, "--container="+bundle, "-o", "/dev/null", "--wrap", "sleep "+marker)
		s.mustReach(t, id, "RUNNING", "", 30*time.Second)
		if out, errs, code := s.r.run(s.rel, "scancel", id); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel %s: exit %d, stdout %q, stderr %q", s.name, id, code, out, errs)
		}
		if st, _ := s.waitDone(t, id, 30*time.Second); st != "CANCELLED" {
			t.Errorf("%s: container job %s after scancel: %s", s.name, id, st)
		}
		if left := procsGone(5*time.Second, "sleep", marker); len(left) > 0 {
			t.Errorf("%s: container job %s cancelled, but 'sleep %s' is still there (pids %v)", s.name, id, marker, left)
		}

		_, errs, code := s.r.run(s.rel, "sbatch", "--container="+s.dir, "--wrap", "true")
		if code != 1 || !strings.Contains(errs, "is not an OCI bundle (no config.json)") {
			t.Errorf("%s: sbatch --container=%s (no bundle): exit %d, stderr %q", s.name, s.dir, code, errs)
		}
	})
}

// id3 makes a per-release number for process markers.
func id3(rel string) string { return strings.ReplaceAll(rel, ".", "") }
