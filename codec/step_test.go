package codec

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lablup/slurm-frontend/codec/fuzzcheck"
)

// stepCaptures are the step captures (README.md of each directory):
// one REQUEST_JOB_STEP_CREATE, RESPONSE_JOB_STEP_CREATE and
// REQUEST_LAUNCH_TASKS each, for the first step (0) of job jobID on n1,
// run as root.
var stepCaptures = []struct {
	rel         string
	version     uint16
	jobID       uint32
	name        string // step name: command name or -J
	argv        []string
	ntasks      uint32
	launchFlags uint32 // LAUNCH_* bits srun set
	inAlloc     bool   // srun inside salloc/sbatch (SSF_EXCLUSIVE added)
	stdIn       string // cred job_std_in/out (sbatch's)
	stdOut      string
}{
	{"slurm-22.05-steps/srun-n2-hostname-22.05.pcap", V22_05, 1, "hostname", []string{"hostname"}, 2, LaunchBufferedIO, false, "", ""},
	{"slurm-22.05-steps/srun-exit5-22.05.pcap", V22_05, 2, "sh", []string{"sh", "-c", "exit 5"}, 1, LaunchBufferedIO, false, "", ""},
	{"slurm-22.05-steps/salloc-srun-22.05.pcap", V22_05, 3, "echo", []string{"echo", "inner"}, 2, LaunchBufferedIO, true, "", ""},
	{"slurm-22.05-steps/srun-pty-resize-22.05.pcap", V22_05, 4, "bash", []string{"bash"}, 1, LaunchPTY, false, "", ""},

	{"slurm-24.11-steps/srun-n2-hostname-24.11.pcap", V24_11, 9, "hostname", []string{"hostname"}, 2, LaunchBufferedIO, false, "", ""},
	{"slurm-24.11-steps/srun-exit5-24.11.pcap", V24_11, 10, "sh", []string{"sh", "-c", "exit 5"}, 1, LaunchBufferedIO, false, "", ""},
	{"slurm-24.11-steps/srun-l-n2-echo-24.11.pcap", V24_11, 11, "echo", []string{"echo", "x"}, 2, LaunchBufferedIO | LaunchLabelIO, false, "", ""},
	{"slurm-24.11-steps/salloc-srun-24.11.pcap", V24_11, 12, "echo", []string{"echo", "inner"}, 2, LaunchBufferedIO, true, "", ""},
	{"slurm-24.11-steps/srun-stdin-cat-24.11.pcap", V24_11, 13, "cat", []string{"cat"}, 1, LaunchBufferedIO, false, "", ""},
	{"slurm-24.11-steps/srun-pty-resize-24.11.pcap", V24_11, 14, "bash", []string{"bash"}, 1, LaunchPTY, false, "", ""},
	{"slurm-24.11-steps/sbatch-with-srun-steps-24.11.pcap", V24_11, 15, "sh", []string{"sh", "-c", "echo task-$SLURM_PROCID step-$SLURM_STEP_ID"}, 2, LaunchBufferedIO, true, "/dev/null", "/tmp/capjob/%j.out"},
	{"slurm-24.11-steps/step-show-cancel-24.11.pcap", V24_11, 16, "stepper", []string{"sleep", "100"}, 1, LaunchBufferedIO, false, "", ""},

	{"slurm-26.05-steps/srun-n2-hostname-26.05.pcap", V26_05, 1, "hostname", []string{"hostname"}, 2, LaunchBufferedIO, false, "", ""},
	{"slurm-26.05-steps/srun-exit5-26.05.pcap", V26_05, 2, "sh", []string{"sh", "-c", "exit 5"}, 1, LaunchBufferedIO, false, "", ""},
	{"slurm-26.05-steps/salloc-srun-26.05.pcap", V26_05, 3, "echo", []string{"echo", "inner"}, 2, LaunchBufferedIO, true, "", ""},
	{"slurm-26.05-steps/srun-pty-resize-26.05.pcap", V26_05, 4, "bash", []string{"bash"}, 1, LaunchPTY, false, "", ""},
}

