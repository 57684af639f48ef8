package ctld

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/lablup/slurm-frontend/codec"
)

// REQUEST_JOB_STATE (squeue --only-job-state, 24.05+): every job's id and
// state, without its record. slurmctld answers it from its job list
// (job_state.c dump_job_state, job_mgr.c foreach_job_by_id_ro) with no
// permission check: PrivateData does not apply (proc_req.c
// _slurm_rpc_job_state takes no uid), so neither does it here. Unknown
// ids, and job id 0, add nothing; the answer is never an error.
//
// The entries are encoded once per snapshot (jobStateTable): an
// unfiltered request is one prebuilt frame per version (the body is the
// same in every version that has the message), a filtered one copies
// the entries of the jobs it names.

// jobStateTable is a snapshot's RESPONSE_JOB_STATE entries.
type jobStateTable struct {
	once  sync.Once
	built atomic.Bool
	// body is the unfiltered answer: the u32 count, then the entry of
	// every job in s.jobs order; offs[i] is where s.jobs[i]'s starts.
	body []byte
	offs []uint32
	// arrays maps an array job id to the positions in s.jobs of its
	// records, in slurmctld's order for a request naming the array
	// (see arrayOrder).
	arrays map[uint32][]int32
	// pending is the bitmap of each array's record of pending tasks, by
	// position in s.jobs.
	pending map[int32]*codec.HexBits
}

// jobStates returns the snapshot's table, building it when mayBlock (a
// pending array's record kept only in the store is read to get its
// tasks); nil when it is not built and mayBlock is false.
func (s *Snapshot) jobStates(mayBlock bool) *jobStateTable {
	t := &s.jstate
	if !t.built.Load() && !mayBlock {
		return nil
	}
	t.once.Do(func() {
		s.buildJobStates(t)
		t.built.Store(true)
	})
	return t
}

func (s *Snapshot) buildJobStates(t *jobStateTable) {
	w := codec.Writer{B: make([]byte, 0, 4+16*len(s.jobs))}
	w.U32(uint32(len(s.jobs)))
	t.offs = make([]uint32, len(s.jobs)+1)
	t.arrays = map[uint32][]int32{}
	t.pending = map[int32]*codec.HexBits{}
	for i, e := range s.jobs {
		t.offs[i] = uint32(len(w.B))
		ent := codec.JobStateEntry{JobID: e.id, ArrayJobID: e.arrayJobID, ArrayTaskID: codec.NoVal, State: e.state}
		if e.arrayJobID != 0 {
			ent.ArrayTaskID = e.arrayTaskID
			t.arrays[e.arrayJobID] = append(t.arrays[e.arrayJobID], int32(i))
			if e.arrayTaskID == codec.NoVal {
				ent.PendingTasks = pendingTaskBits(e)
				t.pending[int32(i)] = ent.PendingTasks
			}
		}
		codec.AppendJobStateEntry(&w, &ent)
	}
	t.offs[len(s.jobs)] = uint32(len(w.B))
	t.body = w.B
	for id, pos := range t.arrays {
		t.arrays[id] = s.arrayOrder(id, pos)
	}
}

// pendingTaskBits is the bitmap of an array's record of pending tasks as
// slurmctld sends it: as wide as the array was submitted (its
// task_id_bitmap keeps the size of the highest task asked for), nil when
// no task is left.
func pendingTaskBits(e *jobEntry) *codec.HexBits {
	j := e.job()
	if j.ArrayTasks == "" {
		return nil
	}
	a, err := parseArray(j.ArrayTasks, maxArrayIndex)
	if err != nil {
		return nil
	}
	n := int(a.max()) + 1
	if j.ArraySpec != "" {
		if all, err := parseArray(j.ArraySpec, maxArrayIndex); err == nil && int(all.max())+1 > n {
			n = int(all.max()) + 1
		}
	}
	return &codec.HexBits{NBits: uint32(n), Hex: a.hexOf(n)}
}

