package codec

// Messages about a step's tasks: slurmstepd's launch answer and task
// exits to srun, the signal/terminate requests to slurmd, and the step
// completion report to the controller (src/common/slurm_protocol_pack.c,
// src/interfaces/jobacct_gather.c; the same in every release 22.05-26.05
// but for the step id width and step_complete's 24.05 send_to_stepmgr).

// LaunchTasksResponse is launch_tasks_response_msg_t, RESPONSE_LAUNCH_TASKS
// (6002): slurmstepd, on a new connection to one of srun's resp ports,
// after forking the node's tasks. Layout: step id, u32 return_code, str
// node_name, u32 count_of_pids, then local_pids and task_ids each as a
// counted u32 array (count again, then the values) whose count must equal
// count_of_pids. srun answers RESPONSE_SLURM_RC 0 and marks TaskIDs (global
// task ids, each < the step's task count) started; ReturnCode != 0 marks
// them failed.
type LaunchTasksResponse struct {
	StepID     JobStepID
	ReturnCode uint32
	NodeName   string
	LocalPIDs  []uint32 // task pids on the node (same length as TaskIDs)
	TaskIDs    []uint32 // global task ids

	EmptyStrs uint8 // bit 0: NodeName was a non-NULL ""
}

func (m *LaunchTasksResponse) Decode(r *Reader, version uint16) error {
	*m = LaunchTasksResponse{}
	var e uint64
	m.StepID.Decode(r, version)
	m.ReturnCode = r.U32()
	m.NodeName = jcStr(r, &e, 0)
	n := r.U32()
	m.LocalPIDs = readU32s(r)
	if r.Err == nil && uint32(len(m.LocalPIDs)) != n {
		r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "launch response: %d local pids, count_of_pids %d", len(m.LocalPIDs), n))
	}
	m.TaskIDs = readU32s(r)
	if r.Err == nil && uint32(len(m.TaskIDs)) != n {
		r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "launch response: %d task ids, count_of_pids %d", len(m.TaskIDs), n))
	}
	m.EmptyStrs = uint8(e)
	if err := allocEnd(r); err != nil {
		*m = LaunchTasksResponse{}
		return err
	}
	return nil
}

// Encode writes count_of_pids as len(LocalPIDs); TaskIDs must be as long.
func (m *LaunchTasksResponse) Encode(w *Writer, version uint16) {
	m.StepID.Encode(w, version)
	w.U32(m.ReturnCode)
	jcPutStr(w, m.NodeName, uint64(m.EmptyStrs), 0)
	w.U32(uint32(len(m.LocalPIDs)))
	w.U32Array(m.LocalPIDs)
	w.U32Array(m.TaskIDs)
}

// TaskExitMsg is task_exit_msg_t, MESSAGE_TASK_EXIT (6003): slurmstepd to
// srun's resp port when tasks end (all tasks with the same status in one
// message). Layout: u32 return_code, u32 num_tasks, task_id_list as a
// counted u32 array whose count must equal num_tasks, then the step id
// (last; srun ignores a message for another step). ReturnCode is the raw
// wait() status: exit code N is N<<8, a signal S is S (|0x80 with a core
// dump). srun answers RESPONSE_SLURM_RC 0 and exits once every task id
// has been reported.
type TaskExitMsg struct {
	ReturnCode uint32
	TaskIDs    []uint32 // global task ids
	StepID     JobStepID
}

func (m *TaskExitMsg) Decode(r *Reader, version uint16) error {
	*m = TaskExitMsg{}
	m.ReturnCode = r.U32()
	n := r.U32()
	m.TaskIDs = readU32s(r)
	if r.Err == nil && uint32(len(m.TaskIDs)) != n {
		r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "task exit: %d task ids, num_tasks %d", len(m.TaskIDs), n))
	}
	m.StepID.Decode(r, version)
	if err := allocEnd(r); err != nil {
		*m = TaskExitMsg{}
		return err
	}
	return nil
}

