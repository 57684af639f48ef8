package codec

// Allocation messages of salloc and srun and the SRUN_* notices the
// controller sends to their listeners (src/common/slurm_protocol_pack.c;
// layouts read at every release tag from 22.05 to 26.05 and checked
// against the 22.05, 24.11 and 26.05 step captures).
//
// Where the reference note (slurm-interactive-and-accounting.md) and the
// source disagree or the note stops short, the source was followed:
//
//   - A.4 covers 22.05 and 24.11 only. 23.02 already has the 24.11 field
//     set (gid, group_name, tres_per_node, uid, user_name) with a real
//     alias_list/node_addr; 25.05 drops alias_list and the node_addr flag
//     and adds tres_per_task after tres_per_node; 25.11 drops job_id and
//     adds segment_size, start_protocol_ver and a whole step_id after
//     resv_name.
//   - A.4b/A.8/A.7: REQUEST_JOB_ALLOCATION_INFO, REQUEST_HET_JOB_ALLOC_INFO,
//     REQUEST_COMPLETE_JOB_ALLOCATION and SRUN_USER_MSG carry a whole
//     step_id instead of the u32 job_id from 25.11 on (A.8 says "all
//     versions: u32 job_id"; the 26.05 capture's 5017 body is 24 bytes).
//   - SRUN_STEP_MISSING is not a bare step_id: it is step_id + str
//     nodelist, the layout of SRUN_NODE_FAIL (SrunStepMissing).
//   - SRUN_STEP_SIGNAL's body is job_step_kill_msg_t, the layout of
//     REQUEST_KILL_JOB / REQUEST_CANCEL_JOB_STEP (SrunStepSignal).
//   - B.11: a slurmstepd's REQUEST_STEP_COMPLETE carries a full jobacct
//     record when its jobacct_gather plugin polls (the 24.11 and 26.05
//     captures' 5016 bodies are 1062 bytes, with a NULL tres_list); the
//     22.05 stepd of the captures sent the u8 0 of an absent one.
//   - B.9: the I/O init message's io_key is packmem in 22.05/23.02 and
//     packstr from 23.11; both carry the signature with its NUL, so the
//     bytes are the same (see io.go).

// RESPONSE_JOB_READY (4020) is a u32 bit mask (JobReadyResponse); its
// bits under the names of slurm.h. REQUEST_JOB_READY (4019) is
// JobReadyRequest (u32 job_id, u16 show_flags; a whole step id before
// show_flags from 25.11), both in misc_info.go.
const (
	ReadyNodeState   = JobReadyNodes  // READY_NODE_STATE: the job's nodes are up
	ReadyJobState    = JobReadyJob    // READY_JOB_STATE: the job runs (clear: revoked)
	ReadyPrologState = JobReadyProlog // READY_PROLOG_STATE: PrologSlurmctld is done
)

