package edge

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state/memfile"
)

type fakeAuth struct{}

func (fakeAuth) Verify(cred []byte, msgType uint16, body []byte) (uint32, uint32, [4]byte, error) {
	if string(cred) != "MUNGE:good:" {
		return 0, 0, [4]byte{}, &codec.Error{Code: codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, Msg: "bad"}
	}
	return 1000, 1000, [4]byte{127, 0, 0, 1}, nil
}

func (fakeAuth) Sign(dst []byte, forUID uint32, msgType uint16, body []byte) ([]byte, error) {
	return append(dst, "MUNGE:reply:"...), nil
}

type fakeStats struct{}

func (fakeStats) Record(uint16, uint32, time.Duration) {}

type fakeHandler struct{}

func (fakeHandler) Fast(req *Request) (Reply, bool) {
	switch req.MsgType {
	case codec.REQUEST_PING:
		return RC(req.UID), true // echo the authenticated uid
	case 9999:
		return Reply{Drop: true}, true
	case codec.REQUEST_JOB_INFO:
		// A listing in pieces, more of them than one writev takes.
		head := codec.AppendFrameHead(nil, req.Version, codec.RESPONSE_JOB_INFO, nil, len(piecesBody))
		return Reply{Frame: head, More: pieces}, true
	}
	return Reply{}, false
}

// pieces: 3,000 slices (some empty) of an ~11 MB body; every 50th is
// large enough to live in a memory file and go out by sendfile, between
// runs of heap pieces that go out by writev.
var pieces, piecesBody = func() ([]*memfile.Bytes, []byte) {
	var ps []*memfile.Bytes
	var body []byte
	for i := 0; i < 3000; i++ {
		n := (i * 7919) % 5400
		if i%50 == 7 {
			n = memfile.MinFile + (i*7919)%(64<<10)
		}
		p := make([]byte, n)
		for k := range p {
			p[k] = byte(i + k)
		}
		ps = append(ps, memfile.New(p))
		body = append(body, p...)
	}
	return ps, body
}()

// The test's pieces really are of both kinds.
func TestPiecesMixFilesAndHeap(t *testing.T) {
	files := 0
	for _, p := range pieces {
		if _, ok := p.File(); ok {
			files++
		}
	}
	if files != 60 {
		t.Fatalf("%d of %d pieces in memory files, want 60", files, len(pieces))
	}
}

func (fakeHandler) Slow(req *Request) Reply {
	time.Sleep(20 * time.Millisecond)
	if req.MsgType == codec.REQUEST_JOB_USER_INFO {
		// The same listing, built by a worker (as the first listing
		// of a new snapshot is).
		head := codec.AppendFrameHead(nil, req.Version, codec.RESPONSE_JOB_INFO, nil, len(piecesBody))
		return Reply{Frame: head, More: pieces}
	}
	return RC(uint32(len(req.Body)))
}

func startServer(t *testing.T) string {
	t.Helper()
	addr, _ := startServerWith(t)
	return addr
}

func startServerWith(t *testing.T) (string, *Server) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := New(Config{Addr: addr, Loops: 1, Workers: 2, IO: testIO}, fakeHandler{}, fakeAuth{}, fakeAuth{}, fakeStats{}, nil)
	go s.Run()
	if err := <-s.Ready(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return addr, s
}

// exchange sends raw (in chunks of step bytes) and returns the reply
// frame, or nil if the server closed without one.
func exchange(t *testing.T, addr string, raw []byte, step int) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < len(raw); i += step {
		c.Write(raw[i:min(i+step, len(raw))])
		if step < len(raw) {
			time.Sleep(time.Millisecond)
		}
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil
	}
	rest := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(c, rest); err != nil {
		t.Fatalf("short reply: %v", err)
	}
	return append(hdr[:], rest...)
}

func rcOf(t *testing.T, frame []byte) (codec.Frame, uint32) {
	t.Helper()
	var f codec.Frame
	if err := codec.DecodeFrame(frame, &f); err != nil || f.MsgType != codec.RESPONSE_SLURM_RC {
		t.Fatalf("reply %x: %v", frame, err)
	}
	return f, binary.BigEndian.Uint32(f.Body)
}

