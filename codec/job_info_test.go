package codec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// squeueCaptures are the captures holding REQUEST_JOB_INFO/RESPONSE_JOB_INFO.
var squeueCaptures = []string{
	"slurm-22.05/squeue-22.05.pcap",
	"slurm-22.05/squeue-22.05-100jobs.pcap",
	"slurm-24.11/squeue-24.11.pcap",
	"slurm-24.11/squeue-24.11-1job.pcap",
	"slurm-24.11/squeue-24.11-100jobs.pcap",
	"slurm-24.11/squeue-24.11-1000jobs.pcap",
	"slurm-24.11/squeue-24.11-array0-999-held.pcap",
	"slurm-26.05/squeue-26.05.pcap",
	"slurm-26.05/squeue-26.05-100jobs.pcap",
}

// firstDiff returns the first offset where a and b differ, or -1.
func jobFirstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func jobRequireSame(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	off := jobFirstDiff(got, want)
	lo, hi := max(off-16, 0), off+16
	t.Fatalf("%s: re-encoded %d bytes, captured %d, first difference at offset %d\n got  %x\n want %x",
		what, len(got), len(want), off, got[lo:min(hi, len(got))], want[lo:min(hi, len(want))])
}

func decodeJobInfoMsg(t *testing.T, f Frame) JobInfoMsg {
	t.Helper()
	var m JobInfoMsg
	r := NewReader(f.Body)
	if err := m.Decode(&r, f.Version); err != nil {
		t.Fatalf("decode: %v (at %d of %d)", err, r.Off, len(f.Body))
	}
	return m
}

// goldenJobs decodes the single RESPONSE_JOB_INFO of capture c.
func goldenJobs(t *testing.T, c string) (JobInfoMsg, uint16) {
	t.Helper()
	fs := goldenFrames(t, c, RESPONSE_JOB_INFO)
	if len(fs) != 1 {
		t.Fatalf("%s: %d RESPONSE_JOB_INFO", c, len(fs))
	}
	return decodeJobInfoMsg(t, fs[0]), fs[0].Version
}

func TestJobInfoMsgGolden(t *testing.T) {
	wantCount := map[string]int{
		"slurm-22.05/squeue-22.05.pcap":                 4,
		"slurm-22.05/squeue-22.05-100jobs.pcap":         100,
		"slurm-24.11/squeue-24.11.pcap":                 7,
		"slurm-24.11/squeue-24.11-1job.pcap":            1,
		"slurm-24.11/squeue-24.11-100jobs.pcap":         100,
		"slurm-24.11/squeue-24.11-1000jobs.pcap":        1000,
		"slurm-24.11/squeue-24.11-array0-999-held.pcap": 9,
		"slurm-26.05/squeue-26.05.pcap":                 4,
		"slurm-26.05/squeue-26.05-100jobs.pcap":         100,
	}
	for _, c := range squeueCaptures {
		t.Run(c, func(t *testing.T) {
			for _, f := range goldenFrames(t, c, RESPONSE_JOB_INFO) {
				m := decodeJobInfoMsg(t, f)
				if len(m.Jobs) != wantCount[c] {
					t.Errorf("%d records, want %d", len(m.Jobs), wantCount[c])
				}
				var w Writer
				m.Encode(&w, f.Version)
				jobRequireSame(t, c, w.B, f.Body)

				// Records encoded one by one behind AppendJobInfoHeader,
				// as the server does for filtered replies, and with
				// EncodeFor and the request's show flags (squeue sends
				// SHOW_LOCAL), give the same bytes.
				var w2 Writer
				AppendJobInfoHeader(&w2, f.Version, uint32(len(m.Jobs)), m.LastUpdate, m.LastBackfill)
				for i := range m.Jobs {
					m.Jobs[i].EncodeFor(&w2, f.Version, 0x0010)
				}
				jobRequireSame(t, c+" (header+EncodeFor)", w2.B, f.Body)
			}
		})
	}
}

func TestJobInfoRequestGolden(t *testing.T) {
	for _, c := range squeueCaptures {
		for _, f := range goldenFrames(t, c, REQUEST_JOB_INFO) {
			var m JobInfoRequest
			r := NewReader(f.Body)
			if err := m.Decode(&r, f.Version); err != nil || r.Remaining() != 0 {
				t.Fatalf("%s: decode: %v, %d left", c, err, r.Remaining())
			}
			// squeue sends last_update 0, SHOW_LOCAL and the NULL id list.
			if m.LastUpdate != 0 || m.ShowFlags != 0x0010 || m.JobIDsSet || m.JobIDs.Len() != 0 {
				t.Errorf("%s: got %+v", c, m)
			}
			var w Writer
			m.Encode(&w, f.Version)
			jobRequireSame(t, c, w.B, f.Body)
		}
	}
}

func findJob(t *testing.T, m JobInfoMsg, id uint32) *JobInfo {
	t.Helper()
	for i := range m.Jobs {
		if m.Jobs[i].JobID == id {
			return &m.Jobs[i]
		}
	}
	t.Fatalf("job %d not in reply", id)
	return nil
}

