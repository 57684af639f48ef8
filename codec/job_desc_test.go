package codec

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jcFirstDiff returns the first offset where a and b differ (or the
// shorter length).
func jcFirstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func jcRequireSameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := jcFirstDiff(got, want)
		t.Fatalf("%s: re-encoded %d bytes, captured %d; first difference at offset %d\n got  %x\n want %x",
			what, len(got), len(want), i, got[max(0, i-8):min(len(got), i+16)], want[max(0, i-8):min(len(want), i+16)])
	}
}

var sbatchCaptures = []string{
	"slurm-22.05/sbatch-22.05.pcap",
	"slurm-24.11/sbatch-24.11.pcap",
	"slurm-26.05/sbatch-26.05.pcap",
}

var sbatchOptionCaptures = []string{
	"slurm-22.05/sbatch-options-22.05.pcap",
	"slurm-24.11/sbatch-options-24.11.pcap",
	"slurm-26.05/sbatch-options-26.05.pcap",
}

// decodeJobDescGolden decodes the single submit request of a capture and
// checks that re-encoding gives the captured bytes.
func decodeJobDescGolden(t *testing.T, rel string) (JobDesc, Frame) {
	t.Helper()
	frames := goldenFrames(t, rel, REQUEST_SUBMIT_BATCH_JOB)
	if len(frames) != 1 {
		t.Fatalf("%s: %d submit requests", rel, len(frames))
	}
	f := frames[0]
	var m JobDesc
	r := NewReader(f.Body)
	if err := m.Decode(&r, f.Version); err != nil {
		t.Fatalf("%s: decode: %v", rel, err)
	}
	var w Writer
	m.Encode(&w, f.Version)
	jcRequireSameBytes(t, rel, w.B, f.Body)
	return m, f
}

func TestJobDescGoldenHold(t *testing.T) {
	for _, rel := range sbatchCaptures {
		m, f := decodeJobDescGolden(t, rel)
		if !m.Held() || m.Priority != 0 {
			t.Errorf("%s: --hold gave priority %#x", rel, m.Priority)
		}
		if m.StdOut != "/tmp/job-%j.out" {
			// The 24.11 capture was made without -o.
			if !(strings.Contains(rel, "24.11") && m.StdOut == "") {
				t.Errorf("%s: std_out %q", rel, m.StdOut)
			}
		}
		if !strings.HasPrefix(m.Script, "#!/bin/sh") || !strings.Contains(m.Script, "sleep 100") {
			t.Errorf("%s: script %q", rel, m.Script)
		}
		if m.Name != "wrap" {
			t.Errorf("%s: name %q", rel, m.Name)
		}
		// 22.05 sbatch fills in its uid/gid (root here); later ones
		// leave SLURM_AUTH_NOBODY for the server to take from the
		// credential.
		wantID := SlurmAuthNobody
		if f.Version < V23_02 {
			wantID = 0
		}
		if len(m.Environment) == 0 || m.UserID != wantID || m.GroupID != wantID {
			t.Errorf("%s: env %d entries, uid %d gid %d", rel, len(m.Environment), m.UserID, m.GroupID)
		}
		// Defaults survive as sentinels.
		if m.TimeLimit != NoVal || m.NumTasks != NoVal || m.PnMinMemory != NoVal64 || m.Partition != "" {
			t.Errorf("%s: defaults: time %#x tasks %#x mem %#x part %q", rel, m.TimeLimit, m.NumTasks, m.PnMinMemory, m.Partition)
		}
		if m.Bitflags&(UseDefaultAcct|UseDefaultPart|UseDefaultQOS|UseDefaultWckey) != UseDefaultAcct|UseDefaultPart|UseDefaultQOS|UseDefaultWckey {
			t.Errorf("%s: bitflags %#x lack USE_DEFAULT_*", rel, m.Bitflags)
		}
		if f.Version < V23_02 && m.SelectPluginID != SELECT_PLUGIN_CONS_TRES {
			t.Errorf("%s: select plugin %d", rel, m.SelectPluginID)
		}
		if f.Version >= V25_11 && m.StepID != NoStepID {
			t.Errorf("%s: step id %+v", rel, m.StepID)
		}
		if f.Version < V25_11 && m.StepID.JobID != NoVal {
			t.Errorf("%s: job id %#x", rel, m.StepID.JobID)
		}
		if m.Crontab != nil {
			t.Errorf("%s: crontab set", rel)
		}
	}
}