// stepTIDs is [[0 .. n-1]]: every task on the one node.
func stepTIDs(n uint32) [][]uint32 {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	return [][]uint32{ids}
}

// stepOneFrame returns the only frame of msgType in rel.
func stepOneFrame(t *testing.T, rel string, msgType uint16, version uint16) Frame {
	t.Helper()
	frames := goldenFrames(t, rel, msgType)
	if len(frames) != 1 {
		t.Fatalf("%s: %d frames of %d", rel, len(frames), msgType)
	}
	if frames[0].Version != version {
		t.Fatalf("%s: version %#x", rel, frames[0].Version)
	}
	return frames[0]
}

// stepRequireTruncationsFail checks that no proper prefix of body
// decodes (and that none panics).
func stepRequireTruncationsFail(t *testing.T, what string, body []byte, decode func(r *Reader) error) {
	t.Helper()
	for n := 0; n < len(body); n++ {
		r := NewReader(body[:n:n])
		if err := decode(&r); err == nil {
			t.Fatalf("%s: %d of %d bytes decoded", what, n, len(body))
		}
	}
}

func TestJobStepCreateRequestGolden(t *testing.T) {
	for _, c := range stepCaptures {
		f := stepOneFrame(t, c.rel, REQUEST_JOB_STEP_CREATE, c.version)
		var m JobStepCreateRequest
		r := NewReader(f.Body)
		if err := m.Decode(&r, f.Version); err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		if m.StepID.JobID != c.jobID || m.StepID.StepID != NoVal || m.StepID.StepHetComp != NoVal {
			t.Errorf("%s: step id %+v", c.rel, m.StepID)
		}
		if m.Name != c.name || m.NumTasks != c.ntasks || m.MinNodes != 1 || m.MaxNodes != 1 {
			t.Errorf("%s: name %q tasks %d nodes %d-%d", c.rel, m.Name, m.NumTasks, m.MinNodes, m.MaxNodes)
		}
		if want := "cpu:" + string(rune('0'+c.ntasks)); m.TresPerStep != want {
			t.Errorf("%s: tres_per_step %q, want %q", c.rel, m.TresPerStep, want)
		}
		if !strings.HasPrefix(m.SubmitLine, "srun ") || !strings.HasSuffix(m.SubmitLine, strings.Join(c.argv, " ")) {
			t.Errorf("%s: submit line %q", c.rel, m.SubmitLine)
		}
		if m.Host != "vm" || m.Port == 0 || m.SrunPID == 0 {
			t.Errorf("%s: host %q port %d pid %d", c.rel, m.Host, m.Port, m.SrunPID)
		}
		wantFlags := StepFlagWhole
		if c.inAlloc {
			wantFlags |= StepFlagExclusive
		}
		if m.Flags != wantFlags {
			t.Errorf("%s: flags %#x, want %#x", c.rel, m.Flags, wantFlags)
		}
		// srun 22.05 sends its uid (root); later ones SLURM_AUTH_NOBODY.
		wantUID := SlurmAuthNobody
		if c.version == V22_05 {
			wantUID = 0
		}
		if m.UserID != wantUID {
			t.Errorf("%s: user_id %d, want %d", c.rel, m.UserID, wantUID)
		}
		if c.version >= V23_02 && (m.ArrayTaskID != NoVal || m.NtasksPerCore != Infinite16) {
			t.Errorf("%s: array task %#x ntasks_per_core %#x", c.rel, m.ArrayTaskID, m.NtasksPerCore)
		}
		if c.version >= V26_05 && (m.Cwd != "/" || m.LaunchParams != nil) {
			t.Errorf("%s: cwd %q launch params %+v", c.rel, m.Cwd, m.LaunchParams)
		}
		var w Writer
		m.Encode(&w, f.Version)
		jcRequireSameBytes(t, c.rel, w.B, f.Body)
		stepRequireTruncationsFail(t, c.rel, f.Body, func(r *Reader) error {
			var m JobStepCreateRequest
			return m.Decode(r, f.Version)
		})
	}
}

