package double

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The lifecycle engine: a model of the sokovan scheduler coordinator of
// 26.8.1 (manager/sokovan/scheduler/coordinator.py, factory.py and the
// handlers under handlers/). Every cycle (the coordinator's short
// interval) runs the handlers once; a session advances at most one
// session-level stage per cycle, and agents answer kernel requests after
// Options.PullTime/CreateTime.
//
// Session path: PENDING →(schedule-sessions)→ SCHEDULED
// →(check-precondition, "passed-preconditions")→ PREPARING
// →(promote-to-prepared)→ PREPARED →(start-sessions)→ CREATING
// →(promote-to-running)→ RUNNING → TERMINATING → TERMINATED. Kernels go
// through PULLING when the agent lacks the image; the session itself
// never enters PULLING in 26.8.1 (nothing sets SessionStatus.PULLING —
// source differs from the reference §2.9 "typical batch path").

type engine struct {
	d     *Double
	kick  chan struct{}
	cycle uint64
}

func newEngine(d *Double) *engine { return &engine{d: d, kick: make(chan struct{}, 1)} }

// Kick runs a scheduler cycle now (in addition to the periodic ones).
func (d *Double) Kick() {
	select {
	case d.eng.kick <- struct{}{}:
	default:
	}
}

func (e *engine) loop() {
	defer e.d.wg.Done()
	t := time.NewTicker(e.d.opts.Cycle)
	defer t.Stop()
	for {
		select {
		case <-e.d.closeCh:
			return
		case <-t.C:
		case <-e.kick:
		}
		e.d.mu.Lock()
		e.step(time.Now().UTC())
		e.d.mu.Unlock()
	}
}

// RunCycle runs one cycle synchronously (tests).
func (d *Double) RunCycle() {
	d.mu.Lock()
	d.eng.step(time.Now().UTC())
	d.mu.Unlock()
}

// step is one coordinator cycle. Handlers run from the end of the
// pipeline to its start so that a session moved by one handler is not
// moved again by the next one within the same cycle.
func (e *engine) step(now time.Time) {
	d := e.d
	e.cycle++
	moved := map[*session]bool{}
	active := make([]*session, 0, len(d.active))
	for _, s := range d.sessSeq {
		if !s.status.terminal() {
			active = append(active, s)
		}
	}

	// Agent side: kernels whose work is done report back.
	e.agentProgress(active, now)
	// Lost agents: their kernels go stale (sweep-stale-kernels).
	e.sweepStale(active, now, moved)
	// Batch tasks finishing (scale mode), batch timeouts.
	e.batchProgress(active, now, moved)

	for _, s := range active {
		if moved[s] || s.status.terminal() {
			continue
		}
		switch s.status {
		case StTerminating:
			e.terminate(s, now, moved)
		case StCreating:
			if allKernels(s, func(k *kernel) bool { return !preRunning(k.status) }) {
				e.promote(s, StRunning, now, "triggered-by-scheduler", moved)
			}
		case StPrepared:
			e.start(s, now, moved)
		case StScheduled, StPreparing, StPulling:
			if allKernels(s, func(k *kernel) bool { return !prePrepared(k.status) }) {
				e.promote(s, StPrepared, now, "triggered-by-scheduler", moved)
			} else if s.status == StScheduled {
				e.precondition(s, now, moved)
			}
		case StReserved:
			e.releaseReserved(s, now, moved)
		case StPreempted:
			e.preempted(s, now, moved)
		case StRescheduling:
			e.rescheduling(s, now, moved)
		case StDeprioritizing:
			// deprioritize-sessions: priority -10 (floor 0), back to PENDING.
			s.priority -= 10
			if s.priority < 0 {
				s.priority = 0
			}
			s.failAttempts = 0
			e.setStatus(s, StPending, now, nil)
			d.queuePending(s)
			d.hub.sched(s, StPending, "deprioritized-for-rescheduling")
			s.rg.scheduleNeeded = true
			moved[s] = true
		}
	}
	// detect-termination: an active session with any kernel TERMINATED or
	// CANCELLED goes TERMINATING ("ABNORMAL_TERMINATION"; status_info is
	// not written by promotions).
	for _, s := range active {
		if moved[s] {
			continue
		}
		switch s.status {
		case StPending, StScheduled, StPreparing, StPulling, StPrepared, StCreating, StRunning, StDeprioritizing:
			if anyKernel(s, func(k *kernel) bool { return k.status == StTerminated || k.status == StCancelled }) {
				e.setStatus(s, StTerminating, now, nil)
				s.terminatingSince = now
				d.hub.sched(s, StTerminating, "ABNORMAL_TERMINATION")
				moved[s] = true
			}
		}
	}
	// schedule-sessions, per resource group.
	for _, rg := range d.rgOrder {
		if rg.scheduleNeeded || now.Sub(rg.lastLongSchedule) >= d.opts.LongCycle {
			if now.Sub(rg.lastLongSchedule) >= d.opts.LongCycle {
				rg.lastLongSchedule = now
			}
			rg.scheduleNeeded = false
			e.schedule(rg, now, moved)
		}
	}
	// observe-fair-share (long cycle only).
	d.fairShareDue(now)
}

