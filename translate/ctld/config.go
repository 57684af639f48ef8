package ctld

import (
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// versionString names the Slurm release a client of this protocol
// version expects its controller to run (scontrol show config prints it).
func versionString(v uint16) string {
	switch v {
	case codec.V22_05:
		return "22.05.8"
	case codec.V23_02:
		return "23.02.7"
	case codec.V23_11:
		return "23.11.10"
	case codec.V24_05:
		return "24.05.8"
	case codec.V24_11:
		return "24.11.5"
	case codec.V25_05:
		return "25.05.0"
	case codec.V25_11:
		return "25.11.0"
	}
	return "26.05.5"
}

// FrontendDefaults are the settings the frontend behaves by when its
// config does not name them; `slurm-frontend client-conf` writes the same
// values into the login nodes' slurm.conf, so `scontrol show config`
// agrees with the file the clients read.
var FrontendDefaults = map[string]string{
	"SchedulerType":        "sched/backfill",
	"SelectTypeParameters": "CR_Core_Memory",
	"ReturnToService":      "2",
	"ProctrackType":        "proctrack/linuxproc",
	"TaskPlugin":           "task/none",
	"MpiDefault":           "none",
	"JobCompType":          "jobcomp/none",
	"JobAcctGatherType":    "jobacct_gather/none",
}

// Values from slurm.h / read_config.h shared by 22.05-26.05.
const (
	confFlagOR        = 1 << 0  // SlurmdParameters=config_overrides
	confFlagSJC       = 1 << 1  // AccountingStoreFlags=job_comment
	confFlagDRJ       = 1 << 2  // DisableRootJobs
	confFlagASRU      = 1 << 3  // AllowSpecResourcesUsage
	confFlagPAM       = 1 << 4  // UsePAM
	confFlagWCKey     = 1 << 5  // TrackWCKey
	confFlagIPv4      = 1 << 6  // IPv4 enabled (default)
	confFlagIPv6      = 1 << 7  // CommunicationParameters=EnableIPv6
	confFlagSJX       = 1 << 8  // AccountingStoreFlags=job_extra
	confFlagSJS       = 1 << 9  // AccountingStoreFlags=job_script
	confFlagSJE       = 1 << 10 // AccountingStoreFlags=job_env
	confFlagL3CSock   = 1 << 11 // SlurmdParameters=l3cache_as_socket
	confFlagNNSock    = 1 << 12 // SlurmdParameters=numa_node_as_socket
	confFlagECore     = 1 << 13 // SlurmdParameters=allow_ecores
	confFlagSHR       = 1 << 14 // SlurmdParameters=shutdown_on_reboot
	confFlagSpank     = 1 << 15 // SlurmdParameters=contain_spank
	confFlagNoStdio   = 1 << 16 // AccountingStoreFlags=no_stdio
	confFlagNoHTTP    = 1 << 17 // CommunicationParameters=disable_http (26.05)
	crCPU             = 0x0001
	crSocket          = 0x0002
	crCore            = 0x0004
	crMemory          = 0x0010
	memPerCPU         = 1 << 63
	logLevelInfo      = 3
	logLevelEnd       = 10
	priorityFairTree  = 1 << 5
	cpuFreqGovDefault = 0x84000000 | 0x82000000 | 0x80800000 // OnDemand,Performance,UserSpace
	defaultMaxJobID   = 0x03ff0000
	maxTasksPerNode   = 512
)

// slurmConf reads slurm.conf settings the way one release of
// _validate_and_set_defaults (src/common/read_config.c) does.
type slurmConf struct {
	cfg *conf.Config
	v   uint16
}

func (k slurmConf) lookup(key string) (string, bool) {
	if k.cfg != nil {
		if val, ok := k.cfg.Keys[strings.ToLower(key)]; ok {
			return val, true
		}
	}
	if val, ok := FrontendDefaults[key]; ok {
		return val, true
	}
	return "", false
}

func (k slurmConf) str(key string) string {
	val, _ := k.lookup(key)
	return val
}

func (k slurmConf) strDef(key, def string) string {
	if val, ok := k.lookup(key); ok {
		return val
	}
	return def
}

// plugin reads a plugin-type setting. Before 23.11 slurmctld kept the
// configured name and filled in "<type>/none" when unset (def); from
// 23.11 on an unset plugin and any value containing "none" are NULL.
func (k slurmConf) plugin(key, def string) string {
	val, ok := k.lookup(key)
	if k.v < codec.V23_11 {
		if !ok {
			return def
		}
		return val
	}
	if !ok || containsFold(val, "none") {
		return ""
	}
	return val
}

func (k slurmConf) num(key string, def uint64, bits int) uint64 {
	val, ok := k.lookup(key)
	if !ok {
		return def
	}
	n, err := strconv.ParseUint(strings.TrimSpace(val), 10, bits)
	if err != nil {
		return def // slurmctld would refuse to start; keep the default
	}
	return n
}

func (k slurmConf) u16(key string, def uint16) uint16 { return uint16(k.num(key, uint64(def), 16)) }
func (k slurmConf) u32(key string, def uint32) uint32 { return uint32(k.num(key, uint64(def), 32)) }
func (k slurmConf) u64(key string, def uint64) uint64 { return k.num(key, def, 64) }

func (k slurmConf) truth(key string) bool {
	val, ok := k.lookup(key)
	if !ok {
		return false
	}
	switch strings.ToLower(val) {
	case "yes", "y", "true", "1", "on":
		return true
	}
	return false
}

// debugLevel is log_string2num plus _normalize_debug_level.
func (k slurmConf) debugLevel(key string, def uint16) uint16 {
	val, ok := k.lookup(key)
	if !ok {
		return def
	}
	if val != "" && val[0] >= '0' && val[0] <= '9' {
		n, _ := strconv.Atoi(val)
		return uint16(min(n, logLevelEnd))
	}
	for i, name := range []string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"} {
		if strings.EqualFold(val, name) {
			return uint16(i)
		}
	}
	return def
}

