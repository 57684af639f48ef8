package edge

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

// waitHandler: submissions wait (Waiter) until n of them are inside Slow
// at once, as a group commit's share one sync; anything else slow holds
// its worker until released.
type waitHandler struct {
	n       int
	mu      sync.Mutex
	inside  int
	all     chan struct{} // closed when n submissions are inside at once
	release chan struct{} // lets the other slow requests go
}

func (h *waitHandler) Fast(*Request) (Reply, bool) { return Reply{}, false }

func (h *waitHandler) Waits(t uint16) bool { return t == codec.REQUEST_SUBMIT_BATCH_JOB }

func (h *waitHandler) Slow(req *Request) Reply {
	if req.MsgType != codec.REQUEST_SUBMIT_BATCH_JOB {
		<-h.release
		return RC(1)
	}
	h.mu.Lock()
	if h.inside++; h.inside == h.n {
		close(h.all)
	}
	h.mu.Unlock()
	select {
	case <-h.all:
		return RC(0)
	case <-time.After(4 * time.Second):
		return RC(2) // they never were all in at once
	}
}

// Requests that wait get a pool of their own: more of them wait inside
// the handler at once than there are workers, and while every worker is
// held by other slow requests.
func TestWaitingRequestsHaveTheirOwnPool(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := &waitHandler{n: 40, all: make(chan struct{}), release: make(chan struct{})}
	s := New(Config{Addr: addr, Loops: 1, Workers: 2, WaitWorkers: 64, IO: testIO}, h, fakeAuth{}, fakeAuth{}, fakeStats{}, nil)
	go s.Run()
	if err := <-s.Ready(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	defer close(h.release)

	// Both workers held by slow requests that do not wait on others.
	other := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_UPDATE_JOB, []byte("MUNGE:good:"), nil)
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(other)
	}
	time.Sleep(100 * time.Millisecond)

	sub := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_SUBMIT_BATCH_JOB, []byte("MUNGE:good:"), nil)
	rcs := make(chan uint32, h.n)
	for i := 0; i < h.n; i++ {
		go func() {
			f := exchange(t, addr, sub, len(sub))
			if f == nil {
				rcs <- 99
				return
			}
			_, rc := rcOf(t, f)
			rcs <- rc
		}()
	}
	for i := 0; i < h.n; i++ {
		if rc := <-rcs; rc != 0 {
			t.Fatalf("submission answered %d: %d submissions were never inside the handler at once (2 workers, all held)", rc, h.n)
		}
	}
}