// allocEnd returns r.Err, or ErrTrailing when bytes are left over.
func allocEnd(r *Reader) error {
	if r.Err != nil {
		return r.Err
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// readCount reads an array count that must fit in what is left at
// minElem bytes an element; NO_VAL fails (Slurm's array readers refuse
// it).
func readCount(r *Reader, minElem int) int {
	n, null := r.Count(minElem)
	if r.Err == nil && null {
		r.fail(ErrBadCount)
	}
	if r.Err != nil {
		return 0
	}
	return int(n)
}

// readU32s reads a counted u32 array (nil for 0 elements).
func readU32s(r *Reader) []uint32 {
	n := readCount(r, 4)
	if n == 0 {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = r.U32()
	}
	return out
}

// readU64s reads a counted u64 array (nil for 0 elements).
func readU64s(r *Reader) []uint64 {
	n := readCount(r, 8)
	if n == 0 {
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.U64()
	}
	return out
}

// readU16s reads a counted u16 array (nil for 0 elements).
func readU16s(r *Reader) []uint16 {
	n := readCount(r, 2)
	if n == 0 {
		return nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = r.U16()
	}
	return out
}

// allocJobStep reads what 25.11 turned from a u32 job_id into a whole
// step id. Before 25.11 the rest reads as SLURM_STEP_ID_INITIALIZER
// leaves it (sluid 0, step and het component NO_VAL).
func allocJobStep(r *Reader, version uint16, job *uint32, sluid *uint64, step, het *uint32) {
	if version >= V25_11 {
		*sluid = r.U64()
		*job = r.U32()
		*step = r.U32()
		*het = r.U32()
		return
	}
	*sluid, *step, *het = 0, NoVal, NoVal
	*job = r.U32()
}

func allocPutJobStep(w *Writer, version uint16, job uint32, sluid uint64, step, het uint32) {
	if version >= V25_11 {
		w.U64(sluid)
		w.U32(job)
		w.U32(step)
		w.U32(het)
		return
	}
	w.U32(job)
}

// Bits of ResourceAllocation.EmptyStrs (a non-NULL "" on the wire).
const (
	RAEmptyAccount uint16 = 1 << iota
	RAEmptyAliasList
	RAEmptyBatchHost
	RAEmptyGroupName
	RAEmptyJobSubmitUserMsg
	RAEmptyNodeList
	RAEmptyPartition
	RAEmptyQOS
	RAEmptyResvName
	RAEmptyTresPerNode
	RAEmptyTresPerTask
	RAEmptyUserName
)

// ResourceAllocation is resource_allocation_response_msg_t, the body of
// RESPONSE_RESOURCE_ALLOCATION (4002: the answer to
// REQUEST_RESOURCE_ALLOCATION, and what slurmctld pushes to a pending
// salloc/srun's alloc_resp_port) and RESPONSE_JOB_ALLOCATION_INFO (4015).
// NodeCnt 0 means "pending": the client prints "Pending job allocation"
// and waits. Clients build SLURM_JOB_CPUS_PER_NODE and the task layout
// from CPUsPerNode/CPUCountReps: give at least one group, with the reps
// adding up to NodeCnt.
//
// Layouts: 22.05 has no gid/group_name/tres_per_node/uid/user_name and a
// select_jobinfo (u32 plugin id) after resv_name; 23.02-24.11 add them;
// 25.05 drops alias_list and the node_addr flag and adds tres_per_task;
// 25.11 drops job_id for a step id after resv_name, with segment_size and
// start_protocol_ver. Fields a version lacks decode as zero (the
// step-id parts as SLURM_STEP_ID_INITIALIZER: StepID and StepHetComp
// NO_VAL) and are not sent. A working_cluster_rec (federation) is
// refused on decode and never sent.
type ResourceAllocation struct {
	Account          string
	AliasList        string // before 25.05 (slurmctld sends NULL from 23.11)
	BatchHost        string
	Environment      []string // "NAME=value" to export into the job's environment
	ErrorCode        uint32   // informational; printed while pending
	GID              uint32   // 23.02+
	GroupName        string   // 23.02+
	JobSubmitUserMsg string   // printed by the client
	JobID            uint32
	NodeCnt          uint32     // 0 = pending
	NodeAddrs        []WireAddr // before 25.05: nil = flag 0 (what 23.11+ always send); else NodeCnt entries
	NodeList         string     // hostlist, e.g. "n[1-4]"
	NtasksPerBoard   uint16     // NO_VAL16 when not requested
	NtasksPerCore    uint16
	NtasksPerTres    uint16
	NtasksPerSocket  uint16
	CPUsPerNode      []uint16 // one per cpu group (num_cpu_groups implied)
	CPUCountReps     []uint32 // nodes in each group; same length as CPUsPerNode
	Partition        string
	PnMinMemory      uint64 // MB per node, or MemPerCPU|MB per cpu; 0 = none requested
	QOS              string
	ResvName         string
	SelectPluginID   uint32 // 22.05 only: select_jobinfo plugin id (0 sends SELECT_PLUGIN_CONS_TRES)
	SegmentSize      uint16 // 25.11+
	StartProtocolVer uint16 // 25.11+
	SLUID            uint64 // 25.11+ step id (with JobID)
	StepID           uint32 // 25.11+; NO_VAL for a job
	StepHetComp      uint32 // 25.11+; NO_VAL
	TresPerNode      string // 23.02+
	TresPerTask      string // 25.05+
	UID              uint32 // 23.02+
	UserName         string // 23.02+

	EmptyStrs uint16 // RAEmpty* bits: strings sent as non-NULL ""
}

func (m *ResourceAllocation) Decode(r *Reader, version uint16) error {
	m.decode(r, version)
	return allocEnd(r)
}

func (m *ResourceAllocation) decode(r *Reader, v uint16) {
	*m = ResourceAllocation{}
	var e uint64
	m.Account = jcStr(r, &e, 0)
	if v < V25_05 {
		m.AliasList = jcStr(r, &e, 1)
	}
	m.BatchHost = jcStr(r, &e, 2)
	m.Environment = jcStrArray(r, false)
	m.ErrorCode = r.U32()
	if v >= V23_02 {
		m.GID = r.U32()
		m.GroupName = jcStr(r, &e, 3)
	}
	m.JobSubmitUserMsg = jcStr(r, &e, 4)
	m.SLUID, m.StepID, m.StepHetComp = 0, NoVal, NoVal
	if v < V25_11 {
		m.JobID = r.U32()
	}
	m.NodeCnt = r.U32()
	if v < V25_05 && r.U8() != 0 && r.Err == nil {
		n := readCount(r, 2)
		if r.Err == nil && uint32(n) != m.NodeCnt {
			r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "%d node addresses for %d nodes", n, m.NodeCnt))
		}
		if r.Err == nil {
			m.NodeAddrs = make([]WireAddr, n)
			for i := range m.NodeAddrs {
				m.NodeAddrs[i] = readWireAddr(r)
			}
		}
	}
	m.NodeList = jcStr(r, &e, 5)
	m.NtasksPerBoard = r.U16()
	m.NtasksPerCore = r.U16()
	m.NtasksPerTres = r.U16()
	m.NtasksPerSocket = r.U16()
	if groups := r.U32(); groups > 0 && r.Err == nil {
		m.CPUsPerNode = readU16s(r)
		if r.Err == nil && uint32(len(m.CPUsPerNode)) != groups {
			r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "%d cpus_per_node for %d cpu groups", len(m.CPUsPerNode), groups))
		}
		m.CPUCountReps = readU32s(r)
		if r.Err == nil && uint32(len(m.CPUCountReps)) != groups {
			r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "%d cpu_count_reps for %d cpu groups", len(m.CPUCountReps), groups))
		}
	}
	m.Partition = jcStr(r, &e, 6)
	m.PnMinMemory = r.U64()
	m.QOS = jcStr(r, &e, 7)
	m.ResvName = jcStr(r, &e, 8)
	if v < V23_02 {
		m.SelectPluginID = readSelectJobinfo(r)
	}
	if v >= V25_11 {
		m.SegmentSize = r.U16()
		m.StartProtocolVer = r.U16()
		allocJobStep(r, v, &m.JobID, &m.SLUID, &m.StepID, &m.StepHetComp)
	}
	if v >= V23_02 {
		m.TresPerNode = jcStr(r, &e, 9)
	}
	if v >= V25_05 {
		m.TresPerTask = jcStr(r, &e, 10)
	}
	if v >= V23_02 {
		m.UID = r.U32()
		m.UserName = jcStr(r, &e, 11)
	}
	if wcr := r.U8(); wcr != 0 && r.Err == nil {
		// A slurmdb cluster record follows (federation / -M). We
		// neither send nor model one.
		r.fail(Errorf(ESLURM_NOT_SUPPORTED, "allocation with a working_cluster_rec (flag %d): federated clusters are not supported", wcr))
	}
	m.EmptyStrs = uint16(e)
	if r.Err != nil {
		*m = ResourceAllocation{}
	}
}

