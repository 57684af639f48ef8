package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	RingAddr    uint64
	RingEntries uint32
	Bgid        uint16
	Flags       uint16
	resv        [3]uint64
}

// buf is struct io_uring_buf; the ring's tail lives in the resv field of
// its first entry.
type buf struct {
	Addr uint64
	Len  uint32
	Bid  uint16
	resv uint16
}

// BufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING): count
// buffers of size bytes the kernel picks from for requests with
// SQEBufferSelect in its group, and the caller gives back once read.
type BufRing struct {
	r     *Ring
	group uint16
	size  int
	mask  uint16
	ring  []byte // the ring of io_uring_buf entries (page aligned)
	mem   []byte // the buffers
	bufs  []buf
	local uint16 // tail including buffers added but not yet published
}

// NewBufRing registers a buffer ring of count (a power of two, at most
// 32768) buffers of size bytes each as group.
func (r *Ring) NewBufRing(group uint16, count, size int) (*BufRing, error) {
	if count <= 0 || count&(count-1) != 0 || count > 1<<15 {
		return nil, fmt.Errorf("buffer ring of %d entries: not a power of two up to 32768", count)
	}
	b := &BufRing{r: r, group: group, size: size, mask: uint16(count - 1)}
	var err error
	b.ring, err = unix.Mmap(-1, 0, count*int(unsafe.Sizeof(buf{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	b.mem, err = unix.Mmap(-1, 0, count*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		unix.Munmap(b.ring)
		return nil, err
	}
	b.bufs = unsafe.Slice((*buf)(unsafe.Pointer(&b.ring[0])), count)
	reg := bufReg{RingAddr: uint64(uintptr(unsafe.Pointer(&b.ring[0]))), RingEntries: uint32(count), Bgid: group}
	if err := r.Register(registerPbufRing, unsafe.Pointer(&reg), 1); err != nil {
		b.free()
		return nil, fmt.Errorf("%w: register buffer ring: %w", ErrUnsupported, err)
	}
	for i := 0; i < count; i++ {
		b.add(uint16(i))
	}
	b.Publish()
	return b, nil
}

// Group is the buffer group id requests name.
func (b *BufRing) Group() uint16 { return b.group }

// Size is each buffer's size.
func (b *BufRing) Size() int { return b.size }

// Buf is the first n bytes of buffer id (as a completion reports it); the
// bytes are valid until Recycle.
func (b *BufRing) Buf(id uint16, n int) []byte {
	off := int(id) * b.size
	return b.mem[off : off+n : off+b.size]
}

func (b *BufRing) add(id uint16) {
	e := &b.bufs[b.local&b.mask]
	e.Addr = uint64(uintptr(unsafe.Pointer(&b.mem[int(id)*b.size])))
	e.Len = uint32(b.size)
	e.Bid = id
	b.local++
}

// Recycle gives buffer id back to the kernel (after Publish).
func (b *BufRing) Recycle(id uint16) { b.add(id) }

// Publish makes the buffers recycled since the last call visible to the
// kernel.
func (b *BufRing) Publish() {
	// The entries are written before the tail that makes them valid:
	// the 16-bit tail (little endian, bytes 14-15) is stored with the
	// bid beside it in one atomic 32-bit store (we are its only writer).
	p := (*uint32)(unsafe.Pointer(&b.ring[12]))
	atomic.StoreUint32(p, atomic.LoadUint32(p)&0xffff|uint32(b.local)<<16)
}

// Close unregisters the ring and frees its memory.
func (b *BufRing) Close() error {
	reg := bufReg{Bgid: b.group}
	err := b.r.Register(unregisterPbufRing, unsafe.Pointer(&reg), 1)
	b.free()
	return err
}

func (b *BufRing) free() {
	unix.Munmap(b.ring)
	unix.Munmap(b.mem)
}
