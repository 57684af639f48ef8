package jobopt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// Value parsers of proc_args.c, parse_time.c and friends.

// strToMbytes is str_to_mbytes: a count with an optional K/M/G/T unit
// (and optional B), in MB; default unit MB, K rounds up.
func strToMbytes(arg string) (uint64, bool) {
	v, rest, ok := strtol(arg, 10)
	if !ok || v == -1<<63 || v == 1<<63-1 || v < 0 {
		return codec.NoVal64, false
	}
	endOnByte := func() bool {
		return len(rest) == 1 || len(rest) == 2 && (rest[1] == 'B' || rest[1] == 'b')
	}
	switch {
	case rest == "":
	case (rest[0] == 'k' || rest[0] == 'K') && endOnByte():
		v = (v + 1023) / 1024
	case (rest[0] == 'm' || rest[0] == 'M') && endOnByte():
	case (rest[0] == 'g' || rest[0] == 'G') && endOnByte():
		v *= 1024
	case (rest[0] == 't' || rest[0] == 'T') && endOnByte():
		v *= 1024 * 1024
	default:
		return codec.NoVal64, false
	}
	return uint64(v), true
}

func parseUint16(s string) (uint16, bool) {
	v, rest, ok := strtol(s, 10)
	if s == "" {
		ok, rest = true, ""
	}
	if !ok || rest != "" || v < 0 || v >= int64(codec.NoVal16) {
		return 0, false
	}
	return uint16(v), true
}

// validTimespec is _is_valid_timespec.
func validTimespec(s string) bool {
	digit, dash, colon := 0, 0, 0
	already := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			if !already {
				digit++
				already = true
			}
		case c == '-':
			already = false
			dash++
			if colon > 0 {
				return false
			}
		case c == ':':
			already = false
			colon++
		default:
			return false
		}
	}
	if digit == 0 || dash > 1 || colon > 2 {
		return false
	}
	if dash > 0 {
		return !(colon == 1 && digit < 3 || colon == 2 && digit < 4)
	}
	return !(colon == 1 && digit < 2 || colon == 2 && digit < 3)
}

// scanInts is sscanf("%d<sep>%d...") over the separators in seps: it
// stops at the first conversion that fails.
func scanInts(s string, seps []byte) []int {
	var out []int
	for i := 0; ; i++ {
		v, rest, ok := strtol(s, 10)
		if !ok {
			return out
		}
		out = append(out, cInt(v))
		if i >= len(seps) || rest == "" || rest[0] != seps[i] {
			return out
		}
		s = rest[1:]
	}
}

// timeStr2Secs is time_str2secs.
func timeStr2Secs(s string) uint32 {
	if s == "" {
		return codec.NoVal
	}
	if s == "-1" || strings.EqualFold(s, "INFINITE") || strings.EqualFold(s, "UNLIMITED") {
		return codec.Infinite
	}
	if !validTimespec(s) {
		return codec.NoVal
	}
	var d, h, m, sec int
	if strings.Contains(s, "-") {
		v := scanInts(s, []byte{'-', ':', ':'})
		get := func(i int) int {
			if i < len(v) {
				return v[i]
			}
			return 0
		}
		d, h, m, sec = get(0)*86400, get(1)*3600, get(2)*60, get(3)
	} else {
		v := scanInts(s, []byte{':', ':'})
		if len(v) == 3 {
			h, m, sec = v[0]*3600, v[1]*60, v[2]
		} else {
			// minutes[:seconds]
			mins, secs := 0, 0
			if len(v) > 0 {
				mins = v[0]
			}
			if len(v) > 1 {
				secs = v[1]
			}
			m, sec = mins*60, secs
		}
	}
	return uint32(int32(d + h + m + sec))
}

// timeStr2Mins is time_str2mins (seconds rounded up to minutes).
func timeStr2Mins(s string) uint32 {
	v := timeStr2Secs(s)
	if v != codec.Infinite && v != codec.NoVal {
		v = uint32(int32((int64(int32(v)) + 59) / 60))
	}
	return v
}

