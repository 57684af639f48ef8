package codec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// populatedStep returns a step record with every field of version v set
// to a distinct value.
func populatedStep(v uint16, seed uint32) JobStepInfo {
	n := seed
	u32 := func() uint32 { n++; return n }
	str := func(p string) string { n++; return fmt.Sprintf("%s-%d", p, n) }
	s := JobStepInfo{
		ArrayJobID: u32(), ArrayTaskID: NoVal,
		StepID: JobStepID{JobID: u32(), StepID: 0, StepHetComp: NoVal},
		UserID: u32(), NumCPUs: u32(), CPUFreqMin: NoVal, CPUFreqMax: u32(), CPUFreqGov: u32(),
		NumTasks: u32(), TaskDist: 0x2000, TimeLimit: Infinite, State: JOB_RUNNING, SrunPID: u32(),
		StartTime: 1796057000, RunTime: 42,
		Cluster: str("cl"), Container: str("ct"), Partition: str("p"), SrunHost: str("login"),
		ResvPorts: str("12000-12001"), Nodes: "n[1-2]", Name: str("bash"), Network: str("net"),
		NodeInx: NewHexBits(16, 0, 1), TRESAllocStr: str("cpu=2"), StartProtocolVer: v,
		CPUsPerTRES: str("cpt"), MemPerTRES: str("mpt"), SubmitLine: str("srun bash"),
		TRESBind: str("tb"), TRESFreq: str("tf"), TRESPerStep: str("tps"), TRESPerNode: str("tpn"),
		TRESPerSocket: str("tpsk"), TRESPerTask: str("tpt"),
	}
	if v == V22_05 {
		s.SelectPluginID = SELECT_PLUGIN_CONS_TRES
	}
	if v >= V23_02 {
		s.ContainerID = str("cid")
	}
	if v >= V24_11 {
		s.StepID.SLUID = 0x1122334455
	}
	if v >= V25_05 {
		s.JobName, s.Cwd, s.StdErr, s.StdIn, s.StdOut = str("jn"), str("/w"), str("e"), str("i"), str("o")
	}
	if v >= V26_05 {
		s.ContainerType = str("oci")
	}
	return s
}

func TestJobStepInfoRoundTrip(t *testing.T) {
	for _, v := range Versions {
		m := JobStepInfoMsg{LastUpdate: 1796057001, Steps: []JobStepInfo{populatedStep(v, 100), populatedStep(v, 200)}}
		if v >= V24_05 {
			m.StepMgrSet = true
			m.StepMgrJobs = []StepMgrJob{{StepID: JobStepID{JobID: 77}, StepMgr: "n1"}}
			if v >= V25_11 {
				m.StepMgrJobs[0].StepID = JobStepID{SLUID: 5, JobID: 77, StepID: NoVal, StepHetComp: NoVal}
			}
		}
		var w Writer
		m.Encode(&w, v)
		var got JobStepInfoMsg
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil {
			t.Fatalf("%s: %v", VersionName(v), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("%s: round trip differs\n got  %+v\n want %+v", VersionName(v), got, m)
		}
		// The step record alone.
		var sw Writer
		m.Steps[0].Encode(&sw, v)
		var s JobStepInfo
		r = NewReader(sw.B)
		if err := s.Decode(&r, v); err != nil || r.Remaining() != 0 || !reflect.DeepEqual(s, m.Steps[0]) {
			t.Fatalf("%s: step round trip: %v", VersionName(v), err)
		}
	}
}

// TestJobStepInfoEmpty checks the reply the server sends first: no steps.
func TestJobStepInfoEmpty(t *testing.T) {
	for _, v := range Versions {
		var w Writer
		(&JobStepInfoMsg{LastUpdate: 0x0102030405060708}).Encode(&w, v)
		want := []byte{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
		if v >= V24_05 {
			want = append(want, 0xff, 0xff, 0xff, 0xfe) // NULL stepmgr list
		}
		jobRequireSame(t, VersionName(v), w.B, want)
		var m JobStepInfoMsg
		r := NewReader(w.B)
		if err := m.Decode(&r, v); err != nil || len(m.Steps) != 0 || m.StepMgrSet || m.LastUpdate != 0x0102030405060708 {
			t.Errorf("%s: %+v %v", VersionName(v), m, err)
		}
	}
}

func TestJobStepInfoLayoutSizes(t *testing.T) {
	size := func(v uint16) int {
		var w Writer
		var s JobStepInfo
		s.Encode(&w, v)
		return len(w.B)
	}
	// 22.05 by hand from _unpack_job_step_info_members: 2 array ids, a
	// 3-u32 step_id, 10 more u32, the select plugin id, 2 times, 18
	// strings, the node_inx bitmap, start_protocol_ver.
	if got := size(V22_05); got != (2+3+10)*4+4+2*8+18*4+4+2 {
		t.Errorf("22.05 empty step %d bytes", got)
	}
	deltas := []struct {
		a, b uint16
		d    int
		why  string
	}{
		{V22_05, V23_02, 0, "23.02: +container_id, -select jobinfo"},
		{V23_02, V23_11, 0, "23.11"},
		{V23_11, V24_05, 0, "24.05"},
		{V24_05, V24_11, 8, "24.11: sluid in step_id"},
		{V24_11, V25_05, 20, "25.05: +job_name, cwd, std_err, std_in, std_out"},
		{V25_05, V25_11, 0, "25.11"},
		{V25_11, V26_05, 4, "26.05: +container_type"},
	}
	for _, c := range deltas {
		if d := size(c.b) - size(c.a); d != c.d {
			t.Errorf("%s: grew by %d, want %d", c.why, d, c.d)
		}
	}
}

func TestJobStepInfoRequest(t *testing.T) {
	all := JobStepInfoRequest{StepID: JobStepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal}, ShowFlags: 0x10}
	for _, v := range Versions {
		var w Writer
		all.Encode(&w, v)
		want := 8 + 12 + 2
		if v >= V24_11 {
			want += 8
		}
		if len(w.B) != want {
			t.Errorf("%s: %d bytes, want %d", VersionName(v), len(w.B), want)
		}
		var got JobStepInfoRequest
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || got != all || r.Remaining() != 0 {
			t.Errorf("%s: %+v %v", VersionName(v), got, err)
		}
		r = NewReader(w.B[:len(w.B)-1])
		if err := got.Decode(&r, v); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("%s: short request: %v", VersionName(v), err)
		}
	}
}

