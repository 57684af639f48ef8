package jobopt

import (
	"fmt"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

// cstr is a C string: NULL (ok false) or a value, possibly "".
type cstr struct {
	s  string
	ok bool
}

func some(s string) cstr { return cstr{s, true} }

var null cstr

// Flag bits of job_desc bitflags (slurm/slurm.h), the same in every
// release here.
const (
	killInvDep           uint64 = 1 << 0
	noKillInvDep         uint64 = 1 << 1
	gresEnforceBind      uint64 = 1 << 4
	spreadJob            uint64 = 1 << 8
	useMinNodes          uint64 = 1 << 9
	jobNtasksSet         uint64 = 1 << 14
	jobCPUsSet           uint64 = 1 << 15
	gresDisableBind      uint64 = 1 << 19
	externalJob          uint64 = 1 << 24
	gresOneTaskPerShare  uint64 = 1 << 38
	gresMultTasksPerShr  uint64 = 1 << 39
	gresAllowTaskSharing uint64 = 1 << 40
	stepmgrEnabled       uint64 = 1 << 41
	spreadSegments       uint64 = 1 << 43
	consolidateSegments  uint64 = 1 << 44
	expeditedRequeue     uint64 = 1 << 45

	niceOffset     = 0x80000000
	coreSpecThread = 0x8000

	distUnknown   uint32 = 0x2000
	distArbitrary uint32 = 0x0003
	distPlane     uint32 = 0x0004
	distBase      uint32 = 0x00FFFF
	distFlags     uint32 = 0xFF0000
)

// opts is slurm_opt_t plus the client parts the job descriptor reads.
type opts struct {
	account, acctgFreq, bb, bbf, clusters, comment, constraint, cConstraint cstr
	container, containerID, containerType, context, dependency, exclude     cstr
	extra, gpus, gpuBind, gpuFreq, gpusPerNode, gpusPerSocket, gpusPerTask  cstr
	gres, hint, jobName, licenses, mailUser, mcsLabel, memBind, network     cstr
	nodefile, nodelist, partition, prefer, qos, reservation, tresBind       cstr
	tresFreq, tresPerTask, wckey, chdir, exportEnv, efname, ifname, ofname  cstr
	jobSizeStr, resources                                                   cstr

	begin, deadline                                 int64
	contiguous, hold, noKill, overcommit, reboot    bool
	coreSpec                                        int
	coresPerSocket, socketsPerNode, threadsPerCore  int
	cpuFreqMin, cpuFreqMax, cpuFreqGov              uint32
	cpusPerGPU, cpusPerTask                         int
	cpusSet, nodesSet, ntasksSet, ntasksOptSet      bool
	extraSet                                        bool
	delayBoot                                       uint32
	distribution, planeSize                         uint32
	shared                                          uint16
	gid, uid                                        uint32
	jobFlags                                        uint64
	immediate                                       int
	mailType                                        uint16
	oomKillStep                                     uint16
	pnMinMemory, memPerCPU, memPerGPU, pnMinTmpDisk uint64
	memBindType                                     uint16
	pnMinCPUs                                       int
	nice                                            int
	minNodes, maxNodes, ntasks                      int
	ntasksPerCore, ntasksPerNode, ntasksPerSocket   int
	ntasksPerTRES, ntasksPerGPU                     int
	openMode                                        uint8
	priority                                        uint32
	profile                                         uint32
	quiet, verbose                                  int
	resvPortCnt                                     int
	segmentSize                                     uint16
	warnFlags, warnSignal, warnTime                 uint16
	reqSwitch, wait4switch                          int
	timeLimit, timeMin                              int
	x11                                             uint16
	power                                           uint8
	memUpdateMargin, memUpdateDelay                 uint16
	getUserEnvTime, getUserEnvMode                  int
	getUserEnv                                      bool
	parsable                                        bool

	// sbatch_opt_t
	arrayInx, batchFeatures, exportFile, propagate, wrap cstr
	ignorePBS, testOnly, wait                            bool
	requeue                                              int
	umask                                                int
	waitAllNodes                                         uint16

	// salloc_opt_t
	bell, killCommandSignal int
	noShell                 bool

	// srun_opt_t (the allocation side)
	cpuBind     cstr
	cpuBindType uint16
	exact       bool
	cmdName     string
	exclusive   bool
	srunOther   map[string]string

	argv       []string
	submitLine string

	state map[string]*optState // by val
}

type optState struct{ set, byEnv bool }

// parser runs one client invocation.
type parser struct {
	in      Input
	client  client
	prog    string
	rel     rel
	defs    []*optDef // this client's options in this release, table order
	all     []*optDef // every option of the release (state lookups by name)
	env     map[string]string
	now     time.Time
	o       opts
	stderr  []string
	res     Result
	errExit int // error_exit (SLURM_EXIT_ERROR)

	// where the option being applied came from, for Uses
	envOrder      []string
	packjobWarned bool
	batchEnv      hetEnv

	src struct {
		source string
		line   int
		comp   int
		wrote  string
	}
	curOpt string
}

func newParser(in Input, c client, prog string) *parser {
	p := &parser{in: in, client: c, prog: prog, rel: relOf(in.Version), errExit: 1}
	for i := range optTable {
		d := &optTable[i]
		if p.rel < d.from || p.rel > d.to {
			continue
		}
		p.all = append(p.all, d)
		if d.name != "" && d.clients&c != 0 {
			p.defs = append(p.defs, d)
		}
	}
	p.env = map[string]string{}
	for _, kv := range in.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, dup := p.env[k]; !dup {
			p.env[k] = v
			p.envOrder = append(p.envOrder, k)
		}
	}
	p.batchEnv = newHetEnv()
	p.now = in.Now
	if p.now.IsZero() {
		p.now = time.Now()
	}
	p.o.state = map[string]*optState{}
	p.o.srunOther = map[string]string{}
	return p
}

