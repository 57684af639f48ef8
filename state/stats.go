package state

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// RPCStats counts RPCs by message type and by user, with total service
// time, for sdiag. Counting is lock-free on the hot path for known types.
type RPCStats struct {
	StartTime time.Time
	byType    [8192]rpcCounter // indexed by msg_type - 1000 (types 1000..9191)
	mu        sync.Mutex
	byUser    map[uint32]*rpcCounter
	resetTime atomic.Int64
	Conns     atomic.Int64 // currently open connections
	Rejected  atomic.Uint64
}

type rpcCounter struct {
	count atomic.Uint64
	usec  atomic.Uint64
}

// NewRPCStats starts the clock.
func NewRPCStats() *RPCStats {
	s := &RPCStats{StartTime: time.Now(), byUser: map[uint32]*rpcCounter{}}
	s.resetTime.Store(time.Now().Unix())
	return s
}

// Record adds one RPC.
func (s *RPCStats) Record(msgType uint16, uid uint32, d time.Duration) {
	us := uint64(d / time.Microsecond)
	if i := int(msgType) - 1000; i >= 0 && i < len(s.byType) {
		s.byType[i].count.Add(1)
		s.byType[i].usec.Add(us)
	}
	s.mu.Lock()
	c := s.byUser[uid]
	if c == nil {
		c = &rpcCounter{}
		s.byUser[uid] = c
	}
	s.mu.Unlock()
	c.count.Add(1)
	c.usec.Add(us)
}

// RPCCount is one row of sdiag's tables.
type RPCCount struct {
	ID    uint32 // msg type or uid
	Count uint32
	Usec  uint64
}

// ByType returns the per-message-type rows, most frequent first.
func (s *RPCStats) ByType() []RPCCount {
	var out []RPCCount
	for i := range s.byType {
		if n := s.byType[i].count.Load(); n > 0 {
			out = append(out, RPCCount{ID: uint32(i + 1000), Count: uint32(n), Usec: s.byType[i].usec.Load()})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Count > out[b].Count })
	return out
}

// ByUser returns the per-user rows, most frequent first.
func (s *RPCStats) ByUser() []RPCCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []RPCCount
	for uid, c := range s.byUser {
		out = append(out, RPCCount{ID: uid, Count: uint32(c.count.Load()), Usec: c.usec.Load()})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Count > out[b].Count })
	return out
}

// Reset clears the counters (sdiag -r).
func (s *RPCStats) Reset() {
	for i := range s.byType {
		s.byType[i].count.Store(0)
		s.byType[i].usec.Store(0)
	}
	s.mu.Lock()
	s.byUser = map[uint32]*rpcCounter{}
	s.mu.Unlock()
	s.resetTime.Store(time.Now().Unix())
}

// ResetTime is when counters were last reset.
func (s *RPCStats) ResetTime() int64 { return s.resetTime.Load() }
