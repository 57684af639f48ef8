package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// ---------------------------------------------------------------------
// scancel's filters: -n, -u, -t, -p combined, as a user and as root, and
// -i. Measured on real 22.05, 24.11 and 26.05 (TestBatchReal "scancel
// filters"): a user's filtered scancel cancels the user's own matching
// jobs and reports "Access/permission denied" for each other user's
// (exit 210); a cancelled pending job keeps its reason (CANCELLED
// JobHeldUser). scancel -i asks on stdout for each job and reads the
// answer from stdin; with stdin at EOF it asks again forever (real
// scancel does so; the "refused for non-interactive use" is not
// what any release does), so it is tested with answers piped in.

func TestBatchScancelFilters(t *testing.T) {
	onOurs(t, batchScancelFilters)
}

func batchScancelFilters(t *testing.T, s *bside) {
	// A name of our own: on a shared controller the filters touch only
	// this scenario's jobs.
	tag := fmt.Sprintf("scf%d", time.Now().UnixNano()%1000000)
	u := s.as("slurm")
	a := s.sbatch(t, "-H", "-J", tag, "-o", "/dev/null", "--wrap", "true")
	a2 := s.sbatch(t, "-H", "-J", tag, "-p", "gpu", "-o", "/dev/null", "--wrap", "true")
	c := s.sbatchAs(t, u, "-H", "-J", tag, "-o", "/dev/null", "--wrap", "true")
	d := s.sbatchAs(t, u, "--begin=now+300", "-J", tag, "-o", "/dev/null", "--wrap", "true")
	b := s.sbatch(t, "-H", "-J", tag+"b", "-o", "/dev/null", "--wrap", "true")
	s.mustReach(t, d, "PENDING", "BeginTime", 10*time.Second)

	want := func(step string, states map[string][2]string) {
		t.Helper()
		for id, w := range states {
			st, reason, ok := s.waitState(t, id, 5*time.Second, func(st, r string) bool { return st == w[0] && r == w[1] })
			if !ok {
				t.Errorf("%s: after %s: job %s is %s %s, want %s %s", s.name, step, id, st, reason, w[0], w[1])
			}
		}
	}
	// scancel signals the jobs it selected from parallel threads, so the
	// errors come in any order (on real Slurm too).
	denied := func(ids ...string) string {
		var lines []string
		for _, id := range ids {
			lines = append(lines, "scancel: error: Kill job error on job id "+id+": Access/permission denied\n")
		}
		sort.Strings(lines)
		return strings.Join(lines, "")
	}
	sorted := func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		sort.Strings(lines)
		return strings.Join(lines, "")
	}
	pend := [2]string{"PENDING", "JobHeldUser"}
	gone := [2]string{"CANCELLED", "JobHeldUser"}

	step := "scancel -n " + tag + " -p gpu (as slurm)"
	if out, errs, code := u.run(s.rel, "scancel", "-n", tag, "-p", "gpu"); code != 210 || out != "" || sorted(errs) != denied(a2) {
		t.Errorf("%s: %s: exit %d, stdout %q, stderr %q; want exit 210 and %q", s.name, step, code, out, errs, denied(a2))
	}
	want(step, map[string][2]string{a2: pend})

	step = "scancel -n " + tag + " -t PENDING (as slurm)"
	if out, errs, code := u.run(s.rel, "scancel", "-n", tag, "-t", "PENDING"); code != 210 || out != "" || sorted(errs) != denied(a, a2) {
		t.Errorf("%s: %s: exit %d, stdout %q, stderr %q; want exit 210 and %q", s.name, step, code, out, errs, denied(a, a2))
	}
	want(step, map[string][2]string{a: pend, a2: pend, c: gone, d: {"CANCELLED", "BeginTime"}})

	step = "scancel -n " + tag + " -p gpu (as root)"
	if out, errs, code := s.r.run(s.rel, "scancel", "-n", tag, "-p", "gpu"); code != 0 || out != "" || errs != "" {
		t.Errorf("%s: %s: exit %d, stdout %q, stderr %q", s.name, step, code, out, errs)
	}
	want(step, map[string][2]string{a: pend, a2: gone})

	step = "scancel -n " + tag + "b -u slurm (root's job)"
	if out, errs, code := s.r.run(s.rel, "scancel", "-n", tag+"b", "-u", "slurm"); code != 0 || out != "" || errs != "" {
		t.Errorf("%s: %s: exit %d, stdout %q, stderr %q", s.name, step, code, out, errs)
	}
	want(step, map[string][2]string{b: pend})

	// After an "n", stock scancel (22.05 to 26.05) goes on asking about
	// every later non-array job (its cleared job id matches their
	// array_job_id 0), so the answer is repeated.
	prompt := "Cancel job_id=" + a + " name=" + tag + " partition=cpu [y/n]? "
	for _, answer := range []string{"n", "y"} {
		step = "yes " + answer + " | scancel -i " + a
		out, errs, code := s.r.run(s.rel, "sh", "-c", "yes "+answer+" | timeout 10 scancel -i "+a)
		if code != 0 || !strings.HasPrefix(out, prompt) || errs != "" {
			t.Errorf("%s: %s: exit %d, stdout %q, stderr %q; want the prompt %q first", s.name, step, code, out, errs, prompt)
		}
		want(step, map[string][2]string{a: map[string][2]string{"n": pend, "y": gone}[answer], b: pend})
	}

	step = "scancel -n " + tag + "b"
	if out, errs, code := s.r.run(s.rel, "scancel", "-n", tag+"b"); code != 0 || out != "" || errs != "" {
		t.Errorf("%s: %s: exit %d, stdout %q, stderr %q", s.name, step, code, out, errs)
	}
	want(step, map[string][2]string{b: gone})

	if out, errs, code := s.r.run(s.rel, "scancel", "-n", "nosuch"+tag); code != 0 || out != "" || errs != "" {
		t.Errorf("%s: scancel -n (no such name): exit %d, stdout %q, stderr %q; want nothing", s.name, code, out, errs)
	}
}