func TestJobStepCreateResponseGolden(t *testing.T) {
	for _, c := range stepCaptures {
		f := stepOneFrame(t, c.rel, RESPONSE_JOB_STEP_CREATE, c.version)
		var m JobStepCreateResponse
		r := NewReader(f.Body)
		if err := m.Decode(&r, f.Version); err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		wantJob := c.jobID
		if c.version < V23_02 {
			wantJob = 0 // 22.05 sends only the step id
		}
		if m.JobID != wantJob || m.StepID != 0 || m.ResvPorts != "" || m.Stepmgr != "" {
			t.Errorf("%s: job %d step %d resv %q stepmgr %q", c.rel, m.JobID, m.StepID, m.ResvPorts, m.Stepmgr)
		}
		l := m.Layout
		if l == nil {
			t.Fatalf("%s: no layout", c.rel)
		}
		if l.NodeList != "n1" || l.NodeCnt != 1 || l.TaskCnt != c.ntasks || l.StartProtocolVer != c.version || !reflect.DeepEqual(l.TIDs, stepTIDs(c.ntasks)) || l.NetCred != "" {
			t.Errorf("%s: layout %+v", c.rel, l)
		}
		switch {
		case c.version < V23_02:
			if m.SelectPluginID != SelectPluginConsTres || !reflect.DeepEqual(m.SwitchInfo, []byte{0, 0, 0, 100}) || m.UseProtocolVer != c.version {
				t.Errorf("%s: select %d switch %x use_protocol_ver %#x", c.rel, m.SelectPluginID, m.SwitchInfo, m.UseProtocolVer)
			}
		case c.version < V25_11:
			if m.SwitchInfo != nil || m.UseProtocolVer != c.version {
				t.Errorf("%s: switch %x use_protocol_ver %#x", c.rel, m.SwitchInfo, m.UseProtocolVer)
			}
		default:
			if m.State != JOB_RUNNING || m.SLUID == 0 || m.StepHetComp != NoVal {
				t.Errorf("%s: state %d sluid %#x het %#x", c.rel, m.State, m.SLUID, m.StepHetComp)
			}
		}
		// The credential inside decodes on its own (cred_test.go checks
		// its fields) and fills the rest of the body.
		cr := NewReader(m.Cred)
		cred, body, err := DecodeJobCred(&cr, f.Version)
		if err != nil || cr.Remaining() != 0 {
			t.Fatalf("%s: cred: %v (%d bytes left)", c.rel, err, cr.Remaining())
		}
		if cred.StepID.JobID != c.jobID || cred.StepID.StepID != m.StepID || len(body) >= len(m.Cred) {
			t.Errorf("%s: cred step %+v body %d of %d", c.rel, cred.StepID, len(body), len(m.Cred))
		}
		var w Writer
		m.Encode(&w, f.Version)
		jcRequireSameBytes(t, c.rel, w.B, f.Body)
		stepRequireTruncationsFail(t, c.rel, f.Body, func(r *Reader) error {
			var m JobStepCreateResponse
			return m.Decode(r, f.Version)
		})
	}
}

