// Package conf reads the frontend's cluster definition. It uses slurm.conf
// syntax on purpose: a site describes nodes and partitions with the same
// NodeName= and PartitionName= lines it already has (and a differential
// test can feed one file to us and to a real slurmctld). Keys the
// frontend does not use are kept and ignored; frontend-only settings use
// the "Frontend" prefix (FrontendListen, FrontendStateDir, FrontendMungeKey).
// ParseFile reads a file and follows its Include lines as slurmctld does
// (include.go); Parse reads from a reader and refuses them.
package conf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// Infinite marks an unlimited time or count (Slurm's INFINITE).
const Infinite = 0xFFFFFFFF

// Node is one NodeName= definition expanded to a single node.
type Node struct {
	Name           string
	Addr           string
	Hostname       string
	CPUs           uint16
	Boards         uint16
	Sockets        uint16 // total sockets
	CoresPerSocket uint16
	ThreadsPerCore uint16
	RealMemory     uint64 // MiB
	TmpDisk        uint32
	Gres           string // e.g. "gpu:4"
	Features       string
	Weight         uint32
	State          string // configured State= (UNKNOWN, IDLE, DOWN, FUTURE, ...)
	Port           uint16 // its slurmd's port (Port=); 0: SlurmdPort
}

// Partition is one PartitionName= definition.
type Partition struct {
	Name           string
	Nodes          []string // expanded node names
	NodesExpr      string   // as written
	Default        bool
	Hidden         bool
	State          string // UP, DOWN, DRAIN, INACTIVE
	MaxTime        uint32 // minutes or Infinite
	DefaultTime    uint32 // minutes or NoVal
	MaxNodes       uint32
	MinNodes       uint32
	PriorityTier   uint16
	PriorityFactor uint16
	OverSubscribe  string
	AllowAccounts  string
	AllowGroups    string
	AllowQos       string
	DefMemPerCPU   uint64
	MaxMemPerCPU   uint64

	// Frontend-only keys of a PartitionName line (a Backend.AI site):
	// the resource group the partition's jobs run in (default: the
	// partition's name), the project they are counted on unless the job
	// names one (-A), and the image of jobs without --container. A
	// partition without Nodes= has the resource group's agents.
	ResourceGroup string // FrontendResourceGroup=
	Project       string // FrontendProject=
	Image         string // FrontendImage=
}

// Config is the parsed file. Keys maps lower-cased keys to the last
// value seen, for settings read elsewhere (ClusterName, SlurmctldPort …).
type Config struct {
	Keys       map[string]string
	Order      []string // keys in first-seen order, for printing
	Nodes      []Node
	Partitions []Partition
}

// Get returns a key's value (case-insensitive) or def.
func (c *Config) Get(key, def string) string {
	if v, ok := c.Keys[strings.ToLower(key)]; ok {
		return v
	}
	return def
}

// Set sets a key, as a command-line flag overriding the file does.
func (c *Config) Set(key, val string) {
	k := strings.ToLower(key)
	if _, ok := c.Keys[k]; !ok {
		c.Order = append(c.Order, key)
	}
	c.Keys[k] = val
}

// Node returns the node named name, or nil.
func (c *Config) Node(name string) *Node {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	return nil
}

// New returns an empty config.
func New() *Config { return &Config{Keys: map[string]string{}} }

// Bounds on what one configuration may ask for, so that no file (or
// fuzzer) can make the parser allocate without limit.
const (
	// MaxNodes is Slurm's MAX_SLURM_NODES (slurm.h): slurmctld creates no
	// node record past it (node_conf.c) and one hostlist range may not
	// name more (hostlist.h MAX_RANGE).
	MaxNodes = 65536
	// maxHostNames bounds the names all host lists of one configuration
	// expand to together (NodeName, NodeAddr, NodeHostname and every
	// partition's Nodes=), and maxHostBytes their total length.
	maxHostNames = 32 * MaxNodes
	maxHostBytes = 64 << 20
)

// pos is where a line starts: "file:line", or "line N" for Parse.
type pos struct {
	file string
	line int
}

func (p pos) String() string {
	if p.file == "" {
		return fmt.Sprintf("line %d", p.line)
	}
	return fmt.Sprintf("%s:%d", p.file, p.line)
}

