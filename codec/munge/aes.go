package munge

import "encoding/binary"

// A constant-time, allocation-free AES decryptor for CBC. The standard
// library's crypto/aes allocates its key schedule on the heap on every
// NewCipher, and MUNGE derives a fresh key for every credential, so the
// verifier carries its own. The S-box is evaluated as a Boolean circuit
// (Boyar and Peralta's 113-gate S-box, depth 16) over bit-sliced bytes:
// no table is indexed by secret data. On amd64 with AES-NI the rounds run
// on the CPU's AES instructions instead (aes_amd64.s), ten times faster.
// Encryption (Encode) uses crypto/aes; the tests check both decryptors
// against crypto/aes.

// aesKey holds the encryption key schedule: round key r is rk[16r:16r+16].
type aesKey struct {
	rk [240]byte
	nr int // 10 for AES-128, 14 for AES-256
}

// expand computes the key schedule of a 16- or 32-byte key.
func (k *aesKey) expand(key []byte) {
	nk := len(key) / 4
	k.nr = nk + 6
	n := 4 * (k.nr + 1) // words
	copy(k.rk[:], key)
	rcon := byte(1)
	for i := nk; i < n; i++ {
		var w [4]byte
		copy(w[:], k.rk[4*(i-1):4*i])
		switch {
		case i%nk == 0:
			w = [4]byte{w[1], w[2], w[3], w[0]}
			subWord(&w)
			w[0] ^= rcon
			rcon = xtimeByte(rcon)
		case nk > 6 && i%nk == 4:
			subWord(&w)
		}
		for j := 0; j < 4; j++ {
			k.rk[4*i+j] = k.rk[4*(i-nk)+j] ^ w[j]
		}
	}
}

func xtimeByte(b byte) byte {
	return b<<1 ^ 0x1b&-(b>>7)
}

// subWord applies the S-box to four bytes.
func subWord(w *[4]byte) {
	x := transpose8(uint64(binary.LittleEndian.Uint32(w[:])))
	var p [8]uint64
	for i := range p {
		p[i] = x >> (8 * i) & 0xff
	}
	sboxPlanes(&p)
	x = 0
	for i := range p {
		x |= (p[i] & 0xff) << (8 * i)
	}
	binary.LittleEndian.PutUint32(w[:], uint32(transpose8(x)))
}

// cbcDecrypt decrypts buf (a multiple of 16 bytes) in place, chaining from
// iv. Blocks are processed four at a time: CBC decryption is parallel.
func (k *aesKey) cbcDecrypt(iv *[16]byte, buf []byte) {
	if haveAESNI {
		if len(buf) > 0 {
			cbcDecryptAESNI(k.nr, &k.rk[0], iv, buf)
		}
		return
	}
	k.cbcDecryptSliced(iv, buf)
}

// cbcDecryptSliced is cbcDecrypt in portable Go (bit-sliced S-box).
func (k *aesKey) cbcDecryptSliced(iv *[16]byte, buf []byte) {
	var prev [16]byte
	copy(prev[:], iv[:])
	var st, ct [64]byte
	for len(buf) > 0 {
		nb := len(buf) / 16
		if nb > 4 {
			nb = 4
		}
		n := 16 * nb
		copy(ct[:n], buf[:n])
		copy(st[:n], buf[:n])
		k.decryptBlocks(&st, nb)
		for i := 0; i < 16; i++ {
			buf[i] = st[i] ^ prev[i]
		}
		for i := 16; i < n; i++ {
			buf[i] = st[i] ^ ct[i-16]
		}
		copy(prev[:], ct[n-16:n])
		buf = buf[n:]
	}
}

// decryptBlocks runs the AES inverse cipher on nb (1..4) blocks of st.
func (k *aesKey) decryptBlocks(st *[64]byte, nb int) {
	n := 16 * nb
	addRoundKey(st[:n], k.rk[16*k.nr:16*k.nr+16])
	for r := k.nr - 1; r >= 1; r-- {
		invShiftRows(st[:n])
		invSubBytes(st)
		addRoundKey(st[:n], k.rk[16*r:16*r+16])
		invMixColumns(st[:n])
	}
	invShiftRows(st[:n])
	invSubBytes(st)
	addRoundKey(st[:n], k.rk[:16])
}

func addRoundKey(st []byte, rk []byte) {
	k0 := binary.LittleEndian.Uint64(rk)
	k1 := binary.LittleEndian.Uint64(rk[8:])
	for o := 0; o+16 <= len(st); o += 16 {
		binary.LittleEndian.PutUint64(st[o:], binary.LittleEndian.Uint64(st[o:])^k0)
		binary.LittleEndian.PutUint64(st[o+8:], binary.LittleEndian.Uint64(st[o+8:])^k1)
	}
}

