package double

import (
	"strings"
	"unicode/utf8"
)

// pyUTF8 is codecs.getincrementaldecoder("utf8")(errors="replace"), as
// the agent decodes the kernel runner's output chunks: a sequence cut at
// a chunk's end waits for the next chunk; each maximal invalid subpart
// becomes one U+FFFD (Python's rule, not Go's one per byte).
type pyUTF8 struct{ pend []byte }

// seqLen is the length of the sequence a lead byte starts and the range
// its second byte must be in (0: not a lead byte).
func seqLen(b byte) (n int, lo, hi byte) {
	switch {
	case b >= 0xc2 && b <= 0xdf:
		return 2, 0x80, 0xbf
	case b == 0xe0:
		return 3, 0xa0, 0xbf
	case b == 0xed:
		return 3, 0x80, 0x9f
	case b >= 0xe1 && b <= 0xef:
		return 3, 0x80, 0xbf
	case b == 0xf0:
		return 4, 0x90, 0xbf
	case b >= 0xf1 && b <= 0xf3:
		return 4, 0x80, 0xbf
	case b == 0xf4:
		return 4, 0x80, 0x8f
	}
	return 0, 0, 0
}

func (d *pyUTF8) decode(in []byte, final bool) string {
	b := in
	if len(d.pend) > 0 {
		b = append(d.pend, in...)
		d.pend = nil
	}
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out.WriteByte(c)
			i++
			continue
		}
		n, lo, hi := seqLen(c)
		if n == 0 {
			out.WriteRune(utf8.RuneError)
			i++
			continue
		}
		k := 1
		for ; k < n && i+k < len(b); k++ {
			x := b[i+k]
			if k == 1 && (x < lo || x > hi) || k > 1 && (x < 0x80 || x > 0xbf) {
				break
			}
		}
		switch {
		case k == n:
			out.Write(b[i : i+n])
			i += n
		case i+k == len(b):
			// cut at the end: kept for the next chunk, or (final) one
			// "unexpected end of data" replacement
			if !final {
				d.pend = append([]byte(nil), b[i:]...)
			} else {
				out.WriteRune(utf8.RuneError)
			}
			i = len(b)
		default:
			out.WriteRune(utf8.RuneError)
			i += k
		}
	}
	return out.String()
}

// reset is decode(b"", True) with its result dropped, as read_output
// finalizes the decoders at build-finished and finished.
func (d *pyUTF8) reset() { d.pend = nil }
