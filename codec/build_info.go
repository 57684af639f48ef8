package codec

import (
	"slices"
	"strings"
)

// REQUEST_BUILD_INFO (2001) / RESPONSE_BUILD_INFO (2002): `scontrol show
// config`. The reply is slurmctld's whole slurm_conf_t as
// _pack_slurm_ctl_conf_msg (22.05-25.11) / _pack_slurm_conf (26.05) in
// src/common/slurm_protocol_pack.c packs it for the peer's version. The
// layouts below were checked field by field against the current-version
// branch of the pack and unpack functions at each release tag, and byte
// for byte against the 22.05, 24.11 and 26.05 captures.

// BuildInfoRequest is REQUEST_BUILD_INFO: the client's cached
// last_update (0 = send everything). A server answers
// SLURM_NO_CHANGE_IN_DATA when LastUpdate-1 >= its own last change.
type BuildInfoRequest struct {
	LastUpdate int64
}

func (m *BuildInfoRequest) Decode(r *Reader, version uint16) error {
	m.LastUpdate = r.Time()
	return miscEnd(r)
}

func (m *BuildInfoRequest) Encode(w *Writer, version uint16) { w.Time(m.LastUpdate) }

// ConfigKeyPair is one config_key_pair_t (name, value). In a list field a
// nil slice is a NULL list (count NO_VAL, which clients print nothing for)
// and a non-nil empty slice is an empty list (count 0); slurmctld sends
// both (22.05-26.05 captures: acct_gather_conf is empty, cgroup_conf NULL).
type ConfigKeyPair struct {
	Name, Value string
}

// ConfigPluginParams is one config_plugin_params_t: a plugin name and its
// key pairs (node_features_conf, 22.05's slurmctld_plugstack_conf).
type ConfigPluginParams struct {
	Name  string
	Pairs []ConfigKeyPair // nil = NULL list
}

// ConfigJobDefault is one job_defaults_t (JobDefaults=DefCpuPerGPU=... in
// a partition or slurm.conf): Type is JOB_DEF_CPU_PER_GPU (1) or
// JOB_DEF_MEM_PER_GPU (2).
type ConfigJobDefault struct {
	Type  uint16
	Value uint64
}

