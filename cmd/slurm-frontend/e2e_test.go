package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2E runs the stock clients of every release against ONE server on
// the fake cluster, the releases one after the other, so each release also
// sees the jobs the others submitted. What is asserted is what a user
// reads: the values in the outputs, parsed. The expected values are those
// a real slurmctld of the same release prints for the same cluster and
// jobs (measured with tools/real-slurmctld.sh; the differential test
// compares whole outputs).

// e2eJob is a job the test submitted and what the clients must show.
type e2eJob struct {
	id          int
	rel         string // release whose sbatch submitted it
	user, group string // "root(0)"
	name, part  string
	timeLimit   string // scontrol form: UNLIMITED, 00:10:00
	sqLimit     string // squeue %l form: UNLIMITED, 10:00
	numCPUs     string
	numTasks    string
	cpusPerTask string
	minCPUsNode string
	minMem      string // MinMemoryNode
	nodes       string // squeue NODES; "" = not checked here (see differential test)
	tresPerNode string // "" = field absent
	unexpected  bool   // accepted although it should have been refused: only its id is checked
}

func (j *e2eJob) userName() string { n, _, _ := strings.Cut(j.user, "("); return n }

// squeueStateOf is a job's state and reason as squeue shows them.
func squeueStateOf(t *testing.T, f *frontend, rel, id string) (string, string) {
	t.Helper()
	out, _, _ := f.as(t).run(rel, "squeue", "-h", "-t", "all", "-j", id, "-o", "%T %r")
	st, reason, _ := strings.Cut(strings.TrimSpace(out), " ")
	return st, reason
}

// e2eServer is what the test knows about the server across releases.
type e2eServer struct {
	f       *frontend
	start   time.Time
	jobs    []*e2eJob // accepted, in submission order
	submits int       // REQUEST_SUBMIT_BATCH_JOB sent, accepted or not
	byUser  map[string]int
	lastID  int
	// failed: submissions refused as too large for their partition whose
	// record slurmctld 24.11 keeps (FAILED, BadConstraints: squeue -t all).
	failed int
}

func TestE2E(t *testing.T) {
	f := newFrontend(t, fakeCluster)
	s := &e2eServer{f: f, start: time.Now(), byUser: map[string]int{}}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) { s.release(t, rel) })
	}
}

