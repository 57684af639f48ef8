package codec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/lablup/slurm-frontend/codec/capture"
)

// allocRuns are the real srun/salloc runs (testdata/slurm-*-steps, see
// each README): the job each ran as, its task count, the raw wait status
// its tasks exited with (NoVal: no MESSAGE_TASK_EXIT in the capture) and
// its command's stdout (task I/O, see io_test.go).
var allocRuns = []struct {
	rel    string
	job    uint32
	ntasks int
	status uint32
}{
	{"slurm-22.05-steps/srun-n2-hostname-22.05.pcap", 1, 2, 0},
	{"slurm-22.05-steps/srun-exit5-22.05.pcap", 2, 1, 5 << 8},
	{"slurm-22.05-steps/salloc-srun-22.05.pcap", 3, 2, 0},
	{"slurm-22.05-steps/srun-pty-resize-22.05.pcap", 4, 1, 3 << 8},
	{"slurm-24.11-steps/srun-n2-hostname-24.11.pcap", 9, 2, 0},
	{"slurm-24.11-steps/srun-exit5-24.11.pcap", 10, 1, 5 << 8},
	{"slurm-24.11-steps/srun-l-n2-echo-24.11.pcap", 11, 2, 0},
	{"slurm-24.11-steps/salloc-srun-24.11.pcap", 12, 2, 0},
	{"slurm-24.11-steps/srun-stdin-cat-24.11.pcap", 13, 1, 0},
	{"slurm-24.11-steps/srun-pty-resize-24.11.pcap", 14, 1, 3 << 8},
	{"slurm-24.11-steps/sbatch-with-srun-steps-24.11.pcap", 15, 2, 0},
	{"slurm-24.11-steps/step-show-cancel-24.11.pcap", 16, 1, 9}, // SIGKILL
	{"slurm-26.05-steps/srun-n2-hostname-26.05.pcap", 1, 2, 0},
	{"slurm-26.05-steps/srun-exit5-26.05.pcap", 2, 1, 5 << 8},
	{"slurm-26.05-steps/salloc-srun-26.05.pcap", 3, 2, 0},
	{"slurm-26.05-steps/srun-pty-resize-26.05.pcap", 4, 1, NoVal}, // hung after Ctrl-C (README)
}

// allocRunVersions are the versions of the step captures.
var allocRunVersions = []uint16{V22_05, V24_11, V26_05}

// allocConns parses a capture under testdata into its TCP connections.
func allocConns(t testing.TB, rel string) []capture.Conn {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatalf("read capture: %v", err)
	}
	conns, err := capture.Parse(b)
	if err != nil {
		t.Fatalf("parse capture %s: %v", rel, err)
	}
	return conns
}