// parser holds the state one parse shares across included files: the
// NodeName/PartitionName DEFAULT lines, the host list budget and where
// each node and partition was defined (for error messages).
type parser struct {
	c            *Config
	nodeDefaults map[string]string
	partDefaults map[string]string
	names, bytes int // host list budget left
	nodeAt       map[string]pos
	partAt       []pos
	defaultAt    *pos
	inc          *includer // nil: Include is refused (Parse)
}

func newParser() *parser {
	return &parser{
		c: New(), nodeDefaults: map[string]string{}, partDefaults: map[string]string{},
		names: maxHostNames, bytes: maxHostBytes, nodeAt: map[string]pos{},
	}
}

// Parse reads slurm.conf syntax from r.
//
// r has no path, so Parse cannot follow Include: an Include line is an
// error saying to use ParseFile. It does not fall back to the working
// directory because slurmctld never resolves an Include against its
// working directory (a relative name is taken from slurm.conf's own
// directory, see ParseFile), and a daemon's working directory is
// usually "/", so a guess would read a different file than slurmctld
// reads from the same slurm.conf. Nor does it open absolute names: a
// parse fed from memory (tests, fuzzing, a config piped in) should not
// read files from disk as a side effect.
func Parse(r io.Reader) (*Config, error) {
	p := newParser()
	if err := p.parse(r, ""); err != nil {
		return nil, err
	}
	return p.finish()
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

// parse reads one file (name is "" for Parse's reader). Lines ending in
// a backslash continue on the next line; '#' starts a comment.
func (p *parser) parse(r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line, start := 0, 0
	var pending string
	continued := false
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		if !continued {
			start = line
		}
		if t := strings.TrimRight(text, " \t\r\v\f"); strings.HasSuffix(t, "\\") {
			// Joined with a space (slurmctld joins with none; the
			// space only keeps "A=b\" + "C=d" two keys).
			if piece := strings.TrimSuffix(t, "\\"); piece != "" {
				pending += piece + " "
			}
			continued = true
			continue
		}
		text = pending + text
		pending, continued = "", false
		if err := p.logical(pos{name, start}, text); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", pos{name, line + 1}, err)
	}
	if continued { // the last line ended in a backslash
		return p.logical(pos{name, start}, pending)
	}
	return nil
}

// logical handles one line after comments and continuations. Errors
// name the file and line.
func (p *parser) logical(at pos, raw string) error {
	text := strings.TrimSpace(raw)
	if text == "" {
		return nil
	}
	// slurmctld (parse_config.c, _parse_include_directive) takes a line
	// as an Include when it begins, in any case, with "include" and then
	// whitespace; an indented one is no directive and fails to parse.
	if len(text) >= len("include") && strings.EqualFold(text[:len("include")], "include") &&
		(len(text) == len("include") || isSpace(text[len("include")])) {
		if isSpace(raw[0]) {
			return fmt.Errorf("%s: Include must start at the beginning of the line (slurmctld does not read an indented Include)", at)
		}
		return p.include(at, text[len("include"):])
	}
	kv, err := fields(text)
	if err != nil {
		return fmt.Errorf("%s: %v", at, err)
	}
	c := p.c
	switch strings.ToLower(kv[0][0]) {
	case "nodename":
		if strings.EqualFold(kv[0][1], "DEFAULT") {
			merge(p.nodeDefaults, kv[1:])
			return nil
		}
		nodes, err := p.parseNodes(kv)
		if err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		for _, n := range nodes {
			if first, dup := p.nodeAt[n.Name]; dup {
				return fmt.Errorf("%s: node %s defined twice (first at %s)", at, n.Name, first)
			}
			p.nodeAt[n.Name] = at
		}
		c.Nodes = append(c.Nodes, nodes...)
	case "partitionname":
		if strings.EqualFold(kv[0][1], "DEFAULT") {
			merge(p.partDefaults, kv[1:])
			return nil
		}
		part, err := p.parsePartition(kv)
		if err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		for i, q := range c.Partitions {
			if q.Name == part.Name {
				return fmt.Errorf("%s: partition %s defined twice (first at %s)", at, part.Name, p.partAt[i])
			}
		}
		if part.Default {
			if p.defaultAt != nil {
				return fmt.Errorf("%s: more than one default partition (the other at %s)", at, *p.defaultAt)
			}
			p.defaultAt = &at
		}
		c.Partitions = append(c.Partitions, part)
		p.partAt = append(p.partAt, at)
	default:
		for _, kv := range kv {
			if strings.EqualFold(kv[0], "include") {
				// slurmctld rejects "Include=" as an unknown key; ignoring
				// it like other unknown keys would hide what it meant to add.
				return fmt.Errorf("%s: Include takes a file name after whitespace (Include FILE), not %s=", at, kv[0])
			}
			c.Set(kv[0], kv[1])
		}
	}
	return nil
}

