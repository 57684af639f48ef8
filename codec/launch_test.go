package codec

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestLaunchTasksGolden(t *testing.T) {
	for _, c := range stepCaptures {
		f := stepOneFrame(t, c.rel, REQUEST_LAUNCH_TASKS, c.version)
		var m LaunchTasksRequest
		r := NewReader(f.Body)
		if err := m.Decode(&r, f.Version); err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		if m.StepID.JobID != c.jobID || m.StepID.StepID != 0 || m.StepID.StepHetComp != NoVal || m.StepID != m.Cred.StepID {
			t.Errorf("%s: step %+v (cred %+v)", c.rel, m.StepID, m.Cred.StepID)
		}
		if !slices.Equal(m.Argv, c.argv) || m.Flags != c.launchFlags {
			t.Errorf("%s: argv %q flags %#x, want %q %#x", c.rel, m.Argv, m.Flags, c.argv, c.launchFlags)
		}
		if m.NTasks != c.ntasks || m.NNodes != 1 || !slices.Equal(m.TasksToLaunch, []uint16{uint16(c.ntasks)}) ||
			!reflect.DeepEqual(m.GlobalTaskIDs, stepTIDs(c.ntasks)) || m.CompleteNodelist != "n1" {
			t.Errorf("%s: tasks %d nodes %d %v %v on %q", c.rel, m.NTasks, m.NNodes, m.TasksToLaunch, m.GlobalTaskIDs, m.CompleteNodelist)
		}
		if len(m.RespPorts) != 1 || m.RespPorts[0] == 0 || len(m.IOPorts) != 1 || m.IOPorts[0] == 0 || m.OrigAddr != (WireAddr{}) {
			t.Errorf("%s: ports %v %v addr %+v", c.rel, m.RespPorts, m.IOPorts, m.OrigAddr)
		}
		if !slices.Contains(m.Env, "SLURM_JOB_ID="+strconv.Itoa(int(c.jobID))) || m.Cwd == "" {
			t.Errorf("%s: env %q cwd %q", c.rel, m.Env, m.Cwd)
		}
		if m.HetJobNNodes != NoVal || m.HetJobNTasks != NoVal || m.HetJobOffset != NoVal || m.Options != nil || m.OOMKillStep || m.Stepmgr != "" {
			t.Errorf("%s: het %#x/%#x/%#x options %v oom %v stepmgr %q", c.rel, m.HetJobNNodes, m.HetJobNTasks, m.HetJobOffset, m.Options, m.OOMKillStep, m.Stepmgr)
		}
		if c.version < V23_11 {
			// srun 22.05 leaves user_name NULL.
			if m.UID != 0 || m.GID != 0 || m.UserName != "" || m.SwitchPluginID != SwitchPluginNone || m.SelectPluginID != SelectPluginConsTres {
				t.Errorf("%s: uid %d gid %d user %q switch %d select %d", c.rel, m.UID, m.GID, m.UserName, m.SwitchPluginID, m.SelectPluginID)
			}
		}
		if m.CredVersion != c.version || m.Cred.UserName != "root" || m.Cred.StepHostlist != "n1" {
			t.Errorf("%s: cred %#x %q %q", c.rel, m.CredVersion, m.Cred.UserName, m.Cred.StepHostlist)
		}
		if len(m.CredBody) == 0 || !bytes.HasPrefix(m.CredRaw, m.CredBody) {
			t.Errorf("%s: cred body %d of %d bytes", c.rel, len(m.CredBody), len(m.CredRaw))
		}
		var w Writer
		m.Encode(&w, f.Version)
		jcRequireSameBytes(t, c.rel, w.B, f.Body)
		// Re-packing the decoded credential (no CredRaw) gives the
		// same bytes too.
		m2 := m
		m2.CredRaw, m2.CredBody = nil, nil
		w = Writer{}
		m2.Encode(&w, f.Version)
		jcRequireSameBytes(t, c.rel+" (cred re-packed)", w.B, f.Body)
		stepRequireTruncationsFail(t, c.rel, f.Body, func(r *Reader) error {
			var m LaunchTasksRequest
			return m.Decode(r, f.Version)
		})
	}
}