func preRunning(st Status) bool {
	switch st {
	case StPending, StReserved, StScheduled, StPreparing, StBuilding, StPulling, StPrepared, StCreating:
		return true
	}
	return false
}

func prePrepared(st Status) bool {
	switch st {
	case StPending, StReserved, StScheduled, StPreparing, StBuilding, StPulling:
		return true
	}
	return false
}

func allKernels(s *session, f func(*kernel) bool) bool {
	for _, k := range s.kernels {
		if !f(k) {
			return false
		}
	}
	return true
}

func anyKernel(s *session, f func(*kernel) bool) bool {
	for _, k := range s.kernels {
		if f(k) {
			return true
		}
	}
	return false
}

// setStatus is SessionStatusBatchUpdaterSpec: status, history merge,
// status_info only when info != nil, starts_at at RUNNING (reset at
// PENDING), terminated_at at TERMINATED.
func (e *engine) setStatus(s *session, st Status, now time.Time, info *string) {
	s.status = st
	s.statusChanged = now
	s.hist = s.hist.set(st, now)
	if info != nil {
		v := *info
		s.statusInfo = &v
	}
	switch st {
	case StRunning:
		s.startsAt = now
	case StTerminated, StCancelled:
		s.termAt = now
	case StPending:
		s.startsAt = time.Time{}
	}
	if st.terminal() {
		delete(e.d.active, s)
		e.d.unqueuePending(s)
	}
}

func (e *engine) setKernel(k *kernel, st Status, now time.Time, info *string) {
	k.status = st
	k.statusChanged = now
	k.hist = k.hist.set(st, now)
	if info != nil {
		v := *info
		k.statusInfo = &v
	}
	switch st {
	case StRunning:
		k.startsAt = now
	case StTerminated, StCancelled:
		k.terminatedAt = now
	}
	if st.terminal() {
		e.d.freeKernel(k)
		if k.x != nil {
			k.x.gone()
		}
	}
}

// promote is a PromotionSpec transition: status_info untouched except
// RUNNING, which clears it to "" (coordinator._apply_transition).
func (e *engine) promote(s *session, st Status, now time.Time, reason string, moved map[*session]bool) {
	var info *string
	if st == StRunning {
		info = strp("")
	}
	e.setStatus(s, st, now, info)
	e.d.hub.sched(s, st, reason)
	moved[s] = true
	switch st {
	case StRunning:
		// RunningTransitionHook: batch sessions start their task on the
		// main kernel.
		if s.typ == "BATCH" {
			e.startBatch(s, now)
		} else if e.d.run != nil {
			e.d.run.startIdle(s.main())
		}
	case StTerminated:
		s.rg.scheduleNeeded = true // TERMINATED marks SCHEDULE
	}
}

func (e *engine) precondition(s *session, now time.Time, moved map[*session]bool) {
	e.setStatus(s, StPreparing, now, nil)
	e.d.hub.sched(s, StPreparing, "passed-preconditions")
	moved[s] = true
	for _, k := range s.kernels {
		if k.status != StScheduled {
			continue
		}
		e.setKernel(k, StPreparing, now, nil)
		e.d.hub.kernel(k, "kernel_preparing", "")
		if k.agent != nil && k.agent.images != nil && !k.agent.images[s.image.name] {
			e.setKernel(k, StPulling, now, nil)
			e.d.hub.kernel(k, "kernel_pulling", s.image.name)
			k.due = now.Add(e.d.opts.PullTime)
		} else {
			k.due = now
		}
	}
}