func (m *ResourceAllocation) Encode(w *Writer, v uint16) {
	e := uint64(m.EmptyStrs)
	jcPutStr(w, m.Account, e, 0)
	if v < V25_05 {
		jcPutStr(w, m.AliasList, e, 1)
	}
	jcPutStr(w, m.BatchHost, e, 2)
	jcPutStrArray(w, m.Environment)
	w.U32(m.ErrorCode)
	if v >= V23_02 {
		w.U32(m.GID)
		jcPutStr(w, m.GroupName, e, 3)
	}
	jcPutStr(w, m.JobSubmitUserMsg, e, 4)
	if v < V25_11 {
		w.U32(m.JobID)
	}
	w.U32(m.NodeCnt)
	if v < V25_05 {
		if m.NodeAddrs == nil {
			w.U8(0)
		} else {
			w.U8(1)
			w.U32(uint32(len(m.NodeAddrs)))
			for i := range m.NodeAddrs {
				writeWireAddr(w, m.NodeAddrs[i])
			}
		}
	}
	jcPutStr(w, m.NodeList, e, 5)
	w.U16(m.NtasksPerBoard)
	w.U16(m.NtasksPerCore)
	w.U16(m.NtasksPerTres)
	w.U16(m.NtasksPerSocket)
	w.U32(uint32(len(m.CPUsPerNode)))
	if len(m.CPUsPerNode) > 0 {
		w.U16Array(m.CPUsPerNode)
		w.U32Array(m.CPUCountReps)
	}
	jcPutStr(w, m.Partition, e, 6)
	w.U64(m.PnMinMemory)
	jcPutStr(w, m.QOS, e, 7)
	jcPutStr(w, m.ResvName, e, 8)
	if v < V23_02 {
		id := m.SelectPluginID
		if id == 0 {
			id = SELECT_PLUGIN_CONS_TRES
		}
		w.U32(id)
	}
	if v >= V25_11 {
		w.U16(m.SegmentSize)
		w.U16(m.StartProtocolVer)
		allocPutJobStep(w, v, m.JobID, m.SLUID, m.StepID, m.StepHetComp)
	}
	if v >= V23_02 {
		jcPutStr(w, m.TresPerNode, e, 9)
	}
	if v >= V25_05 {
		jcPutStr(w, m.TresPerTask, e, 10)
	}
	if v >= V23_02 {
		w.U32(m.UID)
		jcPutStr(w, m.UserName, e, 11)
	}
	w.U8(0) // working_cluster_rec: none
}

