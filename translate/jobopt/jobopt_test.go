package jobopt

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

func sbatchIn(v uint16, script string, env []string, args ...string) Input {
	return Input{Args: args, Script: []byte(script), Env: env, Cwd: "/home/u", Version: v,
		Now: time.Date(2030, 3, 4, 10, 30, 0, 0, time.UTC), GresTypes: []string{"gpu"}}
}

var allVersions = []uint16{codec.V22_05, codec.V24_11, codec.V26_05}

func TestScanScript(t *testing.T) {
	script := "#!/bin/bash\n\n# comment\n  #SBATCH -N9\n#SBATCH -p gpu --comment=\"a b\" # tail\n#SBATCH hetjob\n#SBATCH -n2\nsrun hostname\n#SBATCH -N3\n"
	sc := ScanScript([]byte(script), codec.V24_11, "job.sh")
	if sc.StopLine != 8 {
		t.Errorf("stop line %d, want 8", sc.StopLine)
	}
	var got [][]string
	var lines, comps []int
	for _, d := range sc.Directives {
		got = append(got, d.Args)
		lines = append(lines, d.Line)
		comps = append(comps, d.Comp)
	}
	want := [][]string{{"-p", "gpu", "--comment=a b"}, nil, {"-n2"}}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(lines, []int{5, 6, 7}) || !reflect.DeepEqual(comps, []int{0, 1, 1}) {
		t.Errorf("directives %q lines %v comps %v", got, lines, comps)
	}
	// "\ " keeps the space from 24.11 on; 22.05 ends the word there.
	for v, want := range map[uint16][]string{codec.V22_05: {"--comment=a", "b"}, codec.V24_11: {"--comment=a b"}} {
		sc := ScanScript([]byte("#!/bin/sh\n#SBATCH --comment=a\\ b\n"), v, "job.sh")
		if !reflect.DeepEqual(sc.Directives[0].Args, want) {
			t.Errorf("%s: %q, want %q", codec.VersionName(v), sc.Directives[0].Args, want)
		}
	}
	sc = ScanScript([]byte("#!/bin/sh\n#SBATCH --comment=\"open\n"), codec.V24_11, "job.sh")
	if e := sc.Directives[0].Err; e == nil || e.Lines[0] != "sbatch: fatal: job.sh: line 2: Unmatched `\"` in [--comment=\"open]" {
		t.Errorf("unmatched quote: %+v", e)
	}
}

func TestSbatchPrecedence(t *testing.T) {
	script := "#!/bin/sh\n#SBATCH -p cpu -t 5 -A scriptacct\n#SBATCH --mem=1G\ntrue\n"
	for _, v := range allVersions {
		res, err := Sbatch(sbatchIn(v, script, []string{"SBATCH_PARTITION=gpu", "SBATCH_TIMELIMIT=20"}, "-t", "30", "job.sh", "x"))
		if err != nil {
			t.Fatalf("%s: %v", codec.VersionName(v), err)
		}
		d := res.Jobs[0]
		if d.Partition != "gpu" || d.TimeLimit != 30 || d.Account != "scriptacct" || d.PnMinMemory != 1024 {
			t.Errorf("%s: partition %q time %d account %q mem %d", codec.VersionName(v), d.Partition, d.TimeLimit, d.Account, d.PnMinMemory)
		}
		if !reflect.DeepEqual(d.Argv, []string{"/home/u/job.sh", "x"}) || d.WorkDir != "/home/u" || d.Name != "job.sh" {
			t.Errorf("%s: argv %q workdir %q name %q", codec.VersionName(v), d.Argv, d.WorkDir, d.Name)
		}
		src := map[string]Use{}
		for _, u := range res.Uses {
			src[u.Name] = u
		}
		if u := src["--partition"]; u.Source != "SBATCH_PARTITION" || u.Value != "gpu" {
			t.Errorf("partition use %+v", u)
		}
		if u := src["--time"]; u.Source != "command line" || u.Written != "-t" || u.Value != "30" {
			t.Errorf("time use %+v", u)
		}
		if u := src["--account"]; u.Source != "#SBATCH" || u.Line != 2 || u.Written != "-A" {
			t.Errorf("account use %+v", u)
		}
	}
}

func TestSbatchErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		lines []string
		exit  int
	}{
		{[]string{"--time=x", "j.sh"}, []string{"sbatch: error: Invalid --time specification"}, 255},
		{[]string{"--bogus", "j.sh"}, []string{"sbatch: unrecognized option '--bogus'", "Try \"sbatch --help\" for more information"}, 255},
		{[]string{"--cpu=1", "j.sh"}, []string{"sbatch: option '--cpu=1' is ambiguous; possibilities: '--cpu-freq' '--cpus-per-gpu' '--cpus-per-task'", "Try \"sbatch --help\" for more information"}, 255},
		{[]string{"-n", "x", "j.sh"}, []string{"sbatch: error: Invalid numeric value \"x\" for --ntasks."}, 1},
		{[]string{"--mem=1G", "--mem-per-cpu=1G", "j.sh"}, []string{"sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."}, 1},
	} {
		_, err := Sbatch(sbatchIn(codec.V24_11, "#!/bin/sh\ntrue\n", nil, tc.args...))
		ce, ok := err.(*ClientError)
		if !ok || ce.Exit != tc.exit || !reflect.DeepEqual(ce.Lines, tc.lines) {
			t.Errorf("%q: got %v, want %q exit %d", tc.args, err, tc.lines, tc.exit)
		}
	}
}

func TestSbatchValues(t *testing.T) {
	now := time.Date(2030, 3, 4, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		args  []string
		check func(d *codec.JobDesc) bool
	}{
		{[]string{"--begin=now+1hour"}, func(d *codec.JobDesc) bool { return d.BeginTime == now.Add(time.Hour).Unix() }},
		{[]string{"--begin=2031-01-02T03:04:05"}, func(d *codec.JobDesc) bool {
			return d.BeginTime == time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC).Unix()
		}},
		{[]string{"--begin=09:00"}, func(d *codec.JobDesc) bool { // already past today: tomorrow
			return d.BeginTime == time.Date(2030, 3, 5, 9, 0, 0, 0, time.UTC).Unix()
		}},
		{[]string{"--mem=1500K"}, func(d *codec.JobDesc) bool { return d.PnMinMemory == 2 }},
		{[]string{"--mem-per-cpu=2G"}, func(d *codec.JobDesc) bool { return d.PnMinMemory == 2048|codec.MemPerCPU }},
		{[]string{"-t", "1-02:03:04"}, func(d *codec.JobDesc) bool { return d.TimeLimit == 24*60+2*60+4 }},
		{[]string{"-t", "0"}, func(d *codec.JobDesc) bool { return d.TimeLimit == codec.Infinite }},
		{[]string{"-N2", "--gpus-per-node=2"}, func(d *codec.JobDesc) bool {
			return d.TRESPerNode == "gres/gpu:2" && d.MinNodes == 2
		}},
		{[]string{"-w", "n3,n1,n2,n1"}, func(d *codec.JobDesc) bool { return d.ReqNodes == "n[1-3]" && d.MinNodes == 3 }},
		{[]string{"--exclusive", "--requeue", "-H"}, func(d *codec.JobDesc) bool {
			return d.Shared == 0 && d.Requeue == 1 && d.Priority == 0
		}},
		{[]string{"--partition="}, func(d *codec.JobDesc) bool {
			return d.Partition == "" && d.StrGiven(codec.JDPartition, d.Partition) && d.Bitflags&codec.UseDefaultPart == 0
		}},
	} {
		res, err := Sbatch(sbatchIn(codec.V24_11, "#!/bin/sh\ntrue\n", nil, append(tc.args, "j.sh")...))
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !tc.check(&res.Jobs[0]) {
			t.Errorf("%q: unexpected descriptor %+v", tc.args, res.Jobs[0])
		}
	}
}

