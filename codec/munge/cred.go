package munge

import (
	"bytes"
	"compress/bzip2"
	"compress/zlib"
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"io"

	"github.com/lablup/slurm-frontend/codec"
)

// Credential algorithm and limit constants (libmunge/munge.h,
// libcommon/munge_defs.h, munged/cred.h).
const (
	CredVersion = 3 // MUNGE_CRED_VERSION, the only version munged accepts

	CipherNone     = 0
	CipherDefault  = 1 // request-only: never valid inside a credential
	CipherBlowfish = 2
	CipherCAST5    = 3
	CipherAES128   = 4 // munged's default
	CipherAES256   = 5

	MACNone      = 0 // invalid: MACs are mandatory
	MACDefault   = 1 // request-only
	MACMD5       = 2
	MACSHA1      = 3
	MACRIPEMD160 = 4
	MACSHA256    = 5 // munged's default
	MACSHA512    = 6
	macLast      = 7

	ZipNone    = 0 // munged's default, and forced when the payload is empty
	ZipDefault = 1 // request-only
	ZipBzlib   = 2
	ZipZlib    = 3

	UIDAny = 0xFFFFFFFF // MUNGE_UID_ANY (= SLURM_AUTH_UID_ANY): no restriction
	GIDAny = 0xFFFFFFFF // MUNGE_GID_ANY

	DefaultTTL = 300     // MUNGE_DEFAULT_TTL: what munged writes for a requested ttl of 0
	MaxTTL     = 3600    // MUNGE_MAXIMUM_TTL: munged caps ttl to this on encode and decode
	MaxPayload = 1 << 20 // MUNGE_MAXIMUM_PAYLOAD_LEN
	MaxRequest = 2 << 20 // MUNGE_MAXIMUM_REQ_LEN: the longest credential munged reads

	saltLen  = 8
	zipMagic = 0xCACACACA
	// innerFixed is the inner layer without the address and payload.
	innerFixed = saltLen + 1 + 7*4
)

const (
	armorPrefix = "MUNGE:"
	armorSuffix = ':'
)

// Cred is a decoded credential. After Decode, Realm and Payload are views
// into the scratch buffer; after Verify they are the Cred's own copies.
type Cred struct {
	Cipher, MAC, Zip uint8
	Realm            []byte // always empty with stock munged
	Addr             [4]byte
	EncodeTime       uint32 // seconds since the epoch (munged's time0)
	TTL              uint32 // seconds; Verify reports it capped to its max ttl, as munged does
	UID, GID         uint32 // identity of the process that encoded the credential
	AuthUID, AuthGID uint32 // who may decode it: UIDAny/GIDAny or a restriction
	Payload          []byte // Slurm: the body hash (see CheckBodyHash)
}

func macSize(m uint8) int {
	switch m {
	case MACMD5:
		return 16
	case MACSHA1, MACRIPEMD160:
		return 20
	case MACSHA256:
		return 32
	case MACSHA512:
		return 64
	}
	return 0
}

// aesBlock is the AES block (and IV) size.
const aesBlock = 16

// cipherSizes returns the key and block (= IV) sizes of a cipher, as
// munged gets them from its crypto library (cipher.c cipher_key_size,
// cipher_iv_size, cipher_block_size: EVP_CIPHER_key_length etc. for
// OpenSSL, GCRYCTL_GET_KEYLEN/GET_BLKLEN for libgcrypt). Blowfish takes
// keys of any length up to 56 bytes; both libraries report 16 as its key
// length, so munged keys it with the first 16 bytes of the DEK. CAST5
// (CAST-128) uses a 16-byte key, its maximum, hence 16 rounds.
func cipherSizes(c uint8) (key, block int) {
	switch c {
	case CipherBlowfish, CipherCAST5:
		return 16, 8
	case CipherAES128:
		return 16, aesBlock
	case CipherAES256:
		return 32, aesBlock
	}
	return 0, 0
}

func isSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// Decode parses and authenticates an armored credential ("MUNGE:...:",
// with or without a trailing NUL) the way munged's decode path does up to
// and including unpacking the inner layer: armor, base64, outer layer,
// decryption, MAC (constant-time), decompression, inner layer. It does not
// check time, restrictions or replay (Verify does). scratch is grown as
// needed and reused: with a reused scratch Decode does not allocate (except
// for the rare compressed, Blowfish or CAST5 credential). c.Realm and
// c.Payload point into *scratch until its next use. Errors are the Err*
// values of this package.
func (k *Key) Decode(armored []byte, c *Cred, scratch *[]byte) error {
	_, err := k.decode(armored, c, scratch)
	return err
}

// decode is Decode that also returns the credential's MAC (a view into
// *scratch), the replay cache's key.
func (k *Key) decode(armored []byte, c *Cred, scratch *[]byte) ([]byte, error) {
	*c = Cred{}
	if len(armored) > MaxRequest {
		return nil, ErrTooLong
	}
	b := armored
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	if len(b) == 0 || b[0] == 0 {
		return nil, ErrNoCred
	}
	if !bytes.HasPrefix(b, []byte(armorPrefix)) {
		return nil, ErrBadPrefix
	}
	b = b[len(armorPrefix):]
	end := bytes.LastIndexByte(b, armorSuffix)
	if end < 0 {
		return nil, ErrBadSuffix
	}
	b = b[:end]

	var local []byte
	if scratch == nil {
		scratch = &local
	}
	need := b64DecodedMax(len(b))
	if cap(*scratch) < need {
		*scratch = make([]byte, need)
	}
	buf := (*scratch)[:need]
	n, ok := b64Decode(buf, b)
	if !ok {
		return nil, ErrBadBase64
	}
	raw := buf[:n]

	// Outer layer, checked field by field in munged's order.
	if len(raw) < 1 {
		return nil, ErrTruncated
	}
	if raw[0] != CredVersion {
		return nil, ErrBadVersion
	}
	if len(raw) < 2 {
		return nil, ErrTruncated
	}
	c.Cipher = raw[1]
	keyLen, ivLen := cipherSizes(c.Cipher)
	switch c.Cipher {
	case CipherNone, CipherBlowfish, CipherCAST5, CipherAES128, CipherAES256:
	default:
		return nil, ErrBadCipher
	}
	if len(raw) < 3 {
		return nil, ErrTruncated
	}
	c.MAC = raw[2]
	macLen := macSize(c.MAC)
	switch {
	case macLen == 0:
		return nil, ErrBadMAC
	case macLen < keyLen:
		return nil, ErrMACTooShort
	}
	if len(raw) < 4 {
		return nil, ErrTruncated
	}
	c.Zip = raw[3]
	if c.Zip != ZipNone && c.Zip != ZipBzlib && c.Zip != ZipZlib {
		return nil, ErrBadZip
	}
	if len(raw) < 5 {
		return nil, ErrTruncated
	}
	realmLen := int(raw[4])
	p := 5
	if realmLen > len(raw)-p {
		return nil, ErrTruncated
	}
	if realmLen > 0 {
		c.Realm = raw[p : p+realmLen : p+realmLen]
	}
	p += realmLen
	var iv [aesBlock]byte
	if ivLen > len(raw)-p {
		return nil, ErrTruncated
	}
	copy(iv[:], raw[p:p+ivLen])
	p += ivLen
	outer := raw[:p]
	if macLen > len(raw)-p {
		return nil, ErrTruncated
	}
	mac := raw[p : p+macLen]
	inner := raw[p+macLen:]

	h := k.getHMAC(c.MAC)
	padOK := 1
	if c.Cipher != CipherNone {
		if len(inner) == 0 || len(inner)%ivLen != 0 {
			// munged's cipher_final fails here and the MAC over what
			// was decrypted cannot match: same answer.
			k.putHMAC(c.MAC, h)
			return nil, ErrInvalid
		}
		h.dek.Write(mac)
		dek := h.dek.Sum(h.dekSum[:0])
		if ivLen == aesBlock {
			var ak aesKey
			ak.expand(dek[:keyLen])
			ak.cbcDecrypt(&iv, inner)
			clear(ak.rk[:])
		} else {
			// Blowfish, CAST5: 8-byte blocks, rare, may allocate.
			// Pass the IV by value: a slice of iv would make it escape,
			// and cost the AES path an allocation.
			cbcDecrypt64(c.Cipher, dek[:keyLen], [8]byte(iv[:8]), inner)
		}
		clear(h.dekSum[:])
		var pl int
		padOK, pl = checkPadding(inner, ivLen)
		inner = inner[:len(inner)-pl]
	}
	h.mac.Write(outer)
	h.mac.Write(inner)
	sum := h.mac.Sum(h.sum[:0])
	macOK := subtle.ConstantTimeCompare(sum, mac)
	k.putHMAC(c.MAC, h)
	if macOK&padOK != 1 {
		return nil, ErrInvalid
	}

	if c.Zip != ZipNone {
		var ok bool
		if inner, ok = decompress(c.Zip, inner); !ok {
			return nil, ErrInvalid
		}
	}
	return mac, unpackInner(inner, c)
}

