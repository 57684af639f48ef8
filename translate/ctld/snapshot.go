package ctld

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
)

const nVersions = 8

func vidx(v uint16) int { return int(v>>8) - int(codec.MinVersion>>8) }

// reply kinds cached per snapshot and version.
const (
	kPartInfo = iota
	kPartInfoAll
	kNodeInfo
	kNodeInfoAll
	kBuildInfo
	kFedInfo
	kLicenseInfo
	kResvInfo
	kRC0
	kNoChange
	kEINVAL
	kNotSupported
	kJobState // unfiltered RESPONSE_JOB_STATE (jobstate.go)
	nKinds
)

// nodeAlloc is what running jobs hold of a node.
type nodeAlloc struct {
	cpus  uint32
	memMB uint64
	jobs  int
}

type slot struct {
	once  sync.Once
	frame []byte
}

// Snapshot is an immutable view of the cluster and its jobs. Replies are
// encoded on first use per (version, kind) and then served as bytes.
type Snapshot struct {
	Gen         uint64
	JobsUpdate  int64 // last change to any job (seconds)
	NodesUpdate int64
	PartsUpdate int64
	ConfUpdate  int64
	built       time.Time   // when it was published
	jobs        []*jobEntry // in ID order
	cl          *cluster    // nodes and partitions
	topo        *translate.Topology
	alloc       map[string]*nodeAlloc // node name -> what running jobs hold
	holders     []*jobEntry           // the running and completing entries alloc was made of
	steps       []codec.JobStepInfo   // live job steps (squeue -s)
	c           *Controller
	slots       [nVersions][nKinds]slot
	recs        [nVersions][nEcho]jobRecords
	idx         jobIndexes
	jstate      jobStateTable
}

// NumJobs is the number of job records in the snapshot.
func (s *Snapshot) NumJobs() int { return len(s.jobs) }

// Jobs returns the snapshot's job records in ID order, reading the cold
// ones from the store (for tests and tools, not the serving path).
func (s *Snapshot) Jobs() []*state.Job {
	out := make([]*state.Job, len(s.jobs))
	for i, e := range s.jobs {
		out[i] = e.job()
	}
	return out
}

// cached returns the prebuilt frame for (version, kind), building it once.
func (s *Snapshot) cached(version uint16, kind int, build func(w *codec.Writer) uint16) []byte {
	sl := &s.slots[vidx(version)][kind]
	sl.once.Do(func() {
		w := codec.Writer{B: make([]byte, 0, 256)}
		msgType := build(&w)
		sl.frame = codec.AppendFrame(make([]byte, 0, len(w.B)+codec.HeaderLen+4), version, msgType, nil, w.B)
	})
	return sl.frame
}

func (s *Snapshot) rc(version uint16, rc uint32) Reply {
	kind := -1
	switch rc {
	case codec.SLURM_SUCCESS:
		kind = kRC0
	case codec.SLURM_NO_CHANGE_IN_DATA:
		kind = kNoChange
	case codec.EINVAL:
		kind = kEINVAL
	case codec.ESLURM_NOT_SUPPORTED:
		kind = kNotSupported
	}
	if kind < 0 {
		return rcReply(rc)
	}
	return Reply{Frame: s.cached(version, kind, func(w *codec.Writer) uint16 {
		w.U32(rc)
		return codec.RESPONSE_SLURM_RC
	})}
}

// rebuild publishes a new snapshot of c.jobs; callers hold c.mu or are in
// New. now is the change time in seconds.
func (c *Controller) rebuild(now int64) {
	c.dirty = false
	c.rebuildWith(now, true)
}

// rebuildCoalesce is how long changes the engine reports (a session
// handed over, started, ended) wait to be published together: a rebuild
// walks every job, and at 100,000 jobs one per event was most of what
// the server did while handing sessions over. Clients' own writes
// (sbatch, scancel, update) still publish at once.
const rebuildCoalesce = 20 * time.Millisecond

// rebuildSoon publishes the engine's changes within rebuildCoalesce
// (c.mu held).
func (c *Controller) rebuildSoon() {
	if c.dirty {
		return
	}
	c.dirty = true
	time.AfterFunc(rebuildCoalesce, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.dirty {
			c.rebuild(time.Now().Unix())
		}
	})
}

