package codec

import (
	"bytes"
	"reflect"
	"testing"
)

// partCaptureFiles lists every capture holding RESPONSE_PARTITION_INFO:
// sinfo and the squeue runs (squeue loads partitions too).
func partCaptureFiles(t testing.TB) []string {
	var out []string
	for _, glob := range []string{"slurm-*/sinfo-*.pcap", "slurm-*/squeue-*.pcap"} {
		for _, rel := range goldenCaptures(t, glob) {
			if len(nodeCaptureFrames(t, rel, RESPONSE_PARTITION_INFO)) > 0 {
				out = append(out, rel)
			}
		}
	}
	return out
}

func TestPartitionInfoRequestGolden(t *testing.T) {
	n := 0
	for _, rel := range partCaptureFiles(t) {
		for _, f := range nodeCaptureFrames(t, rel, REQUEST_PARTITION_INFO) {
			var m PartitionInfoRequest
			r := NewReader(f.Body)
			if err := m.Decode(&r, f.Version); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if m.LastUpdate != 0 || m.ShowFlags&0x10 == 0 { // SHOW_LOCAL from every client
				t.Errorf("%s: %+v", rel, m)
			}
			var w Writer
			m.Encode(&w, f.Version)
			nodeSameBytes(t, rel, w.B, f.Body)
			n++
		}
	}
	if n < 9 {
		t.Fatalf("only %d partition requests found", n)
	}
}

func TestPartitionInfoRequestDecode(t *testing.T) {
	body := []byte{0, 0, 0, 0, 0x6b, 0x0d, 0x96, 0x4f, 0, 0x01}
	var m PartitionInfoRequest
	var r Reader
	allocs := testing.AllocsPerRun(1000, func() {
		r.Reset(body)
		if m.Decode(&r, V25_11) != nil {
			panic("decode")
		}
	})
	if allocs != 0 {
		t.Fatalf("PartitionInfoRequest.Decode allocates %.1f times", allocs)
	}
	if m.LastUpdate != 0x6b0d964f || m.ShowFlags != 1 {
		t.Fatalf("got %+v", m)
	}
	for n := 0; n < len(body); n++ {
		r.Reset(body[:n])
		if err := m.Decode(&r, V25_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	r.Reset(append(bytes.Clone(body), 0))
	if err := m.Decode(&r, V25_11); err != ErrTrailing {
		t.Fatalf("trailing byte: %v", err)
	}
}

// partCheckCaptured asserts what slurm.conf says: cpu (default,
// n[1-12]), gpu (n[13-16]), debug (n1, MaxTime=60), all UP.
func partCheckCaptured(t *testing.T, rel string, v uint16, m *PartitionInfoMsg) {
	t.Helper()
	type want struct {
		name, nodes, inx string
		maxTime          uint32
		nodesN, cpus     uint32
		flags            uint32
		tres             string
	}
	wants := []want{
		{"cpu", "n[1-12]", "0x0FFF", Infinite, 12, 384, PART_FLAG_DEFAULT, "cpu=384,mem=1500G,node=12,billing=384"},
		{"gpu", "n[13-16]", "0xF000", Infinite, 4, 256, 0, "cpu=256,mem=2000G,node=4,billing=256"},
		{"debug", "n1", "0x0001", 60, 1, 32, 0, "cpu=32,mem=125G,node=1,billing=32"},
	}
	if len(m.Partitions) != len(wants) {
		t.Fatalf("%s: %d partitions", rel, len(m.Partitions))
	}
	for i, w := range wants {
		p := &m.Partitions[i]
		if p.Name != w.name || p.Nodes != w.nodes || p.NodeInxNull || p.NodeInxBits != 16 || p.NodeInx != w.inx {
			t.Errorf("%s: partition %d: %q nodes %q inx %d %q", rel, i, p.Name, p.Nodes, p.NodeInxBits, p.NodeInx)
		}
		if p.MaxTime != w.maxTime || p.DefaultTime != NoVal || p.TotalNodes != w.nodesN || p.TotalCPUs != w.cpus {
			t.Errorf("%s: %s: max_time %d default %d nodes %d cpus %d", rel, p.Name, p.MaxTime, p.DefaultTime, p.TotalNodes, p.TotalCPUs)
		}
		if p.Flags != w.flags || p.StateUp != PARTITION_UP || p.MaxShare != 1 || p.MaxNodes != Infinite || p.MinNodes != 0 {
			t.Errorf("%s: %s: flags %#x state %d max_share %d nodes %d-%d", rel, p.Name, p.Flags, p.StateUp, p.MaxShare, p.MinNodes, p.MaxNodes)
		}
		if p.PriorityJobFactor != 1 || p.PriorityTier != 1 || p.PreemptMode != NoVal16 || p.MaxCPUsPerNode != Infinite {
			t.Errorf("%s: %s: prio %d/%d preempt %#x max_cpus %d", rel, p.Name, p.PriorityJobFactor, p.PriorityTier, p.PreemptMode, p.MaxCPUsPerNode)
		}
		if v >= V23_02 && p.MaxCPUsPerSocket != Infinite {
			t.Errorf("%s: %s: max_cpus_per_socket %d", rel, p.Name, p.MaxCPUsPerSocket)
		}
		if p.TRESFmtStr != w.tres || p.JobDefaults != nil {
			t.Errorf("%s: %s: tres %q job_defaults %v", rel, p.Name, p.TRESFmtStr, p.JobDefaults)
		}
		for k := 0; k < 16; k++ {
			in := (i == 0 && k < 12) || (i == 1 && k >= 12) || (i == 2 && k == 0)
			if p.NodeInxSet(k) != in {
				t.Errorf("%s: %s: NodeInxSet(%d) = %v", rel, p.Name, k, !in)
			}
		}
	}
}

func TestPartitionInfoMsgGolden(t *testing.T) {
	seen := map[uint16]bool{}
	for _, rel := range partCaptureFiles(t) {
		for _, f := range nodeCaptureFrames(t, rel, RESPONSE_PARTITION_INFO) {
			seen[f.Version] = true
			var m PartitionInfoMsg
			r := NewReader(f.Body)
			if err := m.Decode(&r, f.Version); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			partCheckCaptured(t, rel, f.Version, &m)

			var w Writer
			m.Encode(&w, f.Version)
			nodeSameBytes(t, rel, w.B, f.Body)

			// Server path: header + records encoded one by one.
			var s Writer
			AppendPartitionInfoHeader(&s, f.Version, uint32(len(m.Partitions)), m.LastUpdate)
			for i := range m.Partitions {
				m.Partitions[i].Encode(&s, f.Version)
			}
			nodeSameBytes(t, rel+" (header+records)", s.B, f.Body)

			for _, n := range []int{0, 4, 11, 12, 13, len(f.Body) / 2, len(f.Body) - 1} {
				var m2 PartitionInfoMsg
				r := NewReader(f.Body[:n])
				if err := m2.Decode(&r, f.Version); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
					t.Fatalf("%s: truncated to %d: %v", rel, n, err)
				}
			}
			r = NewReader(append(bytes.Clone(f.Body), 0))
			if err := m.Decode(&r, f.Version); err != ErrTrailing {
				t.Fatalf("%s: trailing byte: %v", rel, err)
			}
		}
	}
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		if !seen[v] {
			t.Errorf("no %s partition reply in the captures", VersionName(v))
		}
	}
}

