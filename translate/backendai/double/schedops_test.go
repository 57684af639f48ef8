package double

import (
	"testing"
	"time"
)

// POST /manager/scheduler/operation as 26.8.1's manager answers it: an
// excluded agent takes no new session, included again it does; an
// unknown id is InstanceNotFound after the known ones were changed.
func TestSchedulerOps(t *testing.T) {
	fx := newFixture(t, Options{Cycle: time.Hour, LongCycle: time.Hour})
	if err := fx.d.AddAgent(Agent{ID: "i-ag2", Slots: map[string]string{"cpu": "4", "mem": "16g"}}); err != nil {
		t.Fatal(err)
	}
	op := func(c *client, body any) reply { return c.post("/manager/scheduler/operation", body) }
	op(fx.alice, map[string]any{"op": "exclude-agents", "args": []string{"i-ag1"}}).problem(t, 403, "generic-forbidden", "backendai_generic_forbidden")
	op(fx.admin, map[string]any{"args": []string{"i-ag1"}}).problem(t, 400, "generic-bad-request", "api_parsing_invalid-parameters")
	op(fx.admin, map[string]any{"op": "drain", "args": []string{"i-ag1"}}).problem(t, 500, "internal-server-error", "backendai_generic_internal-error")
	op(fx.admin, map[string]any{"op": "exclude-agents", "args": "i-ag1"}).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")

	r := op(fx.admin, map[string]any{"op": "exclude-agents", "args": []string{"i-ag1", "i-ag2"}})
	if r.status != 204 || len(r.body) != 0 {
		t.Fatalf("exclude: %d %s", r.status, r.body)
	}
	for _, id := range []string{"i-ag1", "i-ag2"} {
		if on, ok := fx.d.AgentSchedulable(id); !ok || on {
			t.Fatalf("%s after exclude: schedulable %v", id, on)
		}
	}
	// Nothing can take a new session now: it stays pending.
	id := fx.alice.post("/session", batchBody("slurm-1")).json(t)["sessionId"].(string)
	fx.d.RunCycle()
	if si, _ := fx.d.Session(id); si.Status != "PENDING" {
		t.Fatalf("with every agent excluded: %s", si.Status)
	}
	// An unknown agent: the known one is changed all the same.
	op(fx.admin, map[string]any{"op": "include-agents", "args": []string{"i-ag2", "nosuch"}}).problem(t, 404, "object-not-found", "instance_read_not-found")
	if on, _ := fx.d.AgentSchedulable("i-ag2"); !on {
		t.Fatal("i-ag2 not included")
	}
	fx.d.RunCycle()
	if si, _ := fx.d.Session(id); si.Status != "SCHEDULED" || len(si.Agents) != 1 || si.Agents[0] != "i-ag2" {
		t.Fatalf("after including i-ag2: %+v", si)
	}
	list := fx.admin.gqlData(`{ agent_list(limit: 10, offset: 0, order: "+id") { items { id schedulable } } }`, nil)
	items := list["agent_list"].(map[string]any)["items"].([]any)
	if s := items[0].(map[string]any)["schedulable"]; s != false {
		t.Fatalf("agent_list shows i-ag1 schedulable %v", s)
	}
}
