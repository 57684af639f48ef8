package codec

import "encoding/binary"

// Job step creation: REQUEST_JOB_STEP_CREATE (5001, srun -> slurmctld)
// and RESPONSE_JOB_STEP_CREATE (5002) with its step layout
// (src/common/slurm_protocol_pack.c _pack_job_step_create_request_msg,
// _pack_job_step_create_response_msg; src/common/slurm_step_layout.c
// pack_slurm_step_layout; checked at every release tag 22.05-26.05).
//
// Request, per version:
//   - 22.05: base list (no array_task_id, container_id, ntasks_per_core).
//   - 23.02-24.11: + array_task_id, container_id, ntasks_per_core.
//   - 25.05, 25.11: + cwd, std_err, std_in, std_out after ntasks_per_tres.
//   - 26.05: + container_type after container_id; + launch parameters
//     (a bool, then the srun launch options) at the end.
//
// Response, per version:
//   - 22.05: def_cpu_bind_type, resv_ports, step id (u32), layout, cred,
//     select jobinfo, switch jobinfo, use_protocol_ver.
//   - 23.02, 23.11: + job_id before the step id; no select jobinfo.
//   - 24.05: + stepmgr after the layout; switch step info.
//   - 24.11, 25.05: no switch info.
//   - 25.11: a full step id replaces job_id/step id; no use_protocol_ver.
//   - 26.05: the cred is behind a bool; + u32 state at the end.

// SSF_* step flags of JobStepCreateRequest.Flags (step_spec_flags_t,
// slurm/slurm.h).
const (
	StepFlagExclusive            uint32 = 1 << 0 // --exclusive: CPUs not shared with other steps
	StepFlagNoKill               uint32 = 1 << 1 // do not kill the step on node failure
	StepFlagOvercommit           uint32 = 1 << 2
	StepFlagWhole                uint32 = 1 << 3  // whole nodes (srun sets it unless --exact)
	StepFlagInteractive          uint32 = 1 << 4  // interactive step (salloc's step)
	StepFlagMemZero              uint32 = 1 << 5  // --mem=0
	StepFlagOverlapForce         uint32 = 1 << 6  // --overlap
	StepFlagNoSigFail            uint32 = 1 << 7  // 23.11+
	StepFlagExtLauncher          uint32 = 1 << 8  // 23.11+: external launcher (mpirun)
	StepFlagGresAllowTaskSharing uint32 = 1 << 9  // 23.11+
	StepFlagWaitForChildren      uint32 = 1 << 10 // 25.05+
	StepFlagKillOnBadExit        uint32 = 1 << 11 // 25.05+
	StepFlagAsync                uint32 = 1 << 12 // 26.05+: launched by stepmgr, not srun
)

// StepLaunchParams is slurm_step_launch_params_t as 26.05 sends it in
// REQUEST_JOB_STEP_CREATE (_pack_launch_params: the srun options the
// controller needs to launch an async step itself).
type StepLaunchParams struct {
	Argv             []string
	Env              []string
	Container        string
	Cwd              string
	MsgTimeout       uint32
	NTasksPerBoard   uint16
	NTasksPerCore    uint16
	NTasksPerTres    uint16
	NTasksPerSocket  uint16
	BufferedStdio    bool
	LabelIO          bool
	OutputFilename   string
	ErrorFilename    string
	InputFilename    string
	MultiProg        bool
	NoAlloc          bool
	SlurmdDebug      uint32
	HetJobNodeOffset uint32
	HetJobID         uint32
	HetJobNNodes     uint32
	HetJobNTasks     uint32
	HetJobStepCnt    uint32
	HetJobOffset     uint32
	HetJobTaskOffset uint32
	HetJobNodeList   string
	ParallelDebug    bool
	Profile          uint32
	TaskProlog       string
	TaskEpilog       string
	CPUBindType      uint16
	CPUBind          string
	CPUFreqMin       uint32
	CPUFreqMax       uint32
	CPUFreqGov       uint32
	MemBindType      uint16
	MemBind          string
	AccelBindType    uint16
	MaxSockets       uint16
	MaxCores         uint16
	MaxThreads       uint16
	CPUsPerTask      uint16
	CPTCompactArray  []uint16
	CPTCompactReps   []uint32 // same length as CPTCompactArray (checked)
	ThreadsPerCore   uint16
	TaskDist         uint32
	TreeWidth        uint16
	PreserveEnv      bool
	MPIPluginName    string
	OpenMode         uint8
	AcctgFreq        string
	PTY              bool
	SpankJobEnv      []string
	TresBind         string
	TresFreq         string
	OOMKillStep      uint16

	EmptyStrs uint64 // bit i: i-th string in wire order was a non-NULL ""
}