func TestJobDescGoldenOptions(t *testing.T) {
	// Dependency targets: the held job each capture set made first
	// (capture-set logs; 24.11 from its squeue capture).
	deps := map[uint16]string{V22_05: "afterok:310", V26_05: "afterok:206"}
	const script = "#!/bin/bash\necho \"task ${SLURM_ARRAY_TASK_ID} FOO=${FOO}\"\n"
	for _, rel := range sbatchOptionCaptures {
		m, f := decodeJobDescGolden(t, rel)
		t.Logf("%s: job_desc %d B, dependency %q begin %d work_dir %q submit_line %q",
			rel, len(f.Body), m.Dependency, m.BeginTime, m.WorkDir, m.SubmitLine)
		check := func(name string, got, want any) {
			t.Helper()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s = %#v, want %#v", rel, name, got, want)
			}
		}
		check("name", m.Name, "optjob")
		check("partition", m.Partition, "debug")
		check("num_tasks", m.NumTasks, uint32(2))
		check("cpus_per_task", m.CPUsPerTask, uint16(2))
		check("pn_min_memory", m.PnMinMemory, uint64(1024))
		perCPU, mb := m.MemPerCPU()
		check("mem per cpu", perCPU, false)
		check("mem MB", mb, uint64(1024))
		check("time_limit", m.TimeLimit, uint32(10))
		check("std_out", m.StdOut, "/tmp/opt-%A_%a.out")
		check("std_err", m.StdErr, "")
		check("array_inx", m.ArrayInx, "1-3")
		check("script", m.Script, script)
		check("priority", m.Priority, NoVal)
		if want, ok := deps[f.Version]; ok {
			check("dependency", m.Dependency, want)
		} else if !strings.HasPrefix(m.Dependency, "afterok:") {
			t.Errorf("%s: dependency %q", rel, m.Dependency)
		}
		if m.BeginTime <= 0 {
			t.Errorf("%s: begin_time %d", rel, m.BeginTime)
		}
		if !slices.Contains(m.Environment, "FOO=bar") {
			t.Errorf("%s: environment lacks FOO=bar: %q", rel, m.Environment)
		}
		if !slices.Contains(m.Environment, "SLURM_EXPORT_ENV=ALL,FOO=bar") {
			t.Errorf("%s: environment lacks SLURM_EXPORT_ENV", rel)
		}
		check("bitflags partition bit", m.Bitflags&UseDefaultPart, uint64(0))
	}
}

// The submit replies: job ids from the capture-set logs, ESLURM_JOB_HELD
// for the held submissions, and the 26.05 step id with its sluid.
func TestSubmitResponseGolden(t *testing.T) {
	type want struct {
		body  int
		jobID uint32
		code  uint32
	}
	cases := map[string]want{
		"slurm-22.05/sbatch-22.05.pcap":         {16, 310, ESLURM_JOB_HELD},
		"slurm-22.05/sbatch-options-22.05.pcap": {16, 313, 0},
		"slurm-24.11/sbatch-24.11.pcap":         {16, 14, ESLURM_JOB_HELD},
		"slurm-24.11/sbatch-options-24.11.pcap": {16, 16, 0},
		"slurm-26.05/sbatch-26.05.pcap":         {28, 206, ESLURM_JOB_HELD},
		"slurm-26.05/sbatch-options-26.05.pcap": {28, 209, 0},
	}
	for rel, c := range cases {
		frames := goldenFrames(t, rel, RESPONSE_SUBMIT_BATCH_JOB)
		if len(frames) != 1 {
			t.Fatalf("%s: %d replies", rel, len(frames))
		}
		f := frames[0]
		if len(f.Body) != c.body {
			t.Errorf("%s: body %d bytes, want %d", rel, len(f.Body), c.body)
		}
		var m SubmitResponse
		r := NewReader(f.Body)
		if err := m.Decode(&r, f.Version); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if m.StepID.JobID != c.jobID || m.StepID.StepID != SLURM_BATCH_SCRIPT || m.ErrorCode != c.code || m.JobSubmitUserMsg != "" {
			t.Errorf("%s: %+v", rel, m)
		}
		if f.Version >= V25_11 && (m.StepID.SLUID == 0 || m.StepID.StepHetComp != NoVal) {
			t.Errorf("%s: 26.05 step id %+v", rel, m.StepID)
		}
		var w Writer
		m.Encode(&w, f.Version)
		jcRequireSameBytes(t, rel, w.B, f.Body)
	}
}

