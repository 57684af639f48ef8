package ctld

import (
	"context"
	"net/netip"
	"os/user"
	"strconv"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// Interactive allocations: salloc, and srun outside a job. The job is a
// session like a batch job's, whose "script" only holds the allocation
// (it waits until the session is ended); its steps run in it (steps.go).
// It ends when its client relinquishes it (REQUEST_COMPLETE_JOB_ALLOCATION),
// with the client's status, or as any job ends (scancel, time limit).

// originAlloc marks an interactive allocation's job (state.Job.Origin).
const originAlloc = "alloc"

// allocScript holds an allocation's session until it is ended; it runs
// as the user, like a batch script, and prints nothing.
const allocScript = "#!/bin/sh\n# slurm-frontend: an interactive allocation (salloc/srun); its steps run in this session\nexec sleep 2147483647\n"

// allocGrantWait is how long an allocation request waits for its session
// to run before it is answered "pending" (the grant then goes to the
// client's alloc_resp_port): well inside the client's MessageTimeout.
var allocGrantWait = 5 * time.Second

// Caller sends a message to a client's listening port (salloc's and
// srun's): the grant of a pending allocation, SRUN_* notices, a node's
// answers to srun. reply says whether a RESPONSE_SLURM_RC is awaited
// (its code is returned). The edge implements it: it signs as the server
// for the client's uid.
type Caller interface {
	Call(ctx context.Context, to netip.AddrPort, version, msgType uint16, body []byte, forUID uint32, reply bool) (uint32, error)
}

// checkAllocation validates an allocation request as a submission, with
// what an allocation adds. Its session is the holding script, with no
// output and the environment a batch job would get (salloc sends none:
// it runs its command on the login node).
func (c *Controller) checkAllocation(req *Request, d *codec.JobDesc, assumeJobs bool) (*state.Job, *state.Script, error) {
	if c.opt.Exec == nil {
		return nil, nil, codec.Errorf(codec.ESLURM_NOT_SUPPORTED, "no engine runs jobs here")
	}
	d.Script = allocScript
	if len(d.Environment) == 0 {
		d.Environment = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	}
	d.StdOut, d.StdErr, d.StdIn = "/dev/null", "/dev/null", "/dev/null"
	if d.WorkDir == "" {
		d.WorkDir = "/"
	}
	job, sc, err := c.translateJobDescFor(req, d, assumeJobs)
	if err != nil {
		return nil, nil, err
	}
	if job.ArrayTasks != "" {
		// salloc --array is not a thing
		return nil, nil, codec.Errorf(codec.ESLURM_INVALID_ARRAY, "no array of allocations")
	}
	return job, sc, nil
}

// allocate handles REQUEST_RESOURCE_ALLOCATION.
func (c *Controller) allocate(req *Request) Reply {
	var d codec.JobDesc
	r := codec.NewReader(req.Body)
	if err := d.Decode(&r, req.Version); err != nil {
		c.logf("allocation from uid %d: undecodable job description: %v", req.UID, err)
		return rcReply(codec.CodeOf(err))
	}
	job, sc, err := c.checkAllocation(req, &d, false)
	if err != nil {
		c.logf("allocation for uid %d refused: %v", req.UID, err)
		return refusal(err, req.Version)
	}
	job.Origin, job.AllocPort, job.OtherPort = originAlloc, d.AllocRespPort, d.OtherPort
	if req.Peer.IsValid() {
		job.RespHost = req.Peer.String()
	}
	job.Command = ""
	if len(d.Argv) > 0 {
		job.Command = d.Argv[0]
	}
	granted := make(chan struct{})
	c.mu.Lock()
	jobs, err := c.opt.Store.Submit(1, sc, func(id uint32) ([]*state.Job, error) {
		j := *job
		j.ID = id
		if j.Priority != 0 {
			j.Priority = c.setJobPrio(&j, j.SubmitTime)
		}
		return []*state.Job{&j}, nil
	})
	if err != nil {
		c.mu.Unlock()
		c.logf("allocation: %v", err)
		return rcReply(storeWriteCode(err))
	}
	j := jobs[0]
	c.addJob(newEntry(j, c.opt.Store, true))
	if c.grants == nil {
		c.grants = map[uint32]chan struct{}{}
	}
	c.grants[j.ID] = granted
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	c.counters.submitted.Add(1)
	c.wake()

	wait := allocGrantWait
	if d.Immediate != 0 && d.Immediate != codec.NoVal16 {
		wait = min(wait, time.Duration(d.Immediate)*time.Second)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-granted:
	case <-t.C:
	}
	c.mu.Lock()
	e := c.entry(j.ID)
	var cur state.Job
	if e != nil {
		cur = *e.job()
	}
	running := e != nil && codec.JobIsRunning(cur.State)
	if running || d.Immediate == 0 || d.Immediate == codec.NoVal16 {
		// Answered now with the grant, or "pending": the grant is then
		// pushed to the client when the session runs (grantLater).
		if !running {
			c.pendingGrants[j.ID] = req.Version
		}
		delete(c.grants, j.ID)
		if running {
			c.markActive(j.ID, time.Now())
		}
		c.mu.Unlock()
		if running {
			c.logf("job %d: allocation granted to uid %d on %s", j.ID, cur.UserID, cur.Nodes)
		} else {
			c.logf("job %d: allocation for uid %d pending", j.ID, cur.UserID)
		}
		return c.allocationReply(codec.RESPONSE_RESOURCE_ALLOCATION, &cur, req.Version)
	}
	delete(c.grants, j.ID)
	c.mu.Unlock()
	// -I: not now, so not at all. As slurmctld: the job FAILED
	// (BadConstraints, exit code 1), the client told the nodes are busy.
	c.endAllocation(j.ID, 1, codec.JOB_FAILED, codec.FAIL_BAD_CONSTRAINTS)
	return rcReply(codec.ESLURM_NODES_BUSY)
}

// allocation is a job's resource_allocation_response as the clients use
// it: node list, CPUs per node, memory, the job's identity.
func (c *Controller) allocation(j *state.Job) codec.ResourceAllocation {
	a := codec.ResourceAllocation{
		Account: j.Account, JobID: j.ID, Partition: j.Partition, QOS: j.QOS,
		UID: j.UserID, GID: j.GroupID, UserName: j.UserName, GroupName: groupName(j.GroupID),
		NtasksPerBoard: codec.NoVal16, NtasksPerCore: codec.NoVal16, NtasksPerTres: codec.NoVal16, NtasksPerSocket: codec.NoVal16,
		TresPerNode: j.TresPerNode, SelectPluginID: selectConsTres,
		// 25.11+ name the job by a step id of no step (srun takes a
		// step id other than NO_VAL as the one to ask for).
		StepID: codec.NoVal, StepHetComp: codec.NoVal,
	}
	if j.MemPerCPUMB > 0 {
		a.PnMinMemory = j.MemPerCPUMB | memPerCPUFlag
	} else {
		a.PnMinMemory = j.MemPerNodeMB
	}
	if !codec.JobIsRunning(j.State) || j.Nodes == "" {
		return a // pending: node_cnt 0
	}
	nodes := expandNodes(j.Nodes)
	a.NodeList, a.NodeCnt, a.BatchHost = j.Nodes, uint32(len(nodes)), j.BatchHost
	a.CPUsPerNode, a.CPUCountReps = cpuGroups(j, uint32(len(nodes)))
	return a
}

// slurm.h: the MEM_PER_CPU bit of pn_min_memory; select/cons_tres's
// plugin id (22.05 select_jobinfo).
const (
	memPerCPUFlag  = 0x8000000000000000
	selectConsTres = 109
)

// cpuGroups is the CPUs the job holds on each of its n nodes, as
// slurmctld's cpu groups (value, repetitions): the job's CPUs spread
// evenly, the first nodes taking the remainder.
func cpuGroups(j *state.Job, n uint32) ([]uint16, []uint32) {
	if n == 0 {
		return nil, nil
	}
	cpus := max(j.MinCPUs, 1)
	base, extra := cpus/n, cpus%n
	if base == 0 {
		base, extra = 1, 0
	}
	if extra == 0 {
		return []uint16{uint16(base)}, []uint32{n}
	}
	return []uint16{uint16(base + 1), uint16(base)}, []uint32{extra, n - extra}
}

func groupName(gid uint32) string {
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10)); err == nil {
		return g.Name
	}
	return strconv.FormatUint(uint64(gid), 10)
}

