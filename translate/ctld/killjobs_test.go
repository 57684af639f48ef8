package ctld

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/local"
)

// recExec is an engine that only records what it is asked.
type recExec struct {
	mu    sync.Mutex
	calls []string
}

func (e *recExec) CreateSession(context.Context, translate.SessionSpec) (translate.SessionID, error) {
	return "", fmt.Errorf("not in this test")
}

func (e *recExec) DestroySession(_ context.Context, id translate.SessionID, forced bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, fmt.Sprintf("destroy %s", id))
	return nil
}

func (e *recExec) SignalSession(_ context.Context, id translate.SessionID, sig int, batchOnly bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, fmt.Sprintf("signal %s %d batch=%v", id, sig, batchOnly))
	return nil
}

func (e *recExec) Sessions(context.Context) ([]translate.SessionInfo, error) { return nil, nil }
func (e *recExec) Events() <-chan translate.SessionEvent                     { return nil }

// killJobsController holds, for users 1000 and 2000:
//
//	10 a cpu   1000 pending (held)     11 a gpu 1000 pending
//	12 a cpu   2000 pending            20 arr  1000 array, tasks 3-4 pending
//	21 = 20_1  1000 running on n1      22 = 20_2 1000 running on n3
//	30 r cpu   1000 running on n2      40 done 1000 completed
func killJobsController(t *testing.T) (*Controller, *recExec) {
	t.Helper()
	cfg := fakeCluster(t, "slurm-24.11")
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Now().Unix()
	job := func(id, uid uint32, name, part string, st uint32) *state.Job {
		return &state.Job{ID: id, ArrayTaskID: codec.NoVal, Name: name, UserID: uid, GroupID: uid, Partition: part,
			State: st, Reason: codec.WAIT_PRIORITY, Priority: 1, SubmitTime: now, TimeLimit: codec.NoVal,
			MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1}
	}
	held := job(10, 1000, "a", "cpu", codec.JOB_PENDING)
	held.Priority, held.HeldBy, held.Reason = 0, 2, codec.WAIT_HELD_USER
	meta := job(20, 1000, "arr", "cpu", codec.JOB_PENDING)
	meta.ArrayJobID, meta.ArrayTasks, meta.ArraySpec = 20, "3-4", "1-4"
	task := func(id, t uint32, node string) *state.Job {
		j := job(id, 1000, "arr", "cpu", codec.JOB_RUNNING)
		j.ArrayJobID, j.ArrayTaskID, j.SessionID, j.Nodes, j.BatchHost, j.StartTime = 20, t, fmt.Sprintf("s%d", id), node, node, now
		return j
	}
	run := job(30, 1000, "r", "cpu", codec.JOB_RUNNING)
	run.SessionID, run.Nodes, run.BatchHost, run.StartTime = "s30", "n2", "n2", now
	done := job(40, 1000, "done", "cpu", codec.JOB_COMPLETE)
	done.EndTime = now
	if err := store.Put(held, job(11, 1000, "a", "gpu", codec.JOB_PENDING), job(12, 2000, "a", "cpu", codec.JOB_PENDING),
		meta, task(21, 1, "n1"), task(22, 2, "n3"), run, done); err != nil {
		t.Fatal(err)
	}
	return controllerWith(t, cfg, store)
}

// heldJob is a user-held pending job of uid's, as sbatch --hold makes
// one (kept cold by the controller).
func heldJob(id, uid uint32, name string, now int64) *state.Job {
	return &state.Job{ID: id, ArrayTaskID: codec.NoVal, Name: name, UserID: uid, GroupID: uid, Partition: "cpu",
		State: codec.JOB_PENDING, Reason: codec.WAIT_HELD_USER, HeldBy: 2, SubmitTime: now, TimeLimit: codec.NoVal,
		MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1}
}