// BuildInfo is RESPONSE_BUILD_INFO, the union of every version's fields.
// A field a version does not carry is neither read nor written for it.
//
// What a server must get right: scontrol prints every string with "%s",
// so NULL strings print "(null)" and crash nothing; ControlAddr and
// ControlMachine must have the same length (Encode pads the shorter with
// NULLs); list fields may be nil. Most numeric fields have special
// renderings for 0/NO_VAL/INFINITE (src/api/config_info.c). Clients use
// their own slurm.conf for every decision; this message is only printed
// (and read by `sprio -M` for the priority weights).
//
// Fields in Slurm's order; the comment says which versions carry a field
// when not all do.
type BuildInfo struct {
	LastUpdate                     int64  // when the configuration last changed (clients send it back as last_update)
	AccountingStorageEnforce       uint16 // AccountingStorageEnforce flags (ACCOUNTING_ENFORCE_*)
	AccountingStorageBackupHost    string
	AccountingStorageHost          string
	AccountingStorageExtHost       string
	AccountingStorageParams        string
	AccountingStoragePort          uint16
	AccountingStorageTRES          string
	AccountingStorageType          string
	AccountingStorageUser          string          // to 25.05
	AcctGatherConf                 []ConfigKeyPair // acct_gather.conf pairs; see ConfigKeyPair for the NULL/empty convention
	AcctGatherEnergyType           string
	AcctGatherFilesystemType       string
	AcctGatherInterconnectType     string
	AcctGatherNodeFreq             uint16
	AcctGatherProfileType          string
	AuthAltTypes                   string
	AuthAltParams                  string
	AuthInfo                       string
	AuthType                       string // AuthType, e.g. "auth/munge"
	BatchStartTimeout              uint16
	BootTime                       int64 // when slurmctld started (BOOT_TIME)
	BurstBufferType                string
	BcastExclude                   string
	BcastParameters                string
	CertmgrParams                  string          // 25.05+
	CertmgrType                    string          // 25.05+
	CgroupConf                     []ConfigKeyPair // cgroup.conf pairs
	CliFilterParams                string          // 25.11+
	CliFilterPlugins               string
	ClusterName                    string // ClusterName
	CommParams                     string // CommunicationParameters
	CompleteWait                   uint16
	ConfFlags                      uint32   // CONF_FLAG_* bits: 0x1 SlurmdParameters=config_overrides, 0x4 DisableRootJobs, 0x20 TrackWCKey, 0x40 IPv4 enabled, 0x80 IPv6 enabled
	ControlAddr                    []string // SlurmctldHost addresses, one per controller; same count as ControlMachine (a client rejects a mismatch)
	ControlMachine                 []string // SlurmctldHost names, one per controller (primary first)
	CoreSpecPlugin                 string   // to 23.11
	CPUFreqDef                     uint32   // CpuFreqDef, NO_VAL when unset
	CPUFreqGovs                    uint32
	CredType                       string // CredType, e.g. "cred/munge"
	DataParserParameters           string // 24.11+
	DefMemPerCPU                   uint64
	DebugFlags                     uint64 // DebugFlags bits
	DependencyParams               string
	EIOTimeout                     uint16
	EnforcePartLimits              uint16
	Epilog                         []string // Epilog scripts; before 24.05 a single string (joined with "," when encoded)
	EpilogMsgTime                  uint32
	EpilogSlurmctld                []string        // EpilogSlurmctld scripts; a single string before 24.05
	ExtSensorsConf                 []ConfigKeyPair // to 23.11
	ExtSensorsType                 string          // to 23.11
	ExtSensorsFreq                 uint16          // to 23.11
	EpilogTimeout                  uint16          // 25.05+
	FedParams                      string
	FirstJobID                     uint32
	FSDampeningFactor              uint16
	GetEnvTimeout                  uint16 // to 24.11
	GresPlugins                    string
	GroupTime                      uint16
	GroupForce                     uint16
	GPUFreqDef                     string
	HashPlugin                     string // 24.05+
	HashVal                        uint32 // hash of slurm.conf; NO_VAL makes scontrol skip its HASH_VAL comparison line
	HealthCheckInterval            uint16
	HealthCheckNodeState           uint16 // HealthCheckNodeState bits
	HealthCheckProgram             string
	HealthCheckTimeout             uint16 // 26.05+
	HTTPParserType                 string // 25.11+
	InactiveLimit                  uint16
	InteractiveStepOpts            string
	JobAcctGatherFreq              string
	JobAcctGatherType              string
	JobAcctGatherParams            string
	JobCompHost                    string
	JobCompLoc                     string
	JobCompParams                  string
	JobCompPort                    uint32 // JobCompPort (u32 on the wire)
	JobCompType                    string
	JobCompUser                    string
	NamespacePlugin                string             // JobContainerType before 25.11, NamespaceType from 25.11 (same slot)
	JobCredentialPrivateKey        string             // to 23.02
	JobCredentialPublicCertificate string             // to 23.02
	JobDefaults                    []ConfigJobDefault // JobDefaults (DefCpuPerGPU, DefMemPerGPU)
	JobFileAppend                  uint16
	JobRequeue                     uint16
	JobSubmitPlugins               string
	KillOnBadExit                  uint16
	KillWait                       uint16
	LaunchParams                   string
	LaunchType                     string // to 22.05
	LicenseParams                  string // 26.05+
	Licenses                       string
	LogFmt                         uint16
	MaxArraySize                   uint32
	MaxBatchRequeue                uint32 // 23.02+
	MaxDBDMsgs                     uint32
	MailDomain                     string
	MailProg                       string
	MaxJobCount                    uint32
	MaxJobID                       uint32
	MaxMemPerCPU                   uint64
	MaxNodeCount                   uint32
	MaxStepCount                   uint32
	MaxTasksPerNode                uint16
	MCSPlugin                      string
	MCSParams                      string
	MetricsAuthUsers               string // 26.05+
	MetricsParams                  string // 26.05+
	MetricsType                    string // 25.11+
	MinJobAge                      uint32
	MPIConf                        []ConfigKeyPair // mpi.conf pairs
	MPIDefault                     string
	MPIParams                      string
	MsgTimeout                     uint16               // MessageTimeout in seconds
	NextJobID                      uint32               // the next job id slurmctld will hand out
	NodeFeaturesConf               []ConfigPluginParams // node_features plugin parameters
	NodeFeaturesPlugins            string
	NodePrefix                     string // to 24.11
	OverTimeLimit                  uint16
	PluginDir                      string
	PlugStack                      string
	PowerParameters                string // to 23.11
	PowerPlugin                    string // to 23.11
	PreemptMode                    uint16 // PreemptMode (PREEMPT_MODE_* bits)
	PreemptParams                  string // 23.02+
	PreemptType                    string
	PreemptExemptTime              uint32
	PrepParams                     string
	PrepPlugins                    string
	PriorityDecayHl                uint32
	PriorityCalcPeriod             uint32
	PriorityFavorSmall             uint16
	PriorityFlags                  uint16 // PriorityFlags bits
	PriorityMaxAge                 uint32
	PriorityParams                 string
	PriorityResetPeriod            uint16
	PriorityType                   string
	PriorityWeightAge              uint32
	PriorityWeightAssoc            uint32
	PriorityWeightFS               uint32
	PriorityWeightJS               uint32
	PriorityWeightPart             uint32
	PriorityWeightQOS              uint32
	PriorityWeightTRES             string
	PrivateData                    uint16 // PrivateData (PRIVATE_DATA_* bits)
	ProctrackType                  string
	Prolog                         []string // Prolog scripts; a single string before 24.05
	PrologEpilogTimeout            uint16   // PrologEpilogTimeout; NO_VAL16 when unset (replaced in 25.05 by PrologTimeout/EpilogTimeout); to 24.11
	PrologSlurmctld                []string // PrologSlurmctld scripts; a single string before 24.05
	PrologTimeout                  uint16   // 25.05+
	PrologFlags                    uint16
	PropagatePrioProcess           uint16
	PropagateRlimits               string
	PropagateRlimitsExcept         string
	RebootProgram                  string
	ReconfigFlags                  uint16
	RequeueExit                    string
	RequeueExitHold                string
	ResumeFailProgram              string
	ResumeProgram                  string
	ResumeRate                     uint16
	ResumeTimeout                  uint16
	ResvEpilog                     string
	ResvOverRun                    uint16
	ResvProlog                     string
	ReturnToService                uint16
	RoutePlugin                    string // to 23.02
	SchedParams                    string
	SchedLogFile                   string
	SchedLogLevel                  uint16
	SchedTimeSlice                 uint16
	SchedType                      string
	ScronParams                    string
	SelectType                     string          // SelectType, e.g. "select/cons_tres"
	SelectConf                     []ConfigKeyPair // select plugin configuration
	SelectTypeParam                uint16          // SelectTypeParameters (CR_* bits)
	SlurmConf                      string          // path of slurm.conf on the controller
	SlurmUserID                    uint32          // SlurmUser uid
	SlurmUserName                  string
	SlurmdUserID                   uint32
	SlurmdUserName                 string
	SlurmctldAddr                  string // SlurmctldAddr (NULL unless set)
	SlurmctldDebug                 uint16
	SlurmctldHTTPAuthParams        string // 26.05+
	SlurmctldLogFile               string
	SlurmctldParams                string
	SlurmctldPidFile               string
	SlurmctldPlugstack             string               // to 22.05
	SlurmctldPlugstackConf         []ConfigPluginParams // to 22.05
	SlurmctldPort                  uint32               // SlurmctldPort (u32 on the wire)
	SlurmctldPortCount             uint16               // number of consecutive ports from SlurmctldPort
	SlurmctldPrimaryOffProg        string
	SlurmctldPrimaryOnProg         string
	SlurmctldSyslogDebug           uint16
	SlurmctldTimeout               uint16 // SlurmctldTimeout in seconds
	SlurmdDebug                    uint16
	SlurmdHTTPAuthParams           string // 26.05+
	SlurmdLogFile                  string
	SlurmdParams                   string
	SlurmdPidFile                  string
	SlurmdPort                     uint32 // SlurmdPort
	SlurmdSpoolDir                 string
	SlurmdSyslogDebug              uint16
	SlurmdTimeout                  uint16 // SlurmdTimeout in seconds
	SrunEpilog                     string
	SrunPortRange                  [2]uint16 // SrunPortRange low, high (0,0 = any)
	SrunProlog                     string
	StateSaveLocation              string
	SuspendExcNodes                string
	SuspendExcParts                string
	SuspendExcStates               string // 23.02+
	SuspendProgram                 string
	SuspendRate                    uint16
	SuspendTime                    uint32 // SuspendTime; INFINITE = disabled
	SuspendTimeout                 uint16
	SwitchParam                    string
	SwitchType                     string
	TaskEpilog                     string
	TaskProlog                     string
	TaskPlugin                     string
	TaskPluginParam                uint32 // TaskPluginParam (CPU_BIND_* bits)
	TCPTimeout                     uint16 // TCPTimeout in seconds
	TLSParams                      string // 25.05+
	TLSType                        string // 24.05+
	TmpFS                          string
	TopologyParam                  string
	TopologyPlugin                 string
	TreeWidth                      uint16 // TreeWidth
	UnkillableProgram              string
	UnkillableTimeout              uint16
	URLParserType                  string // 25.11+
	Version                        string // Slurm version string printed as SLURM_VERSION, e.g. "24.11.5"
	VsizeFactor                    uint16
	WaitTime                       uint16
	X11Params                      string

	// EmptyStrings names (Slurm field names) the string fields sent as a
	// non-NULL "" rather than NULL, so re-encoding reproduces the bytes.
	EmptyStrings []string
}

