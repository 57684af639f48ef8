package bench

import (
	"os"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/capture"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// The per-request work of the read path below the socket, on the request
// a stock 24.11 squeue sends first (REQUEST_JOB_INFO, 230 bytes): frame
// and header decode, MUNGE credential verification (armor, base64,
// AES-128-CBC, HMAC-SHA256, time window, replay cache, identity) and the
// K12 body-hash check. The goal is 0 allocations per request.

const captureKey = "../codec/testdata/slurm-24.11/munge.key"

// capturedSqueue returns the captured REQUEST_JOB_INFO frame and the
// time its credential was made.
func capturedSqueue(tb testing.TB) ([]byte, *munge.Key, time.Time) {
	tb.Helper()
	b, err := os.ReadFile("../codec/testdata/slurm-24.11/squeue-24.11.pcap")
	if err != nil {
		tb.Fatal(err)
	}
	conns, err := capture.Parse(b)
	if err != nil {
		tb.Fatal(err)
	}
	key, err := munge.LoadKey(captureKey)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range conns {
		for _, raw := range c.Requests {
			var f codec.Frame
			if codec.DecodeFrame(raw, &f) == nil && f.MsgType == codec.REQUEST_JOB_INFO {
				var cr munge.Cred
				var scratch []byte
				if err := key.Decode(f.Cred, &cr, &scratch); err != nil {
					tb.Fatal(err)
				}
				return raw, key, time.Unix(int64(cr.EncodeTime), 0)
			}
		}
	}
	tb.Fatal("no REQUEST_JOB_INFO in the capture")
	return nil, nil, time.Time{}
}

// decodeAuth is what the server does with a request before looking at
// its body.
func decodeAuth(tb testing.TB, v *munge.Verifier, raw []byte, f *codec.Frame, c *munge.Cred) {
	if err := codec.DecodeFrame(raw, f); err != nil {
		tb.Fatal(err)
	}
	if err := v.Verify(f.Cred, c); err != nil {
		tb.Fatal(err)
	}
	if err := munge.CheckBodyHash(c.Payload, f.MsgType, f.Body); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkHeaderAuthCaptured verifies the captured bytes themselves
// (clock fixed at the capture, replay detection off since the same
// credential comes back every iteration).
func BenchmarkHeaderAuthCaptured(b *testing.B) {
	raw, key, at := capturedSqueue(b)
	v := munge.NewVerifier(key, munge.WithClock(func() time.Time { return at }), munge.WithIdentity(0, 0), munge.WithReplayCapacity(0))
	var f codec.Frame
	c := munge.Cred{Payload: make([]byte, 0, 64)}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		decodeAuth(b, v, raw, &f, &c)
	}
}

// BenchmarkHeaderAuthFresh is the production case: every request carries
// a new credential (minted like a stock client's over the captured body)
// and goes through the replay cache. Credentials are minted in pools
// outside the timer; between pools the clock jumps past their ttl, so the
// cache purges the old entries and stays at its steady-state size.
func BenchmarkHeaderAuthFresh(b *testing.B) {
	raw, key, at := capturedSqueue(b)
	var cf codec.Frame
	if err := codec.DecodeFrame(raw, &cf); err != nil {
		b.Fatal(err)
	}
	body := append([]byte(nil), cf.Body...)
	now := at
	v := munge.NewVerifier(key, munge.WithClock(func() time.Time { return now }), munge.WithIdentity(0, 0))
	m := &Minter{Key: key, Addr: [4]byte{127, 0, 0, 1}, Version: cf.Version}
	rnd := newRand()
	const pool = 8192
	frames := make([][]byte, pool)
	mint := func() {
		for i := range frames {
			// Frame stamps time.Now(); restamp for the fake clock.
			c := munge.Cred{Addr: m.Addr, EncodeTime: uint32(now.Unix()), TTL: 300, AuthUID: munge.UIDAny, AuthGID: munge.GIDAny,
				Payload: munge.BodyHash(nil, munge.HashK12, codec.REQUEST_JOB_INFO, body)}
			cred, err := key.Encode(nil, &c, rnd)
			if err != nil {
				b.Fatal(err)
			}
			frames[i] = codec.AppendFrame(frames[i][:0], cf.Version, codec.REQUEST_JOB_INFO, cred, body)
		}
	}
	// Warm the cache to its steady state (two pools, purged once).
	var f codec.Frame
	c := munge.Cred{Payload: make([]byte, 0, 64)}
	for range 3 {
		mint()
		for _, fr := range frames {
			decodeAuth(b, v, fr, &f, &c)
		}
		now = now.Add(400 * time.Second)
	}
	mint()
	i := 0
	b.ReportAllocs()
	b.SetBytes(int64(len(frames[0])))
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if i == pool {
			b.StopTimer()
			now = now.Add(400 * time.Second)
			mint()
			i = 0
			b.StartTimer()
		}
		decodeAuth(b, v, frames[i], &f, &c)
		i++
	}
}

// TestHeaderAuthAllocs pins the goal: no allocation per request in the
// steady state, for the captured request and for fresh credentials.
func TestHeaderAuthAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations (sync.Pool drops items)")
	}
	raw, key, at := capturedSqueue(t)
	v := munge.NewVerifier(key, munge.WithClock(func() time.Time { return at }), munge.WithIdentity(0, 0), munge.WithReplayCapacity(0))
	var f codec.Frame
	c := munge.Cred{Payload: make([]byte, 0, 64)}
	decodeAuth(t, v, raw, &f, &c)
	if n := testing.AllocsPerRun(200, func() { decodeAuth(t, v, raw, &f, &c) }); n != 0 {
		t.Errorf("captured squeue request: %.1f allocations per request, want 0", n)
	}
	if testing.Short() {
		return
	}
	res := testing.Benchmark(BenchmarkHeaderAuthFresh)
	if a := res.AllocsPerOp(); a != 0 {
		t.Errorf("fresh credentials through the replay cache: %d allocations per request, want 0 (%s)", a, res.MemString())
	}
	t.Logf("fresh credentials: %s %s", res, res.MemString())
}

// BenchmarkMint is the generator's own per-RPC cost: credential and
// frame for a squeue JOB_INFO request.
func BenchmarkMint(b *testing.B) {
	key, err := munge.LoadKey(captureKey)
	if err != nil {
		b.Fatal(err)
	}
	m := &Minter{Key: key, Addr: [4]byte{127, 0, 0, 1}, Version: codec.V24_11}
	body := SqueueJobInfo(codec.V24_11)
	rnd := newRand()
	dst := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		dst, err = m.Frame(dst[:0], rnd, codec.REQUEST_JOB_INFO, munge.UIDAny, body)
		if err != nil {
			b.Fatal(err)
		}
	}
}
