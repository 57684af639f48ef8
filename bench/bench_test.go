package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/capture"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// requestsIn returns the request frames of a capture by message type.
func requestsIn(t *testing.T, rel string) map[uint16][]codec.Frame {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../codec/testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	conns, err := capture.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint16][]codec.Frame{}
	for _, c := range conns {
		for _, raw := range c.Requests {
			var f codec.Frame
			if codec.DecodeFrame(raw, &f) == nil {
				out[f.MsgType] = append(out[f.MsgType], f)
			}
		}
	}
	return out
}

// The generator sends the bytes stock clients send.
func TestRequestsMatchCaptures(t *testing.T) {
	for _, rel := range []string{"slurm-22.05/squeue-22.05.pcap", "slurm-24.11/squeue-24.11.pcap", "slurm-26.05/squeue-26.05.pcap"} {
		rq := requestsIn(t, rel)
		ji, pi := rq[codec.REQUEST_JOB_INFO], rq[codec.REQUEST_PARTITION_INFO]
		if len(ji) == 0 || len(pi) == 0 {
			t.Fatalf("%s: no squeue requests", rel)
		}
		if got := SqueueJobInfo(ji[0].Version); !bytes.Equal(got, ji[0].Body) {
			t.Errorf("%s: JOB_INFO body %x, captured %x", rel, got, ji[0].Body)
		}
		if got := SqueuePartInfo(pi[0].Version); !bytes.Equal(got, pi[0].Body) {
			t.Errorf("%s: PARTITION_INFO body %x, captured %x", rel, got, pi[0].Body)
		}
	}
	for _, rel := range []string{"slurm-22.05/sinfo-22.05.pcap", "slurm-24.11/sinfo-24.11.pcap", "slurm-26.05/sinfo-26.05.pcap"} {
		rq := requestsIn(t, rel)
		pi, ni := rq[codec.REQUEST_PARTITION_INFO], rq[codec.REQUEST_NODE_INFO]
		if len(pi) == 0 || len(ni) == 0 {
			t.Fatalf("%s: no sinfo requests", rel)
		}
		if got := SinfoPartInfo(pi[0].Version); !bytes.Equal(got, pi[0].Body) {
			t.Errorf("%s: PARTITION_INFO body %x, captured %x", rel, got, pi[0].Body)
		}
		if got := SinfoNodeInfo(ni[0].Version); !bytes.Equal(got, ni[0].Body) {
			t.Errorf("%s: NODE_INFO body %x, captured %x", rel, got, ni[0].Body)
		}
	}
	sb := requestsIn(t, "slurm-24.11/sbatch-24.11.pcap")[codec.REQUEST_SUBMIT_BATCH_JOB]
	if len(sb) != 1 {
		t.Fatal("no submit in the sbatch capture")
	}
	jd := HeldJobDesc()
	if got := encode(sb[0].Version, &jd); !bytes.Equal(got, sb[0].Body) {
		t.Errorf("held job_desc differs from the captured sbatch (%d vs %d bytes)", len(got), len(sb[0].Body))
	}
	// Ping: empty body; the credential is restricted to SlurmUser.
	pg := requestsIn(t, "slurm-24.11/scontrol-ping-24.11.pcap")[codec.REQUEST_PING]
	if len(pg) != 1 || len(pg[0].Body) != 0 {
		t.Fatal("ping capture")
	}
}

