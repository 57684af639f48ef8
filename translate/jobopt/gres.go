package jobopt

import (
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// The clients' GRES checks: slurm_get_next_tres, the --tres-per-task
// siblings (24.11+), and gres_job_state_validate, which also fills in
// task and CPU counts the GRES request implies.

type tresEntry struct {
	kind, name, typ string
	cnt             uint64
}

// nextTRES walks a TRES list as slurm_get_next_tres with tres_type
// fixed ("gres") or free (""). Entries with a zero count are dropped.
// ok is false on a malformed entry.
func parseTRESList(in, kind string) (out []tresEntry, ok bool) {
	rest := in
	for rest != "" {
		var tok string
		var k string
		if kind != "" {
			i := strings.Index(rest, kind)
			if i < 0 {
				return out, true
			}
			rest = rest[i+len(kind):]
			k = kind
		} else {
			seg := rest
			if c := strings.IndexByte(seg, ','); c >= 0 {
				seg = seg[:c]
			}
			if sep := strings.IndexAny(seg, "/:="); sep >= 0 {
				k = seg[:sep]
				rest = rest[sep:]
			} else {
				k = seg
				rest = rest[len(seg):]
			}
		}
		rest = strings.TrimPrefix(rest, "/")
		if c := strings.IndexByte(rest, ','); c >= 0 {
			tok, rest = rest[:c], rest[c+1:]
		} else {
			tok, rest = rest, ""
		}
		if tok == "" {
			continue
		}
		e := tresEntry{kind: k, cnt: 1}
		name := tok
		if sep := strings.LastIndexAny(name, "=:"); sep >= 0 {
			equals := name[sep] == '='
			num := name[sep+1:]
			name = name[:sep]
			if num == "" {
				return out, false
			}
			if v, good := tresNumber(num); good {
				e.cnt = v
			} else {
				if equals {
					return out, false
				}
				e.typ = num
			}
		} else if v, good := tresNumber(name); good {
			// A bare count: the TRES itself ("cpu=4" style).
			e.cnt = v
			name = ""
		}
		if c := strings.IndexByte(name, ':'); c >= 0 {
			if e.typ != "" {
				return out, false
			}
			name, e.typ = name[:c], name[c+1:]
		}
		if e.typ != "" && !strings.EqualFold(k, "gres") {
			return out, false
		}
		e.name = name
		if e.cnt == 0 {
			continue
		}
		out = append(out, e)
	}
	return out, true
}

// tresNumber is _is_valid_number: digits and an optional k/m/g/t/p
// suffix.
func tresNumber(s string) (uint64, bool) {
	if s == "" || !isDigit(s[0]) {
		return 0, false
	}
	v, rest, _ := strtoul(s)
	mult := uint64(1)
	switch strings.ToLower(rest) {
	case "":
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	case "t":
		mult = 1 << 40
	case "p":
		mult = 1 << 50
	default:
		return 0, false
	}
	return v * mult, true
}

// validateTRESPerTask is _validate_tres_per_task (24.11+).
func (p *parser) validateTRESPerTask() {
	o := &p.o
	tpt := o.tresPerTask.s
	for _, bad := range []string{"mem", "energy", "node", "billing", "fs", "vmem", "pages", "bb"} {
		if o.tresPerTask.ok && (hasPrefixFold(tpt, bad) || containsFold(tpt, ","+bad)) {
			p.fatalf("Invalid TRES for --tres-per-task: %s", bad)
		}
	}
	if o.tresPerTask.ok {
		o.tresPerTask = some(formatTRES(formatTRES(tpt, "license"), "gres"))
	}
	p.siblingGPUsPerTask()
	p.siblingCPUsPerTask()
	// _implicitly_bind_tres_per_task
	if o.tresPerTask.ok {
		ents, _ := parseTRESList(o.tresPerTask.s, "gres")
		if p.rel >= r26 {
			var sum uint64
			for _, e := range ents {
				if o.tresBind.ok && strings.Contains(o.tresBind.s, e.name) {
					continue
				}
				if e.name == "gpu" {
					sum += e.cnt
				}
			}
			if sum > 0 {
				o.tresBind = some(joinPlus(o.tresBind, "gres/gpu:per_task:"+formatUint(sum)))
			}
		} else {
			for _, e := range ents {
				if o.tresBind.ok && strings.Contains(o.tresBind.s, e.name) {
					continue
				}
				o.tresBind = some(joinPlus(o.tresBind, "gres/"+e.name+":per_task:"+formatUint(e.cnt)))
			}
		}
	}
}

func joinPlus(a cstr, b string) string {
	if a.ok {
		return a.s + "+" + b
	}
	return b
}

// formatTRES is slurm_format_tres_string: "gres:x" entries to "gres/x".
func formatTRES(s, kind string) string {
	prefix := kind + ":"
	if !strings.Contains(s, prefix) {
		return s
	}
	var out []string
	for _, tok := range strtok(s, ",") {
		if strings.HasPrefix(tok, prefix) {
			tok = kind + "/" + tok[len(prefix):]
		}
		out = append(out, tok)
	}
	return strings.Join(out, ",")
}

// updateTRESPerTask is slurm_option_update_tres_per_task.
func updateTRESPerTask(cnt int, name string, tpt cstr) cstr {
	i := indexFold(tpt.s, name)
	if !tpt.ok || i < 0 {
		if cnt == 0 {
			return tpt
		}
		if tpt.ok {
			return some(name + "=" + itoa(cnt) + "," + tpt.s)
		}
		return some(name + "=" + itoa(cnt))
	}
	cur := atoi(safeSlice(tpt.s, i+len(name)+1))
	if cur == cnt {
		return tpt
	}
	suffix := ""
	hasSuffix := false
	if c := strings.Index(tpt.s[i:], ","); c >= 0 {
		suffix, hasSuffix = tpt.s[i+c+1:], true
	}
	prefix := strings.TrimSuffix(tpt.s[:i], ",")
	hasPrefix := prefix != ""
	if hasSuffix && suffix == "" {
		hasSuffix = false
	}
	var parts []string
	if hasPrefix {
		parts = append(parts, prefix)
	}
	if cnt != 0 {
		parts = append(parts, name+"="+itoa(cnt))
	}
	if hasSuffix {
		parts = append(parts, suffix)
	}
	if len(parts) == 0 {
		return null
	}
	return some(strings.Join(parts, ","))
}

func safeSlice(s string, i int) string {
	if i > len(s) {
		return ""
	}
	return s[i:]
}

func (p *parser) siblingInternal(set bool, cnt int, envVar, val, str, optName string) {
	o := &p.o
	i := indexFold(o.tresPerTask.s, str)
	if !o.tresPerTask.ok || i < 0 {
		if set {
			o.tresPerTask = updateTRESPerTask(cnt, str, o.tresPerTask)
		}
		return
	}
	switch {
	case p.setByCLI(val) && p.setByCLI("tres_per_task"):
		p.fatalf("You can not have --tres-per-task=%s= and --%s please use one or the other", str, optName)
	case p.setByCLI(val) && p.setByEnv("tres_per_task"):
		o.tresPerTask = updateTRESPerTask(cnt, str, o.tresPerTask)
		return
	}
	n := atoi(safeSlice(o.tresPerTask.s, i+len(str)+1))
	if n <= 0 {
		p.fatalf("Invalid --tres-per-task=%s=%d", str, n)
	}
	if p.setByEnv(val) && p.setByEnv("tres_per_task") && n != o.cpusPerTask && (p.rel < r26 || val == "c") {
		p.fatalf("%s set by two different environment variables %s=%d != SLURM_TRES_PER_TASK=cpu=%d", optName, envVar, cnt, n)
	}
	if p.rel < r26 {
		if val == "gpus_per_task" {
			o.gpusPerTask = some(o.tresPerTask.s[i:])
		} else {
			o.cpusPerTask, o.cpusSet = n, true
		}
	}
}

// gpuCntAndStr is _get_gpu_cnt_and_str for one gpus-per-task entry.
func gpuCntAndStr(s string) (str string, cnt int, rest string, more bool) {
	str = "gres/gpu"
	if i := strings.IndexAny(s, ":="); i >= 0 {
		str += ":" + s[:i]
		num := s[i+1:]
		cnt = atoi(num)
		if c := strings.IndexByte(s, ','); c >= 0 {
			return str, cnt, s[c+1:], true
		}
		return str, cnt, "", false
	}
	return str, atoi(s), "", false
}

func (p *parser) siblingGPUsPerTask() {
	o := &p.o
	if p.rel < r26 {
		if !o.gpusPerTask.ok {
			p.siblingInternal(false, 0, "SLURM_GPUS_PER_TASK", "gpus_per_task", "gres/gpu", "gpus-per-task")
			return
		}
		s := o.gpusPerTask.s
		str := "gres/gpu"
		cnt := 0
		if i := strings.IndexByte(s, ':'); i >= 0 {
			str += ":" + s[:i]
			cnt = atoi(s[i+1:])
		} else if i := strings.IndexByte(s, '='); i >= 0 {
			str += ":" + s[:i]
			cnt = atoi(s[i+1:])
		} else {
			cnt = atoi(s)
		}
		p.siblingInternal(true, cnt, "SLURM_GPUS_PER_TASK", "gpus_per_task", str, "gpus-per-task")
		return
	}
	save := o.gpusPerTask.s
	if o.gpusPerTask.ok {
		for save != "" {
			str, cnt, rest, more := gpuCntAndStr(save)
			p.siblingInternal(true, cnt, "SLURM_GPUS_PER_TASK", "gpus_per_task", str, "gpus-per-task")
			if !more {
				break
			}
			save = rest
		}
	}
	o.gpusPerTask = null
	if o.tresPerTask.ok {
		ents, _ := parseTRESList(o.tresPerTask.s, "gres")
		var parts []string
		for _, e := range ents {
			if e.typ != "" {
				parts = append(parts, e.typ+":"+formatUint(e.cnt))
			} else {
				parts = append(parts, formatUint(e.cnt))
			}
		}
		if len(parts) > 0 {
			o.gpusPerTask = some(strings.Join(parts, ","))
		}
	}
}

func (p *parser) siblingCPUsPerTask() {
	o := &p.o
	p.siblingInternal(o.cpusSet, o.cpusPerTask, "SLURM_CPUS_PER_TASK", "c", "cpu", "cpus-per-task")
	if p.rel >= r26 && o.tresPerTask.ok {
		ents, _ := parseTRESList(o.tresPerTask.s, "cpu")
		if len(ents) > 0 {
			o.cpusPerTask, o.cpusSet = int(ents[0].cnt), true
		}
	}
}

// validateCPUsPerTRES is _validate_cpus_per_tres.
func (p *parser) validateCPUsPerTRES() {
	o := &p.o
	var cli, env bool
	if containsFold(o.tresPerTask.s, "cpu") {
		cli = p.setByCLI("c") || p.setByCLI("tres_per_task")
		env = p.setByEnv("c") || p.setByEnv("tres_per_task")
	} else {
		cli, env = p.setByCLI("c"), p.setByEnv("c")
	}
	if cli && p.setByCLI("cpus_per_gpu") || env && p.setByEnv("cpus_per_gpu") {
		p.fatalf("--cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually exclusive")
	}
	if cli && p.setByEnv("cpus_per_gpu") {
		p.resetByName("cpus-per-gpu")
	} else if p.setByCLI("cpus_per_gpu") && env {
		p.resetByName("cpus-per-task")
		o.tresPerTask = updateTRESPerTask(o.cpusPerTask, "cpu", o.tresPerTask)
	}
}

// gresJob is gres_job_state_t's counts for one GRES name and type.
type gresJob struct {
	name, typ                          string
	perJob, perNode, perSocket, perTsk uint64
	cpusPerGres, memPerGres, total     uint64
	ntasksPerGres                      uint16
}

// gresValidate is gres_job_state_validate as the clients run it (not in
// slurmctld), against the configured GRES names. It returns a Slurm
// error code (0 when valid) and updates d as the client does.
func (p *parser) gresValidate(d *codec.JobDesc) int {
	cpt, mpt := d.CPUsPerTRES, d.MemPerTRES
	tpj, tpn, tps, tpt := d.TRESPerJob, d.TRESPerNode, d.TRESPerSocket, d.TRESPerTask
	if cpt == "" && tpj == "" && tpn == "" && tps == "" && tpt == "" && mpt == "" {
		return 0
	}
	if (tpt != "" || d.NtasksPerTRES != codec.NoVal16) && d.NumTasks == codec.NoVal &&
		d.MinNodes != codec.NoVal && d.MinNodes == d.MaxNodes {
		switch {
		case d.NtasksPerTRES != codec.NoVal16:
			d.NumTasks = d.MinNodes * uint32(d.NtasksPerTRES)
		case d.NtasksPerNode != codec.NoVal16:
			d.NumTasks = d.MinNodes * uint32(d.NtasksPerNode)
		case d.CPUsPerTask == codec.NoVal16:
			d.NumTasks = d.MinNodes
		}
	}
	var list []*gresJob
	find := func(e tresEntry) (*gresJob, int) {
		name := e.name
		known := false
		for _, g := range p.in.GresTypes {
			if name == g || strings.HasPrefix(name, g+":") {
				known = true
				break
			}
		}
		if !known {
			return nil, codec.ESLURM_INVALID_GRES
		}
		for _, g := range list {
			if g.name == name && g.typ == e.typ {
				return g, 0
			}
		}
		g := &gresJob{name: name, typ: e.typ}
		list = append(list, g)
		return g, 0
	}
	requestedGPU := false
	var cpusPerGres uint64
	walk := func(s string, f func(g *gresJob, cnt uint64)) int {
		if s == "" {
			return 0
		}
		var ents []tresEntry
		if p.rel == r22 {
			var ok bool
			if ents, ok = parseGres22(s); !ok {
				return codec.ESLURM_INVALID_GRES
			}
		} else {
			var ok bool
			if ents, ok = parseTRESList(s, "gres"); !ok {
				return 2115 // ESLURM_INVALID_TRES
			}
		}
		for _, e := range ents {
			g, rc := find(e)
			if rc != 0 {
				return rc
			}
			f(g, e.cnt)
		}
		return 0
	}
	steps := []struct {
		s string
		f func(g *gresJob, cnt uint64)
	}{
		{cpt, func(g *gresJob, cnt uint64) {
			g.cpusPerGres = cnt
			g.ntasksPerGres = d.NtasksPerTRES
			cpusPerGres = max(cpusPerGres, cnt)
		}},
		{tpj, func(g *gresJob, cnt uint64) {
			requestedGPU = requestedGPU || g.name == "gpu"
			g.perJob = cnt
			g.total = max(g.total, cnt)
			g.ntasksPerGres = d.NtasksPerTRES
		}},
		{tpn, func(g *gresJob, cnt uint64) {
			requestedGPU = requestedGPU || g.name == "gpu"
			g.perNode = cnt
			if d.MinNodes != codec.NoVal {
				cnt *= uint64(d.MinNodes)
			}
			g.total = max(g.total, cnt)
			g.ntasksPerGres = d.NtasksPerTRES
		}},
		{tps, func(g *gresJob, cnt uint64) {
			requestedGPU = requestedGPU || g.name == "gpu"
			g.perSocket = cnt
			switch {
			case d.MinNodes != codec.NoVal && d.SocketsPerNode != codec.NoVal16:
				cnt *= uint64(d.MinNodes) * uint64(d.SocketsPerNode)
			case d.NumTasks != codec.NoVal && d.NtasksPerSocket != codec.NoVal16:
				cnt *= (uint64(d.NumTasks) + uint64(d.NtasksPerSocket) - 1) / uint64(d.NtasksPerSocket)
			case d.SocketsPerNode != codec.NoVal16:
				cnt *= uint64(d.SocketsPerNode)
			}
			g.total = max(g.total, cnt)
			g.ntasksPerGres = d.NtasksPerTRES
		}},
		{tpt, func(g *gresJob, cnt uint64) {
			requestedGPU = requestedGPU || g.name == "gpu"
			g.perTsk = cnt
			if d.NumTasks != codec.NoVal {
				cnt *= uint64(d.NumTasks)
			}
			g.total = max(g.total, cnt)
			g.ntasksPerGres = d.NtasksPerTRES
		}},
		{mpt, func(g *gresJob, cnt uint64) {
			g.memPerGres = cnt
			g.ntasksPerGres = d.NtasksPerTRES
		}},
	}
	for _, st := range steps {
		if rc := walk(st.s, st.f); rc != 0 {
			return rc
		}
	}
	if npt := d.NtasksPerTRES; npt != 0 && npt != codec.NoVal16 {
		switch {
		case requestedGPU && len(list) > 0:
			var gpus uint64
			for _, g := range list {
				if g.name == "gpu" {
					gpus += g.total
				}
			}
			d.NumTasks = uint32(gpus * uint64(npt))
		case d.NumTasks != 0 && d.NumTasks != codec.NoVal:
			gpus := d.NumTasks / uint32(npt)
			if rc := walk("gres/gpu:"+formatUint(uint64(gpus)), func(g *gresJob, cnt uint64) {
				g.ntasksPerGres = npt
				g.perJob = cnt
				g.total = max(g.total, cnt)
			}); rc != 0 {
				return rc
			}
			if len(list) > 0 {
				requestedGPU = true
			}
		default:
			p.errorf("gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU specification or a node/ntask specification")
			return codec.ESLURM_INVALID_GRES
		}
	}
	if len(list) == 0 {
		return 0
	}
	if mpt != "" && !requestedGPU {
		p.errorf("Requested mem_per_tres=%s but did not request any GPU.", mpt)
		return codec.ESLURM_INVALID_GRES
	}
	if cpt != "" && !requestedGPU {
		p.errorf("Requested cpus_per_tres=%s but did not request any GPU.", cpt)
		return codec.ESLURM_INVALID_GRES
	}
	var minCPUs uint64
	for _, g := range list {
		if !p.testGresCnt(g, d) {
			return codec.ESLURM_INVALID_GRES
		}
		if p.rel >= r24 && cpusPerGres != 0 && g.name == "gpu" {
			minCPUs += cpusPerGres * g.total
		}
	}
	if minCPUs > uint64(d.MinCPUs) {
		d.MinCPUs = uint32(minCPUs)
	}
	// A typed and an untyped request of the same GRES: the untyped one
	// may only carry cpus/mem per GRES.
	for _, g := range list {
		if g.typ != "" {
			continue
		}
		for _, h := range list {
			if h != g && h.name == g.name && h.typ != "" {
				if g.perJob != 0 || g.perNode != 0 || g.perSocket != 0 || g.perTsk != 0 {
					return 2122 // ESLURM_INVALID_GRES_TYPE
				}
			}
		}
	}
	return 0
}

// testGresCnt is _test_gres_cnt outside slurmctld.
func (p *parser) testGresCnt(g *gresJob, d *codec.JobDesc) bool {
	n := g.name
	if g.perJob != 0 && (g.perNode != 0 && g.perNode > g.perJob || g.perTsk != 0 && g.perTsk > g.perJob || g.perSocket != 0 && g.perSocket > g.perJob) {
		p.errorf("Failed to ensure --%ss >= --gres=%s/--%ss-per-node >= --%ss-per-socket", n, n, n, n)
		return false
	}
	if g.perNode != 0 && (g.perTsk != 0 && g.perTsk > g.perNode || g.perSocket != 0 && g.perSocket > g.perNode) {
		p.errorf("Failed to ensure --%ss >= --%ss-per-task", n, n)
		return false
	}
	if g.perSocket != 0 && d.SocketsPerNode == codec.NoVal16 {
		p.errorf("--%ss-per-socket option requires --sockets-per-node specification", n)
		return false
	}
	if g.cpusPerGres != 0 && d.CPUsPerTask != codec.NoVal16 {
		p.errorf("--cpus-per-%s is mutually exclusive with --cpus-per-task", n)
		return false
	}
	if g.perJob != 0 && g.perNode != 0 {
		if g.perJob%g.perNode != 0 {
			p.errorf("Failed to validate job spec, --%ss is not multiple of --gres=%s/--%ss-per-node", n, n, n)
			return false
		}
		req := uint32(g.perJob / g.perNode)
		if d.MinNodes != codec.NoVal && req < d.MinNodes || req > d.MaxNodes {
			p.errorf("Failed to validate job spec. Based on --%s and --gres=%s/--%ss-per-node required nodes (%d) doesn't fall between min_nodes (%d) and max_nodes (%d) boundaries.", n, n, n, req, d.MinNodes, d.MaxNodes)
			return false
		}
		d.MinNodes, d.MaxNodes = req, req
	}
	if g.perNode != 0 && g.perSocket != 0 {
		if g.perNode%g.perSocket != 0 {
			p.errorf("Failed to validate job spec, --gres=%s/--%ss-per-node not multiple of --%ss-per-socket.", n, n, n)
			return false
		}
		req := uint16(g.perNode / g.perSocket)
		if d.SocketsPerNode == codec.NoVal16 {
			d.SocketsPerNode = req
		} else if d.SocketsPerNode != req {
			p.errorf("Failed to validate job spec. Based on --gres=%s/--%ss-per-node and --%ss-per-socket required number of sockets differ from --sockets-per-node.", n, n, n)
			return false
		}
	}
	if g.ntasksPerGres != 0 && g.ntasksPerGres != codec.NoVal16 && d.NumTasks != codec.NoVal {
		if d.NumTasks/uint32(g.ntasksPerGres)*uint32(g.ntasksPerGres) != d.NumTasks {
			p.errorf("Failed to validate job spec, -n/--ntasks has to be a multiple of --ntasks-per-%s.", n)
			return false
		}
	}
	if g.perTsk != 0 {
		switch {
		case g.perJob != 0:
			if g.perJob%g.perTsk != 0 {
				p.errorf("Failed to validate job spec, --%ss not multiple of --%ss-per-task", n, n)
				return false
			}
			req := uint32(g.perJob / g.perTsk)
			if d.NumTasks == codec.NoVal {
				d.NumTasks = req
			} else if d.NumTasks != req {
				p.errorf("Failed to validate job spec. Based on --%ss and --%ss-per-task number of requested tasks differ from -n/--ntasks.", n, n)
				return false
			}
		case d.NumTasks != codec.NoVal:
			g.perJob = uint64(d.NumTasks) * g.perTsk
		case p.rel == r22:
			p.errorf("Failed to validate job spec. --%ss-per-task used without either --%ss or -n/--ntasks is not allowed.", n, n)
			return false
		case n == "gpu":
			p.errorf("Failed to validate job spec. --%ss-per-task or --tres-per-task used without either --%ss or -n/--ntasks is not allowed.", n, n)
			return false
		default:
			p.errorf("Failed to validate job spec. --tres-per-task used without -n/--ntasks is not allowed.")
			return false
		}
	}
	if g.perNode != 0 && g.perTsk != 0 {
		if g.perNode%g.perTsk != 0 {
			p.errorf("Failed to validate job spec, --gres=%s/--%ss-per-node not multiple of --%ss-per-task.", n, n, n)
			return false
		}
		req := uint16(g.perNode / g.perTsk)
		if d.NtasksPerNode == codec.NoVal16 || d.NtasksPerNode == 0 {
			d.NtasksPerNode = req
		} else if d.NtasksPerNode != req {
			p.errorf("Failed to validate job spec. Based on --gres=%s/--%ss-per-node and --%ss-per-task requested number of tasks per node differ from --ntasks-per-node.", n, n, n)
			return false
		}
	}
	if g.perSocket != 0 && g.perTsk != 0 {
		if g.perSocket%g.perTsk != 0 {
			p.errorf("Failed to validate job spec, --%ss-per-socket not multiple of --%ss-per-task.", n, n)
			return false
		}
		req := uint16(g.perSocket / g.perTsk)
		if d.NtasksPerSocket == codec.NoVal16 || d.NtasksPerSocket == 0 {
			d.NtasksPerSocket = req
		} else if d.NtasksPerSocket != req {
			p.errorf("Failed to validate job spec. Based on --%ss-per-socket and --%ss-per-task requested number of tasks per sockets differ from --ntasks-per-socket.", n, n)
			return false
		}
	}
	if g.cpusPerGres != 0 && g.perTsk != 0 {
		req := uint16(g.cpusPerGres * g.perTsk)
		if d.CPUsPerTask == codec.NoVal16 || d.CPUsPerTask == 0 {
			d.CPUsPerTask = req
		} else if d.CPUsPerTask != req {
			p.errorf("Failed to validate job spec. Based on --cpus-per-%s and --%ss-per-task requested number of cpus differ from -c/--cpus-per-task.", n, n)
			return false
		}
	}
	if g.perJob != 0 {
		if d.MinNodes != codec.NoVal && g.perJob < uint64(d.MinNodes) {
			p.errorf("Failed to validate job spec, --%ss < -N", n)
			return false
		}
		if d.MaxNodes != codec.NoVal && g.perJob < uint64(d.MaxNodes) {
			d.MaxNodes = uint32(g.perJob)
		}
	}
	return true
}

// parseGres22 is 22.05's _get_next_gres over "gres:name[:type][:count]"
// entries.
func parseGres22(in string) ([]tresEntry, bool) {
	var out []tresEntry
	rest := in
	for rest != "" {
		i := strings.Index(rest, "gres:")
		if i < 0 {
			return out, true
		}
		rest = rest[i+5:]
		tok := rest
		if c := strings.IndexByte(tok, ','); c >= 0 {
			tok, rest = tok[:c], rest[c+1:]
		} else {
			rest = ""
		}
		if tok == "" {
			continue
		}
		e := tresEntry{kind: "gres", cnt: 1}
		parts := strings.SplitN(tok, ":", 3)
		e.name = parts[0]
		switch len(parts) {
		case 3:
			if parts[1] == "" || parts[2] == "" {
				return out, false
			}
			e.typ = parts[1]
			v, ok := tresNumber(parts[2])
			if !ok {
				return out, false
			}
			e.cnt = v
		case 2:
			if parts[1] == "" {
				return out, false
			}
			if v, ok := tresNumber(parts[1]); ok {
				e.cnt = v
			} else {
				e.typ = parts[1]
			}
		}
		if e.cnt == 0 {
			continue
		}
		out = append(out, e)
	}
	return out, true
}
