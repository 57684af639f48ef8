package bpf

import (
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// tcxExpected: where the kernel has tcx (Linux 6.6) and we are root, the
// eBPF meter must load; a silent fallback there would hide a regression.
func tcxExpected() bool {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		return false
	}
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := strings.SplitN(unix.ByteSliceToString(u.Release[:]), ".", 3)
	if len(rel) < 2 {
		return false
	}
	maj, _ := strconv.Atoi(rel[0])
	min, _ := strconv.Atoi(strings.TrimFunc(rel[1], func(r rune) bool { return r < '0' || r > '9' }))
	return maj > 6 || maj == 6 && min >= 6
}

func newMeter(t *testing.T) FlowMeter {
	m, err := NewFlowMeter()
	if err != nil {
		if tcxExpected() {
			t.Fatalf("eBPF flow meter: %v", err)
		}
		t.Skipf("eBPF flow meter unavailable here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func pair(t *testing.T, network, addr string) (client, server net.Conn) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("listen %s %s: %v", network, addr, err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			acc <- c
		}
		close(acc)
	}()
	client, err = net.Dial(network, ln.Addr().String())
	require.NoError(t, err)
	server = <-acc
	require.NotNil(t, server)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// exchange sends out bytes client→server and in bytes server→client.
func exchange(t *testing.T, c, s net.Conn, out, in int) {
	done := make(chan error, 1)
	go func() {
		_, err := io.CopyN(io.Discard, s, int64(out))
		if err == nil {
			_, err = s.Write(make([]byte, in))
		}
		done <- err
	}()
	_, err := c.Write(make([]byte, out))
	require.NoError(t, err)
	_, err = io.CopyN(io.Discard, c, int64(in))
	require.NoError(t, err)
	require.NoError(t, <-done)
}

func TestFlowMeterCountsEachWay(t *testing.T) {
	m := newMeter(t)
	require.Equal(t, "ebpf", m.Kind())
	for _, tc := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		t.Run(tc.network, func(t *testing.T) {
			c, s := pair(t, tc.network, tc.addr)
			other, otherS := pair(t, tc.network, tc.addr)
			f, err := m.Track(c)
			require.NoError(t, err)
			// The same connection from the server's side, counted apart.
			g, err := m.Track(s)
			require.NoError(t, err)

			exchange(t, c, s, 3<<20+17, 300<<10)
			exchange(t, other, otherS, 1<<20, 1<<20) // untracked: not counted
			require.Equal(t, IO{Out: 3<<20 + 17, In: 300 << 10}, f.Read())
			require.Equal(t, IO{Out: 300 << 10, In: 3<<20 + 17}, g.Read())

			exchange(t, c, s, 5, 7)
			require.Equal(t, IO{Out: 3<<20 + 22, In: 300<<10 + 7}, f.Close())
			// Closed: the entry is gone, the count frozen.
			exchange(t, c, s, 100, 100)
			require.Equal(t, IO{Out: 3<<20 + 22, In: 300<<10 + 7}, f.Read())
			g.Close()
			_, err = m.Track(c)
			require.NoError(t, err, "a closed flow's key is free again")
		})
	}
}

func TestCountConnAgreesWithTheKernel(t *testing.T) {
	m := newMeter(t)
	c, s := pair(t, "tcp4", "127.0.0.1:0")
	f, err := m.Track(c)
	require.NoError(t, err)
	cc := &CountConn{Conn: c}
	exchange(t, cc, s, 1<<20+3, 4096)
	require.Equal(t, cc.IO(), f.Close())
}
