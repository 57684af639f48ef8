package ctld

import (
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// BenchmarkSubmit: held sbatch submissions through the controller (decode,
// checks, durable store write, snapshot), one at a time and from 16
// submitters at once (group commit: they share writes). Profile with
// -cpuprofile to see what a submission costs besides its write.
func BenchmarkSubmit(b *testing.B) {
	const v = codec.V24_11
	body := func() []byte {
		d := codec.NewJobDesc()
		d.Script, d.Environment, d.UserID, d.GroupID, d.WorkDir = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nsleep 100\n",
			[]string{"PATH=/bin:/usr/bin", "HOME=/root", "SLURM_GET_USER_ENV=0"}, 0, 0, "/tmp"
		d.Name, d.Priority, d.StdOut = "wrap", 0, "/tmp/job-%j.out"
		w := codec.Writer{}
		d.Encode(&w, v)
		return w.B
	}()
	submit := func(b *testing.B, c *Controller) {
		rep := c.Slow(&Request{Version: v, MsgType: codec.REQUEST_SUBMIT_BATCH_JOB, Body: body})
		if rep.MsgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
			b.Fatalf("submit: reply type %d", rep.MsgType)
		}
	}
	b.Run("serial", func(b *testing.B) {
		c := newTestController(b, fakeCluster(b, "slurm-24.11"), state.NewRPCStats())
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			submit(b, c)
		}
		b.ReportMetric(float64(c.batches.Load())/float64(b.N), "writes/op")
	})
	b.Run("16-submitters", func(b *testing.B) {
		c := newTestController(b, fakeCluster(b, "slurm-24.11"), state.NewRPCStats())
		b.ReportAllocs()
		b.SetParallelism(8) // 16 goroutines on 2 cores: the edge's 16 workers
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				submit(b, c)
			}
		})
		b.ReportMetric(float64(c.batches.Load())/float64(b.N), "writes/op")
	})
}
