package ctld

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/state/memfile"
	"github.com/lablup/slurm-frontend/translate/local"
)

// TestSize100k reports what 100,000 held jobs cost: heap per job, the
// time to rebuild a snapshot and to encode squeue's reply, and a restart
// (open the store, load the jobs, first reply). It asserts correctness
// only; the figures are for the issue notes and the bench harness
// (SLURM_FRONTEND_SIZE=N changes the count; -short uses 10,000).
func TestSize100k(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 10000
	}
	if v, err := strconv.Atoi(os.Getenv("SLURM_FRONTEND_SIZE")); err == nil && v > 0 {
		n = v
	}
	dir := t.TempDir()
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	fillHeld(t, store, n)
	t.Logf("stored %d jobs in %v", n, time.Since(start))
	store.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	// Restart: open, load, build the controller, answer squeue.
	start = time.Now()
	store, err = state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := fakeCluster(t, "slurm-24.11")
	ctl, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(), ClusterName: "refcluster"})
	if err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	req := &Request{Version: codec.V24_11, MsgType: codec.REQUEST_JOB_INFO, Body: jobInfoBody()}
	rep := serve(ctl, req) // the first listing is built by a worker
	firstReply := time.Since(start)
	if rep, ok := ctl.Fast(req); !ok || rep.Frame == nil {
		t.Fatal("no cached JOB_INFO reply once built")
	}
	if got := len(decodeListing(t, rep).Jobs); got != n {
		t.Fatalf("reply has %d jobs, want %d", got, n)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perJob := float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
	_, filed := memfile.Stats() // encoded records kept in memory files
	perJobFiles := float64(filed) / float64(n)
	if p := os.Getenv("SLURM_FRONTEND_SIZE_HEAPPROF"); p != "" {
		// go tool pprof -sample_index=inuse_space: what the queue holds.
		if f, err := os.Create(p); err == nil {
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	runtime.KeepAlive(ctl)

	// A change (one more job) rebuilds the snapshot; the next squeue
	// re-encodes only the header around cached records.
	start = time.Now()
	ctl.mu.Lock()
	ctl.rebuild(time.Now().Unix())
	ctl.mu.Unlock()
	rebuild := time.Since(start)
	start = time.Now()
	rep = serve(ctl, req)
	reencode := time.Since(start)
	t.Logf("%d jobs: restart to first squeue reply %v (load %v); heap %.0f B/job, encoded 24.11 records in memory files %.0f B/job (%d B reply); snapshot rebuild %v; reply rebuild %v",
		n, firstReply, loaded, perJob, perJobFiles, len(joined(rep)), rebuild, reencode)
}

func jobInfoBody() []byte {
	w := codec.Writer{}
	(&codec.JobInfoRequest{}).Encode(&w, codec.V24_11)
	return w.B
}

// fillHeld stores n held jobs (IDs from the store's next) through the
// store's durable path, in batches.
func fillHeld(t testing.TB, store *state.Store, n int) { fillHeldUsers(t, store, n, 0) }

// fillHeldUsers stores n held jobs; with users > 0 they belong to uids
// 1000.. in turn (job i to uid 1000 + i%users), else to root.
func fillHeldUsers(t testing.TB, store *state.Store, n, users int) {
	t.Helper()
	for i := 0; i < n; {
		batch := min(1000, n-i)
		_, err := store.Submit(uint32(batch), nil, func(first uint32) ([]*state.Job, error) {
			jobs := make([]*state.Job, batch)
			for k := range jobs {
				uid := uint32(0)
				if users > 0 {
					uid = 1000 + uint32((i+k)%users)
				}
				jobs[k] = &state.Job{
					ID: first + uint32(k), ArrayTaskID: codec.NoVal, Name: "fill" + strconv.Itoa(i+k),
					UserID: uid, GroupID: 0, UserName: "root", Partition: "cpu", WorkDir: "/tmp",
					StdIn: "/dev/null", StdOut: "/dev/null", SubmitTime: time.Now().Unix(),
					TimeLimit: codec.Infinite, State: codec.JOB_PENDING, Reason: codec.WAIT_HELD_USER,
					MinNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1, TresReqStr: "cpu=1,mem=125G,node=1,billing=1",
					ProtoVersion: codec.V24_11, DescFlags: 0xbe000000,
				}
			}
			return jobs, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		i += batch
	}
}
