package munge

// MUNGE's own base64 reader is more lenient than encoding/base64: it skips
// whitespace (HT, LF, VT, FF, CR, space) anywhere, ignores the unused low
// bits of the last character, and only requires that characters plus '='
// padding add up to a multiple of four. This decoder accepts exactly what
// munged accepts, so a credential is valid here iff it is valid there.

const (
	b64Err = 0xff
	b64Ign = 0xfe
	b64Pad = 0xfd
)

var b64Table = func() (t [256]byte) {
	for i := range t {
		t[i] = b64Err
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
	}
	for _, c := range []byte{'\t', '\n', '\v', '\f', '\r', ' '} {
		t[c] = b64Ign
	}
	t['='] = b64Pad
	return t
}()

// b64DecodedMax bounds the decoded size of n base64 characters.
func b64DecodedMax(n int) int { return n/4*3 + 3 }

// b64Decode decodes src into dst (len(dst) >= b64DecodedMax(len(src)))
// and returns the number of bytes written, or false on malformed input.
func b64Decode(dst, src []byte) (int, bool) {
	var acc uint32
	n, i, pad := 0, 0, 0
	for _, ch := range src {
		c := b64Table[ch]
		if c == b64Ign {
			continue
		}
		if c == b64Pad && pad < 2 {
			pad++
			continue
		}
		if c >= b64Pad || pad > 0 {
			return 0, false
		}
		acc = acc<<6 | uint32(c)
		i++
		if i == 4 {
			dst[n] = byte(acc >> 16)
			dst[n+1] = byte(acc >> 8)
			dst[n+2] = byte(acc)
			n += 3
			i, acc = 0, 0
		}
	}
	if (i+pad)%4 != 0 {
		return 0, false
	}
	switch i {
	case 2: // 12 bits: one byte, 4 spare bits ignored
		dst[n] = byte(acc >> 4)
		n++
	case 3: // 18 bits: two bytes, 2 spare bits ignored
		dst[n] = byte(acc >> 10)
		dst[n+1] = byte(acc >> 2)
		n += 2
	}
	return n, true
}

// b64Encode appends the padded standard base64 encoding of src to dst.
func b64Encode(dst, src []byte) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for len(src) >= 3 {
		v := uint32(src[0])<<16 | uint32(src[1])<<8 | uint32(src[2])
		dst = append(dst, alphabet[v>>18], alphabet[v>>12&63], alphabet[v>>6&63], alphabet[v&63])
		src = src[3:]
	}
	switch len(src) {
	case 1:
		v := uint32(src[0]) << 16
		dst = append(dst, alphabet[v>>18], alphabet[v>>12&63], '=', '=')
	case 2:
		v := uint32(src[0])<<16 | uint32(src[1])<<8
		dst = append(dst, alphabet[v>>18], alphabet[v>>12&63], alphabet[v>>6&63], '=')
	}
	return dst
}
