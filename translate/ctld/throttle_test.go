package ctld

import (
	"context"
	"fmt"
	"log"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/local"
)

// createExec is an engine that starts every session it is asked for,
// recording the job of each.
type createExec struct {
	listExec
	mu      sync.Mutex
	created []uint32
}

func (e *createExec) CreateSession(_ context.Context, s translate.SessionSpec) (translate.SessionID, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.created = append(e.created, s.JobID)
	return translate.SessionID(fmt.Sprintf("s%d", s.JobID)), nil
}

// An array's throttle (%N) counts the tasks already split off its
// pending record but not started: after a crash between the split and
// the hand-over (or a hand-over the engine turned away), such a task
// is started only when it is among the N, and the array's record starts
// no more than the slots left.
func TestArrayThrottleCountsSplitTasks(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Now().Unix()
	job := func(id, task uint32, st uint32, sid string) *state.Job {
		j := &state.Job{ID: id, ArrayJobID: 1, ArrayTaskID: task, ArrayMax: 2, Name: "a", UserID: 1000, GroupID: 1000,
			Partition: "cpu", State: st, Reason: codec.WAIT_PRIORITY, Priority: 1, SubmitTime: now, TimeLimit: codec.NoVal,
			MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1, SessionID: sid}
		if codec.JobIsRunning(st) {
			j.StartTime, j.Nodes, j.BatchHost = now-10, "n1", "n1"
		}
		return j
	}
	// The store hands out the ids: 1 is the array (its record and script),
	// 2..5 tasks split off it.
	if _, err := store.Submit(5, &state.Script{Text: "#!/bin/sh\ntrue\n"}, func(first uint32) ([]*state.Job, error) {
		if first != 1 {
			return nil, fmt.Errorf("first id %d", first)
		}
		meta := job(1, codec.NoVal, codec.JOB_PENDING, "")
		meta.ArrayTasks = "3-9%2"
		return []*state.Job{
			meta,
			job(2, 0, codec.JOB_PENDING, ""),    // split off, never handed over
			job(3, 1, codec.JOB_PENDING, ""),    // the same
			job(4, 2, codec.JOB_RUNNING, "s4"),  // running
			job(5, 3, codec.JOB_COMPLETE, "s5"), // done: not counted
		}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cfg := fakeCluster(t, "slurm-24.11")
	exec := &createExec{listExec: listExec{list: []translate.SessionInfo{
		{ID: "s4", JobID: 4, Status: translate.SessionRunning, Nodes: []string{"n1"}},
	}}}
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Exec: exec,
		Stats: state.NewRPCStats(), ClusterName: "refcluster", SlurmUser: "root", Log: log.New(testWriter{t}, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	// end records job id done, as the engine's end event would.
	end := func(id uint32) {
		j := *c.entry(id).job()
		j.State, j.EndTime = codec.JOB_COMPLETE, now
		if err := store.Put(&j); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.replace(c.entry(id), &j)
		c.mu.Unlock()
	}
	c.dispatch(context.Background())
	if !slices.Equal(exec.created, []uint32{2}) {
		t.Fatalf("sessions created for jobs %v, want [2] (one slot of %%2 left, for the task split off first)", exec.created)
	}
	if j := c.entry(3).job(); j.SessionID != "" || j.Reason != codec.WAIT_ARRAY_TASK_LIMIT {
		t.Errorf("task 1_1 (job 3): session %q reason %s, want none, waiting on the array task limit", j.SessionID, codec.JobReasonString(j.Reason, codec.V24_11))
	}
	if j := c.entry(1).job(); j.ArrayTasks != "3-9%2" || j.Reason != codec.WAIT_ARRAY_TASK_LIMIT {
		t.Errorf("array record: tasks %q reason %s, want 3-9%%2 waiting on the array task limit", j.ArrayTasks, codec.JobReasonString(j.Reason, codec.V24_11))
	}
	// Task 2 ends: its slot goes to the other task split off (job 3),
	// not to a new one of the array's record.
	exec.created = nil
	end(4)
	c.dispatch(context.Background())
	if !slices.Equal(exec.created, []uint32{3}) {
		t.Fatalf("after one task ended, sessions created for jobs %v, want [3]", exec.created)
	}
	// Then the record's own tasks, one per slot.
	exec.created = nil
	end(2)
	c.dispatch(context.Background())
	if len(exec.created) != 1 || exec.created[0] < 6 {
		t.Fatalf("after another task ended, sessions created for jobs %v, want one new task (id 6 or above)", exec.created)
	}
	if j := c.entry(1).job(); j.ArrayTasks != "4-9%2" {
		t.Errorf("array record: tasks %q, want 4-9%%2", j.ArrayTasks)
	}
}

// testWriter sends a controller's log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }
