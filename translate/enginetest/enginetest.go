// Package enginetest is the contract every engine under the controller
// keeps (translate.Executor and its optional capabilities): the same
// tests run against the embedded engine, against the Backend.AI client
// over the manager test double, and against any future engine. It holds
// only what the controller relies on; how an engine runs a session is its
// own business.
package enginetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// Engine is an engine under test.
type Engine interface {
	translate.Backend
	translate.Executor
}

// Harness makes what the contract needs of one engine.
type Harness struct {
	// Engine is started and empty; the test closes it.
	Engine Engine
	// Spec returns a batch session spec for job id running script (a
	// /bin/sh script) as an unprivileged user, in a resource group the
	// engine has, asking 1 CPU on 1 node.
	Spec func(job uint32, script string) translate.SessionSpec
	// Output returns what the session's script wrote to its standard
	// output so far (a file, container logs).
	Output func(id translate.SessionID, spec translate.SessionSpec) string
	// Patience scales the waits for a slow engine (default 1).
	Patience time.Duration
}

// Run runs the contract against the engine mk makes (a fresh one per
// test).
func Run(t *testing.T, mk func(t *testing.T) *Harness) {
	t.Run("Topology", func(t *testing.T) { topology(t, newWatch(t, mk(t))) })
	t.Run("RunsToTheEnd", func(t *testing.T) { runsToTheEnd(t, newWatch(t, mk(t))) })
	t.Run("ExitCode", func(t *testing.T) { exitCode(t, newWatch(t, mk(t))) })
	t.Run("DestroyRunning", func(t *testing.T) { destroyRunning(t, newWatch(t, mk(t))) })
	t.Run("DestroyPending", func(t *testing.T) { destroyPending(t, newWatch(t, mk(t))) })
	t.Run("DestroyUnknownAndEnded", func(t *testing.T) { destroyUnknownAndEnded(t, newWatch(t, mk(t))) })
	t.Run("TimeLimit", func(t *testing.T) { timeLimit(t, newWatch(t, mk(t))) })
	t.Run("Capabilities", func(t *testing.T) { capabilities(t, newWatch(t, mk(t))) })
	t.Run("SessionsAreTheTruth", func(t *testing.T) { sessionsAreTheTruth(t, newWatch(t, mk(t))) })
}

// watch collects an engine's events.
type watch struct {
	*Harness
	t      *testing.T
	mu     sync.Mutex
	cond   *sync.Cond
	events map[translate.SessionID][]translate.SessionEvent
}

func newWatch(t *testing.T, h *Harness) *watch {
	if h.Patience <= 0 {
		h.Patience = 1
	}
	w := &watch{Harness: h, t: t, events: map[translate.SessionID][]translate.SessionEvent{}}
	w.cond = sync.NewCond(&w.mu)
	go func() {
		for ev := range h.Engine.Events() {
			ev.Ack()
			w.mu.Lock()
			w.events[ev.ID] = append(w.events[ev.ID], ev)
			w.cond.Broadcast()
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		// Nothing of the test may be left running.
		ctx, cancel := ctx()
		defer cancel()
		ss, _ := h.Engine.Sessions(ctx)
		for _, s := range ss {
			if !s.Status.Terminal() {
				_ = h.Engine.DestroySession(ctx, s.ID, true)
			}
		}
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			ss, _ := h.Engine.Sessions(ctx)
			if !slices.ContainsFunc(ss, func(i translate.SessionInfo) bool { return !i.Status.Terminal() }) {
				break
			}
		}
	})
	return w
}

func ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func (w *watch) create(spec translate.SessionSpec) translate.SessionID {
	w.t.Helper()
	c, cancel := ctx()
	defer cancel()
	id, err := w.Engine.CreateSession(c, spec)
	if err != nil {
		w.t.Fatalf("CreateSession: %v", err)
	}
	return id
}

// wait returns the first event of id whose status is one of sts.
func (w *watch) wait(id translate.SessionID, d time.Duration, sts ...translate.SessionStatus) translate.SessionEvent {
	w.t.Helper()
	d *= w.Patience
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() { w.mu.Lock(); w.cond.Broadcast(); w.mu.Unlock() })
	defer timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for _, ev := range w.events[id] {
			if slices.Contains(sts, ev.Status) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("session %s: none of %v within %v; events: %+v", id, sts, d, w.events[id])
		}
		w.cond.Wait()
	}
}

func (w *watch) statuses(id translate.SessionID) []translate.SessionStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []translate.SessionStatus
	for _, ev := range w.events[id] {
		out = append(out, ev.Status)
	}
	return out
}

func (w *watch) info(id translate.SessionID) *translate.SessionInfo {
	w.t.Helper()
	c, cancel := ctx()
	defer cancel()
	ss, err := w.Engine.Sessions(c)
	if err != nil {
		w.t.Fatalf("Sessions: %v", err)
	}
	for i := range ss {
		if ss[i].ID == id {
			return &ss[i]
		}
	}
	return nil
}