// Sizes of an empty partition record (NULL strings, NULL node_inx, NULL
// job_defaults), added up by hand from each release's pack_part.
func TestPartitionInfoMinLen(t *testing.T) {
	want := map[uint16]int{
		V22_05: 136, // str; 8×u32; u64; u32; u64; u16 flags; 9×u16; u32; 10 str; bitmap; 2 str; list
		V23_02: 140, // + max_cpus_per_socket
		V23_11: 140,
		V24_05: 142, // flags u32
		V24_11: 142,
		V25_05: 146, // + topology_name
		V25_11: 146,
		V26_05: 146,
	}
	for _, v := range Versions {
		if got := partInfoMinLen(v); got != want[v] {
			t.Errorf("%s: empty partition record %d bytes, want %d", VersionName(v), got, want[v])
		}
	}
}

func partFull(v uint16) PartitionInfo {
	p := PartitionInfo{
		Name: "gpu", CPUBind: 8, GraceTime: 30, MaxTime: 1440, DefaultTime: 60, MaxNodes: 4, MinNodes: 1,
		TotalNodes: 4, TotalCPUs: 256, DefMemPerCPU: MemPerCPU | 2048, MaxCPUsPerNode: 64, MaxMemPerCPU: MemPerCPU | 4096,
		Flags: PART_FLAG_DEFAULT | PART_FLAG_LLN, MaxShare: SHARED_FORCE | 4, OverTimeLimit: 5, PreemptMode: NoVal16,
		PriorityJobFactor: 10, PriorityTier: 2, StateUp: PARTITION_DRAIN, CRType: 0x14, ResumeTimeout: NoVal16,
		SuspendTimeout: NoVal16, SuspendTime: NoVal,
		AllowAccounts: "a1,a2", AllowGroups: "g", AllowAllocNodes: "login", AllowQOS: "normal", QOSChar: "pq",
		Alternate: "cpu", DenyAccounts: "bad", DenyQOS: "low", Nodes: "n[13-16]", NodeSets: "ns",
		BillingWeightsStr: "CPU=1.0", TRESFmtStr: "cpu=256,node=4",
		JobDefaults: []PartJobDefault{{JOB_DEF_CPU_PER_GPU, 8}, {JOB_DEF_MEM_PER_GPU, 16384}},
	}
	p.SetNodeInx(16, func(i int) bool { return i >= 12 })
	if v >= V23_02 {
		p.MaxCPUsPerSocket = 32
		p.Flags |= PART_FLAG_PDOI
	}
	if v >= V24_05 {
		p.Flags |= PART_FLAG_EXCLUSIVE_TOPO
	}
	if v >= V25_05 {
		p.TopologyName = "tree"
	}
	return p
}