// finish checks what needs the whole configuration: every partition
// names known nodes.
func (p *parser) finish() (*Config, error) {
	// Nodes=ALL: every node the configuration defines (one list, shared
	// by every such partition). With no nodes defined it stays empty and
	// means every node the engine reports (ctld's cluster).
	var all []string
	for i := range p.c.Partitions {
		part := &p.c.Partitions[i]
		if part.NodesExpr != "ALL" || len(p.c.Nodes) == 0 {
			continue
		}
		if all == nil {
			all = make([]string, len(p.c.Nodes))
			for j, n := range p.c.Nodes {
				all[j] = n.Name
			}
		}
		part.Nodes = all
	}
	for i, part := range p.c.Partitions {
		for _, n := range part.Nodes {
			if _, ok := p.nodeAt[n]; !ok {
				return nil, fmt.Errorf("%s: partition %s: unknown node %s", p.partAt[i], part.Name, n)
			}
		}
	}
	return p.c, nil
}

// expand expands a host list within the parse's budget (and at most
// max names).
func (p *parser) expand(expr string, max int) ([]string, error) {
	names, err := hostlist.ExpandLimit(expr, min(max, p.names), p.bytes)
	if errors.Is(err, hostlist.ErrTooLarge) {
		return nil, fmt.Errorf("%w (a configuration defines at most %d nodes, Slurm's MAX_SLURM_NODES, and its host lists name at most %d hosts in %d bytes in all)",
			err, MaxNodes, maxHostNames, maxHostBytes)
	}
	if err != nil {
		return nil, err
	}
	p.names -= len(names)
	for _, n := range names {
		p.bytes -= len(n)
	}
	return names, nil
}

// Validate checks cross references: partitions name known nodes, names
// are unique, at most one default partition.
func (c *Config) Validate() error {
	seen := map[string]bool{}
	for _, n := range c.Nodes {
		if seen[n.Name] {
			return fmt.Errorf("node %s defined twice", n.Name)
		}
		seen[n.Name] = true
	}
	defaults := 0
	pseen := map[string]bool{}
	for _, p := range c.Partitions {
		if pseen[p.Name] {
			return fmt.Errorf("partition %s defined twice", p.Name)
		}
		pseen[p.Name] = true
		if p.Default {
			defaults++
		}
		for _, n := range p.Nodes {
			if !seen[n] {
				return fmt.Errorf("partition %s: unknown node %s", p.Name, n)
			}
		}
	}
	if defaults > 1 {
		return fmt.Errorf("more than one default partition")
	}
	return nil
}

func merge(dst map[string]string, kv [][2]string) {
	for _, p := range kv {
		dst[strings.ToLower(p[0])] = p[1]
	}
}

// fields splits "A=b C=d" honouring double quotes.
func fields(s string) ([][2]string, error) {
	var out [][2]string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		eq := strings.IndexByte(s, '=')
		sp := strings.IndexAny(s, " \t")
		if eq < 0 || (sp >= 0 && sp < eq) {
			return nil, fmt.Errorf("expected key=value at %q", s)
		}
		key := s[:eq]
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, "\"") {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			val, s = s[1:end+1], s[end+2:]
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		out = append(out, [2]string{key, val})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty line")
	}
	return out, nil
}

