package codec

// Job information: REQUEST_JOB_INFO (2003), REQUEST_JOB_INFO_SINGLE (2021),
// REQUEST_JOB_USER_INFO (2039) and their reply RESPONSE_JOB_INFO (2004).
//
// Layouts checked against _unpack_job_info_members / pack_job (job_mgr.c,
// job_record.c, job_resources.c) of each release's own tag: 22.05.8,
// 23.02.0, 23.11.0, 24.05.0, 24.11.5, 25.05.0, 25.11.0, 26.05.3, and the
// older-version branches of the newer tags. There are two record
// layouts: the old one (22.05-24.05, job_id first after the array ids)
// and the one that begins with job_record_pack_common (24.11+).

// JobInfoRequest is REQUEST_JOB_INFO (identical 22.05-26.05). Decode
// allocates nothing: JobIDs is a view into the request buffer.
type JobInfoRequest struct {
	LastUpdate int64  // 0 = always send; else RC 1900 when nothing changed since
	ShowFlags  uint16 // SHOW_* bits
	// JobIDsSet false is the NULL list (u32 NO_VAL), which every client
	// sends; true is a list of JobIDs.Len() ids (internal callers).
	JobIDsSet bool
	JobIDs    U32View
}

// Decode reads the body.
func (m *JobInfoRequest) Decode(r *Reader, version uint16) error {
	m.LastUpdate = r.Time()
	m.ShowFlags = r.U16()
	m.JobIDs, m.JobIDsSet = U32View{}, false
	if v, null := readU32View(r); !null {
		m.JobIDs, m.JobIDsSet = v, true
	}
	return r.Err
}

// Encode writes the body.
func (m *JobInfoRequest) Encode(w *Writer, version uint16) {
	w.Time(m.LastUpdate)
	w.U16(m.ShowFlags)
	if !m.JobIDsSet {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(m.JobIDs.Len()))
	w.B = append(w.B, m.JobIDs.b...)
}

// JobInfoSingleRequest is REQUEST_JOB_INFO_SINGLE (job_id_msg_t, also the
// body of REQUEST_JOB_READY and REQUEST_BATCH_SCRIPT). Up to 25.05 it is
// u32 job_id + u16 show_flags; from 25.11 on a full step_id (sluid,
// job_id, step_id, step_het_comp) replaces the job id.
type JobInfoSingleRequest struct {
	JobID       uint32
	SLUID       uint64 // 25.11+ (0 = look up by JobID)
	StepID      uint32 // 25.11+; clients send NO_VAL (decoded as NO_VAL before)
	StepHetComp uint32 // 25.11+; clients send NO_VAL (decoded as NO_VAL before)
	ShowFlags   uint16
}

// Decode reads the body (no allocation).
func (m *JobInfoSingleRequest) Decode(r *Reader, version uint16) error {
	if version >= V25_11 {
		m.SLUID = r.U64()
		m.JobID = r.U32()
		m.StepID = r.U32()
		m.StepHetComp = r.U32()
	} else {
		m.SLUID, m.StepID, m.StepHetComp = 0, NoVal, NoVal
		m.JobID = r.U32()
	}
	m.ShowFlags = r.U16()
	return r.Err
}

// Encode writes the body.
func (m *JobInfoSingleRequest) Encode(w *Writer, version uint16) {
	if version >= V25_11 {
		w.U64(m.SLUID)
		w.U32(m.JobID)
		w.U32(m.StepID)
		w.U32(m.StepHetComp)
	} else {
		w.U32(m.JobID)
	}
	w.U16(m.ShowFlags)
}

// JobUserInfoRequest is REQUEST_JOB_USER_INFO (job_user_id_msg_t):
// u32 user_id, u16 show_flags in every version. It has no last_update,
// so the reply is never RC 1900.
type JobUserInfoRequest struct {
	UserID    uint32
	ShowFlags uint16
}

// Decode reads the body (no allocation).
func (m *JobUserInfoRequest) Decode(r *Reader, version uint16) error {
	m.UserID = r.U32()
	m.ShowFlags = r.U16()
	return r.Err
}

// Encode writes the body.
func (m *JobUserInfoRequest) Encode(w *Writer, version uint16) {
	w.U32(m.UserID)
	w.U16(m.ShowFlags)
}

// JobInfoMsg is RESPONSE_JOB_INFO: a header (record_count, last_update,
// last_backfill; the same in every version) and the job records.
type JobInfoMsg struct {
	LastUpdate   int64 // slurmctld sends time(NULL) of the pack
	LastBackfill int64 // end of the last backfill cycle (0 = none yet)
	Jobs         []JobInfo
}

// AppendJobInfoHeader writes the RESPONSE_JOB_INFO prefix for count
// records. Records pre-encoded with JobInfo.Encode for the same version
// (and show flags, see EncodeFor) follow it back to back.
func AppendJobInfoHeader(w *Writer, version uint16, count uint32, lastUpdate, lastBackfill int64) {
	w.U32(count)
	w.Time(lastUpdate)
	w.Time(lastBackfill)
}

