package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/edge/uring"
)

// The io_uring transport (Config.IO "uring"): event loops that each own
// a ring, accept on the shared listener with a multishot accept, receive
// with multishot recvs into a provided-buffer ring, send and close with
// SQEs, and are woken by an eventfd for replies that workers finish. Its
// connections implement gnet.Conn, so the server's per-connection logic
// (OnOpen, OnTraffic, OnClose, OnTick, the workers) is the gnet path's,
// unchanged: only the transport under it differs. The pieces of a
// prebuilt listing still go out by writev and sendfile on the
// connection's descriptor (writePieces), as on the gnet path.

// IO transports.
const (
	IOEpoll = "epoll"
	IOUring = "uring"
)

// ParseIO checks a transport's name ("" is epoll).
func ParseIO(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", IOEpoll:
		return IOEpoll, nil
	case IOUring, "io_uring":
		return IOUring, nil
	}
	return "", fmt.Errorf("unknown I/O transport %q (epoll or uring)", s)
}

const (
	uringEntries  = 1024     // SQEs per ring
	uringCQ       = 8 * 1024 // CQEs per ring: multishot requests post many
	uringBufs     = 512      // provided receive buffers per ring
	uringBufSize  = 8 << 10  // bytes each: most requests fit in one
	uringStopWait = 2 * time.Second
)

// user data: kind in the top byte, the connection's generation, its slot.
const (
	kAccept = iota + 1
	kRecv
	kSend
	kClose
	kWake
)

func ud(kind uint8, gen uint32, slot int32) uint64 {
	return uint64(kind)<<56 | uint64(gen&0xffffff)<<32 | uint64(uint32(slot))
}

type uringEngine struct {
	s     *Server
	lfd   int
	laddr net.Addr
	loops []*uloop
	stop  chan struct{}
	wg    sync.WaitGroup
}

type uloop struct {
	e    *uringEngine
	r    *uring.Ring
	br   *uring.BufRing
	efd  int
	wake []byte // the eventfd's counter, read by the ring (heap)

	mu    sync.Mutex
	tasks []func()
	woken atomic.Bool

	conns    []*uconn // by slot
	free     []int32
	live     int // connections not yet released (open, or closing with requests in flight)
	cqes     []uring.CQE
	stopping bool
	accepts  bool // the multishot accept is armed
	backoff  bool // accept failed for lack of descriptors: re-armed later
}

// uringUsable reports why io_uring cannot serve here (disabled by
// sysctl, refused by the kernel or seccomp, missing features), or nil.
func uringUsable() error {
	if err := uring.Disabled(); err != nil {
		return err
	}
	// A single-issuer ring refuses (EEXIST) every thread but the one
	// that made it: the goroutine must not move between setup and probe.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := newRing()
	if err != nil {
		return err
	}
	defer r.Close()
	// SEND_ZC (6.0) stands for the multishot recv (6.0) and accept
	// (5.19), which the probe does not list.
	if err := r.Supported(uring.OpAccept, uring.OpRecv, uring.OpSend, uring.OpClose, uring.OpAsyncCancel, uring.OpRead, uring.OpSendZC); err != nil {
		return err
	}
	br, err := r.NewBufRing(0, 8, 64)
	if err != nil {
		return err
	}
	return br.Close()
}

// uringProbe is uringUsable; tests make it refuse.
var uringProbe = uringUsable

// newRing makes a ring with the flags that save work (completions run
// when the loop asks for them, by its one thread), or without them on a
// kernel that does not know them.
func newRing() (*uring.Ring, error) {
	r, err := uring.New(uringEntries, uringCQ, uring.SetupSingleIssuer|uring.SetupDeferTaskrun|uring.SetupSubmitAll)
	if errors.Is(err, unix.EINVAL) {
		r, err = uring.New(uringEntries, uringCQ, 0)
	}
	if err == nil && r.Params().Features&(uring.FeatNoDrop|uring.FeatFastPoll|uring.FeatExtArg) != uring.FeatNoDrop|uring.FeatFastPoll|uring.FeatExtArg {
		r.Close()
		return nil, fmt.Errorf("%w: kernel lacks NODROP, FAST_POLL or EXT_ARG", uring.ErrUnsupported)
	}
	return r, err
}

