package edge

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/edge/uring"
)

// testIO is the transport the server tests start (startServerWith).
var testIO = IOEpoll

// The server's tests again, on the io_uring transport: what a client
// sees is the same.
func TestUringTransport(t *testing.T) {
	if err := uringUsable(); err != nil {
		t.Skipf("io_uring not usable here: %v", err)
	}
	testIO = IOUring
	defer func() { testIO = IOEpoll }()
	for name, fn := range map[string]func(*testing.T){
		"SplitReadsSlowPathAndSigns": TestServerAnswersSplitReadsSlowPathAndSigns,
		"PiecedReply":                TestServerPiecedReply,
		"ClientLeavesMidReply":       TestServerClientLeavesMidReply,
		"ClosesAfterBufferedReply":   TestServerClosesAfterBufferedReply,
		"TrickledRequest":            TestServerTrickledRequest,
		"Refusals":                   TestServerRefusals,
		"SlowReadersShareTheReply":   TestServerSlowReadersShareTheReply,
	} {
		t.Run(name, func(t *testing.T) {
			_, s := startServerWith(t)
			if s.ur == nil {
				t.Fatal("started on epoll, not io_uring")
			}
			fn(t)
		})
	}
}

type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Printf(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(f, a...))
}

// Where the kernel refuses io_uring (here: made to), the server serves
// on epoll and says so in one line.
func TestUringFallsBackToEpoll(t *testing.T) {
	defer func(p func() error) { uringProbe = p }(uringProbe)
	uringProbe = func() error { return fmt.Errorf("%w: io_uring_setup: %w", uring.ErrUnsupported, unix.EPERM) }
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	log := &logLines{}
	s := New(Config{Addr: addr, Loops: 1, Workers: 1, IO: IOUring}, fakeHandler{}, fakeAuth{}, fakeAuth{}, fakeStats{}, log)
	go s.Run()
	if err := <-s.Ready(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	if s.ur != nil {
		t.Fatal("serving on io_uring although refused")
	}
	ping := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_PING, []byte("MUNGE:good:"), nil)
	if _, rc := rcOf(t, exchange(t, addr, ping, len(ping))); rc != 1000 {
		t.Fatalf("rc %d", rc)
	}
	n := 0
	log.mu.Lock()
	for _, line := range log.lines {
		if strings.Contains(line, "io_uring unavailable") {
			n++
			if !strings.Contains(line, "operation not permitted") || !strings.Contains(line, "epoll") {
				t.Errorf("fallback line %q does not say why and what instead", line)
			}
		}
	}
	log.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d fallback lines, want 1", n)
	}
}