// Decode reads the whole message and rejects trailing bytes.
func (m *JobInfoMsg) Decode(r *Reader, version uint16) error {
	n, null := r.Count(jobInfoMinLen(version))
	if null && r.Err == nil {
		return Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "job record_count NO_VAL")
	}
	m.LastUpdate = r.Time()
	m.LastBackfill = r.Time()
	m.Jobs = nil
	if r.Err != nil {
		return r.Err
	}
	if n > 0 {
		m.Jobs = make([]JobInfo, n)
	}
	for i := range m.Jobs {
		if err := m.Jobs[i].Decode(r, version); err != nil {
			m.Jobs = m.Jobs[:i]
			return err
		}
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// Encode writes the header and every record.
func (m *JobInfoMsg) Encode(w *Writer, version uint16) {
	AppendJobInfoHeader(w, version, uint32(len(m.Jobs)), m.LastUpdate, m.LastBackfill)
	for i := range m.Jobs {
		m.Jobs[i].Encode(w, version)
	}
}

// jobInfoMinLens[v] is the size of the smallest record of version v (all
// strings NULL, no details, no federation), used to bound record_count.
var jobInfoMinLens = func() map[uint16]int {
	out := make(map[uint16]int, len(Versions))
	for _, v := range Versions {
		var w Writer
		j := JobInfo{NoDetails: true}
		j.Encode(&w, v)
		out[v] = len(w.B)
	}
	return out
}()

func jobInfoMinLen(version uint16) int {
	if n := jobInfoMinLens[version]; n > 0 {
		return n
	}
	return 64
}

// JobInfo is one job record of RESPONSE_JOB_INFO (job_info_t), the union
// of every version's fields. Strings are NULL on the wire when empty.
// Times are Unix seconds (0 = unset). Unless noted, a field exists in all
// versions; "(x+)" marks the first version that sends it, "(..x)" the
// last. The field comments say how slurmctld fills them.
//
// What slurmctld's pack_job varies by job state:
//   - Pending: Features/Prefer are the requested ones; NumCPUs is the
//     requested minimum, MaxCPUs the requested maximum or 0; NumNodes and
//     MaxNodes are the requested/estimated counts; NumTasks the requested
//     tasks or else the minimum node count; StartTime/EndTime the
//     expected start (or begin time if in the future) and start+limit,
//     else 0; Partition the requested (comma) list; QOS the requested one
//     (24.11+). Nodes, NodeInx NULL.
//   - Started (running, suspended, completed...): Features carries
//     features_use and Prefer is NULL; NumCPUs is total_cpus, MaxCPUs 0;
//     NumNodes the allocated count, MaxNodes 0; Partition the one it runs
//     in; StartTime/EndTime the actual times.
//   - Completing (JOB_COMPLETING): Nodes/NodeInx are the nodes still
//     completing; NumCPUs/NumNodes the remaining counts.
//   - GresDetail is sent only for started, unfinished jobs with GRES, and
//     JobResrcs/GresDetail only with SHOW_DETAIL (see EncodeFor).
//
// The pending-details fields (Contiguous..MC) are sent for every job,
// whatever its state.
type JobInfo struct {
	// Identity.
	JobID       uint32
	SLUID       uint64 // (25.11+) record starts with a step_id; 0 if none assigned
	StepID      uint32 // (25.11+) step part of that step_id; slurmctld's job step_id
	StepHetComp uint32 // (25.11+)
	ArrayJobID  uint32 // 0 if not an array
	ArrayTaskID uint32 // NO_VAL if not an array task (and for the pending meta record)
	// ArrayTaskStr is only set on the pending array meta record: the hex
	// bitmap of the tasks still pending ("0x…"; clients print "1-3"),
	// NULL otherwise.
	ArrayTaskStr  string
	ArrayMaxTasks uint32 // %N throttle of the array, 0 = none
	HetJobID      uint32 // 0 if not heterogeneous
	HetJobIDSet   string
	HetJobOffset  uint32 // NO_VAL if not heterogeneous
	AssocID       uint32
	UserID        uint32
	UserName      string
	GroupID       uint32

	// State.
	JobState    uint32 // JOB_* base state | flags
	StateReason uint32 // WAIT_*/FAIL_* (u16 on the wire in 22.05)
	StateDesc   string // free text shown instead of the reason when set
	PowerFlags  uint8  // (..24.05) real up to 23.11; 24.05 sends 0 in its place
	Reboot      uint8
	RestartCnt  uint16
	// ShowFlags (..24.05) is the request's show_flags echoed per record.
	ShowFlags          uint16
	BatchFlag          uint16 // 1 = batch job, 0 = salloc/srun
	Bitflags           uint64 // job_desc flag bits (BACKFILL_SCHED, ...)
	ExitCode           uint32 // wait status: exit code << 8 | signal
	DerivedEC          uint32
	Priority           uint32   // 0 = held
	PriorityArray      []uint32 // (24.05+) per-partition priorities, multi-partition jobs
	PriorityArrayNames string   // (24.05+) partition names matching PriorityArray
	SiteFactor         uint32   // stored + NICE_OFFSET
	BillableTRES       float64  // slurmctld initializes it to (double)NO_VAL
	Profile            uint32   // ACCT_GATHER_PROFILE_* bits
	StartProtocolVer   uint16   // protocol version of the submitting client

	// Times.
	SubmitTime      int64
	EligibleTime    int64 // details begin_time
	AccrueTime      int64
	StartTime       int64
	EndTime         int64
	SuspendTime     int64
	PreSusTime      int64 // run seconds before the last suspend
	ResizeTime      int64
	LastSchedEval   int64
	PreemptTime     int64
	PreemptableTime int64 // 0 unless started and preemptible
	Deadline        int64

	// Limits, in minutes unless noted.
	TimeLimit   uint32 // INFINITE = unlimited; slurmctld substitutes the partition MaxTime for NO_VAL
	TimeMin     uint32
	DelayBoot   uint32 // seconds
	Nice        uint32 // nice + NICE_OFFSET (see NiceToWire); NICE_OFFSET without details
	ReqSwitch   uint32
	Wait4Switch uint32 // seconds

	// Descriptive strings.
	Account           string
	AdminComment      string
	AllocNode         string // submit host
	AllocSID          uint32 // submitter's session id
	BatchFeatures     string
	BatchHost         string // node running the batch script
	BurstBuffer       string
	BurstBufferState  string
	Cluster           string // slurmctld's ClusterName
	Comment           string
	Container         string // (sent twice in 22.05-24.05)
	ContainerID       string // (23.02+)
	ContainerType     string // (26.05+)
	Extra             string // (23.02+)
	FailedNode        string // (23.02+)
	GresTotal         string // gres_used: allocated GRES as text
	Licenses          string
	LicensesAllocated string // (25.05+)
	MailType          uint16
	MailUser          string
	MCSLabel          string
	Name              string
	Network           string
	Nodes             string // allocated nodes (hostlist)
	SchedNodes        string // expected nodes of a pending job
	Partition         string
	QOS               string
	ResvName          string
	ResvPorts         string // (24.05+)
	SelinuxContext    string
	SystemComment     string
	SubmitLine        string // (25.11+)
	WCKey             string
	TRESAllocStr      string // e.g. "cpu=1,mem=125G,node=1,billing=1"
	TRESReqStr        string
	CPUsPerTRES       string
	MemPerTRES        string
	TRESBind          string
	TRESFreq          string
	TRESPerJob        string
	TRESPerNode       string // e.g. "gres/gpu:2"
	TRESPerSocket     string
	TRESPerTask       string

	// Federation. In 22.05-24.05 the five fields are always sent; from
	// 24.11 a bool precedes them and they are sent only when true.
	FedPresent           bool
	FedOrigin            string
	FedSiblingsActive    uint64
	FedSiblingsActiveStr string
	FedSiblingsViable    uint64
	FedSiblingsViableStr string

	// Allocation.
	JobResrcs  *JobResources // only with SHOW_DETAIL; nil = NULL (NO_VAL)
	GresDetail []string      // per-node GRES detail, SHOW_DETAIL and running only
	NodeInx    *HexBits      // allocated nodes (node table index); nil = NULL
	// SelectPluginID (..22.05) heads the select jobinfo blob; for
	// cons_tres/cons_res/linear no data follows. 0 encodes as cons_tres.
	SelectPluginID uint32

	// Details ("default job details"). NoDetails (24.11+) sends the short
	// form (NumCPUs, NumNodes, Nice only) that slurmctld uses for a job
	// without a details record; before 24.11 the full form is always sent
	// (slurmctld's own no-details form there is malformed).
	NoDetails       bool
	ClusterFeatures string
	CPUFreqMin      uint32 // NO_VAL = unset
	CPUFreqMax      uint32
	CPUFreqGov      uint32
	Dependency      string
	JobSize         *HexBits // (23.02+) allowed node counts (--nodes=1,4-8), nil = NULL
	NTasksPerNode   uint16
	NTasksPerTRES   uint16
	Requeue         uint16
	SegmentSize     uint16 // (25.05+)
	WorkDir         string
	Features        string // requested (pending) or used (started) features
	Prefer          string // NULL once started
	Command         string // batch script path or argv[0] (22.05: whole argv joined)
	NumCPUs         uint32
	MaxCPUs         uint32 // 0 = no maximum
	NumNodes        uint32
	MaxNodes        uint32 // 0 = no maximum
	NumTasks        uint32
	Shared          uint16 // JOB_SHARED_* (NO_VAL16 = partition default)
	Exclusive       uint16 // (26.05+) display value of --exclusive
	Oversubscribe   uint16 // (26.05+)
	CronSpec        string // scrontab jobs only
	MemUpdateDelay  uint16 // (26.05+)
	MemUpdateMargin uint16 // (26.05+)

	// Pending details (sent for every job; zeros/NULL without details).
	Contiguous   uint16
	CoreSpec     uint16 // NO_VAL16 = unset; high bit = thread spec
	CPUsPerTask  uint16
	PnMinCPUs    uint16
	PnMinMemory  uint64 // MB per node, or per CPU when the MemPerCPU bit is set
	PnMinTmpDisk uint32 // MB
	OOMKillStep  uint16 // (24.11+)
	ReqNodes     string
	ReqNodeInx   *HexBits
	ExcNodes     string
	ExcNodeInx   *HexBits
	StdErr       string
	StdIn        string
	StdOut       string
	MC           *JobMultiCore // nil = NULL

	// empty marks string fields that arrived as non-NULL "" (rare; kept
	// so that decoded records re-encode byte for byte). Bit = jsf*.
	empty uint64
}

// String fields, indexes into JobInfo.empty.
const (
	jsfAccount = iota
	jsfAdminComment
	jsfAllocNode
	jsfArrayTaskStr
	jsfBatchFeatures
	jsfBatchHost
	jsfBurstBuffer
	jsfBurstBufferState
	jsfCluster
	jsfClusterFeatures
	jsfCommand
	jsfComment
	jsfContainer
	jsfContainerID
	jsfContainerType
	jsfCPUsPerTRES
	jsfCronSpec
	jsfDependency
	jsfExcNodes
	jsfExtra
	jsfFailedNode
	jsfFeatures
	jsfFedOrigin
	jsfFedSiblingsActiveStr
	jsfFedSiblingsViableStr
	jsfGresTotal
	jsfHetJobIDSet
	jsfLicenses
	jsfLicensesAllocated
	jsfMailUser
	jsfMCSLabel
	jsfMemPerTRES
	jsfName
	jsfNetwork
	jsfNodes
	jsfPartition
	jsfPrefer
	jsfPriorityArrayNames
	jsfQOS
	jsfReqNodes
	jsfResvName
	jsfResvPorts
	jsfSchedNodes
	jsfSelinuxContext
	jsfStateDesc
	jsfStdErr
	jsfStdIn
	jsfStdOut
	jsfSubmitLine
	jsfSystemComment
	jsfTRESAllocStr
	jsfTRESBind
	jsfTRESFreq
	jsfTRESPerJob
	jsfTRESPerNode
	jsfTRESPerSocket
	jsfTRESPerTask
	jsfTRESReqStr
	jsfUserName
	jsfWCKey
	jsfWorkDir
	jsfCount
)

var _ [64 - jsfCount]struct{} // the mask must fit in a uint64

// gs reads a string, remembering a non-NULL "".
func (j *JobInfo) gs(r *Reader, f uint) string {
	s, null := r.StrNull()
	if !null && len(s) == 0 && r.Err == nil {
		j.empty |= 1 << f
	}
	return string(s)
}

// ps writes a string; "" is NULL unless it was decoded as non-NULL "".
func (j *JobInfo) ps(w *Writer, s string, f uint) {
	if s == "" && j.empty&(1<<f) != 0 {
		w.StrEmpty()
		return
	}
	w.Str(s)
}

const jobShowDetail uint16 = 0x0002 // SHOW_DETAIL

// EncodeFor writes the record as pack_job does for a request carrying
// showFlags: show_flags echoed in the record (22.05-24.05), job_resources
// and gres_detail_str only with SHOW_DETAIL. The receiver is not changed.
// Records therefore differ per (version, show_flags) up to 24.05 and per
// (version, SHOW_DETAIL) from 24.11 on.
func (j *JobInfo) EncodeFor(w *Writer, version uint16, showFlags uint16) {
	c := *j
	c.ShowFlags = showFlags
	if showFlags&jobShowDetail == 0 {
		c.JobResrcs = nil
		c.GresDetail = nil
	}
	c.Encode(w, version)
}

// Decode reads one record.
func (j *JobInfo) Decode(r *Reader, version uint16) error {
	*j = JobInfo{}
	if version >= V24_11 {
		j.decodeNew(r, version)
	} else {
		j.decodeOld(r, version)
	}
	return r.Err
}

// Encode writes one record exactly as given (see EncodeFor).
func (j *JobInfo) Encode(w *Writer, version uint16) {
	if version >= V24_11 {
		j.encodeNew(w, version)
	} else {
		j.encodeOld(w, version)
	}
}

func (j *JobInfo) fedNonZero() bool {
	return j.FedOrigin != "" || j.FedSiblingsActive != 0 || j.FedSiblingsActiveStr != "" ||
		j.FedSiblingsViable != 0 || j.FedSiblingsViableStr != ""
}

// decodeOld reads the 22.05-24.05 layout.
func (j *JobInfo) decodeOld(r *Reader, v uint16) {
	j.ArrayJobID = r.U32()
	j.ArrayTaskID = r.U32()
	j.ArrayTaskStr = j.gs(r, jsfArrayTaskStr)
	j.ArrayMaxTasks = r.U32()
	j.AssocID = r.U32()
	j.Container = j.gs(r, jsfContainer)
	if v >= V23_02 {
		j.ContainerID = j.gs(r, jsfContainerID)
	}
	j.DelayBoot = r.U32()
	if v >= V23_02 {
		j.FailedNode = j.gs(r, jsfFailedNode)
	}
	j.JobID = r.U32()
	j.UserID = r.U32()
	j.GroupID = r.U32()
	j.HetJobID = r.U32()
	j.HetJobIDSet = j.gs(r, jsfHetJobIDSet)
	j.HetJobOffset = r.U32()
	j.Profile = r.U32()
	j.JobState = r.U32()
	j.BatchFlag = r.U16()
	if v >= V23_02 {
		j.StateReason = r.U32()
	} else {
		j.StateReason = uint32(r.U16())
	}
	j.PowerFlags = r.U8()
	j.Reboot = r.U8()
	j.RestartCnt = r.U16()
	j.ShowFlags = r.U16()
	j.Deadline = r.Time()
	j.AllocSID = r.U32()
	j.TimeLimit = r.U32()
	j.TimeMin = r.U32()
	j.Nice = r.U32()
	j.SubmitTime = r.Time()
	j.EligibleTime = r.Time()
	j.AccrueTime = r.Time()
	j.StartTime = r.Time()
	j.EndTime = r.Time()
	j.SuspendTime = r.Time()
	j.PreSusTime = r.Time()
	j.ResizeTime = r.Time()
	j.LastSchedEval = r.Time()
	j.PreemptTime = r.Time()
	j.Priority = r.U32()
	if v >= V24_05 {
		j.PriorityArray = r.U32Array()
		j.PriorityArrayNames = j.gs(r, jsfPriorityArrayNames)
	}
	j.BillableTRES = r.Double()
	j.Cluster = j.gs(r, jsfCluster)
	j.Nodes = j.gs(r, jsfNodes)
	j.SchedNodes = j.gs(r, jsfSchedNodes)
	j.Partition = j.gs(r, jsfPartition)
	j.Account = j.gs(r, jsfAccount)
	j.AdminComment = j.gs(r, jsfAdminComment)
	j.SiteFactor = r.U32()
	j.Network = j.gs(r, jsfNetwork)
	j.Comment = j.gs(r, jsfComment)
	if v >= V23_02 {
		j.Extra = j.gs(r, jsfExtra)
	}
	j.Container = j.gs(r, jsfContainer) // sent twice; clients keep this one
	j.BatchFeatures = j.gs(r, jsfBatchFeatures)
	j.BatchHost = j.gs(r, jsfBatchHost)
	j.BurstBuffer = j.gs(r, jsfBurstBuffer)
	j.BurstBufferState = j.gs(r, jsfBurstBufferState)
	j.SystemComment = j.gs(r, jsfSystemComment)
	j.QOS = j.gs(r, jsfQOS)
	j.PreemptableTime = r.Time()
	j.Licenses = j.gs(r, jsfLicenses)
	j.StateDesc = j.gs(r, jsfStateDesc)
	j.ResvName = j.gs(r, jsfResvName)
	if v >= V24_05 {
		j.ResvPorts = j.gs(r, jsfResvPorts)
	}
	j.MCSLabel = j.gs(r, jsfMCSLabel)
	j.ExitCode = r.U32()
	j.DerivedEC = r.U32()
	j.GresTotal = j.gs(r, jsfGresTotal)
	j.JobResrcs = readJobResources(r, v)
	j.GresDetail = r.StrArray()
	j.Name = j.gs(r, jsfName)
	j.UserName = j.gs(r, jsfUserName)
	j.WCKey = j.gs(r, jsfWCKey)
	j.ReqSwitch = r.U32()
	j.Wait4Switch = r.U32()
	j.AllocNode = j.gs(r, jsfAllocNode)
	j.NodeInx = readHexBits(r)
	if v < V23_02 {
		j.SelectPluginID = readSelectJobinfo(r)
	}
	j.Features = j.gs(r, jsfFeatures)
	j.Prefer = j.gs(r, jsfPrefer)
	j.ClusterFeatures = j.gs(r, jsfClusterFeatures)
	j.WorkDir = j.gs(r, jsfWorkDir)
	j.Dependency = j.gs(r, jsfDependency)
	j.Command = j.gs(r, jsfCommand)
	j.NumCPUs = r.U32()
	j.MaxCPUs = r.U32()
	j.NumNodes = r.U32()
	j.MaxNodes = r.U32()
	if v >= V23_02 {
		j.JobSize = readHexBits(r)
	}
	j.Requeue = r.U16()
	j.NTasksPerNode = r.U16()
	j.NTasksPerTRES = r.U16()
	j.NumTasks = r.U32()
	j.Shared = r.U16()
	j.CPUFreqMin = r.U32()
	j.CPUFreqMax = r.U32()
	j.CPUFreqGov = r.U32()
	j.CronSpec = j.gs(r, jsfCronSpec)
	j.decodePending(r, v)
	j.Bitflags = r.U64()
	j.TRESAllocStr = j.gs(r, jsfTRESAllocStr)
	j.TRESReqStr = j.gs(r, jsfTRESReqStr)
	j.StartProtocolVer = r.U16()
	j.FedOrigin = j.gs(r, jsfFedOrigin)
	j.FedSiblingsActive = r.U64()
	j.FedSiblingsActiveStr = j.gs(r, jsfFedSiblingsActiveStr)
	j.FedSiblingsViable = r.U64()
	j.FedSiblingsViableStr = j.gs(r, jsfFedSiblingsViableStr)
	j.FedPresent = j.fedNonZero()
	j.CPUsPerTRES = j.gs(r, jsfCPUsPerTRES)
	j.MemPerTRES = j.gs(r, jsfMemPerTRES)
	j.TRESBind = j.gs(r, jsfTRESBind)
	j.TRESFreq = j.gs(r, jsfTRESFreq)
	j.TRESPerJob = j.gs(r, jsfTRESPerJob)
	j.TRESPerNode = j.gs(r, jsfTRESPerNode)
	j.TRESPerSocket = j.gs(r, jsfTRESPerSocket)
	j.TRESPerTask = j.gs(r, jsfTRESPerTask)
	j.MailType = r.U16()
	j.MailUser = j.gs(r, jsfMailUser)
	j.SelinuxContext = j.gs(r, jsfSelinuxContext)
}

// encodeOld writes the 22.05-24.05 layout.
func (j *JobInfo) encodeOld(w *Writer, v uint16) {
	w.U32(j.ArrayJobID)
	w.U32(j.ArrayTaskID)
	j.ps(w, j.ArrayTaskStr, jsfArrayTaskStr)
	w.U32(j.ArrayMaxTasks)
	w.U32(j.AssocID)
	j.ps(w, j.Container, jsfContainer)
	if v >= V23_02 {
		j.ps(w, j.ContainerID, jsfContainerID)
	}
	w.U32(j.DelayBoot)
	if v >= V23_02 {
		j.ps(w, j.FailedNode, jsfFailedNode)
	}
	w.U32(j.JobID)
	w.U32(j.UserID)
	w.U32(j.GroupID)
	w.U32(j.HetJobID)
	j.ps(w, j.HetJobIDSet, jsfHetJobIDSet)
	w.U32(j.HetJobOffset)
	w.U32(j.Profile)
	w.U32(j.JobState)
	w.U16(j.BatchFlag)
	if v >= V23_02 {
		w.U32(j.StateReason)
	} else {
		w.U16(uint16(j.StateReason))
	}
	w.U8(j.PowerFlags)
	w.U8(j.Reboot)
	w.U16(j.RestartCnt)
	w.U16(j.ShowFlags)
	w.Time(j.Deadline)
	w.U32(j.AllocSID)
	w.U32(j.TimeLimit)
	w.U32(j.TimeMin)
	w.U32(j.Nice)
	w.Time(j.SubmitTime)
	w.Time(j.EligibleTime)
	w.Time(j.AccrueTime)
	w.Time(j.StartTime)
	w.Time(j.EndTime)
	w.Time(j.SuspendTime)
	w.Time(j.PreSusTime)
	w.Time(j.ResizeTime)
	w.Time(j.LastSchedEval)
	w.Time(j.PreemptTime)
	w.U32(j.Priority)
	if v >= V24_05 {
		w.U32Array(j.PriorityArray)
		j.ps(w, j.PriorityArrayNames, jsfPriorityArrayNames)
	}
	w.Double(j.BillableTRES)
	j.ps(w, j.Cluster, jsfCluster)
	j.ps(w, j.Nodes, jsfNodes)
	j.ps(w, j.SchedNodes, jsfSchedNodes)
	j.ps(w, j.Partition, jsfPartition)
	j.ps(w, j.Account, jsfAccount)
	j.ps(w, j.AdminComment, jsfAdminComment)
	w.U32(j.SiteFactor)
	j.ps(w, j.Network, jsfNetwork)
	j.ps(w, j.Comment, jsfComment)
	if v >= V23_02 {
		j.ps(w, j.Extra, jsfExtra)
	}
	j.ps(w, j.Container, jsfContainer)
	j.ps(w, j.BatchFeatures, jsfBatchFeatures)
	j.ps(w, j.BatchHost, jsfBatchHost)
	j.ps(w, j.BurstBuffer, jsfBurstBuffer)
	j.ps(w, j.BurstBufferState, jsfBurstBufferState)
	j.ps(w, j.SystemComment, jsfSystemComment)
	j.ps(w, j.QOS, jsfQOS)
	w.Time(j.PreemptableTime)
	j.ps(w, j.Licenses, jsfLicenses)
	j.ps(w, j.StateDesc, jsfStateDesc)
	j.ps(w, j.ResvName, jsfResvName)
	if v >= V24_05 {
		j.ps(w, j.ResvPorts, jsfResvPorts)
	}
	j.ps(w, j.MCSLabel, jsfMCSLabel)
	w.U32(j.ExitCode)
	w.U32(j.DerivedEC)
	j.ps(w, j.GresTotal, jsfGresTotal)
	writeJobResources(w, j.JobResrcs, v)
	w.StrArray(j.GresDetail)
	j.ps(w, j.Name, jsfName)
	j.ps(w, j.UserName, jsfUserName)
	j.ps(w, j.WCKey, jsfWCKey)
	w.U32(j.ReqSwitch)
	w.U32(j.Wait4Switch)
	j.ps(w, j.AllocNode, jsfAllocNode)
	writeHexBits(w, j.NodeInx)
	if v < V23_02 {
		id := j.SelectPluginID
		if id == 0 {
			id = SELECT_PLUGIN_CONS_TRES
		}
		w.U32(id)
	}
	j.ps(w, j.Features, jsfFeatures)
	j.ps(w, j.Prefer, jsfPrefer)
	j.ps(w, j.ClusterFeatures, jsfClusterFeatures)
	j.ps(w, j.WorkDir, jsfWorkDir)
	j.ps(w, j.Dependency, jsfDependency)
	j.ps(w, j.Command, jsfCommand)
	w.U32(j.NumCPUs)
	w.U32(j.MaxCPUs)
	w.U32(j.NumNodes)
	w.U32(j.MaxNodes)
	if v >= V23_02 {
		writeHexBits(w, j.JobSize)
	}
	w.U16(j.Requeue)
	w.U16(j.NTasksPerNode)
	w.U16(j.NTasksPerTRES)
	w.U32(j.NumTasks)
	w.U16(j.Shared)
	w.U32(j.CPUFreqMin)
	w.U32(j.CPUFreqMax)
	w.U32(j.CPUFreqGov)
	j.ps(w, j.CronSpec, jsfCronSpec)
	j.encodePending(w, v)
	w.U64(j.Bitflags)
	j.ps(w, j.TRESAllocStr, jsfTRESAllocStr)
	j.ps(w, j.TRESReqStr, jsfTRESReqStr)
	w.U16(j.StartProtocolVer)
	j.ps(w, j.FedOrigin, jsfFedOrigin)
	w.U64(j.FedSiblingsActive)
	j.ps(w, j.FedSiblingsActiveStr, jsfFedSiblingsActiveStr)
	w.U64(j.FedSiblingsViable)
	j.ps(w, j.FedSiblingsViableStr, jsfFedSiblingsViableStr)
	j.ps(w, j.CPUsPerTRES, jsfCPUsPerTRES)
	j.ps(w, j.MemPerTRES, jsfMemPerTRES)
	j.ps(w, j.TRESBind, jsfTRESBind)
	j.ps(w, j.TRESFreq, jsfTRESFreq)
	j.ps(w, j.TRESPerJob, jsfTRESPerJob)
	j.ps(w, j.TRESPerNode, jsfTRESPerNode)
	j.ps(w, j.TRESPerSocket, jsfTRESPerSocket)
	j.ps(w, j.TRESPerTask, jsfTRESPerTask)
	w.U16(j.MailType)
	j.ps(w, j.MailUser, jsfMailUser)
	j.ps(w, j.SelinuxContext, jsfSelinuxContext)
}

// readSelectJobinfo reads 22.05's select jobinfo: the plugin id and, for
// the plugins a controller can run here, no data. The Cray plugins pack
// data we do not model, so they are refused.
func readSelectJobinfo(r *Reader) uint32 {
	id := r.U32()
	switch id {
	case SELECT_PLUGIN_CONS_TRES, SELECT_PLUGIN_CONS_RES, SELECT_PLUGIN_LINEAR:
	default:
		if r.Err == nil {
			r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "select jobinfo of plugin %d", id))
		}
	}
	return id
}

