package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The server runs as root and acts on paths and programs users choose.
// These tests play a hostile user (the unprivileged "slurm" account) with
// the stock clients and check that nothing is done with root's identity
// that the user could steer: every file written and program run for a
// job is done as the job's user. Each of them failed before its fix.

// hostileUser is the unprivileged account the tests act as.
const hostileUser = "slurm"

func hostileIDs(t *testing.T) (int, int) {
	t.Helper()
	u, err := user.Lookup(hostileUser)
	if err != nil {
		t.Skipf("no user %s: %v", hostileUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

// rootVictim makes a file only root may write, with known content.
func rootVictim(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	p := filepath.Join(dir, name)
	const content = "root's file, not to be touched\n"
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chown(p, 0, 0)
	return p, content
}

// userDir makes a directory owned by the hostile user.
func userDir(t *testing.T, parent, name string, uid, gid int) string {
	t.Helper()
	d := filepath.Join(parent, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(d, uid, gid)
	return d
}

var cancelLine = regexp.MustCompile(`(?m)^slurmstepd-n\d+: error: \*\*\* JOB \d+ ON n\d+ CANCELLED AT \S+ \*\*\*$`)

// A running job's error file is a link the user re-points at a file of
// root's before scancel: slurmstepd writes its "CANCELLED AT" line
// through the file it opened as the user when the job started, so root's
// file stays as it was and the user's file gets the line once. (The
// controller used to append the line itself, as root, to the path the
// link then named.) The same with a relative -e, which the job resolves
// against its own directory.
func TestSecurityCancelNoteFollowsNoLink(t *testing.T) {
	uid, gid := hostileIDs(t)
	onOurs(t, func(t *testing.T, s *bside) {
		u := s.as(hostileUser)
		d := userDir(t, s.dir, "mine", uid, gid)
		victim, content := rootVictim(t, s.dir, "victim")
		mine := filepath.Join(d, "mine.err")
		link := filepath.Join(d, "err-link")
		if err := os.Symlink(mine, link); err != nil {
			t.Fatal(err)
		}
		os.Lchown(link, uid, gid)
		marker := "4" + id3(s.rel) + "7"
		abs := s.sbatchAs(t, u, "-o", "/dev/null", "-e", link, "--wrap", "sleep "+marker)
		rel := s.sbatchAs(t, u, "-D", d, "-o", "/dev/null", "-e", "rel.err", "--wrap", "sleep "+marker+"1")
		s.mustReach(t, abs, "RUNNING", "", 20*time.Second)
		s.mustReach(t, rel, "RUNNING", "", 20*time.Second)
		// Running: the streams are open. The user re-points the link.
		os.Remove(link)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		os.Lchown(link, uid, gid)
		if out, errs, code := u.run(s.rel, "scancel", abs, rel); code != 0 || out != "" || errs != "" {
			t.Fatalf("%s: scancel %s %s: exit %d, stdout %q, stderr %q", s.name, abs, rel, code, out, errs)
		}
		for _, id := range []string{abs, rel} {
			if st, _ := s.waitDone(t, id, 20*time.Second); st != "CANCELLED" {
				t.Errorf("%s: job %s after scancel: %s", s.name, id, st)
			}
		}
		if b, _ := os.ReadFile(victim); string(b) != content {
			t.Errorf("%s: root's file, which the job's error link named at scancel, was written: %q", s.name, b)
		}
		for _, f := range []string{mine, filepath.Join(d, "rel.err")} {
			out, _ := waitFile(f, "CANCELLED AT", 10*time.Second)
			if n := len(cancelLine.FindAllString(out, -1)); n != 1 {
				t.Errorf("%s: %s has %d slurmstepd cancel lines, want 1 (as slurmstepd writes):\n%s", s.name, f, n, out)
			}
		}
	})
}

// sbatch --container with a hostile bundle: its config.json asks for a
// hook run on the host, every capability (ambient too) and a bind mount
// of the host's /etc. slurmstepd runs the OCI runtime as the user,
// rootless, and so must we: the hook runs as the user, and the
// capabilities are the user namespace's, which open nothing of the
// host's. A bundle whose config.json is a link into a directory only
// root may enter is refused at submission, as the user cannot read it.
func TestSecurityContainerRunsAsUser(t *testing.T) {
	if _, err := exec.LookPath("crun"); err != nil {
		t.Skip("crun not installed (make setup installs it)")
	}
	root := "/opt/slurm-roots/trixie"
	if _, err := os.Stat(filepath.Join(root, "etc/debian_version")); err != nil {
		t.Skipf("no trixie root: %v", err)
	}
	uid, gid := hostileIDs(t)
	onOurs(t, func(t *testing.T, s *bside) {
		u := s.as(hostileUser)
		d := userDir(t, s.dir, "bundle", uid, gid)
		spec := exec.Command("crun", "spec", "--rootless")
		spec.Dir = d
		if out, err := spec.CombinedOutput(); err != nil {
			t.Fatalf("crun spec: %v %s", err, out)
		}
		var cfg map[string]any
		b, _ := os.ReadFile(filepath.Join(d, "config.json"))
		json.Unmarshal(b, &cfg)
		caps := []any{"CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_SYS_ADMIN", "CAP_SETUID", "CAP_CHOWN", "CAP_FOWNER"}
		proc := cfg["process"].(map[string]any)
		proc["capabilities"] = map[string]any{"bounding": caps, "effective": caps, "inheritable": caps, "permitted": caps, "ambient": caps}
		cfg["root"] = map[string]any{"path": root, "readonly": true}
		hookOut := filepath.Join(d, "hook-uid")
		// The hook reads the container state crun writes to its stdin
		// (an OCI hook's input): one that exits first makes crun fail
		// with EPIPE now and then.
		cfg["hooks"] = map[string]any{"createRuntime": []any{map[string]any{
			"path": "/bin/sh", "args": []any{"sh", "-c", "cat >/dev/null; id -u > " + hookOut}}}}
		cfg["mounts"] = append(cfg["mounts"].([]any), map[string]any{
			"destination": "/mnt", "type": "bind", "source": "/etc", "options": []any{"rbind", "ro"}})
		b, _ = json.Marshal(cfg)
		os.WriteFile(filepath.Join(d, "config.json"), b, 0o644)
		os.Chown(filepath.Join(d, "config.json"), uid, gid)

		out := filepath.Join(s.dir, "hostile-"+id3(s.rel)+".out")
		id := s.sbatchAs(t, u, "--container="+d, "-o", out, "--wrap",
			"if head -c1 /mnt/shadow >/dev/null 2>&1; then echo READ; else echo DENIED; fi")
		st, reason := s.waitDone(t, id, 60*time.Second)
		got, _ := os.ReadFile(out)
		if st != "COMPLETED" {
			t.Fatalf("%s: hostile container job %s: %s %s\n%s\n%s", s.name, id, st, reason, got, s.logTail())
		}
		if strings.TrimSpace(string(got)) != "DENIED" {
			t.Errorf("%s: a container job of %s read the host's /etc/shadow through its bundle's capabilities: %q", s.name, hostileUser, got)
		}
		if h, err := os.ReadFile(hookOut); err != nil {
			t.Errorf("%s: the bundle's createRuntime hook did not run: %v", s.name, err)
		} else if strings.TrimSpace(string(h)) != strconv.Itoa(uid) {
			t.Errorf("%s: the bundle's createRuntime hook ran on the host as uid %s, want %d (the job's user)", s.name, strings.TrimSpace(string(h)), uid)
		}

		// config.json linked into a directory only root may enter.
		secret := filepath.Join(s.dir, "root-only")
		os.Mkdir(secret, 0o700)
		os.WriteFile(filepath.Join(secret, "config.json"), b, 0o600)
		d2 := userDir(t, s.dir, "bundle2", uid, gid)
		os.Symlink(filepath.Join(secret, "config.json"), filepath.Join(d2, "config.json"))
		_, errs, code := u.run(s.rel, "sbatch", "--container="+d2, "--wrap", "true")
		if code != 1 || !strings.Contains(errs, "is not an OCI bundle (no config.json)") {
			t.Errorf("%s: sbatch --container=%s as %s (config.json only root may read): exit %d, stderr %q", s.name, d2, hostileUser, code, errs)
		}
	})
}

// MailProg runs with the job owner's identity: --mail-user and the job
// name are the user's words, passed to a mail program as arguments, and
// mail programs take options there (mailutils' --exec). The MailProg
// here records who ran it and with what.
func TestSecurityMailProgAsUser(t *testing.T) {
	t.Parallel()
	uid, _ := hostileIDs(t)
	dir := workDir(t, "mail-")
	log := filepath.Join(dir, "mail.log")
	prog := filepath.Join(dir, "mailprog")
	script := "#!/bin/sh\nprintf '%s|%s|%s\\n' \"$(id -u)\" \"$*\" \"$SLURM_JOB_ID\" >> " + log + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFrontend(t, batchCluster+"MailProg="+prog+"\n")
	rel := "24.11"
	r := f.as(t).in(dir).user(hostileUser)
	out := r.mustRun(rel, "sbatch", "--mail-type=END", "--mail-user=--exec=touch "+filepath.Join(dir, "pwned"), "-o", "/dev/null", "--wrap", "true")
	m := submittedRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sbatch printed %q", out)
	}
	got, ok := waitFile(log, "|", 20*time.Second)
	if !ok {
		t.Fatalf("MailProg did not run for job %s:\n%s", m[1], f.Logs())
	}
	fields := strings.Split(strings.TrimSpace(got), "|")
	if len(fields) != 3 || fields[0] != strconv.Itoa(uid) || fields[2] != m[1] {
		t.Errorf("MailProg ran as %q for job %q, want uid %d and SLURM_JOB_ID %s (line %q)", fields[0], fields[len(fields)-1], uid, m[1], got)
	}
	if !strings.Contains(got, "-s Slurm Job_id="+m[1]+" Name=wrap Ended") || !strings.HasSuffix(fields[1], "--exec=touch "+filepath.Join(dir, "pwned")) {
		t.Errorf("MailProg arguments %q, want -s SUBJECT RECIPIENT as slurmctld passes them", fields[1])
	}
}

// Strings in a job description are bounded as slurmctld bounds them
// (_test_job_desc_fields): a 1,025-byte comment or a script over 4 MiB
// is refused with ESLURM_PATHNAME_TOO_LONG, not stored.
func TestSecuritySubmitBounds(t *testing.T) {
	t.Parallel()
	f := newFrontend(t, batchCluster)
	dir := workDir(t, "bounds-")
	big := filepath.Join(dir, "big.sh")
	if err := os.WriteFile(big, []byte("#!/bin/sh\n#"+strings.Repeat("x", 4<<20)+"\ntrue\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const want = "Batch job submission failed: Pathname of a file, directory or other parameter too long"
	for _, rel := range releases {
		r := f.as(t).in(dir).user(hostileUser)
		for _, args := range [][]string{
			{"--comment=" + strings.Repeat("c", 1025), "--wrap", "true"},
			{big},
		} {
			out, errs, code := r.run(rel, append([]string{"sbatch", "-H"}, args...)...)
			if code != 1 || !strings.Contains(errs, want) {
				t.Errorf("%s sbatch %.40s...: exit %d, stdout %q, stderr %.200q; want %q", rel, strings.Join(args, " "), code, out, errs, want)
			}
		}
		// At the bound, accepted.
		out := r.mustRun(rel, "sbatch", "-H", "--comment="+strings.Repeat("c", 1024), "--wrap", "true")
		if !submittedRe.MatchString(out) {
			t.Errorf("%s: sbatch with a 1,024-byte comment: %q", rel, out)
		}
	}
	if out := f.mustRun("24.11", "squeue", "-h", "-o", "%i"); strings.Count(out, "\n") != len(releases) {
		t.Errorf("squeue after the refused submissions lists %q, want the %d accepted jobs only", out, len(releases))
	}
}
