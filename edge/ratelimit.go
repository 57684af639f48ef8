package edge

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lablup/slurm-frontend/bpf"
)

// RateLimit configures RPC admission per user and per source host.
// A zero Size turns that limit off.
type RateLimit struct {
	User      Bucket
	TableSize int // users tracked at most (rl_table_size); others are not limited
	// LogFreq: seconds between "rate limit exceeded" lines per user (0:
	// every refusal, -1: none), as rl_log_freq.
	LogFreq int
	Host    Bucket
	// Exempt reports uids never limited: root and the SlurmUser, as
	// slurmctld exempts them (their daemons' traffic must not stall).
	Exempt func(uid uint32) bool
	// MaxHold bounds how long a 22.05 client's request is held (see
	// Server.admit); default 4 s, under the clients' MessageTimeout.
	MaxHold time.Duration
}

// Bucket is a token bucket: Size tokens, Rate more every Period.
type Bucket struct {
	Size, Rate uint32
	Period     time.Duration
}

func (b Bucket) on() bool { return b.Size > 0 && b.Rate > 0 && b.Period > 0 }

// verdict of the rate limiter for one request.
type verdict uint8

const (
	admitted verdict = iota
	backOff          // answered SLURMCTLD_COMMUNICATIONS_BACKOFF: the client sleeps and retries
	held             // answered after a wait (22.05 clients, which cannot back off)
)

// limiter holds the buckets. Both kinds follow slurmctld's arithmetic:
// whole tokens, added Rate at a time at period boundaries, a new
// bucket starting full less the request that made it. A request admitted
// takes a token; one refused takes none (the client's retry is the next
// request). A held request takes a token it does not have yet: the
// bucket goes below zero and the request is answered at the boundary
// that pays it back.
type limiter struct {
	cfg    RateLimit
	seed   maphash.Seed
	users  [limShards]userShard
	hosts  [limShards]hostShard
	perTbl int
	// Refusals and holds since start, by kind, for metrics and logs.
	UserBackoffs, UserHolds, HostBackoffs, HostHolds atomic.Uint64
	// lastSnap: the accounting's counters at the previous tick, to tell
	// how many connections each host opened since.
	lastSnap map[netip.Addr]uint64
}

const limShards = 32

type bucketState struct {
	last   int64 // period number of the last refill
	tokens int64 // below zero: owed by held requests
	logged int64 // monotonic seconds of the last log line (users)
	reqs   uint64
}

type userShard struct {
	mu sync.Mutex
	m  map[uint32]*bucketState
	_  [40]byte
}

type hostShard struct {
	mu sync.Mutex
	m  map[netip.Addr]*bucketState
	_  [40]byte
}

func newLimiter(cfg RateLimit) *limiter {
	if cfg.TableSize <= 0 {
		cfg.TableSize = 8192
	}
	if cfg.MaxHold <= 0 {
		cfg.MaxHold = 4 * time.Second
	}
	l := &limiter{cfg: cfg, seed: maphash.MakeSeed(), perTbl: max((cfg.TableSize+limShards-1)/limShards, 1)}
	for i := range l.users {
		l.users[i].m = map[uint32]*bucketState{}
		l.hosts[i].m = map[netip.Addr]*bucketState{}
	}
	return l
}

// refill brings b to period p.
func (b *bucketState) refill(cfg Bucket, p int64) {
	if d := p - b.last; d > 0 {
		b.tokens = min(b.tokens+d*int64(cfg.Rate), int64(cfg.Size))
	}
	b.last = p
}

// take asks b for a token at time now; hold: the client cannot back off,
// so a missing token is borrowed and the wait returned.
func (b *bucketState) take(cfg Bucket, now time.Duration, hold bool, maxHold time.Duration) (verdict, time.Duration) {
	p := int64(now / cfg.Period)
	b.refill(cfg, p)
	if b.tokens > 0 {
		b.tokens--
		return admitted, 0
	}
	if !hold {
		return backOff, 0
	}
	// Paid back at the boundary where the refills cover what is owed.
	owed := 1 - b.tokens
	k := (owed + int64(cfg.Rate) - 1) / int64(cfg.Rate)
	wait := time.Duration(p+k)*cfg.Period - now
	if wait > maxHold {
		// More held than the clients' timeout allows: this one is
		// answered at the bound without borrowing (a 22.05 client has
		// no other way to be told to slow down than to wait).
		return held, maxHold
	}
	b.tokens--
	return held, wait
}

// give returns a token taken by a request that another limit refused.
func (b *bucketState) give() { b.tokens++ }

// decision is the limiter's answer for one request.
type decision struct {
	v    verdict
	wait time.Duration // held: when to answer
	by   string        // "user" or "host": the limit that acted
	log  bool          // a line is due (rl_log_freq)
}