// launchFilled is a two-node het-job launch with every field the
// version carries set.
func launchFilled(v uint16) LaunchTasksRequest {
	c := credFilled(v)
	raw := AppendJobCred(nil, &c, v)
	var w Writer
	c.EncodeBody(&w, v)
	m := LaunchTasksRequest{
		StepID: jcStepFor(JobStepID{SLUID: 0x77, JobID: 42, StepID: 3, StepHetComp: NoVal}, v),
		UID:    1000, GID: 1000, UserName: "alice", GIDs: []uint32{1000, 27},
		HetJobNodeOffset: 1, HetJobID: 41, HetJobNNodes: 2, HetJobTIDs: [][]uint32{{0, 1}, {2}},
		HetJobNTasks: 3, HetJobTIDOffsets: []uint32{0, 0, 1}, HetJobOffset: 1, HetJobStepCnt: 2,
		HetJobStepTaskCnts: []uint32{2, 1}, HetJobTaskOffset: 2, HetJobNodeList: "n[1-3]",
		MPIPluginID: 101, NTasks: 3, NTasksPerBoard: NoVal16, NTasksPerCore: Infinite16, NTasksPerTres: NoVal16,
		NTasksPerSocket: NoVal16, JobMemLim: 128000, StepMemLim: 1000, NNodes: 2, CPUsPerTask: 1,
		CPTCompactArray: []uint16{1}, CPTCompactReps: []uint32{3}, TresPerTask: "cpu=1", ThreadsPerCore: NoVal16,
		TaskDist: 2, NodeCPUs: 2, JobCoreSpec: NoVal16, AccelBindType: 1,
		CredVersion: v, Cred: c, CredRaw: raw, CredBody: raw[:len(w.B)],
		TasksToLaunch: []uint16{2, 1}, GlobalTaskIDs: [][]uint32{{0, 1}, {2}},
		RespPorts: []uint16{40001, 40002}, OrigAddr: WireAddr{Family: AFInet, IPv4: 0x0100007f, Port: 0x419c},
		Env: []string{"A=1", "SLURM_JOB_ID=42", ""}, SpankJobEnv: []string{"SPANK_X=1"}, Cwd: "/home/alice",
		CPUBindType: 4, CPUBind: "map_cpu:0,1", MemBindType: 2, MemBind: "local", Argv: []string{"./a.out", "-x"},
		Flags: LaunchLabelIO | LaunchBufferedIO, OFName: "out.%t", IOPorts: []uint16{40003},
		AllocTLSCert: "-----BEGIN CERTIFICATE-----", Profile: 1, TaskProlog: "/etc/tp", SlurmdDebug: 3,
		SwitchPluginID: SwitchPluginNone,
		Options:        []JobOption{{Type: 0x8000, Option: "spank-opt", Optarg: "", Empty: 2}, {Type: 1, Option: "x", Optarg: "y"}},
		AliasList:      "n1:10.0.0.1:n1", CompleteNodelist: "n[1-2]", OpenMode: OpenModeAppend, AcctgFreq: "task=30",
		CPUFreqMin: NoVal, CPUFreqMax: NoVal, CPUFreqGov: NoVal, SelectPluginID: SelectPluginConsTres,
		TresBind: "gres/gpu:closest", TresFreq: "gpu:high", X11: 1, X11AllocHost: "login1", X11AllocPort: 6010,
		X11MagicCookie: "cookie", X11Target: "localhost", X11TargetPort: 6000, Stepmgr: "n1", OOMKillStep: true,
		// Container, a non-NULL "": the third string (after
		// het_job_node_list and tres_per_task), fourth before 23.11
		// (user_name first).
		EmptyStrs: 1 << 2,
	}
	if v < V23_11 {
		m.EmptyStrs = 1 << 3
		m.CPTCompactArray, m.CPTCompactReps = nil, nil
	} else {
		m.UID, m.GID, m.UserName, m.SwitchPluginID = 0, 0, "", 0
	}
	if v >= V23_02 {
		m.SelectPluginID = 0
	}
	if v < V24_05 {
		m.Stepmgr = ""
	}
	if v < V24_11 {
		m.OOMKillStep = false
	}
	if v < V25_05 {
		m.HetJobStepTaskCnts, m.AllocTLSCert = nil, ""
	} else {
		m.AliasList = ""
	}
	return m
}

func TestLaunchTasksRoundTripAllVersions(t *testing.T) {
	for _, v := range Versions {
		m := launchFilled(v)
		b := jcRoundTrip(t, "launch", v, m)
		// Without CredRaw the credential is packed from Cred.
		m.CredRaw, m.CredBody, m.CredVersion = nil, nil, 0
		var w Writer
		m.Encode(&w, v)
		jcRequireSameBytes(t, "launch "+VersionName(v)+" (cred packed)", w.B, b)

		// A plain (non-het) launch of a 26.05 srun carrying a cred a
		// 24.11 controller packed: the cred is read at cred_version.
		m = launchFilled(v)
		m.HetJobNNodes, m.HetJobTIDs, m.HetJobNTasks, m.HetJobTIDOffsets, m.HetJobOffset = NoVal, nil, NoVal, nil, NoVal
		m.HetJobStepTaskCnts = nil
		cv := V24_11
		if v < V24_11 {
			cv = V22_05
		}
		c := credFilled(cv)
		m.CredVersion, m.Cred, m.CredRaw = cv, c, AppendJobCred(nil, &c, cv)
		var body Writer
		c.EncodeBody(&body, cv)
		m.CredBody = m.CredRaw[:len(body.B)]
		jcRoundTrip(t, "launch, other cred version", v, m)
	}
}

