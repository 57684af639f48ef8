package local

import (
	"sort"
	"strings"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// Placement. Every configured node is a set of slots on this host: its
// CPUs, memory (RealMemory) and GPUs (Gres=gpu:N, counted, handed out by
// index). A session needs Nodes nodes of its partition (the config's
// partition node list: a node may be in several), each with CPUsPerNode
// CPUs, MemPerNodeMB memory and GPUsPerNode GPUs free, all of ReqNodes and
// none of ExcNodes; Exclusive needs nodes with nothing on them and takes
// all of them. Nodes are picked by Weight, then config order.

// allocNode is what one session holds on one node.
type allocNode struct {
	Name      string `json:"name"`
	CPUs      uint32 `json:"cpus"`
	MemMB     uint64 `json:"mem_mb"`
	GPUs      []int  `json:"gpus,omitempty"`
	Exclusive bool   `json:"exclusive,omitempty"`
}

type nodeSlot struct {
	name    string
	idx     int
	cpus    uint32
	memMB   uint64
	gpus    int
	weight  uint32
	usable  bool
	held    bool // out of scheduling (drained): takes nothing new, for now
	usedCPU uint32
	usedMem uint64
	gpuBusy []bool
	jobs    int
	excl    bool
}

func (n *nodeSlot) freeGPUs() int {
	c := 0
	for _, b := range n.gpuBusy {
		if !b {
			c++
		}
	}
	return c
}

type placer struct {
	nodes   map[string]*nodeSlot
	parts   map[string]*conf.Partition
	defPart string
}

func newPlacer(cfg *conf.Config) *placer {
	p := &placer{nodes: map[string]*nodeSlot{}, parts: map[string]*conf.Partition{}}
	for i, n := range cfg.Nodes {
		st := strings.ToUpper(n.State)
		p.nodes[n.Name] = &nodeSlot{
			name: n.Name, idx: i, cpus: uint32(n.CPUs), memMB: n.RealMemory,
			gpus: int(gresGPUs(n.Gres)), weight: n.Weight,
			usable:  !strings.HasPrefix(st, "DOWN") && !strings.HasPrefix(st, "DRAIN") && !strings.HasPrefix(st, "FUTURE"),
			gpuBusy: make([]bool, int(gresGPUs(n.Gres))),
		}
	}
	for i := range cfg.Partitions {
		pt := &cfg.Partitions[i]
		p.parts[pt.Name] = pt
		if pt.Default && p.defPart == "" {
			p.defPart = pt.Name
		}
	}
	if p.defPart == "" && len(cfg.Partitions) > 0 {
		p.defPart = cfg.Partitions[0].Name
	}
	return p
}

// reserve marks an allocation as used (at start and when re-attaching).
func (p *placer) reserve(a []allocNode) {
	for _, an := range a {
		n := p.nodes[an.Name]
		if n == nil {
			continue // node gone from the config: nothing to account
		}
		n.usedCPU += an.CPUs
		n.usedMem += an.MemMB
		n.jobs++
		if an.Exclusive {
			n.excl = true
		}
		for _, g := range an.GPUs {
			if g >= 0 && g < len(n.gpuBusy) {
				n.gpuBusy[g] = true
			}
		}
	}
}

func (p *placer) release(a []allocNode) {
	for _, an := range a {
		n := p.nodes[an.Name]
		if n == nil {
			continue
		}
		n.usedCPU -= min(n.usedCPU, an.CPUs)
		n.usedMem -= min(n.usedMem, an.MemMB)
		if n.jobs > 0 {
			n.jobs--
		}
		if an.Exclusive {
			n.excl = false
		}
		for _, g := range an.GPUs {
			if g >= 0 && g < len(n.gpuBusy) {
				n.gpuBusy[g] = false
			}
		}
	}
}

type fit int

const (
	fitNow   fit = iota // placed
	fitLater            // fits once resources free up
	fitWait             // partition down or inactive: waits, blocks nobody
	fitNever            // can never fit this configuration
)

func expandNames(list []string) ([]string, bool) {
	var out []string
	for _, e := range list {
		if e == "" {
			continue
		}
		names, err := hostlist.Expand(e)
		if err != nil {
			return nil, false
		}
		out = append(out, names...)
	}
	return out, true
}

// place tries to place spec now. blocked nodes are held for
// higher-priority sessions that are waiting (no backfill). It returns the
// allocation (fitNow), or the nodes this session waits for (fitLater),
// or why it can never run (fitNever).
func (p *placer) place(spec *translate.SessionSpec, blocked map[string]bool) ([]allocNode, fit, []string, string) {
	part := spec.ResourceGroup
	if part == "" {
		part = p.defPart
	}
	pt := p.parts[part]
	if pt == nil {
		return nil, fitNever, nil, "unknown partition " + part
	}
	switch strings.ToUpper(pt.State) {
	case "DOWN", "INACTIVE":
		return nil, fitWait, nil, ""
	}
	req, ok1 := expandNames(spec.ReqNodes)
	exc, ok2 := expandNames(spec.ExcNodes)
	if !ok1 || !ok2 {
		return nil, fitNever, nil, "invalid node list"
	}
	excl := map[string]bool{}
	for _, n := range exc {
		excl[n] = true
	}
	inPart := map[string]bool{}
	for _, n := range pt.Nodes {
		inPart[n] = true
	}
	need := max(int(spec.Nodes), 1, len(req))
	cpu := max(spec.CPUsPerNode, 1)
	mem := spec.MemPerNodeMB
	gpu := int(spec.GPUsPerNode)
	capable := func(n *nodeSlot) bool {
		return n != nil && n.usable && n.cpus >= cpu && n.memMB >= mem && n.gpus >= gpu
	}
	isReq := map[string]bool{}
	for _, r := range req {
		if !inPart[r] || excl[r] || !capable(p.nodes[r]) {
			return nil, fitNever, nil, "required node " + r + " is not usable for this request"
		}
		isReq[r] = true
	}
	var cands []*nodeSlot
	seen := map[string]bool{}
	for _, name := range pt.Nodes {
		n := p.nodes[name]
		if seen[name] || excl[name] || !capable(n) {
			continue
		}
		seen[name] = true
		cands = append(cands, n)
	}
	if len(cands) < need {
		return nil, fitNever, nil, "not enough nodes in the partition for this request"
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].weight != cands[j].weight {
			return cands[i].weight < cands[j].weight
		}
		return cands[i].idx < cands[j].idx
	})
	waitFor := func() []string {
		if len(req) == need {
			return req
		}
		out := make([]string, len(cands))
		for i, c := range cands {
			out[i] = c.name
		}
		return out
	}
	free := func(n *nodeSlot) bool {
		if blocked[n.name] || n.excl || n.held {
			return false
		}
		if spec.Exclusive {
			return n.jobs == 0
		}
		if spec.AllMemory {
			// The whole node's memory: no other job may hold any.
			return n.cpus-min(n.cpus, n.usedCPU) >= cpu && n.usedMem == 0 && n.freeGPUs() >= gpu
		}
		return n.cpus-min(n.cpus, n.usedCPU) >= cpu && n.memMB-min(n.memMB, n.usedMem) >= mem && n.freeGPUs() >= gpu
	}
	var chosen []*nodeSlot
	for _, r := range req {
		if !free(p.nodes[r]) {
			return nil, fitLater, waitFor(), ""
		}
		chosen = append(chosen, p.nodes[r])
	}
	for _, c := range cands {
		if len(chosen) == need {
			break
		}
		if !isReq[c.name] && free(c) {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) < need {
		return nil, fitLater, waitFor(), ""
	}
	alloc := make([]allocNode, len(chosen))
	for i, n := range chosen {
		a := allocNode{Name: n.name, CPUs: cpu, MemMB: mem}
		if spec.AllMemory {
			a.MemMB = n.memMB
		}
		want := gpu
		if spec.Exclusive {
			a.CPUs, a.MemMB, a.Exclusive, want = n.cpus, n.memMB, true, n.gpus
		}
		for g := 0; g < len(n.gpuBusy) && len(a.GPUs) < want; g++ {
			if !n.gpuBusy[g] {
				a.GPUs = append(a.GPUs, g)
			}
		}
		alloc[i] = a
	}
	return alloc, fitNow, nil, ""
}