// checkHeld checks a plain `sbatch --hold --wrap` job as squeue shows it:
// PD, (JobHeldUser), 1 node, 1 CPU, no time limit, root.
func checkHeld(t *testing.T, j *JobInfo, v uint16, name, part string) {
	t.Helper()
	if !heldOK(j, v, name, part) {
		t.Errorf("job %d: %+v", j.JobID, *j)
	}
}

func heldOK(j *JobInfo, v uint16, name, part string) bool {
	return !(j.Name != name || j.Partition != part || j.UserID != 0 || j.GroupID != 0 ||
		!JobIsPending(j.JobState) || j.JobState != JOB_PENDING ||
		j.StateReason != WAIT_HELD_USER || JobReasonString(j.StateReason, v) != "JobHeldUser" ||
		j.Priority != 0 || j.TimeLimit != Infinite || j.NumCPUs != 1 || j.NumNodes != 1 ||
		j.Cluster != "refcluster" || j.BatchFlag != 1 || j.Nice != NiceOffset || NiceFromWire(j.Nice) != 0 ||
		j.ArrayTaskID != NoVal || j.NodeInx != nil || j.Nodes != "")
}

// TestJobInfoGoldenFields checks what squeue printed in the capture logs.
func TestJobInfoGoldenFields(t *testing.T) {
	// 22.05 mixed: 310 held (cpu), 311 held --gres=gpu:2 (gpu), 312
	// completed on n1 (debug), 313 the optjob array 1-3 (debug).
	m, v := goldenJobs(t, "slurm-22.05/squeue-22.05.pcap")
	checkHeld(t, findJob(t, m, 310), v, "wrap", "cpu")
	j := findJob(t, m, 310)
	if j.TRESReqStr != "cpu=1,mem=125G,node=1,billing=1" || j.WorkDir != "/tmp" ||
		j.StdOut != "/tmp/job-%j.out" || j.StdIn != "/dev/null" || j.ShowFlags != 0x10 ||
		j.SelectPluginID != SELECT_PLUGIN_CONS_TRES || j.StartProtocolVer != V22_05 {
		t.Errorf("310: %+v", *j)
	}
	gpu := findJob(t, m, 311)
	checkHeld(t, gpu, v, "wrap", "gpu")
	if gpu.TRESPerNode != "gres:gpu:2" || gpu.TRESReqStr != "cpu=1,mem=500G,node=1,billing=1" {
		t.Errorf("311: tres_per_node %q req %q", gpu.TRESPerNode, gpu.TRESReqStr)
	}
	done := findJob(t, m, 312)
	if done.JobState != JOB_COMPLETE || JobStateString(done.JobState) != "COMPLETED" || done.Nodes != "n1" ||
		done.BatchHost != "n1" || done.Partition != "debug" || done.TimeLimit != 60 ||
		done.NodeInx == nil || done.NodeInx.NBits != 16 || !done.NodeInx.IsSet(0) || done.NodeInx.IsSet(1) ||
		done.StartTime == 0 || done.EndTime < done.StartTime || done.TRESAllocStr == "" {
		t.Errorf("312: %+v", *done)
	}
	arr := findJob(t, m, 313)
	if arr.Name != "optjob" || arr.Partition != "debug" || arr.ArrayJobID != 313 || arr.ArrayTaskID != NoVal ||
		arr.ArrayTaskStr != "0xE" || arr.StateReason != WAIT_NO_REASON || arr.TimeLimit != 10 ||
		arr.NumCPUs != 4 || arr.NumTasks != 2 || arr.CPUsPerTask != 2 || arr.PnMinMemory != 1024 ||
		arr.Dependency != "afterok:310(unfulfilled)" || arr.EligibleTime-arr.SubmitTime != 3600 ||
		arr.StdOut != "/tmp/opt-%A_%a.out" {
		t.Errorf("313: %+v", *arr)
	}

	// 100 held jobs: fill1..fill100 are jobs 210..309 (22.05), 106..205
	// (26.05); 24.11's ids are consecutive too.
	for _, c := range []string{"slurm-22.05/squeue-22.05-100jobs.pcap", "slurm-24.11/squeue-24.11-100jobs.pcap",
		"slurm-26.05/squeue-26.05-100jobs.pcap", "slurm-24.11/squeue-24.11-1000jobs.pcap"} {
		m, v := goldenJobs(t, c)
		first := m.Jobs[len(m.Jobs)-1].JobID
		for i := range m.Jobs {
			first = min(first, m.Jobs[i].JobID)
		}
		bad := 0
		for i := range m.Jobs {
			j := &m.Jobs[i]
			fill := j.JobID - first + 1
			if v == V24_11 {
				// The 24.11 sets were made one after the other on one
				// controller: job 1 is the 1-job set's fill1, jobs 2-100
				// the 100-job set's fill1..fill99, 101-1000 fill1..fill900.
				switch {
				case j.JobID > 100:
					fill = j.JobID - 100
				case j.JobID > 1:
					fill = j.JobID - 1
				}
			}
			if !heldOK(j, v, fmt.Sprintf("fill%d", fill), "cpu") || j.StdOut != "/dev/null" {
				if bad++; bad < 3 {
					t.Errorf("%s job %d: %+v", c, j.JobID, *j)
				}
			}
		}
		switch c {
		case "slurm-22.05/squeue-22.05-100jobs.pcap":
			if first != 210 {
				t.Errorf("%s: first job %d", c, first)
			}
		case "slurm-26.05/squeue-26.05-100jobs.pcap":
			if first != 106 {
				t.Errorf("%s: first job %d", c, first)
			}
		}
	}

	// 24.11 one job.
	m, v = goldenJobs(t, "slurm-24.11/squeue-24.11-1job.pcap")
	checkHeld(t, &m.Jobs[0], v, "fill1", "cpu")
	if m.Jobs[0].OOMKillStep != NoVal16 || m.Jobs[0].MailUser != "root" || m.Jobs[0].WorkDir != "/" {
		t.Errorf("24.11 1 job: %+v", m.Jobs[0])
	}

	// 24.11 held array 0-999: the meta record holds all 1000 task bits.
	m, v = goldenJobs(t, "slurm-24.11/squeue-24.11-array0-999-held.pcap")
	a := &m.Jobs[len(m.Jobs)-1]
	if z := (JobInfo{}); heldOK(&z, v, "", "") {
		t.Errorf("heldOK accepts a zero record")
	}
	if a.ArrayJobID != a.JobID || a.ArrayTaskID != NoVal || len(a.ArrayTaskStr) != 2+250 ||
		a.StateReason != WAIT_HELD_USER {
		t.Errorf("array record: %+v", *a)
	}
	tasks := &HexBits{NBits: 1000, Hex: a.ArrayTaskStr}
	if !tasks.IsSet(0) || !tasks.IsSet(999) || !tasks.IsSet(500) {
		t.Errorf("array bits %q", a.ArrayTaskStr)
	}

	// 26.05 mixed: 206 held, 207 gpu, 208 completed, 209 array.
	m, v = goldenJobs(t, "slurm-26.05/squeue-26.05.pcap")
	h := findJob(t, m, 206)
	checkHeld(t, h, v, "wrap", "cpu")
	if h.SLUID == 0 || h.StepID != NoVal || h.StepHetComp != NoVal ||
		h.SubmitLine != "sbatch --hold -o /tmp/job-%j.out --wrap sleep 100" {
		t.Errorf("206: sluid %#x step %#x/%#x submit_line %q", h.SLUID, h.StepID, h.StepHetComp, h.SubmitLine)
	}
	if g := findJob(t, m, 207); g.TRESPerNode != "gres/gpu:2" {
		t.Errorf("207: tres_per_node %q", g.TRESPerNode)
	}
	if d := findJob(t, m, 208); d.JobState != JOB_COMPLETE || d.Nodes != "n1" || !d.NodeInx.IsSet(0) {
		t.Errorf("208: %+v", *d)
	}
	if a := findJob(t, m, 209); a.ArrayTaskStr != "0xE" || a.TRESPerTask != "cpu=2" || a.PnMinMemory != 1024 {
		t.Errorf("209: %+v", *a)
	}
}