func TestServerAnswersSplitReadsSlowPathAndSigns(t *testing.T) {
	addr := startServer(t)
	ping := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_PING, []byte("MUNGE:good:"), nil)
	// One byte at a time: the edge waits for the whole frame.
	f, rc := rcOf(t, exchange(t, addr, ping, 1))
	if rc != 1000 || f.Version != codec.V24_11 || f.Flags&codec.FlagNoAuthCred == 0 {
		t.Fatalf("24.11 ping: rc %d version %#x flags %#x", rc, f.Version, f.Flags)
	}
	// 22.05 replies carry a credential.
	ping22 := codec.AppendFrame(nil, codec.V22_05, codec.REQUEST_PING, []byte("MUNGE:good:"), nil)
	f, _ = rcOf(t, exchange(t, addr, ping22, len(ping22)))
	if string(f.Cred) != "MUNGE:reply:" || f.Version != codec.V22_05 {
		t.Fatalf("22.05 reply credential %q version %#x", f.Cred, f.Version)
	}
	// A write RPC is answered from a worker.
	sub := codec.AppendFrame(nil, codec.V26_05, codec.REQUEST_SUBMIT_BATCH_JOB, []byte("MUNGE:good:"), make([]byte, 77))
	if _, rc := rcOf(t, exchange(t, addr, sub, len(sub))); rc != 77 {
		t.Fatalf("slow path rc %d", rc)
	}
}

// A reply made of pieces arrives whole: from writev and sendfile calls
// (more pieces than one writev takes, memory files between them), and,
// when the socket buffer cannot be enlarged and the client reads late,
// partly through gnet's buffer; 22.05 gets it signed.
func TestServerPiecedReply(t *testing.T) {
	for _, forced := range []bool{true, false} {
		addr, s := startServerWith(t)
		s.noSndbuf.Store(!forced)
		req := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_JOB_INFO, []byte("MUNGE:good:"), nil)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.(*net.TCPConn).SetReadBuffer(64 << 10)
		c.Write(req)
		time.Sleep(200 * time.Millisecond) // let the server's writes fill the buffers
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		c.Close()
		var f codec.Frame
		if err != nil || codec.DecodeFrame(got, &f) != nil || f.MsgType != codec.RESPONSE_JOB_INFO || string(f.Body) != string(piecesBody) {
			t.Fatalf("SO_SNDBUFFORCE %v: got %d bytes (%v), want a frame with the %d-byte body", forced, len(got), err, len(piecesBody))
		}
		if forced {
			req22 := codec.AppendFrame(nil, codec.V22_05, codec.REQUEST_JOB_INFO, []byte("MUNGE:good:"), nil)
			got22 := exchange(t, addr, req22, len(req22))
			if codec.DecodeFrame(got22, &f) != nil || string(f.Cred) != "MUNGE:reply:" || string(f.Body) != string(piecesBody) {
				t.Fatalf("22.05: %d bytes, credential %q", len(got22), f.Cred)
			}
		}
	}
}

// Clients that go away in the middle of a large reply (closed, or reset
// with unread data) cost the server nothing lasting: the next client
// gets the whole reply, with and without an enlarged socket buffer.
func TestServerClientLeavesMidReply(t *testing.T) {
	for _, forced := range []bool{true, false} {
		addr, s := startServerWith(t)
		s.noSndbuf.Store(!forced)
		req := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_JOB_INFO, []byte("MUNGE:good:"), nil)
		for i := 0; i < 20; i++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			c.(*net.TCPConn).SetReadBuffer(16 << 10)
			c.Write(req)
			if i%2 == 0 {
				var b [1000]byte
				io.ReadFull(c, b[:]) // a little, then gone
				c.(*net.TCPConn).SetLinger(0)
			}
			c.Close()
		}
		req22 := codec.AppendFrame(nil, codec.V22_05, codec.REQUEST_JOB_INFO, []byte("MUNGE:good:"), nil)
		for _, r := range [][]byte{req, req22} {
			var f codec.Frame
			if got := exchange(t, addr, r, len(r)); codec.DecodeFrame(got, &f) != nil || string(f.Body) != string(piecesBody) {
				t.Fatalf("SO_SNDBUFFORCE %v: after clients left mid-reply, %d bytes", forced, len(got))
			}
		}
	}
}

// A reply gnet had to buffer (a client reading slowly) is followed by
// the server closing the connection once it is all written, within a
// couple of sweeps, even if the client never closes: not at the
// 10-second DoneTimeout.
func TestServerClosesAfterBufferedReply(t *testing.T) {
	addr, s := startServerWith(t)
	s.noSndbuf.Store(true) // the kernel takes only part: gnet buffers the rest
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(16 << 10)
	c.Write(codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_JOB_INFO, []byte("MUNGE:good:"), nil))
	time.Sleep(300 * time.Millisecond)
	c.SetReadDeadline(time.Now().Add(6 * time.Second))
	start := time.Now()
	got, err := io.ReadAll(c) // the whole reply, then EOF from the server
	var f codec.Frame
	if err != nil || codec.DecodeFrame(got, &f) != nil || string(f.Body) != string(piecesBody) {
		t.Fatalf("after %v: %d bytes, %v (want the whole reply, then the server's close)", time.Since(start), len(got), err)
	}
}

