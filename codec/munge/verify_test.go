package munge

import (
	"bytes"
	"compress/zlib"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"golang.org/x/crypto/blowfish"
	"golang.org/x/crypto/cast5"
)

const t0 = 1796056996 // a captured encode time

func fixed(sec int64) Option {
	return WithClock(func() time.Time { return time.Unix(sec, 0) })
}

func mustEncode(t testing.TB, k *Key, c Cred) []byte {
	t.Helper()
	out, err := k.Encode(nil, &c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func baseCred() Cred {
	return Cred{Addr: [4]byte{10, 1, 2, 3}, EncodeTime: t0, TTL: 300, UID: 1000, GID: 1000,
		AuthUID: UIDAny, AuthGID: GIDAny, Payload: []byte("payload")}
}

func wantErr(t *testing.T, what string, got, want error, reason Reason) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	if want == nil {
		return
	}
	if codec.CodeOf(got) != codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR {
		t.Fatalf("%s: code %d, want 1007", what, codec.CodeOf(got))
	}
	if r := ReasonOf(got); r != reason {
		t.Fatalf("%s: reason %v, want %v", what, r, reason)
	}
}

func TestEncodeVerifyRoundTrip(t *testing.T) {
	k := testKey(t)
	for _, n := range []int{0, 1, 15, 16, 33, 1000, 100000} {
		c := baseCred()
		c.Payload = bytes.Repeat([]byte{0xa5}, n)
		armored := mustEncode(t, k, c)
		if !bytes.HasPrefix(armored, []byte("MUNGE:")) || armored[len(armored)-1] != ':' {
			t.Fatalf("armor %q", armored[:10])
		}
		v := NewVerifier(k, fixed(t0), WithIdentity(0, 0))
		var got Cred
		if err := v.Verify(armored, &got); err != nil {
			t.Fatalf("payload %d: %v", n, err)
		}
		if got.Cipher != CipherAES128 || got.MAC != MACSHA256 || got.Zip != ZipNone || got.Addr != c.Addr ||
			got.EncodeTime != c.EncodeTime || got.TTL != c.TTL || got.UID != c.UID || got.GID != c.GID ||
			got.AuthUID != c.AuthUID || got.AuthGID != c.AuthGID || !bytes.Equal(got.Payload, c.Payload) {
			t.Fatalf("payload %d: round trip %+v", n, got)
		}
	}
	// munged's ttl normalisation.
	for _, tc := range []struct{ in, want uint32 }{{0, DefaultTTL}, {60, 60}, {7200, MaxTTL}} {
		c := baseCred()
		c.TTL = tc.in
		var got Cred
		if err := k.Decode(mustEncode(t, k, c), &got, nil); err != nil || got.TTL != tc.want {
			t.Fatalf("ttl %d: got %d (%v), want %d", tc.in, got.TTL, err, tc.want)
		}
	}
}

func TestVerifyErrors(t *testing.T) {
	k := testKey(t)
	c := baseCred()
	cred := mustEncode(t, k, c)
	var got Cred

	// Time window: [t0 - ttl, t0 + ttl], both ends included.
	for _, tc := range []struct {
		now    int64
		want   error
		reason Reason
	}{
		{t0, nil, 0}, {t0 + 300, nil, 0}, {t0 - 300, nil, 0},
		{t0 + 301, ErrExpired, ReasonExpired}, {t0 + 86400, ErrExpired, ReasonExpired},
		{t0 - 301, ErrRewound, ReasonRewound}, {t0 - 86400, ErrRewound, ReasonRewound},
	} {
		v := NewVerifier(k, fixed(tc.now), WithIdentity(0, 0))
		wantErr(t, fmt.Sprintf("now=t0%+d", tc.now-t0), v.Verify(cred, &got), tc.want, tc.reason)
		if tc.want != nil && (got.UID != c.UID || !bytes.Equal(got.Payload, c.Payload)) {
			t.Fatalf("expired/rewound credential not filled in: %+v", got)
		}
	}

	// Replay: rejected while live, whatever the clock says inside the window.
	v := NewVerifier(k, fixed(t0), WithIdentity(0, 0))
	wantErr(t, "first", v.Verify(cred, &got), nil, 0)
	wantErr(t, "replay", v.Verify(cred, &got), ErrReplayed, ReasonReplayed)
	wantErr(t, "replay with NUL", v.Verify(append(bytes.Clone(cred), 0), &got), ErrReplayed, ReasonReplayed)
	other := mustEncode(t, k, c) // same fields, new salt/IV: a different credential
	wantErr(t, "fresh", v.Verify(other, &got), nil, 0)

	// Restrictions: root is not exempt.
	r := baseCred()
	r.AuthUID = 1000
	restricted := mustEncode(t, k, r)
	wantErr(t, "uid restricted, root", NewVerifier(k, fixed(t0), WithIdentity(0, 0)).Verify(restricted, &got), ErrUnauthorized, ReasonUnauthorized)
	wantErr(t, "uid restricted, 1000", NewVerifier(k, fixed(t0), WithIdentity(1000, 1000)).Verify(restricted, &got), nil, 0)
	r = baseCred()
	r.AuthGID = 5
	restricted = mustEncode(t, k, r)
	wantErr(t, "gid restricted", NewVerifier(k, fixed(t0), WithIdentity(0, 0)).Verify(restricted, &got), ErrUnauthorized, ReasonUnauthorized)
	wantErr(t, "gid supplementary", NewVerifier(k, fixed(t0), WithIdentity(0, 0, 5)).Verify(restricted, &got), nil, 0)
	// The restriction is checked before the time (munged's order).
	r.AuthGID = 6
	wantErr(t, "unauthorized and expired", NewVerifier(k, fixed(t0+9999), WithIdentity(0, 0)).Verify(mustEncode(t, k, r), &got), ErrUnauthorized, ReasonUnauthorized)

	// SLURM_AUTH_NOBODY.
	for _, f := range []func(*Cred){func(c *Cred) { c.UID = 99 }, func(c *Cred) { c.GID = 99 }} {
		n := baseCred()
		f(&n)
		wantErr(t, "nobody", NewVerifier(k, fixed(t0), WithIdentity(0, 0)).Verify(mustEncode(t, k, n), &got), ErrNobody, ReasonNobody)
	}

	// Max ttl caps the credential's ttl before the time check.
	v = NewVerifier(k, fixed(t0+61), WithIdentity(0, 0), WithMaxTTL(60))
	wantErr(t, "max ttl", v.Verify(cred, &got), ErrExpired, ReasonExpired)
	if got.TTL != 60 {
		t.Fatalf("capped ttl %d", got.TTL)
	}

	// A credential with ttl 0 (munged never writes one: it turns a
	// requested 0 into 300) is valid only in its encode second.
	z := baseCred()
	zero, err := k.encode(nil, &z, rand.Reader, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "ttl 0 at t0", NewVerifier(k, fixed(t0), WithIdentity(0, 0)).Verify(zero, &got), nil, 0)
	wantErr(t, "ttl 0 after", NewVerifier(k, fixed(t0+1), WithIdentity(0, 0)).Verify(zero, &got), ErrExpired, ReasonExpired)
	wantErr(t, "ttl 0 before", NewVerifier(k, fixed(t0-1), WithIdentity(0, 0)).Verify(zero, &got), ErrRewound, ReasonRewound)

	// Wrong key.
	raw := bytes.Repeat([]byte{7}, 32)
	k2, _ := NewKey(raw)
	wantErr(t, "wrong key", NewVerifier(k2, fixed(t0), WithIdentity(0, 0)).Verify(cred, &got), ErrInvalid, ReasonInvalid)
}

func TestReplayExpiryAndCapacity(t *testing.T) {
	k := testKey(t)
	now := int64(t0)
	v := NewVerifier(k, WithClock(func() time.Time { return time.Unix(now, 0) }), WithIdentity(0, 0), WithReplayCapacity(replayShards))
	// One entry per shard: a full cache keeps serving, forgetting its
	// oldest entries instead of refusing valid credentials.
	c := baseCred()
	c.TTL = 10
	var got Cred
	var first []byte
	for i := 0; i < 2000; i++ {
		cred := mustEncode(t, k, c)
		if first == nil {
			first = cred
		}
		if err := v.Verify(cred, &got); err != nil {
			t.Fatalf("credential %d refused: %v", i, err)
		}
	}
	if v.Evicted() == 0 {
		t.Fatal("a cache of 64 entries took 2000 credentials without evicting")
	}
	// The newest credential is still remembered.
	last := mustEncode(t, k, c)
	if err := v.Verify(last, &got); err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(last, &got); err != ErrReplayed {
		t.Fatalf("replay of the newest credential: %v", err)
	}
	// Once the entries expire they leave without scanning and room comes back.
	now += 11
	c.EncodeTime = uint32(now)
	ev := v.Evicted()
	for i := 0; i < 50; i++ {
		if err := v.Verify(mustEncode(t, k, c), &got); err != nil {
			t.Fatal(err)
		}
	}
	n := v.replay.len()
	if n == 0 || n > replayShards {
		t.Fatalf("%d entries after expiry", n)
	}
	if v.Evicted() != ev && n < 50 && n == replayShards {
		t.Fatalf("expired entries were evicted instead of expiring")
	}
}

func TestKeyErrors(t *testing.T) {
	if _, err := NewKey(make([]byte, 31)); err == nil {
		t.Fatal("31-byte key accepted")
	}
	if _, err := NewKey(make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	_, err := LoadKey("/nonexistent/munge.key")
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("/nonexistent/munge.key")) {
		t.Fatalf("LoadKey error %v does not name the file", err)
	}
}

// seal builds a credential with arbitrary outer fields and inner bytes,
// independently of Encode (stdlib crypto only), to reach Decode's paths.
func seal(t testing.TB, k *Key, cipherType, macType, zip uint8, realm, inner []byte) []byte {
	t.Helper()
	return sealPad(t, k, cipherType, macType, zip, realm, inner, 0)
}

// sealPad is seal with pad bytes of padding (each equal to pad) instead
// of the correct PKCS#7 padding when pad > 0, the MAC still over inner
// alone: a credential only a key holder could make, which munged refuses
// unless pad is the right padding.
func sealPad(t testing.TB, k *Key, cipherType, macType, zip uint8, realm, inner []byte, pad int) []byte {
	t.Helper()
	outer := []byte{CredVersion, cipherType, macType, zip, byte(len(realm))}
	outer = append(outer, realm...)
	keyLen, ivLen := cipherSizes(cipherType)
	iv := make([]byte, ivLen)
	rand.Read(iv)
	outer = append(outer, iv...)
	h := hmac.New(macHash(macType), k.mac[:])
	h.Write(outer)
	h.Write(inner)
	mac := h.Sum(nil)
	body := inner
	if cipherType != CipherNone {
		d := hmac.New(macHash(macType), k.dek[:])
		d.Write(mac)
		dek := append(d.Sum(nil), make([]byte, 32)...)[:keyLen] // short MACs are refused before use
		if pad == 0 {
			pad = ivLen - len(inner)%ivLen
		}
		body = append(bytes.Clone(inner), bytes.Repeat([]byte{byte(pad)}, pad)...)
		var b cipher.Block
		switch cipherType {
		case CipherBlowfish:
			b, _ = blowfish.NewCipher(dek)
		case CipherCAST5:
			b, _ = cast5.NewCipher(dek)
		default:
			b, _ = aes.NewCipher(dek)
		}
		cipher.NewCBCEncrypter(b, iv).CryptBlocks(body, body)
	}
	raw := append(append(outer, mac...), body...)
	return []byte("MUNGE:" + base64.StdEncoding.EncodeToString(raw) + ":")
}

func innerBytes(payload []byte, addrLen int) []byte {
	b := make([]byte, saltLen, 64)
	b = append(b, byte(addrLen))
	b = append(b, make([]byte, addrLen)...)
	for _, v := range []uint32{t0, 300, 1000, 1000, UIDAny, GIDAny, uint32(len(payload))} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return append(b, payload...)
}

func TestDecodeAlgorithms(t *testing.T) {
	k := testKey(t)
	inner := innerBytes([]byte("hello"), 4)
	for _, ci := range []uint8{CipherNone, CipherBlowfish, CipherCAST5, CipherAES128, CipherAES256} {
		for _, m := range []uint8{MACMD5, MACSHA1, MACRIPEMD160, MACSHA256, MACSHA512} {
			cred := seal(t, k, ci, m, ZipNone, nil, inner)
			var c Cred
			err := k.Decode(cred, &c, nil)
			if ci == CipherAES256 && macSize(m) < 32 {
				wantErr(t, fmt.Sprintf("cipher %d mac %d", ci, m), err, ErrMACTooShort, ReasonBadMAC)
				continue
			}
			if err != nil || string(c.Payload) != "hello" || c.Cipher != ci || c.MAC != m {
				t.Fatalf("cipher %d mac %d: %v %+v", ci, m, err, c)
			}
		}
	}
	// A realm is carried through (munged does not check it).
	var c Cred
	if err := k.Decode(seal(t, k, CipherAES128, MACSHA256, ZipNone, []byte("realm"), inner), &c, nil); err != nil || string(c.Realm) != "realm" {
		t.Fatalf("realm: %v %q", err, c.Realm)
	}
	// zlib: munged's 8-byte header, then a zlib stream.
	var zb bytes.Buffer
	zw := zlib.NewWriter(&zb)
	zw.Write(inner)
	zw.Close()
	zipped := binary.BigEndian.AppendUint32(nil, zipMagic)
	zipped = binary.BigEndian.AppendUint32(zipped, uint32(len(inner)))
	zipped = append(zipped, zb.Bytes()...)
	if err := k.Decode(seal(t, k, CipherAES128, MACSHA256, ZipZlib, nil, zipped), &c, nil); err != nil || string(c.Payload) != "hello" {
		t.Fatalf("zlib: %v %+v", err, c)
	}
	bad := bytes.Clone(zipped)
	binary.BigEndian.PutUint32(bad[4:], uint32(len(inner)+1))
	wantErr(t, "zlib length", k.Decode(seal(t, k, CipherAES128, MACSHA256, ZipZlib, nil, bad), &c, nil), ErrInvalid, ReasonInvalid)
}

func TestDecodeMalformed(t *testing.T) {
	k := testKey(t)
	armor := func(raw ...byte) []byte { return []byte("MUNGE:" + base64.StdEncoding.EncodeToString(raw) + ":") }
	sealed := func(inner []byte) []byte { return seal(t, k, CipherAES128, MACSHA256, ZipNone, nil, inner) }
	long := innerBytes([]byte("x"), 4)
	binary.BigEndian.PutUint32(long[len(long)-5:], 2) // data_len 2, 1 byte follows
	huge := innerBytes(nil, 4)
	binary.BigEndian.PutUint32(huge[len(huge)-4:], MaxPayload+1)
	huge = append(huge, make([]byte, MaxPayload+1)...)
	for _, tc := range []struct {
		name   string
		in     []byte
		want   error
		reason Reason
	}{
		{"empty", nil, ErrNoCred, ReasonBadArg},
		{"spaces", []byte(" \t\n"), ErrNoCred, ReasonBadArg},
		{"NUL", []byte{0}, ErrNoCred, ReasonBadArg},
		{"too long", make([]byte, MaxRequest+1), ErrTooLong, ReasonBadLength},
		{"prefix", []byte("MUNGX:AAAA:"), ErrBadPrefix, ReasonBadCred},
		{"suffix", []byte("MUNGE:AAAA"), ErrBadSuffix, ReasonBadCred},
		{"base64 char", []byte("MUNGE:AA*A:"), ErrBadBase64, ReasonBadCred},
		{"base64 padding", []byte("MUNGE:AAA:"), ErrBadBase64, ReasonBadCred},
		{"base64 after pad", []byte("MUNGE:AA=A:"), ErrBadBase64, ReasonBadCred},
		{"empty body", []byte("MUNGE::"), ErrTruncated, ReasonBadCred},
		{"version", armor(2, 4, 5, 0, 0), ErrBadVersion, ReasonBadVersion},
		{"cipher default", armor(3, 1, 5, 0, 0), ErrBadCipher, ReasonBadCipher},
		{"cipher 9", armor(3, 9, 5, 0, 0), ErrBadCipher, ReasonBadCipher},
		{"cipher 6", armor(3, 6, 5, 0, 0), ErrBadCipher, ReasonBadCipher},
		{"cipher 255", armor(3, 255, 5, 0, 0), ErrBadCipher, ReasonBadCipher},
		{"mac none", armor(3, 4, 0, 0, 0), ErrBadMAC, ReasonBadMAC},
		{"mac default", armor(3, 4, 1, 0, 0), ErrBadMAC, ReasonBadMAC},
		{"mac 7", armor(3, 4, 7, 0, 0), ErrBadMAC, ReasonBadMAC},
		{"md5 with aes256", armor(3, 5, 2, 0, 0), ErrMACTooShort, ReasonBadMAC},
		{"sha1 with aes256", armor(3, 5, 3, 0, 0), ErrMACTooShort, ReasonBadMAC},
		{"ripemd160 with aes256", armor(3, 5, 4, 0, 0), ErrMACTooShort, ReasonBadMAC},
		{"truncated ripemd160", armor(3, 4, 4, 0, 0), ErrTruncated, ReasonBadCred},
		{"truncated blowfish iv", armor(3, 2, 5, 0, 0, 1, 2, 3, 4, 5, 6, 7), ErrTruncated, ReasonBadCred},
		{"blowfish partial block", armor(append([]byte{3, 2, 5, 0, 0}, make([]byte, 8+32+7)...)...), ErrInvalid, ReasonInvalid},
		{"cast5 no inner", armor(append([]byte{3, 3, 2, 0, 0}, make([]byte, 8+16)...)...), ErrInvalid, ReasonInvalid},
		{"cast5 bad mac", armor(append([]byte{3, 3, 4, 0, 0}, make([]byte, 8+20+16)...)...), ErrInvalid, ReasonInvalid},
		{"zip default", armor(3, 4, 5, 1, 0), ErrBadZip, ReasonBadZip},
		{"truncated realm", armor(3, 4, 5, 0, 9, 1), ErrTruncated, ReasonBadCred},
		{"truncated iv", armor(3, 4, 5, 0, 0, 1, 2), ErrTruncated, ReasonBadCred},
		{"truncated mac", armor(append([]byte{3, 4, 5, 0, 0}, make([]byte, 20)...)...), ErrTruncated, ReasonBadCred},
		{"no inner", armor(append([]byte{3, 4, 5, 0, 0}, make([]byte, 48)...)...), ErrInvalid, ReasonInvalid},
		{"partial block", armor(append([]byte{3, 4, 5, 0, 0}, make([]byte, 48+15)...)...), ErrInvalid, ReasonInvalid},
		{"bad mac", armor(append([]byte{3, 4, 5, 0, 0}, make([]byte, 48+32)...)...), ErrInvalid, ReasonInvalid},
		{"addr len 3", sealed(innerBytes(nil, 3)), ErrBadAddrLen, ReasonBadCred},
		{"addr len 0", sealed(innerBytes(nil, 0)), nil, 0},
		{"short inner", sealed(make([]byte, 7)), ErrTruncated, ReasonBadCred},
		{"short fields", sealed(innerBytes(nil, 4)[:30]), ErrTruncated, ReasonBadCred},
		{"payload past end", sealed(long), ErrTruncated, ReasonBadCred},
		{"trailing", sealed(append(innerBytes(nil, 4), 0)), ErrTrailing, ReasonBadCred},
		{"payload too big", sealed(huge), ErrPayloadLen, ReasonBadLength},
		{"whitespace inside", bytes.ReplaceAll(sealed(innerBytes(nil, 4)), []byte("A"), []byte(" A\r\n")), nil, 0},
		{"leading space, trailing junk", append([]byte("  "), append(sealed(innerBytes(nil, 4)), "\n\x00junk"...)...), nil, 0},
	} {
		var c Cred
		wantErr(t, tc.name, k.Decode(tc.in, &c, nil), tc.want, tc.reason)
	}
}

func TestPaddingOracleClosed(t *testing.T) {
	// A correct MAC with broken padding must look exactly like a bad MAC.
	k := testKey(t)
	cred := seal(t, k, CipherAES128, MACSHA256, ZipNone, nil, innerBytes(nil, 4))
	raw, _ := base64.StdEncoding.DecodeString(string(cred[6 : len(cred)-1]))
	raw[len(raw)-17] ^= 1 // last byte of the previous block: flips the pad byte
	var c Cred
	wantErr(t, "padding", k.Decode([]byte("MUNGE:"+base64.StdEncoding.EncodeToString(raw)+":"), &c, nil), ErrInvalid, ReasonInvalid)
}

func TestCheckBodyHash(t *testing.T) {
	body := []byte("some body")
	const typ = 2003
	if err := CheckBodyHash(nil, typ, body); err != nil {
		t.Fatal("empty payload refused")
	}
	if err := CheckBodyHash([]byte{1, 0x07, 0xd3}, typ, body); err != nil {
		t.Fatal("NONE form refused")
	}
	if p := BodyHash(nil, HashNone, typ, body); !bytes.Equal(p, []byte{1, 0x07, 0xd3}) {
		t.Fatalf("NONE form %x", p)
	}
	for _, p := range [][]byte{{1, 0xd3, 0x07}, {1, 0x07}, {1, 0x07, 0xd3, 0}} {
		if err := CheckBodyHash(p, typ, body); err != ErrHashNone {
			t.Fatalf("NONE %x: %v", p, err)
		}
	}
	k12 := BodyHash(nil, HashK12, typ, body)
	if len(k12) != 33 || k12[0] != HashK12 || CheckBodyHash(k12, typ, body) != nil {
		t.Fatalf("K12 %x", k12)
	}
	if !bytes.Equal(BodyHash(nil, HashDefault, typ, body), k12) {
		t.Fatal("DEFAULT is not written as K12")
	}
	def := append([]byte{HashDefault}, k12[1:]...)
	if err := CheckBodyHash(def, typ, body); err != nil {
		t.Fatalf("DEFAULT type with K12 digest: %v", err)
	}
	if err := CheckBodyHash(k12[:32], typ, body); err != ErrHashMismatch || codec.CodeOf(err) != codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Fatalf("short K12: %v", err)
	}
	sha3 := BodyHash(nil, HashSHA3, typ, body)
	if len(sha3) != 33 || sha3[0] != HashSHA3 {
		t.Fatalf("SHA3 %x", sha3)
	}
	if err := CheckBodyHash(sha3, typ, body); err != ErrHashType {
		t.Fatalf("SHA3 accepted by default: %v", err)
	}
	if p := BodyHash([]byte{9}, HashSHA256, typ, body); !bytes.Equal(p, []byte{9}) {
		t.Fatalf("SHA256 (no plugin) appended %x", p)
	}
	// KangarooTwelve test vector (empty message and customization).
	var sum [32]byte
	k12Sum(&sum, nil, nil)
	if fmt.Sprintf("%X", sum) != "1AC2D450FC3B4205D19DA7BFCA1B37513C0803577AC7167F06FE2CE1F0EF39E5" {
		t.Fatalf("K12('') = %X", sum)
	}
	// Tree mode (bodies over 8 KiB, e.g. big batch scripts) agrees with
	// itself across write patterns, and differs per msg_type.
	big := make([]byte, 70000)
	rng := mrand.New(mrand.NewPCG(3, 4))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	h1 := BodyHash(nil, HashK12, typ, big)
	if CheckBodyHash(h1, typ, big) != nil || CheckBodyHash(h1, typ+1, big) == nil {
		t.Fatal("big body")
	}
}

func TestDecodeZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	k := testKey(t)
	cc := capturedCreds(t)[0]
	var c Cred
	var scratch []byte
	n := testing.AllocsPerRun(200, func() {
		if err := k.Decode(cc.cred, &c, &scratch); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("Decode: %v allocs per call", n)
	}
	// Failures are preallocated too.
	bad := bytes.Clone(cc.cred)
	bad[40] ^= 1
	n = testing.AllocsPerRun(200, func() { _ = k.Decode(bad, &c, &scratch) })
	if n != 0 {
		t.Fatalf("failing Decode: %v allocs per call", n)
	}
}

func TestVerifyZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	k := testKey(t)
	const n = 1000
	creds := make([][]byte, 2*n+2)
	c := baseCred()
	c.Payload = make([]byte, 33)
	for i := range creds {
		creds[i] = mustEncode(t, k, c)
	}
	v := NewVerifier(k, fixed(t0), WithIdentity(0, 0))
	var got Cred
	// Grow the replay maps to their working size, then empty them: in
	// steady state entries come and go without the maps growing.
	for _, cr := range creds[:n+1] {
		if err := v.Verify(cr, &got); err != nil {
			t.Fatal(err)
		}
	}
	v.replay.reset()
	i := n + 1
	allocs := testing.AllocsPerRun(n, func() {
		if err := v.Verify(creds[i], &got); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("Verify: %v allocs per call", allocs)
	}
	allocs = testing.AllocsPerRun(100, func() {
		if err := v.Verify(creds[n+1], &got); err != ErrReplayed {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("replayed Verify: %v allocs per call", allocs)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	k := testKey(t)
	c := baseCred()
	const workers, each = 8, 200
	creds := make([][]byte, workers*each)
	for i := range creds {
		creds[i] = mustEncode(t, k, c)
	}
	v := NewVerifier(k, fixed(t0), WithIdentity(0, 0))
	errs := make(chan error, 2*workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			var got Cred
			for i := 0; i < len(creds); i++ {
				// Every worker tries every credential: exactly one
				// success per credential overall.
				err := v.Verify(creds[(i+w*each)%len(creds)], &got)
				if err != nil && err != ErrReplayed {
					errs <- err
					return
				}
				if err == nil && !bytes.Equal(got.Payload, c.Payload) {
					errs <- fmt.Errorf("payload %q", got.Payload)
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	total := v.replay.len()
	if total != len(creds) {
		t.Fatalf("%d replay entries, want %d", total, len(creds))
	}
}

func BenchmarkVerify(b *testing.B) {
	k := testKey(b)
	c := baseCred()
	c.Payload = make([]byte, 33) // a Slurm body hash
	const pool = 1 << 14
	creds := make([][]byte, pool)
	for i := range creds {
		creds[i] = mustEncode(b, k, c)
	}
	v := NewVerifier(k, fixed(t0), WithIdentity(0, 0))
	var got Cred
	for _, cr := range creds {
		_ = v.Verify(cr, &got)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%pool == 0 {
			b.StopTimer()
			v.replay.reset() // keeps map capacity
			b.StartTimer()
		}
		if err := v.Verify(creds[i%pool], &got); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkDecode(b *testing.B) {
	k := testKey(b)
	cc := capturedCreds(b)[0]
	var c Cred
	var scratch []byte
	b.ReportAllocs()
	for b.Loop() {
		if err := k.Decode(cc.cred, &c, &scratch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	k := testKey(b)
	c := baseCred()
	c.Payload = make([]byte, 33)
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = k.Encode(dst[:0], &c, rand.Reader)
	}
}

func BenchmarkBodyHashK12(b *testing.B) {
	body := make([]byte, 2000)
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		dst = BodyHash(dst[:0], HashK12, 4003, body)
	}
}

func FuzzDecode(f *testing.F) {
	k := testKey(f)
	for _, cc := range capturedCreds(f) {
		f.Add(cc.cred)
	}
	f.Add(seal(f, k, CipherNone, MACSHA1, ZipNone, []byte("r"), innerBytes([]byte("p"), 4)))
	f.Add(seal(f, k, CipherAES256, MACSHA512, ZipNone, nil, innerBytes(nil, 0)))
	// Real munged credentials with Blowfish, CAST5 and RIPEMD-160, and
	// compression under each 64-bit-block cipher.
	for _, g := range goldenLegacy {
		f.Add([]byte(g.cred))
	}
	f.Add(seal(f, k, CipherBlowfish, MACRIPEMD160, ZipNone, []byte("realm"), innerBytes([]byte("p"), 4)))
	f.Add(seal(f, k, CipherCAST5, MACMD5, ZipNone, nil, innerBytes(nil, 0)))
	var scratch []byte
	f.Fuzz(func(t *testing.T, in []byte) {
		var c Cred
		err := k.Decode(in, &c, &scratch)
		if err != nil {
			if ReasonOf(err) == ReasonSnafu || codec.CodeOf(err) != codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(c.Payload) > MaxPayload {
			t.Fatal("payload over the limit")
		}
	})
}

// sealAlgs are the cipher and MAC pairs FuzzDecodeInner seals with:
// munged's default first, then each cipher with a MAC munged accepts
// for it.
var sealAlgs = [...][2]uint8{
	{CipherAES128, MACSHA256}, {CipherNone, MACMD5}, {CipherBlowfish, MACRIPEMD160},
	{CipherCAST5, MACSHA1}, {CipherAES256, MACSHA512}, {CipherBlowfish, MACMD5},
	{CipherCAST5, MACRIPEMD160}, {CipherAES128, MACRIPEMD160},
}

// FuzzDecodeInner seals arbitrary inner layers with the right key, so the
// MAC passes and the inner parser and decompressors get fuzzed too, under
// each cipher (alg picks one of sealAlgs).
func FuzzDecodeInner(f *testing.F) {
	k := testKey(f)
	f.Add(innerBytes([]byte("hello"), 4), uint8(ZipNone), uint8(0))
	f.Add(innerBytes(nil, 0), uint8(ZipZlib), uint8(0))
	f.Add([]byte{0xca, 0xca, 0xca, 0xca, 0, 0, 0, 9, 0x78, 0x9c}, uint8(ZipZlib), uint8(0))
	f.Add([]byte{0xca, 0xca, 0xca, 0xca, 0, 0, 0, 9, 'B', 'Z', 'h', '9'}, uint8(ZipBzlib), uint8(0))
	f.Add(innerBytes([]byte("blowfish"), 4), uint8(ZipNone), uint8(2))
	f.Add(innerBytes([]byte("cast5"), 0), uint8(ZipNone), uint8(3))
	f.Add([]byte{0xca, 0xca, 0xca, 0xca, 0, 0, 0, 9, 0x78, 0x9c}, uint8(ZipZlib), uint8(5))
	f.Add([]byte{0xca, 0xca, 0xca, 0xca, 0, 0, 0, 9, 'B', 'Z', 'h', '9'}, uint8(ZipBzlib), uint8(6))
	var scratch []byte
	f.Fuzz(func(t *testing.T, inner []byte, zip, alg uint8) {
		zip %= 4
		if zip == ZipDefault || len(inner) > 1<<16 {
			return
		}
		a := sealAlgs[int(alg)%len(sealAlgs)]
		var c Cred
		err := k.Decode(seal(t, k, a[0], a[1], zip, nil, inner), &c, &scratch)
		if err == ErrInvalid && zip == ZipNone {
			t.Fatal("MAC failed on a sealed credential")
		}
		if err != nil && ReasonOf(err) == ReasonSnafu {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// The replay cache against a plain map: random credentials, replays of
// live and expired ones, time moving on, shards filling and emptying
// (index deletions with wrap-around included); every live entry stays
// findable and nothing else is reported as a replay.
func TestReplayCacheMatchesModel(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	for _, capacity := range []int{replayShards, 64 * replayShards, 1 << 20} {
		rc := newReplayCache(capacity)
		model := map[replayKey]bool{}
		var seen []replayKey
		now := int64(1_700_000_000)
		for step := 0; step < 60000; step++ {
			var k replayKey
			if len(seen) > 0 && rng.IntN(4) == 0 {
				k = seen[rng.IntN(len(seen))] // a replay attempt
			} else {
				for i := range k.mac {
					k.mac[i] = byte(rng.Uint32())
				}
				k.mac[0] = byte(rng.IntN(4)) // crowd a few shards
				k.exp = now + 5
				seen = append(seen, k)
				if len(seen) > 5000 {
					seen = seen[1:]
				}
			}
			if rng.IntN(500) == 0 {
				now++
				for mk := range model {
					if mk.exp < now {
						delete(model, mk)
					}
				}
			}
			err := rc.insert(k, now)
			if k.exp < now {
				continue // the verifier rejects it as expired before asking
			}
			switch {
			case model[k] && err != ErrReplayed && capacity >= 1<<20:
				t.Fatalf("cap %d step %d: replay of a live credential accepted", capacity, step)
			case !model[k] && err != nil:
				t.Fatalf("cap %d step %d: new credential refused: %v", capacity, step, err)
			}
			model[k] = true
			if step%500 == 0 {
				checkReplayIndex(t, rc)
			}
		}
		checkReplayIndex(t, rc)
	}
}

// checkReplayIndex checks that each shard's index holds exactly its live
// entries, each findable.
func checkReplayIndex(t *testing.T, rc *replayCache) {
	t.Helper()
	for i := range rc.shards {
		s := &rc.shards[i]
		used := 0
		for _, p := range s.idx {
			if p != 0 {
				used++
			}
		}
		if used != s.n {
			t.Fatalf("shard %d: %d index slots for %d entries", i, used, s.n)
		}
		for j := 0; j < s.n; j++ {
			if s.find(s.q[(s.head+j)%len(s.q)]) < 0 {
				t.Fatalf("shard %d: entry %d not found", i, j)
			}
		}
	}
}