// populatedJob returns a record with every field of version v set to a
// distinct value, so a swapped or missing field fails the round trip.
func populatedJob(v uint16) JobInfo {
	n := uint32(1000)
	u32 := func() uint32 { n++; return n }
	u16 := func() uint16 { n++; return uint16(n) }
	i64 := func() int64 { n++; return int64(n) * 1000 }
	str := func(p string) string { n++; return fmt.Sprintf("%s-%d", p, n) }
	j := JobInfo{
		JobID: u32(), ArrayJobID: u32(), ArrayTaskID: u32(), ArrayTaskStr: "0x7", ArrayMaxTasks: u32(),
		HetJobID: u32(), HetJobIDSet: str("hs"), HetJobOffset: u32(), AssocID: u32(), UserID: u32(),
		UserName: str("user"), GroupID: u32(), JobState: JOB_RUNNING | JOB_CONFIGURING, StateReason: u32() & 0x7fff,
		StateDesc: str("desc"), Reboot: 1, RestartCnt: u16(), BatchFlag: 1,
		Bitflags: 0x1122334455667788, ExitCode: 256, DerivedEC: u32(), Priority: u32(),
		SiteFactor: NiceToWire(-3), BillableTRES: 2.5, Profile: u32(), StartProtocolVer: v,
		SubmitTime: i64(), EligibleTime: i64(), AccrueTime: i64(), StartTime: i64(), EndTime: i64(),
		SuspendTime: i64(), PreSusTime: i64(), ResizeTime: i64(), LastSchedEval: i64(), PreemptTime: i64(),
		PreemptableTime: i64(), Deadline: i64(),
		TimeLimit: u32(), TimeMin: u32(), DelayBoot: u32(), Nice: NiceToWire(5), ReqSwitch: u32(), Wait4Switch: u32(),
		Account: str("acct"), AdminComment: str("ac"), AllocNode: str("login"), AllocSID: u32(),
		BatchFeatures: str("bf"), BatchHost: str("n1"), BurstBuffer: str("bb"), BurstBufferState: str("bbs"),
		Cluster: str("cl"), Comment: str("cm"), Container: str("ct"), GresTotal: str("gpu:2"),
		Licenses: str("lic"), MailType: u16(), MailUser: str("mu"), MCSLabel: str("mcs"), Name: str("job"),
		Network: str("net"), Nodes: "n[1-2]", SchedNodes: str("sn"), Partition: str("p"), QOS: str("normal"),
		ResvName: str("resv"), SelinuxContext: str("se"), SystemComment: str("sc"), WCKey: str("wk"),
		TRESAllocStr: str("ta"), TRESReqStr: str("tr"), CPUsPerTRES: str("cpt"), MemPerTRES: str("mpt"),
		TRESBind: str("tb"), TRESFreq: str("tf"), TRESPerJob: str("tpj"), TRESPerNode: str("tpn"),
		TRESPerSocket: str("tps"), TRESPerTask: str("tpt"),
		FedPresent: true, FedOrigin: str("fo"), FedSiblingsActive: 3, FedSiblingsActiveStr: str("fa"),
		FedSiblingsViable: 7, FedSiblingsViableStr: str("fv"),
		JobResrcs: &JobResources{
			NHosts: 2, NCPUs: 8, NextStepNodeInx: 1, NodeReq: 1, Nodes: "n[1-2]", WholeNode: 1, ThreadsPerCore: 2,
			CRType: 0x14, CPUArrayReps: []uint32{2}, CPUArrayValue: []uint16{4}, CPUs: []uint16{4, 4},
			CPUsUsed: []uint16{1, 0}, MemoryAllocated: []uint64{1024, 2048}, MemoryUsed: []uint64{0, 1},
			SocketsPerNode: []uint16{2}, CoresPerSocket: []uint16{4}, SockCoreRepCount: []uint32{2},
			CoreBitmap: NewHexBits(16, 0, 1, 8, 9), CoreBitmapUsed: NewHexBits(16, 0),
			NodeBitmap: NewHexBits(16, 0, 1), NodeRanks: []uint32{0, 1},
		},
		GresDetail: []string{"gpu:2(IDX:0-1)", "gpu:2(IDX:0-1)"}, NodeInx: NewHexBits(16, 0, 1),
		ClusterFeatures: str("cf"), CPUFreqMin: u32(), CPUFreqMax: u32(), CPUFreqGov: u32(), Dependency: str("dep"),
		JobSize: NewHexBits(9, 1, 4, 8), NTasksPerNode: u16(), NTasksPerTRES: u16(), Requeue: 1,
		WorkDir: str("/home"), Features: str("feat"), Prefer: str("pref"), Command: str("/bin/cmd"),
		NumCPUs: u32(), MaxCPUs: u32(), NumNodes: u32(), MaxNodes: u32(), NumTasks: u32(), Shared: u16(),
		CronSpec:   str("cron"),
		Contiguous: 1, CoreSpec: u16(), CPUsPerTask: u16(), PnMinCPUs: u16(), PnMinMemory: MemPerCPU | 4096,
		PnMinTmpDisk: u32(), ReqNodes: str("rn"), ReqNodeInx: NewHexBits(16, 2), ExcNodes: str("en"),
		ExcNodeInx: NewHexBits(16, 3), StdErr: str("err"), StdIn: str("in"), StdOut: str("out"),
		MC: &JobMultiCore{1, 2, 3, 4, 5, 6, 7, 8, 9},
	}
	// Fields that only some versions carry.
	if v == V22_05 {
		j.SelectPluginID = SELECT_PLUGIN_CONS_TRES
	}
	if v <= V24_05 {
		j.PowerFlags = 0
		j.ShowFlags = u16()
	}
	if v == V22_05 {
		j.PowerFlags = 3 // real until 23.02, a placeholder byte later
	}
	if v >= V23_02 {
		j.ContainerID, j.FailedNode, j.Extra = str("cid"), str("fn"), str("extra")
		j.StateReason = u32()
	} else {
		j.JobSize = nil
	}
	if v >= V24_05 {
		j.PriorityArray, j.PriorityArrayNames, j.ResvPorts = []uint32{9, 8}, str("p1,p2"), str("12000-12001")
	}
	if v >= V24_11 {
		j.OOMKillStep = u16()
	}
	if v >= V25_05 {
		j.LicensesAllocated, j.SegmentSize = str("la"), u16()
	}
	if v >= V25_11 {
		j.SLUID, j.StepID, j.StepHetComp, j.SubmitLine = 0xabcdef0123, NoVal, NoVal, str("sbatch x")
	}
	if v >= V26_05 {
		j.ContainerType, j.Exclusive, j.Oversubscribe = str("oci"), u16(), u16()
		j.MemUpdateDelay, j.MemUpdateMargin = u16(), u16()
	}
	jr := j.JobResrcs
	if v < V24_11 {
		jr.NextStepNodeInx = 0
	}
	if v < V24_05 || v >= V26_05 {
		jr.NodeBitmap = nil
	}
	if v < V26_05 {
		jr.NodeRanks = nil
	}
	return j
}

