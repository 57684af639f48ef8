package codec

// Job step information: REQUEST_JOB_STEP_INFO (2005) and its reply
// RESPONSE_JOB_STEP_INFO (2006). Checked against _unpack_job_step_info_*
// and slurmctld's _pack_ctld_job_step_info (step_mgr.c / stepmgr.c) of
// the 22.05.8, 23.02.0, 23.11.0, 24.05.0, 24.11.5, 25.05.0, 25.11.0 and
// 26.05.3 tags.

// JobStepInfoRequest is REQUEST_JOB_STEP_INFO: last_update, a step_id
// (with sluid from 24.11) and show_flags. squeue -s / scontrol show step
// send JobID = StepID = StepHetComp = NO_VAL (SLUID 0) for "all steps".
// Decode allocates nothing.
type JobStepInfoRequest struct {
	LastUpdate int64
	StepID     JobStepID
	ShowFlags  uint16
}

// Decode reads the body.
func (m *JobStepInfoRequest) Decode(r *Reader, version uint16) error {
	m.LastUpdate = r.Time()
	m.StepID.Decode(r, version)
	m.ShowFlags = r.U16()
	return r.Err
}

// Encode writes the body.
func (m *JobStepInfoRequest) Encode(w *Writer, version uint16) {
	w.Time(m.LastUpdate)
	m.StepID.Encode(w, version)
	w.U16(m.ShowFlags)
}

// StepMgrJob is one element of the reply's stepmgr list (24.05+): a job
// whose steps are managed by a stepmgr on its batch host, which clients
// then ask directly. 24.05-25.05 carry only the job id, 25.11+ a step_id.
type StepMgrJob struct {
	StepID  JobStepID
	StepMgr string // host name
}

// JobStepInfoMsg is RESPONSE_JOB_STEP_INFO: u32 step_count, time
// last_update (this order since 22.05), the step records and, from 24.05
// on, a list of StepMgrJob (NULL = u32 NO_VAL, which slurmctld sends
// unless a specific job's steps live in a stepmgr).
type JobStepInfoMsg struct {
	LastUpdate  int64
	Steps       []JobStepInfo
	StepMgrSet  bool // 24.05+: false = NULL list
	StepMgrJobs []StepMgrJob
}