func (e *engine) start(s *session, now time.Time, moved map[*session]bool) {
	e.setStatus(s, StCreating, now, nil)
	e.d.hub.sched(s, StCreating, "triggered-by-scheduler")
	moved[s] = true
	for _, k := range s.kernels {
		if k.status == StPrepared {
			e.setKernel(k, StCreating, now, nil)
			e.d.hub.kernel(k, "kernel_creating", "")
			k.due = now.Add(e.d.opts.CreateTime)
		}
	}
}

// agentProgress is the agents' side: pulls and container creations that
// are done report PREPARED / RUNNING.
func (e *engine) agentProgress(active []*session, now time.Time) {
	for _, s := range active {
		for _, k := range s.kernels {
			if k.agent == nil || k.agent.status != "ALIVE" {
				continue
			}
			switch k.status {
			case StPreparing, StPulling:
				if !now.Before(k.due) {
					if k.status == StPulling && k.agent.images != nil {
						k.agent.images[s.image.name] = true
					}
					e.setKernel(k, StPrepared, now, nil)
				}
			case StCreating:
				if !now.Before(k.due) {
					k.containerID = containerIDFor(k.id)
					e.setKernel(k, StRunning, now, strp(""))
					e.d.hub.kernel(k, "kernel_started", "")
				}
			}
		}
	}
}

func (e *engine) startBatch(s *session, now time.Time) {
	if s.batchTimeout > 0 {
		s.timeoutAt = now.Add(time.Duration(s.batchTimeout) * time.Second)
	}
	if e.d.run != nil {
		e.d.run.start(s.main())
		return
	}
	if e.d.opts.RunTime > 0 {
		s.runUntil = now.Add(e.d.opts.RunTime)
	}
}

func (e *engine) batchProgress(active []*session, now time.Time, moved map[*session]bool) {
	for _, s := range active {
		if s.status != StRunning || s.typ != "BATCH" || s.result != resUndefined {
			continue
		}
		if !s.timeoutAt.IsZero() && !now.Before(s.timeoutAt) {
			e.batchResult(s, -2, "task-timeout", now, moved)
			continue
		}
		if e.d.run == nil && !s.runUntil.IsZero() && !now.Before(s.runUntil) {
			reason := "task-finished"
			if e.d.opts.ScaleExitCode != 0 {
				reason = "task-failed"
			}
			e.batchResult(s, e.d.opts.ScaleExitCode, reason, now, moved)
		}
	}
}

// batchResult is the agent's SessionSuccess/FailureBroadcastEvent plus
// handle_batch_result: result, then mark_sessions_for_termination with
// the reason (task-finished, task-failed, task-timeout).
func (e *engine) batchResult(s *session, exit int, reason string, now time.Time, moved map[*session]bool) {
	if s.result != resUndefined {
		return
	}
	s.exitCode = exit
	if reason == "task-finished" {
		s.result = resSuccess
		e.d.hub.sessionResult(s, "session_success", reason, exit)
	} else {
		s.result = resFailure
		e.d.hub.sessionResult(s, "session_failure", reason, exit)
	}
	if reason == "task-timeout" && e.d.run != nil {
		e.d.run.kill(s.main(), false)
	}
	e.d.markTerminating([]*session{s}, reason, false, "mark_terminating success", now)
	moved[s] = true
}

// terminate is the terminate-sessions handler plus the agents destroying
// the kernels, then promote-to-terminated once every kernel is terminal.
func (e *engine) terminate(s *session, now time.Time, moved map[*session]bool) {
	if allKernels(s, func(k *kernel) bool { return k.status.terminal() }) {
		e.promote(s, StTerminated, now, "triggered-by-scheduler", moved)
		return
	}
	reason := ""
	if s.statusInfo != nil {
		reason = *s.statusInfo
	}
	for _, k := range s.kernels {
		if k.status.terminal() {
			continue
		}
		e.destroyKernel(k, reason, now)
	}
}

// destroyKernel asks the kernel's agent to destroy it. Without a
// container (never created, or the agent is gone) it ends at once; in
// run mode the process is killed and the kernel ends when it is gone.
func (e *engine) destroyKernel(k *kernel, reason string, now time.Time) {
	if e.d.run != nil && k.live() {
		e.d.run.kill(k, false)
		return
	}
	e.kernelTerminated(k, reason, now)
}

func (e *engine) kernelTerminated(k *kernel, reason string, now time.Time) {
	if k.status.terminal() {
		return
	}
	e.setKernel(k, StTerminated, now, strp(reason))
	k.statusData = obj{{"kernel", obj{{"exit_code", nilIfNone(k.exitCode)}}}}
	e.d.hub.kernel(k, "kernel_terminated", reason)
}