func (p *parser) getenv(k string) (string, bool) {
	v, ok := p.env[k]
	return v, ok
}

// Log lines as the clients print them (log.c: "prog: error: ...").
func (p *parser) errorf(format string, a ...any) {
	p.stderr = append(p.stderr, p.prog+": error: "+fmt.Sprintf(format, a...))
}

func (p *parser) warnf(format string, a ...any) {
	line := p.prog + ": warning: " + fmt.Sprintf(format, a...)
	p.stderr = append(p.stderr, line)
	p.res.Warnings = append(p.res.Warnings, line)
}

func (p *parser) infof(format string, a ...any) {
	line := p.prog + ": " + fmt.Sprintf(format, a...)
	p.stderr = append(p.stderr, line)
	p.res.Warnings = append(p.res.Warnings, line)
}

func (p *parser) raw(line string) { p.stderr = append(p.stderr, line) }

// exit ends the run as the client's exit(code) would.
func (p *parser) exit(code int) {
	if code < 0 {
		code &= 0xff
	}
	panic(exitPanic{&ClientError{Lines: p.stderr, Exit: code, Option: p.curOpt}})
}

func (p *parser) fatalf(format string, a ...any) {
	p.stderr = append(p.stderr, p.prog+": fatal: "+fmt.Sprintf(format, a...))
	p.exit(1)
}

// errSet is a set function's "return SLURM_ERROR".
type errSet struct{}

func (errSet) Error() string { return "invalid option" }

var errOpt error = errSet{}

// resetAll is slurm_reset_all_options (first: every option, else only
// those reset before each het job component).
func (p *parser) resetAll(first bool) {
	seen := map[string]bool{}
	for _, d := range p.all {
		if !first && d.flags&eachPass == 0 {
			continue
		}
		p.reset(d)
		// The state is per table row; rows sharing a val share ours.
		if !seen[d.val] || first {
			if st := p.o.state[d.val]; st != nil {
				st.set = false
			}
		}
		seen[d.val] = true
	}
}

func (p *parser) st(val string) *optState {
	s := p.o.state[val]
	if s == nil {
		s = &optState{}
		p.o.state[val] = s
	}
	return s
}

// setByCLI / setByEnv are slurm_option_set_by_cli / _by_env.
func (p *parser) setByCLI(val string) bool {
	s := p.o.state[val]
	return s != nil && s.set && !s.byEnv
}

func (p *parser) setByEnv(val string) bool {
	s := p.o.state[val]
	return s != nil && s.byEnv
}

// isset is slurm_option_isset (by long name).
func (p *parser) isset(name string) bool {
	for _, d := range p.all {
		if d.name == name {
			s := p.o.state[d.val]
			return s != nil && s.set
		}
	}
	return false
}

// resetByName is slurm_option_reset.
func (p *parser) resetByName(name string) {
	for _, d := range p.all {
		if d.name == name {
			p.reset(d)
			if s := p.o.state[d.val]; s != nil {
				s.set = false
			}
			return
		}
	}
}

// lookup is slurm_process_option's search: the first row with val that
// belongs to this client.
func (p *parser) lookup(val string) *optDef {
	for _, d := range p.all {
		if d.val == val && d.clients&p.client != 0 {
			return d
		}
	}
	return nil
}

