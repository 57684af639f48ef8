package codec

import "strings"

// Job descriptor (job_desc_msg_t): the body of REQUEST_SUBMIT_BATCH_JOB
// (4003), REQUEST_JOB_WILL_RUN (4012), REQUEST_RESOURCE_ALLOCATION (4001)
// and REQUEST_UPDATE_JOB (3001), plus RESPONSE_SUBMIT_BATCH_JOB (4004).
//
// Layout per protocol version (src/common/slurm_protocol_pack.c,
// _pack_job_desc_msg; every branch checked against the pack and unpack
// code of the release that introduced it and of the newest release):
//   - 22.05: base list; power_flags u8 after pn_min_tmp_disk; a select
//     jobinfo (u32 plugin id, no data) after wait4switch.
//   - 23.02, 23.11: + container_id, + job_size_str; select jobinfo gone.
//   - 24.05: + resv_port_cnt, + segment_size; power_flags kept as an
//     always-zero placeholder byte.
//   - 24.11: + oom_kill_step; the placeholder byte is gone.
//   - 25.05: + alloc_tls_cert.
//   - 25.11: the u32 job_id becomes a full step id at the very start.
//   - 26.05: + container_type, + mem_update_delay/mem_update_margin.

// Defaults and flags used in job descriptors (slurm/slurm.h).
const (
	// SlurmAuthNobody is the user_id/group_id an unset job_desc carries
	// from 23.02 on (22.05 sends NO_VAL); the server substitutes the
	// authenticated ids.
	SlurmAuthNobody uint32 = 99

	// In REQUEST_UPDATE_JOB alloc_sid carries the hold kind when
	// priority is 0: `scontrol uhold` sends AllocSIDUserHold (user hold,
	// WAIT_HELD_USER); `scontrol hold` sends 0, which slurmctld makes an
	// admin hold (WAIT_HELD) for an operator and a user hold otherwise.
	// AllocSIDAdminHold is defined by Slurm but no client sends it.
	AllocSIDAdminHold uint32 = 1
	AllocSIDUserHold  uint32 = 2

	UseDefaultAcct  uint64 = 1 << 25 // bitflags: account was NULL at pack time
	UseDefaultPart  uint64 = 1 << 26 // bitflags: partition was NULL
	UseDefaultQOS   uint64 = 1 << 27 // bitflags: qos was NULL
	UseDefaultWckey uint64 = 1 << 28 // bitflags: wckey was NULL

	OpenModeAppend   uint8 = 1
	OpenModeTruncate uint8 = 2

	// ESLURM_JOB_HELD is the non-fatal error_code slurmctld puts in
	// RESPONSE_SUBMIT_BATCH_JOB for a job submitted held (sbatch --hold).
	ESLURM_JOB_HELD = 2042
)

// NoStepID is SLURM_STEP_ID_INITIALIZER: every id unset.
var NoStepID = JobStepID{JobID: NoVal, StepID: NoVal, StepHetComp: NoVal}

// jcStr reads a packstr into a Go string; a non-NULL "" sets bit in
// *empty so the encoder can write it back as "" rather than NULL.
func jcStr(r *Reader, empty *uint64, bit uint) string {
	b, null := r.StrNull()
	if !null && len(b) == 0 {
		*empty |= 1 << bit
	}
	return string(b)
}

// jcPutStr writes s; "" goes out as NULL unless bit is set in empty.
func jcPutStr(w *Writer, s string, empty uint64, bit uint) {
	if s == "" && empty&(1<<bit) != 0 {
		w.StrEmpty()
		return
	}
	w.Str(s)
}

// jcStrArray reads packstr_array. Slurm writes a NULL array as count 0
// and never NO_VAL (its reader fails on it). With noNull, a NULL entry
// is an error, as slurmctld's envcount check makes it for the
// environments; otherwise it reads as "".
func jcStrArray(r *Reader, noNull bool) []string {
	n, null := r.Count(4)
	if r.Err != nil {
		return nil
	}
	if null {
		r.fail(ErrBadCount)
		return nil
	}
	if n == 0 {
		return nil
	}
	// Two passes: the first checks the entries and sums their lengths,
	// the second cuts them from one string (an environment is a hundred
	// entries or so: one allocation instead of one each).
	start := *r
	total := 0
	for i := uint32(0); i < n; i++ {
		b, isNull := r.StrNull()
		if r.Err != nil {
			return nil
		}
		if isNull && noNull {
			r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "NULL entry %d in environment", i))
			return nil
		}
		total += len(b)
	}
	end := *r
	*r = start
	var sb strings.Builder
	sb.Grow(total)
	for i := uint32(0); i < n; i++ {
		b, _ := r.StrNull()
		sb.Write(b)
	}
	all := sb.String()
	*r = start
	out := make([]string, n)
	at := 0
	for i := range out {
		b, _ := r.StrNull()
		out[i] = all[at : at+len(b)]
		at += len(b)
	}
	*r = end
	return out
}

