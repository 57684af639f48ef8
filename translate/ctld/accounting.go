package ctld

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// sacct's jobs (DBD_GET_JOBS_COND), as slurmdbd answers them: the finished
// runs from the accounting history, the jobs not finished yet from the
// controller, each with its steps.

// infinite32 is INFINITE: "nobody" for a record's requid.
const infinite32 = 0xffffffff

// stepStatsEmpty: the strings of a step's stats that slurmdbd sends as ""
// rather than NULL (its TRES usage; the real 24.11 captures), so records
// read as slurmdbd's do.
const stepStatsEmpty = 0x3fffc

// SLURMDB_JOB_FLAG_*: how the scheduler started the job, and that its
// start record reached accounting.
const (
	dbFlagSched  = 1 << 2
	dbFlagStartR = 1 << 4
)

// AccountingJobs answers DBD_GET_JOBS_COND from uid.
func (c *Controller) AccountingJobs(uid uint32, cond *codec.JobCond, v uint16) codec.GotJobs {
	hc := state.HistCond{Start: cond.UsageStart, End: cond.UsageEnd}
	type want struct{ task uint32 }
	wantJobs := map[uint32][]want{}
	for _, s := range cond.StepList {
		if s.StepID.JobID == 0 {
			continue
		}
		hc.JobIDs = append(hc.JobIDs, s.StepID.JobID)
		wantJobs[s.StepID.JobID] = append(wantJobs[s.StepID.JobID], want{s.ArrayTaskID})
	}
	for _, u := range cond.UserIDList {
		if n, err := strconv.ParseUint(u, 10, 32); err == nil {
			hc.UIDs = append(hc.UIDs, uint32(n))
		}
	}
	if c.hides(privateJobs, uid) || c.hides(privateUsage, uid) {
		hc.UIDs = []uint32{uid} // PrivateData: one's own history only
	}
	hc.Accounts = cond.AcctList
	hc.Partitions = cond.PartitionList
	hc.Names = cond.JobNameList
	for _, s := range cond.StateList {
		if n, err := strconv.ParseUint(s, 10, 32); err == nil {
			hc.States = append(hc.States, uint32(n))
		}
	}
	hc.ByID = len(hc.JobIDs) > 0
	defStartEnd(&hc, time.Now())
	taskOK := func(j *state.Job) bool {
		if len(wantJobs) == 0 {
			return true
		}
		for _, id := range []uint32{j.ID, j.ArrayJobID} {
			for _, w := range wantJobs[id] {
				if id == j.ID || w.task == codec.NoVal || w.task == j.ArrayTaskID {
					return true
				}
			}
		}
		return false
	}
	dup := cond.Flags&codec.JobCondDup != 0
	// Encoded as found (a month of history is too much to hold as
	// records), a later run of a job (requeued) replacing the earlier.
	out := codec.NewGotJobsBuilder(v, 64<<10)
	type kept struct {
		i             int
		submit, start int64
	}
	seen := map[uint32]kept{}
	add := func(d *codec.DBDJob) {
		if k, ok := seen[d.JobID]; ok && k.submit == d.Submit && k.start == d.Start {
			// The same run, live and written since (lives are taken
			// first): the history's, newer, stays.
			return
		} else if ok && !dup {
			if k.submit > d.Submit && k.start > d.Start {
				return
			}
			out.Drop(k.i)
		}
		seen[d.JobID] = kept{out.Add(d), d.Submit, d.Start}
	}
	rc := uint32(codec.SLURM_SUCCESS)
	noSteps := cond.Flags&codec.JobCondNoStep != 0
	hc.NoSteps = noSteps
	win := [2]int64{hc.Start, hc.End}
	// The jobs the history has not yet (pending, running, completing, a
	// bulk cancel's unwritten), taken before the history is read: a job
	// whose run is written meanwhile is then found twice (the later
	// kept), never in neither.
	c.mu.Lock()
	type live struct {
		j         state.Job
		steps     []*step
		canceller uint32
	}
	var lives []live
	for _, e := range c.jobs {
		if e.finished() && e.state&codec.JOB_COMPLETING == 0 && !e.unwritten() {
			continue // in the history (a bulk cancel's are until written)
		}
		j := *e.job()
		if !hc.Match(&j) || !taskOK(&j) {
			continue
		}
		if codec.JobIsPending(j.State) && (j.Reason == codec.WAIT_PART_NODE_LIMIT || j.Reason == codec.WAIT_PART_CONFIG) {
			// Queued though too large for its partition (22.05, 26.05):
			// slurmdbd got its record when it became eligible, before
			// the partition's limit was applied to it, and a pending
			// job's record is not sent again (sacct: Partition_Limit).
			j.TimeLimit = codec.NoVal
		}
		var ss []*step
		if js := c.steps[j.ID]; js != nil {
			for _, s := range js.live {
				x := *s
				ss = append(ss, &x)
			}
		}
		canceller := uint32(codec.NoVal)
		if e.unwritten() {
			canceller = e.ended.uid
		}
		lives = append(lives, live{j, ss, canceller})
	}
	c.mu.Unlock()
	if c.opt.Store != nil {
		err := c.opt.Store.History(&hc, func(h *state.HistJob) bool {
			if taskOK(&h.Job) {
				d := c.dbdJob(&h.Job, h.ReqUID, h.Steps, noSteps, win)
				if v < codec.V23_02 && h.Reason == codec.FAIL_BAD_CONSTRAINTS && d.TRESReq == "" {
					// 22.05 refuses such a job after its requested TRES
					// are set (sacct's AllocCPUS falls back to them);
					// later releases before.
					d.TRESReq = fmt.Sprintf("1=%d", max(h.MinCPUs, 1))
				}
				if h.Origin == state.OriginSlurmdbd {
					// Imported: accounting's own strings and figures.
					d.TRESAlloc, d.TRESReq, d.DerivedEC, d.Flags = h.TresAllocIDs, h.TresReqIDs, h.DerivedEC, h.DBFlags
					if h.StartTime == 0 && h.EndTime != 0 && d.Flags&dbFlagStartR != 0 {
						d.Start = int64(codec.NoVal)
					}
				}
				add(&d)
			}
			return true
		})
		if err != nil {
			c.logf("sacct: reading the history: %v", err)
			rc = codec.SLURM_ERROR
		}
	}
	for _, l := range lives {
		var steps []state.HistStep
		if !noSteps && c.opt.Store != nil {
			steps, _ = c.opt.Store.StepsOf(l.j.ID)
		}
		for _, s := range l.steps {
			steps = append(steps, state.HistStep{ID: s.id, Name: s.name, Nodes: s.nodeList, NNodes: uint32(len(s.nodes)),
				NTasks: s.tasks, CPUs: s.cpus, Start: s.start, State: codec.JOB_RUNNING, ReqUID: codec.NoVal,
				SubmitLine: s.submitLine, TresAlloc: fmt.Sprintf("1=%d,4=%d", s.cpus, len(s.nodes)), TaskDist: taskDistBlock})
		}
		d := c.dbdJob(&l.j, l.canceller, steps, noSteps, win)
		add(&d)
	}
	return codec.GotJobs{Body: out.Finish(rc)}
}

