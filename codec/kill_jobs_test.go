package codec

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Captured from real 24.11.5 and 26.05.5 (tools/real-slurmctld.sh with
// MaxArraySize=9, tcpdump on lo): `scancel --ctld -v -n kjname 1
// 2_[2-3,7] 5` as root, job 1 held, 2 a held array of tasks 1-4, no job
// 5. scancel printed
//
//	scancel: error: Kill job error on job id 2_[7]: Invalid job id specified
//	scancel: error: Kill job error on job id 5: Invalid job id specified
//	scancel: Terminating job 2_[2-3]
//	scancel: Terminating job 1
//
// The bodies are under testdata/kill-jobs/RELEASE.{req,resp}.hex; in
// 26.05's answer the last entry's step id carries job 1's sluid (26.05
// sets it).
var killJobsCaptures = []struct {
	version uint16
	rel     string
}{{V24_11, "24.11"}, {V26_05, "26.05"}}

func killJobsCapture(t testing.TB, rel, kind string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "kill-jobs", rel+"."+kind+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	return mustHex(t, strings.TrimSpace(string(b)))
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKillJobsGolden(t *testing.T) {
	for _, c := range killJobsCaptures {
		name := VersionName(c.version)
		body := killJobsCapture(t, c.rel, "req")
		var m KillJobsRequest
		r := NewReader(body)
		if err := m.Decode(&r, c.version); err != nil {
			t.Fatalf("%s request: %v", name, err)
		}
		want := KillJobsRequest{Flags: KillJobsVerbose, JobName: "kjname", Jobs: []string{"1", "2_[2-3,7]", "5"},
			Signal: 9, State: JOB_END, UserID: 0}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("%s request %+v, want %+v", name, m, want)
		}
		var w Writer
		m.Encode(&w, c.version)
		jcRequireSameBytes(t, name+" request", w.B, body)

		body = killJobsCapture(t, c.rel, "resp")
		var resp KillJobsResponse
		r = NewReader(body)
		if err := resp.Decode(&r, c.version); err != nil {
			t.Fatalf("%s response: %v", name, err)
		}
		var got []string
		for _, j := range resp.Jobs {
			got = append(got, j.ID.String()+" "+KillJobsErrorText(j.ErrorCode)+" "+j.ErrorMsg)
		}
		wantLines := []string{
			"2_[7] Invalid job id specified Invalid job id specified",
			"5 Invalid job id specified Invalid job id specified",
			"2_[2-3] Unknown error 0 ",
			"1 Unknown error 0 ",
		}
		if !slices.Equal(got, wantLines) {
			t.Errorf("%s response %q, want %q", name, got, wantLines)
		}
		if r := resp.Jobs; r[0].RealJobID != NoVal || r[2].RealJobID != 2 || r[3].RealJobID != 1 || r[2].ID.ArrayBitmap.NBits != 9 {
			t.Errorf("%s response %+v", name, r)
		}
		w = Writer{}
		resp.Encode(&w, c.version)
		jcRequireSameBytes(t, name+" response", w.B, body)
	}
}

// TestKillJobsRoundTrip: request and answer of every version that has
// the message, the answer's ids as scancel prints them.
func TestKillJobsRoundTrip(t *testing.T) {
	step := func(s string) KillJobsStep {
		sp, rc := ParseJobIDString(s, 1001)
		if rc != SLURM_SUCCESS {
			t.Fatalf("%s: rc %d", s, rc)
		}
		return sp.Step(1001)
	}
	for _, v := range Versions {
		if v < V23_11 {
			continue
		}
		for _, tc := range []struct {
			name string
			req  KillJobsRequest
			resp KillJobsResponse
			ids  []string // as printed (before 24.11 without the bitmaps)
		}{
			{name: "ids", req: KillJobsRequest{Jobs: []string{"7", "8_[1-3]"}, Signal: 9, State: JOB_END, Flags: KillJobsVerbose},
				resp: KillJobsResponse{Jobs: []KillJobsResult{
					{ErrorCode: ESLURM_ACCESS_DENIED, ErrorMsg: KillJobsErrorText(ESLURM_ACCESS_DENIED), ID: step("7"), RealJobID: 7},
					{ID: step("8_[1-3]"), RealJobID: 8},
					{ID: step("8_4"), RealJobID: 12},
				}},
				ids: []string{"7", "8_[1-3]", "8_4"}},
			{name: "filters", req: KillJobsRequest{Account: "acct", AdminComment: "why", JobName: "n", Partition: "p", QOS: "q",
				Reservation: "r", Signal: 10, State: JOB_RUNNING, UserID: 1000, UserName: "u", Wckey: "w", Nodelist: "n[1-2]",
				Flags: KillJobBatch},
				resp: KillJobsResponse{}},
			{name: "empty strings", req: KillJobsRequest{Signal: 9, State: JOB_END, EmptyStrs: 1<<0 | 1<<2 | 1<<8}},
		} {
			req := tc.req
			if v < V25_11 {
				req.AdminComment = ""
				req.EmptyStrs &^= 1 << 1
			}
			jcRoundTrip(t, "kill_jobs "+tc.name, v, req)
			resp := tc.resp
			resp.Jobs = slices.Clone(resp.Jobs)
			for i := range resp.Jobs {
				if v < V24_11 {
					resp.Jobs[i].ID.ArrayBitmap = nil
				}
			}
			jcRoundTrip(t, "kill_jobs_resp "+tc.name, v, resp)
			for i, want := range tc.ids {
				if v < V24_11 && want == "8_[1-3]" {
					want = "8"
				}
				if got := resp.Jobs[i].ID.String(); got != want {
					t.Errorf("%s %s: id %d prints %q, want %q", VersionName(v), tc.name, i, got, want)
				}
			}
		}
	}
}

func TestParseJobIDString(t *testing.T) {
	nv := NoVal
	for _, tc := range []struct {
		in    string
		rc    uint32
		job   uint32
		task  uint32
		tasks []uint32
		het   uint32
		step  uint32
		hcomp uint32
		out   string // Step(16).String()
	}{
		{in: "12", job: 12, task: nv, het: nv, step: nv, hcomp: nv, out: "12"},
		{in: "12_3", job: 12, task: 3, het: nv, step: nv, hcomp: nv, out: "12_3"},
		{in: "12_[1-3,7]", job: 12, task: nv, tasks: []uint32{1, 2, 3, 7}, het: nv, step: nv, hcomp: nv, out: "12_[1-3,7]"},
		{in: "12_[0-8:4%2]", job: 12, task: nv, tasks: []uint32{0, 4, 8}, het: nv, step: nv, hcomp: nv, out: "12_[0,4,8]"},
		{in: "12_[5,3,3]", job: 12, task: nv, tasks: []uint32{3, 5}, het: nv, step: nv, hcomp: nv, out: "12_[3,5]"},
		{in: "12+1", job: 12, task: nv, het: 1, step: nv, hcomp: nv, out: "12+1"},
		{in: "12.0", job: 12, task: nv, het: nv, step: 0, hcomp: nv, out: "12.0"},
		{in: "12.batch", job: 12, task: nv, het: nv, step: SLURM_BATCH_SCRIPT, hcomp: nv, out: "12.batch"},
		{in: "12.Extern", job: 12, task: nv, het: nv, step: SLURM_EXTERN_CONT, hcomp: nv, out: "12.extern"},
		{in: "12_3.4+1", job: 12, task: 3, het: nv, step: 4, hcomp: 1, out: "12_3.4+1"},
		{in: "12.4+", job: 12, task: nv, het: nv, step: 4, hcomp: nv, out: "12.4"},
		{in: "", rc: ESLURM_EMPTY_JOB_ID},
		{in: "0", rc: ESLURM_INVALID_JOB_ID_ZERO},
		{in: "abc", rc: ESLURM_INVALID_JOB_ID_ZERO},
		{in: "-3", rc: ESLURM_INVALID_JOB_ID_NEGATIVE},
		{in: "67108863", rc: ESLURM_INVALID_JOB_ID_TOO_LARGE},
		{in: "12x", rc: ESLURM_INVALID_JOB_ID_NON_NUMERIC},
		{in: "12_", rc: ESLURM_EMPTY_JOB_ARRAY_ID},
		{in: "12_*", rc: ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC},
		{in: "12_-1", rc: ESLURM_INVALID_JOB_ARRAY_ID_NEGATIVE},
		{in: "12_99999999999999999999", rc: ESLURM_INVALID_JOB_ARRAY_ID_TOO_LARGE},
		{in: "12_[1-3", rc: ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC},
		{in: "12_[1-3]x", rc: ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC},
		{in: "12_[3-1]", rc: ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC},
		{in: "12_[16]", rc: ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC}, // MaxArraySize 16
		{in: "12_[a]", rc: ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC},
		{in: "12_3+1", rc: ESLURM_INVALID_HET_JOB_AND_ARRAY},
		{in: "12+", rc: ESLURM_EMPTY_HET_JOB_COMP},
		{in: "12+-1", rc: ESLURM_INVALID_HET_JOB_COMP_NEGATIVE},
		{in: "12+200", rc: ESLURM_INVALID_HET_JOB_COMP_TOO_LARGE},
		{in: "12+x", rc: ESLURM_INVALID_HET_JOB_COMP_NON_NUMERIC},
		{in: "12+1_2", rc: ESLURM_INVALID_HET_JOB_AND_ARRAY},
		{in: "12.", rc: ESLURM_EMPTY_STEP_ID},
		{in: "12.x", rc: ESLURM_INVALID_STEP_ID_NON_NUMERIC},
		{in: "12.-1", rc: ESLURM_INVALID_STEP_ID_NEGATIVE},
		{in: "12.4294967280", rc: ESLURM_INVALID_STEP_ID_TOO_LARGE},
		{in: "12.1x", rc: ESLURM_INVALID_STEP_ID_NON_NUMERIC},
		{in: "12+1.1+1", rc: ESLURM_INVALID_HET_STEP_JOB},
		{in: "12.1+x", rc: ESLURM_EMPTY_HET_STEP},
		{in: "12.1+0", rc: ESLURM_INVALID_HET_STEP_ZERO},
		{in: "12.1+-2", rc: ESLURM_INVALID_HET_STEP_NEGATIVE},
		{in: "12.1+128", rc: ESLURM_INVALID_HET_STEP_TOO_LARGE},
		{in: "12.1+1x", rc: ESLURM_INVALID_HET_STEP_NON_NUMERIC},
	} {
		sp, rc := ParseJobIDString(tc.in, 16)
		if rc != tc.rc {
			t.Errorf("%q: rc %d (%s), want %d (%s)", tc.in, rc, KillJobsErrorText(rc), tc.rc, KillJobsErrorText(tc.rc))
			continue
		}
		if rc != SLURM_SUCCESS {
			continue
		}
		want := JobIDSpec{JobID: tc.job, ArrayTaskID: tc.task, ArrayTasks: tc.tasks, HetJobOffset: tc.het, StepID: tc.step, StepHetComp: tc.hcomp}
		if !reflect.DeepEqual(sp, want) {
			t.Errorf("%q: %+v, want %+v", tc.in, sp, want)
		}
		st := sp.Step(16)
		if got := st.String(); got != tc.out {
			t.Errorf("%q prints %q, want %q", tc.in, got, tc.out)
		}
	}
}

func TestKillJobsStepString(t *testing.T) {
	base := KillJobsStep{StepID: JobStepID{JobID: 5, StepID: NoVal, StepHetComp: NoVal}, ArrayTaskID: NoVal, HetJobOffset: NoVal}
	for _, tc := range []struct {
		mod  func(*KillJobsStep)
		want string
	}{
		{func(s *KillJobsStep) {}, "5"},
		{func(s *KillJobsStep) { s.ArrayTaskID = 2; s.ArrayBitmap = NewHexBits(9, 2) }, "5_[2]"},
		{func(s *KillJobsStep) { s.ArrayTaskID = 2; s.ArrayBitmap = NewHexBits(9) }, "5_2"}, // empty bitmap: the task id
		{func(s *KillJobsStep) { s.ArrayBitmap = NewHexBits(100001, 0, 1, 2, 100000) }, "5_[0-2,100000]"},
		{func(s *KillJobsStep) { s.ArrayTaskID, s.HetJobOffset = 1, 1 }, ""},
		{func(s *KillJobsStep) { s.StepID.JobID = NoVal }, ""},
		{func(s *KillJobsStep) { s.StepID.StepHetComp = 1 }, ""},
		{func(s *KillJobsStep) { s.StepID.StepID = SLURM_INTERACTIVE_STEP }, "5.interactive"},
		{func(s *KillJobsStep) { s.StepID.StepID = SLURM_PENDING_STEP }, "5.TBD"},
	} {
		s := base
		tc.mod(&s)
		if got := s.String(); got != tc.want {
			t.Errorf("%+v prints %q, want %q", s, got, tc.want)
		}
	}
	if got := KillJobsErrorText(ESLURM_INVALID_HET_JOB_COMP_NON_NUMERIC); got != "Unknown error 2149" {
		t.Errorf("text of 2149: %q", got)
	}
	if got := TaskBitmap(4, []uint32{1, 6}); got.NBits != 7 || got.Hex != "0x42" {
		t.Errorf("TaskBitmap grown: %+v", got)
	}
}

// FuzzParseJobIDString: no panic, and an id that parses prints (as
// scancel would print it back) to an id that parses to the same spec.
func FuzzParseJobIDString(f *testing.F) {
	for _, s := range []string{"12", "12_3", "12_[1-3,7]", "12_[0-8:4%2]", "12+1", "12.batch", "12_3.4+1", "12_*", "", "-1", "12.1+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, rc := ParseJobIDString(s, 64)
		if rc != SLURM_SUCCESS {
			if rc < ESLURM_EMPTY_JOB_ID || rc > ESLURM_INVALID_HET_STEP_JOB {
				t.Fatalf("%q: rc %d is none of unfmt_job_id_string's", s, rc)
			}
			return
		}
		st := sp.Step(64)
		out := st.String()
		if out == "" {
			return // fmt_job_id_string refuses it too (e.g. task and het offset)
		}
		again, rc := ParseJobIDString(out, 64)
		if rc != SLURM_SUCCESS {
			t.Fatalf("%q prints %q, which does not parse: %d", s, out, rc)
		}
		if sp.ArrayTasks != nil {
			sp.ArrayTaskID = NoVal // "_[...]" wins in the printed form
		}
		if !reflect.DeepEqual(again, sp) {
			t.Fatalf("%q -> %+v prints %q -> %+v", s, sp, out, again)
		}
	})
}
