// Package uring is a small binding of Linux's io_uring, just what the
// controller port's io_uring transport needs: a ring (setup, the mmap of
// the submission and completion rings and of the SQEs, enter, register),
// SQE preparation for accept, recv, send, send-zerocopy, splice, read,
// close, cancel, timeout and nop, and provided-buffer rings.
//
// It is our own rather than a library because none is served here and the
// operations needed are few; it uses golang.org/x/sys/unix only.
//
// A Ring is not safe for concurrent use: one goroutine (locked to its
// thread, for IORING_SETUP_SINGLE_ISSUER) gets SQEs, submits and reaps.
package uring

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Setup flags (IORING_SETUP_*).
const (
	SetupCQSize       = 1 << 3
	SetupClamp        = 1 << 4
	SetupSubmitAll    = 1 << 7
	SetupCoopTaskrun  = 1 << 8
	SetupSingleIssuer = 1 << 12
	SetupDeferTaskrun = 1 << 13
)

// Features (IORING_FEAT_*) the kernel reports.
const (
	FeatSingleMmap = 1 << 0
	FeatNoDrop     = 1 << 1
	FeatFastPoll   = 1 << 5
	FeatExtArg     = 1 << 8
)

// Enter flags (IORING_ENTER_*).
const (
	EnterGetEvents = 1 << 0
)

// SQ ring flags (IORING_SQ_*).
const (
	sqNeedWakeup = 1 << 0
	sqCQOverflow = 1 << 1
	sqTaskrun    = 1 << 2
)

// CQE flags (IORING_CQE_F_*).
const (
	CQEFBuffer     = 1 << 0 // the upper 16 bits carry the buffer id
	CQEFMore       = 1 << 1 // more completions will come for this request
	CQEFNotif      = 1 << 3 // a zero-copy send's notification: the buffer is free
	cqeBufferShift = 16
)

// Register opcodes (IORING_REGISTER_* / IORING_UNREGISTER_*).
const (
	registerProbe      = 8
	registerPbufRing   = 22
	unregisterPbufRing = 23
)

// mmap offsets.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

type sqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type cqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// Params is struct io_uring_params.
type Params struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32
	Features     uint32
	WQFd         uint32
	Resv         [3]uint32
	SQOff        sqringOffsets
	CQOff        cqringOffsets
}

// SQE is struct io_uring_sqe (64 bytes).
type SQE struct {
	Opcode      uint8
	Flags       uint8
	IoPrio      uint16
	Fd          int32
	Off         uint64 // also addr2
	Addr        uint64 // also splice_off_in
	Len         uint32
	OpFlags     uint32 // msg_flags, accept_flags, cancel_flags, timeout_flags, ...
	UserData    uint64
	BufIndex    uint16 // also buf_group
	Personality uint16
	SpliceFdIn  int32 // also file_index
	Addr3       uint64
	pad         uint64
}

// CQE is struct io_uring_cqe (16 bytes; rings made without CQE32).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// More reports whether the request will post further completions
// (a multishot request still armed, or a zero-copy send's notification
// still to come).
func (c *CQE) More() bool { return c.Flags&CQEFMore != 0 }

// Buffer returns the provided buffer's id the completion used.
func (c *CQE) Buffer() (id uint16, ok bool) {
	return uint16(c.Flags >> cqeBufferShift), c.Flags&CQEFBuffer != 0
}

// Err is the completion's error, nil for a result >= 0.
func (c *CQE) Err() error {
	if c.Res < 0 {
		return unix.Errno(-c.Res)
	}
	return nil
}

// Ring is one io_uring instance.
type Ring struct {
	fd     int
	params Params

	ringMem []byte // SQ and CQ rings (one mapping with FeatSingleMmap)
	cqMem   []byte // the CQ ring's own mapping without it
	sqeMem  []byte

	sqHead, sqTail, sqFlags *uint32
	sqMask, sqEntries       uint32
	sqes                    []SQE
	sqeTail                 uint32 // next SQE to hand out (not yet published)

	cqHead, cqTail *uint32
	cqOverflow     *uint32
	cqMask         uint32
	cqes           []CQE

	wait struct {
		ts  unix.Timespec
		arg getEventsArg
	}
}

// ErrUnsupported wraps the reason the kernel will not give us a ring.
var ErrUnsupported = errors.New("io_uring unavailable")

