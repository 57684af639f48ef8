package ctld

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// topoBackend is an engine whose topology the test sets.
type topoBackend struct{ topo *translate.Topology }

func (b *topoBackend) Name() string { return "test" }
func (b *topoBackend) Topology(context.Context) (*translate.Topology, error) {
	return b.topo, nil
}

func agent(id, group string, cpus float64, memGB uint64, gpus float64) translate.Agent {
	return translate.Agent{ID: id, ResourceGroup: group, Status: translate.AgentAlive, Schedulable: true,
		Capacity: translate.Slots{CPU: cpus, Mem: memGB << 30, GPUs: gpus}}
}

// With no nodes and partitions in the config, the cluster is the
// engine's: a node per agent, a partition per active resource group,
// and it follows the engine's topology as agents come, go, fill up and
// stop taking sessions.
func TestClusterFromEngine(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b := &topoBackend{topo: &translate.Topology{
		Groups: []translate.ResourceGroup{{Name: "default", IsActive: true, AgentIDs: []string{"i-2", "i-1"}},
			{Name: "gpu", IsActive: true, AgentIDs: []string{"g-1"}}, {Name: "off", IsActive: false}},
		Agents: []translate.Agent{agent("i-1", "default", 8, 32, 0), agent("i-2", "default", 8, 32, 0), agent("g-1", "gpu", 32, 256, 4)},
	}}
	c, err := New(context.Background(), Options{Conf: conf.New(), Store: store, Backend: b, Stats: state.NewRPCStats(), ClusterName: "ba"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := func() map[string]codec.NodeInfo { return nodeInfos(t, c) }
	parts := func() map[string]codec.PartitionInfo {
		t.Helper()
		w := codec.Writer{}
		(&codec.PartitionInfoRequest{}).Encode(&w, codec.V24_11)
		rep := serve(c, &Request{Version: codec.V24_11, MsgType: codec.REQUEST_PARTITION_INFO, Body: w.B})
		var f codec.Frame
		if err := codec.DecodeFrame(joined(rep), &f); err != nil {
			t.Fatal(err)
		}
		var m codec.PartitionInfoMsg
		r := codec.NewReader(f.Body)
		if err := m.Decode(&r, codec.V24_11); err != nil {
			t.Fatal(err)
		}
		out := map[string]codec.PartitionInfo{}
		for _, p := range m.Partitions {
			out[p.Name] = p
		}
		return out
	}
	ns, ps := nodes(), parts()
	if len(ns) != 3 || ns["g-1"].CPUs != 32 || ns["g-1"].Gres != "gpu:4" || ns["i-1"].RealMemory != 32<<10 || ns["i-1"].NodeState != codec.NODE_STATE_IDLE {
		t.Errorf("nodes from the engine's agents: %+v", ns)
	}
	if len(ps) != 2 || ps["default"].Nodes != "i-[1-2]" || ps["default"].Flags&codec.PART_FLAG_DEFAULT == 0 || ps["gpu"].Nodes != "g-1" {
		t.Errorf("partitions from the engine's active resource groups: %+v", ps)
	}
	// The engine changes: an agent more, one lost, one full, one not
	// taking sessions.
	lost, full, drained := agent("i-2", "default", 8, 32, 0), agent("g-1", "gpu", 32, 256, 4), agent("i-3", "default", 8, 32, 0)
	lost.Status = translate.AgentLost
	full.Occupied = translate.Slots{CPU: 32, Mem: 256 << 30}
	drained.Schedulable = false
	c.setTopology(&translate.Topology{
		Groups: []translate.ResourceGroup{{Name: "default", IsActive: true, AgentIDs: []string{"i-1", "i-2", "i-3"}},
			{Name: "gpu", IsActive: true, AgentIDs: []string{"g-1"}}},
		Agents: []translate.Agent{agent("i-1", "default", 8, 32, 0), lost, drained, full},
	}, time.Time{})
	ns, ps = nodes(), parts()
	if len(ns) != 4 {
		t.Fatalf("after a new agent: %d nodes", len(ns))
	}
	if st := ns["i-2"].NodeState; st&codec.NODE_STATE_BASE != codec.NODE_STATE_DOWN {
		t.Errorf("a LOST agent's node: state %#x, want DOWN", st)
	}
	if n := ns["g-1"]; n.NodeState != codec.NODE_STATE_ALLOCATED || n.AllocCPUs != 32 {
		t.Errorf("a full agent's node: state %#x, %d CPUs allocated; want ALLOCATED, 32", n.NodeState, n.AllocCPUs)
	}
	if st := ns["i-3"].NodeState; st&codec.NODE_STATE_DRAIN == 0 {
		t.Errorf("an agent that takes no sessions: state %#x, want DRAIN", st)
	}
	if ps["default"].Nodes != "i-[1-3]" {
		t.Errorf("partition default after the new agent: %q", ps["default"].Nodes)
	}
	// The same topology again is no change: no new snapshot.
	gen := c.Snapshot().Gen
	c.setTopology(c.cluster().topo, time.Time{})
	if c.Snapshot().Gen != gen {
		t.Errorf("an unchanged topology made a new snapshot")
	}
}

// A site pairs projects with resource groups: partitions of its own over
// the engine's hardware, several over one resource group, each with its
// project and default image; their nodes are the group's agents.
func TestClusterSitePartitions(t *testing.T) {
	cfg, err := conf.Parse(strings.NewReader(
		"PartitionName=chem Default=YES PriorityTier=2 FrontendResourceGroup=gpu FrontendProject=chemistry FrontendImage=cr.backend.ai/stable/python:3.11\n" +
			"PartitionName=bio FrontendResourceGroup=gpu FrontendProject=biology\n"))
	if err != nil {
		t.Fatal(err)
	}
	topo := &translate.Topology{
		Groups: []translate.ResourceGroup{{Name: "gpu", IsActive: true, AgentIDs: []string{"g-2", "g-1"}}},
		Agents: []translate.Agent{agent("g-1", "gpu", 32, 256, 4), agent("g-2", "gpu", 32, 256, 4)},
	}
	cl := newCluster(cfg, topo)
	if len(cl.nodes) != 2 || len(cl.parts) != 2 {
		t.Fatalf("%d nodes, %d partitions", len(cl.nodes), len(cl.parts))
	}
	for _, p := range cl.parts {
		if p.NodesExpr != "g-[1-2]" || p.ResourceGroup != "gpu" {
			t.Errorf("partition %s: nodes %q, resource group %q", p.Name, p.NodesExpr, p.ResourceGroup)
		}
	}
	if p := cl.part("chem"); p.Project != "chemistry" || p.Image != "cr.backend.ai/stable/python:3.11" || p.PriorityTier != 2 || !p.Default {
		t.Errorf("chem: %+v", p)
	}
	if len(cfg.Partitions[0].Nodes) != 0 {
		t.Errorf("the config's partition was changed: %+v", cfg.Partitions[0])
	}
}

// A site's partition with Nodes=ALL and no nodes in the config spans
// every node the engine reports, and scontrol still shows "ALL".
func TestClusterPartitionNodesAllFromEngine(t *testing.T) {
	cfg, err := conf.Parse(strings.NewReader("PartitionName=all Nodes=ALL Default=YES\nPartitionName=gpus FrontendResourceGroup=gpu\n"))
	if err != nil {
		t.Fatal(err)
	}
	topo := &translate.Topology{
		Groups: []translate.ResourceGroup{{Name: "default", IsActive: true, AgentIDs: []string{"i-1", "i-2"}},
			{Name: "gpu", IsActive: true, AgentIDs: []string{"g-1"}}},
		Agents: []translate.Agent{agent("i-1", "default", 8, 32, 0), agent("i-2", "default", 8, 32, 0), agent("g-1", "gpu", 32, 256, 4)},
	}
	cl := newCluster(cfg, topo)
	if got := strings.Join(cl.parts[0].Nodes, ","); got != "g-1,i-1,i-2" {
		t.Errorf("Nodes=ALL spans %q, want every agent", got)
	}
	if cl.parts[0].NodesExpr != "ALL" {
		t.Errorf("shown as %q, want ALL", cl.parts[0].NodesExpr)
	}
	if got := strings.Join(cl.parts[1].Nodes, ","); got != "g-1" {
		t.Errorf("the resource group's partition spans %q", got)
	}
	if cfg.Partitions[0].Nodes != nil {
		t.Errorf("the config's own partition was changed")
	}
}
