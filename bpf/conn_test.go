//go:build linux

package bpf

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// newEBPFOrSkip loads the program or skips with the kernel's reason.
func newEBPFOrSkip(t *testing.T) Accounting {
	t.Helper()
	a, err := New()
	if err != nil {
		t.Skipf("eBPF socket filter not loadable here (need root or CAP_BPF+CAP_NET_ADMIN and a kernel with eBPF): %v", err)
	}
	if a.Kind() != "ebpf" {
		t.Fatalf("New returned nil error but kind %q", a.Kind())
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func listen(t *testing.T, a Accounting) *net.TCPListener {
	t.Helper()
	// Plain TCP: since Go 1.24 net.Listen uses MPTCP when the kernel has it,
	// and MPTCP sockets reject SO_ATTACH_BPF (EOPNOTSUPP).
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	tl := ln.(*net.TCPListener)
	rc, err := tl.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var aerr error
	if err := rc.Control(func(fd uintptr) { aerr = a.Attach(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	if aerr != nil {
		t.Fatal(aerr)
	}
	return tl
}

// filterLen reports whether fd has a socket filter: SO_GET_FILTER with
// optlen 0 asks for the instruction count (0 = no filter); for an eBPF filter,
// which has no classic original to dump, the kernel answers EACCES, which we
// report as -1.
func filterLen(t *testing.T, c syscall.Conn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var errno syscall.Errno
	rc.Control(func(fd uintptr) {
		var optlen uint32
		var r uintptr
		r, _, errno = unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET,
			unix.SO_GET_FILTER, 0, uintptr(unsafe.Pointer(&optlen)), 0)
		n = int(r)
	})
	switch errno {
	case 0:
		return n
	case unix.EACCES:
		return -1
	}
	t.Fatalf("getsockopt SO_GET_FILTER: %v", errno)
	return 0
}

// serve accepts conns and drains each into a channel of received payloads.
func serve(t *testing.T, ln *net.TCPListener) (<-chan []byte, <-chan int) {
	got := make(chan []byte, 16)
	flen := make(chan int, 16)
	go func() {
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			flen <- filterLen(t, c)
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c)
				got <- b
			}()
		}
	}()
	return got, flen
}

func TestEBPFCountsLoopback(t *testing.T) {
	a := newEBPFOrSkip(t)
	ln := listen(t, a)
	if n := filterLen(t, ln); n == 0 {
		t.Fatal("listener has no socket filter after Attach")
	}
	got, flen := serve(t, ln)

	const conns, per = 3, 1000
	payload := bytes.Repeat([]byte("x"), per)
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(payload); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if n := <-flen; n == 0 {
			t.Fatal("accepted socket did not inherit the listener's filter")
		} else if i == 0 {
			t.Logf("accepted socket inherited the listener's filter (SO_GET_FILTER=%d, -1 = eBPF)", n)
		}
		if b := <-got; len(b) != per {
			t.Fatalf("server got %d bytes, want %d", len(b), per)
		}
	}
	const N = conns * per

	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	c, ok := snap[loopback]
	if !ok {
		t.Fatalf("no entry for %v in %v", loopback, snap)
	}
	t.Logf("127.0.0.1: %d packets, %d bytes for %d payload bytes over %d conns", c.Packets, c.Bytes, N, conns)
	// Per connection the kernel delivers at least SYN, handshake ACK, one
	// data segment and FIN to the receiving side.
	if c.Packets < 4*conns {
		t.Errorf("packets = %d, want >= %d", c.Packets, 4*conns)
	}
	// skb->len is the TCP segment (header >= 20 bytes + payload), IP header
	// excluded, so bytes >= payload + 20 per packet. That bytes exceed the
	// payload at all proves the accepted (inherited) sockets are counted:
	// the listener itself only ever sees payload-free handshake segments.
	if min := uint64(N) + 20*c.Packets; c.Bytes < min {
		t.Errorf("bytes = %d, want >= payload+20*packets = %d", c.Bytes, min)
	}
	if max := uint64(N) + 60*c.Packets; c.Bytes > max { // TCP header <= 60
		t.Errorf("bytes = %d > payload+60*packets = %d: skb->len includes more than the TCP segment?", c.Bytes, max)
	}
	// One SYN per connection: the per-host rate limit charges hosts for
	// connections by this count.
	if c.Conns != conns {
		t.Errorf("conns = %d, want %d (one SYN each)", c.Conns, conns)
	}
}

// TestEBPFCountsConnectionsWithoutData: connections that send nothing
// (a client that connects and idles, or leaves at once) are counted as
// connection attempts too, and an established connection's traffic adds
// none.
func TestEBPFCountsConnectionsWithoutData(t *testing.T) {
	a := newEBPFOrSkip(t)
	ln := listen(t, a)
	_, flen := serve(t, ln)
	var held []net.Conn
	for i := 0; i < 5; i++ {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		<-flen
		held = append(held, c)
	}
	// Traffic on an open connection: data segments, ACKs.
	if _, err := held[0].Write(bytes.Repeat([]byte("y"), 100000)); err != nil {
		t.Fatal(err)
	}
	for _, c := range held {
		c.Close()
	}
	time.Sleep(100 * time.Millisecond)
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got := snap[loopback].Conns; got != 5 {
		t.Fatalf("conns = %d, want 5 (%+v)", got, snap[loopback])
	}
}