// checkPadding checks the PKCS#7 padding of a decrypted inner layer of
// whole bs-byte blocks (bs = 16 for AES, 8 for Blowfish and CAST5) in
// constant time, as munged's cipher_final does: the last byte is the pad
// length, 1 to bs, and that many final bytes all equal it. It returns
// ok (1 or 0) and how many bytes to strip: the padding if valid, else one
// block, mirroring cipher_final holding back the last block (OpenSSL and
// libgcrypt builds alike).
func checkPadding(b []byte, bs int) (ok, strip int) {
	last := len(b) - 1
	pad := int(b[last])
	ok = subtle.ConstantTimeLessOrEq(1, pad) & subtle.ConstantTimeLessOrEq(pad, bs)
	for i := 0; i < bs && i <= last; i++ {
		inPad := subtle.ConstantTimeLessOrEq(i+1, pad)
		eq := subtle.ConstantTimeByteEq(b[last-i], byte(pad))
		ok &= (inPad ^ 1) | eq
	}
	return ok, subtle.ConstantTimeSelect(ok, pad, bs)
}

// decompress undoes munged's zip layer: u32 magic, u32 original length,
// then a zlib or bzip2 stream. Only hand-made credentials (munge -Z) use it.
func decompress(zip uint8, in []byte) ([]byte, bool) {
	if len(in) < 8 || binary.BigEndian.Uint32(in) != zipMagic {
		return nil, false
	}
	n := binary.BigEndian.Uint32(in[4:])
	if n == 0 || n > innerFixed+4+MaxPayload {
		return nil, false
	}
	var r io.Reader
	src := bytes.NewReader(in[8:])
	if zip == ZipZlib {
		zr, err := zlib.NewReader(src)
		if err != nil {
			return nil, false
		}
		r = zr
	} else {
		r = bzip2.NewReader(src)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, false
	}
	var one [1]byte
	if m, _ := r.Read(one[:]); m != 0 {
		return nil, false
	}
	return out, true
}

// unpackInner parses the (decrypted, decompressed) inner layer.
func unpackInner(in []byte, c *Cred) error {
	if len(in) < saltLen+1 {
		return ErrTruncated
	}
	p := saltLen
	addrLen := int(in[p])
	p++
	if addrLen > len(in)-p {
		return ErrTruncated
	}
	switch addrLen {
	case 4:
		copy(c.Addr[:], in[p:p+4])
	case 0:
	default:
		return ErrBadAddrLen
	}
	p += addrLen
	var f [7]uint32
	for i := range f {
		if len(in)-p < 4 {
			return ErrTruncated
		}
		f[i] = binary.BigEndian.Uint32(in[p:])
		p += 4
	}
	c.EncodeTime, c.TTL, c.UID, c.GID, c.AuthUID, c.AuthGID = f[0], f[1], f[2], f[3], f[4], f[5]
	dataLen := f[6]
	if uint64(dataLen) > uint64(len(in)-p) {
		return ErrTruncated
	}
	if dataLen > MaxPayload {
		return ErrPayloadLen
	}
	if dataLen > 0 {
		c.Payload = in[p : p+int(dataLen) : p+int(dataLen)]
	}
	p += int(dataLen)
	if p != len(in) {
		return ErrTrailing
	}
	return nil
}

