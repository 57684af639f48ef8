package ctld

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Job priorities follow the config's PriorityType, as slurmctld's
// set_job_prio does at submission, release and requeue:
//
//   - priority/basic (the default): one less than the lowest priority
//     given so far (nextPriority), so that jobs run in the order they
//     became eligible;
//   - priority/multifactor: the weighted sum of the factors slurmctld's
//     plugin computes (set_priority_factors), each in [0, 1] times its
//     PriorityWeight*: age since the job began to accrue (0 when the
//     priority is set at submission), fair share (Fair Tree's factor of
//     the job's association, with accounting), job size (favouring large
//     jobs unless PriorityFavorSmall), partition (PriorityJobFactor over
//     the largest one) and QOS (none have a priority here), minus the
//     nice value. sprio shows the same factors (priorityFactors).
//
// As in slurmctld, a priority an operator set directly is kept, and a
// held job's is 0.

// heldRequeued is state.Job.HeldBy for a job requeued in held state
// (scontrol requeuehold): a user hold whose reason reads "job requeued in
// held state".
const heldRequeued = 3

// prioParams are the config's priority settings.
type prioParams struct {
	multifactor                         bool
	wAge, wAssoc, wFS, wJS, wPart, wQOS float64
	maxAge                              float64 // seconds
	favorSmall, sizeRelative            bool
	noNormalPart                        bool
}

func (c *Controller) prioParams() prioParams {
	cfg := c.config()
	p := prioParams{multifactor: strings.EqualFold(cfg.Get("PriorityType", "priority/basic"), "priority/multifactor")}
	if !p.multifactor {
		return p
	}
	k := slurmConf{cfg: cfg}
	p.wAge, p.wAssoc, p.wFS = float64(k.u32("PriorityWeightAge", 0)), float64(k.u32("PriorityWeightAssoc", 0)), float64(k.u32("PriorityWeightFairshare", 0))
	p.wJS, p.wPart, p.wQOS = float64(k.u32("PriorityWeightJobSize", 0)), float64(k.u32("PriorityWeightPartition", 0)), float64(k.u32("PriorityWeightQOS", 0))
	p.maxAge = 7 * 24 * 3600
	if v := cfg.Get("PriorityMaxAge", ""); v != "" {
		if m, err := conf.ParseTime(v); err == nil && m != conf.Infinite {
			p.maxAge = float64(m) * 60
		}
	}
	p.favorSmall = k.truth("PriorityFavorSmall")
	flags := cfg.Get("PriorityFlags", "")
	p.sizeRelative = containsFold(flags, "SMALL_RELATIVE_TO_TIME")
	p.noNormalPart = containsFold(flags, "NO_NORMAL_PART") || containsFold(flags, "NO_NORMAL_ALL")
	return p
}

// factors are a job's weighted priority factors, as sprio shows them.
type factors struct {
	age, assoc, fs, js, part, qos float64
}

func (f factors) sum() float64 { return f.age + f.assoc + f.fs + f.js + f.part + f.qos }

// jobFactors is slurmctld's set_priority_factors times the weights: at
// time now, for a job that began to accrue age at accrue (0: not yet),
// whose association's fair-share factor is fs.
func (c *Controller) jobFactors(p prioParams, j *state.Job, now, accrue int64, fs float64) factors {
	var f factors
	if p.wAge > 0 && accrue > 0 && p.maxAge > 0 {
		age := 0.0
		if now > accrue {
			age = float64(now - accrue)
		}
		f.age = math.Min(age/p.maxAge, 1)
	}
	f.fs = fs
	cl := c.cluster()
	nodes, cpus := len(cl.nodes), 0
	for _, n := range cl.nodes {
		cpus += int(n.CPUs)
	}
	if p.wJS > 0 && nodes > 0 && cpus > 0 {
		cpuCnt := float64(j.MinCPUs)
		minNodes := float64(max(j.MinNodes, 1))
		var js float64
		switch {
		case p.sizeRelative:
			js = math.Max(minNodes*float64(cpus)/float64(nodes), cpuCnt)
			limit := 1.0
			if j.TimeLimit != codec.NoVal && j.TimeLimit != codec.Infinite {
				limit = float64(j.TimeLimit)
			}
			js = js / limit / float64(cpus)
			if p.favorSmall {
				js = 1 - js
			}
		case p.favorSmall:
			if float64(nodes) > minNodes {
				js = (float64(nodes) - minNodes) / float64(nodes)
			}
			if cpuCnt > 0 {
				js = (js + (float64(cpus)-cpuCnt)/float64(cpus)) / 2
			}
		default: // favour large jobs
			js = minNodes / float64(nodes)
			if cpuCnt > 0 {
				js = (js + cpuCnt/float64(cpus)) / 2
			}
		}
		f.js = math.Min(math.Max(js, 0), 1)
	}
	if p.wPart > 0 {
		var factor, top uint16
		for i := range cl.parts {
			top = max(top, cl.parts[i].PriorityFactor)
			if cl.parts[i].Name == firstPartition(j.Partition) {
				factor = cl.parts[i].PriorityFactor
			}
		}
		switch {
		case factor == 0:
		case p.noNormalPart:
			f.part = float64(factor)
		case top > 0:
			f.part = float64(factor) / float64(top)
		}
	}
	f.age *= p.wAge
	f.assoc *= p.wAssoc
	f.fs *= p.wFS
	f.js *= p.wJS
	f.part *= p.wPart
	f.qos *= p.wQOS
	return f
}