// minutes reads a time_str2mins value (min, min:sec, hr:min:sec,
// days-hr[:min[:sec]]) and returns seconds.
func (k slurmConf) minutes(key string, def uint32) uint32 {
	val, ok := k.lookup(key)
	if !ok {
		return def
	}
	secs, ok := timeSecs(val)
	if !ok {
		return def
	}
	if secs == codec.Infinite {
		return 0xFFFFFFC4 // as slurmctld: (int) INFINITE * 60, i.e. -60
	}
	return (secs + 59) / 60 * 60
}

func timeSecs(s string) (uint32, bool) {
	switch strings.ToUpper(s) {
	case "-1", "INFINITE", "UNLIMITED":
		return codec.Infinite, true
	}
	var d, h, m, sec int
	atoi := func(p string) (int, bool) {
		if p == "" {
			return 0, true
		}
		n, err := strconv.Atoi(p)
		return n, err == nil && n >= 0
	}
	parts := func(p string) ([]int, bool) {
		var out []int
		for _, f := range strings.Split(p, ":") {
			n, ok := atoi(f)
			if !ok {
				return nil, false
			}
			out = append(out, n)
		}
		return out, true
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		var ok bool
		if d, ok = atoi(s[:i]); !ok {
			return 0, false
		}
		p, ok := parts(s[i+1:])
		if !ok || len(p) > 3 {
			return 0, false
		}
		p = append(p, 0, 0, 0)
		h, m, sec = p[0], p[1], p[2]
	} else {
		p, ok := parts(s)
		if !ok {
			return 0, false
		}
		switch len(p) {
		case 1:
			m = p[0]
		case 2:
			m, sec = p[0], p[1]
		case 3:
			h, m, sec = p[0], p[1], p[2]
		default:
			return 0, false
		}
	}
	return uint32(d*86400 + h*3600 + m*60 + sec), true
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// selectTypeParam parses SelectTypeParameters as _parse_select_type_param.
func selectTypeParam(s string) (uint16, bool) {
	var p uint16
	for _, tok := range strings.Split(s, ",") {
		switch strings.ToUpper(strings.TrimSpace(tok)) {
		case "CR_SOCKET":
			p |= crSocket
		case "CR_SOCKET_MEMORY":
			p |= crSocket | crMemory
		case "CR_CORE":
			p |= crCore
		case "CR_CORE_MEMORY":
			p |= crCore | crMemory
		case "CR_MEMORY":
			p |= crMemory
		case "CR_CPU":
			p |= crCPU
		case "CR_CPU_MEMORY":
			p |= crCPU | crMemory
		case "CR_ONE_TASK_PER_CORE":
			p |= 0x0100
		case "CR_CORE_DEFAULT_DIST_BLOCK":
			p |= 0x1000
		case "CR_LLN":
			p |= 0x4000
		case "CR_PACK_NODES":
			p |= 0x0200
		case "LL_SHARED_GRES":
			p |= 0x0400
		case "MULTIPLE_SHARING_GRES_PJ":
			p |= 0x8000
		case "ENFORCE_BINDING_GRES":
			p |= 0x0040
		case "ONE_TASK_PER_SHARING_GRES":
			p |= 0x0080
		default:
			return 0, false
		}
	}
	return p, true
}

// accountingTRES is AccountingStorageTRES: the defaults plus what the
// site adds (gres/gpu brings its usage TRES from 23.11 on).
func accountingTRES(extra string, v uint16) string {
	const def = "cpu,mem,energy,node,billing,fs/disk,vmem,pages"
	if extra == "" {
		return def
	}
	if v < codec.V23_11 {
		return extra + "," + def
	}
	var out []string
	seen := map[string]bool{}
	add := func(list string) {
		for _, t := range strings.Split(list, ",") {
			if t = strings.TrimSpace(t); t != "" && !seen[strings.ToLower(t)] {
				seen[strings.ToLower(t)] = true
				out = append(out, t)
			}
		}
	}
	add(def)
	add(extra)
	if seen["gres/gpu"] {
		add("gres/gpumem,gres/gpuutil")
	}
	return strings.Join(out, ",")
}

func uidOf(name string) uint32 {
	if name == "root" {
		return 0
	}
	if u, err := user.Lookup(name); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			return uint32(n)
		}
	}
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n)
	}
	return 0
}