// allocFrames returns every Slurm-framed message of type msgType in rel
// (none is not an error: not every run sends every message).
func allocFrames(t testing.TB, rel string, msgType uint16) []Frame {
	t.Helper()
	var out []Frame
	for _, c := range allocConns(t, rel) {
		for _, list := range [][][]byte{c.Requests, c.Replies} {
			for _, raw := range list {
				var f Frame
				if DecodeFrame(raw, &f) == nil && f.MsgType == msgType {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// codecOf is what every message type here satisfies.
type codecOf[T any] interface {
	*T
	Decode(*Reader, uint16) error
	Encode(*Writer, uint16)
}

// allocGolden decodes every frame of msgType in rel as T, requires that
// it re-encodes to the captured body, that every shorter prefix of the
// body fails to decode (without panicking) and that a trailing byte is
// refused. It returns the messages with their frames.
func allocGolden[T any, P codecOf[T]](t *testing.T, rel string, msgType uint16) ([]T, []Frame) {
	t.Helper()
	frames := allocFrames(t, rel, msgType)
	out := make([]T, len(frames))
	for i, f := range frames {
		name := rel + " " + MsgTypeName(msgType)
		r := NewReader(f.Body)
		if err := P(&out[i]).Decode(&r, f.Version); err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		var w Writer
		P(&out[i]).Encode(&w, f.Version)
		jcRequireSameBytes(t, name, w.B, f.Body)
		allocRequireTruncFails[T, P](t, name, f.Version, f.Body)
	}
	return out, frames
}

// allocRequireTruncFails checks that every proper prefix of body fails
// to decode and that body plus one byte is refused.
func allocRequireTruncFails[T any, P codecOf[T]](t *testing.T, name string, version uint16, body []byte) {
	t.Helper()
	for n := 0; n < len(body); n++ {
		var m T
		r := NewReader(body[:n])
		err := P(&m).Decode(&r, version)
		if err == nil {
			t.Fatalf("%s: %d of %d bytes decoded", name, n, len(body))
		}
		if _, ok := err.(*Error); !ok {
			t.Fatalf("%s: %d bytes: error %T is not an *Error", name, n, err)
		}
	}
	var m T
	r := NewReader(append(append([]byte(nil), body...), 0))
	if err := P(&m).Decode(&r, version); err != ErrTrailing {
		t.Fatalf("%s: trailing byte: %v", name, err)
	}
}

// allocSeenVersions fails unless every step version was seen.
func allocSeenVersions(t *testing.T, what string, seen map[uint16]int) {
	t.Helper()
	for _, v := range allocRunVersions {
		if seen[v] == 0 {
			t.Errorf("%s: no golden frame for %s", what, VersionName(v))
		}
	}
}

// allocCheckGranted checks what a user recognises in an allocation of
// the one-node test cluster: job id, node n1, partition debug, a cpu
// group covering the node, root as the user (23.02+), the select plugin
// (22.05) and the job's step id (25.11+).
func allocCheckGranted(t *testing.T, name string, v uint16, job uint32, m *ResourceAllocation) {
	t.Helper()
	if m.JobID != job || m.NodeCnt != 1 || m.NodeList != "n1" || m.BatchHost != "n1" || m.Partition != "debug" || m.ErrorCode != 0 {
		t.Errorf("%s: job %d nodes %d %q batch %q partition %q rc %d", name, m.JobID, m.NodeCnt, m.NodeList, m.BatchHost, m.Partition, m.ErrorCode)
	}
	if len(m.CPUsPerNode) != 1 || len(m.CPUCountReps) != 1 || m.CPUCountReps[0] != 1 || m.CPUsPerNode[0] == 0 {
		t.Errorf("%s: cpu groups %v x %v", name, m.CPUsPerNode, m.CPUCountReps)
	}
	if m.NodeAddrs != nil || m.AliasList != "" || m.NtasksPerCore != Infinite16 {
		t.Errorf("%s: node addrs %v alias %q ntasks_per_core %#x", name, m.NodeAddrs, m.AliasList, m.NtasksPerCore)
	}
	switch {
	case v < V23_02:
		if m.SelectPluginID != SELECT_PLUGIN_CONS_TRES || m.UserName != "" {
			t.Errorf("%s: select plugin %d user %q", name, m.SelectPluginID, m.UserName)
		}
	default:
		if m.UserName != "root" || m.GroupName != "root" || m.UID != 0 || m.GID != 0 || m.SelectPluginID != 0 {
			t.Errorf("%s: user %q/%d group %q/%d select %d", name, m.UserName, m.UID, m.GroupName, m.GID, m.SelectPluginID)
		}
	}
	if v >= V25_11 {
		if m.SLUID == 0 || m.StepID != NoVal || m.StepHetComp != NoVal {
			t.Errorf("%s: step id %#x.%#x.%#x", name, m.SLUID, m.StepID, m.StepHetComp)
		}
	} else if m.SLUID != 0 || m.StepID != NoVal || m.StepHetComp != NoVal {
		t.Errorf("%s: pre-25.11 step id %#x.%#x.%#x", name, m.SLUID, m.StepID, m.StepHetComp)
	}
}

func TestResourceAllocationGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		msgs, frames := allocGolden[ResourceAllocation](t, c.rel, RESPONSE_RESOURCE_ALLOCATION)
		for i := range msgs {
			v := frames[i].Version
			seen[v]++
			allocCheckGranted(t, c.rel, v, c.job, &msgs[i])
			// The captured bodies: 74/90/109 bytes of fixed fields
			// plus the strings and one cpu group.
			if v == V26_05 {
				want := "SLURM_TASKS_PER_NODE=1"
				if c.ntasks == 2 {
					want = "SLURM_TASKS_PER_NODE=2"
				}
				if len(msgs[i].Environment) != 1 || msgs[i].Environment[0] != want || msgs[i].StartProtocolVer != V26_05 {
					t.Errorf("%s: environment %q start protocol %#x", c.rel, msgs[i].Environment, msgs[i].StartProtocolVer)
				}
			}
		}
	}
	allocSeenVersions(t, "RESPONSE_RESOURCE_ALLOCATION", seen)
}

func TestHetJobAllocationGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		reqs, rf := allocGolden[JobAllocInfoRequest](t, c.rel, REQUEST_HET_JOB_ALLOC_INFO)
		resps, pf := allocGolden[HetJobAllocation](t, c.rel, RESPONSE_HET_JOB_ALLOCATION)
		if len(reqs) != len(resps) {
			t.Fatalf("%s: %d het alloc info requests, %d replies", c.rel, len(reqs), len(resps))
		}
		for i := range reqs {
			v := rf[i].Version
			seen[v]++
			q := reqs[i]
			// srun inside salloc/sbatch asks for its job by id.
			if q.JobID != c.job || q.ReqCluster != "refcluster" || q.SLUID != 0 || q.StepID != NoVal || q.StepHetComp != NoVal {
				t.Errorf("%s: het alloc info request %+v", c.rel, q)
			}
			if len(resps[i]) != 1 || pf[i].Version != v {
				t.Fatalf("%s: %d allocation records", c.rel, len(resps[i]))
			}
			allocCheckGranted(t, c.rel+" het", v, c.job, &resps[i][0])
		}
	}
	allocSeenVersions(t, "RESPONSE_HET_JOB_ALLOCATION", seen)
}

func TestCompleteJobAllocationGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		msgs, frames := allocGolden[CompleteJobAllocation](t, c.rel, REQUEST_COMPLETE_JOB_ALLOCATION)
		for i, m := range msgs {
			v := frames[i].Version
			seen[v]++
			if m.JobID != c.job {
				t.Errorf("%s: complete job %d", c.rel, m.JobID)
			}
			// job_rc is the command's raw status (srun's global rc,
			// salloc's child status).
			if c.status != NoVal && m.JobRC != c.status {
				t.Errorf("%s: job_rc %#x, want %#x", c.rel, m.JobRC, c.status)
			}
			if v >= V25_11 && m.SLUID == 0 {
				t.Errorf("%s: 26.05 completion without sluid", c.rel)
			}
			want := map[uint16]int{V22_05: 8, V24_11: 8, V26_05: 24}[v]
			if len(frames[i].Body) != want {
				t.Errorf("%s: body %d bytes, want %d", c.rel, len(frames[i].Body), want)
			}
		}
	}
	allocSeenVersions(t, "REQUEST_COMPLETE_JOB_ALLOCATION", seen)
}

func TestSrunJobCompleteGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		msgs, frames := allocGolden[SrunStepMsg](t, c.rel, SRUN_JOB_COMPLETE)
		for i, m := range msgs {
			seen[frames[i].Version]++
			s := m.StepID
			// Step 0 (the step ends, to srun's step port) or the
			// whole job (StepID NO_VAL).
			if s.JobID != c.job || (s.StepID != 0 && s.StepID != NoVal) || s.StepHetComp != NoVal {
				t.Errorf("%s: SRUN_JOB_COMPLETE %+v", c.rel, s)
			}
		}
	}
	// The 26.05 runs end before slurmctld's SRUN_JOB_COMPLETE.
	if seen[V22_05] == 0 || seen[V24_11] == 0 {
		t.Errorf("SRUN_JOB_COMPLETE seen %v", seen)
	}
}

// allocSample is a ResourceAllocation with every field the version
// carries set (and the others as a decoder leaves them).
func allocSample(v uint16) ResourceAllocation {
	m := ResourceAllocation{
		Account: "acct", AliasList: "n1:10.0.0.1:n1", BatchHost: "n1",
		Environment: []string{"A=1", "", "SLURM_TASKS_PER_NODE=2(x2)"},
		ErrorCode:   ESLURM_JOB_PENDING, GID: 100, GroupName: "users",
		JobSubmitUserMsg: "be nice", JobID: 4242, NodeCnt: 2,
		NodeAddrs: []WireAddr{
			{Family: 2, IPv4: 0x0100000a, Port: 0x221a},
			{Family: 10, IPv6: [16]byte{0xfe, 0x80, 15: 1}, Port: 0x221a},
		},
		NodeList: "n[1-2]", NtasksPerBoard: NoVal16, NtasksPerCore: Infinite16, NtasksPerTres: 0, NtasksPerSocket: 3,
		CPUsPerNode: []uint16{4, 2}, CPUCountReps: []uint32{1, 1},
		Partition: "debug", PnMinMemory: MemPerCPU | 512, QOS: "normal", ResvName: "",
		SelectPluginID: SELECT_PLUGIN_LINEAR, SegmentSize: 2, StartProtocolVer: V25_11,
		SLUID: 0x0038a688cc12c1a4, StepID: NoVal, StepHetComp: NoVal,
		TresPerNode: "gres/gpu:1", TresPerTask: "cpu=2", UID: 1000, UserName: "alice",
		EmptyStrs: RAEmptyResvName,
	}
	if v >= V23_02 {
		m.SelectPluginID = 0
	} else {
		m.GID, m.GroupName, m.TresPerNode, m.UID, m.UserName = 0, "", "", 0, ""
	}
	if v >= V25_05 {
		m.AliasList, m.NodeAddrs = "", nil
	} else {
		m.TresPerTask = ""
	}
	if v < V25_11 {
		m.SegmentSize, m.StartProtocolVer, m.SLUID = 0, 0, 0
	}
	return m
}