// admit decides on one request of uid from host at time now (monotonic).
// hold: the client is of a release without back-off (22.05).
func (l *limiter) admit(uid uint32, host netip.Addr, now time.Duration, hold bool) decision {
	if l.cfg.Exempt != nil && l.cfg.Exempt(uid) {
		return decision{}
	}
	var hb *bucketState
	var hs *hostShard
	var v verdict
	var wait time.Duration
	if l.cfg.Host.on() && host.IsValid() {
		hs = &l.hosts[maphash.Comparable(l.seed, host)%limShards]
		hs.mu.Lock()
		hb = hs.m[host]
		if hb == nil {
			hb = &bucketState{last: int64(now / l.cfg.Host.Period), tokens: int64(l.cfg.Host.Size)}
			if len(hs.m) < 64<<10/limShards {
				hs.m[host] = hb
			}
		}
		hb.reqs++
		v, wait = hb.take(l.cfg.Host, now, hold, l.cfg.MaxHold)
		hs.mu.Unlock()
		if v == backOff {
			l.HostBackoffs.Add(1)
			return decision{v: backOff, by: "host", log: true}
		}
	}
	if l.cfg.User.on() {
		us := &l.users[uid%limShards]
		us.mu.Lock()
		b := us.m[uid]
		if b == nil {
			if len(us.m) >= l.perTbl {
				us.mu.Unlock()
				// As slurmctld: a full table leaves the user unlimited.
				return l.hostVerdict(v, wait)
			}
			// A new user's bucket starts full, less this request.
			b = &bucketState{last: int64(now / l.cfg.User.Period), tokens: int64(l.cfg.User.Size) - 1, logged: -1 << 62}
			us.m[uid] = b
			us.mu.Unlock()
			return l.hostVerdict(v, wait)
		}
		uv, uwait := b.take(l.cfg.User, now, hold, l.cfg.MaxHold)
		logIt := false
		if uv != admitted && l.cfg.LogFreq != -1 && b.logged+int64(l.cfg.LogFreq) <= int64(now/time.Second) {
			b.logged = int64(now / time.Second)
			logIt = true
		}
		us.mu.Unlock()
		switch uv {
		case backOff:
			if hb != nil && v == admitted {
				hs.mu.Lock()
				hb.give()
				hs.mu.Unlock()
			}
			l.UserBackoffs.Add(1)
			return decision{v: backOff, by: "user", log: logIt}
		case held:
			l.UserHolds.Add(1)
			return decision{v: held, wait: max(wait, uwait), by: "user", log: logIt}
		}
	}
	return l.hostVerdict(v, wait)
}

func (l *limiter) hostVerdict(v verdict, wait time.Duration) decision {
	if v == held {
		l.HostHolds.Add(1)
		return decision{v: held, wait: wait, by: "host", log: true}
	}
	return decision{v: v, wait: wait}
}

// feed charges each host's bucket for the connections the accounting
// (the kernel's eBPF filter, or the userspace fallback) saw from it
// since the last call beyond the requests it sent: connections that
// brought no request (idle, trickling, unauthenticated) cost a token
// each as well. now is monotonic.
func (l *limiter) feed(snap map[netip.Addr]bpf.Counters, now time.Duration) {
	if !l.cfg.Host.on() {
		return
	}
	prev := l.lastSnap
	l.lastSnap = make(map[netip.Addr]uint64, len(snap))
	for a, c := range snap {
		l.lastSnap[a] = c.Conns
		// The counters start at zero with the server (and again for a
		// host evicted from the LRU map and back).
		d := c.Conns
		if p := prev[a]; c.Conns >= p {
			d -= p
		}
		if d == 0 {
			continue
		}
		hs := &l.hosts[maphash.Comparable(l.seed, a)%limShards]
		hs.mu.Lock()
		b := hs.m[a]
		if b == nil {
			b = &bucketState{last: int64(now / l.cfg.Host.Period), tokens: int64(l.cfg.Host.Size)}
			if len(hs.m) < 64<<10/limShards {
				hs.m[a] = b
			}
		}
		if d > b.reqs {
			b.refill(l.cfg.Host, int64(now/l.cfg.Host.Period))
			// Bounded below: a host that stops is served again within
			// one bucket's refill.
			b.tokens = max(b.tokens-int64(d-b.reqs), -int64(l.cfg.Host.Size))
		}
		hs.mu.Unlock()
	}
	// The requests counted from here on belong to the next interval.
	for i := range l.hosts {
		hs := &l.hosts[i]
		hs.mu.Lock()
		for _, b := range hs.m {
			b.reqs = 0
		}
		hs.mu.Unlock()
	}
}