// Minted frames pass the server's checks: header, credential, body hash,
// and the ping restriction.
func TestMinterFrames(t *testing.T) {
	key, err := munge.LoadKey(captureKey)
	if err != nil {
		t.Fatal(err)
	}
	m := &Minter{Key: key, UID: 1234, GID: 5678, Addr: [4]byte{127, 0, 0, 1}, Version: codec.V24_11}
	v := munge.NewVerifier(key, munge.WithIdentity(0, 0))
	wl, err := NewWorkload("mix", m.Version, 0)
	if err != nil {
		t.Fatal(err)
	}
	rnd := newRand()
	for _, st := range wl.Mix {
		raw, err := m.Frame(nil, rnd, st.MsgType, st.AuthUID, st.Body)
		if err != nil {
			t.Fatal(err)
		}
		var f codec.Frame
		if err := codec.DecodeFrame(raw, &f); err != nil {
			t.Fatalf("%s: %v", st.Name, err)
		}
		if f.MsgType != st.MsgType || f.Version != codec.V24_11 || f.AuthPlugin != codec.AuthPluginMunge || !bytes.Equal(f.Body, st.Body) {
			t.Fatalf("%s: frame %+v", st.Name, f.Header)
		}
		var c munge.Cred
		if err := v.Verify(f.Cred, &c); err != nil {
			t.Fatalf("%s: verify: %v", st.Name, err)
		}
		if err := munge.CheckBodyHash(c.Payload, f.MsgType, f.Body); err != nil {
			t.Fatalf("%s: body hash: %v", st.Name, err)
		}
		if c.UID != 1234 || c.GID != 5678 || c.TTL != munge.DefaultTTL {
			t.Fatalf("%s: cred %+v", st.Name, c)
		}
		wantAuth := uint32(munge.UIDAny)
		if st.MsgType == codec.REQUEST_PING {
			wantAuth = 0
		}
		if c.AuthUID != wantAuth {
			t.Fatalf("%s: auth uid %d", st.Name, c.AuthUID)
		}
		// A replay is refused: every message needs its own credential.
		if err := v.Verify(f.Cred, &c); err != munge.ErrReplayed {
			t.Fatalf("%s: replay gave %v", st.Name, err)
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	var h Hist
	var vals []int64
	for i := int64(1); i <= 100000; i++ {
		v := i * i % 9999991 // spread over 1 ns … 10 ms
		vals = append(vals, v)
		h.Record(time.Duration(v))
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := float64(vals[int(math.Ceil(q*float64(len(vals))))-1])
		got := float64(h.Quantile(q))
		if math.Abs(got-want) > want/100+1 {
			t.Errorf("q%.3f: %v, want %v", q, got, want)
		}
	}
	if h.Quantile(1) != time.Duration(vals[len(vals)-1]) {
		t.Errorf("max %v", h.Quantile(1))
	}
	var o Hist
	o.Record(time.Hour)
	h.Merge(&o)
	if h.Count() != 100001 || h.Quantile(1) != time.Hour {
		t.Errorf("merge: %d values, max %v", h.Count(), h.Quantile(1))
	}
	if histIndex(1<<62) != histBuckets-1 {
		t.Error("overflow bucket")
	}
}

func TestParseTarget(t *testing.T) {
	tg, err := ParseTarget("real=127.0.0.1:6817,pid=42,aux=munged:7,pidfile=/x/slurmctld.pid")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "real" || tg.Addr != "127.0.0.1:6817" || tg.PID != 42 || tg.PIDFile != "/x/slurmctld.pid" || len(tg.Aux) != 1 || tg.Aux[0] != (AuxProc{"munged", 7}) {
		t.Fatalf("%+v", tg)
	}
	if tg, _ := ParseTarget("127.0.0.1:1"); tg.Name != "127.0.0.1:1" {
		t.Fatalf("%+v", tg)
	}
	for _, bad := range []string{"x=nohost", "a=1.2.3.4:5,pid=x", "a=1.2.3.4:5,foo=1", "a=1.2.3.4:5,aux=m"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func testMinter(t *testing.T) *Minter {
	key, err := munge.LoadKey(captureKey)
	if err != nil {
		t.Fatal(err)
	}
	return &Minter{Key: key, Addr: [4]byte{127, 0, 0, 1}, Version: codec.V24_11}
}

func startNull(t *testing.T, replies map[uint16][]byte) *NullServer {
	s := NewNullServer(10000)
	if replies != nil {
		s.SetReplies(replies)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRunClosedAndOpen(t *testing.T) {
	s := startNull(t, nil)
	m := testMinter(t)
	tg := Target{Name: "null", Addr: s.Addr(), PID: os.Getpid()}
	wl, _ := NewWorkload("squeue", m.Version, 0)
	res, err := Run(context.Background(), RunSpec{Target: tg, Workload: wl, Concurrency: 4, Warmup: 50 * time.Millisecond, Duration: 300 * time.Millisecond}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops == 0 || res.ErrorOps != 0 || res.RPCs < 2*res.Ops-8 || res.Latency.Count == 0 || res.JobsSeen != 0 {
		t.Fatalf("closed: %s", res.Line())
	}
	if len(res.PerRPC) != 2 || res.PerRPC[0].Name != "JOB_INFO" || res.PerRPC[0].ReplyBytes != 10000 {
		t.Fatalf("per rpc %+v", res.PerRPC)
	}
	if res.Server == nil || res.Server.PeakRSSKiB == 0 {
		t.Fatalf("server stats %+v", res.Server)
	}
	// Open loop: 400/s for 0.5 s is about 200 operations, on time.
	wl, _ = NewWorkload("ping", m.Version, 0)
	res, err = Run(context.Background(), RunSpec{Target: tg, Workload: wl, Rate: 400, Concurrency: 64, Duration: 500 * time.Millisecond}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "open" || res.Ops < 150 || res.Ops > 210 || res.ErrorOps != 0 || res.SendLag == nil {
		t.Fatalf("open: %s (ops %d)", res.Line(), res.Ops)
	}
}

func TestRunErrors(t *testing.T) {
	m := testMinter(t)
	// An RC in place of the reply.
	s := startNull(t, map[uint16][]byte{codec.REQUEST_PING: codec.AppendRC(nil, codec.V24_11, nil, codec.ESLURM_ACCESS_DENIED)})
	wl, _ := NewWorkload("ping", m.Version, 0)
	res, _ := Run(context.Background(), RunSpec{Target: Target{Name: "x", Addr: s.Addr()}, Workload: wl, Concurrency: 2, Duration: 100 * time.Millisecond}, m)
	if res.Ops != 0 || res.Errors["rc 2002 (ESLURM_ACCESS_DENIED)"] == 0 || res.ErrorRate != 1 {
		t.Fatalf("rc: %s", res.Line())
	}
	// Nobody listening.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	res, _ = Run(context.Background(), RunSpec{Target: Target{Name: "x", Addr: addr}, Workload: wl, Concurrency: 2, Duration: 100 * time.Millisecond}, m)
	if res.Errors[ErrConnRefused] == 0 {
		t.Fatalf("refused: %s", res.Line())
	}
	// A server that accepts and says nothing: timeout.
	ln, _ = net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	res, _ = Run(context.Background(), RunSpec{Target: Target{Name: "x", Addr: ln.Addr().String()}, Workload: wl, Concurrency: 2,
		Duration: 100 * time.Millisecond, Timeout: 150 * time.Millisecond}, m)
	if res.Errors[ErrTimeout] == 0 {
		t.Fatalf("timeout: %s", res.Line())
	}
}

func TestFillAndReport(t *testing.T) {
	s := startNull(t, nil)
	m := testMinter(t)
	fr, err := Fill(context.Background(), s.Addr(), 50, 4, m, time.Second, nil)
	// The server counts a reply once its write returns, which can be
	// after the client has read it.
	for end := time.Now().Add(2 * time.Second); s.Served() < 50 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if err != nil || fr.Submitted != 50 || s.Served() != 50 {
		t.Fatalf("fill: %+v %v (served %d)", fr, err, s.Served())
	}
	// A report of two targets: ratios, JSON round trip, HTML.
	rep := NewReport("test")
	wl, _ := NewWorkload("squeue", m.Version, 0)
	for _, tg := range []string{"ours", "null"} {
		for _, c := range []int{1, 8} {
			rep.Add(&Result{Target: tg, Workload: "squeue", Label: "4 jobs", Mode: "closed", Concurrency: c,
				OpsPerSec: float64(c * len(tg) * 100), Latency: Summary{P50Ms: 1, P99Ms: float64(c)},
				PerRPC: []RPCStats{{Name: "JOB_INFO", Latency: Summary{P99Ms: float64(c) / 2}}}}, wl)
		}
	}
	rs := rep.Ratios()
	if len(rs) != 2 || rs[0].OpsRatio != 4.0/4 || !rs[0].IsNull || rs[0].Pass == nil || !*rs[0].Pass {
		t.Fatalf("ratios %+v", rs)
	}
	dir := t.TempDir()
	if err := rep.WriteJSON(filepath.Join(dir, "r.json")); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(filepath.Join(dir, "r.json"))
	if err != nil || len(back.Runs) != 4 {
		t.Fatalf("json: %v", err)
	}
	back.Merge(rep)
	if err := back.WriteHTML(filepath.Join(dir, "r.html")); err != nil {
		t.Fatal(err)
	}
	h, _ := os.ReadFile(filepath.Join(dir, "r.html"))
	if n := strings.Count(string(h), "<svg"); n != 2 || !strings.Contains(string(h), "</html>") {
		t.Fatalf("html has %d charts", n)
	}
	var sb strings.Builder
	back.WriteText(&sb)
	if !strings.Contains(sb.String(), "ratios") {
		t.Fatal(sb.String())
	}
}

func TestHold(t *testing.T) {
	s := startNull(t, nil)
	h, err := Hold(s.Addr(), 50, "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if h.Open() != 50 {
		t.Fatalf("%d open", h.Open())
	}
	h.Close()
	if h.Open() != 0 {
		t.Fatalf("%d open after Close", h.Open())
	}
}

// The target column says which target a run meets and whether the null
// server, measured at the same point, would: an operator must be able to
// tell a slow server from a machine that cannot show the target at all.
func TestTargetVerdicts(t *testing.T) {
	m := testMinter(t)
	wl, _ := NewWorkload("squeue", m.Version, 0)
	type run struct {
		ops, jobP99 float64
	}
	cases := []struct {
		name             string
		ours, real, null run
		bytes            int64
		want             map[string]string // other target -> verdict at the top point
	}{
		{"large queue, p99 past the ceiling", run{1500, 160}, run{100, 2600}, run{1700, 170}, 6 << 20, map[string]string{
			"real": "ops/s ≥ 10×: met; p99 ≤ 1/20: MISS (null misses it too)",
			"null": "ops/s ≥ 0.5× null: met"}},
		{"large queue, ours behind a ceiling that meets both", run{900, 200}, run{100, 5000}, run{1500, 150}, 6 << 20, map[string]string{
			"real": "ops/s ≥ 10×: MISS (null meets it); p99 ≤ 1/20: met",
			"null": "ops/s ≥ 0.5× null: met"}},
		{"small replies: no p99 target", run{3000, 20}, run{1000, 60}, run{1000, 25}, 2 << 10, map[string]string{
			"real": "ops/s ≥ 10×: MISS (null misses it too)",
			"null": "ops/s ≥ 0.5× null: met"}},
		{"half the null server", run{400, 20}, run{10, 60}, run{1000, 25}, 2 << 10, map[string]string{
			"real": "ops/s ≥ 10×: met",
			"null": "ops/s ≥ 0.5× null: MISS"}},
	}
	for _, tc := range cases {
		rep := NewReport("test")
		for _, tg := range []struct {
			name string
			r    run
		}{{"ours", tc.ours}, {"real", tc.real}, {"null", tc.null}} {
			for _, c := range []int{8, 256} {
				rep.Add(&Result{Target: tg.name, Workload: "squeue", Label: "q", Mode: "closed", Concurrency: c,
					OpsPerSec: tg.r.ops, Latency: Summary{P99Ms: 2 * tg.r.jobP99},
					PerRPC: []RPCStats{{Name: "JOB_INFO", ReplyBytes: tc.bytes, Latency: Summary{P99Ms: tg.r.jobP99}}}}, wl)
			}
		}
		got := map[string]string{}
		for _, ra := range rep.Ratios() {
			if ra.Point == 8 {
				if ra.Other == "real" && ra.Pass != nil {
					t.Errorf("%s: a target at the low point: %+v", tc.name, ra)
				}
				continue
			}
			got[ra.Other] = ra.verdict("MISS")
			if ra.Pass == nil || *ra.Pass != !strings.Contains(got[ra.Other], "MISS") {
				t.Errorf("%s: Pass %v for %q", tc.name, ra.Pass, got[ra.Other])
			}
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s vs %s: %q, want %q", tc.name, k, got[k], v)
			}
		}
	}
}

// Held submissions (issue 18) have their targets at 16 clients and
// more, not only at the highest point: 10× the real controller's rate
// with a lower p99, each against the null server's ceiling.
func TestSbatchTargetVerdicts(t *testing.T) {
	m := testMinter(t)
	wl, _ := NewWorkload("sbatch", m.Version, 0)
	type run struct{ ops, p99 float64 }
	rep := NewReport("test")
	for _, tg := range []struct {
		name string
		rs   map[int]run
	}{
		{"ours", map[int]run{1: {1600, 3}, 16: {4700, 13}, 64: {11500, 25}}},
		{"real", map[int]run{1: {740, 4}, 16: {1300, 34}, 64: {1100, 230}}},
		{"null", map[int]run{1: {5900, 0.3}, 16: {10900, 6}, 64: {11800, 15}}},
	} {
		for c, r := range tg.rs {
			rep.Add(&Result{Target: tg.name, Workload: "sbatch", Label: "sbatch", Mode: "closed", Concurrency: c,
				OpsPerSec: r.ops, Latency: Summary{P99Ms: r.p99}}, wl)
		}
	}
	want := map[float64]string{
		16: "ops/s ≥ 10×: MISS (null misses it too); p99 below: met",
		64: "ops/s ≥ 10×: met; p99 below: met",
	}
	for _, ra := range rep.Ratios() {
		if ra.Other != "real" {
			continue
		}
		got := ra.verdict("MISS")
		if ra.Point == 1 {
			if ra.Pass != nil {
				t.Errorf("a target at one client: %q", got)
			}
			continue
		}
		if got != want[ra.Point] {
			t.Errorf("at %v: %q, want %q", ra.Point, got, want[ra.Point])
		}
	}
}

// With --repeat, a ratio compares the two targets within one round: the
// round whose ratio is the median, not each target's median run, which
// may come from different rounds.
func TestRatiosPairRounds(t *testing.T) {
	run := func(target string, rep int, ops float64) *Result {
		return &Result{Target: target, Workload: "squeue", Mode: "closed", Concurrency: 1, Rep: rep, OpsPerSec: ops}
	}
	r := &Report{Meta: Meta{Targets: []string{"a", "b"}}, Runs: []*Result{
		// Per round a/b: 2.25, 0.5, 0.857. Each target's median run is
		// from another round (a's 50 in round 1, b's 40 in round 0).
		run("a", 0, 90), run("b", 0, 40),
		run("b", 1, 100), run("a", 1, 50),
		run("a", 2, 30), run("b", 2, 35),
	}}
	rs := r.Ratios()
	if len(rs) != 1 {
		t.Fatalf("%d ratios, want 1", len(rs))
	}
	if got := rs[0].OpsRatio; got < 0.856 || got > 0.858 {
		t.Errorf("ratio %.3f, want 0.857 (round 2's pair, the median ratio)", got)
	}
	if rs[0].SubjectOps != 30 || rs[0].OtherOps != 35 {
		t.Errorf("compared %v with %v, want round 2's 30 and 35", rs[0].SubjectOps, rs[0].OtherOps)
	}
}

// The jobstate workload is squeue --only-job-state's one RPC, which
// 22.05 clients do not have.
func TestJobStateWorkload(t *testing.T) {
	wl, err := NewWorkload("jobstate", codec.V24_11, 0)
	if err != nil || len(wl.Steps) != 1 || wl.Steps[0].MsgType != codec.REQUEST_JOB_STATE || wl.Steps[0].Expect != codec.RESPONSE_JOB_STATE {
		t.Fatalf("%+v %v", wl, err)
	}
	if _, err := NewWorkload("jobstate", codec.V22_05, 0); err == nil {
		t.Fatal("22.05 jobstate workload")
	}
}

// TestStormWorkload: the mixed storm sends squeue's reads, held
// submissions and scancels of the worker's own jobs, each RPC reported
// apart.
func TestStormWorkload(t *testing.T) {
	m := testMinter(t)
	var kill codec.KillJobRequest
	rd := codec.NewReader(KillBody(m.Version, 123))
	if err := kill.Decode(&rd, m.Version); err != nil || kill.SJobID != "123" || kill.Signal != 9 {
		t.Fatalf("kill body: %+v %v", kill, err)
	}
	replies := SyntheticReplies(m.Version, 1000)
	replies[codec.REQUEST_KILL_JOB] = codec.AppendRC(nil, m.Version, nil, 0)
	s := startNull(t, replies)
	wl, err := NewWorkload("storm", m.Version, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), RunSpec{Target: Target{Name: "null", Addr: s.Addr()}, Workload: wl, Concurrency: 4,
		Warmup: 50 * time.Millisecond, Duration: 400 * time.Millisecond}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops == 0 || res.ErrorOps != 0 {
		t.Fatalf("storm: %s %v", res.Line(), res.Errors)
	}
	got := map[string]int64{}
	for _, p := range res.PerRPC {
		got[p.Name] = p.Count
	}
	for _, name := range []string{"JOB_INFO", "PARTITION_INFO", "SUBMIT_BATCH_JOB", "KILL_JOB"} {
		if got[name] == 0 {
			t.Errorf("storm: no %s in %v", name, got)
		}
	}
}

// A null server given another controller's replies (bench-io's) still
// answers submissions with the canned held-job reply: it sends none to
// fetch, and its sbatch target must not be all errors.
func TestNullRepliesFromKeepSubmit(t *testing.T) {
	m := testMinter(t)
	// The source answers every RPC the fetch sends (squeue
	// --only-job-state's too), as a controller does.
	have := SyntheticReplies(m.Version, 10000)
	have[codec.REQUEST_JOB_STATE] = codec.AppendFrame(nil, m.Version, codec.RESPONSE_JOB_STATE, nil, make([]byte, 20))
	src := startNull(t, have)
	replies, err := FetchReplies(src.Addr(), m, 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := startNull(t, replies)
	wl, _ := NewWorkload("sbatch", m.Version, 0)
	res, err := Run(context.Background(), RunSpec{Target: Target{Name: "null", Addr: s.Addr()}, Workload: wl, Concurrency: 2, Duration: 200 * time.Millisecond}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops == 0 || res.ErrorOps != 0 {
		t.Fatalf("sbatch against a null server with fetched replies: %s", res.Line())
	}
}

// A reply larger than the head the generator keeps is dropped past the
// head without the generator ever holding room for all of it (each
// worker keeps its buffer: a 240 MB listing per worker took it out of
// memory).
func TestCallKeepsOnlyTheHead(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const size = 32 << 20
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req [1]byte
				c.Read(req[:])
				var hdr [4]byte
				binary.BigEndian.PutUint32(hdr[:], size)
				c.Write(hdr[:])
				c.Write(make([]byte, size))
			}()
		}
	}()
	c := caller{timeout: 10 * time.Second, keep: keepOf(false)}
	var buf []byte
	for i := 0; i < 2; i++ {
		b, rerr := c.call(l.Addr().String(), []byte{1}, &buf)
		if rerr != nil || len(b) != replyHead {
			t.Fatalf("call: %d bytes, %v; want the %d-byte head", len(b), rerr, replyHead)
		}
		if cap(buf) > 2*replyHead {
			t.Fatalf("the generator holds room for %d bytes of a %d-byte reply: want the head's only", cap(buf), size+4)
		}
	}
	c.keep = keepOf(true)
	b, rerr := c.call(l.Addr().String(), []byte{1}, &buf)
	if rerr != nil || len(b) != size+4 {
		t.Fatalf("--copy-replies: %d bytes, %v; want all %d", len(b), rerr, size+4)
	}
}