// runUring serves until Stop with the io_uring transport; an error
// before the first connection (the ring refused) lets Run fall back.
func (s *Server) runUring() (started bool, err error) {
	if err := uringProbe(); err != nil {
		return false, err
	}
	e := &uringEngine{s: s, stop: make(chan struct{})}
	if e.lfd, e.laddr, err = listenTCP(s.cfg.Addr); err != nil {
		return false, err
	}
	ready := make(chan error, s.cfg.Loops)
	for i := 0; i < s.cfg.Loops; i++ {
		l := &uloop{e: e, efd: -1, cqes: make([]uring.CQE, 256), wake: make([]byte, 8)}
		e.loops = append(e.loops, l)
		e.wg.Add(1)
		go l.run(ready)
	}
	for range e.loops {
		if err = errors.Join(err, <-ready); err != nil {
			break
		}
	}
	if err != nil {
		_ = e.shutdown(context.Background())
		unix.Close(e.lfd)
		return false, err
	}
	s.ur = e
	s.logf("controller port on io_uring (%d rings)", len(e.loops))
	s.startAccounting()
	s.ready <- nil
	go e.ticker()
	e.wg.Wait()
	unix.Close(e.lfd)
	return true, nil
}

// listenTCP binds a non-blocking listener as net.Listen does (SO_REUSEADDR,
// dual stack for an empty or unspecified IPv6 host).
func listenTCP(addr string) (int, net.Addr, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return -1, nil, err
	}
	family := unix.AF_INET6
	var sa unix.Sockaddr
	if ip4 := ta.IP.To4(); ip4 != nil {
		family = unix.AF_INET
		sa = &unix.SockaddrInet4{Port: ta.Port, Addr: [4]byte(ip4)}
	} else {
		s6 := &unix.SockaddrInet6{Port: ta.Port}
		if ta.IP != nil {
			copy(s6.Addr[:], ta.IP.To16())
		}
		sa = s6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil && family == unix.AF_INET6 && ta.IP == nil {
		family, sa = unix.AF_INET, &unix.SockaddrInet4{Port: ta.Port}
		fd, err = unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	}
	if err != nil {
		return -1, nil, os.NewSyscallError("socket", err)
	}
	fail := func(what string, err error) (int, net.Addr, error) {
		unix.Close(fd)
		return -1, nil, &net.OpError{Op: "listen", Net: "tcp", Addr: ta, Err: os.NewSyscallError(what, err)}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt", err)
	}
	if family == unix.AF_INET6 && ta.IP == nil {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0)
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, listenBacklog()); err != nil {
		return fail("listen", err)
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	return fd, sockaddrTCP(bound), nil
}

func listenBacklog() int {
	if b, err := os.ReadFile("/proc/sys/net/core/somaxconn"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			return min(n, 65535)
		}
	}
	return unix.SOMAXCONN
}

func sockaddrTCP(sa unix.Sockaddr) *net.TCPAddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	}
	return &net.TCPAddr{}
}

// dupListener is a duplicate of the listener's descriptor (the eBPF
// accounting attaches to it).
func (e *uringEngine) dupListener() (int, error) {
	return unix.FcntlInt(uintptr(e.lfd), unix.F_DUPFD_CLOEXEC, 0)
}

// ticker runs the server's OnTick, as gnet's ticker does.
func (e *uringEngine) ticker() {
	for {
		d, _ := e.s.OnTick()
		select {
		case <-e.stop:
			return
		case <-time.After(d):
		}
	}
}