func (m *TaskExitMsg) Encode(w *Writer, version uint16) {
	w.U32(m.ReturnCode)
	w.U32(uint32(len(m.TaskIDs)))
	w.U32Array(m.TaskIDs)
	m.StepID.Encode(w, version)
}

// ExitCode returns the exit code of a normal exit (WEXITSTATUS) and
// whether the status is one.
func (m *TaskExitMsg) ExitCode() (code int, exited bool) {
	if m.ReturnCode&0x7f != 0 {
		return 0, false
	}
	return int(m.ReturnCode>>8) & 0xff, true
}

// SignalTasksRequest is signal_tasks_msg_t, the body of
// REQUEST_SIGNAL_TASKS (6004: srun, or slurmctld for scancel, to each
// slurmd with tasks of the step) and REQUEST_TERMINATE_TASKS (6006:
// slurmctld killing a step). Layout: step id, u16 flags, u16 signal.
// Reply RESPONSE_SLURM_RC.
type SignalTasksRequest struct {
	StepID JobStepID
	Flags  uint16 // KILL_* bits (KillFullJob etc.)
	Signal uint16
}

func (m *SignalTasksRequest) Decode(r *Reader, version uint16) error {
	*m = SignalTasksRequest{}
	m.StepID.Decode(r, version)
	m.Flags = r.U16()
	m.Signal = r.U16()
	return allocEnd(r)
}

func (m *SignalTasksRequest) Encode(w *Writer, version uint16) {
	m.StepID.Encode(w, version)
	w.U16(m.Flags)
	w.U16(m.Signal)
}

// JobAcctTRES is one slurmdb_tres_rec_t of a jobacct record (the same
// layout in every release: u64 alloc_secs, u64 count, u32 id, str name,
// str type).
type JobAcctTRES struct {
	AllocSecs uint64
	Count     uint64
	ID        uint32
	Name      string
	Type      string // "cpu", "mem", "energy", "fs", "vmem", "pages", "gres", ...
}

// JobAcct is jobacctinfo_t as jobacctinfo_pack sends it behind its u8
// "present" flag (one layout 22.05-26.05, the 21.08 one): CPU times,
// frequency, energy, the TRES ids and records, and fourteen u64 arrays of
// per-TRES usage (max/min with the node and task that reached them, and
// totals, for input and output). A slurmstepd with a jobacct_gather
// plugin sends one in REQUEST_STEP_COMPLETE.
type JobAcct struct {
	UserCPUSec     uint64
	UserCPUUsec    uint32
	SysCPUSec      uint64
	SysCPUUsec     uint32
	ActCPUFreq     uint32
	ConsumedEnergy uint64
	TRESIDs        []uint32
	TRESList       []JobAcctTRES // nil = NULL list (NO_VAL); non-nil empty = count 0

	TRESUsageInMax        []uint64
	TRESUsageInMaxNodeID  []uint64
	TRESUsageInMaxTaskID  []uint64
	TRESUsageInMin        []uint64
	TRESUsageInMinNodeID  []uint64
	TRESUsageInMinTaskID  []uint64
	TRESUsageInTot        []uint64
	TRESUsageOutMax       []uint64
	TRESUsageOutMaxNodeID []uint64
	TRESUsageOutMaxTaskID []uint64
	TRESUsageOutMin       []uint64
	TRESUsageOutMinNodeID []uint64
	TRESUsageOutMinTaskID []uint64
	TRESUsageOutTot       []uint64
}

// usage lists the fourteen usage arrays in wire order.
func (a *JobAcct) usage() [14]*[]uint64 {
	return [14]*[]uint64{
		&a.TRESUsageInMax, &a.TRESUsageInMaxNodeID, &a.TRESUsageInMaxTaskID,
		&a.TRESUsageInMin, &a.TRESUsageInMinNodeID, &a.TRESUsageInMinTaskID,
		&a.TRESUsageInTot,
		&a.TRESUsageOutMax, &a.TRESUsageOutMaxNodeID, &a.TRESUsageOutMaxTaskID,
		&a.TRESUsageOutMin, &a.TRESUsageOutMinNodeID, &a.TRESUsageOutMinTaskID,
		&a.TRESUsageOutTot,
	}
}

