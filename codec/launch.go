package codec

// REQUEST_LAUNCH_TASKS (6001, srun -> every slurmd of the step):
// launch_tasks_request_msg_t (src/common/slurm_protocol_pack.c
// _pack_launch_tasks_request_msg / _unpack_launch_tasks_request_msg,
// checked at every release tag 22.05-26.05).
//
// Layout per version:
//   - 22.05: step id, uid, gid, user_name, gids[], het fields, mpi plugin,
//     ntasks and ntasks-per-*, memory limits, nnodes, cpus_per_task,
//     tres_per_task ... accel_bind_type, cred_version, cred, per node
//     (tasks_to_launch, global task ids), response ports, orig_addr, env,
//     spank env, container, cwd, binding, argv, flags, file names, I/O
//     ports, profile, task prolog/epilog, slurmd_debug, switch jobinfo,
//     job_options, alias_list, complete_nodelist, open_mode, acctg_freq,
//     cpu_freq x3, select jobinfo, tres_bind, tres_freq, x11 fields.
//   - 23.02: no select jobinfo.
//   - 23.11: no uid/gid/user_name; + cpt_compact arrays after
//     cpus_per_task; alias_list always NULL; the switch jobinfo is absent
//     without a SwitchType.
//   - 24.05: switch step info instead of jobinfo; + stepmgr and the
//     job_ptr flag at the end.
//   - 24.11: no switch info; + oom_kill_step before the job_ptr flag.
//   - 25.05-26.05: + het_job_step_task_cnts (when het_job_offset < NO_VAL
//     and het_job_step_cnt > 0) after het_job_step_cnt; + alloc_tls_cert
//     after the I/O ports; no alias_list.
//
// Where the reference note (slurm-interactive-and-accounting.md 0.2,
// B.2-B.6) and the source or the captures disagree, the source was
// followed:
//   - 0.2 says unpack rejects a credential uid/gid of 99: 23.02+ unpack
//     does (unpack_identity, slurm_cred_unpack); 22.05's slurm_cred_unpack
//     does not check it at all. This package refuses 99 in every version.
//   - B.2 says srun sets user_id to getuid: srun sends opt.uid, which is
//     SLURM_AUTH_NOBODY (99) unless --uid from 23.02 on (the 24.11 and
//     26.05 captures carry 99; 22.05 sends the real uid, 0 there).
//   - B.3 "24.05 inserts switch stepinfo between cred and
//     use_protocol_ver" and B.6 "24.05 differs only by switch stepinfo
//     after slurmd_debug": 23.11 and 24.05 senders without a SwitchType
//     pack nothing there (switch_g_pack_jobinfo/stepinfo return early),
//     so the field is present only with a switch plugin.
//   - B.4 names 23.11/24.05 as hiding the switch info behind job_partition:
//     23.02 does it too, also when it packs a 22.05-format credential.
// Not in the note (it covers 22.05 and 24.11): 23.02 already has the
// step-create request's array_task_id/container_id/ntasks_per_core and
// the credential's end/start time, extra, oversubscribe and licenses;
// 23.02 still packs the signature with packmem; 24.05 adds stepmgr to
// the response; 25.05 adds cwd/std_* to the
// request and het_job_step_task_cnts/alloc_tls_cert to the launch (and
// drops alias_list); 25.11 sends a full step id in the response and drops
// use_protocol_ver; 26.05 adds container_type and launch parameters to
// the request, a cred-present bool and a state to the response, and
// job_exclusive/job_qos to the credential.

// LAUNCH_* flags of LaunchTasksRequest.Flags (src/common/
// slurm_protocol_defs.h).
const (
	LaunchParallelDebug        uint32 = 1 << 0
	LaunchMultiProg            uint32 = 1 << 1
	LaunchPTY                  uint32 = 1 << 2 // srun --pty
	LaunchBufferedIO           uint32 = 1 << 3
	LaunchLabelIO              uint32 = 1 << 4  // srun -l
	LaunchExtLauncher          uint32 = 1 << 5  // 23.11+ (unused in 22.05/23.02)
	LaunchNoAlloc              uint32 = 1 << 6  // srun --no-allocate (root only)
	LaunchOvercommit           uint32 = 1 << 7  // srun -O
	LaunchNoSigFail            uint32 = 1 << 8  // 23.11+
	LaunchGresAllowTaskSharing uint32 = 1 << 9  // 23.11+
	LaunchWaitForChildren      uint32 = 1 << 10 // 25.05+
	LaunchKillOnBadExit        uint32 = 1 << 11 // 25.05+
	LaunchLocalIO              uint32 = 1 << 12 // 26.05+
)

