package ctld

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// TestGroupCommit: submissions that come while a write is under way share
// the next one (one transaction, one snapshot), each is answered with its
// own dense, unique ID, and every one is in the store when answered.
func TestGroupCommit(t *testing.T) {
	c := newTestController(t, fakeCluster(t, "slurm-24.11"), state.NewRPCStats())
	const v = codec.V24_11
	submit := func() uint32 {
		d := codec.NewJobDesc()
		d.Script, d.Environment, d.UserID, d.GroupID, d.WorkDir = "#!/bin/sh\ntrue\n", []string{"PATH=/bin"}, 0, 0, "/tmp"
		d.Priority = 0 // held: nothing runs
		w := codec.Writer{}
		d.Encode(&w, v)
		rep := c.Slow(&Request{Version: v, MsgType: codec.REQUEST_SUBMIT_BATCH_JOB, Body: w.B})
		var resp codec.SubmitResponse
		r := codec.NewReader(rep.Body)
		if err := resp.Decode(&r, v); err != nil || rep.MsgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
			t.Errorf("submit: type %d: %v", rep.MsgType, err)
		}
		return resp.StepID.JobID
	}
	first := submit()
	before := c.batches.Load()

	// The first of ten takes the lead and waits for the controller (held
	// here, as by a long write); the nine others queue behind it.
	const n = 10
	c.mu.Lock()
	ids := make([]uint32, n)
	var wg sync.WaitGroup
	waitFor := func(what string, ok func(g *groupCommit) bool) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c.group.mu.Lock()
			done := ok(&c.group)
			c.group.mu.Unlock()
			if done {
				return
			}
			if time.Now().After(deadline) {
				c.mu.Unlock()
				t.Fatalf("waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); ids[i] = submit() }()
		if i == 0 {
			waitFor("the leader to take its batch", func(g *groupCommit) bool { return g.busy && len(g.pending) == 0 })
		}
	}
	waitFor("nine submissions queued", func(g *groupCommit) bool { return len(g.pending) == n-1 })
	c.mu.Unlock()
	wg.Wait()

	if got := c.batches.Load() - before; got != 2 {
		t.Errorf("%d writes for %d submissions, want 2 (the leader's, then the nine that queued behind it)", got, n)
	}
	slices.Sort(ids)
	for i, id := range ids {
		if id != first+1+uint32(i) {
			t.Fatalf("ids %v after %d: want dense and unique", ids, first)
		}
	}
	for _, id := range ids {
		if e := c.entry(id); e == nil || e.job().ID != id {
			t.Errorf("job %d answered but not listed", id)
		}
	}
	if got := c.Snapshot().NumJobs(); got != n+1 {
		t.Errorf("snapshot has %d jobs, want %d", got, n+1)
	}
	if next := c.opt.Store.NextID(); next != first+n+1 {
		t.Errorf("store's next id %d, want %d", next, first+n+1)
	}
}