// fullJobDesc returns a JobDesc with every field non-default, trimmed to
// what version carries (so a decode of its encoding must equal it).
func fullJobDesc(version uint16) JobDesc {
	m := JobDesc{
		StepID:            JobStepID{SLUID: 0x1122334455667788, JobID: 77, StepID: NoVal, StepHetComp: NoVal},
		SiteFactor:        NiceOffset + 5,
		BatchFeatures:     "bf",
		ClusterFeatures:   "cf",
		Clusters:          "c1,c2",
		Contiguous:        1,
		Container:         "/bundle",
		ContainerID:       "cid",
		ContainerType:     "oci",
		CoreSpec:          2,
		TaskDist:          3,
		KillOnNodeFail:    0,
		Features:          "a&b",
		FedSiblingsActive: 6,
		FedSiblingsViable: 7,
		JobIDStr:          "12_[1-3]",
		Name:              "n",
		AllocNode:         "host",
		AllocSID:          4242,
		ArrayInx:          "0-9%2",
		BurstBuffer:       "bb",
		PnMinCPUs:         3,
		PnMinMemory:       MemPerCPU | 512,
		MemUpdateDelay:    5,
		MemUpdateMargin:   10,
		OOMKillStep:       1,
		PnMinTmpDisk:      100,
		PowerFlags:        1,
		Prefer:            "fast",
		CPUFreqMin:        1, CPUFreqMax: 2, CPUFreqGov: 3,
		Partition:     "p1,p2",
		Priority:      0,
		Dependency:    "afterany:1",
		Account:       "acct",
		AdminComment:  "ac",
		Comment:       "cm",
		Nice:          NiceOffset + 10,
		Profile:       1,
		QOS:           "normal",
		MCSLabel:      "mcs",
		OriginCluster: "oc",
		OpenMode:      OpenModeAppend,
		Overcommit:    1,
		AcctgFreq:     "task=30",
		NumTasks:      4,
		ReqContext:    "ctx",
		ReqNodes:      "n[1-2]",
		ExcNodes:      "n3",
		Environment:   []string{"A=1", "", "B=2"},
		SpankJobEnv:   []string{"S=1"},
		Script:        "#!/bin/sh\ntrue\n",
		Argv:          []string{"script", "", "arg"},
		StdErr:        "e", StdIn: "i", StdOut: "o", SubmitLine: "sbatch x", WorkDir: "/w",
		Immediate: 1, Reboot: 1, Requeue: 0, Shared: 1, CPUsPerTask: 2,
		NtasksPerNode: 1, NtasksPerBoard: 2, NtasksPerSocket: 3, NtasksPerCore: 4, NtasksPerTRES: 5,
		PlaneSize: 6, CPUBindType: 7, MemBindType: 8, CPUBind: "map_cpu:0", MemBind: "local",
		TimeLimit: 60, TimeMin: 30, MinCPUs: 2, MaxCPUs: 8, MinNodes: 1, MaxNodes: 2,
		JobSizeStr:    "1,2",
		BoardsPerNode: 1, SocketsPerBoard: 2, SocketsPerNode: 3, CoresPerSocket: 4, ThreadsPerCore: 2,
		UserID: 1000, GroupID: 1000, AllocRespPort: 1234, AllocTLSCert: "cert", RespHost: "rh",
		OtherPort: 4321, ResvPortCnt: 2, Network: "net",
		BeginTime: 1700000000, EndTime: 1700003600, Deadline: 1700007200,
		Licenses: "lic:1", MailType: 3, MailUser: "u@x", Reservation: "resv", RestartCnt: 1,
		WarnFlags: 1, WarnSignal: 10, WarnTime: 60, Wckey: "wk", ReqSwitch: 1, Wait4Switch: 60,
		SelectPluginID: SELECT_PLUGIN_LINEAR,
		WaitAllNodes:   1, Bitflags: 1 << 3, DelayBoot: 10, Extra: "x",
		X11: 1, X11MagicCookie: "cookie", X11Target: "t", X11TargetPort: 6010,
		CPUsPerTRES: "gres/gpu:2", MemPerTRES: "gres/gpu:100", TRESBind: "gres/gpu:closest",
		TRESFreq: "gpu:high", TRESPerJob: "gres/gpu:4", TRESPerNode: "gres/gpu:2",
		TRESPerSocket: "gres/gpu:1", TRESPerTask: "gres/gpu:1",
		Crontab: &CronEntry{
			Flags:      1,
			Minute:     &HexBits{NBits: 60, Hex: "0x1"},
			Hour:       nil,
			DayOfMonth: &HexBits{NBits: 32, Hex: "0xFFFFFFFE"},
			Month:      &HexBits{NBits: 13, Hex: "0x1FFE"},
			DayOfWeek:  &HexBits{NBits: 8, Hex: "0xFF"},
			Cronspec:   "*/5 * * * *",
			LineStart:  3, LineEnd: 4,
		},
		SegmentSize: 2,
	}
	m.SetEmptyStr(JDMailUser) // stays "" and MailUser must be "" for that
	m.MailUser = ""
	// Encode adds the USE_DEFAULT bits for NULL strings; none are NULL here.
	if version < V25_11 {
		m.StepID = JobStepID{JobID: 77}
	}
	if version < V23_02 {
		m.ContainerID, m.JobSizeStr = "", ""
	} else {
		m.SelectPluginID = 0
	}
	if version < V26_05 {
		m.ContainerType, m.MemUpdateDelay, m.MemUpdateMargin = "", 0, 0
	}
	if version < V24_11 {
		m.OOMKillStep = 0
	} else {
		m.PowerFlags = 0
	}
	if version < V25_05 {
		m.AllocTLSCert = ""
	}
	if version < V24_05 {
		m.ResvPortCnt, m.SegmentSize = 0, 0
	}
	return m
}

