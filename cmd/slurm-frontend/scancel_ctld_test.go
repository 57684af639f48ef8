package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ---------------------------------------------------------------------
// scancel --ctld: 24.11's and 26.05's scancel send REQUEST_KILL_JOBS,
// one request with the job ids and filters, and print from its answer
// (RESPONSE_KILL_JOBS) one line per job that failed (all jobs with -v),
// in the answer's order; the exit code is 0 whatever the jobs' errors
// (only a refused request, e.g. "12_*", fails). 22.05's scancel has a
// hidden --ctld that changes only how steps are signalled: jobs still go
// out as REQUEST_KILL_JOB, so it answers as plain scancel.
//
// Measured on real 24.11.5 and 26.05.5 (TestBatchReal "scancelctld"),
// identical in both. Not measurable there: user slurm acting on root's
// jobs. Without accounting (AccountingStorageType=none, as the real test
// cluster) real slurmctld deadlocks on such a request (job_mgr_signal_jobs
// holds the assoc_mgr user read lock and its coordinator check,
// assoc_mgr_is_user_acct_coord(..., locked=true), then takes the write
// lock to load the missing user list): the client times out with
// "slurm_kill_jobs: Unable to signal jobs: Operation not permitted" and
// the controller answers nothing more. So that part runs against our
// server only, expecting what slurmctld answers where the check does not
// hang (with accounting): "Access/permission denied" per job.

func TestScancelCtld(t *testing.T) {
	onOurs(t, batchScancelCtld)
}