// stepReqFilled is a request with every field the version carries set.
func stepReqFilled(v uint16) JobStepCreateRequest {
	m := JobStepCreateRequest{
		StepID: jcStepFor(JobStepID{SLUID: 0x1234, JobID: 42, StepID: NoVal, StepHetComp: NoVal}, v), ArrayTaskID: 7, UserID: 1000,
		MinNodes: 1, MaxNodes: 2, Container: "/oci/bundle", ContainerID: "cid", ContainerType: "oci",
		CPUCount: 4, CPUFreqMin: NoVal, CPUFreqMax: NoVal, CPUFreqGov: NoVal, NumTasks: 4, PnMinMemory: MemPerCPU | 512,
		TimeLimit: 10, ThreadsPerCore: NoVal16, NtasksPerCore: Infinite16, Relative: NoVal16, TaskDist: 0x2000,
		PlaneSize: NoVal16, Port: 40000, Immediate: 0, ResvPortCnt: NoVal16, SrunPID: 1234,
		Flags: StepFlagWhole | StepFlagOverlapForce, Host: "login1", Name: "a.out", Network: "", NodeList: "n[1-2]",
		ExcNodes: "n3", Features: "gpu", StepHetCompCnt: 0, StepHetGrps: "", CPUsPerTres: "gres/gpu:2",
		MemPerTres: "gres/gpu:100", NtasksPerTres: NoVal16, Cwd: "/home/alice", StdErr: "e.%j", StdIn: "in", StdOut: "o.%j",
		SubmitLine: "srun -n 4 ./a.out", TresBind: "gres/gpu:closest", TresFreq: "gpu:high", TresPerStep: "cpu:4",
		TresPerNode: "gres/gpu:1", TresPerSocket: "", TresPerTask: "cpu=1",
		EmptyStrs: 1 << 0, // Network's "" would need its position; StepHetGrps etc. stay NULL
		LaunchParams: &StepLaunchParams{
			Argv: []string{"./a.out", ""}, Env: []string{"A=1"}, Cwd: "/tmp", MsgTimeout: 10, NTasksPerCore: Infinite16,
			LabelIO: true, OutputFilename: "o", MultiProg: true, SlurmdDebug: 2, HetJobNodeOffset: NoVal, HetJobID: NoVal,
			HetJobNNodes: NoVal, HetJobNTasks: NoVal, HetJobOffset: NoVal, HetJobTaskOffset: NoVal, ParallelDebug: true,
			Profile: 1, TaskProlog: "/p", CPUBindType: 4, CPUBind: "map_cpu:0", CPUFreqMin: NoVal, CPUFreqMax: NoVal,
			CPUFreqGov: NoVal, MemBindType: 2, MemBind: "local", AccelBindType: 1, MaxSockets: NoVal16, MaxCores: NoVal16,
			MaxThreads: NoVal16, CPUsPerTask: 1, CPTCompactArray: []uint16{1}, CPTCompactReps: []uint32{4},
			ThreadsPerCore: NoVal16, TaskDist: 1, TreeWidth: 50, PreserveEnv: true, MPIPluginName: "pmix", OpenMode: 1,
			AcctgFreq: "task=30", PTY: true, SpankJobEnv: []string{"X=y"}, TresBind: "b", TresFreq: "f", OOMKillStep: 1,
			EmptyStrs: 1 << 0, // Container
		},
	}
	m.Container = "" // bit 0: the non-NULL "" container
	if v < V23_02 {
		m.ArrayTaskID, m.ContainerID, m.NtasksPerCore = 0, "", 0
	}
	if v < V25_05 {
		m.Cwd, m.StdErr, m.StdIn, m.StdOut = "", "", "", ""
	}
	if v < V26_05 {
		m.ContainerType, m.LaunchParams = "", nil
	}
	return m
}

// stepLayoutFilled is a two-node layout.
func stepLayoutFilled(v uint16) *StepLayout {
	l := &StepLayout{
		NodeList: "n[1-2]", NodeCnt: 2, StartProtocolVer: v, TaskCnt: 3, TaskDist: 2,
		TIDs: [][]uint32{{0, 1}, {2}}, CPTCompactArray: []uint16{1, 2}, CPTCompactReps: []uint32{2, 1},
		NetCred: "MUNGE:net:", FrontEnd: "", EmptyStrs: 1, // non-NULL "" front_end
	}
	if v < V23_11 {
		l.CPTCompactArray, l.CPTCompactReps, l.NetCred = nil, nil, ""
	}
	return l
}