// New sets up a ring of at least entries SQEs (rounded up to a power of
// two by the kernel) and cqEntries CQEs (0: twice entries), with flags
// (Setup*). Flags the kernel does not know make it fail with EINVAL:
// callers try again with fewer.
func New(entries, cqEntries uint32, flags uint32) (*Ring, error) {
	r := &Ring{fd: -1}
	r.params.Flags = flags
	if cqEntries > 0 {
		r.params.Flags |= SetupCQSize
		r.params.CQEntries = cqEntries
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&r.params)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("%w: io_uring_setup: %w", ErrUnsupported, errno)
	}
	r.fd = int(fd)
	if err := r.mmap(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Ring) mmap() error {
	p := &r.params
	sqSize := int(p.SQOff.Array + p.SQEntries*4)
	cqSize := int(p.CQOff.CQEs + p.CQEntries*uint32(unsafe.Sizeof(CQE{})))
	single := p.Features&FeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	r.ringMem, err = unix.Mmap(r.fd, offSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap SQ ring: %w", err)
	}
	cq := r.ringMem
	if !single {
		r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return fmt.Errorf("mmap CQ ring: %w", err)
		}
		cq = r.cqMem
	}
	r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.SQEntries)*int(unsafe.Sizeof(SQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap SQEs: %w", err)
	}
	at := func(m []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&m[off])) }
	r.sqHead = at(r.ringMem, p.SQOff.Head)
	r.sqTail = at(r.ringMem, p.SQOff.Tail)
	r.sqFlags = at(r.ringMem, p.SQOff.Flags)
	r.sqMask = *at(r.ringMem, p.SQOff.RingMask)
	r.sqEntries = *at(r.ringMem, p.SQOff.RingEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), p.SQEntries)
	// The SQ array maps ring slots to SQEs: identity, set once, so
	// SQEs are used in ring order.
	array := unsafe.Slice(at(r.ringMem, p.SQOff.Array), r.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead = at(cq, p.CQOff.Head)
	r.cqTail = at(cq, p.CQOff.Tail)
	r.cqOverflow = at(cq, p.CQOff.Overflow)
	r.cqMask = *at(cq, p.CQOff.RingMask)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&cq[p.CQOff.CQEs])), p.CQEntries)
	r.sqeTail = atomic.LoadUint32(r.sqTail)
	return nil
}

// Close unmaps the rings and closes the ring's descriptor (which cancels
// what is still in flight).
func (r *Ring) Close() error {
	for _, m := range [][]byte{r.sqeMem, r.cqMem, r.ringMem} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	r.sqeMem, r.cqMem, r.ringMem = nil, nil, nil
	if r.fd >= 0 {
		err := unix.Close(r.fd)
		r.fd = -1
		return err
	}
	return nil
}

// Fd is the ring's descriptor.
func (r *Ring) Fd() int { return r.fd }

// Params is what the kernel set up (sizes, features).
func (r *Ring) Params() Params { return r.params }

// SQEntries and CQEntries are the rings' sizes.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }
func (r *Ring) CQEntries() uint32 { return uint32(len(r.cqes)) }

// GetSQE returns a zeroed SQE to fill, or nil when the submission ring
// is full (submit first).
func (r *Ring) GetSQE() *SQE {
	head := atomic.LoadUint32(r.sqHead)
	if r.sqeTail-head >= r.sqEntries {
		return nil
	}
	sqe := &r.sqes[r.sqeTail&r.sqMask]
	*sqe = SQE{}
	r.sqeTail++
	return sqe
}

// flush publishes the SQEs handed out and returns how many the kernel
// has yet to consume.
func (r *Ring) flush() uint32 {
	atomic.StoreUint32(r.sqTail, r.sqeTail)
	return r.sqeTail - atomic.LoadUint32(r.sqHead)
}

// Pending is the number of SQEs handed out and not yet consumed.
func (r *Ring) Pending() uint32 { return r.sqeTail - atomic.LoadUint32(r.sqHead) }

// Submit hands the prepared SQEs to the kernel and returns how many it took.
func (r *Ring) Submit() (int, error) { return r.SubmitAndWait(0) }

// SubmitAndWait submits and waits until at least want completions are in
// the completion ring (want 0: does not wait, but still flushes
// completions that overflowed into the ring when there is room). An
// interrupted wait (EINTR) returns with no error: the caller reaps what
// there is and calls again.
func (r *Ring) SubmitAndWait(want uint32) (int, error) {
	n := r.flush()
	var flags uint32
	if want > 0 || r.needEnter() {
		flags |= EnterGetEvents
	}
	if n == 0 && flags == 0 {
		return 0, nil
	}
	got, err := r.Enter(n, want, flags)
	if err == unix.EINTR || err == unix.EBUSY || err == unix.EAGAIN {
		// Interrupted, or the completion ring is full of completions
		// not yet reaped (overflow pending): the caller reaps first.
		return int(got), nil
	}
	return int(got), err
}

