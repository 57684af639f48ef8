package ctld

import (
	"context"
	"errors"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate"
)

// Keeping the controller's jobs in step with the engine's sessions. The
// engine is the truth about sessions; events say what changed, and may
// be lost (a restart of either side, a dropped stream). So the
// controller lists the engine's sessions at start and every resyncEvery,
// and makes each job agree with its session as the engine reports it
// now, as a Kubernetes informer's resync does: a missed start or end is
// applied, a session the engine lost fails its job, a cancel that did
// not reach the engine is sent again, and a session no job knows (a
// create whose answer was lost) is ended. A restart thus neither loses
// nor doubles a job, and drift lasts at most one period.

// resyncEvery is how often the controller reconciles with the engine;
// a resync that took long (a listing of 100,000 sessions) waits
// resyncShare times its length for the next, so that reconciling stays
// a small share of what the server and the manager do (the events keep
// the jobs current meanwhile; drift lasts at most one period).
var resyncEvery = 30 * time.Second

const resyncShare = 20

// lostEvent fails a running job whose session the engine no longer has.
func lostEvent(c *Controller, job uint32, sid translate.SessionID) translate.SessionEvent {
	c.logf("resync: job %d: the engine has no session %s any more: NODE_FAIL", job, sid)
	return translate.SessionEvent{ID: sid, JobID: job, Status: translate.SessionError, Time: time.Now(), Reason: translate.ReasonLost}
}

