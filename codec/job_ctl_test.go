package codec

import (
	"reflect"
	"testing"
)

var scancelCaptures = []struct {
	rel    string
	body   int
	sjobID string // from the capture-set logs (24.11: one-digit id)
}{
	{"slurm-22.05/scancel-22.05.pcap", 28, "311"},
	{"slurm-24.11/scancel-24.11.pcap", 34, "7"},
	{"slurm-26.05/scancel-26.05.pcap", 36, "207"},
}

func TestKillJobGolden(t *testing.T) {
	for _, c := range scancelCaptures {
		frames := goldenFrames(t, c.rel, REQUEST_KILL_JOB)
		if len(frames) != 1 {
			t.Fatalf("%s: %d kill requests", c.rel, len(frames))
		}
		f := frames[0]
		if len(f.Body) != c.body {
			t.Errorf("%s: body %d bytes, want %d", c.rel, len(f.Body), c.body)
		}
		var m KillJobRequest
		r := NewReader(f.Body)
		if err := m.Decode(&r, f.Version); err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		want := KillJobRequest{StepID: NoStepID, SJobID: c.sjobID, Signal: 9}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("%s: %+v, want %+v", c.rel, m, want)
		}
		var w Writer
		m.Encode(&w, f.Version)
		jcRequireSameBytes(t, c.rel, w.B, f.Body)
	}
}