// invShiftRows: the state is column-major (byte 4c+r is row r, column c);
// row r rotates right by r.
func invShiftRows(st []byte) {
	for o := 0; o+16 <= len(st); o += 16 {
		s := st[o : o+16 : o+16]
		s[1], s[5], s[9], s[13] = s[13], s[1], s[5], s[9]
		s[2], s[6], s[10], s[14] = s[10], s[14], s[2], s[6]
		s[3], s[7], s[11], s[15] = s[7], s[11], s[15], s[3]
	}
}

const (
	lo7 = 0x7f7f7f7f7f7f7f7f
	lsb = 0x0101010101010101
)

// xt multiplies each of the eight bytes of x by 2 in GF(2^8).
func xt(x uint64) uint64 {
	return (x&lo7)<<1 ^ (x>>7&lsb)*0x1b
}

// rot8 moves byte j+1 of each 32-bit lane (column) to byte j.
func rot8(w uint64) uint64 {
	return w>>8&0x00ffffff00ffffff | w<<24&0xff000000ff000000
}

func rot16(w uint64) uint64 {
	return w>>16&0x0000ffff0000ffff | w<<16&0xffff0000ffff0000
}

// invMixColumns works on two columns per 64-bit word. InvMixColumns equals
// MixColumns after multiplying a0,a2 and a1,a3 pairs by 4 (a known
// factorisation of the inverse matrix).
func invMixColumns(st []byte) {
	for o := 0; o+8 <= len(st); o += 8 {
		w := binary.LittleEndian.Uint64(st[o:])
		w ^= xt(xt(w ^ rot16(w)))
		r1 := rot8(w)
		t := w ^ r1
		t ^= rot16(t)
		w ^= t ^ xt(w^r1)
		binary.LittleEndian.PutUint64(st[o:], w)
	}
}

// transpose8 transposes the 8x8 bit matrix whose row r is byte r of x
// (bit c of that byte is column c).
func transpose8(x uint64) uint64 {
	t := (x ^ x>>7) & 0x00aa00aa00aa00aa
	x ^= t ^ t<<7
	t = (x ^ x>>14) & 0x0000cccc0000cccc
	x ^= t ^ t<<14
	t = (x ^ x>>28) & 0x00000000f0f0f0f0
	x ^= t ^ t<<28
	return x
}

// slice turns 64 bytes into 8 bit planes (bit j of p[i] is bit i of byte
// j); unslice is its inverse.
func slice(st *[64]byte, p *[8]uint64) {
	for k := 0; k < 8; k++ {
		p[k] = transpose8(binary.LittleEndian.Uint64(st[8*k:]))
	}
	transposeBytes(p)
}

func unslice(p *[8]uint64, st *[64]byte) {
	transposeBytes(p)
	for k := 0; k < 8; k++ {
		binary.LittleEndian.PutUint64(st[8*k:], transpose8(p[k]))
	}
}

// transposeBytes transposes the 8x8 byte matrix whose row k is w[k].
func transposeBytes(w *[8]uint64) {
	for k := 0; k < 4; k++ {
		t := (w[k]>>32 ^ w[k+4]) & 0x00000000ffffffff
		w[k+4] ^= t
		w[k] ^= t << 32
	}
	for _, k := range [4]int{0, 1, 4, 5} {
		t := (w[k]>>16 ^ w[k+2]) & 0x0000ffff0000ffff
		w[k+2] ^= t
		w[k] ^= t << 16
	}
	for k := 0; k < 8; k += 2 {
		t := (w[k]>>8 ^ w[k+1]) & 0x00ff00ff00ff00ff
		w[k+1] ^= t
		w[k] ^= t << 8
	}
}

// invSubBytes applies the inverse S-box to all 64 bytes of st:
// InvS(y) = L(S(L(y))) where L is the inverse affine map
// (bit i = y(i+2) ^ y(i+5) ^ y(i+7), plus the constant 0x05).
func invSubBytes(st *[64]byte) {
	var p [8]uint64
	slice(st, &p)
	invAffine(&p)
	sboxPlanes(&p)
	invAffine(&p)
	unslice(&p, st)
}

func invAffine(p *[8]uint64) {
	var q [8]uint64
	for i := 0; i < 8; i++ {
		q[i] = p[(i+2)&7] ^ p[(i+5)&7] ^ p[(i+7)&7]
	}
	q[0] = ^q[0]
	q[2] = ^q[2]
	*p = q
}

