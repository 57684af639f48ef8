package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// realAcctCluster is one node n1 (4 CPUs) in partition batch: the
// cluster of tools/real-accounting.sh, for the frontend too.
const realAcctCluster = "ClusterName=acctdiff\nNodeName=n1 CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES MaxTime=INFINITE\n"

// sacctMask makes two clusters' sacct outputs comparable: job ids become
// J1, J2, ... in order of appearance, times and elapsed times placeholders,
// and runs of blanks one (ids of other lengths pad columns otherwise).
func sacctMask(out string) string {
	ids := map[string]string{}
	out = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`).ReplaceAllString(out, "TIME")
	out = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`).ReplaceAllString(out, "ELAPSED")
	out = regexp.MustCompile(`(?m)^(\d+)`).ReplaceAllStringFunc(out, func(id string) string {
		if m, ok := ids[id]; ok {
			return m
		}
		ids[id] = "J" + strconv.Itoa(len(ids)+1)
		return ids[id]
	})
	return regexp.MustCompile(` +`).ReplaceAllString(out, " ")
}

// The same workload on a real slurmctld + slurmd + slurmdbd with MariaDB of
// each release and on the frontend, each seen through that release's
// clients: sacct's outputs match after masking ids and times.
func TestSacctAgainstSlurmdbd(t *testing.T) {
	needClients(t)
	f := newFrontend(t, realAcctCluster)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) { sacctAgainstSlurmdbd(t, f, rel) })
	}
}

// startRealAccounting starts tools/real-accounting.sh's cluster (acctdiff)
// of release rel in a new work dir, stopped when the test ends (even after
// a start that failed half-way: by the pids it wrote); it returns the dir
// (its slurm.conf is the clients') and the base port.
func startRealAccounting(t *testing.T, rel, prefix string) (string, int) {
	t.Helper()
	return startRealCluster(t, rel, prefix, nil)
}

// startRealCluster is startRealAccounting with tools/real-accounting.sh's
// options in env (REAL_ACCOUNTING=none, REAL_PRIORITY=multifactor,
// REAL_CONF_EXTRA=...).
func startRealCluster(t *testing.T, rel, prefix string, env []string) (string, int) {
	t.Helper()
	root := map[string]string{"22.05": "/", "24.11": "/opt/slurm-roots/trixie", "26.05": "/opt/slurm-roots/sid"}[rel] // tools/lib.sh
	if _, err := os.Stat(filepath.Join(root, "usr/sbin/slurmdbd")); err != nil {
		t.Fatalf("no slurmdbd for %s in %s: run tools/install.sh", rel, root)
	}
	dir := workDir(t, prefix)
	os.Chmod(dir, 0o777)
	port := freePort(t) // its block holds slurmctld, slurmd and slurmdbd
	tool := filepath.Join(repoRoot(t), "tools/real-accounting.sh")
	t.Cleanup(func() { exec.Command("bash", tool, "stop", dir).Run() })
	cmd := exec.Command("bash", tool, "start", rel, dir, strconv.Itoa(port), "acctdiff")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("real accounting cluster %s: %v\n%s", rel, err, out)
	}
	return dir, port
}

func sacctAgainstSlurmdbd(t *testing.T, f *frontend, rel string) {
	dir, _ := startRealAccounting(t, rel, "real-acct-")
	real := runner{t: t, conf: filepath.Join(dir, "slurm.conf"), dir: filepath.Join(dir, "w")}.user("slurm")
	os.MkdirAll(real.dir, 0o777)
	os.Chmod(real.dir, 0o777)
	_, ours := slurmDir(t, f, "acct-diff-")

	// The window starts at the next second: the frontend's jobs of an
	// earlier release's run ended before it.
	start := time.Now().Add(time.Second).Truncate(time.Second)
	time.Sleep(time.Until(start))
	t0 := start.Format("2006-01-02T15:04:05")
	workload := func(r runner) {
		id := func(out string) string { return regexp.MustCompile(`\d+`).FindString(out) }
		r.mustRun(rel, "sbatch", "-J", "okjob", "-o", "/dev/null", "--wrap", "true")
		r.mustRun(rel, "sbatch", "-J", "failjob", "-o", "/dev/null", "--wrap", "exit 3")
		held := id(r.mustRun(rel, "sbatch", "--hold", "-J", "heldjob", "-o", "/dev/null", "--wrap", "true"))
		// sacct orders by submit second, then by array job id (0 for
		// a job that is no array): the array goes in a second of its
		// own, so both clusters order alike.
		time.Sleep(1100 * time.Millisecond)
		r.mustRun(rel, "sbatch", "-J", "arrjob", "-o", "/dev/null", "--array=1-3", "--wrap", "exit $SLURM_ARRAY_TASK_ID")
		time.Sleep(1100 * time.Millisecond)
		r.mustRun(rel, "scancel", held)
		r.mustRun(rel, "srun", "-J", "stepjob", "-n", "2", "true")
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if out, _, code := r.run(rel, "squeue", "-h"); code == 0 && out == "" {
				return
			}
		}
		t.Fatalf("the workload did not finish")
	}
	workload(real)
	workload(ours)
	// The accounting records reach slurmdbd a moment after the end.
	time.Sleep(2 * time.Second)

	window := []string{"-S", t0, "-E", "now"}
	for _, q := range [][]string{
		{"-o", "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,Elapsed,Start,End"},
		{"--parsable2", "-n", "-X"},
		{"-s", "F,CD,CA", "-X"},
		{"-s", "CA", "-X", "-o", "JobID,JobName,State%20,ExitCode"},
		{"--name", "failjob,arrjob"},
		{"-X", "-o", "JobID,JobName,NNodes,NCPUS,ReqCPUS,Timelimit,State,ExitCode,DerivedExitCode"},
	} {
		args := append(append([]string{"sacct"}, q...), window...)
		want, got := sacctMask(real.mustRun(rel, args...)), sacctMask(ours.mustRun(rel, args...))
		if got != want {
			t.Errorf("sacct %s:\nours\n%s\nslurmdbd %s\n%s", strings.Join(q, " "), got, rel, want)
		}
	}
	// -j of an array and of the job with a step (their ids differ).
	for _, name := range []string{"arrjob", "stepjob"} {
		idOf := func(r runner) string {
			out := r.mustRun(rel, append([]string{"sacct", "-X", "-n", "--parsable2", "-o", "JobID", "--name", name}, window...)...)
			return strings.SplitN(strings.SplitN(out, "\n", 2)[0], "_", 2)[0]
		}
		q := []string{"-o", "JobID,JobName,NTasks,AllocCPUS,State,ExitCode"}
		want := sacctMask(real.mustRun(rel, append([]string{"sacct", "-j", idOf(real)}, q...)...))
		got := sacctMask(ours.mustRun(rel, append([]string{"sacct", "-j", idOf(ours)}, q...)...))
		if got != want {
			t.Errorf("sacct -j <%s>:\nours\n%s\nslurmdbd %s\n%s", name, got, rel, want)
		}
	}
}