// jobAcctTRESMin is the smallest encoded JobAcctTRES (NULL strings).
const jobAcctTRESMin = 8 + 8 + 4 + 4 + 4

// readJobAcct reads the u8 flag and, when it is not 0, the record.
func readJobAcct(r *Reader) *JobAcct {
	if r.U8() == 0 || r.Err != nil {
		return nil
	}
	a := &JobAcct{}
	a.UserCPUSec = r.U64()
	a.UserCPUUsec = r.U32()
	a.SysCPUSec = r.U64()
	a.SysCPUUsec = r.U32()
	a.ActCPUFreq = r.U32()
	a.ConsumedEnergy = r.U64()
	a.TRESIDs = readU32s(r)
	if n, null := r.Count(jobAcctTRESMin); !null && r.Err == nil {
		a.TRESList = make([]JobAcctTRES, n)
		for i := range a.TRESList {
			t := &a.TRESList[i]
			t.AllocSecs = r.U64()
			t.Count = r.U64()
			t.ID = r.U32()
			t.Name = r.String()
			t.Type = r.String()
		}
	}
	for _, p := range a.usage() {
		*p = readU64s(r)
	}
	if r.Err != nil {
		return nil
	}
	return a
}

func writeJobAcct(w *Writer, a *JobAcct) {
	if a == nil {
		w.U8(0)
		return
	}
	w.U8(1)
	w.U64(a.UserCPUSec)
	w.U32(a.UserCPUUsec)
	w.U64(a.SysCPUSec)
	w.U32(a.SysCPUUsec)
	w.U32(a.ActCPUFreq)
	w.U64(a.ConsumedEnergy)
	w.U32Array(a.TRESIDs)
	if a.TRESList == nil {
		w.U32(NoVal)
	} else {
		w.U32(uint32(len(a.TRESList)))
		for i := range a.TRESList {
			t := &a.TRESList[i]
			w.U64(t.AllocSecs)
			w.U64(t.Count)
			w.U32(t.ID)
			w.Str(t.Name)
			w.Str(t.Type)
		}
	}
	for _, p := range a.usage() {
		w.U64Array(*p)
	}
}

// StepCompleteRequest is step_complete_msg_t, REQUEST_STEP_COMPLETE
// (5016): slurmstepd (or srun after a failed launch) telling the
// controller that nodes RangeFirst..RangeLast (indexes in the step's
// node list) are done with the step. Layout: step id, u32 range_first,
// u32 range_last, u32 step_rc, jobacct (u8 0 = none, what srun sends;
// slurmstepd sends a full record when a jobacct_gather plugin polls),
// and from 24.05 bool send_to_stepmgr. Reply RESPONSE_SLURM_RC.
type StepCompleteRequest struct {
	StepID        JobStepID
	RangeFirst    uint32
	RangeLast     uint32
	StepRC        uint32   // highest task exit status (raw wait status)
	JobAcct       *JobAcct // nil = absent
	SendToStepmgr bool     // 24.05+
}

func (m *StepCompleteRequest) Decode(r *Reader, version uint16) error {
	*m = StepCompleteRequest{}
	m.StepID.Decode(r, version)
	m.RangeFirst = r.U32()
	m.RangeLast = r.U32()
	m.StepRC = r.U32()
	m.JobAcct = readJobAcct(r)
	if version >= V24_05 {
		m.SendToStepmgr = r.Bool()
	}
	if err := allocEnd(r); err != nil {
		*m = StepCompleteRequest{}
		return err
	}
	return nil
}

func (m *StepCompleteRequest) Encode(w *Writer, version uint16) {
	m.StepID.Encode(w, version)
	w.U32(m.RangeFirst)
	w.U32(m.RangeLast)
	w.U32(m.StepRC)
	writeJobAcct(w, m.JobAcct)
	if version >= V24_05 {
		w.Bool(m.SendToStepmgr)
	}
}
