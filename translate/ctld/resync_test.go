package ctld

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/local"
)

// listExec is an engine whose session list the test writes, recording
// what it is asked to end.
type listExec struct {
	recExec
	list []translate.SessionInfo
}

func (e *listExec) Sessions(context.Context) ([]translate.SessionInfo, error) { return e.list, nil }

// A resync makes every job agree with its session as the engine reports
// it, whatever events were missed: each case below is a job whose event
// never came.
func TestResyncAppliesWhatEventsMissed(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Now().Unix()
	job := func(id uint32, st uint32, sid string) *state.Job {
		j := &state.Job{ID: id, ArrayTaskID: codec.NoVal, Name: "j", UserID: 1000, GroupID: 1000, Partition: "cpu",
			State: st, Reason: codec.WAIT_PRIORITY, Priority: 1, SubmitTime: now, TimeLimit: codec.NoVal,
			MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1, SessionID: sid}
		if codec.JobIsRunning(st) {
			j.StartTime, j.Nodes, j.BatchHost = now-10, "n1", "n1"
		}
		return j
	}
	cancelled := job(5, codec.JOB_CANCELLED|codec.JOB_COMPLETING, "s5")
	cancelled.EndTime = now
	if err := store.Put(
		job(1, codec.JOB_RUNNING, "s1"), // the engine: ended, exit 3
		job(2, codec.JOB_RUNNING, "s2"), // the engine: no such session
		job(3, codec.JOB_PENDING, "s3"), // handed over, the engine: none
		job(4, codec.JOB_PENDING, "s4"), // the engine: running
		cancelled,                       // the engine: still running
		job(6, codec.JOB_RUNNING, "s6"), // the engine: running (nothing to do)
	); err != nil {
		t.Fatal(err)
	}
	cfg := fakeCluster(t, "slurm-24.11")
	exec := &listExec{list: []translate.SessionInfo{
		{ID: "s1", JobID: 1, Status: translate.SessionTerminated, Reason: translate.ReasonTaskFinished, ExitCode: 3,
			Started: time.Unix(now-10, 0), Ended: time.Unix(now-1, 0)},
		{ID: "s4", JobID: 4, Status: translate.SessionRunning, Nodes: []string{"n2"}, Started: time.Unix(now-2, 0)},
		{ID: "s5", JobID: 5, Status: translate.SessionRunning, Nodes: []string{"n1"}},
		{ID: "s6", JobID: 6, Status: translate.SessionRunning, Nodes: []string{"n1"}},
		{ID: "s9", JobID: 9, Status: translate.SessionRunning, Nodes: []string{"n3"}}, // no job has it
		{ID: "s8", JobID: 8, Status: translate.SessionTerminated},                     // ended, no job: left alone
	}}
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Exec: exec,
		Stats: state.NewRPCStats(), ClusterName: "refcluster", SlurmUser: "root"})
	if err != nil {
		t.Fatal(err)
	}
	c.resync(context.Background(), false)
	want := map[uint32]string{
		1: "FAILED exit 3:0", 2: "NODE_FAIL exit 0:0", 3: "PENDING session \"\"", 4: "RUNNING on n2",
		5: "CANCELLED+COMPLETING", 6: "RUNNING on n1",
	}
	for id, w := range want {
		j := c.entry(id).job()
		var got string
		switch {
		case codec.JobIsPending(j.State):
			got = fmt.Sprintf("PENDING session %q", j.SessionID)
		case codec.JobIsRunning(j.State):
			got = "RUNNING on " + j.Nodes
		case j.State&codec.JOB_COMPLETING != 0:
			got = codec.JobStateString(j.State&codec.JOB_STATE_BASE) + "+COMPLETING"
		default:
			got = fmt.Sprintf("%s exit %d:%d", codec.JobStateString(j.State), j.ExitCode>>8, j.ExitCode&0x7f)
		}
		if got != w {
			t.Errorf("job %d after resync: %s, want %s", id, got, w)
		}
	}
	// The cancel is sent again; the session no job has is ended.
	calls := slices.Clone(exec.calls)
	slices.Sort(calls)
	if !slices.Equal(calls, []string{"destroy s5", "destroy s9"}) {
		t.Errorf("engine calls %q, want the ends of s5 (cancelled job) and s9 (no job)", calls)
	}
	// A second resync with nothing new changes nothing.
	exec.calls = nil
	exec.list = exec.list[:0]
	for _, s := range []translate.SessionInfo{
		{ID: "s1", JobID: 1, Status: translate.SessionTerminated, ExitCode: 3},
		{ID: "s4", JobID: 4, Status: translate.SessionRunning, Nodes: []string{"n2"}},
		{ID: "s6", JobID: 6, Status: translate.SessionRunning, Nodes: []string{"n1"}},
	} {
		exec.list = append(exec.list, s)
	}
	c.resync(context.Background(), false)
	if j := c.entry(1).job(); j.ExitCode != 3<<8 {
		t.Errorf("job 1 changed on a second resync: %+v", j)
	}
	if len(exec.calls) != 0 {
		t.Errorf("a second resync with nothing new asked the engine %q", exec.calls)
	}
}

