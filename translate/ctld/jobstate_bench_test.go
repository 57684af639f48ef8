package ctld

import (
	"context"
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/local"
)

// squeue --only-job-state against plain squeue on 10,000 jobs: the
// per-call cost of each answer once its snapshot's reply is built, the
// bytes each sends (reply-bytes), a filtered job-state request (-j of
// three jobs), and building the job-state table (what the first request
// after a change costs a worker).
func BenchmarkJobStateVsJobInfo(b *testing.B) {
	store, err := state.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	fillHeldUsers(b, store, 10000, 10)
	cfg := fakeCluster(&testing.T{}, "slurm-24.11")
	ctl, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(), ClusterName: "refcluster"})
	if err != nil {
		b.Fatal(err)
	}
	v := codec.V24_11
	enc := func(m interface{ Encode(*codec.Writer, uint16) }) []byte {
		w := codec.Writer{}
		m.Encode(&w, v)
		return w.B
	}
	filtered := &codec.JobStateRequest{Jobs: []codec.JobStateFilter{
		{JobID: 17, ArrayTaskID: codec.NoVal, HetJobOffset: codec.NoVal},
		{JobID: 5000, ArrayTaskID: codec.NoVal, HetJobOffset: codec.NoVal},
		{JobID: 9999, ArrayTaskID: codec.NoVal, HetJobOffset: codec.NoVal},
	}}
	for _, c := range []struct {
		name string
		req  *Request
	}{
		{"job_info", &Request{Version: v, MsgType: codec.REQUEST_JOB_INFO, Body: jobInfoBody()}},
		{"job_state", &Request{Version: v, MsgType: codec.REQUEST_JOB_STATE, Body: enc(&codec.JobStateRequest{})}},
		{"job_state -j 3", &Request{Version: v, MsgType: codec.REQUEST_JOB_STATE, Body: enc(filtered)}},
	} {
		rep := serve(ctl, c.req) // a worker builds the snapshot's reply
		size := len(rep.Frame) + len(rep.Body)
		for _, p := range rep.More {
			size += len(p.Bytes())
		}
		if r, ok := ctl.Fast(c.req); !ok || (r.Frame == nil && r.Body == nil) {
			b.Fatalf("%s: not served from the snapshot", c.name)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctl.Fast(c.req)
			}
			b.ReportMetric(float64(size), "reply-bytes")
		})
	}
	s := ctl.Snapshot()
	b.Run("job_state table build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var t jobStateTable
			s.buildJobStates(&t)
		}
	})
}
