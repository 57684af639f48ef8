package ctld

import (
	"strconv"
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// TestBasicPriority: priority/basic as slurmctld's set_job_prio gives it —
// one less than the lowest given so far, none for a held submission, a
// new (lower) one at release, so a released job queues behind every job
// given a priority before it.
func TestBasicPriority(t *testing.T) {
	c := newTestController(t, fakeCluster(t, "slurm-24.11"), state.NewRPCStats())
	const v = codec.V24_11
	submit := func(held bool) uint32 {
		t.Helper()
		d := codec.NewJobDesc()
		d.Script, d.Environment, d.UserID, d.GroupID, d.WorkDir = "#!/bin/sh\ntrue\n", []string{"PATH=/bin"}, 0, 0, "/tmp"
		if held {
			d.Priority = 0
		}
		w := codec.Writer{}
		d.Encode(&w, v)
		rep := c.Slow(&Request{Version: v, MsgType: codec.REQUEST_SUBMIT_BATCH_JOB, Body: w.B})
		if rep.MsgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
			t.Fatalf("submit: reply type %d", rep.MsgType)
		}
		var resp codec.SubmitResponse
		r := codec.NewReader(rep.Body)
		if err := resp.Decode(&r, v); err != nil {
			t.Fatal(err)
		}
		return resp.StepID.JobID
	}
	prio := func(id uint32) uint32 { return c.entry(id).job().Priority }
	a := submit(false)
	h := submit(true)
	b := submit(false)
	if prio(a) != topPriority-1 || prio(h) != 0 || prio(b) != topPriority-2 {
		t.Fatalf("priorities %d %d %d, want %d, 0 (held), %d (the held job took none)", prio(a), prio(h), prio(b), topPriority-1, topPriority-2)
	}
	d := codec.NewJobDesc()
	d.JobIDStr, d.Priority = strconv.FormatUint(uint64(h), 10), codec.Infinite
	w := codec.Writer{}
	d.Encode(&w, v)
	if rep := c.Slow(&Request{Version: v, MsgType: codec.REQUEST_UPDATE_JOB, Body: w.B}); rep.MsgType != codec.RESPONSE_SLURM_RC {
		t.Fatalf("release: reply type %d", rep.MsgType)
	}
	if got := prio(h); got != topPriority-3 {
		t.Errorf("released job's priority %d, want %d: below every job given one before the release", got, topPriority-3)
	}
	// No scheduler runs in this test: the reason is the release's own.
	if got := c.entry(h).job().Reason; got != codec.WAIT_NO_REASON {
		t.Errorf("released job's reason %s, want None (slurmctld's _release_job_rec)", codec.JobReasonString(got, v))
	}
}