// jcRoundTrip encodes in, decodes it back for version, and compares;
// it also checks that every truncation fails and a trailing byte is
// refused. It returns the encoding.
func jcRoundTrip[T any, P interface {
	*T
	Decode(*Reader, uint16) error
	Encode(*Writer, uint16)
}](t *testing.T, name string, version uint16, in T) []byte {
	t.Helper()
	var w Writer
	P(&in).Encode(&w, version)
	var out T
	r := NewReader(w.B)
	if err := P(&out).Decode(&r, version); err != nil {
		t.Fatalf("%s %s: %v", name, VersionName(version), err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("%s %s: round trip\n in  %+v\n out %+v", name, VersionName(version), in, out)
	}
	for n := 0; n < len(w.B); n++ {
		var m T
		r := NewReader(w.B[:n])
		if err := P(&m).Decode(&r, version); err == nil {
			t.Fatalf("%s %s: %d of %d bytes decoded", name, VersionName(version), n, len(w.B))
		}
	}
	r = NewReader(append(w.B, 0))
	if err := P(&out).Decode(&r, version); err != ErrTrailing {
		t.Fatalf("%s %s: trailing byte: %v", name, VersionName(version), err)
	}
	return w.B
}

// jcStepFor trims a step id to what version carries.
func jcStepFor(s JobStepID, version uint16) JobStepID {
	if version < V24_11 {
		s.SLUID = 0
	}
	return s
}

// jcJobOnly keeps only the job id (the pre-25.11 layouts).
func jcJobOnly(s JobStepID, version uint16) JobStepID {
	if version < V25_11 {
		return JobStepID{JobID: s.JobID}
	}
	return jcStepFor(s, version)
}

func TestJobCtlRoundTripAllVersions(t *testing.T) {
	step := JobStepID{SLUID: 0xABCDEF, JobID: 42, StepID: 3, StepHetComp: NoVal}
	str := func(s string) int { return 4 + len(s) + 1 }
	for _, v := range Versions {
		sl := 12
		if v >= V24_11 {
			sl = 20
		}

		b := jcRoundTrip(t, "kill", v, KillJobRequest{StepID: jcStepFor(step, v), SJobID: "", Sibling: "sib", Signal: 15, Flags: KillFullJob | KillHurry, EmptyStrs: 1})
		if len(b) != sl+str("")+str("sib")+4 {
			t.Errorf("kill %s: %d bytes", VersionName(v), len(b))
		}

		kj := KillJobsRequest{
			Account: "a", AdminComment: "why", Flags: KillJobsVerbose, JobName: "j",
			Jobs: []string{"1", "2_[1-3]", ""}, Partition: "p", QOS: "q", Reservation: "r",
			Signal: 9, State: JOB_END, UserID: 1000, UserName: "u", Wckey: "w", Nodelist: "n[1-2]",
		}
		kjLen := str("a") + 2 + str("j") + 4 + str("1") + str("2_[1-3]") + str("") + str("p") + str("q") + str("r") + 2 + 4 + 4 + str("u") + str("w") + str("n[1-2]")
		if v < V25_11 {
			kj.AdminComment = ""
		} else {
			kjLen += str("why")
		}
		if b := jcRoundTrip(t, "kill_jobs", v, kj); len(b) != kjLen {
			t.Errorf("kill_jobs %s: %d bytes, want %d", VersionName(v), len(b), kjLen)
		}
		jcRoundTrip(t, "kill_jobs empty", v, KillJobsRequest{UserID: NoVal, EmptyStrs: 1 << 6})

		res := KillJobsResult{ErrorCode: ESLURM_ALREADY_DONE, ErrorMsg: "done", RealJobID: 42, SiblingName: "",
			ID: KillJobsStep{StepID: jcStepFor(step, v), ArrayTaskID: 4, HetJobOffset: NoVal, ArrayBitmap: &HexBits{NBits: 8, Hex: "0x10"}}}
		resLen := 4 + str("done") + sl + 4 + 4 + 4 + 4
		if v < V24_11 {
			res.ID.ArrayBitmap = nil
		} else {
			resLen += 4 + str("0x10")
		}
		res2 := res
		res2.ID.ArrayBitmap = nil
		if v < V24_11 {
			res2.ID.ArrayBitmap = nil
		}
		b = jcRoundTrip(t, "kill_jobs_resp", v, KillJobsResponse{Jobs: []KillJobsResult{res, res2}})
		want := 4 + 2*resLen
		if v >= V24_11 {
			want -= str("0x10") // res2's NULL bitmap is the bare NO_VAL
		}
		if len(b) != want {
			t.Errorf("kill_jobs_resp %s: %d bytes, want %d", VersionName(v), len(b), want)
		}
		jcRoundTrip(t, "kill_jobs_resp empty", v, KillJobsResponse{})

		ae := JobArrayErrors{Entries: []JobArrayError{{ErrorCode: 0, JobArrayID: "5_1", ErrMsg: "ok"}, {ErrorCode: ESLURM_JOB_NOT_PENDING, JobArrayID: "5_[2-3]"}}}
		aeLen := 4 + 4 + str("5_1") + 4 + str("5_[2-3]")
		if v < V23_02 {
			ae.Entries[0].ErrMsg = ""
		} else {
			aeLen += str("ok") + 4 // second err_msg is NULL
		}
		if b := jcRoundTrip(t, "array_errors", v, ae); len(b) != aeLen {
			t.Errorf("array_errors %s: %d bytes, want %d", VersionName(v), len(b), aeLen)
		}

		rq := JobRequeueRequest{StepID: jcJobOnly(JobStepID{SLUID: 9, JobID: NoVal, StepID: NoVal, StepHetComp: NoVal}, v), JobIDStr: "12_3", Flags: JOB_REQUEUE_HOLD | JOB_SPECIAL_EXIT}
		rqLen := 4 + str("12_3") + 4
		if v >= V25_11 {
			rqLen += 16
		}
		if b := jcRoundTrip(t, "requeue", v, rq); len(b) != rqLen {
			t.Errorf("requeue %s: %d bytes, want %d", VersionName(v), len(b), rqLen)
		}

		su := SuspendRequest{StepID: jcJobOnly(NoStepID, v), Op: ResumeJobOp, JobIDStr: "77"}
		suLen := 2 + 4 + str("77")
		if v >= V25_11 {
			suLen += 16
		}
		if b := jcRoundTrip(t, "suspend", v, su); len(b) != suLen {
			t.Errorf("suspend %s: %d bytes, want %d", VersionName(v), len(b), suLen)
		}

		tj := TopJobRequest{JobIDStr: "1,2,3"}
		tjLen := 2 + str("1,2,3")
		if v < V25_11 {
			tj.JobID = 0
			tjLen += 4
		}
		if b := jcRoundTrip(t, "top", v, tj); len(b) != tjLen {
			t.Errorf("top %s: %d bytes, want %d", VersionName(v), len(b), tjLen)
		}

		if b := jcRoundTrip(t, "notify", v, JobNotifyRequest{StepID: jcStepFor(JobStepID{JobID: 5, StepID: NoVal, StepHetComp: NoVal}, v), Message: "hello"}); len(b) != sl+str("hello") {
			t.Errorf("notify %s: %d bytes", VersionName(v), len(b))
		}
	}
}

// The field order of the two layouts of suspend (op before/after the
// id) is easy to get wrong: pin the bytes.
func TestSuspendLayouts(t *testing.T) {
	m := SuspendRequest{StepID: JobStepID{JobID: 0x01020304}, Op: ResumeJobOp, JobIDStr: "7"}
	var w Writer
	m.Encode(&w, V24_11)
	want := []byte{0, 1, 1, 2, 3, 4, 0, 0, 0, 2, '7', 0}
	jcRequireSameBytes(t, "suspend 24.11", w.B, want)
	m.StepID = JobStepID{SLUID: 0, JobID: 0x01020304, StepID: NoVal, StepHetComp: NoVal}
	w = Writer{}
	m.Encode(&w, V25_11)
	want = []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfe, 0, 1, 0, 0, 0, 2, '7', 0}
	jcRequireSameBytes(t, "suspend 25.11", w.B, want)
}