// A session recorded after the engine's list was taken is not taken for
// lost: its job is not handed over a second time.
func TestResyncSparesSessionsNewerThanItsList(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	j := &state.Job{ID: 1, ArrayTaskID: codec.NoVal, UserID: 1000, Partition: "cpu", State: codec.JOB_PENDING,
		Priority: 1, SessionID: "fresh", TimeLimit: codec.NoVal, MinNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1}
	if err := store.Put(j); err != nil {
		t.Fatal(err)
	}
	cfg := fakeCluster(t, "slurm-24.11")
	exec := &listExec{}
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Exec: exec,
		Stats: state.NewRPCStats(), ClusterName: "refcluster", SlurmUser: "root"})
	if err != nil {
		t.Fatal(err)
	}
	c.createdAt["fresh"] = time.Now().Add(time.Second) // recorded after the list below is taken
	c.resync(context.Background(), false)
	if got := c.entry(1).job().SessionID; got != "fresh" {
		t.Errorf("a session recorded after the list was taken for lost: job's session now %q", got)
	}
	delete(c.createdAt, "fresh")
	c.resync(context.Background(), false)
	if got := c.entry(1).job().SessionID; got != "" {
		t.Errorf("a session the engine does not have, older than the list: job's session %q, want it handed over again", got)
	}
}

// An engine's RUNNING event is acknowledged (SessionEvent.Shown) only
// once listings show the job running: the embedded engine holds the
// job's script until then. An event that changes nothing is
// acknowledged at once.
func TestRunningShownBeforeAck(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Now().Unix()
	if err := store.Put(&state.Job{ID: 1, ArrayTaskID: codec.NoVal, Name: "j", UserID: 1000, GroupID: 1000, Partition: "cpu",
		State: codec.JOB_PENDING, Reason: codec.WAIT_PRIORITY, Priority: 1, SubmitTime: now, TimeLimit: codec.NoVal,
		MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	cfg := fakeCluster(t, "slurm-24.11")
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Exec: &listExec{},
		Stats: state.NewRPCStats(), ClusterName: "refcluster", SlurmUser: "root"})
	if err != nil {
		t.Fatal(err)
	}
	shown := make(chan string, 2)
	seen := func() { // called with c.mu held: the published snapshot only
		shown <- codec.JobStateString(c.Snapshot().Jobs()[0].State)
	}
	c.applyEvent(translate.SessionEvent{ID: "s1", JobID: 1, Status: translate.SessionRunning, Time: time.Now(), Nodes: []string{"n1"}, Shown: seen})
	select {
	case st := <-shown:
		if st != "RUNNING" {
			t.Fatalf("acknowledged while listings show the job %s", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RUNNING event never acknowledged")
	}
	c.applyEvent(translate.SessionEvent{ID: "other", JobID: 1, Status: translate.SessionRunning, Time: time.Now(), Shown: seen})
	select {
	case <-shown:
	default:
		t.Fatal("an event of another session was not acknowledged at once")
	}
}