func TestEBPFNeverDrops(t *testing.T) {
	a := newEBPFOrSkip(t)
	ln := listen(t, a)
	got, flen := serve(t, ln)

	want := make([]byte, 1<<20)
	rand.Read(want)
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	c.Close()
	<-flen
	select {
	case b := <-got:
		if !bytes.Equal(b, want) {
			t.Fatalf("received %d bytes, not identical to the 1 MiB sent", len(b))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("transfer did not complete")
	}
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s := snap[loopback]; s.Bytes < uint64(len(want)) {
		t.Errorf("accounted %d bytes, want >= %d", s.Bytes, len(want))
	} else {
		t.Logf("1 MiB intact; accounted %d packets, %d bytes", s.Packets, s.Bytes)
	}
}

func TestEBPFCloseKeepsTrafficFlowing(t *testing.T) {
	a := newEBPFOrSkip(t)
	ln := listen(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := filterLen(t, ln); n != 0 {
		t.Errorf("listener still has a %d-insn filter after Close", n)
	}
	got, _ := serve(t, ln)
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hello"))
	c.Close()
	if b := <-got; string(b) != "hello" {
		t.Fatalf("got %q", b)
	}
}

func TestUserspaceFallback(t *testing.T) {
	u := NewUserspace()
	var a Accounting = u
	if a.Kind() != "userspace" || a.Attach(3) != nil {
		t.Fatal("fallback kind/attach")
	}
	v6 := netip.MustParseAddr("2001:db8::1")
	mapped := netip.MustParseAddr("::ffff:127.0.0.1")
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 1000; i++ {
				u.Conn(loopback)
				u.Bytes(mapped, 10) // same host as 127.0.0.1
				u.Bytes(v6, 3)
				u.Bytes(v6, 0) // ignored
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
	snap, _ := a.Snapshot()
	if got, want := snap[loopback], (Counters{Packets: 16000, Bytes: 80000, Conns: 8000}); got != want {
		t.Errorf("127.0.0.1 = %+v, want %+v", got, want)
	}
	if got, want := snap[v6], (Counters{Packets: 8000, Bytes: 24000}); got != want {
		t.Errorf("%v = %+v, want %+v", v6, got, want)
	}
	if len(snap) != 2 {
		t.Errorf("snapshot has %d hosts, want 2: %v", len(snap), snap)
	}
}

func TestNewReportsKind(t *testing.T) {
	a, err := New()
	defer a.Close()
	switch a.Kind() {
	case "ebpf":
		if err != nil {
			t.Fatal("ebpf kind with error")
		}
	case "userspace":
		if err == nil {
			t.Fatal("fallback without a reason")
		}
		t.Logf("fallback reason: %v", err)
	default:
		t.Fatalf("kind %q", a.Kind())
	}
}

// The TCP tests above need a kernel that allows socket filters on TCP
// sockets. The program itself (LD_ABS source read, host-order key, atomic
// adds, return skb->len) is exercised here on a UDP socket, where the same
// program type and attach path are accepted even by kernels that refuse TCP.
// For UDP, sk_filter runs after the IP header is pulled too, so skb->len is
// the UDP datagram: 8-byte header + payload.
func TestEBPFProgramOnUDP(t *testing.T) {
	e, err := newEBPF()
	if err != nil {
		t.Skipf("eBPF socket filter not loadable here (need root or CAP_BPF and a kernel with eBPF): %v", err)
	}
	defer e.Close()
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	rc, _ := pc.SyscallConn()
	var aerr error
	rc.Control(func(fd uintptr) { aerr = e.Attach(int(fd)) })
	if aerr != nil {
		t.Fatal(aerr)
	}
	if n := filterLen(t, pc); n == 0 {
		t.Fatal("UDP socket has no filter after Attach")
	}

	c, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// 1 MiB in 256 x 4 KiB datagrams, lock-step so no socket-buffer drops
	// can be mistaken for filter drops; every datagram must arrive intact.
	const dgrams, size = 256, 4096
	buf := make([]byte, size)
	rbuf := make([]byte, size+1)
	pc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i := 0; i < dgrams; i++ {
		rand.Read(buf)
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		n, _, err := pc.ReadFromUDP(rbuf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if !bytes.Equal(rbuf[:n], buf) {
			t.Fatalf("datagram %d truncated or altered: %d bytes", i, n)
		}
	}
	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := Counters{Packets: dgrams, Bytes: dgrams * (8 + size)}
	if got := snap[loopback]; got != want {
		t.Fatalf("127.0.0.1 = %+v, want %+v (all: %v)", got, want, snap)
	}
	t.Logf("UDP: %d datagrams / 1 MiB intact; 127.0.0.1 = %+v (skb->len = 8 + payload)", dgrams, snap[loopback])
}