// buildInfo renders the controller configuration for `scontrol show
// config` of a release-v client: what that release's slurmctld reports
// for the frontend's slurm.conf (c.config()) with its own defaults, except
// where the frontend honestly differs: it is the controller (its host,
// ports, boot time, next job id), it speaks munge only, selects with
// cons_tres, orders by priority/basic, keeps no accounting database and
// runs no preemption, prologs, epilogs, health checks, job_submit or
// burst-buffer plugins, and has no pid file, log file or plugin directory.
func (c *Controller) buildInfo(s *Snapshot, v uint16) codec.BuildInfo {
	k := slurmConf{cfg: c.config(), v: v}
	old := v < codec.V23_11 // "<type>/none" names instead of NULL
	bi := codec.BuildInfo{
		LastUpdate: s.ConfUpdate,
		BootTime:   c.started.Unix(),
		Version:    versionString(v),
		// scontrol compares this with the hash of its own slurm.conf;
		// ours is a different file, so leave the comparison out.
		HashVal: codec.NoVal,
	}

	// The controller itself.
	bi.ClusterName = strings.ToLower(c.opt.ClusterName)
	bi.ControlMachine = []string{c.opt.ServerHost}
	bi.ControlAddr = []string{c.opt.ServerAddr}
	bi.SlurmctldAddr = k.str("SlurmctldAddr")
	bi.SlurmctldPort, bi.SlurmctldPortCount = uint32(c.opt.Port), 1
	// The nodes' stand-ins' port, and a 24.11 sackd's (configless.go).
	bi.SlurmdPort = k.u32("SlurmdPort", uint32(c.opt.Port)+1)
	bi.SlurmUserName, bi.SlurmUserID = c.opt.SlurmUser, c.opt.SlurmUID
	bi.SlurmdUserName = k.strDef("SlurmdUser", "root")
	bi.SlurmdUserID = uidOf(bi.SlurmdUserName)
	bi.StateSaveLocation = k.str("FrontendStateDir")
	bi.SlurmConf = k.str("FrontendConfigPath")
	bi.PluginDir = k.str("PluginDir")
	bi.SlurmctldDebug = k.debugLevel("SlurmctldDebug", logLevelInfo)
	if l := c.debugLevel.Load(); l > 0 {
		bi.SlurmctldDebug = uint16(l - 1) // scontrol setdebug's
	}
	bi.SlurmctldSyslogDebug = k.debugLevel("SlurmctldSyslogDebug", logLevelEnd)
	bi.SlurmctldParams = k.str("SlurmctldParameters")
	bi.SlurmctldTimeout = k.u16("SlurmctldTimeout", 120)
	bi.NextJobID = c.opt.Store.NextID()
	bi.FirstJobID = state.FirstJobID

	// What the frontend is, whatever the file says.
	bi.AuthType, bi.CredType = "auth/munge", "cred/munge"
	bi.SelectType = "select/cons_tres"
	bi.PriorityType = "priority/basic"
	if c.prioParams().multifactor {
		bi.PriorityType = "priority/multifactor"
	}
	bi.AccountingStorageType = k.noneOr("accounting_storage/none")
	bi.PreemptType = k.noneOr("preempt/none")
	bi.PreemptMode = 0 // OFF

	// Accounting settings as slurmctld keeps them (no database behind).
	bi.AccountingStorageHost = k.strDef("AccountingStorageHost", "localhost")
	bi.AccountingStorageBackupHost = k.str("AccountingStorageBackupHost")
	bi.AccountingStorageExtHost = k.str("AccountingStorageExternalHost")
	bi.AccountingStorageParams = k.str("AccountingStorageParameters")
	bi.AccountingStoragePort = k.u16("AccountingStoragePort", 0)
	bi.AccountingStorageTRES = accountingTRES(k.str("AccountingStorageTRES"), v)
	if v < codec.V25_11 {
		bi.AccountingStorageUser = k.strDef("AccountingStorageUser", "root")
	}
	bi.AcctGatherConf = []codec.ConfigKeyPair{} // an empty list, as slurmctld sends
	bi.AcctGatherEnergyType = k.plugin("AcctGatherEnergyType", "acct_gather_energy/none")
	bi.AcctGatherFilesystemType = k.plugin("AcctGatherFilesystemType", "acct_gather_filesystem/none")
	bi.AcctGatherInterconnectType = k.plugin("AcctGatherInterconnectType", "acct_gather_interconnect/none")
	bi.AcctGatherProfileType = k.plugin("AcctGatherProfileType", "acct_gather_profile/none")
	bi.AcctGatherNodeFreq = k.u16("AcctGatherNodeFreq", 0)
	bi.JobAcctGatherFreq = k.strDef("JobAcctGatherFrequency", "30")
	bi.JobAcctGatherType = k.plugin("JobAcctGatherType", "jobacct_gather/none")
	bi.JobAcctGatherParams = k.str("JobAcctGatherParams")
	bi.JobCompType = k.plugin("JobCompType", "jobcomp/none")
	bi.JobCompHost = k.strDef("JobCompHost", "localhost")
	bi.JobCompLoc = k.str("JobCompLoc")
	if v < codec.V23_02 && bi.JobCompLoc == "" {
		bi.JobCompLoc = "/var/log/slurm_jobcomp.log"
		if bi.JobCompType == "jobcomp/mysql" {
			bi.JobCompLoc = "slurm_jobcomp_db"
		}
	}
	bi.JobCompParams = k.str("JobCompParams")
	bi.JobCompPort = k.u32("JobCompPort", 0)
	bi.JobCompUser = k.strDef("JobCompUser", "root")

	// Flags.
	bi.ConfFlags = confFlagIPv4
	comm := k.str("CommunicationParameters")
	bi.CommParams = comm
	if containsFold(comm, "EnableIPv6") {
		bi.ConfFlags |= confFlagIPv6
	}
	if containsFold(comm, "DisableIPv4") {
		bi.ConfFlags &^= confFlagIPv4
	}
	if v >= codec.V26_05 && containsFold(comm, "disable_http") {
		bi.ConfFlags |= confFlagNoHTTP
	}
	if k.truth("AllowSpecResourcesUsage") {
		bi.ConfFlags |= confFlagASRU
	}
	if k.truth("DisableRootJobs") {
		bi.ConfFlags |= confFlagDRJ
	}
	if k.truth("TrackWCKey") {
		bi.ConfFlags |= confFlagWCKey
	}
	if k.truth("UsePAM") {
		bi.ConfFlags |= confFlagPAM
	}
	if f := k.str("AccountingStoreFlags"); f != "" {
		for sub, bit := range map[string]uint32{"job_comment": confFlagSJC, "job_env": confFlagSJE, "job_script": confFlagSJS} {
			if containsFold(f, sub) {
				bi.ConfFlags |= bit
			}
		}
		if v >= codec.V23_02 && containsFold(f, "job_extra") {
			bi.ConfFlags |= confFlagSJX
		}
		if v >= codec.V24_05 && containsFold(f, "no_stdio") {
			bi.ConfFlags |= confFlagNoStdio
		}
	}
	bi.SlurmdParams = k.str("SlurmdParameters")
	if p := bi.SlurmdParams; p != "" {
		if containsFold(p, "config_override") {
			bi.ConfFlags |= confFlagOR
		}
		if v >= codec.V24_05 {
			if containsFold(p, "l3cache_as_socket") {
				bi.ConfFlags |= confFlagL3CSock
			} else if containsFold(p, "numa_node_as_socket") {
				bi.ConfFlags |= confFlagNNSock
			}
			if containsFold(p, "allow_ecores") {
				bi.ConfFlags |= confFlagECore
			}
			if containsFold(p, "shutdown_on_reboot") {
				bi.ConfFlags |= confFlagSHR
			}
			if containsFold(p, "contain_spank") {
				bi.ConfFlags |= confFlagSpank
			}
		}
	}

	// Plain settings with slurmctld's defaults.
	bi.AuthInfo = k.str("AuthInfo")
	bi.BatchStartTimeout = k.u16("BatchStartTimeout", 10)
	bi.BcastExclude = k.strDef("BcastExclude", "/lib,/usr/lib,/lib64,/usr/lib64")
	if strings.EqualFold(bi.BcastExclude, "none") {
		bi.BcastExclude = ""
	}
	bi.BcastParameters = k.str("BcastParameters")
	bi.CliFilterPlugins = k.str("CliFilterPlugins")
	if !old && containsFold(bi.CliFilterPlugins, "none") {
		bi.CliFilterPlugins = ""
	}
	bi.CompleteWait = k.u16("CompleteWait", 0)
	bi.CPUFreqDef = codec.NoVal
	bi.CPUFreqGovs = cpuFreqGovDefault
	bi.DefMemPerCPU = memSetting(k, "DefMemPerNode", "DefMemPerCPU")
	bi.MaxMemPerCPU = memSetting(k, "MaxMemPerNode", "MaxMemPerCPU")
	bi.DependencyParams = k.str("DependencyParameters")
	bi.EIOTimeout = k.u16("EioTimeout", 60)
	switch strings.ToUpper(k.str("EnforcePartLimits")) {
	case "ALL":
		bi.EnforcePartLimits = 1
	case "ANY", "YES":
		bi.EnforcePartLimits = 2
	}
	bi.EpilogMsgTime = k.u32("EpilogMsgTime", 2000)
	bi.FedParams = k.str("FederationParameters")
	bi.FSDampeningFactor = k.u16("FairShareDampeningFactor", 1)
	bi.GresPlugins = k.str("GresTypes")
	bi.GroupForce = k.u16("GroupUpdateForce", 1)
	bi.GroupTime = k.u16("GroupUpdateTime", 600)
	bi.GPUFreqDef = k.str("GpuFreqDef")
	if v < codec.V23_02 && bi.GPUFreqDef == "" {
		bi.GPUFreqDef = "high,memory=high"
	}
	bi.HealthCheckNodeState = 0x000f // ANY (no health check runs)
	if v >= codec.V25_11 {
		bi.HealthCheckNodeState = 0x00ff
	}
	bi.InactiveLimit = k.u16("InactiveLimit", 0)
	bi.InteractiveStepOpts = k.strDef("InteractiveStepOptions", "--interactive --preserve-env --pty $SHELL")
	bi.JobDefaults = jobDefaults(k)
	bi.JobFileAppend = k.u16("JobFileAppend", 0)
	bi.JobRequeue = min(k.u16("JobRequeue", 1), 1)
	bi.KillOnBadExit = k.u16("KillOnBadExit", 0)
	bi.KillWait = k.u16("KillWait", 30)
	bi.LaunchParams = k.str("LaunchParameters")
	bi.LogFmt = logFmt(k.str("LogTimeFormat"), v)
	bi.MailDomain = k.str("MailDomain")
	bi.MailProg = k.str("MailProg")
	if bi.MailProg == "" {
		// slurmctld: /bin/mail, or /usr/bin/mail when only that exists.
		bi.MailProg = "/bin/mail"
		if _, err := os.Stat("/bin/mail"); err != nil {
			if _, err := os.Stat("/usr/bin/mail"); err == nil {
				bi.MailProg = "/usr/bin/mail"
			}
		}
	}
	bi.MaxArraySize = k.u32("MaxArraySize", 1001)
	bi.MaxDBDMsgs = k.u32("MaxDBDMsgs", 0)
	bi.MaxJobID = min(k.u32("MaxJobId", defaultMaxJobID), 0x03ffffff)
	bi.MaxJobCount = k.u32("MaxJobCount", 10000)
	if bi.MaxJobID >= bi.FirstJobID {
		bi.MaxJobCount = min(bi.MaxJobCount, bi.MaxJobID-bi.FirstJobID+1)
	}
	// slurmctld raises MaxNodeCount to the number of configured nodes.
	bi.MaxNodeCount = k.u32("MaxNodeCount", 0)
	if c.config() != nil {
		bi.MaxNodeCount = max(bi.MaxNodeCount, uint32(len(c.cluster().nodes)))
	}
	bi.MaxStepCount = k.u32("MaxStepCount", 40000)
	bi.MaxTasksPerNode = k.u16("MaxTasksPerNode", maxTasksPerNode)
	bi.MCSPlugin = k.plugin("MCSPlugin", "mcs/none")
	bi.MCSParams = k.str("MCSParameters")
	bi.MinJobAge = max(k.u32("MinJobAge", 300), 2)
	bi.MPIDefault = k.plugin("MpiDefault", "none")
	if containsFold(bi.MPIDefault, "openmpi") {
		bi.MPIDefault = k.noneOr("none")
	}
	bi.MPIParams = k.str("MpiParams")
	bi.MsgTimeout = k.u16("MessageTimeout", 10)
	bi.NodeFeaturesPlugins = k.str("NodeFeaturesPlugins")
	bi.OverTimeLimit = k.u16("OverTimeLimit", 0)
	bi.PlugStack = k.str("PlugStackConfig")
	bi.PrepParams = k.str("PrEpParameters")
	bi.PrepPlugins = k.strDef("PrEpPlugins", "prep/script")
	bi.PriorityDecayHl = k.minutes("PriorityDecayHalfLife", 604800)
	bi.PriorityCalcPeriod = k.minutes("PriorityCalcPeriod", 300)
	if k.truth("PriorityFavorSmall") {
		bi.PriorityFavorSmall = 1
	}
	bi.PriorityFlags = priorityFlags(k.str("PriorityFlags"))
	bi.PriorityMaxAge = k.minutes("PriorityMaxAge", 604800)
	bi.PriorityParams = k.str("PriorityParameters")
	bi.PriorityWeightAge = k.u32("PriorityWeightAge", 0)
	bi.PriorityWeightAssoc = k.u32("PriorityWeightAssoc", 0)
	bi.PriorityWeightFS = k.u32("PriorityWeightFairshare", 0)
	bi.PriorityWeightJS = k.u32("PriorityWeightJobSize", 0)
	bi.PriorityWeightPart = k.u32("PriorityWeightPartition", 0)
	bi.PriorityWeightQOS = k.u32("PriorityWeightQOS", 0)
	bi.PriorityWeightTRES = k.str("PriorityWeightTRES")
	bi.PrivateData = c.privateDataFor(v)
	bi.ProctrackType = k.str("ProctrackType")
	bi.PropagatePrioProcess = k.u16("PropagatePrioProcess", 0)
	if except, ok := k.lookup("PropagateResourceLimitsExcept"); ok {
		bi.PropagateRlimitsExcept = except
	} else {
		bi.PropagateRlimits = k.strDef("PropagateResourceLimits", "ALL")
	}
	bi.RebootProgram = k.str("RebootProgram")
	bi.RequeueExit = k.str("RequeueExit")
	bi.RequeueExitHold = k.str("RequeueExitHold")
	bi.ResumeFailProgram = k.str("ResumeFailProgram")
	bi.ResumeProgram = k.str("ResumeProgram")
	bi.ResumeRate = k.u16("ResumeRate", 300)
	bi.ResumeTimeout = k.u16("ResumeTimeout", 60)
	bi.ResvEpilog = k.str("ResvEpilog")
	bi.ResvOverRun = k.u16("ResvOverRun", 0)
	bi.ResvProlog = k.str("ResvProlog")
	bi.ReturnToService = k.u16("ReturnToService", 0)
	bi.SchedParams = k.str("SchedulerParameters")
	bi.SchedLogFile = k.str("SlurmSchedLogFile")
	bi.SchedLogLevel = k.u16("SlurmSchedLogLevel", 0)
	bi.SchedTimeSlice = k.u16("SchedulerTimeSlice", 30)
	if bi.SchedTimeSlice < 5 {
		bi.SchedTimeSlice = 30
	}
	bi.SchedType = k.str("SchedulerType")
	bi.ScronParams = k.str("ScronParameters")
	bi.SelectTypeParam = crCore | crMemory
	if p, ok := selectTypeParam(k.str("SelectTypeParameters")); ok {
		bi.SelectTypeParam = p
	}
	bi.SlurmdDebug = k.debugLevel("SlurmdDebug", logLevelInfo)
	bi.SlurmdSyslogDebug = k.debugLevel("SlurmdSyslogDebug", logLevelEnd)
	bi.SlurmdLogFile = k.str("SlurmdLogFile")
	bi.SlurmdPidFile = k.strDef("SlurmdPidFile", "/var/run/slurmd.pid")
	bi.SlurmdSpoolDir = k.strDef("SlurmdSpoolDir", "/var/spool/slurmd")
	bi.SlurmdTimeout = k.u16("SlurmdTimeout", 300)
	bi.SrunEpilog = k.str("SrunEpilog")
	bi.SrunProlog = k.str("SrunProlog")
	if lo, hi, ok := strings.Cut(k.str("SrunPortRange"), "-"); ok {
		a, err1 := strconv.ParseUint(lo, 10, 16)
		b, err2 := strconv.ParseUint(hi, 10, 16)
		if err1 == nil && err2 == nil && a <= b {
			bi.SrunPortRange = [2]uint16{uint16(a), uint16(b)}
		}
	}
	bi.SuspendExcNodes = k.str("SuspendExcNodes")
	bi.SuspendExcParts = k.str("SuspendExcParts")
	bi.SuspendExcStates = k.str("SuspendExcStates")
	bi.SuspendProgram = k.str("SuspendProgram")
	bi.SuspendRate = k.u16("SuspendRate", 60)
	bi.SuspendTime = codec.Infinite
	if st, ok := k.lookup("SuspendTime"); ok && !strings.EqualFold(st, "NONE") && !strings.EqualFold(st, "INFINITE") && st != "-1" {
		if n, err := strconv.ParseUint(st, 10, 32); err == nil {
			bi.SuspendTime = uint32(n)
		}
	}
	bi.SuspendTimeout = k.u16("SuspendTimeout", 30)
	bi.SwitchParam = k.str("SwitchParameters")
	bi.SwitchType = k.plugin("SwitchType", "switch/none")
	bi.TaskEpilog = k.str("TaskEpilog")
	bi.TaskProlog = k.str("TaskProlog")
	bi.TaskPlugin = k.plugin("TaskPlugin", "task/none")
	bi.TCPTimeout = k.u16("TCPTimeout", 2)
	bi.TmpFS = k.strDef("TmpFS", "/tmp")
	bi.TopologyParam = k.str("TopologyParam")
	bi.TopologyPlugin = topologyPlugin(k)
	bi.TreeWidth = k.u16("TreeWidth", 16)
	if v < codec.V23_11 {
		bi.TreeWidth = k.u16("TreeWidth", 50)
	}
	if bi.TreeWidth == 0 {
		bi.TreeWidth = 16
	}
	bi.UnkillableProgram = k.str("UnkillableStepProgram")
	bi.UnkillableTimeout = k.u16("UnkillableStepTimeout", uint16(min(max(60, 5*uint32(bi.MsgTimeout)), 0xffff)))
	bi.VsizeFactor = k.u16("VSizeFactor", 0)
	bi.WaitTime = k.u16("WaitTime", 0)
	bi.X11Params = k.str("X11Parameters")

	// Release-specific settings.
	bi.NamespacePlugin = k.plugin("JobContainerType", "job_container/none")
	if v >= codec.V25_11 {
		bi.NamespacePlugin = k.plugin("NamespaceType", "")
		if bi.NamespacePlugin == "" {
			bi.NamespacePlugin = k.plugin("JobContainerType", "")
		}
	}
	if v < codec.V23_02 {
		bi.LaunchType = k.strDef("LaunchType", "launch/slurm")
	}
	if v < codec.V23_11 {
		bi.RoutePlugin = k.strDef("RoutePlugin", "route/default")
		bi.SlurmctldPlugstack = k.str("SlurmctldPlugstack")
	}
	if v < codec.V24_05 {
		bi.CoreSpecPlugin = k.plugin("CoreSpecPlugin", "core_spec/none")
		bi.ExtSensorsType = k.plugin("ExtSensorsType", "ext_sensors/none")
		bi.ExtSensorsFreq = k.u16("ExtSensorsFreq", 0)
		bi.PowerParameters = k.str("PowerParameters")
		bi.PowerPlugin = k.plugin("PowerPlugin", "")
		if old && bi.PowerPlugin == "" {
			// DEFAULT_POWER_PLUGIN is "" (sent non-NULL) before 23.11.
			bi.EmptyStrings = append(bi.EmptyStrings, "power_plugin")
		}
	}
	if v >= codec.V23_02 {
		bi.MaxBatchRequeue = k.u32("MaxBatchRequeue", 5)
		bi.PreemptParams = k.str("PreemptParameters")
	}
	if v >= codec.V24_05 {
		bi.HashPlugin = k.strDef("HashPlugin", "hash/k12")
		bi.TLSType = k.strDef("TLSType", "tls/none")
	}
	if v >= codec.V24_11 {
		bi.DataParserParameters = k.str("DataParserParameters")
	}
	if v < codec.V25_05 {
		bi.GetEnvTimeout = k.u16("GetEnvTimeout", 2)
		bi.PrologEpilogTimeout = k.u16("PrologEpilogTimeout", codec.NoVal16)
	} else {
		pe := k.u16("PrologEpilogTimeout", codec.NoVal16)
		bi.PrologTimeout = k.u16("PrologTimeout", pe)
		bi.EpilogTimeout = k.u16("EpilogTimeout", pe)
		bi.CertmgrParams = k.str("CertmgrParameters")
		bi.CertmgrType = k.str("CertmgrType")
		bi.TLSParams = k.str("TLSParameters")
	}
	if v >= codec.V25_11 {
		bi.CliFilterParams = k.str("CliFilterParameters")
		bi.HTTPParserType = k.str("HttpParserType")
		bi.MetricsType = k.str("MetricsType")
		bi.URLParserType = k.str("UrlParserType")
	}
	if v >= codec.V26_05 {
		bi.HealthCheckTimeout = 0 // no health check runs
		bi.LicenseParams = k.str("LicenseParameters")
		bi.MetricsAuthUsers = k.str("MetricsAuthUsers")
		bi.MetricsParams = k.str("MetricsParameters")
		bi.SlurmctldHTTPAuthParams = k.str("SlurmctldHttpAuthParameters")
		bi.SlurmdHTTPAuthParams = k.str("SlurmdHttpAuthParameters")
	}
	return bi
}

