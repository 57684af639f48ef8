package munge

import (
	"bytes"
	"crypto/cipher"
	"encoding/base64"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/crypto/blowfish"
	"golang.org/x/crypto/cast5"
)

// legacyBig is the compressible payload of the golden credentials below.
var legacyBig = strings.Repeat("legacy cipher ", 40)

// goldenLegacy are real credentials made by munged 0.5.15 (libgcrypt
// build) running with the test key (codec/testdata/slurm-24.11/munge.key)
// through `munge -c CIPHER -m MAC -z ZIP -U uid -G gid ...`, with the
// fields `unmunge -N` printed for each. They exercise Blowfish, CAST5 and
// RIPEMD-160 without a live munged (TestMungedAlgorithmMatrix does the
// same against the host's munged when there is one).
var goldenLegacy = []struct {
	name             string
	cred             string
	cipher, mac, zip uint8
	encodeTime, ttl  uint32
	uid, gid         uint32
	authUID, authGID uint32
	payload          string
}{
	{"bf-rmd160", "MUNGE:AwIEAAAQ4MkhqY6GZVc1aHEKA4b2A4yeNb4Zb9DIVRgm+c2+82xNjDDfP8M62J+Y7mW8lx76/F4RNUPDZoDwjqT4EqIa/D9/DJIJVl04RK8JYziFb5VnO6X+pLx2JSob2g==:", 2, 4, 0, 1796163020, 300, 1000, 1000, UIDAny, GIDAny, "blowfish ripemd160"},
	{"bf-md5-zlib", "MUNGE:AwICAwD2dD/3E8towhQ35sL72w9VSA7Bsl/MhlyZ6Q43zwkTKSQJlUyrNh6m2wl8uCIshF9VrIjooMGUualFTbpAuTBVculLclIZWVSQbZ+iD62bgncgKHgG6wcR/uSozUivwXw=:", 2, 2, 3, 1796163020, 60, 1001, 1002, UIDAny, GIDAny, legacyBig},
	{"bf-sha512-bzlib", "MUNGE:AwIGAgAhrzAGjjZNzuG+Pu4nuTuX/sJFqAVn+ZDkeyNK7STVkyBAS5NZ0UYAIqHPXrDelHw1uaBVQnU/3PyxkNzEiDtRBHSqScS8/ElOmp9s2heE87RzuYwW8l4YWYO+t4V79Dvnc4K2UJ0DIxOhpeKdxQJNNh/gu5+mBLHI4DkYbJnjdshQHiG0X0uzSatAl0h6FiDoRDfWhnz2Rck9R8H6yqnNPfA4yFR+k13sGpQ93JmmDm8jJO5LJTHj7NhrrqCOvOL9FdR3GtmHyQ==:", 2, 6, 2, 1796163020, 300, 4242, 4343, UIDAny, GIDAny, legacyBig},
	{"bf-sha256-empty", "MUNGE:AwIFAACfgrJ6EwebhiNbk7hAdzBy1PcF+vYiTbMTnyV5Wf7n6TQnVewp0r2rmHgTUKw0tHTU2Sv4g5H0l81z574kRhzcik3MwI+gG2nNUpEQVfe5LisG4bwJteTY:", 2, 5, 0, 1796163020, 300, 1000, 1000, UIDAny, GIDAny, ""},
	{"cast5-sha1", "MUNGE:AwMDAABAVvJFkVvbpwwKOGPelziF0x+85axYznP0ufnjrq4ymlyfrzKGd2FD8WvHoStpAz+j9NMVK6QrFbmxgYU7wu9UGL//qEI+QNSdRhy045kklsrbZYU=:", 3, 3, 0, 1796163020, 3600, 1000, 1000, UIDAny, GIDAny, "cast5 sha1 \u0001\u0002"},
	{"cast5-rmd160-bzlib", "MUNGE:AwMEAgBA9Rm3bx3cOltAdfYlb8LJnw+DKKwlzQ0XxPMm80wP3m8bGHC1QZXpfQ5uWcxLzDiugxra1L89U28ng43f9RYe5V9xyXFQhr++LsQOscAJ9yamvAab9HRdorV+j6P1suFl5Dh3RfZzepMUj23ZWRDOlu0rAwxdpfipIQQb4yYLp4ZLHqd5dmLfyOylCBzRUMz/4imUsbSbayeeuug=:", 3, 4, 2, 1796163020, 300, 0, 0, UIDAny, GIDAny, legacyBig},
	{"cast5-sha256-zlib", "MUNGE:AwMFAwDw1FxGFvAOVbJDpPS6MiyObGEZ1DRGQdz7U2WZ/pXxgMxHRyN0UHDD/Xl1Udzy/+L2+TE1CEI5RotsyLqq+0U5mXEVGkeg2npoZHAp/Tagle04UNTyTvatNGcGyCZhcCZegedS07V2yWRg4b+XxBGE:", 3, 5, 3, 1796163020, 300, 1000, 100, UIDAny, GIDAny, legacyBig},
	{"cast5-md5-restricted", "MUNGE:AwMCAACiG1vV4+b79tcPsWcfGRTe7gbfqUA01c5f+oh6gjyC+jRi0pbn7QGFgTbzt/oqIUuhD8Prm4itsnE1gykCkYbkdT8vXQZJLPI=:", 3, 2, 0, 1796163020, 300, 1000, 1000, 0, 0, "r"},
	{"aes128-rmd160", "MUNGE:AwQEAAD+GB3QzkYNGTnyLRPO4N3VGBeL+Acpl4+UMr2JyI12QBtgihO7dKL0BMVaZ1qaYAwvl3n73r7XZFdqoh86u/6uXSx81tt7SdtFFzv4xnDFAOaj9ONj9i12G5v5W1Gg+VgeP5g8:", 4, 4, 0, 1796163020, 300, 1000, 1000, UIDAny, GIDAny, "aes128 ripemd160"},
	{"none-rmd160-zlib", "MUNGE:AwAEAwD46S59MAwaL1MJthYIuj8dokNPrcrKysoAAAJZeJw75PnGetrTYHeWegYGxmx+1zNASoeBgfkFCP+HAgYGJoOc1PTE5EqF5MyCjNQihVHeKA8/DwAC++AE:", 0, 4, 3, 1796163020, 300, 1000, 1000, UIDAny, GIDAny, legacyBig},
}