func (p *parser) parseNodes(kv [][2]string) ([]Node, error) {
	attrs := map[string]string{}
	for k, v := range p.nodeDefaults {
		attrs[k] = v
	}
	merge(attrs, kv[1:])
	names, err := p.expand(kv[0][1], MaxNodes-len(p.c.Nodes))
	if err != nil {
		return nil, err
	}
	var addrs, hosts []string
	if a := attrs["nodeaddr"]; a != "" {
		// One more than NodeName names, to tell "too many" apart.
		if addrs, err = p.expand(a, len(names)+1); err != nil {
			if errors.Is(err, hostlist.ErrTooLarge) {
				return nil, fmt.Errorf("NodeAddr names more hosts than NodeName (%d): %v", len(names), err)
			}
			return nil, err
		}
		if len(addrs) != len(names) {
			return nil, fmt.Errorf("NodeAddr count %d != NodeName count %d", len(addrs), len(names))
		}
	}
	if h := attrs["nodehostname"]; h != "" {
		if hosts, err = p.expand(h, len(names)+1); err != nil {
			if errors.Is(err, hostlist.ErrTooLarge) {
				return nil, fmt.Errorf("NodeHostname names more hosts than NodeName (%d): %v", len(names), err)
			}
			return nil, err
		}
		if len(hosts) != len(names) {
			return nil, fmt.Errorf("NodeHostname count %d != NodeName count %d", len(hosts), len(names))
		}
	}
	u16 := func(k string, def uint16) (uint16, error) {
		v, ok := attrs[k]
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseUint(v, 10, 16)
		return uint16(n), err
	}
	boards, err1 := u16("boards", 1)
	spb, err2 := u16("socketsperboard", 0)
	sockets, err3 := u16("sockets", 0)
	cps, err4 := u16("corespersocket", 1)
	tpc, err5 := u16("threadspercore", 1)
	cpus, err6 := u16("cpus", 0)
	for _, e := range []error{err1, err2, err3, err4, err5, err6} {
		if e != nil {
			return nil, fmt.Errorf("node %s: %v", kv[0][1], e)
		}
	}
	if sockets == 0 {
		sockets = boards * spb
	}
	if sockets == 0 {
		if cpus > 0 {
			// Slurm: with only CPUs given, sockets = CPUs, 1 core, 1 thread.
			sockets, cps, tpc = cpus, 1, 1
		} else {
			sockets = 1
		}
	}
	if cpus == 0 {
		cpus = sockets * cps * tpc
	}
	mem := uint64(1)
	if v, ok := attrs["realmemory"]; ok {
		if mem, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, fmt.Errorf("RealMemory: %v", err)
		}
	}
	weight := uint32(1)
	if v, ok := attrs["weight"]; ok {
		w, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("Weight: %v", err)
		}
		weight = uint32(w)
	}
	var tmp uint64
	if v, ok := attrs["tmpdisk"]; ok {
		tmp, _ = strconv.ParseUint(v, 10, 32)
	}
	// Port=P for every node, or Port=A-B one per node, in order.
	var ports []uint16
	if v, ok := attrs["port"]; ok {
		lo, hi, isRange := strings.Cut(v, "-")
		a, err := strconv.ParseUint(lo, 10, 16)
		if err != nil || a == 0 {
			return nil, fmt.Errorf("node %s: Port=%s", kv[0][1], v)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 16); err != nil || b < a {
				return nil, fmt.Errorf("node %s: Port=%s", kv[0][1], v)
			}
			if int(b-a+1) != len(names) {
				return nil, fmt.Errorf("Port count %d != NodeName count %d", b-a+1, len(names))
			}
		}
		for i := range names {
			ports = append(ports, uint16(min(a+uint64(i), b)))
		}
	}
	out := make([]Node, len(names))
	for i, n := range names {
		nd := Node{
			Name: n, Addr: n, Hostname: n, CPUs: cpus, Boards: boards, Sockets: sockets,
			CoresPerSocket: cps, ThreadsPerCore: tpc, RealMemory: mem, TmpDisk: uint32(tmp),
			Gres: attrs["gres"], Features: firstNonEmpty(attrs["features"], attrs["feature"]),
			Weight: weight, State: strings.ToUpper(firstNonEmpty(attrs["state"], "UNKNOWN")),
		}
		if addrs != nil {
			nd.Addr = addrs[i]
		}
		if hosts != nil {
			nd.Hostname = hosts[i]
		}
		if ports != nil {
			nd.Port = ports[i]
		}
		out[i] = nd
	}
	return out, nil
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}