func TestJobDescRoundTripAllVersions(t *testing.T) {
	lens := map[uint16]int{}
	for _, v := range Versions {
		in := fullJobDesc(v)
		var w Writer
		in.Encode(&w, v)
		lens[v] = len(w.B)
		var out JobDesc
		r := NewReader(w.B)
		if err := out.Decode(&r, v); err != nil {
			t.Fatalf("%s: %v", VersionName(v), err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("%s: round trip differs\n in  %+v\n out %+v", VersionName(v), in, out)
		}
		if !out.StrGiven(JDMailUser, out.MailUser) {
			t.Fatalf("%s: empty mail_user lost", VersionName(v))
		}
		// Truncation anywhere is an error, never a panic.
		for n := 0; n < len(w.B); n++ {
			r := NewReader(w.B[:n])
			var m JobDesc
			if err := m.Decode(&r, v); err == nil {
				t.Fatalf("%s: %d of %d bytes decoded", VersionName(v), n, len(w.B))
			}
		}
		r = NewReader(append(w.B, 0))
		if err := out.Decode(&r, v); err != ErrTrailing {
			t.Fatalf("%s: trailing byte: %v", VersionName(v), err)
		}
	}
	// Size differences between layouts, from the pack code: each str is
	// 4 + len + 1 here.
	str := func(s string) int { return 4 + len(s) + 1 }
	steps := []struct {
		from, to uint16
		delta    int
	}{
		{V22_05, V23_02, str("cid") + str("1,2") - 4}, // + container_id, job_size_str; - select plugin id
		{V23_02, V23_11, 0},
		{V23_11, V24_05, 2 + 2},              // + resv_port_cnt, segment_size
		{V24_05, V24_11, 2 - 1},              // + oom_kill_step; - power_flags byte
		{V24_11, V25_05, str("cert")},        // + alloc_tls_cert
		{V25_05, V25_11, 8 + 4 + 4},          // job_id -> sluid + job_id + step_id + het_comp
		{V25_11, V26_05, str("oci") + 2 + 2}, // + container_type, mem_update_delay/margin
	}
	for _, s := range steps {
		if got := lens[s.to] - lens[s.from]; got != s.delta {
			t.Errorf("%s -> %s: size changes by %d, want %d", VersionName(s.from), VersionName(s.to), got, s.delta)
		}
	}
}

// A non-NULL "" (scontrol update Comment= clears the comment) is kept
// apart from NULL and re-encoded as such.
func TestJobDescEmptyVersusNull(t *testing.T) {
	m := NewJobDesc()
	m.JobIDStr = "5"
	m.SetEmptyStr(JDComment)
	var w Writer
	m.Encode(&w, V24_11)
	var got JobDesc
	r := NewReader(w.B)
	if err := got.Decode(&r, V24_11); err != nil {
		t.Fatal(err)
	}
	if !got.StrGiven(JDComment, got.Comment) || got.StrGiven(JDAdminComment, got.AdminComment) {
		t.Fatalf("comment given %v, admin comment given %v", got.StrGiven(JDComment, got.Comment), got.StrGiven(JDAdminComment, got.AdminComment))
	}
	all := UseDefaultAcct | UseDefaultPart | UseDefaultQOS | UseDefaultWckey
	if got.Bitflags&all != all || m.Bitflags != 0 {
		t.Fatalf("USE_DEFAULT bits: encoded %#x, input changed to %#x", got.Bitflags, m.Bitflags)
	}
	// An explicitly empty account is not "use default".
	m.SetEmptyStr(JDAccount)
	w = Writer{}
	m.Encode(&w, V24_11)
	r = NewReader(w.B)
	if err := got.Decode(&r, V24_11); err != nil {
		t.Fatal(err)
	}
	if got.Bitflags&UseDefaultAcct != 0 {
		t.Fatalf("empty account still flagged default")
	}
}

// What scontrol hold / uhold / release put in a job_desc.
func TestJobDescHoldRelease(t *testing.T) {
	for _, c := range []struct {
		name      string
		prio, sid uint32
	}{{"hold", 0, 0}, {"uhold", 0, AllocSIDUserHold}, {"release", Infinite, NoVal}} {
		m := NewJobDesc()
		m.JobIDStr = "123_4"
		m.Priority, m.AllocSID = c.prio, c.sid
		for _, v := range Versions {
			var w Writer
			m.Encode(&w, v)
			var got JobDesc
			r := NewReader(w.B)
			if err := got.Decode(&r, v); err != nil {
				t.Fatalf("%s %s: %v", c.name, VersionName(v), err)
			}
			if got.Priority != c.prio || got.AllocSID != c.sid || got.JobIDStr != "123_4" || got.Held() != (c.prio == 0) {
				t.Fatalf("%s %s: %+v", c.name, VersionName(v), got)
			}
		}
	}
}

func TestJobDescRejects(t *testing.T) {
	m, f := decodeJobDescGolden(t, sbatchCaptures[0])
	// A Cray select plugin (packs data we cannot skip) is refused.
	m.SelectPluginID = 107
	var w Writer
	m.Encode(&w, f.Version)
	r := NewReader(w.B)
	var got JobDesc
	if err := got.Decode(&r, f.Version); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Fatalf("select plugin 107: %v", err)
	}
	// A NULL environment entry is refused (slurmctld's envcount check).
	m = fullJobDesc(V24_11)
	m.Environment = []string{"A=1"}
	w = Writer{}
	m.Encode(&w, V24_11)
	i := bytes.Index(w.B, []byte("\x00\x00\x00\x01\x00\x00\x00\x04A=1\x00"))
	if i < 0 {
		t.Fatal("environment not found")
	}
	bad := append(append(append([]byte(nil), w.B[:i+4]...), 0, 0, 0, 0), w.B[i+12:]...)
	r = NewReader(bad)
	if err := got.Decode(&r, V24_11); err == nil {
		t.Fatal("NULL environment entry accepted")
	}
	// A NO_VAL array count is refused.
	bad = append(append(append([]byte(nil), w.B[:i]...), 0xff, 0xff, 0xff, 0xfe), w.B[i+12:]...)
	r = NewReader(bad)
	if err := got.Decode(&r, V24_11); err == nil {
		t.Fatal("NO_VAL environment count accepted")
	}
}

