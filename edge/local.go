package edge

import (
	"net/netip"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// localAddr is the address a connection came to. gnet reports the
// listener's, which for a listener on every address (0.0.0.0) says
// nothing: then the socket itself is asked.
func localAddr(c gnet.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil && !ap.Addr().IsUnspecified() {
		return ap.Addr().Unmap()
	}
	sa, err := unix.Getsockname(c.Fd())
	if err != nil {
		return netip.Addr{}
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr)
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr).Unmap()
	}
	return netip.Addr{}
}