var terminal = []translate.SessionStatus{translate.SessionTerminated, translate.SessionCancelled, translate.SessionError}

func topology(t *testing.T, w *watch) {
	c, cancel := ctx()
	defer cancel()
	topo, err := w.Engine.Topology(c)
	if err != nil || topo == nil {
		t.Fatalf("Topology: %v", err)
	}
	if len(topo.Agents) == 0 || len(topo.Groups) == 0 {
		t.Fatalf("Topology: %d agents in %d resource groups; an engine that runs sessions has some", len(topo.Agents), len(topo.Groups))
	}
	ids := map[string]bool{}
	for _, a := range topo.Agents {
		if a.ID == "" || ids[a.ID] {
			t.Errorf("agent ID %q empty or twice", a.ID)
		}
		ids[a.ID] = true
		if a.Capacity.CPU <= 0 || a.Capacity.Mem == 0 {
			t.Errorf("agent %s: capacity %+v", a.ID, a.Capacity)
		}
	}
	for _, g := range topo.Groups {
		for _, a := range g.AgentIDs {
			if !ids[a] {
				t.Errorf("resource group %s names agent %s, which Topology does not list", g.Name, a)
			}
		}
	}
	spec := w.Spec(1, "#!/bin/sh\ntrue\n")
	if !slices.ContainsFunc(topo.Groups, func(g translate.ResourceGroup) bool { return g.Name == spec.ResourceGroup }) {
		t.Errorf("the harness's resource group %q is not in Topology", spec.ResourceGroup)
	}
}

func runsToTheEnd(t *testing.T, w *watch) {
	spec := w.Spec(11, "#!/bin/sh\necho hello from the job\n")
	id := w.create(spec)
	run := w.wait(id, 60*time.Second, translate.SessionRunning)
	if len(run.Nodes) == 0 {
		t.Errorf("RUNNING event without the session's nodes: %+v", run)
	}
	end := w.wait(id, 60*time.Second, terminal...)
	if end.Status != translate.SessionTerminated || end.ExitCode != 0 || end.Signal != 0 || end.Reason != translate.ReasonTaskFinished {
		t.Errorf("a script that exits 0 ended %+v, want TERMINATED task-finished exit 0", end)
	}
	if end.JobID != 11 {
		t.Errorf("events carry job %d, want the spec's 11", end.JobID)
	}
	if out := w.Output(id, spec); out != "hello from the job\n" {
		t.Errorf("output %q", out)
	}
	// Per session, statuses only move forward.
	order := map[translate.SessionStatus]int{translate.SessionPending: 0, translate.SessionScheduled: 1, translate.SessionPreparing: 2,
		translate.SessionRunning: 3, translate.SessionTerminating: 4, translate.SessionTerminated: 5}
	last := -1
	for _, st := range w.statuses(id) {
		if order[st] < last {
			t.Errorf("statuses went back: %v", w.statuses(id))
			break
		}
		last = order[st]
	}
	if info := w.info(id); info == nil || info.Status != translate.SessionTerminated || info.JobID != 11 {
		t.Errorf("Sessions after the end: %+v, want it TERMINATED (ended sessions stay listed until purged)", info)
	} else if info.Ended.IsZero() || info.Started.IsZero() || info.Reason != translate.ReasonTaskFinished {
		t.Errorf("Sessions' ended session lacks its end: %+v", info)
	}
}

func exitCode(t *testing.T, w *watch) {
	id := w.create(w.Spec(12, "#!/bin/sh\nexit 3\n"))
	end := w.wait(id, 60*time.Second, terminal...)
	switch {
	case end.ExitUnknown:
		if end.Reason != translate.ReasonTaskFailed {
			t.Errorf("an engine that does not know exit codes must say the script failed: %+v", end)
		}
	case end.ExitCode != 3 || end.Status != translate.SessionTerminated:
		t.Errorf("exit 3 ended %+v", end)
	}
	if info := w.info(id); info == nil || info.ExitCode != end.ExitCode || info.ExitUnknown != end.ExitUnknown {
		t.Errorf("Sessions and the event disagree on the exit: %+v vs %+v", info, end)
	}
}

func destroyRunning(t *testing.T, w *watch) {
	id := w.create(w.Spec(13, "#!/bin/sh\necho started\nexec sleep 300\n"))
	w.wait(id, 60*time.Second, translate.SessionRunning)
	c, cancel := ctx()
	defer cancel()
	if err := w.Engine.DestroySession(c, id, false); err != nil {
		t.Fatalf("DestroySession of a running session: %v", err)
	}
	end := w.wait(id, 60*time.Second, terminal...)
	if end.Reason != translate.ReasonUserRequested && end.Reason != translate.ReasonForceTerminated {
		t.Errorf("destroyed running session ended %+v, want reason user-requested", end)
	}
	if err := w.Engine.DestroySession(c, id, false); err != nil {
		t.Errorf("DestroySession of an ended session: %v, want nil", err)
	}
}

