// Package bpf accounts the controller port's inbound traffic per source
// host: for every IPv4 source address it keeps a packet count and a byte
// count of what the kernel delivered to the listening socket and to every
// connection accepted from it.
//
// # How
//
// The preferred implementation (Kind "ebpf") is a BPF_PROG_TYPE_SOCKET_FILTER
// program attached with SO_ATTACH_BPF to the listening socket. On Linux an
// accepted TCP socket is cloned from its listener and inherits the listener's
// socket filter (sk_clone_lock takes a reference on sk_filter), so one
// attachment covers the SYN/handshake ACK seen by the listener and all data
// segments of every accepted connection, without the edge touching each fd.
// For every packet the program:
//
//   - returns immediately for non-IPv4 packets (skb->protocol != ETH_P_IP);
//   - reads the IPv4 source address with an absolute load at the network
//     header (LD_ABS word at SKF_NET_OFF+12); LD_ABS yields the value in host
//     order, so the map key is the address as a host-order uint32 and
//     Snapshot converts it back to network order;
//   - atomically adds 1 packet and skb->len bytes to a BPF_MAP_TYPE_LRU_HASH
//     (MaxEntries entries; the least recently active hosts are evicted when
//     full) keyed by that address;
//   - returns skb->len, i.e. accepts the whole packet. A socket filter's
//     return value is a truncation length, so returning skb->len guarantees
//     the filter never drops or trims traffic.
//
// What skb->len is: TCP runs the socket filter in tcp_v4_rcv after the IP
// header has been pulled, so skb->len is the TCP segment length (TCP header
// including options, plus payload) — the IP header is not counted. Bytes is
// therefore "TCP bytes received", which is >= the application payload.
//
// # Why no C / clang
//
// The program is about thirty instructions, so it is assembled directly in Go
// with github.com/cilium/ebpf/asm and loaded with cilium/ebpf. There is no
// .c source, no clang/LLVM toolchain, no bpf2go generated object and no BTF
// requirement; the package builds with the plain Go toolchain and the
// program is verified by the running kernel at New time.
//
// # Fallback
//
// If the program cannot be loaded (not root / no CAP_BPF, seccomp, kernel
// without eBPF, non-Linux) or the kernel refuses to attach it to a TCP
// socket (New probes this on a throwaway socket), New returns a *Userspace
// accounting (Kind "userspace") together with the reason. Its Attach is a
// no-op; the edge feeds it instead by calling Conn on each accepted
// connection and Bytes for each read. Userspace counts a "packet" per Conn/Bytes call and bytes
// as application payload, so the two kinds are comparable in shape, not in
// exact numbers.
//
// # Use from the edge
//
//	acct, why := bpf.New()
//	if why != nil { log.Printf("conn accounting: %s fallback: %v", acct.Kind(), why) }
//	// after the gnet listener is bound, with its fd:
//	_ = acct.Attach(listenerFD)
//	// when Kind()=="userspace", in OnOpen / OnTraffic:
//	//   us.Conn(addr); us.Bytes(addr, n)
//	// periodically (metrics scrape):
//	snap, _ := acct.Snapshot()
package bpf

import "net/netip"

// MaxEntries bounds the number of distinct source hosts tracked.
const MaxEntries = 65536

// Counters is the traffic seen from one source host. Conns counts
// connection attempts: TCP SYNs without ACK (eBPF), accepted connections
// (userspace).
type Counters struct {
	Packets, Bytes, Conns uint64
}

// Accounting is per-source-host traffic accounting of the controller port.
type Accounting interface {
	// Attach starts accounting traffic of the listening socket fd and of
	// every connection accepted from it afterwards. fd must be a plain TCP
	// (or UDP) socket: MPTCP sockets, which Go's net.Listen creates by
	// default since Go 1.24 when the kernel supports them, reject socket
	// filters with EOPNOTSUPP. gnet creates plain TCP sockets.
	Attach(fd int) error
	// Snapshot returns the current cumulative counters per source address.
	Snapshot() (map[netip.Addr]Counters, error)
	// Close releases resources and detaches from listeners.
	Close() error
	// Kind is "ebpf" or "userspace".
	Kind() string
}

// New returns the eBPF implementation when the program can be loaded, else
// a *Userspace fallback and the reason eBPF was not used (nil on success).
func New() (Accounting, error) {
	e, err := newTCPAccounting()
	if err != nil {
		return NewUserspace(), err
	}
	return e, nil
}
