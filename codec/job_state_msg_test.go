package codec

import (
	"encoding/binary"
	"testing"
)

// TestJobStateRoundTrip: request and answer of every version that has
// the message (24.05 on): filters of all jobs, a job, an array task and
// a het job component; answers with a plain job, a het job component,
// an array's split task and its record of pending tasks.
func TestJobStateRoundTrip(t *testing.T) {
	for _, v := range Versions {
		if v < V24_05 {
			continue
		}
		jcRoundTrip(t, "job_state_req all", v, JobStateRequest{})
		jcRoundTrip(t, "job_state_req", v, JobStateRequest{Jobs: []JobStateFilter{
			{JobID: 7, ArrayTaskID: NoVal, HetJobOffset: NoVal},
			{JobID: 9, ArrayTaskID: 3, HetJobOffset: NoVal},
			{JobID: 12, ArrayTaskID: NoVal, HetJobOffset: 1},
		}})
		jcRoundTrip(t, "job_state_resp empty", v, JobStateResponse{})
		b := jcRoundTrip(t, "job_state_resp", v, JobStateResponse{Jobs: []JobStateEntry{
			{JobID: 7, ArrayTaskID: NoVal, State: JOB_PENDING},
			{JobID: 13, HetJobID: 12, ArrayTaskID: NoVal, State: JOB_RUNNING},
			{JobID: 21, ArrayJobID: 9, ArrayTaskID: 1, State: JOB_COMPLETE},
			{JobID: 9, ArrayJobID: 9, ArrayTaskID: NoVal, PendingTasks: NewHexBits(8, 2, 3, 7), State: JOB_PENDING},
			{JobID: 30, ArrayJobID: 30, ArrayTaskID: 4, State: JOB_CANCELLED},
		}})
		// The wire of the pending record: array_task_id NO_VAL, then
		// pack_bit_str_hex (bit count, "0x8C" with its NUL).
		want := []byte{0, 0, 0, 9, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 8, 0, 0, 0, 5, '0', 'x', '8', 'C', 0, 0, 0, 0, 0}
		found := false
		for i := 0; i+len(want) <= len(b); i++ {
			if string(b[i:i+len(want)]) == string(want) {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s: pending record not packed as pack_bit_str_hex: %x", VersionName(v), b)
		}
	}
}

// TestJobStateBounds: counts slurmctld refuses (at or above MAX_JOB_ID,
// NO_VAL, beyond the body) and versions without the message are errors
// with a Slurm code.
func TestJobStateBounds(t *testing.T) {
	for _, n := range []uint32{MaxJobID, NoVal, 2} {
		body := binary.BigEndian.AppendUint32(nil, n)
		body = append(body, make([]byte, 12)...)
		for _, d := range []decoder{new(JobStateRequest), new(JobStateResponse)} {
			r := NewReader(body)
			if err := d.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
				t.Errorf("%T count %#x: %v", d, n, err)
			}
		}
	}
	r := NewReader([]byte{0, 0, 0, 0})
	if err := new(JobStateRequest).Decode(&r, V23_11); CodeOf(err) != SLURM_PROTOCOL_VERSION_ERROR {
		t.Errorf("23.11 request: %v", err)
	}
}

func FuzzDecodeJobStateRequest(f *testing.F) {
	jcSeed(f, JobStateRequest{Jobs: []JobStateFilter{{JobID: 1, ArrayTaskID: 2, HetJobOffset: NoVal}}})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[JobStateRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeJobStateResponse(f *testing.F) {
	jcSeed(f, JobStateResponse{Jobs: []JobStateEntry{
		{JobID: 1, ArrayTaskID: NoVal, HetJobID: 1, State: JOB_RUNNING},
		{JobID: 2, ArrayJobID: 2, ArrayTaskID: NoVal, PendingTasks: &HexBits{NBits: 4, Hex: "0x6"}},
	}})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[JobStateResponse](t, jcFuzzVersion(vb), body, nil)
	})
}
