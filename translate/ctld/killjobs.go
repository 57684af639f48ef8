package ctld

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// killJobs handles REQUEST_KILL_JOBS (scancel --ctld of 24.11 and later):
// the jobs named by id (jobs_array) or, without ids, every job, narrowed
// by the filters (account, name, partition, qos, reservation, state,
// user, nodes, wckey), are cancelled or signalled as REQUEST_KILL_JOB
// does (killLocked), and RESPONSE_KILL_JOBS lists, as
// job_mgr_signal_jobs does:
//
//  1. while selecting, in the order of the ids (or of the job list):
//     ids naming no job (ESLURM_INVALID_JOB_ID; for "_[...]" one entry
//     with the missing tasks), and, for jobs named by id only, finished
//     ones (ESLURM_ALREADY_DONE) and the ones a filter excludes
//     (ESLURM_JOB_SIGNAL_FAILED, "Job name a != filter name b: Cannot
//     signal job"); then jobs the caller may not signal
//     (ESLURM_ACCESS_DENIED, under the id as given when named by id);
//  2. then each selected job as it is signalled: array records with
//     their pending tasks first, then the pending tasks named by
//     "_N" / "_[...]" (as ID_[TASKS], the tasks that were pending), then
//     the other jobs; an entry only for a failure (e.g. a signal for a
//     pending job: ESLURM_TRANSITION_STATE_NO_UPDATE) unless the request
//     has KILL_JOBS_VERBOSE (scancel -v), which lists successes too.
//
// scancel prints "Kill job error on job id ID: MSG" for each entry but
// the ALREADY_DONE and INVALID_JOB_ID ones (all with -v) and exits 0. A
// request with neither ids nor filters is refused with
// ESLURM_SIGNAL_JOBS_INVALID, an id slurmctld cannot parse with
// unfmt_job_id_string's code (e.g. "12_*": ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC).
//
// Not modelled: heterogeneous jobs, federations, reservations and wckeys
// (no job has one, so those filters exclude every job), account
// coordinators, and 25.11's admin_comment (jobs here have none to set).
func (c *Controller) killJobs(req *Request) Reply {
	var m codec.KillJobsRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	m.Flags = codec.KillFlagsFromPeer(m.Flags, req.Version)
	f := kjFilter{m: &m}
	if len(m.Jobs) == 0 && !f.any() {
		return rcReply(codec.ESLURM_SIGNAL_JOBS_INVALID)
	}
	nbits := c.maxArraySize()
	specs := make([]codec.JobIDSpec, len(m.Jobs))
	for i, s := range m.Jobs {
		sp, rc := codec.ParseJobIDString(s, nbits)
		if rc != codec.SLURM_SUCCESS {
			return rcReply(rc)
		}
		specs[i] = sp
	}
	// Jobs named by id get an answer when a filter excludes them.
	f.specific = len(specs) > 0
	if f.given(m.Nodelist, 8) {
		// The node list filter, expanded once.
		names, err := hostlist.Expand(m.Nodelist)
		if err == nil {
			f.nodes = make(map[string]bool, len(names))
			for _, n := range names {
				f.nodes[n] = true
			}
		}
	}

	k := &kjRun{c: c, uid: req.UID, f: f, nbits: nbits, b: newKillBatch(m.Signal, m.Flags, req.UID)}
	c.mu.Lock()
	if len(specs) > 0 {
		for i := range specs {
			k.selectSpec(&specs[i])
		}
	} else {
		for _, e := range c.jobs {
			k.consider(e, nil, nil)
		}
	}
	k.signalAll()
	c.flushKills(k.b)
	if k.b.changed {
		c.rebuild(k.b.now)
	}
	c.mu.Unlock()
	for i := range k.signalled {
		// A pending job the store would not cancel: it stays pending.
		if r := &k.signalled[i].res; k.b.failed[r.RealJobID] && r.ErrorCode == codec.SLURM_SUCCESS {
			*r = kjResult(codec.ESLURM_INTERNAL, "", r.ID, r.RealJobID)
		}
	}

	c.endKilled(k.b)
	verbose := m.Flags&codec.KillJobsVerbose != 0
	var resp codec.KillJobsResponse
	resp.Jobs = append(resp.Jobs, k.selected...)
	for _, s := range k.signalled {
		if s.signal != nil {
			if err := c.signalJob(k.b, s.signal); err != nil {
				s.res.ErrorCode = codec.CodeOf(err)
				s.res.ErrorMsg = codec.KillJobsErrorText(s.res.ErrorCode)
			}
		}
		if s.res.ErrorCode != codec.SLURM_SUCCESS || verbose {
			resp.Jobs = append(resp.Jobs, s.res)
		}
	}
	c.wake()
	var w codec.Writer
	resp.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_KILL_JOBS, Body: w.B}
}

