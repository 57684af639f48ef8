package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sacctmgr and sreport against the slurmdbd stand-in and against a real
// slurmdbd of each release holding the same associations: on the
// frontend they come from the jobs (slurm ran in physics and with no
// account, root in chem), on the real one sacctmgr added them; the
// listings match (the controller's address and port masked). Writes are
// refused with a reason.
func TestSacctmgrAgainstSlurmdbd(t *testing.T) {
	needClients(t)
	f := newFrontend(t, realAcctCluster)
	_, ru := slurmDir(t, f, "sacctmgr-")
	ru.mustRun("24.11", "sbatch", "-A", "physics", "-o", "/dev/null", "--wrap", "sleep 2")
	ru.mustRun("24.11", "srun", "true")
	f.mustRun("24.11", "srun", "-A", "chem", "-n", "2", "sleep", "1")
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out := f.mustRun("24.11", "squeue", "-h"); out == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the jobs did not finish")
		}
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) { sacctmgrAgainstSlurmdbd(t, f, ru, rel) })
	}
}

func sacctmgrAgainstSlurmdbd(t *testing.T, f *frontend, ours runner, rel string) {
	dir, port := startRealAccounting(t, rel, "real-sacctmgr-")
	real := runner{t: t, conf: filepath.Join(dir, "slurm.conf"), dir: dir}
	real.mustRun(rel, "sacctmgr", "-i", "add", "account", "physics,chem")
	real.mustRun(rel, "sacctmgr", "-i", "add", "user", "slurm", "account=root")
	real.mustRun(rel, "sacctmgr", "-i", "add", "user", "slurm", "account=physics")
	real.mustRun(rel, "sacctmgr", "-i", "add", "user", "root", "account=chem")
	oursRoot := f.as(t)
	// The controller's own address and port, and the ids (slurmdbd's
	// count the order things were added in).
	mask := func(s string) string {
		s = strings.ReplaceAll(s, strconv.Itoa(port), "PORT")
		s = strings.ReplaceAll(s, strconv.Itoa(f.port), "PORT")
		return regexp.MustCompile(` +`).ReplaceAllString(s, " ")
	}
	for _, q := range [][]string{
		{"show", "assoc"},
		{"show", "assoc", "format=cluster,account,user,share,parentname,qos,defaultqos", "-P"},
		{"show", "assoc", "where", "user=slurm"},
		{"show", "assoc", "where", "account=physics"},
		{"show", "user"},
		{"show", "user", "withassoc"},
		{"show", "user", "slurm", "-P"},
		{"show", "account"},
		{"show", "account", "withassoc"},
		{"show", "account", "physics", "-P", "format=account,descr,org"},
		{"show", "cluster", "format=cluster,controlhost,controlport,share,qos,defaultqos"},
		{"show", "qos", "format=name,priority,gracetime,preempt,preemptmode,usagefactor,maxwall,maxtres"},
		{"list", "wckey"},
	} {
		args := append([]string{"sacctmgr"}, q...)
		want, got := mask(real.mustRun(rel, args...)), mask(oursRoot.mustRun(rel, args...))
		if got != want {
			t.Errorf("%s %s:\nours\n%s\nslurmdbd\n%s", rel, strings.Join(args, " "), got, want)
		}
	}
	// Writes: refused, saying why; nothing changes.
	for _, w := range [][]string{
		{"-i", "add", "account", "newacct"},
		{"-i", "modify", "user", "slurm", "set", "defaultaccount=physics"},
		{"-i", "delete", "account", "chem"},
	} {
		out, errs, code := oursRoot.run(rel, append([]string{"sacctmgr"}, w...)...)
		if code == 0 && !strings.Contains(out+errs, "engine") {
			t.Errorf("%s sacctmgr %s: exit 0\n%s%s", rel, strings.Join(w, " "), out, errs)
		}
		if !strings.Contains(out+errs, "not supported") && !strings.Contains(out+errs, "keeps no account database") {
			t.Errorf("%s sacctmgr %s: no reason given:\n%s%s", rel, strings.Join(w, " "), out, errs)
		}
	}
	if got := oursRoot.mustRun(rel, "sacctmgr", "-n", "-P", "show", "account", "format=account"); got != "chem\nphysics\nroot\n" {
		t.Errorf("%s accounts after the refused writes: %q", rel, got)
	}
	// An ordinary user may not even try.
	if _, errs, _ := ours.run(rel, "sacctmgr", "-i", "add", "account", "mine"); !strings.Contains(errs, "ermission denied") && !strings.Contains(errs, "not supported") {
		t.Errorf("%s sacctmgr add as slurm: %s", rel, errs)
	}
}
