package codec

import (
	"encoding/binary"
	"math"
)

// Sentinels from slurm/slurm.h.
const (
	NoVal8     uint8  = 0xFE
	NoVal16    uint16 = 0xFFFE
	NoVal      uint32 = 0xFFFFFFFE
	NoVal64    uint64 = 0xFFFFFFFFFFFFFFFE
	Infinite8  uint8  = 0xFF
	Infinite16 uint16 = 0xFFFF
	Infinite   uint32 = 0xFFFFFFFF
	Infinite64 uint64 = 0xFFFFFFFFFFFFFFFF
	MemPerCPU  uint64 = 0x8000000000000000
	NiceOffset uint32 = 0x80000000
	floatMult         = 1000000.0
	maxPackMem        = 1 << 30
)

// Reader decodes Slurm primitives from a byte slice. The first failure
// sticks in Err and every later read returns zero values, so decoders
// can read a whole structure and check once. Views (Str, Mem) alias the
// input buffer and allocate nothing.
type Reader struct {
	B   []byte
	Off int
	Err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) Reader { return Reader{B: b} }

// Reset points r at b.
func (r *Reader) Reset(b []byte) { r.B, r.Off, r.Err = b, 0, nil }

// Remaining is the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.B) - r.Off }

func (r *Reader) fail(e error) {
	if r.Err == nil {
		r.Err = e
	}
	r.Off = len(r.B)
}

func (r *Reader) take(n int) []byte {
	if r.Err != nil {
		return nil
	}
	if n < 0 || n > len(r.B)-r.Off {
		r.fail(ErrShort)
		return nil
	}
	p := r.B[r.Off : r.Off+n]
	r.Off += n
	return p
}

func (r *Reader) U8() uint8 {
	p := r.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (r *Reader) U16() uint16 {
	p := r.take(2)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint16(p)
}

func (r *Reader) U32() uint32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint32(p)
}

func (r *Reader) U64() uint64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint64(p)
}

// Time reads a time_t packed as a signed 64-bit value.
func (r *Reader) Time() int64 { return int64(r.U64()) }

func (r *Reader) Bool() bool { return r.U8() != 0 }

// Double reads packdouble: the IEEE bits of value*1e6.
func (r *Reader) Double() float64 {
	return math.Float64frombits(r.U64()) / floatMult
}

// Float reads packfloat: the IEEE bits of value*1e6 as float32.
func (r *Reader) Float() float32 {
	return float32(float64(math.Float32frombits(r.U32())) / floatMult)
}

// Mem reads a u32 length and that many raw bytes (a view).
func (r *Reader) Mem() []byte {
	n := r.U32()
	if r.Err != nil {
		return nil
	}
	if n > maxPackMem {
		r.fail(ErrBadCount)
		return nil
	}
	return r.take(int(n))
}

// Str reads a packstr string and returns a view without the NUL. NULL
// and "" both read as an empty slice; StrNull tells them apart.
func (r *Reader) Str() []byte {
	b, _ := r.StrNull()
	return b
}

// StrNull is Str that also reports whether the string was NULL.
func (r *Reader) StrNull() (s []byte, isNull bool) {
	p := r.Mem()
	if r.Err != nil {
		return nil, true
	}
	if len(p) == 0 {
		return nil, true
	}
	if p[len(p)-1] != 0 {
		r.fail(ErrNoNUL)
		return nil, true
	}
	return p[:len(p)-1], false
}

// String reads a packstr string into a new Go string (allocates).
func (r *Reader) String() string { return string(r.Str()) }

// Count reads an array/list count and checks it against the bytes left,
// given the smallest encoded size of one element. NO_VAL (NULL list) is
// returned as is with ok=false.
func (r *Reader) Count(minElem int) (n uint32, isNull bool) {
	n = r.U32()
	if r.Err != nil {
		return 0, true
	}
	if n == NoVal {
		return 0, true
	}
	if minElem < 1 {
		minElem = 1
	}
	if uint64(n)*uint64(minElem) > uint64(r.Remaining()) {
		r.fail(ErrBadCount)
		return 0, true
	}
	return n, false
}

// StrArray reads packstr_array into a new []string.
func (r *Reader) StrArray() []string {
	n, null := r.Count(4)
	if null || n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := uint32(0); i < n && r.Err == nil; i++ {
		out = append(out, r.String())
	}
	return out
}

// U16Array, U32Array, U64Array read counted arrays.
func (r *Reader) U16Array() []uint16 {
	n, null := r.Count(2)
	if null || n == 0 {
		return nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = r.U16()
	}
	return out
}