// allocMinRecord is less than the smallest ResourceAllocation in any
// version (all strings NULL, no groups): it bounds a hostile count.
const allocMinRecord = 64

// HetJobAllocation is RESPONSE_HET_JOB_ALLOCATION (4026): a u16 count
// then that many resource_allocation_response_msg_t (not a
// slurm_pack_list: no NO_VAL form; count 0 is an empty list). It answers
// REQUEST_HET_JOB_ALLOCATION and REQUEST_HET_JOB_ALLOC_INFO, which srun
// sends inside an existing allocation (salloc, sbatch) to learn its job's
// nodes, even when the job is not heterogeneous (then one record).
type HetJobAllocation []ResourceAllocation

func (m *HetJobAllocation) Decode(r *Reader, version uint16) error {
	*m = nil
	n := int(r.U16())
	if r.Err == nil && n == int(Infinite16) {
		r.fail(ErrBadCount) // Slurm refuses counts above NO_VAL16
	}
	if r.Err == nil && n*allocMinRecord > r.Remaining() {
		r.fail(ErrBadCount)
	}
	if r.Err != nil || n == 0 {
		return allocEnd(r)
	}
	out := make(HetJobAllocation, n)
	for i := range out {
		out[i].decode(r, version)
		if r.Err != nil {
			return r.Err
		}
	}
	*m = out
	return allocEnd(r)
}

func (m *HetJobAllocation) Encode(w *Writer, version uint16) {
	w.U16(uint16(len(*m)))
	for i := range *m {
		(*m)[i].Encode(w, version)
	}
}