func readStepLaunchParams(r *Reader) *StepLaunchParams {
	if !r.Bool() || r.Err != nil {
		return nil
	}
	p := &StepLaunchParams{}
	s := stRd{r: r}
	p.Argv = jcStrArray(r, false)
	p.Env = jcStrArray(r, false)
	p.Container = s.str()
	p.Cwd = s.str()
	p.MsgTimeout = r.U32()
	p.NTasksPerBoard = r.U16()
	p.NTasksPerCore = r.U16()
	p.NTasksPerTres = r.U16()
	p.NTasksPerSocket = r.U16()
	p.BufferedStdio = r.Bool()
	p.LabelIO = r.Bool()
	p.OutputFilename = s.str()
	p.ErrorFilename = s.str()
	p.InputFilename = s.str()
	p.MultiProg = r.Bool()
	p.NoAlloc = r.Bool()
	p.SlurmdDebug = r.U32()
	p.HetJobNodeOffset = r.U32()
	p.HetJobID = r.U32()
	p.HetJobNNodes = r.U32()
	p.HetJobNTasks = r.U32()
	p.HetJobStepCnt = r.U32()
	p.HetJobOffset = r.U32()
	p.HetJobTaskOffset = r.U32()
	p.HetJobNodeList = s.str()
	p.ParallelDebug = r.Bool()
	p.Profile = r.U32()
	p.TaskProlog = s.str()
	p.TaskEpilog = s.str()
	p.CPUBindType = r.U16()
	p.CPUBind = s.str()
	p.CPUFreqMin = r.U32()
	p.CPUFreqMax = r.U32()
	p.CPUFreqGov = r.U32()
	p.MemBindType = r.U16()
	p.MemBind = s.str()
	p.AccelBindType = r.U16()
	p.MaxSockets = r.U16()
	p.MaxCores = r.U16()
	p.MaxThreads = r.U16()
	p.CPUsPerTask = r.U16()
	p.CPTCompactArray, p.CPTCompactReps = readCPTCompact(r)
	p.ThreadsPerCore = r.U16()
	p.TaskDist = r.U32()
	p.TreeWidth = r.U16()
	p.PreserveEnv = r.Bool()
	p.MPIPluginName = s.str()
	p.OpenMode = r.U8()
	p.AcctgFreq = s.str()
	p.PTY = r.Bool()
	p.SpankJobEnv = jcStrArray(r, false)
	p.TresBind = s.str()
	p.TresFreq = s.str()
	p.OOMKillStep = r.U16()
	p.EmptyStrs = s.empty
	if r.Err != nil {
		return nil
	}
	return p
}

