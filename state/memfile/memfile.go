// Package memfile keeps large immutable byte strings (the encoded chunks
// of a job listing) in sealed anonymous memory files, so that the edge
// can hand them to the kernel with sendfile: a squeue storm then gives
// each socket references to the same pages instead of a copy of every
// byte of every reply.
//
// A File's bytes never change: the memory file is sealed against writes,
// shrinking and growing before anyone sees it, so pages the kernel still
// holds in a socket buffer after the File is gone (or after the client
// stopped reading) keep their contents. Its memory is returned when the
// File becomes unreachable and the kernel has released those pages.
package memfile

import (
	"io"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// MinFile is the smallest string kept in a memory file. Smaller ones
// stay on the heap: a file costs at least a page, a descriptor and a
// mapping, and sendfile pays for itself only when it saves a real copy.
const MinFile = 16 << 10

// Name is the memory files' name, as /proc/PID/fd shows it
// ("/memfd:slurm-frontend-listing (deleted)"), so that tools measuring
// the server's memory can find and count them.
const Name = "slurm-frontend-listing"

// Bytes is an immutable byte string, on the heap or in a sealed memory
// file. The slice Bytes returns is valid only while the *Bytes is
// reachable: a file's mapping goes when its Bytes is collected, so
// holders keep the *Bytes (not just the slice) for as long as they read.
type Bytes struct {
	b  []byte // heap bytes, or the file's read-only mapping
	fd int    // the memory file, or -1 when b is on the heap
}

var (
	enabled atomic.Bool
	open    atomic.Int64 // memory files alive
	length  atomic.Int64 // their total length
	budget  atomic.Int64 // how many may be open at once
)

func init() {
	enabled.Store(true)
	// Descriptors are shared with the connections: memory files may
	// take a quarter of the limit, the rest stays for clients.
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err == nil {
		budget.Store(int64(r.Cur / 4))
	}
}

// SetEnabled turns memory files on or off for strings made from now on
// (off: every string stays on the heap, replies are copied by write).
func SetEnabled(on bool) { enabled.Store(on) }

// SetBudget sets how many memory files may be open at once; strings
// made beyond it stay on the heap.
func SetBudget(n int) { budget.Store(int64(n)) }

// Stats reports how many memory files are alive and their total length.
func Stats() (files, total int64) { return open.Load(), length.Load() }

// New returns an immutable copy of src: in a memory file when it is at
// least MinFile long and a file can be made, on the heap otherwise.
func New(src []byte) *Bytes {
	if len(src) >= MinFile && enabled.Load() {
		if x := newFile(src); x != nil {
			return x
		}
	}
	return &Bytes{b: append(make([]byte, 0, len(src)), src...), fd: -1}
}

// Heap returns b as a Bytes without copying; the caller must not change
// b afterwards.
func Heap(b []byte) *Bytes { return &Bytes{b: b, fd: -1} }

func newFile(src []byte) *Bytes {
	if open.Add(1) > budget.Load() {
		open.Add(-1)
		return nil
	}
	fd, err := unix.MemfdCreate(Name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		open.Add(-1)
		return nil
	}
	fail := func() *Bytes {
		unix.Close(fd)
		open.Add(-1)
		return nil
	}
	for off := 0; off < len(src); {
		n, err := unix.Pwrite(fd, src[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return fail()
		}
		off += n
	}
	// Sealed once the one writer is done, and before mapping: a sealed
	// file can only be mapped read-only, by anyone.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fail()
	}
	m, err := unix.Mmap(fd, 0, len(src), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fail()
	}
	x := &Bytes{b: m, fd: fd}
	total := length.Add(int64(len(m)))
	runtime.AddCleanup(x, release, mapping{m: m, fd: fd})
	maybeCollect(total)
	return x
}

// The collector does not see memory files: a file is released when its
// Bytes is collected, but a chunk re-encoded after every change leaves
// little heap garbage beside an old file, so collections could come too
// seldom to bound the files. A collection is asked for whenever the
// files have doubled since the last one asked for here (from 64 MiB).
var (
	collectAt  atomic.Int64 // files' total length that asks for a collection
	collecting atomic.Bool
)

const minCollect = 64 << 20

func maybeCollect(total int64) {
	if total < max(collectAt.Load(), minCollect) || !collecting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		runtime.GC()
		// Cleanups run after the cycle, on their own goroutine.
		time.Sleep(10 * time.Millisecond)
		collectAt.Store(2 * length.Load())
		collecting.Store(false)
	}()
}

type mapping struct {
	m  []byte
	fd int
}

func release(m mapping) {
	length.Add(-int64(len(m.m)))
	unix.Munmap(m.m)
	unix.Close(m.fd)
	open.Add(-1)
}

// Bytes returns the string. For a file it is a read-only mapping: keep
// x reachable while using it (runtime.KeepAlive), and never write to it.
func (x *Bytes) Bytes() []byte { return x.b }

// Len is the string's length.
func (x *Bytes) Len() int { return len(x.b) }

// File returns the memory file's descriptor, for sendfile from offset 0
// to Len; ok is false for a string on the heap. The descriptor is valid
// while x is reachable.
func (x *Bytes) File() (fd int, ok bool) { return x.fd, x.fd >= 0 }

// SendTo sends the file's bytes from *off to the socket fd with
// sendfile, advancing *off, until all are sent (nil) or the socket is
// full (unix.EAGAIN: call again when it is writable). It is for files
// only (see File).
func (x *Bytes) SendTo(fd int, off *int64) error {
	defer runtime.KeepAlive(x) // the file stays open until the last call
	for int(*off) < len(x.b) {
		n, err := unix.Sendfile(fd, x.fd, off, len(x.b)-int(*off))
		switch {
		case err == unix.EINTR:
		case err != nil:
			return err
		case n == 0:
			return io.ErrShortWrite
		}
	}
	return nil
}