func roundTripJob(t *testing.T, j JobInfo, v uint16) []byte {
	t.Helper()
	var w Writer
	j.Encode(&w, v)
	var got JobInfo
	r := NewReader(w.B)
	if err := got.Decode(&r, v); err != nil || r.Remaining() != 0 {
		t.Fatalf("%s: decode: %v, %d left", VersionName(v), err, r.Remaining())
	}
	if !reflect.DeepEqual(got, j) {
		t.Fatalf("%s: round trip differs\n got  %+v\n want %+v", VersionName(v), got, j)
	}
	return w.B
}

func TestJobInfoRoundTrip(t *testing.T) {
	for _, v := range Versions {
		j := populatedJob(v)
		roundTripJob(t, j, v)

		// A pending job without allocation or details data.
		p := populatedJob(v)
		p.JobState, p.JobResrcs, p.GresDetail, p.NodeInx, p.MC, p.FedPresent = JOB_PENDING, nil, nil, nil, nil, false
		p.FedOrigin, p.FedSiblingsActive, p.FedSiblingsActiveStr, p.FedSiblingsViable, p.FedSiblingsViableStr = "", 0, "", 0, ""
		roundTripJob(t, p, v)

		// The short no-details form (24.11+).
		if v >= V24_11 {
			nd := JobInfo{JobID: 9, NoDetails: true, NumCPUs: 3, NumNodes: 2, Nice: NiceOffset, UserID: 5, MC: nil}
			if v >= V25_11 {
				nd.StepID, nd.StepHetComp = NoVal, NoVal
			}
			roundTripJob(t, nd, v)
		}

		// Whole message with the populated record twice.
		msg := JobInfoMsg{LastUpdate: 1796057001, LastBackfill: 1796056000, Jobs: []JobInfo{j, p}}
		var w Writer
		msg.Encode(&w, v)
		var got JobInfoMsg
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || !reflect.DeepEqual(got, msg) {
			t.Fatalf("%s: message round trip: %v", VersionName(v), err)
		}
	}
}