func (pr *parser) parsePartition(kv [][2]string) (Partition, error) {
	attrs := map[string]string{}
	for k, v := range pr.partDefaults {
		attrs[k] = v
	}
	merge(attrs, kv[1:])
	p := Partition{
		Name: kv[0][1], State: strings.ToUpper(firstNonEmpty(attrs["state"], "UP")),
		MaxTime: Infinite, DefaultTime: 0xFFFFFFFE, MaxNodes: Infinite, MinNodes: 0,
		PriorityTier: 1, PriorityFactor: 1, OverSubscribe: strings.ToUpper(firstNonEmpty(attrs["oversubscribe"], attrs["shared"], "NO")),
		AllowAccounts: firstNonEmpty(attrs["allowaccounts"], "ALL"),
		AllowGroups:   firstNonEmpty(attrs["allowgroups"], "ALL"),
		AllowQos:      firstNonEmpty(attrs["allowqos"], "ALL"),
		ResourceGroup: firstNonEmpty(attrs["frontendresourcegroup"], kv[0][1]),
		Project:       attrs["frontendproject"],
		Image:         attrs["frontendimage"],
	}
	var err error
	if v := attrs["nodes"]; v != "" && !strings.EqualFold(v, "ALL") {
		p.NodesExpr = v
		if p.Nodes, err = pr.expand(v, maxHostNames); err != nil {
			return p, err
		}
	} else if strings.EqualFold(v, "ALL") {
		p.NodesExpr = "ALL"
	}
	p.Default = strings.EqualFold(attrs["default"], "YES")
	p.Hidden = strings.EqualFold(attrs["hidden"], "YES")
	if v, ok := attrs["maxtime"]; ok {
		if p.MaxTime, err = ParseTime(v); err != nil {
			return p, fmt.Errorf("partition %s MaxTime: %v", p.Name, err)
		}
	}
	if v, ok := attrs["defaulttime"]; ok {
		if p.DefaultTime, err = ParseTime(v); err != nil {
			return p, fmt.Errorf("partition %s DefaultTime: %v", p.Name, err)
		}
	}
	u32 := func(k string, dst *uint32) error {
		if v, ok := attrs[k]; ok {
			if strings.EqualFold(v, "UNLIMITED") || strings.EqualFold(v, "INFINITE") {
				*dst = Infinite
				return nil
			}
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return fmt.Errorf("partition %s %s: %v", p.Name, k, err)
			}
			*dst = uint32(n)
		}
		return nil
	}
	if err := u32("maxnodes", &p.MaxNodes); err != nil {
		return p, err
	}
	if err := u32("minnodes", &p.MinNodes); err != nil {
		return p, err
	}
	if v, ok := attrs["prioritytier"]; ok {
		n, _ := strconv.ParseUint(v, 10, 16)
		p.PriorityTier = uint16(n)
	}
	if v, ok := attrs["priorityjobfactor"]; ok {
		n, _ := strconv.ParseUint(v, 10, 16)
		p.PriorityFactor = uint16(n)
	}
	if v, ok := attrs["defmempercpu"]; ok {
		p.DefMemPerCPU, _ = strconv.ParseUint(v, 10, 64)
	}
	if v, ok := attrs["maxmempercpu"]; ok {
		p.MaxMemPerCPU, _ = strconv.ParseUint(v, 10, 64)
	}
	return p, nil
}

// ParseTime parses Slurm time limits into minutes: "INFINITE"/"UNLIMITED",
// "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S". Seconds round up.
func ParseTime(s string) (uint32, error) {
	if strings.EqualFold(s, "INFINITE") || strings.EqualFold(s, "UNLIMITED") || s == "-1" {
		return Infinite, nil
	}
	var days, h, m, sec uint64
	rest := s
	hasDays := false
	if d, r, ok := strings.Cut(s, "-"); ok {
		v, err := strconv.ParseUint(d, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("bad time %q", s)
		}
		days, rest, hasDays = v, r, true
	}
	parts := strings.Split(rest, ":")
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("bad time %q", s)
		}
		nums[i] = v
	}
	switch {
	case hasDays && len(nums) == 1:
		h = nums[0]
	case hasDays && len(nums) == 2:
		h, m = nums[0], nums[1]
	case hasDays && len(nums) == 3:
		h, m, sec = nums[0], nums[1], nums[2]
	case len(nums) == 1:
		m = nums[0]
	case len(nums) == 2:
		m, sec = nums[0], nums[1]
	case len(nums) == 3:
		h, m, sec = nums[0], nums[1], nums[2]
	default:
		return 0, fmt.Errorf("bad time %q", s)
	}
	total := days*24*60 + h*60 + m + (sec+59)/60
	if total >= Infinite {
		return 0, fmt.Errorf("time %q too large", s)
	}
	return uint32(total), nil
}
