package munge

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
)

// replayKey identifies a credential as munged's replay hash does: the
// first 16 bytes of its MAC (MUNGE_MINIMUM_MD_LEN) and its expiry.
type replayKey struct {
	mac [16]byte
	exp int64
}

const replayShards = 64

// The replay cache remembers every credential until it expires, as
// munged does, in a compact table: a storm of 25,000 RPC/s fills the
// default capacity in 42 s, so the per-entry cost is what a busy
// server's memory is made of. Each shard keeps its entries in a ring in
// insertion order (credentials of one site share a ttl, so that is
// expiry order: expired entries leave from the head in O(1), never by
// scanning) and finds them through an open-addressing index of ring
// positions. An entry costs 20 bytes in the ring and two 4-byte index
// slots: 28 bytes, against ~104 for a Go map beside a ring.
type replayShard struct {
	mu sync.Mutex
	q  []replayEntry // ring from head, n entries
	// idx holds ring positions + 1 (0 = empty), linear probing, at most
	// half full; its length is a power of two, twice the ring's.
	idx     []uint32
	head, n int
	evicted uint64   // live entries dropped early because the shard was full
	_       [64]byte // keep shards' mutexes on separate cache lines
}

type replayEntry struct {
	mac [16]byte
	exp uint32 // seconds since the epoch (good until 2106)
}

type replayCache struct {
	perShard int
	shards   [replayShards]replayShard
}

func newReplayCache(capacity int) *replayCache {
	return &replayCache{perShard: max((capacity+replayShards-1)/replayShards, 1)}
}

// insert records k, or reports ErrReplayed if it is already there. A full
// shard drops its oldest entry (the one closest to expiring) rather than
// refuse service: replay detection then covers a shorter window, which
// Evicted counts, but a storm of valid requests is never turned away.
func (rc *replayCache) insert(k replayKey, now int64) error {
	// The MAC is unpredictable without the key, so its first byte spreads
	// credentials evenly over the shards.
	s := &rc.shards[int(k.mac[0])%replayShards]
	e := replayEntry{mac: k.mac, exp: uint32(min(max(k.exp, 0), math.MaxUint32))}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if s.find(e) >= 0 {
		return ErrReplayed
	}
	if s.n >= rc.perShard {
		s.pop()
		s.evicted++
	}
	s.push(e, rc.perShard)
	return nil
}

// home is an entry's first index slot: Fibonacci hashing of eight MAC
// bytes, so that even structured keys (tests) spread over the index.
func home(mac *[16]byte, mask int) int {
	h := binary.LittleEndian.Uint64(mac[1:9]) * 0x9E3779B97F4A7C15
	return int(h>>(64-bits.Len(uint(mask)))) & mask
}

// find returns e's index slot, or -1.
func (s *replayShard) find(e replayEntry) int {
	if len(s.idx) == 0 {
		return -1
	}
	mask := len(s.idx) - 1
	for i := home(&e.mac, mask); s.idx[i] != 0; i = (i + 1) & mask {
		if s.q[s.idx[i]-1] == e {
			return i
		}
	}
	return -1
}

// expire drops entries from the head while they have expired.
func (s *replayShard) expire(now int64) {
	for s.n > 0 && int64(s.q[s.head].exp) < now {
		s.pop()
	}
}

// pop drops the ring's head entry and its index slot.
func (s *replayShard) pop() {
	s.unindex(s.find(s.q[s.head]))
	s.head = (s.head + 1) % len(s.q)
	s.n--
}

// unindex empties index slot i, shifting back the entries after it whose
// probe sequence passes through i (deletion without tombstones).
func (s *replayShard) unindex(i int) {
	if i < 0 {
		return
	}
	mask := len(s.idx) - 1
	for j := (i + 1) & mask; s.idx[j] != 0; j = (j + 1) & mask {
		h := home(&s.q[s.idx[j]-1].mac, mask)
		// Entry j may move to i when its home is not cyclically in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			s.idx[i] = s.idx[j]
			i = j
		}
	}
	s.idx[i] = 0
}

// push appends e to the ring and indexes it, growing both (up to the
// shard's capacity) when the ring is full.
func (s *replayShard) push(e replayEntry, capacity int) {
	if s.n == len(s.q) {
		// Grow the ring, unrolling it so head is 0, and index it anew.
		nq := make([]replayEntry, min(max(2*len(s.q), 64), max(capacity, 1)))
		if len(nq) <= s.n {
			nq = make([]replayEntry, s.n+1)
		}
		for i := 0; i < s.n; i++ {
			nq[i] = s.q[(s.head+i)%len(s.q)]
		}
		s.q, s.head = nq, 0
		size := 1
		for size < 2*len(nq) {
			size <<= 1
		}
		s.idx = make([]uint32, size)
		for i := 0; i < s.n; i++ {
			s.index(i)
		}
	}
	p := (s.head + s.n) % len(s.q)
	s.q[p] = e
	s.n++
	s.index(p)
}

// index records ring position p in the index.
func (s *replayShard) index(p int) {
	mask := len(s.idx) - 1
	i := home(&s.q[p].mac, mask)
	for s.idx[i] != 0 {
		i = (i + 1) & mask
	}
	s.idx[i] = uint32(p + 1)
}

// len is the number of credentials remembered (tests).
func (rc *replayCache) len() int {
	n := 0
	for i := range rc.shards {
		s := &rc.shards[i]
		s.mu.Lock()
		n += s.n
		s.mu.Unlock()
	}
	return n
}

// reset empties the cache, keeping its tables' size (tests).
func (rc *replayCache) reset() {
	for i := range rc.shards {
		s := &rc.shards[i]
		clear(s.idx)
		s.head, s.n = 0, 0
	}
}
