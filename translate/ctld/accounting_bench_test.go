package ctld

import (
	"fmt"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// sacct over a month of 100,000 runs (a batch step each), as the
// slurmdbd stand-in answers it: the server's own part of
// tools/bench-sacct.sh's month query.
func BenchmarkAccountingJobsMonth(b *testing.B) {
	c := newTestController(b, fakeCluster(b, "slurm-24.11"), state.NewRPCStats())
	now := time.Now().Unix()
	const n = 100_000
	for i := 0; i < n; i += 2000 {
		var runs []state.HistJob
		for k := i; k < i+2000; k++ {
			start := now - 30*86400 + int64(k)*30*86400/n
			j := state.Job{ID: uint32(k + 1), Name: fmt.Sprintf("job%d", k), UserID: 1000 + uint32(k%100), GroupID: 1000,
				UserName: "u", Account: "physics", Partition: "cpu", SubmitTime: start - 30, EligibleTime: start - 30,
				StartTime: start, EndTime: start + 600, State: codec.JOB_COMPLETE, TimeLimit: 60, MinCPUs: 2,
				ArrayTaskID: codec.NoVal, Nodes: "n1", WorkDir: "/home/u", SubmitLine: "sbatch x.sh", Origin: state.OriginSlurmdbd}
			runs = append(runs, state.HistJob{Job: j, ReqUID: codec.NoVal, TresAllocIDs: "1=2,2=4000,4=1,5=2", TresReqIDs: "1=2,2=4000,4=1,5=2",
				Steps: []state.HistStep{{ID: codec.SLURM_BATCH_SCRIPT, Name: "batch", Nodes: "n1", NNodes: 1, NTasks: 1, CPUs: 2,
					Start: start, End: start + 600, State: codec.JOB_COMPLETE, ReqUID: codec.NoVal, TresAlloc: "1=2,2=4000,4=1"}}})
		}
		if _, _, err := c.opt.Store.ImportHistory(runs); err != nil {
			b.Fatal(err)
		}
	}
	cond := codec.JobCond{UsageStart: now - 30*86400, UsageEnd: now, Flags: codec.JobCondNoTrunc}
	for _, x := range []struct {
		name  string
		flags uint32
	}{{"steps", 0}, {"X", codec.JobCondNoStep}} {
		b.Run(x.name, func(b *testing.B) {
			cd := cond
			cd.Flags |= x.flags
			for i := 0; i < b.N; i++ {
				got := c.AccountingJobs(0, &cd, codec.V24_11)
				if got.BodyLen() < n*100 {
					b.Fatalf("%d bytes", got.BodyLen())
				}
			}
		})
	}
}