// jcPutStrArray writes packstr_array with every entry non-NULL (so an
// empty argument stays an empty argument).
func jcPutStrArray(w *Writer, a []string) {
	w.U32(uint32(len(a)))
	for _, s := range a {
		w.U32(uint32(len(s) + 1))
		w.B = append(w.B, s...)
		w.B = append(w.B, 0)
	}
}

// CronEntry is cron_entry_t (scrontab jobs), packed by pack_cron_entry
// behind a u8 "set" flag; identical in every supported version.
type CronEntry struct {
	Flags      uint32   // CRON_WILD_* bits
	Minute     *HexBits // nil = NULL bitmap
	Hour       *HexBits
	DayOfMonth *HexBits
	Month      *HexBits
	DayOfWeek  *HexBits
	Cronspec   string // the crontab line's time spec
	LineStart  uint32 // line range in the user's crontab file
	LineEnd    uint32
}

func decodeCronEntry(r *Reader) *CronEntry {
	if r.U8() == 0 || r.Err != nil {
		return nil
	}
	c := &CronEntry{Flags: r.U32()}
	c.Minute = readHexBits(r)
	c.Hour = readHexBits(r)
	c.DayOfMonth = readHexBits(r)
	c.Month = readHexBits(r)
	c.DayOfWeek = readHexBits(r)
	c.Cronspec = r.String()
	c.LineStart = r.U32()
	c.LineEnd = r.U32()
	return c
}

func encodeCronEntry(w *Writer, c *CronEntry) {
	if c == nil {
		w.U8(0)
		return
	}
	w.U8(1)
	w.U32(c.Flags)
	writeHexBits(w, c.Minute)
	writeHexBits(w, c.Hour)
	writeHexBits(w, c.DayOfMonth)
	writeHexBits(w, c.Month)
	writeHexBits(w, c.DayOfWeek)
	w.Str(c.Cronspec)
	w.U32(c.LineStart)
	w.U32(c.LineEnd)
}

// JDStr names a string field of JobDesc, for JobDesc.EmptyStrs.
type JDStr uint

// JobDesc string fields (in 26.05 wire order).
const (
	JDBatchFeatures JDStr = iota
	JDClusterFeatures
	JDClusters
	JDContainer
	JDContainerID
	JDContainerType
	JDFeatures
	JDJobIDStr
	JDName
	JDAllocNode
	JDArrayInx
	JDBurstBuffer
	JDPrefer
	JDPartition
	JDDependency
	JDAccount
	JDAdminComment
	JDComment
	JDQOS
	JDMCSLabel
	JDOriginCluster
	JDAcctgFreq
	JDReqContext
	JDReqNodes
	JDExcNodes
	JDScript
	JDStdErr
	JDStdIn
	JDStdOut
	JDSubmitLine
	JDWorkDir
	JDCPUBind
	JDMemBind
	JDJobSizeStr
	JDAllocTLSCert
	JDRespHost
	JDNetwork
	JDLicenses
	JDMailUser
	JDReservation
	JDWckey
	JDExtra
	JDX11MagicCookie
	JDX11Target
	JDCPUsPerTRES
	JDMemPerTRES
	JDTRESBind
	JDTRESFreq
	JDTRESPerJob
	JDTRESPerNode
	JDTRESPerSocket
	JDTRESPerTask
)

