package jobopt

import (
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// salloc and srun: the allocation request (REQUEST_RESOURCE_ALLOCATION,
// or REQUEST_HET_JOB_ALLOCATION for several components). Fields only the
// running client knows are left unset: alloc_sid, alloc_resp_port,
// other_port, and x11 display details.

type envVar struct {
	name string
	val  string
	from rel
}

// Input variables of salloc (src/salloc/opt.c env_vars[]).
var sallocEnv = []envVar{
	{"SALLOC_ACCOUNT", "A", r22},
	{"SALLOC_ACCTG_FREQ", "acctg_freq", r22},
	{"SALLOC_BELL", "bell", r22},
	{"SALLOC_BURST_BUFFER", "burst_buffer_spec", r22},
	{"SALLOC_CLUSTER_CONSTRAINT", "cluster_constraint", r22},
	{"SALLOC_CLUSTERS", "M", r22},
	{"SLURM_CLUSTERS", "M", r22},
	{"SALLOC_CONSOLIDATE_SEGMENTS", "consolidate_segments", r26},
	{"SALLOC_CONTAINER", "container", r22},
	{"SALLOC_CONTAINER_ID", "container_id", r24},
	{"SALLOC_CONTAINER_TYPE", "container_type", r26},
	{"SALLOC_CONSTRAINT", "C", r22},
	{"SALLOC_CORE_SPEC", "S", r22},
	{"SALLOC_CPU_FREQ_REQ", "cpu_freq", r22},
	{"SALLOC_CPUS_PER_GPU", "cpus_per_gpu", r22},
	{"SALLOC_DEBUG", "v", r22},
	{"SALLOC_DELAY_BOOT", "delay_boot", r22},
	{"SALLOC_EXCLUSIVE", "exclusive", r22},
	{"SALLOC_GPUS", "G", r22},
	{"SALLOC_GPU_BIND", "gpu_bind", r22},
	{"SALLOC_GPU_FREQ", "gpu_freq", r22},
	{"SALLOC_GPUS_PER_NODE", "gpus_per_node", r22},
	{"SALLOC_GPUS_PER_SOCKET", "gpus_per_socket", r22},
	{"SALLOC_GPUS_PER_TASK", "gpus_per_task", r22},
	{"SALLOC_GRES", "gres", r22},
	{"SALLOC_GRES_FLAGS", "gres_flags", r22},
	{"SALLOC_IMMEDIATE", "I", r22},
	{"SALLOC_HINT", "hint", r22},
	{"SLURM_HINT", "hint", r22},
	{"SALLOC_KILL_CMD", "K", r22},
	{"SALLOC_MEM_BIND", "mem_bind", r22},
	{"SALLOC_MEM_PER_CPU", "mem_per_cpu", r22},
	{"SALLOC_MEM_PER_GPU", "mem_per_gpu", r22},
	{"SALLOC_MEM_PER_NODE", "mem", r22},
	{"SALLOC_NETWORK", "network", r22},
	{"SALLOC_NO_BELL", "no_bell", r22},
	{"SALLOC_NO_KILL", "k", r22},
	{"SALLOC_OVERCOMMIT", "O", r22},
	{"SALLOC_PARTITION", "p", r22},
	{"SALLOC_POWER", "power", r22},
	{"SALLOC_PROFILE", "profile", r22},
	{"SALLOC_QOS", "q", r22},
	{"SALLOC_REQ_SWITCH", "switch_req", r22},
	{"SALLOC_RESERVATION", "reservation", r22},
	{"SALLOC_SEGMENT_SIZE", "segment_size", r26},
	{"SALLOC_SIGNAL", "signal", r22},
	{"SALLOC_SPREAD_JOB", "spread_job", r22},
	{"SALLOC_SPREAD_SEGMENTS", "spread_segments", r26},
	{"SALLOC_THREAD_SPEC", "thread_spec", r22},
	{"SALLOC_THREADS_PER_CORE", "threadspercore", r22},
	{"SALLOC_TIMELIMIT", "t", r22},
	{"SALLOC_TRES_BIND", "tres_bind", r24},
	{"SALLOC_TRES_PER_TASK", "tres_per_task", r24},
	{"SALLOC_USE_MIN_NODES", "use_min_nodes", r22},
	{"SALLOC_WAIT_ALL_NODES", "wait_all_nodes", r22},
	{"SALLOC_WAIT4SWITCH", "switch_wait", r22},
	{"SALLOC_WCKEY", "wckey", r22},
}

func (p *parser) applyEnv(table []envVar) {
	for _, e := range table {
		if p.rel < e.from {
			continue
		}
		v, ok := p.getenv(e.name)
		if !ok {
			continue
		}
		p.src.source, p.src.wrote, p.src.line = e.name, e.name, 0
		p.process(e.val, &v, true, false)
	}
}

func (p *parser) exitErrorEnv() {
	if v, ok := p.getenv("SLURM_EXIT_ERROR"); ok {
		if i := atoi(v); i == 0 {
			p.errorf("SLURM_EXIT_ERROR has zero value")
		} else {
			p.errExit = i
		}
	}
}

func (p *parser) salloc() *Result {
	o := &p.o
	p.exitErrorEnv()
	argv := append([]string{"salloc"}, p.in.Args...)
	hetArgs := argv
	var descs []codec.JobDesc
	for comp := 0; ; comp++ {
		p.src.comp = comp
		p.resetAll(comp == 0)
		p.applyEnv(sallocEnv)
		optind := p.applyArgs(hetArgs, false, false, "command line", nil)
		sep := optind < len(hetArgs) && hetArgs[optind] == ":"
		if !sep {
			o.argv = append([]string(nil), hetArgs[optind:]...)
		}
		if o.container.ok {
			p.errorf("--container requires LaunchParameters=use_interactive_step")
			p.exit(p.errExit)
		}
		p.sallocVerify()
		// salloc works in --chdir, else where it was started.
		if !o.chdir.ok {
			o.chdir = some(p.in.Cwd)
		}
		o.submitLine = strings.Join(hetArgs, " ")
		d := p.createJobDesc(true)
		d.WaitAllNodes = o.waitAllNodes
		if p.rel >= r24 {
			d.Argv = append([]string(nil), o.argv...)
		}
		d.OriginCluster = p.in.Cluster
		descs = append(descs, d)
		if !sep {
			break
		}
		hetArgs = hetArgs[optind:]
	}
	for i := range descs {
		packFlags(&descs[i])
	}
	if o.container.ok {
		descs[len(descs)-1].Container = o.container.s
	}
	p.res.Jobs = descs
	p.res.Stderr = p.stderr
	p.res.Uses = lastUses(p.res.Uses)
	p.res.Client = lastUses(p.res.Client)
	p.res.Quiet = o.quiet > 0
	return &p.res
}

// sallocVerify is salloc's _opt_verify.
func (p *parser) sallocVerify() {
	o := &p.o
	verified := true
	p.validateCommon()
	if o.quiet > 0 && o.verbose > 0 {
		p.errorf("don't specify both --verbose (-v) and --quiet (-Q)")
		verified = false
	}
	if p.rel >= r24 && o.resvPortCnt != noValInt && o.jobFlags&stepmgrEnabled == 0 {
		p.errorf("Slurmstepd step management must be enabled to use --resv-ports for job allocations")
		verified = false
	}
	if o.bb.ok && o.bbf.ok {
		p.errorf("Cannot specify both --bb and --bbf")
		p.exit(p.errExit)
	} else if o.bbf.ok {
		p.note("--bbf " + o.bbf.s + ": the burst buffer specification is read from that file")
	}
	if o.hint.ok && !p.validateHint() {
		if !p.verifyHint(o.hint.s) {
			p.exit(p.errExit)
		}
	}
	if o.exclude.ok && strings.Contains(o.exclude.s, "/") {
		p.note("--exclude " + o.exclude.s + ": a file name, read by the client")
	}
	var hl []host
	if p.rel == r22 {
		p.validateNodelist()
		if o.nodelist.ok {
			h, ok := hostlistCreate(o.nodelist.s)
			if !ok {
				p.errorf("memory allocation failure")
				p.exit(p.errExit)
			}
			hl = uniq(h)
			if o.nodesSet {
				o.minNodes = max(len(hl), o.minNodes)
			} else {
				o.minNodes = len(hl)
			}
			o.nodesSet = true
		}
		if o.ntasksPerNode > 0 && !o.ntasksSet {
			o.ntasks = o.minNodes * o.ntasksPerNode
			o.ntasksSet = true
		}
	} else if o.nodelist.ok && !o.nodesSet && !strings.Contains(o.nodelist.s, "{") {
		h, ok := hostlistCreate(o.nodelist.s)
		if !ok {
			p.fatalf("Invalid node list specified")
		}
		hl = uniq(h)
		o.minNodes = len(hl)
		o.nodesSet = true
	}
	if o.cpusSet && o.pnMinCPUs < o.cpusPerTask {
		o.pnMinCPUs = o.cpusPerTask
	}
	if !o.noShell && len(o.argv) == 0 {
		shell := p.in.Shell
		if shell == "" {
			shell = "/bin/sh"
		}
		o.argv = []string{shell}
	}
	if o.ntasks <= 0 {
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
		if o.ntasks/ps < o.minNodes && (o.minNodes-1)*ps >= o.ntasks {
			p.errorf("Too few processes for the requested {plane,node} distribution")
			p.exit(p.errExit)
		}
	}
	perNodeOK := p.rel == r22 || o.ntasksPerNode == noValInt
	if (o.nodesSet || o.extraSet) && (o.minNodes == o.maxNodes || o.maxNodes == 0) && perNodeOK && !o.ntasksSet {
		o.ntasks = o.minNodes
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
			if p.rel == r22 {
				p.infof("Warning: can't run %d processes on %d nodes, setting nnodes to %d", o.ntasks, o.minNodes, o.ntasks)
			} else {
				p.warnf("can't run %d processes on %d nodes, setting nnodes to %d", o.ntasks, o.minNodes, o.ntasks)
			}
			o.minNodes, o.maxNodes = o.ntasks, o.ntasks
			if p.rel == r22 && len(hl) > o.minNodes {
				o.nodelist = some(hostlistRanged(hl[:o.minNodes]))
			}
		}
	}
	if o.distribution&distBase == distArbitrary && (!o.nodesSet || !o.ntasksSet) && (p.rel == r22 || !strings.Contains(o.nodelist.s, "{")) {
		h, ok := hostlistCreate(o.nodelist.s)
		if !ok || !o.nodelist.ok {
			p.fatalf("Invalid node list specified")
		}
		if !o.ntasksSet {
			o.ntasksSet, o.ntasks = true, len(h)
		}
		if !o.nodesSet {
			o.nodesSet = true
			n := len(uniq(h))
			o.minNodes, o.maxNodes = n, n
		}
	}
	if o.deadline != 0 && o.begin != 0 && o.deadline < o.begin {
		p.errorf("Incompatible begin and deadline time specification")
		p.exit(p.errExit)
	}
	if o.ntasksPerCore > 0 && o.threadsPerCore != noValInt && o.threadsPerCore < o.ntasksPerCore && p.rel >= r24 {
		p.errorf("--ntasks-per-core (%d) can not be bigger than --threads-per-core (%d)", o.ntasksPerCore, o.threadsPerCore)
		verified = false
	}
	if o.x11 != 0 {
		p.x11Display()
	}
	if o.noShell && !o.jobName.ok {
		o.jobName = some("no-shell")
	}
	if !o.jobName.ok {
		o.jobName = some("interactive")
	}
	if !verified {
		p.exit(p.errExit)
	}
}