// noneOr is a plugin the frontend does not have: "<type>/none" before
// 23.11, NULL from then on.
func (k slurmConf) noneOr(oldName string) string {
	if k.v < codec.V23_11 {
		return oldName
	}
	return ""
}

// topologyPlugin: topology/none (to 23.02), topology/default (23.11 to
// 24.11), topology/flat (25.05 on) when unset or "none"/"default".
func topologyPlugin(k slurmConf) string {
	val, ok := k.lookup("TopologyPlugin")
	switch {
	case k.v < codec.V23_11:
		if !ok {
			return "topology/none"
		}
		return val
	case k.v < codec.V25_05:
		if !ok || containsFold(val, "none") {
			return "topology/default"
		}
		return val
	}
	switch strings.ToLower(val) {
	case "", "none", "default", "topology/none", "topology/default":
		return "topology/flat"
	}
	return val
}

// memSetting reads DefMemPerNode/DefMemPerCPU (or the Max pair): the
// per-CPU form carries the MEM_PER_CPU flag.
func memSetting(k slurmConf, perNode, perCPU string) uint64 {
	if _, ok := k.lookup(perNode); ok {
		return k.u64(perNode, 0)
	}
	if _, ok := k.lookup(perCPU); ok {
		return k.u64(perCPU, 0) | memPerCPU
	}
	return 0
}

