package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate/backendai/double"
)

// sbatchID submits and returns the job id.
func sbatchID(t *testing.T, r runner, rel string, args ...string) int {
	t.Helper()
	out := r.mustRun(rel, append([]string{"sbatch"}, args...)...)
	m := submittedRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sbatch %v: %q", args, out)
	}
	return atoi(m[1])
}

// sessionsOfJobs counts the double's sessions per job id (named slurm-<id>).
func sessionsOfJobs(d *baiDouble) map[int]int {
	n := map[int]int{}
	for _, s := range d.Sessions() {
		if id, err := strconv.Atoi(strings.TrimPrefix(s.Name, "slurm-")); err == nil {
			n[id]++
		}
	}
	return n
}

// The batch workflows of the embedded engine, with Backend.AI (the
// double, running the jobs) underneath, for each release: environment,
// arrays with a throttle, dependencies, holds, --wait, who may cancel.
func TestBackendAIBatchScenarios(t *testing.T) {
	d, f := baiFrontend(t, nil, "")
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, r := slurmDir(t, f, "bai-sc-")
			root := f.as(t).in(dir)

			// The environment travels (--export), with Slurm's own.
			env := sbatchID(t, r, rel, "-J", "envjob", "--export=ALL,FOO=bar baz", "--mem=2G", "-o", "env.out",
				"--wrap", `echo "$FOO|$SLURM_JOB_NAME|$SLURM_JOB_ID|$SLURM_SUBMIT_DIR"`)

			// An array of 6 tasks, 2 at a time.
			arr := sbatchID(t, r, rel, "--array=1-6%2", "--mem=2G", "-o", "arr-%A_%a.out", "--wrap", `sleep 1; echo task $SLURM_ARRAY_TASK_ID`)
			// A dependency: runs after the array, only if it succeeded.
			dep := sbatchID(t, r, rel, "--dependency=afterok:"+strconv.Itoa(arr), "--mem=2G", "-o", "dep.out", "--wrap", "echo after")
			// A held job, released.
			held := sbatchID(t, r, rel, "--hold", "--mem=2G", "-o", "/dev/null", "--wrap", "true")
			maxRunning := 0
			var rows map[int]jobRow
			for end := time.Now().Add(90 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
				var err error
				if rows, _, err = listJobs(rel, f.clientConf, dir); err != nil {
					continue
				}
				running := 0
				for _, row := range rows {
					if row.arrayJob == arr && row.state == "RUNNING" {
						running++
					}
				}
				maxRunning = max(maxRunning, running)
				if rows[dep].state == "COMPLETED" && rows[env].state == "COMPLETED" {
					break
				}
				if codeOf := rows[dep].state; codeOf == "RUNNING" || codeOf == "COMPLETED" {
					for _, row := range rows {
						if row.arrayJob == arr && row.state != "COMPLETED" {
							t.Errorf("the afterok job runs while array task %s is %s", row.task, row.state)
						}
					}
				}
			}
			if rows[held].state != "PENDING" || rows[held].reason != "JobHeldUser" {
				t.Errorf("held job: %s (%s)", rows[held].state, rows[held].reason)
			}
			if rows[dep].state != "COMPLETED" {
				t.Fatalf("the dependent job is %s (%s):\n%v", rows[dep].state, rows[dep].reason, rows)
			}
			if maxRunning > 2 || maxRunning == 0 {
				t.Errorf("array %%2: at most %d tasks ran at once, want 1..2", maxRunning)
			}
			for task := 1; task <= 6; task++ {
				if b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("arr-%d_%d.out", arr, task))); string(b) != fmt.Sprintf("task %d\n", task) {
					t.Errorf("array task %d output %q", task, b)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "env.out")); string(b) != fmt.Sprintf("bar baz|envjob|%d|%s\n", env, dir) {
				t.Errorf("environment: %q", b)
			}
			r.mustRun(rel, "scontrol", "release", strconv.Itoa(held))
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[held].state == "COMPLETED" })

			// --wait: sbatch returns with the job's exit code.
			_, errs, code := r.run(rel, "sbatch", "--wait", "--mem=2G", "-o", "/dev/null", "--wrap", "exit 4")
			if code != 4 {
				t.Errorf("sbatch --wait of 'exit 4': exit %d %q", code, errs)
			}

			// Who may cancel: not another user; root may.
			long := sbatchID(t, r, rel, "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 300")
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[long].state == "RUNNING" })
			if _, errs, code := f.as(t).in(dir).user("nobody").run(rel, "scancel", strconv.Itoa(long)); code == 0 && !strings.Contains(errs, "denied") {
				t.Errorf("nobody cancelled slurm's job: exit %d %q", code, errs)
			}
			time.Sleep(300 * time.Millisecond)
			if rows, _, _ := listJobs(rel, f.clientConf, dir); rows[long].state != "RUNNING" {
				t.Errorf("after another user's scancel the job is %s", rows[long].state)
			}
			root.mustRun(rel, "scancel", strconv.Itoa(long))
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[long].state == "CANCELLED" })
			t.Logf("RESULT backend.ai %s: environment; array 1-6%%2 (at most %d running at once), afterok after it, hold/release, sbatch --wait exit %d, another user's scancel refused, root's done", rel, maxRunning, code)
		})
	}
	// One session per job, whatever happened.
	for id, n := range sessionsOfJobs(d) {
		if n > 1 {
			t.Errorf("job %d has %d sessions", id, n)
		}
	}
}