// kjRun is one REQUEST_KILL_JOBS in progress.
type kjRun struct {
	c     *Controller
	uid   uint32
	f     kjFilter
	nbits uint32 // MaxArraySize: the width of task bitmaps
	b     *killBatch

	// Selected for signalling, by job id (the records are looked up
	// again when signalled: an earlier kill may have replaced them).
	leaders []uint32 // array records with pending tasks, whole
	tasks   []kjTasks
	others  []uint32

	selected  []codec.KillJobsResult // answers of the selection
	signalled []*kjSignalled         // answers of the signalling, in order
}

// kjTasks is a pending array record to signal for some of its tasks,
// named by filter ("12_3" or "12_[1-3]").
type kjTasks struct {
	id     uint32
	tasks  *arrayRange
	filter codec.KillJobsStep
}

// kjSignalled is the answer for one signalled job; signal is the job to
// signal once c.mu is released.
type kjSignalled struct {
	res    codec.KillJobsResult
	signal *state.Job
}

// answer records an answer of the selection; msg "" is the code's text.
func (k *kjRun) answer(code uint32, msg string, id codec.KillJobsStep, realID uint32) {
	k.selected = append(k.selected, kjResult(code, msg, id, realID))
}

func kjResult(code uint32, msg string, id codec.KillJobsStep, realID uint32) codec.KillJobsResult {
	if msg == "" && code != codec.SLURM_SUCCESS {
		msg = codec.KillJobsErrorText(code)
	}
	return codec.KillJobsResult{ErrorCode: code, ErrorMsg: msg, ID: id, RealJobID: realID}
}

// jobStep is the id slurmctld answers with for a job record: ARRAY_TASK
// for an array task, else the job id.
func jobStep(j *state.Job) codec.KillJobsStep {
	st := codec.KillJobsStep{
		StepID:       codec.JobStepID{JobID: j.ID, StepID: codec.NoVal, StepHetComp: codec.NoVal},
		ArrayTaskID:  codec.NoVal,
		HetJobOffset: codec.NoVal,
	}
	if j.ArrayJobID != 0 && j.ArrayTaskID != codec.NoVal {
		st.StepID.JobID, st.ArrayTaskID = j.ArrayJobID, j.ArrayTaskID
	}
	return st
}

// entryStep is jobStep of e's job, from the entry.
func entryStep(e *jobEntry) codec.KillJobsStep {
	var ids state.Job
	e.fallback(&ids)
	return jobStep(&ids)
}

// isArrayRecord reports whether j is an array's own record (the one
// holding its pending tasks, or, once all started, the last task).
func isArrayRecord(j *state.Job) bool {
	return j.ArrayJobID != 0 && j.ArrayJobID == j.ID && j.ArrayTaskID == codec.NoVal
}

// pendingTasks returns the tasks a pending array record still holds (nil
// for other records).
func pendingTasks(j *state.Job) *arrayRange {
	if !isArrayRecord(j) || j.ArrayTasks == "" || !codec.JobIsPending(j.State) {
		return nil
	}
	a, err := parseArray(j.ArrayTasks, maxArrayIndex)
	if err != nil {
		return nil
	}
	return a
}

