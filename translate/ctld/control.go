package ctld

import (
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
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

// kill handles REQUEST_KILL_JOB (scancel ID). A pending job is cancelled
// at once; a finished one answers ESLURM_ALREADY_DONE.
func (c *Controller) kill(req *Request) Reply {
	var k codec.KillJobRequest
	r := codec.NewReader(req.Body)
	if err := k.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	id, ok := parseJobID(k.SJobID)
	if !ok {
		id = k.StepID.JobID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.jobIndex[id]
	if e == nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	if !c.mayControl(req.UID, e.job) {
		c.logf("uid %d may not cancel job %d of uid %d", req.UID, id, e.job.UserID)
		return rcReply(codec.ESLURM_ACCESS_DENIED)
	}
	if codec.JobIsFinished(e.job.State) {
		return rcReply(codec.ESLURM_ALREADY_DONE)
	}
	if !codec.JobIsPending(e.job.State) {
		// Running jobs are the engine's; that lands with job execution.
		return rcReply(codec.ESLURM_NOT_SUPPORTED)
	}
	j := *e.job
	now := time.Now().Unix()
	j.State, j.Reason, j.EndTime, j.StartTime = codec.JOB_CANCELLED, codec.WAIT_NO_REASON, now, now
	if err := c.opt.Store.Put(&j); err != nil {
		return rcReply(codec.ESLURM_INTERNAL)
	}
	c.replace(e, &j)
	c.counters.canceled.Add(1)
	c.rebuild(now)
	return rcReply(codec.SLURM_SUCCESS)
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