func batchScancelCtld(t *testing.T, s *bside) {
	// A name of our own: on a shared controller the filters touch only
	// this scenario's jobs (every filtered scancel has -n).
	tag := fmt.Sprintf("scc%d", time.Now().UnixNano()%1000000)
	u := s.as("slurm")
	check := func(step string, r runner, wantCode int, wantErr string, args ...string) {
		t.Helper()
		out, errs, code := r.run(s.rel, append([]string{"scancel", "--ctld"}, args...)...)
		if code != wantCode || out != "" || errs != wantErr {
			t.Errorf("%s: %s: scancel --ctld %s: exit %d, stdout %q, stderr %q; want exit %d and stderr %q\n%s",
				s.name, step, strings.Join(args, " "), code, out, errs, wantCode, wantErr, s.logTail())
		}
	}
	want := func(step string, states map[string][2]string) {
		t.Helper()
		for id, w := range states {
			st, reason, ok := s.waitState(t, id, 10*time.Second, func(st, r string) bool { return st == w[0] && (w[1] == "*" || r == w[1]) })
			if !ok {
				t.Errorf("%s: after %s: job %s is %q %q, want %q %q", s.name, step, id, st, reason, w[0], w[1])
			}
		}
	}
	pend := [2]string{"PENDING", "JobHeldUser"}
	gone := [2]string{"CANCELLED", "JobHeldUser"}
	none := [2]string{"", ""} // no longer listed (a pending array task cancelled)
	kerr := func(id, msg string) string {
		return "scancel: error: Kill job error on job id " + id + ": " + msg + "\n"
	}
	term := func(ids ...string) string {
		var b strings.Builder
		for _, id := range ids {
			b.WriteString("scancel: Terminating job " + id + "\n")
		}
		return b.String()
	}
	noMatch := func(filters string) string {
		return "scancel: error: No active jobs match ALL job filters, including: " + filters + " \n"
	}

	if s.rel == "22.05" {
		a := s.sbatch(t, "-H", "-J", tag, "-o", "/dev/null", "--wrap", "true")
		c := s.sbatchAs(t, u, "-H", "-J", tag, "-o", "/dev/null", "--wrap", "true")
		check("another user's job", u, 210, kerr(a, "Access/permission denied"), a)
		check("own job, -v", u, 0, term(c), "-v", c)
		check("root", s.r, 0, "", a)
		want("22.05", map[string][2]string{a: gone, c: gone})
		return
	}

	a := s.sbatch(t, "-H", "-J", tag, "-o", "/dev/null", "--wrap", "true")
	a2 := s.sbatch(t, "-H", "-J", tag, "-p", "gpu", "-o", "/dev/null", "--wrap", "true")
	c := s.sbatchAs(t, u, "-H", "-J", tag, "-o", "/dev/null", "--wrap", "true")
	d := s.sbatchAs(t, u, "--begin=now+300", "-J", tag, "-o", "/dev/null", "--wrap", "true")
	e := s.sbatch(t, "-H", "-J", tag+"e", "-o", "/dev/null", "--wrap", "true")
	arr := s.sbatch(t, "-H", "-J", tag+"a", "--array=1-4", "-o", "/dev/null", "--wrap", "true")
	s.mustReach(t, d, "PENDING", "BeginTime", 10*time.Second)

	// Filters, as the jobs' owner.
	check("no match, -v", u, 0, noMatch("job_name="+tag+" partition=gpu state=PENDING user_name=slurm"),
		"-v", "-n", tag, "-u", "slurm", "-t", "PENDING", "-p", "gpu")
	check("no match", u, 0, "", "-n", tag, "-u", "slurm", "-t", "PENDING", "-p", "gpu")
	check("own pending jobs, -v", u, 0, term(c, d), "-v", "-n", tag, "-u", "slurm", "-t", "PENDING")
	want("-n -u -t", map[string][2]string{c: gone, d: {"CANCELLED", "BeginTime"}, a: pend, a2: pend})

	// A job named by id that a filter excludes: one error line, exit 0;
	// with -v also the summary of the filters.
	mismatch := func(what string) string { return kerr(a, what+": Cannot signal job") }
	check("-n excludes", s.r, 0, mismatch("Job name "+tag+" != filter name zz"+tag), "-n", "zz"+tag, a)
	check("-p excludes", s.r, 0, mismatch("Job partition cpu does not include filter partition gpu"), "-p", "gpu", a)
	check("-t excludes, -v", s.r, 0, mismatch("Job state PENDING != filter state RUNNING")+noMatch("job_name="+tag+" state=RUNNING"),
		"-v", "-n", tag, "-t", "RUNNING", a)
	check("-u excludes, -v", s.r, 0, mismatch("Job user id 0 != filter user id 64030")+noMatch("job_name="+tag+" user_name=slurm"),
		"-v", "-n", tag, "-u", "slurm", a)
	for _, f := range []struct{ opt, msg string }{
		{"-w", "Job does not have nodes but filter has nodes n1"},
		{"-A", "Job account (null) != filter account zz"},
		{"-q", "Job qos NULL != filter qos zz"},
		{"--wckey", "Job wckey (null) != filter wckey zz"},
		{"--reservation", "Job reservation (null) does not include filter reservation zz"},
	} {
		val := map[bool]string{true: "n1", false: "zz"}[f.opt == "-w"]
		check(f.opt+" excludes", s.r, 0, kerr(e, f.msg+": Cannot signal job"), f.opt, val, e)
	}
	want("filters excluding", map[string][2]string{a: pend, e: pend})

	// Finished and unknown jobs: silent unless -v.
	check("finished", s.r, 0, "", c)
	check("finished, -v", s.r, 0, kerr(c, "Job/step already completing or completed"), "-v", c)
	check("unknown", s.r, 0, "", "9999999")
	check("unknown, -v", s.r, 0, kerr("9999999", "Invalid job id specified"), "-v", "9999999")
	check("ID_* refused", s.r, 96, "scancel: error: Job Array ID includes unexpected non-numeric characters\n", arr+"_*")

	// Pending array tasks: answered as ID_[TASKS].
	check("one pending task, -v", s.r, 0, term(arr+"_[2]"), "-v", arr+"_2")
	want("ID_2", map[string][2]string{arr + "_1": pend, arr + "_2": none, arr + "_3": pend})
	check("signal to pending tasks", s.r, 0, kerr(arr+"_[3-4]", "Job can not be altered now, try again later"), "-s", "USR1", arr+"_[3-4]")
	check("signal to a pending job", s.r, 0, kerr(a, "Job can not be altered now, try again later"), "-s", "USR1", a)
	check("tasks, one unknown, -v", s.r, 0, kerr(arr+"_[7]", "Invalid job id specified")+term(arr+"_[3-4]"), "-v", arr+"_[3-4,7]")
	want("ID_[3-4,7]", map[string][2]string{arr + "_1": pend, arr + "_3": none, arr + "_4": none, a: pend})

	// Running jobs: a signal reaches the batch shell only with -b.
	trap := writeScript(t, s.dir, "trap.sh", `#!/bin/bash
trap 'echo got USR1' USR1
trap 'echo got TERM; exit 7' TERM
echo start
for i in $(seq 1500); do sleep 0.2; done
`)
	r := s.sbatch(t, "-J", tag+"r", "-o", "trap-%j.out", trap)
	trapOut := filepath.Join(s.dir, "trap-"+r+".out")
	s.mustReach(t, r, "RUNNING", "", 30*time.Second)
	if _, ok := waitFile(trapOut, "start", 10*time.Second); !ok {
		t.Fatalf("%s: job %s did not start its script", s.name, r)
	}
	check("signal, steps only", s.r, 0, "", "-s", "USR1", r)
	if b, ok := waitFile(trapOut, "USR1", 1500*time.Millisecond); ok {
		t.Errorf("%s: scancel --ctld -s USR1 %s (no -b) reached the batch script:\n%s", s.name, r, b)
	}
	check("signal to the batch shell, -v", s.r, 0, "scancel: Signal 10 to batch job "+r+"\n", "-v", "-b", "-s", "USR1", r)
	if b, ok := waitFile(trapOut, "got USR1", 5*time.Second); !ok {
		t.Errorf("%s: scancel --ctld -b -s USR1 %s did not reach the script's trap:\n%s", s.name, r, b)
	}
	check("running job, -v", s.r, 0, term(r), "-v", "-n", tag+"r")
	if st, _ := s.waitDone(t, r, 20*time.Second); st != "CANCELLED" {
		t.Errorf("%s: job %s ended %s after scancel --ctld, want CANCELLED", s.name, r, st)
	}

	// Arrays with running and pending tasks (%2: two run at a time).
	running := func() string {
		id := s.sbatch(t, "-J", tag+"t", "--array=1-4%2", "-o", "/dev/null", "--wrap", "sleep 300")
		s.mustReach(t, id+"_1", "RUNNING", "", 30*time.Second)
		s.mustReach(t, id+"_2", "RUNNING", "", 30*time.Second)
		return id
	}
	thr := running()
	check("running and pending tasks, -v", s.r, 0, term(thr+"_[3]", thr+"_1", thr+"_2"), "-v", thr+"_[1-3]")
	want("ID_[1-3]", map[string][2]string{thr + "_3": none, thr + "_1": {"CANCELLED", "*"}, thr + "_2": {"CANCELLED", "*"}})
	// The whole array: its pending record first, then the tasks, the
	// last started first.
	thr2 := running()
	check("whole array, -v", s.r, 0, term(thr2, thr2+"_2", thr2+"_1"), "-v", thr2)
	want("ID", map[string][2]string{thr2 + "_3": {"CANCELLED", "JobArrayTaskLimit"}, thr2 + "_1": {"CANCELLED", "*"}})
	check("cleanup", s.r, 0, "", "-n", tag+"t")

	if !s.real {
		// Another user's jobs (see above): an error line per job, exit 0.
		check("another user's job", u, 0, kerr(e, "Access/permission denied"), e)
		check("another user's jobs by filter", u, 0, kerr(a, "Access/permission denied")+kerr(a2, "Access/permission denied"), "-n", tag)
		check("another user's array task", u, 0, kerr(arr+"_1", "Access/permission denied"), arr+"_1")
		want("another user", map[string][2]string{a: pend, a2: pend, e: pend, arr + "_1": pend})
	}

	check("by name, -v", s.r, 0, term(a, a2), "-v", "-n", tag)
	check("by name", s.r, 0, "", "-n", tag+"e")
	check("array by name, -v", s.r, 0, term(arr), "-v", "-n", tag+"a")
	want("by name", map[string][2]string{a: gone, a2: gone, e: gone, arr + "_1": gone})
	_ = os.Remove(trapOut)
}
