package munge

import (
	"os"
	"slices"
	"sync"
	"time"
)

// SlurmAuthNobody is SLURM_AUTH_NOBODY: auth/munge refuses a credential
// whose uid or gid is 99 even when munged accepted it.
const SlurmAuthNobody = 99

// Verifier checks credentials the way slurmctld's auth/munge plugin does
// through munged: Decode, then munged's dec_validate_auth,
// dec_validate_time and dec_validate_replay, then Slurm's nobody check.
// It is safe for concurrent use.
type Verifier struct {
	key    *Key
	now    func() time.Time
	uid    uint32
	gids   []uint32
	maxTTL uint32
	replay *replayCache
	bufs   sync.Pool // *[]byte scratch for Decode
}

// Option configures a Verifier.
type Option func(*Verifier)

// WithClock sets the time source (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(v *Verifier) { v.now = now }
}

// WithIdentity sets the uid and gids the server decodes as: munged checks
// auth_uid against the decoding process's uid (root is not exempt) and
// auth_gid against its gid or supplementary groups. The default is the
// process's own uid, gid and groups.
func WithIdentity(uid uint32, gids ...uint32) Option {
	return func(v *Verifier) { v.uid, v.gids = uid, slices.Clone(gids) }
}

// WithMaxTTL sets munged's --max-ttl (default MaxTTL, 3600 s): a
// credential's ttl is capped to it before the time checks.
func WithMaxTTL(seconds uint32) Option {
	return func(v *Verifier) { v.maxTTL = seconds }
}

// WithReplayCapacity bounds the replay cache to about n live credentials
// (default DefaultReplayCapacity). When a shard is full of unexpired
// entries it forgets its oldest (Evicted counts them) rather than refuse
// valid credentials. n <= 0 disables replay detection, which munged
// never does: only for tests.
func WithReplayCapacity(n int) Option {
	return func(v *Verifier) {
		if n <= 0 {
			v.replay = nil
		} else {
			v.replay = newReplayCache(n)
		}
	}
}

// DefaultReplayCapacity holds five minutes (the default ttl) of
// credentials at about 3,500 requests a second, in 29 MB when full (28
// bytes per entry, see replayShard).
const DefaultReplayCapacity = 1 << 20

// NewVerifier returns a Verifier for credentials made with k.
func NewVerifier(k *Key, opts ...Option) *Verifier {
	v := &Verifier{key: k, now: time.Now, maxTTL: MaxTTL}
	v.uid = uint32(os.Getuid())
	v.gids = []uint32{uint32(os.Getgid())}
	if gs, err := os.Getgroups(); err == nil {
		for _, g := range gs {
			v.gids = append(v.gids, uint32(g))
		}
	}
	v.replay = newReplayCache(DefaultReplayCapacity)
	v.bufs.New = func() any { b := make([]byte, 0, 256); return &b }
	for _, o := range opts {
		o(v)
	}
	return v
}

// Verify decodes and validates an armored credential, filling c. Realm
// and Payload are copied into c's own slices (their backing arrays are
// reused, so keep a Cred per goroutine and Verify allocates nothing in
// steady state). The checks run in munged's order, then Slurm's:
// format and MAC (Decode), auth_uid/auth_gid restriction, time window
// (encode_time - ttl <= now <= encode_time + ttl, ttl capped to the max
// ttl; munged's clock-skew allowance equals the ttl), replay, and finally
// uid/gid 99. After ErrExpired, ErrRewound or ErrReplayed c is filled in,
// as munged still returns the credential's contents for those.
func (v *Verifier) Verify(armored []byte, c *Cred) error {
	payload, realm := c.Payload[:0], c.Realm[:0]
	sp := v.bufs.Get().(*[]byte)
	mac, err := v.key.decode(armored, c, sp)
	var rk replayKey
	if err == nil {
		copy(rk.mac[:], mac)
		c.Payload = append(payload, c.Payload...)
		c.Realm = append(realm, c.Realm...)
	} else {
		c.Payload, c.Realm = payload, realm
	}
	v.bufs.Put(sp)
	if err != nil {
		return err
	}

	if c.AuthUID != UIDAny && c.AuthUID != v.uid {
		return ErrUnauthorized
	}
	if c.AuthGID != GIDAny && !slices.Contains(v.gids, c.AuthGID) {
		return ErrUnauthorized
	}

	if c.TTL > v.maxTTL {
		c.TTL = v.maxTTL
	}
	now := v.now().Unix()
	t0, ttl := int64(c.EncodeTime), int64(c.TTL)
	if now < t0-ttl {
		return ErrRewound
	}
	if now > t0+ttl {
		return ErrExpired
	}

	if v.replay != nil {
		rk.exp = t0 + ttl
		if err := v.replay.insert(rk, now); err != nil {
			return err
		}
	}

	if c.UID == SlurmAuthNobody || c.GID == SlurmAuthNobody {
		return ErrNobody
	}
	return nil
}

// Evicted reports how many unexpired credentials were forgotten early
// because the cache was full (0 unless the site outruns its capacity).
func (v *Verifier) Evicted() uint64 { _, e := v.ReplayCounts(); return e }

// ReplayCounts reports how many credentials the replay cache holds
// (those not yet expired, or not yet found expired) and Evicted.
func (v *Verifier) ReplayCounts() (entries, evicted uint64) {
	if v.replay == nil {
		return 0, 0
	}
	for i := range v.replay.shards {
		s := &v.replay.shards[i]
		s.mu.Lock()
		entries += uint64(s.n)
		evicted += s.evicted
		s.mu.Unlock()
	}
	return entries, evicted
}