// Decode reads the whole message and rejects trailing bytes.
func (m *JobStepInfoMsg) Decode(r *Reader, version uint16) error {
	n, null := r.Count(jobStepInfoMinLen(version))
	if null && r.Err == nil {
		return Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "step_count NO_VAL")
	}
	m.LastUpdate = r.Time()
	m.Steps, m.StepMgrJobs, m.StepMgrSet = nil, nil, false
	if r.Err != nil {
		return r.Err
	}
	if n > 0 {
		m.Steps = make([]JobStepInfo, n)
	}
	for i := range m.Steps {
		if err := m.Steps[i].Decode(r, version); err != nil {
			m.Steps = m.Steps[:i]
			return err
		}
	}
	if version >= V24_05 {
		min := 8 // u32 job id + NULL string
		if version >= V25_11 {
			min = 24
		}
		cnt, null := r.Count(min)
		if !null {
			m.StepMgrSet = true
			m.StepMgrJobs = make([]StepMgrJob, cnt)
			for i := range m.StepMgrJobs {
				s := &m.StepMgrJobs[i]
				if version >= V25_11 {
					s.StepID.Decode(r, version)
				} else {
					s.StepID.JobID = r.U32()
				}
				s.StepMgr = r.String()
			}
		}
	}
	if r.Err != nil {
		return r.Err
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// Encode writes the message.
func (m *JobStepInfoMsg) Encode(w *Writer, version uint16) {
	w.U32(uint32(len(m.Steps)))
	w.Time(m.LastUpdate)
	for i := range m.Steps {
		m.Steps[i].Encode(w, version)
	}
	if version < V24_05 {
		return
	}
	if !m.StepMgrSet && len(m.StepMgrJobs) == 0 {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(len(m.StepMgrJobs)))
	for i := range m.StepMgrJobs {
		s := &m.StepMgrJobs[i]
		if version >= V25_11 {
			s.StepID.Encode(w, version)
		} else {
			w.U32(s.StepID.JobID)
		}
		w.Str(s.StepMgr)
	}
}

var jobStepInfoMinLens = func() map[uint16]int {
	out := make(map[uint16]int, len(Versions))
	for _, v := range Versions {
		var w Writer
		var s JobStepInfo
		s.Encode(&w, v)
		out[v] = len(w.B)
	}
	return out
}()

func jobStepInfoMinLen(version uint16) int {
	if n := jobStepInfoMinLens[version]; n > 0 {
		return n
	}
	return 64
}

// JobStepInfo is one step record (job_step_info_t). "(x+)" marks the
// first version sending a field. How slurmctld fills it: NumCPUs and
// NumTasks are step totals; State is a JOB_* value (JOB_RUNNING for a
// live step); RunTime is elapsed seconds (sent as a time); TimeLimit is
// minutes (INFINITE = none); Partition is the job's; NodeInx indexes the
// node table; TaskDist is a SLURM_DIST_* value (SLURM_DIST_UNKNOWN = 0x2000
// without a layout).
type JobStepInfo struct {
	ArrayJobID       uint32
	ArrayTaskID      uint32 // NO_VAL if not an array task
	StepID           JobStepID
	UserID           uint32
	NumCPUs          uint32
	CPUFreqMin       uint32
	CPUFreqMax       uint32
	CPUFreqGov       uint32
	NumTasks         uint32
	TaskDist         uint32
	TimeLimit        uint32
	State            uint32
	SrunPID          uint32
	StartTime        int64
	RunTime          int64
	Cluster          string
	Container        string
	ContainerID      string // (23.02+)
	ContainerType    string // (26.05+)
	Partition        string
	SrunHost         string
	ResvPorts        string
	Nodes            string
	Name             string
	Network          string
	NodeInx          *HexBits
	SelectPluginID   uint32 // (..22.05) select jobinfo plugin id, no data; 0 encodes as cons_tres
	TRESAllocStr     string
	StartProtocolVer uint16
	CPUsPerTRES      string
	MemPerTRES       string
	JobName          string // (25.05+)
	Cwd              string // (25.05+)
	StdErr           string // (25.05+)
	StdIn            string // (25.05+)
	StdOut           string // (25.05+)
	SubmitLine       string
	TRESBind         string
	TRESFreq         string
	TRESPerStep      string
	TRESPerNode      string
	TRESPerSocket    string
	TRESPerTask      string

	empty uint32 // string fields sent as non-NULL "" (bit = ssf*)
}

const (
	ssfCluster = iota
	ssfContainer
	ssfContainerID
	ssfContainerType
	ssfPartition
	ssfSrunHost
	ssfResvPorts
	ssfNodes
	ssfName
	ssfNetwork
	ssfTRESAllocStr
	ssfCPUsPerTRES
	ssfMemPerTRES
	ssfJobName
	ssfCwd
	ssfStdErr
	ssfStdIn
	ssfStdOut
	ssfSubmitLine
	ssfTRESBind
	ssfTRESFreq
	ssfTRESPerStep
	ssfTRESPerNode
	ssfTRESPerSocket
	ssfTRESPerTask
)

func (s *JobStepInfo) gs(r *Reader, f uint) string {
	b, null := r.StrNull()
	if !null && len(b) == 0 && r.Err == nil {
		s.empty |= 1 << f
	}
	return string(b)
}

func (s *JobStepInfo) ps(w *Writer, v string, f uint) {
	if v == "" && s.empty&(1<<f) != 0 {
		w.StrEmpty()
		return
	}
	w.Str(v)
}

// Decode reads one step record.
func (s *JobStepInfo) Decode(r *Reader, v uint16) error {
	*s = JobStepInfo{}
	s.ArrayJobID = r.U32()
	s.ArrayTaskID = r.U32()
	s.StepID.Decode(r, v)
	s.UserID = r.U32()
	s.NumCPUs = r.U32()
	s.CPUFreqMin = r.U32()
	s.CPUFreqMax = r.U32()
	s.CPUFreqGov = r.U32()
	s.NumTasks = r.U32()
	s.TaskDist = r.U32()
	s.TimeLimit = r.U32()
	s.State = r.U32()
	s.SrunPID = r.U32()
	s.StartTime = r.Time()
	s.RunTime = r.Time()
	s.Cluster = s.gs(r, ssfCluster)
	s.Container = s.gs(r, ssfContainer)
	if v >= V23_02 {
		s.ContainerID = s.gs(r, ssfContainerID)
	}
	if v >= V26_05 {
		s.ContainerType = s.gs(r, ssfContainerType)
	}
	s.Partition = s.gs(r, ssfPartition)
	s.SrunHost = s.gs(r, ssfSrunHost)
	s.ResvPorts = s.gs(r, ssfResvPorts)
	s.Nodes = s.gs(r, ssfNodes)
	s.Name = s.gs(r, ssfName)
	s.Network = s.gs(r, ssfNetwork)
	s.NodeInx = readHexBits(r)
	if v < V23_02 {
		s.SelectPluginID = readSelectJobinfo(r)
	}
	s.TRESAllocStr = s.gs(r, ssfTRESAllocStr)
	s.StartProtocolVer = r.U16()
	s.CPUsPerTRES = s.gs(r, ssfCPUsPerTRES)
	s.MemPerTRES = s.gs(r, ssfMemPerTRES)
	if v >= V25_05 {
		s.JobName = s.gs(r, ssfJobName)
		s.Cwd = s.gs(r, ssfCwd)
		s.StdErr = s.gs(r, ssfStdErr)
		s.StdIn = s.gs(r, ssfStdIn)
		s.StdOut = s.gs(r, ssfStdOut)
	}
	s.SubmitLine = s.gs(r, ssfSubmitLine)
	s.TRESBind = s.gs(r, ssfTRESBind)
	s.TRESFreq = s.gs(r, ssfTRESFreq)
	s.TRESPerStep = s.gs(r, ssfTRESPerStep)
	s.TRESPerNode = s.gs(r, ssfTRESPerNode)
	s.TRESPerSocket = s.gs(r, ssfTRESPerSocket)
	s.TRESPerTask = s.gs(r, ssfTRESPerTask)
	return r.Err
}

// Encode writes one step record.
func (s *JobStepInfo) Encode(w *Writer, v uint16) {
	w.U32(s.ArrayJobID)
	w.U32(s.ArrayTaskID)
	s.StepID.Encode(w, v)
	w.U32(s.UserID)
	w.U32(s.NumCPUs)
	w.U32(s.CPUFreqMin)
	w.U32(s.CPUFreqMax)
	w.U32(s.CPUFreqGov)
	w.U32(s.NumTasks)
	w.U32(s.TaskDist)
	w.U32(s.TimeLimit)
	w.U32(s.State)
	w.U32(s.SrunPID)
	w.Time(s.StartTime)
	w.Time(s.RunTime)
	s.ps(w, s.Cluster, ssfCluster)
	s.ps(w, s.Container, ssfContainer)
	if v >= V23_02 {
		s.ps(w, s.ContainerID, ssfContainerID)
	}
	if v >= V26_05 {
		s.ps(w, s.ContainerType, ssfContainerType)
	}
	s.ps(w, s.Partition, ssfPartition)
	s.ps(w, s.SrunHost, ssfSrunHost)
	s.ps(w, s.ResvPorts, ssfResvPorts)
	s.ps(w, s.Nodes, ssfNodes)
	s.ps(w, s.Name, ssfName)
	s.ps(w, s.Network, ssfNetwork)
	writeHexBits(w, s.NodeInx)
	if v < V23_02 {
		id := s.SelectPluginID
		if id == 0 {
			id = SELECT_PLUGIN_CONS_TRES
		}
		w.U32(id)
	}
	s.ps(w, s.TRESAllocStr, ssfTRESAllocStr)
	w.U16(s.StartProtocolVer)
	s.ps(w, s.CPUsPerTRES, ssfCPUsPerTRES)
	s.ps(w, s.MemPerTRES, ssfMemPerTRES)
	if v >= V25_05 {
		s.ps(w, s.JobName, ssfJobName)
		s.ps(w, s.Cwd, ssfCwd)
		s.ps(w, s.StdErr, ssfStdErr)
		s.ps(w, s.StdIn, ssfStdIn)
		s.ps(w, s.StdOut, ssfStdOut)
	}
	s.ps(w, s.SubmitLine, ssfSubmitLine)
	s.ps(w, s.TRESBind, ssfTRESBind)
	s.ps(w, s.TRESFreq, ssfTRESFreq)
	s.ps(w, s.TRESPerStep, ssfTRESPerStep)
	s.ps(w, s.TRESPerNode, ssfTRESPerNode)
	s.ps(w, s.TRESPerSocket, ssfTRESPerSocket)
	s.ps(w, s.TRESPerTask, ssfTRESPerTask)
}
