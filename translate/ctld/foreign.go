package ctld

import (
	"os/user"
	"strconv"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
)

// Sessions made outside the frontend. Backend.AI is the truth about what
// runs: a session a user starts in its console (or through its API) on
// the cluster's resource groups takes agents as our jobs do, so Slurm's
// tools show it, as slurmctld shows every job on its nodes. It becomes a
// job of its owner's Unix user (same name), in the partition of its
// resource group, with a job id of ours; the engine's events and the
// resync move it to its end. It has no batch script: it cannot be
// requeued or changed, only cancelled (the session is destroyed).

// originEngine marks a job that shows a session made outside the frontend.
const originEngine = "engine"

// foreignGap bounds how often a foreign session's event has the
// controller list the engine's sessions before the periodic resync.
const foreignGap = 3 * time.Second

// isForeign reports whether job id shows a session made outside (c.mu
// held).
func (c *Controller) isForeign(id uint32) bool {
	e := c.entry(id)
	return e != nil && e.job().Origin != ""
}

// foreignEvent notes an event of a session the frontend did not create:
// the dispatcher resyncs soon (Start).
func (c *Controller) foreignEvent() {
	c.foreignDue.Store(true)
	c.wake()
}

// adoptForeign gives the foreign sessions of a listing the job ids of the
// jobs that show them, and makes jobs of the live ones not shown yet
// (c.mu held).
func (c *Controller) adoptForeign(sessions []translate.SessionInfo) {
	var bySession map[translate.SessionID]uint32
	for i := range sessions {
		s := &sessions[i]
		if s.Foreign == nil {
			continue
		}
		if bySession == nil {
			bySession = map[translate.SessionID]uint32{}
			for _, e := range c.jobs {
				if e.hot != nil && e.hot.Origin != "" && e.hot.SessionID != "" {
					bySession[translate.SessionID(e.hot.SessionID)] = e.id
				}
			}
		}
		if id, ok := bySession[s.ID]; ok {
			s.JobID = id
			continue
		}
		if s.Status.Terminal() {
			continue // ended before we saw it
		}
		j, why := c.foreignJob(s)
		if j == nil {
			if !c.foreignSkipped[s.ID] {
				c.foreignSkipped[s.ID] = true
				c.logf("session %s (%q of %s) made outside the frontend is not shown: %s", s.ID, s.Foreign.Name, s.Foreign.User, why)
			}
			continue
		}
		jobs, err := c.opt.Store.Submit(1, nil, func(id uint32) ([]*state.Job, error) {
			nj := *j
			nj.ID = id
			return []*state.Job{&nj}, nil
		})
		if err != nil {
			c.storeTrouble("session %s made outside the frontend: not shown yet: %v", s.ID, err)
			continue
		}
		c.addJob(newEntry(jobs[0], c.opt.Store, true))
		s.JobID = jobs[0].ID
		c.logf("job %d: session %s (%q of %s) made outside the frontend, %s", s.JobID, s.ID, s.Foreign.Name, s.Foreign.User, codec.JobStateString(jobs[0].State))
	}
}

// foreignJob is the job record of foreign session s (without its id), or
// nil and why it cannot be shown.
func (c *Controller) foreignJob(s *translate.SessionInfo) (*state.Job, string) {
	f := s.Foreign
	u, err := user.Lookup(f.User)
	if err != nil {
		return nil, "its owner " + f.User + " is no user here"
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	var part string
	for _, p := range c.cluster().parts {
		if p.ResourceGroup == f.ResourceGroup || (p.ResourceGroup == "" && p.Name == f.ResourceGroup) {
			part = p.Name
			break
		}
	}
	if part == "" {
		return nil, "no partition is its resource group " + f.ResourceGroup
	}
	created := f.Created.Unix()
	if f.Created.IsZero() {
		created = time.Now().Unix()
	}
	cpus := max(f.CPUs, 1)
	nodes := uint32(max(len(s.Nodes), 1))
	j := &state.Job{
		Name: f.Name, UserID: uint32(uid), GroupID: uint32(gid), UserName: f.User,
		Partition: part, Account: f.Project, Container: f.Image, WorkDir: "/",
		Comment:     "Backend.AI session " + string(s.ID),
		ArrayTaskID: codec.NoVal, SubmitTime: created, EligibleTime: created, AccrueTime: created,
		TimeLimit: codec.Infinite, State: codec.JOB_PENDING, Reason: codec.WAIT_RESOURCES, Priority: 1,
		MinNodes: nodes, MaxNodes: nodes, NumTasks: 1, CPUsPerTask: 1, MinCPUs: cpus,
		MemPerNodeMB: f.MemMB, TresPerNode: f.GPUs, SessionID: string(s.ID), Origin: originEngine,
	}
	if s.Status == translate.SessionRunning {
		j.State, j.Reason = codec.JOB_RUNNING, codec.WAIT_NO_REASON
		j.StartTime = s.Started.Unix()
		if s.Started.IsZero() {
			j.StartTime = time.Now().Unix()
		}
		j.Nodes = compressNodes(s.Nodes)
		if len(s.Nodes) > 0 {
			j.BatchHost = s.Nodes[0]
		}
	}
	return j, ""
}
