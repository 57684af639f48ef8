package edge

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/bpf"
	"github.com/lablup/slurm-frontend/codec"
)

var host1 = netip.MustParseAddr("10.0.0.1")

// The per-user bucket counts as slurmctld's rate_limit_exceeded: a new
// user starts with bucket_size-1 tokens, refills refill_rate per
// refill_period at period boundaries up to bucket_size, and a refused
// request takes nothing.
func TestUserBucketAsSlurmctld(t *testing.T) {
	l := newLimiter(RateLimit{User: Bucket{Size: 3, Rate: 2, Period: time.Second}})
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	var got []verdict
	for i := 0; i < 5; i++ {
		got = append(got, l.admit(1000, host1, at(10.1), false).v)
	}
	want := []verdict{admitted, admitted, admitted, backOff, backOff}
	if !equalV(got, want) {
		t.Fatalf("burst: %v, want %v", got, want)
	}
	// Within the same second nothing comes back.
	if v := l.admit(1000, host1, at(10.9), false).v; v != backOff {
		t.Fatalf("same period: %v", v)
	}
	// The next boundary brings refill_rate tokens.
	got = got[:0]
	for i := 0; i < 3; i++ {
		got = append(got, l.admit(1000, host1, at(11.0), false).v)
	}
	if want := []verdict{admitted, admitted, backOff}; !equalV(got, want) {
		t.Fatalf("after one period: %v, want %v", got, want)
	}
	// A long pause fills the bucket to its size, no more.
	got = got[:0]
	for i := 0; i < 4; i++ {
		got = append(got, l.admit(1000, host1, at(100), false).v)
	}
	if want := []verdict{admitted, admitted, admitted, backOff}; !equalV(got, want) {
		t.Fatalf("after a pause: %v, want %v", got, want)
	}
	// Another user has a bucket of their own; exempt users none.
	if v := l.admit(1001, host1, at(100), false).v; v != admitted {
		t.Fatalf("other user: %v", v)
	}
	l.cfg.Exempt = func(uid uint32) bool { return uid == 0 }
	for i := 0; i < 100; i++ {
		if v := l.admit(0, host1, at(100), false).v; v != admitted {
			t.Fatalf("root refused")
		}
	}
	if b, h := l.UserBackoffs.Load(), l.UserHolds.Load(); b != 5 || h != 0 {
		t.Fatalf("counted %d back-offs %d holds, want 5, 0", b, h)
	}
}

// A client that cannot back off (22.05) is held until the boundary whose
// refill pays for its request, each held request one token further.
func TestHeldRequestsWaitTheirTurn(t *testing.T) {
	l := newLimiter(RateLimit{User: Bucket{Size: 2, Rate: 1, Period: time.Second}, MaxHold: 3 * time.Second})
	now := 5*time.Second + 250*time.Millisecond
	l.admit(7, host1, now, true) // new bucket: 1 token left
	if d := l.admit(7, host1, now, true); d.v != admitted {
		t.Fatalf("second: %+v", d)
	}
	var waits []time.Duration
	for i := 0; i < 4; i++ {
		d := l.admit(7, host1, now, true)
		if d.v != held {
			t.Fatalf("request %d: %+v", i, d)
		}
		waits = append(waits, d.wait)
	}
	// Owed 1, 2, 3 tokens: paid at 6 s, 7 s, 8 s; the fourth would be
	// 9 s away, past MaxHold: answered at the bound, owing nothing.
	want := []time.Duration{750 * time.Millisecond, 1750 * time.Millisecond, 2750 * time.Millisecond, 3 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	// At 8 s the debt is paid and the bucket empty again.
	if d := l.admit(7, host1, 8*time.Second, false); d.v != backOff {
		t.Fatalf("at 8 s: %+v", d)
	}
	if d := l.admit(7, host1, 9*time.Second, false); d.v != admitted {
		t.Fatalf("at 9 s: %+v", d)
	}
}

// The per-host bucket is charged for each request, and for connections
// the accounting saw that brought none.
func TestHostBucketFedByConnections(t *testing.T) {
	l := newLimiter(RateLimit{Host: Bucket{Size: 10, Rate: 5, Period: time.Second}})
	other := netip.MustParseAddr("10.0.0.2")
	now := time.Second
	for i := 0; i < 3; i++ {
		if d := l.admit(1000+uint32(i), host1, now, false); d.v != admitted {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	// 20 connections since, 3 of them requests: 17 more tokens owed,
	// bounded below by the bucket's size.
	l.feed(map[netip.Addr]bpf.Counters{host1: {Conns: 20}, other: {Conns: 1}}, now)
	if d := l.admit(1000, host1, now, false); d.v != backOff || d.by != "host" {
		t.Fatalf("after a flood of idle connections: %+v", d)
	}
	if d := l.admit(1000, other, now, false); d.v != admitted {
		t.Fatalf("another host: %+v", d)
	}
	// -10 + 5 per second: served again two periods later.
	if d := l.admit(1000, host1, now+time.Second, false); d.v != backOff {
		t.Fatalf("one period later: %+v", d)
	}
	if d := l.admit(1000, host1, now+3*time.Second, false); d.v != admitted {
		t.Fatalf("three periods later: %+v", d)
	}
	// Connections that were requests cost nothing more at the feed.
	l2 := newLimiter(RateLimit{Host: Bucket{Size: 4, Rate: 1, Period: time.Hour}})
	for i := 0; i < 3; i++ {
		l2.admit(5, host1, now, false)
	}
	l2.feed(map[netip.Addr]bpf.Counters{host1: {Conns: 3}}, now)
	if d := l2.admit(5, host1, now, false); d.v != admitted {
		t.Fatalf("the fourth token was charged twice: %+v", d)
	}
}

func equalV(a, b []verdict) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Over the wire: a 24.11 client over its limit is answered
// SLURMCTLD_COMMUNICATIONS_BACKOFF; a 22.05 client's request is held and
// then answered with what the handler says.
func TestServerRateLimitReplies(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rl := &RateLimit{User: Bucket{Size: 2, Rate: 1, Period: time.Second}}
	s := New(Config{Addr: addr, Loops: 1, Workers: 2, RateLimit: rl}, fakeHandler{}, fakeAuth{}, fakeAuth{}, fakeStats{}, nil)
	go s.Run()
	if err := <-s.Ready(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	ping := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_PING, []byte("MUNGE:good:"), nil)
	backoffs := 0
	for i := 0; i < 4; i++ {
		_, rc := rcOf(t, exchange(t, addr, ping, len(ping)))
		switch rc {
		case 1000: // the handler's answer (the uid)
		case codec.SLURMCTLD_COMMUNICATIONS_BACKOFF:
			backoffs++
		default:
			t.Fatalf("rc %d", rc)
		}
	}
	if backoffs < 2 {
		t.Fatalf("%d of 4 told to back off with a bucket of 2", backoffs)
	}
	// 22.05: held, then the handler's reply (signed, as every 22.05
	// reply), never 1804.
	old := codec.AppendFrame(nil, codec.V22_05, codec.REQUEST_PING, []byte("MUNGE:good:"), nil)
	for i := 0; i < 3; i++ {
		f, rc := rcOf(t, exchange(t, addr, old, len(old)))
		if rc != 1000 || f.Version != codec.V22_05 {
			t.Fatalf("22.05 request %d: rc %d version %#x", i, rc, f.Version)
		}
	}
	if _, holds := s.RateLimited(); holds["user"] == 0 {
		t.Fatalf("no 22.05 request was held: %v", holds)
	}
}
