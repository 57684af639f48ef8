package edge

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

// FuzzFraming sends arbitrary bytes, split into arbitrary segments, to a
// live edge over loopback, then half-closes. Whatever the bytes, the
// server answers at most one well-formed frame and closes, never hangs
// on the connection, and keeps serving: a ping on a fresh connection is
// answered after every input. When the input is a whole, well-formed,
// authenticated ping, the answer is the ping's RC (the split points do
// not matter).
func FuzzFraming(f *testing.F) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := New(Config{Addr: addr, Loops: 1, Workers: 2, IdleTimeout: 2 * time.Second}, fakeHandler{}, fakeAuth{}, fakeAuth{}, fakeStats{}, nil)
	go s.Run()
	if err := <-s.Ready(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Stop(context.Background()) })

	good := []byte("MUNGE:good:")
	for _, v := range []uint16{codec.V22_05, codec.V24_11, codec.V26_05} {
		ping := codec.AppendFrame(nil, v, codec.REQUEST_PING, good, nil)
		f.Add(ping, []byte{})
		f.Add(ping, []byte{1, 1, 1, 1, 2, 3})
		f.Add(ping[:len(ping)-3], []byte{5})
		f.Add(append(append([]byte{}, ping...), ping...), []byte{})
		f.Add(codec.AppendFrame(nil, v, codec.REQUEST_JOB_INFO, good, make([]byte, 14)), []byte{7, 7})
		f.Add(codec.AppendFrame(nil, v, 4003, good, make([]byte, 40)), []byte{})
		f.Add(codec.AppendFrame(nil, v, codec.REQUEST_PING, []byte("MUNGE:bad:"), nil), []byte{})
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x2a, 0}, []byte{2})
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0}, []byte{})

	f.Fuzz(func(t *testing.T, raw, splits []byte) {
		if len(raw) > 1<<16 {
			return
		}
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer c.Close()
		for i, at := 0, 0; at < len(raw); i++ {
			n := len(raw) - at
			if i < len(splits) && int(splits[i]) > 0 {
				n = min(n, int(splits[i]))
			}
			if _, err := c.Write(raw[at : at+n]); err != nil {
				break // the server may close before reading it all
			}
			at += n
		}
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		reply, err := io.ReadAll(c)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the server neither answered nor closed within 5 s (got %d bytes)", len(reply))
		}
		if len(reply) > 0 {
			var fr codec.Frame
			if err := codec.DecodeFrame(reply, &fr); err != nil {
				t.Fatalf("reply %x is not one frame: %v", reply[:min(len(reply), 64)], err)
			}
			if got := 4 + int(binary.BigEndian.Uint32(reply)); got != len(reply) {
				t.Fatalf("%d bytes after the reply frame", len(reply)-got)
			}
		}
		// A whole authenticated ping (and nothing else) gets its RC.
		var in codec.Frame
		if codec.DecodeFrame(raw, &in) == nil && in.MsgType == codec.REQUEST_PING && string(in.Cred) == string(good) &&
			in.Flags&codec.FlagNoAuthCred == 0 && in.AuthPlugin == codec.AuthPluginMunge &&
			4+int(binary.BigEndian.Uint32(raw)) == len(raw) {
			var fr codec.Frame
			if codec.DecodeFrame(reply, &fr) != nil || fr.MsgType != codec.RESPONSE_SLURM_RC || binary.BigEndian.Uint32(fr.Body) != 1000 {
				t.Fatalf("a well-formed ping split at %v got %x", splits, reply)
			}
		}
		// Still serving.
		ping := codec.AppendFrame(nil, codec.V24_11, codec.REQUEST_PING, good, nil)
		c2, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatalf("dial after the input: %v", err)
		}
		defer c2.Close()
		c2.Write(ping)
		c2.SetReadDeadline(time.Now().Add(5 * time.Second))
		var hdr [4]byte
		if _, err := io.ReadFull(c2, hdr[:]); err != nil {
			t.Fatalf("no answer to a ping after the input: %v", err)
		}
	})
}
