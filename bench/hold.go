package bench

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Holder keeps connections open to a controller while a run measures
// it: "idle" ones connect and send nothing, "slow" ones send a request
// frame one byte a second (a slowloris client). A held connection the
// server closes is reopened a second later, so about n stay open.
type Holder struct {
	addr     string
	mode     string
	open     atomic.Int64
	reopened atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
}

// Hold opens n connections to addr (mode "idle" or "slow").
func Hold(addr string, n int, mode string, progress io.Writer) (*Holder, error) {
	if mode == "" {
		mode = "idle"
	}
	if mode != "idle" && mode != "slow" {
		return nil, fmt.Errorf("hold mode %q: want idle or slow", mode)
	}
	h := &Holder{addr: addr, mode: mode, stop: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	per := (n + 15) / 16
	for g := 0; g < 16; g++ {
		cnt := min(per, n-g*per)
		if cnt <= 0 {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < cnt; i++ {
				if err := h.spawn(); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		err, _ := firstErr.Load().(error)
		h.Close()
		return nil, fmt.Errorf("hold: %d of %d connections to %s failed (first: %v)", f, n, addr, err)
	}
	if progress != nil {
		fmt.Fprintf(progress, "holding %d %s connections to %s\n", n, mode, addr)
	}
	return h, nil
}

// spawn opens one held connection and a goroutine that keeps it open.
func (h *Holder) spawn() error {
	c, err := net.DialTimeout("tcp", h.addr, 10*time.Second)
	if err != nil {
		return err
	}
	h.track(c, true)
	h.wg.Add(1)
	go h.keep(c)
	return nil
}

func (h *Holder) track(c net.Conn, add bool) {
	h.mu.Lock()
	if add {
		h.conns[c] = struct{}{}
		h.open.Add(1)
	} else if _, ok := h.conns[c]; ok {
		delete(h.conns, c)
		h.open.Add(-1)
	}
	h.mu.Unlock()
}

// keep holds c until the server closes it (then reopens) or Close.
func (h *Holder) keep(c net.Conn) {
	defer h.wg.Done()
	for {
		closed := make(chan struct{})
		go func() {
			var b [256]byte
			for {
				if _, err := c.Read(b[:]); err != nil {
					close(closed)
					return
				}
			}
		}()
		if h.mode == "slow" {
			// A request frame that announces 230 bytes and sends one a
			// second.
			frame := append([]byte{0, 0, 0, 226}, make([]byte, 226)...)
			t := time.NewTicker(time.Second)
		loop:
			for i := 0; ; i = (i + 1) % len(frame) {
				select {
				case <-h.stop:
					t.Stop()
					c.Close()
					h.track(c, false)
					return
				case <-closed:
					break loop
				case <-t.C:
					if _, err := c.Write(frame[i : i+1]); err != nil {
						break loop
					}
				}
			}
			t.Stop()
		} else {
			select {
			case <-h.stop:
				c.Close()
				h.track(c, false)
				return
			case <-closed:
			}
		}
		c.Close()
		h.track(c, false)
		select {
		case <-h.stop:
			return
		case <-time.After(time.Second):
		}
		nc, err := net.DialTimeout("tcp", h.addr, 10*time.Second)
		if err != nil {
			continue // try again next round with the old (closed) c
		}
		h.reopened.Add(1)
		c = nc
		h.track(c, true)
	}
}

// Open is the number of held connections currently open.
func (h *Holder) Open() int { return int(h.open.Load()) }

// Reopened counts connections the server closed and the holder reopened.
func (h *Holder) Reopened() int64 { return h.reopened.Load() }

// Close closes every held connection.
func (h *Holder) Close() {
	close(h.stop)
	h.mu.Lock()
	for c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}
