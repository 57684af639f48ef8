package ctld

import (
	"context"
	"slices"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// willRun answers REQUEST_JOB_WILL_RUN (sbatch/salloc --test-only): the
// job description is validated exactly as a submission, then answered
// with where and when it would start (slurmctld's job_allocate with
// will_run set, then _job_start_data in job_scheduler.c). No job is
// kept.
//
// Like slurmctld, a request that passes validation consumes a job ID
// (slurmctld creates the job record, answers, then purges it): a real
// 24.11 prints "Job 1 to start ..." and the next sbatch gets ID 2. One
// refused during validation (bad partition, impossible resources)
// consumes none.
//
// Difference from slurmctld, on purpose: the start time is "now" when
// enough nodes of the partition have the CPUs free (or --begin when
// later); otherwise the latest expected end of the partition's running
// jobs, a conservative version of slurmctld's quick estimate.
func (c *Controller) willRun(req *Request) Reply {
	var d codec.JobDesc
	r := codec.NewReader(req.Body)
	if err := d.Decode(&r, req.Version); err != nil {
		c.logf("will-run from uid %d: undecodable job description: %v", req.UID, err)
		return rcReply(codec.CodeOf(err))
	}
	if d.Script == "" {
		// salloc and srun --test-only, and a het job's later
		// components: slurmctld checks those as allocations (no script,
		// no environment of their own).
		d.Script = allocScript
		if len(d.Environment) == 0 {
			d.Environment = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
		}
	}
	job, _, err := c.translateJobDesc(req, &d)
	if err != nil {
		c.logf("will-run from uid %d refused: %v", req.UID, err)
		return refusal(err, req.Version)
	}
	id, err := c.opt.Store.ReserveID()
	if err != nil {
		c.logf("will-run from uid %d: %v", req.UID, err)
		return rcReply(codec.ESLURM_ERROR_ON_DESC_TO_RECORD_COPY)
	}
	part := c.runPartition(job)
	if part == nil {
		return rcReply(codec.ESLURM_INVALID_PARTITION_NAME)
	}

	topo := c.currentTopology()
	now := time.Now().Unix()
	start := max(now, job.BeginTime)

	nodes, procs, ok := c.placeJob(job, part, topo, true)
	if !ok {
		// Not now: would it fit on the partition's nodes once they are
		// free? Then it starts when the running jobs there have ended.
		if nodes, procs, ok = c.placeJob(job, part, topo, false); !ok {
			return rcReply(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL)
		}
		start = max(start, c.partitionFreeAt(part.Name, now))
	}

	resp := codec.WillRunResponse{
		StepID:         codec.JobStepID{JobID: id, StepID: codec.NoVal, StepHetComp: codec.NoVal},
		NodeList:       hostlist.Compress(nodes),
		PartName:       part.Name,
		PreempteesNull: true,
		ProcCnt:        procs,
		StartTime:      start,
	}
	w := codec.Writer{}
	resp.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_JOB_WILL_RUN, Body: w.B}
}

// currentTopology asks the engine for fresh occupancy, falling back to
// the topology loaded at start.
func (c *Controller) currentTopology() *translate.Topology {
	if c.opt.Backend != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if t, err := c.opt.Backend.Topology(ctx); err == nil && t != nil {
			return t
		}
	}
	return c.cluster().topo
}

// placeJob picks nodes of p for j in the partition's order, as
// select/cons_tres does for a plain request: at least MinNodes (at most
// MaxNodes) usable nodes, each giving at least one task's CPUs, until
// MinCPUs are covered. With free, only the CPUs not occupied count and
// an exclusive job needs an empty node. It returns the nodes and the
// processor count slurmctld reports (whole nodes for --exclusive).
func (c *Controller) placeJob(j *state.Job, p *conf.Partition, topo *translate.Topology, free bool) ([]string, uint32, bool) {
	var req, exc []string
	if j.ReqNodes != "" {
		var err error
		if req, err = hostlist.Expand(j.ReqNodes); err != nil {
			return nil, 0, false
		}
	}
	if j.ExcNodes != "" {
		exc, _ = hostlist.Expand(j.ExcNodes)
	}
	maxNodes := j.MaxNodes
	if maxNodes == 0 || maxNodes == codec.NoVal {
		maxNodes = uint32(len(p.Nodes))
	}
	perTask := max(uint32(j.CPUsPerTask), 1)
	// Usable nodes of the partition, in its order, with the CPUs they
	// can give (whole tasks only).
	type cand struct {
		name        string
		avail, cpus uint32
	}
	var usable []cand
	for _, name := range p.Nodes {
		if slices.Contains(exc, name) {
			continue
		}
		n := c.cluster().node(name)
		a := topoAgent(topo, name)
		if n == nil || a == nil || a.Status != translate.AgentAlive || !a.Schedulable {
			continue
		}
		avail := uint32(n.CPUs)
		if a.Capacity.CPU > 0 {
			avail = uint32(a.Capacity.CPU)
		}
		if free {
			used := uint32(a.Occupied.CPU + 0.999)
			if j.Exclusive && used > 0 {
				continue
			}
			avail -= min(used, avail)
		}
		if avail < perTask {
			continue
		}
		usable = append(usable, cand{name, avail - avail%perTask, uint32(n.CPUs)})
	}
	// Required nodes must all be usable and come first.
	var order []cand
	for _, name := range req {
		i := slices.IndexFunc(usable, func(x cand) bool { return x.name == name })
		if i < 0 {
			return nil, 0, false
		}
		order = append(order, usable[i])
	}
	for _, x := range usable {
		if !slices.Contains(req, x.name) {
			order = append(order, x)
		}
	}
	var chosen []string
	var got, whole uint32
	for _, x := range order {
		if uint32(len(chosen)) >= maxNodes {
			break
		}
		if uint32(len(chosen)) >= j.MinNodes && got >= j.MinCPUs && len(chosen) >= len(req) {
			break
		}
		chosen = append(chosen, x.name)
		got += x.avail
		whole += x.cpus
	}
	if len(chosen) == 0 || uint32(len(chosen)) < j.MinNodes || got < j.MinCPUs || len(chosen) < len(req) {
		return nil, 0, false
	}
	procs := max(j.MinCPUs, uint32(len(chosen))*perTask)
	if j.Exclusive {
		procs = whole
	}
	return chosen, procs, true
}

func topoAgent(t *translate.Topology, name string) *translate.Agent {
	if t == nil {
		return nil
	}
	for i := range t.Agents {
		if t.Agents[i].ID == name {
			return &t.Agents[i]
		}
	}
	return nil
}

// partitionFreeAt is the latest expected end of the jobs running in
// partition part (start + time limit; a year for unlimited ones, as the
// backfill scheduler assumes).
func (c *Controller) partitionFreeAt(part string, now int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := now
	for _, e := range c.jobs {
		if e.pending() || e.finished() {
			continue
		}
		j := e.job()
		if j.Partition != part || codec.JobIsPending(j.State) || codec.JobIsFinished(j.State) {
			continue
		}
		end := now + 365*24*3600
		if j.TimeLimit != codec.NoVal && j.TimeLimit != conf.Infinite && j.StartTime > 0 {
			end = j.StartTime + int64(j.TimeLimit)*60
		}
		at = max(at, end)
	}
	return at
}