// shutdown stops the loops: every connection is closed (OnClose), and
// Run returns once they have; it waits for that as gnet's Stop does
// (until ctx ends).
func (e *uringEngine) shutdown(ctx context.Context) error {
	select {
	case <-e.stop:
	default:
		close(e.stop)
		for _, l := range e.loops {
			l.post(func() { l.stopping = true })
		}
	}
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *uloop) run(ready chan<- error) {
	defer l.e.wg.Done()
	// The ring is used by this thread only (SINGLE_ISSUER).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var err error
	if l.r, err = newRing(); err != nil {
		ready <- err
		return
	}
	defer l.r.Close()
	if l.br, err = l.r.NewBufRing(0, uringBufs, uringBufSize); err != nil {
		ready <- err
		return
	}
	defer l.br.Close()
	if l.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		ready <- err
		return
	}
	defer unix.Close(l.efd)
	l.armAccept()
	l.armWake()
	if _, err := l.r.Submit(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	var stopAt time.Time
	for {
		if l.stopping {
			if stopAt.IsZero() {
				stopAt = time.Now()
				l.closeAll()
			}
			if l.live == 0 || time.Since(stopAt) > uringStopWait {
				return
			}
			// Wait with a bound: requests still in flight finish.
			_, err = l.r.SubmitAndWaitTimeout(1, 50*time.Millisecond)
		} else {
			_, err = l.r.SubmitAndWait(1)
		}
		if err != nil {
			l.e.s.logf("io_uring: %v", err)
			time.Sleep(10 * time.Millisecond)
		}
		for {
			n := l.r.Reap(l.cqes)
			for i := range n {
				l.complete(&l.cqes[i])
			}
			l.br.Publish()
			l.runTasks()
			if n < len(l.cqes) {
				break
			}
		}
	}
}

// sqe returns a free SQE, submitting what is queued when the ring is full.
func (l *uloop) sqe() *uring.SQE {
	for {
		if s := l.r.GetSQE(); s != nil {
			return s
		}
		if _, err := l.r.Submit(); err != nil {
			l.e.s.logf("io_uring submit: %v", err)
		}
	}
}

func (l *uloop) armAccept() {
	s := l.sqe()
	s.PrepAccept(l.e.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, true)
	s.UserData = ud(kAccept, 0, 0)
	l.accepts = true
}

func (l *uloop) armWake() {
	s := l.sqe()
	s.PrepRead(l.efd, l.wake, 0)
	s.UserData = ud(kWake, 0, 0)
}

// post runs fn on the loop (a worker's reply, a close from the sweeper).
func (l *uloop) post(fn func()) {
	l.mu.Lock()
	l.tasks = append(l.tasks, fn)
	l.mu.Unlock()
	if l.woken.CompareAndSwap(false, true) {
		var one = [8]byte{1}
		_, _ = unix.Write(l.efd, one[:])
	}
}

func (l *uloop) runTasks() {
	for {
		// Cleared before taking the tasks: one posted after this
		// writes the eventfd again.
		l.woken.Store(false)
		l.mu.Lock()
		tasks := l.tasks
		l.tasks = nil
		l.mu.Unlock()
		if len(tasks) == 0 {
			return
		}
		for _, fn := range tasks {
			fn()
		}
	}
}

func (l *uloop) complete(c *uring.CQE) {
	kind := uint8(c.UserData >> 56)
	gen := uint32(c.UserData>>32) & 0xffffff
	slot := int32(uint32(c.UserData))
	switch kind {
	case kAccept:
		l.accepted(c)
		return
	case kWake:
		if !l.stopping || l.live > 0 {
			l.armWake()
		}
		return
	}
	var uc *uconn
	if slot >= 0 && int(slot) < len(l.conns) && l.conns[slot] != nil && !l.conns[slot].released && l.conns[slot].gen&0xffffff == gen {
		uc = l.conns[slot]
	}
	if uc == nil {
		// Cannot happen (a slot outlives its requests); a buffer a
		// stray completion holds still goes back.
		if id, ok := c.Buffer(); ok {
			l.br.Recycle(id)
		}
		return
	}
	switch kind {
	case kRecv:
		uc.received(c)
	case kSend:
		uc.inflight--
		uc.sent(c)
	case kClose:
		uc.inflight--
	}
	if uc.closed && uc.inflight == 0 {
		l.release(uc)
	}
}

func (l *uloop) accepted(c *uring.CQE) {
	if !c.More() {
		l.accepts = false
	}
	if c.Res >= 0 {
		if l.stopping {
			unix.Close(int(c.Res))
		} else {
			l.open(int(c.Res))
		}
	} else if err := c.Err(); !errors.Is(err, unix.ECANCELED) && !l.backoff {
		switch {
		case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE), errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.ENOMEM):
			// Out of descriptors: accepting again at once would spin.
			l.e.s.logf("accept: %v", err)
			l.backoff = true
			time.AfterFunc(10*time.Millisecond, func() { l.post(func() { l.backoff = false; l.rearmAccept() }) })
			return
		}
	}
	l.rearmAccept()
}