// firstPartition is the partition a pending job with a list is
// prioritized in (the first of the list).
func firstPartition(list string) string {
	name, _, _ := strings.Cut(list, ",")
	return name
}

// setJobPrio is slurmctld's set_job_prio for the config's PriorityType:
// the priority j gets now (it must not be held). Callers hold c.mu.
func (c *Controller) setJobPrio(j *state.Job, now int64) uint32 {
	if j.PrioSet && j.Priority > 0 {
		return j.Priority // an operator's, kept (slurmctld's direct_set_prio)
	}
	p := c.prioParams()
	if !p.multifactor {
		return c.nextPriority()
	}
	// Set at submission, release and requeue: the job has not begun to
	// accrue age (slurmctld sets accrue_time when the scheduler first
	// finds the job eligible, after this).
	return prioOf(c.jobFactors(p, j, now, 0, c.fsFactor(j)), j)
}

// prioOf is the priority the weighted factors f give job j: their sum
// less its nice value, at least 1 (0 is a hold).
func prioOf(f factors, j *state.Job) uint32 {
	prio := f.sum() - float64(j.Nice)
	if prio < 1 {
		prio = 1
	}
	return uint32(min(prio, math.MaxUint32))
}

// ageAt is the accrue time priority/multifactor's factors use at time t:
// the job's, if it began to accrue by then, else none.
func ageAt(j *state.Job, t int64) int64 {
	if j.AccrueTime > 0 && j.AccrueTime <= t {
		return j.AccrueTime
	}
	return 0
}