func writeStepLaunchParams(w *Writer, p *StepLaunchParams) {
	if p == nil {
		w.Bool(false)
		return
	}
	w.Bool(true)
	s := stWr{w: w, empty: p.EmptyStrs}
	jcPutStrArray(w, p.Argv)
	jcPutStrArray(w, p.Env)
	s.str(p.Container)
	s.str(p.Cwd)
	w.U32(p.MsgTimeout)
	w.U16(p.NTasksPerBoard)
	w.U16(p.NTasksPerCore)
	w.U16(p.NTasksPerTres)
	w.U16(p.NTasksPerSocket)
	w.Bool(p.BufferedStdio)
	w.Bool(p.LabelIO)
	s.str(p.OutputFilename)
	s.str(p.ErrorFilename)
	s.str(p.InputFilename)
	w.Bool(p.MultiProg)
	w.Bool(p.NoAlloc)
	w.U32(p.SlurmdDebug)
	w.U32(p.HetJobNodeOffset)
	w.U32(p.HetJobID)
	w.U32(p.HetJobNNodes)
	w.U32(p.HetJobNTasks)
	w.U32(p.HetJobStepCnt)
	w.U32(p.HetJobOffset)
	w.U32(p.HetJobTaskOffset)
	s.str(p.HetJobNodeList)
	w.Bool(p.ParallelDebug)
	w.U32(p.Profile)
	s.str(p.TaskProlog)
	s.str(p.TaskEpilog)
	w.U16(p.CPUBindType)
	s.str(p.CPUBind)
	w.U32(p.CPUFreqMin)
	w.U32(p.CPUFreqMax)
	w.U32(p.CPUFreqGov)
	w.U16(p.MemBindType)
	s.str(p.MemBind)
	w.U16(p.AccelBindType)
	w.U16(p.MaxSockets)
	w.U16(p.MaxCores)
	w.U16(p.MaxThreads)
	w.U16(p.CPUsPerTask)
	w.U16Array(p.CPTCompactArray)
	w.U32Array(p.CPTCompactReps)
	w.U16(p.ThreadsPerCore)
	w.U32(p.TaskDist)
	w.U16(p.TreeWidth)
	w.Bool(p.PreserveEnv)
	s.str(p.MPIPluginName)
	w.U8(p.OpenMode)
	s.str(p.AcctgFreq)
	w.Bool(p.PTY)
	jcPutStrArray(w, p.SpankJobEnv)
	s.str(p.TresBind)
	s.str(p.TresFreq)
	w.U16(p.OOMKillStep)
}

// readCPTCompact reads the cpus-per-task compact pair (u16[] values,
// u32[] repetitions). Slurm only asserts the counts agree; a pair that
// disagrees is refused here.
func readCPTCompact(r *Reader) ([]uint16, []uint32) {
	a := readU16s(r)
	reps := readU32s(r)
	if r.Err == nil && len(a) != len(reps) {
		stBadf(r, "cpt_compact counts %d/%d", len(a), len(reps))
	}
	return a, reps
}

// JobStepCreateRequest is job_step_create_request_msg_t, the body of
// REQUEST_JOB_STEP_CREATE (srun, salloc's interactive step, sbatch's
// steps). Fields a version lacks are zero.
type JobStepCreateRequest struct {
	StepID         JobStepID // job id; step id NO_VAL (controller assigns) or a requested one
	ArrayTaskID    uint32    // 23.02+; NO_VAL unless an array task
	UserID         uint32    // srun 23.02+ sends 99 (SLURM_AUTH_NOBODY): use the auth uid
	MinNodes       uint32
	MaxNodes       uint32
	Container      string
	ContainerID    string // 23.02+
	ContainerType  string // 26.05+
	CPUCount       uint32
	CPUFreqMin     uint32
	CPUFreqMax     uint32
	CPUFreqGov     uint32
	NumTasks       uint32
	PnMinMemory    uint64 // MemPerCPU bit for per-CPU memory
	TimeLimit      uint32
	ThreadsPerCore uint16
	NtasksPerCore  uint16 // 23.02+
	Relative       uint16
	TaskDist       uint32
	PlaneSize      uint16
	Port           uint16 // srun's step listener (SRUN_* messages for this step)
	Immediate      uint16
	ResvPortCnt    uint16
	SrunPID        uint32
	Flags          uint32 // StepFlag* bits
	Host           string // srun's host
	Name           string // step name
	Network        string
	NodeList       string
	ExcNodes       string
	Features       string
	StepHetCompCnt uint32
	StepHetGrps    string
	CPUsPerTres    string
	MemPerTres     string
	NtasksPerTres  uint16
	Cwd            string // 25.05+
	StdErr         string // 25.05+
	StdIn          string // 25.05+
	StdOut         string // 25.05+
	SubmitLine     string
	TresBind       string
	TresFreq       string
	TresPerStep    string // e.g. "cpu:2"
	TresPerNode    string
	TresPerSocket  string
	TresPerTask    string
	LaunchParams   *StepLaunchParams // 26.05+; nil = not sent

	EmptyStrs uint64 // bit i: i-th string in wire order was a non-NULL ""
}

