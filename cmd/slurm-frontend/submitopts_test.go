package main

import (
	"testing"
	"time"
)

// sbatch options that only change what the job records show, and
// refusals of names that do not exist (measured on real 22.05, 24.11 and
// 26.05 with TestBatchReal "submitopts").
func TestBatchSubmitOptions(t *testing.T) {
	onOurs(t, batchSubmitOptions)
}

func batchSubmitOptions(t *testing.T, s *bside) {
	// Without accounting there is no QOS record: slurmctld shows none,
	// but 24.11+ show what a pending job asked for.
	qos := "normal"
	if s.rel < "24.11" {
		qos = "(null)"
	}
	id := s.sbatch(t, "-H", "-A", "acct1", "--qos", "normal", "--comment", "hello world", "-o", "/dev/null", "--wrap", "true")
	s.wantKV(t, "scontrol show job "+id, s.showJob(t, id), map[string]string{
		"Account": "acct1", "QOS": qos, "Comment": "hello world", "Partition": "cpu"})
	if out, _, _ := s.r.run(s.rel, "squeue", "-h", "-j", id, "-o", "%P|%a|%q|%k"); out != "cpu|acct1|"+qos+"|hello world\n" {
		t.Errorf("%s: squeue -o %%P|%%a|%%q|%%k for job %s: %q", s.name, id, out)
	}

	// Several partitions: the list while the job is pending, the one it
	// runs in once started.
	id = s.sbatch(t, "-H", "-p", "debug,cpu", "-o", "/dev/null", "--wrap", "true")
	s.wantKV(t, "scontrol show job "+id+" (-p debug,cpu, held)", s.showJob(t, id), map[string]string{"Partition": "debug,cpu"})
	if out, _, _ := s.r.run(s.rel, "squeue", "-h", "-j", id, "-o", "%P"); out != "debug,cpu\n" {
		t.Errorf("%s: squeue -o %%P for job %s (-p debug,cpu, held): %q", s.name, id, out)
	}
	run := s.sbatch(t, "-p", "debug,cpu", "--mem=100M", "-o", "/dev/null", "--wrap", "sleep 300")
	s.mustReach(t, run, "RUNNING", "", 30*time.Second)
	// Both can start it (n1 is in both): the first listed.
	s.wantKV(t, "scontrol show job "+run+" (-p debug,cpu, running)", s.showJob(t, run), map[string]string{"Partition": "debug"})
	s.r.run(s.rel, "scancel", run)

	for _, tc := range []struct {
		args []string
		errs string
	}{
		{[]string{"-p", "cpu,nosuch"}, "sbatch: error: invalid partition specified: nosuch\nsbatch: error: Batch job submission failed: Invalid partition name specified\n"},
		{[]string{"-C", "nosuch"}, "sbatch: error: Batch job submission failed: Invalid feature specification\n"},
	} {
		args := append(append([]string{"sbatch", "-H"}, tc.args...), "-o", "/dev/null", "--wrap", "true")
		if out, errs, code := s.r.run(s.rel, args...); code != 1 || out != "" || errs != tc.errs {
			t.Errorf("%s: %v: exit %d, stdout %q, stderr %q; want exit 1 and %q", s.name, args, code, out, errs, tc.errs)
		}
	}
}
