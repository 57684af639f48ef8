package codec

import (
	"reflect"
	"testing"
)

func TestWillRunResponseRoundTripAllVersions(t *testing.T) {
	str := func(s string) int { return 4 + len(s) + 1 }
	for _, v := range Versions {
		// id part: u32 job_id before 25.11, pack_step_id (8+4+4+4) after.
		idLen := 4
		step := JobStepID{JobID: 7}
		if v >= V25_11 {
			idLen = 20
			step = JobStepID{SLUID: 0x1234, JobID: 7, StepID: NoVal, StepHetComp: NoVal}
		}
		// What slurmctld sends for a plain sbatch --test-only: no
		// job_submit message, NULL preemptee list.
		m := WillRunResponse{StepID: step, NodeList: "n1", PartName: "cpu", PreempteesNull: true, ProcCnt: 1, StartTime: 1700000000}
		b := jcRoundTrip(t, "will_run", v, m)
		// ids, NULL msg (4), node_list, part_name, count, proc_cnt, start_time, double
		if want := idLen + 4 + str("n1") + str("cpu") + 4 + 4 + 8 + 8; len(b) != want {
			t.Errorf("will_run %s: %d bytes, want %d", VersionName(v), len(b), want)
		}
		m = WillRunResponse{StepID: step, JobSubmitUserMsg: "note", NodeList: "n[1-2]", Preemptees: []uint32{3, 4}, ProcCnt: 64, StartTime: 5, SysUsagePer: 12.5, EmptyStrs: 1 << 2}
		b = jcRoundTrip(t, "will_run preempt", v, m)
		if want := idLen + str("note") + str("n[1-2]") + str("") + 4 + 8 + 4 + 8 + 8; len(b) != want {
			t.Errorf("will_run preempt %s: %d bytes, want %d", VersionName(v), len(b), want)
		}
		// An empty (non-NULL) list is count 0.
		jcRoundTrip(t, "will_run empty list", v, WillRunResponse{StepID: step, Preemptees: nil, ProcCnt: 1})
	}
}

func TestWillRunResponseBytes(t *testing.T) {
	m := WillRunResponse{StepID: JobStepID{JobID: 1}, NodeList: "n1", PartName: "cpu", PreempteesNull: true, ProcCnt: 1, StartTime: 0x01020304}
	var w Writer
	m.Encode(&w, V24_11)
	want := []byte{
		0, 0, 0, 1, // job_id
		0, 0, 0, 0, // job_submit_user_msg NULL
		0, 0, 0, 3, 'n', '1', 0,
		0, 0, 0, 4, 'c', 'p', 'u', 0,
		0xff, 0xff, 0xff, 0xfe, // preemptee list NULL
		0, 0, 0, 1, // proc_cnt
		0, 0, 0, 0, 1, 2, 3, 4, // start_time
		0, 0, 0, 0, 0, 0, 0, 0, // sys_usage_per 0
	}
	jcRequireSameBytes(t, "will_run 24.11", w.B, want)

	m.StepID = JobStepID{JobID: 1, StepID: NoVal, StepHetComp: NoVal}
	w = Writer{}
	m.Encode(&w, V26_05)
	want26 := append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfe}, want[4:]...)
	jcRequireSameBytes(t, "will_run 26.05", w.B, want26)
}

func TestWillRunResponseRejectsCounts(t *testing.T) {
	// A preemptee count larger than the bytes left fails before any
	// allocation.
	body := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}
	var m WillRunResponse
	r := NewReader(body)
	if err := m.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("huge count: %v", err)
	}
}

func FuzzDecodeWillRunResponse(f *testing.F) {
	jcSeed(f, WillRunResponse{StepID: JobStepID{JobID: 3}, NodeList: "n1", PartName: "cpu", PreempteesNull: true, ProcCnt: 1, StartTime: 9})
	jcSeed(f, WillRunResponse{JobSubmitUserMsg: "m", Preemptees: []uint32{1, 2}, SysUsagePer: 50})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		v := jcFuzzVersion(vb)
		jcFuzzStable[WillRunResponse](t, v, body, func(m *WillRunResponse) {
			if v < V25_11 {
				m.StepID = JobStepID{JobID: m.StepID.JobID}
			}
			if m.SysUsagePer != m.SysUsagePer { // NaN never compares equal
				m.SysUsagePer = 0
			}
		})
	})
}

// sbatch --test-only --wrap x against a real 24.11 slurmctld with one real
// slurmd (n1 idle): "sbatch: Job 1 to start at 2026-11-30T20:29:00 using 1
// processors on nodes n1 in partition cpu".
const willRunCapture = "local-24.11/sbatch-test-only-24.11.pcap"

func TestWillRunGolden(t *testing.T) {
	reqs := goldenFrames(t, willRunCapture, REQUEST_JOB_WILL_RUN)
	if len(reqs) != 1 {
		t.Fatalf("%d will-run requests", len(reqs))
	}
	var d JobDesc
	r := NewReader(reqs[0].Body)
	if err := d.Decode(&r, reqs[0].Version); err != nil {
		t.Fatalf("request: %v", err)
	}
	var w Writer
	d.Encode(&w, reqs[0].Version)
	jcRequireSameBytes(t, "will_run request", w.B, reqs[0].Body)

	frames := goldenFrames(t, willRunCapture, RESPONSE_JOB_WILL_RUN)
	if len(frames) != 1 {
		t.Fatalf("%d will-run responses", len(frames))
	}
	f := frames[0]
	if f.Version != V24_11 {
		t.Fatalf("version %#x", f.Version)
	}
	var m WillRunResponse
	r = NewReader(f.Body)
	if err := m.Decode(&r, f.Version); err != nil {
		t.Fatalf("response: %v", err)
	}
	want := WillRunResponse{StepID: JobStepID{JobID: 1}, NodeList: "n1", PartName: "cpu", PreempteesNull: true, ProcCnt: 1, StartTime: 1796070540}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("decoded %+v\n want %+v", m, want)
	}
	w = Writer{}
	m.Encode(&w, f.Version)
	jcRequireSameBytes(t, "will_run response", w.B, f.Body)
}