// process is slurm_process_option (+ _or_exit): apply val with arg.
func (p *parser) process(val string, arg *string, byEnv, early bool) {
	d := p.lookup(val)
	if d == nil {
		// Not a Slurm option: SPANK's (none are configured here).
		if early {
			return
		}
		p.exit(-1)
	}
	if !byEnv {
		if p.client == cSbatch {
			if !early && d.flags&sbEarly != 0 || early && d.flags&sbEarly == 0 {
				return
			}
		} else if p.client == cSrun {
			if !early && d.flags&srEarly != 0 || early && d.flags&srEarly == 0 {
				return
			}
		}
	}
	setarg := arg
	set := true
	if arg != nil {
		switch d.has {
		case noArg:
			// Flags given by variables: "", "yes" or a non-zero
			// number set them; anything else resets them.
			a := *arg
			v, rest, ok := strtol(a, 10)
			set = a == "" || strings.EqualFold(a, "yes") || ok && v != 0 && rest == ""
		case optArg:
			if *arg == "" {
				setarg = nil
			}
		}
	}
	p.curOpt = "--" + d.name
	if d.name == "" {
		p.curOpt = ""
	}
	if !set {
		p.reset(d)
		s := p.st(d.val)
		s.set, s.byEnv = false, false
		p.recordReset(d)
		return
	}
	if err := p.set(d, setarg); err != nil {
		p.exit(-1)
	}
	s := p.st(d.val)
	s.set, s.byEnv = true, byEnv
	p.record(d, setarg)
}

func (p *parser) record(d *optDef, arg *string) {
	if d.val == "?" {
		return
	}
	name := "--" + d.name
	if d.name == "" {
		name = "--" + strings.ReplaceAll(d.val, "_", "-")
	}
	u := Use{Name: name, Written: p.src.wrote, Source: p.src.source, Line: p.src.line, Comp: p.src.comp}
	if arg != nil {
		u.Value = *arg
	}
	if clientOnly[d.val] {
		p.res.Client = append(p.res.Client, u)
		return
	}
	p.res.Uses = append(p.res.Uses, u)
}

func (p *parser) recordReset(d *optDef) {
	// An input variable that turns a flag off: drop earlier uses of it.
	name := "--" + d.name
	out := p.res.Uses[:0]
	for _, u := range p.res.Uses {
		if u.Name != name || u.Comp != p.src.comp {
			out = append(out, u)
		}
	}
	p.res.Uses = out
}

// Options the job descriptor does not carry.
var clientOnly = map[string]bool{
	"wait": true, "W": true, "parsable": true, "test_only": true, "wrap": true, "v": true, "Q": true,
	"h": true, "usage": true, "V": true, "ignore_pbs": true, "bell": true, "no_bell": true, "no_shell": true,
	"K": true, "complete_flag": true, "propagate": true, "export_file": true, "get_user_env": true,
	"I": true, "l": true, "u": true, "T": true, "X": true, "Z": true, "E": true, "r": true,
}

