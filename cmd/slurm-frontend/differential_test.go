package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDifferential runs the same client commands, with the same release's
// stock clients, against a REAL slurmctld of that release and against our
// server, both on the fake cluster (tools/real-slurmctld.sh writes the
// same cluster as fakeCluster), and requires the same output after the
// normalization below. The real slurmctld runs without any slurmd, so its
// nodes never register: only the fields that depend on that are masked.

// mask is one normalization: every match of re in the output of a command
// of the given scope is replaced. Each entry says why that field
// legitimately differs between the two controllers.
type mask struct {
	rel   string // only for this client release ("" = all)
	scope string // "" every command; else commands whose kind is scope (see stepKind)
	re    *regexp.Regexp
	repl  string // for kind "": regexp replacement
	jobID bool   // group 1 is a job id: replaced by its submission index (J1, J2, ...)
	why   string
}

// commonMasks hide what differs between any two controllers running the
// same session: job ids (compared by submission order), times, and the
// controller's host name. TestFidelity (real slurmd registered) uses them
// alone; TestDifferential adds noSlurmdMasks.
var commonMasks = []mask{
	// --- job ids ---------------------------------------------------------
	{jobID: true, re: regexp.MustCompile(`(?m)^Submitted batch job (\d+)$`),
		why: "job ids: each controller numbers its own jobs; they are compared by submission order"},
	{scope: "sbatch", jobID: true, re: regexp.MustCompile(`(?m)^(\d+)$`),
		why: "job id printed by sbatch --parsable"},
	{scope: "squeue", jobID: true, re: regexp.MustCompile(`(?m)^\s*(\d+)\b`),
		why: "JOBID, the first column of every squeue format used here"},
	{jobID: true, re: regexp.MustCompile(`\bJobId=(\d+)`),
		why: "job id in scontrol show job"},
	{jobID: true, re: regexp.MustCompile(`/slurm-(\d+)\.out\b`),
		why: "default output file name contains the job id"},
	{jobID: true, re: regexp.MustCompile(`\b(?:job id|for job|ArrayJobId=) ?(\d+)`),
		why: "job id in client error messages (scancel, scontrol)"},
	// --- times -----------------------------------------------------------
	{re: regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`), repl: "<TIME>",
		why: "timestamps (SubmitTime, LastSchedEval, ...): the two controllers run the same steps seconds apart"},
	{re: regexp.MustCompile(`(?m)^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$`), repl: "<DATE>",
		why: "first line of sinfo -l / squeue -l: when the command ran"},
	// --- controller host name ---------------------------------------------
	{re: regexp.MustCompile(`(Slurmctld\(primary\) at )\S+( is UP)`), repl: "${1}<CTLDHOST>${2}",
		why: "controller host name: the real slurmctld replaces SlurmctldHost=localhost by this machine's name; ours is named by client-conf"},
}

// diffMasks are TestDifferential's: commonMasks plus what a real
// slurmctld whose nodes never registered shows differently.
var diffMasks = append(slices.Clip(commonMasks), noSlurmdMasks...)

var noSlurmdMasks = []mask{
	// --- node state: no slurmd ever registers with the real slurmctld -----
	{scope: "sinfo", re: regexp.MustCompile(`(?m) +(?:idle|unk|unknown|down)\*?( |$)`), repl: " <NODESTATE>${1}",
		why: "node state column: real nodes without slurmd are unk/unknown(*), later down*; ours are idle"},
	{scope: "node", re: regexp.MustCompile(`\bState=\S+`), repl: "State=<NODESTATE>",
		why: "node state: real UNKNOWN+NOT_RESPONDING (no slurmd), ours IDLE"},
	{scope: "node", re: regexp.MustCompile(`\bCPULoad=\S+`), repl: "CPULoad=<LOAD>",
		why: "CPU load is reported by slurmd: N/A or 0.00 on the real side, this host's load on ours"},
	{scope: "node", re: regexp.MustCompile(`\bFreeMem=\S+`), repl: "FreeMem=<FREEMEM>",
		why: "free memory is reported by slurmd: N/A on the real side"},
	{scope: "node", re: regexp.MustCompile(`\bBootTime=\S+`), repl: "BootTime=<BOOT>",
		why: "boot time is reported by slurmd: None on the real side"},
	{scope: "node", re: regexp.MustCompile(`\bSlurmdStartTime=\S+`), repl: "SlurmdStartTime=<SLURMDSTART>",
		why: "slurmd start time: None on the real side (no slurmd)"},
	{scope: "node", re: regexp.MustCompile(`\bLastBusyTime=\S+`), repl: "LastBusyTime=<LASTBUSY>",
		why: "set when slurmd registers the node idle: Unknown on the real side"},
	{scope: "node", re: regexp.MustCompile(`\bArch=\S+ `), repl: "",
		why: "architecture is reported by slurmd at registration: absent on the real side"},
	{scope: "node", re: regexp.MustCompile(`( NodeHostName=\S+)( Port=\d+)? Version=\S+`), repl: "${1} ",
		why: "slurmd port and version are reported at registration: absent on the real side (scontrol omits a port equal to its slurm.conf's SlurmdPort)"},
	{scope: "node", re: regexp.MustCompile(`(?m)^ +OS=.*\n`), repl: "",
		why: "operating system is reported by slurmd at registration: absent on the real side"},
	{rel: "22.05", scope: "squeue", re: regexp.MustCompile(`(?m)^( *J3 .*) [12] (\(JobHeldUser\))$`), repl: "${1} <NODES> ${2}",
		why: "22.05 estimates a pending job's node count from the CPUs of registered nodes; with none registered " +
			"(no slurmd) it divides by zero CPUs and asks 2 nodes for -n 2 -c 2, ours (nodes registered, 32 CPUs) 1"},
	{rel: "22.05", scope: "job", re: regexp.MustCompile(`\bNumNodes=[12] `), repl: "NumNodes=<NODES> ",
		why: "the same 22.05 node-count estimate in scontrol show job"},
}

// diffStep is one client command run on both sides.
type diffStep struct {
	name string                     // for messages
	user string                     // RUN_AS, "" = root
	args func(side int) []string    // the command; side 0 real, 1 ours
	jobs func(side int, out string) // records job ids printed (sbatch)
}

func stepKind(args []string) string {
	switch {
	case args[0] == "scontrol" && len(args) > 2:
		return args[2] // job, node, partition
	default:
		return args[0]
	}
}

type diffSide struct {
	rel  string // client release
	name string
	r    runner
	jobs []string // job ids in submission order
}

// label is id's name in the normalized output: J<n> for the n-th job
// submitted; an id sbatch never printed (an array task's own id) is named
// after the nearest submitted id below it, J<n>+<offset>, as both
// controllers hand out ids in sequence; J?<id> if there is none.
func (d *diffSide) label(id string) string {
	for i, j := range d.jobs {
		if j == id {
			return "J" + strconv.Itoa(i+1)
		}
	}
	v, err := strconv.Atoi(id)
	best, bestV := -1, -1
	for i, j := range d.jobs {
		if w, err2 := strconv.Atoi(j); err == nil && err2 == nil && w < v && w > bestV {
			best, bestV = i, w
		}
	}
	if best < 0 {
		return "J?" + id
	}
	return fmt.Sprintf("J%d+%d", best+1, v-bestV)
}

// sortTies is the one normalization that is not a mask: in sinfo output,
// runs of consecutive lines with the same first field (sinfo -N: a node in
// several partitions, here n1 in cpu and debug) are put in a fixed order.
// sinfo builds each partition's rows in its own thread, so the order of
// such rows changes from run to run even against the same controller
// (seen with the real 22.05 slurmctld); sinfo's sort decides all the rest.
func sortTies(s string) string {
	ls := strings.SplitAfter(s, "\n")
	first := func(l string) string {
		f := strings.Fields(l)
		if len(f) == 0 {
			return ""
		}
		return f[0]
	}
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && first(ls[i]) != "" && first(ls[j]) == first(ls[i]) {
			j++
		}
		slices.Sort(ls[i:j])
		i = j
	}
	return strings.Join(ls, "")
}

func normalize(d *diffSide, kind, s string) string { return normalizeWith(diffMasks, d, kind, s) }

// normalizeWith applies masks (those of d's release and of the command's
// kind) to s.
func normalizeWith(masks []mask, d *diffSide, kind, s string) string {
	if kind == "sinfo" {
		s = sortTies(s)
	}
	for _, m := range masks {
		if m.scope != "" && m.scope != kind || m.rel != "" && m.rel != d.rel {
			continue
		}
		if !m.jobID {
			s = m.re.ReplaceAllString(s, m.repl)
			continue
		}
		s = m.re.ReplaceAllStringFunc(s, func(match string) string {
			sub := m.re.FindStringSubmatchIndex(match)
			return match[:sub[2]] + d.label(match[sub[2]:sub[3]]) + match[sub[3]:]
		})
	}
	return s
}

func TestDifferential(t *testing.T) {
	needRealCtld(t)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) { differential(t, rel) })
	}
}

func differential(t *testing.T, rel string) {
	real := startRealCtld(t, rel)
	f := newFrontend(t, fakeCluster)
	// Both sides run in the same directory: WorkDir and output paths agree.
	work := workDir(t, "diff-"+rel+"-")
	sides := []*diffSide{{rel: rel, name: "real slurmctld " + rel, r: real.as(t).in(work)}, {rel: rel, name: "slurm-frontend", r: f.as(t).in(work)}}

	fixed := func(args ...string) func(int) []string { return func(int) []string { return args } }
	submitted := func(side int, out string) {
		if m := regexp.MustCompile(`(?m)^(?:Submitted batch job )?(\d+)$`).FindStringSubmatch(out); m != nil {
			sides[side].jobs = append(sides[side].jobs, m[1])
		}
	}
	sbatch := func(user string, args ...string) diffStep {
		return diffStep{name: "sbatch " + strings.Join(args, " "), user: user, args: fixed(append([]string{"sbatch"}, args...)...), jobs: submitted}
	}
	steps := []diffStep{
		sbatch("", "--hold", "--wrap", "echo hi"),
		sbatch("", "--hold", "-p", "gpu", "--gres=gpu:2", "-J", "g", "--wrap", "x"),
		sbatch("", "--hold", "-p", "debug", "-t", "10", "-n", "2", "-c", "2", "--mem=1G", "-J", "named", "--wrap", "x"),
		sbatch("slurm", "--hold", "-J", "asuser", "--wrap", "x"),
		sbatch("", "--parsable", "--hold", "--wrap", "x"),
		sbatch("", "-p", "nosuch", "--wrap", "x"),
	}
	for _, q := range [][]string{
		{"sinfo"},
		{"sinfo", "-N", "-l"},
		{"sinfo", "-o", "%P %a %l %D %t %N"},
		{"squeue"},
		{"squeue", "-l"},
		{"squeue", "-o", "%i %P %j %u %T %M %l %D %R"},
		{"squeue", "-O", "JobID,Partition,Name,State"},
		{"squeue", "-t", "all"},
		{"squeue", "-u", "root"},
		{"squeue", "-u", "slurm"},
		{"scontrol", "show", "partition"},
		{"scontrol", "show", "node", "n1"},
		{"scontrol", "show", "node", "n13"},
		{"scontrol", "show", "job", "999999"},
		{"scontrol", "show", "partition", "nosuch"},
		{"scontrol", "show", "node", "nosuch"},
	} {
		steps = append(steps, diffStep{name: strings.Join(q, " "), args: fixed(q...)})
	}
	for i := range 5 {
		steps = append(steps, diffStep{name: fmt.Sprintf("scontrol show job J%d", i+1), args: func(side int) []string {
			id := "missing"
			if i < len(sides[side].jobs) {
				id = sides[side].jobs[i]
			}
			return []string{"scontrol", "show", "job", id}
		}})
	}

	differ := 0
	for _, st := range steps {
		var text [2]string
		for i, d := range sides {
			r := d.r
			if st.user != "" {
				r = r.user(st.user)
			}
			args := st.args(i)
			out, errs, code := r.run(rel, args...)
			if st.jobs != nil {
				st.jobs(i, out)
			}
			kind := stepKind(args)
			text[i] = fmt.Sprintf("$ %s\n[exit %d]\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code,
				normalize(d, kind, out), normalize(d, kind, errs))
		}
		if text[0] != text[1] {
			differ++
			t.Errorf("%s %s: output differs (-%s +%s):\n%s", rel, st.name, sides[0].name, sides[1].name, unifiedDiff(t, text[0], text[1]))
		}
	}
	if differ > 0 {
		t.Logf("%d of %d commands differ", differ, len(steps))
	}
}

// unifiedDiff returns diff -u of a and b (changed lines with context).
func unifiedDiff(t testing.TB, a, b string) string {
	t.Helper()
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "real"), filepath.Join(dir, "ours")
	if err := os.WriteFile(pa, []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("diff", "-U", "2", "--label", "real", "--label", "ours", pa, pb).Output()
	if err != nil && len(out) == 0 {
		return fmt.Sprintf("(diff failed: %v)\n--- real\n%s\n+++ ours\n%s", err, a, b)
	}
	return string(out)
}

// TestNormalize keeps the masks honest: they hide only what they are for.
func TestNormalize(t *testing.T) {
	d := &diffSide{jobs: []string{"7", "8"}}
	cases := []struct{ kind, in, want string }{
		{"sbatch", "Submitted batch job 8\n", "Submitted batch job J2\n"},
		{"sbatch", "7\n", "J1\n"},
		{"squeue", "                 7       cpu     wrap     root PD       0:00      1 (JobHeldUser)\n",
			"                 J1       cpu     wrap     root PD       0:00      1 (JobHeldUser)\n"},
		{"job", "JobId=8 JobName=g\n   StdOut=/srv/x/slurm-8.out\n   NumNodes=1 NumCPUs=4\n", "JobId=J2 JobName=g\n   StdOut=/srv/x/slurm-J2.out\n   NumNodes=1 NumCPUs=4\n"},
		{"job", "JobId=9\n", "JobId=J2+1\n"},
		{"job", "JobId=6\n", "JobId=J?6\n"},
		// Masks stay in their scope: State= of a partition, NODES counts.
		{"partition", "   State=UP TotalCPUs=384\n", "   State=UP TotalCPUs=384\n"},
		{"node", "   State=UNKNOWN+NOT_RESPONDING ThreadsPerCore=1\n", "   State=<NODESTATE> ThreadsPerCore=1\n"},
		{"node", "   NodeAddr=127.0.0.1 NodeHostName=n1 Port=6818 Version=24.11.5\n", "   NodeAddr=127.0.0.1 NodeHostName=n1 \n"},
		{"node", "   NodeAddr=127.0.0.1 NodeHostName=n1 Version=24.11.5\n", "   NodeAddr=127.0.0.1 NodeHostName=n1 \n"},
		{"node", "   OS=Linux 6.1 \n   RealMemory=1\n", "   RealMemory=1\n"},
		{"job", "   NumNodes=2 NumCPUs=4\n", "   NumNodes=2 NumCPUs=4\n"}, // the 22.05-only mask stays out of other releases
		{"sinfo", "cpu*         up   infinite     12    unk n[1-12]\n", "cpu*         up   infinite     12 <NODESTATE> n[1-12]\n"},
		{"sinfo", "cpu* up infinite 12 unk* n[1-12]\n", "cpu* up infinite 12 <NODESTATE> n[1-12]\n"},
		{"sinfo", "n1             1      cpu*    unknown* 32     2:16:1 128000\n", "n1             1      cpu* <NODESTATE> 32     2:16:1 128000\n"},
		{"sinfo", "n1             1      cpu*        idle 32     2:16:1 128000\n", "n1             1      cpu* <NODESTATE> 32     2:16:1 128000\n"},
		{"squeue", "Mon Nov 30 19:16:47 2026\n", "<DATE>\n"},
		{"job", "   SubmitTime=2026-11-30T19:16:53 EligibleTime=Unknown\n", "   SubmitTime=<TIME> EligibleTime=Unknown\n"},
		{"config", "Slurmctld(primary) at vm is UP\n", "Slurmctld(primary) at <CTLDHOST> is UP\n"},
		{"sinfo", "n1 1 debug idle\nn1 1 cpu* idle\nn2 1 cpu* idle\n", "n1 1 cpu* <NODESTATE>\nn1 1 debug <NODESTATE>\nn2 1 cpu* <NODESTATE>\n"},
		{"sinfo", "n2 1 cpu* idle\nn1 1 cpu* idle\n", "n2 1 cpu* <NODESTATE>\nn1 1 cpu* <NODESTATE>\n"},
	}
	for _, c := range cases {
		if got := normalize(d, c.kind, c.in); got != c.want {
			t.Errorf("normalize(%s, %q) = %q, want %q", c.kind, c.in, got, c.want)
		}
	}
}