func (m *JobStepCreateRequest) Decode(r *Reader, version uint16) error {
	*m = JobStepCreateRequest{}
	s := stRd{r: r}
	m.StepID.Decode(r, version)
	if version >= V23_02 {
		m.ArrayTaskID = r.U32()
	}
	m.UserID = r.U32()
	m.MinNodes = r.U32()
	m.MaxNodes = r.U32()
	m.Container = s.str()
	if version >= V23_02 {
		m.ContainerID = s.str()
	}
	if version >= V26_05 {
		m.ContainerType = s.str()
	}
	m.CPUCount = r.U32()
	m.CPUFreqMin = r.U32()
	m.CPUFreqMax = r.U32()
	m.CPUFreqGov = r.U32()
	m.NumTasks = r.U32()
	m.PnMinMemory = r.U64()
	m.TimeLimit = r.U32()
	m.ThreadsPerCore = r.U16()
	if version >= V23_02 {
		m.NtasksPerCore = r.U16()
	}
	m.Relative = r.U16()
	m.TaskDist = r.U32()
	m.PlaneSize = r.U16()
	m.Port = r.U16()
	m.Immediate = r.U16()
	m.ResvPortCnt = r.U16()
	m.SrunPID = r.U32()
	m.Flags = r.U32()
	m.Host = s.str()
	m.Name = s.str()
	m.Network = s.str()
	m.NodeList = s.str()
	m.ExcNodes = s.str()
	m.Features = s.str()
	m.StepHetCompCnt = r.U32()
	m.StepHetGrps = s.str()
	m.CPUsPerTres = s.str()
	m.MemPerTres = s.str()
	m.NtasksPerTres = r.U16()
	if version >= V25_05 {
		m.Cwd = s.str()
		m.StdErr = s.str()
		m.StdIn = s.str()
		m.StdOut = s.str()
	}
	m.SubmitLine = s.str()
	m.TresBind = s.str()
	m.TresFreq = s.str()
	m.TresPerStep = s.str()
	m.TresPerNode = s.str()
	m.TresPerSocket = s.str()
	m.TresPerTask = s.str()
	if version >= V26_05 {
		m.LaunchParams = readStepLaunchParams(r)
	}
	m.EmptyStrs = s.empty
	return jcDone(r)
}

func (m *JobStepCreateRequest) Encode(w *Writer, version uint16) {
	s := stWr{w: w, empty: m.EmptyStrs}
	m.StepID.Encode(w, version)
	if version >= V23_02 {
		w.U32(m.ArrayTaskID)
	}
	w.U32(m.UserID)
	w.U32(m.MinNodes)
	w.U32(m.MaxNodes)
	s.str(m.Container)
	if version >= V23_02 {
		s.str(m.ContainerID)
	}
	if version >= V26_05 {
		s.str(m.ContainerType)
	}
	w.U32(m.CPUCount)
	w.U32(m.CPUFreqMin)
	w.U32(m.CPUFreqMax)
	w.U32(m.CPUFreqGov)
	w.U32(m.NumTasks)
	w.U64(m.PnMinMemory)
	w.U32(m.TimeLimit)
	w.U16(m.ThreadsPerCore)
	if version >= V23_02 {
		w.U16(m.NtasksPerCore)
	}
	w.U16(m.Relative)
	w.U32(m.TaskDist)
	w.U16(m.PlaneSize)
	w.U16(m.Port)
	w.U16(m.Immediate)
	w.U16(m.ResvPortCnt)
	w.U32(m.SrunPID)
	w.U32(m.Flags)
	s.str(m.Host)
	s.str(m.Name)
	s.str(m.Network)
	s.str(m.NodeList)
	s.str(m.ExcNodes)
	s.str(m.Features)
	w.U32(m.StepHetCompCnt)
	s.str(m.StepHetGrps)
	s.str(m.CPUsPerTres)
	s.str(m.MemPerTres)
	w.U16(m.NtasksPerTres)
	if version >= V25_05 {
		s.str(m.Cwd)
		s.str(m.StdErr)
		s.str(m.StdIn)
		s.str(m.StdOut)
	}
	s.str(m.SubmitLine)
	s.str(m.TresBind)
	s.str(m.TresFreq)
	s.str(m.TresPerStep)
	s.str(m.TresPerNode)
	s.str(m.TresPerSocket)
	s.str(m.TresPerTask)
	if version >= V26_05 {
		writeStepLaunchParams(w, m.LaunchParams)
	}
}