// recalcPriorities is slurmctld's periodic pass (the decay thread's
// decay_apply_weighted_factors, every PriorityCalcPeriod) under
// priority/multifactor: every pending job that is not held and whose
// priority no operator set gets the priority its factors give now, age
// included. sprio then shows the factors of this pass (prioCalcAt).
func (c *Controller) recalcPriorities(now int64) {
	p := c.prioParams()
	if !p.multifactor {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prioCalcAt = now
	var ents []*jobEntry
	var jobs []*state.Job
	for _, e := range c.jobs {
		j := e.hot
		if j == nil || !codec.JobIsPending(e.state) || e.priority == 0 || j.PrioSet {
			continue
		}
		prio := prioOf(c.jobFactors(p, j, now, ageAt(j, now), c.fsFactor(j)), j)
		if prio == j.Priority {
			continue
		}
		nj := *j
		nj.Priority = prio
		ents, jobs = append(ents, e), append(jobs, &nj)
	}
	if len(jobs) == 0 {
		return
	}
	if err := c.opt.Store.Put(jobs...); err != nil {
		c.logf("priority recalculation: %v", err)
		return
	}
	for i, e := range ents {
		c.replace(e, jobs[i])
	}
	c.rebuild(now)
}

// fsFactor is the fair-share factor of the job's association, as
// sshare's FairShare column shows it (Fair Tree); 0 without accounting
// (slurmctld's job then has no association).
func (c *Controller) fsFactor(j *state.Job) float64 {
	if !c.accountingOn() {
		return 0
	}
	fs, ok := c.fsCache.get(j.Account, j.UserID)
	if !ok {
		return 0
	}
	return fs
}

// accountingOn reports whether the operator's config names a slurmdbd
// (AccountingStorageType=accounting_storage/slurmdbd): jobs then get
// the terms of a cluster with accounting. The server's own slurmdbd
// stand-in (which it adds when the file names none) serves sacct alone.
func (c *Controller) accountingOn() bool {
	cfg := c.config()
	return strings.Contains(cfg.Get("AccountingStorageType", ""), "slurmdbd") && cfg.Get("FrontendImplicitAccounting", "") != "yes"
}

// fairShares keeps the associations' fair-share factors for
// priority/multifactor (Fair Tree's, from the history), refreshed every
// PriorityCalcPeriod outside c.mu (assocTree reads the store and takes
// c.mu itself).
type fairShares struct {
	mu    sync.Mutex
	byKey map[pairKey]float64
	byUID map[uint32]float64 // the user's first association (a job naming no account)
}

func (f *fairShares) get(acct string, uid uint32) (float64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if acct == "" {
		v, ok := f.byUID[uid]
		return v, ok
	}
	v, ok := f.byKey[pairKey{acct, uid}]
	return v, ok
}

func (f *fairShares) set(rows []*assocRow) {
	byKey, byUID := map[pairKey]float64{}, map[uint32]float64{}
	for _, r := range rows {
		if r.user == "" {
			continue
		}
		byKey[pairKey{r.acct, r.uid}] = r.fsFactor
		if _, ok := byUID[r.uid]; !ok {
			byUID[r.uid] = r.fsFactor
		}
	}
	f.mu.Lock()
	f.byKey, f.byUID = byKey, byUID
	f.mu.Unlock()
}

// refreshFairShares recomputes the fair-share factors now and every
// PriorityCalcPeriod (default 5 minutes), under priority/multifactor.
func (c *Controller) refreshFairShares(ctx context.Context) {
	for {
		if c.prioParams().multifactor && c.accountingOn() {
			c.fsCache.set(c.assocTree(time.Now().Unix()))
		}
		period := 5 * time.Minute
		if v := c.config().Get("PriorityCalcPeriod", ""); v != "" {
			if m, err := conf.ParseTime(v); err == nil && m > 0 && m != conf.Infinite {
				period = time.Duration(m) * time.Minute
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
		// Priorities were set at submission (or recovered at start);
		// each pass adds the age the jobs accrued since.
		c.recalcPriorities(time.Now().Unix())
	}
}

// multifactorInfo is sprio's answer under priority/multifactor: each
// pending job that is not held, with its weighted factors (slurmctld
// sends pending jobs only). A priority an operator set (scontrol update
// priority=N) is not told apart here: its factors are sent as computed.
func (c *Controller) multifactorInfo(p prioParams, m *codec.PriorityFactorsRequest) codec.PriorityFactorsInfo {
	var info codec.PriorityFactorsInfo
	info.EmptyList = true
	now := time.Now().Unix()
	c.mu.Lock()
	calcAt := c.prioCalcAt
	var jobs []state.Job
	for _, e := range c.jobs {
		if !codec.JobIsPending(e.state) || e.priority == 0 {
			continue
		}
		if j := e.job(); j.Reason == codec.WAIT_DEPENDENCY || j.Reason == codec.WAIT_DEP_INVALID || j.BeginTime > now {
			// Not independent yet (a dependency, a begin time ahead):
			// slurmctld has computed no factors for it.
			continue
		}
		if m.JobIDsSet && !slices.Contains(m.JobIDs, e.id) {
			continue
		}
		if m.UIDsSet && !slices.Contains(m.UIDs, e.userID) {
			continue
		}
		jobs = append(jobs, *e.job())
	}
	c.mu.Unlock()
	for i := range jobs {
		j := &jobs[i]
		if m.PartitionsSet && m.Partitions != "" && !slices.Contains(strings.Split(m.Partitions, ","), firstPartition(j.Partition)) {
			continue
		}
		o := codec.PriorityFactorsJob{StepID: codec.JobStepID{JobID: j.ID, StepID: codec.NoVal, StepHetComp: codec.NoVal},
			UserID: j.UserID, Account: j.Account, Partition: firstPartition(j.Partition), QOS: j.QOS}
		// The factors of the last periodic pass (slurmctld's sprio shows
		// those the job's priority was computed with): age as of then.
		f := c.jobFactors(p, j, calcAt, ageAt(j, calcAt), c.fsFactor(j))
		o.Factors = codec.PriorityFactors{Age: f.age, Assoc: f.assoc, FS: f.fs, JS: f.js, Part: f.part, QOS: f.qos,
			Site: codec.NiceOffset, Nice: codec.NiceOffset + uint32(j.Nice)}
		info.Jobs = append(info.Jobs, o)
	}
	return info
}
