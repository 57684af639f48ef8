package codec

// Job control requests and their replies: kill/cancel, kill-jobs,
// requeue, suspend/resume, top, notify, and the per-array-task error
// list that update/requeue/suspend may answer with
// (src/common/slurm_protocol_pack.c; layouts checked at every release
// tag from 22.05 to 26.05).

// KILL_* flags of KillJobRequest.Flags / KillJobsRequest.Flags
// (slurm/slurm.h).
const (
	KillJobBatch    uint16 = 1 << 0 // signal the batch shell only (scancel -b)
	KillArrayTask   uint16 = 1 << 1 // 23.11+: only this array task; 22.05/23.02 named it KILL_JOB_ARRAY (whole array)
	KillStepsOnly   uint16 = 1 << 2 // not the batch shell
	KillFullJob     uint16 = 1 << 3 // all steps and the batch shell (scancel -f)
	KillFedRequeue  uint16 = 1 << 4
	KillHurry       uint16 = 1 << 5 // skip burst buffer stage-out (scancel -H)
	KillOOM         uint16 = 1 << 6
	KillNoSibs      uint16 = 1 << 7
	KillJobResv     uint16 = 1 << 8
	KillNoCron      uint16 = 1 << 9  // 23.11-25.05 clients: do not cancel cron jobs
	KillNoSigFail   uint16 = 1 << 10 // 24.05+
	KillJobsVerbose uint16 = 1 << 11 // 24.05+: per-job results in RESPONSE_KILL_JOBS
	KillCron        uint16 = 1 << 12 // 24.05+: cancel cron jobs too (scancel --cron)
	KillFailJob     uint16 = 1 << 13 // 26.05+
)

// KillFlagsFromPeer returns the flags a 24.05+ slurmctld acts on for a
// kill request from a client of version: peers before 24.05 cancel cron
// jobs unless they sent KillNoCron.
func KillFlagsFromPeer(flags, version uint16) uint16 {
	if version < V24_05 && flags&KillNoCron == 0 {
		flags |= KillCron
	}
	return flags
}

// REQUEST_SUSPEND operations (SuspendRequest.Op).
const (
	SuspendJobOp uint16 = 0 // scontrol suspend
	ResumeJobOp  uint16 = 1 // scontrol resume
)

