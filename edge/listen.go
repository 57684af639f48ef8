package edge

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// portWait is how long a listener waits for its port while it is in
// use. A stock Slurm client whose connection is refused (the server
// restarting) binds a random source port of 1025-65535 for its retry
// (_sock_bind_wild in Slurm's slurm_protocol_socket.c), so amid retrying
// clients one of them may hold the server's own port for a moment;
// slurmctld then fails to start, which systemd's Restart= papers over.
const portWait = 10 * time.Second

// listenWait listens on addr, retrying while the port is in use for up
// to wait; logf is told once when it has to wait. A port another program
// listens on (a connection to it is taken) fails at once: only a socket
// that does not listen, a client's, is waited for.
func listenWait(addr string, wait time.Duration, logf func(string, ...any)) (net.Listener, error) {
	deadline := time.Now().Add(wait)
	for told := false; ; told = true {
		l, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return l, err
		}
		if c, derr := net.DialTimeout("tcp", addr, 200*time.Millisecond); derr == nil {
			c.Close()
			return nil, err
		}
		if !told && logf != nil {
			logf("%s is in use, not listened on (a Slurm client's source port while it retries): retrying for up to %v", addr, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
