package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processesWithArgv counts the host's processes whose command line is
// argv exactly.
func processesWithArgv(argv ...string) int {
	want := []byte(strings.Join(argv, "\x00") + "\x00")
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	n := 0
	for _, p := range names {
		if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, want) {
			n++
		}
	}
	return n
}

func waitFor(d time.Duration, ok func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

var nodeFailure = regexp.MustCompile(`(?m)^srun: error: Node failure on n\d+$`)

// A step's tasks are relayed by the server (its node stand-ins are
// slurmstepd here), so a step ends with the server: srun hears that its
// nodes failed, as from slurmctld when a node dies, instead of waiting
// for ever, and the step's tasks are ended. At a clean stop that is done
// before the server goes; after a crash, at its next start.
func TestStepsLostWithTheServer(t *testing.T) {
	f := newFrontend(t, batchCluster)
	for i, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "lost-")
			// A clean stop: srun's own allocation, ended by srun.
			mark := fmt.Sprintf("4321.%d", i)
			type result struct {
				out, errs string
				code      int
			}
			done := make(chan result, 1)
			go func() {
				o, e, c := ru.run(rel, "srun", "sh", "-c", "echo started; exec sleep "+mark)
				done <- result{o, e, c}
			}()
			if !waitFor(20*time.Second, func() bool { return processesWithArgv("sleep", mark) == 1 }) {
				t.Fatalf("the step's task never ran:\n%s", lastLines(f.Logs(), 20))
			}
			f.stop()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("srun still waits 20 s after the server stopped:\n%s", lastLines(f.Logs(), 20))
			}
			// srun exits 1 for a node failure from 23.02 on
			// (step_launch.c's _node_fail_handler sets ret_code); 22.05's
			// exits with its tasks' status, of which it heard none.
			want := 1
			if rel == "22.05" {
				want = 0
			}
			if r.code != want || !nodeFailure.MatchString(r.errs) || r.out != "started\n" {
				t.Errorf("srun when the server stopped: exit %d, stdout %q, stderr %q; want exit %d and the node failure", r.code, r.out, r.errs, want)
			}
			if !waitFor(5*time.Second, func() bool { return processesWithArgv("sleep", mark) == 0 }) {
				t.Errorf("the step's task (sleep %s) outlived the stop", mark)
			}
			if !regexp.MustCompile(`job \d+: step 0 on n\d+ lost: srun told \(SRUN_NODE_FAIL\); 1 processes of its tasks ended`).MatchString(f.Logs()) {
				t.Errorf("no line of the lost step in the log:\n%s", lastLines(f.Logs(), 20))
			}
			f.start()
			// srun gave its allocation back before the server went.
			if q, _, _ := ru.run(rel, "squeue", "-h", "-t", "R", "-o", "%i %j"); q != "" {
				t.Errorf("after the restart, running: %q; want srun's allocation ended", q)
			}

			// A crash: a batch job's step. The job lives on (its shim
			// keeps it); its srun is told at the next start and the
			// script goes on.
			mark = fmt.Sprintf("4322.%d", i)
			script := filepath.Join(dir, "s.sh")
			os.WriteFile(script, []byte("#!/bin/sh\nsrun sleep "+mark+"\necho srun-exit-$?\n"), 0o755)
			os.Chown(script, 64030, 64030)
			outFile := filepath.Join(dir, "out")
			sub := ru.mustRun(rel, "sbatch", "-o", outFile, script)
			id, _ := strconv.Atoi(submittedRe.FindStringSubmatch(sub)[1])
			if !waitFor(20*time.Second, func() bool { return processesWithArgv("sleep", mark) == 1 }) {
				t.Fatalf("the batch job's step never ran:\n%s", lastLines(f.Logs(), 20))
			}
			f.stopWith(syscall.SIGKILL, 5*time.Second)
			time.Sleep(300 * time.Millisecond)
			if n := processesWithArgv("sleep", mark); n != 1 {
				t.Fatalf("after kill -9 the step's task: %d processes, want it still running (the job's shim keeps it)", n)
			}
			f.start()
			rows := waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
			// The script's srun is the host's (22.05, tools/install.sh).
			if b, _ := os.ReadFile(outFile); !nodeFailure.Match(b) || !strings.Contains(string(b), "srun-exit-0") {
				t.Errorf("job %d (%s) output %q; want srun's node failure, then the script going on", id, rows[id].state, b)
			}
			if n := processesWithArgv("sleep", mark); n != 0 {
				t.Errorf("the lost step's task still runs after the restart")
			}
		})
	}
}