func TestAllocRoundTripAllVersions(t *testing.T) {
	str := func(s string) int { return 4 + len(s) + 1 }
	for _, v := range Versions {
		sl := 12
		if v >= V24_11 {
			sl = 20
		}
		// Fixed part of an allocation with every string NULL and no
		// cpu groups: 74 bytes in 22.05, 90 in 23.02-24.11, 89 in
		// 25.05, 109 from 25.11.
		min := map[uint16]int{V22_05: 74, V23_02: 90, V23_11: 90, V24_05: 90, V24_11: 90, V25_05: 89, V25_11: 109, V26_05: 109}[v]
		b := jcRoundTrip(t, "empty allocation", v, func() ResourceAllocation {
			m := ResourceAllocation{SLUID: 0, StepID: NoVal, StepHetComp: NoVal}
			if v < V23_02 {
				m.SelectPluginID = SELECT_PLUGIN_CONS_TRES
			}
			return m
		}())
		if len(b) != min {
			t.Errorf("empty allocation %s: %d bytes, want %d", VersionName(v), len(b), min)
		}
		full := allocSample(v)
		jcRoundTrip(t, "allocation", v, full)
		jcRoundTrip(t, "het allocation", v, HetJobAllocation{full, allocSample(v)})
		if b := jcRoundTrip(t, "empty het allocation", v, HetJobAllocation(nil)); len(b) != 2 {
			t.Errorf("empty het allocation %s: %d bytes", VersionName(v), len(b))
		}

		// Before 25.11 only the job id is sent; the rest decodes as
		// SLURM_STEP_ID_INITIALIZER.
		sluid, step, het, jl := uint64(0), NoVal, NoVal, 4
		if v >= V25_11 {
			sluid, step, het, jl = 77, 0, NoVal, 20
		}
		if b := jcRoundTrip(t, "alloc info", v, JobAllocInfoRequest{JobID: 12, ReqCluster: "refcluster", SLUID: sluid, StepID: step, StepHetComp: het}); len(b) != jl+str("refcluster") {
			t.Errorf("alloc info %s: %d bytes", VersionName(v), len(b))
		}
		jcRoundTrip(t, "alloc info empty", v, JobAllocInfoRequest{JobID: 12, SLUID: sluid, StepID: step, StepHetComp: het, EmptyStrs: 1})
		if b := jcRoundTrip(t, "complete", v, CompleteJobAllocation{JobID: 12, JobRC: 5 << 8, SLUID: sluid, StepID: step, StepHetComp: het}); len(b) != jl+4 {
			t.Errorf("complete %s: %d bytes", VersionName(v), len(b))
		}
		if b := jcRoundTrip(t, "user msg", v, SrunUserMsg{JobID: 12, Msg: "hello", SLUID: sluid, StepID: step, StepHetComp: het}); len(b) != jl+str("hello") {
			t.Errorf("user msg %s: %d bytes", VersionName(v), len(b))
		}

		s := jcStepFor(JobStepID{SLUID: 9, JobID: 12, StepID: 0, StepHetComp: NoVal}, v)
		if b := jcRoundTrip(t, "job complete", v, SrunStepMsg{StepID: s}); len(b) != sl {
			t.Errorf("job complete %s: %d bytes", VersionName(v), len(b))
		}
		if b := jcRoundTrip(t, "timeout", v, SrunTimeout{StepID: s, Timeout: 1764615600}); len(b) != sl+8 {
			t.Errorf("timeout %s: %d bytes", VersionName(v), len(b))
		}
		if b := jcRoundTrip(t, "node fail", v, SrunNodeFail{StepID: s, NodeList: "n[2-3]"}); len(b) != sl+str("n[2-3]") {
			t.Errorf("node fail %s: %d bytes", VersionName(v), len(b))
		}
		if b := jcRoundTrip(t, "step missing", v, SrunStepMissing{StepID: s, NodeList: "n1"}); len(b) != sl+str("n1") {
			t.Errorf("step missing %s: %d bytes", VersionName(v), len(b))
		}
		if b := jcRoundTrip(t, "step signal", v, SrunStepSignal{StepID: s, Signal: 10, Flags: KillStepsOnly}); len(b) != sl+4+4+4 {
			t.Errorf("step signal %s: %d bytes", VersionName(v), len(b))
		}
		var w Writer
		(&SrunPing{}).Encode(&w, v)
		r := NewReader(w.B)
		if err := (&SrunPing{}).Decode(&r, v); err != nil || len(w.B) != 0 {
			t.Errorf("ping %s: %v, %d bytes", VersionName(v), err, len(w.B))
		}
		r = NewReader([]byte{0})
		if err := (&SrunPing{}).Decode(&r, v); err != ErrTrailing {
			t.Errorf("ping with a body %s: %v", VersionName(v), err)
		}
	}
}

