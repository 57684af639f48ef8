package ctld

import (
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
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
	for _, r := range reqs { // warm the caches
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
		ctl.Fast(r)
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
