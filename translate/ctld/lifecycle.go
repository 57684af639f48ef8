package ctld

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// The job lifecycle. The controller decides eligibility (holds,
// dependencies, begin time, array throttles) — what Slurm users expect and
// the engine may not model — and hands eligible jobs to the engine as
// sessions. The engine decides when they start, and its events move the
// jobs through Slurm's states.

// Start runs the dispatcher and the event consumer until ctx ends. It
// first reconciles the jobs with the sessions the engine has (after a
// restart), and again every resyncEvery (resync.go).
func (c *Controller) Start(ctx context.Context) {
	// Configless login nodes get the slurm.conf of a changed config.
	c.pushIfChanged(ctx)
	if c.opt.Exec == nil {
		return
	}
	lost := c.takeLostSteps()
	reconciled := c.resync(ctx, true)
	if len(lost) > 0 {
		c.logf("%d steps were live when the last run ended: their nodes failed with it", len(lost))
		go c.loseSteps(ctx, lost)
	}
	go c.consumeEvents(ctx)
	go c.refreshFairShares(ctx)
	go c.refreshTopology(ctx)
	go c.reconcileSchedulable(ctx)
	go c.watchStepLimits(ctx)
	go c.watchInactive(ctx)
	go c.purgeHistoryLoop(ctx.Done())
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		clock := newClockWatch()
		lastSync := time.Now()
		var took time.Duration // the last resync's
		for {
			if step := clock.stepped(); step != 0 {
				c.clockStepped(step)
			}
			switch {
			case !reconciled && time.Since(lastSync) >= 5*time.Second:
				// The engine did not answer the startup reconciliation
				// (it is down): until it does, jobs the last run left
				// "creating" stay so, and nothing new is handed over (a
				// create would race the adoption of a session made
				// before the restart).
				reconciled = c.resync(ctx, true)
				lastSync = time.Now()
			case reconciled && (time.Since(lastSync) >= max(resyncEvery, resyncShare*took) ||
				time.Since(lastSync) >= foreignGap && c.foreignDue.Load()):
				c.foreignDue.Store(false)
				t0 := time.Now()
				c.resync(ctx, false)
				lastSync = time.Now()
				took = lastSync.Sub(t0)
			}
			if !reconciled {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				continue
			}
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

// clockWatch notices steps of the host's wall clock (an administrator's
// date -s, an NTP step, a VM resumed): the wall clock's advance against
// the monotonic clock's between two looks.
type clockWatch struct {
	base  time.Time     // with its monotonic reading
	drift time.Duration // wall minus monotonic since base, at the last look
}

// clockStepMin is the least change of drift taken for a step (NTP slews
// by at most 0.5 ms per second; the dispatcher looks every second).
const clockStepMin = 2 * time.Second

func newClockWatch() *clockWatch { return &clockWatch{base: time.Now()} }

// stepped returns how far the wall clock stepped since the last look (0
// if it did not).
func (w *clockWatch) stepped() time.Duration {
	now := time.Now()
	drift := now.Round(0).Sub(w.base.Round(0)) - now.Sub(w.base)
	step := drift - w.drift
	if step > -clockStepMin && step < clockStepMin {
		return 0
	}
	w.drift = drift
	return step
}

// clockStepped re-expresses the times of running jobs on the stepped
// clock: their start (and the expected end slurmctld shows, start plus
// the limit) move with it, so that squeue's TIME and TIME_LEFT, which
// the clients compute from them on their own clock, stay the elapsed and
// remaining times the engine enforces the limit on (it counts elapsed
// time, not the wall clock's). slurmctld keeps them as recorded: an hour
// ahead, its running jobs show an hour more TIME and an INVALID
// TIME_LEFT; stepped back, the jobs started meanwhile show an INVALID
// (negative) TIME. A start recorded before a step is also the true start
// re-expressed on the corrected clock. Other times (submit, begin,
// deadline, finished jobs') stay as recorded, as in slurmctld: a
// --begin or --deadline is a time of day.
func (c *Controller) clockStepped(step time.Duration) {
	secs := int64(step.Round(time.Second) / time.Second)
	if secs == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.jobs {
		if e.hot == nil || !codec.JobIsRunning(e.hot.State) {
			continue
		}
		nj := *e.hot
		if nj.StartTime > 0 {
			nj.StartTime += secs
		}
		if nj.EndTime > 0 {
			nj.EndTime += secs
		}
		stored := true
		if err := c.opt.Store.Put(&nj); err != nil {
			stored = false
			c.storeTrouble("job %d: %v; its new state is kept in memory and written once the store takes it", nj.ID, err)
			go c.persistLater(nj.ID)
		}
		c.swap(e, &nj, stored)
		n++
	}
	c.logf("the host's clock stepped by %v: the start and expected end times of %d running jobs moved with it (their elapsed times stay true)", step.Round(time.Millisecond), n)
	c.rebuild(time.Now().Unix())
}

// wake asks the dispatcher for a pass.
func (c *Controller) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// fitsNow reports whether some partition of the job's can hold it.
func (c *Controller) fitsNow(j *state.Job) bool {
	parts := c.cluster().parts
	for _, name := range strings.Split(j.Partition, ",") {
		for i := range parts {
			if parts[i].Name == name && c.fits(j, &parts[i]) == nil {
				return true
			}
		}
	}
	return false
}

// overPartTime reports whether the job's time limit is over its
// partition's MaxTime (every partition of a list's).
func (c *Controller) overPartTime(j *state.Job) bool {
	if j.TimeLimit == codec.NoVal {
		return false
	}
	parts := c.cluster().parts
	over := false
	for _, name := range strings.Split(j.Partition, ",") {
		for i := range parts {
			if parts[i].Name != name {
				continue
			}
			if withinMaxTime(&parts[i], j.TimeLimit) {
				return false
			}
			over = true
		}
	}
	return over
}

// overPart says the reason is a partition limit a pending job waits on.
func overPart(reason uint32) bool {
	return reason == codec.WAIT_PART_TIME_LIMIT || reason == codec.WAIT_PART_NODE_LIMIT || reason == codec.WAIT_PART_CONFIG
}

// withinMaxTime reports whether a time limit (minutes, or Infinite) is
// within the partition's MaxTime.
func withinMaxTime(p *conf.Partition, limit uint32) bool {
	return p.MaxTime == conf.Infinite || (limit != conf.Infinite && limit <= p.MaxTime)
}

// sessionCreating marks a job whose session is being created.
const sessionCreating = "creating"

// eligible reports whether a pending job may be handed to the engine now,
// and otherwise the reason it waits.
func (c *Controller) eligible(j *state.Job, now int64) (bool, uint32) {
	switch {
	case j.Priority == 0:
		return false, j.Reason
	case j.BeginTime > now:
		return false, codec.WAIT_TIME
	case (j.Reason == codec.WAIT_PART_NODE_LIMIT || j.Reason == codec.WAIT_PART_CONFIG) && !c.fitsNow(j):
		// Queued by a 22.05 client though larger than its partition:
		// it waits until the partition can hold it.
		return false, j.Reason
	case c.overPartTime(j):
		// EnforcePartLimits=NO (the default): accepted, but it waits
		// until its limit is lowered (slurmctld's job_limits_check).
		return false, codec.WAIT_PART_TIME_LIMIT
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
	counts := map[uint32]*throttleCount{} // per array, for its throttle
	for _, e := range c.jobs {
		if e.hot == nil || !codec.JobIsPending(e.state) {
			// Cold: finished, or held with nothing to enforce (a held
			// job keeps its reason; see eligible). Not pending: the
			// entry's own copy of the state says so without a load of
			// the job (a pass runs per submission, over every running
			// job too: 100,000 on Backend.AI).
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
			if j.Reason == codec.WAIT_NO_REASON && reason == codec.WAIT_TIME {
				// Released with a --begin still ahead: slurmctld's
				// release says None, and its scheduler does not look at
				// a job whose begin time is ahead until it comes.
				continue
			}
			if overPart(reason) && j.EligibleTime == 0 && j.Dependency == "" {
				// Independent (no dependency, begin time passed) but
				// over its partition's limits (time; for a 22.05 or
				// 26.05 client also nodes or CPUs): eligible, and
				// accruing age, from now, as slurmctld's job_independent
				// makes it before its partition checks (measured: sacct
				// lists such a job as pending).
				nj := *j
				nj.Reason, nj.EligibleTime, nj.AccrueTime = reason, now, now
				if c.opt.Store.Put(&nj) == nil {
					c.replace(e, &nj)
					changed = true
				}
				continue
			}
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
			n := c.throttleCount(counts, j.ArrayJobID)
			free := int(a.limit) - n.started - n.waiting - n.chosen
			throttled := false
			for _, t := range a.tasks {
				if a.limit > 0 && free <= 0 {
					throttled = true
					break
				}
				todo = append(todo, work{e, t})
				n.chosen++
				free--
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
		if j.ArrayTaskID != codec.NoVal && j.ArrayMax > 0 {
			// A task split off but not started (its hand-over failed,
			// was cut by a crash, or it was requeued) counts against
			// the throttle like those its array's record starts.
			n := c.throttleCount(counts, j.ArrayJobID)
			if n.started+n.splitChosen >= int(j.ArrayMax) {
				if j.Reason != codec.WAIT_ARRAY_TASK_LIMIT {
					nj := *j
					nj.Reason = codec.WAIT_ARRAY_TASK_LIMIT
					if c.opt.Store.Put(&nj) == nil {
						c.replace(e, &nj)
						changed = true
					}
				}
				continue
			}
			n.splitChosen++
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
	if pc, ok := c.opt.Exec.(translate.ParallelCreator); ok && pc.CreateParallelism() > 1 && len(todo) > 1 {
		eachN(todo, pc.CreateParallelism(), func(w work) { c.handOver(ctx, w.e, w.task) })
		return
	}
	for _, w := range todo {
		c.handOver(ctx, w.e, w.task)
	}
}

// maxArrayIndex bounds array indexes (MaxArraySize).
const maxArrayIndex = 1000001

// throttleCount is what an array's throttle (%N) counts in a dispatch
// pass. A task split off the array's pending record but not handed over
// (its hand-over was cut by a crash or turned away by the engine, or it
// was requeued) holds a slot: it is started before the record starts new
// ones, and the two together never pass N.
type throttleCount struct {
	started     int // handed to the engine, not done
	waiting     int // split off, pending, not held
	splitChosen int // of those, chosen in this pass
	chosen      int // new tasks of the record chosen in this pass
}

// throttleCount returns the counts of an array for this pass.
func (c *Controller) throttleCount(counts map[uint32]*throttleCount, arrayJobID uint32) *throttleCount {
	if n := counts[arrayJobID]; n != nil {
		return n
	}
	n := &throttleCount{}
	for _, e := range c.jobs {
		if e.hot == nil || e.arrayJobID != arrayJobID { // cold ones have no session
			continue
		}
		j := e.hot
		if j.ArrayJobID != arrayJobID || j.ArrayTaskID == codec.NoVal || codec.JobIsFinished(j.State) {
			continue
		}
		switch {
		case j.SessionID != "":
			n.started++
		case codec.JobIsPending(j.State) && j.Priority != 0:
			n.waiting++
		}
	}
	counts[arrayJobID] = n
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
				// Marked as being handed over in the same write as the
				// split: a task split off but not marked would, after a
				// crash, be a pending task of its own outside the count
				// the throttle keeps (throttleCount).
				t.SessionID = sessionCreating
				return []*state.Job{&t, &meta}, nil
			})
			if err != nil {
				c.mu.Unlock()
				c.logf("split array task %d_%d: %v", j.ArrayJobID, task, err)
				return
			}
			te := newEntry(jobs[0], c.opt.Store, true)
			c.addJob(te)
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
	if target.SessionID != sessionCreating { // a split task was written marked
		target.SessionID = sessionCreating
		if err := c.opt.Store.Put(target); err != nil {
			c.mu.Unlock()
			c.storeTrouble("job %d: not handed to the engine, it stays pending: %v", target.ID, err)
			return
		}
	}
	if ce := c.entry(target.ID); ce != nil {
		c.replace(ce, target)
	}
	created := make(chan struct{})
	if c.creating == nil {
		c.creating = map[uint32]chan struct{}{}
	}
	c.creating[target.ID] = created
	// Closed when the hand-over is over (after the destroy of a session
	// cancelled meanwhile): a cancel waits for it (endKilled).
	release := func() {
		delete(c.creating, target.ID)
		close(created)
	}
	sc, err := c.opt.Store.Script(scriptID(target))
	c.mu.Unlock()
	if err != nil {
		c.logf("job %d: no script: %v", target.ID, err)
		c.mu.Lock()
		release()
		c.mu.Unlock()
		return
	}
	spec := c.sessionSpec(target, sc, tasks)
	cctx, cancel := context.WithTimeout(ctx, engineTimeout)
	id, err := c.opt.Exec.CreateSession(cctx, spec)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.creating, target.ID)
	releaseAfter := func(destroy func()) {
		go func() {
			destroy()
			close(created)
		}()
	}
	done := true // close created on return, unless a destroy does it
	defer func() {
		if done {
			close(created)
		}
	}()
	now := time.Now().Unix()
	if cur := c.entry(target.ID); cur != nil && cur.job().SessionID != sessionCreating {
		// Changed meanwhile (held, requeued): take the session back.
		if err == nil {
			done = false
			releaseAfter(func() { c.destroy(target.ID, string(id), true) })
		}
		return
	} else if cur != nil && !codec.JobIsPending(cur.job().State) {
		// Cancelled while its session was being created: the cancel
		// could not reach the engine (there was no session to end yet),
		// so it is delivered now, and the job, recorded as cancelled
		// and completing, follows the session to its end. Writing the
		// pending record over it would lose the acknowledged cancel.
		cj := *cur.job()
		if err == nil {
			cj.SessionID = string(id)
		} else {
			cj.SessionID, cj.State = "", cj.State&^codec.JOB_COMPLETING
		}
		if perr := c.opt.Store.Put(&cj); perr != nil {
			c.logf("job %d: %v", cj.ID, perr)
			c.swap(cur, &cj, false)
		} else {
			c.replace(cur, &cj)
		}
		c.rebuild(now)
		if err == nil {
			done = false
			releaseAfter(func() { c.destroy(cj.ID, string(id), false) })
		}
		return
	}
	if err != nil && transientEngineError(err) {
		// The engine could not record the session (its spool is full
		// or read-only): nothing was started, so the job waits and is
		// handed over again once the engine can take it, as slurmctld
		// requeues a batch job its node could not launch.
		c.storeTrouble("job %d: the engine cannot take it now, it stays pending: %v", target.ID, err)
		target.SessionID = ""
		if cur := c.entry(target.ID); cur != nil {
			c.swap(cur, target, c.opt.Store.Put(target) == nil)
		}
		return
	}
	if err != nil {
		c.logf("job %d: engine refused the session: %v", target.ID, err)
		target.State, target.Reason, target.EndTime, target.StartTime = codec.JOB_FAILED, codec.FAIL_LAUNCH, now, now
		target.ExitCode = 1 << 8
	} else {
		target.SessionID = string(id)
		c.createdAt[string(id)] = time.Now() // resync: newer than its list (resync.go)
		target.Reason = codec.WAIT_RESOURCES
		if target.EligibleTime == 0 || target.EligibleTime > now {
			target.EligibleTime = now
		}
		// (A task slurmctld's backfill scheduler starts shows no accrue
		// time, one its main scheduler starts does: this is the main
		// one, Scheduler=Main.)
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
	c.rebuildSoon()
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
	spec := sessionShape(j)
	spec.Interactive = j.Origin == originAlloc
	if spec.GPUType == "" && spec.GPUsPerNode > 0 {
		// An untyped request gets the partition's accelerator (an engine
		// names the family of its slots: cuda, rocm, ...).
		cl := c.cluster()
		if p := cl.part(j.Partition); p != nil {
			spec.GPUType = cl.partLimits(p).gpuType
		}
	}
	mem := spec.MemPerNodeMB
	spec.Name, spec.JobID, spec.ResourceGroup = "slurm-"+jobLabel(j), j.ID, j.Partition
	spec.Priority = int64(j.Priority) - int64(j.Nice)
	spec.Groups = supplementaryGroups(j.UserName, j.GroupID)
	spec.Script, spec.Argv, spec.Env = sc.Text, sc.Argv, c.jobEnv(j, sc.Env, tasks)
	spec.WorkDir, spec.StdIn, spec.StdOut, spec.StdErr = j.WorkDir, expandPath(j.StdIn, j), expandPath(j.StdOut, j), expandPath(j.StdErr, j)
	spec.AppendOut = j.OpenMode == openModeAppend || j.Restarts > 0 // a requeued job appends, as slurmd does
	spec.KillWait = time.Duration(c.killWait()) * time.Second
	spec.Rlimits = c.jobRlimits(sc.Env)
	// The partition says where the session runs on Backend.AI: its
	// resource group, and the project and image of jobs naming none.
	if p := c.cluster().part(j.Partition); p != nil {
		spec.ResourceGroup = p.ResourceGroup
		spec.Tier = int(p.PriorityTier)
		if spec.Project = j.Account; spec.Project == "" {
			spec.Project = p.Project
		}
		if spec.Image == "" {
			spec.Image = p.Image
		}
	}
	if spec.StdOut == "" {
		pat := "slurm-%j.out"
		if j.ArrayJobID != 0 {
			pat = "slurm-%A_%a.out"
		}
		spec.StdOut = expandPath(pat, j)
	}
	if mem == 0 && c.config().Get("DefMemPerNode", "") == "" && c.config().Get("DefMemPerCPU", "") == "" {
		// No --mem and no default: slurmctld gives the job every node's
		// whole memory (CR_Core_Memory), so it shares no node.
		spec.AllMemory = true
	} else if mem == 0 {
		if v, err := strconv.ParseUint(c.config().Get("DefMemPerNode", "0"), 10, 64); err == nil && v > 0 {
			spec.MemPerNodeMB = v
		} else if v, err := strconv.ParseUint(c.config().Get("DefMemPerCPU", "0"), 10, 64); err == nil {
			spec.MemPerNodeMB = v * uint64(spec.CPUsPerNode)
		}
	}
	return spec
}

// sessionShape is what a job asks of the engine, without its script,
// environment and files: what an engine checks at submission
// (translate.SpecChecker), and what sessionSpec starts from.
func sessionShape(j *state.Job) translate.SessionSpec {
	cpusPerNode := (j.MinCPUs + j.MinNodes - 1) / max(j.MinNodes, 1)
	spec := translate.SessionSpec{
		UID: j.UserID, GID: j.GroupID, UserName: j.UserName, Image: j.Container,
		Nodes: j.MinNodes, CPUsPerNode: cpusPerNode, MemPerNodeMB: j.MemPerNodeMB,
		GPUsPerNode: gpusPerNode(j), GPUType: gresGPUType(j), GPUShare: gresShare(j), Comment: j.Comment,
		Exclusive: j.Exclusive,
	}
	if j.MemPerCPUMB > 0 {
		spec.MemPerNodeMB = j.MemPerCPUMB * uint64(cpusPerNode)
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
	if v, err := strconv.Atoi(c.config().Get("KillWait", "30")); err == nil {
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

// gresGPUType is the type of --gres=gpu:TYPE:N ("" when none is named).
func gresGPUType(j *state.Job) string {
	for _, tres := range []string{j.TresPerNode, j.TresPerJob, j.TresPerTask} {
		for _, t := range strings.Split(tres, ",") {
			// "gres/gpu:…" (23.02+) or "gres:gpu:…" (22.05), then
			// TYPE:N, N or TYPE.
			rest, ok := strings.CutPrefix(t, "gres/gpu:")
			if !ok {
				if rest, ok = strings.CutPrefix(t, "gres:gpu:"); !ok {
					continue
				}
			}
			if typ, _, ok := strings.Cut(rest, ":"); ok {
				return typ
			} else if _, err := strconv.ParseUint(rest, 10, 32); err != nil {
				return rest
			}
		}
	}
	return ""
}

// gresShare is --gres=mps:N or --gres=shard:N per node, in hundredths of
// a GPU (Slurm's MPS count is 100 per GPU by convention; shards are taken
// the same way).
func gresShare(j *state.Job) uint32 {
	for _, t := range strings.Split(j.TresPerNode, ",") {
		for _, kind := range []string{"gres/mps:", "gres/shard:", "gres:mps:", "gres:shard:"} {
			if rest, ok := strings.CutPrefix(t, kind); ok {
				parts := strings.Split(rest, ":")
				if n, err := strconv.ParseUint(parts[len(parts)-1], 10, 32); err == nil {
					return uint32(n)
				}
			}
		}
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
			if ev.Foreign {
				c.foreignEvent()
				ev.Ack()
				continue
			}
			c.applyEvent(ev)
		}
	}
}

func (c *Controller) applyEvent(ev translate.SessionEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// An event this returns on before the swap below changes nothing
	// shown: it is acknowledged at once; one that does, once published.
	shown := ev.Shown
	defer func() {
		if shown != nil {
			shown()
		}
	}()
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
		if ev.Status == translate.SessionPending && ev.Reason == translate.ReasonPreempted && codec.JobIsRunning(j.State) {
			// The engine's scheduler preempted the session and queued
			// it again (Backend.AI's "reschedule" preemption): the job
			// is requeued, as slurmctld requeues a job preempted with
			// PreemptMode=REQUEUE, and keeps its session.
			j.State, j.Reason = codec.JOB_PENDING, codec.WAIT_PRIORITY
			j.StartTime, j.EndTime, j.Nodes, j.BatchHost, j.TresAllocStr = 0, 0, "", "", ""
			j.Restarts++
			break
		}
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
		if j.Origin == originAlloc {
			defer c.grantLater(&j) // after the swap below: the record is the running one
		}
	case translate.SessionTerminating:
		if nodeFailed(&j) {
			return // ended when its node went DOWN: not completing
		}
		j.State |= codec.JOB_COMPLETING
	case translate.SessionTerminated, translate.SessionCancelled, translate.SessionError:
		if nodeFailed(&j) {
			// Ended when its node was set DOWN (nodeadmin.go): the
			// session's end adds its exit status only.
			j.ExitCode = uint32(ev.ExitCode&0xff)<<8 | uint32(ev.Signal&0x7f)
			break
		}
		if codec.JobIsFinished(j.State) && j.State&codec.JOB_COMPLETING == 0 {
			return
		}
		c.endSteps(j.ID)
		if j.Origin == originAlloc {
			if c.relinquished[j.ID] {
				delete(c.relinquished, j.ID)
				if codec.JobIsFinished(j.State) {
					// Relinquished by its client (endAllocation): the
					// state and status recorded then stand; the
					// session's end only finishes it.
					j.State &^= codec.JOB_COMPLETING
					break
				}
			} else {
				defer c.allocEnded(&j) // scancel, time limit, node failure: tell its client
			}
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
		case wasCancelled || ev.Status == translate.SessionCancelled ||
			ev.Reason == translate.ReasonUserRequested || ev.Reason == translate.ReasonForceTerminated:
			j.State = codec.JOB_CANCELLED
			c.counters.canceled.Add(1)
		case ev.Reason == translate.ReasonTaskTimeout:
			j.State, j.Reason = codec.JOB_TIMEOUT, codec.FAIL_TIMEOUT
			c.counters.failed.Add(1)
		case ev.Reason == translate.ReasonAgentLost, ev.Reason == translate.ReasonLost:
			// The node (agent) went away with the job, or the engine
			// lost it.
			j.State, j.Reason = codec.JOB_NODE_FAIL, codec.FAIL_DOWN_NODE
			c.counters.failed.Add(1)
		case ev.Reason == translate.ReasonOOMKilled:
			j.State = codec.JOB_OOM
			c.counters.failed.Add(1)
		case ev.Reason == translate.ReasonPreempted:
			j.State = codec.JOB_PREEMPTED
			c.counters.failed.Add(1)
		case ev.ExitUnknown && ev.Reason == translate.ReasonTaskFailed:
			// The engine knows it failed, not how: what slurmctld
			// shows for a batch script that exited 1.
			j.State, j.Reason = codec.JOB_FAILED, codec.FAIL_EXIT_CODE
			j.ExitCode = 1 << 8
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
	stored := true
	if err := c.opt.Store.Put(&j); err != nil {
		// The engine reported it and will not again: dropping it would
		// leave the job RUNNING (or COMPLETING) in every listing until
		// a restart. The new state is shown at once, and written once
		// the store takes it (full or read-only file system).
		stored = false
		c.storeTrouble("job %d: %v; its new state is kept in memory and written once the store takes it", j.ID, err)
		go c.persistLater(j.ID)
	}
	if codec.JobIsFinished(j.State) {
		if j.State&codec.JOB_STATE_BASE == codec.JOB_COMPLETE {
			c.notify(&j, mailEnd)
		} else {
			c.notify(&j, mailFail|mailEnd)
		}
	}
	c.swap(e, &j, stored)
	c.rebuildSoon()
	if shown != nil {
		c.shown, shown = append(c.shown, shown), nil
	}
	c.wake()         // dependencies and array throttles may now let others go
	c.kickTopology() // the engine's occupancy changed
}

// persistLater writes job id's record, kept in memory when the store
// refused it (applyEvent), once the store takes it, retrying with a
// growing delay; a job gone meanwhile, or kept in the store only (cold:
// written since), needs nothing.
func (c *Controller) persistLater(id uint32) {
	for delay := time.Second; ; delay = min(2*delay, 30*time.Second) {
		time.Sleep(delay)
		c.mu.Lock()
		e := c.entry(id)
		if e == nil || e.hot == nil {
			c.mu.Unlock()
			return
		}
		if err := c.opt.Store.Put(e.hot); err == nil {
			c.replace(e, e.hot) // may now be kept cold
			c.rebuild(time.Now().Unix())
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// transientEngineError reports an engine error that says nothing about
// the job: the engine's own storage could not take the session now.
func transientEngineError(err error) bool {
	return errors.Is(err, translate.ErrUnavailable) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EIO)
}

// storeTroubles rate-limits the log of writes refused by a full or
// read-only store (every pending job retried every second would
// otherwise log every second): one line per 30 s, counting the others.
type storeTroubles struct {
	sync.Mutex
	last    time.Time
	skipped int
}

func (c *Controller) storeTrouble(format string, args ...any) {
	st := &c.troubles
	st.Lock()
	if !st.last.IsZero() && time.Since(st.last) < 30*time.Second {
		st.skipped++
		st.Unlock()
		return
	}
	skipped := st.skipped
	st.last, st.skipped = time.Now(), 0
	st.Unlock()
	msg := fmt.Sprintf(format, args...)
	if skipped > 0 {
		msg += fmt.Sprintf(" (and %d more such refusals in the last 30 s)", skipped)
	}
	c.logf("%s", msg)
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
	// Ages are in seconds: one look a second (a dispatch pass runs per
	// submission), and the list is rewritten only when a job goes.
	if now == c.purgedAt {
		return false
	}
	c.purgedAt = now
	age := int64(300)
	if v, err := strconv.ParseInt(c.config().Get("MinJobAge", "300"), 10, 64); err == nil {
		age = v
	}
	if age <= 0 {
		return false // MinJobAge=0 keeps jobs, as slurmctld
	}
	old := func(e *jobEntry) bool {
		return e.finished() && e.state&codec.JOB_COMPLETING == 0 && e.endTime > 0 && now-e.endTime > age && !e.unwritten()
	}
	if !slices.ContainsFunc(c.jobs, old) {
		return false
	}
	c.ownJobs()
	c.jobs = slices.DeleteFunc(c.jobs, old)
	return true
}
