package main

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/bench"
	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
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

// sideBySide times the victim's squeue (user nobody, about one a
// second, within their own limit) in four alternating windows: idle,
// storm, idle, storm. storm starts the storm's loops (each calls its
// function until ctx ends); sideBySide waits for every loop's last
// request to finish (none is abandoned) and fills res's percentiles.
func sideBySide(b *testing.B, f *frontend, res *stormResult, loops int, pace time.Duration, request func(loop, n int)) {
	const samples = 15
	victim := f.as(b).user("nobody")
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
		// Each loop paces its requests and waits out its back-offs, as
		// a script's loop would.
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var started atomic.Int64
		t0 := time.Now()
		for l := 0; l < loops; l++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := time.Now()
				for n := 0; ctx.Err() == nil; n++ {
					started.Add(1)
					request(l, n)
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
		wg.Wait()
	}
	pct := func(xs []float64, p float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	res.idle50, res.idle90 = pct(idle, 0.5), pct(idle, 0.9)
	res.storm50, res.storm90 = pct(storm, 0.5), pct(storm, 0.9)
}

// stormRun: user slurm in ten loops, each starting a stock squeue every
// 400 ms (2 RPCs each: 50 RPC/s offered, ten times the rate).
func stormRun(b *testing.B, f *frontend) stormResult {
	stormer := f.as(b).user("slurm").within(5 * time.Minute)
	var res stormResult
	sideBySide(b, f, &res, 10, 400*time.Millisecond, func(int, int) {
		out, errs, code := stormer.run("24.11", "squeue", "-v")
		if code != 0 || !strings.Contains(out, "JOBID") {
			atomic.AddInt64(&res.failed, 1)
		} else {
			atomic.AddInt64(&res.done, 1)
		}
		if strings.Contains(errs, "RPC rate limited") {
			atomic.AddInt64(&res.backedOff, 1)
		}
	})
	return res
}

// BenchmarkRateLimitHostStorm is the per-host limit's side of it: one
// host (127.0.0.2) floods the controller with squeue's RPC on behalf of
// many users (so no user's own limit applies) at ten times the host's
// limit, backing off as stock clients do, while a user on another host
// (127.0.0.1) runs stock squeue; with rl_host_bucket_size/refill_rate
// and, as the control, without.
func BenchmarkRateLimitHostStorm(b *testing.B) {
	const rate = 20 // RPC/s per host
	limited := newFrontend(b, fakeCluster+fmt.Sprintf("SlurmctldParameters=rl_host_bucket_size=%d,rl_host_refill_rate=%d,rl_log_freq=-1\n", 2*rate, rate))
	open := newFrontend(b, fakeCluster)
	for i := 0; i < b.N; i++ {
		for _, f := range []struct {
			name string
			f    *frontend
		}{{"limited", limited}, {"unlimited", open}} {
			r := hostStormRun(b, f.f, 10*rate)
			b.Logf("%s: victim squeue p50 %.1f ms idle, %.1f ms in the storm (x%.2f); p90 %.1f / %.1f ms (x%.2f); storming host: %d served, %d failed, %d backed off",
				f.name, r.idle50, r.storm50, r.storm50/r.idle50, r.idle90, r.storm90, r.storm90/r.idle90, r.done, r.failed, r.backedOff)
			b.ReportMetric(r.storm50/r.idle50, f.name+"-p50-ratio")
			b.ReportMetric(r.storm90/r.idle90, f.name+"-p90-ratio")
			b.ReportMetric(float64(r.failed), f.name+"-storm-errors")
		}
	}
}

// hostStormRun: offered RPCs a second of squeue's REQUEST_JOB_INFO from
// 127.0.0.2 in ten loops, each request as one of 1,000 users, each
// retried after a back-off answer the way a stock client does (sleep
// 1 s, 2 s, ...).
func hostStormRun(b *testing.B, f *frontend, offered int) stormResult {
	const loops = 10
	m, err := bench.NewMinter("/etc/munge/munge.key")
	if err != nil {
		b.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", f.port)
	var w codec.Writer
	(&codec.JobInfoRequest{}).Encode(&w, codec.V24_11)
	var res stormResult
	sideBySide(b, f, &res, loops, time.Second*loops/time.Duration(offered), func(loop, n int) {
		mm := *m
		mm.UID = uint32(20000 + (n*loops+loop)%1000)
		mm.GID = mm.UID
		for tries := 1; ; tries++ {
			raw, err := mm.Frame(nil, crand.Reader, codec.REQUEST_JOB_INFO, munge.UIDAny, w.B)
			if err != nil {
				b.Fatal(err)
			}
			rep, err := rpcFrom("127.0.0.2", addr, raw)
			switch {
			case err == nil && rep.MsgType == codec.RESPONSE_JOB_INFO:
				atomic.AddInt64(&res.done, 1)
				return
			case err != nil || rcOfFrame(rep) != codec.SLURMCTLD_COMMUNICATIONS_BACKOFF:
				atomic.AddInt64(&res.failed, 1)
				return
			}
			if tries == 1 {
				atomic.AddInt64(&res.backedOff, 1)
			}
			time.Sleep(time.Duration(tries) * time.Second)
		}
	})
	return res
}
