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

// A site's history in a real slurmdbd 24.11 + MariaDB, filled by a real
// cluster's jobs, imported into the frontend: sacct shows the same jobs,
// to the byte (same ids and times: nothing masked), after a restart too;
// importing again adds nothing; new jobs continue the old ids.
func TestImportSlurmdbd(t *testing.T) {
	needClients(t)
	const rel = "24.11"
	f := newFrontend(t, realAcctCluster)
	dir, _ := startRealAccounting(t, rel, "real-import-")
	real := runner{t: t, conf: filepath.Join(dir, "slurm.conf"), dir: filepath.Join(dir, "w")}.user("slurm")
	os.MkdirAll(real.dir, 0o777)
	os.Chmod(real.dir, 0o777)
	// The site's accounts: a tree, a description, shares, a default
	// account that jobs naming none go to.
	realRoot := runner{t: t, conf: real.conf, dir: real.dir}
	realRoot.mustRun(rel, "sacctmgr", "-i", "add", "account", "physics", "Description=Physics dept", "Organization=sci")
	realRoot.mustRun(rel, "sacctmgr", "-i", "add", "account", "theory", "parent=physics", "Description=theory group", "Organization=sci")
	realRoot.mustRun(rel, "sacctmgr", "-i", "add", "user", "slurm", "account=theory", "fairshare=5")
	t0 := time.Now().Add(-time.Minute).Format("2006-01-02T15:04:05")
	id := func(out string) string { return regexp.MustCompile(`\d+`).FindString(out) }
	real.mustRun(rel, "sbatch", "-J", "okjob", "-o", "/dev/null", "--wrap", "true")
	real.mustRun(rel, "sbatch", "-J", "failjob", "-o", "/dev/null", "--mem=100M", "--wrap", "exit 3")
	held := id(real.mustRun(rel, "sbatch", "--hold", "-J", "heldjob", "-o", "/dev/null", "--wrap", "true"))
	real.mustRun(rel, "sbatch", "-J", "arrjob", "-o", "/dev/null", "--array=1-3", "--wrap", "exit $SLURM_ARRAY_TASK_ID")
	real.mustRun(rel, "scancel", held)
	real.mustRun(rel, "srun", "-J", "stepjob", "-n", "2", "true")
	// One still pending at the import: not history, left out.
	pending := id(real.mustRun(rel, "sbatch", "--hold", "-J", "stillheld", "-o", "/dev/null", "--wrap", "true"))
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out, _, code := real.run(rel, "squeue", "-h", "-t", "R,CG"); code == 0 && out == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the real cluster's jobs did not finish")
		}
	}
	time.Sleep(2 * time.Second) // the records reach slurmdbd a moment after the ends

	sock := "/opt/slurm-roots/trixie/run/mysqld/mysqld.sock" // tools/real-accounting.sh's MariaDB for 24.11
	dsn := "root@unix(" + sock + ")/slurm_acct_db"
	imp := func() string {
		t.Helper()
		out, err := exec.Command(buildBinary(t), "import-slurmdbd", "--dsn", dsn, "--config", f.configPath, "--state-dir", f.stateDir).CombinedOutput()
		if err != nil {
			t.Fatalf("import-slurmdbd: %v\n%s", err, out)
		}
		return string(out)
	}
	// Not with the server running: its store is locked.
	if out, err := exec.Command(buildBinary(t), "import-slurmdbd", "--dsn", dsn, "--config", f.configPath, "--state-dir", f.stateDir).CombinedOutput(); err == nil || !strings.Contains(string(out), "stop the server first") {
		t.Errorf("import with the server running: %v\n%s", err, out)
	}
	f.stop()
	out := imp()
	if !strings.Contains(out, "7 finished jobs read, 7 added to the history, 0 already there, 1 not finished") {
		t.Errorf("first import:\n%s", out)
	}
	if out := imp(); !strings.Contains(out, "7 finished jobs read, 0 added to the history, 7 already there") {
		t.Errorf("second import:\n%s", out)
	}
	f.start()
	ours := f.as(t).user("slurm")

	queries := [][]string{
		{},
		{"-o", "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,Elapsed,Start,End,Submit,Eligible"},
		{"--parsable2", "-n", "-X"},
		{"-s", "F,CD,CA", "-X", "-o", "JobID,JobName,State%20,ExitCode,DerivedExitCode"},
		{"--name", "failjob,arrjob", "-o", "JobID,JobName,ReqMem,ReqTRES%50,AllocTRES%50,NodeList,User,UID,WorkDir%40"},
		{"--long", "-p"},
		{"-j", held, "-o", "JobID,JobName,State,Submit,Start,End"},
	}
	check := func(when string) {
		t.Helper()
		for _, q := range queries {
			args := append(append([]string{"sacct"}, q...), "-S", t0, "-E", "now")
			if want, got := real.mustRun(rel, args...), ours.mustRun(rel, args...); got != want {
				t.Errorf("%s: sacct %s:\nours\n%s\nslurmdbd\n%s", when, strings.Join(q, " "), got, want)
			}
		}
		if got := ours.mustRun(rel, "sacct", "-n", "-X", "-j", pending, "-o", "JobID"); strings.TrimSpace(got) != "" {
			t.Errorf("%s: the job pending at the import is in the history: %q", when, got)
		}
	}
	check("imported")
	for _, q := range [][]string{
		{"sacctmgr", "show", "assoc", "format=cluster,account,user,share,parentname,qos", "-P"},
		{"sacctmgr", "show", "account"},
		{"sacctmgr", "show", "user"},
		// (NormShares and the usage columns: slurmctld under priority/basic
		// computes none; the frontend computes them from its history.)
		{"sshare", "-a", "-P", "-o", "Account,User,RawShares"},
	} {
		if want, got := realRoot.mustRun(rel, q...), f.as(t).mustRun(rel, q...); got != want {
			t.Errorf("imported: %s:\nours\n%s\nslurmdbd\n%s", strings.Join(q, " "), got, want)
		}
	}
	f.stop()
	f.start()
	check("after a restart")
	// New jobs continue past the old cluster's ids.
	newID, _ := strconv.Atoi(id(ours.mustRun(rel, "sbatch", "--hold", "-o", "/dev/null", "--wrap", "true")))
	if last, _ := strconv.Atoi(pending); newID <= last-1 {
		t.Errorf("a new job got id %d, not past the imported ones (up to %d)", newID, last-1)
	}
}