// jcFuzzVersion maps a fuzz byte to a supported version.
func jcFuzzVersion(b byte) uint16 { return Versions[int(b)%len(Versions)] }

func jcVersionIndex(v uint16) byte {
	return byte(slices.Index(Versions, v))
}

// jcFuzzStable checks decode/encode on arbitrary input: no panic, and a
// message that decoded re-encodes to bytes that decode to the same
// message and re-encode identically.
func jcFuzzStable[T any, P interface {
	*T
	Decode(*Reader, uint16) error
	Encode(*Writer, uint16)
}](t *testing.T, v uint16, body []byte, normalize func(*T)) {
	var a T
	r := NewReader(body)
	if err := P(&a).Decode(&r, v); err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("error %T %v is not an *Error", err, err)
		}
		return
	}
	var w1 Writer
	P(&a).Encode(&w1, v)
	var b T
	r = NewReader(w1.B)
	if err := P(&b).Decode(&r, v); err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	var w2 Writer
	P(&b).Encode(&w2, v)
	if !bytes.Equal(w1.B, w2.B) {
		t.Fatalf("encoding not stable at offset %d", jcFirstDiff(w1.B, w2.B))
	}
	if normalize != nil {
		normalize(&a)
		normalize(&b)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("re-decoded message differs\n a %+v\n b %+v", a, b)
	}
}

