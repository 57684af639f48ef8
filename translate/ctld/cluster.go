package ctld

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"time"

	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// The cluster Slurm clients see: nodes and partitions. A site that names
// them in its config (NodeName=, PartitionName= lines; the embedded
// engine always does) gets those, with each node's state from the
// engine's agent of that name. Otherwise they come from the engine
// itself: a node per agent, a partition per active resource group. The
// engine's topology is read again every topoRefresh and soon after jobs
// start and end, so agents and resource groups may come and go; each
// change is an immutable cluster published with the next snapshot.

// cluster is one immutable view.
type cluster struct {
	nodes  []conf.Node
	parts  []conf.Partition
	idx    map[string]int              // node name -> position in nodes
	agents map[string]*translate.Agent // agent ID -> the engine's agent
	topo   *translate.Topology
	limits map[string]partLimits // by partition name
	// Node administration (nodeadmin.go): the administrators' node
	// states, each partition's available nodes, and a number that
	// changes when which nodes are available changes.
	admin    map[string]state.NodeAdmin
	avail    map[string]int
	anyOut   bool // some node takes no new job
	availSig string
	availGen uint64
}

func newCluster(cfg *conf.Config, topo *translate.Topology) *cluster {
	if topo == nil {
		topo = &translate.Topology{}
	}
	cl := &cluster{topo: topo, agents: make(map[string]*translate.Agent, len(topo.Agents))}
	for i := range topo.Agents {
		cl.agents[topo.Agents[i].ID] = &topo.Agents[i]
	}
	if len(cfg.Nodes) > 0 {
		cl.nodes = cfg.Nodes
	} else {
		cl.nodes = nodesOf(topo)
	}
	if len(cfg.Partitions) > 0 {
		cl.parts = cfg.Partitions
		copied := false
		for i, p := range cfg.Partitions {
			all := p.NodesExpr == "ALL" && len(p.Nodes) == 0
			if (p.NodesExpr != "" || len(p.Nodes) > 0) && !all {
				continue
			}
			// A site's partition over a resource group's agents (the
			// config's own partitions stay as written).
			if !copied {
				cl.parts, copied = append([]conf.Partition(nil), cfg.Partitions...), true
			}
			if all {
				// Nodes=ALL with no nodes in the config: every node
				// the engine reports (the expression stays "ALL").
				cl.parts[i].Nodes = make([]string, len(cl.nodes))
				for j, n := range cl.nodes {
					cl.parts[i].Nodes[j] = n.Name
				}
				continue
			}
			cl.parts[i].Nodes = groupAgents(topo, p.ResourceGroup)
			cl.parts[i].NodesExpr = hostlist.Compress(cl.parts[i].Nodes)
		}
	} else {
		cl.parts = partitionsOf(topo)
	}
	cl.idx = make(map[string]int, len(cl.nodes))
	for i, n := range cl.nodes {
		cl.idx[n.Name] = i
	}
	cl.limits = make(map[string]partLimits, len(cl.parts))
	for i := range cl.parts {
		cl.limits[cl.parts[i].Name] = cl.limitsOf(&cl.parts[i])
	}
	return cl
}

// partLimits is what the biggest node of a partition offers, and its CPUs
// in all: what a submission is checked against (fits), computed once per
// cluster instead of once per submission over every node.
type partLimits struct {
	maxCPUs, totalCPUs        uint32
	maxMem, maxGPUs, maxShard uint64
	// maxTyped is the most GPUs of each type (lower case) one node has;
	// gpuType the one type every GPU node of the partition has ("" when
	// they differ or name none): what an untyped request gets.
	maxTyped map[string]uint64
	gpuType  string
	nodes    int
}

