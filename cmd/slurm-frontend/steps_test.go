package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSrun: stock srun of each release, on its own (an allocation and a
// step, tasks run by the node stand-ins in the job's session), as a
// user: output of every task, labels, the tasks' exit status as srun's,
// the job COMPLETED (or FAILED) afterwards.
func TestSrun(t *testing.T) {
	f := newFrontend(t, batchCluster)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "srun-")
			host, _ := os.Hostname()
			out := ru.mustRun(rel, "srun", "-n", "2", "hostname")
			if want := host + "\n" + host + "\n"; out != want {
				t.Errorf("srun -n 2 hostname: %q, want %q", out, want)
			}
			out = ru.mustRun(rel, "srun", "-l", "-n", "3", "echo", "x")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			slices.Sort(lines)
			if !slices.Equal(lines, []string{"0: x", "1: x", "2: x"}) {
				t.Errorf("srun -l -n 3 echo x: %q", out)
			}
			out = ru.mustRun(rel, "srun", "sh", "-c", "echo $SLURM_JOB_ID $SLURM_STEP_ID $SLURM_PROCID $SLURM_NTASKS $(id -un) $PWD")
			var job int
			var rest string
			if n, _ := fmt.Sscanf(out, "%d %s", &job, &rest); n != 2 || !strings.HasSuffix(strings.TrimSpace(out), " 0 0 1 slurm "+dir) {
				t.Errorf("srun environment: %q, want JOBID 0 0 1 slurm %s", out, dir)
			}
			// The task's supervisor (its PID namespace's init) is the
			// small shim binary beside the server's (see shimCommand).
			out = ru.mustRun(rel, "srun", "sh", "-c", "tr '\\0' ' ' </proc/1/cmdline")
			if want := buildBinary(t) + "-shim shim run "; !strings.HasPrefix(out, want) {
				t.Errorf("the task's pid 1: %q, want %q...", out, want)
			}
			// Two nodes: one task on each, each told its node.
			out = ru.mustRun(rel, "srun", "-N", "2", "-n", "2", "sh", "-c", "echo $SLURM_NODEID $SLURMD_NODENAME $SLURM_PROCID $SLURM_STEP_NUM_NODES")
			lines = strings.Split(strings.TrimSpace(out), "\n")
			slices.Sort(lines)
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "0 n") || !strings.HasPrefix(lines[1], "1 n") || !strings.HasSuffix(lines[1], " 1 2") {
				t.Errorf("srun -N 2 -n 2: %q, want node ids 0 and 1 on two nodes", out)
			}
			_, errs, code := ru.run(rel, "srun", "sh", "-c", "echo out; echo err >&2; exit 5")
			if code != 5 || !strings.Contains(errs, "err") {
				t.Errorf("srun sh -c 'exit 5': exit %d, stderr %q", code, errs)
			}
			if job > 0 {
				waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[job].state == "COMPLETED" })
			}
			// --multi-prog: each task's command line from the file by
			// its rank (%t its rank, %o its offset in the line's ranks).
			conf := filepath.Join(dir, "mp.conf")
			os.WriteFile(conf, []byte("# srun -n4 -l --multi-prog mp.conf\n2-3 echo two-three %o\n1 echo task %t 'as is %t'\n0 echo zero\n"), 0o644)
			out = ru.mustRun(rel, "srun", "-n4", "-l", "--multi-prog", conf)
			lines = strings.Split(strings.TrimSpace(out), "\n")
			slices.Sort(lines)
			if want := []string{"0: zero", "1: task 1 as is %t", "2: two-three 0", "3: two-three 1"}; !slices.Equal(lines, want) {
				t.Errorf("srun --multi-prog: %q, want %q", lines, want)
			}
			// --output/--error patterns: files opened by each task as
			// the user, from its directory.
			out = ru.mustRun(rel, "srun", "-n", "2", "--output=o-%j-%t.txt", "--error=e-%t.txt", "sh", "-c", "echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2")
			if out != "" {
				t.Errorf("srun --output=FILE printed %q", out)
			}
			for task := range 2 {
				matches, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("o-*-%d.txt", task)))
				if len(matches) != 1 {
					t.Errorf("task %d: output files %v", task, matches)
					continue
				}
				b, _ := os.ReadFile(matches[0])
				e, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("e-%d.txt", task)))
				if string(b) != fmt.Sprintf("out %d\n", task) || string(e) != fmt.Sprintf("err %d\n", task) {
					t.Errorf("task %d: stdout file %q, stderr file %q", task, b, e)
				}
				var st syscall.Stat_t
				if syscall.Stat(matches[0], &st) == nil && st.Uid != 64030 {
					t.Errorf("task %d's output file belongs to uid %d", task, st.Uid)
				}
			}
		})
	}
}

