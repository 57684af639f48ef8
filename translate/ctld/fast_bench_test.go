package ctld

import (
	"context"
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/local"
)

// Serving a cached reply allocates nothing: request decode, last_update
// check and the prebuilt frame, for squeue's two RPCs and ping.
func BenchmarkFastCachedReplies(b *testing.B) {
	cfg := fakeCluster(&testing.T{}, "slurm-24.11")
	ctl := newTestController(&testing.T{}, cfg, state.NewRPCStats())
	reqs := []*Request{
		{Version: codec.V24_11, MsgType: codec.REQUEST_JOB_INFO, Body: jobInfoBody()},
		{Version: codec.V24_11, MsgType: codec.REQUEST_PARTITION_INFO, Body: partInfoBody()},
		{Version: codec.V24_11, MsgType: codec.REQUEST_PING},
	}
	for _, r := range reqs { // warm the caches (a worker builds the first listing)
		serve(ctl, r)
		if rep, ok := ctl.Fast(r); !ok || rep.Frame == nil {
			b.Fatalf("%d: no cached frame", r.MsgType)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, _ := ctl.Fast(reqs[i%len(reqs)])
		if rep.Frame == nil {
			b.Fatal("no frame")
		}
	}
}

func TestFastCachedRepliesAllocateNothing(t *testing.T) {
	cfg := fakeCluster(t, "slurm-24.11")
	ctl := newTestController(t, cfg, state.NewRPCStats())
	for _, r := range []*Request{
		{Version: codec.V24_11, MsgType: codec.REQUEST_JOB_INFO, Body: jobInfoBody()},
		{Version: codec.V22_05, MsgType: codec.REQUEST_PARTITION_INFO, Body: partInfoBodyV(codec.V22_05)},
		{Version: codec.V26_05, MsgType: codec.REQUEST_PING},
	} {
		serve(ctl, r)
		if n := testing.AllocsPerRun(100, func() { ctl.Fast(r) }); n != 0 {
			t.Errorf("%s %s: %.0f allocations per request", codec.VersionName(r.Version), codec.MsgTypeName(r.MsgType), n)
		}
	}
}

func partInfoBody() []byte { return partInfoBodyV(codec.V24_11) }

func partInfoBodyV(v uint16) []byte {
	w := codec.Writer{}
	(&codec.PartitionInfoRequest{ShowFlags: 1}).Encode(&w, v)
	return w.B
}

// squeue -u / --me and scontrol show job N on a large queue: 100,000
// held jobs of 100 users (1,000 each): one user's listing, a user with
// none, and one job.
func BenchmarkUserListing(b *testing.B) {
	store, err := state.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	fillHeldUsers(b, store, 100000, 100)
	cfg := fakeCluster(&testing.T{}, "slurm-24.11")
	ctl, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(), ClusterName: "refcluster"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		uid  uint32
		want int
	}{{"owner", 1042, 1000}, {"none", 7, 0}} {
		body := codec.Writer{}
		(&codec.JobUserInfoRequest{UserID: c.uid, ShowFlags: showLocal}).Encode(&body, codec.V24_11)
		req := &Request{Version: codec.V24_11, MsgType: codec.REQUEST_JOB_USER_INFO, Body: body.B}
		rep := serve(ctl, req) // builds the listing
		if n := len(decodeListing(b, Reply{Frame: codec.AppendFrame(nil, codec.V24_11, rep.MsgType, nil, rep.Body)}).Jobs); n != c.want {
			b.Fatalf("%s: %d jobs, want %d", c.name, n, c.want)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctl.Fast(req)
			}
		})
	}
	// scontrol show job N / squeue -j N, as job-status pollers send.
	body := codec.Writer{}
	(&codec.JobInfoSingleRequest{JobID: 50000, ShowFlags: showLocal, StepID: codec.NoVal, StepHetComp: codec.NoVal}).Encode(&body, codec.V24_11)
	req := &Request{Version: codec.V24_11, MsgType: codec.REQUEST_JOB_INFO_SINGLE, Body: body.B}
	serve(ctl, req)
	b.Run("single job", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctl.Fast(req)
		}
	})
}