// decodeNew reads the 24.11+ layout (job_record_pack_common first).
func (j *JobInfo) decodeNew(r *Reader, v uint16) {
	if v >= V25_11 {
		j.SLUID = r.U64()
		j.JobID = r.U32()
		j.StepID = r.U32()
		j.StepHetComp = r.U32()
	}
	j.Account = j.gs(r, jsfAccount)
	j.AdminComment = j.gs(r, jsfAdminComment)
	j.AllocNode = j.gs(r, jsfAllocNode)
	j.AllocSID = r.U32()
	j.ArrayJobID = r.U32()
	j.ArrayTaskID = r.U32()
	j.AssocID = r.U32()
	j.BatchFeatures = j.gs(r, jsfBatchFeatures)
	j.BatchFlag = r.U16()
	j.BatchHost = j.gs(r, jsfBatchHost)
	j.Bitflags = r.U64()
	j.BurstBuffer = j.gs(r, jsfBurstBuffer)
	j.BurstBufferState = j.gs(r, jsfBurstBufferState)
	j.BillableTRES = r.Double()
	j.Comment = j.gs(r, jsfComment)
	j.Container = j.gs(r, jsfContainer)
	j.ContainerID = j.gs(r, jsfContainerID)
	if v >= V26_05 {
		j.ContainerType = j.gs(r, jsfContainerType)
	}
	j.CPUsPerTRES = j.gs(r, jsfCPUsPerTRES)
	j.Deadline = r.Time()
	j.DelayBoot = r.U32()
	j.DerivedEC = r.U32()
	j.ExitCode = r.U32()
	j.Extra = j.gs(r, jsfExtra)
	j.FailedNode = j.gs(r, jsfFailedNode)
	if j.FedPresent = r.Bool(); j.FedPresent {
		j.FedOrigin = j.gs(r, jsfFedOrigin)
		j.FedSiblingsActive = r.U64()
		j.FedSiblingsActiveStr = j.gs(r, jsfFedSiblingsActiveStr)
		j.FedSiblingsViable = r.U64()
		j.FedSiblingsViableStr = j.gs(r, jsfFedSiblingsViableStr)
	}
	j.GresTotal = j.gs(r, jsfGresTotal)
	j.GroupID = r.U32()
	j.HetJobID = r.U32()
	j.HetJobIDSet = j.gs(r, jsfHetJobIDSet)
	j.HetJobOffset = r.U32()
	if v < V25_11 {
		j.JobID = r.U32()
	}
	j.JobState = r.U32()
	j.LastSchedEval = r.Time()
	j.Licenses = j.gs(r, jsfLicenses)
	if v >= V25_05 {
		j.LicensesAllocated = j.gs(r, jsfLicensesAllocated)
	}
	j.MailType = r.U16()
	j.MailUser = j.gs(r, jsfMailUser)
	j.MCSLabel = j.gs(r, jsfMCSLabel)
	j.MemPerTRES = j.gs(r, jsfMemPerTRES)
	j.Name = j.gs(r, jsfName)
	j.Network = j.gs(r, jsfNetwork)
	j.PreemptTime = r.Time()
	j.PreSusTime = r.Time()
	j.Priority = r.U32()
	j.Profile = r.U32()
	j.Reboot = r.U8()
	j.ReqSwitch = r.U32()
	j.ResizeTime = r.Time()
	j.RestartCnt = r.U16()
	j.ResvName = j.gs(r, jsfResvName)
	j.ResvPorts = j.gs(r, jsfResvPorts)
	j.SelinuxContext = j.gs(r, jsfSelinuxContext)
	j.SiteFactor = r.U32()
	j.StartProtocolVer = r.U16()
	j.StateDesc = j.gs(r, jsfStateDesc)
	j.StateReason = r.U32()
	j.SuspendTime = r.Time()
	j.SystemComment = j.gs(r, jsfSystemComment)
	j.TimeMin = r.U32()
	j.TRESBind = j.gs(r, jsfTRESBind)
	j.TRESAllocStr = j.gs(r, jsfTRESAllocStr)
	j.TRESReqStr = j.gs(r, jsfTRESReqStr)
	j.TRESFreq = j.gs(r, jsfTRESFreq)
	j.TRESPerJob = j.gs(r, jsfTRESPerJob)
	j.TRESPerNode = j.gs(r, jsfTRESPerNode)
	j.TRESPerSocket = j.gs(r, jsfTRESPerSocket)
	j.TRESPerTask = j.gs(r, jsfTRESPerTask)
	j.UserID = r.U32()
	j.UserName = j.gs(r, jsfUserName)
	j.Wait4Switch = r.U32()
	j.WCKey = j.gs(r, jsfWCKey)
	// end of job_record_pack_common
	j.ArrayTaskStr = j.gs(r, jsfArrayTaskStr)
	j.ArrayMaxTasks = r.U32()
	j.TimeLimit = r.U32()
	j.StartTime = r.Time()
	j.EndTime = r.Time()
	j.PriorityArray = r.U32Array()
	j.PriorityArrayNames = j.gs(r, jsfPriorityArrayNames)
	j.Cluster = j.gs(r, jsfCluster)
	j.Nodes = j.gs(r, jsfNodes)
	j.SchedNodes = j.gs(r, jsfSchedNodes)
	j.Partition = j.gs(r, jsfPartition)
	j.QOS = j.gs(r, jsfQOS)
	j.PreemptableTime = r.Time()
	j.JobResrcs = readJobResources(r, v)
	j.GresDetail = r.StrArray()
	j.NodeInx = readHexBits(r)
	if j.NoDetails = !r.Bool(); j.NoDetails {
		j.NumCPUs = r.U32()
		j.NumNodes = r.U32()
		j.Nice = r.U32()
	} else {
		j.AccrueTime = r.Time()
		j.EligibleTime = r.Time()
		j.ClusterFeatures = j.gs(r, jsfClusterFeatures)
		j.CPUFreqGov = r.U32()
		j.CPUFreqMax = r.U32()
		j.CPUFreqMin = r.U32()
		j.Dependency = j.gs(r, jsfDependency)
		j.JobSize = readHexBits(r)
		j.Nice = r.U32()
		j.NTasksPerNode = r.U16()
		j.NTasksPerTRES = r.U16()
		j.Requeue = r.U16()
		if v >= V25_05 {
			j.SegmentSize = r.U16()
		}
		j.SubmitTime = r.Time()
		j.WorkDir = j.gs(r, jsfWorkDir)
		j.Features = j.gs(r, jsfFeatures)
		j.Prefer = j.gs(r, jsfPrefer)
		j.Command = j.gs(r, jsfCommand)
		if v >= V25_11 {
			j.SubmitLine = j.gs(r, jsfSubmitLine)
		}
		j.NumCPUs = r.U32()
		j.MaxCPUs = r.U32()
		j.NumNodes = r.U32()
		j.MaxNodes = r.U32()
		j.NumTasks = r.U32()
		if v >= V26_05 {
			j.Exclusive = r.U16()
			j.Shared = r.U16()
			j.Oversubscribe = r.U16()
		} else {
			j.Shared = r.U16()
		}
		j.CronSpec = j.gs(r, jsfCronSpec)
		if v >= V26_05 {
			j.MemUpdateDelay = r.U16()
			j.MemUpdateMargin = r.U16()
		}
	}
	j.decodePending(r, v)
}

