package edge

import (
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/state/memfile"
)

// iovMax is Linux's limit on pieces per writev (UIO_MAXIOV).
const iovMax = 1024

var iovPool = sync.Pool{New: func() any { v := make([]unix.Iovec, 0, iovMax); return &v }}

// writePieces writes head and more to the non-blocking socket fd,
// allocating nothing: runs of heap pieces with as few writev calls as
// the kernel allows, pieces in memory files with sendfile (the socket
// then references the file's pages instead of a copy of them). It
// returns how many bytes the kernel took; a full socket buffer (EAGAIN)
// or an interrupted call is not an error: the caller buffers the rest.
func writePieces(fd int, head []byte, more []*memfile.Bytes) (int, error) {
	p := iovPool.Get().(*[]unix.Iovec)
	defer func() {
		clear((*p)[:cap(*p)]) // drop the buffers' pointers before pooling
		iovPool.Put(p)
		runtime.KeepAlive(more) // the files stay open until the last sendfile
	}()
	sent := 0
	next := 0 // the first piece of more not yet given to the kernel
	first := true
	for {
		iov := (*p)[:0]
		want := 0
		if first && len(head) > 0 {
			iov = append(iov, iovec(head))
			want += len(head)
		}
		first = false
		for ; next < len(more) && len(iov) < iovMax; next++ {
			if _, file := more[next].File(); file {
				break
			}
			if more[next].Len() > 0 {
				iov = append(iov, iovec(more[next].Bytes()))
				want += more[next].Len()
			}
		}
		if len(iov) > 0 {
			n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
			if errno == unix.EAGAIN || errno == unix.EINTR {
				return sent, nil // the caller buffers the rest
			}
			if errno != 0 {
				return sent, errno
			}
			sent += int(n)
			if int(n) < want {
				return sent, nil
			}
		}
		if next == len(more) {
			return sent, nil
		}
		if _, file := more[next].File(); file {
			var off int64
			err := more[next].SendTo(fd, &off)
			sent += int(off)
			if err == unix.EAGAIN {
				return sent, nil // the caller buffers the rest
			}
			if err != nil {
				return sent, err
			}
			next++
		}
	}
}

func iovec(b []byte) unix.Iovec {
	v := unix.Iovec{Base: &b[0]}
	v.SetLen(len(b))
	return v
}