// defStartEnd completes the window as slurmdbd does
// (slurmdb_job_cond_def_start_end; sacct has done so already, other
// clients may not): with states and no start, now, and the end the
// start; with neither states nor ids and no start, today's midnight.
func defStartEnd(hc *state.HistCond, now time.Time) {
	if len(hc.States) > 0 {
		if hc.Start == 0 && !hc.ByID {
			hc.Start = now.Unix()
		}
		if hc.Start != 0 && hc.End == 0 {
			hc.End = hc.Start
		}
	} else if !hc.ByID && hc.Start == 0 {
		y, m, d := now.Date()
		hc.Start = time.Date(y, m, d, 0, 0, 0, 0, now.Location()).Unix()
	}
}

// reqUID is a record's requid: the canceller, or INFINITE.
func reqUID(u uint32) uint32 {
	if u == codec.NoVal || u == infinite32 {
		return infinite32
	}
	return u
}

// dbdJob is the accounting record of a job's run, as slurmdbd sends it.
// Steps are those slurmdbd's step query keeps for the window (started
// by its end, not ended before its start), in its order (the step id as
// a signed number: the batch step before step 0).
func (c *Controller) dbdJob(j *state.Job, canceller uint32, steps []state.HistStep, noSteps bool, win [2]int64) codec.DBDJob {
	now := time.Now().Unix()
	d := codec.DBDJob{
		Account: j.Account, ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, ArrayTaskStr: j.ArrayTasks,
		ArrayMaxTasks: j.ArrayMax, Cluster: c.opt.ClusterName, Constraints: j.Features, Container: j.Container,
		DBIndex: uint64(j.ID), Eligible: j.EligibleTime, End: j.EndTime, ExitCode: j.ExitCode,
		GID: j.GroupID, JobID: j.ID, JobName: j.Name, Nodes: j.Nodes, HetJobOffset: codec.NoVal,
		Partition: j.Partition, Priority: j.Priority, QOSID: 1, ReqCPUs: j.MinCPUs, ReqUID: reqUID(canceller),
		RestartCnt: j.Restarts, ShowFull: 1, Start: j.StartTime, State: j.State & codec.JOB_STATE_BASE,
		StdErr: j.StdErr, StdIn: j.StdIn, StdOut: j.StdOut, Submit: j.SubmitTime, SubmitLine: j.SubmitLine,
		Timelimit: j.TimeLimit, UID: j.UserID, User: j.UserName, WorkDir: j.WorkDir,
	}
	if j.Origin != state.OriginSlurmdbd { // an imported run's are accounting's own (the caller's)
		d.TRESAlloc, d.TRESReq = tresIDs(j.TresAllocStr), tresIDs(j.TresReqStr)
	}
	if j.ArrayJobID == 0 {
		d.ArrayTaskID = codec.NoVal
	}
	if d.ArrayTaskID == codec.NoVal && j.ArrayTasks == "" {
		d.ArrayJobID = 0
	}
	if d.User == "" {
		d.User = strconv.FormatUint(uint64(j.UserID), 10)
	}
	if d.Nodes == "" {
		d.Nodes = "None assigned"
	} else {
		d.AllocNodes = uint32(len(expandNodes(j.Nodes)))
	}
	if j.MemPerNodeMB > 0 {
		d.ReqMem = j.MemPerNodeMB
	} else if j.MemPerCPUMB > 0 {
		d.ReqMem = j.MemPerCPUMB | 1<<63 // MEM_PER_CPU
	}
	if j.StartTime > 0 {
		d.Flags = dbFlagSched | dbFlagStartR
		end := j.EndTime
		if end == 0 || codec.JobIsRunning(j.State) {
			end = now
		}
		d.Elapsed = uint32(max(end-j.StartTime, 0))
	}
	if codec.JobIsPending(j.State) {
		d.Start, d.End = 0, 0
	} else if j.StartTime == 0 && j.EndTime != 0 {
		// Ended before it ran (cancelled pending): slurmctld sent its
		// start record at the end, and slurmdbd says "never started"
		// (sacct: None).
		d.Start, d.Flags = int64(codec.NoVal), dbFlagStartR
	}
	base := j.State & codec.JOB_STATE_BASE
	endedRunning := (base == codec.JOB_CANCELLED || base == codec.JOB_TIMEOUT) && j.StartTime > 0 && j.Origin == ""
	if j.State&codec.JOB_REQUEUE != 0 && j.Origin == "" {
		// A requeued run (state.Store.RequeueRun): REQUEUED; its batch
		// step keeps the state the run ended in.
		d.State = codec.JOB_REQUEUE
	}
	if endedRunning {
		// Ended by the controller while running: slurmctld sent the
		// job's end before its batch step reported the signal (sacct:
		// 0:0 on the job's line).
		d.ExitCode = 0
	}
	if noSteps {
		return d
	}
	// The batch step: the script's run, as slurmstepd accounts it (none
	// for a job that never reached a node: refused, BadConstraints).
	if j.Origin == "" && j.StartTime > 0 && j.Nodes != "" {
		bs := codec.DBDStep{Elapsed: d.Elapsed, End: j.EndTime, ExitCode: j.ExitCode, NNodes: 1, Nodes: j.BatchHost,
			NTasks: 1, ReqUID: reqUID(canceller), Start: j.StartTime, State: uint16(base),
			StepID:    codec.JobStepID{JobID: j.ID, StepID: codec.SLURM_BATCH_SCRIPT, StepHetComp: codec.NoVal},
			StepName:  "batch",
			TRESAlloc: batchTRES(j), EmptyStrs: stepStatsEmpty}
		if bs.Nodes == "" {
			bs.Nodes = firstNode(j.Nodes)
		}
		if endedRunning {
			// Its batch step was cancelled, by no one in particular
			// (CANCELLED, the signal in its exit code).
			bs.State, bs.ReqUID = uint16(codec.JOB_CANCELLED), reqUID(codec.NoVal)
		}
		if codec.JobIsRunning(j.State) {
			bs.End = 0
		}
		d.Steps = append(d.Steps, bs)
	}
	for _, s := range steps {
		ds := codec.DBDStep{End: s.End, ExitCode: s.ExitCode, NNodes: s.NNodes, Nodes: s.Nodes, NTasks: s.NTasks,
			ReqUID: reqUID(s.ReqUID), Start: s.Start, State: uint16(s.State),
			StepID:   codec.JobStepID{JobID: j.ID, StepID: s.ID, StepHetComp: codec.NoVal},
			StepName: s.Name, SubmitLine: s.SubmitLine, TaskDist: s.TaskDist, TRESAlloc: s.TresAlloc,
			SysCPUSec: s.SysCPUus / 1e6, SysCPUUsec: uint32(s.SysCPUus % 1e6),
			UserCPUSec: s.UserCPUus / 1e6, UserCPUUsec: uint32(s.UserCPUus % 1e6), EmptyStrs: stepStatsEmpty}
		switch {
		case s.ReqCPUFreqSet:
			ds.ReqCPUFreqMin, ds.ReqCPUFreqMax, ds.ReqCPUFreqGov = s.ReqCPUFreq[0], s.ReqCPUFreq[1], s.ReqCPUFreq[2]
		case s.ID < codec.SLURM_MAX_NORMAL_STEP_ID:
			// An srun step: srun without --cpu-freq asks NO_VAL
			// (sacct: Unknown); slurmstepd's own steps have 0.
			ds.ReqCPUFreqMin, ds.ReqCPUFreqMax, ds.ReqCPUFreqGov = codec.NoVal, codec.NoVal, codec.NoVal
		}
		ds.TotCPUSec, ds.TotCPUUsec = (s.UserCPUus+s.SysCPUus)/1e6, uint32((s.UserCPUus+s.SysCPUus)%1e6)
		if s.MaxRSS > 0 {
			// jobacct_gather's TRES usage: memory (TRES 2) in bytes, and
			// where the largest was (sacct's MaxRSS, MaxRSSNode,
			// MaxRSSTask).
			ds.Stats.TRESUsage[1] = fmt.Sprintf("2=%d", s.MaxRSS)
			ds.Stats.TRESUsage[2] = fmt.Sprintf("2=%d", s.MaxRSSNode)
			ds.Stats.TRESUsage[3] = fmt.Sprintf("2=%d", s.MaxRSSTask)
		}
		end := s.End
		if end == 0 {
			end = now
		}
		ds.Elapsed = uint32(max(end-s.Start, 0))
		if s.ExitCode != 0 && s.ExitCode>>8 > d.DerivedEC>>8 {
			d.DerivedEC = s.ExitCode
		}
		d.Steps = append(d.Steps, ds)
	}
	kept := d.Steps[:0]
	for _, st := range d.Steps {
		if (win[1] == 0 || st.Start <= win[1]) && (st.End == 0 || st.End >= win[0]) {
			kept = append(kept, st)
		}
	}
	d.Steps = kept
	sort.SliceStable(d.Steps, func(a, b int) bool {
		return int32(d.Steps[a].StepID.StepID) < int32(d.Steps[b].StepID.StepID)
	})
	return d
}