// TestSallocSrun: salloc gives a shell (here a command) with the job's
// environment; srun inside runs its tasks in that allocation; leaving it
// completes the job.
func TestSallocSrun(t *testing.T) {
	f := newFrontend(t, batchCluster)
	idRe := regexp.MustCompile(`Granted job allocation (\d+)`)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "salloc-")
			out, errs, code := ru.run(rel, "salloc", "-n", "2", "sh", "-c", "echo job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST; srun -n 2 echo inner")
			if code != 0 {
				t.Fatalf("salloc: exit %d\n%s\n%s\n%s", code, out, errs, lastLines(f.Logs(), 30))
			}
			m := idRe.FindStringSubmatch(errs)
			if m == nil {
				t.Fatalf("salloc said %q", errs)
			}
			id := atoi(m[1])
			if !strings.Contains(out, fmt.Sprintf("job=%d nodes=n", id)) || strings.Count(out, "inner\n") != 2 {
				t.Errorf("salloc output %q", out)
			}
			waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
		})
	}
}

// TestStepsShareCPUs: the steps of an allocation share its CPUs as
// slurmctld shares them (checked against a real slurmctld + slurmd
// 24.11 running the same script): srun's default step holds all the
// job's CPUs on its nodes, so a second one waits for the first to end
// and is woken then (srun: "Step created for StepId=J.1"); --overlap
// runs at once; --exact steps take only their tasks' CPUs and run side
// by side; more CPUs than the job has is refused.
func TestStepsShareCPUs(t *testing.T) {
	f := newFrontend(t, batchCluster)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "steps-share-")
			script := filepath.Join(dir, "share.sh")
			body := `cd "$1"
srun -n1 sh -c 'sleep 3; echo A' >a.out 2>a.err &
sleep 1
srun -n1 echo B >b.out 2>b.err
echo "B:$(cat a.out):$(cat b.out)"
wait
srun --overlap -n1 sh -c 'sleep 3; echo C' >c.out 2>c.err &
sleep 1
srun --overlap -n1 echo D >d.out 2>d.err
echo "D:$(cat c.out):$(cat d.out)"
wait
srun --exact -n1 -c1 sh -c 'sleep 3; echo E' >e.out 2>e.err &
sleep 1
srun --exact -n1 -c1 echo F >f.out 2>f.err
echo "F:$(cat e.out):$(cat f.out)"
wait
srun -n2 -c2 true 2>g.err
echo "G:$?"
echo "CPUS:$(srun -n1 printenv SLURM_CPUS_ON_NODE) $(srun --exact -n1 -c1 printenv SLURM_CPUS_ON_NODE) $(srun --overlap -n1 printenv SLURM_CPUS_ON_NODE)"
`
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			out, errs, code := ru.within(2*time.Minute).run(rel, "salloc", "-N1", "-n2", "sh", script, dir)
			if code != 0 {
				t.Fatalf("salloc: exit %d\n%s\n%s", code, out, errs)
			}
			// The second default step ran after the first ended.
			if !strings.Contains(out, "B:A:B\n") {
				t.Errorf("a second step while the first holds the CPUs: %q, want it to wait (B:A:B)", out)
			}
			// 22.05's srun says "Step created for job J" and, whatever woke
			// it, "temporarily disabled" first; later ones say that only
			// when their wait timed out instead of being woken.
			b, _ := os.ReadFile(filepath.Join(dir, "b.err"))
			if !regexp.MustCompile(`Step created for (StepId=\d+\.1|job \d+)\n`).Match(b) ||
				rel != "22.05" && strings.Contains(string(b), "temporarily disabled") {
				t.Errorf("the waiting srun said %q, want it woken when the first step ended (\"Step created for StepId=J.1\")", b)
			}
			if !strings.Contains(out, "D::D\n") {
				t.Errorf("--overlap: %q, want it to run beside the other step (D::D)", out)
			}
			if !strings.Contains(out, "F::F\n") {
				t.Errorf("--exact steps of one CPU each in two: %q, want them side by side (F::F)", out)
			}
			// SLURM_CPUS_ON_NODE is the step's CPUs there: all the job's
			// for a default step (also with --overlap), its tasks' with
			// --exact.
			if !strings.Contains(out, "CPUS:2 1 2\n") {
				t.Errorf("SLURM_CPUS_ON_NODE of default, --exact -c1 and --overlap steps in two CPUs: %q, want CPUS:2 1 2", out)
			}
			// -O: tasks share the job's CPUs, one per node.
			over := ru.mustRun(rel, "srun", "-n3", "-O", "sh", "-c", "echo $SLURM_CPUS_ON_NODE/$SLURM_JOB_CPUS_PER_NODE")
			if over != "1/1\n1/1\n1/1\n" {
				t.Errorf("srun -n3 -O: %q, want three tasks on one CPU (1/1)", over)
			}
			g, _ := os.ReadFile(filepath.Join(dir, "g.err"))
			if !strings.Contains(out, "G:1\n") || !strings.Contains(string(g), "More processors requested than permitted") {
				t.Errorf("srun -n2 -c2 in two CPUs: %q, stderr %q, want the refusal", out, g)
			}
		})
	}
}