func TestKillFlagsFromPeer(t *testing.T) {
	if got := KillFlagsFromPeer(0, V23_11); got != KillCron {
		t.Errorf("23.11 plain kill: %#x", got)
	}
	if got := KillFlagsFromPeer(KillNoCron, V23_02); got != KillNoCron {
		t.Errorf("23.02 no-cron kill: %#x", got)
	}
	if got := KillFlagsFromPeer(0, V24_05); got != 0 {
		t.Errorf("24.05 plain kill: %#x", got)
	}
}

func TestJobCtlRejectsCounts(t *testing.T) {
	// Counts larger than the bytes left (or NO_VAL) fail before any
	// allocation.
	for _, body := range [][]byte{
		{0xff, 0xff, 0xff, 0xfe},
		{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0},
	} {
		var ae JobArrayErrors
		r := NewReader(body)
		if err := ae.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("array errors %x: %v", body, err)
		}
		var kr KillJobsResponse
		r = NewReader(body)
		if err := kr.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("kill jobs resp %x: %v", body, err)
		}
	}
}

func FuzzDecodeKillJobRequest(f *testing.F) {
	for _, c := range scancelCaptures {
		for _, fr := range goldenFrames(f, c.rel, REQUEST_KILL_JOB) {
			f.Add(jcVersionIndex(fr.Version), fr.Body)
		}
	}
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[KillJobRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

// jcSeed adds the encoding of m for every version.
func jcSeed[T any, P interface {
	*T
	Encode(*Writer, uint16)
}](f *testing.F, m T) {
	for _, v := range Versions {
		var w Writer
		P(&m).Encode(&w, v)
		f.Add(jcVersionIndex(v), w.B)
	}
}

func FuzzDecodeKillJobsRequest(f *testing.F) {
	jcSeed(f, KillJobsRequest{Account: "a", AdminComment: "c", Jobs: []string{"1", "2"}, UserID: NoVal, State: JOB_END})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[KillJobsRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeKillJobsResponse(f *testing.F) {
	jcSeed(f, KillJobsResponse{Jobs: []KillJobsResult{{ErrorMsg: "x", ID: KillJobsStep{StepID: NoStepID, ArrayBitmap: &HexBits{NBits: 4, Hex: "0x1"}}}}})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[KillJobsResponse](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeJobArrayErrors(f *testing.F) {
	jcSeed(f, JobArrayErrors{Entries: []JobArrayError{{ErrorCode: 1, JobArrayID: "1_2", ErrMsg: "m"}}})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[JobArrayErrors](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeJobRequeueRequest(f *testing.F) {
	jcSeed(f, JobRequeueRequest{StepID: NoStepID, JobIDStr: "5", Flags: JOB_REQUEUE_HOLD})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[JobRequeueRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSuspendRequest(f *testing.F) {
	jcSeed(f, SuspendRequest{StepID: NoStepID, Op: ResumeJobOp, JobIDStr: "5"})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SuspendRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeTopJobRequest(f *testing.F) {
	jcSeed(f, TopJobRequest{JobIDStr: "5,6"})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[TopJobRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeJobNotifyRequest(f *testing.F) {
	jcSeed(f, JobNotifyRequest{StepID: NoStepID, Message: "hi"})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[JobNotifyRequest](t, jcFuzzVersion(vb), body, nil)
	})
}