// TestJobInfoLayoutSizes checks the size of the smallest record against
// the field additions counted from the source diffs between releases.
func TestJobInfoLayoutSizes(t *testing.T) {
	size := func(v uint16, noDetails bool) int {
		var w Writer
		j := JobInfo{NoDetails: noDetails}
		j.Encode(&w, v)
		return len(w.B)
	}
	checks := []struct {
		a, b  uint16
		delta int
		why   string
	}{
		// +container_id, +failed_node, state_reason u16->u32, +extra,
		// +job_size bitmap, -select jobinfo u32: 4+4+2+4+4-4.
		{V22_05, V23_02, 14, "23.02"},
		{V23_02, V23_11, 0, "23.11 (same wire)"},
		// +priority_array count, +priority_array_names, +resv_ports.
		{V23_11, V24_05, 12, "24.05"},
		// +licenses_allocated str, +segment_size u16.
		{V24_11, V25_05, 6, "25.05"},
		// step_id (8+4+4+4) replaces job_id (4), +submit_line.
		{V25_05, V25_11, 20, "25.11"},
		// +container_type, +exclusive, +oversubscribe, +mem_update_delay/margin.
		{V25_11, V26_05, 12, "26.05"},
	}
	for _, c := range checks {
		if d := size(c.b, false) - size(c.a, false); d != c.delta {
			t.Errorf("%s: record grew by %d, want %d", c.why, d, c.delta)
		}
	}
	// 22.05 zero record counted by hand from _unpack_job_info_members:
	// 32 u32 (select plugin id included), 14 u16, 2 u8, 17 eight-byte
	// (12 times, billable double, pn_min_memory, bitflags, 2 fed
	// siblings), 54 strings (container twice), 3 NULL bitmaps, NULL
	// job_resources, empty gres_detail array, NULL multi_core flag.
	if got := size(V22_05, false); got != 32*4+14*2+2+17*8+54*4+3*4+4+4+1 {
		t.Errorf("22.05 empty record %d bytes", got)
	}
	// 24.11 no-details form is shorter than the details form by the
	// details block minus its 12-byte stand-in.
	if size(V24_11, true) >= size(V24_11, false) {
		t.Errorf("24.11 no-details record not shorter")
	}
}

func TestJobInfoEncodeFor(t *testing.T) {
	for _, v := range Versions {
		j := populatedJob(v)
		var full, plain Writer
		j.EncodeFor(&full, v, 0x0012) // SHOW_DETAIL|SHOW_LOCAL
		j.EncodeFor(&plain, v, 0x0010)
		var a, b JobInfo
		ra, rb := NewReader(full.B), NewReader(plain.B)
		if a.Decode(&ra, v) != nil || b.Decode(&rb, v) != nil {
			t.Fatalf("%s: decode failed", VersionName(v))
		}
		if a.JobResrcs == nil || len(a.GresDetail) != 2 || b.JobResrcs != nil || b.GresDetail != nil {
			t.Errorf("%s: SHOW_DETAIL not honoured", VersionName(v))
		}
		if v <= V24_05 && (a.ShowFlags != 0x12 || b.ShowFlags != 0x10) {
			t.Errorf("%s: show_flags echo %#x %#x", VersionName(v), a.ShowFlags, b.ShowFlags)
		}
		if j.JobResrcs == nil || j.ShowFlags == 0x10 && v <= V24_05 {
			t.Errorf("EncodeFor changed its receiver")
		}
	}
}

