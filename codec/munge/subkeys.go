package munge

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"sync"

	"golang.org/x/crypto/ripemd160" // deprecated as a choice for new designs; munged MAC type 4
)

// Key lengths munged enforces on the key file (munge_defs.h).
const (
	MinKeyLen = 32 // MUNGE_KEY_LEN_MIN_BYTES: munged refuses to start below this
	// maxKeyFile bounds what LoadKey reads: mungekey writes 1024 at most,
	// munged reads any length, but a huge file is surely not a key.
	maxKeyFile = 1 << 20
)

// Key is a MUNGE key reduced to the two subkeys munged derives from it
// (conf.c create_subkeys): DEK subkey = SHA1(key || "1"), MAC subkey =
// SHA1(key || "2"), whatever cipher and MAC a credential uses. It is safe
// for concurrent use.
type Key struct {
	dek [sha1.Size]byte
	mac [sha1.Size]byte
	// pools[m] holds *hmacPair for MAC type m, so Decode reuses keyed
	// HMAC states instead of allocating them.
	pools [macLast]sync.Pool
}

// hmacPair is one goroutine's HMAC states for one MAC type.
type hmacPair struct {
	mac, dek hash.Hash
	sum      [sha512.Size]byte
	dekSum   [sha512.Size]byte
}

// NewKey derives the subkeys from the raw contents of a munge.key file.
// The raw key is not retained.
func NewKey(raw []byte) (*Key, error) {
	if len(raw) < MinKeyLen {
		return nil, fmt.Errorf("munge: key is %d bytes, munged requires at least %d", len(raw), MinKeyLen)
	}
	k := &Key{}
	h := sha1.New()
	h.Write(raw)
	h1 := sha1.New()
	h1.Write(raw)
	h1.Write([]byte("1"))
	h1.Sum(k.dek[:0])
	h.Write([]byte("2"))
	h.Sum(k.mac[:0])
	for m := range k.pools {
		newHash := macHash(uint8(m))
		if newHash == nil {
			continue
		}
		k.pools[m].New = func() any {
			return &hmacPair{mac: hmac.New(newHash, k.mac[:]), dek: hmac.New(newHash, k.dek[:])}
		}
	}
	return k, nil
}

// macHash returns the digest constructor of a MUNGE MAC type, nil when
// the type is invalid.
func macHash(m uint8) func() hash.Hash {
	switch m {
	case MACMD5:
		return md5.New
	case MACSHA1:
		return sha1.New
	case MACRIPEMD160:
		return ripemd160.New
	case MACSHA256:
		return sha256.New
	case MACSHA512:
		return sha512.New
	}
	return nil
}

func (k *Key) getHMAC(m uint8) *hmacPair {
	return k.pools[m].Get().(*hmacPair)
}

func (k *Key) putHMAC(m uint8, p *hmacPair) {
	p.mac.Reset()
	p.dek.Reset()
	k.pools[m].Put(p)
}
