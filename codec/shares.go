package codec

// sshare and sprio: REQUEST_SHARE_INFO (2022) / RESPONSE_SHARE_INFO
// (2023) and REQUEST_PRIORITY_FACTORS (2026) / RESPONSE_PRIORITY_FACTORS
// (2027). Layouts from each release's src/common/slurm_protocol_pack.c
// (22.05.8, 23.02.7, 23.11.10, 24.05.8, 24.11.5, 25.05.5, 25.11.5,
// 26.05.3), what the clients need from src/sshare/process.c and
// src/sprio/{sprio,print,filter}.c.
//
// Shares. The share pair is ShareInfoRequest / ShareInfo / AssocShares in
// misc_info.go (it predates this file); its layout is the same in every
// release 22.05-26.05 (checked function by function: 24.11 moved the
// request to slurm_pack_list, which puts the same bytes on the wire):
//
//	request:  acct_list, user_list: u32 count (NO_VAL = NULL list) + packstr each
//	response: packstr_array tres_names (u32 tres_cnt + packstr each)
//	          u32 row count (NO_VAL when there are none, never 0)
//	          rows (_pack_assoc_shares_object):
//	            u32 assoc_id; packstr cluster, name, parent, partition;
//	            double shares_norm; u32 shares_raw;
//	            u64 array tres_run_secs, u64 array tres_grp_mins (u32 count
//	              + u64 each; the client refuses a count other than tres_cnt);
//	            double usage_efctv, usage_norm; u64 usage_raw;
//	            long double array usage_tres_raw (u32 count + each as the
//	              packstr of its "%Lf" text; not checked by the unpacker,
//	              but sshare -l indexes it up to tres_cnt);
//	            double fs_factor, level_fs; u16 user (1 = user row)
//	          u64 tot_shares
//
// TestSharesGolden checks that pair against the real 24.11 capture.
//
// Priority factors. Three layouts:
//
//   - 22.05: the request carries the filters slurmctld applies (u32 list
//     of job ids, u32 list of uids, packstr partitions); each response
//     object is the flat priority_factors_object_t (job_id, user_id, the
//     six factors, direct_prio, site, TRES arrays with tres_cnt repeated
//     between them, nice, partition).
//   - 23.02-25.11: the request body is empty (sprio filters locally; a
//     23.02/23.11 slurmctld still reads the old request from 22.05
//     clients, by the client's version). Each object is account, u32
//     job_id, partition, direct_prio, the factors block only when
//     direct_prio is 0 (a manually set priority has none), qos, user_id.
//   - 26.05: the u32 job_id becomes a whole step id (pack_step_id: u64
//     sluid, u32 job, step, het component); slurmctld sends the job's
//     step_id, i.e. step and het component NO_VAL.
//
// The response list is a u32 count, NO_VAL when slurmctld has no job to
// report (it frees an empty list before packing, so it never sends 0).

// PriorityFactorsRequest is REQUEST_PRIORITY_FACTORS (2026). Before 23.02
// (22.05 clients) it carries sprio's -j, -u and -p filters, which the
// controller applies; from 23.02 the body is empty in both directions and
// every field here is ignored (and zero after Decode). Decode reuses the
// id slices' storage.
type PriorityFactorsRequest struct {
	JobIDs    []uint32
	JobIDsSet bool // the job id list was sent (not NULL); an empty list then matches no job
	UIDs      []uint32
	UIDsSet   bool // the uid list was sent (not NULL)
	// Partitions is a comma-separated list of partition names.
	Partitions    string
	PartitionsSet bool // a non-NULL string was sent (it may be "")
}

func (m *PriorityFactorsRequest) Decode(r *Reader, version uint16) error {
	m.JobIDs, m.JobIDsSet = m.JobIDs[:0], false
	m.UIDs, m.UIDsSet = m.UIDs[:0], false
	m.Partitions, m.PartitionsSet = "", false
	if version >= V23_02 {
		return miscEnd(r)
	}
	m.JobIDs, m.JobIDsSet = prioU32List(r, m.JobIDs)
	m.UIDs, m.UIDsSet = prioU32List(r, m.UIDs)
	p, null := r.StrNull()
	m.Partitions, m.PartitionsSet = string(p), !null
	return miscEnd(r)
}

func (m *PriorityFactorsRequest) Encode(w *Writer, version uint16) {
	if version >= V23_02 {
		return
	}
	prioPutU32List(w, m.JobIDs, m.JobIDsSet)
	prioPutU32List(w, m.UIDs, m.UIDsSet)
	w.StrNull([]byte(m.Partitions), m.Partitions == "" && !m.PartitionsSet)
}