// StepLayout is slurm_step_layout_t as pack_slurm_step_layout sends it
// (after a u16 "present" flag; a nil *StepLayout is the absent layout,
// which makes srun fail "No step_layout given").
type StepLayout struct {
	FrontEnd         string // always NULL from 25.05 on
	NodeList         string // the step's nodes; their order gives node ids 0..n-1
	NodeCnt          uint32 // as decoded; Encode sends len(TIDs)
	StartProtocolVer uint16
	TaskCnt          uint32
	TaskDist         uint32     // SLURM_DIST_*
	TIDs             [][]uint32 // per node: the global task ids it runs
	CPTCompactArray  []uint16   // 23.11+: cpus per task, run-length compressed
	CPTCompactReps   []uint32   // 23.11+: same length as CPTCompactArray (checked)
	NetCred          string     // 23.11+: node-alias net credential; "" = NULL

	EmptyStrs uint8 // bit i: i-th string in wire order was a non-NULL ""
}

func readStepLayout(r *Reader, version uint16) *StepLayout {
	if r.U16() == 0 || r.Err != nil {
		return nil
	}
	l := &StepLayout{}
	s := stRd{r: r}
	l.FrontEnd = s.str()
	l.NodeList = s.str()
	l.NodeCnt = r.U32()
	l.StartProtocolVer = r.U16()
	l.TaskCnt = r.U32()
	l.TaskDist = r.U32()
	if r.Err == nil && uint64(l.NodeCnt)*4 > uint64(r.Remaining()) {
		r.fail(ErrBadCount)
	}
	if r.Err == nil && l.NodeCnt > 0 {
		l.TIDs = make([][]uint32, l.NodeCnt)
		for i := range l.TIDs {
			l.TIDs[i] = readU32s(r)
			if r.Err != nil {
				break
			}
		}
	}
	if version >= V23_11 {
		l.CPTCompactArray, l.CPTCompactReps = readCPTCompact(r)
		l.NetCred = s.str()
	}
	l.EmptyStrs = uint8(s.empty)
	if r.Err != nil {
		return nil
	}
	return l
}

func writeStepLayout(w *Writer, l *StepLayout, version uint16) {
	if l == nil {
		w.U16(0)
		return
	}
	w.U16(1)
	s := stWr{w: w, empty: uint64(l.EmptyStrs)}
	s.str(l.FrontEnd)
	s.str(l.NodeList)
	w.U32(uint32(len(l.TIDs)))
	w.U16(l.StartProtocolVer)
	w.U32(l.TaskCnt)
	w.U32(l.TaskDist)
	for _, t := range l.TIDs {
		w.U32Array(t)
	}
	if version >= V23_11 {
		w.U16Array(l.CPTCompactArray)
		w.U32Array(l.CPTCompactReps)
		s.str(l.NetCred)
	}
}

// Plugin ids of the 22.05 select jobinfo (only these three, which pack
// no data, are accepted) and of switch/none (the only switch plugin
// whose 22.05/23.02 jobinfo is accepted in the middle of a launch).
const (
	SelectPluginConsRes  uint32 = 101
	SelectPluginLinear   uint32 = 102
	SelectPluginConsTres uint32 = 109
	SwitchPluginNone     uint32 = 100
)

// stSelectJobinfo reads a 22.05 select jobinfo: a plugin id and the
// plugin's data. Only the plugins that pack no data are accepted (the
// Cray ones pack data we cannot delimit).
func stSelectJobinfo(r *Reader) uint32 {
	id := r.U32()
	switch {
	case r.Err != nil:
	case id == SelectPluginConsRes || id == SelectPluginLinear || id == SelectPluginConsTres:
	default:
		stBadf(r, "select plugin %d jobinfo not supported", id)
	}
	return id
}

