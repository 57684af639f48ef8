package codec

// WillRunResponse is will_run_response_msg_t, the body of
// RESPONSE_JOB_WILL_RUN (4013): slurmctld's answer to REQUEST_JOB_WILL_RUN
// (4012, a JobDesc; sbatch/salloc/srun --test-only). sbatch prints it as
// "Job N to start at TIME using P processors on nodes NODES in partition
// PART" (src/api/allocate.c slurm_job_will_run).
//
// Layout (_pack_will_run_response_msg, checked at every release tag from
// 22.05 to 26.05): before 25.11 a u32 job_id; 25.11+ a whole step id
// (pack_step_id: sluid, job, step, het comp). Then job_submit_user_msg,
// node_list, part_name, the preemptee job id list (u32 count, NO_VAL for
// a NULL list, then that many u32), proc_cnt, start_time and a packdouble
// that was sys_usage_per (the percentage of the system in use through
// 24.11; always 0 from 25.05 on).
type WillRunResponse struct {
	StepID           JobStepID // only StepID.JobID before 25.11; 25.11+ slurmctld sends the job id with step/het comp NO_VAL
	JobSubmitUserMsg string
	NodeList         string
	PartName         string
	Preemptees       []uint32 // nil with PreempteesNull: NULL list (count NO_VAL, what slurmctld sends when nothing is preempted)
	PreempteesNull   bool
	ProcCnt          uint32
	StartTime        int64
	SysUsagePer      float64

	EmptyStrs uint8 // bit 0 JobSubmitUserMsg, 1 NodeList, 2 PartName: non-NULL ""
}

func (m *WillRunResponse) Decode(r *Reader, version uint16) error {
	*m = WillRunResponse{}
	var e uint64
	if version >= V25_11 {
		m.StepID.Decode(r, version)
	} else {
		m.StepID.JobID = r.U32()
	}
	m.JobSubmitUserMsg = jcStr(r, &e, 0)
	m.NodeList = jcStr(r, &e, 1)
	m.PartName = jcStr(r, &e, 2)
	n, null := r.Count(4)
	if r.Err != nil {
		return r.Err
	}
	m.PreempteesNull = null
	if n > 0 {
		m.Preemptees = make([]uint32, n)
		for i := range m.Preemptees {
			m.Preemptees[i] = r.U32()
		}
	}
	m.ProcCnt = r.U32()
	m.StartTime = r.Time()
	m.SysUsagePer = r.Double()
	m.EmptyStrs = uint8(e)
	return jcDone(r)
}

func (m *WillRunResponse) Encode(w *Writer, version uint16) {
	if version >= V25_11 {
		m.StepID.Encode(w, version)
	} else {
		w.U32(m.StepID.JobID)
	}
	jcPutStr(w, m.JobSubmitUserMsg, uint64(m.EmptyStrs), 0)
	jcPutStr(w, m.NodeList, uint64(m.EmptyStrs), 1)
	jcPutStr(w, m.PartName, uint64(m.EmptyStrs), 2)
	if m.PreempteesNull && len(m.Preemptees) == 0 {
		w.U32(NoVal)
	} else {
		w.U32(uint32(len(m.Preemptees)))
		for _, id := range m.Preemptees {
			w.U32(id)
		}
	}
	w.U32(m.ProcCnt)
	w.Time(m.StartTime)
	w.Double(m.SysUsagePer)
}