// kill -9 of the frontend in the middle of a workload on Backend.AI: no
// acknowledged job lost, none run twice, and after the restart every job
// ends as the manager says.
func TestBackendAIKill9(t *testing.T) {
	d, f := baiFrontend(t, nil, "")
	dir, r := slurmDir(t, f, "bai-k9-")
	var ids []int
	for i := 0; i < 24; i++ {
		ids = append(ids, sbatchID(t, r, releases[i%3], "--mem=2G", "-o", fmt.Sprintf("k9-%d.out", i), "--wrap", fmt.Sprintf("sleep %d; echo done %d", 1+i%3, i)))
	}
	time.Sleep(1500 * time.Millisecond) // some run, some ended, some wait
	if _, _, err := f.stopWith(syscall.SIGKILL, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the manager goes on meanwhile
	f.start()
	rows := waitRows(t, f, dir, 120*time.Second, func(rows map[int]jobRow) bool {
		for _, id := range ids {
			if rows[id].state != "COMPLETED" {
				return false
			}
		}
		return true
	})
	for i, id := range ids {
		if b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("k9-%d.out", i))); string(b) != fmt.Sprintf("done %d\n", i) {
			t.Errorf("job %d output %q", id, b)
		}
	}
	sess := sessionsOfJobs(d)
	for _, id := range ids {
		if sess[id] != 1 {
			t.Errorf("job %d has %d sessions", id, sess[id])
		}
	}
	t.Logf("RESULT backend.ai kill -9: %d jobs, server killed mid-workload and restarted; %d listed, all COMPLETED with their output, one session each", len(ids), len(rows))
}

// Priority tiers and preemption: low-tier jobs fill a resource group
// whose Backend.AI scheduler preempts; a high-tier job over the same
// agents preempts them: terminate mode shows the victims PREEMPTED,
// reschedule mode requeues them (PENDING, then RUNNING again), and the
// high-tier job RUNNING.
func TestBackendAIPreemption(t *testing.T) {
	_, f := baiFrontend(t, func(d *double.Double) {
		for _, mode := range []string{"terminate", "reschedule"} {
			if err := d.AddResourceGroup(double.ResourceGroup{Name: "pre-" + mode, Preemption: double.Preemption{Enabled: true, Mode: mode}}); err != nil {
				t.Fatal(err)
			}
			if err := d.AddAgent(double.Agent{ID: "i-" + mode, ResourceGroup: "pre-" + mode, Slots: map[string]string{"cpu": "2", "mem": "8g"}}); err != nil {
				t.Fatal(err)
			}
		}
	}, `PartitionName=batch FrontendResourceGroup=default Default=YES
PartitionName=low FrontendResourceGroup=pre-terminate PriorityTier=1 PreemptMode=CANCEL
PartitionName=high FrontendResourceGroup=pre-terminate PriorityTier=10
PartitionName=lowrq FrontendResourceGroup=pre-reschedule PriorityTier=1 PreemptMode=REQUEUE
PartitionName=highrq FrontendResourceGroup=pre-reschedule PriorityTier=10
`)
	dir, r := slurmDir(t, f, "bai-pre-")
	for _, c := range []struct{ low, high, want string }{{"low", "high", "PREEMPTED"}, {"lowrq", "highrq", "PENDING"}} {
		var victims []int
		for i := 0; i < 2; i++ {
			victims = append(victims, sbatchID(t, r, "24.11", "-p", c.low, "-c", "1", "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 300"))
		}
		waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool {
			return rows[victims[0]].state == "RUNNING" && rows[victims[1]].state == "RUNNING"
		})
		high := sbatchID(t, r, "26.05", "-p", c.high, "-c", "2", "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 300")
		rows := waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool {
			return rows[high].state == "RUNNING" && rows[victims[0]].state == c.want && rows[victims[1]].state == c.want
		})
		var states []string
		for _, v := range victims {
			states = append(states, fmt.Sprintf("%d:%s(%s)", v, rows[v].state, rows[v].reason))
		}
		sort.Strings(states)
		if c.want == "PENDING" {
			show := f.as(t).in(dir).mustRun("24.11", "scontrol", "show", "job", strconv.Itoa(victims[0]))
			if !strings.Contains(show, "Restarts=1") {
				t.Errorf("a requeued victim does not show Restarts=1:\n%s", show)
			}
			// The preemptor ends: the victims run again.
			f.as(t).in(dir).mustRun("24.11", "scancel", strconv.Itoa(high))
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool {
				return rows[victims[0]].state == "RUNNING" && rows[victims[1]].state == "RUNNING"
			})
			f.as(t).in(dir).mustRun("24.11", "scancel", strconv.Itoa(victims[0]), strconv.Itoa(victims[1]))
		} else {
			f.as(t).in(dir).mustRun("24.11", "scancel", strconv.Itoa(high))
		}
		t.Logf("RESULT backend.ai preemption (%s over %s): high-tier job %d RUNNING, victims %s", c.high, c.low, high, strings.Join(states, " "))
	}
}

