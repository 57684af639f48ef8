package main

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// The metrics endpoint's RPC counters are sdiag's: after a few squeue and
// sinfo calls, the counts by message type and by user read the same in
// both, for each release's sdiag.
func TestMetricsAgreeWithSdiag(t *testing.T) {
	mport := freePort(t)
	f := newFrontend(t, batchCluster, "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport))
	r := f.as(t).user("slurm")
	for i := 0; i < 3; i++ {
		r.mustRun("24.11", "squeue")
	}
	r.mustRun("22.05", "sinfo")
	r.mustRun("26.05", "sinfo")
	for _, rel := range releases {
		out := f.mustRun(rel, "sdiag")
		text := scrape(t, mport)
		sdiagCount := func(re string) int64 {
			m := regexp.MustCompile(re).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("%s sdiag: no %s in\n%s", rel, re, out)
			}
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return n
		}
		for _, c := range []struct{ sdiag, metric string }{
			{`REQUEST_JOB_INFO\s+\(\s*2003\)\s+count:(\d+)`, `slurm_frontend_rpc_requests_total\{type="REQUEST_JOB_INFO"\}`},
			{`REQUEST_PARTITION_INFO\s+\(\s*2009\)\s+count:(\d+)`, `slurm_frontend_rpc_requests_total\{type="REQUEST_PARTITION_INFO"\}`},
			{`(?m)^\s*slurm\s+\(\s*64030\)\s+count:(\d+)`, `slurm_frontend_rpc_user_requests_total\{user="slurm"\}`},
		} {
			want, got := sdiagCount(c.sdiag), metric(text, c.metric)
			if want == 0 || got != want {
				t.Errorf("%s: sdiag says %d, the metrics %d (%s)", rel, want, got, c.metric)
			}
		}
		if n := metric(text, `slurm_frontend_rpc_requests_total\{type="REQUEST_JOB_INFO"\}`); n != 3 {
			t.Errorf("%s: REQUEST_JOB_INFO counted %d, want 3", rel, n)
		}
	}
}