// prioU32List reads a u32 count (NO_VAL = NULL list, set false) and that
// many u32, appending to dst; the count must fit in what is left.
func prioU32List(r *Reader, dst []uint32) ([]uint32, bool) {
	n, null := miscList(r, 4)
	for i := uint32(0); i < n && r.Err == nil; i++ {
		dst = append(dst, r.U32())
	}
	return dst, !null && r.Err == nil
}

func prioPutU32List(w *Writer, l []uint32, set bool) {
	if !set && len(l) == 0 {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(len(l)))
	for _, v := range l {
		w.U32(v)
	}
}

// PriorityTRES is one TRES of a job's priority: the three parallel arrays
// priority_tres, tres_names and tres_weights, always the same length on
// the wire (slurmctld packs all three with the job's tres_cnt; sprio
// indexes the names and weights by the priority_tres count).
type PriorityTRES struct {
	Name   string  // from the controller's TRES table, e.g. "cpu", "gres/gpu"
	Factor float64 // priority_tres: the weighted factor sprio shows
	Weight float64 // tres_weights: PriorityWeightTRES for it
}

// PriorityFactors is the factors block (priority_factors_t; in 22.05 the
// same fields sit directly in the object). The six factors already have
// their weights applied. sprio's priority is their sum plus the TRES
// factors plus (Site - NICE_OFFSET) minus (Nice - NICE_OFFSET).
type PriorityFactors struct {
	Age   float64
	Assoc float64
	FS    float64
	JS    float64
	Part  float64
	QOS   float64
	Site  uint32 // NICE_OFFSET + site factor
	TRES  []PriorityTRES
	Nice  uint32 // NICE_OFFSET + nice
}

// PriorityFactorsJob is one priority_factors_object_t: one pending job in
// one partition (slurmctld sends a job pending in several partitions once
// per partition and, from 24.11, a job with several QOS once per QOS).
type PriorityFactorsJob struct {
	// StepID carries the job id in every version. Only 26.05 sends the
	// rest (SLUID; StepID and StepHetComp are NO_VAL for a job);
	// before 26.05 Decode sets them as SLURM_STEP_ID_INITIALIZER leaves
	// them (SLUID 0, StepID and StepHetComp NO_VAL).
	StepID    JobStepID
	UserID    uint32
	Account   string // 23.02+
	Partition string
	QOS       string // 23.02+
	// DirectPrio is a manually set priority (scontrol update
	// priority=N); 0 when the priority comes from the factors. From
	// 23.02 a non-zero DirectPrio travels without the factors block (and
	// Decode leaves Factors zero); 22.05 always carries the block.
	DirectPrio float64
	Factors    PriorityFactors
}

// PriorityFactorsInfo is RESPONSE_PRIORITY_FACTORS (2027).
type PriorityFactorsInfo struct {
	Jobs []PriorityFactorsJob
	// EmptyList: an empty Jobs goes out as count 0 rather than NO_VAL
	// (what slurmctld sends). Decode sets it for a count of 0, so every
	// body re-encodes to itself; sprio treats both alike.
	EmptyList bool
}

// Smallest encodings of one object, by version (strings NULL, arrays
// empty, no factors block from 23.02).
const (
	prioJobMinLen2205 = 4 + 4 + 7*8 + 4 + 4 + 4 + 4 + 4 + 4 + 4 // ids, doubles, site, tres, tres_cnt, names, weights, nice, partition
	prioJobMinLen2302 = 4 + 4 + 4 + 8 + 4 + 4                   // account, job, partition, direct_prio, qos, user
	prioJobMinLen2605 = prioJobMinLen2302 + 8 + 8               // + sluid, step, het comp
	prioTRESMinLen    = 8 + 4 + 8                               // one factor, NULL name, one weight
)

var errPrioTRESCount = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "priority TRES arrays differ in length"}

func prioJobMinLen(version uint16) int {
	switch {
	case version >= V26_05:
		return prioJobMinLen2605
	case version >= V23_02:
		return prioJobMinLen2302
	}
	return prioJobMinLen2205
}

func (m *PriorityFactorsInfo) Decode(r *Reader, version uint16) error {
	*m = PriorityFactorsInfo{}
	n, null := miscList(r, prioJobMinLen(version))
	if r.Err != nil {
		return r.Err
	}
	m.EmptyList = !null && n == 0
	if n > 0 {
		m.Jobs = make([]PriorityFactorsJob, n)
	}
	for i := range m.Jobs {
		if err := m.Jobs[i].decode(r, version); err != nil {
			return err
		}
	}
	return miscEnd(r)
}