func (l *uloop) rearmAccept() {
	if !l.accepts && !l.stopping && !l.backoff {
		l.armAccept()
	}
}

func (l *uloop) open(fd int) {
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c := &uconn{l: l, fd: fd, laddr: l.e.laddr}
	if sa, err := unix.Getpeername(fd); err == nil {
		c.raddr = sockaddrTCP(sa)
	} else {
		c.raddr = &net.TCPAddr{}
	}
	if n := len(l.free); n > 0 {
		c.slot = l.free[n-1]
		l.free = l.free[:n-1]
		c.gen = l.conns[c.slot].gen + 1
	} else {
		c.slot = int32(len(l.conns))
		l.conns = append(l.conns, nil)
	}
	l.conns[c.slot] = c
	l.live++
	out, action := l.e.s.OnOpen(c)
	if len(out) > 0 {
		_, _ = c.Write(out)
	}
	c.armRecv()
	if action == gnet.Close || action == gnet.Shutdown {
		c.close()
	}
}

// release frees a closed connection's slot once no request of it is in
// flight (the kernel no longer writes its memory).
func (l *uloop) release(c *uconn) {
	if c.released {
		return
	}
	c.released = true
	c.in, c.out = nil, nil
	l.conns[c.slot] = &uconn{gen: c.gen, released: true} // the generation goes on with the slot
	l.free = append(l.free, c.slot)
	l.live--
}

func (l *uloop) closeAll() {
	if l.accepts {
		s := l.sqe()
		s.PrepCancel(ud(kAccept, 0, 0), -1, 0)
		s.UserData = ud(kClose, 0, -1)
	}
	for _, c := range l.conns {
		if c != nil && c.l != nil && !c.closed {
			c.close()
		}
	}
}

// uconn is a connection of the io_uring transport. Its methods other than
// the concurrency-safe ones (AsyncWrite, AsyncWritev, Wake, Close,
// CloseWithCallback, the socket options) run on its loop.
type uconn struct {
	l            *uloop
	fd           int
	slot         int32
	gen          uint32
	ctx          any
	laddr, raddr net.Addr

	in       []byte   // received, not yet consumed
	borrowed bool     // in is a provided buffer's memory (during OnTraffic)
	own      []byte   // in's storage when it is not
	out      [][]byte // queued sends, out[0] in flight from outOff
	outOff   int
	outN     int
	sending  bool
	flushed  []func(error) // AsyncWrite callbacks waiting for out to drain
	inflight int           // requests whose last completion has not come
	closed   bool
	released bool
}

var _ gnet.Conn = (*uconn)(nil)

func (c *uconn) armRecv() {
	s := c.l.sqe()
	s.PrepRecvMultishot(c.fd, c.l.br.Group(), 0)
	s.UserData = ud(kRecv, c.gen, c.slot)
	c.inflight++
}

func (c *uconn) received(cq *uring.CQE) {
	if !cq.More() {
		c.inflight--
	}
	id, hasBuf := cq.Buffer()
	if hasBuf {
		defer c.l.br.Recycle(id)
	}
	switch {
	case cq.Res > 0 && hasBuf:
		if c.closed {
			return
		}
		data := c.l.br.Buf(id, int(cq.Res))
		if len(c.in) == 0 {
			c.in, c.borrowed = data, true
		} else {
			c.in = append(c.in, data...)
		}
		action := c.l.e.s.OnTraffic(c)
		if c.borrowed {
			// What OnTraffic left stays: copied out of the buffer
			// that goes back to the kernel.
			c.borrowed = false
			if len(c.in) > 0 {
				c.in = append(c.own[:0], c.in...)
				c.own = c.in[:0]
			} else {
				c.in = nil
			}
		}
		if action == gnet.Close || action == gnet.Shutdown {
			c.close()
			return
		}
		if !cq.More() && !c.closed {
			c.armRecv() // ended (the ring overflowed, say): armed again
		}
	case cq.Res == 0:
		c.close() // the client closed
	case errors.Is(cq.Err(), unix.ENOBUFS):
		if !c.closed && !cq.More() {
			c.armRecv() // buffers come back with this batch
		}
	case errors.Is(cq.Err(), unix.ECANCELED):
	default:
		c.close() // reset, or another error: gone
	}
}