// rebuildWith is rebuild; jobs false: only the cluster (topology)
// changed, so job listings keep their last_update.
func (c *Controller) rebuildWith(now int64, jobs bool) {
	start := time.Now()
	old := c.snap.Load()
	cl := c.cluster()
	s := &Snapshot{c: c, cl: cl, topo: cl.topo}
	s.jobs = c.jobs[:len(c.jobs):len(c.jobs)] // shared: see ownJobs
	c.jobsShared = true
	s.steps = c.stepInfos()
	// A submission appends to the old snapshot's jobs: only what it
	// appended needs looking at (each look reads an entry, a cache miss
	// per job at 100,000 of them).
	appended := appendedOnly(old, s.jobs)
	from := 1
	if appended {
		from = max(len(old.jobs), 1)
	}
	for i := from; i < len(s.jobs); i++ {
		if s.jobs[i-1].id >= s.jobs[i].id {
			// addJob keeps them in order, so this does not happen;
			// lookups depend on it.
			s.jobs = slices.Clone(s.jobs)
			slices.SortFunc(s.jobs, func(a, b *jobEntry) int { return cmp.Compare(a.id, b.id) })
			appended = false
			break
		}
	}
	// The jobs holding nodes. Most rebuilds (a submission, a pending
	// job's change) leave them as they were: they are compared with the
	// old list as they are found, and a new list is made only from the
	// first difference (at 100,000 running jobs a list per submission
	// was most of the garbage a submission made).
	var prev []*jobEntry
	if old != nil {
		prev = old.holders
	}
	same, k := true, 0
	if appended {
		// A submission: the old jobs as they were, and new ones that
		// hold nothing. Comparing the two lists' pointers reads no
		// entry, where the walk below reads every one (at 100,000
		// running jobs most of what a submission cost).
		s.holders, k = prev[:len(prev):len(prev)], len(prev)
	} else {
		for _, e := range s.jobs {
			if !e.holdsNodes() {
				continue
			}
			if same {
				if k < len(prev) && prev[k] == e {
					k++
					continue
				}
				same = false
				s.holders = make([]*jobEntry, k, len(prev)+16)
				copy(s.holders, prev[:k])
			}
			s.holders = append(s.holders, e)
		}
		if same {
			s.holders = prev[:k:k] // the old list, or a prefix of it (entries are immutable)
		}
	}
	unchanged := same && k == len(prev)
	// Entries are immutable and the old snapshot keeps its own alive, so
	// the same entries in the same order mean the same allocation: most
	// rebuilds reuse it instead of walking every running job's nodes
	// again.
	switch {
	case old != nil && old.cl == cl && unchanged:
		s.alloc = old.alloc
	case old != nil && old.cl == cl:
		// A few jobs started or ended (an event): the old allocation
		// less what the leaving entries held plus what the new ones
		// hold, not a walk over every running job (100,000 of them on
		// Backend.AI, and a hand-over rate of hundreds a second).
		s.alloc = allocDelta(old.alloc, old.holders, s.holders, cl)
	default:
		s.alloc = allocOf(s.holders, cl)
	}
	if old == nil {
		s.JobsUpdate, s.NodesUpdate, s.PartsUpdate, s.ConfUpdate = now, now, now, now
	} else {
		s.Gen = old.Gen + 1
		// Node allocation follows the jobs, so nodes change with them.
		s.JobsUpdate, s.NodesUpdate, s.PartsUpdate, s.ConfUpdate = now, now, old.PartsUpdate, max(old.ConfUpdate, c.nodes.confUpdate)
		if !jobs {
			s.JobsUpdate = old.JobsUpdate
		}
		if old.cl != cl {
			s.PartsUpdate = now
		}
	}
	s.built = time.Now()
	c.rebuilds.record(s.built.Sub(start))
	c.snap.Store(s)
	if jobs {
		for _, f := range c.shown {
			f()
		}
		c.shown = c.shown[:0]
	}
}

// appendedOnly reports whether jobs is old's jobs with only entries that
// hold no nodes (pending, held, finished) appended.
func appendedOnly(old *Snapshot, jobs []*jobEntry) bool {
	if old == nil || len(jobs) < len(old.jobs) {
		return false
	}
	// The same array: the old snapshot's part of it is as it was (a
	// change in place copies a shared array first, ownJobs).
	if len(old.jobs) == 0 || &jobs[0] != &old.jobs[0] {
		for i, e := range old.jobs {
			if jobs[i] != e {
				return false
			}
		}
	}
	for _, e := range jobs[len(old.jobs):] {
		if e.holdsNodes() {
			return false
		}
	}
	return true
}