// scancel --full and scancel -b with the default SIGKILL, on running jobs
// (measured on real 22.05, 24.11 and 26.05): --full is a plain cancel
// (SIGTERM first: CANCELLED, ExitCode 0:15); -b kills the batch shell
// alone, and the job FAILS of the signal, described as
// "RaisedSignal:9(Killed)" from 23.02 on, JobLaunchFailure by 22.05.
func TestBatchScancelKill(t *testing.T) {
	onOurs(t, batchScancelKill)
}

func batchScancelKill(t *testing.T, s *bside) {
	signaled := "RaisedSignal:9(Killed)"
	if s.rel < "23.02" {
		signaled = "JobLaunchFailure"
	}
	for _, tc := range []struct{ flag, state, reason, exit string }{
		{"--full", "CANCELLED", "None", "0:15"},
		{"-b", "FAILED", signaled, "0:9"},
	} {
		id := s.sbatch(t, "-o", "/dev/null", "--mem=100M", "--wrap", "sleep 300")
		s.mustReach(t, id, "RUNNING", "", 30*time.Second)
		if out, errs, code := s.r.run(s.rel, "scancel", tc.flag, id); code != 0 || out != "" || errs != "" {
			t.Errorf("%s: scancel %s %s: exit %d, stdout %q, stderr %q", s.name, tc.flag, id, code, out, errs)
		}
		if st, reason := s.waitDone(t, id, 30*time.Second); st != tc.state || reason != tc.reason {
			t.Errorf("%s: after scancel %s: job %s %s %s, want %s %s", s.name, tc.flag, id, st, reason, tc.state, tc.reason)
		}
		s.wantKV(t, "scontrol show job "+id+" after scancel "+tc.flag, s.showJob(t, id),
			map[string]string{"JobState": tc.state, "Reason": tc.reason, "ExitCode": tc.exit})
	}
}