var errBuildInfoControllers = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "control_addr and control_machine counts differ"}

func (m *BuildInfo) Decode(r *Reader, version uint16) error {
	*m = BuildInfo{}
	m.LastUpdate = r.Time()
	m.AccountingStorageEnforce = r.U16()
	m.AccountingStorageBackupHost = m.getStr(r, "accounting_storage_backup_host")
	m.AccountingStorageHost = m.getStr(r, "accounting_storage_host")
	m.AccountingStorageExtHost = m.getStr(r, "accounting_storage_ext_host")
	m.AccountingStorageParams = m.getStr(r, "accounting_storage_params")
	m.AccountingStoragePort = r.U16()
	m.AccountingStorageTRES = m.getStr(r, "accounting_storage_tres")
	m.AccountingStorageType = m.getStr(r, "accounting_storage_type")
	if version < V25_11 {
		m.AccountingStorageUser = m.getStr(r, "accounting_storage_user")
	}
	m.AcctGatherConf = biGetKeyPairs(r)
	m.AcctGatherEnergyType = m.getStr(r, "acct_gather_energy_type")
	m.AcctGatherFilesystemType = m.getStr(r, "acct_gather_filesystem_type")
	m.AcctGatherInterconnectType = m.getStr(r, "acct_gather_interconnect_type")
	m.AcctGatherNodeFreq = r.U16()
	m.AcctGatherProfileType = m.getStr(r, "acct_gather_profile_type")
	m.AuthAltTypes = m.getStr(r, "authalttypes")
	m.AuthAltParams = m.getStr(r, "authalt_params")
	m.AuthInfo = m.getStr(r, "authinfo")
	m.AuthType = m.getStr(r, "authtype")
	m.BatchStartTimeout = r.U16()
	m.BootTime = r.Time()
	m.BurstBufferType = m.getStr(r, "bb_type")
	m.BcastExclude = m.getStr(r, "bcast_exclude")
	m.BcastParameters = m.getStr(r, "bcast_parameters")
	if version >= V25_05 {
		m.CertmgrParams = m.getStr(r, "certmgr_params")
		m.CertmgrType = m.getStr(r, "certmgr_type")
	}
	m.CgroupConf = biGetKeyPairs(r)
	if version >= V25_11 {
		m.CliFilterParams = m.getStr(r, "cli_filter_params")
	}
	m.CliFilterPlugins = m.getStr(r, "cli_filter_plugins")
	m.ClusterName = m.getStr(r, "cluster_name")
	m.CommParams = m.getStr(r, "comm_params")
	m.CompleteWait = r.U16()
	m.ConfFlags = r.U32()
	m.ControlAddr = r.StrArray()
	m.ControlMachine = r.StrArray()
	if r.Err == nil && len(m.ControlAddr) != len(m.ControlMachine) {
		// Clients refuse the whole reply on a mismatch; so do we.
		return errBuildInfoControllers
	}
	if version < V24_05 {
		m.CoreSpecPlugin = m.getStr(r, "core_spec_plugin")
	}
	m.CPUFreqDef = r.U32()
	m.CPUFreqGovs = r.U32()
	m.CredType = m.getStr(r, "cred_type")
	if version >= V24_11 {
		m.DataParserParameters = m.getStr(r, "data_parser_parameters")
	}
	m.DefMemPerCPU = r.U64()
	m.DebugFlags = r.U64()
	m.DependencyParams = m.getStr(r, "dependency_params")
	m.EIOTimeout = r.U16()
	m.EnforcePartLimits = r.U16()
	if version >= V24_05 {
		m.Epilog = r.StrArray()
	} else {
		m.Epilog = biGetScripts(r)
	}
	m.EpilogMsgTime = r.U32()
	if version >= V24_05 {
		m.EpilogSlurmctld = r.StrArray()
	} else {
		m.EpilogSlurmctld = biGetScripts(r)
	}
	if version < V24_05 {
		m.ExtSensorsConf = biGetKeyPairs(r)
		m.ExtSensorsType = m.getStr(r, "ext_sensors_type")
		m.ExtSensorsFreq = r.U16()
	}
	if version >= V25_05 {
		m.EpilogTimeout = r.U16()
	}
	m.FedParams = m.getStr(r, "fed_params")
	m.FirstJobID = r.U32()
	m.FSDampeningFactor = r.U16()
	if version < V25_05 {
		m.GetEnvTimeout = r.U16()
	}
	m.GresPlugins = m.getStr(r, "gres_plugins")
	m.GroupTime = r.U16()
	m.GroupForce = r.U16()
	m.GPUFreqDef = m.getStr(r, "gpu_freq_def")
	if version >= V24_05 {
		m.HashPlugin = m.getStr(r, "hash_plugin")
	}
	m.HashVal = r.U32()
	m.HealthCheckInterval = r.U16()
	m.HealthCheckNodeState = r.U16()
	m.HealthCheckProgram = m.getStr(r, "health_check_program")
	if version >= V26_05 {
		m.HealthCheckTimeout = r.U16()
	}
	if version >= V25_11 {
		m.HTTPParserType = m.getStr(r, "http_parser_type")
	}
	m.InactiveLimit = r.U16()
	m.InteractiveStepOpts = m.getStr(r, "interactive_step_opts")
	m.JobAcctGatherFreq = m.getStr(r, "job_acct_gather_freq")
	m.JobAcctGatherType = m.getStr(r, "job_acct_gather_type")
	m.JobAcctGatherParams = m.getStr(r, "job_acct_gather_params")
	m.JobCompHost = m.getStr(r, "job_comp_host")
	m.JobCompLoc = m.getStr(r, "job_comp_loc")
	m.JobCompParams = m.getStr(r, "job_comp_params")
	m.JobCompPort = r.U32()
	m.JobCompType = m.getStr(r, "job_comp_type")
	m.JobCompUser = m.getStr(r, "job_comp_user")
	if version < V25_11 {
		m.NamespacePlugin = m.getStr(r, "job_container_plugin")
	}
	if version < V23_11 {
		m.JobCredentialPrivateKey = m.getStr(r, "job_credential_private_key")
		m.JobCredentialPublicCertificate = m.getStr(r, "job_credential_public_certificate")
	}
	if version >= V25_11 {
		m.NamespacePlugin = m.getStr(r, "namespace_plugin")
	}
	m.JobDefaults = biGetJobDefaults(r)
	m.JobFileAppend = r.U16()
	m.JobRequeue = r.U16()
	m.JobSubmitPlugins = m.getStr(r, "job_submit_plugins")
	m.KillOnBadExit = r.U16()
	m.KillWait = r.U16()
	m.LaunchParams = m.getStr(r, "launch_params")
	if version < V23_02 {
		m.LaunchType = m.getStr(r, "launch_type")
	}
	if version >= V26_05 {
		m.LicenseParams = m.getStr(r, "license_params")
	}
	m.Licenses = m.getStr(r, "licenses")
	m.LogFmt = r.U16()
	m.MaxArraySize = r.U32()
	if version >= V23_02 {
		m.MaxBatchRequeue = r.U32()
	}
	m.MaxDBDMsgs = r.U32()
	m.MailDomain = m.getStr(r, "mail_domain")
	m.MailProg = m.getStr(r, "mail_prog")
	m.MaxJobCount = r.U32()
	m.MaxJobID = r.U32()
	m.MaxMemPerCPU = r.U64()
	m.MaxNodeCount = r.U32()
	m.MaxStepCount = r.U32()
	m.MaxTasksPerNode = r.U16()
	m.MCSPlugin = m.getStr(r, "mcs_plugin")
	m.MCSParams = m.getStr(r, "mcs_plugin_params")
	if version >= V26_05 {
		m.MetricsAuthUsers = m.getStr(r, "metrics_auth_users")
		m.MetricsParams = m.getStr(r, "metrics_params")
	}
	if version >= V25_11 {
		m.MetricsType = m.getStr(r, "metrics_type")
	}
	m.MinJobAge = r.U32()
	m.MPIConf = biGetKeyPairs(r)
	m.MPIDefault = m.getStr(r, "mpi_default")
	m.MPIParams = m.getStr(r, "mpi_params")
	m.MsgTimeout = r.U16()
	m.NextJobID = r.U32()
	m.NodeFeaturesConf = biGetPluginParams(r)
	m.NodeFeaturesPlugins = m.getStr(r, "node_features_plugins")
	if version < V25_05 {
		m.NodePrefix = m.getStr(r, "node_prefix")
	}
	m.OverTimeLimit = r.U16()
	m.PluginDir = m.getStr(r, "plugindir")
	m.PlugStack = m.getStr(r, "plugstack")
	if version < V24_05 {
		m.PowerParameters = m.getStr(r, "power_parameters")
		m.PowerPlugin = m.getStr(r, "power_plugin")
	}
	m.PreemptMode = r.U16()
	if version >= V23_02 {
		m.PreemptParams = m.getStr(r, "preempt_params")
	}
	m.PreemptType = m.getStr(r, "preempt_type")
	m.PreemptExemptTime = r.U32()
	m.PrepParams = m.getStr(r, "prep_params")
	m.PrepPlugins = m.getStr(r, "prep_plugins")
	m.PriorityDecayHl = r.U32()
	m.PriorityCalcPeriod = r.U32()
	m.PriorityFavorSmall = r.U16()
	m.PriorityFlags = r.U16()
	m.PriorityMaxAge = r.U32()
	m.PriorityParams = m.getStr(r, "priority_params")
	m.PriorityResetPeriod = r.U16()
	m.PriorityType = m.getStr(r, "priority_type")
	m.PriorityWeightAge = r.U32()
	m.PriorityWeightAssoc = r.U32()
	m.PriorityWeightFS = r.U32()
	m.PriorityWeightJS = r.U32()
	m.PriorityWeightPart = r.U32()
	m.PriorityWeightQOS = r.U32()
	m.PriorityWeightTRES = m.getStr(r, "priority_weight_tres")
	m.PrivateData = r.U16()
	m.ProctrackType = m.getStr(r, "proctrack_type")
	if version >= V24_05 {
		m.Prolog = r.StrArray()
	} else {
		m.Prolog = biGetScripts(r)
	}
	if version < V25_05 {
		m.PrologEpilogTimeout = r.U16()
	}
	if version >= V24_05 {
		m.PrologSlurmctld = r.StrArray()
	} else {
		m.PrologSlurmctld = biGetScripts(r)
	}
	if version >= V25_05 {
		m.PrologTimeout = r.U16()
	}
	m.PrologFlags = r.U16()
	m.PropagatePrioProcess = r.U16()
	m.PropagateRlimits = m.getStr(r, "propagate_rlimits")
	m.PropagateRlimitsExcept = m.getStr(r, "propagate_rlimits_except")
	m.RebootProgram = m.getStr(r, "reboot_program")
	m.ReconfigFlags = r.U16()
	m.RequeueExit = m.getStr(r, "requeue_exit")
	m.RequeueExitHold = m.getStr(r, "requeue_exit_hold")
	m.ResumeFailProgram = m.getStr(r, "resume_fail_program")
	m.ResumeProgram = m.getStr(r, "resume_program")
	m.ResumeRate = r.U16()
	m.ResumeTimeout = r.U16()
	m.ResvEpilog = m.getStr(r, "resv_epilog")
	m.ResvOverRun = r.U16()
	m.ResvProlog = m.getStr(r, "resv_prolog")
	m.ReturnToService = r.U16()
	if version < V23_11 {
		m.RoutePlugin = m.getStr(r, "route_plugin")
	}
	m.SchedParams = m.getStr(r, "sched_params")
	m.SchedLogFile = m.getStr(r, "sched_logfile")
	m.SchedLogLevel = r.U16()
	m.SchedTimeSlice = r.U16()
	m.SchedType = m.getStr(r, "schedtype")
	m.ScronParams = m.getStr(r, "scron_params")
	m.SelectType = m.getStr(r, "select_type")
	m.SelectConf = biGetKeyPairs(r)
	m.SelectTypeParam = r.U16()
	m.SlurmConf = m.getStr(r, "slurm_conf")
	m.SlurmUserID = r.U32()
	m.SlurmUserName = m.getStr(r, "slurm_user_name")
	m.SlurmdUserID = r.U32()
	m.SlurmdUserName = m.getStr(r, "slurmd_user_name")
	m.SlurmctldAddr = m.getStr(r, "slurmctld_addr")
	m.SlurmctldDebug = r.U16()
	if version >= V26_05 {
		m.SlurmctldHTTPAuthParams = m.getStr(r, "slurmctld_http_auth_params")
	}
	m.SlurmctldLogFile = m.getStr(r, "slurmctld_logfile")
	m.SlurmctldParams = m.getStr(r, "slurmctld_params")
	m.SlurmctldPidFile = m.getStr(r, "slurmctld_pidfile")
	if version < V23_02 {
		m.SlurmctldPlugstack = m.getStr(r, "slurmctld_plugstack")
		m.SlurmctldPlugstackConf = biGetPluginParams(r)
	}
	m.SlurmctldPort = r.U32()
	m.SlurmctldPortCount = r.U16()
	m.SlurmctldPrimaryOffProg = m.getStr(r, "slurmctld_primary_off_prog")
	m.SlurmctldPrimaryOnProg = m.getStr(r, "slurmctld_primary_on_prog")
	m.SlurmctldSyslogDebug = r.U16()
	m.SlurmctldTimeout = r.U16()
	m.SlurmdDebug = r.U16()
	if version >= V26_05 {
		m.SlurmdHTTPAuthParams = m.getStr(r, "slurmd_http_auth_params")
	}
	m.SlurmdLogFile = m.getStr(r, "slurmd_logfile")
	m.SlurmdParams = m.getStr(r, "slurmd_params")
	m.SlurmdPidFile = m.getStr(r, "slurmd_pidfile")
	m.SlurmdPort = r.U32()
	m.SlurmdSpoolDir = m.getStr(r, "slurmd_spooldir")
	m.SlurmdSyslogDebug = r.U16()
	m.SlurmdTimeout = r.U16()
	m.SrunEpilog = m.getStr(r, "srun_epilog")
	m.SrunPortRange[0] = r.U16()
	m.SrunPortRange[1] = r.U16()
	m.SrunProlog = m.getStr(r, "srun_prolog")
	m.StateSaveLocation = m.getStr(r, "state_save_location")
	m.SuspendExcNodes = m.getStr(r, "suspend_exc_nodes")
	m.SuspendExcParts = m.getStr(r, "suspend_exc_parts")
	if version >= V23_02 {
		m.SuspendExcStates = m.getStr(r, "suspend_exc_states")
	}
	m.SuspendProgram = m.getStr(r, "suspend_program")
	m.SuspendRate = r.U16()
	m.SuspendTime = r.U32()
	m.SuspendTimeout = r.U16()
	m.SwitchParam = m.getStr(r, "switch_param")
	m.SwitchType = m.getStr(r, "switch_type")
	m.TaskEpilog = m.getStr(r, "task_epilog")
	m.TaskProlog = m.getStr(r, "task_prolog")
	m.TaskPlugin = m.getStr(r, "task_plugin")
	m.TaskPluginParam = r.U32()
	m.TCPTimeout = r.U16()
	if version >= V25_05 {
		m.TLSParams = m.getStr(r, "tls_params")
	}
	if version >= V24_05 {
		m.TLSType = m.getStr(r, "tls_type")
	}
	m.TmpFS = m.getStr(r, "tmp_fs")
	m.TopologyParam = m.getStr(r, "topology_param")
	m.TopologyPlugin = m.getStr(r, "topology_plugin")
	m.TreeWidth = r.U16()
	m.UnkillableProgram = m.getStr(r, "unkillable_program")
	m.UnkillableTimeout = r.U16()
	if version >= V25_11 {
		m.URLParserType = m.getStr(r, "url_parser_type")
	}
	m.Version = m.getStr(r, "version")
	m.VsizeFactor = r.U16()
	m.WaitTime = r.U16()
	m.X11Params = m.getStr(r, "x11_params")
	return miscEnd(r)
}

