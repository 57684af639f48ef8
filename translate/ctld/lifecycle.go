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

// The job lifecycle. The controller decides eligibility (holds,
// dependencies, begin time, array throttles) — what Slurm users expect and
// the engine may not model — and hands eligible jobs to the engine as
// sessions. The engine decides when they start, and its events move the
// jobs through Slurm's states.

// Start runs the dispatcher and the event consumer until ctx ends. It
// first reconciles jobs the engine already knows (after a restart).
func (c *Controller) Start(ctx context.Context) {
	if c.opt.Exec == nil {
		return
	}
	c.reconcile(ctx)
	go c.consumeEvents(ctx)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			c.dispatch(ctx)
			select {
			case <-ctx.Done():
				return
			case <-c.kick:
			case <-t.C:
			}
		}
	}()
}

// wake asks the dispatcher for a pass.
func (c *Controller) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// sessionCreating marks a job whose session is being created.
const sessionCreating = "creating"

// reconcile matches jobs that were handed to the engine with the
// sessions it reports, so a restart neither loses nor doubles a job.
func (c *Controller) reconcile(ctx context.Context) {
	sessions, err := c.opt.Exec.Sessions(ctx)
	if err != nil {
		c.logf("reconcile: %v", err)
		return
	}
	known := map[translate.SessionID]translate.SessionInfo{}
	byJob := map[uint32]translate.SessionInfo{}
	for _, s := range sessions {
		known[s.ID] = s
		byJob[s.JobID] = s // the engine lists sessions oldest first
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().Unix()
	for _, e := range c.jobs {
		if e.hot == nil { // cold: no session, or finished
			continue
		}
		j := e.hot
		if j.SessionID == "" || codec.JobIsFinished(j.State) {
			continue
		}
		if j.SessionID == sessionCreating {
			nj := *j
			nj.SessionID = ""
			if s, ok := byJob[j.ID]; ok {
				nj.SessionID = string(s.ID) // created before the crash
			}
			if err := c.opt.Store.Put(&nj); err == nil {
				c.replace(e, &nj)
			}
			continue
		}
		if _, ok := known[translate.SessionID(j.SessionID)]; !ok {
			// Handed over but the engine never recorded it: the
			// create did not complete, so hand it over again.
			nj := *j
			nj.SessionID = ""
			if err := c.opt.Store.Put(&nj); err == nil {
				c.replace(e, &nj)
			}
		}
	}
	c.rebuild(now)
}

// eligible reports whether a pending job may be handed to the engine now,
// and otherwise the reason it waits.
func (c *Controller) eligible(j *state.Job, now int64) (bool, uint32) {
	switch {
	case j.Priority == 0:
		return false, j.Reason
	case j.BeginTime > now:
		return false, codec.WAIT_TIME
	}
	if j.Dependency != "" {
		ok, never := c.depsSatisfied(j)
		if never {
			return false, codec.WAIT_DEP_INVALID
		}
		if !ok {
			return false, codec.WAIT_DEPENDENCY
		}
	}
	return true, codec.WAIT_PRIORITY
}

// dispatch hands every eligible pending job (and array task) to the
// engine, in priority then submission order.
func (c *Controller) dispatch(ctx context.Context) {
	c.mu.Lock()
	now := time.Now().Unix()
	type work struct {
		e    *jobEntry
		task uint32
	}
	var todo []work
	changed := false
	for _, e := range c.jobs {
		if e.hot == nil {
			// Cold: finished, or held with nothing to enforce (a held
			// job keeps its reason; see eligible).
			continue
		}
		j := e.hot
		if !codec.JobIsPending(j.State) || j.SessionID != "" {
			continue
		}
		if j.Deadline > 0 && now >= j.Deadline {
			// --deadline passed before the job could start.
			nj := *j
			nj.State, nj.Reason, nj.EndTime, nj.StartTime = codec.JOB_DEADLINE, codec.FAIL_DEADLINE, now, now
			if c.opt.Store.Put(&nj) == nil {
				c.replace(e, &nj)
				changed = true
				c.notify(&nj, mailFail)
			}
			continue
		}
		ok, reason := c.eligible(j, now)
		if !ok {
			if reason != j.Reason {
				nj := *j
				nj.Reason = reason
				if reason == codec.WAIT_DEP_INVALID && j.KillInvalidDep {
					nj.State, nj.EndTime = codec.JOB_CANCELLED, now
				}
				if c.opt.Store.Put(&nj) == nil {
					c.replace(e, &nj)
					changed = true
				}
			}
			continue
		}
		if j.Dependency != "" {
			// Satisfied dependencies are cleared, as slurmctld does
			// (scontrol then shows Dependency=(null)).
			nj := *j
			nj.Dependency = ""
			if c.opt.Store.Put(&nj) == nil {
				c.replace(e, &nj)
				e, j, changed = c.entry(nj.ID), &nj, true
			}
		}
		if j.ArrayTasks != "" && j.ArrayTaskID == codec.NoVal {
			a, err := parseArray(j.ArrayTasks, maxArrayIndex)
			if err != nil {
				continue
			}
			running := c.activeTasks(j.ArrayJobID)
			throttled := false
			for _, t := range a.tasks {
				if a.limit > 0 && running >= int(a.limit) {
					throttled = true
					break
				}
				todo = append(todo, work{e, t})
				running++
			}
			if want := map[bool]uint32{true: codec.WAIT_ARRAY_TASK_LIMIT, false: codec.WAIT_PRIORITY}[throttled]; j.Reason != want {
				nj := *j
				nj.Reason = want
				if c.opt.Store.Put(&nj) == nil {
					c.replace(e, &nj)
					changed = true
				}
			}
			continue
		}
		todo = append(todo, work{e, codec.NoVal})
	}
	if c.purgeFinished(now) {
		changed = true
	}
	if changed {
		c.rebuild(now)
	}
	c.mu.Unlock()
	for _, w := range todo {
		c.handOver(ctx, w.e, w.task)
	}
}

// maxArrayIndex bounds array indexes (MaxArraySize).
const maxArrayIndex = 1000001

// activeTasks counts an array's tasks handed to the engine and not done.
func (c *Controller) activeTasks(arrayJobID uint32) int {
	n := 0
	for _, e := range c.jobs {
		if e.hot == nil || e.arrayJobID != arrayJobID { // cold ones have no session
			continue
		}
		j := e.hot
		if j.ArrayJobID == arrayJobID && j.ArrayTaskID != codec.NoVal && j.SessionID != "" && !codec.JobIsFinished(j.State) {
			n++
		}
	}
	return n
}

// handOver creates the session of a job, or of task t of a pending array
// (splitting a task record off the array's pending record first).
func (c *Controller) handOver(ctx context.Context, e *jobEntry, task uint32) {
	c.mu.Lock()
	cur := c.entry(e.id)
	// A cold entry (held or finished meanwhile) is never handed over.
	if cur == nil || cur.hot == nil || cur.hot.SessionID != "" || !codec.JobIsPending(cur.hot.State) {
		c.mu.Unlock()
		return
	}
	j := cur.hot
	var target *state.Job
	var tasks *arrayRange
	if task != codec.NoVal {
		a, err := parseArray(j.ArrayTasks, maxArrayIndex)
		if err != nil || !a.contains(task) {
			c.mu.Unlock()
			return
		}
		tasks = a
		rest := a.without(task)
		if rest.count() == 0 {
			// The last task takes over the array's own record.
			nj := *j
			nj.ArrayTaskID, nj.ArrayTasks = task, ""
			target = &nj
		} else {
			meta := *j
			meta.ArrayTasks = rest.String()
			jobs, err := c.opt.Store.Submit(1, nil, func(id uint32) ([]*state.Job, error) {
				t := *j
				t.ID, t.ArrayTaskID, t.ArrayTasks = id, task, ""
				return []*state.Job{&t, &meta}, nil
			})
			if err != nil {
				c.mu.Unlock()
				c.logf("split array task %d_%d: %v", j.ArrayJobID, task, err)
				return
			}
			te := newEntry(jobs[0], c.opt.Store, true)
			c.jobs = append(c.jobs, te)
			c.replace(cur, jobs[1])
			target = jobs[0]
		}
	} else {
		nj := *j
		target = &nj
	}
	if target.ArraySpec != "" {
		if a, err := parseArray(target.ArraySpec, maxArrayIndex); err == nil {
			tasks = a
		}
	}
	// Mark the hand-over before it happens: after a crash between the
	// engine's create and our write, reconcile adopts the session the
	// engine made instead of creating a second one (a job never runs
	// twice).
	target.SessionID = sessionCreating
	if err := c.opt.Store.Put(target); err != nil {
		c.mu.Unlock()
		c.logf("job %d: %v", target.ID, err)
		return
	}
	if ce := c.entry(target.ID); ce != nil {
		c.replace(ce, target)
	}
	sc, err := c.opt.Store.Script(scriptID(target))
	c.mu.Unlock()
	if err != nil {
		c.logf("job %d: no script: %v", target.ID, err)
		return
	}
	spec := c.sessionSpec(target, sc, tasks)
	id, err := c.opt.Exec.CreateSession(ctx, spec)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().Unix()
	if cur := c.entry(target.ID); cur != nil && cur.job().SessionID != sessionCreating {
		// Changed meanwhile (cancelled, held): take the session back.
		if err == nil {
			go c.opt.Exec.DestroySession(context.Background(), id, true)
		}
		return
	}
	if err != nil {
		c.logf("job %d: engine refused the session: %v", target.ID, err)
		target.State, target.Reason, target.EndTime, target.StartTime = codec.JOB_FAILED, codec.FAIL_LAUNCH, now, now
		target.ExitCode = 1 << 8
	} else {
		target.SessionID = string(id)
		target.Reason = codec.WAIT_RESOURCES
		if target.EligibleTime == 0 || target.EligibleTime > now {
			target.EligibleTime = now
		}
		target.AccrueTime = now
	}
	stored := true
	if err := c.opt.Store.Put(target); err != nil {
		c.logf("job %d: %v", target.ID, err)
		stored = false
	}
	if ce := c.entry(target.ID); ce != nil {
		c.swap(ce, target, stored)
	}
	c.rebuild(now)
}

// scriptID is the job whose submission stored the script: array tasks
// share their array's.
func scriptID(j *state.Job) uint32 {
	if j.ArrayJobID != 0 {
		return j.ArrayJobID
	}
	return j.ID
}

// sessionSpec translates a job into the session the engine runs.
func (c *Controller) sessionSpec(j *state.Job, sc *state.Script, tasks *arrayRange) translate.SessionSpec {
	if strings.Contains(j.Partition, ",") {
		if p := c.runPartition(j); p != nil {
			jj := *j
			jj.Partition = p.Name
			j = &jj
		}
	}
	cpusPerNode := (j.MinCPUs + j.MinNodes - 1) / max(j.MinNodes, 1)
	mem := j.MemPerNodeMB
	if j.MemPerCPUMB > 0 {
		mem = j.MemPerCPUMB * uint64(cpusPerNode)
	}
	spec := translate.SessionSpec{
		Name: "slurm-" + jobLabel(j), JobID: j.ID, ResourceGroup: j.Partition,
		Priority: int64(j.Priority) - int64(j.Nice), UID: j.UserID, GID: j.GroupID,
		Groups: supplementaryGroups(j.UserName, j.GroupID), UserName: j.UserName,
		Image: j.Container, Script: sc.Text, Argv: sc.Argv, Env: c.jobEnv(j, sc.Env, tasks),
		WorkDir: j.WorkDir, StdIn: expandPath(j.StdIn, j), StdOut: expandPath(j.StdOut, j),
		// A requeued job appends to its output, as slurmd does.
		StdErr: expandPath(j.StdErr, j), AppendOut: j.OpenMode == openModeAppend || j.Restarts > 0,
		Nodes: j.MinNodes, CPUsPerNode: cpusPerNode, MemPerNodeMB: mem,
		GPUsPerNode: gpusPerNode(j), Exclusive: j.Exclusive,
		KillWait: time.Duration(c.killWait()) * time.Second,
		Rlimits:  c.jobRlimits(sc.Env),
	}
	if spec.StdOut == "" {
		pat := "slurm-%j.out"
		if j.ArrayJobID != 0 {
			pat = "slurm-%A_%a.out"
		}
		spec.StdOut = expandPath(pat, j)
	}
	if mem == 0 && c.opt.Conf.Get("DefMemPerNode", "") == "" && c.opt.Conf.Get("DefMemPerCPU", "") == "" {
		// No --mem and no default: slurmctld gives the job every node's
		// whole memory (CR_Core_Memory), so it shares no node.
		spec.AllMemory = true
	} else if mem == 0 {
		if v, err := strconv.ParseUint(c.opt.Conf.Get("DefMemPerNode", "0"), 10, 64); err == nil && v > 0 {
			spec.MemPerNodeMB = v
		} else if v, err := strconv.ParseUint(c.opt.Conf.Get("DefMemPerCPU", "0"), 10, 64); err == nil {
			spec.MemPerNodeMB = v * uint64(cpusPerNode)
		}
	}
	if j.TimeLimit != codec.Infinite && j.TimeLimit != codec.NoVal {
		spec.TimeLimit = time.Duration(j.TimeLimit) * time.Minute
	}
	if j.WarnSignal != 0 {
		spec.Signal, spec.Warn, spec.SignalBatchOnly = int(j.WarnSignal), time.Duration(j.WarnTime)*time.Second, j.WarnBatchOnly
	}
	if j.ReqNodes != "" {
		spec.ReqNodes = strings.Split(j.ReqNodes, ",")
	}
	if j.ExcNodes != "" {
		spec.ExcNodes = strings.Split(j.ExcNodes, ",")
	}
	return spec
}

const openModeAppend = 1

func (c *Controller) killWait() int {
	if v, err := strconv.Atoi(c.opt.Conf.Get("KillWait", "30")); err == nil {
		return v
	}
	return 30
}

// gpusPerNode turns --gres/--gpus-per-node, --gpus (per job) and
// --gpus-per-task into the GPUs each node of the session needs.
func gpusPerNode(j *state.Job) uint32 {
	nodes := uint64(max(j.MinNodes, 1))
	g := gresGPUs(j.TresPerNode)
	if t := gresGPUs(j.TresPerJob); t > 0 {
		g = max(g, (t+nodes-1)/nodes)
	}
	if t := gresGPUs(j.TresPerTask); t > 0 {
		perNode := (uint64(j.NumTasks) + nodes - 1) / nodes
		g = max(g, t*perNode)
	}
	return uint32(g)
}

// gresGPUs counts GPUs in a TRES string such as "gres/gpu:2" or
// "gres/gpu:a100:2".
func gresGPUs(tres string) uint64 {
	for _, t := range strings.Split(tres, ",") {
		if !strings.HasPrefix(t, "gres/gpu") && !strings.HasPrefix(t, "gres:gpu") {
			continue
		}
		parts := strings.Split(t, ":")
		n, err := strconv.ParseUint(parts[len(parts)-1], 10, 32)
		if err != nil || len(parts) == 1 {
			return 1
		}
		return n
	}
	return 0
}

func jobLabel(j *state.Job) string {
	if j.ArrayJobID != 0 && j.ArrayTaskID != codec.NoVal {
		return itoa(uint64(j.ArrayJobID)) + "_" + itoa(uint64(j.ArrayTaskID))
	}
	return itoa(uint64(j.ID))
}

// consumeEvents moves jobs through Slurm's states as the engine reports.
func (c *Controller) consumeEvents(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-c.opt.Exec.Events():
			if !ok {
				return
			}
			c.applyEvent(ev)
		}
	}
}