func (c *Controller) allocationReply(msgType uint16, j *state.Job, v uint16) Reply {
	a := c.allocation(j)
	var w codec.Writer
	a.Encode(&w, v)
	return Reply{MsgType: msgType, Body: w.B}
}

// grantLater pushes the grant of a pending allocation to its client's
// alloc_resp_port once its session runs (c.mu held: the push is sent
// from a goroutine).
func (c *Controller) grantLater(j *state.Job) {
	if ch := c.grants[j.ID]; ch != nil {
		close(ch) // the request is still waiting: it answers itself
		delete(c.grants, j.ID)
		return
	}
	v, ok := c.pendingGrants[j.ID]
	if !ok {
		return
	}
	delete(c.pendingGrants, j.ID)
	c.markActive(j.ID, time.Now())
	to, ok := clientAddr(j.RespHost, j.AllocPort)
	if !ok || c.opt.Caller == nil {
		return
	}
	a := c.allocation(j)
	var w codec.Writer
	a.Encode(&w, v)
	uid, id := j.UserID, j.ID
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.opt.Caller.Call(ctx, to, v, codec.RESPONSE_RESOURCE_ALLOCATION, w.B, uid, true); err != nil {
			c.logf("job %d: the grant could not reach its client at %v: %v", id, to, err)
		}
	}()
}