// A request trickled in byte by byte wakes the server a few times, not
// once per byte (SO_RCVLOWAT), and is answered.
func TestServerTrickledRequest(t *testing.T) {
	addr, s := startServerWith(t)
	ping := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_PING, []byte("MUNGE:good:"), make([]byte, 200))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetNoDelay(true)
	for i := range ping {
		c.Write(ping[i : i+1])
		time.Sleep(2 * time.Millisecond)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	reply, err := io.ReadAll(c)
	if err != nil || len(reply) == 0 {
		t.Fatalf("no reply to a trickled ping: %v", err)
	}
	if _, rc := rcOf(t, reply); rc != 1000 {
		t.Fatalf("rc %d", rc)
	}
	var wakes int64
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if wakes = s.lastWakes.Load(); wakes > 0 {
			break
		}
	}
	if wakes == 0 || wakes > 4 {
		t.Errorf("%d-byte request sent a byte at a time woke the server %d times, want 2 or 3", len(ping), wakes)
	}
}

func TestServerRefusals(t *testing.T) {
	addr := startServer(t)
	for name, raw := range map[string][]byte{
		"dropped type":   codec.AppendFrame(nil, codec.V24_11, 9999, []byte("MUNGE:good:"), nil),
		"old version":    codec.AppendFrame(nil, 0x2500, codec.REQUEST_PING, []byte("MUNGE:good:"), nil),
		"oversized":      {0x7f, 0xff, 0xff, 0xff, 0, 0},
		"garbage":        {0, 0, 0, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
		"bad cred 23.02": codec.AppendFrame(nil, codec.V23_02, codec.REQUEST_PING, []byte("MUNGE:bad:"), nil),
	} {
		if got := exchange(t, addr, raw, len(raw)); got != nil {
			t.Errorf("%s: got a reply %x, want the connection closed", name, got)
		}
	}
	// 24.11+ answer a bad credential with SLURM_PROTOCOL_AUTHENTICATION_ERROR.
	bad := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_PING, []byte("MUNGE:bad:"), nil)
	if _, rc := rcOf(t, exchange(t, addr, bad, len(bad))); rc != codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR {
		t.Fatalf("bad credential rc %d", rc)
	}
	// The server still serves.
	ping := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_PING, []byte("MUNGE:good:"), nil)
	if _, rc := rcOf(t, exchange(t, addr, ping, len(ping))); rc != 1000 {
		t.Fatalf("after refusals rc %d", rc)
	}
}

// Slow readers of a big reply cost the server no copy of it each: the
// rest of a reply the kernel did not take is written from the shared
// pieces as the client reads (64 concurrent listings of 200,000 jobs
// were 9 GB of copies before, and the server was killed). All of them
// still get the whole reply.
func TestServerSlowReadersShareTheReply(t *testing.T) {
	for _, c := range []struct {
		name    string
		msgType uint16
		version uint16
	}{
		{"event loop", codec.REQUEST_JOB_INFO, codec.V24_11},
		{"worker", codec.REQUEST_JOB_USER_INFO, codec.V24_11},
		{"worker 22.05", codec.REQUEST_JOB_USER_INFO, codec.V22_05},
	} {
		t.Run(c.name, func(t *testing.T) { testSlowReaders(t, c.msgType, c.version) })
	}
}

func testSlowReaders(t *testing.T, msgType, version uint16) {
	addr, s := startServerWith(t)
	s.noSndbuf.Store(true) // the kernel takes only part of each reply
	const clients = 16
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	req := codec.AppendFrame(nil, version, msgType, []byte("MUNGE:good:"), nil)
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.(*net.TCPConn).SetReadBuffer(16 << 10)
		c.Write(req)
		conns[i] = c
	}
	time.Sleep(500 * time.Millisecond) // every reply stalled on a full socket
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	if grew := int64(during.HeapInuse) - int64(before.HeapInuse); grew > int64(clients*len(piecesBody)/4) {
		t.Errorf("%d stalled readers of a %d-byte reply: the heap grew by %d bytes (a copy each would be %d)", clients, len(piecesBody), grew, clients*len(piecesBody))
	}
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			got, err := io.ReadAll(c)
			var f codec.Frame
			if err != nil || codec.DecodeFrame(got, &f) != nil || string(f.Body) != string(piecesBody) {
				t.Errorf("reader %d: %d bytes, %v", i, len(got), err)
			}
		}()
	}
	wg.Wait()
}