// tresIDs turns a job's TRES string as squeue shows it ("cpu=2,mem=4G,
// node=1,billing=2") into accounting's ("1=2,2=4096,4=1,5=2": TRES ids,
// memory in MB); TRES with no id among slurmdbd's built-in ones are left
// out.
func tresIDs(s string) string {
	ids := map[string]int{"cpu": 1, "mem": 2, "energy": 3, "node": 4, "billing": 5, "fs/disk": 6, "vmem": 7, "pages": 8}
	var b strings.Builder
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		id, known := ids[k]
		if !ok || !known || v == "" {
			continue
		}
		n := v
		if id == 2 {
			mult := uint64(1)
			switch v[len(v)-1] {
			case 'K':
				mult, v = 0, v[:len(v)-1] // below a MB: rounds down
			case 'M':
				v = v[:len(v)-1]
			case 'G':
				mult, v = 1024, v[:len(v)-1]
			case 'T':
				mult, v = 1024*1024, v[:len(v)-1]
			}
			x, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				continue
			}
			n = strconv.FormatUint(x*mult, 10)
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(id) + "=" + n)
	}
	return b.String()
}

func batchTRES(j *state.Job) string {
	cpus := j.MinCPUs
	if n := len(expandNodes(j.Nodes)); n > 1 && cpus > 0 {
		cpus = max(cpus/uint32(n), 1) // the first node's share, roughly
	}
	s := fmt.Sprintf("1=%d", max(cpus, 1))
	if j.MemPerNodeMB > 0 {
		s += fmt.Sprintf(",2=%d", j.MemPerNodeMB)
	}
	return s + ",4=1"
}

func firstNode(list string) string {
	if ns := expandNodes(list); len(ns) > 0 {
		return ns[0]
	}
	return ""
}