// sboxPlanes evaluates the AES S-box on bit planes (p[0] = least
// significant bit) with the Boyar-Peralta circuit, whose inputs U0..U7
// and outputs S0..S7 are numbered from the most significant bit.
func sboxPlanes(p *[8]uint64) {
	x0, x1, x2, x3 := p[7], p[6], p[5], p[4]
	x4, x5, x6, x7 := p[3], p[2], p[1], p[0]

	// Top linear layer.
	y14 := x3 ^ x5
	y13 := x0 ^ x6
	y9 := x0 ^ x3
	y8 := x0 ^ x5
	t0 := x1 ^ x2
	y1 := t0 ^ x7
	y4 := y1 ^ x3
	y12 := y13 ^ y14
	y2 := y1 ^ x0
	y5 := y1 ^ x6
	y3 := y5 ^ y8
	t1 := x4 ^ y12
	y15 := t1 ^ x5
	y20 := t1 ^ x1
	y6 := y15 ^ x7
	y10 := y15 ^ t0
	y11 := y20 ^ y9
	y7 := x7 ^ y11
	y17 := y10 ^ y11
	y19 := y10 ^ y8
	y16 := t0 ^ y11
	y21 := y13 ^ y16
	y18 := x0 ^ y16

	// Non-linear middle (inversion in GF(2^4)^2).
	t2 := y12 & y15
	t3 := y3 & y6
	t4 := t3 ^ t2
	t5 := y4 & x7
	t6 := t5 ^ t2
	t7 := y13 & y16
	t8 := y5 & y1
	t9 := t8 ^ t7
	t10 := y2 & y7
	t11 := t10 ^ t7
	t12 := y9 & y11
	t13 := y14 & y17
	t14 := t13 ^ t12
	t15 := y8 & y10
	t16 := t15 ^ t12
	t17 := t4 ^ t14
	t18 := t6 ^ t16
	t19 := t9 ^ t14
	t20 := t11 ^ t16
	t21 := t17 ^ y20
	t22 := t18 ^ y19
	t23 := t19 ^ y21
	t24 := t20 ^ y18
	t25 := t21 ^ t22
	t26 := t21 & t23
	t27 := t24 ^ t26
	t28 := t25 & t27
	t29 := t28 ^ t22
	t30 := t23 ^ t24
	t31 := t22 ^ t26
	t32 := t31 & t30
	t33 := t32 ^ t24
	t34 := t23 ^ t33
	t35 := t27 ^ t33
	t36 := t24 & t35
	t37 := t36 ^ t34
	t38 := t27 ^ t36
	t39 := t29 & t38
	t40 := t25 ^ t39
	t41 := t40 ^ t37
	t42 := t29 ^ t33
	t43 := t29 ^ t40
	t44 := t33 ^ t37
	t45 := t42 ^ t41
	z0 := t44 & y15
	z1 := t37 & y6
	z2 := t33 & x7
	z3 := t43 & y16
	z4 := t40 & y1
	z5 := t29 & y7
	z6 := t42 & y11
	z7 := t45 & y17
	z8 := t41 & y10
	z9 := t44 & y12
	z10 := t37 & y3
	z11 := t33 & y4
	z12 := t43 & y13
	z13 := t40 & y5
	z14 := t29 & y2
	z15 := t42 & y9
	z16 := t45 & y14
	z17 := t41 & y8

	// Bottom linear layer (the complements add the constant 0x63).
	t46 := z15 ^ z16
	t47 := z10 ^ z11
	t48 := z5 ^ z13
	t49 := z9 ^ z10
	t50 := z2 ^ z12
	t51 := z2 ^ z5
	t52 := z7 ^ z8
	t53 := z0 ^ z3
	t54 := z6 ^ z7
	t55 := z16 ^ z17
	t56 := z12 ^ t48
	t57 := t50 ^ t53
	t58 := z4 ^ t46
	t59 := z3 ^ t54
	t60 := t46 ^ t57
	t61 := z14 ^ t57
	t62 := t52 ^ t58
	t63 := t49 ^ t58
	t64 := z4 ^ t59
	t65 := t61 ^ t62
	t66 := z1 ^ t63
	s0 := t59 ^ t63
	s6 := t56 ^ ^t62
	s7 := t48 ^ ^t60
	t67 := t64 ^ t65
	s3 := t53 ^ t66
	s4 := t51 ^ t66
	s5 := t47 ^ t65
	s1 := t64 ^ ^s3
	s2 := t55 ^ ^t67

	p[7], p[6], p[5], p[4] = s0, s1, s2, s3
	p[3], p[2], p[1], p[0] = s4, s5, s6, s7
}