func TestJobInfoEmptyStringKept(t *testing.T) {
	// A record whose name is a non-NULL "" re-encodes as such; a fresh ""
	// is NULL.
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		var w Writer
		j := JobInfo{Name: "x"}
		j.Encode(&w, v)
		nul := bytes.Index(w.B, []byte{0, 0, 0, 2, 'x', 0})
		if nul < 0 {
			t.Fatalf("name not found")
		}
		b := append(append(append([]byte{}, w.B[:nul]...), 0, 0, 0, 1, 0), w.B[nul+6:]...)
		var d JobInfo
		r := NewReader(b)
		if err := d.Decode(&r, v); err != nil || d.Name != "" {
			t.Fatalf("decode: %v %q", err, d.Name)
		}
		var w2 Writer
		d.Encode(&w2, v)
		jobRequireSame(t, "empty name", w2.B, b)
		d2 := JobInfo{}
		var w3 Writer
		d2.Encode(&w3, v)
		if bytes.Contains(w3.B, []byte{0, 0, 0, 1, 0}) {
			t.Errorf("zero record has a non-NULL empty string")
		}
	}
}

func TestJobInfoMsgRejects(t *testing.T) {
	for _, c := range []string{"slurm-22.05/squeue-22.05.pcap", "slurm-24.11/squeue-24.11.pcap", "slurm-26.05/squeue-26.05.pcap"} {
		f := goldenFrames(t, c, RESPONSE_JOB_INFO)[0]
		// Every truncation fails with INCOMPLETE_PACKET; never panics.
		for n := 0; n < len(f.Body); n++ {
			var m JobInfoMsg
			r := NewReader(f.Body[:n])
			err := m.Decode(&r, f.Version)
			if CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
				t.Fatalf("%s: %d-byte prefix: %v", c, n, err)
			}
		}
		var m JobInfoMsg
		r := NewReader(append(append([]byte{}, f.Body...), 0))
		if err := m.Decode(&r, f.Version); !errors.Is(err, ErrTrailing) {
			t.Errorf("%s: trailing byte: %v", c, err)
		}
		// A record count larger than the bytes could hold is refused
		// before allocating.
		big := append([]byte{}, f.Body...)
		big[0], big[1], big[2], big[3] = 0x10, 0, 0, 0
		r = NewReader(big)
		if err := m.Decode(&r, f.Version); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("%s: huge count: %v", c, err)
		}
	}
	// Bad multi_core flag and an unknown 22.05 select plugin.
	for _, bad := range []func(w *Writer){
		func(w *Writer) { w.B[len(w.B)-1] = 7 },
	} {
		var w Writer
		j := JobInfo{}
		j.Encode(&w, V24_11)
		bad(&w)
		var d JobInfo
		r := NewReader(w.B)
		if err := d.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("bad mc flag: %v", err)
		}
	}
	var w Writer
	j := JobInfo{SelectPluginID: SELECT_PLUGIN_CRAY_CONS_TRES}
	j.Encode(&w, V22_05)
	var d JobInfo
	r := NewReader(w.B)
	if err := d.Decode(&r, V22_05); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("cray select plugin accepted: %v", err)
	}
	// job_resources whose cpus count differs from nhosts (the client
	// rejects it too).
	jr := populatedJob(V24_11)
	jr.JobResrcs.CPUs = []uint16{1}
	w = Writer{}
	jr.Encode(&w, V24_11)
	r = NewReader(w.B)
	if err := d.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("bad job_resources accepted: %v", err)
	}
}

func TestJobInfoRequests(t *testing.T) {
	for _, v := range Versions {
		// Job id list: a view, copied into a fixed array.
		req := JobInfoRequest{LastUpdate: 77, ShowFlags: 0x3, JobIDsSet: true, JobIDs: U32ViewOf(5, 6, 7)}
		var w Writer
		req.Encode(&w, v)
		if len(w.B) != 8+2+4+12 {
			t.Fatalf("encoded %d bytes", len(w.B))
		}
		var got JobInfoRequest
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || got.LastUpdate != 77 || got.ShowFlags != 3 || !got.JobIDsSet ||
			got.JobIDs.Len() != 3 || got.JobIDs.At(2) != 7 {
			t.Fatalf("%s: %+v %v", VersionName(v), got, err)
		}
		var ids [2]uint32
		if n := got.JobIDs.CopyTo(ids[:]); n != 2 || ids != [2]uint32{5, 6} {
			t.Errorf("CopyTo %d %v", n, ids)
		}
		// Empty (non-NULL) list.
		w = Writer{}
		(&JobInfoRequest{JobIDsSet: true}).Encode(&w, v)
		r = NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || !got.JobIDsSet || got.JobIDs.Len() != 0 {
			t.Errorf("empty list: %+v %v", got, err)
		}
		// Truncated list.
		r = NewReader([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1})
		if err := got.Decode(&r, v); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("short list: %v", err)
		}

		single := JobInfoSingleRequest{JobID: 42, ShowFlags: 0x11, StepID: NoVal, StepHetComp: NoVal}
		if v >= V25_11 {
			single.SLUID, single.StepID = 0x55, 3
		}
		w = Writer{}
		single.Encode(&w, v)
		want := 6
		if v >= V25_11 {
			want = 8 + 12 + 2
		}
		var gs JobInfoSingleRequest
		r = NewReader(w.B)
		if len(w.B) != want || gs.Decode(&r, v) != nil || gs != single || r.Remaining() != 0 {
			t.Errorf("%s: single %d bytes %+v", VersionName(v), len(w.B), gs)
		}

		user := JobUserInfoRequest{UserID: 1000, ShowFlags: 0x10}
		w = Writer{}
		user.Encode(&w, v)
		var gu JobUserInfoRequest
		r = NewReader(w.B)
		if len(w.B) != 6 || gu.Decode(&r, v) != nil || gu != user {
			t.Errorf("%s: user %+v", VersionName(v), gu)
		}
	}
}