// clientAddr is host:port of a client listener ("" or 0: none).
func clientAddr(host string, port uint16) (netip.AddrPort, bool) {
	if host == "" || port == 0 {
		return netip.AddrPort{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, port), true
}

// allocEnded tells an allocation's client its job ended otherwise than by
// its own hand (scancel, time limit, node failure): SRUN_JOB_COMPLETE for
// the whole job to its other_port, as slurmctld's srun_job_complete, and
// to the alloc_resp_port of one still waiting for its grant (c.mu held).
func (c *Controller) allocEnded(j *state.Job) {
	if j.Origin != originAlloc || c.opt.Caller == nil {
		return
	}
	v := j.ProtoVersion
	var targets []netip.AddrPort
	if to, ok := clientAddr(j.RespHost, j.OtherPort); ok {
		targets = append(targets, to)
	}
	if _, waiting := c.pendingGrants[j.ID]; waiting {
		delete(c.pendingGrants, j.ID)
		if to, ok := clientAddr(j.RespHost, j.AllocPort); ok {
			targets = append(targets, to)
		}
	}
	if len(targets) == 0 {
		return
	}
	m := codec.SrunStepMsg{StepID: codec.JobStepID{JobID: j.ID, StepID: codec.NoVal, StepHetComp: codec.NoVal}}
	var w codec.Writer
	m.Encode(&w, v)
	uid := j.UserID
	go func() {
		for _, to := range targets {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = c.opt.Caller.Call(ctx, to, v, codec.SRUN_JOB_COMPLETE, w.B, uid, false)
			cancel()
		}
	}()
}

// jobReady handles REQUEST_JOB_READY: READY_NODE|JOB|PROLOG (7) once the
// job runs; 0 while it waits; the job's end is "revoked" (0) too.
func (c *Controller) jobReady(req *Request) Reply {
	var m codec.JobReadyRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	c.mu.Lock() // the record, not the snapshot: a start is published a moment later
	e := c.entry(m.JobID)
	var st uint32
	if e != nil {
		st = e.job().State
	}
	c.mu.Unlock()
	if e == nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	var rc uint32
	if codec.JobIsRunning(st) {
		rc = codec.ReadyNodeState | codec.ReadyJobState | codec.ReadyPrologState
	}
	return Reply{MsgType: codec.RESPONSE_JOB_READY, Body: []byte{byte(rc >> 24), byte(rc >> 16), byte(rc >> 8), byte(rc)}}
}

// allocInfo handles REQUEST_JOB_ALLOCATION_INFO (salloc after a pending
// wait) and REQUEST_HET_JOB_ALLOC_INFO (srun inside a job: a list of one).
func (c *Controller) allocInfo(req *Request) Reply {
	var m codec.JobAllocInfoRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	j, rc := c.controlledJob(req.UID, m.JobID)
	switch {
	case rc != 0:
		return rcReply(rc)
	case codec.JobIsPending(j.State):
		return rcReply(codec.ESLURM_JOB_PENDING)
	case !codec.JobIsRunning(j.State):
		return rcReply(codec.ESLURM_ALREADY_DONE)
	}
	if req.MsgType == codec.REQUEST_JOB_ALLOCATION_INFO {
		return c.allocationReply(codec.RESPONSE_JOB_ALLOCATION_INFO, &j, req.Version)
	}
	h := codec.HetJobAllocation{c.allocation(&j)}
	var w codec.Writer
	h.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_HET_JOB_ALLOCATION, Body: w.B}
}