// A 60 s manager outage in the middle of a workload: squeue, sinfo and
// scontrol keep answering from the last snapshot, submissions are kept
// (pending) and handed over once it is back, jobs that ended during the
// outage are seen ended, and afterwards every job agrees with its session.
func TestBackendAIOutage(t *testing.T) {
	d, f := baiFrontend(t, nil, "")
	dir, r := slurmDir(t, f, "bai-out-")
	short := sbatchID(t, r, "24.11", "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 5; exit 2")
	long := sbatchID(t, r, "24.11", "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 300")
	waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool {
		return rows[short].state == "RUNNING" && rows[long].state == "RUNNING"
	})
	d.Outage(60 * time.Second)
	outAt := time.Now()
	reads, readsOK := 0, 0
	var during int
	restarted := false
	for time.Since(outAt) < 55*time.Second {
		for _, rel := range releases {
			for _, args := range [][]string{{"squeue", "-h"}, {"sinfo", "-h"}, {"scontrol", "show", "job", strconv.Itoa(long)}} {
				reads++
				if _, _, code := r.run(rel, args...); code == 0 {
					readsOK++
				}
			}
		}
		if during == 0 {
			// Submitted while the manager is down: kept, pending.
			during = sbatchID(t, r, "26.05", "--mem=2G", "-o", "during.out", "--wrap", "echo submitted during the outage")
		}
		if !restarted && time.Since(outAt) > 20*time.Second {
			// The frontend restarted while the manager is down: it
			// serves from its store.
			restarted = true
			f.stop()
			f.start()
			// The last view of the cluster, from the store.
			if out := r.mustRun("24.11", "sinfo", "-h", "-N", "-o", "%N"); out != "i-agent0000\ni-agent0001\n" {
				t.Errorf("sinfo after a restart during the outage: %q, want the last agents", out)
			}
		}
		time.Sleep(5 * time.Second)
	}
	if rows, _, _ := listJobs("24.11", f.clientConf, dir); rows[during].state != "PENDING" {
		t.Errorf("a job submitted during the outage is %s, want PENDING", rows[during].state)
	}
	// Back: the job that ended meanwhile, the one submitted meanwhile.
	rows, ok := waitRowsOK(f, dir, 90*time.Second, func(rows map[int]jobRow) bool {
		return rows[short].state == "FAILED" && rows[during].state == "COMPLETED" && rows[long].state == "RUNNING"
	})
	if !ok {
		// Where the server is stuck: its goroutines.
		f.cmd.Process.Signal(syscall.SIGQUIT)
		time.Sleep(2 * time.Second)
		t.Fatalf("90 s after the outage the jobs are %v, want %d FAILED, %d COMPLETED, %d RUNNING:\n%s", rows, short, during, long, lastLines(f.Logs(), 300))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "during.out")); string(b) != "submitted during the outage\n" {
		t.Errorf("the job submitted during the outage wrote %q", b)
	}
	// No drift: each job agrees with its session.
	for _, s := range d.Sessions() {
		id, err := strconv.Atoi(strings.TrimPrefix(s.Name, "slurm-"))
		if err != nil {
			continue
		}
		got := rows[id].state
		switch {
		case s.Status == "RUNNING" && got != "RUNNING",
			s.Status == "TERMINATED" && (got == "RUNNING" || got == "PENDING"):
			t.Errorf("job %d is %s, its session %s", id, got, s.Status)
		}
	}
	if readsOK != reads {
		t.Errorf("%d of %d reads answered during the outage", readsOK, reads)
	}
	t.Logf("RESULT backend.ai outage 60 s: %d of %d reads answered during it; the frontend restarted during it and served; a job that ended meanwhile FAILED (exit 2) once back, one submitted meanwhile kept pending then COMPLETED, the running one still RUNNING; jobs agree with sessions", readsOK, reads)
}
