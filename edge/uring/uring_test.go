package uring

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func newRing(t *testing.T, entries, cq uint32, flags uint32) *Ring {
	t.Helper()
	r, err := New(entries, cq, flags)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// reap submits and collects n completions, failing after 5 s.
func reap(t *testing.T, r *Ring, n int) []CQE {
	t.Helper()
	out := make([]CQE, 0, n)
	buf := make([]CQE, 64)
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d completions after 5 s: %+v", len(out), n, out)
		}
		if _, err := r.SubmitAndWaitTimeout(1, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		k := r.Reap(buf[:min(len(buf), n-len(out))])
		out = append(out, buf[:k]...)
	}
	return out
}

func sqe(t *testing.T, r *Ring) *SQE {
	t.Helper()
	s := r.GetSQE()
	if s == nil {
		t.Fatal("submission ring full")
	}
	return s
}

// listen makes a non-blocking loopback listener for the ring to accept on.
func listen(t *testing.T) (int, string) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	return fd, fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
}

// An echo server on one ring: multishot accept, multishot recv into a
// provided buffer ring, send of what came, close; several clients at
// once. Run with the flags the server uses too (single issuer, deferred
// task work), from a locked thread as they require.
func TestLoopbackEcho(t *testing.T) {
	for _, flags := range []uint32{0, SetupSingleIssuer | SetupDeferTaskrun} {
		t.Run(fmt.Sprintf("flags %#x", flags), func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			testEcho(t, flags)
		})
	}
}

const (
	udAccept = 1 << 32
	udRecv   = 2 << 32
	udSend   = 3 << 32
	udClose  = 4 << 32
)

func testEcho(t *testing.T, flags uint32) {
	r := newRing(t, 16, 64, flags)
	if err := r.Supported(OpAccept, OpRecv, OpSend, OpClose, OpSendZC); err != nil {
		t.Fatal(err)
	}
	lfd, addr := listen(t)
	br, err := r.NewBufRing(1, 8, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	s := sqe(t, r)
	s.PrepAccept(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, true)
	s.UserData = udAccept
	const clients = 3
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	var fds []int
	for _, c := range reap(t, r, clients) {
		if c.UserData != udAccept || c.Res < 0 || !c.More() {
			t.Fatalf("accept completion %+v", c)
		}
		fds = append(fds, int(c.Res))
		s := sqe(t, r)
		s.PrepRecvMultishot(int(c.Res), br.Group(), 0)
		s.UserData = udRecv | uint64(c.Res)
	}
	for i, c := range conns {
		fmt.Fprintf(c, "hello %d", i)
	}
	// Echo what arrives, in as many pieces as it comes.
	keep := map[int][]byte{}
	for got, sent := 0, 0; sent < clients*len("hello 0"); {
		for _, c := range reap(t, r, 1) {
			switch c.UserData &^ (1<<32 - 1) {
			case udRecv:
				id, ok := c.Buffer()
				if c.Res <= 0 || !ok || !c.More() {
					t.Fatalf("recv completion %+v", c)
				}
				fd := int(c.UserData & (1<<32 - 1))
				b := append([]byte(nil), br.Buf(id, int(c.Res))...)
				br.Recycle(id)
				br.Publish()
				keep[fd] = b
				s := sqe(t, r)
				s.PrepSend(fd, b, 0)
				s.UserData = udSend | uint64(fd)
				got += int(c.Res)
			case udSend:
				if c.Res <= 0 {
					t.Fatalf("send completion %+v", c)
				}
				sent += int(c.Res)
			}
		}
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, len("hello 0"))
		if _, err := io.ReadFull(c, b); err != nil || string(b) != fmt.Sprintf("hello %d", i) {
			t.Fatalf("client %d: %q %v", i, b, err)
		}
	}
	// Closing the server's side: cancel the armed recv, then close; the
	// client reads EOF.
	for _, fd := range fds {
		s := sqe(t, r)
		s.PrepCancel(0, fd, CancelFd|CancelAll)
		s.Flags |= SQEIOHardlink
		s.UserData = udClose
		s = sqe(t, r)
		s.PrepClose(fd)
		s.UserData = udClose | 1
	}
	cancelled := 0
	for _, c := range reap(t, r, 3*clients) {
		switch {
		case c.UserData == udClose|1 && c.Res != 0:
			t.Fatalf("close: %v", c.Err())
		case c.UserData&^(1<<32-1) == udRecv:
			if !errors.Is(c.Err(), unix.ECANCELED) || c.More() {
				t.Fatalf("cancelled recv %+v", c)
			}
			cancelled++
		}
	}
	if cancelled != clients {
		t.Fatalf("%d recvs cancelled, want %d", cancelled, clients)
	}
	for i, c := range conns {
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("client %d after close: %d %v", i, n, err)
		}
	}
}

