package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Memory handed to the kernel (buffers, a timeout's Timespec) must be on
// the heap and kept reachable until the request's last completion: the
// SQE holds its address as a number the garbage collector does not
// follow, and a goroutine's stack moves when it grows.

// Opcodes (IORING_OP_*) this binding prepares.
const (
	OpNop         = 0
	OpTimeout     = 11
	OpAccept      = 13
	OpAsyncCancel = 14
	OpClose       = 19
	OpRead        = 22
	OpWrite       = 23
	OpSend        = 26
	OpRecv        = 27
	OpSplice      = 30
	OpShutdown    = 34
	OpSendZC      = 47
)

// SQE flags (IOSQE_*).
const (
	SQEIOLink         = 1 << 2
	SQEIOHardlink     = 1 << 3
	SQEAsync          = 1 << 4
	SQEBufferSelect   = 1 << 5
	SQECQESkipSuccess = 1 << 6
)

// Per-opcode flags carried in ioprio.
const (
	AcceptMultishot = 1 << 0 // IORING_ACCEPT_MULTISHOT
	RecvPollFirst   = 1 << 0 // IORING_RECVSEND_POLL_FIRST
	RecvMultishot   = 1 << 1 // IORING_RECV_MULTISHOT
)

// Cancel flags (IORING_ASYNC_CANCEL_*).
const (
	CancelAll = 1 << 0 // every match, not just the first
	CancelFd  = 1 << 1 // match by descriptor, not user data
	CancelAny = 1 << 2
)

// Timeout flags (IORING_TIMEOUT_*).
const (
	TimeoutMultishot = 1 << 6
)

// ETIME is a timeout's result when it expired.
const ETIME = unix.ETIME

func (s *SQE) prep(op uint8, fd int, addr unsafe.Pointer, n uint32, off uint64) {
	s.Opcode = op
	s.Fd = int32(fd)
	s.Addr = uint64(uintptr(addr))
	s.Len = n
	s.Off = off
}

// PrepNop is a request that completes at once with 0.
func (s *SQE) PrepNop() { s.prep(OpNop, -1, nil, 0, 0) }

// PrepAccept accepts a connection on fd; flags are accept4(2)'s
// (SOCK_NONBLOCK, SOCK_CLOEXEC). Multishot posts one completion per
// connection (the new descriptor) while it stays armed (CQE.More).
// The peer's address is not asked for: a multishot accept would write
// every one over the last.
func (s *SQE) PrepAccept(fd int, flags uint32, multishot bool) {
	s.prep(OpAccept, fd, nil, 0, 0)
	s.OpFlags = flags
	if multishot {
		s.IoPrio |= AcceptMultishot
	}
}

// PrepRecv receives into b.
func (s *SQE) PrepRecv(fd int, b []byte, flags uint32) {
	s.prep(OpRecv, fd, bufPtr(b), uint32(len(b)), 0)
	s.OpFlags = flags
}

// PrepRecvMultishot receives into buffers of the provided-buffer group
// group, one completion per buffer filled (CQE.Buffer), until it fails,
// the peer closes (a result of 0) or the group runs out (ENOBUFS); the
// last completion lacks CQE.More and the caller arms it again.
func (s *SQE) PrepRecvMultishot(fd int, group uint16, flags uint32) {
	s.prep(OpRecv, fd, nil, 0, 0)
	s.OpFlags = flags
	s.IoPrio |= RecvMultishot
	s.Flags |= SQEBufferSelect
	s.BufIndex = group
}

// PrepSend sends b; b must stay untouched until the completion.
func (s *SQE) PrepSend(fd int, b []byte, flags uint32) {
	s.prep(OpSend, fd, bufPtr(b), uint32(len(b)), 0)
	s.OpFlags = flags
}

// PrepSendZC sends b without copying it: two completions, the result
// (with CQE.More) and then a notification (CQEFNotif) once the kernel no
// longer reads b.
func (s *SQE) PrepSendZC(fd int, b []byte, flags uint32) {
	s.prep(OpSendZC, fd, bufPtr(b), uint32(len(b)), 0)
	s.OpFlags = flags
}

// PrepRead reads into b at off (-1 as uint64: the file position).
func (s *SQE) PrepRead(fd int, b []byte, off uint64) {
	s.prep(OpRead, fd, bufPtr(b), uint32(len(b)), off)
}

// PrepWrite writes b at off.
func (s *SQE) PrepWrite(fd int, b []byte, off uint64) {
	s.prep(OpWrite, fd, bufPtr(b), uint32(len(b)), off)
}

// PrepSplice moves n bytes from fdIn (at offIn, or its position with
// -1) to fdOut (at offOut, or -1), one of them a pipe: a file's pages go
// to a socket by two linked splices through a pipe, as sendfile does.
func (s *SQE) PrepSplice(fdIn int, offIn int64, fdOut int, offOut int64, n uint32, flags uint32) {
	s.prep(OpSplice, fdOut, nil, n, uint64(offOut))
	s.Addr = uint64(offIn) // splice_off_in
	s.SpliceFdIn = int32(fdIn)
	s.OpFlags = flags
}

// PrepClose closes fd.
func (s *SQE) PrepClose(fd int) { s.prep(OpClose, fd, nil, 0, 0) }

// PrepShutdown is shutdown(2).
func (s *SQE) PrepShutdown(fd int, how int) { s.prep(OpShutdown, fd, nil, uint32(how), 0) }

// PrepCancel cancels the request with user data ud (flags 0), or every
// request on descriptor fd (CancelFd|CancelAll; ud ignored).
func (s *SQE) PrepCancel(ud uint64, fd int, flags uint32) {
	s.prep(OpAsyncCancel, fd, nil, 0, 0)
	s.Addr = ud
	s.OpFlags = flags
}

// PrepTimeout completes with ETIME after ts (kept alive by the caller
// until the completion), or with 0 once count other completions came
// (count 0: only the time). TimeoutMultishot in flags fires every ts.
func (s *SQE) PrepTimeout(ts *unix.Timespec, count uint64, flags uint32) {
	s.prep(OpTimeout, -1, unsafe.Pointer(ts), 1, count)
	s.OpFlags = flags
}

func bufPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}
