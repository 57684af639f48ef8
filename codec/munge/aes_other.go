//go:build !amd64

package munge

const haveAESNI = false

func cbcDecryptAESNI(nr int, rk *byte, iv *[16]byte, buf []byte) { panic("no AES-NI") }
