package munge

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"math/rand/v2"
	"testing"
)

// refSbox computes the S-box from its definition (inverse in GF(2^8)
// followed by the affine map), independently of the circuit.
func refSbox(x byte) byte {
	mul := func(a, b byte) byte {
		var p byte
		for b != 0 {
			if b&1 != 0 {
				p ^= a
			}
			a = xtimeByte(a)
			b >>= 1
		}
		return p
	}
	inv := byte(0)
	if x != 0 {
		for c := 1; c < 256; c++ {
			if mul(x, byte(c)) == 1 {
				inv = byte(c)
			}
		}
	}
	rotl := func(b byte, n uint) byte { return b<<n | b>>(8-n) }
	return inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63
}

func TestSboxCircuit(t *testing.T) {
	var fwd [256]byte
	for i := 0; i < 256; i++ {
		fwd[i] = refSbox(byte(i))
	}
	if fwd[0] != 0x63 || fwd[1] != 0x7c || fwd[0x53] != 0xed {
		t.Fatalf("reference S-box wrong: %x %x %x", fwd[0], fwd[1], fwd[0x53])
	}
	for i := 0; i < 256; i += 4 {
		w := [4]byte{byte(i), byte(i + 1), byte(i + 2), byte(i + 3)}
		subWord(&w)
		for j := 0; j < 4; j++ {
			if w[j] != fwd[i+j] {
				t.Fatalf("S(%#x) = %#x, want %#x", i+j, w[j], fwd[i+j])
			}
		}
	}
	for base := 0; base < 256; base += 64 {
		var st [64]byte
		for j := range st {
			st[j] = fwd[base+j]
		}
		invSubBytes(&st)
		for j := range st {
			if int(st[j]) != base+j {
				t.Fatalf("InvS(S(%#x)) = %#x", base+j, st[j])
			}
		}
	}
}

func TestCBCDecryptMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		klen := 16
		if iter%2 == 1 {
			klen = 32
		}
		key := make([]byte, klen)
		var iv [16]byte
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		for i := range iv {
			iv[i] = byte(rng.Uint32())
		}
		nb := 1 + rng.IntN(11)
		pt := make([]byte, 16*nb)
		for i := range pt {
			pt[i] = byte(rng.Uint32())
		}
		b, _ := aes.NewCipher(key)
		ct := make([]byte, len(pt))
		cipher.NewCBCEncrypter(b, iv[:]).CryptBlocks(ct, pt)
		var k aesKey
		k.expand(key)
		sliced := append([]byte(nil), ct...)
		k.cbcDecryptSliced(&iv, sliced)
		if !bytes.Equal(sliced, pt) {
			t.Fatalf("iter %d keylen %d blocks %d: bit-sliced decrypt mismatch", iter, klen, nb)
		}
		if haveAESNI {
			ivBefore := iv
			cbcDecryptAESNI(k.nr, &k.rk[0], &iv, ct)
			if !bytes.Equal(ct, pt) || iv != ivBefore {
				t.Fatalf("iter %d keylen %d blocks %d: AES-NI decrypt mismatch", iter, klen, nb)
			}
		}
	}
}

func BenchmarkAESDecrypt80(b *testing.B) {
	key := make([]byte, 16)
	var iv [16]byte
	buf := make([]byte, 80)
	b.Run("sliced", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var k aesKey
			k.expand(key)
			k.cbcDecryptSliced(&iv, buf)
		}
	})
	if !haveAESNI {
		return
	}
	b.Run("aesni", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var k aesKey
			k.expand(key)
			k.cbcDecrypt(&iv, buf)
		}
	})
}
