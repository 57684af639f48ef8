package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Node administration against real Slurm: the same scontrol update
// NodeName=... commands, with the same release's stock clients, on a real
// slurmctld + slurmd (node n1, alone in partition debug) and on our
// server, both on the reference cluster; the outputs must be the same
// once the times and job ids are masked. The real cluster runs with
// ReturnToService=1: with the harness's 2 its slurmd would bring a node an
// administrator set DOWN back at its next registration, where ours (and
// slurmctld with 0 or 1) keep it DOWN until resumed.

// nodeAdminMasks normalizes what legitimately differs: when things
// happened, and job ids.
var nodeAdminMasks = []*regexp.Regexp{
	regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`),
	regexp.MustCompile(`(?m)^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$`),
}

// naJobIDs finds job ids: squeue's first column, sbatch's answer.
var naJobIDs = regexp.MustCompile(`(?m)^\s*(\d+) |^Submitted batch job (\d+)$`)

// naSide is one controller of the comparison.
type naSide struct {
	name string
	r    runner
	jobs []string // job ids in submission order
}

func (d *naSide) normalize(s string) string {
	for _, re := range nodeAdminMasks {
		s = re.ReplaceAllString(s, "<TIME>")
	}
	// Job ids, where the commands here print them: by submission
	// order.
	s = naJobIDs.ReplaceAllStringFunc(s, func(m string) string {
		sub := naJobIDs.FindStringSubmatchIndex(m)
		at, end := sub[2], sub[3]
		if at < 0 {
			at, end = sub[4], sub[5]
		}
		id := m[at:end]
		for i, j := range d.jobs {
			if j == id {
				return m[:at] + fmt.Sprintf("J%d", i+1) + m[end:]
			}
		}
		return m
	})
	return sortTies(s)
}

// job is the id of the side's i-th job (1-based), for commands.
func (d *naSide) job(i int) string { return d.jobs[i-1] }

// jobPlaceholder is J<n> in a command's arguments: the side's n-th job.
var jobPlaceholder = regexp.MustCompile(`\bJ(\d+)\b`)

// jobArgs is args with every J<n> replaced by the side's job id.
func (d *naSide) jobArgs(args []string) []string {
	a := make([]string, len(args))
	for k, s := range args {
		a[k] = jobPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
			var x int
			fmt.Sscanf(m[1:], "%d", &x)
			return d.job(x)
		})
	}
	return a
}

// keepLines keeps the lines of s that contain one of the words.
func keepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "")
}

// naRun is one command on both sides, compared.
type naRun struct {
	t     *testing.T
	rel   string
	sides []*naSide
}

// both runs args (job references "J<n>" replaced by each side's id) on
// both sides as user ("" root), filters stdout with filter (nil: all),
// and fails the test if the two differ. It returns our side's output.
func (n *naRun) both(user string, filter func(string) string, args ...string) string {
	n.t.Helper()
	var text [2]string
	var ours string
	for i, d := range n.sides {
		a := d.jobArgs(args)
		r := d.r
		if user != "" {
			r = r.user(user)
		}
		out, errs, code := r.run(n.rel, a...)
		if m := regexp.MustCompile(`(?m)^Submitted batch job (\d+)$`).FindStringSubmatch(out); m != nil {
			d.jobs = append(d.jobs, m[1])
		}
		if filter != nil {
			out = filter(out)
		}
		if i == 1 {
			ours = out
		}
		text[i] = fmt.Sprintf("$ [%s] %s\n[exit %d]\n--- stdout\n%s--- stderr\n%s", user, strings.Join(args, " "), code,
			d.normalize(out), d.normalize(errs))
	}
	if text[0] != text[1] {
		n.t.Errorf("%s: %s: output differs (-%s +%s):\n%s", n.rel, strings.Join(args, " "), n.sides[0].name, n.sides[1].name,
			unifiedDiff(n.t, text[0], text[1]))
	}
	return ours
}

// until waits on every side for cond (given the side's output of args)
// to hold; a side that does not get there in limit fails the test.
func (n *naRun) until(what string, limit time.Duration, cond func(out string) bool, args ...string) {
	n.t.Helper()
	for _, d := range n.sides {
		a := d.jobArgs(args)
		end := time.Now().Add(limit)
		var out string
		for {
			out, _, _ = d.r.run(n.rel, a...)
			if cond(out) {
				break
			}
			if time.Now().After(end) {
				n.t.Fatalf("%s: %s: not %s after %v: %s\n%s", n.rel, d.name, what, limit, strings.Join(a, " "), out)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

func jobStateIs(states ...string) func(string) bool {
	return func(out string) bool {
		for _, s := range states {
			if strings.Contains(out, "JobState="+s+" ") {
				return true
			}
		}
		return false
	}
}

func trimmedIs(want string) func(string) bool {
	return func(out string) bool { return strings.TrimSpace(out) == want }
}

func nodeLines(s string) string { return keepLines(s, "   State=", "   Reason=") }

func TestNodeAdmin(t *testing.T) {
	needRealCtld(t)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) { nodeAdmin(t, rel) })
	}
}

func nodeAdmin(t *testing.T, rel string) {
	real := startRealSlurmWith(t, rel, func(c string) string {
		return strings.Replace(c, "ReturnToService=2", "ReturnToService=1", 1)
	})
	f := newFrontend(t, fakeCluster+"KillWait=3\nDefMemPerNode=100\n")
	work := workDir(t, "nodeadmin-"+rel+"-")
	n := &naRun{t: t, rel: rel, sides: []*naSide{
		{name: "real slurmctld " + rel, r: real.as(t).in(work)},
		{name: "slurm-frontend", r: f.as(t).in(work)},
	}}
	t.Cleanup(func() {
		for _, d := range n.sides {
			d.r.run(rel, "scancel", "-u", "root")
		}
	})
	state := func(part string) []string { return []string{"sinfo", "-h", "-p", part, "-o", "%t"} }
	ours := func() string { return n.sides[1].r.mustRun(rel, "scontrol", "show", "node", "n1") }

	// Refusals: no reason (scontrol's own), a user who is not an
	// administrator, an unknown node, a resume of a node that is fine.
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=DRAIN")
	n.both("slurm", nil, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=x")
	n.both("slurm", nil, "scontrol", "reconfigure")
	n.both("slurm", nil, "scontrol", "shutdown")
	n.both("", nil, "scontrol", "update", "NodeName=nosuch", "State=DRAIN", "Reason=x")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=RESUME")
	n.both("", nil, "sinfo", "-R", "-n", "n1")

	// Drain an idle node: the reason, its user and time, drained.
	before := time.Now().Add(-time.Second)
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=disk replacement")
	after := time.Now().Add(time.Second)
	reasons := n.both("", nil, "sinfo", "-R", "-n", "n1")
	m := regexp.MustCompile(`(?m)^disk replacement\s+root\s+(\S+)\s+n1$`).FindStringSubmatch(reasons)
	if m == nil {
		t.Fatalf("%s: sinfo -R:\n%s", rel, reasons)
	}
	if ts, err := time.ParseInLocation("2006-01-02T15:04:05", m[1], time.Local); err != nil || ts.Before(before.Truncate(time.Second)) || ts.After(after) {
		t.Errorf("%s: the reason's time %s is not when the node was drained (%v .. %v)", rel, m[1], before, after)
	}
	n.both("", nil, "sinfo", "-p", "debug")
	n.both("", nil, "sinfo", "-N", "-l", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")
	// Several nodes by a host list.
	// (Alone: the real n2 and n3 have no slurmd, so their state, which
	// sinfo sorts by, is not n1's.)
	n.both("", nil, "scontrol", "update", "NodeName=n[2-3]", "State=DRAIN", "Reason=maint")
	n.both("", nil, "sinfo", "-R", "-n", "n[2-3]")

	// A job for the one-node partition waits, with slurmctld's reason
	// once its scheduler has looked at it.
	n.both("", nil, "sbatch", "-p", "debug", "-o", "/dev/null", "--wrap", "sleep 1")
	n.until("blocked by the drained node", 3*time.Minute,
		func(out string) bool { return strings.Contains(out, "Nodes required for job are DOWN, DRAINED") },
		"squeue", "-h", "-j", "J1", "-o", "%r")
	n.both("", nil, "squeue", "-p", "debug")
	n.both("", func(s string) string { return keepLines(s, "JobState=") }, "scontrol", "show", "job", "J1")
	// One asking for the drained node by name, in a partition with
	// others.
	n.both("", nil, "sbatch", "-p", "cpu", "-w", "n1", "-o", "/dev/null", "--wrap", "sleep 1")
	n.until("pending", time.Minute, jobStateIs("PENDING"), "scontrol", "show", "job", "J2")
	n.both("", nil, "squeue", "-j", "J2")

	// Resumed, the node takes it.
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=RESUME")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.until("completed", 2*time.Minute, jobStateIs("COMPLETED"), "scontrol", "show", "job", "J1")
	n.until("completed", 2*time.Minute, jobStateIs("COMPLETED"), "scontrol", "show", "job", "J2")
	n.both("", nil, "sinfo", "-R", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")

	// FAIL, UNDRAIN and IDLE.
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=FAIL", "Reason=flaky")
	n.both("", nil, "sinfo", "-p", "debug")
	n.both("", nil, "sinfo", "-R", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=UNDRAIN")
	n.both("", nil, "sinfo", "-R", "-n", "n1")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=IDLE")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=again")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=UNDRAIN")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.both("", nil, "sinfo", "-R", "-n", "n1")
	// Back in service, the reason goes at once here, as slurmctld with
	// accounting (accounting_storage/slurmdbd, as this server presents
	// itself) clears it (clusteracct_storage_g_node_up); the real one
	// here has none and keeps it until a job is allocated on the node
	// (make_node_alloc), which the jobs below do.
	n.both("", func(s string) string { return keepLines(s, "   State=") }, "scontrol", "show", "node", "n1")
	if out := ours(); strings.Contains(out, "Reason=") {
		t.Errorf("%s: n1 back in service keeps its reason:\n%s", rel, out)
	}

	// Drained with a job running: draining, then drained once it ends.
	n.both("", nil, "sbatch", "-p", "debug", "-o", "/dev/null", "--wrap", "sleep 15")
	n.until("running", time.Minute, jobStateIs("RUNNING"), "scontrol", "show", "job", "J3")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=drain while busy")
	n.both("", nil, "sinfo", "-p", "debug")
	n.both("", nil, "sinfo", "-N", "-l", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")
	n.both("", nil, "squeue", "-p", "debug", "-h", "-o", "%i %T")
	n.until("completed", 2*time.Minute, jobStateIs("COMPLETED"), "scontrol", "show", "job", "J3")
	n.until("drained", time.Minute, trimmedIs("drain"), state("debug")...)
	n.both("", nil, "sinfo", "-N", "-l", "-n", "n1")

	// DOWN with jobs running: the one that may be requeued waits again
	// (BeginTime), the one that may not ends NODE_FAIL.
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=RESUME")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.both("", nil, "sbatch", "-p", "debug", "-o", "/dev/null", "--wrap", "sleep 60")
	n.both("", nil, "sbatch", "-p", "debug", "--no-requeue", "-o", "/dev/null", "--wrap", "sleep 60")
	n.until("running", time.Minute, jobStateIs("RUNNING"), "scontrol", "show", "job", "J4")
	n.until("running", time.Minute, jobStateIs("RUNNING"), "scontrol", "show", "job", "J5")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=DOWN", "Reason=hw fault")
	n.until("requeued", time.Minute, jobStateIs("PENDING"), "scontrol", "show", "job", "J4")
	// Up to 24.05 the killed batch script's status is the job's exit
	// code (24.11+ say 1 at once).
	n.until("ended", time.Minute, func(out string) bool { return !strings.Contains(out, "ExitCode=0:0") }, "scontrol", "show", "job", "J5")
	n.both("", nil, "squeue", "-p", "debug")
	jobLines := func(s string) string { return keepLines(s, "JobState=", "Restarts=") }
	n.both("", jobLines, "scontrol", "show", "job", "J4")
	n.both("", jobLines, "scontrol", "show", "job", "J5")
	n.both("", nil, "sinfo", "-p", "debug")
	n.both("", nil, "sinfo", "-R", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")

	// The state survives a restart of our server, as slurmctld's node
	// state file keeps it: the same reason, user and time.
	our := n.sides[1]
	keep := our.r.mustRun(rel, "sinfo", "-R", "-n", "n[1-3]")
	keepNode := nodeLines(our.r.mustRun(rel, "scontrol", "show", "node", "n1"))
	f.stop()
	f.start()
	if got := our.r.mustRun(rel, "sinfo", "-R", "-n", "n[1-3]"); got != keep {
		t.Errorf("%s: sinfo -R after a restart:\n%s\nbefore:\n%s", rel, got, keep)
	}
	if got := nodeLines(our.r.mustRun(rel, "scontrol", "show", "node", "n1")); got != keepNode {
		t.Errorf("%s: scontrol show node n1 after a restart:\n%s\nbefore:\n%s", rel, got, keepNode)
	}
	if got := our.r.mustRun(rel, state("debug")...); strings.TrimSpace(got) != "down" {
		t.Errorf("%s: n1 after a restart: %q, want down", rel, got)
	}
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=RESUME")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.both("", nil, "sinfo", "-R", "-n", "n1")
}

// On Backend.AI a drain is the agent's schedulable flag: scontrol update
// State=DRAIN takes the agent out of the manager's scheduling (running
// sessions stay), RESUME takes it back, and an agent made unschedulable
// in Backend.AI itself shows as drained and is taken back by a resume.
func TestBackendAINodeAdmin(t *testing.T) {
	d, f := baiFrontend(t, nil, "")
	dir := workDir(t, "bai-nodeadmin-")
	r := f.as(t).in(dir)
	const rel = "24.11"
	schedulable := func(id string) bool {
		on, ok := d.AgentSchedulable(id)
		if !ok {
			t.Fatalf("no agent %s in the double", id)
		}
		return on
	}
	r.mustRun(rel, "scontrol", "update", "NodeName=i-agent0000", "State=DRAIN", "Reason=gpu swap")
	if schedulable("i-agent0000") || !schedulable("i-agent0001") {
		t.Fatalf("after draining i-agent0000: schedulable %v %v", schedulable("i-agent0000"), schedulable("i-agent0001"))
	}
	if out := r.mustRun(rel, "sinfo", "-R", "-h", "-o", "%E|%u|%N"); out != "gpu swap|root|i-agent0000\n" {
		t.Errorf("sinfo -R: %q", out)
	}
	if out := r.mustRun(rel, "sinfo", "-h", "-N", "-o", "%N %t"); out != "i-agent0000 drain\ni-agent0001 idle\n" {
		t.Errorf("sinfo -N: %q", out)
	}
	// A job goes to the other agent; with both drained the next waits.
	id1 := atoi(submittedRe.FindStringSubmatch(r.mustRun(rel, "sbatch", "-o", "/dev/null", "--mem=2G", "--wrap", "sleep 300"))[1])
	waitRows(t, f, dir, time.Minute, func(rows map[int]jobRow) bool { return rows[id1].state == "RUNNING" })
	if out := r.mustRun(rel, "squeue", "-h", "-j", fmt.Sprint(id1), "-o", "%N"); out != "i-agent0001\n" {
		t.Errorf("the job ran on %q, want i-agent0001", out)
	}
	r.mustRun(rel, "scontrol", "update", "NodeName=i-agent0001", "State=DRAIN", "Reason=gpu swap")
	if schedulable("i-agent0001") {
		t.Fatal("i-agent0001 still schedulable")
	}
	if out := r.mustRun(rel, "sinfo", "-h", "-N", "-o", "%N %t"); out != "i-agent0000 drain\ni-agent0001 drng\n" {
		t.Errorf("sinfo -N with a job on the drained i-agent0001: %q", out)
	}
	id2 := atoi(submittedRe.FindStringSubmatch(r.mustRun(rel, "sbatch", "-o", "/dev/null", "--mem=2G", "--wrap", "sleep 300"))[1])
	rows := waitRows(t, f, dir, time.Minute, func(rows map[int]jobRow) bool { return rows[id2].state == "PENDING" })
	if want := "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"; rows[id2].reason != want {
		t.Errorf("the job with every agent drained waits for %q, want %q", rows[id2].reason, want)
	}
	// The drain survives a restart of the server (the reason from the
	// store, the flag from the manager).
	f.stop()
	f.start()
	if out := r.mustRun(rel, "sinfo", "-R", "-h", "-o", "%E|%u|%N"); out != "gpu swap|root|i-agent[0000-0001]\n" {
		t.Errorf("sinfo -R after a restart: %q", out)
	}
	r.mustRun(rel, "scontrol", "update", "NodeName=i-agent0000", "State=RESUME")
	if !schedulable("i-agent0000") {
		t.Fatal("i-agent0000 not schedulable after RESUME")
	}
	waitRows(t, f, dir, time.Minute, func(rows map[int]jobRow) bool { return rows[id2].state == "RUNNING" })
	if out := r.mustRun(rel, "squeue", "-h", "-j", fmt.Sprint(id2), "-o", "%N"); out != "i-agent0000\n" {
		t.Errorf("the job ran on %q after the resume, want i-agent0000", out)
	}
	r.mustRun(rel, "scontrol", "update", "NodeName=i-agent0001", "State=RESUME")
	// Made unschedulable in Backend.AI: drained here (no reason), and
	// a resume takes it back.
	if err := d.SetAgentSchedulable("i-agent0001", false); err != nil {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, func() bool {
		out, _, _ := r.run(rel, "sinfo", "-h", "-n", "i-agent0001", "-o", "%t")
		return out == "drng\n"
	}) {
		t.Fatalf("an agent made unschedulable in Backend.AI is not shown drained:\n%s", r.mustRun(rel, "sinfo", "-N"))
	}
	r.mustRun(rel, "scontrol", "update", "NodeName=i-agent0001", "State=RESUME")
	if !schedulable("i-agent0001") {
		t.Fatal("i-agent0001 not schedulable after RESUME")
	}
	// Not an administrator: refused, nothing changed.
	_, errs, code := r.user("slurm").run(rel, "scontrol", "update", "NodeName=i-agent0001", "State=DRAIN", "Reason=x")
	if code != 1 || errs != "slurm_update error: Invalid user id\n" || !schedulable("i-agent0001") {
		t.Errorf("a user's drain: exit %d %q, schedulable %v", code, errs, schedulable("i-agent0001"))
	}
	r.mustRun(rel, "scancel", fmt.Sprint(id1), fmt.Sprint(id2))
}

// scontrol reconfigure reads the config file again: a partition changed
// shows at once, a running job and a step in flight carry on, a broken
// file is refused with what slurmctld 23.11+ answer and the old config
// stays.
func TestReconfigure(t *testing.T) {
	cluster := fakeCluster + "KillWait=3\n"
	f := newFrontend(t, cluster)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir := workDir(t, "reconf-")
			r := f.as(t).in(dir)
			if err := os.WriteFile(f.configPath, []byte(cluster), 0o644); err != nil {
				t.Fatal(err)
			}
			r.mustRun(rel, "scontrol", "reconfigure")
			if out := r.mustRun(rel, "sinfo", "-h", "-p", "debug", "-o", "%P %l %D"); out != "debug 1:00:00 1\n" {
				t.Fatalf("debug before: %q", out)
			}
			id := atoi(submittedRe.FindStringSubmatch(r.mustRun(rel, "sbatch", "-p", "debug", "-o", "job.out", "--wrap", "sleep 6; echo done"))[1])
			waitRows(t, f, dir, time.Minute, func(rows map[int]jobRow) bool { return rows[id].state == "RUNNING" })
			// A step in flight: srun holds its connections across the
			// reconfigure.
			step := make(chan string, 1)
			go func() {
				out, errs, code := r.within(2*time.Minute).run(rel, "srun", "-p", "cpu", "-n1", "sh", "-c", "sleep 4; echo step done")
				step <- fmt.Sprintf("exit %d: %s%s", code, out, errs)
			}()
			if !waitFor(30*time.Second, func() bool {
				out, _, _ := r.run(rel, "squeue", "-h", "-s", "-o", "%i")
				return strings.Contains(out, ".0")
			}) {
				t.Fatalf("the srun step did not start:\n%s", lastLines(f.Logs(), 20))
			}
			changed := strings.Replace(cluster, "PartitionName=debug Nodes=n1 MaxTime=60", "PartitionName=debug Nodes=n[1-2] MaxTime=30", 1) +
				"PrivateData=jobs\n"
			if err := os.WriteFile(f.configPath, []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, errs, code := r.run(rel, "scontrol", "reconfigure"); code != 0 || out != "" || errs != "" {
				t.Fatalf("scontrol reconfigure: exit %d %q %q", code, out, errs)
			}
			if out := r.mustRun(rel, "sinfo", "-h", "-p", "debug", "-o", "%P %l %D %N"); out != "debug 30:00 2 n[1-2]\n" {
				t.Errorf("debug after the reconfigure: %q", out)
			}
			if out := grepLines(r.mustRun(rel, "scontrol", "show", "config"), "PrivateData"); !strings.Contains(out, "jobs") {
				t.Errorf("scontrol show config after the reconfigure: %q", out)
			}
			if out := r.user("slurm").mustRun(rel, "squeue", "-h", "-o", "%i"); out != "" {
				t.Errorf("PrivateData=jobs: a user sees root's jobs %q", out)
			}
			// A broken file: refused, the config as it was.
			if err := os.WriteFile(f.configPath, []byte(changed+"PartitionName=bad Nodes=nosuch\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				// 22.05's slurmctld exits there ("Zero Bytes were
				// transmitted or received"); its client gets the
				// answer of the later releases.
				"22.05": "slurm_reconfigure error: Unspecified error\n",
				"24.11": "slurm_reconfigure error: Unspecified error\n",
				"26.05": "slurm_reconfigure error:Unspecified error\n",
			}[rel]
			if out, errs, code := r.run(rel, "scontrol", "reconfigure"); code != 1 || out != "" || errs != want {
				t.Errorf("scontrol reconfigure of a broken file: exit %d %q %q, want exit 1 %q", code, out, errs, want)
			}
			if out := r.mustRun(rel, "sinfo", "-h", "-o", "%P"); out != "cpu*\ngpu\ndebug\n" {
				t.Errorf("partitions after the refused reconfigure: %q", out)
			}
			if s := <-step; s != "exit 0: step done\n" {
				t.Errorf("srun across the reconfigure: %s", s)
			}
			rows := waitRows(t, f, dir, time.Minute, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
			if b, _ := os.ReadFile(filepath.Join(dir, "job.out")); string(b) != "done\n" {
				t.Errorf("the job running across the reconfigures: %v, output %q", rows[id], b)
			}
		})
	}
}

// scontrol shutdown stops the server as SIGTERM does; a running job
// outlives it and is found again, and finishes, after the next start.
func TestShutdown(t *testing.T) {
	f := newFrontend(t, fakeCluster+"KillWait=3\n")
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir := workDir(t, "shutdown-")
			r := f.as(t).in(dir)
			id := atoi(submittedRe.FindStringSubmatch(r.mustRun(rel, "sbatch", "-o", "job.out", "--wrap", "sleep 8; echo survived"))[1])
			waitRows(t, f, dir, time.Minute, func(rows map[int]jobRow) bool { return rows[id].state == "RUNNING" })
			// Not an administrator: refused (the server stays).
			if _, errs, code := r.user("slurm").run(rel, "scontrol", "shutdown"); code != 1 || !strings.Contains(errs, "Invalid user id") || !f.alive() {
				t.Fatalf("a user's shutdown: exit %d %q, server alive %v", code, errs, f.alive())
			}
			args := []string{"scontrol", "shutdown"}
			if rel == "24.11" {
				args = append(args, "slurmctld")
			}
			if out, errs, code := r.run(rel, args...); code != 0 || out != "" || errs != "" {
				t.Fatalf("%v: exit %d %q %q", args, code, out, errs)
			}
			select {
			case <-f.exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("the server did not stop:\n%s", lastLines(f.Logs(), 20))
			}
			if f.waitErr != nil {
				t.Errorf("the server ended with %v", f.waitErr)
			}
			f.cmd = nil
			f.start()
			rows := waitRows(t, f, dir, time.Minute, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
			if b, _ := os.ReadFile(filepath.Join(dir, "job.out")); string(b) != "survived\n" {
				t.Errorf("the job across the shutdown: %v, output %q", rows[id], b)
			}
		})
	}
}
