package edge

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec/munge"
)

// MungeAuth verifies request credentials in process from the site's munge
// key (no round trip to munged) and signs the replies 22.05 clients need.
type MungeAuth struct {
	key   *munge.Key
	v     *munge.Verifier
	uid   uint32
	gid   uint32
	creds sync.Pool // *munge.Cred, so verification allocates nothing
}

// NewMungeAuth verifies as uid/gids (the identity munged would decode as:
// the server's own).
func NewMungeAuth(key *munge.Key, uid uint32, gids []uint32) *MungeAuth {
	a := &MungeAuth{key: key, v: munge.NewVerifier(key, munge.WithIdentity(uid, gids...)), uid: uid}
	if len(gids) > 0 {
		a.gid = gids[0]
	}
	a.creds.New = func() any { return &munge.Cred{Payload: make([]byte, 0, 64)} }
	return a
}

// Verify checks the credential (MAC, time, restriction, replay) and the
// body hash it carries, returning the identity it proves.
func (a *MungeAuth) Verify(cred []byte, msgType uint16, body []byte) (uint32, uint32, [4]byte, error) {
	c := a.creds.Get().(*munge.Cred)
	defer a.creds.Put(c)
	if err := a.v.Verify(cred, c); err != nil {
		return 0, 0, [4]byte{}, err
	}
	if err := munge.CheckBodyHash(c.Payload, msgType, body); err != nil {
		return 0, 0, [4]byte{}, err
	}
	return c.UID, c.GID, c.Addr, nil
}

// Replay reports the replay cache's entries and the unexpired
// credentials it had to forget early because it was full.
func (a *MungeAuth) Replay() (entries, evicted uint64) {
	return a.v.ReplayCounts()
}

// Sign makes a reply credential restricted to forUID, with an empty
// payload (accepted by 22.05 clients by default).
func (a *MungeAuth) Sign(dst []byte, forUID uint32, msgType uint16, body []byte) ([]byte, error) {
	c := munge.Cred{
		Cipher: munge.CipherAES128, MAC: munge.MACSHA256, Addr: [4]byte{127, 0, 0, 1},
		EncodeTime: uint32(time.Now().Unix()), TTL: 300,
		UID: a.uid, GID: a.gid, AuthUID: forUID, AuthGID: munge.GIDAny,
	}
	return a.key.Encode(dst, &c, rand.Reader)
}