// JobDesc is job_desc_msg_t as clients pack it. "Unset" numbers carry
// the slurm_init_job_desc_msg defaults: NO_VAL/NO_VAL16/NO_VAL8/NO_VAL64
// as noted, everything else 0. Strings are "" when NULL; EmptyStrs
// records which ones were sent as a non-NULL "" (in an update that means
// "clear this field", while NULL means "leave it").
type JobDesc struct {
	// StepID: only JobID is on the wire before 25.11 (NO_VAL for a new
	// job; updates name their target in JobIDStr instead).
	StepID            JobStepID
	SiteFactor        uint32 // NO_VAL unset; else NICE_OFFSET + factor
	BatchFeatures     string // --batch: features the batch host needs
	ClusterFeatures   string // --cluster-constraint
	Clusters          string // -M cluster list
	Contiguous        uint16 // 1 = contiguous nodes; NO_VAL16 unset
	Container         string // OCI bundle path
	ContainerID       string // 23.02+: OCI container id
	ContainerType     string // 26.05+: container plugin type
	CoreSpec          uint16 // specialized cores (CORE_SPEC_THREAD bit = threads); NO_VAL16 unset
	TaskDist          uint32 // task_dist_states; NO_VAL unset
	KillOnNodeFail    uint16 // 1/0; NO_VAL16 unset (--no-kill sends 0)
	Features          string // -C constraint expression
	FedSiblingsActive uint64
	FedSiblingsViable uint64
	JobIDStr          string // update target: "123", "123_4", "123_[1-3]", "123+1"
	Name              string // -J
	AllocNode         string // submit host (slurmctld replaces it with the credential's host)
	AllocSID          uint32 // submitter's session id; in updates the hold kind (0 admin hold, AllocSIDUserHold); NO_VAL unset
	ArrayInx          string // --array spec, e.g. "1-3", "0-999%10"
	BurstBuffer       string
	PnMinCPUs         uint16 // --mincpus; NO_VAL16 unset
	PnMinMemory       uint64 // MB per node, or per CPU with the MemPerCPU bit; NO_VAL64 unset; 0 = all memory
	MemUpdateDelay    uint16 // 26.05+: memory auto-reduce delay, minutes
	MemUpdateMargin   uint16 // 26.05+: memory auto-reduce margin, percent
	OOMKillStep       uint16 // 24.11+: 1 kill the step on task OOM, 0 not; NO_VAL16 plugin default
	PnMinTmpDisk      uint32 // MB; NO_VAL unset
	PowerFlags        uint8  // 22.05–23.11 power_flags; 24.05 sends a zero placeholder; absent 24.11+
	Prefer            string // --prefer soft features
	CPUFreqMin        uint32 // kHz or CPU_FREQ_* code; NO_VAL unset
	CPUFreqMax        uint32
	CPUFreqGov        uint32
	Partition         string // -p (comma list); "" = default partition
	Priority          uint32 // NO_VAL unset; 0 = held (--hold, scontrol hold); INFINITE = release / recompute
	Dependency        string // e.g. "afterok:206"
	Account           string
	AdminComment      string
	Comment           string
	Nice              uint32 // NICE_OFFSET + nice; NO_VAL unset
	Profile           uint32 // ACCT_GATHER_PROFILE_* bits; 0 = not set
	QOS               string
	MCSLabel          string
	OriginCluster     string
	OpenMode          uint8 // OpenModeAppend/OpenModeTruncate; 0 = default
	Overcommit        uint8 // 1 = -O; NO_VAL8 unset
	AcctgFreq         string
	NumTasks          uint32   // -n; NO_VAL unset
	ReqContext        string   // SELinux context
	ReqNodes          string   // -w node list
	ExcNodes          string   // -x node list
	Environment       []string // NAME=value; never NULL entries
	SpankJobEnv       []string // NAME=value set by SPANK plugins
	Script            string   // whole batch script; "" (NULL) for allocations and updates
	Argv              []string // script arguments (argv[0] is the script name)
	StdErr            string   // -e pattern; "" = same as stdout
	StdIn             string   // -i; "" = /dev/null
	StdOut            string   // -o pattern; "" = slurm-%j.out (slurm-%A_%a.out for arrays)
	SubmitLine        string   // the full command line
	WorkDir           string   // cwd of the submitter (-D)
	Immediate         uint16   // 1 = -I (allocate now or fail)
	Reboot            uint16   // 1 = --reboot; NO_VAL16 unset
	Requeue           uint16   // 1 --requeue, 0 --no-requeue; NO_VAL16 unset
	Shared            uint16   // oversubscribe: 0 exclusive, 1 --oversubscribe, 2 user, 3 mcs, 4 topo; NO_VAL16 unset
	CPUsPerTask       uint16   // -c; NO_VAL16 unset
	NtasksPerNode     uint16   // NO_VAL16 unset (applies to all NtasksPer*)
	NtasksPerBoard    uint16
	NtasksPerSocket   uint16
	NtasksPerCore     uint16
	NtasksPerTRES     uint16
	PlaneSize         uint16 // NO_VAL16 unset
	CPUBindType       uint16 // cpu_bind_type_t bits; NO_VAL16 unset
	MemBindType       uint16 // mem_bind_type_t bits; NO_VAL16 unset
	CPUBind           string
	MemBind           string
	TimeLimit         uint32 // minutes; NO_VAL unset, INFINITE unlimited
	TimeMin           uint32 // minutes; NO_VAL unset
	MinCPUs           uint32 // NO_VAL unset
	MaxCPUs           uint32 // NO_VAL unset
	MinNodes          uint32 // NO_VAL unset
	MaxNodes          uint32 // NO_VAL unset
	JobSizeStr        string // 23.02+: -N with a list of sizes
	BoardsPerNode     uint16
	SocketsPerBoard   uint16
	SocketsPerNode    uint16 // NO_VAL16 unset
	CoresPerSocket    uint16 // NO_VAL16 unset
	ThreadsPerCore    uint16 // NO_VAL16 unset
	UserID            uint32 // submitter uid (SlurmAuthNobody, 22.05: NO_VAL = unset)
	GroupID           uint32 // submitter gid (same defaults)
	AllocRespPort     uint16 // salloc/srun port for the allocation reply
	AllocTLSCert      string // 25.05+: client TLS certificate
	RespHost          string // set by slurmctld, not by clients
	OtherPort         uint16 // salloc/srun notification port
	ResvPortCnt       uint16 // 24.05+: --resv-ports count
	Network           string
	BeginTime         int64  // --begin, Unix seconds; 0 = now
	EndTime           int64  // updates only
	Deadline          int64  // --deadline, Unix seconds; 0 = none
	Licenses          string // -L
	MailType          uint16 // MAIL_JOB_* bits; NO_VAL16 unset
	MailUser          string
	Reservation       string
	RestartCnt        uint16
	WarnFlags         uint16 // KILL_JOB_BATCH etc. for --signal=B:
	WarnSignal        uint16 // --signal number; 0 = none
	WarnTime          uint16 // --signal @time, seconds before the end
	Wckey             string
	ReqSwitch         uint32 // --switches count; NO_VAL unset
	Wait4Switch       uint32 // seconds; NO_VAL unset
	SelectPluginID    uint32 // 22.05 only: select jobinfo plugin id (0 encodes as SELECT_PLUGIN_CONS_TRES)
	WaitAllNodes      uint16 // 1/0; NO_VAL16 unset
	Bitflags          uint64 // job flag bits incl. UseDefault* (set by the packer for NULL account/partition/qos/wckey)
	DelayBoot         uint32 // seconds; NO_VAL unset
	Extra             string
	X11               uint16 // X11_FORWARD_* bits
	X11MagicCookie    string
	X11Target         string
	X11TargetPort     uint16
	CPUsPerTRES       string // e.g. "gres/gpu:4"
	MemPerTRES        string
	TRESBind          string
	TRESFreq          string
	TRESPerJob        string // --gpus etc., "gres/gpu:2"
	TRESPerNode       string // --gres, "gres/gpu:2"
	TRESPerSocket     string
	TRESPerTask       string
	Crontab           *CronEntry // scrontab entry; nil for normal jobs
	SegmentSize       uint16     // 24.05+: --segment size

	// EmptyStrs has bit JDxxx set when that string field arrived as a
	// non-NULL "" (see jcStr); Encode writes it back the same way.
	EmptyStrs uint64
}

