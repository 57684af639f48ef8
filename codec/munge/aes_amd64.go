package munge

import "golang.org/x/sys/cpu"

// haveAESNI selects the AES-NI decryptor: the same result as the
// bit-sliced one (the tests check both), a tenth of its time, and as
// free of secret-dependent lookups (the instructions are constant-time).
var haveAESNI = cpu.X86.HasAES && cpu.X86.HasSSE41

// cbcDecryptAESNI decrypts buf (whole 16-byte blocks) in place with the
// encryption key schedule rk of nr rounds, chaining from iv, deriving
// each decryption round key with AESIMC as it goes.
//
//go:noescape
func cbcDecryptAESNI(nr int, rk *byte, iv *[16]byte, buf []byte)
