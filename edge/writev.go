package edge

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovMax is Linux's limit on pieces per writev (UIO_MAXIOV).
const iovMax = 1024

var iovPool = sync.Pool{New: func() any { v := make([]unix.Iovec, 0, iovMax); return &v }}

// joinPieces returns head followed by more as one slice (head itself
// when there is nothing more).
func joinPieces(head []byte, more [][]byte) []byte {
	if len(more) == 0 {
		return head
	}
	n := len(head)
	for _, p := range more {
		n += len(p)
	}
	out := make([]byte, 0, n)
	out = append(out, head...)
	for _, p := range more {
		out = append(out, p...)
	}
	return out
}

// writePieces writes head and more to the non-blocking socket fd with as
// few writev calls as the kernel allows, allocating nothing. It returns
// how many bytes the kernel took; a full socket buffer (EAGAIN) or an
// interrupted call is not an error: the caller buffers the rest.
func writePieces(fd int, head []byte, more [][]byte) (int, error) {
	p := iovPool.Get().(*[]unix.Iovec)
	defer func() {
		clear((*p)[:cap(*p)]) // drop the buffers' pointers before pooling
		iovPool.Put(p)
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
			if len(more[next]) > 0 {
				iov = append(iov, iovec(more[next]))
				want += len(more[next])
			}
		}
		if len(iov) == 0 {
			return sent, nil
		}
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
}

func iovec(b []byte) unix.Iovec {
	v := unix.Iovec{Base: &b[0]}
	v.SetLen(len(b))
	return v
}
