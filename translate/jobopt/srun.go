package jobopt

import (
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// srun outside an allocation: the job allocation it requests before it
// launches the step (src/srun/opt.c, srun/allocate.c). Only the
// allocation side is modelled: step options are parsed and checked
// where they can make srun refuse, and otherwise stay in srun.

// Input variables of srun (env_vars[]), in the order srun reads them.
var srunEnv = []envVar{
	{"SLURM_ACCOUNT", "A", r22},
	{"SLURM_ACCTG_FREQ", "acctg_freq", r22},
	{"SLURM_BCAST", "bcast", r22},
	{"SLURM_BCAST_EXCLUDE", "bcast_exclude", r22},
	{"SLURM_BURST_BUFFER", "burst_buffer_spec", r22},
	{"SLURM_CLUSTERS", "M", r22},
	{"SLURM_CLUSTER_CONSTRAINT", "cluster_constraint", r22},
	{"SLURM_CONSOLIDATE_SEGMENTS", "consolidate_segments", r26},
	{"SLURM_COMPRESS", "compress", r22},
	{"SLURM_CONSTRAINT", "C", r22},
	{"SLURM_CORE_SPEC", "S", r22},
	{"SLURM_CPUS_PER_TASK", "c", r24},
	{"SRUN_CPUS_PER_TASK", "c", r22}, // 22.05 only
	{"SLURM_CPU_BIND", "cpu_bind", r22},
	{"SLURM_CPU_FREQ_REQ", "cpu_freq", r22},
	{"SLURM_CPUS_PER_GPU", "cpus_per_gpu", r22},
	{"SLURM_DELAY_BOOT", "delay_boot", r22},
	{"SLURM_DEPENDENCY", "d", r22},
	{"SLURM_DISABLE_STATUS", "X", r22},
	{"SLURM_DISTRIBUTION", "m", r22},
	{"SLURM_EPILOG", "epilog", r22},
	{"SLURM_EXACT", "exact", r22},
	{"SLURM_EXCLUSIVE", "exclusive", r22},
	{"SLURM_EXPORT_ENV", "export", r22},
	{"SRUN_EXPORT_ENV", "export", r22},
	{"SLURM_EXTERNAL_LAUNCHER", "external_launcher", r24},
	{"SLURM_GPUS", "G", r22},
	{"SLURM_GPU_BIND", "gpu_bind", r22},
	{"SLURM_GPU_FREQ", "gpu_freq", r22},
	{"SLURM_GPUS_PER_NODE", "gpus_per_node", r22},
	{"SLURM_GPUS_PER_SOCKET", "gpus_per_socket", r22},
	{"SLURM_GPUS_PER_TASK", "gpus_per_task", r22},
	{"SLURM_GRES", "gres", r22},
	{"SLURM_GRES_FLAGS", "gres_flags", r22},
	{"SLURM_HINT", "hint", r22},
	{"SLURM_JOB_ID", "jobid", r22},
	{"SLURM_JOB_NAME", "J", r22},
	{"SLURM_JOB_NODELIST", "alloc_nodelist", r22},
	{"SLURM_JOB_NUM_NODES", "N", r22},
	{"SLURM_KILL_BAD_EXIT", "K", r22},
	{"SLURM_LABELIO", "l", r22},
	{"SLURM_MEM_BIND", "mem_bind", r22},
	{"SLURM_MEM_PER_CPU", "mem_per_cpu", r22},
	{"SLURM_MEM_PER_GPU", "mem_per_gpu", r22},
	{"SLURM_MEM_PER_NODE", "mem", r22},
	{"SLURM_MPI_TYPE", "mpi", r22},
	{"SLURM_NCORES_PER_SOCKET", "corespersocket", r22},
	{"SLURM_NETWORK", "network", r22},
	{"SLURM_NO_KILL", "k", r22},
	{"SLURM_NPROCS", "n", r22},
	{"SLURM_NTASKS", "n", r22},
	{"SLURM_NSOCKETS_PER_NODE", "socketspernode", r22},
	{"SLURM_NTASKS_PER_CORE", "ntaskspercore", r24},
	{"SLURM_NTASKS_PER_NODE", "ntaskspernode", r22},
	{"SLURM_NTASKS_PER_GPU", "ntaskspergpu", r22},
	{"SLURM_NTASKS_PER_TRES", "ntaskspertres", r22},
	{"SLURM_OOM_KILL_STEP", "oomkillstep", r24},
	{"SLURM_OPEN_MODE", "open_mode", r22},
	{"SLURM_OVERCOMMIT", "O", r22},
	{"SLURM_OVERLAP", "overlap", r22},
	{"SLURM_PARTITION", "p", r22},
	{"SLURM_POWER", "power", r22},
	{"SLURM_PROFILE", "profile", r22},
	{"SLURM_PROLOG", "prolog", r22},
	{"SLURM_QOS", "q", r22},
	{"SLURM_REMOTE_CWD", "D", r22},
	{"SLURM_REQ_SWITCH", "switch_req", r22},
	{"SLURM_RESERVATION", "reservation", r22},
	{"SLURM_RESV_PORTS", "resv_ports", r22},
	{"SLURM_SEND_LIBS", "send_libs", r22},
	{"SLURM_SIGNAL", "signal", r22},
	{"SLURM_SPREAD_JOB", "spread_job", r22},
	{"SLURM_SPREAD_SEGMENTS", "spread_segments", r26},
	{"SLURM_SRUN_MULTI", "multi", r22},
	{"SLURM_STDERRMODE", "e", r22},
	{"SLURM_STDINMODE", "i", r22},
	{"SLURM_STDOUTMODE", "o", r22},
	{"SLURM_TASK_EPILOG", "task_epilog", r22},
	{"SLURM_TASK_PROLOG", "task_prolog", r22},
	{"SLURM_THREAD_SPEC", "thread_spec", r22},
	{"SLURM_THREADS", "T", r22},
	{"SLURM_THREADS_PER_CORE", "threadspercore", r22},
	{"SLURM_TIMELIMIT", "t", r22},
	{"SLURM_TRES_BIND", "tres_bind", r24},
	{"SLURM_TRES_PER_TASK", "tres_per_task", r24},
	{"SLURM_UNBUFFEREDIO", "u", r22},
	{"SLURM_USE_MIN_NODES", "use_min_nodes", r22},
	{"SLURM_WAIT", "W", r22},
	{"SLURM_WAIT4SWITCH", "switch_wait", r22},
	{"SLURM_WCKEY", "wckey", r22},
	{"SLURM_WORKING_DIR", "D", r22},
	{"SLURMD_DEBUG", "slurmd_debug", r22},
	{"SRUN_CONTAINER", "container", r22},
	{"SRUN_CONTAINER_ID", "container_id", r24},
	{"SRUN_CONTAINER_TYPE", "container_type", r26},
	{"SLURM_DEBUG", "v", r22},
	{"SRUN_ERROR", "e", r24},
	{"SRUN_INPUT", "i", r24},
	{"SRUN_OUTPUT", "o", r24},
	{"SRUN_SEGMENT_SIZE", "segment_size", r26}}

func (p *parser) srun() *Result {
	o := &p.o
	p.exitErrorEnv()
	if _, step := p.getenv("SLURM_JOB_ID"); step {
		// Inside an allocation srun creates a step, not a job.
		p.errorf("jobopt: srun inside an allocation (SLURM_JOB_ID set) creates a job step, which is not modelled")
		p.exit(p.errExit)
	}
	argv := append([]string{"srun"}, p.in.Args...)
	// The early pass: only --het-group (and nothing is printed).
	p.resetAll(true)
	early, _, _ := getopt(p.prog, argv, p.defs)
	for _, g := range early {
		if g.def != nil && g.def.flags&srEarly != 0 {
			p.errorf("jobopt: srun --het-group is not modelled")
			p.exit(p.errExit)
		}
	}
	p.resetAll(true)
	o.exclusive = true
	o.jobFlags = 0
	for _, e := range srunEnv {
		if p.rel < e.from || e.name == "SRUN_CPUS_PER_TASK" && p.rel != r22 {
			continue
		}
		if v, ok := p.getenv(e.name); ok {
			p.src.source, p.src.wrote, p.src.line = e.name, e.name, 0
			p.process(e.val, &v, true, false)
		}
	}
	optind := p.applyArgs(argv, false, false, "command line", nil)
	var rest []string
	for _, a := range argv[optind:] {
		if a == ":" {
			p.errorf("jobopt: srun het jobs are not modelled")
			p.exit(p.errExit)
		}
		rest = append(rest, a)
	}
	if o.container.ok {
		p.setEnvIfUnset("SLURM_CONTAINER", o.container.s)
	}
	if len(rest) == 0 && !o.testOnly {
		p.fatalf("No command given to execute.")
	}
	o.argv = rest
	p.srunVerify()
	o.submitLine = strings.Join(argv, " ")
	d := p.createJobDesc(true)
	if p.rel >= r24 && o.resvPortCnt != noValInt && o.jobFlags&stepmgrEnabled == 0 {
		d.ResvPortCnt = codec.NoVal16
	}
	if !d.StrGiven(codec.JDName, d.Name) && o.cmdName != "" {
		d.Name = o.cmdName
	}
	if len(o.argv) > 0 {
		d.Argv = append([]string(nil), o.argv...)
		if p.rel == r22 {
			// 22.05 sent the command alone.
			d.Argv = d.Argv[:1]
		}
	}
	o.container.into(&d.Container, &d, codec.JDContainer)
	if p.rel >= r24 {
		o.containerID.into(&d.ContainerID, &d, codec.JDContainerID)
	}
	if o.cpuBind.ok {
		d.CPUBind = o.cpuBind.s
	}
	if o.cpuBindType != 0 {
		d.CPUBindType = o.cpuBindType
	}
	d.WaitAllNodes = 1
	d.OriginCluster = p.in.Cluster
	packFlags(&d)
	p.res.Jobs = []codec.JobDesc{d}
	p.res.TestOnly = o.testOnly
	p.res.Stderr = p.stderr
	p.res.Uses = lastUses(p.res.Uses)
	p.res.Client = lastUses(p.res.Client)
	return &p.res
}

// srunVerify is srun's _opt_verify for a new allocation.
func (p *parser) srunVerify() {
	o := &p.o
	verified := true
	p.validateCommon()
	if o.quiet > 0 && o.verbose > 0 {
		p.errorf("don't specify both --verbose (-v) and --quiet (-Q)")
		verified = false
	}
	if o.bb.ok && o.bbf.ok {
		p.errorf("Cannot specify both --burst-buffer and --bbf")
		p.exit(p.errExit)
	} else if o.bbf.ok {
		p.note("--bbf " + o.bbf.s + ": the burst buffer specification is read from that file")
	}
	_, exact := o.srunOther["exact"]
	_, whole := o.srunOther["whole"]
	if (exact || o.exact) && whole {
		p.errorf("--exact and --whole are mutually exclusive.")
		verified = false
	}
	if o.cpuBind.ok && !p.verifyCPUBind(o.cpuBind.s) {
		verified = false
	}
	if o.hint.ok && !p.validateHint() {
		if !p.verifyHint(o.hint.s) {
			p.exit(p.errExit)
		}
	}
	if o.cpusSet && o.pnMinCPUs < o.cpusPerTask {
		o.pnMinCPUs = o.cpusPerTask
	}
	if len(o.argv) > 0 && o.argv[0] != ":" {
		o.cmdName = baseName(o.argv[0])
	}
	if o.exclude.ok && strings.Contains(o.exclude.s, "/") {
		p.note("--exclude " + o.exclude.s + ": a file name, read by the client")
	}
	if p.setByCLI("exclusive") && p.setByCLI("overlap") {
		p.errorf("--exclusive and --overlap are mutually exclusive")
		verified = false
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
	if o.ntasksPerNode == 0 {
		p.errorf("ntasks-per-node is 0")
		verified = false
	}
	const bindLevels = 0x8 | 0x4 | 0x2 | 0x10
	if o.ntasksPerCore > 0 {
		if o.cpuBindType&bindLevels == 0 {
			if o.ntasksPerCore == 1 {
				o.cpuBindType |= 0x4
			} else {
				o.cpuBindType |= 0x2
			}
		}
		if o.threadsPerCore != noValInt && o.threadsPerCore < o.ntasksPerCore {
			p.errorf("--ntasks-per-core (%d) can not be bigger than --threads-per-core (%d)", o.ntasksPerCore, o.threadsPerCore)
			verified = false
		}
	}
	if o.ntasksPerSocket > 0 && o.cpuBindType&bindLevels == 0 {
		o.cpuBindType |= 0x8
	}
	var hl []host
	if o.nodelist.ok && !o.nodesSet && !strings.Contains(o.nodelist.s, "{") {
		h, ok := hostlistCreate(o.nodelist.s)
		if !ok {
			p.fatalf("Invalid node list specified")
		}
		hl = uniq(h)
		o.minNodes = len(hl)
		o.nodesSet = true
	}
	if (o.nodesSet || o.extraSet) && (o.minNodes == o.maxNodes || o.maxNodes == 0) && o.ntasksPerNode == noValInt && !o.ntasksSet {
		o.ntasks = o.minNodes
		if o.socketsPerNode != noValInt && o.coresPerSocket != noValInt && o.threadsPerCore != noValInt {
			o.ntasks *= o.socketsPerNode * o.coresPerSocket * o.threadsPerCore
			o.ntasksSet = true
		}
	} else if o.nodesSet && o.ntasksSet {
		if o.ntasks < o.maxNodes {
			o.maxNodes = o.ntasks
		}
		if o.ntasks < o.minNodes && o.ntasks > 0 {
			if p.rel == r22 {
				p.infof("Warning: can't run %d processes on %d nodes, setting nnodes to %d", o.ntasks, o.minNodes, o.ntasks)
			} else {
				p.warnf("can't run %d processes on %d nodes, setting nnodes to %d", o.ntasks, o.minNodes, o.ntasks)
			}
			o.minNodes = o.ntasks
			if o.maxNodes != 0 && o.minNodes > o.maxNodes {
				o.maxNodes = o.minNodes
			}
			n := itoa(o.minNodes)
			p.process("N", &n, false, false)
			if len(hl) > o.minNodes {
				o.nodelist = some(hostlistRanged(hl[:o.minNodes]))
			}
		}
		if o.ntasksPerNode != noValInt && p.setByEnv("n") && !p.setByEnv("N") {
			p.resetByName("ntasks")
		}
	}
	if o.ntasksPerNode != noValInt && !o.ntasksSet {
		o.ntasks = o.minNodes * o.ntasksPerNode
		o.ntasksSet = true
	}
	if o.deadline != 0 && o.begin != 0 && o.deadline < o.begin {
		p.errorf("Incompatible begin and deadline time specification")
		p.exit(p.errExit)
	}
	if !o.jobName.ok && o.cmdName != "" {
		o.jobName = some(o.cmdName)
	}
	if o.x11 != 0 {
		p.x11Display()
	}
	if _, pty := o.srunOther["pty"]; pty && (o.efname.ok || o.ifname.ok || o.ofname.ok) {
		p.errorf("--error/--input/--output are incompatible with --pty")
		p.exit(p.errExit)
	}
	if !verified {
		p.exit(p.errExit)
	}
}
