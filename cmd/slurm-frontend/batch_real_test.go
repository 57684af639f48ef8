package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBatchReal runs the batch scenarios of batch_test.go against a REAL
// slurmctld + slurmd (node n1) of each release, to check that what they
// expect is what real Slurm does. It is not part of the normal run (it
// takes ~2 minutes and needs the real daemons): set
// SLURM_FRONTEND_BATCH_REAL=1.
//
// The real cluster is the reference cluster with KillWait=3 (as ours) and
// DefMemPerNode=100: without a default, CR_Core_Memory gives a job with
// no --mem the whole node's memory, and jobs on n1 (the only node with a
// slurmd) would run one at a time.
func TestBatchReal(t *testing.T) {
	if os.Getenv("SLURM_FRONTEND_BATCH_REAL") == "" {
		t.Skip("set SLURM_FRONTEND_BATCH_REAL=1 to run the batch scenarios against real Slurm")
	}
	scenarios := []struct {
		name string
		fn   func(*testing.T, *bside)
		// alone: the scenario needs the real cluster to itself, so it
		// runs on its own, before the others (which run in parallel):
		//   - script lists `squeue -t all`, every job of the cluster:
		//     the other scenarios' jobs cancelled while pending have an
		//     empty NODELIST(REASON) (a row of 7 fields under 8 headers),
		//     and real squeue keeps listing them for MinJobAge (300 s).
		//   - memplacement's --mem=0 jobs take all of n1's memory, and n1
		//     (the only node with a slurmd) runs every job of the real
		//     cluster. In parallel with the others, its first job waits
		//     (Resources) for theirs, e.g. timelimit's, which runs 60-90 s;
		//     its second one gets reason "Nodes required for job are DOWN,
		//     DRAINED or reserved for jobs in higher priority partitions"
		//     instead of Resources when a higher-priority job of partition
		//     cpu is waiting for n1 (the scheduler then keeps n1 from
		//     lower-priority jobs of partition debug); and while its jobs
		//     hold n1, the other scenarios' jobs do not start.
		alone bool
	}{
		{name: "script", fn: batchScript, alone: true}, {name: "wait", fn: batchWait}, {name: "array", fn: batchArray},
		{name: "dependency", fn: batchDependency}, {name: "beginhold", fn: batchBeginHold}, {name: "cancel", fn: batchCancel},
		{name: "timelimit", fn: func(t *testing.T, s *bside) { batchTimeLimit(t, s)(t) }},
		{name: "memplacement", fn: func(t *testing.T, s *bside) { batchMemoryPlacement(t, s, "--mem=0") }, alone: true},
		{name: "rlimits", fn: batchRlimits}, {name: "scancelfilters", fn: batchScancelFilters}, {name: "scancelkill", fn: batchScancelKill}, {name: "submitopts", fn: batchSubmitOptions},
		{name: "scancelctld", fn: batchScancelCtld}, {name: "permissions", fn: batchPermissionsRunning},
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			rs := startRealSlurm(t, rel)
			run := func(t *testing.T, fn func(*testing.T, *bside)) {
				dir := workDir(t, "rbatch-")
				s := &bside{name: "real slurmctld " + rel, rel: rel, r: rs.as(t).in(dir), dir: dir, real: true, logs: rs.Logs}
				// A scenario that fails half-way leaves its jobs behind
				// (memplacement's sleep 300 holds all of n1's memory): cancel
				// them, so that the failure does not spread to the scenarios
				// that run after it.
				t.Cleanup(func() { s.cancelMine(t) })
				fn(t, s)
			}
			// The scenarios that need the cluster to themselves, one after
			// the other (script first: nothing else has run yet); then the
			// others in parallel (a t.Parallel subtest starts when this
			// function has returned).
			for _, sc := range scenarios {
				if sc.alone {
					t.Run(sc.name, func(t *testing.T) { run(t, sc.fn) })
				}
			}
			for _, sc := range scenarios {
				if !sc.alone {
					t.Run(sc.name, func(t *testing.T) {
						t.Parallel()
						run(t, sc.fn)
					})
				}
			}
		})
	}
}

// realSlurm is a real slurmctld plus a real slurmd for node n1.
type realSlurm struct {
	rel, dir, conf string
	port           int
}

func (r *realSlurm) Logs() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "slurmctld.log"))
	return string(b)
}

