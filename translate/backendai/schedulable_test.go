package backendai_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
)

// The engine drains through the manager: the agents' schedulable flag,
// which the topology then reports; an unknown agent is ErrNoAgent.
func TestEngineSetSchedulable(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if err := f.e.SetSchedulable(ctx, []string{"i-ag1", "i-ag1"}, false); err != nil {
		t.Fatal(err)
	}
	if on, _ := f.d.AgentSchedulable("i-ag1"); on {
		t.Fatal("i-ag1 still schedulable")
	}
	topo, err := f.e.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range topo.Agents {
		if a.Schedulable != (a.ID != "i-ag1") {
			t.Fatalf("topology: %s schedulable %v", a.ID, a.Schedulable)
		}
	}
	if err := f.e.SetSchedulable(ctx, []string{"i-ag1", "nosuch"}, true); !errors.Is(err, translate.ErrNoAgent) {
		t.Fatalf("unknown agent: %v", err)
	}
	if on, _ := f.d.AgentSchedulable("i-ag1"); !on {
		t.Fatal("i-ag1 not schedulable again")
	}
}