// TestSrunInBatch: an sbatch script whose srun starts a step of two
// tasks; both write to the job's output; the step shows in squeue -s
// while it runs. The script runs on this host, so its srun is the host's
// (22.05) client.
func TestSrunInBatch(t *testing.T) {
	f := newFrontend(t, batchCluster)
	dir, ru := slurmDir(t, f, "sbatch-srun-")
	script := filepath.Join(dir, "steps.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsrun -n 2 sh -c 'echo task-$SLURM_PROCID step-$SLURM_STEP_ID'\nsrun -J longstep sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(script, 64030, 64030)
	sub := ru.mustRun("22.05", "sbatch", "-n", "2", "-o", filepath.Join(dir, "out-%j"), script)
	id := atoi(submittedRe.FindStringSubmatch(sub)[1])
	deadline := time.Now().Add(60 * time.Second)
	var steps string
	for time.Now().Before(deadline) {
		steps, _, _ = ru.run("24.11", "squeue", "-h", "-s", "-o", "%i %j")
		if strings.Contains(steps, fmt.Sprintf("%d.1 longstep", id)) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !strings.Contains(steps, fmt.Sprintf("%d.1 longstep", id)) {
		t.Fatalf("squeue -s never showed step %d.1: %q\n%s", id, steps, lastLines(f.Logs(), 30))
	}
	b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out-%d", id)))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(lines)
	if !slices.Equal(lines, []string{"task-0 step-0", "task-1 step-0"}) {
		t.Errorf("job output %q", b)
	}
	// scancel of the job stops the step's tasks.
	ru.mustRun("24.11", "scancel", fmt.Sprint(id))
	waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "CANCELLED" })
}

// TestSrunInBatchReleases: the srun of 24.11 and 26.05 inside a batch
// script. The script runs on this host, so it reaches a release's srun
// through tools/run-client.sh (a chroot into that release's root, which
// needs root: the job is root's); SLURM_JOB_ID and the rest pass through.
func TestSrunInBatchReleases(t *testing.T) {
	f := newFrontend(t, batchCluster)
	dir := workDir(t, "sbatch-srun-rel-")
	r := f.as(t).in(dir)
	for _, rel := range []string{"24.11", "26.05"} {
		t.Run(rel, func(t *testing.T) {
			script := filepath.Join(dir, "steps-"+rel+".sh")
			body := fmt.Sprintf("#!/bin/sh\nbash %s %s %s srun -n 2 sh -c 'echo task-$SLURM_PROCID step-$SLURM_STEP_ID of $SLURM_JOB_ID'\necho srun-$?\n",
				filepath.Join(repoRoot(t), "tools/run-client.sh"), rel, f.clientConf)
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			sub := r.mustRun(rel, "sbatch", "-n", "2", "-o", filepath.Join(dir, "out-%j"), script)
			id := atoi(submittedRe.FindStringSubmatch(sub)[1])
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out-%d", id)))
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			slices.Sort(lines)
			want := []string{"srun-0", fmt.Sprintf("task-0 step-0 of %d", id), fmt.Sprintf("task-1 step-0 of %d", id)}
			if !slices.Equal(lines, want) {
				t.Errorf("%s srun in a batch job: output %q, want %q\n%s", rel, b, want, lastLines(f.Logs(), 20))
			}
		})
	}
}