func (cl *cluster) limitsOf(p *conf.Partition) partLimits {
	var l partLimits
	for _, name := range p.Nodes {
		n := cl.node(name)
		if n == nil {
			continue
		}
		l.maxGPUs = max(l.maxGPUs, gpuCount(n.Gres))
		for typ, k := range gpuTypes(n.Gres) {
			if l.maxTyped == nil {
				l.maxTyped = map[string]uint64{}
			}
			l.maxTyped[typ] = max(l.maxTyped[typ], k)
		}
		l.maxShard = max(l.maxShard, gresCount(n.Gres, "shard"), gresCount(n.Gres, "mps"))
		l.maxCPUs = max(l.maxCPUs, uint32(n.CPUs))
		l.maxMem = max(l.maxMem, n.RealMemory)
		l.totalCPUs += uint32(n.CPUs)
	}
	if len(l.maxTyped) == 1 {
		for typ := range l.maxTyped {
			l.gpuType = typ
		}
	}
	l.nodes = len(p.Nodes)
	return l
}

// partLimits of partition p: computed at the cluster's making for its
// own partitions, else now.
func (cl *cluster) partLimits(p *conf.Partition) partLimits {
	if l, ok := cl.limits[p.Name]; ok && l.nodes == len(p.Nodes) {
		return l
	}
	return cl.limitsOf(p)
}

// groupAgents lists the agents of resource group name, sorted.
func groupAgents(topo *translate.Topology, name string) []string {
	for _, g := range topo.Groups {
		if g.Name == name {
			out := append([]string(nil), g.AgentIDs...)
			sort.Strings(out)
			return out
		}
	}
	return nil
}

