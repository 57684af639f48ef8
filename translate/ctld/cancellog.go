package ctld

import (
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// Bulk cancels. A kill of many pending jobs (scancel -u, -t PENDING,
// --partition) is acknowledged once one record naming them is on disk
// (state.Store.LogCancels); each job's entry shows it cancelled at once
// (jobEntry.ended), and its record and accounting record are written
// afterwards, a chunk at a time at half a core (materialize). Held jobs
// kept cold are cancelled without their records being read at all
// (killBatch.coldCancel). Writing 100,000 records
// and their history before answering took seconds; slurmctld answers at
// once and saves its state later, without our durability.

// bulkCancel is the number of pending jobs from which a kill is logged
// rather than written record by record before the answer.
const bulkCancel = 1024

// materializeChunk bounds the records written per transaction (c.mu is
// held meanwhile, so submissions wait at most one chunk).
const materializeChunk = 1024

// cancelEnd is a logged cancel: the job as its record will say once
// written, and the log that holds it until then.
type cancelEnd struct {
	seq uint64
	at  int64
	uid uint32
	n   int // the jobs it cancelled (its log's, however many are left to write)
	// written: the records of its jobs up to this ID are written
	// (materialize goes in ID order). Their entries are left as they
	// are, so that no listing chunk is encoded again for a record that
	// reads the same; they count as written ones (unwritten).
	written atomic.Uint32
}

// apply makes j what the cancel made it: killLocked's change to a
// pending job.
func (d *cancelEnd) apply(j *state.Job) {
	cancelPending(j, d.at)
}

// endedEntry is old's entry once cancelled by d, its record not yet
// written: a cold one is read and d applied (view); a hot one is copied.
func endedEntry(old *jobEntry, d *cancelEnd) *jobEntry {
	ne := &jobEntry{id: old.id, arrayJobID: old.arrayJobID, arrayTaskID: old.arrayTaskID,
		state: codec.JOB_CANCELLED, priority: old.priority, userID: old.userID, endTime: d.at,
		store: old.store, ended: d}
	if old.hot != nil {
		j := *old.hot
		d.apply(&j)
		ne.hot = &j
	}
	return ne
}

// logCancels logs the batch's pending jobs cancelled whole, if there are
// bulkCancel of them, and takes them out of its writes (c.mu held). A
// failed log leaves them to be written one by one.
func (c *Controller) logCancels(b *killBatch) {
	ids := make([]uint32, 0, len(b.cold))
	for _, e := range b.cold {
		ids = append(ids, e.id)
	}
	for _, p := range b.puts {
		if p.logable() {
			ids = append(ids, p.j.ID)
		}
	}
	var seq uint64
	err := errTooFew
	if len(ids) >= bulkCancel {
		if seq, err = c.opt.Store.LogCancels(ids, b.now, b.uid); err != nil {
			c.logf("bulk cancel of %d jobs: %v; writing them one by one", len(ids), err)
		}
	}
	if err != nil {
		// Written one by one: the cold ones read and changed now.
		for _, e := range b.cold {
			j := b.cancelled(e)
			b.put(e, &j, true)
		}
		b.cold = nil
		return
	}
	d := &cancelEnd{seq: seq, at: b.now, uid: b.uid, n: len(ids)}
	for _, e := range b.cold {
		c.swapEntry(e, endedEntry(e, d))
		c.counters.canceled.Add(1)
	}
	b.cold = nil
	rest := b.puts[:0]
	for _, p := range b.puts {
		if !p.logable() {
			rest = append(rest, p)
			continue
		}
		c.swapEntry(p.e, endedEntry(p.e, d))
		c.counters.canceled.Add(1)
	}
	clear(b.puts[len(rest):])
	b.puts = rest
	b.changed = true
	c.logf("bulk cancel of %d jobs by uid %d: logged %v after its request was taken up; their records follow", len(ids), b.uid, time.Since(b.start).Round(time.Millisecond))
	slices.Sort(ids)
	go c.materialize(d, ids)
}

// errTooFew: fewer than bulkCancel cancels, written one by one.
var errTooFew = errors.New("too few to log")

// logable: a pending job cancelled whole, once, in the batch (its new
// record is its old one with the cancel applied).
func (p *killPut) logable() bool {
	return p.pending && p.n == 1 && p.j.State == codec.JOB_CANCELLED && p.e.ended == nil
}

// swapEntry puts ne in old's place (c.mu held).
func (c *Controller) swapEntry(old, ne *jobEntry) {
	if i := c.at(old.id); i >= 0 && c.jobs[i] == old {
		c.ownJobs()
		c.jobs[i] = ne
	}
}

// materialize writes the records of log d's jobs (ids ascending), a
// chunk per transaction with the log's progress, then drops the log. A
// job changed since its cancel was logged has been written by whoever
// changed it, and is skipped. A store that refuses a chunk is retried
// with a growing delay; the jobs show cancelled meanwhile, and a restart
// resumes from the progress.
func (c *Controller) materialize(d *cancelEnd, ids []uint32) {
	start := time.Now()
	defer func() {
		// Named by the whole cancel, also when a restart left it fewer
		// to write.
		c.logf("bulk cancel of %d jobs by uid %d: records written in %v", d.n, d.uid, time.Since(start).Round(time.Millisecond))
	}()
	delay := time.Second
	for i := 0; i < len(ids); {
		n := min(materializeChunk, len(ids)-i)
		t0 := time.Now()
		if err := c.materializeChunk(d, ids[i:i+n]); err != nil {
			if c.opt.Store.Closed() {
				return
			}
			c.storeTrouble("bulk cancel: writing jobs %d-%d: %v; retrying", ids[i], ids[i+n-1], err)
			time.Sleep(delay)
			delay = min(2*delay, 30*time.Second)
			continue
		}
		i += n
		delay = time.Second
		// At most half a core: the jobs already show cancelled, and
		// readers (squeue pollers) should not pay for the writing.
		time.Sleep(time.Since(t0))
	}
	for {
		err := c.opt.Store.DropCancelLog(d.seq)
		if err == nil || c.opt.Store.Closed() {
			return
		}
		c.storeTrouble("bulk cancel: dropping its log: %v; retrying", err)
		time.Sleep(delay)
		delay = min(2*delay, 30*time.Second)
	}
}

func (c *Controller) materializeChunk(d *cancelEnd, ids []uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var cr coldReader
	var jobs []*state.Job
	for _, id := range ids {
		e := c.entry(id)
		if e == nil || e.ended != d {
			continue
		}
		j := *cr.view(e) // the cancel applied
		jobs = append(jobs, &j)
		c.opt.Store.NoteJobEnd(id, d.uid, 0, 0, 0, 0)
	}
	cr.close()
	if err := c.opt.Store.PutCancelled(d.seq, ids[len(ids)-1], jobs...); err != nil {
		return err
	}
	d.written.Store(ids[len(ids)-1])
	return nil
}

// todoCancel is a cancel log's jobs still to write.
type todoCancel struct {
	d   *cancelEnd
	ids []uint32
}

// recoverCancels finds the cancel logs a stop left unfinished: their
// jobs not yet written show cancelled again (called by New, before the
// first snapshot); the function it returns has materialize finish them
// (New calls it once it no longer touches the jobs without c.mu).
func (c *Controller) recoverCancels() (func(), error) {
	logs, err := c.opt.Store.CancelLogs()
	if err != nil {
		return nil, err
	}
	if len(logs) == 0 {
		return func() {}, nil
	}
	var work []todoCancel
	for _, l := range logs {
		d := &cancelEnd{seq: l.Seq, at: l.At, uid: l.UID, n: len(l.IDs)}
		var ids []uint32
		for _, id := range l.IDs {
			if id <= l.Done {
				continue
			}
			// Written records are past the cancel; a record still
			// pending is the job as the log found it.
			if e := c.entry(id); e != nil && e.pending() && e.ended == nil {
				c.swapEntry(e, endedEntry(e, d))
				ids = append(ids, id)
			}
		}
		slices.Sort(ids) // materialize goes in ID order
		c.logf("bulk cancel of %d jobs by uid %d: %d records still to write", len(l.IDs), l.UID, len(ids))
		work = append(work, todoCancel{d, ids})
	}
	return func() {
		go c.finishCancels(work)
	}, nil
}

func (c *Controller) finishCancels(work []todoCancel) {
	for _, w := range work {
		if len(w.ids) == 0 {
			// Every record was written before the stop; only the
			// log was left.
			switch err := c.opt.Store.DropCancelLog(w.d.seq); {
			case err == nil:
				c.logf("bulk cancel of %d jobs by uid %d: records written before the restart", w.d.n, w.d.uid)
			case !c.opt.Store.Closed():
				c.logf("bulk cancel: dropping its log: %v", err)
			}
			continue
		}
		c.materialize(w.d, w.ids)
	}
}