// stepRespFilled is a response with every field the version carries
// set; cred is its packed credential.
func stepRespFilled(v uint16) JobStepCreateResponse {
	c := credFilled(v)
	m := JobStepCreateResponse{
		DefCPUBindType: 0x10, ResvPorts: "12000-12001", SLUID: 0xABC, JobID: 42, StepID: 3, StepHetComp: NoVal,
		Layout: stepLayoutFilled(v), Stepmgr: "", Cred: AppendJobCred(nil, &c, v), SelectPluginID: SelectPluginConsTres,
		SwitchInfo: []byte{0, 0, 0, 100}, UseProtocolVer: v, State: JOB_RUNNING, EmptyStrs: 2, // non-NULL "" stepmgr
	}
	if v < V25_11 {
		m.SLUID, m.StepHetComp = 0, 0
	} else {
		m.UseProtocolVer = 0
	}
	if v < V23_02 {
		m.JobID = 0
	} else {
		m.SelectPluginID = 0
	}
	if v < V24_05 {
		m.Stepmgr, m.EmptyStrs = "", 0
	}
	if v >= V23_11 {
		m.SwitchInfo = nil // 23.11/24.05 without SwitchType: absent
	}
	if v < V26_05 {
		m.State = 0
	}
	return m
}

func TestJobStepCreateRoundTripAllVersions(t *testing.T) {
	for _, v := range Versions {
		jcRoundTrip(t, "step create request", v, stepReqFilled(v))
		jcRoundTrip(t, "step create request empty", v, JobStepCreateRequest{StepID: jcStepFor(NoStepID, v)})

		jcRoundTrip(t, "step create response", v, stepRespFilled(v))
		noLayout := stepRespFilled(v)
		noLayout.Layout = nil
		b := jcRoundTrip(t, "step create response, no layout", v, noLayout)
		if v >= V26_05 {
			noCred := stepRespFilled(v)
			noCred.Cred = nil
			jcRoundTrip(t, "step create response, no cred", v, noCred)
		}
		// The layout sits after def_cpu_bind_type, resv_ports and the
		// step id: its present flag is 0 there.
		off := 4 + 4 + len("12000-12001") + 1 + 4
		switch {
		case v >= V25_11:
			off += 16 // a whole step id instead of the u32
		case v >= V23_02:
			off += 4
		}
		if b[off] != 0 || b[off+1] != 0 {
			t.Errorf("%s: layout flag at %d: %x", VersionName(v), off, b[off:off+2])
		}
	}
}

// A 24.05 (or 23.11) controller with a SwitchType sends switch info
// before use_protocol_ver; it is kept as packed.
func TestJobStepCreateResponseSwitchInfo(t *testing.T) {
	for _, v := range []uint16{V22_05, V23_02, V23_11, V24_05} {
		m := stepRespFilled(v)
		m.SwitchInfo = []byte{0, 0, 0, 104, 1, 2, 3, 4, 5}
		var w Writer
		m.Encode(&w, v)
		var got JobStepCreateResponse
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("%s: %v\n got %+v\nwant %+v", VersionName(v), err, got, m)
		}
	}
	// 22.05/23.02 always carry a plugin id.
	for _, v := range []uint16{V22_05, V23_02} {
		m := stepRespFilled(v)
		m.SwitchInfo = nil
		var w Writer
		m.Encode(&w, v)
		var got JobStepCreateResponse
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err == nil {
			t.Errorf("%s: response without switch jobinfo decoded", VersionName(v))
		}
	}
}

func TestJobStepCreateResponseRefusals(t *testing.T) {
	// A Cray select plugin packs data we cannot delimit.
	m := stepRespFilled(V22_05)
	m.SelectPluginID = 110
	var w Writer
	m.Encode(&w, V22_05)
	var got JobStepCreateResponse
	r := NewReader(w.B)
	if err := got.Decode(&r, V22_05); err == nil || !strings.Contains(err.Error(), "select plugin 110") {
		t.Errorf("cray select jobinfo: %v", err)
	}
	// Mismatched cpt_compact counts and more tids arrays than bytes.
	for _, v := range []uint16{V24_11, V26_05} {
		m := stepRespFilled(v)
		m.Layout.CPTCompactReps = []uint32{1}
		w = Writer{}
		m.Encode(&w, v)
		r = NewReader(w.B)
		if err := got.Decode(&r, v); err == nil || !strings.Contains(err.Error(), "cpt_compact") {
			t.Errorf("%s: cpt_compact mismatch: %v", VersionName(v), err)
		}
	}
	l := Writer{}
	l.U16(1)
	l.Str("")
	l.Str("n1")
	l.U32(0x40000000) // node_cnt
	l.U16(V24_11)
	l.U32(1)
	l.U32(2)
	r = NewReader(l.B)
	if readStepLayout(&r, V24_11) != nil || CodeOf(r.Err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("hostile node_cnt: %v", r.Err)
	}
}

