package ctld

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// Figures for the metrics endpoint: what an operator watching slurmctld
// with an exporter sees (jobs by state, nodes by state, CPUs, sdiag's
// job counters), read from the current snapshot, plus how the snapshot
// itself is kept (its age and rebuild times).

// JobCount is the number of jobs in one state and partition (array
// tasks counted one by one, as sdiag and squeue -r count them).
type JobCount struct {
	State     string // squeue's long name, lower case: pending, running, completed, ...
	Partition string
	N         int
}

// Gauges is one reading of the controller for the metrics endpoint.
type Gauges struct {
	Jobs []JobCount
	// PendingDependency: pending jobs waiting for a dependency.
	PendingDependency int
	// Nodes by the state sinfo shows, in an exporter's words: alloc, mix,
	// idle, drain (drained or draining), down, maint, comp, fail, future.
	Nodes                          map[string]int
	CPUsAlloc, CPUsIdle, CPUsOther uint64
	// sdiag's job counters (since start or `sdiag -r`).
	Submitted, Started, Completed, Canceled, Failed uint32
	// The snapshot: generation, when it was published, rebuilds since
	// start and their total and last duration.
	SnapshotGen     uint64
	SnapshotBuilt   time.Time
	Rebuilds        uint64
	RebuildTotal    time.Duration
	RebuildLast     time.Duration
	StoreTroubles   bool
	OpenConnections int64
}

// rebuildStats is what rebuildWith records of itself.
type rebuildStats struct {
	n, totalNs, lastNs atomic.Int64
}

func (r *rebuildStats) record(d time.Duration) {
	r.n.Add(1)
	r.totalNs.Add(int64(d))
	r.lastNs.Store(int64(d))
}

// jobFacts is what the job counts need of an entry that is not in
// memory (a cold record): read from the store once per entry (entries
// are immutable) and kept while the entry is in the snapshot.
type jobFacts struct {
	partition string
	reason    uint32
}

type factCache struct {
	mu sync.Mutex
	m  map[*jobEntry]jobFacts
}

// Gauges reads the figures off the current snapshot.
func (c *Controller) Gauges() Gauges {
	s := c.snap.Load()
	g := Gauges{
		Submitted: c.counters.submitted.Load(), Started: c.counters.started.Load(),
		Completed: c.counters.completed.Load(), Canceled: c.counters.canceled.Load(),
		Failed:      c.counters.failed.Load(),
		SnapshotGen: s.Gen, SnapshotBuilt: s.built,
		Rebuilds:     uint64(c.rebuilds.n.Load()),
		RebuildTotal: time.Duration(c.rebuilds.totalNs.Load()),
		RebuildLast:  time.Duration(c.rebuilds.lastNs.Load()),
	}
	if c.opt.Stats != nil {
		g.OpenConnections = c.opt.Stats.Conns.Load()
	}
	g.Jobs, g.PendingDependency = c.jobCounts(s)
	g.Nodes, g.CPUsAlloc, g.CPUsIdle, g.CPUsOther = c.nodeCounts(s)
	return g
}

// jobCounts counts the snapshot's jobs by state and partition.
func (c *Controller) jobCounts(s *Snapshot) ([]JobCount, int) {
	type key struct{ state, part string }
	counts := map[key]int{}
	dep := 0
	c.facts.mu.Lock()
	defer c.facts.mu.Unlock()
	old := c.facts.m
	next := make(map[*jobEntry]jobFacts, len(old))
	var scratch state.Job
	for _, e := range s.jobs {
		var f jobFacts
		if e.hot != nil {
			f = jobFacts{e.hot.Partition, e.hot.Reason}
		} else if k, ok := old[e]; ok {
			f = k
		} else {
			j := e.view(&scratch)
			f = jobFacts{strings.Clone(j.Partition), j.Reason}
		}
		if e.hot == nil {
			next[e] = f
		}
		n := 1
		if e.pending() && e.hot != nil {
			n = int(arrayTaskCount(e.hot))
		}
		name := strings.ToLower(codec.JobStateString(e.state))
		counts[key{name, f.partition}] += n
		if e.pending() && f.reason == codec.WAIT_DEPENDENCY {
			dep += n
		}
	}
	c.facts.m = next
	out := make([]JobCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, JobCount{State: k.state, Partition: k.part, N: n})
	}
	return out, dep
}

// nodeCounts counts nodes by the state sinfo shows and CPUs by use, from
// the records squeue and sinfo are sent (the current protocol's).
func (c *Controller) nodeCounts(s *Snapshot) (map[string]int, uint64, uint64, uint64) {
	nodes := map[string]int{}
	var alloc, idle, other uint64
	for i := range s.cl.nodes {
		ni := c.nodeInfo(s, &s.cl.nodes[i], codec.MaxVersion)
		st := nodeStateName(ni.NodeState, uint32(ni.AllocCPUs), uint32(ni.CPUs))
		nodes[st]++
		switch st {
		case "down", "drain", "fail", "future", "maint":
			other += uint64(ni.CPUs)
		default:
			alloc += uint64(ni.AllocCPUs)
			idle += uint64(ni.CPUs) - uint64(min(ni.AllocCPUs, ni.CPUs))
		}
	}
	return nodes, alloc, idle, other
}

// nodeStateName names a node's state as the exporters built on sinfo
// do: flags that take a node out of service first, then the base state,
// with ALLOCATED below the node's CPUs shown as mix (as clients do).
func nodeStateName(state, allocCPUs, cpus uint32) string {
	switch base := state & codec.NODE_STATE_BASE; {
	case state&codec.NODE_STATE_DRAIN != 0:
		return "drain"
	case state&codec.NODE_STATE_FAIL != 0:
		return "fail"
	case base == codec.NODE_STATE_DOWN:
		return "down"
	case state&codec.NODE_STATE_MAINT != 0:
		return "maint"
	case state&codec.NODE_STATE_COMPLETING != 0:
		return "comp"
	case base == codec.NODE_STATE_FUTURE:
		return "future"
	case base == codec.NODE_STATE_ALLOCATED && allocCPUs < cpus:
		return "mix"
	case base == codec.NODE_STATE_ALLOCATED:
		return "alloc"
	case base == codec.NODE_STATE_IDLE:
		return "idle"
	}
	return "unknown"
}