func (p *parser) reset(d *optDef) {
	o := &p.o
	switch d.val {
	case "A":
		o.account = null
	case "acctg_freq":
		o.acctgFreq = null
	case "a":
		o.arrayInx = null
	case "argv":
		o.argv = nil
	case "batch":
		o.batchFeatures = null
	case "burst_buffer_file":
		o.bbf = null
	case "begin":
		o.begin = 0
	case "b":
		o.begin = 0
	case "bell", "no_bell":
		o.bell = 1 // BELL_AFTER_DELAY
	case "burst_buffer_spec":
		o.bb = null
	case "cluster_constraint":
		o.cConstraint = null
	case "D":
		if p.client == cSalloc {
			return
		}
		o.chdir = some(p.in.Cwd)
	case "cluster", "M":
		o.clusters = null
	case "comment":
		o.comment = null
	case "container":
		o.container = null
	case "container_id":
		o.containerID = null
	case "container_type":
		o.containerType = null
	case "context":
		o.context = null
	case "contiguous":
		o.contiguous = false
	case "C":
		o.constraint = null
	case "S", "thread_spec":
		o.coreSpec = int(codec.NoVal16)
	case "corespersocket":
		o.coresPerSocket = noValInt
	case "cpu_bind":
		o.cpuBind = null
		o.cpuBindType = 0
	case "cpu_freq":
		o.cpuFreqMin, o.cpuFreqMax, o.cpuFreqGov = codec.NoVal, codec.NoVal, codec.NoVal
	case "cpus_per_gpu":
		o.cpusPerGPU = 0
	case "c":
		o.cpusPerTask = 0
		o.cpusSet = false
	case "deadline":
		o.deadline = 0
	case "delay_boot":
		o.delayBoot = codec.NoVal
	case "d":
		o.dependency = null
	case "m":
		o.distribution = distUnknown
		o.planeSize = codec.NoVal
	case "e":
		o.efname = null
	case "x":
		o.exclude = null
	case "exclusive", "s":
		if p.client == cSrun {
			o.exclusive = true
		}
		o.shared = codec.NoVal16
	case "export":
		o.exportEnv = null
	case "export_file":
		o.exportFile = null
	case "extra":
		o.extra = null
	case "B":
		o.extraSet = false
		o.socketsPerNode, o.coresPerSocket, o.threadsPerCore = noValInt, noValInt, noValInt
	case "get_user_env":
		o.getUserEnvMode, o.getUserEnvTime = -1, -1
		o.getUserEnv = false
	case "gid":
		if p.rel == r22 {
			o.gid = p.in.GID
		} else {
			o.gid = codec.SlurmAuthNobody
		}
	case "gpu_bind":
		o.gpuBind, o.tresBind = null, null
	case "tres_bind":
		o.tresBind = null
	case "gpu_freq":
		o.gpuFreq, o.tresFreq = null, null
	case "G":
		o.gpus = null
	case "gpus_per_node":
		o.gpusPerNode = null
	case "gpus_per_socket":
		o.gpusPerSocket = null
	case "gpus_per_task":
		o.gpusPerTask = null
	case "tres_per_task":
		o.tresPerTask = null
	case "gres":
		o.gres = null
	case "gres_flags":
		o.jobFlags &^= gresDisableBind | gresEnforceBind | gresMultTasksPerShr | gresOneTaskPerShare
	case "hint":
		o.hint = null
	case "H":
		o.hold = false
	case "ignore_pbs":
		o.ignorePBS = false
	case "I":
		o.immediate = 0
	case "i":
		o.ifname = null
	case "J":
		o.jobName = null
	case "K":
		o.killCommandSignal = 0
	case "kill_inv_dep":
		o.jobFlags &^= killInvDep | noKillInvDep
	case "L":
		o.licenses = null
	case "mail_type":
		o.mailType = 0
	case "mail_user":
		o.mailUser = null
	case "mcs_label":
		o.mcsLabel = null
	case "oomkillstep":
		o.oomKillStep = codec.NoVal16
	case "mem":
		o.pnMinMemory = codec.NoVal64
	case "mem_bind":
		o.memBind = null
		o.memBindType = 0
	case "mem_per_cpu":
		o.memPerCPU = codec.NoVal64
	case "mem_per_gpu":
		o.memPerGPU = codec.NoVal64
	case "mem_update":
		o.memUpdateMargin, o.memUpdateDelay = 0, 0
	case "mincpus":
		o.pnMinCPUs = -1
	case "network":
		o.network = null
	case "nice":
		o.nice = noValInt
	case "k":
		o.noKill = false
	case "no_shell":
		o.noShell = false
	case "no_requeue", "requeue":
		o.requeue = noValInt
		if d.val == "requeue" && p.rel >= r26 {
			o.jobFlags &^= expeditedRequeue
		}
	case "F":
		o.nodefile = null
	case "w":
		o.nodelist = null
	case "N":
		o.minNodes, o.maxNodes, o.nodesSet = 1, 0, false
		o.jobSizeStr = null
	case "n":
		o.ntasks, o.ntasksSet, o.ntasksOptSet = 1, false, false
	case "ntaskspercore":
		o.ntasksPerCore = noValInt
	case "ntaskspernode":
		o.ntasksPerNode = noValInt
	case "ntaskspersocket":
		o.ntasksPerSocket = noValInt
	case "ntaskspertres":
		o.ntasksPerTRES = noValInt
	case "ntaskspergpu":
		o.ntasksPerGPU = noValInt
	case "open_mode":
		o.openMode = 0
	case "o":
		o.ofname = null
	case "O":
		o.overcommit = false
	case "parsable":
		o.parsable = false
	case "p":
		o.partition = null
	case "power":
		o.power = 0
	case "prefer":
		o.prefer = null
	case "priority":
		o.priority = 0
	case "profile":
		o.profile = 0
	case "propagate":
		o.propagate = null
	case "q":
		o.qos = null
	case "Q":
		o.quiet = 0
	case "reboot":
		o.reboot = false
	case "reservation":
		o.reservation = null
	case "resources":
		o.resources = null
	case "resv_ports":
		o.resvPortCnt = noValInt
	case "segment_size":
		o.segmentSize = 0
	case "signal":
		o.warnFlags, o.warnSignal, o.warnTime = 0, 0, 0
	case "socketspernode":
		o.socketsPerNode = noValInt
	case "spread_job":
		o.jobFlags &^= spreadJob
	case "stepmgr":
		o.jobFlags &^= stepmgrEnabled
	case "spread_segments":
		o.jobFlags &^= spreadSegments
	case "consolidate_segments":
		o.jobFlags &^= consolidateSegments
	case "external":
		o.jobFlags &^= externalJob
	case "switch_req":
		o.reqSwitch = -1
	case "switch_wait", "switches":
		o.reqSwitch, o.wait4switch = -1, -1
	case "test_only":
		o.testOnly = false
	case "threadspercore":
		o.threadsPerCore = noValInt
	case "t":
		o.timeLimit = noValInt
	case "time_min":
		o.timeMin = noValInt
	case "tmp":
		o.pnMinTmpDisk = codec.NoVal64
	case "uid":
		if p.rel == r22 {
			o.uid = p.in.UID
		} else {
			o.uid = codec.SlurmAuthNobody
		}
	case "umask":
		o.umask = -1
	case "use_min_nodes":
		o.jobFlags &^= useMinNodes
	case "v":
		o.verbose = 0
	case "W":
		o.wait = false
	case "wait_all_nodes":
		o.waitAllNodes = codec.NoVal16
	case "wckey":
		o.wckey = null
	case "wrap":
		o.wrap = null
	case "x11":
		o.x11 = 0
	case "exact":
		o.exact = false
	}
}