func TestGoldenLegacyCredentials(t *testing.T) {
	k := testKey(t)
	var scratch []byte
	for _, g := range goldenLegacy {
		t.Run(g.name, func(t *testing.T) {
			var c Cred
			if err := k.Decode([]byte(g.cred), &c, &scratch); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if c.Cipher != g.cipher || c.MAC != g.mac || c.Zip != g.zip || c.EncodeTime != g.encodeTime ||
				c.TTL != g.ttl || c.UID != g.uid || c.GID != g.gid || c.AuthUID != g.authUID ||
				c.AuthGID != g.authGID || string(c.Payload) != g.payload || c.Addr != [4]byte{127, 0, 0, 1} {
				t.Fatalf("decoded %+v (payload %q), unmunge printed %+v", c, c.Payload, g)
			}
			v := NewVerifier(k, fixed(int64(g.encodeTime)), WithIdentity(0, 0))
			if err := v.Verify([]byte(g.cred), &c); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if err := v.Verify([]byte(g.cred), &c); err != ErrReplayed {
				t.Fatalf("replay: %v", err)
			}
			// Every bit of the IV, MAC and inner layer is covered by the
			// MAC (directly, or through the decrypted plaintext).
			raw, err := base64.StdEncoding.DecodeString(g.cred[len(armorPrefix) : len(g.cred)-1])
			if err != nil {
				t.Fatal(err)
			}
			for i := 5; i < len(raw); i++ {
				for bit := 0; bit < 8; bit++ {
					raw[i] ^= 1 << bit
					err := k.Decode([]byte(armorPrefix+base64.StdEncoding.EncodeToString(raw)+":"), &c, &scratch)
					raw[i] ^= 1 << bit
					if err != ErrInvalid {
						t.Fatalf("flip byte %d bit %d: %v, want %v", i, bit, err, ErrInvalid)
					}
				}
			}
		})
	}
}

// refPadding is checkPadding written plainly, after munged's
// _cipher_final.
func refPadding(b []byte, bs int) (ok bool, strip int) {
	pad := int(b[len(b)-1])
	if pad < 1 || pad > bs {
		return false, bs
	}
	for _, x := range b[len(b)-pad:] {
		if int(x) != pad {
			return false, bs
		}
	}
	return true, pad
}