// holdsNodes: a running or completing job, one the node allocation counts.
func (e *jobEntry) holdsNodes() bool {
	return codec.JobIsRunning(e.state) || e.state&codec.JOB_COMPLETING != 0
}

// allocOf is what the running and completing jobs hold on each node.
func allocOf(holders []*jobEntry, cl *cluster) map[string]*nodeAlloc {
	alloc := map[string]*nodeAlloc{}
	for _, e := range holders {
		hold(alloc, e, cl, 1, nil)
	}
	return alloc
}

// allocDelta is allocOf(now) computed from allocOf(before) = old: both
// lists are sorted by job id, and an entry is the same job record only
// if it is the same pointer (entries are immutable). old is not changed
// (a snapshot in use holds it); the nodes touched get new records. With
// most of the list changed, a fresh walk is as cheap.
func allocDelta(old map[string]*nodeAlloc, before, now []*jobEntry, cl *cluster) map[string]*nodeAlloc {
	var gone, came []*jobEntry
	i, k := 0, 0
	for i < len(before) || k < len(now) {
		switch {
		case k == len(now) || (i < len(before) && before[i].id < now[k].id):
			gone = append(gone, before[i])
			i++
		case i == len(before) || now[k].id < before[i].id:
			came = append(came, now[k])
			k++
		default:
			if before[i] != now[k] {
				gone, came = append(gone, before[i]), append(came, now[k])
			}
			i++
			k++
		}
		if len(gone)+len(came) > len(now)/4+16 {
			return allocOf(now, cl)
		}
	}
	alloc := make(map[string]*nodeAlloc, len(old))
	for name, a := range old {
		alloc[name] = a
	}
	fresh := map[*nodeAlloc]bool{} // records made here, changed in place
	for _, e := range gone {
		hold(alloc, e, cl, -1, fresh)
	}
	for _, e := range came {
		hold(alloc, e, cl, 1, fresh)
	}
	for name, a := range alloc {
		if a.jobs == 0 {
			delete(alloc, name) // as allocOf, which has no record for an idle node
		}
	}
	return alloc
}

// hold adds (sign 1) or takes back (-1) what job entry e holds on each of
// its nodes. Records not in fresh are shared with an older snapshot:
// they are copied before the change (fresh nil: all are this map's).
func hold(alloc map[string]*nodeAlloc, e *jobEntry, cl *cluster, sign int, fresh map[*nodeAlloc]bool) {
	j := e.job()
	if j.Nodes == "" {
		return
	}
	names := e.expandedNodes(j)
	if len(names) == 0 {
		return
	}
	n := uint64(len(names))
	for _, name := range names {
		a := alloc[name]
		switch {
		case a == nil:
			a = &nodeAlloc{}
			alloc[name] = a
			if fresh != nil {
				fresh[a] = true
			}
		case fresh != nil && !fresh[a]:
			c := *a
			a = &c
			alloc[name] = a
			fresh[a] = true
		}
		cpus := uint32((uint64(j.MinCPUs) + n - 1) / n)
		var mem uint64
		if j.MemPerCPUMB > 0 {
			mem = j.MemPerCPUMB * uint64(j.MinCPUs) / n
		} else if j.MemPerNodeMB > 0 {
			mem = j.MemPerNodeMB
		} else if nd := cl.node(name); nd != nil {
			mem = nd.RealMemory // whole node's memory
		}
		if sign > 0 {
			a.cpus, a.memMB, a.jobs = a.cpus+cpus, a.memMB+mem, a.jobs+1
		} else {
			a.cpus, a.memMB, a.jobs = a.cpus-cpus, a.memMB-mem, a.jobs-1
		}
	}
}

// unchanged reports whether an info request's last_update lets us answer
// SLURM_NO_CHANGE_IN_DATA: slurmctld does so when the client's time is
// strictly newer than the last change (last_update - 1 >= server time).
func unchanged(lastUpdate, serverUpdate int64) bool {
	return lastUpdate != 0 && lastUpdate-1 >= serverUpdate
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
