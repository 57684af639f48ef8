package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRateLimitStorm measures what the per-user rate limit is for:
// one user's squeue storm at ten times the configured rate must not slow
// another user's squeue, and the stormer's clients must back off and
// succeed. Stock 24.11 clients throughout; the victim's squeue is timed
// in alternating windows without and with the storm, in one run, on a
// server with SlurmctldParameters=rl_enable (5 RPC/s per user) and, as
// the control, on one without limits. Run it with
// tools/bench-ratelimit.sh (or -bench RateLimitStorm -benchtime 1x).
//
// Reported: the victim's median and 90th percentile squeue time idle and
// in the storm, their ratio, and the stormer's squeue completed, failed
// and told to back off.
func BenchmarkRateLimitStorm(b *testing.B) {
	const rate = 5 // RPC/s per user (rl_refill_rate)
	limited := newFrontend(b, fakeCluster+fmt.Sprintf("SlurmctldParameters=rl_enable,rl_bucket_size=%d,rl_refill_rate=%d,rl_log_freq=-1\n", 2*rate, rate))
	open := newFrontend(b, fakeCluster)
	for i := 0; i < b.N; i++ {
		for _, f := range []struct {
			name string
			f    *frontend
		}{{"limited", limited}, {"unlimited", open}} {
			r := stormRun(b, f.f)
			b.Logf("%s: victim squeue p50 %.1f ms idle, %.1f ms in the storm (x%.2f); p90 %.1f / %.1f ms (x%.2f); stormer: %d squeue done, %d failed, %d backed off at least once, %.1f squeue/s started (the loops wait out their back-offs)",
				f.name, r.idle50, r.storm50, r.storm50/r.idle50, r.idle90, r.storm90, r.storm90/r.idle90, r.done, r.failed, r.backedOff, r.started)
			b.ReportMetric(r.storm50/r.idle50, f.name+"-p50-ratio")
			b.ReportMetric(r.storm90/r.idle90, f.name+"-p90-ratio")
			b.ReportMetric(float64(r.failed), f.name+"-stormer-errors")
			if f.name == "limited" {
				b.ReportMetric(r.idle50, "victim-idle-p50-ms")
				b.ReportMetric(r.storm50, "victim-storm-p50-ms")
				b.ReportMetric(float64(r.backedOff), "stormer-backoffs")
			}
		}
	}
}

type stormResult struct {
	idle50, idle90, storm50, storm90 float64
	done, failed, backedOff          int64
	started                          float64
}

// stormRun times the victim's squeue (user nobody, about one a second,
// within their limit) in four alternating windows: idle, storm, idle,
// storm. The storm: user slurm in ten loops, each starting a squeue
// every 400 ms (2 RPCs each: 50 RPC/s offered, ten times the rate);
// a loop whose squeue is backed off waits for it as a script would.
func stormRun(b *testing.B, f *frontend) stormResult {
	const loops, pace, samples = 10, 400 * time.Millisecond, 15
	victim := f.as(b).user("nobody")
	stormer := f.as(b).user("slurm").within(5 * time.Minute)
	var res stormResult
	time1 := func() float64 {
		start := time.Now()
		if out, errs, code := victim.run("24.11", "squeue"); code != 0 || !strings.Contains(out, "JOBID") {
			b.Fatalf("victim's squeue: exit %d\n%s%s", code, out, errs)
		}
		return float64(time.Since(start).Microseconds()) / 1000
	}
	var idle, storm []float64
	for w := 0; w < 4; w++ {
		if w%2 == 0 {
			time.Sleep(3 * time.Second) // the victim's bucket and the machine settle
			for i := 0; i < samples; i++ {
				idle = append(idle, time1())
				time.Sleep(time.Second)
			}
			continue
		}
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var started atomic.Int64
		t0 := time.Now()
		for l := 0; l < loops; l++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := time.Now()
				for ctx.Err() == nil {
					started.Add(1)
					out, errs, code := stormer.run("24.11", "squeue", "-v")
					switch {
					case code != 0 || !strings.Contains(out, "JOBID"):
						atomic.AddInt64(&res.failed, 1)
					default:
						atomic.AddInt64(&res.done, 1)
					}
					if strings.Contains(errs, "RPC rate limited") {
						atomic.AddInt64(&res.backedOff, 1)
					}
					next = next.Add(pace)
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					} else {
						next = time.Now()
					}
				}
			}()
		}
		time.Sleep(2 * time.Second) // the storm under way
		for i := 0; i < samples; i++ {
			storm = append(storm, time1())
			time.Sleep(time.Second)
		}
		stop()
		// The mean of the two storm windows.
		res.started += float64(started.Load()) / time.Since(t0).Seconds() / 2
		wg.Wait() // every stormer squeue finishes: none is abandoned
	}
	pct := func(xs []float64, p float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	res.idle50, res.idle90 = pct(idle, 0.5), pct(idle, 0.9)
	res.storm50, res.storm90 = pct(storm, 0.5), pct(storm, 0.9)
	return res
}