func TestCheckPaddingBlockSizes(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for _, bs := range []int{8, 16} {
		for _, blocks := range []int{1, 2, 5} {
			b := make([]byte, bs*blocks)
			for iter := 0; iter < 20000; iter++ {
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				// Mostly near-valid padding, to reach every branch.
				if rng.IntN(4) != 0 {
					pad := rng.IntN(bs+3) + 0
					n := min(pad, len(b))
					for i := len(b) - n; i < len(b); i++ {
						b[i] = byte(pad)
					}
					if n > 0 && rng.IntN(3) == 0 {
						b[len(b)-1-rng.IntN(n)] ^= byte(1 << rng.IntN(8))
					}
				}
				ok, strip := checkPadding(b, bs)
				wok, wstrip := refPadding(b, bs)
				if (ok == 1) != wok || strip != wstrip {
					t.Fatalf("bs %d %x: checkPadding (%d, %d), want (%v, %d)", bs, b[len(b)-bs:], ok, strip, wok, wstrip)
				}
			}
		}
	}
}

func TestCBCDecrypt64MatchesCBCEncrypter(t *testing.T) {
	key := make([]byte, 16)
	var iv [8]byte
	for i := range key {
		key[i] = byte(3*i + 1)
	}
	for _, ct := range []uint8{CipherBlowfish, CipherCAST5} {
		var b cipher.Block
		if ct == CipherBlowfish {
			b, _ = blowfish.NewCipher(key)
		} else {
			b, _ = cast5.NewCipher(key)
		}
		for _, n := range []int{8, 16, 80, 800} {
			plain := bytes.Repeat([]byte{byte(n), 0xa5, 7}, n)[:n]
			buf := bytes.Clone(plain)
			cipher.NewCBCEncrypter(b, iv[:]).CryptBlocks(buf, buf)
			cbcDecrypt64(ct, key, iv, buf)
			if !bytes.Equal(buf, plain) {
				t.Fatalf("cipher %d, %d bytes: round trip differs", ct, n)
			}
		}
	}
}

// TestPaddingOracleClosed64 is TestPaddingOracleClosed for the 8-byte
// block ciphers: a correct MAC with broken padding looks like a bad MAC,
// and so does a pad byte that is valid for AES (9 to 16) but not here.
func TestPaddingOracleClosed64(t *testing.T) {
	k := testKey(t)
	for _, ct := range []uint8{CipherBlowfish, CipherCAST5} {
		for _, flip := range []byte{1, 8, 0x10} {
			cred := seal(t, k, ct, MACSHA256, ZipNone, nil, innerBytes(nil, 4))
			raw, _ := base64.StdEncoding.DecodeString(string(cred[6 : len(cred)-1]))
			raw[len(raw)-9] ^= flip // last byte of the previous block: flips the pad byte
			var c Cred
			wantErr(t, fmt.Sprintf("cipher %d flip %#x", ct, flip), k.Decode([]byte("MUNGE:"+base64.StdEncoding.EncodeToString(raw)+":"), &c, nil), ErrInvalid, ReasonInvalid)
		}
		// Padding that AES would accept but an 8-byte block cannot hold
		// (munged's _cipher_final: pad <= block size), with a MAC that
		// matches once it is stripped: refused all the same.
		inner := innerBytes([]byte("abc"), 4) // 44 bytes
		var c Cred
		for _, pad := range []int{4, 12} {
			err := k.Decode(sealPad(t, k, ct, MACSHA256, ZipNone, nil, inner, pad), &c, nil)
			if pad == 4 {
				wantErr(t, fmt.Sprintf("cipher %d pad %d", ct, pad), err, nil, 0)
			} else {
				wantErr(t, fmt.Sprintf("cipher %d pad %d", ct, pad), err, ErrInvalid, ReasonInvalid)
			}
		}
	}
}

// The AES and unencrypted paths stay allocation-free with RIPEMD-160 too;
// Blowfish and CAST5 may allocate (their key schedules), but not without
// bound.
func TestDecodeAllocsByAlgorithm(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	k := testKey(t)
	var scratch []byte
	for _, a := range sealAlgs {
		cred := seal(t, k, a[0], a[1], ZipNone, nil, innerBytes([]byte("hello"), 4))
		var c Cred
		n := testing.AllocsPerRun(100, func() {
			if err := k.Decode(cred, &c, &scratch); err != nil {
				t.Fatal(err)
			}
		})
		limit := 0.0
		if a[0] == CipherBlowfish || a[0] == CipherCAST5 {
			limit = 8
		}
		if n > limit {
			t.Errorf("cipher %d mac %d: %v allocs per Decode, want at most %v", a[0], a[1], n, limit)
		}
	}
}