// completeAlloc handles REQUEST_COMPLETE_JOB_ALLOCATION: salloc's command
// (or srun's tasks) ended with job_rc (a raw wait status; NO_VAL when it
// was cancelled): the job ends with that status and its session is ended.
func (c *Controller) completeAlloc(req *Request) Reply {
	var m codec.CompleteJobAllocation
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	j, rc := c.controlledJob(req.UID, m.JobID)
	switch {
	case rc != 0:
		return rcReply(rc)
	case codec.JobIsFinished(j.State):
		return rcReply(codec.ESLURM_ALREADY_DONE)
	}
	st := uint32(codec.JOB_COMPLETE)
	switch {
	case m.JobRC == codec.NoVal || m.JobRC == codec.Infinite:
		st = codec.JOB_CANCELLED
	case m.JobRC != 0:
		st = codec.JOB_FAILED
	}
	c.endAllocation(m.JobID, m.JobRC, st, 0)
	return rcReply(codec.SLURM_SUCCESS)
}

// endAllocation ends job id with state st and raw status rc (NO_VAL:
// none) and ends its session: the session's end then only finishes it
// (applyEvent keeps what is recorded here). reason 0: from the status.
func (c *Controller) endAllocation(id, rc, st, reason uint32) {
	c.mu.Lock()
	e := c.entry(id)
	if e == nil || codec.JobIsFinished(e.job().State) {
		c.mu.Unlock()
		return
	}
	j := *e.job()
	now := time.Now().Unix()
	sid := j.SessionID
	j.State, j.EndTime, j.Reason = st, now, codec.WAIT_NO_REASON
	if j.StartTime == 0 {
		j.StartTime = now
	}
	if rc != codec.NoVal && rc != codec.Infinite {
		j.ExitCode = rc & 0xffff
		if st == codec.JOB_FAILED {
			j.Reason = codec.FAIL_EXIT_CODE
			if rc&0x7f != 0 {
				j.Reason = codec.FAIL_SIGNAL
			}
		}
	}
	if reason != 0 {
		j.Reason = reason
	}
	if sid != "" {
		j.State |= codec.JOB_COMPLETING
	}
	delete(c.pendingGrants, id)
	if sid != "" {
		c.relinquished[id] = true
	}
	c.swap(e, &j, c.opt.Store.Put(&j) == nil)
	c.endSteps(id)
	c.rebuild(now)
	c.mu.Unlock()
	switch st {
	case codec.JOB_CANCELLED:
		c.counters.canceled.Add(1)
	case codec.JOB_FAILED:
		c.counters.failed.Add(1)
	default:
		c.counters.completed.Add(1)
	}
	if sid != "" && sid != sessionCreating {
		c.destroy(id, sid, false)
	}
	c.wake()
}

// controlledJob is a copy of job id for a request of uid: rc is
// ESLURM_INVALID_JOB_ID for no such job, ESLURM_ACCESS_DENIED for one
// uid may not act on, else 0.
func (c *Controller) controlledJob(uid, id uint32) (state.Job, uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(id)
	if e == nil {
		return state.Job{}, codec.ESLURM_INVALID_JOB_ID
	}
	j := *e.job()
	if !c.mayControl(uid, &j) {
		return j, codec.ESLURM_ACCESS_DENIED
	}
	return j, 0
}
