package main

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBulkCancel: the stock scancel --ctld -u of 24.11 and 26.05 cancels
// 1,100 pending jobs in one request, which the server answers once a
// cancel log naming them is on disk (the jobs' records and accounting
// records follow). Right after the answer, squeue and sacct show every
// job cancelled by root; a kill -9 then loses none of it: after the
// restart they still do, and the log is written out. With 24.11 the kill
// comes before the records are written (the restart writes them); with
// 26.05 after (sacct then lists each job once, from its record).
func TestBulkCancel(t *testing.T) {
	for _, rel := range []string{"24.11", "26.05"} {
		t.Run(rel, func(t *testing.T) {
			const n = 1100 // above the server's bulk threshold (1,024)
			f := newFrontend(t, fakeCluster)
			out, err := exec.Command(buildBinary(t), "bench", "fill", "--target", fmt.Sprintf("127.0.0.1:%d", f.port),
				"--jobs", fmt.Sprint(n), "--concurrency", "16", "--munge-key", "/etc/munge/munge.key").CombinedOutput()
			if err != nil {
				t.Fatalf("bench fill: %v\n%s", err, out)
			}
			states := func() map[string]int {
				t.Helper()
				m := map[string]int{}
				for _, l := range strings.Fields(f.mustRun(rel, "squeue", "-h", "-t", "all", "-o", "%T")) {
					m[l]++
				}
				return m
			}
			if got := states(); got["PENDING"] != n {
				t.Fatalf("after the fill: %v, want %d PENDING", got, n)
			}
			// Held jobs never eligible are outside any sacct window (as
			// slurmdbd's): they are asked for by id.
			ids := strings.Join(strings.Fields(f.mustRun(rel, "squeue", "-h", "-o", "%i")), ",")
			f.mustRun(rel, "scancel", "--ctld", "-u", "root")
			sacctBy := func() int {
				t.Helper()
				out := f.mustRun(rel, "sacct", "-X", "-D", "-n", "-P", "-j", ids, "-o", "JobID,State") // -D: a job listed twice would show
				if testing.Verbose() {
					t.Logf("sacct: %.300q", out)
				}
				return strings.Count(out, "|CANCELLED by 0\n")
			}
			check := func(when string) {
				t.Helper()
				if got := states(); got["CANCELLED"] != n || len(got) != 1 {
					t.Errorf("%s: squeue -t all: %v, want %d CANCELLED", when, got, n)
				}
				if got := sacctBy(); got != n {
					t.Errorf("%s: sacct lists %d jobs CANCELLED by 0, want %d", when, got, n)
				}
			}
			check("right after scancel")
			if !strings.Contains(f.Logs(), "bulk cancel of 1100 jobs by uid 0: logged") {
				t.Errorf("the cancel was not logged as a bulk cancel:\n%s", f.Logs())
			}
			written := func() {
				t.Helper()
				deadline := time.Now().Add(60 * time.Second)
				for !strings.Contains(f.Logs(), "bulk cancel of 1100 jobs by uid 0: records written") {
					if time.Now().After(deadline) {
						t.Fatalf("the records were not written within 60 s:\n%s", f.Logs())
					}
					time.Sleep(100 * time.Millisecond)
				}
				check("once the records are written")
			}
			if rel != "24.11" {
				written()
			}
			f.stopWith(syscall.SIGKILL, 10*time.Second)
			f.start()
			check("after kill -9 and a restart")
			if rel == "24.11" {
				written()
			}
		})
	}
}