func (c *uconn) sendNext() {
	s := c.l.sqe()
	s.PrepSend(c.fd, c.out[0][c.outOff:], unix.MSG_NOSIGNAL)
	s.UserData = ud(kSend, c.gen, c.slot)
	c.inflight++
	c.sending = true
}

func (c *uconn) sent(cq *uring.CQE) {
	c.sending = false
	if c.closed {
		return
	}
	if cq.Res < 0 {
		if !errors.Is(cq.Err(), unix.EAGAIN) {
			c.close()
			return
		}
	} else {
		c.outOff += int(cq.Res)
		c.outN -= int(cq.Res)
		if c.outOff == len(c.out[0]) {
			c.out[0] = nil
			c.out = c.out[1:]
			c.outOff = 0
		}
	}
	if len(c.out) > 0 {
		c.sendNext()
		return
	}
	c.out = nil
	c.runFlushed(nil)
	if c.closed {
		return
	}
	// All written: an answered connection is closed now, as the gnet
	// path closes one whose reply the kernel took at once (its reply
	// was queued here, so the handler saw it buffered).
	if st, _ := c.ctx.(*connState); st != nil && st.done.Load() && !st.working.Load() && !st.streaming.Load() {
		c.close()
	}
}

// close cancels the connection's requests and closes its descriptor, in
// that order (a request holds the socket open); OnClose runs at once.
func (c *uconn) close() {
	if c.closed {
		return
	}
	c.closed = true
	c.l.e.s.OnClose(c, nil)
	s := c.l.sqe()
	s.PrepCancel(0, c.fd, uring.CancelFd|uring.CancelAll)
	s.Flags |= uring.SQEIOHardlink
	s.UserData = ud(kClose, c.gen, c.slot)
	s = c.l.sqe()
	s.PrepClose(c.fd)
	s.UserData = ud(kClose, c.gen, c.slot)
	c.inflight += 2
	c.in = nil
	c.runFlushed(net.ErrClosed)
}

func (c *uconn) runFlushed(err error) {
	for len(c.flushed) > 0 {
		fn := c.flushed[0]
		c.flushed = c.flushed[1:]
		fn(err)
	}
	c.flushed = nil
}

// Reader.

func (c *uconn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.in)
	c.in = c.in[n:]
	return n, nil
}

func (c *uconn) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(c.in)
	c.in = c.in[n:]
	return int64(n), err
}

func (c *uconn) Next(n int) ([]byte, error) {
	b, err := c.Peek(n)
	if err == nil {
		c.in = c.in[len(b):]
	}
	return b, err
}

func (c *uconn) Peek(n int) ([]byte, error) {
	if n > len(c.in) {
		return nil, io.ErrShortBuffer
	}
	if n <= 0 {
		n = len(c.in)
	}
	return c.in[:n], nil
}

func (c *uconn) Discard(n int) (int, error) {
	if n >= len(c.in) || n <= 0 {
		n = len(c.in)
		c.in = c.in[:0]
		return n, nil
	}
	c.in = c.in[n:]
	return n, nil
}

func (c *uconn) InboundBuffered() int { return len(c.in) }

// Writer.

// Write queues b to be sent by the ring. Unlike gnet's, it keeps b (no
// copy): it must not change until written, which holds for every reply
// the server writes (built for the request, or prebuilt and immutable).
func (c *uconn) Write(b []byte) (int, error) {
	if c.closed {
		return 0, net.ErrClosed
	}
	if len(b) == 0 {
		return 0, nil
	}
	c.out = append(c.out, b)
	c.outN += len(b)
	if !c.sending {
		c.sendNext()
	}
	return len(b), nil
}

func (c *uconn) ReadFrom(r io.Reader) (int64, error) {
	b, err := io.ReadAll(r)
	n, _ := c.Write(b)
	return int64(n), err
}

func (c *uconn) SendTo([]byte, net.Addr) (int, error) { return 0, errors.ErrUnsupported }