func (m *PriorityFactorsInfo) Encode(w *Writer, version uint16) {
	if len(m.Jobs) == 0 && !m.EmptyList {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(len(m.Jobs)))
	for i := range m.Jobs {
		m.Jobs[i].encode(w, version)
	}
}

func (j *PriorityFactorsJob) decode(r *Reader, version uint16) error {
	if version < V23_02 {
		j.StepID = JobStepID{JobID: r.U32(), StepID: NoVal, StepHetComp: NoVal}
		j.UserID = r.U32()
		f := &j.Factors
		f.Age, f.Assoc, f.FS = r.Double(), r.Double(), r.Double()
		f.JS, f.Part, f.QOS = r.Double(), r.Double(), r.Double()
		j.DirectPrio = r.Double()
		f.Site = r.U32()
		if err := f.decodeTRES(r, version); err != nil {
			return err
		}
		f.Nice = r.U32()
		j.Partition = r.String()
		return r.Err
	}
	j.Account = r.String()
	if version >= V26_05 {
		j.StepID.Decode(r, version)
	} else {
		j.StepID = JobStepID{JobID: r.U32(), StepID: NoVal, StepHetComp: NoVal}
	}
	j.Partition = r.String()
	j.DirectPrio = r.Double()
	if r.Err == nil && j.DirectPrio == 0 {
		f := &j.Factors
		f.Age, f.Assoc, f.FS = r.Double(), r.Double(), r.Double()
		f.JS, f.Part, f.QOS = r.Double(), r.Double(), r.Double()
		f.Site = r.U32()
		if err := f.decodeTRES(r, version); err != nil {
			return err
		}
		f.Nice = r.U32()
	}
	j.QOS = r.String()
	j.UserID = r.U32()
	return r.Err
}

func (j *PriorityFactorsJob) encode(w *Writer, version uint16) {
	f := &j.Factors
	if version < V23_02 {
		w.U32(j.StepID.JobID)
		w.U32(j.UserID)
		w.Double(f.Age)
		w.Double(f.Assoc)
		w.Double(f.FS)
		w.Double(f.JS)
		w.Double(f.Part)
		w.Double(f.QOS)
		w.Double(j.DirectPrio)
		w.U32(f.Site)
		f.encodeTRES(w, version)
		w.U32(f.Nice)
		w.Str(j.Partition)
		return
	}
	w.Str(j.Account)
	if version >= V26_05 {
		j.StepID.Encode(w, version)
	} else {
		w.U32(j.StepID.JobID)
	}
	w.Str(j.Partition)
	w.Double(j.DirectPrio)
	if j.DirectPrio == 0 { // NaN is "set": C's !direct_prio is false for it too
		w.Double(f.Age)
		w.Double(f.Assoc)
		w.Double(f.FS)
		w.Double(f.JS)
		w.Double(f.Part)
		w.Double(f.QOS)
		w.U32(f.Site)
		f.encodeTRES(w, version)
		w.U32(f.Nice)
	}
	w.Str(j.QOS)
	w.U32(j.UserID)
}

// decodeTRES reads the parallel arrays: packdouble_array priority_tres,
// (22.05: u32 tres_cnt), packstr_array names, packdouble_array weights.
// Counts that differ are refused: slurmctld never sends them and sprio
// would index past the shorter array.
func (f *PriorityFactors) decodeTRES(r *Reader, version uint16) error {
	n := r.U32()
	if r.Err != nil {
		return r.Err
	}
	if uint64(n)*prioTRESMinLen > uint64(r.Remaining()) {
		r.fail(ErrBadCount)
		return r.Err
	}
	if n > 0 {
		f.TRES = make([]PriorityTRES, n)
	}
	for i := range f.TRES {
		f.TRES[i].Factor = r.Double()
	}
	if version < V23_02 && !statsArrayLen(r, n) { // tres_cnt
		return miscErr(r, errPrioTRESCount)
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errPrioTRESCount)
	}
	for i := range f.TRES {
		f.TRES[i].Name = r.String()
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errPrioTRESCount)
	}
	for i := range f.TRES {
		f.TRES[i].Weight = r.Double()
	}
	return r.Err
}

func (f *PriorityFactors) encodeTRES(w *Writer, version uint16) {
	n := uint32(len(f.TRES))
	w.U32(n)
	for _, t := range f.TRES {
		w.Double(t.Factor)
	}
	if version < V23_02 {
		w.U32(n) // tres_cnt
	}
	w.U32(n)
	for _, t := range f.TRES {
		w.Str(t.Name)
	}
	w.U32(n)
	for _, t := range f.TRES {
		w.Double(t.Weight)
	}
}