// jcDone returns r.Err, or ErrTrailing when bytes are left over.
func jcDone(r *Reader) error {
	if r.Err != nil {
		return r.Err
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// KillJobRequest is job_step_kill_msg_t, the body of REQUEST_KILL_JOB
// (5032, scancel / slurm_kill_job2) and REQUEST_CANCEL_JOB_STEP (5005,
// scancel JOB.STEP). Layout: step id (sluid from 24.11), sjob_id,
// sibling, signal, flags — hence 28 B in 22.05, 34 in 24.11 and 36 in
// 26.05 for a 3-, 1- and 3-digit sjob_id.
type KillJobRequest struct {
	// StepID: for REQUEST_KILL_JOB all NO_VAL (target in SJobID); for
	// REQUEST_CANCEL_JOB_STEP the real job and step ids.
	StepID  JobStepID
	SJobID  string // "123", "123_7", "123_[1-5]", "123_*", "123+1"; "" for step cancels
	Sibling string // federation sibling; "" (NULL) from clients
	Signal  uint16 // 9 (SIGKILL) unless scancel -s
	Flags   uint16 // KILL_* bits (see KillFlagsFromPeer for old clients)

	EmptyStrs uint8 // bit 0 SJobID, bit 1 Sibling sent as non-NULL ""
}

func (m *KillJobRequest) Decode(r *Reader, version uint16) error {
	*m = KillJobRequest{}
	var e uint64
	m.StepID.Decode(r, version)
	m.SJobID = jcStr(r, &e, 0)
	m.Sibling = jcStr(r, &e, 1)
	m.Signal = r.U16()
	m.Flags = r.U16()
	m.EmptyStrs = uint8(e)
	return jcDone(r)
}

func (m *KillJobRequest) Encode(w *Writer, version uint16) {
	m.StepID.Encode(w, version)
	jcPutStr(w, m.SJobID, uint64(m.EmptyStrs), 0)
	jcPutStr(w, m.Sibling, uint64(m.EmptyStrs), 1)
	w.U16(m.Signal)
	w.U16(m.Flags)
}

// KillJobsRequest is kill_jobs_msg_t, REQUEST_KILL_JOBS (5041): scancel
// with --ctld or SCANCEL_CTLD, 23.11.6 and later (it does not exist in
// older releases; the 23.11 layout is used for any older version).
// Every string "" is NULL (no filter).
type KillJobsRequest struct {
	Account      string
	AdminComment string // 25.11+
	Flags        uint16 // KILL_* bits
	JobName      string
	Jobs         []string // job id strings as typed ("123", "123_4", ...)
	Partition    string
	QOS          string
	Reservation  string
	Signal       uint16
	State        uint32 // job state filter; JOB_END = any
	UserID       uint32 // uid filter; NO_VAL = none
	UserName     string
	Wckey        string
	Nodelist     string

	EmptyStrs uint16 // bits in field order (Account=0 … Nodelist=9) for non-NULL ""
}

func (m *KillJobsRequest) Decode(r *Reader, version uint16) error {
	*m = KillJobsRequest{}
	var e uint64
	m.Account = jcStr(r, &e, 0)
	if version >= V25_11 {
		m.AdminComment = jcStr(r, &e, 1)
	}
	m.Flags = r.U16()
	m.JobName = jcStr(r, &e, 2)
	m.Jobs = jcStrArray(r, false)
	m.Partition = jcStr(r, &e, 3)
	m.QOS = jcStr(r, &e, 4)
	m.Reservation = jcStr(r, &e, 5)
	m.Signal = r.U16()
	m.State = r.U32()
	m.UserID = r.U32()
	m.UserName = jcStr(r, &e, 6)
	m.Wckey = jcStr(r, &e, 7)
	m.Nodelist = jcStr(r, &e, 8)
	m.EmptyStrs = uint16(e)
	return jcDone(r)
}

func (m *KillJobsRequest) Encode(w *Writer, version uint16) {
	e := uint64(m.EmptyStrs)
	jcPutStr(w, m.Account, e, 0)
	if version >= V25_11 {
		jcPutStr(w, m.AdminComment, e, 1)
	}
	w.U16(m.Flags)
	jcPutStr(w, m.JobName, e, 2)
	jcPutStrArray(w, m.Jobs)
	jcPutStr(w, m.Partition, e, 3)
	jcPutStr(w, m.QOS, e, 4)
	jcPutStr(w, m.Reservation, e, 5)
	w.U16(m.Signal)
	w.U32(m.State)
	w.U32(m.UserID)
	jcPutStr(w, m.UserName, e, 6)
	jcPutStr(w, m.Wckey, e, 7)
	jcPutStr(w, m.Nodelist, e, 8)
}

// KillJobsStep is slurm_selected_step_t as RESPONSE_KILL_JOBS carries it.
type KillJobsStep struct {
	StepID       JobStepID
	ArrayTaskID  uint32   // NO_VAL = not an array task
	HetJobOffset uint32   // NO_VAL = not a het component
	ArrayBitmap  *HexBits // 24.11+; nil = NULL (always before 24.11)
}

func (s *KillJobsStep) decode(r *Reader, version uint16) {
	s.StepID.Decode(r, version)
	s.ArrayTaskID = r.U32()
	s.HetJobOffset = r.U32()
	s.ArrayBitmap = nil
	if version >= V24_11 {
		s.ArrayBitmap = readHexBits(r)
	}
}

func (s *KillJobsStep) encode(w *Writer, version uint16) {
	s.StepID.Encode(w, version)
	w.U32(s.ArrayTaskID)
	w.U32(s.HetJobOffset)
	if version >= V24_11 {
		writeHexBits(w, s.ArrayBitmap)
	}
}

// KillJobsResult is one kill_jobs_resp_job_t.
type KillJobsResult struct {
	ErrorCode   uint32
	ErrorMsg    string
	ID          KillJobsStep
	RealJobID   uint32
	SiblingName string
}

// KillJobsResponse is RESPONSE_KILL_JOBS (5042).
type KillJobsResponse struct {
	Jobs []KillJobsResult
}

func (m *KillJobsResponse) Decode(r *Reader, version uint16) error {
	*m = KillJobsResponse{}
	// Smallest entry: rc, NULL msg, 3-u32 step id, task, offset, real
	// id, NULL sibling.
	n, null := r.Count(32)
	if r.Err == nil && null {
		return ErrBadCount
	}
	if n > 0 {
		m.Jobs = make([]KillJobsResult, n)
	}
	for i := range m.Jobs {
		j := &m.Jobs[i]
		j.ErrorCode = r.U32()
		j.ErrorMsg = r.String()
		j.ID.decode(r, version)
		j.RealJobID = r.U32()
		j.SiblingName = r.String()
		if r.Err != nil {
			break
		}
	}
	return jcDone(r)
}

func (m *KillJobsResponse) Encode(w *Writer, version uint16) {
	w.U32(uint32(len(m.Jobs)))
	for i := range m.Jobs {
		j := &m.Jobs[i]
		w.U32(j.ErrorCode)
		w.Str(j.ErrorMsg)
		j.ID.encode(w, version)
		w.U32(j.RealJobID)
		w.Str(j.SiblingName)
	}
}

// JobArrayError is one entry of RESPONSE_JOB_ARRAY_ERRORS.
type JobArrayError struct {
	ErrorCode  uint32
	JobArrayID string // "123_4", "123_[1-3]"
	ErrMsg     string // 23.02+
}

// JobArrayErrors is job_array_resp_msg_t, RESPONSE_JOB_ARRAY_ERRORS
// (5034): the per-task answer to REQUEST_UPDATE_JOB, REQUEST_SUSPEND
// and REQUEST_JOB_REQUEUE on arrays. 22.05 has no err_msg.
type JobArrayErrors struct {
	Entries []JobArrayError
}

func (m *JobArrayErrors) Decode(r *Reader, version uint16) error {
	*m = JobArrayErrors{}
	min := 8
	if version >= V23_02 {
		min = 12
	}
	n, null := r.Count(min)
	if r.Err == nil && null {
		return ErrBadCount
	}
	if n > 0 {
		m.Entries = make([]JobArrayError, n)
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		e.ErrorCode = r.U32()
		e.JobArrayID = r.String()
		if version >= V23_02 {
			e.ErrMsg = r.String()
		}
		if r.Err != nil {
			break
		}
	}
	return jcDone(r)
}

func (m *JobArrayErrors) Encode(w *Writer, version uint16) {
	w.U32(uint32(len(m.Entries)))
	for i := range m.Entries {
		e := &m.Entries[i]
		w.U32(e.ErrorCode)
		w.Str(e.JobArrayID)
		if version >= V23_02 {
			w.Str(e.ErrMsg)
		}
	}
}

// JobRequeueRequest is requeue_msg_t, REQUEST_JOB_REQUEUE (5023):
// scontrol requeue / requeuehold. Before 25.11 only StepID.JobID is on
// the wire (NO_VAL; the target is in JobIDStr); 25.11+ send the whole
// step id first.
type JobRequeueRequest struct {
	StepID   JobStepID
	JobIDStr string
	Flags    uint32 // job state bits: JOB_REQUEUE, JOB_REQUEUE_HOLD (requeuehold), JOB_SPECIAL_EXIT, JOB_RUNNING (only running/suspended jobs)

	EmptyStrs uint8 // bit 0: JobIDStr was a non-NULL ""
}

func (m *JobRequeueRequest) Decode(r *Reader, version uint16) error {
	*m = JobRequeueRequest{}
	var e uint64
	if version >= V25_11 {
		m.StepID.Decode(r, version)
	} else {
		m.StepID.JobID = r.U32()
	}
	m.JobIDStr = jcStr(r, &e, 0)
	m.Flags = r.U32()
	m.EmptyStrs = uint8(e)
	return jcDone(r)
}

func (m *JobRequeueRequest) Encode(w *Writer, version uint16) {
	if version >= V25_11 {
		m.StepID.Encode(w, version)
	} else {
		w.U32(m.StepID.JobID)
	}
	jcPutStr(w, m.JobIDStr, uint64(m.EmptyStrs), 0)
	w.U32(m.Flags)
}

// SuspendRequest is suspend_msg_t, REQUEST_SUSPEND (5014): scontrol
// suspend / resume. Before 25.11: op, u32 job_id, job_id_str; 25.11+:
// step id, op, job_id_str.
type SuspendRequest struct {
	StepID   JobStepID // only JobID before 25.11 (NO_VAL from scontrol)
	Op       uint16    // SuspendJobOp or ResumeJobOp
	JobIDStr string

	EmptyStrs uint8 // bit 0: JobIDStr was a non-NULL ""
}

func (m *SuspendRequest) Decode(r *Reader, version uint16) error {
	*m = SuspendRequest{}
	var e uint64
	if version >= V25_11 {
		m.StepID.Decode(r, version)
		m.Op = r.U16()
	} else {
		m.Op = r.U16()
		m.StepID.JobID = r.U32()
	}
	m.JobIDStr = jcStr(r, &e, 0)
	m.EmptyStrs = uint8(e)
	return jcDone(r)
}

func (m *SuspendRequest) Encode(w *Writer, version uint16) {
	if version >= V25_11 {
		m.StepID.Encode(w, version)
		w.U16(m.Op)
	} else {
		w.U16(m.Op)
		w.U32(m.StepID.JobID)
	}
	jcPutStr(w, m.JobIDStr, uint64(m.EmptyStrs), 0)
}

// TopJobRequest is top_job_msg_t, REQUEST_TOP_JOB (5038): scontrol top.
// Before 25.11 a u32 job_id sits between op and job_id_str (clients
// send 0; slurmctld ignores it).
type TopJobRequest struct {
	Op       uint16 // 0
	JobID    uint32 // before 25.11 only; ignored
	JobIDStr string // comma list of job ids

	EmptyStrs uint8 // bit 0: JobIDStr was a non-NULL ""
}

func (m *TopJobRequest) Decode(r *Reader, version uint16) error {
	*m = TopJobRequest{}
	var e uint64
	m.Op = r.U16()
	if version < V25_11 {
		m.JobID = r.U32()
	}
	m.JobIDStr = jcStr(r, &e, 0)
	m.EmptyStrs = uint8(e)
	return jcDone(r)
}

func (m *TopJobRequest) Encode(w *Writer, version uint16) {
	w.U16(m.Op)
	if version < V25_11 {
		w.U32(m.JobID)
	}
	jcPutStr(w, m.JobIDStr, uint64(m.EmptyStrs), 0)
}

// JobNotifyRequest is job_notify_msg_t, REQUEST_JOB_NOTIFY (4022):
// scontrol notify JOBID MSG (printed on the job's srun/salloc).
type JobNotifyRequest struct {
	StepID  JobStepID // job id, step NO_VAL
	Message string

	EmptyStrs uint8 // bit 0: Message was a non-NULL ""
}

func (m *JobNotifyRequest) Decode(r *Reader, version uint16) error {
	*m = JobNotifyRequest{}
	var e uint64
	m.StepID.Decode(r, version)
	m.Message = jcStr(r, &e, 0)
	m.EmptyStrs = uint8(e)
	return jcDone(r)
}

func (m *JobNotifyRequest) Encode(w *Writer, version uint16) {
	m.StepID.Encode(w, version)
	jcPutStr(w, m.Message, uint64(m.EmptyStrs), 0)
}
