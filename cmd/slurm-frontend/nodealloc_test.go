package main

import (
	"strings"
	"testing"
	"time"
)

// A running job shows on its node: sinfo says mixed, scontrol shows the
// CPUs and memory it holds, and the node is idle again once it ends.
func TestNodeShowsRunningJob(t *testing.T) {
	f := newFrontend(t, fakeCluster)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			out := f.mustRun(rel, "sbatch", "--parsable", "-p", "debug", "-n", "2", "--mem=2G", "--wrap", "sleep 60")
			id := strings.TrimSpace(out)
			deadline := time.Now().Add(20 * time.Second)
			for {
				st := strings.TrimSpace(f.mustRun(rel, "squeue", "-h", "-j", id, "-o", "%T"))
				if st == "RUNNING" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("job %s still %q", id, st)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if st := strings.TrimSpace(f.mustRun(rel, "sinfo", "-h", "-p", "debug", "-o", "%T")); st != "mixed" {
				t.Errorf("sinfo state of n1 with a 2-CPU job: %q, want mixed", st)
			}
			node := f.mustRun(rel, "scontrol", "show", "node", "n1")
			for _, want := range []string{"CPUAlloc=2 ", "AllocMem=2048 ", "State=MIXED "} {
				if !strings.Contains(node, want) {
					t.Errorf("scontrol show node n1 lacks %q:\n%s", want, node)
				}
			}
			f.mustRun(rel, "scancel", id)
			deadline = time.Now().Add(20 * time.Second)
			for {
				if st := strings.TrimSpace(f.mustRun(rel, "sinfo", "-h", "-p", "debug", "-o", "%T")); st == "idle" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("n1 not idle after the job was cancelled")
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}