func (m *BuildInfo) Encode(w *Writer, version uint16) {
	w.Time(m.LastUpdate)
	w.U16(m.AccountingStorageEnforce)
	m.putStr(w, m.AccountingStorageBackupHost, "accounting_storage_backup_host")
	m.putStr(w, m.AccountingStorageHost, "accounting_storage_host")
	m.putStr(w, m.AccountingStorageExtHost, "accounting_storage_ext_host")
	m.putStr(w, m.AccountingStorageParams, "accounting_storage_params")
	w.U16(m.AccountingStoragePort)
	m.putStr(w, m.AccountingStorageTRES, "accounting_storage_tres")
	m.putStr(w, m.AccountingStorageType, "accounting_storage_type")
	if version < V25_11 {
		m.putStr(w, m.AccountingStorageUser, "accounting_storage_user")
	}
	biPutAcctGatherConf(w, m.AcctGatherConf, version)
	m.putStr(w, m.AcctGatherEnergyType, "acct_gather_energy_type")
	m.putStr(w, m.AcctGatherFilesystemType, "acct_gather_filesystem_type")
	m.putStr(w, m.AcctGatherInterconnectType, "acct_gather_interconnect_type")
	w.U16(m.AcctGatherNodeFreq)
	m.putStr(w, m.AcctGatherProfileType, "acct_gather_profile_type")
	m.putStr(w, m.AuthAltTypes, "authalttypes")
	m.putStr(w, m.AuthAltParams, "authalt_params")
	m.putStr(w, m.AuthInfo, "authinfo")
	m.putStr(w, m.AuthType, "authtype")
	w.U16(m.BatchStartTimeout)
	w.Time(m.BootTime)
	m.putStr(w, m.BurstBufferType, "bb_type")
	m.putStr(w, m.BcastExclude, "bcast_exclude")
	m.putStr(w, m.BcastParameters, "bcast_parameters")
	if version >= V25_05 {
		m.putStr(w, m.CertmgrParams, "certmgr_params")
		m.putStr(w, m.CertmgrType, "certmgr_type")
	}
	biPutKeyPairs(w, m.CgroupConf)
	if version >= V25_11 {
		m.putStr(w, m.CliFilterParams, "cli_filter_params")
	}
	m.putStr(w, m.CliFilterPlugins, "cli_filter_plugins")
	m.putStr(w, m.ClusterName, "cluster_name")
	m.putStr(w, m.CommParams, "comm_params")
	w.U16(m.CompleteWait)
	w.U32(m.ConfFlags)
	biPutControllers(w, m.ControlAddr, m.ControlMachine)
	if version < V24_05 {
		m.putStr(w, m.CoreSpecPlugin, "core_spec_plugin")
	}
	w.U32(m.CPUFreqDef)
	w.U32(m.CPUFreqGovs)
	m.putStr(w, m.CredType, "cred_type")
	if version >= V24_11 {
		m.putStr(w, m.DataParserParameters, "data_parser_parameters")
	}
	w.U64(m.DefMemPerCPU)
	w.U64(m.DebugFlags)
	m.putStr(w, m.DependencyParams, "dependency_params")
	w.U16(m.EIOTimeout)
	w.U16(m.EnforcePartLimits)
	if version >= V24_05 {
		w.StrArray(m.Epilog)
	} else {
		biPutScripts(w, m.Epilog)
	}
	w.U32(m.EpilogMsgTime)
	if version >= V24_05 {
		w.StrArray(m.EpilogSlurmctld)
	} else {
		biPutScripts(w, m.EpilogSlurmctld)
	}
	if version < V24_05 {
		biPutKeyPairs(w, m.ExtSensorsConf)
		m.putStr(w, m.ExtSensorsType, "ext_sensors_type")
		w.U16(m.ExtSensorsFreq)
	}
	if version >= V25_05 {
		w.U16(m.EpilogTimeout)
	}
	m.putStr(w, m.FedParams, "fed_params")
	w.U32(m.FirstJobID)
	w.U16(m.FSDampeningFactor)
	if version < V25_05 {
		w.U16(m.GetEnvTimeout)
	}
	m.putStr(w, m.GresPlugins, "gres_plugins")
	w.U16(m.GroupTime)
	w.U16(m.GroupForce)
	m.putStr(w, m.GPUFreqDef, "gpu_freq_def")
	if version >= V24_05 {
		m.putStr(w, m.HashPlugin, "hash_plugin")
	}
	w.U32(m.HashVal)
	w.U16(m.HealthCheckInterval)
	w.U16(m.HealthCheckNodeState)
	m.putStr(w, m.HealthCheckProgram, "health_check_program")
	if version >= V26_05 {
		w.U16(m.HealthCheckTimeout)
	}
	if version >= V25_11 {
		m.putStr(w, m.HTTPParserType, "http_parser_type")
	}
	w.U16(m.InactiveLimit)
	m.putStr(w, m.InteractiveStepOpts, "interactive_step_opts")
	m.putStr(w, m.JobAcctGatherFreq, "job_acct_gather_freq")
	m.putStr(w, m.JobAcctGatherType, "job_acct_gather_type")
	m.putStr(w, m.JobAcctGatherParams, "job_acct_gather_params")
	m.putStr(w, m.JobCompHost, "job_comp_host")
	m.putStr(w, m.JobCompLoc, "job_comp_loc")
	m.putStr(w, m.JobCompParams, "job_comp_params")
	w.U32(m.JobCompPort)
	m.putStr(w, m.JobCompType, "job_comp_type")
	m.putStr(w, m.JobCompUser, "job_comp_user")
	if version < V25_11 {
		m.putStr(w, m.NamespacePlugin, "job_container_plugin")
	}
	if version < V23_11 {
		m.putStr(w, m.JobCredentialPrivateKey, "job_credential_private_key")
		m.putStr(w, m.JobCredentialPublicCertificate, "job_credential_public_certificate")
	}
	if version >= V25_11 {
		m.putStr(w, m.NamespacePlugin, "namespace_plugin")
	}
	biPutJobDefaults(w, m.JobDefaults)
	w.U16(m.JobFileAppend)
	w.U16(m.JobRequeue)
	m.putStr(w, m.JobSubmitPlugins, "job_submit_plugins")
	w.U16(m.KillOnBadExit)
	w.U16(m.KillWait)
	m.putStr(w, m.LaunchParams, "launch_params")
	if version < V23_02 {
		m.putStr(w, m.LaunchType, "launch_type")
	}
	if version >= V26_05 {
		m.putStr(w, m.LicenseParams, "license_params")
	}
	m.putStr(w, m.Licenses, "licenses")
	w.U16(m.LogFmt)
	w.U32(m.MaxArraySize)
	if version >= V23_02 {
		w.U32(m.MaxBatchRequeue)
	}
	w.U32(m.MaxDBDMsgs)
	m.putStr(w, m.MailDomain, "mail_domain")
	m.putStr(w, m.MailProg, "mail_prog")
	w.U32(m.MaxJobCount)
	w.U32(m.MaxJobID)
	w.U64(m.MaxMemPerCPU)
	w.U32(m.MaxNodeCount)
	w.U32(m.MaxStepCount)
	w.U16(m.MaxTasksPerNode)
	m.putStr(w, m.MCSPlugin, "mcs_plugin")
	m.putStr(w, m.MCSParams, "mcs_plugin_params")
	if version >= V26_05 {
		m.putStr(w, m.MetricsAuthUsers, "metrics_auth_users")
		m.putStr(w, m.MetricsParams, "metrics_params")
	}
	if version >= V25_11 {
		m.putStr(w, m.MetricsType, "metrics_type")
	}
	w.U32(m.MinJobAge)
	biPutKeyPairs(w, m.MPIConf)
	m.putStr(w, m.MPIDefault, "mpi_default")
	m.putStr(w, m.MPIParams, "mpi_params")
	w.U16(m.MsgTimeout)
	w.U32(m.NextJobID)
	biPutPluginParams(w, m.NodeFeaturesConf)
	m.putStr(w, m.NodeFeaturesPlugins, "node_features_plugins")
	if version < V25_05 {
		m.putStr(w, m.NodePrefix, "node_prefix")
	}
	w.U16(m.OverTimeLimit)
	m.putStr(w, m.PluginDir, "plugindir")
	m.putStr(w, m.PlugStack, "plugstack")
	if version < V24_05 {
		m.putStr(w, m.PowerParameters, "power_parameters")
		m.putStr(w, m.PowerPlugin, "power_plugin")
	}
	w.U16(m.PreemptMode)
	if version >= V23_02 {
		m.putStr(w, m.PreemptParams, "preempt_params")
	}
	m.putStr(w, m.PreemptType, "preempt_type")
	w.U32(m.PreemptExemptTime)
	m.putStr(w, m.PrepParams, "prep_params")
	m.putStr(w, m.PrepPlugins, "prep_plugins")
	w.U32(m.PriorityDecayHl)
	w.U32(m.PriorityCalcPeriod)
	w.U16(m.PriorityFavorSmall)
	w.U16(m.PriorityFlags)
	w.U32(m.PriorityMaxAge)
	m.putStr(w, m.PriorityParams, "priority_params")
	w.U16(m.PriorityResetPeriod)
	m.putStr(w, m.PriorityType, "priority_type")
	w.U32(m.PriorityWeightAge)
	w.U32(m.PriorityWeightAssoc)
	w.U32(m.PriorityWeightFS)
	w.U32(m.PriorityWeightJS)
	w.U32(m.PriorityWeightPart)
	w.U32(m.PriorityWeightQOS)
	m.putStr(w, m.PriorityWeightTRES, "priority_weight_tres")
	w.U16(m.PrivateData)
	m.putStr(w, m.ProctrackType, "proctrack_type")
	if version >= V24_05 {
		w.StrArray(m.Prolog)
	} else {
		biPutScripts(w, m.Prolog)
	}
	if version < V25_05 {
		w.U16(m.PrologEpilogTimeout)
	}
	if version >= V24_05 {
		w.StrArray(m.PrologSlurmctld)
	} else {
		biPutScripts(w, m.PrologSlurmctld)
	}
	if version >= V25_05 {
		w.U16(m.PrologTimeout)
	}
	w.U16(m.PrologFlags)
	w.U16(m.PropagatePrioProcess)
	m.putStr(w, m.PropagateRlimits, "propagate_rlimits")
	m.putStr(w, m.PropagateRlimitsExcept, "propagate_rlimits_except")
	m.putStr(w, m.RebootProgram, "reboot_program")
	w.U16(m.ReconfigFlags)
	m.putStr(w, m.RequeueExit, "requeue_exit")
	m.putStr(w, m.RequeueExitHold, "requeue_exit_hold")
	m.putStr(w, m.ResumeFailProgram, "resume_fail_program")
	m.putStr(w, m.ResumeProgram, "resume_program")
	w.U16(m.ResumeRate)
	w.U16(m.ResumeTimeout)
	m.putStr(w, m.ResvEpilog, "resv_epilog")
	w.U16(m.ResvOverRun)
	m.putStr(w, m.ResvProlog, "resv_prolog")
	w.U16(m.ReturnToService)
	if version < V23_11 {
		m.putStr(w, m.RoutePlugin, "route_plugin")
	}
	m.putStr(w, m.SchedParams, "sched_params")
	m.putStr(w, m.SchedLogFile, "sched_logfile")
	w.U16(m.SchedLogLevel)
	w.U16(m.SchedTimeSlice)
	m.putStr(w, m.SchedType, "schedtype")
	m.putStr(w, m.ScronParams, "scron_params")
	m.putStr(w, m.SelectType, "select_type")
	biPutKeyPairs(w, m.SelectConf)
	w.U16(m.SelectTypeParam)
	m.putStr(w, m.SlurmConf, "slurm_conf")
	w.U32(m.SlurmUserID)
	m.putStr(w, m.SlurmUserName, "slurm_user_name")
	w.U32(m.SlurmdUserID)
	m.putStr(w, m.SlurmdUserName, "slurmd_user_name")
	m.putStr(w, m.SlurmctldAddr, "slurmctld_addr")
	w.U16(m.SlurmctldDebug)
	if version >= V26_05 {
		m.putStr(w, m.SlurmctldHTTPAuthParams, "slurmctld_http_auth_params")
	}
	m.putStr(w, m.SlurmctldLogFile, "slurmctld_logfile")
	m.putStr(w, m.SlurmctldParams, "slurmctld_params")
	m.putStr(w, m.SlurmctldPidFile, "slurmctld_pidfile")
	if version < V23_02 {
		m.putStr(w, m.SlurmctldPlugstack, "slurmctld_plugstack")
		biPutPluginParams(w, m.SlurmctldPlugstackConf)
	}
	w.U32(m.SlurmctldPort)
	w.U16(m.SlurmctldPortCount)
	m.putStr(w, m.SlurmctldPrimaryOffProg, "slurmctld_primary_off_prog")
	m.putStr(w, m.SlurmctldPrimaryOnProg, "slurmctld_primary_on_prog")
	w.U16(m.SlurmctldSyslogDebug)
	w.U16(m.SlurmctldTimeout)
	w.U16(m.SlurmdDebug)
	if version >= V26_05 {
		m.putStr(w, m.SlurmdHTTPAuthParams, "slurmd_http_auth_params")
	}
	m.putStr(w, m.SlurmdLogFile, "slurmd_logfile")
	m.putStr(w, m.SlurmdParams, "slurmd_params")
	m.putStr(w, m.SlurmdPidFile, "slurmd_pidfile")
	w.U32(m.SlurmdPort)
	m.putStr(w, m.SlurmdSpoolDir, "slurmd_spooldir")
	w.U16(m.SlurmdSyslogDebug)
	w.U16(m.SlurmdTimeout)
	m.putStr(w, m.SrunEpilog, "srun_epilog")
	w.U16(m.SrunPortRange[0])
	w.U16(m.SrunPortRange[1])
	m.putStr(w, m.SrunProlog, "srun_prolog")
	m.putStr(w, m.StateSaveLocation, "state_save_location")
	m.putStr(w, m.SuspendExcNodes, "suspend_exc_nodes")
	m.putStr(w, m.SuspendExcParts, "suspend_exc_parts")
	if version >= V23_02 {
		m.putStr(w, m.SuspendExcStates, "suspend_exc_states")
	}
	m.putStr(w, m.SuspendProgram, "suspend_program")
	w.U16(m.SuspendRate)
	w.U32(m.SuspendTime)
	w.U16(m.SuspendTimeout)
	m.putStr(w, m.SwitchParam, "switch_param")
	m.putStr(w, m.SwitchType, "switch_type")
	m.putStr(w, m.TaskEpilog, "task_epilog")
	m.putStr(w, m.TaskProlog, "task_prolog")
	m.putStr(w, m.TaskPlugin, "task_plugin")
	w.U32(m.TaskPluginParam)
	w.U16(m.TCPTimeout)
	if version >= V25_05 {
		m.putStr(w, m.TLSParams, "tls_params")
	}
	if version >= V24_05 {
		m.putStr(w, m.TLSType, "tls_type")
	}
	m.putStr(w, m.TmpFS, "tmp_fs")
	m.putStr(w, m.TopologyParam, "topology_param")
	m.putStr(w, m.TopologyPlugin, "topology_plugin")
	w.U16(m.TreeWidth)
	m.putStr(w, m.UnkillableProgram, "unkillable_program")
	w.U16(m.UnkillableTimeout)
	if version >= V25_11 {
		m.putStr(w, m.URLParserType, "url_parser_type")
	}
	m.putStr(w, m.Version, "version")
	w.U16(m.VsizeFactor)
	w.U16(m.WaitTime)
	m.putStr(w, m.X11Params, "x11_params")
}

