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

// joinPieces returns head followed by more as one slice (head itself
// when there is nothing more).
func joinPieces(head []byte, more []*memfile.Bytes) []byte {
	if len(more) == 0 {
		return head
	}
	n := len(head)
	for _, p := range more {
		n += p.Len()
	}
	out := make([]byte, 0, n)
	out = append(out, head...)
	for _, p := range more {
		out = append(out, p.Bytes()...)
	}
	runtime.KeepAlive(more)
	return out
}

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
		if src, file := more[next].File(); file {
			n, err := sendAll(fd, src, more[next].Len())
			sent += n
			if err != nil || n < more[next].Len() {
				return sent, err
			}
			next++
		}
	}
}

// sendAll sends the first n bytes of the file src to the socket fd with
// sendfile, until done or the socket is full.
func sendAll(fd, src, n int) (int, error) {
	var off int64
	for int(off) < n {
		m, err := unix.Sendfile(fd, src, &off, n-int(off))
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return int(off), nil
		case err != nil:
			return int(off), err
		case m == 0:
			return int(off), nil
		}
	}
	return int(off), nil
}

func iovec(b []byte) unix.Iovec {
	v := unix.Iovec{Base: &b[0]}
	v.SetLen(len(b))
	return v
}
