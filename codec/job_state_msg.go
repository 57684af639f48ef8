package codec

// REQUEST_JOB_STATE (2057) / RESPONSE_JOB_STATE (2058): what
// `squeue --only-job-state` asks for (24.05 on: 23.11 has neither the
// message nor the option), the state of jobs without their records
// (job_state_request_msg_t, job_state_response_msg_t in
// src/common/slurm_protocol_pack.c). The layout is the same in every
// release that has the message: 26.05 packs it in a SLURM_25_11 branch
// and a SLURM_MIN branch whose bodies are identical.

// MaxJobID is MAX_JOB_ID (slurm/slurm.h): slurmctld refuses a count of
// job-state filters or answers at or above it.
const MaxJobID = 0x03ffffff

// JobStateFilter is one slurm_selected_step_t of the request (its step id
// is not sent): a job id, or NO_VAL for all jobs; an array task and a het
// job component offset, NO_VAL when not given.
type JobStateFilter struct {
	JobID        uint32
	ArrayTaskID  uint32
	HetJobOffset uint32
}

// JobStateRequest is job_state_request_msg_t: no filters = every job.
type JobStateRequest struct {
	Jobs []JobStateFilter
}

// jobStateSince is the first protocol with the message.
func jobStateSince(version uint16) bool { return version >= V24_05 }

func (m *JobStateRequest) Decode(r *Reader, version uint16) error {
	*m = JobStateRequest{}
	if !jobStateSince(version) {
		return ErrVersion
	}
	n, null := r.Count(12)
	if r.Err == nil && (null || n >= MaxJobID) {
		return ErrBadCount
	}
	if n > 0 {
		// Count bounds n by the bytes left: 12 bytes per entry.
		m.Jobs = make([]JobStateFilter, n)
	}
	for i := range m.Jobs {
		f := &m.Jobs[i]
		f.JobID = r.U32()
		f.ArrayTaskID = r.U32()
		f.HetJobOffset = r.U32()
	}
	return jcDone(r)
}

func (m *JobStateRequest) Encode(w *Writer, version uint16) {
	w.U32(uint32(len(m.Jobs)))
	for _, f := range m.Jobs {
		w.U32(f.JobID)
		w.U32(f.ArrayTaskID)
		w.U32(f.HetJobOffset)
	}
}

// JobStateEntry is one job_state_response_job_t. An array's record
// (ArrayJobID set) carries its task id (NO_VAL for the record of the
// pending tasks) and the pending tasks' bitmap (nil when none); any
// other record carries HetJobID (0 when not a het job component).
type JobStateEntry struct {
	JobID        uint32
	ArrayJobID   uint32
	ArrayTaskID  uint32
	PendingTasks *HexBits
	HetJobID     uint32
	State        uint32
}

// JobStateResponse is job_state_response_msg_t.
type JobStateResponse struct {
	Jobs []JobStateEntry
}

func (m *JobStateResponse) Decode(r *Reader, version uint16) error {
	*m = JobStateResponse{}
	if !jobStateSince(version) {
		return ErrVersion
	}
	// Smallest entry: job id, array job id 0, het job id, state.
	n, null := r.Count(16)
	if r.Err == nil && (null || n >= MaxJobID) {
		return ErrBadCount
	}
	if n > 0 {
		m.Jobs = make([]JobStateEntry, n)
	}
	for i := range m.Jobs {
		e := &m.Jobs[i]
		e.JobID = r.U32()
		e.ArrayJobID = r.U32()
		if e.ArrayJobID != 0 {
			e.ArrayTaskID = r.U32()
			e.PendingTasks = readHexBits(r)
		} else {
			e.HetJobID = r.U32()
			e.ArrayTaskID = NoVal
		}
		e.State = r.U32()
		if r.Err != nil {
			break
		}
	}
	return jcDone(r)
}

func (m *JobStateResponse) Encode(w *Writer, version uint16) {
	w.U32(uint32(len(m.Jobs)))
	for i := range m.Jobs {
		AppendJobStateEntry(w, &m.Jobs[i])
	}
}

// AppendJobStateEntry writes one entry of a RESPONSE_JOB_STATE body (the
// body is a u32 count, then the entries), for answers assembled from
// prebuilt entries.
func AppendJobStateEntry(w *Writer, e *JobStateEntry) {
	w.U32(e.JobID)
	w.U32(e.ArrayJobID)
	if e.ArrayJobID != 0 {
		w.U32(e.ArrayTaskID)
		writeHexBits(w, e.PendingTasks)
	} else {
		w.U32(e.HetJobID)
	}
	w.U32(e.State)
}