// setCPUBind is srun's --cpu-bind: the string is kept and checked in
// srunVerify (slurm_verify_cpu_bind).
func (p *parser) setCPUBind(arg string) error {
	p.o.cpuBind = some(arg)
	return nil
}

// verifyCPUBind is slurm_verify_cpu_bind.
func (p *parser) verifyCPUBind(arg string) bool {
	o := &p.o
	const bindBits = 0x20 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
	const toBits = 0x8 | 0x4 | 0x2 | 0x10
	b := []byte(arg)
	for i := range b {
		if b[i] == ',' && !(i+1 < len(b) && isDigit(b[i+1])) {
			b[i] = ';'
		}
	}
	logged := false
	ok := true
	for _, tok := range strings.Split(string(b), ";") {
		if !ok {
			break
		}
		lt := strings.ToLower(tok)
		if lt == "help" {
			p.exit(0)
		}
		if p.rel == r22 && !p.in.TaskAffinity && !logged {
			p.infof("cluster configuration lacks support for cpu binding")
			logged = true
		}
		list := func(kind string, flag uint16, mask bool) {
			l := ""
			if i := strings.IndexAny(tok, ":="); i >= 0 {
				l = tok[i+1:]
				if j := strings.IndexAny(l, ":="); j >= 0 {
					l = l[:j]
				}
			}
			o.cpuBindType = o.cpuBindType&^bindBits | flag
			o.cpuBind = null
			if l == "" {
				p.errorf("missing list for \"--cpu-bind=%s:<list>\"", kind)
				ok = false
				return
			}
			v, good := p.expandMult(l, kind, mask)
			if !good {
				ok = false
				return
			}
			o.cpuBind = some(v)
		}
		switch {
		case lt == "q" || lt == "quiet":
			o.cpuBindType &^= 1
		case lt == "v" || lt == "verbose":
			o.cpuBindType |= 1
		case lt == "one_thread":
			o.cpuBindType |= 0x2000
		case lt == "no" || lt == "none":
			o.cpuBindType = o.cpuBindType&^bindBits | 0x20
			o.cpuBind = null
		case lt == "rank":
			p.infof("Ignoring --cpu-bind=rank. Rank binding is obsolete.")
			o.cpuBind = null
		case strings.HasPrefix(lt, "map_cpu") || strings.HasPrefix(lt, "mapcpu"):
			list("map_cpu", 0x80, false)
		case strings.HasPrefix(lt, "mask_cpu") || strings.HasPrefix(lt, "maskcpu"):
			list("mask_cpu", 0x100, true)
		case lt == "rank_ldom":
			o.cpuBindType = o.cpuBindType&^bindBits | 0x200
			o.cpuBind = null
		case strings.HasPrefix(lt, "map_ldom") || strings.HasPrefix(lt, "mapldom"):
			list("map_ldom", 0x400, false)
		case strings.HasPrefix(lt, "mask_ldom") || strings.HasPrefix(lt, "maskldom"):
			list("mask_ldom", 0x800, true)
		case lt == "socket" || lt == "sockets":
			o.cpuBindType = o.cpuBindType&^toBits | 0x8
		case lt == "core" || lt == "cores":
			o.cpuBindType = o.cpuBindType&^toBits | 0x4
		case lt == "thread" || lt == "threads":
			o.cpuBindType = o.cpuBindType&^toBits | 0x2
		case lt == "ldom" || lt == "ldoms":
			o.cpuBindType = o.cpuBindType&^toBits | 0x10
		default:
			p.errorf("unrecognized --cpu-bind argument \"%s\"", tok)
			ok = false
		}
	}
	if !ok {
		p.fatalf("Failed to parse --cpu-bind= values.")
	}
	return ok
}

// setSrunOnly handles srun options that stay in srun.
func (p *parser) setSrunOnly(d *optDef, arg *string) error {
	v := ""
	if arg != nil {
		v = *arg
	}
	p.o.srunOther[d.val] = v
	return nil
}

// x11Display is x11_get_display's checks of DISPLAY (the target and the
// xauth cookie it then reads are the running client's).
func (p *parser) x11Display() {
	d, ok := p.getenv("DISPLAY")
	if !ok {
		p.errorf("No DISPLAY variable set, cannot setup x11 forwarding.")
		p.exit(-1)
	}
	if !strings.HasPrefix(d, ":") && !strings.Contains(d, ":") {
		p.errorf("Error parsing DISPLAY environment variable. Cannot use X11 forwarding.")
		p.exit(-1)
	}
	p.note("--x11: the display target and xauth cookie are the client's")
}
