package munge

import (
	"crypto/cipher"

	"golang.org/x/crypto/blowfish"
	"golang.org/x/crypto/cast5"
)

// cbcDecrypt64 decrypts buf (whole 8-byte blocks) in place with one of
// munged's 64-bit-block ciphers in CBC mode, chaining from iv (8 bytes):
// what munged does with EVP_bf_cbc / EVP_cast5_cbc (OpenSSL) or
// GCRY_CIPHER_BLOWFISH / GCRY_CIPHER_CAST5 in GCRY_CIPHER_MODE_CBC
// (libgcrypt), keyed with the cipher's key length (16) of the DEK. The
// IV comes by value so that Decode's own copy stays on its stack.
//
// Unlike the AES path it allocates (the key schedules of x/crypto, and
// the CBC mode), which is fine: munged only makes these credentials when
// a site asks for them (munged --cipher, munge -c). Both ciphers use
// key-dependent S-box lookups, as they do in OpenSSL and libgcrypt.
func cbcDecrypt64(ct uint8, key []byte, iv [8]byte, buf []byte) {
	switch ct {
	case CipherBlowfish:
		b, err := blowfish.NewCipher(key)
		if err != nil {
			panic("munge: blowfish key: " + err.Error()) // unreachable: the key is 16 bytes
		}
		cipher.NewCBCDecrypter(b, iv[:]).CryptBlocks(buf, buf)
		*b = blowfish.Cipher{}
	case CipherCAST5:
		b, err := cast5.NewCipher(key)
		if err != nil {
			panic("munge: cast5 key: " + err.Error()) // unreachable: the key is 16 bytes
		}
		cipher.NewCBCDecrypter(b, iv[:]).CryptBlocks(buf, buf)
		*b = cast5.Cipher{}
	default:
		panic("munge: cbcDecrypt64: not a 64-bit-block cipher")
	}
}