// NewJobDesc returns a JobDesc with slurm_init_job_desc_msg's defaults
// (23.02+ flavour: user/group SlurmAuthNobody).
func NewJobDesc() JobDesc {
	return JobDesc{
		StepID: NoStepID, AllocSID: NoVal, Contiguous: NoVal16, CoreSpec: NoVal16,
		CoresPerSocket: NoVal16, CPUBindType: NoVal16, CPUFreqMin: NoVal, CPUFreqMax: NoVal,
		CPUFreqGov: NoVal, CPUsPerTask: NoVal16, DelayBoot: NoVal, GroupID: SlurmAuthNobody,
		KillOnNodeFail: NoVal16, MaxCPUs: NoVal, MaxNodes: NoVal, MemBindType: NoVal16,
		MailType: NoVal16, MinCPUs: NoVal, MinNodes: NoVal, Nice: NoVal, NtasksPerCore: NoVal16,
		NtasksPerTRES: NoVal16, NtasksPerNode: NoVal16, NtasksPerSocket: NoVal16, NumTasks: NoVal,
		Overcommit: NoVal8, PlaneSize: NoVal16, PnMinCPUs: NoVal16, PnMinMemory: NoVal64,
		PnMinTmpDisk: NoVal, Priority: NoVal, Reboot: NoVal16, Requeue: NoVal16, ReqSwitch: NoVal,
		Shared: NoVal16, SiteFactor: NoVal, SocketsPerNode: NoVal16, TaskDist: NoVal,
		ThreadsPerCore: NoVal16, TimeLimit: NoVal, TimeMin: NoVal, UserID: SlurmAuthNobody,
		WaitAllNodes: NoVal16, Wait4Switch: NoVal,
	}
}