// encodeNew writes the 24.11+ layout.
func (j *JobInfo) encodeNew(w *Writer, v uint16) {
	if v >= V25_11 {
		w.U64(j.SLUID)
		w.U32(j.JobID)
		w.U32(j.StepID)
		w.U32(j.StepHetComp)
	}
	j.ps(w, j.Account, jsfAccount)
	j.ps(w, j.AdminComment, jsfAdminComment)
	j.ps(w, j.AllocNode, jsfAllocNode)
	w.U32(j.AllocSID)
	w.U32(j.ArrayJobID)
	w.U32(j.ArrayTaskID)
	w.U32(j.AssocID)
	j.ps(w, j.BatchFeatures, jsfBatchFeatures)
	w.U16(j.BatchFlag)
	j.ps(w, j.BatchHost, jsfBatchHost)
	w.U64(j.Bitflags)
	j.ps(w, j.BurstBuffer, jsfBurstBuffer)
	j.ps(w, j.BurstBufferState, jsfBurstBufferState)
	w.Double(j.BillableTRES)
	j.ps(w, j.Comment, jsfComment)
	j.ps(w, j.Container, jsfContainer)
	j.ps(w, j.ContainerID, jsfContainerID)
	if v >= V26_05 {
		j.ps(w, j.ContainerType, jsfContainerType)
	}
	j.ps(w, j.CPUsPerTRES, jsfCPUsPerTRES)
	w.Time(j.Deadline)
	w.U32(j.DelayBoot)
	w.U32(j.DerivedEC)
	w.U32(j.ExitCode)
	j.ps(w, j.Extra, jsfExtra)
	j.ps(w, j.FailedNode, jsfFailedNode)
	if j.FedPresent || j.fedNonZero() {
		w.Bool(true)
		j.ps(w, j.FedOrigin, jsfFedOrigin)
		w.U64(j.FedSiblingsActive)
		j.ps(w, j.FedSiblingsActiveStr, jsfFedSiblingsActiveStr)
		w.U64(j.FedSiblingsViable)
		j.ps(w, j.FedSiblingsViableStr, jsfFedSiblingsViableStr)
	} else {
		w.Bool(false)
	}
	j.ps(w, j.GresTotal, jsfGresTotal)
	w.U32(j.GroupID)
	w.U32(j.HetJobID)
	j.ps(w, j.HetJobIDSet, jsfHetJobIDSet)
	w.U32(j.HetJobOffset)
	if v < V25_11 {
		w.U32(j.JobID)
	}
	w.U32(j.JobState)
	w.Time(j.LastSchedEval)
	j.ps(w, j.Licenses, jsfLicenses)
	if v >= V25_05 {
		j.ps(w, j.LicensesAllocated, jsfLicensesAllocated)
	}
	w.U16(j.MailType)
	j.ps(w, j.MailUser, jsfMailUser)
	j.ps(w, j.MCSLabel, jsfMCSLabel)
	j.ps(w, j.MemPerTRES, jsfMemPerTRES)
	j.ps(w, j.Name, jsfName)
	j.ps(w, j.Network, jsfNetwork)
	w.Time(j.PreemptTime)
	w.Time(j.PreSusTime)
	w.U32(j.Priority)
	w.U32(j.Profile)
	w.U8(j.Reboot)
	w.U32(j.ReqSwitch)
	w.Time(j.ResizeTime)
	w.U16(j.RestartCnt)
	j.ps(w, j.ResvName, jsfResvName)
	j.ps(w, j.ResvPorts, jsfResvPorts)
	j.ps(w, j.SelinuxContext, jsfSelinuxContext)
	w.U32(j.SiteFactor)
	w.U16(j.StartProtocolVer)
	j.ps(w, j.StateDesc, jsfStateDesc)
	w.U32(j.StateReason)
	w.Time(j.SuspendTime)
	j.ps(w, j.SystemComment, jsfSystemComment)
	w.U32(j.TimeMin)
	j.ps(w, j.TRESBind, jsfTRESBind)
	j.ps(w, j.TRESAllocStr, jsfTRESAllocStr)
	j.ps(w, j.TRESReqStr, jsfTRESReqStr)
	j.ps(w, j.TRESFreq, jsfTRESFreq)
	j.ps(w, j.TRESPerJob, jsfTRESPerJob)
	j.ps(w, j.TRESPerNode, jsfTRESPerNode)
	j.ps(w, j.TRESPerSocket, jsfTRESPerSocket)
	j.ps(w, j.TRESPerTask, jsfTRESPerTask)
	w.U32(j.UserID)
	j.ps(w, j.UserName, jsfUserName)
	w.U32(j.Wait4Switch)
	j.ps(w, j.WCKey, jsfWCKey)
	j.ps(w, j.ArrayTaskStr, jsfArrayTaskStr)
	w.U32(j.ArrayMaxTasks)
	w.U32(j.TimeLimit)
	w.Time(j.StartTime)
	w.Time(j.EndTime)
	w.U32Array(j.PriorityArray)
	j.ps(w, j.PriorityArrayNames, jsfPriorityArrayNames)
	j.ps(w, j.Cluster, jsfCluster)
	j.ps(w, j.Nodes, jsfNodes)
	j.ps(w, j.SchedNodes, jsfSchedNodes)
	j.ps(w, j.Partition, jsfPartition)
	j.ps(w, j.QOS, jsfQOS)
	w.Time(j.PreemptableTime)
	writeJobResources(w, j.JobResrcs, v)
	w.StrArray(j.GresDetail)
	writeHexBits(w, j.NodeInx)
	if j.NoDetails {
		w.Bool(false)
		w.U32(j.NumCPUs)
		w.U32(j.NumNodes)
		w.U32(j.Nice)
	} else {
		w.Bool(true)
		w.Time(j.AccrueTime)
		w.Time(j.EligibleTime)
		j.ps(w, j.ClusterFeatures, jsfClusterFeatures)
		w.U32(j.CPUFreqGov)
		w.U32(j.CPUFreqMax)
		w.U32(j.CPUFreqMin)
		j.ps(w, j.Dependency, jsfDependency)
		writeHexBits(w, j.JobSize)
		w.U32(j.Nice)
		w.U16(j.NTasksPerNode)
		w.U16(j.NTasksPerTRES)
		w.U16(j.Requeue)
		if v >= V25_05 {
			w.U16(j.SegmentSize)
		}
		w.Time(j.SubmitTime)
		j.ps(w, j.WorkDir, jsfWorkDir)
		j.ps(w, j.Features, jsfFeatures)
		j.ps(w, j.Prefer, jsfPrefer)
		j.ps(w, j.Command, jsfCommand)
		if v >= V25_11 {
			j.ps(w, j.SubmitLine, jsfSubmitLine)
		}
		w.U32(j.NumCPUs)
		w.U32(j.MaxCPUs)
		w.U32(j.NumNodes)
		w.U32(j.MaxNodes)
		w.U32(j.NumTasks)
		if v >= V26_05 {
			w.U16(j.Exclusive)
			w.U16(j.Shared)
			w.U16(j.Oversubscribe)
		} else {
			w.U16(j.Shared)
		}
		j.ps(w, j.CronSpec, jsfCronSpec)
		if v >= V26_05 {
			w.U16(j.MemUpdateDelay)
			w.U16(j.MemUpdateMargin)
		}
	}
	j.encodePending(w, v)
}