// The layouts differ in the middle: pin the bytes of a small record in
// each family of versions.
func TestResourceAllocationLayouts(t *testing.T) {
	m := ResourceAllocation{JobID: 0x01020304, NodeCnt: 1, NodeList: "n", CPUsPerNode: []uint16{2}, CPUCountReps: []uint32{1},
		PnMinMemory: 0x10, UID: 7, UserName: "u", TresPerTask: "t", SegmentSize: 0x0506, StartProtocolVer: V26_05,
		SLUID: 0x1112131415161718, StepID: NoVal, StepHetComp: NoVal}
	null := []byte{0, 0, 0, 0}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	u32 := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	groups := cat(u32(1), u32(1), []byte{0, 2}, u32(1), u32(1))
	ntasks := make([]byte, 8)
	mem := []byte{0, 0, 0, 0, 0, 0, 0, 0x10}
	n := []byte{0, 0, 0, 2, 'n', 0}
	us := []byte{0, 0, 0, 2, 'u', 0}
	ts := []byte{0, 0, 0, 2, 't', 0}

	m22 := m
	m22.UID, m22.UserName, m22.TresPerTask, m22.SegmentSize, m22.StartProtocolVer, m22.SLUID = 0, "", "", 0, 0, 0
	want22 := cat(null, null, null, u32(0), u32(0), null, u32(0x01020304), u32(1), []byte{0}, n, ntasks, groups, null, mem, null, null, u32(SELECT_PLUGIN_CONS_TRES), []byte{0})
	var w Writer
	m22.Encode(&w, V22_05)
	jcRequireSameBytes(t, "allocation 22.05", w.B, want22)

	m24 := m22
	m24.UID, m24.UserName = 7, "u"
	want24 := cat(null, null, null, u32(0), u32(0), u32(0), null, null, u32(0x01020304), u32(1), []byte{0}, n, ntasks, groups, null, mem, null, null, null, u32(7), us, []byte{0})
	w = Writer{}
	m24.Encode(&w, V24_11)
	jcRequireSameBytes(t, "allocation 24.11", w.B, want24)

	m26 := m
	want26 := cat(null, null, u32(0), u32(0), u32(0), null, null, u32(1), n, ntasks, groups, null, mem, null, null,
		[]byte{5, 6, 0x2d, 0}, []byte{0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}, u32(0x01020304), u32(NoVal), u32(NoVal),
		null, ts, u32(7), us, []byte{0})
	w = Writer{}
	m26.Encode(&w, V26_05)
	jcRequireSameBytes(t, "allocation 26.05", w.B, want26)
}