// StrGiven reports whether string field f (whose value is v) was sent
// at all: non-empty, or a non-NULL "".
func (m *JobDesc) StrGiven(f JDStr, v string) bool {
	return v != "" || m.EmptyStrs&(1<<f) != 0
}

// SetEmptyStr marks field f as a non-NULL "" for Encode (the field's
// value must be "").
func (m *JobDesc) SetEmptyStr(f JDStr) { m.EmptyStrs |= 1 << f }

// MemPerCPU reports whether PnMinMemory is per CPU, and the MB value.
func (m *JobDesc) MemPerCPU() (perCPU bool, mb uint64) {
	if m.PnMinMemory == NoVal64 || m.PnMinMemory == Infinite64 {
		return false, m.PnMinMemory
	}
	return m.PnMinMemory&MemPerCPU != 0, m.PnMinMemory &^ MemPerCPU
}

// Held reports whether the descriptor asks for a held job (priority 0).
func (m *JobDesc) Held() bool { return m.Priority == 0 }

func (m *JobDesc) str(r *Reader, f JDStr) string { return jcStr(r, &m.EmptyStrs, uint(f)) }

func (m *JobDesc) putStr(w *Writer, s string, f JDStr) { jcPutStr(w, s, m.EmptyStrs, uint(f)) }

