package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate/backendai/double"
)

// baiDouble is the Backend.AI manager double in this process, in run
// mode: batch commands really run (through the binary's shim), as each
// user's container uid. Its knobs (outages, ...) are the test's.
type baiDouble struct {
	*double.Double
	url, keypair string
	keys         map[string]string // username → the user's access key
}

// startDouble starts a double with two agents in resource group
// "default" and the users root (uid 0) and slurm (64030).
func startDouble(t *testing.T, dir string, mut func(*double.Double)) *baiDouble {
	t.Helper()
	dlog := &lockedBuffer{}
	var d *double.Double
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the double's log:\n%s", lastLines(dlog.String(), 80))
			if d != nil {
				for _, s := range d.Sessions() {
					info := ""
					if s.StatusInfo != nil {
						info = *s.StatusInfo
					}
					t.Logf("double session %s %s %s (%s) result %s rg %s history %v", s.ID, s.Name, s.Status, info, s.Result, s.ResourceGroup, s.History)
				}
			}
		}
	})
	var err error
	d, err = double.New(double.Options{Mode: double.ModeRun, Cycle: 100 * time.Millisecond, LongCycle: time.Second,
		KillGrace: time.Second, ShimCommand: []string{buildBinary(t), "shim"},
		Logger: log.New(dlog, "double: ", log.Lmicroseconds)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	keys := map[string]string{}
	for _, u := range []struct {
		name string
		uid  int
	}{{"root", 0}, {"slurm", 64030}} {
		uid := u.uid
		if _, err := d.AddUser(double.User{Username: u.name, Email: u.name + "@example.com", Projects: []string{"default"},
			ContainerUID: &uid, ContainerMainGID: &uid}); err != nil {
			t.Fatal(err)
		}
		kp, err := d.AddKeyPair(double.KeyPair{UserEmail: u.name + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		keys[u.name] = kp.AccessKey
	}
	if err := d.AddAgents([]double.Agent{{ID: "i-agent0000", Slots: map[string]string{"cpu": "4", "mem": "8g"}},
		{ID: "i-agent0001", Slots: map[string]string{"cpu": "4", "mem": "8g"}}}); err != nil {
		t.Fatal(err)
	}
	if mut != nil {
		mut(d)
	}
	ak, sk := d.AdminKeys()
	kp := filepath.Join(dir, "backendai.keypair")
	if err := os.WriteFile(kp, []byte(ak+"\n"+sk+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &baiDouble{Double: d, url: d.URL(), keypair: kp, keys: keys}
}

// baiFrontend starts a double (mut seeds it further) and a frontend on
// it with extra config lines.
func baiFrontend(t *testing.T, mut func(*double.Double), extra string) (*baiDouble, *frontend) {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end")
	}
	needClients(t)
	d := startDouble(t, workDir(t, "bai-"), mut)
	return d, newFrontend(t, d.conf(extra))
}

// slurmDir is a work directory of user slurm (64030) and a runner of
// clients as slurm in it.
func slurmDir(t *testing.T, f *frontend, prefix string) (string, runner) {
	t.Helper()
	dir := workDir(t, prefix)
	os.Chown(dir, 64030, 64030)
	return dir, f.as(t).in(dir).user("slurm")
}

// baiConf is a frontend config on the double.
func (d *baiDouble) conf(extra string) string {
	return fmt.Sprintf("ClusterName=baicluster\nFrontendBackend=backendai\nFrontendBackendAIEndpoint=%s\nFrontendBackendAIKeypair=%s\nFrontendImage=python\n%s",
		d.url, d.keypair, extra)
}

// lockedBuffer collects a log written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var exitCodeRe = regexp.MustCompile(`\bExitCode=(\d+:\d+)`)

// Stock sbatch, squeue, scontrol, scancel and sinfo of every release
// against the frontend on a Backend.AI manager (the double, running the
// jobs for real): nodes are the agents, jobs are sessions owned by their
// users, exit codes and outputs are the script's, a cancel ends the
// session, and what Backend.AI cannot do is refused at submission.
func TestBackendAIEngine(t *testing.T) {
	_, f := baiFrontend(t, nil, "")
	if !strings.Contains(f.Logs(), "engine backend.ai") {
		t.Fatalf("the server is not on the Backend.AI engine:\n%s", f.Logs())
	}
	r := f.as(t)
	// The nodes are the manager's agents, the partition its resource group.
	out := r.mustRun("24.11", "sinfo", "-h", "-N", "-o", "%N %P %c %m")
	if out != "i-agent0000 default* 4 8192\ni-agent0001 default* 4 8192\n" {
		t.Errorf("sinfo on Backend.AI: %q", out)
	}
	for i, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "bai-job-")
			outFile := filepath.Join(dir, "out-%j")
			sub := ru.mustRun(rel, "sbatch", "-o", outFile, "--mem=2G", "--wrap",
				fmt.Sprintf("echo job $SLURM_JOB_ID as $(id -u) in $PWD; echo to stderr >&2; exit %d", 3+i))
			m := submittedRe.FindStringSubmatch(sub)
			if m == nil {
				t.Fatalf("sbatch: %q", sub)
			}
			id := atoi(m[1])
			rows := waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "FAILED" })
			if rows[id].reason != "NonZeroExitCode" {
				t.Errorf("job %d: reason %q", id, rows[id].reason)
			}
			show := r.mustRun(rel, "scontrol", "show", "job", fmt.Sprint(id))
			if m := exitCodeRe.FindStringSubmatch(show); m == nil || m[1] != fmt.Sprintf("%d:0", 3+i) {
				t.Errorf("scontrol show job %d: exit code %v, want %d:0", id, m, 3+i)
			}
			path := filepath.Join(dir, fmt.Sprintf("out-%d", id))
			b, err := os.ReadFile(path)
			if want := fmt.Sprintf("job %d as 64030 in %s\nto stderr\n", id, dir); err != nil || string(b) != want {
				t.Errorf("output %q (%v), want %q", b, err, want)
			}
			var st syscall.Stat_t
			if syscall.Stat(path, &st) == nil && st.Uid != 64030 {
				t.Errorf("the output belongs to uid %d, want the job's 64030", st.Uid)
			}

			// A running job cancelled.
			sub = ru.mustRun(rel, "sbatch", "-o", "/dev/null", "--mem=2G", "--wrap", "sleep 300")
			long := atoi(submittedRe.FindStringSubmatch(sub)[1])
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[long].state == "RUNNING" })
			ru.mustRun(rel, "scancel", fmt.Sprint(long))
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[long].state == "CANCELLED" })

			// What Backend.AI cannot do: refused up front.
			_, errs, code := ru.run(rel, "sbatch", "--exclusive", "-o", "/dev/null", "--wrap", "true")
			if code == 0 || !strings.Contains(errs, "not supported") {
				t.Errorf("sbatch --exclusive on Backend.AI: exit %d %q, want a refusal", code, errs)
			}
		})
	}
	// A script a signal ended shows the signal (0:N), not the shell's
	// 128+N; a script that exits 138 shows 138:0.
	dir0, ru0 := slurmDir(t, f, "bai-signal-")
	for _, c := range []struct{ wrap, want, state string }{
		{"kill -USR1 $$", "0:10", "FAILED"},
		{"exit 138", "138:0", "FAILED"},
	} {
		sub := ru0.mustRun("24.11", "sbatch", "-o", "/dev/null", "--mem=2G", "--wrap", c.wrap)
		id := atoi(submittedRe.FindStringSubmatch(sub)[1])
		waitRows(t, f, dir0, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == c.state })
		show := r.mustRun("24.11", "scontrol", "show", "job", fmt.Sprint(id))
		if m := exitCodeRe.FindStringSubmatch(show); m == nil || m[1] != c.want {
			t.Errorf("job %d (%s): exit code %v, want %s", id, c.wrap, m, c.want)
		}
	}
	// A user Backend.AI does not know is refused at submission, not run
	// as someone else.
	dir := workDir(t, "bai-nobody-")
	rn := f.as(t).in(dir).user("nobody")
	_, errs, code := rn.run("24.11", "sbatch", "-o", "/dev/null", "--mem=2G", "--wrap", "true")
	if code == 0 || !strings.Contains(errs, "Invalid user id") {
		t.Errorf("sbatch by a user Backend.AI does not know: exit %d %q", code, errs)
	}
	t.Logf("RESULT backend.ai engine: 3 releases, exit codes, outputs as the job's uid, cancel, --exclusive refused; unknown user: %s", strings.TrimSpace(errs))
}