// arrayOrder orders the records of array job id (pos ascending, in
// s.jobs) as slurmctld answers a request naming the array
// (_foreach_job_by_id_array): the tasks split off its pending record,
// newest first (its hash chain is pushed at each split, and the record
// that became the last task joined it last), then the record of the
// pending tasks, if any.
func (s *Snapshot) arrayOrder(id uint32, pos []int32) []int32 {
	out := make([]int32, 0, len(pos))
	meta := int32(-1)
	for k := len(pos) - 1; k >= 0; k-- {
		e := s.jobs[pos[k]]
		switch {
		case e.id == id && e.arrayTaskID == codec.NoVal:
			meta = pos[k]
		case e.id == id:
			out = append([]int32{pos[k]}, out...) // the last task, the newest in the chain
		default:
			out = append(out, pos[k])
		}
	}
	if meta >= 0 {
		out = append(out, meta)
	}
	return out
}

// jobState answers REQUEST_JOB_STATE; ok false: the table is not built
// and mayBlock is false (a worker answers).
func (c *Controller) jobState(s *Snapshot, req *Request, mayBlock bool) (Reply, bool) {
	v := req.Version
	r := codec.NewReader(req.Body)
	var m codec.JobStateRequest
	if err := m.Decode(&r, v); err != nil {
		return s.rc(v, codec.CodeOf(err)), true
	}
	t := s.jobStates(mayBlock)
	if t == nil {
		return Reply{}, false
	}
	if len(m.Jobs) == 0 {
		return Reply{Frame: s.cached(v, kJobState, func(w *codec.Writer) uint16 {
			w.B = append(w.B, t.body...)
			return codec.RESPONSE_JOB_STATE
		})}, true
	}
	w := codec.Writer{B: make([]byte, 4, 4+16*len(m.Jobs))}
	n := 0
	add := func(i int32) {
		w.B = append(w.B, t.body[t.offs[i]:t.offs[i+1]]...)
		n++
	}
	for _, f := range m.Jobs {
		switch {
		case f.JobID == 0:
			// Never a job.
		case f.JobID == codec.NoVal:
			w.B = append(w.B, t.body[4:]...)
			n += len(s.jobs)
		case f.ArrayTaskID != codec.NoVal:
			s.jobStateTask(t, f.JobID, f.ArrayTaskID, add)
		case f.HetJobOffset != codec.NoVal:
			// No het jobs here: the component's id names a job as
			// the job id alone does.
			s.jobStateJob(t, f.JobID+f.HetJobOffset, add)
		default:
			s.jobStateJob(t, f.JobID, add)
		}
	}
	binary.BigEndian.PutUint32(w.B, uint32(n))
	return Reply{MsgType: codec.RESPONSE_JOB_STATE, Body: w.B}, true
}

// jobStateJob adds the entries a job id names: the job's own, or for the
// id of an array (its pending record, or the task that took it over)
// every record of the array.
func (s *Snapshot) jobStateJob(t *jobStateTable, id uint32, add func(int32)) {
	i := s.index(id)
	if i < 0 {
		return
	}
	if e := s.jobs[i]; e.arrayJobID != e.id {
		add(int32(i)) // a plain job, or a task split off under its own id
		return
	}
	for _, p := range t.arrays[id] {
		add(p)
	}
}

// jobStateTask adds the entries task of array id names (find_job_array_rec):
// the task's record once split off; while it is pending, the array's
// pending record (whole, with its bitmap: squeue picks the task out).
func (s *Snapshot) jobStateTask(t *jobStateTable, id, task uint32, add func(int32)) {
	for _, p := range t.arrays[id] {
		e := s.jobs[p]
		if e.arrayTaskID == task {
			add(p)
			return
		}
	}
	for _, p := range t.arrays[id] {
		e := s.jobs[p]
		if e.id == id && e.arrayTaskID == codec.NoVal {
			if t.pending[p].IsSet(int(task)) {
				add(p)
			}
			return
		}
	}
}