func TestLaunchTasksRefusals(t *testing.T) {
	decodeErr := func(v uint16, b []byte) error {
		var m LaunchTasksRequest
		r := NewReader(b)
		return m.Decode(&r, v)
	}
	enc := func(v uint16, m LaunchTasksRequest) []byte {
		var w Writer
		m.Encode(&w, v)
		return w.B
	}
	for _, v := range Versions {
		// job_ptr = true (a stepmgr job record follows).
		if v >= V24_05 {
			b := enc(v, launchFilled(v))
			b[len(b)-1] = 1
			if err := decodeErr(v, b); err == nil || !strings.Contains(err.Error(), "job_ptr") {
				t.Errorf("%s: job_ptr: %v", VersionName(v), err)
			}
		}
		// Task ids that do not match tasks_to_launch.
		m := launchFilled(v)
		m.TasksToLaunch = []uint16{3, 1}
		if err := decodeErr(v, enc(v, m)); err == nil || !strings.Contains(err.Error(), "task ids") {
			t.Errorf("%s: task ids: %v", VersionName(v), err)
		}
		// A credential version we do not speak.
		m = launchFilled(v)
		m.CredRaw, m.CredVersion = nil, 0x2601
		if err := decodeErr(v, enc(v, m)); err == nil || !strings.Contains(err.Error(), "cred_version") {
			t.Errorf("%s: cred_version: %v", VersionName(v), err)
		}
		// A credential for nobody.
		m = launchFilled(v)
		m.CredRaw, m.Cred.UID = nil, SlurmAuthNobody
		if err := decodeErr(v, enc(v, m)); err == nil || !strings.Contains(err.Error(), "nobody") {
			t.Errorf("%s: nobody: %v", VersionName(v), err)
		}
		// Another job_options tag.
		b := enc(v, launchFilled(v))
		i := bytes.Index(b, []byte("job_options"))
		b[i] = 'J'
		// (23.11/24.05 take what is not the tag for switch info.)
		want := "job_options tag"
		if v == V23_11 || v == V24_05 {
			want = "switch plugin"
		}
		if err := decodeErr(v, b); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: tag: %v", VersionName(v), err)
		}
	}
	// Switch plugins with data: 22.05/23.02 jobinfo other than
	// switch/none, 23.11/24.05 any switch info.
	for _, v := range []uint16{V22_05, V23_02} {
		m := launchFilled(v)
		m.SwitchPluginID = 104
		if err := decodeErr(v, enc(v, m)); err == nil || !strings.Contains(err.Error(), "switch plugin 104") {
			t.Errorf("%s: switch: %v", VersionName(v), err)
		}
	}
	for _, v := range []uint16{V23_11, V24_05} {
		b := enc(v, launchFilled(v))
		i := bytes.Index(b, []byte("\x00\x00\x00\x0cjob_options"))
		b = slices.Insert(b, i, 0, 0, 0, 105)
		if err := decodeErr(v, b); err == nil || !strings.Contains(err.Error(), "switch plugin 105") {
			t.Errorf("%s: switch: %v", VersionName(v), err)
		}
	}
	m := launchFilled(V22_05)
	m.SelectPluginID = 107
	if err := decodeErr(V22_05, enc(V22_05, m)); err == nil || !strings.Contains(err.Error(), "select plugin 107") {
		t.Errorf("22.05 select: %v", err)
	}
	// nnodes NO_VAL is refused before anything is allocated for it.
	var w Writer
	NoStepID.Encode(&w, V24_11)
	w.U32(0)                                 // gids
	w.U32(NoVal)                             // het_job_node_offset
	w.U32(NoVal)                             // het_job_id
	w.U32(NoVal)                             // het_job_nnodes
	w.U32(NoVal)                             // het_job_ntasks
	w.U32(NoVal)                             // het_job_offset
	w.U32(0)                                 // het_job_step_cnt
	w.U32(NoVal)                             // het_job_task_offset
	w.Str("")                                // het_job_node_list
	w.U32(0)                                 // mpi_plugin_id
	w.U32(1)                                 // ntasks
	w.B = append(w.B, make([]byte, 8+16)...) // ntasks_per_*, mem limits
	w.U32(NoVal)                             // nnodes
	w.B = append(w.B, make([]byte, 64)...)
	if err := decodeErr(V24_11, w.B); err == nil || !strings.Contains(err.Error(), "nnodes") {
		t.Errorf("nnodes NO_VAL: %v", err)
	}
}

func FuzzDecodeLaunchTasksRequest(f *testing.F) {
	stepFuzzSeeds(f, REQUEST_LAUNCH_TASKS, launchFilled)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		stepFuzzCheck[LaunchTasksRequest](t, "LaunchTasksRequest", vb, body)
	})
}