// The submission and completion rings wrap around many times with
// batches that do not divide their size; completions come in order.
func TestRingWrapAround(t *testing.T) {
	r := newRing(t, 8, 16, 0)
	next := uint64(0)
	for batch := 0; batch < 300; batch++ {
		k := 1 + batch%7
		for i := 0; i < k; i++ {
			s := sqe(t, r)
			s.PrepNop()
			s.UserData = next + uint64(i)
		}
		for i, c := range reap(t, r, k) {
			if c.UserData != next+uint64(i) || c.Res != 0 {
				t.Fatalf("batch %d: completion %+v, want user data %d", batch, c, next+uint64(i))
			}
		}
		next += uint64(k)
	}
	if r.Pending() != 0 {
		t.Fatalf("%d SQEs left", r.Pending())
	}
}

// More completions than the completion ring holds, none reaped in
// between: the kernel keeps the rest (NODROP) and flags overflow; they
// are all reaped, in order, none lost.
func TestCQOverflow(t *testing.T) {
	r := newRing(t, 4, 8, 0)
	if r.Params().Features&FeatNoDrop == 0 {
		t.Skip("kernel without IORING_FEAT_NODROP")
	}
	const total = 40
	for i := 0; i < total; i += 4 {
		for k := 0; k < 4; k++ {
			s := sqe(t, r)
			s.PrepNop()
			s.UserData = uint64(i + k)
		}
		if _, err := r.Submit(); err != nil {
			t.Fatal(err)
		}
	}
	if !r.Overflowed() {
		t.Fatalf("%d completions for a ring of %d, and no overflow flagged", total, r.CQEntries())
	}
	for i, c := range reap(t, r, total) {
		if c.UserData != uint64(i) {
			t.Fatalf("completion %d: user data %d", i, c.UserData)
		}
	}
	if r.Overflowed() || r.Dropped() != 0 {
		t.Fatalf("after reaping: overflow %v dropped %d", r.Overflowed(), r.Dropped())
	}
}

