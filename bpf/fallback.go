package bpf

import (
	"hash/maphash"
	"net/netip"
	"sync"
)

const shards = 64

// Userspace is the fallback Accounting used when the eBPF program cannot be
// loaded. The kernel does not feed it: the edge calls Conn for every accepted
// connection and Bytes for every successful read, with the peer's address.
// It is sharded by address so concurrent event loops rarely contend.
// Attach is a no-op. A "packet" here is one Conn or Bytes call and bytes are
// application payload, so numbers are not identical to the eBPF kind's.
type Userspace struct {
	seed   maphash.Seed
	shards [shards]struct {
		mu sync.Mutex
		m  map[netip.Addr]*Counters
		_  [40]byte // keep shards on separate cache lines
	}
}

// NewUserspace returns an empty userspace accounting.
func NewUserspace() *Userspace {
	u := &Userspace{seed: maphash.MakeSeed()}
	for i := range u.shards {
		u.shards[i].m = make(map[netip.Addr]*Counters)
	}
	return u
}

func (u *Userspace) add(addr netip.Addr, pkts, n, conns uint64) {
	addr = addr.Unmap() // ::ffff:a.b.c.d and a.b.c.d are the same host
	s := &u.shards[maphash.Comparable(u.seed, addr)%shards]
	s.mu.Lock()
	c := s.m[addr]
	if c == nil {
		if len(s.m) >= MaxEntries/shards { // bounded like the LRU map
			for k := range s.m {
				delete(s.m, k)
				break
			}
		}
		c = new(Counters)
		s.m[addr] = c
	}
	c.Packets += pkts
	c.Bytes += n
	c.Conns += conns
	s.mu.Unlock()
}

// Conn records a new connection from addr (the edge's OnOpen).
func (u *Userspace) Conn(addr netip.Addr) { u.add(addr, 1, 0, 1) }

// Bytes records n bytes read from addr (the edge's OnTraffic).
func (u *Userspace) Bytes(addr netip.Addr, n int) {
	if n > 0 {
		u.add(addr, 1, uint64(n), 0)
	}
}

func (u *Userspace) Attach(int) error { return nil }
func (u *Userspace) Close() error     { return nil }
func (u *Userspace) Kind() string     { return "userspace" }

func (u *Userspace) Snapshot() (map[netip.Addr]Counters, error) {
	out := make(map[netip.Addr]Counters)
	for i := range u.shards {
		s := &u.shards[i]
		s.mu.Lock()
		for k, v := range s.m {
			out[k] = *v
		}
		s.mu.Unlock()
	}
	return out, nil
}