func TestResourceAllocationRefuses(t *testing.T) {
	for _, v := range Versions {
		base := allocSample(v)
		var w Writer
		base.Encode(&w, v)
		b := w.B

		// A working_cluster_rec (last byte) is refused with a clear
		// error.
		wcr := append(append([]byte(nil), b[:len(b)-1]...), 1, 0, 0, 0, 0)
		var m ResourceAllocation
		r := NewReader(wcr)
		if err := m.Decode(&r, v); CodeOf(err) != ESLURM_NOT_SUPPORTED {
			t.Errorf("%s: working_cluster_rec: %v", VersionName(v), err)
		}

		// cpu group arrays must match num_cpu_groups.
		bad := allocSample(v)
		bad.CPUCountReps = []uint32{2}
		w = Writer{}
		bad.Encode(&w, v)
		r = NewReader(w.B)
		if err := m.Decode(&r, v); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("%s: mismatched cpu groups: %v", VersionName(v), err)
		}

		if v < V25_05 {
			// node_addr must have node_cnt entries.
			bad = allocSample(v)
			bad.NodeCnt = 3
			w = Writer{}
			bad.Encode(&w, v)
			r = NewReader(w.B)
			if err := m.Decode(&r, v); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
				t.Errorf("%s: node addr count: %v", VersionName(v), err)
			}
		}
	}
	// 22.05's select_jobinfo names a plugin without data; Cray ones
	// are refused.
	m := allocSample(V22_05)
	m.SelectPluginID = SELECT_PLUGIN_CRAY_CONS_TRES
	var w Writer
	m.Encode(&w, V22_05)
	r := NewReader(w.B)
	if err := m.Decode(&r, V22_05); err == nil {
		t.Error("cray select plugin accepted")
	}
	// A het list of 0xffff records is refused before any allocation.
	var h HetJobAllocation
	r = NewReader([]byte{0xff, 0xff})
	if err := h.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("het count 0xffff: %v", err)
	}
}

// allocDecoders are the decoders of alloc.go and taskmsg.go, for the
// allocation-bound checks (allocbound_test.go's list is not ours to
// extend).
var allocDecoders = []struct {
	name string
	new  func() decoder
}{
	{"ResourceAllocation", func() decoder { return new(ResourceAllocation) }},
	{"HetJobAllocation", func() decoder { return new(HetJobAllocation) }},
	{"JobAllocInfoRequest", func() decoder { return new(JobAllocInfoRequest) }},
	{"CompleteJobAllocation", func() decoder { return new(CompleteJobAllocation) }},
	{"SrunPing", func() decoder { return new(SrunPing) }},
	{"SrunStepMsg", func() decoder { return new(SrunStepMsg) }},
	{"SrunTimeout", func() decoder { return new(SrunTimeout) }},
	{"SrunUserMsg", func() decoder { return new(SrunUserMsg) }},
	{"SrunNodeFail", func() decoder { return new(SrunNodeFail) }},
	{"SrunStepMissing", func() decoder { return new(SrunStepMissing) }},
	{"SrunStepSignal", func() decoder { return new(SrunStepSignal) }},
	{"LaunchTasksResponse", func() decoder { return new(LaunchTasksResponse) }},
	{"TaskExitMsg", func() decoder { return new(TaskExitMsg) }},
	{"SignalTasksRequest", func() decoder { return new(SignalTasksRequest) }},
	{"StepCompleteRequest", func() decoder { return new(StepCompleteRequest) }},
}