// JobOption is one job_options entry (spank plugin options).
type JobOption struct {
	Type   uint32
	Option string
	Optarg string
	Empty  uint8 // bit 0 Option, bit 1 Optarg sent as non-NULL ""
}

// jobOptionsTag opens a packed job_options list.
const jobOptionsTag = "job_options"

func readJobOptions(r *Reader) []JobOption {
	tag := r.Str()
	if r.Err == nil && string(tag) != jobOptionsTag {
		// 22.05/23.02 unpack refuse another tag; later ones ignore it.
		// Every sender packs the same tag, so refuse it everywhere.
		stBadf(r, "job_options tag %q", tag)
	}
	n, null := r.Count(12)
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
	out := make([]JobOption, n)
	for i := range out {
		var e uint64
		out[i].Type = r.U32()
		out[i].Option = jcStr(r, &e, 0)
		out[i].Optarg = jcStr(r, &e, 1)
		out[i].Empty = uint8(e)
		if r.Err != nil {
			return nil
		}
	}
	return out
}

func writeJobOptions(w *Writer, opts []JobOption) {
	w.Str(jobOptionsTag)
	w.U32(uint32(len(opts)))
	for _, o := range opts {
		w.U32(o.Type)
		jcPutStr(w, o.Option, uint64(o.Empty), 0)
		jcPutStr(w, o.Optarg, uint64(o.Empty), 1)
	}
}

// LaunchTasksRequest is launch_tasks_request_msg_t, the body of
// REQUEST_LAUNCH_TASKS. srun sends the same body to every node; a node
// finds its index in CompleteNodelist. Fields a version lacks are zero.
type LaunchTasksRequest struct {
	StepID   JobStepID
	UID      uint32 // 22.05/23.02 only
	GID      uint32 // 22.05/23.02 only
	UserName string // 22.05/23.02 only
	GIDs     []uint32

	HetJobNodeOffset uint32 // NO_VAL unless a het job
	HetJobID         uint32
	HetJobNNodes     uint32     // NO_VAL, or len(HetJobTIDs)
	HetJobTIDs       [][]uint32 // per het node task ids (only when HetJobNNodes != NO_VAL)
	HetJobNTasks     uint32     // NO_VAL, or len(HetJobTIDOffsets)
	HetJobTIDOffsets []uint32
	HetJobOffset     uint32
	HetJobStepCnt    uint32
	// HetJobStepTaskCnts: 25.05+, sent when HetJobOffset < NO_VAL and
	// HetJobStepCnt > 0.
	HetJobStepTaskCnts []uint32
	HetJobTaskOffset   uint32
	HetJobNodeList     string

	MPIPluginID     uint32
	NTasks          uint32 // tasks of the whole step
	NTasksPerBoard  uint16
	NTasksPerCore   uint16
	NTasksPerTres   uint16
	NTasksPerSocket uint16
	JobMemLim       uint64
	StepMemLim      uint64
	NNodes          uint32 // nodes of the step (< NO_VAL)
	CPUsPerTask     uint16
	CPTCompactArray []uint16 // 23.11+
	CPTCompactReps  []uint32 // 23.11+; same length (checked)
	TresPerTask     string
	ThreadsPerCore  uint16
	TaskDist        uint32
	NodeCPUs        uint16
	JobCoreSpec     uint16
	AccelBindType   uint16

	// CredVersion is the protocol version the credential is packed in
	// (srun copies the controller's). Cred is it decoded, CredBody the
	// signed body bytes and CredRaw the whole credential as on the wire
	// (copies). Encode writes CredRaw verbatim when set (what srun does),
	// otherwise Cred packed at CredVersion (or the message version when
	// CredVersion is 0).
	CredVersion uint16
	Cred        JobCred
	CredBody    []byte
	CredRaw     []byte

	// Per node of the step (NNodes entries): how many tasks it launches
	// and their global task ids (len(GlobalTaskIDs[i]) ==
	// TasksToLaunch[i], checked).
	TasksToLaunch []uint16
	GlobalTaskIDs [][]uint32

	RespPorts   []uint16 // node i answers to RespPorts[i%len]
	OrigAddr    WireAddr // srun sends AF_UNSPEC
	Env         []string
	SpankJobEnv []string
	Container   string
	Cwd         string
	CPUBindType uint16
	CPUBind     string
	MemBindType uint16
	MemBind     string
	Argv        []string
	Flags       uint32 // Launch* bits
	OFName      string // --output on the node (with % patterns); "" = stream to srun
	EFName      string
	IFName      string
	IOPorts     []uint16 // node i connects its I/O to IOPorts[i%len]
	// AllocTLSCert: 25.05+, the certificate srun's listeners present.
	AllocTLSCert string
	Profile      uint32
	TaskProlog   string
	TaskEpilog   string
	SlurmdDebug  uint16
	// SwitchPluginID is the 22.05/23.02 switch jobinfo plugin id: only
	// 100 (switch/none, no data) is accepted; 23.11/24.05 senders with a
	// SwitchType (plugin data we cannot delimit) are refused.
	SwitchPluginID   uint32
	Options          []JobOption
	AliasList        string // up to 24.11 (always NULL from 23.11)
	CompleteNodelist string // the step's nodes (index order = node ids)
	OpenMode         uint8
	AcctgFreq        string
	CPUFreqMin       uint32
	CPUFreqMax       uint32
	CPUFreqGov       uint32
	SelectPluginID   uint32 // 22.05 only: select jobinfo plugin id (data-less ones)
	TresBind         string
	TresFreq         string
	X11              uint16
	X11AllocHost     string
	X11AllocPort     uint16
	X11MagicCookie   string
	X11Target        string
	X11TargetPort    uint16
	Stepmgr          string // 24.05+
	OOMKillStep      bool   // 24.11+
	// The job_ptr flag (24.05+) that precedes a stepmgr job record is
	// always false here: a request with one is refused.

	EmptyStrs uint64 // bit i: i-th string in wire order was a non-NULL ""
}