// Decode reads a job_desc_msg_t for version. It rejects trailing bytes,
// which no client sends.
func (m *JobDesc) Decode(r *Reader, version uint16) error {
	*m = JobDesc{}
	if version >= V25_11 {
		m.StepID.Decode(r, version)
	}
	m.SiteFactor = r.U32()
	m.BatchFeatures = m.str(r, JDBatchFeatures)
	m.ClusterFeatures = m.str(r, JDClusterFeatures)
	m.Clusters = m.str(r, JDClusters)
	m.Contiguous = r.U16()
	m.Container = m.str(r, JDContainer)
	if version >= V23_02 {
		m.ContainerID = m.str(r, JDContainerID)
	}
	if version >= V26_05 {
		m.ContainerType = m.str(r, JDContainerType)
	}
	m.CoreSpec = r.U16()
	m.TaskDist = r.U32()
	m.KillOnNodeFail = r.U16()
	m.Features = m.str(r, JDFeatures)
	m.FedSiblingsActive = r.U64()
	m.FedSiblingsViable = r.U64()
	if version < V25_11 {
		m.StepID.JobID = r.U32()
	}
	m.JobIDStr = m.str(r, JDJobIDStr)
	m.Name = m.str(r, JDName)
	m.AllocNode = m.str(r, JDAllocNode)
	m.AllocSID = r.U32()
	m.ArrayInx = m.str(r, JDArrayInx)
	m.BurstBuffer = m.str(r, JDBurstBuffer)
	m.PnMinCPUs = r.U16()
	m.PnMinMemory = r.U64()
	if version >= V26_05 {
		m.MemUpdateDelay = r.U16()
		m.MemUpdateMargin = r.U16()
	}
	if version >= V24_11 {
		m.OOMKillStep = r.U16()
	}
	m.PnMinTmpDisk = r.U32()
	if version < V24_11 {
		m.PowerFlags = r.U8()
	}
	m.Prefer = m.str(r, JDPrefer)
	m.CPUFreqMin = r.U32()
	m.CPUFreqMax = r.U32()
	m.CPUFreqGov = r.U32()
	m.Partition = m.str(r, JDPartition)
	m.Priority = r.U32()
	m.Dependency = m.str(r, JDDependency)
	m.Account = m.str(r, JDAccount)
	m.AdminComment = m.str(r, JDAdminComment)
	m.Comment = m.str(r, JDComment)
	m.Nice = r.U32()
	m.Profile = r.U32()
	m.QOS = m.str(r, JDQOS)
	m.MCSLabel = m.str(r, JDMCSLabel)
	m.OriginCluster = m.str(r, JDOriginCluster)
	m.OpenMode = r.U8()
	m.Overcommit = r.U8()
	m.AcctgFreq = m.str(r, JDAcctgFreq)
	m.NumTasks = r.U32()
	m.ReqContext = m.str(r, JDReqContext)
	m.ReqNodes = m.str(r, JDReqNodes)
	m.ExcNodes = m.str(r, JDExcNodes)
	m.Environment = jcStrArray(r, true)
	m.SpankJobEnv = jcStrArray(r, true)
	m.Script = m.str(r, JDScript)
	m.Argv = jcStrArray(r, false)
	m.StdErr = m.str(r, JDStdErr)
	m.StdIn = m.str(r, JDStdIn)
	m.StdOut = m.str(r, JDStdOut)
	m.SubmitLine = m.str(r, JDSubmitLine)
	m.WorkDir = m.str(r, JDWorkDir)
	m.Immediate = r.U16()
	m.Reboot = r.U16()
	m.Requeue = r.U16()
	m.Shared = r.U16()
	m.CPUsPerTask = r.U16()
	m.NtasksPerNode = r.U16()
	m.NtasksPerBoard = r.U16()
	m.NtasksPerSocket = r.U16()
	m.NtasksPerCore = r.U16()
	m.NtasksPerTRES = r.U16()
	m.PlaneSize = r.U16()
	m.CPUBindType = r.U16()
	m.MemBindType = r.U16()
	m.CPUBind = m.str(r, JDCPUBind)
	m.MemBind = m.str(r, JDMemBind)
	m.TimeLimit = r.U32()
	m.TimeMin = r.U32()
	m.MinCPUs = r.U32()
	m.MaxCPUs = r.U32()
	m.MinNodes = r.U32()
	m.MaxNodes = r.U32()
	if version >= V23_02 {
		m.JobSizeStr = m.str(r, JDJobSizeStr)
	}
	m.BoardsPerNode = r.U16()
	m.SocketsPerBoard = r.U16()
	m.SocketsPerNode = r.U16()
	m.CoresPerSocket = r.U16()
	m.ThreadsPerCore = r.U16()
	m.UserID = r.U32()
	m.GroupID = r.U32()
	m.AllocRespPort = r.U16()
	if version >= V25_05 {
		m.AllocTLSCert = m.str(r, JDAllocTLSCert)
	}
	m.RespHost = m.str(r, JDRespHost)
	m.OtherPort = r.U16()
	if version >= V24_05 {
		m.ResvPortCnt = r.U16()
	}
	m.Network = m.str(r, JDNetwork)
	m.BeginTime = r.Time()
	m.EndTime = r.Time()
	m.Deadline = r.Time()
	m.Licenses = m.str(r, JDLicenses)
	m.MailType = r.U16()
	m.MailUser = m.str(r, JDMailUser)
	m.Reservation = m.str(r, JDReservation)
	m.RestartCnt = r.U16()
	m.WarnFlags = r.U16()
	m.WarnSignal = r.U16()
	m.WarnTime = r.U16()
	m.Wckey = m.str(r, JDWckey)
	m.ReqSwitch = r.U32()
	m.Wait4Switch = r.U32()
	if version < V23_02 {
		m.SelectPluginID = r.U32()
		if r.Err == nil {
			switch m.SelectPluginID {
			case SELECT_PLUGIN_CONS_RES, SELECT_PLUGIN_LINEAR, SELECT_PLUGIN_CONS_TRES:
			default:
				// Only the Cray plugins pack data here; slurmctld
				// fails on any plugin it has not loaded.
				return Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "job_desc: select plugin %d", m.SelectPluginID)
			}
		}
	}
	m.WaitAllNodes = r.U16()
	m.Bitflags = r.U64()
	m.DelayBoot = r.U32()
	m.Extra = m.str(r, JDExtra)
	m.X11 = r.U16()
	m.X11MagicCookie = m.str(r, JDX11MagicCookie)
	m.X11Target = m.str(r, JDX11Target)
	m.X11TargetPort = r.U16()
	m.CPUsPerTRES = m.str(r, JDCPUsPerTRES)
	m.MemPerTRES = m.str(r, JDMemPerTRES)
	m.TRESBind = m.str(r, JDTRESBind)
	m.TRESFreq = m.str(r, JDTRESFreq)
	m.TRESPerJob = m.str(r, JDTRESPerJob)
	m.TRESPerNode = m.str(r, JDTRESPerNode)
	m.TRESPerSocket = m.str(r, JDTRESPerSocket)
	m.TRESPerTask = m.str(r, JDTRESPerTask)
	m.Crontab = decodeCronEntry(r)
	if version >= V24_05 {
		m.SegmentSize = r.U16()
	}
	if r.Err != nil {
		return r.Err
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// Encode writes m as a client of version packs it. Like
// _pack_job_desc_msg it sets the UseDefault* bits for a NULL account,
// partition, qos or wckey (in the output only; m is not changed).
func (m *JobDesc) Encode(w *Writer, version uint16) {
	flags := m.Bitflags
	if !m.StrGiven(JDAccount, m.Account) {
		flags |= UseDefaultAcct
	}
	if !m.StrGiven(JDPartition, m.Partition) {
		flags |= UseDefaultPart
	}
	if !m.StrGiven(JDQOS, m.QOS) {
		flags |= UseDefaultQOS
	}
	if !m.StrGiven(JDWckey, m.Wckey) {
		flags |= UseDefaultWckey
	}
	if version >= V25_11 {
		m.StepID.Encode(w, version)
	}
	w.U32(m.SiteFactor)
	m.putStr(w, m.BatchFeatures, JDBatchFeatures)
	m.putStr(w, m.ClusterFeatures, JDClusterFeatures)
	m.putStr(w, m.Clusters, JDClusters)
	w.U16(m.Contiguous)
	m.putStr(w, m.Container, JDContainer)
	if version >= V23_02 {
		m.putStr(w, m.ContainerID, JDContainerID)
	}
	if version >= V26_05 {
		m.putStr(w, m.ContainerType, JDContainerType)
	}
	w.U16(m.CoreSpec)
	w.U32(m.TaskDist)
	w.U16(m.KillOnNodeFail)
	m.putStr(w, m.Features, JDFeatures)
	w.U64(m.FedSiblingsActive)
	w.U64(m.FedSiblingsViable)
	if version < V25_11 {
		w.U32(m.StepID.JobID)
	}
	m.putStr(w, m.JobIDStr, JDJobIDStr)
	m.putStr(w, m.Name, JDName)
	m.putStr(w, m.AllocNode, JDAllocNode)
	w.U32(m.AllocSID)
	m.putStr(w, m.ArrayInx, JDArrayInx)
	m.putStr(w, m.BurstBuffer, JDBurstBuffer)
	w.U16(m.PnMinCPUs)
	w.U64(m.PnMinMemory)
	if version >= V26_05 {
		w.U16(m.MemUpdateDelay)
		w.U16(m.MemUpdateMargin)
	}
	if version >= V24_11 {
		w.U16(m.OOMKillStep)
	}
	w.U32(m.PnMinTmpDisk)
	if version < V24_11 {
		w.U8(m.PowerFlags)
	}
	m.putStr(w, m.Prefer, JDPrefer)
	w.U32(m.CPUFreqMin)
	w.U32(m.CPUFreqMax)
	w.U32(m.CPUFreqGov)
	m.putStr(w, m.Partition, JDPartition)
	w.U32(m.Priority)
	m.putStr(w, m.Dependency, JDDependency)
	m.putStr(w, m.Account, JDAccount)
	m.putStr(w, m.AdminComment, JDAdminComment)
	m.putStr(w, m.Comment, JDComment)
	w.U32(m.Nice)
	w.U32(m.Profile)
	m.putStr(w, m.QOS, JDQOS)
	m.putStr(w, m.MCSLabel, JDMCSLabel)
	m.putStr(w, m.OriginCluster, JDOriginCluster)
	w.U8(m.OpenMode)
	w.U8(m.Overcommit)
	m.putStr(w, m.AcctgFreq, JDAcctgFreq)
	w.U32(m.NumTasks)
	m.putStr(w, m.ReqContext, JDReqContext)
	m.putStr(w, m.ReqNodes, JDReqNodes)
	m.putStr(w, m.ExcNodes, JDExcNodes)
	jcPutStrArray(w, m.Environment)
	jcPutStrArray(w, m.SpankJobEnv)
	m.putStr(w, m.Script, JDScript)
	jcPutStrArray(w, m.Argv)
	m.putStr(w, m.StdErr, JDStdErr)
	m.putStr(w, m.StdIn, JDStdIn)
	m.putStr(w, m.StdOut, JDStdOut)
	m.putStr(w, m.SubmitLine, JDSubmitLine)
	m.putStr(w, m.WorkDir, JDWorkDir)
	w.U16(m.Immediate)
	w.U16(m.Reboot)
	w.U16(m.Requeue)
	w.U16(m.Shared)
	w.U16(m.CPUsPerTask)
	w.U16(m.NtasksPerNode)
	w.U16(m.NtasksPerBoard)
	w.U16(m.NtasksPerSocket)
	w.U16(m.NtasksPerCore)
	w.U16(m.NtasksPerTRES)
	w.U16(m.PlaneSize)
	w.U16(m.CPUBindType)
	w.U16(m.MemBindType)
	m.putStr(w, m.CPUBind, JDCPUBind)
	m.putStr(w, m.MemBind, JDMemBind)
	w.U32(m.TimeLimit)
	w.U32(m.TimeMin)
	w.U32(m.MinCPUs)
	w.U32(m.MaxCPUs)
	w.U32(m.MinNodes)
	w.U32(m.MaxNodes)
	if version >= V23_02 {
		m.putStr(w, m.JobSizeStr, JDJobSizeStr)
	}
	w.U16(m.BoardsPerNode)
	w.U16(m.SocketsPerBoard)
	w.U16(m.SocketsPerNode)
	w.U16(m.CoresPerSocket)
	w.U16(m.ThreadsPerCore)
	w.U32(m.UserID)
	w.U32(m.GroupID)
	w.U16(m.AllocRespPort)
	if version >= V25_05 {
		m.putStr(w, m.AllocTLSCert, JDAllocTLSCert)
	}
	m.putStr(w, m.RespHost, JDRespHost)
	w.U16(m.OtherPort)
	if version >= V24_05 {
		w.U16(m.ResvPortCnt)
	}
	m.putStr(w, m.Network, JDNetwork)
	w.Time(m.BeginTime)
	w.Time(m.EndTime)
	w.Time(m.Deadline)
	m.putStr(w, m.Licenses, JDLicenses)
	w.U16(m.MailType)
	m.putStr(w, m.MailUser, JDMailUser)
	m.putStr(w, m.Reservation, JDReservation)
	w.U16(m.RestartCnt)
	w.U16(m.WarnFlags)
	w.U16(m.WarnSignal)
	w.U16(m.WarnTime)
	m.putStr(w, m.Wckey, JDWckey)
	w.U32(m.ReqSwitch)
	w.U32(m.Wait4Switch)
	if version < V23_02 {
		id := m.SelectPluginID
		if id == 0 {
			id = SELECT_PLUGIN_CONS_TRES
		}
		w.U32(id)
	}
	w.U16(m.WaitAllNodes)
	w.U64(flags)
	w.U32(m.DelayBoot)
	m.putStr(w, m.Extra, JDExtra)
	w.U16(m.X11)
	m.putStr(w, m.X11MagicCookie, JDX11MagicCookie)
	m.putStr(w, m.X11Target, JDX11Target)
	w.U16(m.X11TargetPort)
	m.putStr(w, m.CPUsPerTRES, JDCPUsPerTRES)
	m.putStr(w, m.MemPerTRES, JDMemPerTRES)
	m.putStr(w, m.TRESBind, JDTRESBind)
	m.putStr(w, m.TRESFreq, JDTRESFreq)
	m.putStr(w, m.TRESPerJob, JDTRESPerJob)
	m.putStr(w, m.TRESPerNode, JDTRESPerNode)
	m.putStr(w, m.TRESPerSocket, JDTRESPerSocket)
	m.putStr(w, m.TRESPerTask, JDTRESPerTask)
	encodeCronEntry(w, m.Crontab)
	if version >= V24_05 {
		w.U16(m.SegmentSize)
	}
}

// SubmitResponse is RESPONSE_SUBMIT_BATCH_JOB (submit_response_msg_t).
// Before 25.11 only StepID.JobID and StepID.StepID are on the wire;
// from 25.11 the full step id (sluid and het component too), which is
// why a 26.05 body is 28 bytes where 24.11's is 16.
type SubmitResponse struct {
	StepID JobStepID // JobID = the new job; StepID = SLURM_BATCH_SCRIPT
	// ErrorCode is 0, or a non-fatal code sbatch reports, e.g.
	// ESLURM_JOB_HELD for a held submission.
	ErrorCode        uint32
	JobSubmitUserMsg string // job_submit plugin message printed by sbatch; "" = NULL
}

// Decode reads a RESPONSE_SUBMIT_BATCH_JOB body.
func (m *SubmitResponse) Decode(r *Reader, version uint16) error {
	*m = SubmitResponse{}
	if version >= V25_11 {
		m.StepID.Decode(r, version)
	} else {
		m.StepID.JobID = r.U32()
		m.StepID.StepID = r.U32()
	}
	m.ErrorCode = r.U32()
	m.JobSubmitUserMsg = r.String()
	if r.Err != nil {
		return r.Err
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// Encode writes a RESPONSE_SUBMIT_BATCH_JOB body.
func (m *SubmitResponse) Encode(w *Writer, version uint16) {
	if version >= V25_11 {
		m.StepID.Encode(w, version)
	} else {
		w.U32(m.StepID.JobID)
		w.U32(m.StepID.StepID)
	}
	w.U32(m.ErrorCode)
	w.Str(m.JobSubmitUserMsg)
}