func (s *e2eServer) release(t *testing.T, rel string) {
	f := s.f
	ctldHost := confValue(t, f.clientConf, "SlurmctldHost")
	ctldHost, _, _ = strings.Cut(ctldHost, "(")

	t.Run("scontrol ping", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "scontrol", "ping")
		want := fmt.Sprintf("Slurmctld(primary) at %s is UP\n", ctldHost)
		if out != want {
			t.Errorf("scontrol ping:\n got %q\nwant %q", out, want)
		}
	})

	t.Run("sinfo", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "sinfo")
		want := "" +
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"cpu*         up   infinite     12   idle n[1-12]\n" +
			"gpu          up   infinite      4   idle n[13-16]\n" +
			"debug        up    1:00:00      1   idle n1\n"
		if out != want {
			t.Errorf("sinfo:\n%s\nwant:\n%s", out, want)
		}
	})

	t.Run("sinfo -N -l", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "sinfo", "-N", "-l")
		tb := parseTable(t, "sinfo -N -l", splitDateLine(t, "sinfo -N -l", out, s.start, time.Now()))
		tb.wantHeader(t, "sinfo -N -l", "NODELIST", "NODES", "PARTITION", "STATE", "CPUS", "S:C:T", "MEMORY", "TMP_DISK", "WEIGHT", "AVAIL_FE", "REASON")
		want := map[string]string{}
		for i := 1; i <= 16; i++ {
			if i <= 12 {
				want[fmt.Sprintf("n%d cpu*", i)] = "1 idle 32 2:16:1 128000 0 1 (null) none"
			} else {
				want[fmt.Sprintf("n%d gpu", i)] = "1 idle 64 2:32:1 512000 0 1 (null) none"
			}
		}
		want["n1 debug"] = "1 idle 32 2:16:1 128000 0 1 (null) none"
		got := map[string]string{}
		for _, row := range tb.rows {
			key := row[0] + " " + row[2]
			if _, dup := got[key]; dup {
				t.Errorf("sinfo -N -l: %s listed twice", key)
			}
			got[key] = strings.Join(append([]string{row[1]}, row[3:]...), " ")
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("sinfo -N -l: %s: got %q, want %q", k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("sinfo -N -l: %d rows, want %d:\n%s", len(got), len(want), out)
		}
	})

	t.Run("sinfo -o", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "sinfo", "-o", "%P %a %l %D %t %N")
		want := "" +
			"PARTITION AVAIL TIMELIMIT NODES STATE NODELIST\n" +
			"cpu* up infinite 12 idle n[1-12]\n" +
			"gpu up infinite 4 idle n[13-16]\n" +
			"debug up 1:00:00 1 idle n1\n"
		if out != want {
			t.Errorf("sinfo -o:\n%s\nwant:\n%s", out, want)
		}
	})

	// Submissions. Each accepted job must get the next id.
	var mine []*e2eJob
	t.Run("sbatch", func(t *testing.T) {
		root := f.as(t)
		submit := func(r runner, who string, j *e2eJob, parsable bool, args ...string) {
			t.Helper()
			s.submits++
			s.byUser[who]++
			out, errs, code := r.run(rel, append([]string{"sbatch"}, args...)...)
			if code != 0 || errs != "" {
				t.Fatalf("sbatch %s: exit %d\nstdout:\n%s\nstderr:\n%s\nserver log:\n%s", strings.Join(args, " "), code, out, errs, f.Logs())
			}
			re := regexp.MustCompile(`^Submitted batch job (\d+)\n$`)
			if parsable {
				re = regexp.MustCompile(`^(\d+)\n$`)
			}
			m := re.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("sbatch %s: stdout %q does not match %s", strings.Join(args, " "), out, re)
			}
			id, _ := strconv.Atoi(m[1])
			if s.lastID == 0 && id != 1 || len(mine) == 0 && id <= s.lastID || len(mine) > 0 && id != s.lastID+1 {
				t.Errorf("sbatch %s: job id %d after %d (want the next id)", strings.Join(args, " "), id, s.lastID)
			}
			s.lastID = id
			j.id, j.rel = id, rel
			s.jobs = append(s.jobs, j)
			mine = append(mine, j)
		}
		plain := func() *e2eJob {
			return &e2eJob{user: "root(0)", group: "root(0)", name: "wrap", part: "cpu", timeLimit: "UNLIMITED", sqLimit: "UNLIMITED",
				numCPUs: "1", numTasks: "1", cpusPerTask: "1", minCPUsNode: "1", minMem: "0", nodes: "1"}
		}
		submit(root, "root", plain(), false, "--hold", "--wrap", "echo hi")
		submit(root, "root", plain(), true, "--parsable", "--hold", "--wrap", "x")
		named := &e2eJob{user: "root(0)", group: "root(0)", name: "named", part: "debug", timeLimit: "00:10:00", sqLimit: "10:00",
			numCPUs: "4", numTasks: "2", cpusPerTask: "2", minCPUsNode: "2", minMem: "1G"}
		submit(root, "root", named, false, "--hold", "-p", "debug", "-t", "10", "-n", "2", "-c", "2", "--mem=1G", "-J", "named", "--wrap", "x")
		gpu := plain()
		gpu.name, gpu.part, gpu.tresPerNode = "g", "gpu", "gres/gpu:2"
		if rel == "22.05" {
			gpu.tresPerNode = "gres:gpu:2" // 22.05's own spelling, as its real slurmctld shows it
		}
		submit(root, "root", gpu, false, "--hold", "-p", "gpu", "--gres=gpu:2", "-J", "g", "--wrap", "x")
		// Another user: the job must carry the submitter's identity.
		other := plain()
		other.user, other.group, other.name = "slurm(64030)", "slurm(64030)", "asuser"
		submit(root.user("slurm"), "slurm", other, false, "--hold", "-J", "asuser", "--wrap", "x")
	})

	// checkSet checks that a job table lists exactly the wanted jobs.
	checkSet := func(t *testing.T, what string, tb table, idCol int, want []*e2eJob) map[int][]string {
		t.Helper()
		got := map[int][]string{}
		for _, row := range tb.rows {
			id, err := strconv.Atoi(row[idCol])
			if err != nil {
				t.Errorf("%s: bad job id %q", what, row[idCol])
				continue
			}
			if _, dup := got[id]; dup {
				t.Errorf("%s: job %d listed twice", what, id)
			}
			got[id] = row
		}
		var gotIDs, wantIDs []int
		for id := range got {
			gotIDs = append(gotIDs, id)
		}
		for _, j := range want {
			wantIDs = append(wantIDs, j.id)
		}
		sort.Ints(gotIDs)
		sort.Ints(wantIDs)
		if !slices.Equal(gotIDs, wantIDs) {
			t.Errorf("%s: jobs %v, want %v", what, gotIDs, wantIDs)
		}
		return got
	}
	trunc := func(s string, n int) string {
		if len(s) > n {
			return s[:n]
		}
		return s
	}

	t.Run("squeue", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "squeue")
		tb := parseTable(t, "squeue", out)
		tb.wantHeader(t, "squeue", "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)")
		got := checkSet(t, "squeue", tb, 0, s.jobs)
		for _, j := range s.jobs {
			row := got[j.id]
			if row == nil || j.unexpected {
				continue
			}
			want := []string{strconv.Itoa(j.id), j.part, trunc(j.name, 8), trunc(j.userName(), 8), "PD", "0:00", row[6], "(JobHeldUser)"}
			if j.nodes != "" {
				want[6] = j.nodes
			}
			if !slices.Equal(row, want) {
				t.Errorf("squeue: job %d: %v, want %v", j.id, row, want)
			}
		}
	})

	t.Run("squeue -l", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "squeue", "-l")
		tb := parseTable(t, "squeue -l", splitDateLine(t, "squeue -l", out, s.start, time.Now()))
		tb.wantHeader(t, "squeue -l", "JOBID", "PARTITION", "NAME", "USER", "STATE", "TIME", "TIME_LIMI", "NODES", "NODELIST(REASON)")
		got := checkSet(t, "squeue -l", tb, 0, s.jobs)
		for _, j := range s.jobs {
			row := got[j.id]
			if row == nil || j.unexpected {
				continue
			}
			want := []string{strconv.Itoa(j.id), j.part, trunc(j.name, 8), trunc(j.userName(), 8), "PENDING", "0:00", j.sqLimit, row[7], "(JobHeldUser)"}
			if j.nodes != "" {
				want[7] = j.nodes
			}
			if !slices.Equal(row, want) {
				t.Errorf("squeue -l: job %d: %v, want %v", j.id, row, want)
			}
		}
	})

	t.Run("squeue -o", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "squeue", "-o", "%i %P %j %u %T %M %l %D %R")
		tb := parseTable(t, "squeue -o", out)
		tb.wantHeader(t, "squeue -o", "JOBID", "PARTITION", "NAME", "USER", "STATE", "TIME", "TIME_LIMIT", "NODES", "NODELIST(REASON)")
		got := checkSet(t, "squeue -o", tb, 0, s.jobs)
		for _, j := range s.jobs {
			row := got[j.id]
			if row == nil || j.unexpected {
				continue
			}
			want := []string{strconv.Itoa(j.id), j.part, j.name, j.userName(), "PENDING", "0:00", j.sqLimit, row[7], "(JobHeldUser)"}
			if j.nodes != "" {
				want[7] = j.nodes
			}
			if !slices.Equal(row, want) {
				t.Errorf("squeue -o: job %d: %v, want %v", j.id, row, want)
			}
		}
	})

	t.Run("squeue -O", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "squeue", "-O", "JobID,Partition,Name,State")
		tb := parseTable(t, "squeue -O", out)
		tb.wantHeader(t, "squeue -O", "JOBID", "PARTITION", "NAME", "STATE")
		got := checkSet(t, "squeue -O", tb, 0, s.jobs)
		for _, j := range s.jobs {
			if row := got[j.id]; row != nil && !j.unexpected {
				if want := []string{strconv.Itoa(j.id), j.part, j.name, "PENDING"}; !slices.Equal(row, want) {
					t.Errorf("squeue -O: job %d: %v, want %v", j.id, row, want)
				}
			}
		}
	})

	t.Run("squeue -t all", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "squeue", "-t", "all")
		tb := parseTable(t, "squeue -t all", out)
		tb.wantHeader(t, "squeue -t all", "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)")
		// The records of submissions too large for their partition
		// (24.11): FAILED, BadConstraints, listed with the others.
		rows, failed := tb.rows[:0], 0
		for _, row := range tb.rows {
			if len(row) >= 8 && row[4] == "F" && row[len(row)-1] == "(BadConstraints)" {
				failed++
				continue
			}
			rows = append(rows, row)
		}
		tb.rows = rows
		if failed != s.failed {
			t.Errorf("squeue -t all: %d BadConstraints records, want %d", failed, s.failed)
		}
		checkSet(t, "squeue -t all", tb, 0, s.jobs)
	})

	t.Run("squeue -u", func(t *testing.T) {
		for _, u := range []string{"root", "slurm", "nobody"} {
			out := f.as(t).mustRun(rel, "squeue", "-u", u)
			tb := parseTable(t, "squeue -u "+u, out)
			tb.wantHeader(t, "squeue -u "+u, "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)")
			var want []*e2eJob
			for _, j := range s.jobs {
				if j.userName() == u || j.unexpected && u == "root" {
					want = append(want, j)
				}
			}
			got := checkSet(t, "squeue -u "+u, tb, 0, want)
			for id, row := range got {
				if row[3] != u {
					t.Errorf("squeue -u %s: job %d has user %s", u, id, row[3])
				}
			}
		}
	})

	t.Run("scontrol show job", func(t *testing.T) {
		r := f.as(t)
		for _, j := range mine {
			out := r.mustRun(rel, "scontrol", "show", "job", strconv.Itoa(j.id))
			recs := records(out)
			if len(recs) != 1 {
				t.Errorf("scontrol show job %d: %d records:\n%s", j.id, len(recs), out)
				continue
			}
			kv := parseKV(recs[0])
			want := map[string]string{
				"JobId": strconv.Itoa(j.id), "JobName": j.name, "UserId": j.user, "GroupId": j.group,
				"JobState": "PENDING", "Reason": "JobHeldUser", "Partition": j.part, "TimeLimit": j.timeLimit,
				"NumCPUs": j.numCPUs, "NumTasks": j.numTasks, "CPUs/Task": j.cpusPerTask,
				"MinCPUsNode": j.minCPUsNode, "MinMemoryNode": j.minMem, "BatchFlag": "1", "Priority": "0",
				"RunTime": "00:00:00", "NodeList": "", "ExitCode": "0:0",
				"WorkDir": f.dir, "StdOut": filepath.Join(f.dir, fmt.Sprintf("slurm-%d.out", j.id)),
			}
			for k, v := range want {
				if got, ok := kv[k]; !ok || got != v {
					t.Errorf("scontrol show job %d: %s=%q (present %v), want %q", j.id, k, got, ok, v)
				}
			}
			if got, ok := kv["TresPerNode"]; j.tresPerNode != "" && got != j.tresPerNode || j.tresPerNode == "" && ok {
				t.Errorf("scontrol show job %d: TresPerNode=%q (present %v), want %q", j.id, got, ok, j.tresPerNode)
			}
			// Memory shows in the TRES line (TRES= in 22.05, ReqTRES= later).
			tres := kv["ReqTRES"]
			if rel == "22.05" {
				tres = kv["TRES"]
			}
			if !strings.HasPrefix(tres, "cpu="+j.numCPUs+",") || j.minMem != "0" && !strings.Contains(tres, ",mem="+j.minMem+",") {
				t.Errorf("scontrol show job %d: TRES %q does not say cpu=%s, mem=%s", j.id, tres, j.numCPUs, j.minMem)
			}
			sub, err := time.ParseInLocation("2006-01-02T15:04:05", kv["SubmitTime"], time.Local)
			if err != nil || sub.Before(s.start.Truncate(time.Second)) || sub.After(time.Now().Add(time.Second)) {
				t.Errorf("scontrol show job %d: SubmitTime=%q not in the test window (%v)", j.id, kv["SubmitTime"], err)
			}
		}
		out, errs, code := r.run(rel, "scontrol", "show", "job", "999999")
		if code != 1 || out != "" || errs != "slurm_load_jobs error: Invalid job id specified\n" {
			t.Errorf("scontrol show job 999999: exit %d, stdout %q, stderr %q; want exit 1 and \"slurm_load_jobs error: Invalid job id specified\"", code, out, errs)
		}
	})

	t.Run("scontrol show partition", func(t *testing.T) {
		r := f.as(t)
		out := r.mustRun(rel, "scontrol", "show", "partition")
		recs := records(out)
		want := []map[string]string{
			{"PartitionName": "cpu", "Nodes": "n[1-12]", "Default": "YES", "MaxTime": "UNLIMITED", "State": "UP",
				"TotalCPUs": "384", "TotalNodes": "12", "TRES": "cpu=384,mem=1500G,node=12,billing=384", "MaxNodes": "UNLIMITED"},
			{"PartitionName": "gpu", "Nodes": "n[13-16]", "Default": "NO", "MaxTime": "UNLIMITED", "State": "UP",
				"TotalCPUs": "256", "TotalNodes": "4", "TRES": "cpu=256,mem=2000G,node=4,billing=256", "MaxNodes": "UNLIMITED"},
			{"PartitionName": "debug", "Nodes": "n1", "Default": "NO", "MaxTime": "01:00:00", "State": "UP",
				"TotalCPUs": "32", "TotalNodes": "1", "TRES": "cpu=32,mem=125G,node=1,billing=32", "MaxNodes": "UNLIMITED"},
		}
		if len(recs) != len(want) {
			t.Fatalf("scontrol show partition: %d records, want %d:\n%s", len(recs), len(want), out)
		}
		for i, w := range want {
			kv := parseKV(recs[i])
			for k, v := range w {
				if kv[k] != v {
					t.Errorf("scontrol show partition: record %d (%s): %s=%q, want %q", i, w["PartitionName"], k, kv[k], v)
				}
			}
		}
		out, errs, code := r.run(rel, "scontrol", "show", "partition", "nosuch")
		if code != 1 || out != "Partition nosuch not found\n" && errs != "Partition nosuch not found\n" {
			t.Errorf("scontrol show partition nosuch: exit %d, stdout %q, stderr %q; want exit 1 and \"Partition nosuch not found\"", code, out, errs)
		}
	})

	t.Run("scontrol show node", func(t *testing.T) {
		r := f.as(t)
		out := r.mustRun(rel, "scontrol", "show", "node", "n13")
		recs := records(out)
		if len(recs) != 1 {
			t.Fatalf("scontrol show node n13: %d records:\n%s", len(recs), out)
		}
		kv := parseKV(recs[0])
		want := map[string]string{
			"NodeName": "n13", "CoresPerSocket": "32", "CPUAlloc": "0", "CPUEfctv": "64", "CPUTot": "64",
			"Gres": "gpu:4", "NodeAddr": "127.0.0.13", "NodeHostName": "n13", "RealMemory": "512000",
			"AllocMem": "0", "Sockets": "2", "Boards": "1", "State": "IDLE", "ThreadsPerCore": "1",
			"TmpDisk": "0", "Weight": "1", "Partitions": "gpu",
			// As a real slurmctld prints it for this slurm.conf: GRES count in
			// CfgTRES only when AccountingStorageTRES lists gres/gpu.
			"CfgTRES": "cpu=64,mem=500G,billing=64", "AllocTRES": "",
		}
		for k, v := range want {
			if got, ok := kv[k]; !ok || got != v {
				t.Errorf("scontrol show node n13: %s=%q (present %v), want %q", k, got, ok, v)
			}
		}
		out, errs, code := r.run(rel, "scontrol", "show", "node", "nosuch")
		if code != 1 || out != "Node nosuch not found\n" && errs != "Node nosuch not found\n" {
			t.Errorf("scontrol show node nosuch: exit %d, stdout %q, stderr %q; want exit 1 and \"Node nosuch not found\"", code, out, errs)
		}
	})

	t.Run("scontrol show config", func(t *testing.T) {
		out := f.as(t).mustRun(rel, "scontrol", "show", "config")
		if !strings.HasPrefix(out, "Configuration data as of ") {
			t.Errorf("scontrol show config: first line %q", strings.SplitN(out, "\n", 2)[0])
		}
		cfg := parseConfig(out)
		want := map[string]string{
			"ClusterName":          "refcluster",
			"SlurmctldHost[0]":     ctldHost + "(127.0.0.1)",
			"SlurmctldPort":        strconv.Itoa(f.port),
			"AuthType":             "auth/munge",
			"SelectType":           "select/cons_tres",
			"SelectTypeParameters": "CR_CORE_MEMORY",
			"SchedulerType":        "sched/backfill",
			"PriorityType":         "priority/basic",
			"ProctrackType":        "proctrack/linuxproc",
			"GresTypes":            "gpu",
			"ReturnToService":      "2",
			"SlurmUser":            "root(0)",
			"NEXT_JOB_ID":          strconv.Itoa(s.lastID + 1),
		}
		for k, v := range want {
			if got, ok := cfg[k]; !ok || got != v {
				t.Errorf("scontrol show config: %s = %q (present %v), want %q", k, got, ok, v)
			}
		}
		if v := cfg["SLURM_VERSION"]; !strings.HasPrefix(v, rel+".") {
			t.Errorf("scontrol show config: SLURM_VERSION = %q, want %s.x (what a %s controller says)", v, rel, rel)
		}
		last := lines(out)
		if len(last) == 0 || last[len(last)-1] != fmt.Sprintf("Slurmctld(primary) at %s is UP", ctldHost) {
			t.Errorf("scontrol show config: last line %q, want the ping line", last[len(last)-1])
		}
	})

	// Refused submissions print what a real slurmctld makes sbatch print:
	// the controller's message (RESPONSE_SLURM_RC_MSG), then the error.
	t.Run("sbatch refused", func(t *testing.T) {
		r := f.as(t)
		before := len(s.jobs)
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"-p", "nosuch", "--wrap", "x"}, "" +
				"sbatch: error: invalid partition specified: nosuch\n" +
				"sbatch: error: Batch job submission failed: Invalid partition name specified\n"},
			// Real 24.11 refuses it (and keeps its record, FAILED with
			// reason BadConstraints); real 22.05 and 26.05 accept it and
			// leave it pending (PartitionConfig), as we do for them.
			{[]string{"-c", "1000", "--wrap", "x"}, "" +
				"sbatch: error: CPU count per node can not be satisfied\n" +
				"sbatch: error: Batch job submission failed: Requested node configuration is not available\n"},
		} {
			s.submits++
			s.byUser["root"]++
			out, errs, code := r.run(rel, append([]string{"sbatch"}, c.args...)...)
			if c.args[0] == "-c" && rel != "24.11" {
				m := regexp.MustCompile(`^Submitted batch job (\d+)\n$`).FindStringSubmatch(out)
				if code != 0 || m == nil {
					t.Errorf("sbatch %s: exit %d, stdout %q, stderr %q; want it queued, as real %s does", strings.Join(c.args, " "), code, out, errs, rel)
					continue
				}
				id, _ := strconv.Atoi(m[1])
				s.lastID = max(s.lastID, id)
				s.jobs = append(s.jobs, &e2eJob{id: id, rel: rel, unexpected: true})
				if st, reason := squeueStateOf(t, f, rel, m[1]); st != "PENDING" || reason != "PartitionConfig" {
					t.Errorf("sbatch %s: job %s %s (%s), want PENDING (PartitionConfig)", strings.Join(c.args, " "), m[1], st, reason)
				}
				continue
			}
			if c.args[0] == "-c" {
				s.lastID++ // the FAILED record's id
				s.failed++
			}
			if code != 1 || out != "" || errs != c.want {
				t.Errorf("sbatch %s: exit %d, stdout %q\nstderr:\n%s\nwant exit 1 and stderr:\n%s", strings.Join(c.args, " "), code, out, errs, c.want)
			}
			if m := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(out); m != nil {
				// Accepted after all: keep the bookkeeping right for what follows.
				id, _ := strconv.Atoi(m[1])
				s.lastID = max(s.lastID, id)
				s.jobs = append(s.jobs, &e2eJob{id: id, rel: rel, unexpected: true})
			}
		}
		tb := parseTable(t, "squeue", f.as(t).mustRun(rel, "squeue"))
		if len(tb.rows) != len(s.jobs) {
			t.Errorf("after the refused submissions squeue lists %d jobs, want %d (before: %d)", len(tb.rows), len(s.jobs), before)
		}
	})

	t.Run("sdiag", func(t *testing.T) {
		out, errs, code := f.as(t).run(rel, "sdiag")
		if code != 0 || errs != "" {
			t.Fatalf("sdiag: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		for _, re := range []string{
			`(?m)^sdiag output at .* \(\d+\)$`,
			`(?m)^Data since\s+.* \(\d+\)$`,
			`(?m)^Server thread count:\s+\d+$`,
			fmt.Sprintf(`(?m)^Jobs submitted: %d$`, len(s.jobs)),
			`(?m)^Jobs started:\s+0$`,
			`(?m)^Jobs completed:\s+0$`,
			`(?m)^Jobs canceled:\s+0$`,
			`(?m)^Remote Procedure Call statistics by message type$`,
			fmt.Sprintf(`(?m)^\s+REQUEST_SUBMIT_BATCH_JOB\s+\(\s*4003\) count:%d\s+ave_time:\d+\s+total_time:\d+$`, s.submits),
			`(?m)^Remote Procedure Call statistics by user$`,
			`(?m)^\s+root\s+\(\s*0\) count:\d+\s+ave_time:\d+\s+total_time:\d+$`,
			fmt.Sprintf(`(?m)^\s+slurm\s+\(\s*64030\) count:%d\s+ave_time:\d+\s+total_time:\d+$`, s.byUser["slurm"]),
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("sdiag: no line matching %s in:\n%s", re, out)
			}
		}
	})
}

// confValue returns Key's value in a slurm.conf-style file.
func confValue(t testing.TB, path, key string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s: no %s", path, key)
	return ""
}