func destroyPending(t *testing.T, w *watch) {
	// Pending: it may not start for an hour.
	spec := w.Spec(14, "#!/bin/sh\ntrue\n")
	spec.StartAt = time.Now().Add(time.Hour)
	c, cancel := ctx()
	defer cancel()
	id, err := w.Engine.CreateSession(c, spec)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	w.wait(id, 30*time.Second, translate.SessionPending)
	if err := w.Engine.DestroySession(c, id, false); err != nil {
		t.Fatalf("DestroySession of a pending session: %v", err)
	}
	end := w.wait(id, 30*time.Second, terminal...)
	if end.Status != translate.SessionCancelled {
		t.Errorf("a destroyed pending session ended %+v, want CANCELLED", end)
	}
	if slices.Contains(w.statuses(id), translate.SessionRunning) {
		t.Errorf("a pending session destroyed ran: %v", w.statuses(id))
	}
}

func destroyUnknownAndEnded(t *testing.T, w *watch) {
	c, cancel := ctx()
	defer cancel()
	if err := w.Engine.DestroySession(c, "00000000-0000-4000-8000-000000000000", false); !errors.Is(err, translate.ErrNoSession) {
		t.Errorf("DestroySession of an unknown session: %v, want translate.ErrNoSession", err)
	}
}

func timeLimit(t *testing.T, w *watch) {
	spec := w.Spec(15, "#!/bin/sh\nexec sleep 300\n")
	spec.TimeLimit, spec.KillWait = 2*time.Second, time.Second
	id := w.create(spec)
	run := w.wait(id, 60*time.Second, translate.SessionRunning)
	end := w.wait(id, 60*time.Second, terminal...)
	if end.Reason != translate.ReasonTaskTimeout {
		t.Errorf("a session past its 2 s limit ended %+v, want task-timeout", end)
	}
	if took := end.Time.Sub(run.Time); took < 2*time.Second || took > 30*time.Second*w.Patience {
		t.Errorf("ended %v after it started, its limit 2 s", took)
	}
}

func capabilities(t *testing.T, w *watch) {
	id := w.create(w.Spec(16, "#!/bin/sh\ntrap 'echo got USR1' USR1\necho started\nwhile :; do sleep 0.1; done\n"))
	w.wait(id, 60*time.Second, translate.SessionRunning)
	c, cancel := ctx()
	defer cancel()
	if tl, ok := w.Engine.(translate.TimeLimiter); ok {
		if err := tl.UpdateTimeLimit(c, id, 2*time.Second); err != nil {
			t.Errorf("UpdateTimeLimit of a running session: %v", err)
		} else {
			end := w.wait(id, 60*time.Second, terminal...)
			if end.Reason != translate.ReasonTaskTimeout {
				t.Errorf("after its limit was lowered to 2 s the session ended %+v, want task-timeout", end)
			}
		}
	} else {
		t.Logf("the engine cannot change a running session's limit (the controller refuses that update)")
	}
	if sg, ok := w.Engine.(translate.Signaller); ok {
		id2 := w.create(w.Spec(17, "#!/bin/sh\ntrap 'echo got USR1' USR1\necho started\nwhile :; do sleep 0.1; done\n"))
		w.wait(id2, 60*time.Second, translate.SessionRunning)
		time.Sleep(300 * time.Millisecond) // the trap is set
		if err := sg.SignalSession(c, id2, 10, true); err != nil {
			t.Errorf("SignalSession USR1: %v", err)
		}
		deadline := time.Now().Add(10 * time.Second * w.Patience)
		for !containsLine(w.Output(id2, w.Spec(17, "")), "got USR1") && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if out := w.Output(id2, w.Spec(17, "")); !containsLine(out, "got USR1") {
			t.Errorf("the script's trap did not see USR1: %q", out)
		}
		if err := sg.SignalSession(c, "00000000-0000-4000-8000-000000000000", 10, false); !errors.Is(err, translate.ErrNoSession) {
			t.Errorf("SignalSession of an unknown session: %v, want ErrNoSession", err)
		}
	}
}

func sessionsAreTheTruth(t *testing.T, w *watch) {
	id := w.create(w.Spec(18, "#!/bin/sh\nexec sleep 300\n"))
	w.wait(id, 60*time.Second, translate.SessionRunning)
	info := w.info(id)
	if info == nil || info.Status != translate.SessionRunning || info.JobID != 18 || len(info.Nodes) == 0 || info.Started.IsZero() {
		t.Fatalf("Sessions of a running session: %+v", info)
	}
	ev := info.Event()
	if ev.Status != translate.SessionRunning || ev.ID != id || ev.Time.IsZero() {
		t.Errorf("SessionInfo.Event of a running session: %+v", ev)
	}
}

func containsLine(s, line string) bool {
	return slices.Contains(splitLines(s), line)
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