func jobDefaults(k slurmConf) []codec.ConfigJobDefault {
	var out []codec.ConfigJobDefault
	if _, ok := k.lookup("DefCPUPerGPU"); ok {
		out = append(out, codec.ConfigJobDefault{Type: 1, Value: k.u64("DefCPUPerGPU", 0)})
	}
	if _, ok := k.lookup("DefMemPerGPU"); ok {
		out = append(out, codec.ConfigJobDefault{Type: 2, Value: k.u64("DefMemPerGPU", 0)})
	}
	return out
}

func logFmt(s string, v uint16) uint16 {
	var f uint16
	switch {
	case s == "":
		return 0
	case containsFold(s, "iso8601_ms"):
		f = 0
	case containsFold(s, "iso8601"):
		f = 1
	case containsFold(s, "rfc5424_ms"):
		f = 2
	case containsFold(s, "rfc5424"):
		f = 3
	case v >= codec.V23_02 && containsFold(s, "rfc3339"):
		f = 7
	case containsFold(s, "clock"):
		f = 4
	case containsFold(s, "short"):
		f = 5
	case containsFold(s, "thread_id"):
		f = 6
	}
	if v >= codec.V23_11 && v < codec.V25_05 && containsFold(s, "format_stderr") {
		f |= 1 << 15
	}
	return f
}

func priorityFlags(s string) uint16 {
	f := uint16(priorityFairTree)
	if s == "" {
		return f
	}
	for sub, bit := range map[string]uint16{"ACCRUE_ALWAYS": 1 << 0, "SMALL_RELATIVE_TO_TIME": 1 << 2,
		"CALCULATE_RUNNING": 1 << 4, "INCR_ONLY": 1 << 6, "MAX_TRES": 1 << 1,
		"NO_NORMAL_ASSOC": 1 << 7, "NO_NORMAL_PART": 1 << 8, "NO_NORMAL_QOS": 1 << 9, "NO_NORMAL_TRES": 1 << 10} {
		if containsFold(s, sub) {
			f |= bit
		}
	}
	if containsFold(s, "NO_NORMAL_ALL") {
		f |= 0xf << 7
	}
	if containsFold(s, "DEPTH_OBLIVIOUS") {
		f = f&^priorityFairTree | 1<<3
	} else if containsFold(s, "NO_FAIR_TREE") {
		f &^= priorityFairTree
	}
	return f
}