// stepDecoders are this file set's message decoders, for the
// allocation bound.
var stepDecoders = []struct {
	name string
	new  func() decoder
}{
	{"JobStepCreateRequest", func() decoder { return new(JobStepCreateRequest) }},
	{"JobStepCreateResponse", func() decoder { return new(JobStepCreateResponse) }},
	{"JobCred", func() decoder { return new(credMsg) }},
	{"LaunchTasksRequest", func() decoder { return new(LaunchTasksRequest) }},
}

func TestStepAllocBound(t *testing.T) {
	bodies := hostileBodies()
	for _, c := range stepCaptures {
		for _, mt := range []uint16{REQUEST_JOB_STEP_CREATE, RESPONSE_JOB_STEP_CREATE, REQUEST_LAUNCH_TASKS} {
			bodies = append(bodies, stepOneFrame(t, c.rel, mt, c.version).Body)
		}
	}
	for _, d := range stepDecoders {
		for _, v := range Versions {
			for _, b := range bodies {
				checkAllocBound(t, d.name, d.new(), v, b)
			}
		}
	}
}

// stepFuzzSeeds adds the captured bodies of msgType and m encoded in
// every version.
func stepFuzzSeeds[T any, P interface {
	*T
	Encode(*Writer, uint16)
}](f *testing.F, msgType uint16, m func(v uint16) T) {
	for _, c := range stepCaptures {
		fr := goldenFrames(f, c.rel, msgType)
		for _, x := range fr {
			f.Add(jcVersionIndex(x.Version), x.Body)
		}
	}
	for _, v := range Versions {
		x := m(v)
		var w Writer
		P(&x).Encode(&w, v)
		f.Add(jcVersionIndex(v), w.B)
	}
}

// stepFuzzCheck is jcFuzzStable plus the allocation bound.
func stepFuzzCheck[T any, P interface {
	*T
	Decode(*Reader, uint16) error
	Encode(*Writer, uint16)
}](t *testing.T, name string, vb byte, body []byte) {
	v := jcFuzzVersion(vb)
	fuzzcheck.AllocBound(t, name, len(body), func() {
		var m T
		r := NewReader(body)
		_ = P(&m).Decode(&r, v)
	})
	jcFuzzStable[T, P](t, v, body, nil)
}

func FuzzDecodeJobStepCreateRequest(f *testing.F) {
	stepFuzzSeeds(f, REQUEST_JOB_STEP_CREATE, stepReqFilled)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		stepFuzzCheck[JobStepCreateRequest](t, "JobStepCreateRequest", vb, body)
	})
}

func FuzzDecodeJobStepCreateResponse(f *testing.F) {
	stepFuzzSeeds(f, RESPONSE_JOB_STEP_CREATE, stepRespFilled)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		stepFuzzCheck[JobStepCreateResponse](t, "JobStepCreateResponse", vb, body)
	})
}

func TestStepFlagsMatchSlurm(t *testing.T) {
	// SSF_* and LAUNCH_* are distinct bit sets; pin a few values that
	// clients test for.
	got := []uint32{StepFlagWhole, StepFlagInteractive, StepFlagOverlapForce, StepFlagExtLauncher, LaunchPTY, LaunchLabelIO, LaunchNoAlloc, LaunchGresAllowTaskSharing}
	want := []uint32{8, 16, 64, 256, 4, 16, 64, 512}
	if !slices.Equal(got, want) {
		t.Errorf("flags %v, want %v", got, want)
	}
}
