package ctld

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// schedBackend is topoBackend that also takes agents out of scheduling,
// recording the calls.
type schedBackend struct {
	topoBackend
	mu    sync.Mutex
	calls []string
}

func (b *schedBackend) SetSchedulable(_ context.Context, agents []string, on bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, strings.Join(agents, ",")+map[bool]string{true: " on", false: " off"}[on])
	for i := range b.topo.Agents {
		for _, a := range agents {
			if b.topo.Agents[i].ID == a {
				b.topo.Agents[i].Schedulable = on
			}
		}
	}
	return nil
}

const adminConf = "NodeName=n[1-3] CPUs=4 RealMemory=1000\nPartitionName=p Nodes=n[1-3] Default=YES\nPartitionName=one Nodes=n1\n"

func adminController(t *testing.T, store *state.Store, b translate.Backend, opt func(*Options)) *Controller {
	t.Helper()
	cfg, err := conf.Parse(strings.NewReader(adminConf))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Conf: cfg, Store: store, Backend: b, Stats: state.NewRPCStats(), ClusterName: "c"}
	if opt != nil {
		opt(&o)
	}
	c, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func updateNode(c *Controller, v uint16, uid uint32, m codec.UpdateNodeRequest) uint32 {
	if m.Weight == 0 {
		m.Weight = codec.NoVal
	}
	if m.ResumeAfter == 0 && v >= codec.V23_02 {
		m.ResumeAfter = codec.NoVal
	}
	w := codec.Writer{}
	m.Encode(&w, v)
	rep := serve(c, &Request{Version: v, MsgType: codec.REQUEST_UPDATE_NODE, UID: uid, Body: w.B})
	return be32(rep.Body)
}

func nodeInfos(t *testing.T, c *Controller) map[string]codec.NodeInfo {
	t.Helper()
	w := codec.Writer{}
	(&codec.NodeInfoRequest{}).Encode(&w, codec.V24_11)
	rep := serve(c, &Request{Version: codec.V24_11, MsgType: codec.REQUEST_NODE_INFO, Body: w.B})
	var f codec.Frame
	if err := codec.DecodeFrame(joined(rep), &f); err != nil {
		t.Fatal(err)
	}
	var m codec.NodeInfoMsg
	r := codec.NewReader(f.Body)
	if err := m.Decode(&r, codec.V24_11); err != nil {
		t.Fatal(err)
	}
	out := map[string]codec.NodeInfo{}
	for _, n := range m.Nodes {
		out[n.Name] = n
	}
	return out
}