func (r *Reader) U32Array() []uint32 {
	n, null := r.Count(4)
	if null || n == 0 {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = r.U32()
	}
	return out
}

func (r *Reader) U64Array() []uint64 {
	n, null := r.Count(8)
	if null || n == 0 {
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.U64()
	}
	return out
}

// Bitstr reads pack_bit_str_hex: NO_VAL for NULL, else nbits + hex string.
// It returns the hex text view (e.g. "0x203") and nbits; null reports NULL.
func (r *Reader) Bitstr() (nbits uint32, hex []byte, null bool) {
	nbits = r.U32()
	if r.Err != nil || nbits == NoVal {
		return 0, nil, true
	}
	hex = r.Str()
	return nbits, hex, false
}

// Writer appends Slurm primitives to B.
type Writer struct {
	B []byte
}

func (w *Writer) U8(v uint8)   { w.B = append(w.B, v) }
func (w *Writer) U16(v uint16) { w.B = binary.BigEndian.AppendUint16(w.B, v) }
func (w *Writer) U32(v uint32) { w.B = binary.BigEndian.AppendUint32(w.B, v) }
func (w *Writer) U64(v uint64) { w.B = binary.BigEndian.AppendUint64(w.B, v) }
func (w *Writer) Time(t int64) { w.U64(uint64(t)) }
func (w *Writer) Bool(v bool) {
	if v {
		w.U8(1)
	} else {
		w.U8(0)
	}
}

// Double writes packdouble (bits of v*1e6).
func (w *Writer) Double(v float64) { w.U64(math.Float64bits(v * floatMult)) }

// Float writes packfloat (bits of float32(v*1e6)).
func (w *Writer) Float(v float32) { w.U32(math.Float32bits(float32(float64(v) * floatMult))) }

// Mem writes u32 length then the bytes.
func (w *Writer) Mem(p []byte) {
	w.U32(uint32(len(p)))
	w.B = append(w.B, p...)
}

// Str writes packstr: NULL for "", else length+1, bytes, NUL. Use
// StrEmpty for a non-NULL empty string.
func (w *Writer) Str(s string) {
	if s == "" {
		w.U32(0)
		return
	}
	w.U32(uint32(len(s) + 1))
	w.B = append(w.B, s...)
	w.B = append(w.B, 0)
}

// StrBytes is Str for a byte view.
func (w *Writer) StrBytes(s []byte) {
	if len(s) == 0 {
		w.U32(0)
		return
	}
	w.U32(uint32(len(s) + 1))
	w.B = append(w.B, s...)
	w.B = append(w.B, 0)
}

// StrNull writes s, or a non-NULL "" when null is false and s is empty.
func (w *Writer) StrNull(s []byte, null bool) {
	if null {
		w.U32(0)
		return
	}
	w.U32(uint32(len(s) + 1))
	w.B = append(w.B, s...)
	w.B = append(w.B, 0)
}

// StrEmpty writes the non-NULL empty string.
func (w *Writer) StrEmpty() { w.B = append(w.B, 0, 0, 0, 1, 0) }

func (w *Writer) StrArray(a []string) {
	w.U32(uint32(len(a)))
	for _, s := range a {
		w.Str(s)
	}
}

func (w *Writer) U16Array(a []uint16) {
	w.U32(uint32(len(a)))
	for _, v := range a {
		w.U16(v)
	}
}

func (w *Writer) U32Array(a []uint32) {
	w.U32(uint32(len(a)))
	for _, v := range a {
		w.U32(v)
	}
}

func (w *Writer) U64Array(a []uint64) {
	w.U32(uint32(len(a)))
	for _, v := range a {
		w.U64(v)
	}
}

// BitstrNull writes a NULL bitmap.
func (w *Writer) BitstrNull() { w.U32(NoVal) }

// Bitstr writes nbits and the hex text (caller formats it, see BitHex).
func (w *Writer) Bitstr(nbits uint32, hex []byte) {
	w.U32(nbits)
	w.StrBytes(hex)
}

// BitHex appends the "0x…" hex form of a bitmap of nbits whose set bits
// are given by isSet, most significant nibble first, upper case.
func BitHex(dst []byte, nbits int, isSet func(i int) bool) []byte {
	dst = append(dst, '0', 'x')
	nibbles := (nbits + 3) / 4
	if nibbles == 0 {
		return append(dst, '0')
	}
	for n := nibbles - 1; n >= 0; n-- {
		var v byte
		for b := 3; b >= 0; b-- {
			i := n*4 + b
			v <<= 1
			if i < nbits && isSet(i) {
				v |= 1
			}
		}
		dst = append(dst, "0123456789ABCDEF"[v])
	}
	return dst
}