// set runs the option's set function. Set functions that end the
// client (parse_int, fatal) do so through p.exit.
func (p *parser) set(d *optDef, arg *string) error {
	o := &p.o
	a := ""
	if arg != nil {
		a = *arg
	}
	str := func(f *cstr) error { *f = some(a); return nil }
	switch d.val {
	case "?":
		p.raw(fmt.Sprintf("Try \"%s --help\" for more information", p.prog))
		return errOpt
	case "A":
		return str(&o.account)
	case "acctg_freq":
		o.acctgFreq = some(a)
		if !p.validAcctgFreq(a) {
			return errOpt
		}
	case "alloc_nodelist":
		o.srunOther["alloc_nodelist"] = a
	case "a":
		return str(&o.arrayInx)
	case "batch":
		return str(&o.batchFeatures)
	case "burst_buffer_file":
		return str(&o.bbf)
	case "complete_flag":
		p.exit(0)
	case "b":
		t, ok := p.parseTime(a)
		if !ok || t == 0 {
			p.errorf("Invalid --begin specification")
			return errOpt
		}
		o.begin = t
	case "bell":
		o.bell = 0 // BELL_ALWAYS
	case "no_bell":
		o.bell = 2 // BELL_NEVER
	case "burst_buffer_spec":
		return str(&o.bb)
	case "cluster_constraint":
		return str(&o.cConstraint)
	case "D":
		if strings.HasPrefix(a, "/") {
			o.chdir = some(a)
		} else {
			o.chdir = some(makeFullPath(p.in.Cwd, a))
		}
	case "cluster", "M":
		return str(&o.clusters)
	case "comment":
		return str(&o.comment)
	case "container":
		return str(&o.container)
	case "container_id":
		return str(&o.containerID)
	case "container_type":
		return str(&o.containerType)
	case "context":
		return str(&o.context)
	case "contiguous":
		o.contiguous = true
	case "C":
		return str(&o.constraint)
	case "S":
		o.coreSpec = p.parseInt("--core-spec", arg, false)
	case "corespersocket":
		o.coresPerSocket = p.parseInt("--cores-per-socket", arg, true)
	case "cpu_bind":
		return p.setCPUBind(a)
	case "cpu_freq":
		if !p.cpuFreq(a) {
			p.errorf("Invalid --cpu-freq argument")
			return errOpt
		}
	case "cpus_per_gpu":
		o.cpusPerGPU = p.parseInt("--cpus-per-gpu", arg, true)
	case "c":
		o.cpusPerTask = p.parseInt("--cpus-per-task", arg, true)
		o.cpusSet = true
	case "deadline":
		t, ok := p.parseTime(a)
		if !ok || t == 0 {
			p.errorf("Invalid --deadline specification")
			return errOpt
		}
		o.deadline = t
	case "delay_boot":
		v := timeStr2Secs(a)
		if v == codec.NoVal {
			p.errorf("Invalid --delay-boot specification")
			return errOpt
		}
		o.delayBoot = v
	case "d":
		return str(&o.dependency)
	case "m":
		dist, plane, ok := p.verifyDist(a)
		if !ok {
			p.errorf("Invalid --distribution specification")
			return errOpt
		}
		o.distribution = dist
		if plane != 0 {
			o.planeSize = plane
		}
	case "e", "i", "o":
		v := a
		if strings.EqualFold(v, "none") {
			v = "/dev/null"
		}
		switch d.val {
		case "e":
			o.efname = some(v)
		case "i":
			o.ifname = some(v)
		default:
			o.ofname = some(v)
		}
	case "x":
		return str(&o.exclude)
	case "exclusive":
		switch {
		case arg == nil || strings.EqualFold(a, "exclusive") || p.rel >= r26 && strings.EqualFold(a, "allocation"):
			if p.client == cSrun && !(arg != nil && strings.EqualFold(a, "allocation")) {
				o.exclusive, o.exact = true, true
			}
			o.shared = 0
		case strings.EqualFold(a, "oversubscribe"):
			o.shared = 1
		case strings.EqualFold(a, "user"):
			o.shared = 2
		case strings.EqualFold(a, "mcs"):
			o.shared = 3
		case p.rel >= r24 && strings.EqualFold(a, "topo"):
			o.shared = 4
		default:
			p.errorf("Invalid --exclusive specification")
			return errOpt
		}
	case "exact":
		o.exact = true
	case "export":
		return str(&o.exportEnv)
	case "export_file":
		return str(&o.exportFile)
	case "extra":
		return str(&o.extra)
	case "B":
		ok := p.socketCoreThread(a)
		o.extraSet = ok
		if !ok {
			p.errorf("Invalid --extra-node-info specification")
			return errOpt
		}
	case "get_user_env":
		if p.rel >= r26 {
			o.getUserEnv = true
			return nil
		}
		if arg == nil {
			o.getUserEnvTime = 0
			return nil
		}
		v, rest, _ := strtol(a, 10)
		o.getUserEnvTime = cInt(v)
		if rest == "" {
			return nil
		}
		switch rest[0] {
		case 's', 'S':
			o.getUserEnvMode = 1
		case 'l', 'L':
			o.getUserEnvMode = 2
		default:
			p.errorf("Invalid --get-user-env specification")
			return errOpt
		}
	case "gid", "uid":
		// Only root may submit for someone else; the ids are looked up
		// on the submit host, which a pure parser cannot.
		if p.in.UID != 0 {
			p.errorf("--%s only permitted by root user", d.val)
			return errOpt
		}
		look := p.in.LookupUser
		if d.val == "gid" {
			look = p.in.LookupGroup
		}
		var v uint32
		ok := false
		if look != nil {
			v, ok = look(a)
		}
		if !ok {
			p.errorf("Invalid --%s specification", d.val)
			return errOpt
		}
		if p.rel >= r26 && v == codec.SlurmAuthNobody {
			p.errorf("Rejecting --%s as nobody specification", d.val)
			return errOpt
		}
		if d.val == "gid" {
			o.gid = v
		} else {
			o.uid = v
		}
	case "gpu_bind":
		o.gpuBind = some(a)
		prefix := "gres/gpu:"
		if p.rel == r22 {
			prefix = "gpu:"
		}
		o.tresBind = some(prefix + a)
		if !tresBindValid(o.tresBind.s, p.rel) {
			if p.rel == r22 {
				p.errorf("Invalid --gpu-bind argument: %s", o.tresBind.s)
			} else {
				p.errorf("Invalid --gpu-bind argument: %s", a)
			}
			return errOpt
		}
	case "tres_bind":
		return str(&o.tresBind)
	case "gpu_freq":
		o.gpuFreq = some(a)
		o.tresFreq = some("gpu:" + a)
		if !tresFreqValid(o.tresFreq.s) {
			p.errorf("Invalid --gpu-freq argument: %s", o.tresFreq.s)
			return errOpt
		}
	case "G":
		return str(&o.gpus)
	case "gpus_per_node":
		return str(&o.gpusPerNode)
	case "gpus_per_socket":
		return str(&o.gpusPerSocket)
	case "gpus_per_task":
		return str(&o.gpusPerTask)
	case "tres_per_task":
		return str(&o.tresPerTask)
	case "gres":
		if strings.EqualFold(a, "help") || strings.EqualFold(a, "list") {
			p.exit(0)
		}
		if strings.EqualFold(a, "none") {
			o.gres = some(a)
		} else {
			o.gres = some(gresPrepend(a, p.rel))
		}
	case "gres_flags":
		return p.gresFlags(arg)
	case "h", "usage", "V":
		p.exit(0)
	case "hint":
		return str(&o.hint)
	case "H":
		o.hold = true
	case "ignore_pbs":
		o.ignorePBS = true
	case "I":
		if arg != nil {
			o.immediate = p.parseInt("immediate", arg, false)
		} else {
			o.immediate = 1 // DEFAULT_IMMEDIATE
		}
	case "J":
		return str(&o.jobName)
	case "K":
		if p.client == cSalloc {
			if arg == nil {
				o.killCommandSignal = 15
				return nil
			}
			if o.killCommandSignal = sigName2Num(a); o.killCommandSignal == 0 {
				p.errorf("Invalid --kill-command specification")
				return errOpt
			}
			return nil
		}
		if arg != nil {
			p.parseInt("--kill-on-bad-exit", arg, false)
		}
		o.srunOther["kill_on_bad_exit"] = a
	case "kill_inv_dep":
		switch {
		case strings.EqualFold(a, "yes"):
			o.jobFlags |= killInvDep
		case strings.EqualFold(a, "no"):
			o.jobFlags |= noKillInvDep
		default:
			p.errorf("Invalid --kill-on-invalid-dep specification")
			return errOpt
		}
	case "L":
		return str(&o.licenses)
	case "mail_type":
		t := parseMailType(a)
		if p.rel >= r26 {
			o.mailType = t
		} else {
			o.mailType |= t
		}
		if o.mailType == codec.Infinite16 {
			p.errorf("Invalid --mail-type specification")
			return errOpt
		}
	case "mail_user":
		return str(&o.mailUser)
	case "mcs_label":
		return str(&o.mcsLabel)
	case "oomkillstep":
		if arg == nil {
			o.oomKillStep = 1
			return nil
		}
		if v, ok := parseUint16(a); ok && v <= 1 {
			o.oomKillStep = v
			return nil
		}
		p.errorf("Invalid --oom-kill-step specification")
		return errOpt
	case "mem":
		v, ok := strToMbytes(a)
		o.pnMinMemory = v
		if !ok {
			p.errorf("Invalid --mem specification")
			return errOpt
		}
		if p.client == cSrun {
			o.memPerCPU = codec.NoVal64
		}
	case "mem_bind":
		o.memBind = null
		return p.memBind(a)
	case "mem_per_cpu", "mem_per_gpu", "tmp":
		v, ok := strToMbytes(a)
		switch d.val {
		case "mem_per_cpu":
			o.memPerCPU = v
		case "mem_per_gpu":
			o.memPerGPU = v
		default:
			o.pnMinTmpDisk = v
		}
		if !ok {
			p.errorf("Invalid --%s specification", strings.ReplaceAll(d.val, "_", "-"))
			return errOpt
		}
	case "mem_update":
		return p.memUpdate(a)
	case "mincpus":
		o.pnMinCPUs = p.parseInt("--mincpus", arg, true)
	case "network":
		return str(&o.network)
	case "nice":
		var n int64 = 100
		if arg != nil {
			n, _, _ = strtol(a, 10)
		}
		if n < 0 && -n > niceOffset-3 || n > niceOffset-3 {
			p.errorf("Invalid --nice value, out of range (+/- %d)", niceOffset-3)
			return errOpt
		}
		o.nice = int(n)
	case "k":
		switch {
		case arg == nil || strings.EqualFold(a, "set"):
			o.noKill = true
		case strings.EqualFold(a, "off") || strings.EqualFold(a, "no"):
			o.noKill = false
		default:
			p.errorf("Invalid --no-kill specification")
			return errOpt
		}
	case "no_shell":
		o.noShell = true
	case "no_requeue":
		o.requeue = 0
	case "requeue":
		if p.rel >= r26 {
			switch {
			case arg == nil || a == "":
			case strings.EqualFold(a, "expedite"):
				o.jobFlags |= expeditedRequeue
			default:
				p.errorf("Invalid --requeue specification")
				return errOpt
			}
		}
		o.requeue = 1
	case "F":
		o.nodelist = null
		o.nodefile = some(a)
	case "w":
		o.nodefile = null
		o.nodelist = some(a)
	case "N":
		mn, mx, sizes, ok := p.verifyNodeCount(a)
		o.nodesSet = ok
		if !ok {
			return errOpt
		}
		o.minNodes, o.maxNodes, o.jobSizeStr = mn, mx, sizes
	case "n":
		o.ntasks = p.parseInt("--ntasks", arg, true)
		o.ntasksSet, o.ntasksOptSet = true, true
	case "ntaskspercore":
		o.ntasksPerCore = p.parseInt("--ntasks-per-core", arg, true)
	case "ntaskspernode":
		o.ntasksPerNode = p.parseInt("--ntasks-per-node", arg, true)
	case "ntaskspersocket":
		o.ntasksPerSocket = p.parseInt("--ntasks-per-socket", arg, true)
	case "ntaskspertres":
		o.ntasksPerTRES = p.parseInt("--ntasks-per-tres", arg, true)
	case "ntaskspergpu":
		o.ntasksPerGPU = p.parseInt("--ntasks-per-gpu", arg, true)
	case "open_mode":
		switch {
		case arg != nil && (strings.HasPrefix(a, "a") || strings.HasPrefix(a, "A")):
			o.openMode = codec.OpenModeAppend
		case arg != nil && (strings.HasPrefix(a, "t") || strings.HasPrefix(a, "T")):
			o.openMode = codec.OpenModeTruncate
		default:
			p.errorf("Invalid --open-mode specification")
			return errOpt
		}
	case "O":
		o.overcommit = true
	case "overlap":
		if p.client == cSrun {
			o.exclusive = false
		}
	case "s":
		if p.client == cSrun {
			o.exclusive = false
		}
		o.shared = 1
	case "parsable":
		o.parsable = true
	case "p":
		return str(&o.partition)
	case "power":
		o.power = powerFlags(a)
	case "prefer":
		return str(&o.prefer)
	case "priority":
		if strings.EqualFold(a, "TOP") {
			o.priority = codec.NoVal - 1
			return nil
		}
		v, _, _ := strtol(a, 10)
		if v < 0 {
			p.errorf("Priority must be >= 0")
			return errOpt
		}
		if v >= int64(codec.NoVal) {
			p.errorf("Priority must be < %d", codec.NoVal)
			return errOpt
		}
		o.priority = uint32(v)
	case "profile":
		o.profile = profileFromString(a)
		if o.profile == 0 {
			p.errorf("invalid --profile=%s option", a)
			return errOpt
		}
	case "propagate":
		if arg == nil {
			o.propagate = some("ALL")
		} else {
			o.propagate = some(a)
		}
	case "q":
		return str(&o.qos)
	case "Q":
		o.quiet++
	case "reboot":
		o.reboot = true
	case "reservation":
		return str(&o.reservation)
	case "resources":
		return str(&o.resources)
	case "resv_ports":
		if arg == nil {
			o.resvPortCnt = 0
		} else {
			o.resvPortCnt = p.parseInt("--resv-port", arg, false)
		}
	case "segment_size":
		v, ok := parseUint16(a)
		if !ok {
			p.errorf("Invalid --segment specification")
			p.exit(-1)
		}
		o.segmentSize = v
	case "signal":
		if !p.signalOpts(a) {
			p.errorf("Invalid --signal specification")
			return errOpt
		}
	case "socketspernode":
		o.socketsPerNode = p.parseInt("--sockets-per-node", arg, true)
	case "spread_job":
		o.jobFlags |= spreadJob
	case "stepmgr":
		o.jobFlags |= stepmgrEnabled
	case "spread_segments":
		o.jobFlags |= spreadSegments
	case "consolidate_segments":
		o.jobFlags |= consolidateSegments
	case "external":
		o.jobFlags |= externalJob
	case "switch_req":
		o.reqSwitch = p.parseInt("--switches", arg, true)
	case "switch_wait":
		o.wait4switch = int(int32(timeStr2Secs(a)))
	case "switches":
		count, wait, found := strings.Cut(a, "@")
		if found {
			o.wait4switch = int(int32(timeStr2Secs(wait)))
		}
		o.reqSwitch = p.parseInt("--switches", &count, true)
	case "test_only":
		o.testOnly = true
	case "thread_spec":
		o.coreSpec = p.parseInt("--thread-spec", arg, true) | coreSpecThread
	case "threadspercore":
		o.threadsPerCore = p.parseInt("--threads-per-core", arg, true)
	case "t", "time_min":
		v := timeStr2Mins(a)
		if v == codec.NoVal {
			if d.val == "t" {
				p.errorf("Invalid --time specification")
			} else {
				p.errorf("Invalid --time-min specification")
			}
			return errOpt
		}
		if v == 0 {
			v = codec.Infinite
		}
		if d.val == "t" {
			o.timeLimit = int(int32(v))
		} else {
			o.timeMin = int(int32(v))
		}
	case "umask":
		v, _, _ := strtol(a, 0)
		o.umask = int(v)
		if v < 0 || v > 0o777 {
			p.errorf("Invalid -W umask= specification")
			return errOpt
		}
	case "use_min_nodes":
		o.jobFlags |= useMinNodes
	case "v":
		if arg == nil {
			o.verbose++
		} else {
			o.verbose = p.parseInt("--verbose", arg, false)
		}
	case "W":
		if p.client == cSrun {
			p.parseInt("--wait", arg, false)
			return nil
		}
		o.wait = true
	case "wait_all_nodes":
		v := p.parseInt("--wait-all-nodes", arg, false)
		if uint16(v) > 1 {
			p.errorf("Invalid --wait-all-nodes specification")
			return errOpt
		}
		o.waitAllNodes = uint16(v)
	case "wckey":
		return str(&o.wckey)
	case "wrap":
		return str(&o.wrap)
	case "x11":
		if arg != nil {
			o.x11 = x11Flags(a)
		} else {
			o.x11 = 1 // X11_FORWARD_ALL
		}
	default:
		// srun-only options that do not reach the job descriptor.
		if p.client == cSrun {
			return p.setSrunOnly(d, arg)
		}
	}
	return nil
}

// parseInt is proc_args.c parse_int: it ends the client on bad input.
func (p *parser) parseInt(name string, val *string, positive bool) int {
	s := "(null)"
	var v int64
	bad := val == nil
	if val != nil {
		s = *val
		var rest string
		v, rest, _ = strtol(s, 10)
		// strtol with no digits leaves p at the start: p[0] != '\0'
		// unless the string is empty, which C takes as 0.
		if _, _, ok := strtol(s, 10); !ok && s != "" {
			rest = s
		}
		bad = rest != "" || v < 0 || positive && v <= 0
	}
	if bad {
		p.errorf("Invalid numeric value \"%s\" for %s.", s, name)
		p.exit(1)
	}
	if v >= 2147483647 {
		p.errorf("Numeric argument (%d) too large for %s.", v, name)
		p.exit(1)
	}
	return int(v)
}

func makeFullPath(cwd, rel string) string {
	return strings.TrimSuffix(cwd, "/") + "/" + rel
}

// noValInt is NO_VAL in the clients' int fields ((int)0xfffffffe).
const noValInt = -2
