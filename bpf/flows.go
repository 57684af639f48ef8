package bpf

import (
	"errors"
	"net"
	"sync/atomic"
)

// Flow accounting: the bytes of single TCP connections, each way, as the
// kernel sends and receives them. The node stand-ins use it for srun's
// task I/O streams (one connection per step and node), so an operator sees
// what interactive work costs per job and step.
//
// The eBPF kind (Kind "ebpf") attaches two tcx programs (ingress and
// egress, BPF_PROG_TYPE_SCHED_CLS) to the interface a tracked connection
// uses. They look every TCP segment's 4-tuple up in a hash map that only
// userspace fills (Track inserts, Flow.Close deletes), so untracked
// traffic costs one lookup and is never recorded. A hit adds the segment's
// TCP payload (IP length less the IP and TCP headers) to the direction's
// byte count. tcx needs Linux 6.6; unlike cgroup_skb it needs no cgroup v2
// hierarchy, so it works on hosts still on cgroup v1.
//
// The userspace kind counts what the relay reads and writes on the
// connection (CountConn). Both count the stream's bytes, framing included,
// so on a loss-free path they agree to the byte; the eBPF figure also
// counts retransmissions, as the wire does.

// IO is one connection's bytes: Out is what this host sent, In what it got.
type IO struct {
	Out, In uint64
}

// FlowMeter counts single connections.
type FlowMeter interface {
	// Track starts counting a TCP connection of this host's. One that
	// cannot be tracked (error) is left to userspace counting.
	Track(c net.Conn) (Flow, error)
	Kind() string
	Close() error
}

// Flow is one tracked connection.
type Flow interface {
	// Read is the count so far.
	Read() IO
	// Close stops counting and returns the final count. It waits (a
	// little) for what was written to leave: a write returns once the
	// kernel has the bytes, not once they are sent.
	Close() IO
}

// NewFlowMeter returns the eBPF meter when the kernel has what it needs,
// else nil and why (the caller counts in userspace).
func NewFlowMeter() (FlowMeter, error) {
	return newTCXMeter()
}

// ErrNotTracked: the meter cannot count this connection.
var ErrNotTracked = errors.New("bpf: connection not tracked")

// CountConn counts the bytes the program reads and writes on a connection:
// the userspace fallback of a FlowMeter.
type CountConn struct {
	net.Conn
	out, in atomic.Uint64
}

func (c *CountConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.out.Add(uint64(n))
	return n, err
}

func (c *CountConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.Add(uint64(n))
	return n, err
}

// IO is the count so far.
func (c *CountConn) IO() IO { return IO{Out: c.out.Load(), In: c.in.Load()} }
