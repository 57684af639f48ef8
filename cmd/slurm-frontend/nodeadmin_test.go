package main

import (
	"fmt"
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
		a := make([]string, len(args))
		for k, s := range args {
			a[k] = regexp.MustCompile(`\bJ(\d+)\b`).ReplaceAllStringFunc(s, func(m string) string {
				var x int
				fmt.Sscanf(m[1:], "%d", &x)
				return d.job(x)
			})
		}
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
		a := make([]string, len(args))
		for k, s := range args {
			a[k] = regexp.MustCompile(`\bJ(\d+)\b`).ReplaceAllStringFunc(s, func(m string) string {
				var x int
				fmt.Sscanf(m[1:], "%d", &x)
				return d.job(x)
			})
		}
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

	// Resumed, the node takes it.
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=RESUME")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.until("completed", 2*time.Minute, jobStateIs("COMPLETED"), "scontrol", "show", "job", "J1")
	n.both("", nil, "sinfo", "-R", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")

	// Drained with a job running: draining, then drained once it ends.
	n.both("", nil, "sbatch", "-p", "debug", "-o", "/dev/null", "--wrap", "sleep 15")
	n.until("running", time.Minute, jobStateIs("RUNNING"), "scontrol", "show", "job", "J2")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=drain while busy")
	n.both("", nil, "sinfo", "-p", "debug")
	n.both("", nil, "sinfo", "-N", "-l", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")
	n.both("", nil, "squeue", "-p", "debug", "-h", "-o", "%i %T")
	n.until("completed", 2*time.Minute, jobStateIs("COMPLETED"), "scontrol", "show", "job", "J2")
	n.until("drained", time.Minute, trimmedIs("drain"), state("debug")...)
	n.both("", nil, "sinfo", "-N", "-l", "-n", "n1")

	// DOWN with jobs running: the one that may be requeued waits again
	// (BeginTime), the one that may not ends NODE_FAIL.
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=RESUME")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.both("", nil, "sbatch", "-p", "debug", "-o", "/dev/null", "--wrap", "sleep 60")
	n.both("", nil, "sbatch", "-p", "debug", "--no-requeue", "-o", "/dev/null", "--wrap", "sleep 60")
	n.until("running", time.Minute, jobStateIs("RUNNING"), "scontrol", "show", "job", "J3")
	n.until("running", time.Minute, jobStateIs("RUNNING"), "scontrol", "show", "job", "J4")
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=DOWN", "Reason=hw fault")
	n.until("requeued", time.Minute, jobStateIs("PENDING"), "scontrol", "show", "job", "J3")
	// Up to 24.05 the killed batch script's status is the job's exit
	// code (24.11+ say 1 at once).
	n.until("ended", time.Minute, func(out string) bool { return !strings.Contains(out, "ExitCode=0:0") }, "scontrol", "show", "job", "J4")
	n.both("", nil, "squeue", "-p", "debug")
	jobLines := func(s string) string { return keepLines(s, "JobState=", "Restarts=") }
	n.both("", jobLines, "scontrol", "show", "job", "J3")
	n.both("", jobLines, "scontrol", "show", "job", "J4")
	n.both("", nil, "sinfo", "-p", "debug")
	n.both("", nil, "sinfo", "-R", "-n", "n1")
	n.both("", nodeLines, "scontrol", "show", "node", "n1")

	// The state survives a restart of our server, as slurmctld's node
	// state file keeps it: the same reason, user and time.
	ours := n.sides[1]
	keep := ours.r.mustRun(rel, "sinfo", "-R", "-n", "n[1-3]")
	keepNode := nodeLines(ours.r.mustRun(rel, "scontrol", "show", "node", "n1"))
	f.stop()
	f.start()
	if got := ours.r.mustRun(rel, "sinfo", "-R", "-n", "n[1-3]"); got != keep {
		t.Errorf("%s: sinfo -R after a restart:\n%s\nbefore:\n%s", rel, got, keep)
	}
	if got := nodeLines(ours.r.mustRun(rel, "scontrol", "show", "node", "n1")); got != keepNode {
		t.Errorf("%s: scontrol show node n1 after a restart:\n%s\nbefore:\n%s", rel, got, keepNode)
	}
	if got := ours.r.mustRun(rel, state("debug")...); strings.TrimSpace(got) != "down" {
		t.Errorf("%s: n1 after a restart: %q, want down", rel, got)
	}
	n.both("", nil, "scontrol", "update", "NodeName=n1", "State=RESUME")
	n.until("idle", time.Minute, trimmedIs("idle"), state("debug")...)
	n.both("", nil, "sinfo", "-R", "-n", "n1")
}