// controllerWith builds a controller on store with a recording engine.
func controllerWith(t *testing.T, cfg *conf.Config, store *state.Store) (*Controller, *recExec) {
	t.Helper()
	exec := &recExec{}
	c, err := New(context.Background(), Options{
		Conf: cfg, Store: store, Backend: local.New(cfg), Exec: exec, Stats: state.NewRPCStats(),
		ClusterName: "refcluster", ServerHost: "slurm-frontend", ServerAddr: "127.0.0.1", Port: testPort,
		SlurmUser: "root", SlurmUID: 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, exec
}

// killJobsAnswer sends m as uid and returns the answer as scancel -v
// would list it ("ID: CODE MSG" per entry), or "rc N" for a return code.
func killJobsAnswer(t *testing.T, c *Controller, v, uid uint32, m codec.KillJobsRequest) []string {
	t.Helper()
	var w codec.Writer
	m.Encode(&w, uint16(v))
	rep := c.Slow(&Request{Version: uint16(v), MsgType: codec.REQUEST_KILL_JOBS, UID: uid, GID: uid, Body: w.B})
	r := codec.NewReader(rep.Body)
	if rep.MsgType == codec.RESPONSE_SLURM_RC {
		return []string{fmt.Sprintf("rc %d", r.U32())}
	}
	if rep.MsgType != codec.RESPONSE_KILL_JOBS {
		t.Fatalf("reply type %d", rep.MsgType)
	}
	var resp codec.KillJobsResponse
	if err := resp.Decode(&r, uint16(v)); err != nil {
		t.Fatalf("decode reply: %v", err)
	}
	out := []string{}
	for _, j := range resp.Jobs {
		s := fmt.Sprintf("%s: %d", j.ID.String(), j.ErrorCode)
		if j.ErrorMsg != "" {
			s += " " + j.ErrorMsg
		}
		out = append(out, s)
	}
	return out
}

// kjReq is a request as scancel --ctld sends it: SIGKILL, no filters.
func kjReq(jobs ...string) codec.KillJobsRequest {
	return codec.KillJobsRequest{Jobs: jobs, Signal: 9, State: codec.JOB_END}
}

func jobState(c *Controller, id uint32) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(id)
	if e == nil {
		return "gone"
	}
	s := codec.JobStateString(e.job().State & codec.JOB_STATE_BASE)
	if codec.JobIsCompleting(e.job().State) {
		s += "+COMPLETING"
	}
	if e.job().ArrayTasks != "" {
		s += " [" + e.job().ArrayTasks + "]"
	}
	return s
}

func TestKillJobs(t *testing.T) {
	verbose := func(m codec.KillJobsRequest) codec.KillJobsRequest { m.Flags |= codec.KillJobsVerbose; return m }
	denied := "2002 Access/permission denied"
	cases := []struct {
		name   string
		uid    uint32
		req    codec.KillJobsRequest
		want   []string
		states map[uint32]string // after
		calls  []string          // engine calls
	}{
		{name: "own pending job", uid: 1000, req: verbose(kjReq("10")),
			want: []string{"10: 0"}, states: map[uint32]string{10: "CANCELLED", 11: "PENDING"}},
		{name: "quiet success", uid: 1000, req: kjReq("10"), want: []string{}, states: map[uint32]string{10: "CANCELLED"}},
		{name: "other user's job", uid: 2000, req: verbose(kjReq("10")),
			want: []string{"10: " + denied}, states: map[uint32]string{10: "PENDING"}},
		{name: "operator", uid: 0, req: kjReq("10", "12"), want: []string{},
			states: map[uint32]string{10: "CANCELLED", 12: "CANCELLED"}},
		{name: "name filter, other user's job denied", uid: 1000,
			req:    verbose(codec.KillJobsRequest{JobName: "a", Signal: 9, State: codec.JOB_END}),
			want:   []string{"12: " + denied, "10: 0", "11: 0"},
			states: map[uint32]string{10: "CANCELLED", 11: "CANCELLED", 12: "PENDING"}},
		{name: "name and partition filter", uid: 1000,
			req:    codec.KillJobsRequest{JobName: "a", Partition: "gpu", Signal: 9, State: codec.JOB_END},
			want:   []string{},
			states: map[uint32]string{10: "PENDING", 11: "CANCELLED"}},
		{name: "user filter", uid: 0,
			req:    verbose(codec.KillJobsRequest{JobName: "a", UserName: "u2000", UserID: 2000, Signal: 9, State: codec.JOB_END}),
			want:   []string{"12: 0"},
			states: map[uint32]string{10: "PENDING", 12: "CANCELLED"}},
		{name: "state filter", uid: 1000,
			req:    verbose(codec.KillJobsRequest{State: codec.JOB_RUNNING, Signal: 9}),
			want:   []string{"20_1: 0", "20_2: 0", "30: 0"},
			states: map[uint32]string{21: "CANCELLED+COMPLETING", 30: "CANCELLED+COMPLETING", 10: "PENDING", 20: "PENDING [3-4]"},
			calls:  []string{"destroy s21", "destroy s22", "destroy s30"}},
		{name: "node filter", uid: 1000,
			req:    verbose(codec.KillJobsRequest{Nodelist: "n[1-2]", Signal: 9, State: codec.JOB_END}),
			want:   []string{"20_1: 0", "30: 0"},
			states: map[uint32]string{21: "CANCELLED+COMPLETING", 22: "RUNNING", 30: "CANCELLED+COMPLETING"},
			calls:  []string{"destroy s21", "destroy s30"}},
		{name: "filters exclude a job named by id", uid: 1000,
			req: func() codec.KillJobsRequest { m := kjReq("10", "30"); m.JobName = "zz"; return m }(),
			want: []string{"10: 2172 Job name a != filter name zz: Cannot signal job",
				"30: 2172 Job name r != filter name zz: Cannot signal job"}},
		{name: "more filter messages", uid: 1000,
			req: func() codec.KillJobsRequest {
				m := kjReq("10")
				m.State = codec.JOB_RUNNING
				return m
			}(),
			want: []string{"10: 2172 Job state PENDING != filter state RUNNING: Cannot signal job"}},
		{name: "account", uid: 1000,
			req:  func() codec.KillJobsRequest { m := kjReq("10"); m.Account = "zz"; return m }(),
			want: []string{"10: 2172 Job account (null) != filter account zz: Cannot signal job"}},
		{name: "qos", uid: 1000, req: func() codec.KillJobsRequest { m := kjReq("10"); m.QOS = "zz"; return m }(),
			want: []string{"10: 2172 Job qos NULL != filter qos zz: Cannot signal job"}},
		{name: "reservation", uid: 1000, req: func() codec.KillJobsRequest { m := kjReq("10"); m.Reservation = "zz"; return m }(),
			want: []string{"10: 2172 Job reservation (null) does not include filter reservation zz: Cannot signal job"}},
		{name: "wckey", uid: 1000, req: func() codec.KillJobsRequest { m := kjReq("10"); m.Wckey = "zz"; return m }(),
			want: []string{"10: 2172 Job wckey (null) != filter wckey zz: Cannot signal job"}},
		{name: "nodes of a pending job", uid: 1000, req: func() codec.KillJobsRequest { m := kjReq("10", "30"); m.Nodelist = "n1"; return m }(),
			want: []string{"10: 2172 Job does not have nodes but filter has nodes n1: Cannot signal job",
				"30: 2172 Job nodes n2 does not intersect with filter nodes n1: Cannot signal job"}},
		{name: "done and unknown, verbose", uid: 1000, req: verbose(kjReq("40", "99", "10")),
			want: []string{"40: 2021 Job/step already completing or completed", "99: 2017 Invalid job id specified", "10: 0"}},
		{name: "array expression", uid: 1000, req: verbose(kjReq("20_[1-4,9]")),
			want:   []string{"20_[9]: 2017 Invalid job id specified", "20_[3-4]: 0", "20_1: 0", "20_2: 0"},
			states: map[uint32]string{20: "CANCELLED [3-4]", 21: "CANCELLED+COMPLETING", 22: "CANCELLED+COMPLETING"},
			calls:  []string{"destroy s21", "destroy s22"}},
		{name: "some pending tasks", uid: 1000, req: verbose(kjReq("20_[2-3]")),
			want:   []string{"20_[3]: 0", "20_2: 0"},
			states: map[uint32]string{20: "PENDING [4]", 21: "RUNNING", 22: "CANCELLED+COMPLETING"},
			calls:  []string{"destroy s22"}},
		{name: "one pending task", uid: 1000, req: verbose(kjReq("20_4")),
			want: []string{"20_[4]: 0"}, states: map[uint32]string{20: "PENDING [3]"}},
		{name: "one running task by its own id", uid: 1000, req: verbose(kjReq("21")),
			want: []string{"20_1: 0"}, states: map[uint32]string{20: "PENDING [3-4]", 21: "CANCELLED+COMPLETING"}, calls: []string{"destroy s21"}},
		{name: "whole array", uid: 1000, req: verbose(kjReq("20")),
			want:   []string{"20: 0", "20_2: 0", "20_1: 0"},
			states: map[uint32]string{20: "CANCELLED [3-4]", 21: "CANCELLED+COMPLETING", 22: "CANCELLED+COMPLETING"},
			calls:  []string{"destroy s22", "destroy s21"}},
		{name: "whole array as another user", uid: 2000, req: kjReq("20"),
			want:   []string{"20: " + denied, "20: " + denied, "20: " + denied},
			states: map[uint32]string{20: "PENDING [3-4]", 21: "RUNNING"}},
		{name: "signal to pending tasks", uid: 1000,
			req:    func() codec.KillJobsRequest { m := kjReq("20_[3-4]", "20_3", "10"); m.Signal = 10; return m }(),
			want:   []string{"20_[3-4]: 2020 Job can not be altered now, try again later", "20_[3]: 2020 Job can not be altered now, try again later", "10: 2020 Job can not be altered now, try again later"},
			states: map[uint32]string{20: "PENDING [3-4]", 10: "PENDING"}},
		{name: "signal to the batch shell", uid: 1000,
			req: func() codec.KillJobsRequest {
				m := verbose(kjReq("30"))
				m.Signal, m.Flags = 10, m.Flags|codec.KillJobBatch
				return m
			}(),
			want:   []string{"30: 0"},
			states: map[uint32]string{30: "RUNNING"},
			calls:  []string{"signal s30 10 batch=true"}},
		{name: "signal to the steps only", uid: 1000,
			req:    func() codec.KillJobsRequest { m := kjReq("30"); m.Signal = 10; return m }(),
			want:   []string{},
			states: map[uint32]string{30: "RUNNING"}},
		{name: "full signal", uid: 1000,
			req:   func() codec.KillJobsRequest { m := kjReq("30"); m.Signal, m.Flags = 12, codec.KillFullJob; return m }(),
			want:  []string{},
			calls: []string{"signal s30 12 batch=false"}},
		{name: "the same job twice", uid: 1000, req: verbose(kjReq("10", "10")),
			want: []string{"10: 0", "10: 2021 Job/step already completing or completed"}},
		{name: "unparsable id", uid: 1000, req: kjReq("20_*"), want: []string{"rc 2144"}},
		{name: "id zero", uid: 1000, req: kjReq("x"), want: []string{"rc 2137"}},
		{name: "nothing named", uid: 1000, req: codec.KillJobsRequest{Signal: 9, State: codec.JOB_END}, want: []string{"rc 2173"}},
		{name: "no match", uid: 1000, req: verbose(codec.KillJobsRequest{JobName: "nosuch", Signal: 9, State: codec.JOB_END}), want: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, exec := killJobsController(t)
			got := killJobsAnswer(t, c, uint32(codec.V24_11), tc.uid, tc.req)
			if !slices.Equal(got, tc.want) {
				t.Errorf("answer:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for id, want := range tc.states {
				if got := jobState(c, id); got != want {
					t.Errorf("job %d: %s, want %s", id, got, want)
				}
			}
			if calls := exec.calls; !sameCalls(calls, tc.calls) {
				t.Errorf("engine calls %q, want %q", calls, tc.calls)
			}
		})
	}
}

// TestKillJobsEveryVersion: the message exists from 23.11 on; every
// version with it decodes the request and encodes the answer
// (selected step ids with a task bitmap from 24.11, admin_comment in the
// request from 25.11).
func TestKillJobsEveryVersion(t *testing.T) {
	for _, v := range codec.Versions {
		if v < codec.V23_11 {
			continue
		}
		t.Run(codec.VersionName(v), func(t *testing.T) {
			c, _ := killJobsController(t)
			m := kjReq("20_[2-3]", "77")
			m.Flags = codec.KillJobsVerbose
			m.AdminComment = "why"
			want := []string{"77: 2017 Invalid job id specified", "20_[3]: 0", "20_2: 0"}
			if v < codec.V24_11 {
				// No bitmap before 24.11: the task id or the job id alone.
				want = []string{"77: 2017 Invalid job id specified", "20: 0", "20_2: 0"}
			}
			if got := killJobsAnswer(t, c, uint32(v), 1000, m); !slices.Equal(got, want) {
				t.Errorf("answer %q, want %q", got, want)
			}
		})
	}
}

// TestKillUnchanged: REQUEST_KILL_JOB after the refactor that shares its
// per-job work with REQUEST_KILL_JOBS.
func TestKillUnchanged(t *testing.T) {
	kill := func(c *Controller, uid uint32, spec string, sig, flags uint16) uint32 {
		var w codec.Writer
		k := codec.KillJobRequest{StepID: codec.JobStepID{JobID: codec.NoVal, StepID: codec.NoVal, StepHetComp: codec.NoVal}, SJobID: spec, Signal: sig, Flags: flags}
		k.Encode(&w, codec.V24_11)
		rep := c.Slow(&Request{Version: codec.V24_11, MsgType: codec.REQUEST_KILL_JOB, UID: uid, Body: w.B})
		r := codec.NewReader(rep.Body)
		return r.U32()
	}
	for _, tc := range []struct {
		uid        uint32
		spec       string
		sig, flags uint16
		rc         uint32
		states     map[uint32]string
		calls      []string
	}{
		{1000, "10", 9, 0, 0, map[uint32]string{10: "CANCELLED"}, nil},
		{2000, "10", 9, 0, codec.ESLURM_ACCESS_DENIED, map[uint32]string{10: "PENDING"}, nil},
		{1000, "40", 9, 0, codec.ESLURM_ALREADY_DONE, nil, nil},
		{1000, "99", 9, 0, codec.ESLURM_INVALID_JOB_ID, nil, nil},
		{1000, "10", 10, 0, codec.ESLURM_JOB_PENDING, map[uint32]string{10: "PENDING"}, nil},
		{1000, "30", 10, 0, 0, map[uint32]string{30: "RUNNING"}, nil},
		{1000, "30", 10, codec.KillJobBatch, 0, nil, []string{"signal s30 10 batch=true"}},
		{1000, "20_[2-3]", 9, 0, 0, map[uint32]string{20: "PENDING [4]", 22: "CANCELLED+COMPLETING", 21: "RUNNING"}, []string{"destroy s22"}},
		{1000, "20", 0, 0, 0, map[uint32]string{20: "CANCELLED [3-4]", 22: "CANCELLED+COMPLETING", 21: "CANCELLED+COMPLETING"}, []string{"destroy s21", "destroy s22"}},
	} {
		c, exec := killJobsController(t)
		if rc := kill(c, tc.uid, tc.spec, tc.sig, tc.flags); rc != tc.rc {
			t.Errorf("kill %s sig %d as %d: rc %d, want %d", tc.spec, tc.sig, tc.uid, rc, tc.rc)
		}
		for id, want := range tc.states {
			if got := jobState(c, id); got != want {
				t.Errorf("kill %s sig %d: job %d %s, want %s", tc.spec, tc.sig, id, got, want)
			}
		}
		if !sameCalls(exec.calls, tc.calls) {
			t.Errorf("kill %s sig %d: engine calls %q, want %q", tc.spec, tc.sig, exec.calls, tc.calls)
		}
	}
}

// TestKillJobsAsRealSlurm: the answer to the request real scancel --ctld
// sent (captured with codec's TestKillJobsGolden, `scancel --ctld -v -n
// kjname 1 2_[2-3,7] 5`, MaxArraySize=9, job 1 held, 2 a held array of
// tasks 1-4) is byte for byte what real slurmctld answered; 26.05's puts
// job 1's sluid into the last entry, which jobs here do not have.
func TestKillJobsAsRealSlurm(t *testing.T) {
	for _, tc := range []struct {
		v         uint16
		req, resp string
	}{
		{codec.V24_11,
			"000000000800000000076b6a6e616d6500000000030000000231000000000a325f5b322d332c375d0000000002350000000000000000000000000000090000000c00000000000000000000000000000000",
			"00000004000007e100000019496e76616c6964206a6f622069642073706563696669656400000000000000000000000002fffffffefffffffefffffffefffffffe0000000900000006307830383000fffffffe00000000000007e100000019496e76616c6964206a6f622069642073706563696669656400000000000000000000000005fffffffefffffffefffffffefffffffefffffffefffffffe000000000000000000000000000000000000000000000002fffffffefffffffefffffffefffffffe000000090000000630783030430000000002000000000000000000000000000000000000000000000001fffffffefffffffefffffffefffffffefffffffe0000000100000000"},
		{codec.V26_05,
			"00000000000000000800000000076b6a6e616d6500000000030000000231000000000a325f5b322d332c375d0000000002350000000000000000000000000000090000000c00000000000000000000000000000000",
			"00000004000007e100000019496e76616c6964206a6f622069642073706563696669656400000000000000000000000002fffffffefffffffefffffffefffffffe0000000900000006307830383000fffffffe00000000000007e100000019496e76616c6964206a6f622069642073706563696669656400000000000000000000000005fffffffefffffffefffffffefffffffefffffffefffffffe000000000000000000000000000000000000000000000002fffffffefffffffefffffffefffffffe000000090000000630783030430000000002000000000000000000000000" +
				"0000000000000000" + "00000001fffffffefffffffefffffffefffffffefffffffe0000000100000000"},
	} {
		t.Run(codec.VersionName(tc.v), func(t *testing.T) {
			cfg := fakeCluster(t, "slurm-24.11")
			cfg.Set("MaxArraySize", "9")
			store, err := state.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			now := time.Now().Unix()
			held := func(id uint32) *state.Job {
				return &state.Job{ID: id, ArrayTaskID: codec.NoVal, Name: "kjname", Partition: "cpu", State: codec.JOB_PENDING,
					Reason: codec.WAIT_HELD_USER, HeldBy: 2, SubmitTime: now, TimeLimit: codec.NoVal, MinNodes: 1, MaxNodes: 1,
					NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1}
			}
			arr := held(2)
			arr.ArrayJobID, arr.ArrayTasks, arr.ArraySpec = 2, "1-4", "1-4"
			if err := store.Put(held(1), arr); err != nil {
				t.Fatal(err)
			}
			c, _ := controllerWith(t, cfg, store)
			req, _ := hex.DecodeString(tc.req)
			rep := c.Slow(&Request{Version: tc.v, MsgType: codec.REQUEST_KILL_JOBS, UID: 0, Body: req})
			if rep.MsgType != codec.RESPONSE_KILL_JOBS || hex.EncodeToString(rep.Body) != tc.resp {
				t.Errorf("reply %d\n got  %x\n want %s", rep.MsgType, rep.Body, tc.resp)
			}
			if got := jobState(c, 2); got != "PENDING [1,4]" {
				t.Errorf("array 2: %s, want PENDING [1,4]", got)
			}
			if got := jobState(c, 1); got != "CANCELLED" {
				t.Errorf("job 1: %s, want CANCELLED", got)
			}
		})
	}
}

// sameCalls compares engine calls as sets: ends of many sessions go to
// the engine in parallel.
func sameCalls(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

// TestKillManyJobs: scancel -u of 100,000 pending jobs (REQUEST_KILL_JOBS
// with a user filter) is answered once one record naming them is on disk
// (the cancel log); the jobs show CANCELLED at once, and their records
// and accounting records (sacct: CANCELLED by the canceller) are written
// after the answer. A stop before that is finished loses nothing: the
// next start shows them cancelled and finishes the writing.
func TestKillManyJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 jobs")
	}
	const n = 100_000
	cfg := fakeCluster(t, "slurm-24.11")
	dir := t.TempDir()
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	batch := make([]*state.Job, 0, 5000)
	for id := uint32(1); id <= n; id++ {
		batch = append(batch, heldJob(id, 1000, "wrap", now))
		if len(batch) == cap(batch) {
			if err := store.Put(batch...); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// Another user's job: untouched.
	if err := store.Put(heldJob(n+1, 1001, "other", now)); err != nil {
		t.Fatal(err)
	}
	c, _ := controllerWith(t, cfg, store)
	m := kjReq()
	m.UserID, m.UserName = 1000, "u1000" // scancel -u sends both; the id decides
	start := time.Now()
	if got := killJobsAnswer(t, c, uint32(codec.V24_11), 1000, m); len(got) != 0 {
		t.Fatalf("scancel -u: %d entries, first %v; want none (all cancelled)", len(got), got[:min(len(got), 3)])
	}
	t.Logf("scancel -u of %d pending jobs: answered in %v", n, time.Since(start).Round(time.Millisecond))
	countCancelled := func(jobs []*state.Job) (k int) {
		for _, j := range jobs {
			if j.State&codec.JOB_STATE_BASE == codec.JOB_CANCELLED && j.EndTime != 0 {
				k++
			}
		}
		return k
	}
	// As answered: every one shows cancelled (the records follow).
	if got := countCancelled(c.Snapshot().Jobs()); got != n {
		t.Errorf("%d of %d jobs cancelled in the snapshot", got, n)
	}
	if got := jobState(c, n+1); got != "PENDING" {
		t.Errorf("the other user's job: %s", got)
	}
	// A stop now: the next start shows them cancelled, and writes them.
	store.Close()
	store, err = state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	logs, err := store.CancelLogs()
	if err != nil || len(logs) != 1 || len(logs[0].IDs) != n {
		t.Fatalf("cancel log after the stop: %d logs, %v", len(logs), err)
	}
	c, _ = controllerWith(t, cfg, store)
	if got := countCancelled(c.Snapshot().Jobs()); got != n {
		t.Errorf("after a restart, %d of %d jobs cancelled in the snapshot", got, n)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		logs, err := store.CancelLogs()
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancel log was not written out within 2 minutes (done up to %d)", logs[0].Done)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("records written by %v after the answer (a restart between)", time.Since(start).Round(time.Millisecond))
	// What a restart finds now: the records themselves.
	jobs, err := store.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if got := countCancelled(jobs); got != n {
		t.Errorf("%d of %d jobs cancelled in the store", got, n)
	}
	// sacct: each a run, CANCELLED by uid 1000.
	runs, by := 0, 0
	if err := store.History(&state.HistCond{}, func(h *state.HistJob) bool {
		runs++
		if h.ReqUID == 1000 {
			by++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if runs != n || by != n {
		t.Errorf("history: %d runs, %d cancelled by uid 1000; want %d", runs, by, n)
	}
}

// TestKillColdJobsInAnyOrder: held jobs (kept cold, their records left
// in the store) cancelled by id in any order, one of them twice, are
// answered and written as one by one: the repeat is already done, and
// each record says CANCELLED before the answer (fewer than bulkCancel
// are not logged).
func TestKillColdJobsInAnyOrder(t *testing.T) {
	cfg := fakeCluster(t, "slurm-24.11")
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Now().Unix()
	for id := uint32(1); id <= 4; id++ {
		if err := store.Put(heldJob(id, 1000, "h", now)); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := controllerWith(t, cfg, store)
	m := kjReq("3", "1", "3", "2")
	m.Flags |= codec.KillJobsVerbose
	got := killJobsAnswer(t, c, uint32(codec.V24_11), 1000, m)
	want := []string{"3: 0", "1: 0", "3: 2021 Job/step already completing or completed", "2: 0"}
	if !slices.Equal(got, want) {
		t.Errorf("answer:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	jobs, err := store.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		wantSt := uint32(codec.JOB_CANCELLED)
		if j.ID == 4 {
			wantSt = codec.JOB_PENDING
		}
		if j.State != wantSt || (wantSt == codec.JOB_CANCELLED && j.EndTime == 0) {
			t.Errorf("stored job %d: state %s, end %d", j.ID, codec.JobStateString(j.State), j.EndTime)
		}
		if st := jobState(c, j.ID); st != codec.JobStateString(wantSt) {
			t.Errorf("job %d shows %s", j.ID, st)
		}
	}
	if n, _ := store.CancelLogs(); len(n) != 0 {
		t.Errorf("%d cancel logs for 3 jobs", len(n))
	}
}