// getStr reads a string, remembering a non-NULL "" under the field's
// Slurm name so Encode can reproduce it.
func (m *BuildInfo) getStr(r *Reader, name string) string {
	s, null := r.StrNull()
	if !null && len(s) == 0 {
		m.EmptyStrings = append(m.EmptyStrings, name)
	}
	return string(s)
}

func (m *BuildInfo) putStr(w *Writer, s, name string) {
	if s == "" && slices.Contains(m.EmptyStrings, name) {
		w.StrEmpty()
		return
	}
	w.Str(s)
}

// biGetScripts reads a pre-24.05 Prolog/Epilog single string as a list:
// NULL is none, anything else (even "") one entry.
func biGetScripts(r *Reader) []string {
	s, null := r.StrNull()
	if null {
		return nil
	}
	return []string{string(s)}
}

// biPutScripts writes a script list as a pre-24.05 single string. Those
// releases accept one script per option; several are joined with ",".
func biPutScripts(w *Writer, a []string) {
	if len(a) == 0 {
		w.U32(0)
		return
	}
	w.StrNull([]byte(strings.Join(a, ",")), false)
}

func biGetKeyPairs(r *Reader) []ConfigKeyPair {
	n, null := r.Count(8) // two strings of at least a u32 each
	if null {
		return nil
	}
	out := make([]ConfigKeyPair, n)
	for i := range out {
		out[i].Name = r.String()
		out[i].Value = r.String()
	}
	return out
}