// JobAllocInfoRequest is job_alloc_info_msg_t, the body of
// REQUEST_JOB_ALLOCATION_INFO (4014; salloc/srun after a pending wait
// fails, answered by RESPONSE_JOB_ALLOCATION_INFO) and
// REQUEST_HET_JOB_ALLOC_INFO (4027; srun inside an allocation, answered by
// RESPONSE_HET_JOB_ALLOCATION). Before 25.11: u32 job_id, str
// req_cluster; 25.11+: a whole step id (clients send step NO_VAL), str
// req_cluster.
type JobAllocInfoRequest struct {
	JobID       uint32
	ReqCluster  string // the cluster asked for; NULL from plain clients
	SLUID       uint64 // 25.11+
	StepID      uint32 // 25.11+ (NO_VAL before)
	StepHetComp uint32 // 25.11+ (NO_VAL before)

	EmptyStrs uint8 // bit 0: ReqCluster was a non-NULL ""
}

func (m *JobAllocInfoRequest) Decode(r *Reader, version uint16) error {
	*m = JobAllocInfoRequest{}
	var e uint64
	allocJobStep(r, version, &m.JobID, &m.SLUID, &m.StepID, &m.StepHetComp)
	m.ReqCluster = jcStr(r, &e, 0)
	m.EmptyStrs = uint8(e)
	return allocEnd(r)
}

func (m *JobAllocInfoRequest) Encode(w *Writer, version uint16) {
	allocPutJobStep(w, version, m.JobID, m.SLUID, m.StepID, m.StepHetComp)
	jcPutStr(w, m.ReqCluster, uint64(m.EmptyStrs), 0)
}

// CompleteJobAllocation is complete_job_allocation_msg_t,
// REQUEST_COMPLETE_JOB_ALLOCATION (5017): salloc or a standalone srun
// giving its allocation back. JobRC is the raw wait status of salloc's
// command, srun's global rc (NO_VAL when cancelled), 128+signo when
// interrupted while pending, or 0xffffffff after a failed wait. Before
// 25.11: u32 job_id, u32 job_rc; 25.11+: step id, u32 job_rc. The reply
// is RESPONSE_SLURM_RC (0, or ESLURM_ALREADY_DONE which clients accept).
type CompleteJobAllocation struct {
	JobID       uint32
	JobRC       uint32
	SLUID       uint64 // 25.11+
	StepID      uint32 // 25.11+ (NO_VAL before)
	StepHetComp uint32 // 25.11+ (NO_VAL before)
}

func (m *CompleteJobAllocation) Decode(r *Reader, version uint16) error {
	*m = CompleteJobAllocation{}
	allocJobStep(r, version, &m.JobID, &m.SLUID, &m.StepID, &m.StepHetComp)
	m.JobRC = r.U32()
	return allocEnd(r)
}

func (m *CompleteJobAllocation) Encode(w *Writer, version uint16) {
	allocPutJobStep(w, version, m.JobID, m.SLUID, m.StepID, m.StepHetComp)
	w.U32(m.JobRC)
}

// SrunPing is SRUN_PING (7001): an empty body. salloc/srun answer
// RESPONSE_SLURM_RC 0 (the only SRUN_* message they answer).
type SrunPing struct{}

func (m *SrunPing) Decode(r *Reader, version uint16) error { return allocEnd(r) }
func (m *SrunPing) Encode(w *Writer, version uint16)       {}

// SrunStepMsg is a bare slurm_step_id_t body: SRUN_JOB_COMPLETE (7004).
// To a step's port it ends that step (srun cancels it and prints "Force
// Terminated" if tasks are still running); to salloc's other_port or a
// pending alloc_resp_port with StepID NO_VAL it revokes the whole
// allocation. No reply. (SRUN_STEP_MISSING is not this layout: see
// SrunStepMissing.)
type SrunStepMsg struct {
	StepID JobStepID
}

func (m *SrunStepMsg) Decode(r *Reader, version uint16) error {
	*m = SrunStepMsg{}
	m.StepID.Decode(r, version)
	return allocEnd(r)
}