func (c *Controller) applyEvent(ev translate.SessionEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(ev.JobID)
	if e == nil || e.job().SessionID != string(ev.ID) {
		return
	}
	j := *e.job()
	now := ev.Time.Unix()
	if now <= 0 {
		now = time.Now().Unix()
	}
	switch ev.Status {
	case translate.SessionPending, translate.SessionScheduled, translate.SessionPreparing:
		if len(ev.Nodes) > 0 && codec.JobIsPending(j.State) {
			j.Reason = codec.WAIT_RESOURCES
		}
		return
	case translate.SessionRunning:
		if codec.JobIsFinished(j.State) {
			return
		}
		defer c.notify(&j, mailBegin)
		j.State, j.Reason, j.StartTime = codec.JOB_RUNNING, codec.WAIT_NO_REASON, now
		if j.TimeLimit != codec.Infinite && j.TimeLimit != codec.NoVal {
			j.EndTime = now + int64(j.TimeLimit)*60 // expected end, as slurmctld shows
		}
		j.Nodes = compressNodes(ev.Nodes)
		if len(ev.Nodes) > 0 {
			j.BatchHost = ev.Nodes[0]
			if strings.Contains(j.Partition, ",") {
				j.Partition = c.partitionWithNode(&j, ev.Nodes[0])
			}
		}
		j.TresAllocStr = j.TresReqStr
		c.counters.started.Add(1)
	case translate.SessionTerminating:
		j.State |= codec.JOB_COMPLETING
	case translate.SessionTerminated, translate.SessionCancelled, translate.SessionError:
		if codec.JobIsFinished(j.State) && j.State&codec.JOB_COMPLETING == 0 {
			return
		}
		wasCancelled := j.State&codec.JOB_STATE_BASE == codec.JOB_CANCELLED
		j.EndTime = now
		if j.StartTime == 0 {
			j.StartTime = now
		}
		j.ExitCode = uint32(ev.ExitCode&0xff)<<8 | uint32(ev.Signal&0x7f)
		if j.Reason != codec.WAIT_HELD && j.Reason != codec.WAIT_HELD_USER {
			j.Reason = codec.WAIT_NO_REASON
		}
		switch {
		case wasCancelled || ev.Status == translate.SessionCancelled || ev.Reason == "user-requested":
			j.State = codec.JOB_CANCELLED
			c.counters.canceled.Add(1)
		case ev.Reason == "task-timeout":
			j.State, j.Reason = codec.JOB_TIMEOUT, codec.FAIL_TIMEOUT
			c.counters.failed.Add(1)
		case ev.Reason == "agent-termination":
			// The node (agent) went away with the job.
			j.State, j.Reason = codec.JOB_NODE_FAIL, codec.FAIL_DOWN_NODE
			c.counters.failed.Add(1)
		case ev.Reason == "oom-killed":
			j.State = codec.JOB_OOM
			c.counters.failed.Add(1)
		case ev.Status == translate.SessionError:
			j.State, j.Reason = codec.JOB_FAILED, codec.FAIL_LAUNCH
			c.counters.failed.Add(1)
		case ev.ExitCode == 0 && ev.Signal == 0:
			j.State = codec.JOB_COMPLETE
			c.counters.completed.Add(1)
		default:
			j.State = codec.JOB_FAILED
			if ev.Signal != 0 {
				j.Reason = codec.FAIL_SIGNAL
			} else {
				j.Reason = codec.FAIL_EXIT_CODE
			}
			c.counters.failed.Add(1)
		}
	}
	if err := c.opt.Store.Put(&j); err != nil {
		c.logf("job %d: %v", j.ID, err)
		return
	}
	if codec.JobIsFinished(j.State) {
		if j.State&codec.JOB_STATE_BASE == codec.JOB_COMPLETE {
			c.notify(&j, mailEnd)
		} else {
			c.notify(&j, mailFail|mailEnd)
		}
	}
	c.replace(e, &j)
	c.rebuild(now)
	c.wake() // dependencies and array throttles may now let others go
}

func compressNodes(nodes []string) string {
	if len(nodes) == 0 {
		return ""
	}
	return hostlistCompress(nodes)
}

// purgeFinished drops jobs that ended more than MinJobAge ago from the
// controller's view, as slurmctld does (their records stay in the store
// for accounting). It reports whether any went.
func (c *Controller) purgeFinished(now int64) bool {
	age := int64(300)
	if v, err := strconv.ParseInt(c.opt.Conf.Get("MinJobAge", "300"), 10, 64); err == nil {
		age = v
	}
	if age <= 0 {
		return false // MinJobAge=0 keeps jobs, as slurmctld
	}
	kept := c.jobs[:0]
	dropped := false
	for _, e := range c.jobs {
		if e.finished() && e.state&codec.JOB_COMPLETING == 0 && e.endTime > 0 && now-e.endTime > age {
			dropped = true
			continue
		}
		kept = append(kept, e)
	}
	for i := len(kept); i < len(c.jobs); i++ {
		c.jobs[i] = nil
	}
	c.jobs = kept
	return dropped
}
