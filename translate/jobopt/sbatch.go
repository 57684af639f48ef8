package jobopt

import (
	"path"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// Input variables of sbatch (src/sbatch/opt.c env_vars[]), in the order
// sbatch reads them: a later one overrides an earlier one.
var sbatchEnv = []struct {
	name string
	val  string
	from rel
}{
	{"SBATCH_ACCOUNT", "A", r22},
	{"SBATCH_ARRAY_INX", "a", r22},
	{"SBATCH_ACCTG_FREQ", "acctg_freq", r22},
	{"SBATCH_BATCH", "batch", r22},
	{"SBATCH_BURST_BUFFER", "burst_buffer_spec", r22},
	{"SBATCH_CLUSTER_CONSTRAINT", "cluster_constraint", r22},
	{"SBATCH_CLUSTERS", "M", r22},
	{"SLURM_CLUSTERS", "M", r22},
	{"SBATCH_CONSOLIDATE_SEGMENTS", "consolidate_segments", r26},
	{"SBATCH_CONTAINER", "container", r22},
	{"SBATCH_CONTAINER_ID", "container_id", r24},
	{"SBATCH_CONTAINER_TYPE", "container_type", r26},
	{"SBATCH_CONSTRAINT", "C", r22},
	{"SBATCH_CORE_SPEC", "S", r22},
	{"SBATCH_CPU_FREQ_REQ", "cpu_freq", r22},
	{"SBATCH_CPUS_PER_GPU", "cpus_per_gpu", r22},
	{"SBATCH_DEBUG", "v", r22}, // 22.05 reads it here; later releases in the early pass
	{"SBATCH_DELAY_BOOT", "delay_boot", r22},
	{"SBATCH_DISTRIBUTION", "m", r22},
	{"SBATCH_EXCLUSIVE", "exclusive", r22},
	{"SBATCH_EXPORT", "export", r22},
	{"SBATCH_GET_USER_ENV", "get_user_env", r22},
	{"SBATCH_GRES", "gres", r22},
	{"SBATCH_GRES_FLAGS", "gres_flags", r22},
	{"SBATCH_GPUS", "G", r22},
	{"SBATCH_GPU_BIND", "gpu_bind", r22},
	{"SBATCH_GPU_FREQ", "gpu_freq", r22},
	{"SBATCH_GPUS_PER_NODE", "gpus_per_node", r22},
	{"SBATCH_GPUS_PER_SOCKET", "gpus_per_socket", r22},
	{"SBATCH_GPUS_PER_TASK", "gpus_per_task", r22},
	{"SLURM_HINT", "hint", r22},
	{"SBATCH_HINT", "hint", r22},
	{"SBATCH_JOB_NAME", "J", r22},
	{"SBATCH_MEM_BIND", "mem_bind", r22},
	{"SBATCH_MEM_PER_CPU", "mem_per_cpu", r22},
	{"SBATCH_MEM_PER_GPU", "mem_per_gpu", r22},
	{"SBATCH_MEM_PER_NODE", "mem", r22},
	{"SBATCH_NETWORK", "network", r22},
	{"SBATCH_NO_KILL", "k", r22},
	{"SBATCH_NO_REQUEUE", "no_requeue", r22},
	{"SBATCH_OPEN_MODE", "open_mode", r22},
	{"SBATCH_OVERCOMMIT", "O", r22},
	{"SBATCH_PARTITION", "p", r22},
	{"SBATCH_POWER", "power", r22},
	{"SBATCH_PROFILE", "profile", r22},
	{"SBATCH_QOS", "q", r22},
	{"SBATCH_REQ_SWITCH", "switch_req", r22},
	{"SBATCH_REQUEUE", "requeue", r22},
	{"SBATCH_RESERVATION", "reservation", r22},
	{"SBATCH_SEGMENT_SIZE", "segment_size", r26},
	{"SBATCH_SIGNAL", "signal", r22},
	{"SBATCH_SPREAD_JOB", "spread_job", r22},
	{"SBATCH_SPREAD_SEGMENTS", "spread_segments", r26},
	{"SBATCH_THREAD_SPEC", "thread_spec", r22},
	{"SBATCH_THREADS_PER_CORE", "threadspercore", r22},
	{"SBATCH_TIMELIMIT", "t", r22},
	{"SBATCH_TRES_BIND", "tres_bind", r24},
	{"SBATCH_TRES_PER_TASK", "tres_per_task", r24},
	{"SBATCH_USE_MIN_NODES", "use_min_nodes", r22},
	{"SBATCH_WAIT", "W", r22},
	{"SBATCH_WAIT_ALL_NODES", "wait_all_nodes", r22},
	{"SBATCH_WAIT4SWITCH", "switch_wait", r22},
	{"SBATCH_WCKEY", "wckey", r22},
	{"SBATCH_ERROR", "e", r22},
	{"SBATCH_INPUT", "i", r22},
	{"SBATCH_OUTPUT", "o", r22},
}

func (p *parser) optEnv(table []struct {
	name string
	val  string
	from rel
}) {
	for _, e := range table {
		if p.rel < e.from {
			continue
		}
		if e.name == "SBATCH_DEBUG" && p.rel >= r24 {
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

// applyArgs runs getopt over args (args[0] the program name) and
// processes what it returns; it returns optind.
func (p *parser) applyArgs(args []string, byEnv, early bool, source string, lines []int) int {
	opts, optind, errLine := getopt(p.prog, args, p.defs)
	for _, g := range opts {
		p.src.source, p.src.wrote = source, g.written
		p.src.line = 0
		if lines != nil && g.argi < len(lines) {
			p.src.line = lines[g.argi]
		}
		if g.def == nil {
			p.raw(errLine)
			p.curOpt = g.written
			p.process("?", nil, byEnv, early)
			continue
		}
		p.process(g.def.val, g.arg, byEnv, early)
	}
	return optind
}

func (p *parser) sbatch() *Result {
	o := &p.o
	if v, ok := p.getenv("SLURM_EXIT_ERROR"); ok {
		if i := atoi(v); i == 0 {
			p.errorf("SLURM_EXIT_ERROR has zero value")
		} else {
			p.errExit = i
		}
	}
	argv := append([]string{"sbatch"}, p.in.Args...)

	// First pass: every command line option (':' separators dropped),
	// to find the script and its arguments.
	p.resetAll(true)
	submitLine := strings.Join(argv, " ")
	if p.rel >= r24 {
		for _, e := range []struct{ name, val string }{{"SBATCH_IGNORE_PBS", "ignore_pbs"}, {"SBATCH_DEBUG", "v"}} {
			if v, ok := p.getenv(e.name); ok {
				p.src.source, p.src.wrote = e.name, e.name
				p.process(e.val, &v, true, false)
			}
		}
	} else if v, ok := p.getenv("SBATCH_IGNORE_PBS"); ok {
		p.src.source, p.src.wrote = "SBATCH_IGNORE_PBS", "SBATCH_IGNORE_PBS"
		p.process("ignore_pbs", &v, true, false)
	}
	var local []string
	isHet := false
	for _, a := range argv {
		if a != ":" {
			local = append(local, a)
		} else {
			isHet = true
		}
	}
	uses := len(p.res.Uses)
	optind := p.applyArgs(local, true, true, "command line", nil)
	// The first pass only finds the script; the uses that count are
	// the second pass's.
	p.res.Uses = p.res.Uses[:uses]
	p.res.Client = nil
	if len(local) > optind && o.wrap.ok {
		p.errorf("Script arguments not permitted with --wrap option")
		p.exit(p.errExit)
	}
	external := o.jobFlags&externalJob != 0
	if p.rel >= r26 && !isHet {
		if len(local) > optind && external {
			p.errorf("Script arguments not permitted with --external option")
			p.exit(p.errExit)
		}
		if o.wrap.ok && external {
			p.errorf("--wrap option not permitted with --external option")
			p.exit(p.errExit)
		}
	}
	var scriptArgs []string
	if len(local) > optind {
		scriptArgs = append(scriptArgs, local[optind:]...)
		cmd := scriptArgs[0]
		if full := p.searchPath(cmd); full != "" {
			scriptArgs[0] = full
		}
	}
	o.argv = scriptArgs
	quiet := o.quiet > 0
	p.res.Quiet = quiet

	// The script.
	var body []byte
	scriptName := "stdin"
	if len(scriptArgs) > 0 {
		scriptName = path.Base(scriptArgs[0])
	}
	switch {
	case p.rel >= r26 && external:
		body = nil
	case o.wrap.ok:
		body = []byte("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + o.wrap.s + "\n")
	default:
		if len(scriptArgs) > 0 {
			body = p.in.Script
			if !p.opens(scriptArgs[0]) {
				p.errorf("Unable to open file %s", scriptArgs[0])
				p.exit(p.errExit)
			}
		} else {
			body = p.in.Stdin
		}
		p.checkScript(body)
	}

	// Second pass, once per het job component.
	hetArgs := argv[:len(argv)-len(scriptArgs)]
	var descs []codec.JobDesc
	var envs []*envList
	var hetEnvs []hetEnv
	fini := false
	for comp := 0; !fini; comp++ {
		p.src.comp = comp
		p.batchEnv = newHetEnv()
		more, off := p.sbatchSecondPass(hetArgs, comp, scriptName, body, submitLine)
		if off >= 0 && off < len(hetArgs) && hetArgs[off] == ":" {
			hetArgs = hetArgs[off:]
		} else if !more {
			fini = true
		}
		d := p.createJobDesc(true)
		env := p.sbatchFill(&d)
		envs = append(envs, env)
		hetEnvs = append(hetEnvs, p.batchEnv)
		if comp > 0 || !fini {
			p.setEnvFromOpts(envs[0], comp)
		} else {
			p.setEnvFromOpts(envs[0], -1)
		}
		if comp == 0 && !(p.rel >= r26 && external) {
			d.Script = string(body)
		}
		descs = append(descs, d)
	}
	if len(descs) > 1 {
		for i, he := range hetEnvs {
			p.setEnvs(envs[0], he, i)
		}
	} else {
		p.setEnvs(envs[len(envs)-1], hetEnvs[len(hetEnvs)-1], -1)
	}
	for i := range descs {
		if envs[i] != nil {
			descs[i].Environment = envs[i].list()
		}
		packFlags(&descs[i])
	}
	p.res.Jobs = descs
	p.res.TestOnly = o.testOnly
	p.res.Wait = o.wait
	p.res.Parsable = o.parsable
	p.res.Stderr = p.stderr
	p.res.Uses = lastUses(p.res.Uses)
	p.res.Client = lastUses(p.res.Client)
	return &p.res
}

// opens says whether the client can open the script at path (relative
// to the working directory).
func (p *parser) opens(path string) bool {
	if p.in.Exists == nil {
		return true
	}
	if !strings.HasPrefix(path, "/") {
		path = strings.TrimSuffix(p.in.Cwd, "/") + "/" + path
	}
	return p.in.Exists(path)
}

// checkScript is _get_script_buffer's sanity tests.
func (p *parser) checkScript(b []byte) {
	switch {
	case len(b) == 0:
		p.errorf("Batch script is empty!")
	case isWhitespace(cString(b)):
		p.errorf("Batch script contains only whitespace!")
	case len(b) < 2 || b[0] != '#' || b[1] != '!':
		p.errorf("This does not look like a batch script.  The first")
		p.errorf("line must start with #! followed by the path to an interpreter.")
		p.errorf("For instance: #!/bin/sh")
	case strings.IndexByte(string(b), 0) >= 0:
		p.errorf("The Slurm controller does not allow scripts that")
		p.errorf("contain a NULL character '\\0'.")
	case strings.Contains(string(b), "\r\n"):
		p.errorf("Batch script contains DOS line breaks (\\r\\n)")
		p.errorf("instead of expected UNIX line breaks (\\n).")
	default:
		return
	}
	p.exit(p.errExit)
}

func cString(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
}

// searchPath is search_path(cwd, cmd, false, R_OK, false): a name not
// starting with '.' or '/' is looked for in the working directory, then
// PATH.
func (p *parser) searchPath(cmd string) string {
	if cmd == "" || cmd[0] == '.' || cmd[0] == '/' {
		return ""
	}
	cwd := p.o.chdir.s
	exists := p.in.Exists
	if exists == nil {
		// Without a view of the file system: the script is the one
		// in the working directory.
		exists = func(path string) bool { return path == strings.TrimSuffix(p.in.Cwd, "/")+"/"+cmd }
	}
	dirs := []string{cwd}
	if pth, ok := p.getenv("PATH"); ok {
		dirs = append(dirs, strings.Split(pth, ":")...)
	}
	for _, d := range dirs {
		var full string
		if strings.HasPrefix(d, ".") {
			full = cwd + "/" + d + "/" + cmd
		} else {
			full = d + "/" + cmd
		}
		if exists(full) {
			return full
		}
	}
	return ""
}

// sbatchSecondPass is process_options_second_pass: the component's
// #SBATCH directives, then the input variables, then its command line.
func (p *parser) sbatchSecondPass(args []string, comp int, file string, body []byte, submitLine string) (more bool, optind int) {
	p.resetAll(false)
	more = p.batchScript(file, body, comp)
	if !p.o.ignorePBS && comp == 0 {
		for _, l := range scriptLines(body) {
			if strings.HasPrefix(l, "#PBS") || strings.HasPrefix(l, "#BSUB") {
				p.note("#PBS/#BSUB directives: sbatch translates them into options (give --ignore-pbs to stop it)")
				break
			}
		}
	}
	p.optEnv(sbatchEnv)
	optind = p.applyArgs(args, false, false, "command line", nil)
	p.sbatchVerify()
	p.o.submitLine = submitLine
	return more, optind
}

// batchScript is _opt_batch_script.
func (p *parser) batchScript(file string, body []byte, comp int) bool {
	sc := ScanScript(body, p.in.Version, file)
	args := []string{"sbatch"}
	lines := []int{0}
	more := false
	warned := false
	for _, d := range sc.Directives {
		if d.Comp < comp {
			continue
		}
		if d.Comp > comp {
			more = true
			break
		}
		if d.Magic == "#SLURM" && !warned {
			p.errorf("Change from #SLURM to #SBATCH in your script and verify the options are valid in sbatch")
			warned = true
		}
		if d.Packjob && !p.packjobWarned {
			p.packjobWarned = true
			if p.rel == r22 {
				p.infof("Warning: the \"packjob\" component separator is being deprecated. Please, use \"hetjob\" instead.")
			} else {
				p.warnf("The \"packjob\" component separator is deprecated. Please use \"hetjob\" instead.")
			}
		}
		if d.Err != nil {
			p.stderr = append(p.stderr, d.Err.Lines...)
			p.exit(d.Err.Exit)
		}
		for range d.Args {
			lines = append(lines, d.Line)
		}
		args = append(args, d.Args...)
	}
	i := p.applyArgs(args, false, false, "#SBATCH", lines)
	if i < len(args) {
		p.errorf("Invalid directive found in batch script: %s", args[i])
		p.exit(-1)
	}
	return more
}

// lastUses keeps, for each option and component, its last application
// (the one that took effect: the command line over variables over
// #SBATCH), in the order those happened.
func lastUses(us []Use) []Use {
	type key struct {
		name string
		comp int
	}
	last := map[key]int{}
	for i, u := range us {
		last[key{u.Name, u.Comp}] = i
	}
	var out []Use
	for i, u := range us {
		if last[key{u.Name, u.Comp}] == i {
			out = append(out, u)
		}
	}
	return out
}
