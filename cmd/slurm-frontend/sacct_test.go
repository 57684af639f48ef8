package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sacct against the slurmdbd stand-in, with the stock clients of each
// release: the history of a small workload (a job that completes, one
// that fails, one cancelled while held, an array, a job with an srun
// step), in the formats users and pipelines read, kept across a restart.
func TestSacct(t *testing.T) {
	f := newFrontend(t, batchCluster)
	dir, ru := slurmDir(t, f, "sacct-")
	id := func(out string) int {
		m := regexp.MustCompile(`(\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no job id in %q", out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	ok := id(ru.mustRun("24.11", "sbatch", "-J", "okjob", "-o", "/dev/null", "--wrap", "true"))
	fail := id(ru.mustRun("24.11", "sbatch", "-J", "failjob", "-o", "/dev/null", "--wrap", "exit 3"))
	held := id(ru.mustRun("24.11", "sbatch", "--hold", "-J", "heldjob", "-o", "/dev/null", "--wrap", "true"))
	arr := id(ru.mustRun("24.11", "sbatch", "-J", "arrjob", "-o", "/dev/null", "--array=1-3", "--wrap", "exit $SLURM_ARRAY_TASK_ID"))
	ru.mustRun("24.11", "scancel", strconv.Itoa(held))
	ru.mustRun("24.11", "srun", "-J", "stepjob", "-n", "2", "true")
	waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool {
		for _, r := range rows {
			if r.state == "PENDING" || r.state == "RUNNING" || r.state == "COMPLETING" {
				return false
			}
		}
		return true
	})
	step := arr + 3 // the srun's job: after the array's tasks
	window := []string{"-S", time.Now().Add(-time.Hour).Format("2006-01-02T15:04:05"), "-E", "now"}

	parsable := func(rel string, args ...string) []string {
		out := ru.mustRun(rel, append([]string{"sacct", "--parsable2", "-n"}, args...)...)
		return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	var before string
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			// -X: the jobs alone. Not the held one: it never became
			// eligible, and a window keeps eligible jobs only (it shows
			// with -s CA below, as with slurmdbd).
			want := []string{
				fmt.Sprintf("%d|okjob|cpu||1|COMPLETED|0:0", ok),
				fmt.Sprintf("%d|failjob|cpu||1|FAILED|3:0", fail),
				fmt.Sprintf("%d_1|arrjob|cpu||1|FAILED|1:0", arr),
				fmt.Sprintf("%d_2|arrjob|cpu||1|FAILED|2:0", arr),
				fmt.Sprintf("%d_3|arrjob|cpu||1|FAILED|3:0", arr),
				fmt.Sprintf("%d|stepjob|cpu||2|COMPLETED|0:0", step),
			}
			// (sacct orders by submit second, then array: compare as sets.)
			if got := parsable(rel, append([]string{"-X"}, window...)...); !sameSet(got, want) {
				t.Errorf("sacct --parsable2 -n -X:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The default columns, steps included; the held job never
			// became eligible, so the default window leaves it out.
			out := ru.mustRun(rel, "sacct")
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) < 2 || !regexp.MustCompile(`^JobID +JobName +Partition +Account +AllocCPUS +State +ExitCode $`).MatchString(lines[0]) {
				t.Fatalf("sacct: %q", out)
			}
			for _, re := range []string{
				fmt.Sprintf(`(?m)^%d +okjob +cpu +1 +COMPLETED +0:0 $`, ok),
				fmt.Sprintf(`(?m)^%d\.batch +batch +1 +COMPLETED +0:0 $`, ok),
				fmt.Sprintf(`(?m)^%d\.batch +batch +1 +FAILED +3:0 $`, fail),
				fmt.Sprintf(`(?m)^%d\.0 +stepjob +2 +COMPLETED +0:0 $`, step),
			} {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("sacct: no line %s in\n%s", re, out)
				}
			}
			if strings.Contains(out, "heldjob") {
				t.Errorf("sacct lists the never-eligible held job:\n%s", out)
			}
			// The column list.
			out = ru.mustRun(rel, append([]string{"sacct", "-X", "-o", "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,Elapsed,Start,End"}, window...)...)
			if !regexp.MustCompile(`(?m)^JobID +JobName +Partition +Account +AllocCPUS +State +ExitCode +Elapsed +Start +End $`).MatchString(out) ||
				!regexp.MustCompile(fmt.Sprintf(`(?m)^%d +failjob +cpu +1 +FAILED +3:0 +00:00:0\d +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d +\d{4}-\d\d-\d\dT`, fail)).MatchString(out) {
				t.Errorf("sacct -o ...:\n%s", out)
			}
			// -j of an array: its tasks and their batch steps.
			got := parsable(rel, "-j", strconv.Itoa(arr), "-o", "JobID,State")
			want = []string{}
			for i := 1; i <= 3; i++ {
				want = append(want, fmt.Sprintf("%d_%d|FAILED", arr, i), fmt.Sprintf("%d_%d.batch|FAILED", arr, i))
			}
			if !sameSet(got, want) || got[1] != fmt.Sprintf("%d_1.batch|FAILED", arr) {
				t.Errorf("sacct -j %d: %q, want %q", arr, got, want)
			}
			// -j of a job with a step.
			if got := parsable(rel, "-j", strconv.Itoa(step), "-o", "JobID,JobName,NTasks,State"); len(got) != 2 || got[1] != fmt.Sprintf("%d.0|stepjob|2|COMPLETED", step) {
				t.Errorf("sacct -j %d: %q", step, got)
			}
			// -s: the jobs that ended in the window in those states.
			if got := parsable(rel, append([]string{"-X", "-s", "CA", "-o", "JobID"}, window...)...); strings.Join(got, ",") != strconv.Itoa(held) {
				t.Errorf("sacct -s CA: %q", got)
			}
			got = parsable(rel, append([]string{"-X", "-s", "F,CD", "-o", "JobID"}, window...)...)
			if len(got) != 6 || slicesContain(got, strconv.Itoa(held)) {
				t.Errorf("sacct -s F,CD: %q", got)
			}
			// --name.
			if got := parsable(rel, append([]string{"-X", "--name", "failjob,okjob", "-o", "JobName"}, window...)...); !sameSet(got, []string{"okjob", "failjob"}) {
				t.Errorf("sacct --name: %q", got)
			}
		})
		if rel == "24.11" {
			before = ru.mustRun(rel, append([]string{"sacct", "-o", "JobID,JobName,State,ExitCode,Start,End"}, window...)...)
		}
	}
	// Across a restart, unchanged.
	f.stop()
	f.start()
	if after := ru.mustRun("24.11", append([]string{"sacct", "-o", "JobID,JobName,State,ExitCode,Start,End"}, window...)...); after != before {
		t.Errorf("sacct after a restart:\n%s\nbefore:\n%s", after, before)
	}
	// Another user sees them all (no PrivateData; the held job was never
	// eligible, so the window leaves it out)...
	if out := f.as(t).in(dir).user("nobody").mustRun("26.05", append([]string{"sacct", "-X", "-a", "-n", "-o", "JobID"}, window...)...); strings.Count(out, "\n") != 6 {
		t.Errorf("sacct -a as nobody: %q", out)
	}
	// ...unless PrivateData=jobs hides them.
	g := newFrontend(t, batchCluster+"PrivateData=jobs\n")
	gdir, gru := slurmDir(t, g, "sacct-private-")
	gru.mustRun("24.11", "srun", "true")
	if out := g.as(t).in(gdir).user("nobody").mustRun("24.11", append([]string{"sacct", "-X", "-a", "-n", "-o", "JobID"}, window...)...); out != "" {
		t.Errorf("sacct -a as nobody with PrivateData=jobs: %q", out)
	}
	if out := gru.mustRun("24.11", append([]string{"sacct", "-X", "-a", "-n", "-o", "JobID"}, window...)...); strings.TrimSpace(out) != "1" {
		t.Errorf("sacct -a as the job's owner with PrivateData=jobs: %q", out)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		if m[x]--; m[x] < 0 {
			return false
		}
	}
	return true
}

func slicesContain(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// On Backend.AI: the history of jobs whose sessions ended (and that the
// manager then forgets) is the frontend's own, so sacct shows them, with
// their batch steps, across a restart of the frontend.
func TestBackendAISacct(t *testing.T) {
	// MinJobAge=2: the controller forgets the jobs soon after their end.
	d, f := baiFrontend(t, nil, "MinJobAge=2\n")
	dir, r := slurmDir(t, f, "bai-sacct-")
	ok := sbatchID(t, r, "24.11", "-J", "baiok", "--mem=2G", "-o", "/dev/null", "--wrap", "true")
	bad := sbatchID(t, r, "24.11", "-J", "baibad", "--mem=2G", "-o", "/dev/null", "--wrap", "exit 4")
	waitRows(t, f, dir, 90*time.Second, func(rows map[int]jobRow) bool {
		return rows[ok].state == "COMPLETED" && rows[bad].state == "FAILED"
	})
	// The manager purges the sessions, the controller forgets the jobs,
	// the server restarts: the history stays.
	if n := d.PurgeTerminated(); n != 2 {
		t.Fatalf("the double purged %d sessions, want 2", n)
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if out, _, _ := r.run("24.11", "squeue", "-h", "-t", "all"); strings.TrimSpace(out) == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the controller still lists the jobs past MinJobAge")
		}
	}
	f.stop()
	f.start()
	for _, rel := range releases {
		out := r.mustRun(rel, "sacct", "--parsable2", "-n", "-o", "JobID,JobName,State,ExitCode", "-j", fmt.Sprintf("%d,%d", ok, bad))
		want := fmt.Sprintf("%d|baiok|COMPLETED|0:0\n%d.batch|batch|COMPLETED|0:0\n%d|baibad|FAILED|4:0\n%d.batch|batch|FAILED|4:0\n", ok, ok, bad, bad)
		if out != want {
			t.Errorf("%s sacct -j on Backend.AI:\n%s\nwant\n%s", rel, out, want)
		}
	}
}

// A step's CPU time and peak memory, measured by the embedded engine
// (the task's rusage): sacct's TotalCPU, UserCPU, MaxRSS, MaxRSSTask. A
// peak the engine cannot tell from its own launcher's is left out, never
// reported wrong.
func TestSacctUsage(t *testing.T) {
	f := newFrontend(t, batchCluster)
	_, ru := slurmDir(t, f, "sacct-usage-")
	ru.mustRun("24.11", "srun", "-J", "big", "python3", "-c", "b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096]); sum(range(10**6))")
	ru.mustRun("24.11", "srun", "-J", "small", "true")
	for _, rel := range releases {
		out := ru.mustRun(rel, "sacct", "--parsable2", "-n", "-S", "now-1hours", "-E", "now", "-o", "JobName,MaxRSS,MaxRSSTask,UserCPU,TotalCPU")
		var big, small string
		for _, l := range strings.Split(out, "\n") {
			f := strings.Split(l, "|")
			if len(f) < 5 || f[1] == "" && f[0] != "small" {
				continue
			}
			switch {
			case f[0] == "big" && f[1] != "":
				big = l
			case f[0] == "small" && f[4] != "":
				small = l
			}
		}
		m := regexp.MustCompile(`^big\|(\d+)K\|0\|(\d\d:\d\d\.\d\d\d)\|(\d\d:\d\d\.\d\d\d)$`).FindStringSubmatch(big)
		if m == nil {
			t.Errorf("%s: the big step's usage %q in\n%s", rel, big, out)
			continue
		}
		if kb, _ := strconv.Atoi(m[1]); kb < 200<<10 || kb > 400<<10 {
			t.Errorf("%s: MaxRSS %d KiB for a task of 200 MiB", rel, kb)
		}
		if m[3] == "00:00.000" {
			t.Errorf("%s: no CPU time: %q", rel, big)
		}
		if !strings.HasPrefix(small, "small||") {
			t.Errorf("%s: the small step's line %q: want its MaxRSS left out", rel, small)
		}
	}
}