// decodePending reads _pack_pending_job_details.
func (j *JobInfo) decodePending(r *Reader, v uint16) {
	j.Contiguous = r.U16()
	j.CoreSpec = r.U16()
	j.CPUsPerTask = r.U16()
	j.PnMinCPUs = r.U16()
	j.PnMinMemory = r.U64()
	j.PnMinTmpDisk = r.U32()
	if v >= V24_11 {
		j.OOMKillStep = r.U16()
	}
	j.ReqNodes = j.gs(r, jsfReqNodes)
	j.ReqNodeInx = readHexBits(r)
	j.ExcNodes = j.gs(r, jsfExcNodes)
	j.ExcNodeInx = readHexBits(r)
	j.StdErr = j.gs(r, jsfStdErr)
	j.StdIn = j.gs(r, jsfStdIn)
	j.StdOut = j.gs(r, jsfStdOut)
	j.MC = readJobMultiCore(r)
}

func (j *JobInfo) encodePending(w *Writer, v uint16) {
	w.U16(j.Contiguous)
	w.U16(j.CoreSpec)
	w.U16(j.CPUsPerTask)
	w.U16(j.PnMinCPUs)
	w.U64(j.PnMinMemory)
	w.U32(j.PnMinTmpDisk)
	if v >= V24_11 {
		w.U16(j.OOMKillStep)
	}
	j.ps(w, j.ReqNodes, jsfReqNodes)
	writeHexBits(w, j.ReqNodeInx)
	j.ps(w, j.ExcNodes, jsfExcNodes)
	writeHexBits(w, j.ExcNodeInx)
	j.ps(w, j.StdErr, jsfStdErr)
	j.ps(w, j.StdIn, jsfStdIn)
	j.ps(w, j.StdOut, jsfStdOut)
	writeJobMultiCore(w, j.MC)
}
