package local

import (
	"context"
	"errors"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
)

// A drained node takes nothing new but is not a reason to fail a session
// that can only run there (it waits), the set survives a restart on the
// same spool, and a config read again replaces the nodes.
func TestSchedulableAndReconfigure(t *testing.T) {
	spool := t.TempDir()
	cfg := testConfig(testNode("a1", 4, 1000, ""), testNode("a2", 4, 1000, ""))
	e := New(cfg, WithSpoolDir(spool))
	if e.Err() != nil {
		t.Skipf("no executor here: %v", e.Err())
	}
	ctx := context.Background()
	if err := e.SetSchedulable(ctx, []string{"a1", "nosuch"}, false); !errors.Is(err, translate.ErrNoAgent) {
		t.Fatalf("unknown node: %v", err)
	}
	schedulable := func(e *Engine) map[string]bool {
		topo, _ := e.Topology(ctx)
		out := map[string]bool{}
		for _, a := range topo.Agents {
			out[a.ID] = a.Schedulable
		}
		return out
	}
	if s := schedulable(e); s["a1"] || !s["a2"] {
		t.Fatalf("after draining a1: %v", s)
	}
	e.x.mu.Lock()
	_, f, _, _ := e.x.pl.place(&translate.SessionSpec{ResourceGroup: "p", ReqNodes: []string{"a1"}}, nil)
	a, f2, _, _ := e.x.pl.place(&translate.SessionSpec{ResourceGroup: "p", Nodes: 1}, nil)
	_, f3, _, _ := e.x.pl.place(&translate.SessionSpec{ResourceGroup: "p", Nodes: 2}, nil)
	e.x.mu.Unlock()
	if f != fitLater || f2 != fitNow || a[0].Name != "a2" || f3 != fitLater {
		t.Fatalf("placement with a1 drained: -w a1 %v, one node %v %+v, two nodes %v", f, f2, a, f3)
	}
	e.Close()

	e = New(testConfig(testNode("a1", 4, 1000, ""), testNode("a2", 4, 1000, "")), WithSpoolDir(spool))
	if s := schedulable(e); s["a1"] || !s["a2"] {
		t.Fatalf("after a restart: %v", s)
	}
	if err := e.SetSchedulable(ctx, []string{"a1"}, true); err != nil {
		t.Fatal(err)
	}
	if err := e.SetSchedulable(ctx, []string{"a2"}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Reconfigure(testConfig(testNode("a2", 4, 1000, ""), testNode("a3", 8, 1000, ""))); err != nil {
		t.Fatal(err)
	}
	if s := schedulable(e); len(s) != 2 || s["a2"] || !s["a3"] {
		t.Fatalf("after reconfigure: %v", s)
	}
	e.x.mu.Lock()
	a, f, _, _ = e.x.pl.place(&translate.SessionSpec{ResourceGroup: "p", CPUsPerNode: 8}, nil)
	e.x.mu.Unlock()
	if f != fitNow || a[0].Name != "a3" {
		t.Fatalf("a new node of the new config: %v %+v", f, a)
	}
	e.Close()
}