func TestJobStepInfoRejects(t *testing.T) {
	for _, v := range Versions {
		m := JobStepInfoMsg{LastUpdate: 1, Steps: []JobStepInfo{populatedStep(v, 1)}, StepMgrSet: v >= V24_05}
		var w Writer
		m.Encode(&w, v)
		for n := 0; n < len(w.B); n++ {
			var d JobStepInfoMsg
			r := NewReader(w.B[:n])
			if err := d.Decode(&r, v); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
				t.Fatalf("%s: %d-byte prefix: %v", VersionName(v), n, err)
			}
		}
		var d JobStepInfoMsg
		r := NewReader(append(bytes.Clone(w.B), 0))
		if err := d.Decode(&r, v); !errors.Is(err, ErrTrailing) {
			t.Errorf("%s: trailing: %v", VersionName(v), err)
		}
		big := bytes.Clone(w.B)
		big[0] = 0x7f
		r = NewReader(big)
		if err := d.Decode(&r, v); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("%s: huge count: %v", VersionName(v), err)
		}
	}
}

// FuzzDecodeJobStepInfoMsg: never panics; re-encoding is stable.
func FuzzDecodeJobStepInfoMsg(f *testing.F) {
	for _, v := range Versions {
		m := JobStepInfoMsg{Steps: []JobStepInfo{populatedStep(v, 9)}, StepMgrSet: v >= V24_05,
			StepMgrJobs: []StepMgrJob{{StepMgr: "n1"}}}
		if v < V24_05 {
			m.StepMgrJobs = nil
		}
		var w Writer
		m.Encode(&w, v)
		f.Add(w.B, v)
	}
	f.Fuzz(func(t *testing.T, b []byte, v uint16) {
		if !SupportedVersion(v) {
			return
		}
		var m JobStepInfoMsg
		r := NewReader(b)
		if m.Decode(&r, v) != nil {
			return
		}
		var w Writer
		m.Encode(&w, v)
		var m2 JobStepInfoMsg
		r2 := NewReader(w.B)
		if err := m2.Decode(&r2, v); err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encoded message differs: %v", err)
		}
	})
}

func TestJobStepInfoEmptyStringKept(t *testing.T) {
	s := populatedStep(V24_11, 1)
	s.Cluster, s.empty = "", 1<<ssfCluster
	var w Writer
	s.Encode(&w, V24_11)
	if !bytes.Contains(w.B, []byte{0, 0, 0, 1, 0}) {
		t.Fatalf("non-NULL empty cluster not encoded")
	}
	var d JobStepInfo
	r := NewReader(w.B)
	if err := d.Decode(&r, V24_11); err != nil || !reflect.DeepEqual(d, s) {
		t.Fatalf("round trip: %v", err)
	}
}
