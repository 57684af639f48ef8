package ctld

import (
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/state"
)

// Group commit of submissions. Each submission is acknowledged only once
// its record is on disk (a synchronous store write), as before; what
// concurrent submissions share is the write: the first one to come leads
// and writes every submission waiting at that moment in one transaction
// (one log sync) and publishes one snapshot for them, and whoever came
// during that write is written by the next batch. One submitter alone
// writes at once, as without batching; sixteen at once share a sync.

// maxBatch bounds a batch: a transaction of Badger's stays far below its
// size limit (a job description with its script is a few KiB).
const maxBatch = 256

type groupCommit struct {
	mu      sync.Mutex
	pending []*pendingSubmit
	busy    bool // a leader is writing
}

type pendingSubmit struct {
	job  *state.Job
	sc   *state.Script
	done chan state.Submitted // buffered: the writer never waits on it
}

// commitSubmission writes one validated submission durably, with
// whichever others come at the same time, and returns its record.
func (c *Controller) commitSubmission(job *state.Job, sc *state.Script) ([]*state.Job, error) {
	p := &pendingSubmit{job: job, sc: sc, done: make(chan state.Submitted, 1)}
	g := &c.group
	g.mu.Lock()
	g.pending = append(g.pending, p)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if lead {
		c.writeBatches()
	}
	r := <-p.done
	return r.Jobs, r.Err
}

// writeBatches writes the waiting submissions, a batch at a time, until
// none is left. The leader's own is in its first batch; later batches
// are written by a new goroutine, so the leader answers its client at
// once even while others keep coming.
func (c *Controller) writeBatches() {
	g := &c.group
	g.mu.Lock()
	n := min(len(g.pending), maxBatch)
	batch := g.pending[:n:n]
	g.pending = g.pending[n:]
	if len(g.pending) == 0 {
		g.pending = nil
	}
	g.mu.Unlock()

	// Priorities under c.mu (they read the controller's state: the
	// basic counter, fair share); the write without it, so that the
	// next submissions are decoded and checked while this batch syncs;
	// the new entries and their snapshot under it again.
	prios := make([]uint32, len(batch))
	c.mu.Lock()
	for i, p := range batch {
		if p.job.Priority != 0 {
			prios[i] = c.setJobPrio(p.job, p.job.SubmitTime)
		}
	}
	c.mu.Unlock()
	subs := make([]state.Submission, len(batch))
	for i, p := range batch {
		prio := prios[i]
		subs[i] = state.Submission{Count: 1, Script: p.sc, Build: func(id uint32) ([]*state.Job, error) {
			j := p.job // the submission's own: no copy (a job record is about a kilobyte)
			j.ID, j.Priority = id, prio
			if j.ArrayTasks != "" {
				j.ArrayJobID = id
			}
			return []*state.Job{j}, nil
		}}
	}
	res := c.opt.Store.SubmitBatch(subs)
	c.mu.Lock()
	added := false
	for _, r := range res {
		if r.Err == nil {
			c.addJob(newEntry(r.Jobs[0], c.opt.Store, true))
			added = true
		}
	}
	if added {
		c.rebuild(time.Now().Unix())
	}
	c.mu.Unlock()
	c.batches.Add(1)
	for i, p := range batch {
		p.done <- res[i]
	}

	g.mu.Lock()
	more := len(g.pending) > 0
	if !more {
		g.busy = false
	}
	g.mu.Unlock()
	if more {
		go c.writeBatches()
	}
}