func (c *uconn) Writev(bs [][]byte) (int, error) {
	n := 0
	for _, b := range bs {
		k, err := c.Write(b)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (c *uconn) Flush() error { return nil }

func (c *uconn) OutboundBuffered() int { return c.outN }

func (c *uconn) AsyncWrite(b []byte, cb gnet.AsyncCallback) error {
	return c.AsyncWritev([][]byte{b}, cb)
}

func (c *uconn) AsyncWritev(bs [][]byte, cb gnet.AsyncCallback) error {
	return c.onLoop(func() {
		var err error
		if c.closed {
			err = net.ErrClosed
		} else {
			_, err = c.Writev(bs)
		}
		if cb == nil {
			return
		}
		if err == nil && c.outN > 0 {
			// Called once it is all sent, not just queued: what a
			// reply's After does (scontrol shutdown stops the server)
			// must not cut the reply off.
			c.flushed = append(c.flushed, func(err error) { _ = cb(c, err) })
			return
		}
		_ = cb(c, err)
	})
}

// onLoop runs fn on the connection's loop; an error once it is stopped.
func (c *uconn) onLoop(fn func()) error {
	select {
	case <-c.l.e.stop:
		return net.ErrClosed
	default:
	}
	c.l.post(fn)
	return nil
}

// Socket.

func (c *uconn) Fd() int { return c.fd }

func (c *uconn) Dup() (int, error) { return unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0) }

func (c *uconn) SetReadBuffer(n int) error {
	return unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n)
}

func (c *uconn) SetWriteBuffer(n int) error {
	return unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, n)
}

func (c *uconn) SetLinger(secs int) error {
	l := unix.Linger{Onoff: 1, Linger: int32(secs)}
	if secs < 0 {
		l = unix.Linger{}
	}
	return unix.SetsockoptLinger(c.fd, unix.SOL_SOCKET, unix.SO_LINGER, &l)
}

func (c *uconn) SetKeepAlivePeriod(d time.Duration) error {
	return c.SetKeepAlive(true, d, d, 9)
}

func (c *uconn) SetKeepAlive(on bool, idle, intvl time.Duration, cnt int) error {
	if !on {
		return unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0)
	}
	for _, o := range [][2]int{{unix.SOL_SOCKET, unix.SO_KEEPALIVE}, {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE}, {unix.IPPROTO_TCP, unix.TCP_KEEPINTVL}, {unix.IPPROTO_TCP, unix.TCP_KEEPCNT}} {
		v := 1
		switch o[1] {
		case unix.TCP_KEEPIDLE:
			v = max(int(idle/time.Second), 1)
		case unix.TCP_KEEPINTVL:
			v = max(int(intvl/time.Second), 1)
		case unix.TCP_KEEPCNT:
			v = max(cnt, 1)
		}
		if err := unix.SetsockoptInt(c.fd, o[0], o[1], v); err != nil {
			return err
		}
	}
	return nil
}

func (c *uconn) SetNoDelay(on bool) error {
	v := 0
	if on {
		v = 1
	}
	return unix.SetsockoptInt(c.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v)
}

// The rest of gnet.Conn.

func (c *uconn) Context() any              { return c.ctx }
func (c *uconn) SetContext(ctx any)        { c.ctx = ctx }
func (c *uconn) EventLoop() gnet.EventLoop { return nil }
func (c *uconn) LocalAddr() net.Addr       { return c.laddr }
func (c *uconn) RemoteAddr() net.Addr      { return c.raddr }

// Wake runs OnTraffic for the connection on its loop, as gnet's does.
func (c *uconn) Wake(cb gnet.AsyncCallback) error {
	return c.onLoop(func() {
		var err error
		if c.closed {
			err = net.ErrClosed
		} else if a := c.l.e.s.OnTraffic(c); a == gnet.Close || a == gnet.Shutdown {
			c.close()
		}
		if cb != nil {
			_ = cb(c, err)
		}
	})
}

func (c *uconn) CloseWithCallback(cb gnet.AsyncCallback) error {
	return c.onLoop(func() {
		c.close()
		if cb != nil {
			_ = cb(c, nil)
		}
	})
}

// Close closes the connection on its loop (from any goroutine).
func (c *uconn) Close() error {
	return c.onLoop(c.close)
}

func (c *uconn) SetDeadline(time.Time) error      { return errors.ErrUnsupported }
func (c *uconn) SetReadDeadline(time.Time) error  { return errors.ErrUnsupported }
func (c *uconn) SetWriteDeadline(time.Time) error { return errors.ErrUnsupported }