// TestStepTimeLimit: a step's own time limit (srun -t 1 inside an
// allocation) ends the step as slurmd does, saying so on srun's stderr;
// the allocation goes on.
func TestStepTimeLimit(t *testing.T) {
	f := newFrontend(t, smallCluster)
	dir, ru := slurmDir(t, f, "step-limit-")
	start := time.Now()
	out, errs, code := ru.within(3*time.Minute).run("24.11", "salloc", "-n", "1", "sh", "-c", "srun -t 1 sleep 300; echo srun-$?; srun true; echo after-$?")
	if code != 0 || !strings.Contains(out, "after-0") {
		t.Fatalf("salloc: exit %d\n%s\n%s\n%s", code, out, errs, lastLines(f.Logs(), 20))
	}
	if !regexp.MustCompile(`slurmstepd: error: \*\*\* STEP \d+\.0 ON s1 CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*`).MatchString(errs) {
		t.Errorf("srun -t 1: no time-limit message on its stderr:\n%s", errs)
	}
	if strings.Contains(out, "srun-0") {
		t.Errorf("srun -t 1 sleep 300 exited 0: %q", out)
	}
	if d := time.Since(start); d < 60*time.Second || d > 150*time.Second {
		t.Errorf("the step ended after %v, want about its one-minute limit", d)
	}
	_ = dir
}

// smallCluster has one node of two CPUs: a second allocation waits.
const smallCluster = `ClusterName=small
KillWait=2
NodeName=s1 NodeAddr=127.0.0.1 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=4000 State=UNKNOWN
PartitionName=p Nodes=s1 Default=YES MaxTime=INFINITE State=UP
`

// TestSallocPending: salloc waiting for capacity says so, and gets its
// allocation (pushed to its port) once the job holding the node ends;
// scancel of a step (J.S) ends that step's tasks, not the job.
func TestSallocPending(t *testing.T) {
	f := newFrontend(t, smallCluster)
	idRe := regexp.MustCompile(`Granted job allocation (\d+)`)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "pending-")
			sub := ru.mustRun(rel, "sbatch", "-n", "2", "--mem=100M", "-o", "/dev/null", "--wrap", "sleep 8")
			holder := atoi(submittedRe.FindStringSubmatch(sub)[1])
			waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[holder].state == "RUNNING" })
			// -I: not now, not at all.
			_, ierrs, icode := ru.run(rel, "salloc", "-I", "-n", "2", "--mem=100M", "true")
			if icode == 0 || !strings.Contains(ierrs, "Unable to allocate resources") {
				t.Errorf("salloc -I on a full node: exit %d %q", icode, ierrs)
			}
			out, errs, code := ru.run(rel, "salloc", "-n", "2", "--mem=100M", "sh", "-c", "echo got-$SLURM_JOB_ID")
			if code != 0 || !strings.Contains(errs, "queued and waiting for resources") {
				t.Fatalf("salloc: exit %d\n%s\n%s\n%s", code, out, errs, lastLines(f.Logs(), 20))
			}
			m := idRe.FindStringSubmatch(errs)
			if m == nil || !strings.Contains(out, "got-"+m[1]) {
				t.Fatalf("salloc: %q %q", out, errs)
			}
			rows := waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[atoi(m[1])].state == "COMPLETED" })
			if rows[holder].state != "COMPLETED" {
				t.Errorf("the job that held the node: %s", rows[holder].state)
			}
		})
	}
	// salloc --no-shell: the allocation stays; srun --jobid uses it;
	// scancel ends it.
	{
		dir, ru := slurmDir(t, f, "noshell-")
		_, errs, code := ru.run("24.11", "salloc", "--no-shell", "-n", "1", "--mem=100M")
		m := idRe.FindStringSubmatch(errs)
		if code != 0 || m == nil {
			t.Fatalf("salloc --no-shell: exit %d %q", code, errs)
		}
		id := atoi(m[1])
		if out := ru.mustRun("26.05", "srun", "--jobid="+m[1], "sh", "-c", "echo in-$SLURM_JOB_ID"); out != "in-"+m[1]+"\n" {
			t.Errorf("srun --jobid=%d: %q", id, out)
		}
		ru.mustRun("22.05", "scancel", m[1])
		waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "CANCELLED" })
	}
	// A step cancelled by its id: its tasks end (srun 137), the job's
	// other work goes on.
	dir, ru := slurmDir(t, f, "stepcancel-")
	script := filepath.Join(dir, "s.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nsrun -J stepper sleep 100\necho srun-exit-$?\nsleep 1\n"), 0o755)
	os.Chown(script, 64030, 64030)
	out := filepath.Join(dir, "out")
	sub := ru.mustRun("22.05", "sbatch", "-o", out, script)
	id := atoi(submittedRe.FindStringSubmatch(sub)[1])
	deadline := time.Now().Add(30 * time.Second)
	for seen := false; !seen; time.Sleep(200 * time.Millisecond) {
		s, _, _ := ru.run("24.11", "squeue", "-h", "-s", "-o", "%i %j")
		seen = strings.Contains(s, fmt.Sprintf("%d.0 stepper", id))
		if !seen && time.Now().After(deadline) {
			jobs, _, _ := ru.run("24.11", "squeue", "-h", "-o", "%i %T %r")
			b, _ := os.ReadFile(out)
			t.Fatalf("job %d's step not in squeue -s after 30 s: steps %q, jobs %q, its output %q\n%s", id, s, jobs, b, lastLines(f.Logs(), 30))
		}
	}
	ru.mustRun("26.05", "scancel", fmt.Sprintf("%d.0", id))
	waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "srun-exit-137") {
		t.Errorf("after scancel %d.0 the job's output is %q, want srun-exit-137", id, b)
	}
}