// isJobOptionsTag reports whether the packed job_options tag starts at
// r's offset (how a 23.11/24.05 body without switch info continues).
func isJobOptionsTag(r *Reader) bool {
	want := "\x00\x00\x00\x0cjob_options\x00"
	return r.Err == nil && r.Remaining() >= len(want) && string(r.B[r.Off:r.Off+len(want)]) == want
}

func (m *LaunchTasksRequest) Decode(r *Reader, version uint16) error {
	*m = LaunchTasksRequest{}
	s := stRd{r: r}
	m.StepID.Decode(r, version)
	if version < V23_11 {
		m.UID = r.U32()
		m.GID = r.U32()
		m.UserName = s.str()
	}
	m.GIDs = readU32s(r)
	m.HetJobNodeOffset = r.U32()
	m.HetJobID = r.U32()
	m.HetJobNNodes = r.U32()
	if m.HetJobNNodes != NoVal && r.Err == nil {
		if uint64(m.HetJobNNodes)*4 > uint64(r.Remaining()) {
			r.fail(ErrBadCount)
		} else if m.HetJobNNodes > 0 {
			m.HetJobTIDs = make([][]uint32, m.HetJobNNodes)
			for i := range m.HetJobTIDs {
				if m.HetJobTIDs[i] = readU32s(r); r.Err != nil {
					break
				}
			}
		}
	}
	m.HetJobNTasks = r.U32()
	if m.HetJobNTasks != NoVal && m.HetJobNTasks > 0 && r.Err == nil {
		if uint64(m.HetJobNTasks)*4 > uint64(r.Remaining()) {
			r.fail(ErrBadCount)
		} else {
			m.HetJobTIDOffsets = make([]uint32, m.HetJobNTasks)
			for i := range m.HetJobTIDOffsets {
				m.HetJobTIDOffsets[i] = r.U32()
			}
		}
	}
	m.HetJobOffset = r.U32()
	m.HetJobStepCnt = r.U32()
	if version >= V25_05 && m.HetJobOffset < NoVal && m.HetJobStepCnt > 0 {
		m.HetJobStepTaskCnts = readU32s(r)
	}
	m.HetJobTaskOffset = r.U32()
	m.HetJobNodeList = s.str()
	m.MPIPluginID = r.U32()
	m.NTasks = r.U32()
	m.NTasksPerBoard = r.U16()
	m.NTasksPerCore = r.U16()
	m.NTasksPerTres = r.U16()
	m.NTasksPerSocket = r.U16()
	m.JobMemLim = r.U64()
	m.StepMemLim = r.U64()
	m.NNodes = r.U32()
	if r.Err == nil && m.NNodes >= NoVal {
		stBadf(r, "launch nnodes %#x", m.NNodes)
	}
	m.CPUsPerTask = r.U16()
	if version >= V23_11 {
		m.CPTCompactArray, m.CPTCompactReps = readCPTCompact(r)
	}
	m.TresPerTask = s.str()
	m.ThreadsPerCore = r.U16()
	m.TaskDist = r.U32()
	m.NodeCPUs = r.U16()
	m.JobCoreSpec = r.U16()
	m.AccelBindType = r.U16()
	m.CredVersion = r.U16()
	if r.Err == nil && !SupportedVersion(m.CredVersion) {
		stBadf(r, "launch cred_version %#x", m.CredVersion)
	}
	if r.Err == nil {
		m.Cred, m.CredRaw, m.CredBody = readCredRaw(r, m.CredVersion)
	}
	if r.Err == nil && uint64(m.NNodes)*6 > uint64(r.Remaining()) {
		r.fail(ErrBadCount)
	}
	if r.Err == nil && m.NNodes > 0 {
		m.TasksToLaunch = make([]uint16, m.NNodes)
		m.GlobalTaskIDs = make([][]uint32, m.NNodes)
		for i := range m.TasksToLaunch {
			m.TasksToLaunch[i] = r.U16()
			m.GlobalTaskIDs[i] = readU32s(r)
			if r.Err == nil && len(m.GlobalTaskIDs[i]) != int(m.TasksToLaunch[i]) {
				stBadf(r, "launch node %d: %d task ids for %d tasks", i, len(m.GlobalTaskIDs[i]), m.TasksToLaunch[i])
			}
			if r.Err != nil {
				break
			}
		}
	}
	m.RespPorts = stPorts(r, "response")
	m.OrigAddr = readWireAddr(r)
	m.Env = jcStrArray(r, false)
	m.SpankJobEnv = jcStrArray(r, false)
	m.Container = s.str()
	m.Cwd = s.str()
	m.CPUBindType = r.U16()
	m.CPUBind = s.str()
	m.MemBindType = r.U16()
	m.MemBind = s.str()
	m.Argv = jcStrArray(r, false)
	m.Flags = r.U32()
	m.OFName = s.str()
	m.EFName = s.str()
	m.IFName = s.str()
	m.IOPorts = stPorts(r, "I/O")
	if version >= V25_05 {
		m.AllocTLSCert = s.str()
	}
	m.Profile = r.U32()
	m.TaskProlog = s.str()
	m.TaskEpilog = s.str()
	m.SlurmdDebug = r.U16()
	switch {
	case version < V23_11:
		m.SwitchPluginID = r.U32()
		if r.Err == nil && m.SwitchPluginID != SwitchPluginNone {
			stBadf(r, "switch plugin %d jobinfo not supported", m.SwitchPluginID)
		}
	case version < V24_11:
		if r.Err == nil && !isJobOptionsTag(r) {
			stBadf(r, "switch plugin %d info not supported", r.U32())
		}
	}
	m.Options = readJobOptions(r)
	if version < V25_05 {
		m.AliasList = s.str()
	}
	m.CompleteNodelist = s.str()
	m.OpenMode = r.U8()
	m.AcctgFreq = s.str()
	m.CPUFreqMin = r.U32()
	m.CPUFreqMax = r.U32()
	m.CPUFreqGov = r.U32()
	if version < V23_02 {
		m.SelectPluginID = stSelectJobinfo(r)
	}
	m.TresBind = s.str()
	m.TresFreq = s.str()
	m.X11 = r.U16()
	m.X11AllocHost = s.str()
	m.X11AllocPort = r.U16()
	m.X11MagicCookie = s.str()
	m.X11Target = s.str()
	m.X11TargetPort = r.U16()
	if version >= V24_05 {
		m.Stepmgr = s.str()
		if version >= V24_11 {
			m.OOMKillStep = r.Bool()
		}
		if r.Bool() && r.Err == nil {
			stBadf(r, "launch request carries a stepmgr job record (job_ptr), not supported")
		}
	}
	m.EmptyStrs = s.empty
	if err := jcDone(r); err != nil {
		*m = LaunchTasksRequest{}
		return err
	}
	return nil
}

