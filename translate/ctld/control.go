package ctld

import (
	"context"
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
	id, tasks, err := parseJobSpec(k.SJobID, k.StepID.JobID)
	if err != nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	c.mu.Lock()
	targets := c.jobsFor(id, tasks)
	if len(targets) == 0 {
		c.mu.Unlock()
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	for _, e := range targets {
		if !c.mayControl(req.UID, e.job) {
			c.mu.Unlock()
			c.logf("uid %d may not signal job %d of uid %d", req.UID, e.job.ID, e.job.UserID)
			return rcReply(codec.ESLURM_ACCESS_DENIED)
		}
	}
	sig := int(k.Signal)
	if sig == 0 {
		sig = 9
	}
	now := time.Now().Unix()
	var toKill, toSignal []*state.Job
	alive := 0
	changed := false
	for _, e := range targets {
		j := *e.job
		if codec.JobIsFinished(j.State) {
			continue
		}
		alive++
		if sig != 9 && sig != 15 || k.Flags&codec.KillJobBatch != 0 {
			// A signal that does not end the job goes to running jobs
			// only; slurmctld refuses it for pending ones.
			if codec.JobIsPending(j.State) {
				continue
			}
			toSignal = append(toSignal, e.job)
			continue
		}
		if codec.JobIsPending(j.State) && j.SessionID == "" {
			j.State, j.Reason, j.EndTime, j.StartTime = codec.JOB_CANCELLED, codec.WAIT_NO_REASON, now, now
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
						j = *e.job
						j.ArrayTasks = rest.String()
					}
				}
			}
			if err := c.opt.Store.Put(&j); err != nil {
				c.mu.Unlock()
				return rcReply(codec.ESLURM_INTERNAL)
			}
			c.replace(e, &j)
			c.counters.canceled.Add(1)
			changed = true
			continue
		}
		// Handed to the engine: mark it cancelled (and completing) now,
		// as slurmctld does; the engine's event finishes it.
		j.State = codec.JOB_CANCELLED | codec.JOB_COMPLETING
		j.EndTime = now
		if err := c.opt.Store.Put(&j); err == nil {
			c.replace(e, &j)
			changed = true
		}
		toKill = append(toKill, &j)
	}
	if changed {
		c.rebuild(now)
	}
	c.mu.Unlock()
	if alive == 0 {
		return rcReply(codec.ESLURM_ALREADY_DONE)
	}
	if sig != 9 && sig != 15 && len(toSignal) == 0 {
		return rcReply(codec.ESLURM_JOB_PENDING)
	}
	ctx := context.Background()
	for _, j := range toKill {
		if c.opt.Exec == nil {
			continue
		}
		if err := c.opt.Exec.DestroySession(ctx, translate.SessionID(j.SessionID), sig == 9); err != nil {
			c.logf("job %d: destroy session: %v", j.ID, err)
		}
	}
	for _, j := range toSignal {
		if c.opt.Exec == nil {
			return rcReply(codec.ESLURM_NOT_SUPPORTED)
		}
		if err := c.opt.Exec.SignalSession(ctx, translate.SessionID(j.SessionID), sig, k.Flags&codec.KillJobBatch != 0); err != nil {
			c.logf("job %d: signal %d: %v", j.ID, sig, err)
			return rcReply(codec.CodeOf(err))
		}
	}
	c.wake()
	return rcReply(codec.SLURM_SUCCESS)
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
		j := e.job
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

// update handles REQUEST_UPDATE_JOB for hold, uhold and release (what
// scontrol sends for them); other changes come with the batch issue.
func (c *Controller) update(req *Request) Reply {
	var d codec.JobDesc
	r := codec.NewReader(req.Body)
	if err := d.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	id, ok := parseJobID(d.JobIDStr)
	if !ok {
		id = d.StepID.JobID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.jobIndex[id]
	if e == nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	if !c.mayControl(req.UID, e.job) {
		return rcReply(codec.ESLURM_ACCESS_DENIED)
	}
	j := *e.job
	switch {
	case d.Priority == 0:
		if !codec.JobIsPending(j.State) {
			return rcReply(codec.ESLURM_JOB_NOT_PENDING)
		}
		// As slurmctld: a user hold unless an operator asks for an
		// admin hold (scontrol hold; uhold sends alloc_sid 2).
		j.Priority = 0
		if !c.isOperator(req.UID) || d.AllocSID == codec.AllocSIDUserHold {
			j.HeldBy, j.Reason = 2, codec.WAIT_HELD_USER
		} else {
			j.HeldBy, j.Reason = 1, codec.WAIT_HELD
		}
	case d.Priority == codec.Infinite:
		if !codec.JobIsPending(j.State) {
			return rcReply(codec.ESLURM_JOB_NOT_PENDING)
		}
		if j.Priority == 0 && j.Reason != codec.WAIT_HELD_USER && !c.isOperator(req.UID) {
			return rcReply(codec.ESLURM_ACCESS_DENIED)
		}
		j.Priority, j.HeldBy, j.Reason = 1, 0, codec.WAIT_PRIORITY
	default:
		return rcReply(codec.ESLURM_NOT_SUPPORTED)
	}
	if err := c.opt.Store.Put(&j); err != nil {
		return rcReply(codec.ESLURM_INTERNAL)
	}
	c.replace(e, &j)
	c.rebuild(time.Now().Unix())
	c.wake()
	return Reply{MsgType: codec.RESPONSE_SLURM_RC, Body: []byte{0, 0, 0, 0}}
}

// replace swaps a job's entry for a new one (old snapshots keep theirs).
func (c *Controller) replace(old *jobEntry, j *state.Job) {
	ne := &jobEntry{job: j}
	for i, e := range c.jobs {
		if e == old {
			c.jobs[i] = ne
			break
		}
	}
	c.jobIndex[j.ID] = ne
}