// needEnter: completions wait in the kernel to be flushed into the ring
// (overflow) or task work to be run (deferred completions).
func (r *Ring) needEnter() bool {
	return atomic.LoadUint32(r.sqFlags)&(sqCQOverflow|sqTaskrun) != 0
}

// getEventsArg is struct io_uring_getevents_arg.
type getEventsArg struct {
	Sigmask     uint64
	SigmaskSz   uint32
	MinWaitUsec uint32
	Ts          uint64
}

const enterExtArg = 1 << 3

// SubmitAndWaitTimeout is SubmitAndWait that gives up after d (ETIME
// then, or EINTR: both returned as nil; the caller looks at Ready).
func (r *Ring) SubmitAndWaitTimeout(want uint32, d time.Duration) (int, error) {
	n := r.flush()
	// Both live in the Ring (the heap): the kernel follows arg.Ts,
	// which the garbage collector does not see as a pointer.
	w := &r.wait
	w.ts = unix.NsecToTimespec(int64(d))
	w.arg = getEventsArg{Ts: uint64(uintptr(unsafe.Pointer(&w.ts)))}
	got, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(want),
		EnterGetEvents|enterExtArg, uintptr(unsafe.Pointer(&w.arg)), unsafe.Sizeof(w.arg))
	switch errno {
	case 0, unix.ETIME, unix.EINTR, unix.EBUSY, unix.EAGAIN:
		return int(got), nil
	}
	return int(got), errno
}

// Enter is io_uring_enter(2).
func (r *Ring) Enter(toSubmit, minComplete, flags uint32) (uint32, error) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags), 0, 0)
	if errno != 0 {
		return uint32(n), errno
	}
	return uint32(n), nil
}

// Register is io_uring_register(2).
func (r *Ring) Register(op uint32, arg unsafe.Pointer, nr uint32) error {
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uintptr(op), uintptr(arg), uintptr(nr), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// Ready is the number of completions in the completion ring.
func (r *Ring) Ready() uint32 {
	return atomic.LoadUint32(r.cqTail) - atomic.LoadUint32(r.cqHead)
}

// Reap copies up to len(dst) completions out of the completion ring,
// frees their slots, and returns how many. When the ring is empty but
// completions overflowed (the kernel kept them: FeatNoDrop), they are
// flushed into the ring first.
func (r *Ring) Reap(dst []CQE) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	if head == tail && atomic.LoadUint32(r.sqFlags)&sqCQOverflow != 0 {
		_, _ = r.Enter(0, 0, EnterGetEvents)
		tail = atomic.LoadUint32(r.cqTail)
	}
	n := 0
	for ; head != tail && n < len(dst); n++ {
		dst[n] = r.cqes[head&r.cqMask]
		head++
	}
	atomic.StoreUint32(r.cqHead, head)
	return n
}

// Overflowed reports completions waiting in the kernel for room in the
// completion ring.
func (r *Ring) Overflowed() bool { return atomic.LoadUint32(r.sqFlags)&sqCQOverflow != 0 }

// Dropped is the count of completions lost to overflow (only without
// FeatNoDrop).
func (r *Ring) Dropped() uint32 { return atomic.LoadUint32(r.cqOverflow) }

// probe is struct io_uring_probe with room for every opcode.
type probe struct {
	LastOp uint8
	OpsLen uint8
	resv   uint16
	resv2  [3]uint32
	Ops    [256]probeOp
}

type probeOp struct {
	Op    uint8
	resv  uint8
	Flags uint16
	resv2 uint32
}

// Supported reports which of ops the kernel implements (IORING_REGISTER_PROBE).
func (r *Ring) Supported(ops ...uint8) error {
	p := new(probe)
	if err := r.Register(registerProbe, unsafe.Pointer(p), 256); err != nil {
		return fmt.Errorf("%w: probe: %w", ErrUnsupported, err)
	}
	for _, op := range ops {
		if op > p.LastOp || p.Ops[op].Flags&1 == 0 {
			return fmt.Errorf("%w: opcode %d not supported", ErrUnsupported, op)
		}
	}
	return nil
}

// Disabled reports why the system refuses io_uring to this process, from
// kernel.io_uring_disabled (1: only for the io_uring_group, 2: for no
// one), or nil; setup still has the last word.
func Disabled() error {
	b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	if err != nil || len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '2':
		return fmt.Errorf("%w: kernel.io_uring_disabled = 2", ErrUnsupported)
	}
	return nil
}
