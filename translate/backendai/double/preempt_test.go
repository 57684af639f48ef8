package double

import (
	"slices"
	"testing"
	"time"
)

func interactive(name, rg string, jobPrio int) map[string]any {
	return map[string]any{"name": name, "image": "python", "enqueueOnly": true, "job_priority": jobPrio,
		"config": map[string]any{"scaling_group": rg, "resources": map[string]any{"cpu": 2, "mem": "2g"}}}
}

func preemptFixture(t *testing.T, mode string) *fixture {
	fx := newFixture(t, Options{})
	if err := fx.d.AddResourceGroup(ResourceGroup{Name: "pre", Preemption: Preemption{Enabled: true, Mode: mode}}); err != nil {
		t.Fatal(err)
	}
	if err := fx.d.AddAgent(Agent{ID: "i-pre1", ResourceGroup: "pre", Slots: map[string]string{"cpu": "2", "mem": "8g"}}); err != nil {
		t.Fatal(err)
	}
	return fx
}

func TestPreemptionTerminate(t *testing.T) {
	fx := preemptFixture(t, "terminate")
	ev := fx.alice.sse(t, "scope=session")
	low := fx.alice.post("/session", interactive("low", "pre", 0)).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(low, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// another user's lower job_priority session is no victim (victim_scope user)
	high := fx.alice.post("/session", interactive("high", "pre", 10)).json(t)["sessionId"].(string)
	_, data := ev.until(t, "session_reserved", 5*time.Second)
	if data["sessionId"] != high || data["reason"] != "preemption-reservation" {
		t.Fatalf("%v", data)
	}
	_, data = ev.until(t, "session_preempted", 5*time.Second)
	if data["sessionId"] != low || data["reason"] != "preempted-by-reservation" {
		t.Fatalf("%v", data)
	}
	_, data = ev.until(t, "session_terminating", 5*time.Second)
	if data["sessionId"] != low || data["reason"] != "PREEMPTED_BY_SCHEDULER" {
		t.Fatalf("%v", data)
	}
	if _, err := fx.d.WaitStatus(high, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	lo, _ := fx.d.Session(low)
	if lo.Status != "TERMINATED" || *lo.StatusInfo != "PREEMPTED_BY_SCHEDULER" ||
		!slices.Equal(lo.History, []string{"PENDING", "SCHEDULED", "PREPARING", "PREPARED", "CREATING", "RUNNING", "PREEMPTED", "TERMINATING", "TERMINATED"}) {
		t.Fatalf("%+v", lo)
	}
	hi, _ := fx.d.Session(high)
	if !slices.Equal(hi.History[:3], []string{"PENDING", "RESERVED", "SCHEDULED"}) {
		t.Fatalf("%+v", hi)
	}
	// equal job_priority never preempts
	same := fx.alice.post("/session", interactive("same", "pre", 10)).json(t)["sessionId"].(string)
	time.Sleep(200 * time.Millisecond)
	if si, _ := fx.d.Session(same); si.Status != "PENDING" && si.Status != "DEPRIORITIZING" {
		t.Fatalf("%+v", si)
	}
}

func TestPreemptionScope(t *testing.T) {
	fx := preemptFixture(t, "terminate")
	fx.d.AddUser(User{Email: "bob@example.com", Projects: []string{"default"}})
	kp, _ := fx.d.AddKeyPair(KeyPair{UserEmail: "bob@example.com"})
	bob := newClient(t, fx.d, kp.AccessKey, kp.SecretKey)
	low := bob.post("/session", interactive("bob-low", "pre", 0)).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(low, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	high := fx.alice.post("/session", interactive("alice-high", "pre", 100)).json(t)["sessionId"].(string)
	time.Sleep(200 * time.Millisecond)
	if si, _ := fx.d.Session(low); si.Status != "RUNNING" {
		t.Fatalf("another user's session was preempted: %+v", si)
	}
	if si, _ := fx.d.Session(high); si.Status == "RUNNING" || si.Status == "RESERVED" {
		t.Fatalf("%+v", si)
	}
}

func TestPreemptionReschedule(t *testing.T) {
	fx := preemptFixture(t, "reschedule")
	low := fx.alice.post("/session", interactive("low", "pre", 0)).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(low, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	high := fx.alice.post("/session", interactive("high", "pre", 5)).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(high, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	lo, _ := fx.d.Session(low)
	if lo.Status != "PENDING" && lo.Status != "DEPRIORITIZING" {
		t.Fatalf("%+v", lo)
	}
	if *lo.StatusInfo != "RESCHEDULED" || !slices.Contains(lo.History, "RESCHEDULING") || !lo.StartsAt.IsZero() {
		t.Fatalf("%+v", lo)
	}
	// once the preemptor ends, the same session (same id) runs again
	fx.alice.delete("/session/" + high)
	if _, err := fx.d.WaitStatus(low, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}
