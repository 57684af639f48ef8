package ctld

import (
	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// jobEntry is a job record. Records are immutable: a change makes a new
// entry, so its identity tells whether encoded bytes (jobChunk) are
// still valid.
//
// A job nothing will happen to until somebody acts on it (held, or
// finished and waiting for MinJobAge) is kept cold: only in the store,
// read back when it is looked at. Large queues are mostly such jobs, and
// squeue never reads them: it is answered from encoded chunks, which are
// what a queue of 100,000 jobs costs in memory. The fields the
// controller's scans test are copied out, so a scan over every job reads
// none of the cold ones it skips.
type jobEntry struct {
	id, arrayJobID, arrayTaskID uint32
	state, priority, userID     uint32
	endTime                     int64

	hot   *state.Job   // the decoded job; nil while cold
	store *state.Store // holds a cold job's record
	// ended: cancelled by a bulk cancel whose log holds it, its record
	// not yet written (cancellog.go); a cold record is read with it
	// applied.
	ended *cancelEnd

	// The job's nodes expanded, for the snapshot's node allocation
	// (c.mu): every rebuild walks the running jobs, and expanding each
	// host list each time made a submission cost O(running jobs).
	nodesKey  string
	nodeNames []string
}

// expandedNodes is j.Nodes expanded (c.mu held; j is e's job).
func (e *jobEntry) expandedNodes(j *state.Job) []string {
	if e.nodeNames == nil || e.nodesKey != j.Nodes {
		names, err := hostlist.Expand(j.Nodes)
		if err != nil {
			return nil
		}
		e.nodesKey, e.nodeNames = j.Nodes, names
	}
	return e.nodeNames
}

// newEntry makes the entry of j, which it keeps (callers must no longer
// change it). stored says the store holds exactly j, so that the entry
// may leave it there.
func newEntry(j *state.Job, store *state.Store, stored bool) *jobEntry {
	e := &jobEntry{
		id: j.ID, arrayJobID: j.ArrayJobID, arrayTaskID: j.ArrayTaskID,
		state: j.State, priority: j.Priority, userID: j.UserID, endTime: j.EndTime,
	}
	if stored && store != nil && keepCold(j) {
		e.store = store
	} else {
		e.hot = j
	}
	return e
}

// keepCold reports whether j waits for an outside action: a held
// pending job (not an array's pending record, whose tasks the dispatcher
// counts) with no deadline to enforce, or a finished job.
func keepCold(j *state.Job) bool {
	switch {
	case codec.JobIsFinished(j.State):
		return j.State&codec.JOB_COMPLETING == 0
	case codec.JobIsPending(j.State):
		return j.Priority == 0 && j.SessionID == "" && j.Deadline == 0 && j.ArrayTasks == ""
	}
	return false
}

// job returns the entry's job. For a cold entry it is a fresh copy the
// caller may keep; either way it must not be changed.
func (e *jobEntry) job() *state.Job {
	if e.hot != nil {
		return e.hot
	}
	return e.view(new(state.Job))
}

// view returns the entry's job, reading a cold one into scratch.
func (e *jobEntry) view(scratch *state.Job) *state.Job {
	if e.hot != nil {
		return e.hot
	}
	r := e.store.NewJobReader()
	defer r.Close()
	if r.Read(e.id, scratch) != nil {
		e.fallback(scratch)
	} else if e.ended != nil {
		e.ended.apply(scratch)
	}
	return scratch
}

// coldReader reads the cold jobs of a pass over many entries through
// one store reader, opened when the first one needs it.
type coldReader struct {
	r       *state.JobReader
	scratch state.Job
}

// view returns e's job; a cold one is valid until the next call.
func (c *coldReader) view(e *jobEntry) *state.Job {
	if e.hot != nil {
		return e.hot
	}
	if c.r == nil {
		c.r = e.store.NewJobReader()
	}
	if c.r.Read(e.id, &c.scratch) != nil {
		e.fallback(&c.scratch)
	} else if e.ended != nil {
		e.ended.apply(&c.scratch)
	}
	return &c.scratch
}

func (c *coldReader) close() {
	if c.r != nil {
		c.r.Close()
		c.r = nil
	}
}

// fallback fills j with what the entry itself knows: the store could not
// give the record (an I/O error), and an answer beats none.
func (e *jobEntry) fallback(j *state.Job) {
	*j = state.Job{ID: e.id, ArrayJobID: e.arrayJobID, ArrayTaskID: e.arrayTaskID,
		State: e.state, Priority: e.priority, UserID: e.userID, EndTime: e.endTime}
}

// coldPending: a pending job kept cold (keepCold: held, no session,
// deadline or array tasks of its own), not cancelled by a bulk cancel.
func (e *jobEntry) coldPending() bool { return e.hot == nil && e.ended == nil && e.pending() }

// unwritten: cancelled by a bulk cancel whose log still holds the job
// (its record and accounting record not yet written).
func (e *jobEntry) unwritten() bool { return e.ended != nil && e.id > e.ended.written.Load() }

// pending/finished without reading the job.
func (e *jobEntry) pending() bool  { return codec.JobIsPending(e.state) }
func (e *jobEntry) finished() bool { return codec.JobIsFinished(e.state) }
