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
	submit := func() uint32 { return submitHeld(t, c) }
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

// submitHeld submits a held batch job through the controller, as sbatch
// --hold does, and returns its ID.
func submitHeld(t *testing.T, c *Controller) uint32 {
	d := testJobDesc()
	d.Priority = 0 // held: nothing runs
	return submitDesc(t, c, &d)
}

// testJobDesc is a root's job: a one-line script in /tmp.
func testJobDesc() codec.JobDesc {
	d := codec.NewJobDesc()
	d.Script, d.Environment, d.UserID, d.GroupID, d.WorkDir = "#!/bin/sh\ntrue\n", []string{"PATH=/bin"}, 0, 0, "/tmp"
	return d
}

// submitDesc submits d (24.11) through the controller and returns the
// job's ID, failing t on a refusal.
func submitDesc(t *testing.T, c *Controller, d *codec.JobDesc) uint32 {
	t.Helper()
	const v = codec.V24_11
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

// Publishing a submission costs what it adds, not the queue: successive
// snapshots share one array of entries. A published snapshot never
// changes: a job changed or purged later is changed in a copy.
func TestSnapshotSharesJobs(t *testing.T) {
	c := newTestController(t, fakeCluster(t, "slurm-24.11"), state.NewRPCStats())
	var ids []uint32
	for range 3 {
		ids = append(ids, submitHeld(t, c))
	}
	s1 := c.Snapshot()
	ids = append(ids, submitHeld(t, c))
	s2 := c.Snapshot()
	if s1.NumJobs() != 3 || s2.NumJobs() != 4 {
		t.Fatalf("snapshots of %d and %d jobs, want 3 and 4", s1.NumJobs(), s2.NumJobs())
	}
	if &s1.jobs[0] != &s2.jobs[0] {
		t.Errorf("a submission copied the queue's entries into its snapshot")
	}
	// A change in place: the published snapshots keep the job as it was.
	c.mu.Lock()
	e := c.entry(ids[1])
	j := *e.job()
	j.Name = "renamed"
	c.swap(e, &j, false) // kept in memory: the store is not written here
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	s3 := c.Snapshot()
	for _, s := range []*Snapshot{s1, s2} {
		if got := s.Jobs()[1].Name; got == "renamed" {
			t.Errorf("a published snapshot changed under its readers: job %d named %q", ids[1], got)
		}
	}
	if got := s3.Jobs()[1].Name; got != "renamed" {
		t.Errorf("the new snapshot shows job %d named %q, want renamed", ids[1], got)
	}
	// Submissions after it share s3's array, and leave s3 as it was.
	ids = append(ids, submitHeld(t, c))
	s4 := c.Snapshot()
	if &s3.jobs[0] != &s4.jobs[0] || s3.NumJobs() != 4 || s4.NumJobs() != 5 {
		t.Errorf("after a change, a submission copied the entries or changed the last snapshot (%d, %d jobs)", s3.NumJobs(), s4.NumJobs())
	}
	// A job added out of ID order (another path's ID taken during a
	// group write) is put in its place, in a copy.
	c.mu.Lock()
	low := *c.entry(ids[4]).job()
	c.jobs = slices.Delete(slices.Clone(c.jobs), 4, 5)
	c.jobsShared = false
	high := low
	high.ID = low.ID + 1
	c.addJob(newEntry(&high, c.opt.Store, false))
	c.addJob(newEntry(&low, c.opt.Store, false))
	got := []uint32{}
	for _, e := range c.jobs {
		got = append(got, e.id)
	}
	c.mu.Unlock()
	if want := append(slices.Clone(ids), ids[4]+1); !slices.Equal(got, want) {
		t.Errorf("jobs %v, want %v (in ID order)", got, want)
	}
	if s4.NumJobs() != 5 || s4.Jobs()[4].ID != ids[4] {
		t.Errorf("the published snapshot changed: %d jobs", s4.NumJobs())
	}
}