// nodesOf makes a node of every agent, in ID order.
func nodesOf(topo *translate.Topology) []conf.Node {
	out := make([]conf.Node, 0, len(topo.Agents))
	for _, a := range topo.Agents {
		cpus := uint16(max(a.Capacity.CPU, 1))
		n := conf.Node{
			Name: a.ID, Hostname: a.ID, Addr: a.Addr, CPUs: cpus, Boards: max(a.Boards, 1),
			Sockets: a.Sockets, CoresPerSocket: a.CoresPerSocket, ThreadsPerCore: a.ThreadsPerCore,
			RealMemory: a.Capacity.Mem >> 20, Weight: 1, State: "UNKNOWN",
		}
		if n.Addr == "" {
			n.Addr = a.ID
		}
		if n.Sockets == 0 || n.CoresPerSocket == 0 || n.ThreadsPerCore == 0 {
			n.Sockets, n.CoresPerSocket, n.ThreadsPerCore = 1, cpus, 1
		}
		if g := uint64(a.Capacity.GPUs); g > 0 {
			n.Gres = "gpu:" + itoa(g)
			if a.GPUType != "" {
				n.Gres = "gpu:" + a.GPUType + ":" + itoa(g)
			}
		}
		if sh := uint64(math.Round(a.Capacity.GPUShares * 100)); sh > 0 {
			// Fractional GPUs: Slurm's shards, a hundredth of a GPU each
			// (--gres=shard:N and mps:N ask for N of them).
			if n.Gres != "" {
				n.Gres += ","
			}
			n.Gres += "shard:" + itoa(sh)
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// partitionsOf makes a partition of every active resource group, in name
// order; the one named "default" (Backend.AI's stock group), else the
// first, is Slurm's default partition.
func partitionsOf(topo *translate.Topology) []conf.Partition {
	var out []conf.Partition
	for _, g := range topo.Groups {
		if !g.IsActive {
			continue
		}
		nodes := append([]string(nil), g.AgentIDs...)
		sort.Strings(nodes)
		out = append(out, conf.Partition{
			Name: g.Name, Nodes: nodes, NodesExpr: hostlist.Compress(nodes), State: "UP",
			MaxTime: conf.Infinite, DefaultTime: 0xFFFFFFFE, MaxNodes: conf.Infinite,
			PriorityTier: 1, PriorityFactor: 1, OverSubscribe: "NO",
			AllowAccounts: "ALL", AllowGroups: "ALL", AllowQos: "ALL",
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	def := 0
	for i := range out {
		if out[i].Name == "default" {
			def = i
		}
	}
	if len(out) > 0 {
		out[def].Default = true
	}
	return out
}

func (cl *cluster) node(name string) *conf.Node {
	if i, ok := cl.idx[name]; ok {
		return &cl.nodes[i]
	}
	return nil
}

func (cl *cluster) part(name string) *conf.Partition {
	for i := range cl.parts {
		if cl.parts[i].Name == name {
			return &cl.parts[i]
		}
	}
	return nil
}

func (cl *cluster) nodeIndex(name string) int {
	if i, ok := cl.idx[name]; ok {
		return i
	}
	return -1
}

func (cl *cluster) agent(name string) *translate.Agent { return cl.agents[name] }

// cluster is the current view (any goroutine).
func (c *Controller) cluster() *cluster { return c.cl.Load() }

// topoRefresh is how often the engine's topology is read again.
var topoRefresh = 10 * time.Second

// topoMinGap bounds how often a kick (a job started or ended) reads it.
const topoMinGap = time.Second

// kickTopology asks for an early topology read.
func (c *Controller) kickTopology() {
	select {
	case c.topoKick <- struct{}{}:
	default:
	}
}

// refreshTopology reads the engine's topology every topoRefresh and when
// kicked, and publishes a new cluster when it changed.
func (c *Controller) refreshTopology(ctx context.Context) {
	t := time.NewTicker(topoRefresh)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.topoKick:
			if wait := topoMinGap - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		last = time.Now()
		tctx, cancel := context.WithTimeout(ctx, engineTimeout)
		topo, err := c.opt.Backend.Topology(tctx)
		cancel()
		if err != nil {
			c.logf("topology: %v (the last one stays)", err)
			continue
		}
		c.setTopology(topo, last)
	}
}

// setTopology publishes topo, read from the engine from readAt on, and a
// snapshot with it, if it changed.
func (c *Controller) setTopology(topo *translate.Topology, readAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Agents taken out of scheduling or back since the read began: the
	// read may predate the change.
	topo = c.nodes.newerThan(topo, readAt)
	if old := c.cluster(); old != nil && reflect.DeepEqual(old.topo, topo) {
		return
	}
	c.cl.Store(c.newCluster(topo))
	c.rebuildWith(time.Now().Unix(), false)
	c.keepTopology(topo)
	// Nodes or partitions that came or went change the login nodes'
	// slurm.conf: configless ones get the new one.
	c.pushIfChanged(context.Background())
}

// keepTopology records the shape of the engine's cluster (agents, their
// capacity and groups; not what they hold now) when it changes, so that
// a restart while the engine is down still shows the last one.
func (c *Controller) keepTopology(topo *translate.Topology) {
	if c.opt.Store == nil || topo == nil {
		return
	}
	shape := translate.Topology{Groups: topo.Groups}
	for _, a := range topo.Agents {
		a.Occupied, a.CPULoad, a.FreeMem = translate.Slots{}, 0, 0
		shape.Agents = append(shape.Agents, a)
	}
	b, err := json.Marshal(&shape)
	if err != nil || bytes.Equal(b, c.keptTopo) {
		return
	}
	if err := c.opt.Store.PutMeta("topology", b); err == nil {
		c.keptTopo = b
	}
}

// lastTopology is the topology keepTopology recorded (nil if none).
func (c *Controller) lastTopology() *translate.Topology {
	if c.opt.Store == nil {
		return nil
	}
	b, err := c.opt.Store.Meta("topology")
	if err != nil || b == nil {
		return nil
	}
	var t translate.Topology
	if json.Unmarshal(b, &t) != nil {
		return nil
	}
	c.keptTopo = b
	return &t
}

// ClusterOf is what clients see of cfg over the engine's topology: the
// config's nodes and partitions, or the engine's agents and resource
// groups where it names none (client-conf prints it).
func ClusterOf(cfg *conf.Config, topo *translate.Topology) ([]conf.Node, []conf.Partition) {
	cl := newCluster(cfg, topo)
	return cl.nodes, cl.parts
}