// JobStepCreateResponse is job_step_create_response_msg_t, the body of
// RESPONSE_JOB_STEP_CREATE. Fields a version lacks are zero.
type JobStepCreateResponse struct {
	DefCPUBindType uint32
	ResvPorts      string
	SLUID          uint64 // 25.11+ (full step id)
	JobID          uint32 // 23.02+
	StepID         uint32 // the assigned step number
	StepHetComp    uint32 // 25.11+
	Layout         *StepLayout
	Stepmgr        string // 24.05+: send "" (NULL), else srun routes step RPCs there
	// Cred is the packed job credential (body + signature) exactly as
	// on the wire, copied; decode it with DecodeJobCred at the message
	// version. In 26.05 an empty Cred is sent as "no credential".
	Cred []byte
	// SelectPluginID is the 22.05 select jobinfo plugin id (109 for
	// cons_tres; only data-less plugins are accepted).
	SelectPluginID uint32
	// SwitchInfo is the switch jobinfo (22.05-23.11) or step info
	// (24.05) exactly as packed: plugin id and data. 22.05/23.02 always
	// carry at least the plugin id (100 = switch/none); 23.11/24.05 send
	// nothing without a SwitchType.
	SwitchInfo     []byte
	UseProtocolVer uint16 // up to 25.05: the version srun uses for the launch
	State          uint32 // 26.05+: the step's state (JOB_RUNNING)

	EmptyStrs uint8 // bit 0 ResvPorts, bit 1 Stepmgr sent as non-NULL ""
}

func (m *JobStepCreateResponse) Decode(r *Reader, version uint16) error {
	*m = JobStepCreateResponse{}
	var e uint64
	m.DefCPUBindType = r.U32()
	m.ResvPorts = jcStr(r, &e, 0)
	switch {
	case version >= V25_11:
		var id JobStepID
		id.Decode(r, version)
		m.SLUID, m.JobID, m.StepID, m.StepHetComp = id.SLUID, id.JobID, id.StepID, id.StepHetComp
	case version >= V23_02:
		m.JobID = r.U32()
		m.StepID = r.U32()
	default:
		m.StepID = r.U32()
	}
	m.Layout = readStepLayout(r, version)
	if version >= V24_05 {
		m.Stepmgr = jcStr(r, &e, 1)
	}
	if version < V26_05 || r.Bool() {
		_, m.Cred, _ = readCredRaw(r, version)
	}
	if version < V23_02 {
		m.SelectPluginID = stSelectJobinfo(r)
	}
	if version < V24_11 && r.Err == nil {
		m.SwitchInfo = readSwitchInfo(r, version)
	}
	if version < V25_11 {
		m.UseProtocolVer = r.U16()
	}
	if version >= V26_05 {
		m.State = r.U32()
	}
	m.EmptyStrs = uint8(e)
	if err := jcDone(r); err != nil {
		*m = JobStepCreateResponse{}
		return err
	}
	return nil
}

// readSwitchInfo reads the switch info of a 22.05-24.05 step-create
// response: everything up to the final u16 use_protocol_ver, which is
// empty (23.11/24.05 without SwitchType) or a u32 plugin id and its
// data; switch/none (100, 22.05/23.02 only) has no data.
func readSwitchInfo(r *Reader, version uint16) []byte {
	n := r.Remaining() - 2
	switch {
	case n < 0 || (version < V23_11 && n < 4):
		r.fail(ErrShort)
		return nil
	case n == 0:
		return nil
	case n < 4:
		r.fail(ErrTrailing)
		return nil
	}
	b := r.take(n)
	if id := binary.BigEndian.Uint32(b); id == SwitchPluginNone && n > 4 {
		r.fail(ErrTrailing)
		return nil
	}
	return stBytes(b)
}

func (m *JobStepCreateResponse) Encode(w *Writer, version uint16) {
	w.U32(m.DefCPUBindType)
	jcPutStr(w, m.ResvPorts, uint64(m.EmptyStrs), 0)
	switch {
	case version >= V25_11:
		id := JobStepID{SLUID: m.SLUID, JobID: m.JobID, StepID: m.StepID, StepHetComp: m.StepHetComp}
		id.Encode(w, version)
	case version >= V23_02:
		w.U32(m.JobID)
		w.U32(m.StepID)
	default:
		w.U32(m.StepID)
	}
	writeStepLayout(w, m.Layout, version)
	if version >= V24_05 {
		jcPutStr(w, m.Stepmgr, uint64(m.EmptyStrs), 1)
	}
	if version >= V26_05 {
		w.Bool(len(m.Cred) != 0)
	}
	w.B = append(w.B, m.Cred...)
	if version < V23_02 {
		w.U32(m.SelectPluginID)
	}
	if version < V24_11 {
		w.B = append(w.B, m.SwitchInfo...)
	}
	if version < V25_11 {
		w.U16(m.UseProtocolVer)
	}
	if version >= V26_05 {
		w.U32(m.State)
	}
}