func TestPartitionInfoMsgRoundTrip(t *testing.T) {
	for _, v := range Versions {
		empty := PartitionInfo{Name: "e", NodeInxNull: true, JobDefaults: []PartJobDefault{}}
		in := PartitionInfoMsg{LastUpdate: 1700000000, Partitions: []PartitionInfo{partFull(v), empty}}
		var w Writer
		in.Encode(&w, v)
		var out PartitionInfoMsg
		r := NewReader(w.B)
		if err := out.Decode(&r, v); err != nil {
			t.Fatalf("%s: %v", VersionName(v), err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("%s: round trip differs\n in %+v\nout %+v", VersionName(v), in, out)
		}
		if out.Partitions[0].NodeInx != "0xF000" || !out.Partitions[0].NodeInxSet(15) || out.Partitions[0].NodeInxSet(11) {
			t.Fatalf("%s: node_inx %q", VersionName(v), out.Partitions[0].NodeInx)
		}
		// The empty record: min size + "e" (+2) + empty (not NULL) list
		// (same 4 bytes as NULL).
		var ew Writer
		empty.Encode(&ew, v)
		if len(ew.B) != partInfoMinLen(v)+2 {
			t.Errorf("%s: empty record %d bytes", VersionName(v), len(ew.B))
		}
	}
	// Up to 23.11 flags are a u16: bits >= 16 are dropped.
	p := partFull(V24_05)
	var w Writer
	p.Encode(&w, V23_11)
	var q PartitionInfo
	r := NewReader(w.B)
	if err := q.Decode(&r, V23_11); err != nil || q.Flags != p.Flags&0xffff {
		t.Fatalf("23.11 flags %#x (%v)", q.Flags, err)
	}
}

func TestPartitionInfoEncodeAllocs(t *testing.T) {
	p := partFull(V26_05)
	w := Writer{B: make([]byte, 0, 4096)}
	allocs := testing.AllocsPerRun(100, func() {
		w.B = w.B[:0]
		AppendPartitionInfoHeader(&w, V26_05, 1, 1)
		p.Encode(&w, V26_05)
	})
	if allocs != 0 {
		t.Fatalf("PartitionInfo.Encode allocates %.1f times", allocs)
	}
}

func TestPartitionInfoMsgRejectsHugeCount(t *testing.T) {
	body := []byte{0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	var m PartitionInfoMsg
	r := NewReader(body)
	if err := m.Decode(&r, V24_11); err != ErrBadCount {
		t.Fatalf("got %v", err)
	}
}

func FuzzDecodePartitionInfoMsg(f *testing.F) {
	for _, rel := range partCaptureFiles(f) {
		for _, fr := range nodeCaptureFrames(f, rel, RESPONSE_PARTITION_INFO) {
			f.Add(nodeFuzzVersionByte(fr.Version), bytes.Clone(fr.Body))
		}
	}
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		v := nodeFuzzVersion(vb)
		var m PartitionInfoMsg
		r := NewReader(body)
		if m.Decode(&r, v) != nil {
			return
		}
		var w Writer
		m.Encode(&w, v)
		var m2 PartitionInfoMsg
		r2 := NewReader(w.B)
		if err := m2.Decode(&r2, v); err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("decode/encode/decode differs")
		}
		// The request decoder must not panic on the same bytes either.
		var q PartitionInfoRequest
		r3 := NewReader(body)
		_ = q.Decode(&r3, v)
	})
}