func TestSbatchHetJob(t *testing.T) {
	res, err := Sbatch(sbatchIn(codec.V26_05, "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -n3 -p gpu\ntrue\n", nil, "j.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 2 || res.Jobs[0].NumTasks != 1 || res.Jobs[1].NumTasks != 3 || res.Jobs[1].Partition != "gpu" {
		t.Fatalf("het job: %+v", res.Jobs)
	}
	if res.Jobs[0].Script == "" || res.Jobs[1].Script != "" {
		t.Errorf("only the first component carries the script")
	}
}

// FuzzSbatch: any arguments, script and variables give a result or a
// client error, never a panic.
func FuzzSbatch(f *testing.F) {
	f.Add("-N2 -n4 --mem=1G j.sh", "#!/bin/sh\n#SBATCH -p gpu\ntrue\n", "SBATCH_TIMELIMIT=5", uint8(1))
	f.Add("--begin=now+1hour --gres=gpu:2 -w n[1-3] : -n2 j.sh", "#!/bin/sh\n#SBATCH hetjob\n#SBATCH --comment='a b'\n", "", uint8(0))
	f.Add("--wrap=true", "", "SBATCH_EXPORT=NONE", uint8(2))
	f.Fuzz(func(t *testing.T, args, script, env string, v uint8) {
		in := Input{Args: strings.Fields(args), Script: []byte(script), Stdin: []byte(script),
			Env: strings.Split(env, "\n"), Cwd: "/w", Version: allVersions[int(v)%3],
			Now: time.Unix(1900000000, 0).UTC(), GresTypes: []string{"gpu"}}
		res, err := Sbatch(in)
		if err == nil && len(res.Jobs) == 0 {
			t.Fatal("no job and no error")
		}
	})
}

func TestSallocSrun(t *testing.T) {
	in := sbatchIn(codec.V24_11, "", []string{"SALLOC_PARTITION=gpu", "SLURM_TIMELIMIT=7"}, "-N2", "--gpus-per-node=1")
	in.Cluster, in.Shell = "c1", "/bin/zsh"
	res, err := Salloc(in)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Jobs[0]
	if d.Partition != "gpu" || d.MinNodes != 2 || d.Name != "interactive" || !reflect.DeepEqual(d.Argv, []string{"/bin/zsh"}) || d.OriginCluster != "c1" || d.TRESPerNode != "gres/gpu:1" {
		t.Errorf("salloc: %+v", d)
	}
	in.Args = []string{"--cpu-bind=cores", "-n2", "/bin/hostname", "-f"}
	res, err = Srun(in)
	if err != nil {
		t.Fatal(err)
	}
	d = res.Jobs[0]
	if d.TimeLimit != 7 || d.Name != "hostname" || d.CPUBind != "cores" || d.CPUBindType != 0x4 || d.WaitAllNodes != 1 || d.NumTasks != 2 {
		t.Errorf("srun: %+v", d)
	}
	if _, err := Srun(sbatchIn(codec.V24_11, "", nil, "-N1")); err == nil || err.(*ClientError).Lines[0] != "srun: fatal: No command given to execute." {
		t.Errorf("srun without a command: %v", err)
	}
}

// FuzzAlloc: salloc and srun never panic either.
func FuzzAlloc(f *testing.F) {
	f.Add("-N2 --gpus=2 --cpu-bind=map_cpu:0,1*2 hostname", "SLURM_NTASKS=3", uint8(1))
	f.Add("-n1 : -n2 --exclusive=user true", "SALLOC_NO_SHELL=1", uint8(0))
	f.Fuzz(func(t *testing.T, args, env string, v uint8) {
		in := Input{Args: strings.Fields(args), Env: strings.Split(env, "\n"), Cwd: "/w",
			Version: allVersions[int(v)%3], Now: time.Unix(1900000000, 0).UTC(), GresTypes: []string{"gpu"}}
		parse := Salloc
		if v&4 != 0 {
			parse = Srun
		}
		res, err := parse(in)
		if err == nil && len(res.Jobs) == 0 {
			t.Fatal("no job and no error")
		}
	})
}