func TestJobInfoRequestDecodeAllocs(t *testing.T) {
	var w Writer
	(&JobInfoRequest{JobIDsSet: true, JobIDs: U32ViewOf(1, 2, 3, 4)}).Encode(&w, V24_11)
	body := w.B
	captured := goldenFrames(t, "slurm-24.11/squeue-24.11.pcap", REQUEST_JOB_INFO)[0].Body
	var sw Writer
	(&JobInfoSingleRequest{JobID: 7}).Encode(&sw, V26_05)
	var uw Writer
	(&JobUserInfoRequest{UserID: 7}).Encode(&uw, V24_11)
	var stw Writer
	(&JobStepInfoRequest{StepID: JobStepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal}}).Encode(&stw, V24_11)
	var ids [16]uint32
	var sink uint32
	allocs := testing.AllocsPerRun(1000, func() {
		var m JobInfoRequest
		r := NewReader(body)
		if m.Decode(&r, V24_11) != nil {
			panic("decode")
		}
		n := m.JobIDs.CopyTo(ids[:])
		sink += ids[n-1]
		r.Reset(captured)
		if m.Decode(&r, V24_11) != nil {
			panic("decode")
		}
		var s JobInfoSingleRequest
		r.Reset(sw.B)
		_ = s.Decode(&r, V26_05)
		var u JobUserInfoRequest
		r.Reset(uw.B)
		_ = u.Decode(&r, V24_11)
		var st JobStepInfoRequest
		r.Reset(stw.B)
		_ = st.Decode(&r, V24_11)
		// A failing decode allocates nothing either.
		r.Reset(body[:11])
		_ = m.Decode(&r, V24_11)
		sink += s.JobID + u.UserID + st.StepID.JobID
	})
	if allocs != 0 {
		t.Errorf("request decoders allocate %v times per run", allocs)
	}
	_ = sink
}

func TestHexBits(t *testing.T) {
	b := NewHexBits(10, 0, 1, 9)
	if b.NBits != 10 || b.Hex != "0x203" || !b.IsSet(9) || b.IsSet(8) || b.IsSet(10) || !b.IsSet(0) {
		t.Errorf("%+v", *b)
	}
	if (*HexBits)(nil).IsSet(0) {
		t.Errorf("nil bitmap has bits")
	}
	var w Writer
	writeHexBits(&w, nil)
	writeHexBits(&w, b)
	r := NewReader(w.B)
	if readHexBits(&r) != nil || *readHexBits(&r) != *b || r.Remaining() != 0 {
		t.Errorf("hexbits round trip")
	}
}

func TestJobState(t *testing.T) {
	for _, v := range Versions {
		if JobReasonString(WAIT_HELD_USER, v) != "JobHeldUser" || JobReasonString(WAIT_HELD, v) != "JobHeldAdmin" ||
			JobReasonString(WAIT_NO_REASON, v) != "None" || JobReasonString(WAIT_DEPENDENCY, v) != "Dependency" {
			t.Errorf("%s: reasons", VersionName(v))
		}
	}
	cases := []struct {
		r    uint32
		v    uint16
		want string
	}{
		{17, V22_05, "FrontEndDown"}, {17, V24_11, "FrontEndDown"}, {17, V25_05, "InvalidReason"},
		{WAIT_NVIDIA_IMEX_CHANNELS, V25_11, "NvidiaImexChannels"},
		{33, V22_05, "BlockMaxError"}, {FAIL_SIGNAL, V23_02, "RaisedSignal"}, {34, V23_02, "34"},
		{WAIT_POWER_NOT_AVAIL, V23_11, "PowerNotAvail"}, {DEFUNCT_WAIT_76, V24_05, "InvalidReason"},
		{FAIL_CONSTRAINTS, V23_02, "200"}, {FAIL_CONSTRAINTS, V23_11, "Constraints"},
		{WAIT_MPI_PORTS_BUSY, V23_11, "220"}, {WAIT_MPI_PORTS_BUSY, V24_05, "MpiPortsBusy"},
		{REASON_END, V26_05, "InvalidReason"}, {WAIT_RESV_DELETED, V22_05, "ReservationDeleted"},
	}
	for _, c := range cases {
		if got := JobReasonString(c.r, c.v); got != c.want {
			t.Errorf("reason %d in %s: %q, want %q", c.r, VersionName(c.v), got, c.want)
		}
	}
	if JobStateString(JOB_RUNNING|JOB_COMPLETING) != "COMPLETING" || JobStateString(JOB_OOM) != "OUT_OF_MEMORY" ||
		JobStateString(JOB_PENDING) != "PENDING" || JobStateString(99) != "?" {
		t.Errorf("state strings")
	}
	if !JobIsPending(JOB_PENDING|JOB_REQUEUE_HOLD) || JobIsPending(JOB_RUNNING) || !JobIsRunning(JOB_RUNNING|JOB_CONFIGURING) ||
		!JobIsSuspended(JOB_SUSPENDED) || !JobIsFinished(JOB_CANCELLED) || JobIsFinished(JOB_SUSPENDED) || !JobIsStarted(JOB_SUSPENDED) ||
		JobIsStarted(JOB_PENDING|JOB_REQUEUE_HOLD) || !JobIsCompleting(JOB_COMPLETE|JOB_COMPLETING) {
		t.Errorf("state predicates")
	}
	if NiceToWire(0) != 0x80000000 || NiceToWire(-5) != 0x7ffffffb || NiceFromWire(0x7ffffffb) != -5 || NiceFromWire(NiceOffset+10) != 10 {
		t.Errorf("nice offset")
	}
}