// resync reconciles every job that has a session with the engine's list
// of sessions. startup: right after New, before anything was handed over
// in this run (a job marked "creating" then is one whose create may or
// may not have happened before a crash).
func (c *Controller) resync(ctx context.Context, startup bool) bool {
	listed := time.Now()
	lctx, cancel := context.WithTimeout(ctx, engineTimeout)
	sessions, err := c.opt.Exec.Sessions(lctx)
	cancel()
	if err != nil {
		c.logf("resync: the engine's sessions: %v (tried again in %v)", err, resyncEvery)
		return false
	}
	c.mu.Lock()
	// Sessions made outside the frontend: those already shown as jobs
	// are theirs; new live ones become jobs now (foreign.go).
	c.adoptForeign(sessions)
	c.mu.Unlock()
	known := make(map[translate.SessionID]*translate.SessionInfo, len(sessions))
	byJob := map[uint32]*translate.SessionInfo{}
	for i := range sessions {
		s := &sessions[i]
		known[s.ID] = s
		if s.Foreign != nil {
			continue // by session only
		}
		if prev, ok := byJob[s.JobID]; !ok || !s.Status.Terminal() || prev.Status.Terminal() {
			byJob[s.JobID] = s // the newest live one: the engine lists sessions oldest first
		}
	}
	var apply []translate.SessionEvent
	var stop []string
	// An engine whose listing is not exhaustive (Backend.AI's lists the
	// recently ended only) is asked for each session it did not list.
	type missed struct {
		job uint32
		sid translate.SessionID
	}
	var missing []missed
	getter, _ := c.opt.Exec.(translate.SessionGetter)
	claimed := map[translate.SessionID]bool{}
	c.mu.Lock()
	now := time.Now().Unix()
	for sid, at := range c.createdAt {
		if time.Since(at) > 2*resyncEvery {
			delete(c.createdAt, sid)
		}
	}
	for _, e := range c.jobs {
		if e.hot == nil { // cold: no session, or finished
			continue
		}
		j := e.hot
		switch {
		case j.SessionID == "":
			continue
		case j.SessionID == sessionCreating:
			if s := byJob[j.ID]; s != nil {
				claimed[s.ID] = true
			}
			if !startup {
				continue // its create is in flight
			}
			// Created before a crash, or not: adopt what the engine has.
			nj := *j
			nj.SessionID = ""
			if s := byJob[j.ID]; s != nil {
				nj.SessionID = string(s.ID)
				if codec.JobIsFinished(j.State) && !s.Status.Terminal() {
					stop = append(stop, string(s.ID)) // cancelled while it was being created
				}
				apply = append(apply, s.Event())
			} else if codec.JobIsFinished(j.State) {
				nj.State &^= codec.JOB_COMPLETING
			}
			c.swap(e, &nj, c.opt.Store.Put(&nj) == nil)
			continue
		}
		sid := translate.SessionID(j.SessionID)
		claimed[sid] = true
		s := known[sid]
		if at, ok := c.createdAt[j.SessionID]; s == nil && ok && !at.Before(listed) {
			continue // created after the list was taken
		}
		switch {
		case s == nil && codec.JobIsFinished(j.State):
			// Cancelled (completing) and the engine has no session: it
			// never started one, or forgot it; the job is done.
			if j.State&codec.JOB_COMPLETING != 0 {
				nj := *j
				nj.State &^= codec.JOB_COMPLETING
				c.swap(e, &nj, c.opt.Store.Put(&nj) == nil)
			}
		case s == nil && j.Origin != "":
			// Made outside the frontend and no longer live: its end is
			// asked for; one the engine forgot simply ended.
			if getter != nil {
				missing = append(missing, missed{j.ID, sid})
			} else {
				apply = append(apply, translate.SessionEvent{ID: sid, JobID: j.ID, Status: translate.SessionTerminated, ExitUnknown: true, Time: time.Now()})
			}
		case s == nil && codec.JobIsPending(j.State):
			// Handed over, but the engine never recorded it (the create
			// did not complete): hand it over again.
			nj := *j
			nj.SessionID = ""
			c.swap(e, &nj, c.opt.Store.Put(&nj) == nil)
		case s == nil && getter != nil:
			missing = append(missing, missed{j.ID, sid}) // asked for below, before it is called lost
		case s == nil:
			// Running, and the engine lost its session: as slurmctld
			// fails a job whose node stopped answering.
			apply = append(apply, lostEvent(c, j.ID, sid))
		case codec.JobIsFinished(j.State) && j.State&codec.JOB_COMPLETING != 0 && !s.Status.Terminal():
			// Cancelled, but the end did not reach the engine (it was
			// down, or the server died): end it again.
			stop = append(stop, string(sid))
		case s.Status.Terminal() && !codec.JobIsFinished(j.State),
			s.Status.Terminal() && j.State&codec.JOB_COMPLETING != 0,
			s.Status == translate.SessionRunning && codec.JobIsPending(j.State),
			s.Status == translate.SessionPending && s.Reason == translate.ReasonPreempted && codec.JobIsRunning(j.State):
			apply = append(apply, s.Event()) // a missed start, end or requeue
		}
	}
	c.rebuild(now)
	c.mu.Unlock()
	// Sessions no job knows that still run: a create whose answer never
	// reached us (the job was handed over again since, or cancelled).
	// They would run a job twice. Ended sessions are the engine's to
	// keep or purge.
	for i := range sessions {
		s := &sessions[i]
		if !claimed[s.ID] && !s.Status.Terminal() && s.JobID != 0 {
			c.logf("resync: session %s (job %d) belongs to no job: ending it", s.ID, s.JobID)
			stop = append(stop, string(s.ID))
		}
	}
	for _, m := range missing {
		gctx, cancel := context.WithTimeout(ctx, engineTimeout)
		in, err := getter.Session(gctx, m.sid)
		cancel()
		switch {
		case errors.Is(err, translate.ErrNoSession) && c.isForeign(m.job):
			apply = append(apply, translate.SessionEvent{ID: m.sid, JobID: m.job, Status: translate.SessionTerminated, ExitUnknown: true, Time: time.Now()})
		case errors.Is(err, translate.ErrNoSession):
			apply = append(apply, lostEvent(c, m.job, m.sid))
		case err != nil:
			c.logf("resync: job %d: session %s: %v (tried again in %v)", m.job, m.sid, err, resyncEvery)
		default:
			in.JobID = m.job
			apply = append(apply, in.Event())
		}
	}
	for _, ev := range apply {
		c.applyEvent(ev)
	}
	if len(apply) > 0 {
		// Published now, not coalesced (rebuildSoon): after a restart
		// the first listing must already show what the engine said,
		// not the jobs as the last run left them.
		c.mu.Lock()
		c.rebuild(time.Now().Unix())
		c.mu.Unlock()
	}
	if len(stop) > 0 {
		c.logf("resync: ending %d sessions of cancelled or forgotten jobs", len(stop))
		c.destroySessions(stop, false)
	}
	return true
}