// A multishot recv with a buffer ring smaller than what comes: buffers
// come back in turn and are reused; when none are left the recv ends
// with ENOBUFS (no More), is armed again after recycling, and no byte is
// lost or reordered.
func TestBufRingRecycling(t *testing.T) {
	r := newRing(t, 16, 64, 0)
	lfd, addr := listen(t)
	br, err := r.NewBufRing(3, 4, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := sqe(t, r)
	s.PrepAccept(lfd, unix.SOCK_NONBLOCK, false)
	fd := int(reap(t, r, 1)[0].Res)
	if fd < 0 {
		t.Fatal(unix.Errno(-fd))
	}
	defer unix.Close(fd)
	want := make([]byte, 1000)
	for i := range want {
		want[i] = byte(i * 7)
	}
	// More than the 4×16 bytes of buffers, all at once.
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	arm := func() {
		s := sqe(t, r)
		s.PrepRecvMultishot(fd, br.Group(), 0)
	}
	arm()
	var got []byte
	var held []uint16
	seen := map[uint16]int{}
	nobufs := 0
	for len(got) < len(want) {
		for _, cq := range reap(t, r, 1) {
			if errors.Is(cq.Err(), unix.ENOBUFS) {
				if cq.More() {
					t.Fatal("ENOBUFS with more to come")
				}
				nobufs++
				for _, id := range held {
					br.Recycle(id)
				}
				held = held[:0]
				br.Publish()
				arm()
				continue
			}
			id, ok := cq.Buffer()
			if cq.Res <= 0 || !ok {
				t.Fatalf("recv %+v", cq)
			}
			seen[id]++
			got = append(got, br.Buf(id, int(cq.Res))...)
			// Hold every other buffer until the ring runs dry.
			if len(got)%32 < 16 {
				br.Recycle(id)
				br.Publish()
			} else {
				held = append(held, id)
			}
			if !cq.More() {
				arm()
			}
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("received %d bytes, not what was sent", len(got))
	}
	if nobufs == 0 {
		t.Fatal("the buffer ring never ran out")
	}
	for id := uint16(0); id < 4; id++ {
		if seen[id] < 2 {
			t.Fatalf("buffer %d used %d times: not recycled (%v)", id, seen[id], seen)
		}
	}
}

// A zero-copy send completes twice: the result, then the notification
// that the buffer is the caller's again.
func TestSendZC(t *testing.T) {
	r := newRing(t, 8, 16, 0)
	if err := r.Supported(OpSendZC); err != nil {
		t.Skip(err)
	}
	a, b := pair(t)
	msg := bytes.Repeat([]byte("zero copy "), 5000)
	s := sqe(t, r)
	s.PrepSendZC(a, msg, 0)
	s.UserData = 7
	done := make(chan []byte)
	go func() {
		done <- readFull(b, len(msg))
	}()
	cs := reap(t, r, 2)
	if cs[0].Res != int32(len(msg)) || !cs[0].More() || cs[1].Flags&CQEFNotif == 0 || cs[1].UserData != 7 {
		t.Fatalf("send zc completions %+v", cs)
	}
	runtime.KeepAlive(msg)
	if got := <-done; !bytes.Equal(got, msg) {
		t.Fatal("zero-copy send: other bytes arrived")
	}
}

// A memory file's pages go to a socket as sendfile sends them: spliced
// into a pipe, then from it into the socket, the two requests linked.
func TestSpliceFileToSocket(t *testing.T) {
	r := newRing(t, 8, 16, 0)
	mfd, err := unix.MemfdCreate("listing", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(mfd)
	content := bytes.Repeat([]byte("job record "), 3000)
	if _, err := unix.Pwrite(mfd, content, 0); err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, 1<<20)
	a, b := pair(t)
	done := make(chan []byte)
	go func() {
		done <- readFull(b, len(content))
	}()
	s := sqe(t, r)
	s.PrepSplice(mfd, 0, p[1], -1, uint32(len(content)), 0)
	s.Flags |= SQEIOLink
	s = sqe(t, r)
	s.PrepSplice(p[0], -1, a, -1, uint32(len(content)), 0)
	for _, c := range reap(t, r, 2) {
		if c.Res != int32(len(content)) {
			t.Fatalf("splice %+v", c)
		}
	}
	if got := <-done; !bytes.Equal(got, content) {
		t.Fatal("spliced bytes differ")
	}
}

// A read of an eventfd completes when another goroutine writes it (the
// server's wake-up for replies workers finish); a timeout expires.
func TestEventfdWakeAndTimeout(t *testing.T) {
	r := newRing(t, 8, 16, 0)
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	v := heap(8)
	s := sqe(t, r)
	s.PrepRead(efd, v, 0)
	s.UserData = 1
	ts := new(unix.Timespec)
	sink = ts
	*ts = unix.NsecToTimespec(int64(20 * time.Millisecond))
	s = sqe(t, r)
	s.PrepTimeout(ts, 0, 0)
	s.UserData = 2
	go func() {
		time.Sleep(50 * time.Millisecond)
		unix.Write(efd, []byte{3, 0, 0, 0, 0, 0, 0, 0})
	}()
	cs := reap(t, r, 2)
	if cs[0].UserData != 2 || !errors.Is(cs[0].Err(), unix.ETIME) {
		t.Fatalf("timeout %+v", cs[0])
	}
	if cs[1].UserData != 1 || cs[1].Res != 8 || v[0] != 3 {
		t.Fatalf("eventfd read %+v %v", cs[1], v)
	}
}

// pair is a connected loopback TCP pair of raw descriptors.
func pair(t *testing.T) (int, int) {
	t.Helper()
	lfd, addr := listen(t)
	_ = addr
	sa, _ := unix.Getsockname(lfd)
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(c) })
	if err := unix.Connect(c, sa); err != nil {
		t.Fatal(err)
	}
	var s int
	for i := 0; i < 500; i++ {
		if s, _, err = unix.Accept4(lfd, unix.SOCK_CLOEXEC); err != unix.EAGAIN {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(s) })
	return s, c
}

// readFull reads n bytes from the blocking descriptor fd (fewer at EOF).
func readFull(fd, n int) []byte {
	got := make([]byte, 0, n)
	for len(got) < n {
		k, err := unix.Read(fd, got[len(got):n])
		if k <= 0 || err != nil {
			break
		}
		got = got[:len(got)+k]
	}
	return got
}

// sink makes what the kernel writes into live on the heap: a buffer on
// a goroutine's stack may move while the kernel holds its address.
var sink any

func heap(n int) []byte {
	b := make([]byte, n)
	sink = b
	return b
}