// TestSrunForwarded: with a TreeWidth narrower than the step (a site's
// own slurm.conf on the login nodes), srun asks the first node of each
// span to forward the launch to the others: every node's tasks run and
// srun gets every node's answer, on each release.
func TestSrunForwarded(t *testing.T) {
	f := newFrontend(t, batchCluster)
	b, err := os.ReadFile(f.clientConf)
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []string{"1", "2"} {
		narrow := filepath.Join(f.dir, "narrow"+width+".conf")
		os.WriteFile(narrow, []byte(strings.Replace(string(b), "TreeWidth=65533", "TreeWidth="+width, 1)), 0o644)
		for _, rel := range releases {
			t.Run(rel+"/TreeWidth="+width, func(t *testing.T) {
				dir, _ := slurmDir(t, f, "fwd-")
				r := f.as(t).in(dir).user("slurm")
				r.conf = narrow
				out, errs, code := r.run(rel, "srun", "-N", "4", "-n", "4", "-l", "sh", "-c", "echo $SLURMD_NODENAME")
				lines := strings.Split(strings.TrimSpace(out), "\n")
				slices.Sort(lines)
				if code != 0 || len(lines) != 4 {
					t.Fatalf("srun -N 4 with TreeWidth=%s: exit %d, stdout %q, stderr %q\n%s", width, code, out, errs, lastLines(f.Logs(), 20))
				}
				nodes := map[string]bool{}
				for i, l := range lines {
					task, node, _ := strings.Cut(l, ": ")
					if task != fmt.Sprint(i) || !strings.HasPrefix(node, "n") {
						t.Errorf("line %q: want task %d on a node", l, i)
					}
					nodes[node] = true
				}
				if len(nodes) != 4 {
					t.Errorf("tasks ran on %v, want four nodes", nodes)
				}
				_, _, code = r.run(rel, "srun", "-N", "3", "-n", "3", "sh", "-c", "exit $SLURM_NODEID")
				if code != 2 {
					t.Errorf("srun -N 3 exit $SLURM_NODEID with TreeWidth=%s: exit %d, want 2 (the largest)", width, code)
				}
			})
		}
	}
}

// A config with nodes and no partition, or none Default=YES: the log says
// so at start (as slurmctld's "default partition not set"), and sbatch
// without -p gets Slurm's error.
func TestNoPartitionWarns(t *testing.T) {
	f := newFrontend(t, "ClusterName=nopart\nNodeName=n[1-2] NodeAddr=127.0.0.[1-2] CPUs=4 RealMemory=4096\n")
	if !strings.Contains(f.Logs(), "defines nodes but no partition") {
		t.Errorf("no warning at start:\n%s", f.Logs())
	}
	_, errs, code := f.run("24.11", "sbatch", "--wrap", "true")
	if code == 0 || !strings.Contains(errs, "No partition specified or system default partition") {
		t.Errorf("sbatch without a partition: exit %d, stderr %q", code, errs)
	}
	// Partitions, none Default=YES: sbatch without -p is refused, with -p runs.
	f = newFrontend(t, "ClusterName=nodefault\nNodeName=n[1-2] NodeAddr=127.0.0.[1-2] CPUs=4 RealMemory=4096\nPartitionName=p1 Nodes=ALL State=UP\n")
	if !strings.Contains(f.Logs(), "sets no default partition") {
		t.Errorf("no warning at start:\n%s", f.Logs())
	}
	if _, errs, code := f.run("24.11", "sbatch", "--wrap", "true"); code == 0 || !strings.Contains(errs, "No partition specified or system default partition") {
		t.Errorf("sbatch without -p: exit %d, stderr %q", code, errs)
	}
	if out, errs, code := f.run("24.11", "sbatch", "-p", "p1", "--wrap", "true"); code != 0 || !strings.Contains(out, "Submitted batch job") {
		t.Errorf("sbatch -p p1: exit %d, %q %q", code, out, errs)
	}
	f = newFrontend(t, batchCluster)
	if strings.Contains(f.Logs(), "partition (") || strings.Contains(f.Logs(), "no default partition") {
		t.Errorf("a warning with a default partition defined:\n%s", f.Logs())
	}
}