func biPutKeyPairs(w *Writer, a []ConfigKeyPair) {
	if a == nil {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(len(a)))
	for _, p := range a {
		w.Str(p.Name)
		w.Str(p.Value)
	}
}

// biPutAcctGatherConf writes acct_gather_conf. Before 24.05 slurmctld left
// the InfluxDB credentials out of the list it sent (and lowered the
// count); do the same for those clients.
func biPutAcctGatherConf(w *Writer, a []ConfigKeyPair, version uint16) {
	if version >= V24_05 || a == nil {
		biPutKeyPairs(w, a)
		return
	}
	secret := func(p ConfigKeyPair) bool {
		return strings.EqualFold(p.Name, "ProfileInfluxDBPass") || strings.EqualFold(p.Name, "ProfileInfluxDBUser")
	}
	n := 0
	for _, p := range a {
		if !secret(p) {
			n++
		}
	}
	w.U32(uint32(n))
	for _, p := range a {
		if !secret(p) {
			w.Str(p.Name)
			w.Str(p.Value)
		}
	}
}

func biGetPluginParams(r *Reader) []ConfigPluginParams {
	n, null := r.Count(8) // name + key-pair count
	if null {
		return nil
	}
	out := make([]ConfigPluginParams, n)
	for i := range out {
		if r.Err != nil {
			break
		}
		out[i].Name = r.String()
		out[i].Pairs = biGetKeyPairs(r)
	}
	return out
}

func biPutPluginParams(w *Writer, a []ConfigPluginParams) {
	if a == nil {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(len(a)))
	for _, p := range a {
		w.Str(p.Name)
		biPutKeyPairs(w, p.Pairs)
	}
}

func biGetJobDefaults(r *Reader) []ConfigJobDefault {
	n, null := r.Count(10) // u16 + u64
	if null {
		return nil
	}
	out := make([]ConfigJobDefault, n)
	for i := range out {
		out[i].Type = r.U16()
		out[i].Value = r.U64()
	}
	return out
}

func biPutJobDefaults(w *Writer, a []ConfigJobDefault) {
	if a == nil {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(len(a)))
	for _, d := range a {
		w.U16(d.Type)
		w.U64(d.Value)
	}
}

// biPutControllers writes control_addr and control_machine with one
// shared count (slurmctld packs both with control_cnt; a client rejects
// differing counts), padding the shorter list with NULLs.
func biPutControllers(w *Writer, addr, machine []string) {
	n := max(len(addr), len(machine))
	for _, a := range [2][]string{addr, machine} {
		w.U32(uint32(n))
		for i := 0; i < n; i++ {
			if i < len(a) {
				w.Str(a[i])
			} else {
				w.U32(0)
			}
		}
	}
}