// stPorts reads a u16 count (< NO_VAL16) and that many u16 ports.
func stPorts(r *Reader, what string) []uint16 {
	n := r.U16()
	if r.Err != nil || n == 0 {
		return nil
	}
	if n >= NoVal16 {
		stBadf(r, "%d %s ports", n, what)
		return nil
	}
	if int(n)*2 > r.Remaining() {
		r.fail(ErrBadCount)
		return nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = r.U16()
	}
	return out
}

func (m *LaunchTasksRequest) Encode(w *Writer, version uint16) {
	s := stWr{w: w, empty: m.EmptyStrs}
	m.StepID.Encode(w, version)
	if version < V23_11 {
		w.U32(m.UID)
		w.U32(m.GID)
		s.str(m.UserName)
	}
	w.U32Array(m.GIDs)
	w.U32(m.HetJobNodeOffset)
	w.U32(m.HetJobID)
	w.U32(m.HetJobNNodes)
	if m.HetJobNNodes != NoVal {
		for i := uint32(0); i < m.HetJobNNodes; i++ {
			var t []uint32
			if int(i) < len(m.HetJobTIDs) {
				t = m.HetJobTIDs[i]
			}
			w.U32Array(t)
		}
	}
	w.U32(m.HetJobNTasks)
	if m.HetJobNTasks != NoVal {
		for i := uint32(0); i < m.HetJobNTasks; i++ {
			var v uint32
			if int(i) < len(m.HetJobTIDOffsets) {
				v = m.HetJobTIDOffsets[i]
			}
			w.U32(v)
		}
	}
	w.U32(m.HetJobOffset)
	w.U32(m.HetJobStepCnt)
	if version >= V25_05 && m.HetJobOffset < NoVal && m.HetJobStepCnt > 0 {
		w.U32Array(m.HetJobStepTaskCnts)
	}
	w.U32(m.HetJobTaskOffset)
	s.str(m.HetJobNodeList)
	w.U32(m.MPIPluginID)
	w.U32(m.NTasks)
	w.U16(m.NTasksPerBoard)
	w.U16(m.NTasksPerCore)
	w.U16(m.NTasksPerTres)
	w.U16(m.NTasksPerSocket)
	w.U64(m.JobMemLim)
	w.U64(m.StepMemLim)
	w.U32(m.NNodes)
	w.U16(m.CPUsPerTask)
	if version >= V23_11 {
		w.U16Array(m.CPTCompactArray)
		w.U32Array(m.CPTCompactReps)
	}
	s.str(m.TresPerTask)
	w.U16(m.ThreadsPerCore)
	w.U32(m.TaskDist)
	w.U16(m.NodeCPUs)
	w.U16(m.JobCoreSpec)
	w.U16(m.AccelBindType)
	cv := m.CredVersion
	if cv == 0 {
		cv = version
	}
	w.U16(cv)
	if m.CredRaw != nil {
		w.B = append(w.B, m.CredRaw...)
	} else {
		w.B = AppendJobCred(w.B, &m.Cred, cv)
	}
	for i := uint32(0); i < m.NNodes; i++ {
		var ids []uint32
		if int(i) < len(m.GlobalTaskIDs) {
			ids = m.GlobalTaskIDs[i]
		}
		n := uint16(len(ids))
		if int(i) < len(m.TasksToLaunch) {
			n = m.TasksToLaunch[i]
		}
		w.U16(n)
		w.U32Array(ids)
	}
	w.U16(uint16(len(m.RespPorts)))
	for _, p := range m.RespPorts {
		w.U16(p)
	}
	writeWireAddr(w, m.OrigAddr)
	jcPutStrArray(w, m.Env)
	jcPutStrArray(w, m.SpankJobEnv)
	s.str(m.Container)
	s.str(m.Cwd)
	w.U16(m.CPUBindType)
	s.str(m.CPUBind)
	w.U16(m.MemBindType)
	s.str(m.MemBind)
	jcPutStrArray(w, m.Argv)
	w.U32(m.Flags)
	s.str(m.OFName)
	s.str(m.EFName)
	s.str(m.IFName)
	w.U16(uint16(len(m.IOPorts)))
	for _, p := range m.IOPorts {
		w.U16(p)
	}
	if version >= V25_05 {
		s.str(m.AllocTLSCert)
	}
	w.U32(m.Profile)
	s.str(m.TaskProlog)
	s.str(m.TaskEpilog)
	w.U16(m.SlurmdDebug)
	if version < V23_11 {
		w.U32(m.SwitchPluginID)
	}
	writeJobOptions(w, m.Options)
	if version < V25_05 {
		s.str(m.AliasList)
	}
	s.str(m.CompleteNodelist)
	w.U8(m.OpenMode)
	s.str(m.AcctgFreq)
	w.U32(m.CPUFreqMin)
	w.U32(m.CPUFreqMax)
	w.U32(m.CPUFreqGov)
	if version < V23_02 {
		w.U32(m.SelectPluginID)
	}
	s.str(m.TresBind)
	s.str(m.TresFreq)
	w.U16(m.X11)
	s.str(m.X11AllocHost)
	w.U16(m.X11AllocPort)
	s.str(m.X11MagicCookie)
	s.str(m.X11Target)
	w.U16(m.X11TargetPort)
	if version >= V24_05 {
		s.str(m.Stepmgr)
		if version >= V24_11 {
			w.Bool(m.OOMKillStep)
		}
		w.Bool(false) // job_ptr
	}
}