// Encode appends to dst the armored credential "MUNGE:<base64>:" (no NUL)
// for c, as munged would make it with its defaults: AES-128-CBC,
// HMAC-SHA256, no compression, empty realm. c's Cipher, MAC, Zip and Realm
// are ignored. Like munged, a TTL of 0 becomes DefaultTTL and a TTL above
// MaxTTL becomes MaxTTL. rnd supplies the salt and IV (crypto/rand.Reader
// in production). EncodeTime must be set by the caller.
func (k *Key) Encode(dst []byte, c *Cred, rnd io.Reader) ([]byte, error) {
	if len(c.Payload) > MaxPayload {
		return dst, codec.Errorf(codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, "munge: payload of %d bytes exceeds %d", len(c.Payload), MaxPayload)
	}
	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	} else if ttl > MaxTTL {
		ttl = MaxTTL
	}
	return k.encode(dst, c, rnd, ttl)
}

// encode is Encode with the ttl written as given (tests craft ttl 0).
func (k *Key) encode(dst []byte, c *Cred, rnd io.Reader, ttl uint32) ([]byte, error) {
	const outerLen = 5 + aes.BlockSize
	const macLen = 32
	plainLen := innerFixed + 4 + len(c.Payload)
	ctLen := (plainLen/aes.BlockSize + 1) * aes.BlockSize
	total := outerLen + macLen + ctLen
	var stack [512]byte
	var raw []byte
	if total <= len(stack) {
		raw = stack[:total]
	} else {
		raw = make([]byte, total)
	}
	raw[0], raw[1], raw[2], raw[3], raw[4] = CredVersion, CipherAES128, MACSHA256, ZipNone, 0
	iv := raw[5:outerLen]
	inner := raw[outerLen+macLen:]
	if _, err := io.ReadFull(rnd, iv); err != nil {
		return dst, codec.Errorf(codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, "munge: random IV: %v", err)
	}
	if _, err := io.ReadFull(rnd, inner[:saltLen]); err != nil {
		return dst, codec.Errorf(codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, "munge: random salt: %v", err)
	}
	q := saltLen
	inner[q] = 4
	q++
	q += copy(inner[q:], c.Addr[:])
	for _, v := range [...]uint32{c.EncodeTime, ttl, c.UID, c.GID, c.AuthUID, c.AuthGID, uint32(len(c.Payload))} {
		binary.BigEndian.PutUint32(inner[q:], v)
		q += 4
	}
	q += copy(inner[q:], c.Payload)
	pad := byte(ctLen - plainLen)
	for ; q < ctLen; q++ {
		inner[q] = pad
	}

	h := k.getHMAC(MACSHA256)
	h.mac.Write(raw[:outerLen])
	h.mac.Write(inner[:plainLen])
	mac := h.mac.Sum(raw[outerLen:outerLen])
	h.dek.Write(mac)
	dek := h.dek.Sum(h.dekSum[:0])
	blk, err := aes.NewCipher(dek[:16])
	clear(h.dekSum[:])
	k.putHMAC(MACSHA256, h)
	if err != nil {
		return dst, codec.Errorf(codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, "munge: %v", err)
	}
	cipher.NewCBCEncrypter(blk, iv).CryptBlocks(inner, inner)

	dst = append(dst, armorPrefix...)
	dst = b64Encode(dst, raw)
	dst = append(dst, armorSuffix)
	clear(raw)
	return dst, nil
}