func nilIfNone(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// sweepStale: kernels on a LOST agent go stale after StaleKernelAfter;
// sweep-stale-kernels marks them TERMINATED ("STALE_KERNEL"), and
// detect-termination then sends their sessions to TERMINATING.
func (e *engine) sweepStale(active []*session, now time.Time, moved map[*session]bool) {
	if e.d.opts.StaleKernelAfter < 0 {
		return
	}
	for _, s := range active {
		for _, k := range s.kernels {
			if k.status != StRunning || k.agent == nil || k.agent.status == "ALIVE" {
				continue
			}
			if now.Sub(k.agent.lostAt) < e.d.opts.StaleKernelAfter {
				continue
			}
			if e.d.run != nil && k.live() {
				e.d.run.kill(k, true)
			}
			k.lostAt = now
			e.setKernel(k, StTerminated, now, strp("STALE_KERNEL"))
			k.statusData = obj{{"kernel", obj{{"exit_code", nil}}}}
		}
	}
}

// ---- scheduling (schedule-sessions, provisioner)

// The pending queue of a group; removal is lazy (the scheduling pass
// compacts it), so that placing n sessions stays O(n).
func (d *Double) queuePending(s *session) {
	if !s.queued {
		s.queued = true
		s.rg.pending = append(s.rg.pending, s)
	}
}

func (d *Double) unqueuePending(s *session) { s.queued = false }

func (rg *rgroup) compactPending() {
	out := rg.pending[:0]
	seen := make(map[*session]bool, len(rg.pending))
	for _, s := range rg.pending {
		if s.queued && s.status == StPending && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i := len(out); i < len(rg.pending); i++ {
		rg.pending[i] = nil
	}
	rg.pending = out
}

// agentFree is capacity - (used + prereserved) for a slot: a
// preemption reservation holds its resources against other placements.
func agentFree(a *agent, slot string) int64 {
	return a.capacity.get(slot) - a.used[slot] - a.prereserved[slot]
}

// fitsOwn is the admission check of a prereserved kernel: used + amount
// <= capacity (its own prereservation is what it converts).
func fitsOwn(a *agent, req slotList) bool {
	for _, q := range req {
		if q.q > 0 && a.capacity.get(q.name)-a.used[q.name] < q.q {
			return false
		}
	}
	return true
}

type requirement struct {
	slots   slotList
	kernels []*kernel
}

func (e *engine) requirements(s *session) []requirement {
	if s.clusterMode == "single-node" {
		var tot slotList
		for _, k := range s.kernels {
			tot = tot.sum(k.requested)
		}
		return []requirement{{slots: tot, kernels: s.kernels}}
	}
	out := make([]requirement, len(s.kernels))
	for i, k := range s.kernels {
		out[i] = requirement{slots: k.requested, kernels: []*kernel{k}}
	}
	return out
}

func fits(a *agent, req slotList, extra map[string]int64) bool {
	for _, q := range req {
		if q.q <= 0 {
			continue
		}
		if agentFree(a, q.name)-extra[q.name] < q.q {
			return false
		}
	}
	return true
}

func (e *engine) eligible(rg *rgroup, s *session) []*agent {
	var out []*agent
	for _, a := range rg.agents {
		if a.status != "ALIVE" || !a.schedulable || a.arch != s.image.arch {
			continue
		}
		if len(s.designated) > 0 && !containsStr(s.designated, a.id) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// pick is the agent selection strategy: dispersed takes the agent with
// the most remaining resources (in the order of the requested slots),
// concentrated the least; both first prefer agents with fewer
// capabilities the request leaves unused.
func pick(strategy string, cands []*agent, req slotList, inflight map[*agent]map[string]int64) *agent {
	var best *agent
	var bestKey, key [9]int64
	n := len(req)
	if n > 8 {
		n = 8
	}
	for _, a := range cands {
		extra := inflight[a]
		if !fits(a, req, extra) {
			continue
		}
		key[0] = -int64(unutilized(a, req))
		for i := 0; i < n; i++ {
			rem := agentFree(a, req[i].name) - extra[req[i].name]
			if strategy == "concentrated" {
				rem = -rem
			}
			key[i+1] = rem
		}
		if best == nil || keyGreater(key[:n+1], bestKey[:n+1]) {
			best, bestKey = a, key
		}
	}
	return best
}

func unutilized(a *agent, req slotList) int {
	n := 0
	for _, c := range a.capacity {
		if c.name == "cpu" || c.name == "mem" || c.q <= 0 {
			continue
		}
		if req.get(c.name) <= 0 {
			n++
		}
	}
	return n
}

func keyGreater(a, b []int64) bool {
	for i := range a {
		if i >= len(b) {
			return true
		}
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

func (e *engine) schedule(rg *rgroup, now time.Time, moved map[*session]bool) {
	d := e.d
	rg.compactPending()
	if len(rg.pending) == 0 {
		return
	}
	// SchedulingSequencer: priority first, FIFO (or LIFO) within a band.
	queue := append([]*session(nil), rg.pending...)
	sort.SliceStable(queue, func(i, j int) bool {
		if queue[i].priority != queue[j].priority {
			return queue[i].priority > queue[j].priority
		}
		if rg.scheduler == "lifo" {
			return queue[i].createdAt.After(queue[j].createdAt)
		}
		return queue[i].createdAt.Before(queue[j].createdAt)
	})
	failedShapes := map[string]bool{}
	eligibleCache := map[string][]*agent{}
	heaps := &heapSet{heaps: map[string]*agentHeap{}}
	claimed := map[*session]bool{}
	var scheduled []*session
	type reservation struct {
		s       *session
		victims []*session
	}
	var reserved []reservation
	for _, s := range queue {
		if s.status != StPending || moved[s] {
			continue
		}
		if msg := e.validate(s, now); msg != "" {
			e.scheduleFailed(s, now)
			continue
		}
		shape := ""
		if !rg.preempt.Enabled {
			shape = shapeKey(s)
			if failedShapes[shape] {
				e.scheduleFailed(s, now)
				continue
			}
		}
		var cands []*agent
		if len(s.designated) == 0 {
			if c, ok := eligibleCache[s.image.arch]; ok {
				cands = c
			} else {
				cands = e.eligible(rg, s)
				eligibleCache[s.image.arch] = cands
			}
		} else {
			cands = e.eligible(rg, s)
		}
		reqs := e.requirements(s)
		inflight := map[*agent]map[string]int64{}
		chosen := make([]*agent, len(reqs))
		ok := true
		for i, req := range reqs {
			var a *agent
			if len(reqs) == 1 && len(s.designated) == 0 {
				a = heaps.get(rg.selection, cands, req.slots, s.image.arch).pick(req.slots)
			} else {
				a = pick(rg.selection, cands, req.slots, inflight)
			}
			if a == nil {
				ok = false
				break
			}
			chosen[i] = a
			if inflight[a] == nil {
				inflight[a] = map[string]int64{}
			}
			for _, q := range req.slots {
				inflight[a][q.name] += q.q
			}
		}
		if ok {
			for i, req := range reqs {
				for _, k := range req.kernels {
					d.allocate(k, chosen[i])
					e.setKernel(k, StScheduled, now, nil)
				}
				heaps.changed(chosen[i])
			}
			scheduled = append(scheduled, s)
			continue
		}
		if rg.preempt.Enabled {
			if victims, agents := e.planPreemption(rg, s, cands, reqs, claimed, now); victims != nil {
				for _, v := range victims {
					claimed[v] = true
				}
				for i, req := range reqs {
					for _, k := range req.kernels {
						d.prereserve(k, agents[i])
						e.setKernel(k, StReserved, now, nil)
					}
					heaps.changed(agents[i])
				}
				reserved = append(reserved, reservation{s, victims})
				continue
			}
		}
		if shape != "" {
			failedShapes[shape] = true
		}
		e.scheduleFailed(s, now)
	}
	for _, r := range reserved {
		d.unqueuePending(r.s)
		e.setStatus(r.s, StReserved, now, strp("preemption-reservation"))
		d.hub.sched(r.s, StReserved, "preemption-reservation")
		moved[r.s] = true
		for _, v := range r.victims {
			r.s.reservedFor = append(r.s.reservedFor, v.id)
			v.victimOf = r.s.id
		}
		for _, v := range r.victims {
			if v.status.terminal() {
				continue
			}
			e.setStatus(v, StPreempted, now, strp("preempted-by-reservation"))
			d.hub.sched(v, StPreempted, "preempted-by-reservation")
			moved[v] = true
		}
	}
	for _, s := range scheduled {
		d.unqueuePending(s)
		s.failAttempts = 0
		e.setStatus(s, StScheduled, now, nil)
		d.hub.sched(s, StScheduled, "triggered-by-scheduler")
		moved[s] = true
	}
}

func shapeKey(s *session) string {
	var b strings.Builder
	b.WriteString(s.clusterMode)
	b.WriteString(s.image.arch)
	b.WriteString(strings.Join(s.designated, ","))
	for _, k := range s.kernels {
		for _, q := range k.requested {
			fmt.Fprintf(&b, "|%s=%d", q.name, q.q)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// scheduleFailed is a failed scheduling attempt as the coordinator
// classifies it: give_up (→ DEPRIORITIZING, not broadcast) once the
// phase attempts reached max_retry_count, else need_retry (no
// transition; the attempt counter grows).
func (e *engine) scheduleFailed(s *session, now time.Time) {
	if s.failAttempts >= e.d.opts.MaxRetries {
		e.d.unqueuePending(s)
		e.setStatus(s, StDeprioritizing, now, nil)
		return
	}
	s.failAttempts++
}

// validate runs the provisioner validators: dependencies (every
// dependency TERMINATED with result SUCCESS) and reserved batch start.
func (e *engine) validate(s *session, now time.Time) string {
	var waiting []string
	for _, id := range s.deps {
		dep := e.d.sessions[id]
		if dep == nil || dep.status != StTerminated || dep.result != resSuccess {
			name := ""
			if dep != nil {
				name = dep.name
			}
			waiting = append(waiting, fmt.Sprintf("%s (%s)", name, id))
		}
	}
	if len(waiting) > 0 {
		return "Session dependencies not satisfied. (Waiting dependency sessions to finish as success. (" + strings.Join(waiting, ", ") + "))"
	}
	if s.typ == "BATCH" && !s.requestedStartsAt.IsZero() && now.Before(s.requestedStartsAt) {
		return "Reserved batch session is not yet ready to start."
	}
	return ""
}

func (d *Double) allocate(k *kernel, a *agent) {
	d.unprereserve(k)
	k.agent = a
	if !containsStr(k.sess.agentIDs, a.id) {
		k.sess.agentIDs = append(k.sess.agentIDs, a.id)
	}
	if k.allocated {
		return
	}
	for _, q := range k.requested {
		a.used[q.name] += q.q
	}
	a.containers++
	k.allocated = true
}

func (d *Double) prereserve(k *kernel, a *agent) {
	k.agent = a
	if a.prereserved == nil {
		a.prereserved = map[string]int64{}
	}
	for _, q := range k.requested {
		a.prereserved[q.name] += q.q
	}
	k.prereserved = true
}

func (d *Double) unprereserve(k *kernel) {
	if !k.prereserved || k.agent == nil {
		return
	}
	for _, q := range k.requested {
		k.agent.prereserved[q.name] -= q.q
	}
	k.prereserved = false
}

// freeKernel frees the kernel's resource_allocations (its hold on the
// agent), as a terminal kernel status does.
func (d *Double) freeKernel(k *kernel) {
	d.unprereserve(k)
	if !k.allocated || k.agent == nil {
		k.allocated = false
		return
	}
	for _, q := range k.requested {
		k.agent.used[q.name] -= q.q
	}
	k.agent.containers--
	k.allocated = false
}

// ---- preemption (BEP-1055 as 26.8.1 implements it)

// planPreemption: victims are whole sessions of the same scope key
// (victim_scope: user by default) with strictly lower job_priority, that
// are preemptible, not private (SYSTEM), holding resources (SCHEDULED
// through RUNNING, not TERMINATING/RESERVED), running at least
// preemption_min_runtime, not claimed by an earlier plan of this pass.
// Per requirement, on an agent where reclaiming the candidates makes the
// request fit, victims are taken by job_priority then the order's key
// until the shortfall is covered. Multi-node requests preempt per kernel
// (the reference's "single-node only" is not in the 26.8.1 selector).
func (e *engine) planPreemption(rg *rgroup, s *session, cands []*agent, reqs []requirement, claimed map[*session]bool, now time.Time) ([]*session, []*agent) {
	var pool []*session
	for v := range e.d.active {
		if v.rg != rg || v == s || claimed[v] || !v.preemptible || v.typ == "SYSTEM" || !v.status.victimable() {
			continue
		}
		if v.jobPriority >= s.jobPriority || !sameScope(rg.preempt.VictimScope, v, s) {
			continue
		}
		if rg.preempt.MinRuntime > 0 && (v.startsAt.IsZero() || v.startsAt.After(now.Add(-rg.preempt.MinRuntime))) {
			continue
		}
		pool = append(pool, v)
	}
	if len(pool) == 0 {
		return nil, nil
	}
	sort.Slice(pool, func(i, j int) bool { return pool[i].id < pool[j].id })
	reclaim := map[*agent]map[string]int64{} // credited by chosen victims
	inflight := map[*agent]map[string]int64{}
	var chosen []*session
	taken := map[*session]bool{}
	agents := make([]*agent, len(reqs))
	held := func(v *session, a *agent) slotList {
		var l slotList
		for _, k := range v.kernels {
			if k.agent == a && k.allocated {
				l = l.sum(k.requested)
			}
		}
		return l
	}
	for i, req := range reqs {
		var bestA *agent
		var bestVictims []*session
		for _, a := range cands {
			extra := map[string]int64{}
			for k, v := range inflight[a] {
				extra[k] += v
			}
			for k, v := range reclaim[a] {
				extra[k] -= v
			}
			if fits(a, req.slots, extra) {
				bestA, bestVictims = a, nil
				break
			}
			// shortfall with every unclaimed victim credited
			var local []*session
			for _, v := range pool {
				if !taken[v] && len(held(v, a)) > 0 {
					local = append(local, v)
				}
			}
			if len(local) == 0 {
				continue
			}
			probe := map[string]int64{}
			for k, v := range extra {
				probe[k] = v
			}
			for _, v := range local {
				for _, q := range held(v, a) {
					probe[q.name] -= q.q
				}
			}
			if !fits(a, req.slots, probe) {
				continue
			}
			sortVictims(rg.preempt.Order, local, a, held)
			deficit := map[string]int64{}
			for _, q := range req.slots {
				if need := q.q - (agentFree(a, q.name) - extra[q.name]); need > 0 {
					deficit[q.name] = need
				}
			}
			var picked []*session
			for _, v := range local {
				if len(deficit) == 0 {
					break
				}
				h := held(v, a)
				useful := false
				for name := range deficit {
					if h.get(name) > 0 {
						useful = true
					}
				}
				if !useful {
					continue
				}
				picked = append(picked, v)
				for name, need := range deficit {
					if rem := need - h.get(name); rem > 0 {
						deficit[name] = rem
					} else {
						delete(deficit, name)
					}
				}
			}
			if bestA == nil || len(picked) < len(bestVictims) {
				bestA, bestVictims = a, picked
			}
		}
		if bestA == nil {
			return nil, nil
		}
		agents[i] = bestA
		for _, v := range bestVictims {
			taken[v] = true
			chosen = append(chosen, v)
			for _, k := range v.kernels {
				if k.agent != nil && k.allocated {
					if reclaim[k.agent] == nil {
						reclaim[k.agent] = map[string]int64{}
					}
					for _, q := range k.requested {
						reclaim[k.agent][q.name] += q.q
					}
				}
			}
		}
		if inflight[bestA] == nil {
			inflight[bestA] = map[string]int64{}
		}
		for _, q := range req.slots {
			inflight[bestA][q.name] += q.q
		}
	}
	if len(chosen) == 0 {
		// It fits without victims after all (e.g. across requirements).
		return nil, nil
	}
	return chosen, agents
}

func sameScope(scope string, v, s *session) bool {
	switch scope {
	case "project":
		return v.project == s.project
	case "domain":
		return v.domain == s.domain
	case "resource-group":
		return true
	}
	return v.owner == s.owner
}

func sortVictims(order string, vs []*session, a *agent, held func(*session, *agent) slotList) {
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].jobPriority != vs[j].jobPriority {
			return vs[i].jobPriority < vs[j].jobPriority
		}
		switch order {
		case "newest":
			return vs[i].startsAt.After(vs[j].startsAt)
		case "smallest-resources":
			return sumSlots(held(vs[i], a)) < sumSlots(held(vs[j], a))
		}
		return vs[i].startsAt.Before(vs[j].startsAt)
	})
}

func sumSlots(l slotList) int64 {
	var n int64
	for _, q := range l {
		n += q.q
	}
	return n
}

// releaseReserved: release-reserved-sessions admits RESERVED kernels
// once their agent has room (first reserved first); promote-to-scheduled
// follows when no kernel is RESERVED any more.
func (e *engine) releaseReserved(s *session, now time.Time, moved map[*session]bool) {
	if allKernels(s, func(k *kernel) bool { return k.status != StReserved }) {
		e.promote(s, StScheduled, now, "triggered-by-scheduler", moved)
		return
	}
	for _, k := range s.kernels {
		if k.status != StReserved || k.agent == nil {
			continue
		}
		if fitsOwn(k.agent, k.requested) {
			a := k.agent
			e.d.allocate(k, a)
			e.setKernel(k, StScheduled, now, nil)
		}
	}
}

// preempted: preempt-sessions branches by the group's mode: terminate →
// mark_sessions_for_termination("PREEMPTED_BY_SCHEDULER"); reschedule →
// RESCHEDULING with the same status_info.
func (e *engine) preempted(s *session, now time.Time, moved map[*session]bool) {
	if s.rg.preempt.Mode == "reschedule" {
		e.setStatus(s, StRescheduling, now, strp("PREEMPTED_BY_SCHEDULER"))
		e.d.hub.sched(s, StRescheduling, "PREEMPTED_BY_SCHEDULER")
		moved[s] = true
		return
	}
	e.d.markTerminating([]*session{s}, "PREEMPTED_BY_SCHEDULER", false, "preempt_terminate success", now)
	moved[s] = true
}

// rescheduling: reschedule-sessions tears the kernels down, then (all
// kernels terminal) resets them to PENDING and requeues the same session
// as PENDING with status_info "RESCHEDULED" (starts_at cleared).
func (e *engine) rescheduling(s *session, now time.Time, moved map[*session]bool) {
	if !allKernels(s, func(k *kernel) bool { return k.status.terminal() }) {
		for _, k := range s.kernels {
			if !k.status.terminal() {
				e.destroyKernel(k, "PREEMPTED_BY_SCHEDULER", now)
			}
		}
		return
	}
	for _, k := range s.kernels {
		e.d.freeKernel(k)
		k.agent = nil
		k.containerID = ""
		k.engineID = ""
		k.exitCode = nil
		// Run mode: the next run is a new process, not one being killed.
		k.killing, k.killForced, k.proc = false, false, procNone
		k.status = StPending
		k.statusChanged = now
		k.hist = k.hist.set(StPending, now)
		k.statusInfo = strp("RESCHEDULED")
		k.statusData = obj{{"retries", 0}}
		k.startsAt, k.terminatedAt = time.Time{}, time.Time{}
	}
	s.result = resUndefined
	s.runUntil, s.timeoutAt = time.Time{}, time.Time{}
	s.failAttempts = 0
	e.setStatus(s, StPending, now, strp("RESCHEDULED"))
	e.d.queuePending(s)
	e.d.hub.sched(s, StPending, "RESCHEDULED")
	s.rg.scheduleNeeded = true
	moved[s] = true
}

// markTerminating is mark_sessions_for_termination
// (repositories/scheduler/db_source mark_sessions_terminating):
// PENDING → CANCELLED; otherwise TERMINATING, or TERMINATED at once when
// forced; status_info = reason. Returns what happened, as the destroy
// handler reports it.
func (d *Double) markTerminating(ss []*session, reason string, forced bool, _ string, now time.Time) (cancelled, terminating, forcedDone int) {
	e := d.eng
	justCancelled := map[*session]bool{}
	for _, s := range ss {
		if s.status == StPending {
			e.setStatus(s, StCancelled, now, strp(reason))
			for _, k := range s.kernels {
				e.setKernel(k, StCancelled, now, strp(reason))
			}
			d.hub.sched(s, StCancelled, reason)
			justCancelled[s] = true
			cancelled++
		}
	}
	for _, s := range ss {
		if justCancelled[s] {
			continue
		}
		if forced {
			if !s.status.forceTerminatable() {
				continue
			}
			s.hist = s.hist.set(StTerminating, now)
			e.setStatus(s, StTerminated, now, strp(reason))
			s.forced = true
			for _, k := range s.kernels {
				if k.status == StPending || k.status.terminal() {
					continue
				}
				k.hist = k.hist.set(StTerminating, now)
				if d.run != nil && k.live() {
					d.run.kill(k, true)
				}
				e.setKernel(k, StTerminated, now, strp(reason))
			}
			d.hub.sched(s, StTerminated, reason)
			s.rg.scheduleNeeded = true
			forcedDone++
			continue
		}
		if !s.status.terminatable() {
			continue
		}
		e.setStatus(s, StTerminating, now, strp(reason))
		s.terminatingSince = now
		for _, k := range s.kernels {
			if k.status != StPending && k.status.terminatable() {
				e.setKernel(k, StTerminating, now, strp(reason))
			}
		}
		d.hub.sched(s, StTerminating, reason)
		terminating++
	}
	return
}