func FuzzDecodeJobDesc(f *testing.F) {
	for _, rel := range append(append([]string{}, sbatchCaptures...), sbatchOptionCaptures...) {
		for _, fr := range goldenFrames(f, rel, REQUEST_SUBMIT_BATCH_JOB) {
			f.Add(jcVersionIndex(fr.Version), fr.Body)
		}
	}
	for _, v := range Versions {
		m := fullJobDesc(v)
		var w Writer
		m.Encode(&w, v)
		f.Add(jcVersionIndex(v), w.B)
	}
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		// Encode sets the USE_DEFAULT bits, so only the second round
		// must match them; argv NULL entries come back as "".
		jcFuzzStable[JobDesc](t, jcFuzzVersion(vb), body, func(m *JobDesc) {
			m.Bitflags &^= UseDefaultAcct | UseDefaultPart | UseDefaultQOS | UseDefaultWckey
			if m.SelectPluginID == 0 {
				m.SelectPluginID = SELECT_PLUGIN_CONS_TRES
			}
		})
	})
}

func FuzzDecodeSubmitResponse(f *testing.F) {
	for _, rel := range sbatchCaptures {
		for _, fr := range goldenFrames(f, rel, RESPONSE_SUBMIT_BATCH_JOB) {
			f.Add(jcVersionIndex(fr.Version), fr.Body)
		}
	}
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SubmitResponse](t, jcFuzzVersion(vb), body, nil)
	})
}
