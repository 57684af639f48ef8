package munge

import (
	"crypto/sha3"
	"crypto/subtle"

	"github.com/cloudflare/circl/xof/k12"
)

// Body hash carried as the MUNGE payload of every Slurm message that has
// a credential (slurm_protocol_api.c _compute_hash/_check_hash; present in
// 22.05 and every later release, for auth/munge and auth/slurm): one type
// byte, then the digest of the packed body, with the message type (u16,
// big-endian) as customization string.
const (
	HashDefault = 0 // enum hash_plugin_type: the first loaded plugin (K12 unless HashPlugin says otherwise)
	HashNone    = 1 // payload 01 <msg_type hi> <msg_type lo>: no digest
	HashK12     = 2 // KangarooTwelve, 32-byte output: what every client sends by default
	HashSHA256  = 3 // reserved in the enum; no Slurm release ships a plugin for it
	HashSHA3    = 4 // 24.11+: SHA3-256(body || msg_type), only with HashPlugin=hash/sha3

	hashLen = 32 // sizeof(slurm_hash_t.hash)
)

// BodyHash appends the payload Slurm's sender puts in the credential of a
// message of type msgType with the given body: kind byte + digest. kind
// HashK12 (or HashDefault, written as K12 like Slurm does), HashSHA3 and
// HashNone are supported; any other kind appends nothing, which is the
// empty payload a default slurmctld accepts too.
func BodyHash(dst []byte, kind byte, msgType uint16, body []byte) []byte {
	cs := [2]byte{byte(msgType >> 8), byte(msgType)}
	switch kind {
	case HashDefault, HashK12:
		var sum [hashLen]byte
		k12Sum(&sum, body, cs[:])
		dst = append(dst, HashK12)
		return append(dst, sum[:]...)
	case HashSHA3:
		h := sha3.New256()
		h.Write(body)
		h.Write(cs[:])
		dst = append(dst, HashSHA3)
		return h.Sum(dst)
	case HashNone:
		return append(dst, HashNone, cs[0], cs[1])
	}
	return dst
}

func k12Sum(out *[hashLen]byte, body, cs []byte) {
	s := k12.NewDraft10(cs)
	_, _ = s.Write(body)
	_, _ = s.Read(out[:])
}

// CheckBodyHash checks a credential payload against the message it came
// with, accepting what slurmctld accepts with its default configuration
// (no block_null_hash / block_zero_hash in CommunicationParameters,
// HashPlugin unset so only hash/k12 is loaded):
//   - an empty payload;
//   - the NONE form, exactly 01 <msg_type big-endian>;
//   - type 2 (K12) or 0 (DEFAULT, which maps to K12) with the right digest.
//
// Anything else, SHA3 included, is refused with an *codec.Error carrying
// ESLURM_PROTOCOL_INCOMPLETE_PACKET; slurmctld then closes the connection
// without a reply (22.05 to 26.05 alike).
func CheckBodyHash(payload []byte, msgType uint16, body []byte) error {
	if len(payload) == 0 {
		return nil
	}
	cs := [2]byte{byte(msgType >> 8), byte(msgType)}
	switch payload[0] {
	case HashNone:
		if len(payload) != 3 || payload[1] != cs[0] || payload[2] != cs[1] {
			return ErrHashNone
		}
		return nil
	case HashDefault, HashK12:
		if len(payload) != 1+hashLen {
			return ErrHashMismatch
		}
		var sum [hashLen]byte
		k12Sum(&sum, body, cs[:])
		if subtle.ConstantTimeCompare(sum[:], payload[1:]) != 1 {
			return ErrHashMismatch
		}
		return nil
	}
	return ErrHashType
}
