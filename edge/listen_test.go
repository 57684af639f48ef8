package edge

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// clientBound holds port the way a stock Slurm client retrying a refused
// connection does: a plain socket bound to the wildcard address on it
// (no SO_REUSEADDR, not listening).
func clientBound(t *testing.T, port int) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	require.NoError(t, unix.Bind(fd, &unix.SockaddrInet4{Port: port}))
	return fd
}

func freeLoopbackPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestListenWaitsForAClientsSourcePort(t *testing.T) {
	port := freeLoopbackPort(t)
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}).String()
	fd := clientBound(t, port)
	_, err := net.Listen("tcp", addr)
	require.True(t, errors.Is(err, syscall.EADDRINUSE), "a plain listen fails while a client holds the port: %v", err)

	var told int
	go func() { time.Sleep(300 * time.Millisecond); unix.Close(fd) }()
	l, err := listenWait(addr, 5*time.Second, func(string, ...any) { told++ })
	require.NoError(t, err, "the port is free again once the client lets it go")
	l.Close()
	require.Equal(t, 1, told, "the wait is logged once")

	fd = clientBound(t, port)
	start := time.Now()
	_, err = listenWait(addr, 200*time.Millisecond, nil)
	require.True(t, errors.Is(err, syscall.EADDRINUSE), "a port held past the wait is an error: %v", err)
	require.Less(t, time.Since(start), 2*time.Second)
	unix.Close(fd)

	// Another program listening there: no wait.
	other, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	defer other.Close()
	start = time.Now()
	_, err = listenWait(addr, 5*time.Second, nil)
	require.True(t, errors.Is(err, syscall.EADDRINUSE), "a port another program listens on: %v", err)
	require.Less(t, time.Since(start), time.Second, "a listening program is not waited for")
}
