package ctld

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
)

// mayControl reports whether uid may act on job j: its owner, root, the
// SlurmUser, or a configured operator.
func (c *Controller) mayControl(uid uint32, j *state.Job) bool {
	return uid == j.UserID || c.isOperator(uid)
}

func (c *Controller) isOperator(uid uint32) bool {
	return uid == 0 || uid == c.opt.SlurmUID || c.opt.Operators[uid]
}

// parseJobID reads "123" (array forms are handled in the batch issue).
func parseJobID(s string) (uint32, bool) {
	if i := strings.IndexAny(s, "_+."); i >= 0 {
		s = s[:i]
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v == 0 {
		return 0, false
	}
	return uint32(v), true
}

// kill handles REQUEST_KILL_JOB (scancel ID, ID_TASK, ID_[RANGE], -s SIG).
// Pending jobs are cancelled at once; running ones are handed to the
// engine to terminate (or signal), and finish through its events.
func (c *Controller) kill(req *Request) Reply {
	var k codec.KillJobRequest
	r := codec.NewReader(req.Body)
	if err := k.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	targets, tasks, ok := c.lockTargets(k.SJobID, k.StepID.JobID)
	if !ok {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	for _, e := range targets {
		if !c.mayControl(req.UID, e.job()) {
			c.mu.Unlock()
			c.logf("uid %d may not signal job %d of uid %d", req.UID, e.id, e.userID)
			return rcReply(codec.ESLURM_ACCESS_DENIED)
		}
	}
	b := newKillBatch(k.Signal, k.Flags, req.UID)
	alive, notRunning := 0, 0
	for _, e := range targets {
		out, _ := c.killLocked(b, e, tasks)
		switch out {
		case killFinished:
			continue
		case killNotRunning:
			notRunning++
		}
		alive++
	}
	c.flushKills(b)
	if b.changed {
		c.rebuild(b.now)
	}
	c.mu.Unlock()
	if len(b.failed) > 0 {
		// Those of the batch the store took are ended all the same.
		c.endKilled(b)
		return rcReply(codec.ESLURM_INTERNAL)
	}
	if alive == 0 {
		return rcReply(codec.ESLURM_ALREADY_DONE)
	}
	if notRunning == alive {
		// Only pending jobs, and a signal they cannot take.
		return rcReply(codec.ESLURM_JOB_PENDING)
	}
	c.endKilled(b)
	for _, j := range b.toSignal {
		if err := c.signalJob(b, j); err != nil {
			return rcReply(codec.CodeOf(err))
		}
	}
	c.wake()
	return rcReply(codec.SLURM_SUCCESS)
}

// killBatch collects what kills and signals decided under c.mu, for the
// engine work done once the lock is released (endKilled, signalJob).
type killBatch struct {
	sig      int
	flags    uint16            // KILL_* bits
	now      int64             // the cancel time
	toKill   []*state.Job      // marked cancelled; the engine ends their sessions
	toSignal []*state.Job      // running jobs to signal (--batch or --full)
	creating []<-chan struct{} // sessions being created: closed once the cancel reached them
	changed  bool              // records changed: the snapshot needs a rebuild
	uid      uint32            // who asked (sacct's "CANCELLED by UID")
	start    time.Time         // when the request was taken up
	// puts are the changed records, written together by flush (a
	// scancel of 100,000 jobs is a few store writes, not 100,000);
	// putAt finds a job's among them.
	puts  []*killPut
	putAt map[uint32]int
	// cr reads the cold records the batch looks at through one store
	// reader, in ID order mostly (a reader per record cost most of a
	// scancel -u; reading again costs less than keeping a copy).
	cr coldReader
	// failed are the pending jobs whose cancel the store refused: they
	// stay pending.
	failed map[uint32]bool
	// cold are cold pending jobs cancelled whole (coldCancel), in
	// ascending ID order: known from their entries alone, so neither
	// read nor copied, for a bulk cancel to log (logCancels); fewer
	// than bulkCancel become puts.
	cold []*jobEntry
}

// coldCancel takes e's cancel, if e is a cold pending job (its record,
// by keepCold: held, no session, no array tasks, no deadline) the batch
// has not touched, in ascending ID order, and the batch ends jobs: what
// killLocked would do to its record is then known without reading it.
func (b *killBatch) coldCancel(e *jobEntry) bool {
	if b.sig != 9 || !e.coldPending() {
		return false
	}
	if n := len(b.cold); n > 0 && b.cold[n-1].id >= e.id {
		return false
	}
	if _, ok := b.putAt[e.id]; ok {
		return false
	}
	b.cold = append(b.cold, e)
	b.changed = true
	return true
}

// inCold reports whether e's cancel is among the batch's cold ones.
func (b *killBatch) inCold(e *jobEntry) bool {
	_, ok := slices.BinarySearchFunc(b.cold, e.id, func(x *jobEntry, id uint32) int { return cmp.Compare(x.id, id) })
	return ok
}

// cancelled is e's record with the batch's cancel of a pending job
// applied (killLocked's change).
func (b *killBatch) cancelled(e *jobEntry) state.Job {
	j := *b.cr.view(e)
	cancelPending(&j, b.now)
	return j
}

// cancelPending is a pending job's cancel at time at, whether written at
// once (killLocked) or logged (cancelEnd). slurmctld keeps the pending
// reason (squeue shows a cancelled held job as CANCELLED JobHeldUser).
func cancelPending(j *state.Job, at int64) {
	j.State, j.EndTime, j.StartTime = codec.JOB_CANCELLED, at, at
}

// killPut is a record a kill changed, to be written.
type killPut struct {
	e       *jobEntry
	j       state.Job
	pending bool // cancelled while pending (else: handed to the engine)
	n       int  // times put in the batch
}

// put queues j, the new record of e's job.
func (b *killBatch) put(e *jobEntry, j *state.Job, pending bool) {
	if b.putAt == nil {
		b.putAt = map[uint32]int{}
	}
	if i, ok := b.putAt[j.ID]; ok {
		b.puts[i].j = *j
		b.puts[i].n++
		return
	}
	b.putAt[j.ID] = len(b.puts)
	b.puts = append(b.puts, &killPut{e: e, j: *j, pending: pending, n: 1})
}

// current is job e's record as the batch has it (its queued change, if
// any).
func (b *killBatch) current(e *jobEntry) state.Job {
	if i, ok := b.putAt[e.id]; ok {
		return b.puts[i].j
	}
	if len(b.cold) > 0 && b.inCold(e) {
		return b.cancelled(e)
	}
	return *b.cr.view(e)
}

// killChunk bounds one store write of a flush: far below Badger's
// transaction limit.
const killChunk = 4096

// flush writes the batch's changed records, a chunk per transaction, and
// publishes them (c.mu held). A pending job the store refuses stays
// pending (failed); a running one is ended all the same, its record kept
// in memory and written once the store takes it, as an engine event's.
func (c *Controller) flushKills(b *killBatch) {
	c.logCancels(b)
	for _, p := range b.puts {
		if p.pending && codec.JobIsFinished(p.j.State) {
			c.opt.Store.NoteJobEnd(p.j.ID, b.uid, 0, 0, 0, 0) // sacct: CANCELLED by UID
		}
	}
	for len(b.puts) > 0 {
		n := min(len(b.puts), killChunk)
		chunk := b.puts[:n]
		b.puts = b.puts[n:]
		jobs := make([]*state.Job, n)
		for i := range chunk {
			jobs[i] = &chunk[i].j
		}
		err := c.opt.Store.Put(jobs...)
		for i := range chunk {
			p := chunk[i]
			switch {
			case err == nil:
				c.replace(p.e, &p.j)
				if p.pending {
					c.counters.canceled.Add(1)
				}
			case p.pending:
				if b.failed == nil {
					b.failed = map[uint32]bool{}
				}
				b.failed[p.j.ID] = true
			default:
				c.storeTrouble("job %d: cancelled, %v; its new state is kept in memory and written once the store takes it", p.j.ID, err)
				c.swap(p.e, &p.j, false)
				go c.persistLater(p.j.ID)
			}
		}
	}
	b.putAt = nil
	b.cr.close()
}

// newKillBatch starts a batch for signal sig (0 = SIGKILL) and flags.
func newKillBatch(sig, flags uint16, uid uint32) *killBatch {
	b := &killBatch{sig: int(sig), flags: flags, now: time.Now().Unix(), uid: uid, start: time.Now()}
	if b.sig == 0 {
		b.sig = 9
	}
	return b
}

// signalOnly reports whether the batch signals job j rather than ending
// it. As slurmctld's _job_signal: SIGKILL ends a pending job whatever the
// flags, and a running one unless only its batch shell (scancel -b) or
// only its steps are to get it; `scancel --full` is a plain cancel.
func (b *killBatch) signalOnly(j *state.Job) bool {
	if b.sig != 9 {
		return true
	}
	return !codec.JobIsPending(j.State) && b.flags&(codec.KillJobBatch|codec.KillStepsOnly) != 0
}

// killOutcome is what killLocked did with one job record.
type killOutcome int

const (
	killFinished   killOutcome = iota // already finished: nothing done
	killNotRunning                    // a signal for a pending job: nothing sent
	killStepsOnly                     // a signal for the job's steps only (a batch job here has none)
	killSignal                        // queued on toSignal
	killCancelled                     // pending: cancelled at once
	killEnding                        // marked cancelled and queued on toKill
)

// killLocked applies the batch's kill or signal to one job record, with
// c.mu held; tasks (nil = all) limits a pending array record to those
// tasks. An error is the store refusing the change of a pending job.
func (c *Controller) killLocked(b *killBatch, e *jobEntry, tasks *arrayRange) (killOutcome, error) {
	j := b.current(e)
	if codec.JobIsFinished(j.State) {
		return killFinished, nil
	}
	if b.signalOnly(&j) {
		// A signal (anything but the SIGKILL that ends the job) goes
		// to running jobs only. Without --batch or
		// --full slurmctld sends it to the job's steps alone, not
		// the batch shell: batch jobs without srun steps get none.
		if codec.JobIsPending(j.State) {
			return killNotRunning, nil
		}
		if b.flags&(codec.KillJobBatch|codec.KillFullJob) != 0 {
			b.toSignal = append(b.toSignal, e.job())
			return killSignal, nil
		}
		return killStepsOnly, nil
	}
	if codec.JobIsPending(j.State) && j.SessionID == "" {
		cancelPending(&j, b.now)
		if j.ArrayTasks != "" && tasks != nil {
			// Only some tasks of the pending array record.
			a, err := parseArray(j.ArrayTasks, maxArrayIndex)
			if err == nil {
				rest := &arrayRange{limit: a.limit}
				for _, t := range a.tasks {
					if !tasks.contains(t) {
						rest.tasks = append(rest.tasks, t)
					}
				}
				if rest.count() > 0 {
					j = b.current(e)
					j.ArrayTasks = rest.String()
				}
			}
		}
		b.put(e, &j, true)
		b.changed = true
		return killCancelled, nil
	}
	// Handed to the engine: mark it cancelled (and completing) now,
	// as slurmctld does; the engine's event finishes it.
	j.State = codec.JOB_CANCELLED | codec.JOB_COMPLETING
	j.EndTime = b.now
	c.opt.Store.NoteJobEnd(j.ID, b.uid, 0, 0, 0, 0)
	// Written with the batch (flushKills); if the store refuses it the
	// session is ended all the same (the user was told so), the record
	// kept in memory and written once the store takes it, as a job's end
	// from the engine is (applyEvent).
	b.put(e, &j, false)
	b.changed = true
	if j.SessionID == sessionCreating {
		if ch := c.creating[j.ID]; ch != nil {
			b.creating = append(b.creating, ch)
		}
	}
	b.toKill = append(b.toKill, &j)
	return killEnding, nil
}

// endKilled has the engine end the sessions of the batch's cancelled
// jobs (c.mu not held).
func (c *Controller) endKilled(b *killBatch) {
	// As slurmd: SIGTERM, then SIGKILL after KillWait. The engine
	// writes slurmstepd's "CANCELLED AT" line into the job's error
	// output itself, through the file it opened as the job's user
	// when the job started: the controller never opens a path a
	// user chose (it runs as root, and the path may be a link the
	// user planted since). Many jobs (scancel -u) are ended in
	// parallel, a bounded number at once.
	eachBounded(b.toKill, func(j *state.Job) { c.destroy(j.ID, j.SessionID, false) })
	// A job whose session was being created: handOver ends the session
	// once the engine has made it; the cancel is acknowledged after
	// that (bounded by the engine's timeout), not before.
	if len(b.creating) > 0 {
		deadline := time.NewTimer(engineTimeout + time.Second)
		defer deadline.Stop()
		for _, ch := range b.creating {
			select {
			case <-ch:
			case <-deadline.C:
				return
			}
		}
	}
}

// signalJob sends the batch's signal to a running job of its toSignal
// (c.mu not held): the batch shell alone with --batch, else everything.
func (c *Controller) signalJob(b *killBatch, j *state.Job) error {
	sg, ok := c.opt.Exec.(translate.Signaller)
	if !ok {
		return codec.Errorf(codec.ESLURM_NOT_SUPPORTED, "the engine cannot signal job %d", j.ID)
	}
	ctx, cancel := engineCtx()
	defer cancel()
	if err := sg.SignalSession(ctx, translate.SessionID(j.SessionID), b.sig, b.flags&codec.KillJobBatch != 0); err != nil {
		c.logf("job %d: signal %d: %v", j.ID, b.sig, err)
		return codec.Errorf(engineCode(err), "job %d: signal: %v", j.ID, err)
	}
	return nil
}

// parseJobSpec reads "123", "123_7", "123_[1-3,5]" or "123_*"; tasks nil
// means the whole job (every task of an array).
func parseJobSpec(s string, fallback uint32) (uint32, *arrayRange, error) {
	if s == "" {
		if fallback == 0 || fallback == codec.NoVal {
			return 0, nil, codec.Errorf(codec.ESLURM_INVALID_JOB_ID, "no job id")
		}
		return fallback, nil, nil
	}
	idStr, taskStr, hasTask := strings.Cut(s, "_")
	id, err := strconv.ParseUint(idStr, 10, 32)
	if err != nil || id == 0 {
		return 0, nil, codec.Errorf(codec.ESLURM_INVALID_JOB_ID, "bad job id %q", s)
	}
	if !hasTask || taskStr == "*" {
		return uint32(id), nil, nil
	}
	taskStr = strings.TrimSuffix(strings.TrimPrefix(taskStr, "["), "]")
	a, err := parseArray(taskStr, maxArrayIndex)
	if err != nil {
		return 0, nil, err
	}
	return uint32(id), a, nil
}

// jobsFor returns the job records a job spec names: the job itself, or
// the array's records (its pending record and the split-off tasks),
// limited to the given tasks.
func (c *Controller) jobsFor(id uint32, tasks *arrayRange) []*jobEntry {
	var out []*jobEntry
	for _, e := range c.jobs {
		if e.id != id && e.arrayJobID != id {
			continue
		}
		j := e.job()
		match := j.ID == id && tasks == nil
		if j.ArrayJobID == id && j.ArrayJobID != 0 {
			switch {
			case tasks == nil:
				match = true
			case j.ArrayTaskID != codec.NoVal:
				match = tasks.contains(j.ArrayTaskID)
			case j.ArrayTasks != "":
				if a, err := parseArray(j.ArrayTasks, maxArrayIndex); err == nil {
					for _, t := range tasks.tasks {
						if a.contains(t) {
							match = true
							break
						}
					}
				}
			}
		} else if j.ID == id && tasks != nil && j.ArrayJobID == 0 {
			match = false
		}
		if match {
			out = append(out, e)
		}
	}
	return out
}

// update handles REQUEST_UPDATE_JOB: scontrol hold/uhold/release and
// scontrol update of the fields users commonly change. Permissions follow
// slurmctld: owners may lower limits and raise nice, operators anything.
func (c *Controller) update(req *Request) Reply {
	var d codec.JobDesc
	r := codec.NewReader(req.Body)
	if err := d.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	if d.UserID != codec.NoVal && d.UserID != codec.SlurmAuthNobody && !c.isOperator(req.UID) {
		// scontrol -u: acting for another user is an administrator's.
		return rcReply(codec.ESLURM_USER_ID_MISSING)
	}
	targets, _, ok := c.lockTargets(d.JobIDStr, d.StepID.JobID)
	if !ok {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	// All or nothing: every target is checked and changed on a copy
	// first; only when all may be changed are they written, in one
	// transaction, and the sessions that must be taken back taken back.
	// (An error on a later target used to return after an earlier one
	// had been written without its session: the job could run twice.)
	now := time.Now().Unix()
	var (
		recall  []string
		changed = make([]*state.Job, 0, len(targets))
		limits  []limitChange
		warn    uint32 // made, but answered with this code
	)
	for _, e := range targets {
		j := *e.job()
		if !c.mayControl(req.UID, &j) {
			// slurmctld's answer to updating another user's job.
			c.mu.Unlock()
			return rcReply(codec.ESLURM_USER_ID_MISSING)
		}
		if j.Origin != "" {
			// A session made outside the frontend: its terms are the
			// engine's, set where it was made.
			c.mu.Unlock()
			c.logf("job %d shows a session made outside the frontend: not updated", j.ID)
			return rcReply(codec.ESLURM_NOT_SUPPORTED)
		}
		old := j
		requeue, w, err := c.applyUpdate(req, &d, &j)
		if err != nil {
			c.mu.Unlock()
			return refusal(err, req.Version)
		}
		warn = max(warn, w)
		if requeue && j.SessionID != "" && codec.JobIsPending(j.State) {
			// Waiting in the engine with the old terms: take it back;
			// the dispatcher hands it over again when eligible.
			recall = append(recall, j.SessionID)
			j.SessionID = ""
		}
		if codec.JobIsRunning(j.State) && j.TimeLimit != old.TimeLimit && j.SessionID != "" && j.SessionID != sessionCreating {
			limits = append(limits, limitChange{job: j.ID, sid: j.SessionID, from: old.TimeLimit, to: j.TimeLimit})
			if j.StartTime > 0 {
				j.EndTime = 0
				if j.TimeLimit != codec.Infinite && j.TimeLimit != codec.NoVal {
					j.EndTime = j.StartTime + int64(j.TimeLimit)*60 // the expected end slurmctld shows
				}
			}
		}
		changed = append(changed, &j)
	}
	// A running job's new limit is the engine's to enforce: it takes it
	// before anything is written, or nothing changes.
	if err := c.applyLimits(limits); err != nil {
		c.mu.Unlock()
		return refusal(err, req.Version)
	}
	if err := c.opt.Store.Put(changed...); err != nil {
		c.mu.Unlock()
		c.revertLimits(limits)
		c.logf("update: %v", err)
		return rcReply(codec.ESLURM_INTERNAL)
	}
	for i, e := range targets {
		c.replace(e, changed[i])
	}
	c.rebuild(now)
	c.mu.Unlock()
	c.destroySessions(recall, true)
	c.wake()
	if warn != 0 {
		return rcReply(warn)
	}
	return Reply{MsgType: codec.RESPONSE_SLURM_RC, Body: []byte{0, 0, 0, 0}}
}

// limitChange is a running job's time limit changed by an update.
type limitChange struct {
	job      uint32
	sid      string
	from, to uint32 // minutes, or Infinite
}

func limitDuration(min uint32) time.Duration {
	if min == codec.Infinite || min == codec.NoVal {
		return 0
	}
	return time.Duration(min) * time.Minute
}

// applyLimits has the engine enforce new time limits of running jobs
// (c.mu held: the engine only writes a file or makes one call per job);
// on a failure the ones already changed are changed back. An engine that
// cannot change a running session's limit refuses the update, as Slurm
// refuses what it cannot honour, rather than change only the record.
func (c *Controller) applyLimits(ls []limitChange) error {
	if len(ls) == 0 {
		return nil
	}
	tl, ok := c.opt.Exec.(translate.TimeLimiter)
	if !ok {
		return codec.Errorf(codec.ESLURM_NOT_SUPPORTED, "the engine cannot change a running job's time limit")
	}
	for i, l := range ls {
		ctx, cancel := engineCtx()
		err := tl.UpdateTimeLimit(ctx, translate.SessionID(l.sid), limitDuration(l.to))
		cancel()
		if err != nil {
			c.revertLimits(ls[:i])
			return codec.Errorf(engineCode(err), "job %d: time limit: %v", l.job, err)
		}
	}
	return nil
}

// revertLimits gives the engine the old limits back.
func (c *Controller) revertLimits(ls []limitChange) {
	tl, ok := c.opt.Exec.(translate.TimeLimiter)
	if !ok {
		return
	}
	for _, l := range ls {
		ctx, cancel := engineCtx()
		if err := tl.UpdateTimeLimit(ctx, translate.SessionID(l.sid), limitDuration(l.from)); err != nil {
			c.logf("job %d: giving back its time limit: %v", l.job, err)
		}
		cancel()
	}
}

// applyUpdate changes j as d asks, reporting whether a pending job must
// be handed to the engine again.
//
// warn is a code to answer with although the update was made (slurmctld's
// ESLURM_PRIO_RESET_FAIL: scontrol prints it and exits 0).
func (c *Controller) applyUpdate(req *Request, d *codec.JobDesc, j *state.Job) (requeue bool, warn uint32, err error) {
	op := c.isOperator(req.UID)
	pending := codec.JobIsPending(j.State)
	if codec.JobIsFinished(j.State) {
		return false, 0, codec.Errorf(codec.ESLURM_JOB_FINISHED, "job %d finished", j.ID)
	}
	needPending := func() error {
		if !pending {
			return codec.Errorf(codec.ESLURM_JOB_NOT_PENDING, "job %d not pending", j.ID)
		}
		return nil
	}
	switch {
	case d.Priority == 0 && !pending:
		// Holding a running job only matters if it is requeued; slurmctld
		// accepts it and records the priority and the hold reason.
		j.Priority, j.HeldBy, j.Reason = 0, 2, codec.WAIT_HELD_USER
		if op && d.AllocSID != codec.AllocSIDUserHold {
			j.HeldBy, j.Reason = 1, codec.WAIT_HELD
		}
	case d.Priority == 0:
		// A user hold unless an operator asks for an admin hold
		// (scontrol hold; uhold sends alloc_sid 2).
		j.Priority = 0
		if !op || d.AllocSID == codec.AllocSIDUserHold {
			j.HeldBy, j.Reason = 2, codec.WAIT_HELD_USER
		} else {
			j.HeldBy, j.Reason = 1, codec.WAIT_HELD
		}
		requeue = true
	case d.Priority == codec.Infinite && j.Priority == 0:
		if err := needPending(); err != nil {
			return false, 0, err
		}
		if j.Reason != codec.WAIT_HELD_USER && !op {
			return false, 0, codec.Errorf(codec.ESLURM_ACCESS_DENIED, "admin hold")
		}
		// slurmctld's _release_job_rec: a new priority, and no reason
		// until the scheduler looks at the job again (a --begin in the
		// past is forgotten).
		j.PrioSet = false
		j.Priority, j.HeldBy, j.Reason = c.setJobPrio(j, time.Now().Unix()), 0, codec.WAIT_NO_REASON
		if j.BeginTime != 0 && j.BeginTime < time.Now().Unix() {
			j.BeginTime = 0
		}
	case d.Priority == codec.Infinite && op:
		// An operator's release of a job that is not held: its priority
		// is computed again.
		j.PrioSet = false
		j.Priority = c.setJobPrio(j, time.Now().Unix())
		requeue = true
	case d.Priority == codec.Infinite:
		// Already released: slurmctld ignores the request, successfully.
	case d.Priority != codec.NoVal && j.Priority == 0:
		return false, 0, codec.Errorf(codec.ESLURM_JOB_HELD, "held: priority not reset")
	case d.Priority != codec.NoVal && op:
		j.Priority, j.PrioSet = d.Priority, true
		requeue = true
	case d.Priority != codec.NoVal && d.Priority < j.Priority:
		// A user may lower a job's priority; slurmctld sets it but says
		// it will not last (the next set_job_prio computes it again).
		j.Priority = d.Priority
		requeue = true
		warn = codec.ESLURM_PRIO_RESET_FAIL
	case d.Priority != codec.NoVal:
		return false, 0, codec.Errorf(codec.ESLURM_ACCESS_DENIED, "only operators raise priorities")
	}
	if d.TimeLimit != codec.NoVal {
		raise := j.TimeLimit != codec.Infinite && (d.TimeLimit == codec.Infinite || d.TimeLimit > j.TimeLimit)
		if !op && raise && !(pending && c.partAllows(j, d.TimeLimit)) {
			// A user may lower the limit, or raise a pending job's up
			// to its partition's MaxTime (slurmctld's update).
			return false, 0, codec.Errorf(codec.ESLURM_ACCESS_DENIED, "users may only lower the time limit")
		}
		j.TimeLimit = d.TimeLimit
		requeue = true
	}
	if d.Nice != codec.NoVal {
		n := codec.NiceFromWire(d.Nice)
		if n < 0 && !op {
			return false, 0, codec.Errorf(codec.ESLURM_ACCESS_DENIED, "negative nice needs an operator")
		}
		if n < -2147483645 || n > 2147483645 {
			return false, 0, codec.Errorf(codec.ESLURM_INVALID_NICE, "nice %d", n)
		}
		j.Nice = n
		requeue = true
	}
	if d.Name != "" {
		j.Name = d.Name
	}
	if d.StrGiven(codec.JDComment, d.Comment) {
		j.Comment = d.Comment
	}
	if d.Partition != "" {
		if err := needPending(); err != nil {
			return false, 0, err
		}
		p, err := c.pickPartition(d.Partition)
		if err != nil {
			return false, 0, err
		}
		j.Partition = p.Name
		requeue = true
	}
	if d.StrGiven(codec.JDDependency, d.Dependency) {
		if err := needPending(); err != nil {
			return false, 0, err
		}
		if d.Dependency != "" {
			if err := c.validDependencyLocked(d.Dependency); err != nil {
				return false, 0, err
			}
		}
		j.Dependency = d.Dependency
		requeue = true
	}
	if d.MinCPUs != codec.NoVal {
		if err := needPending(); err != nil {
			return false, 0, err
		}
		j.MinCPUs = d.MinCPUs
		requeue = true
	}
	if d.BeginTime != 0 {
		if err := needPending(); err != nil {
			return false, 0, err
		}
		j.BeginTime = d.BeginTime
		requeue = true
	}
	if d.StrGiven(codec.JDReqNodes, d.ReqNodes) {
		if err := needPending(); err != nil {
			return false, 0, err
		}
		j.ReqNodes = d.ReqNodes
		requeue = true
	}
	if d.StrGiven(codec.JDExcNodes, d.ExcNodes) {
		if err := needPending(); err != nil {
			return false, 0, err
		}
		j.ExcNodes = d.ExcNodes
		requeue = true
	}
	if j.Priority != 0 && c.prioParams().multifactor && !(op && d.Priority != codec.NoVal && d.Priority != codec.Infinite) && !codec.JobIsFinished(j.State) {
		// Under multifactor slurmctld computes a job's priority again at
		// the end of every update (a user's lowered priority does not
		// last; an operator's set one does).
		j.Priority = c.setJobPrio(j, time.Now().Unix())
	}
	return requeue, warn, nil
}

// partAllows reports whether the job's partition's MaxTime is at least
// limit (minutes, or Infinite).
func (c *Controller) partAllows(j *state.Job, limit uint32) bool {
	parts := c.cluster().parts
	for i := range parts {
		if parts[i].Name == firstPartition(j.Partition) {
			return withinMaxTime(&parts[i], limit)
		}
	}
	return false
}

// replace swaps a job's entry for a new one (old snapshots keep theirs).
// The store must hold exactly j: callers Put it first.
func (c *Controller) replace(old *jobEntry, j *state.Job) { c.swap(old, j, true) }

// swap is replace; stored false (the store could not take the change)
// keeps the job in memory whatever its state.
func (c *Controller) swap(old *jobEntry, j *state.Job, stored bool) {
	ne := newEntry(j, c.opt.Store, stored)
	if i := c.at(old.id); i >= 0 && c.jobs[i] == old {
		c.ownJobs()
		c.jobs[i] = ne
	}
}

// requeue handles REQUEST_JOB_REQUEUE (scontrol requeue / requeuehold): a
// running job is stopped and, like a finished batch job, goes back to
// PENDING (held with requeuehold), its restart count raised.
func (c *Controller) requeue(req *Request) Reply {
	var m codec.JobRequeueRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	targets, _, ok := c.lockTargets(m.JobIDStr, m.StepID.JobID)
	if !ok {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	now := time.Now().Unix()
	var stop []string
	for _, e := range targets {
		j := *e.job()
		if !c.mayControl(req.UID, &j) {
			c.mu.Unlock()
			return rcReply(codec.ESLURM_ACCESS_DENIED)
		}
		if codec.JobIsPending(j.State) {
			c.mu.Unlock()
			return rcReply(codec.ESLURM_JOB_PENDING)
		}
		if j.Origin != "" {
			c.mu.Unlock()
			return rcReply(codec.ESLURM_BATCH_ONLY) // no script to run again
		}
		if m.Flags&codec.JOB_RUNNING != 0 && !codec.JobIsRunning(j.State) {
			c.mu.Unlock()
			return rcReply(codec.ESLURM_JOB_NOT_RUNNING)
		}
		if codec.JobIsRunning(j.State) && j.SessionID != "" {
			stop = append(stop, j.SessionID)
		}
		if j.StartTime > 0 && (codec.JobIsRunning(j.State) || req.Version < codec.V26_05) {
			// The run ends here, requeued (sacct: REQUEUED): a running
			// one as cancelled by the requeue, its batch step killed.
			// (26.05's slurmdbd keeps a finished run as it ended.)
			run := j
			if codec.JobIsRunning(run.State) {
				run.State, run.EndTime, run.ExitCode = codec.JOB_CANCELLED, now, 15
			}
			if err := c.opt.Store.RequeueRun(&run); err != nil {
				c.logf("job %d: recording the requeued run: %v", j.ID, err)
			}
		}
		j.SessionID, j.State, j.Reason = "", codec.JOB_PENDING, codec.WAIT_TIME
		j.StartTime, j.EndTime, j.ExitCode, j.Nodes, j.BatchHost, j.TresAllocStr = 0, 0, 0, "", "", ""
		j.Restarts++
		// slurmctld's batch_requeue_fini: the job may start again once
		// its old launch credential has expired (BeginTime, 121 s), with
		// a new submit time and no accrued age.
		if j.BeginTime <= now {
			j.BeginTime = now + requeueDelay
		}
		j.EligibleTime = j.BeginTime
		if j.SubmitTime == now {
			now++
		}
		j.SubmitTime, j.AccrueTime = now, 0
		if m.Flags&codec.JOB_REQUEUE_HOLD != 0 {
			// A user hold whoever asks, described as slurmctld does
			// ("job requeued in held state").
			j.Priority, j.HeldBy, j.Reason = 0, heldRequeued, codec.WAIT_HELD_USER
		} else if j.Priority != 0 && req.Version >= codec.V23_02 {
			// 23.02+ compute the priority again (set_job_prio); 22.05
			// keeps it.
			j.Priority = c.setJobPrio(&j, now)
		} else if j.Priority == 0 {
			j.Priority = c.setJobPrio(&j, now)
		}
		if err := c.opt.Store.Put(&j); err != nil {
			c.mu.Unlock()
			return rcReply(codec.ESLURM_INTERNAL)
		}
		c.replace(e, &j)
	}
	c.rebuild(now)
	c.mu.Unlock()
	c.destroySessions(stop, false)
	c.wake()
	return rcReply(codec.SLURM_SUCCESS)
}

// destroySessions ends sessions taken back from the engine (called
// without c.mu: the engine may be slow).
func (c *Controller) destroySessions(ids []string, forced bool) {
	eachBounded(ids, func(sid string) { c.destroy(0, sid, forced) })
}

// top handles REQUEST_TOP_JOB (scontrol top): the named pending jobs go
// ahead of their owner's other pending jobs. As in slurmctld, only
// operators may, unless SchedulerParameters has enable_user_top.
func (c *Controller) top(req *Request) Reply {
	var m codec.TopJobRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	if !c.isOperator(req.UID) && !strings.Contains(c.config().Get("SchedulerParameters", ""), "enable_user_top") {
		return rcReply(codec.ESLURM_ACCESS_DENIED)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().Unix()
	for _, idStr := range strings.Split(m.JobIDStr, ",") {
		id, tasks, err := parseJobSpec(strings.TrimSpace(idStr), m.JobID)
		if err != nil {
			return rcReply(codec.ESLURM_INVALID_JOB_ID)
		}
		targets := c.jobsFor(id, tasks)
		if len(targets) == 0 {
			return rcReply(codec.ESLURM_INVALID_JOB_ID)
		}
		for _, e := range targets {
			j := *e.job()
			if !c.mayControl(req.UID, &j) {
				return rcReply(codec.ESLURM_ACCESS_DENIED)
			}
			if !codec.JobIsPending(j.State) {
				return rcReply(codec.ESLURM_JOB_NOT_PENDING)
			}
			if j.Priority == 0 {
				continue // held jobs stay held
			}
			top := j.Priority
			for _, o := range c.jobs {
				if o.userID == j.UserID && o.pending() && o.id != j.ID {
					top = max(top, o.priority+1)
				}
			}
			j.Priority = top
			if err := c.opt.Store.Put(&j); err != nil {
				return rcReply(codec.ESLURM_INTERNAL)
			}
			c.replace(e, &j)
		}
	}
	c.rebuild(now)
	c.wake()
	return rcReply(codec.SLURM_SUCCESS)
}

// lockTargets takes c.mu and resolves a job spec ("123", "123_4",
// "123_[1-3]") to its job records; ok=false (lock released) when it names
// none. tasks is the named array tasks, nil for the whole job.
func (c *Controller) lockTargets(spec string, fallback uint32) ([]*jobEntry, *arrayRange, bool) {
	id, tasks, err := parseJobSpec(spec, fallback)
	if err != nil {
		return nil, nil, false
	}
	c.mu.Lock()
	targets := c.jobsFor(id, tasks)
	if len(targets) == 0 {
		c.mu.Unlock()
		return nil, nil, false
	}
	return targets, tasks, true
}
