package jobopt

import (
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// validateCommon is validate_options_salloc_sbatch_srun.
func (p *parser) validateCommon() {
	o := &p.o
	if p.rel >= r26 {
		if o.gres.ok && !strings.EqualFold(o.gres.s, "NONE") && strings.Contains(o.gres.s, "gres/gpu") &&
			(p.setByCLI("gpus_per_node") || p.setByEnv("gpus_per_node")) {
			p.fatalf("--gpus-per-node and --gres=gpu are mutually exclusive.")
		}
	}
	p.validateNtasksPerGPU()
	p.validateSpecCores()
	p.validateThreadsPerCore()
	p.validateMemory()
	if p.rel >= r24 {
		if p.setByCLI("exclusive") && p.setByCLI("s") {
			p.fatalf("--exclusive and --oversubscribe options are mutually exclusive")
		}
		p.validateTRESPerTask()
		p.validateCPUsPerTRES()
	}
	if p.rel >= r24 || p.client != cSbatch {
		p.validateNodelist()
	}
	if p.rel >= r24 {
		if o.distribution&distBase == distArbitrary && o.nodesSet && !p.setByEnv("N") {
			p.errorf("--nodes is incompatible with --distribution=arbitrary")
			p.exit(1)
		}
		if o.jobFlags&gresOneTaskPerShare != 0 {
			p.fatalf("--gres-flags=one-task-per-sharing requested, but that shared gres needs to appear in --tres-per-task as well.")
		}
	}
	if p.rel >= r26 && o.segmentSize != 0 && o.nodesSet {
		n := o.minNodes
		if o.jobSizeStr.ok && o.maxNodes != 0 {
			n = o.maxNodes
		}
		if n > int(o.segmentSize) && n%int(o.segmentSize) != 0 {
			p.fatalf("--segment=%d does not fit the job size (%d): node count must be evenly divisible by segment size", o.segmentSize, n)
		}
	}
}

func (p *parser) validateNtasksPerGPU() {
	o := &p.o
	tres, gpu := p.setByCLI("ntaskspertres"), p.setByCLI("ntaskspergpu")
	tresEnv, gpuEnv := p.setByEnv("ntaskspertres"), p.setByEnv("ntaskspergpu")
	if !(tres || gpu || tresEnv || gpuEnv) {
		return
	}
	switch {
	case gpu && tres:
		if o.ntasksPerGPU != o.ntasksPerTRES {
			p.fatalf("Inconsistent values set to --ntasks-per-gpu=%d and --ntasks-per-tres=%d ", o.ntasksPerGPU, o.ntasksPerTRES)
		}
	case gpu && tresEnv:
		p.resetByName("ntasks-per-tres")
	case tres && gpuEnv:
		p.resetByName("ntasks-per-gpu")
	case gpuEnv && tresEnv:
		if o.ntasksPerGPU != o.ntasksPerTRES {
			p.fatalf("Inconsistent values set by environment variables SLURM_NTASKS_PER_GPU=%d and SLURM_NTASKS_PER_TRES=%d ", o.ntasksPerGPU, o.ntasksPerTRES)
		}
	}
	if p.rel >= r24 {
		if p.setByCLI("tres_per_task") {
			p.fatalf("--tres-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU")
		}
		if p.setByEnv("tres_per_task") && (p.rel < r26 || strings.Contains(o.tresPerTask.s, "gres/gpu")) {
			p.fatalf("SLURM_TRES_PER_TASK is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU")
		}
	}
	for _, c := range []struct{ val, cli, env string }{
		{"gpus_per_task", "--gpus-per-task", "SLURM_GPUS_PER_TASK"},
		{"gpus_per_socket", "--gpus-per-socket", "SLURM_GPUS_PER_SOCKET"},
		{"ntaskspernode", "--ntasks-per-node", "SLURM_NTASKS_PER_NODE"},
	} {
		if p.setByCLI(c.val) {
			p.fatalf("%s is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU", c.cli)
		}
		if p.setByEnv(c.val) {
			p.fatalf("%s is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU", c.env)
		}
	}
}

func (p *parser) validateSpecCores() {
	if !p.isset("thread-spec") && !p.isset("core-spec") {
		return
	}
	cli := b2i(p.setByCLI("S")) + b2i(p.setByCLI("thread_spec"))
	env := b2i(p.setByEnv("S")) + b2i(p.setByEnv("thread_spec"))
	if cli > 1 {
		p.fatalf("-S/--core-spec and --thred-spec options are mutually exclusive")
	} else if env > 1 && cli == 0 {
		p.fatalf("Both --core-spec and --thread-spec set using environment variables. Those options are mutually exclusive.")
	}
	// AllowSpecResourcesUsage is off in the clients' configuration.
	if p.o.coreSpec&coreSpecThread != 0 && p.o.coreSpec != int(codec.NoVal16) {
		p.errorf("Ignoring --thread-spec since it's not allowed by configuration (AllowSpecResourcesUsage = No)")
	} else {
		p.errorf("Ignoring -S since it's not allowed by configuration (AllowSpecResourcesUsage = No)")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *parser) validateThreadsPerCore() {
	if !p.isset("threads-per-core") {
		return
	}
	if p.client == cSrun && !p.isset("cpu-bind") {
		p.setCPUBind("threads")
	} else if p.client == cSrun && (strings.EqualFold(p.o.cpuBind.s, "verbose") || p.rel >= r24 && strings.EqualFold(p.o.cpuBind.s, "v")) {
		p.setCPUBind("threads,verbose")
	}
}

func (p *parser) validateMemory() {
	cli := b2i(p.setByCLI("mem")) + b2i(p.setByCLI("mem_per_cpu")) + b2i(p.setByCLI("mem_per_gpu"))
	switch {
	case cli > 1:
		p.fatalf("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")
	case p.setByCLI("mem"):
		p.resetByName("mem-per-cpu")
		p.resetByName("mem-per-gpu")
	case p.setByCLI("mem_per_cpu"):
		p.resetByName("mem")
		p.resetByName("mem-per-gpu")
	case p.setByCLI("mem_per_gpu"):
		p.resetByName("mem")
		p.resetByName("mem-per-cpu")
	case b2i(p.setByEnv("mem"))+b2i(p.setByEnv("mem_per_cpu"))+b2i(p.setByEnv("mem_per_gpu")) > 1:
		p.fatalf("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.")
	}
}

// validateHint is validate_hint_option: true when --hint is to be
// ignored (SLURM_ERROR).
func (p *parser) validateHint() bool {
	o := &p.o
	bindNotVerbose := o.cpuBindType&^1 != 0
	others := func(by func(string) bool) bool {
		r := by("ntaskspercore") || by("threadspercore") || by("B") || by("cpu_bind") && (p.rel == r22 || bindNotVerbose)
		if p.rel >= r26 {
			r = r || by("corespersocket") || by("socketspernode")
		}
		return r
	}
	switch {
	case p.setByCLI("hint") && others(p.setByCLI):
		p.resetByName("hint")
		return true
	case p.setByCLI("hint"):
		p.resetByName("ntasks-per-core")
		p.resetByName("threads-per-core")
		p.resetByName("extra-node-info")
		if p.rel >= r26 {
			p.resetByName("cores-per-socket")
			p.resetByName("sockets-per-node")
		}
		if p.rel == r22 || bindNotVerbose {
			verbose := o.cpuBindType&1 != 0
			p.resetByName("cpu-bind")
			if verbose && p.client == cSrun && p.rel >= r24 {
				o.cpuBindType = 1
				o.cpuBind = some("verbose")
			}
		}
	case others(p.setByCLI):
		p.resetByName("hint")
		return true
	case p.setByEnv("hint") && others(p.setByEnv):
		p.resetByName("hint")
		return true
	}
	return false
}

// verifyHint is verify_hint (nil bind type: sbatch/salloc, which set
// SLURM_HINT in their environment).
func (p *parser) verifyHint(arg string) bool {
	o := &p.o
	b := []byte(arg)
	for i := range b {
		if b[i] == ',' && !(i+1 < len(b) && isDigit(b[i+1])) {
			b[i] = ';'
		}
	}
	for _, tok := range strings.Split(string(b), ";") {
		switch strings.ToLower(tok) {
		case "help":
			return false
		case "compute_bound":
			o.socketsPerNode, o.coresPerSocket, o.threadsPerCore = noValInt, noValInt, 1
			if p.client == cSrun {
				o.cpuBindType |= 0x4
			}
		case "memory_bound":
			o.coresPerSocket, o.threadsPerCore = 1, 1
			if p.client == cSrun {
				o.cpuBindType |= 0x4
			}
		case "multithread":
			o.threadsPerCore = noValInt
			if p.client == cSrun {
				o.cpuBindType |= 0x2
				o.cpuBindType &^= 0x0020
			}
			o.ntasksPerCore = int(codec.Infinite16)
		case "nomultithread":
			o.threadsPerCore = 1
			if p.client == cSrun {
				o.cpuBindType |= 0x2 | 0x0020
			}
		default:
			p.errorf("unrecognized --hint argument \"%s\", see --hint=help", tok)
			return false
		}
	}
	if p.client != cSrun {
		p.setEnv("SLURM_HINT", arg)
	}
	return true
}

// validateNodelist is _validate_nodelist (24.11+ common; 22.05 sbatch
// does the same in _opt_verify). Node files cannot be read here: a
// --nodefile is refused as unreadable.
func (p *parser) validateNodelist() {
	o := &p.o
	if o.nodefile.ok {
		p.note("--nodefile " + o.nodefile.s + ": the node list is read from that file by the client")
		o.nodefile = null
		return
	}
	if !o.nodelist.ok {
		if hf, ok := p.getenv("SLURM_HOSTFILE"); ok {
			p.note("SLURM_HOSTFILE=" + hf + ": the node list and an arbitrary distribution come from that file")
		}
		return
	}
	if strings.Contains(o.nodelist.s, "/") {
		p.note("--nodelist " + o.nodelist.s + ": a file name, read by the client")
		o.nodelist = null
	}
}

// note records something the client would do that jobopt cannot.
func (p *parser) note(s string) {
	for _, n := range p.res.Unmodelled {
		if n == s {
			return
		}
	}
	p.res.Unmodelled = append(p.res.Unmodelled, s)
}

// sbatchVerify is sbatch's _opt_verify.
func (p *parser) sbatchVerify() {
	o := &p.o
	verified := true
	p.validateCommon()
	if p.rel == r22 {
		p.validateNodelist22()
	}
	if o.quiet > 0 && o.verbose > 0 {
		p.errorf("don't specify both --verbose (-v) and --quiet (-Q)")
		verified = false
	}
	if p.rel >= r24 && o.resvPortCnt != noValInt && o.jobFlags&stepmgrEnabled == 0 {
		p.errorf("Slurmstepd step management must be enabled to use --resv-ports for job allocations")
		verified = false
	}
	if o.bb.ok && o.bbf.ok {
		p.errorf("Cannot specify both --burst-buffer and --bbf")
		p.exit(p.errExit)
	}
	if o.bbf.ok {
		p.note("--bbf " + o.bbf.s + ": sbatch adds that file's burst buffer directives to the script")
	}
	if o.exportFile.ok {
		p.note("--export-file " + o.exportFile.s + ": the job's environment is read from that file")
	}
	if o.container.ok {
		p.setEnvIfUnset("SLURM_CONTAINER", o.container.s)
	}
	if p.rel >= r24 && o.containerID.ok {
		p.setEnvIfUnset("SLURM_CONTAINER_ID", o.containerID.s)
	}
	if p.rel >= r26 && o.containerType.ok {
		p.setEnvIfUnset("SLURM_CONTAINER_TYPE", o.containerType.s)
	}
	if o.hint.ok && !p.validateHint() {
		if !p.verifyHint(o.hint.s) {
			p.exit(p.errExit)
		}
	}
	if !o.ifname.ok {
		o.ifname = some("/dev/null")
	}
	for _, f := range []*cstr{&o.efname, &o.ifname, &o.ofname} {
		if f.ok && !strings.HasPrefix(f.s, "/") {
			*f = some(o.chdir.s + "/" + f.s)
		}
	}
	if o.exclude.ok && strings.Contains(o.exclude.s, "/") {
		p.note("--exclude " + o.exclude.s + ": a file name, read by the client")
	}
	var hlCnt int
	if p.rel >= r24 {
		if o.nodelist.ok && !o.nodesSet && !strings.Contains(o.nodelist.s, "{") {
			hl, ok := hostlistCreate(o.nodelist.s)
			if !ok {
				p.fatalf("Invalid node list specified")
			}
			hlCnt = len(uniq(hl))
			o.minNodes = hlCnt
			o.nodesSet = true
		}
	}
	if o.cpusSet && o.pnMinCPUs < o.cpusPerTask {
		o.pnMinCPUs = o.cpusPerTask
	}
	if !o.jobName.ok && o.wrap.ok {
		o.jobName = some("wrap")
	} else if !o.jobName.ok && len(o.argv) > 0 {
		o.jobName = some(baseName(o.argv[0]))
	} else if p.rel >= r26 && !o.jobName.ok && o.jobFlags&externalJob != 0 {
		o.jobName = some("external")
	}
	if p.rel == r22 && o.jobName.ok {
		p.setEnv("SLURM_JOB_NAME", o.jobName.s)
	}
	if o.ntasks < 0 {
		p.errorf("invalid number of tasks (-n %d)", o.ntasks)
		verified = false
	}
	if o.cpusSet && o.cpusPerTask <= 0 {
		p.errorf("invalid number of cpus per task (-c %d)", o.cpusPerTask)
		verified = false
	}
	if o.minNodes < 0 || o.maxNodes < 0 || o.maxNodes != 0 && o.minNodes > o.maxNodes {
		p.errorf("invalid number of nodes (-N %d-%d)", o.minNodes, o.maxNodes)
		verified = false
	}
	if o.distribution&distBase == distPlane && o.planeSize != 0 && o.planeSize != codec.NoVal {
		ps := int(o.planeSize)
		if o.minNodes <= 0 || o.ntasks/ps < o.minNodes {
			if (o.minNodes-1)*ps >= o.ntasks {
				p.errorf("Too few processes for the requested {plane,node} distribution")
				p.exit(p.errExit)
			}
		}
	}
	if o.cpusSet {
		p.batchEnv.cpusPerTask = o.cpusPerTask
	}
	p.batchEnv.dist = distString(o.distribution)
	if o.distribution&distBase == distPlane {
		p.batchEnv.planeSize = int(int32(o.planeSize))
	}
	perNodeOK := p.rel == r22 || o.ntasksPerNode == noValInt
	if (o.nodesSet || o.extraSet) && (o.minNodes == o.maxNodes || o.maxNodes == 0) && perNodeOK && !o.ntasksSet {
		o.ntasks = max(o.minNodes, 1)
		if o.socketsPerNode != noValInt {
			o.ntasks *= o.socketsPerNode
			o.ntasksSet = true
		}
		if o.coresPerSocket != noValInt {
			o.ntasks *= o.coresPerSocket
			o.ntasksSet = true
		}
		if o.threadsPerCore != noValInt {
			o.ntasks *= o.threadsPerCore
			o.ntasksSet = true
		}
	} else if o.nodesSet && o.ntasksSet {
		if o.ntasks < o.maxNodes {
			o.maxNodes = o.ntasks
		}
		if o.ntasks < o.minNodes {
			p.warnf("can't run %d processes on %d nodes, setting nnodes to %d", o.ntasks, o.minNodes, o.ntasks)
			if p.rel == r22 {
				// 22.05 printed this through info() and trimmed the
				// node list to the task count.
				p.stderr = p.stderr[:len(p.stderr)-1]
				p.res.Warnings = p.res.Warnings[:len(p.res.Warnings)-1]
				p.infof("Warning: can't run %d processes on %d nodes, setting nnodes to %d", o.ntasks, o.minNodes, o.ntasks)
			}
			o.minNodes, o.maxNodes = o.ntasks, o.ntasks
			if p.rel == r22 && o.nodelist.ok {
				hl, _ := hostlistCreate(o.nodelist.s)
				hl = uniq(hl)
				if len(hl) > o.minNodes {
					hl = hl[:o.minNodes]
					o.nodelist = some(hostlistRanged(hl))
				}
			}
		}
	}
	if o.distribution&distBase == distArbitrary && (!o.nodesSet || !o.ntasksSet) && (p.rel == r22 || !strings.Contains(o.nodelist.s, "{")) {
		hl, ok := hostlistCreate(o.nodelist.s)
		if !ok || !o.nodelist.ok {
			p.fatalf("Invalid node list specified")
		}
		if !o.ntasksSet {
			o.ntasksSet = true
			o.ntasks = len(hl)
		}
		if !o.nodesSet {
			o.nodesSet = true
			n := len(uniq(hl))
			o.minNodes, o.maxNodes = n, n
		}
	}
	if o.ntasksPerCore != noValInt && p.rel >= r24 && o.threadsPerCore != noValInt && o.threadsPerCore < o.ntasksPerCore {
		p.errorf("--ntasks-per-core (%d) can not be bigger than --threads-per-core (%d)", o.ntasksPerCore, o.threadsPerCore)
		verified = false
	}
	if o.ntasksSet && o.ntasks > 0 {
		p.batchEnv.ntasks = o.ntasks
	}
	if o.ntasksPerCore != noValInt {
		p.batchEnv.ntasksPerCore = o.ntasksPerCore
	}
	if o.ntasksPerTRES != noValInt {
		p.batchEnv.ntasksPerTRES = o.ntasksPerTRES
	} else if o.ntasksPerGPU != noValInt {
		p.batchEnv.ntasksPerGPU = o.ntasksPerGPU
	}
	if o.ntasksPerNode != noValInt {
		p.batchEnv.ntasksPerNode = o.ntasksPerNode
	}
	if o.ntasksPerSocket != noValInt {
		p.batchEnv.ntasksPerSocket = o.ntasksPerSocket
	}
	if o.threadsPerCore != noValInt {
		p.batchEnv.threadsPer = o.threadsPerCore
	}
	if o.deadline != 0 && o.begin != 0 && o.deadline < o.begin {
		p.errorf("Incompatible begin and deadline time specification")
		p.exit(p.errExit)
	}
	if o.dependency.ok {
		p.setEnv("SLURM_JOB_DEPENDENCY", o.dependency.s)
	}
	if o.exportEnv.ok && !strings.EqualFold(o.exportEnv.s, "ALL") {
		p.setEnvIfUnset("SLURM_EXPORT_ENV", o.exportEnv.s)
	}
	if p.rel == r22 {
		if o.openMode != 0 {
			if o.openMode == codec.OpenModeAppend {
				p.setEnv("SLURM_OPEN_MODE", "a")
			} else {
				p.setEnv("SLURM_OPEN_MODE", "t")
			}
		}
		if o.profile != 0 {
			p.setEnv("SLURM_PROFILE", profileString(o.profile))
		}
		if o.acctgFreq.ok {
			p.setEnv("SLURM_ACCTG_FREQ", o.acctgFreq.s)
		}
	}
	if o.memBindType != 0 {
		if _, set := p.getenv("SBATCH_MEM_BIND"); !set {
			t := memBindTypeString(o.memBindType)
			if o.memBind.ok {
				t += ":" + o.memBind.s
			}
			p.batchEnv.memBind = t
		}
		if _, set := p.getenv("SLURM_MEM_BIND_SORT"); !set && p.rel < r26 && o.memBindType&0x40 != 0 {
			p.batchEnv.memBindSort = "sort"
		}
		if _, set := p.getenv("SLURM_MEM_BIND_VERBOSE"); !set {
			p.batchEnv.memBindVerbose = "quiet"
			if o.memBindType&1 != 0 {
				p.batchEnv.memBindVerbose = "verbose"
			}
		}
	}
	if p.rel == r22 {
		if v := cpuFreqCmdline(o.cpuFreqMin, o.cpuFreqMax, o.cpuFreqGov); v != "" {
			p.setEnv("SLURM_CPU_FREQ_REQ", v)
		}
	}
	if !verified {
		p.exit(p.errExit)
	}
}

// distString is set_distribution.
func distString(d uint32) string {
	if int32(d) <= 0 || d == distUnknown {
		return ""
	}
	var s string
	if d&distBase != distUnknown {
		s = distNames[d&distBase]
		if s == "" {
			s = "unknown"
		}
	}
	switch d & distFlags {
	case 0x800000:
		s = joinComma(s, "pack")
	case 0x400000:
		s = joinComma(s, "nopack")
	}
	return s
}

func joinComma(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

var distNames = func() map[uint32]string {
	m := map[uint32]string{1: "cyclic", 2: "block", 3: "arbitrary", 4: "plane"}
	lv := []string{"", "cyclic", "block", "fcyclic"}
	for n := 1; n <= 2; n++ {
		for s := 1; s <= 3; s++ {
			m[uint32(n|s<<4)] = lv[n] + ":" + lv[s]
			for c := 1; c <= 3; c++ {
				m[uint32(n|s<<4|c<<8)] = lv[n] + ":" + lv[s] + ":" + lv[c]
			}
		}
	}
	return m
}()

// memBindTypeString is slurm_xstr_mem_bind_type.
func memBindTypeString(t uint16) string {
	var parts []string
	if t&0x01 != 0 {
		parts = append(parts, "verbose")
	}
	if t&0x80 != 0 {
		parts = append(parts, "prefer")
	}
	if t&0x40 != 0 {
		parts = append(parts, "sort")
	}
	for _, x := range []struct {
		bit  uint16
		name string
	}{{0x02, "none"}, {0x04, "rank"}, {0x08, "map_mem"}, {0x10, "mask_mem"}, {0x20, "local"}} {
		if t&x.bit != 0 {
			parts = append(parts, x.name)
		}
	}
	return strings.Join(parts, ",")
}

// validateNodelist22 is 22.05 sbatch's node list handling in _opt_verify.
func (p *parser) validateNodelist22() {
	o := &p.o
	if o.exclude.ok && strings.Contains(o.exclude.s, "/") {
		p.note("--exclude " + o.exclude.s + ": a file name, read by the client")
	}
	p.validateNodelist()
	if o.nodelist.ok {
		hl, ok := hostlistCreate(o.nodelist.s)
		if !ok {
			p.errorf("memory allocation failure")
			p.exit(p.errExit)
		}
		n := len(uniq(hl))
		if o.nodesSet {
			o.minNodes = max(n, o.minNodes)
		} else {
			o.minNodes = n
		}
		o.nodesSet = true
	}
	if o.ntasksPerNode > 0 && !o.ntasksSet && (o.maxNodes == 0 || o.minNodes == o.maxNodes) {
		o.ntasks = o.minNodes * o.ntasksPerNode
		o.ntasksSet = true
	}
}

func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func profileString(v uint32) string {
	if v == 0xffffffff {
		return "All"
	}
	if v == 1 {
		return "None"
	}
	var parts []string
	for _, x := range []struct {
		bit  uint32
		name string
	}{{2, "Energy"}, {8, "Lustre"}, {16, "Network"}, {4, "Task"}} {
		if v&x.bit != 0 {
			parts = append(parts, x.name)
		}
	}
	return strings.Join(parts, ",")
}