func (m *SrunStepMsg) Encode(w *Writer, version uint16) { m.StepID.Encode(w, version) }

// SrunTimeout is srun_timeout_msg_t, SRUN_TIMEOUT (7002): step id and the
// time (epoch seconds) the time limit will be reached. No reply.
type SrunTimeout struct {
	StepID  JobStepID
	Timeout int64
}

func (m *SrunTimeout) Decode(r *Reader, version uint16) error {
	*m = SrunTimeout{}
	m.StepID.Decode(r, version)
	m.Timeout = r.Time()
	return allocEnd(r)
}

func (m *SrunTimeout) Encode(w *Writer, version uint16) {
	m.StepID.Encode(w, version)
	w.Time(m.Timeout)
}

// SrunUserMsg is srun_user_msg_t, SRUN_USER_MSG (7005): a message the
// client prints (scontrol notify). Before 25.11: u32 job_id, str msg;
// 25.11+: step id, str msg. No reply.
type SrunUserMsg struct {
	JobID       uint32
	Msg         string
	SLUID       uint64 // 25.11+
	StepID      uint32 // 25.11+ (NO_VAL before)
	StepHetComp uint32 // 25.11+ (NO_VAL before)

	EmptyStrs uint8 // bit 0: Msg was a non-NULL ""
}

func (m *SrunUserMsg) Decode(r *Reader, version uint16) error {
	*m = SrunUserMsg{}
	var e uint64
	allocJobStep(r, version, &m.JobID, &m.SLUID, &m.StepID, &m.StepHetComp)
	m.Msg = jcStr(r, &e, 0)
	m.EmptyStrs = uint8(e)
	return allocEnd(r)
}

func (m *SrunUserMsg) Encode(w *Writer, version uint16) {
	allocPutJobStep(w, version, m.JobID, m.SLUID, m.StepID, m.StepHetComp)
	jcPutStr(w, m.Msg, uint64(m.EmptyStrs), 0)
}

// SrunNodeFail is srun_node_fail_msg_t, SRUN_NODE_FAIL (7003): step id
// (StepID NO_VAL for the job) and the failed nodes. No reply.
type SrunNodeFail struct {
	StepID   JobStepID
	NodeList string

	EmptyStrs uint8 // bit 0: NodeList was a non-NULL ""
}

func (m *SrunNodeFail) Decode(r *Reader, version uint16) error {
	*m = SrunNodeFail{}
	var e uint64
	m.StepID.Decode(r, version)
	m.NodeList = jcStr(r, &e, 0)
	m.EmptyStrs = uint8(e)
	return allocEnd(r)
}

func (m *SrunNodeFail) Encode(w *Writer, version uint16) {
	m.StepID.Encode(w, version)
	jcPutStr(w, m.NodeList, uint64(m.EmptyStrs), 0)
}

// SrunStepMissing is srun_step_missing_msg_t, SRUN_STEP_MISSING (7007):
// the layout of SrunNodeFail (step id, str nodelist: the nodes whose
// slurmd no longer knows the step). srun answers nothing and tests its
// I/O connections (IOConnectionTest).
type SrunStepMissing SrunNodeFail

func (m *SrunStepMissing) Decode(r *Reader, version uint16) error {
	return (*SrunNodeFail)(m).Decode(r, version)
}

func (m *SrunStepMissing) Encode(w *Writer, version uint16) { (*SrunNodeFail)(m).Encode(w, version) }

// SrunStepSignal is SRUN_STEP_SIGNAL (7009): a job_step_kill_msg_t (the
// layout of KillJobRequest: step id, sjob_id, sibling, signal, flags)
// telling srun to signal its step's tasks. No reply.
type SrunStepSignal KillJobRequest

func (m *SrunStepSignal) Decode(r *Reader, version uint16) error {
	return (*KillJobRequest)(m).Decode(r, version)
}

func (m *SrunStepSignal) Encode(w *Writer, version uint16) { (*KillJobRequest)(m).Encode(w, version) }