// parseMailType is parse_mail_type (INFINITE16 when invalid).
func parseMailType(arg string) uint16 {
	var rc uint16
	none := false
	for _, tok := range strtok(arg, ",") {
		switch strings.ToUpper(tok) {
		case "NONE":
			rc, none = 0, true
		case "ARRAY_TASKS":
			rc |= 1 << 9
		case "BEGIN":
			rc |= 1 << 0
		case "END":
			rc |= 1 << 1
		case "FAIL":
			rc |= 1 << 2
		case "INVALID_DEPEND":
			rc |= 1 << 10
		case "REQUEUE":
			rc |= 1 << 3
		case "ALL":
			rc |= 1<<10 | 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<8
		case "STAGE_OUT":
			rc |= 1 << 8
		case "TIME_LIMIT":
			rc |= 1 << 4
		case "TIME_LIMIT_90":
			rc |= 1 << 5
		case "TIME_LIMIT_80":
			rc |= 1 << 6
		case "TIME_LIMIT_50":
			rc |= 1 << 7
		}
		if none {
			break
		}
	}
	if rc == 0 && !none {
		return codec.Infinite16
	}
	return rc
}

var signalNames = []struct {
	name string
	val  int
}{
	{"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"ABRT", 6}, {"KILL", 9}, {"ALRM", 14}, {"TERM", 15},
	{"CHLD", 17}, {"USR1", 10}, {"USR2", 12}, {"PIPE", 13}, {"URG", 23}, {"CONT", 18}, {"STOP", 19},
	{"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"XCPU", 24},
}

// sigName2Num is sig_name2num (0 when unknown).
func sigName2Num(s string) int {
	if v, rest, ok := strtol(s, 10); ok {
		if isWhitespace(rest) {
			return cInt(v)
		}
		return 0
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if hasPrefixFold(t, "SIG") {
		t = t[3:]
	}
	for _, sg := range signalNames {
		if hasPrefixFold(t, sg.name) && isWhitespace(t[len(sg.name):]) {
			return sg.val
		}
	}
	return 0
}

// signalOpts is get_signal_opts: [R|B...:]sig[@time].
func (p *parser) signalOpts(arg string) bool {
	o := &p.o
	if hasPrefixFold(arg, "R") {
		o.warnFlags |= 1 << 8 // KILL_JOB_RESV
		arg = arg[1:]
	}
	if p.client == cSbatch {
		if hasPrefixFold(arg, "B") {
			o.warnFlags |= 1 // KILL_JOB_BATCH
			arg = arg[1:]
		}
		if hasPrefixFold(arg, "R") {
			o.warnFlags |= 1 << 8
			arg = arg[1:]
		}
	}
	arg = strings.TrimPrefix(arg, ":")
	sig, at, hasAt := strings.Cut(arg, "@")
	num := int64(uint16(sigName2Num(sig)))
	if num < 1 {
		return false
	}
	o.warnSignal = uint16(num)
	if !hasAt {
		o.warnTime = 60
		return true
	}
	v, rest, _ := strtol(at, 10)
	if v < 0 || v > 0xffff {
		return false
	}
	o.warnTime = uint16(v)
	return rest == ""
}

// strToNodes is str_to_nodes.
func strToNodes(s string) (int, string) {
	v, rest, ok := strtol(s, 10)
	if !ok {
		return -1, s
	}
	if rest != "" && (rest[0] == 'k' || rest[0] == 'K') {
		v *= 1024
		rest = rest[1:]
	}
	if rest != "" && (rest[0] == 'm' || rest[0] == 'M') {
		v *= 1024 * 1024
		rest = rest[1:]
	}
	if v < 0 || v > 2147483647 {
		return -1, rest
	}
	return int(v), rest
}

// verifyNodeCount is verify_node_count: N, N-M, or (23.02+) a list of
// sizes "2,4,8-10" or "1-8:2".
func (p *parser) verifyNodeCount(arg string) (mn, mx int, sizes cstr, ok bool) {
	if p.rel >= r24 && strings.ContainsAny(arg, ",:") {
		maxv := int64(0)
		for _, tok := range strtok(arg, ",-:") {
			v, rest, good := strtol(tok, 10)
			if !good || rest != "" || v >= maxJobSizeBitmap {
				p.errorf("\"%s\" is not a valid node count", tok)
				return 0, 0, null, false
			}
			if v > maxv {
				maxv = v
			}
		}
		bits, good := bitUnfmt(arg, int(maxv)+1)
		if !good {
			p.errorf("\"%s\" is not a valid node count", arg)
			return 0, 0, null, false
		}
		first, last := -1, -1
		for i, b := range bits {
			if b {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		return first, last, some(bitFmtFull(bits)), true
	}
	if i := strings.IndexByte(arg, '-'); i >= 0 {
		minS := arg[:i]
		mn, left := strToNodes(minS)
		if !isWhitespace(left) {
			p.errorf("\"%s\" is not a valid node count", minS)
			return 0, 0, null, false
		}
		if mn < 0 {
			mn = 1
		}
		maxS := arg[i+1:]
		mx, left = strToNodes(maxS)
		if !isWhitespace(left) {
			p.errorf("\"%s\" is not a valid node count", maxS)
			return 0, 0, null, false
		}
		if mx != 0 && mx < mn {
			p.errorf("Maximum node count %d is less than minimum node count %d", mx, mn)
			return 0, 0, null, false
		}
		return mn, mx, null, true
	}
	n, left := strToNodes(arg)
	if !isWhitespace(left) || n < 0 {
		p.errorf("\"%s\" is not a valid node count", arg)
		return 0, 0, null, false
	}
	return n, n, null, true
}

const maxJobSizeBitmap = 64 * 1024

// bitUnfmt is bit_unfmt for node-size lists: "a,b-c,d-e:step".
func bitUnfmt(s string, n int) ([]bool, bool) {
	bits := make([]bool, n)
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		rng, stepS, hasStep := strings.Cut(part, ":")
		step := 1
		if hasStep {
			v, rest, ok := strtol(stepS, 10)
			if !ok || rest != "" || v <= 0 {
				return nil, false
			}
			step = int(v)
		}
		a, b, isRange := strings.Cut(rng, "-")
		lo, rest, ok := strtol(a, 10)
		if !ok || rest != "" {
			return nil, false
		}
		hi := lo
		if isRange {
			hi, rest, ok = strtol(b, 10)
			if !ok || rest != "" || hi < lo {
				return nil, false
			}
		}
		if lo < 0 || hi >= int64(n) {
			return nil, false
		}
		for i := lo; i <= hi; i += int64(step) {
			bits[i] = true
		}
	}
	return bits, true
}

// bitFmtFull is bit_fmt_full: "1,3-5".
func bitFmtFull(bits []bool) string {
	var b strings.Builder
	for i := 0; i < len(bits); i++ {
		if !bits[i] {
			continue
		}
		j := i
		for j+1 < len(bits) && bits[j+1] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if i == j {
			fmt.Fprintf(&b, "%d", i)
		} else {
			fmt.Fprintf(&b, "%d-%d", i, j)
		}
		i = j
	}
	return b.String()
}

// verifyDist is verify_dist_type.
func (p *parser) verifyDist(arg string) (dist, plane uint32, ok bool) {
	if hasPrefixFold(arg, "plane") {
		sz := ""
		if i := strings.IndexByte(arg, '='); i >= 0 {
			sz = arg[i+1:]
		} else if v, set := p.getenv("SLURM_DIST_PLANESIZE"); set {
			sz = v
		}
		v, rest, good := strtol(sz, 10)
		if sz == "" || !good || rest != "" || v <= 0 || v > 2147483647 {
			p.errorf("Invalid plane size or size not specified")
			return 0, 0, false
		}
		return distPlane, uint32(v), true
	}
	if arg == "" || arg[0] == ',' {
		return 0, 0, false
	}
	base, flagStr, _ := strings.Cut(arg, ",")
	toks := strtok(base, ":")
	if len(toks) == 0 {
		return 0, 0, false
	}
	if len(toks) > 3 {
		return 0, 0, false
	}
	var out []string
	sock := ""
	for i, t := range toks {
		if t == "*" {
			switch i {
			case 0:
				t = "block"
			case 1:
				sock = "cyclic"
				t = sock
			case 2:
				t = sock
			}
		} else if i == 1 {
			sock = t
		}
		out = append(out, t)
	}
	s := strings.ToLower(strings.Join(out, ":"))
	level := map[string]uint32{"cyclic": 1, "block": 2, "fcyclic": 3}
	parts := strings.Split(s, ":")
	var r uint32
	good := true
	switch {
	case s == "arbitrary" || s == "hostfile":
		r = distArbitrary
	default:
		for i, part := range parts {
			l, known := level[part]
			if !known || i == 0 && l == 3 {
				good = false
				break
			}
			r |= l << (4 * i)
		}
	}
	if !good {
		// "pack"/"nopack" alone, on top of the default distribution.
		r = distUnknown
		switch s {
		case "nopack":
			r |= 0x400000
		case "pack":
			r |= 0x800000
		default:
			return 0, 0, false
		}
	}
	if flagStr != "" {
		switch strings.ToLower(flagStr) {
		case "nopack":
			r |= 0x400000
		case "pack":
			r |= 0x800000
		default:
			return 0, 0, false
		}
	}
	return r, 0, true
}

// resourceRange is get_resource_arg_range (fatal on bad input).
func (p *parser) resourceRange(arg, what string) (mn int, full bool) {
	if arg == "" || arg[0] == '*' {
		return 1, true
	}
	v, rest, _ := strtol(arg, 10)
	if rest != "" && (rest[0] == 'k' || rest[0] == 'K') {
		v *= 1024
		rest = rest[1:]
	} else if rest != "" && (rest[0] == 'm' || rest[0] == 'M') {
		v *= 1048576
		rest = rest[1:]
	}
	if rest != "" && rest[0] != '-' || v < 0 {
		p.errorf("Invalid numeric value \"%s\" for %s.", arg, what)
		p.exit(1)
	}
	if v > 2147483647 {
		p.errorf("Numeric argument (%d) too large for %s.", v, what)
		p.exit(1)
	}
	mn = int(v)
	if rest == "" {
		return mn, false
	}
	rest = rest[1:]
	w, rest2, _ := strtol(rest, 10)
	if rest2 != "" && (rest2[0] == 'k' || rest2[0] == 'K') {
		w *= 1024
		rest2 = rest2[1:]
	} else if rest2 != "" && (rest2[0] == 'm' || rest2[0] == 'M') {
		w *= 1048576
		rest2 = rest2[1:]
	}
	if rest2 != "" && rest2[0] != '-' || w <= 0 {
		p.errorf("Invalid numeric value \"%s\" for %s.", arg, what)
		p.exit(1)
	}
	if w > 2147483647 {
		p.errorf("Numeric argument (%d) too large for %s.", w, what)
		p.exit(1)
	}
	return mn, mn == 1 && w == 2147483647
}

// socketCoreThread is verify_socket_core_thread_count (-B S[:C[:T]]).
func (p *parser) socketCoreThread(arg string) bool {
	parts := strings.SplitN(arg, ":", 4)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	// Each field is cut at 47 characters, as the client's buffers.
	for i := range parts[:3] {
		if len(parts[i]) > 47 {
			parts[i] = parts[i][:47]
		}
	}
	o := &p.o
	if p.client == cSrun && o.cpuBindType&(0x8|0x4|0x2) == 0 {
		switch strings.Count(arg, ":") {
		case 0:
			o.cpuBindType |= 0x8
		case 1:
			o.cpuBindType |= 0x4
		default:
			o.cpuBindType |= 0x2
		}
	}
	set := func(dst *int, s, what string) {
		v, full := p.resourceRange(s, what)
		if full {
			v = noValInt
		}
		*dst = v
	}
	set(&o.socketsPerNode, parts[0], "first arg of -B")
	set(&o.coresPerSocket, parts[1], "second arg of -B")
	set(&o.threadsPerCore, parts[2], "third arg of -B")
	return true
}

// cpuFreq is cpu_freq_verify_cmdline with the default CpuFreqGovernors
// (OnDemand, Performance, UserSpace) and no CpuFreqDef.
func (p *parser) cpuFreq(arg string) bool {
	o := &p.o
	o.cpuFreqMin, o.cpuFreqMax, o.cpuFreqGov = codec.NoVal, codec.NoVal, codec.NoVal
	var p1, p2, p3 string
	has2, has3 := false, false
	if i := strings.IndexByte(arg, ':'); i >= 0 {
		p3, has3 = arg[i+1:], true
	}
	if i := strings.IndexByte(arg, '-'); i >= 0 {
		p1 = arg[:i]
		if c := strings.IndexByte(arg, ':'); c >= 0 {
			if c > i {
				p2 = arg[i+1 : c]
			}
		} else {
			p2 = arg[i+1:]
		}
		has2 = true
	} else if c := strings.IndexByte(arg, ':'); c >= 0 {
		p1 = arg[:c]
	} else {
		p1 = arg
	}
	rc := true
	checkFreq := func(s string) uint32 {
		switch {
		case hasPrefixFold(s, "lo"):
			return 0x80000001
		case hasPrefixFold(s, "him1") || hasPrefixFold(s, "highm1"):
			return 0x80000004
		case hasPrefixFold(s, "hi"):
			return 0x80000003
		case hasPrefixFold(s, "med"):
			return 0x80000002
		}
		v, rest, _ := strtoul(s)
		if rest != "" {
			p.errorf("unrecognized --cpu-freq argument \"%s\"", s)
			return 0
		}
		return uint32(v)
	}
	func() {
		if g := cpuFreqGov(p1); g != 0 {
			if has3 {
				p.errorf("governor cannot be specified twice %s{-}:%s in --cpu-freq", p1, p3)
				rc = false
				return
			}
			o.cpuFreqGov = g
		} else {
			f := checkFreq(p1)
			if f == 0 {
				rc = false
				return
			}
			o.cpuFreqMax = f
		}
		if has2 {
			if !has3 && p.rel >= r24 {
				p.errorf("You must explicitly choose a governor when defining a range. Please specify only one value for the desired frequency (p1) or choose a specific governor (p3).")
				rc = false
				return
			}
			f := checkFreq(p2)
			if f == 0 {
				rc = false
				return
			}
			o.cpuFreqMin = o.cpuFreqMax
			o.cpuFreqMax = f
			if o.cpuFreqMax < o.cpuFreqMin {
				p.errorf("min cpu-frec (%s) must be < max cpu-freq (%s)", p1, p2)
				rc = false
				return
			}
		}
		if has3 {
			g := cpuFreqGov(p3)
			if g == 0 {
				p.errorf("illegal governor: %s on --cpu-freq", p3)
				rc = false
				return
			}
			if !has2 && p.rel == r22 {
				p.errorf("gov on cpu-frec (%s) illegal without max", p3)
				rc = false
				return
			}
			if p.rel == r22 {
				o.cpuFreqGov = g
				return
			}
			if !has2 {
				if g != 0x80800000 {
					p.errorf("gov on cpu-frec (%s) illegal without max", p3)
					rc = false
					return
				}
			} else if g == 0x80800000 {
				p.errorf("%s governor does not support a range. Please specify only one value for the desired frequency (p1) or choose a different governor.", p3)
				rc = false
				return
			}
			o.cpuFreqGov = g
		}
		if p.rel >= r24 && o.cpuFreqGov == codec.NoVal && !has2 && !has3 {
			o.cpuFreqGov = 0x80800000
		}
	}()
	if o.cpuFreqGov != codec.NoVal {
		const allowed = 0x84000000 | 0x82000000 | 0x80800000
		if (o.cpuFreqGov&allowed)&^0x80000000 == 0 {
			p.errorf("governor of %s is not allowed in slurm.conf", arg)
			o.cpuFreqGov = codec.NoVal
			rc = false
		}
	}
	return rc
}

func cpuFreqGov(s string) uint32 {
	var rc uint32
	switch {
	case hasPrefixFold(s, "co"):
		rc = 0x88000000
	case hasPrefixFold(s, "perf"):
		rc = 0x82000000
	case hasPrefixFold(s, "pow"):
		rc = 0x81000000
	case hasPrefixFold(s, "user"):
		rc = 0x80800000
	case hasPrefixFold(s, "onde"):
		rc = 0x84000000
	case hasPrefixFold(s, "sche"):
		rc = 0x80400000
	}
	if rc == 0 {
		return 0
	}
	return rc | 0x80000000
}

// validAcctgFreq is validate_acctg_freq: every token must name a
// frequency for one of the profile types.
func (p *parser) validAcctgFreq(s string) bool {
	ok := true
	getInt := func(x string) bool { _, _, good := strtol(x, 10); return good }
	for _, tok := range strtok(s, ",") {
		valid := false
		for _, key := range []string{"energy=", "", "filesystem=", "network="} {
			if key == "" {
				if getInt(tok) {
					valid = true
				} else if i := indexFold(tok, "task="); i >= 0 && getInt(tok[i+5:]) {
					valid = true
				}
			} else if i := indexFold(tok, key); i >= 0 && getInt(tok[i+len(key):]) {
				valid = true
			}
			if valid {
				break
			}
		}
		if !valid {
			p.errorf("Invalid --acctg-freq specification: %s", tok)
			ok = false
		}
	}
	return ok
}

func profileFromString(s string) uint32 {
	switch {
	case containsFold(s, "none"):
		return 1
	case containsFold(s, "all"):
		return 0xffffffff
	}
	var v uint32
	if containsFold(s, "energy") {
		v |= 2
	}
	if containsFold(s, "task") {
		v |= 4
	}
	if containsFold(s, "lustre") {
		v |= 8
	}
	if containsFold(s, "network") {
		v |= 16
	}
	return v
}

func x11Flags(s string) uint16 {
	switch strings.ToLower(s) {
	case "all":
		return 1
	case "batch":
		return 2
	case "first":
		return 4
	case "last":
		return 8
	}
	return 0
}

// powerFlags is 22.05's power_flags_id.
func powerFlags(s string) uint8 {
	var v uint8
	for _, tok := range strtok(s, ",") {
		if strings.EqualFold(tok, "level") {
			v |= 1
		}
	}
	return v
}

// gresPrepend is gres_prepend_tres_type: "gpu:2,nic" -> "gres/gpu:2,gres/nic"
// (22.05: "gres:").
func gresPrepend(s string, r rel) string {
	pre := "gres/"
	if r == r22 {
		pre = "gres:"
	}
	out := pre + strings.ReplaceAll(s, ",", ","+pre)
	return strings.ReplaceAll(out, pre+pre, pre)
}

// xfmtTRES is xfmt_tres: prefix each comma separated entry.
func xfmtTRES(dest cstr, prefix string, src cstr) cstr {
	if !src.ok || src.s == "" {
		return dest
	}
	out, sep := "", ""
	if dest.ok {
		out, sep = dest.s, ","
	}
	for _, tok := range strtok(src.s, ",") {
		out += sep + prefix + ":" + tok
		sep = ","
	}
	return some(out)
}

func (p *parser) gresFlags(arg *string) error {
	o := &p.o
	o.jobFlags &^= gresDisableBind | gresEnforceBind
	if p.rel == r22 {
		a := ""
		if arg != nil {
			a = *arg
		}
		switch {
		case strings.EqualFold(a, "disable-binding"):
			o.jobFlags |= gresDisableBind
		case strings.EqualFold(a, "enforce-binding"):
			o.jobFlags |= gresEnforceBind
		default:
			p.errorf("Invalid --gres-flags specification")
			return errOpt
		}
		return nil
	}
	o.jobFlags &^= gresOneTaskPerShare
	if arg == nil {
		return errOpt
	}
	for _, tok := range strtok(*arg, ",") {
		switch strings.ToLower(tok) {
		case "allow-task-sharing":
			if p.client != cSrun {
				p.errorf("--gres-flags=allow-task-sharing is only used with srun.")
				return errOpt
			}
			o.jobFlags |= gresAllowTaskSharing
		case "disable-binding":
			o.jobFlags |= gresDisableBind
		case "enforce-binding":
			o.jobFlags |= gresEnforceBind
		case "multiple-tasks-per-sharing":
			o.jobFlags |= gresMultTasksPerShr
		case "one-task-per-sharing":
			o.jobFlags |= gresOneTaskPerShare
		default:
			p.errorf("Invalid --gres-flags specification: %s", tok)
			return errOpt
		}
	}
	if o.jobFlags&gresDisableBind != 0 && o.jobFlags&gresEnforceBind != 0 {
		p.errorf("Invalid --gres-flags combo: disable-binding and enforce-binding are mutually exclusive.")
		return errOpt
	}
	if o.jobFlags&gresMultTasksPerShr != 0 && o.jobFlags&gresOneTaskPerShare != 0 {
		p.errorf("Invalid --gres-flags combo: one-task-per-sharing and multiple-tasks-per-sharing are mutually exclusive.")
		return errOpt
	}
	if o.jobFlags&gresOneTaskPerShare != 0 {
		// Needs SelectTypeParameters=MULTIPLE_SHARING_GRES_PJ, which
		// the clients' configuration here does not set.
		p.errorf("In order to use --gres-flags=one-task-per-sharing you must also have SelectTypeParameters=MULTIPLE_SHARING_GRES_PJ in your slurm.conf")
		return errOpt
	}
	return nil
}

// memBind is slurm_verify_mem_bind.
func (p *parser) memBind(arg string) error {
	o := &p.o
	const bits = 0x02 | 0x04 | 0x20 | 0x08 | 0x10
	b := []byte(arg)
	for i := range b {
		if b[i] == ',' && !(i+1 < len(b) && isDigit(b[i+1])) {
			b[i] = ';'
		}
	}
	for _, tok := range strings.Split(string(b), ";") {
		lt := strings.ToLower(tok)
		switch {
		case lt == "help":
			p.exit(0)
		case lt == "p" || lt == "prefer":
			o.memBindType |= 0x80
		case lt == "nosort":
			o.memBindType &^= 0x40
		case lt == "sort":
			o.memBindType |= 0x40
		case lt == "q" || lt == "quiet":
			o.memBindType &^= 0x01
		case lt == "v" || lt == "verbose":
			o.memBindType |= 0x01
		case lt == "no" || lt == "none":
			o.memBindType = o.memBindType&^bits | 0x02
			o.memBind = null
		case lt == "rank":
			o.memBindType = o.memBindType&^bits | 0x04
			o.memBind = null
		case lt == "local":
			o.memBindType = o.memBindType&^bits | 0x20
			o.memBind = null
		case strings.HasPrefix(lt, "map_mem") || strings.HasPrefix(lt, "mapmem") ||
			strings.HasPrefix(lt, "mask_mem") || strings.HasPrefix(lt, "maskmem"):
			mask := strings.HasPrefix(lt, "mask")
			kind, flag := "map_mem", uint16(0x08)
			if mask {
				kind, flag = "mask_mem", 0x10
			}
			list := ""
			if i := strings.IndexAny(tok, ":="); i >= 0 {
				list = tok[i+1:]
				if j := strings.IndexAny(list, ":="); j >= 0 {
					list = list[:j]
				}
			}
			o.memBindType = o.memBindType&^bits | flag
			o.memBind = null
			if list == "" {
				p.errorf("missing list for \"--mem-bind=%s:<list>\"", kind)
				return errOpt
			}
			v, ok := p.expandMult(list, kind, mask)
			if !ok {
				return errOpt
			}
			o.memBind = some(v)
		default:
			p.errorf("unrecognized --mem-bind argument \"%s\"", tok)
			return errOpt
		}
	}
	return nil
}

func (p *parser) expandMult(list, kind string, mask bool) (string, bool) {
	var out []string
	for _, tok := range strtok(list, ",") {
		if mask {
			tok = strings.TrimPrefix(tok, "0x")
		}
		count := int64(1)
		if i := strings.IndexByte(tok, '*'); i >= 0 {
			for _, c := range []byte(tok[i+1:]) {
				if !isDigit(c) {
					p.errorf("Failed to validate number: %s, the offending character is %c", tok[i:], c)
					return "", false
				}
			}
			v, rest, _ := strtol(tok[i+1:], 10)
			if v <= 0 || rest != "" {
				p.errorf("Invalid %s multiplier: %s", kind, tok[i+1:])
				return "", false
			}
			count = v
			tok = tok[:i]
		}
		for _, c := range []byte(tok) {
			if !(isDigit(c) || mask && hexVal(c) < 16) {
				p.errorf("Failed to validate number: %s, the offending character is %c", tok, c)
				return "", false
			}
		}
		for i := int64(0); i < count && i < 1<<16; i++ {
			out = append(out, tok)
		}
	}
	if len(out) == 0 {
		p.errorf("Failed to expand list: '%s'", list)
		return "", false
	}
	return strings.Join(out, ","), true
}

func (p *parser) memUpdate(arg string) error {
	margin, delay, ok := strings.Cut(arg, "@")
	if !ok {
		p.errorf("--mem-update requires MARGIN@DELAY format")
		return errOpt
	}
	m, rest, _ := strtol(margin, 10)
	d := int64(int32(timeStr2Mins(delay)))
	if m <= 0 || m > 65535 || d > 65535 || d <= 0 || uint32(d) == codec.NoVal || rest != "" {
		p.errorf("Invalid --mem-update specification")
		return errOpt
	}
	p.o.memUpdateMargin, p.o.memUpdateDelay = uint16(m), uint16(d)
	return nil
}

// tresBindValid is tres_bind_verify_cmdline for gres/gpu bindings.
func tresBindValid(s string, r rel) bool {
	for _, tok := range strings.Split(s, "+") {
		if tok == "" {
			continue
		}
		name, arg, ok := strings.Cut(tok, ":")
		if !ok {
			return false
		}
		if r > r22 && !strings.HasPrefix(name, "gres/") || r == r22 && name != "gpu" {
			return false
		}
		a := arg
		if hasPrefixFold(a, "verbose,") {
			a = a[8:]
		}
		validNum := func(x string) bool {
			v, _, _ := strtol(x, 0)
			return v >= 0 && v != 1<<63-1
		}
		switch {
		case hasPrefixFold(a, "closest"), hasPrefixFold(a, "none"):
		case hasPrefixFold(a, "map_gpu:"), hasPrefixFold(a, "map:"):
			if len(a) < 8 || !validNumList(a[8:], false) {
				return false
			}
		case hasPrefixFold(a, "mask_gpu:"), hasPrefixFold(a, "mask:"):
			if len(a) < 9 || !validNumList(a[9:], true) {
				return false
			}
		case hasPrefixFold(a, "per_task:"):
			if !validNum(a[9:]) {
				return false
			}
		case hasPrefixFold(a, "single:"):
			if !validNum(a[7:]) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func validNumList(s string, hex bool) bool {
	base := 10
	if hex {
		base = 16
	}
	for _, tok := range strtok(s, ",") {
		if hex {
			tok = strings.TrimPrefix(tok, "0x")
		}
		for _, c := range []byte(tok) {
			if hexVal(c) >= base && c != '*' {
				return false
			}
		}
		v, rest, _ := strtol(tok, base)
		if v < 0 || rest != "" && rest[0] != '*' {
			return false
		}
		if rest != "" {
			w, rest2, _ := strtol(rest[1:], 0)
			if w < 0 || rest2 != "" {
				return false
			}
		}
	}
	return true
}

// tresFreqValid is tres_freq_verify_cmdline for "gpu:..." values.
func tresFreqValid(s string) bool {
	for _, tok := range strings.Split(s, ";") {
		name, arg, ok := strings.Cut(tok, ":")
		if !ok || name != "gpu" || arg == "" {
			return false
		}
		for _, f := range strings.Split(arg, ",") {
			key, val, kv := strings.Cut(f, "=")
			if kv {
				if key != "memory" && key != "verbose" {
					return false
				}
				f = val
			}
			switch strings.ToLower(f) {
			case "low", "medium", "high", "highm1", "verbose":
				continue
			}
			if _, err := strconv.ParseUint(f, 10, 32); err != nil {
				return false
			}
		}
	}
	return true
}

// cpuFreqCmdline is cpu_freq_to_cmdline (22.05 puts it in
// SLURM_CPU_FREQ_REQ).
func cpuFreqCmdline(mn, mx, gov uint32) string {
	name := func(v uint32) string {
		switch v {
		case 0x80000001:
			return "Low"
		case 0x80000002:
			return "Medium"
		case 0x80000004:
			return "Highm1"
		case 0x80000003:
			return "High"
		case 0x88000000:
			return "Conservative"
		case 0x82000000:
			return "Performance"
		case 0x81000000:
			return "PowerSave"
		case 0x80800000:
			return "UserSpace"
		case 0x84000000:
			return "OnDemand"
		case 0x80400000:
			return "SchedUtil"
		}
		if v&0x80000000 != 0 {
			return "Unknown"
		}
		return strconv.FormatUint(uint64(v), 10)
	}
	for _, v := range []*uint32{&mn, &mx, &gov} {
		if *v == 0 {
			*v = codec.NoVal
		}
	}
	nv := codec.NoVal
	switch {
	case mn == nv && mx == nv && gov == nv:
		return ""
	case mn != nv && mx != nv && gov != nv:
		return name(mn) + "-" + name(mx) + ":" + name(gov)
	case mn != nv && mx != nv:
		return name(mn) + "-" + name(mx)
	case mx != nv:
		return name(mx)
	}
	return name(gov)
}
