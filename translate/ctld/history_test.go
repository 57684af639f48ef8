package ctld

import (
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
)

// A job's end goes to the accounting history with who ended it; a
// running job's does not until it ends.
func TestHistoryOfCancelledJobs(t *testing.T) {
	c, _ := killJobsController(t)
	if got := killJobsAnswer(t, c, uint32(codec.V24_11), 1000, kjReq("10")); len(got) != 0 {
		t.Fatalf("scancel 10: %v", got)
	}
	if got := killJobsAnswer(t, c, uint32(codec.V24_11), 0, kjReq("12")); len(got) != 0 {
		t.Fatalf("scancel 12 as root: %v", got)
	}
	byID := map[uint32]*state.HistJob{}
	if err := c.opt.Store.History(&state.HistCond{}, func(h *state.HistJob) bool { x := *h; byID[h.ID] = &x; return true }); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uint32]struct {
		state, req uint32
	}{10: {codec.JOB_CANCELLED, 1000}, 12: {codec.JOB_CANCELLED, 0}, 40: {codec.JOB_COMPLETE, codec.NoVal}} {
		h := byID[id]
		if h == nil {
			t.Errorf("job %d not in the history (%d there)", id, len(byID))
			continue
		}
		if h.State&codec.JOB_STATE_BASE != want.state || h.ReqUID != want.req {
			t.Errorf("job %d in the history: state %s, cancelled by %d; want %s by %d", id, codec.JobStateString(h.State), h.ReqUID, codec.JobStateString(want.state), want.req)
		}
	}
	for _, id := range []uint32{11, 21, 30} {
		if byID[id] != nil {
			t.Errorf("job %d (not ended) is in the history", id)
		}
	}
}

// A step's record is written when its last node is done, with the state
// its status and its end give it.
func TestHistoryOfSteps(t *testing.T) {
	c, _ := killJobsController(t)
	c.mu.Lock()
	js := &jobSteps{live: map[uint32]*step{}}
	c.steps[30] = js
	for id, s := range map[uint32]*step{
		0: {name: "ok", nodes: []string{"n2"}, nodeList: "n2", tasks: 2, cpus: 2, left: map[string]bool{"n2": true}},
		1: {name: "bad", nodes: []string{"n2"}, nodeList: "n2", tasks: 1, cpus: 1, left: map[string]bool{"n2": true}},
		2: {name: "killed", nodes: []string{"n2"}, nodeList: "n2", tasks: 1, cpus: 1, left: map[string]bool{"n2": true}, killedBy: 1001},
		3: {name: "late", nodes: []string{"n2"}, nodeList: "n2", tasks: 1, cpus: 1, left: map[string]bool{"n2": true}, timedOut: true},
	} {
		s.id, s.start = id, 100
		js.live[id] = s
	}
	c.mu.Unlock()
	c.StepNodeDone(30, 0, "n2", 0, translate.TaskUsage{})
	c.StepNodeDone(30, 1, "n2", 3<<8, translate.TaskUsage{})
	c.StepNodeDone(30, 2, "n2", 9, translate.TaskUsage{})
	c.StepNodeDone(30, 3, "n2", 15, translate.TaskUsage{})
	var got []state.HistStep
	for i := 0; i < 200 && len(got) < 4; i++ {
		got, _ = c.opt.Store.StepsOf(30)
		time.Sleep(10 * time.Millisecond)
	}
	want := []struct {
		name        string
		state, exit uint32
		req         uint32
	}{{"ok", codec.JOB_COMPLETE, 0, codec.NoVal}, {"bad", codec.JOB_FAILED, 3 << 8, codec.NoVal},
		{"killed", codec.JOB_CANCELLED, 9, 1000}, {"late", codec.JOB_TIMEOUT, 15, codec.NoVal}}
	if len(got) != len(want) {
		t.Fatalf("steps in the history: %+v", got)
	}
	for i, w := range want {
		g := got[i]
		if g.ID != uint32(i) || g.Name != w.name || g.State != w.state || g.ExitCode != w.exit || g.ReqUID != w.req || g.Start != 100 || g.End == 0 || g.Nodes != "n2" {
			t.Errorf("step %d: %+v; want %+v", i, g, w)
		}
	}
}
