package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJobStateAgainstReal: `squeue --only-job-state` (REQUEST_JOB_STATE,
// 24.05+ clients) on the same small queue of a real cluster (slurmctld +
// slurmd, priority/basic, no accounting) and of ours, as user slurm:
// a held job, a completed one, a running one, an array of six tasks two
// of which run (%2) while four wait in its pending record, and a
// cancelled job. Outputs must be the same after fidelity's masks (job
// ids; the order of one array's tasks, which the real controllers do not
// keep alike, is compared sorted: fidRuns).
func TestJobStateAgainstReal(t *testing.T) {
	needRealCtld(t)
	for _, rel := range releases {
		if rel == "22.05" {
			continue // no --only-job-state before 24.05
		}
		t.Run(rel, func(t *testing.T) { jobStateAgainstReal(t, rel) })
	}
}

func jobStateAgainstReal(t *testing.T, rel string) {
	env := []string{"REAL_CONF_EXTRA=" + fidelityExtra, "REAL_ACCOUNTING=none", "REAL_PRIORITY=basic"}
	dir, _ := startRealCluster(t, rel, "real-js-", env)
	f := newFrontend(t, fidelityCluster+fidelityExtra+"\nPriorityType=priority/basic\n")
	work := workDir(t, "js-"+rel+"-")
	real := runner{t: t, conf: filepath.Join(dir, "slurm.conf"), dir: work, logs: func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
		return string(b)
	}}
	s := &fidSession{t: t, rel: rel, mode: "basic", work: work, sides: []*diffSide{
		{rel: rel, name: "real " + rel, r: real},
		{rel: rel, name: "slurm-frontend", r: f.as(t).in(work)},
	}}
	t.Cleanup(func() {
		for _, d := range s.sides {
			d.r.run(rel, "scancel", "-u", "slurm")
		}
	})
	const wait = 30 * time.Second
	s.submit("--hold", "-J", "held", "-o", "/dev/null", "--wrap", "sleep 1") // J1
	s.submit("-J", "ok", "-o", "/dev/null", "--wrap", "sleep 1")             // J2
	s.submit("-J", "long", "-o", "/dev/null", "--wrap", "sleep 300")         // J3
	s.submit("--hold", "-J", "gone", "-o", "/dev/null", "--wrap", "sleep 1") // J4
	s.slurm("scancel", "J4")
	// The array last, so that its tasks' own ids (given as they start)
	// follow every job id on both sides (%A and %F print them).
	s.submit("-J", "arr", "-o", "/dev/null", "--array=1-6%2", "--wrap", "sleep 300") // J5
	s.waitJob(1, "PENDING JobHeldUser", wait)
	s.waitJob(2, "COMPLETED", wait)
	s.waitJob(3, "RUNNING", wait)
	s.waitJob(4, "CANCELLED", wait)
	// Two of the array's tasks run, split off its pending record.
	for _, d := range s.sides {
		a := s.args(d, []string{"squeue", "-h", "-j", "J5", "-t", "R", "-o", "%i"})
		for end := time.Now().Add(wait); ; time.Sleep(300 * time.Millisecond) {
			out, _, _ := d.r.run(rel, a...)
			if strings.Count(out, "\n") == 2 {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("%s: two tasks of the array do not run: %q", d.name, out)
			}
		}
	}
	// J5_1 and J5_2 run (the throttle starts the lowest first), J5_5
	// is still pending.
	for _, q := range [][]string{
		{"squeue", "--only-job-state"},
		{"squeue", "--only-job-state", "-t", "all"},
		{"squeue", "--only-job-state", "-t", "all", "-o", "%i %A %a %F %K %T %t"},
		{"squeue", "--only-job-state", "-h", "-t", "PD,CA", "-o", "%18i %T"},
		{"squeue", "--only-job-state", "-r"},
		{"squeue", "--only-job-state", "-j", "J5"},
		{"squeue", "--only-job-state", "-j", "J5_1"},
		{"squeue", "--only-job-state", "-j", "J5_5", "-o", "%i %A %a %T"},
		{"squeue", "--only-job-state", "-j", "J1,J2,J5_5,999999,J4", "-t", "all"},
		{"squeue", "--only-job-state", "-j", "J3,J5_2,J1"},
		{"squeue", "--only-job-state", "-j", "999999"},
		{"squeue", "--only-job-state", "-j", "999999", "-t", "all", "-o", "%i %T"},
	} {
		s.slurm(q...)
	}
	if s.differ > 0 {
		t.Logf("%s: %d of %d commands differ", rel, s.differ, s.n)
	}
}