func TestUpdateNode(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b := &schedBackend{topoBackend: topoBackend{topo: &translate.Topology{
		Agents: []translate.Agent{agent("n1", "p", 4, 1, 0), agent("n2", "p", 4, 1, 0), agent("n3", "p", 4, 1, 0)}}}}
	c := adminController(t, store, b, nil)

	if rc := updateNode(c, codec.V24_11, 0, codec.UpdateNodeRequest{NodeNames: "n[1-2]", NodeState: codec.NODE_STATE_DRAIN, Reason: "disk"}); rc != 0 {
		t.Fatalf("drain: rc %d", rc)
	}
	if !reflect.DeepEqual(b.calls, []string{"n1,n2 off"}) {
		t.Fatalf("engine calls %v", b.calls)
	}
	ns := nodeInfos(t, c)
	if n := ns["n1"]; n.NodeState != codec.NODE_STATE_IDLE|codec.NODE_STATE_DRAIN || n.Reason != "disk" || n.ReasonUID != 0 || n.ReasonTime == 0 {
		t.Errorf("n1 drained: state %#x reason %q uid %d time %d", n.NodeState, n.Reason, n.ReasonUID, n.ReasonTime)
	}
	if n := ns["n3"]; n.NodeState != codec.NODE_STATE_IDLE || n.Reason != "" || n.ReasonUID != codec.NoVal {
		t.Errorf("n3: state %#x reason %q uid %d", n.NodeState, n.Reason, n.ReasonUID)
	}
	// A pending job of the partition whose only node is drained.
	if r, desc, ok := c.cluster().blockedReason(&state.Job{Partition: "one", MinNodes: 1}, codec.V24_11); !ok || r != codec.WAIT_RESOURCES || desc != descPartNodesOut {
		t.Errorf("blocked job: %d %q %v", r, desc, ok)
	}
	if _, _, ok := c.cluster().blockedReason(&state.Job{Partition: "p", MinNodes: 1}, codec.V24_11); ok {
		t.Error("a job of p (n3 available) blocked")
	}
	if r, desc, _ := c.cluster().blockedReason(&state.Job{Partition: "p", MinNodes: 1, ReqNodes: "n2"}, codec.V24_11); r != codec.WAIT_NODE_NOT_AVAIL || desc != descReqNodesOut {
		t.Errorf("-w n2: %d %q", r, desc)
	}
	if _, desc, _ := c.cluster().blockedReason(&state.Job{Partition: "p", MinNodes: 1, ReqNodes: "n2"}, codec.V24_05); desc != descReqNodesDown+"n2" {
		t.Errorf("-w n2 for 24.05: %q", desc)
	}
	// Refusals: a node in service resumed (the code by release),
	// another attribute, an unknown node.
	for v, want := range map[uint16]uint32{codec.V22_05: codec.ESLURM_INVALID_NODE_STATE, codec.V24_11: codec.ESLURM_INVALID_NODE_STATE,
		codec.V25_11: codec.ESLURM_INVALID_NODE_STATE_TRANSITION, codec.V26_05: codec.ESLURM_INVALID_NODE_STATE_TRANSITION} {
		if rc := updateNode(c, v, 0, codec.UpdateNodeRequest{NodeNames: "n3", NodeState: codec.NODE_RESUME}); rc != want {
			t.Errorf("%s: resume of a node in service: rc %d, want %d", codec.VersionName(v), rc, want)
		}
	}
	if rc := updateNode(c, codec.V24_11, 0, codec.UpdateNodeRequest{NodeNames: "n3", NodeState: codec.NoVal, Weight: 5}); rc != codec.ESLURM_NOT_SUPPORTED {
		t.Errorf("Weight=: rc %d", rc)
	}
	if rc := updateNode(c, codec.V24_11, 0, codec.UpdateNodeRequest{NodeNames: "n[3-4]", NodeState: codec.NODE_STATE_DOWN, Reason: "x"}); rc != codec.ESLURM_INVALID_NODE_NAME {
		t.Errorf("unknown node: rc %d", rc)
	}
	if n := nodeInfos(t, c)["n3"]; n.NodeState != codec.NODE_STATE_DOWN || n.Reason != "x" {
		t.Errorf("n3, before the unknown node of the list: state %#x reason %q", n.NodeState, n.Reason)
	}
	// A user is refused before anything (adminDenied).
	if rc := updateNode(c, codec.V24_11, 1000, codec.UpdateNodeRequest{NodeNames: "n3", NodeState: codec.NODE_RESUME}); rc != codec.ESLURM_USER_ID_MISSING {
		t.Errorf("a user's update: rc %d", rc)
	}

	// Kept across a restart.
	c2 := adminController(t, store, b, nil)
	ns = nodeInfos(t, c2)
	if n := ns["n1"]; n.Reason != "disk" || n.NodeState&codec.NODE_STATE_DRAIN == 0 || ns["n3"].NodeState != codec.NODE_STATE_DOWN {
		t.Errorf("after a restart: n1 %#x %q, n3 %#x", n.NodeState, n.Reason, ns["n3"].NodeState)
	}
	// UNDRAIN and RESUME: back in service, the reason gone, the
	// engine told.
	if rc := updateNode(c2, codec.V24_11, 0, codec.UpdateNodeRequest{NodeNames: "n[1-3]", NodeState: codec.NODE_RESUME}); rc != 0 {
		t.Fatalf("resume: rc %d", rc)
	}
	if last := b.calls[len(b.calls)-1]; last != "n1,n2,n3 on" {
		t.Errorf("engine calls %v", b.calls)
	}
	for name, n := range nodeInfos(t, c2) {
		if n.NodeState != codec.NODE_STATE_IDLE || n.Reason != "" {
			t.Errorf("%s after resume: %#x %q", name, n.NodeState, n.Reason)
		}
	}
	if recs, _ := store.NodeAdmins(); len(recs) != 0 {
		t.Errorf("records left after the resume: %v", recs)
	}
}

func TestReconfigureAndShutdown(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var next *conf.Config
	var nextErr error
	pushed, stopped := make(chan struct{}, 1), 0
	c := adminController(t, store, &topoBackend{topo: &translate.Topology{}}, func(o *Options) {
		o.Reload = func() (*conf.Config, error) { return next, nextErr }
		o.OnReconfigure = func() { pushed <- struct{}{} }
		o.Shutdown = func() { stopped++ }
	})
	reconfigure := func() uint32 {
		return be32(serve(c, &Request{Version: codec.V24_11, MsgType: codec.REQUEST_RECONFIGURE}).Body)
	}
	nextErr = errors.New("broken")
	if rc := reconfigure(); rc != codec.SLURM_ERROR {
		t.Fatalf("a broken file: rc %#x", rc)
	}
	next, nextErr = conf.New(), nil
	next.Nodes = c.config().Nodes
	next.Partitions = []conf.Partition{{Name: "only", Nodes: []string{"n2"}, NodesExpr: "n2", State: "UP", Default: true}}
	next.Set("PrivateData", "jobs")
	before := c.Snapshot().ConfUpdate
	if rc := reconfigure(); rc != 0 {
		t.Fatalf("reconfigure: rc %d", rc)
	}
	<-pushed
	if ps := c.cluster().parts; len(ps) != 1 || ps[0].Name != "only" {
		t.Errorf("partitions after reconfigure: %+v", ps)
	}
	if !c.hides(privateJobs, 1000) || c.Snapshot().ConfUpdate < before {
		t.Errorf("PrivateData or the config's update time not taken")
	}
	w := codec.Writer{}
	(&codec.ShutdownRequest{Options: codec.SLURMCTLD_SHUTDOWN_CTLD}).Encode(&w, codec.V24_11)
	rep := serve(c, &Request{Version: codec.V24_11, MsgType: codec.REQUEST_SHUTDOWN, Body: w.B})
	if be32(rep.Body) != 0 || rep.After == nil || stopped != 0 {
		t.Fatalf("shutdown: %+v, stopped %d", rep, stopped)
	}
	rep.After() // the edge calls it once the answer is written
	if stopped != 1 {
		t.Fatal("shutdown not requested")
	}
}