func TestAllocBoundStepMessages(t *testing.T) {
	bodies := hostileBodies()
	// Hostile counts behind a valid prefix of each message: a
	// jobacct flag, a node_addr flag.
	for _, v := range allocRunVersions {
		var w Writer
		(&StepCompleteRequest{StepID: NoStepID}).Encode(&w, v)
		// Drop the jobacct flag (and 24.05+'s send_to_stepmgr), then
		// claim a jobacct record.
		pre := w.B[:len(w.B)-1]
		if v >= V24_05 {
			pre = pre[:len(pre)-1]
		}
		pre = append(pre, 1)
		bodies = append(bodies, append(pre, bytes.Repeat([]byte{0x7f, 0xff, 0xff, 0xff}, 64)...))
	}
	for _, d := range allocDecoders {
		for _, v := range Versions {
			for _, b := range bodies {
				checkAllocBound(t, d.name, d.new(), v, b)
			}
		}
	}
}

func FuzzAllocBoundStepMessages(f *testing.F) {
	for i := range allocDecoders {
		for _, b := range hostileBodies()[:8] {
			f.Add(byte(i), uint16(V24_11), b)
		}
	}
	f.Fuzz(func(t *testing.T, which byte, v uint16, body []byte) {
		d := allocDecoders[int(which)%len(allocDecoders)]
		checkAllocBound(t, d.name, d.new(), Versions[int(v)%len(Versions)], body)
	})
}

// allocSeedGolden adds every captured body of msgType as a fuzz seed.
func allocSeedGolden(f *testing.F, msgType uint16) {
	for _, c := range allocRuns {
		for _, fr := range allocFrames(f, c.rel, msgType) {
			f.Add(jcVersionIndex(fr.Version), fr.Body)
		}
	}
}

func FuzzDecodeResourceAllocation(f *testing.F) {
	allocSeedGolden(f, RESPONSE_RESOURCE_ALLOCATION)
	for _, v := range Versions {
		m := allocSample(v)
		var w Writer
		m.Encode(&w, v)
		f.Add(jcVersionIndex(v), w.B)
	}
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[ResourceAllocation](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeHetJobAllocation(f *testing.F) {
	allocSeedGolden(f, RESPONSE_HET_JOB_ALLOCATION)
	for _, v := range Versions {
		m := HetJobAllocation{allocSample(v)}
		var w Writer
		m.Encode(&w, v)
		f.Add(jcVersionIndex(v), w.B)
	}
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[HetJobAllocation](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeJobAllocInfoRequest(f *testing.F) {
	allocSeedGolden(f, REQUEST_HET_JOB_ALLOC_INFO)
	jcSeed(f, JobAllocInfoRequest{JobID: 3, ReqCluster: "c", StepID: NoVal, StepHetComp: NoVal})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[JobAllocInfoRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeCompleteJobAllocation(f *testing.F) {
	allocSeedGolden(f, REQUEST_COMPLETE_JOB_ALLOCATION)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[CompleteJobAllocation](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSrunPing(f *testing.F) {
	f.Add(byte(0), []byte{})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SrunPing](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSrunStepMsg(f *testing.F) {
	allocSeedGolden(f, SRUN_JOB_COMPLETE)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SrunStepMsg](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSrunTimeout(f *testing.F) {
	jcSeed(f, SrunTimeout{StepID: NoStepID, Timeout: 1764615600})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SrunTimeout](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSrunUserMsg(f *testing.F) {
	jcSeed(f, SrunUserMsg{JobID: 3, Msg: "hi", StepID: NoVal, StepHetComp: NoVal})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SrunUserMsg](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSrunNodeFail(f *testing.F) {
	jcSeed(f, SrunNodeFail{StepID: NoStepID, NodeList: "n[1-2]"})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SrunNodeFail](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSrunStepMissing(f *testing.F) {
	jcSeed(f, SrunStepMissing{StepID: NoStepID, NodeList: "n1"})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SrunStepMissing](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSrunStepSignal(f *testing.F) {
	jcSeed(f, SrunStepSignal{StepID: NoStepID, Signal: 10})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SrunStepSignal](t, jcFuzzVersion(vb), body, nil)
	})
}