// FuzzDecodeJobInfoMsg: never panics; whatever decodes re-encodes to
// bytes that decode to the same record.
func FuzzDecodeJobInfoMsg(f *testing.F) {
	for _, c := range []string{"slurm-22.05/squeue-22.05.pcap", "slurm-24.11/squeue-24.11.pcap",
		"slurm-24.11/squeue-24.11-1job.pcap", "slurm-26.05/squeue-26.05.pcap"} {
		for _, fr := range goldenFrames(f, c, RESPONSE_JOB_INFO) {
			f.Add(fr.Body, fr.Version)
		}
	}
	for _, v := range Versions {
		var w Writer
		(&JobInfoMsg{Jobs: []JobInfo{populatedJob(v)}}).Encode(&w, v)
		f.Add(w.B, v)
	}
	f.Fuzz(func(t *testing.T, b []byte, v uint16) {
		if !SupportedVersion(v) {
			return
		}
		var m JobInfoMsg
		r := NewReader(b)
		if m.Decode(&r, v) != nil {
			return
		}
		var w Writer
		m.Encode(&w, v)
		var m2 JobInfoMsg
		r2 := NewReader(w.B)
		if err := m2.Decode(&r2, v); err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encoded message decodes differently")
		}
	})
}

// FuzzDecodeJobInfoRequest covers the three job info requests.
func FuzzDecodeJobInfoRequest(f *testing.F) {
	for _, fr := range goldenFrames(f, "slurm-24.11/squeue-24.11.pcap", REQUEST_JOB_INFO) {
		f.Add(fr.Body, fr.Version, uint8(0))
	}
	var w Writer
	(&JobInfoRequest{JobIDsSet: true, JobIDs: U32ViewOf(1, 2)}).Encode(&w, V22_05)
	f.Add(w.B, V22_05, uint8(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfe, 0, 2}, V25_11, uint8(1))
	f.Add([]byte{0, 0, 3, 0xe8, 0, 0x10}, V24_11, uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, v uint16, kind uint8) {
		if !SupportedVersion(v) {
			return
		}
		r := NewReader(b)
		var w Writer
		switch kind % 3 {
		case 0:
			var m JobInfoRequest
			if m.Decode(&r, v) != nil {
				return
			}
			m.Encode(&w, v)
		case 1:
			var m JobInfoSingleRequest
			if m.Decode(&r, v) != nil {
				return
			}
			m.Encode(&w, v)
		case 2:
			var m JobUserInfoRequest
			if m.Decode(&r, v) != nil {
				return
			}
			m.Encode(&w, v)
		}
		if !bytes.Equal(w.B, b[:r.Off]) {
			t.Fatalf("re-encoding differs: %x vs %x", w.B, b[:r.Off])
		}
	})
}

// BenchmarkEncodeJobInfo encodes one running 24.11 job record.
func BenchmarkEncodeJobInfo(b *testing.B) {
	j := populatedJob(V24_11)
	w := Writer{B: make([]byte, 0, 4096)}
	b.ReportAllocs()
	for b.Loop() {
		w.B = w.B[:0]
		j.Encode(&w, V24_11)
	}
	b.SetBytes(int64(len(w.B)))
}

// BenchmarkEncodeJobInfoHeld encodes the captured held 24.11 job.
func BenchmarkEncodeJobInfoHeld(b *testing.B) {
	f := goldenFrames(b, "slurm-24.11/squeue-24.11-1job.pcap", RESPONSE_JOB_INFO)[0]
	var m JobInfoMsg
	r := NewReader(f.Body)
	if err := m.Decode(&r, f.Version); err != nil {
		b.Fatal(err)
	}
	w := Writer{B: make([]byte, 0, 4096)}
	b.ReportAllocs()
	for b.Loop() {
		w.B = w.B[:0]
		m.Jobs[0].Encode(&w, V24_11)
	}
	b.SetBytes(int64(len(w.B)))
}