// TestInactiveLimit: with InactiveLimit set, an allocation whose salloc
// died (SIGKILL) stops answering the controller's pings and is ended
// TIMEOUT with reason InactiveLimit, as a real slurmctld 24.11 ends it
// (which looks every 30 s; this server at each ping round); one whose
// salloc answers lives on past that time and completes; salloc
// --no-shell leaves no port to ping and is not watched (salloc.c).
func TestInactiveLimit(t *testing.T) {
	f := newFrontend(t, batchCluster+"InactiveLimit=3\nMessageTimeout=2\n")
	dir, ru := slurmDir(t, f, "inactive-")
	idRe := regexp.MustCompile(`Granted job allocation (\d+)`)
	_, errs, code := ru.run("24.11", "salloc", "--no-shell", "-n1")
	m := idRe.FindStringSubmatch(errs)
	if code != 0 || m == nil {
		t.Fatalf("salloc --no-shell: exit %d, %q", code, errs)
	}
	noShell := atoi(m[1])
	// A salloc killed: its shell's command is stopped by us too.
	killed, _, _ := ru.run("24.11", "sh", "-c", `salloc -n1 sh -c 'echo $$ >cmd.pid; exec sleep 60' 2>salloc.err & p=$!
for i in $(seq 100); do [ -s cmd.pid ] && break; sleep 0.1; done
kill -9 $p; kill $(cat cmd.pid); cat salloc.err`)
	m = idRe.FindStringSubmatch(killed)
	if m == nil {
		t.Fatalf("the salloc to kill said %q", killed)
	}
	dead := atoi(m[1])
	// salloc answering pings: alive well past the 7 s a silent one has.
	out, errs, code := ru.within(time.Minute).run("24.11", "salloc", "-n1", "sh", "-c", "sleep 12; echo still")
	m = idRe.FindStringSubmatch(errs)
	if code != 0 || out != "still\n" || m == nil {
		t.Errorf("salloc sleeping 12 s under InactiveLimit=3: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	rows := waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[dead].state == "TIMEOUT" })
	if rows[dead].reason != "InactiveLimit" {
		t.Errorf("the allocation of the killed salloc: %+v, want TIMEOUT (InactiveLimit)", rows[dead])
	}
	if rows[noShell].state != "RUNNING" {
		t.Errorf("salloc --no-shell's allocation: %+v, want it RUNNING (not watched)", rows[noShell])
	}
	if m != nil {
		live := atoi(m[1])
		waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[live].state == "COMPLETED" })
	}
	ru.run("24.11", "scancel", fmt.Sprint(noShell))
}

// TestSrunOOM: a task the OOM killer ends (srun --mem below what it
// allocates) is reported as slurmstepd and srun report it: the step's
// oom_kill events on srun's stderr, "task 0: Out Of Memory", exit 1.
func TestSrunOOM(t *testing.T) {
	f := newFrontend(t, batchCluster)
	if !strings.Contains(f.Logs(), "memory and CPU limits enforced") {
		t.Skip("no cgroup memory limits here")
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			_, ru := slurmDir(t, f, "oom-")
			_, errs, code := ru.run(rel, "srun", "--mem=40M", "python3", "-c", "b = bytearray(400 << 20); print(len(b))")
			stepd := regexp.MustCompile(`(?m)^slurmstepd-n\d+: error: Detected 1 oom_kill event in StepId=\d+\.0\. Some of the step tasks have been OOM Killed\.$`)
			if code != 1 || !stepd.MatchString(errs) || !regexp.MustCompile(`(?m)^srun: error: n\d+: task 0: Out Of Memory$`).MatchString(errs) {
				t.Errorf("srun --mem=40M of a 400 MB task: exit %d, stderr %q; want exit 1, the oom_kill event and Out Of Memory", code, errs)
			}
		})
	}
}