func (r *realSlurm) as(t testing.TB) runner {
	return runner{t: t, conf: r.conf, dir: r.dir, logs: r.Logs}
}

func startRealSlurm(t *testing.T, rel string) *realSlurm { return startRealSlurmWith(t, rel, nil) }

// startRealSlurmWith is startRealSlurm with its slurm.conf rewritten by
// edit (nil: as is) before the daemons start.
func startRealSlurmWith(t *testing.T, rel string, edit func(conf string) string) *realSlurm {
	t.Helper()
	needRealCtld(t)
	root := map[string]string{"22.05": "/", "24.11": "/opt/slurm-roots/trixie", "26.05": "/opt/slurm-roots/sid"}[rel]
	if _, err := os.Stat(filepath.Join(root, "usr/sbin/slurmd")); err != nil {
		t.Skipf("no slurmd %s: %v", rel, err)
	}
	dir, err := os.MkdirTemp(sharedDir, "realbatch-"+rel+"-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o1777)
	// SlurmctldPort and SlurmdPort (= port+1), below the kernel's
	// ephemeral range (as startRealCtld: busy tests churn through it and
	// slurmctld's bind of 0.0.0.0:port then fails).
	port := portPair(t)
	rs := &realSlurm{rel: rel, dir: dir, port: port, conf: filepath.Join(dir, "slurm.conf")}
	tool := filepath.Join(repoRoot(t), "tools/real-slurmctld.sh")
	var slurmd *exec.Cmd
	slurmdDone := make(chan struct{})
	t.Cleanup(func() {
		for _, u := range []string{"root", "slurm"} {
			runClient(t, rel, rs.conf, dir, nil, "scancel", "-u", u)
		}
		time.Sleep(2 * time.Second)
		if slurmd != nil {
			slurmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-slurmdDone:
			case <-time.After(10 * time.Second):
				slurmd.Process.Kill()
				<-slurmdDone
			}
		}
		if out, err := exec.Command("bash", tool, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping real slurmctld %s: %v\n%s", rel, err, out)
		}
		if !t.Failed() || os.Getenv("SLURM_FRONTEND_KEEP") == "" {
			os.RemoveAll(dir)
		}
	})
	if out, err := exec.Command("bash", tool, "conf", dir, fmt.Sprint(port), "refcluster").CombinedOutput(); err != nil {
		t.Fatalf("real-slurmctld.sh conf: %v\n%s", err, out)
	}
	cf, err := os.OpenFile(rs.conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(cf, "KillWait=3\nDefMemPerNode=100\n")
	cf.Close()
	if edit != nil {
		b, err := os.ReadFile(rs.conf)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rs.conf, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if rel == "22.05" {
		// 22.05's slurmd does not know CgroupPlugin=disabled and needs no cgroup.conf.
		os.Remove(filepath.Join(dir, "cgroup.conf"))
	}
	os.MkdirAll(filepath.Join(dir, "spool", "slurmd.n1"), 0o755)
	if out, err := exec.Command("bash", tool, "start", rel, dir, fmt.Sprint(port)).CombinedOutput(); err != nil {
		t.Fatalf("real-slurmctld.sh start: %v\n%s", err, out)
	}
	daemon := []string{"env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
		"/usr/sbin/slurmd", "-D", "-N", "n1", "-f", rs.conf}
	if root == "/" {
		// As real-slurmctld.sh does for slurmctld: host name lookups from files only.
		slurmd = exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c",
			`mount --bind "$0" /etc/nsswitch.conf && exec "$@"`, filepath.Join(dir, "nsswitch.conf")}, daemon...)...)
	} else {
		slurmd = exec.Command("chroot", append([]string{root}, daemon...)...)
	}
	logf, err := os.Create(filepath.Join(dir, "slurmd.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	slurmd.Stdout, slurmd.Stderr = logf, logf
	slurmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := slurmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { slurmd.Wait(); logf.Close(); close(slurmdDone) }()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		out, _, _ := runClient(t, rel, rs.conf, dir, nil, "sinfo", "-h", "-N", "-n", "n1", "-p", "cpu", "-o", "%t")
		if strings.TrimSpace(out) == "idle" {
			break
		}
		if time.Now().After(end) {
			b, _ := os.ReadFile(filepath.Join(dir, "slurmd.stdout"))
			t.Fatalf("real slurmd %s: n1 is %q after 30 s\n%s", rel, out, b)
		}
	}
	return rs
}