// selectSpec finds the records one job id names, as foreach_job_by_id
// does, and considers each (c.mu held).
func (k *kjRun) selectSpec(sp *codec.JobIDSpec) {
	c := k.c
	filter := sp.Step(k.nbits)
	notFound := func(st codec.KillJobsStep) { k.answer(codec.ESLURM_INVALID_JOB_ID, "", st, codec.NoVal) }
	// taskRecords maps the array's split-off tasks (and a record that
	// became its last task) to their records.
	taskRecords := func() map[uint32]*jobEntry {
		out := map[uint32]*jobEntry{}
		for _, e := range c.jobs {
			if e.arrayJobID == sp.JobID && e.arrayTaskID != codec.NoVal {
				out[e.arrayTaskID] = e
			}
		}
		return out
	}
	// meta returns the array's record if it holds task t.
	meta := func(t uint32) *jobEntry {
		e := c.entry(sp.JobID)
		if e == nil || e.hot == nil || !isArrayRecord(e.hot) || e.hot.ArrayTasks == "" {
			return nil // a cold record is never an array's pending record
		}
		a, err := parseArray(e.hot.ArrayTasks, maxArrayIndex)
		if err != nil || !a.contains(t) {
			return nil
		}
		return e
	}
	switch {
	case sp.ArrayTasks != nil:
		recs := taskRecords()
		var found []*jobEntry
		var holder *jobEntry
		var missing []uint32
		for _, t := range sp.ArrayTasks {
			if e := recs[t]; e != nil {
				found = append(found, e)
			} else if m := meta(t); m != nil {
				holder = m
			} else {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			st := filter
			st.ArrayBitmap = codec.TaskBitmap(k.nbits, missing)
			notFound(st)
		}
		if holder != nil {
			found = append(found, holder)
		}
		for _, e := range found {
			k.consider(e, &filter, sp)
		}
	case sp.ArrayTaskID != codec.NoVal:
		if e := taskRecords()[sp.ArrayTaskID]; e != nil {
			k.consider(e, &filter, sp)
		} else if m := meta(sp.ArrayTaskID); m != nil {
			k.consider(m, &filter, sp)
		} else {
			notFound(filter)
		}
	default:
		id := sp.JobID
		if sp.HetJobOffset != codec.NoVal {
			id += sp.HetJobOffset // no heterogeneous jobs: the record of that id
		}
		e := c.entry(id)
		if e == nil {
			notFound(filter)
			return
		}
		if e.arrayJobID == 0 || e.arrayJobID != e.id {
			// A job, or an array task named by its own job id.
			k.consider(e, &filter, sp)
			return
		}
		// An array's id: all its records, newest first (slurmctld's
		// array hash chain), the array's own record last.
		var recs []*jobEntry
		for _, o := range c.jobs {
			if o.arrayJobID == id {
				recs = append(recs, o)
			}
		}
		slices.SortStableFunc(recs, func(a, b *jobEntry) int {
			switch {
			case a.id > b.id:
				return -1
			case a.id < b.id:
				return 1
			}
			return 0
		})
		for _, o := range recs {
			k.consider(o, &filter, sp)
		}
	}
}

// consider applies the filters and the permission check to one record
// and queues it for signalling (_apply_signal_jobs_filter). filter is the
// id it was named by (nil when selected by filters alone).
func (k *kjRun) consider(e *jobEntry, filter *codec.KillJobsStep, sp *codec.JobIDSpec) {
	if !k.f.specific && k.f.rejects(e) {
		return // no answer for it, and no read of a cold record
	}
	if filter == nil && !k.f.specific && k.f.entryDecides() && e.coldPending() &&
		(k.uid == e.userID || k.c.isOperator(k.uid)) {
		// A cold pending job that rejects let through matches:
		// selected unread.
		var ids state.Job
		if e.fallback(&ids); isArrayRecord(&ids) {
			k.leaders = append(k.leaders, e.id)
		} else {
			k.others = append(k.others, e.id)
		}
		return
	}
	j := k.b.cr.view(e) // a cold one: the reader's scratch, read again when signalled
	if code, msg, ok := k.f.match(j); !ok {
		if k.f.specific {
			k.answer(code, msg, jobStep(j), j.ID)
		}
		return
	}
	if !k.c.mayControl(k.uid, j) {
		k.c.logf("uid %d may not signal job %d of uid %d", k.uid, j.ID, j.UserID)
		id := jobStep(j)
		if filter != nil {
			id = *filter
		}
		k.answer(codec.ESLURM_ACCESS_DENIED, "", id, j.ID)
		return
	}
	pending := pendingTasks(j)
	switch {
	case filter != nil && pending != nil && sp.ArrayTasks == nil && sp.ArrayTaskID != codec.NoVal:
		// One pending task not yet split off: answered as ID_[TASK].
		st := *filter
		st.ArrayBitmap = codec.TaskBitmap(k.nbits, []uint32{sp.ArrayTaskID})
		k.tasks = append(k.tasks, kjTasks{id: j.ID, tasks: &arrayRange{tasks: []uint32{sp.ArrayTaskID}}, filter: st})
	case filter != nil && pending != nil && sp.ArrayTasks != nil:
		k.tasks = append(k.tasks, kjTasks{id: j.ID, tasks: &arrayRange{tasks: sp.ArrayTasks}, filter: *filter})
	case isArrayRecord(j):
		k.leaders = append(k.leaders, j.ID)
	default:
		k.others = append(k.others, j.ID)
	}
}

// signalAll signals what was selected: array records, then pending tasks
// named by id, then the other jobs (c.mu held).
func (k *kjRun) signalAll() {
	c := k.c
	one := func(id uint32, tasks *arrayRange, st *codec.KillJobsStep) {
		e := c.entry(id)
		if e == nil {
			return
		}
		if st == nil && k.b.coldCancel(e) {
			// A cold pending job cancelled whole: its answer from the
			// entry, its record left unread (a bulk cancel logs it).
			k.signalled = append(k.signalled, &kjSignalled{res: kjResult(codec.SLURM_SUCCESS, "", entryStep(e), e.id)})
			return
		}
		jj := k.b.current(e)
		j := &jj
		res := &kjSignalled{}
		idStep := jobStep(j)
		if st != nil {
			// The tasks of the filter that were pending are the ones
			// signalled (and answered for).
			idStep = *st
			var hit []uint32
			if pend := pendingTasks(j); pend != nil {
				for _, t := range tasks.tasks {
					if pend.contains(t) {
						hit = append(hit, t)
					}
				}
			}
			idStep.ArrayBitmap = codec.TaskBitmap(k.nbits, hit)
			if len(hit) == 0 {
				res.res = kjResult(codec.SLURM_SUCCESS, "", idStep, j.ID)
				k.signalled = append(k.signalled, res)
				return
			}
			tasks = &arrayRange{tasks: hit}
		}
		out, err := c.killLocked(k.b, e, tasks)
		code := uint32(codec.SLURM_SUCCESS)
		switch {
		case err != nil:
			code = codec.ESLURM_INTERNAL
		case out == killFinished:
			code = codec.ESLURM_ALREADY_DONE
		case out == killNotRunning:
			code = codec.ESLURM_TRANSITION_STATE_NO_UPDATE
		case out == killSignal:
			res.signal = k.b.toSignal[len(k.b.toSignal)-1]
		}
		res.res = kjResult(code, "", idStep, j.ID)
		k.signalled = append(k.signalled, res)
	}
	for _, id := range k.leaders {
		one(id, nil, nil)
	}
	for i := range k.tasks {
		t := &k.tasks[i]
		one(t.id, t.tasks, &t.filter)
	}
	for _, id := range k.others {
		one(id, nil, nil)
	}
	// The engine work for toSignal is done per answer (kjSignalled).
	k.b.toSignal = nil
}

// kjFilter is the filters of a kill-jobs request
// (_signal_job_matches_filter).
type kjFilter struct {
	m        *codec.KillJobsRequest
	specific bool            // jobs are named by id: mismatches are answered
	nodes    map[string]bool // the node list filter, expanded
}

// given reports whether a string filter was sent (non-NULL); bit is its
// KillJobsRequest.EmptyStrs bit.
func (f *kjFilter) given(s string, bit uint) bool {
	return s != "" || f.m.EmptyStrs&(1<<bit) != 0
}

// any reports whether the request has a filter (_verify_kill_jobs_msg).
func (f *kjFilter) any() bool {
	m := f.m
	return f.given(m.Account, 0) || f.given(m.JobName, 2) || f.given(m.Partition, 3) || f.given(m.QOS, 4) ||
		f.given(m.Reservation, 5) || m.State&codec.JOB_STATE_BASE != codec.JOB_END || f.given(m.UserName, 6) ||
		f.given(m.Wckey, 7) || f.given(m.Nodelist, 8)
}

// orNull prints a job's string field as slurmctld's "%s" of a NULL one.
func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// entryDecides reports whether rejects is the whole of match: no filter
// but the state and the user is given.
func (f *kjFilter) entryDecides() bool {
	m := f.m
	return !f.given(m.Account, 0) && !f.given(m.JobName, 2) && !f.given(m.Partition, 3) && !f.given(m.QOS, 4) &&
		!f.given(m.Reservation, 5) && !f.given(m.Wckey, 7) && !f.given(m.Nodelist, 8)
}

// rejects reports whether the filters exclude the job from what its
// entry alone knows (finished, another user, another state), so that a
// scancel -u or -t does not read every cold record.
func (f *kjFilter) rejects(e *jobEntry) bool {
	m := f.m
	switch {
	case codec.JobIsFinished(e.state):
		return true
	case m.State != codec.JOB_END && e.state&codec.JOB_STATE_BASE != m.State:
		return true
	case f.given(m.UserName, 6) && e.userID != m.UserID:
		return true
	}
	return false
}

// match applies the filters to j; a mismatch returns the code and the
// message slurmctld answers a job named by id with.
func (f *kjFilter) match(j *state.Job) (uint32, string, bool) {
	m := f.m
	if codec.JobIsFinished(j.State) {
		return codec.ESLURM_ALREADY_DONE, "", false
	}
	fail := func(format string, args ...any) (uint32, string, bool) {
		return codec.ESLURM_JOB_SIGNAL_FAILED, fmt.Sprintf(format, args...) + ": " + codec.KillJobsErrorText(codec.ESLURM_JOB_SIGNAL_FAILED), false
	}
	if f.given(m.Account, 0) && (j.Account == "" || j.Account != m.Account) {
		return fail("Job account %s != filter account %s", orNull(j.Account), m.Account)
	}
	if f.given(m.JobName, 2) && (j.Name == "" || j.Name != m.JobName) {
		return fail("Job name %s != filter name %s", orNull(j.Name), m.JobName)
	}
	if f.given(m.Partition, 3) {
		// A pending job submitted to several partitions matches any.
		ok := j.Partition == m.Partition
		if !ok && codec.JobIsPending(j.State) {
			ok = slices.Contains(strings.Split(j.Partition, ","), m.Partition)
		}
		if !ok {
			return fail("Job partition %s does not include filter partition %s", orNull(j.Partition), m.Partition)
		}
	}
	if f.given(m.QOS, 4) && (j.QOS == "" || j.QOS != m.QOS) {
		qos := j.QOS
		if qos == "" {
			qos = "NULL"
		}
		return fail("Job qos %s != filter qos %s", qos, m.QOS)
	}
	if f.given(m.Reservation, 5) {
		// Jobs here run in no reservation.
		return fail("Job reservation (null) does not include filter reservation %s", m.Reservation)
	}
	if base := j.State & codec.JOB_STATE_BASE; m.State != codec.JOB_END && base != m.State {
		return fail("Job state %s != filter state %s", codec.JobStateString(base), codec.JobStateString(m.State))
	}
	if f.given(m.UserName, 6) && j.UserID != m.UserID {
		return fail("Job user id %d != filter user id %d", j.UserID, m.UserID)
	}
	if f.given(m.Nodelist, 8) {
		if j.Nodes == "" {
			return fail("Job does not have nodes but filter has nodes %s", m.Nodelist)
		}
		names, _ := hostlist.Expand(j.Nodes)
		if !slices.ContainsFunc(names, func(n string) bool { return f.nodes[n] }) {
			return fail("Job nodes %s does not intersect with filter nodes %s", j.Nodes, m.Nodelist)
		}
	}
	if f.given(m.Wckey, 7) {
		// Jobs here have no wckey.
		return fail("Job wckey (null) != filter wckey %s", m.Wckey)
	}
	return 0, "", true
}
