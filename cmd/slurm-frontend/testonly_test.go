package main

import (
	"regexp"
	"strings"
	"testing"
)

// sbatch --test-only: REQUEST_JOB_WILL_RUN. A real 24.11 slurmctld (one
// real slurmd registered as n1) prints on stderr
//
//	sbatch: Job 1 to start at 2026-11-30T20:29:00 using 1 processors on nodes n1 in partition cpu
//
// (26.05 clients: "...T20:29:00 a using 1 processors ...", their own
// format string), and refuses a bad partition exactly as a submission:
//
//	sbatch: error: invalid partition specified: nosuch
//	allocation failure: Invalid partition name specified
//
// and, as it creates and purges a job record, the accepted --test-only
// consumes job ID 1: the next sbatch is job 2. The refused ones consume
// none.
func TestTestOnly(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			// 25.11+ clients print "TIME a using" (src/api/allocate.c).
			a := ""
			if rel >= "25.11" {
				a = " a"
			}
			line := regexp.MustCompile(`^sbatch: Job 1 to start at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d` + a + ` using 1 processors on nodes n1 in partition cpu\n$`)
			f := newFrontend(t, fakeCluster)
			out, errs, code := f.run(rel, "sbatch", "--test-only", "--wrap", "x")
			if code != 0 || out != "" || !line.MatchString(errs) {
				t.Fatalf("sbatch --test-only: exit %d\nstdout %q\nstderr %q\nlog:\n%s", code, out, errs, f.Logs())
			}

			out, errs, code = f.run(rel, "sbatch", "--test-only", "-p", "nosuch", "--wrap", "x")
			want := "sbatch: error: invalid partition specified: nosuch\nallocation failure: Invalid partition name specified\n"
			if code != 1 || out != "" || errs != want {
				t.Errorf("sbatch --test-only -p nosuch: exit %d\nstdout %q\nstderr %q\nwant %q", code, out, errs, want)
			}
			// The same refusal as a real submission.
			_, subErrs, subCode := f.run(rel, "sbatch", "-p", "nosuch", "--wrap", "x")
			if subCode != 1 || !strings.HasPrefix(subErrs, "sbatch: error: invalid partition specified: nosuch\n") {
				t.Errorf("sbatch -p nosuch: exit %d, stderr %q", subCode, subErrs)
			}

			if out := f.mustRun(rel, "squeue", "-h", "-t", "all"); out != "" {
				t.Errorf("squeue -t all after --test-only: %q", out)
			}
			if out := f.mustRun(rel, "sbatch", "--wrap", "x"); out != "Submitted batch job 2\n" {
				t.Errorf("next sbatch: %q", out)
			}
		})
	}
}
