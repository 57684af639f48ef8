package munge

import "github.com/lablup/slurm-frontend/codec"

// Reason is why a credential was refused. The values below 100 are
// MUNGE's own error numbers (munge_err_t in libmunge/munge.h), so a log
// line can be compared with what unmunge would print for the same
// credential; the values from 100 on are the checks Slurm adds on top.
type Reason uint8

const (
	ReasonNone         Reason = 0
	ReasonSnafu        Reason = 1   // EMUNGE_SNAFU: internal error (bad random source, ...)
	ReasonBadArg       Reason = 2   // EMUNGE_BAD_ARG: empty credential
	ReasonBadLength    Reason = 3   // EMUNGE_BAD_LENGTH: credential or payload too long
	ReasonNoMemory     Reason = 5   // EMUNGE_NO_MEMORY: here, the replay cache is full
	ReasonBadCred      Reason = 8   // EMUNGE_BAD_CRED: malformed armor, base64 or layout
	ReasonBadVersion   Reason = 9   // EMUNGE_BAD_VERSION: not a v3 credential
	ReasonBadCipher    Reason = 10  // EMUNGE_BAD_CIPHER: unknown cipher
	ReasonBadMAC       Reason = 11  // EMUNGE_BAD_MAC: unknown MAC, or too short for the cipher
	ReasonBadZip       Reason = 12  // EMUNGE_BAD_ZIP: unknown compression
	ReasonInvalid      Reason = 14  // EMUNGE_CRED_INVALID: MAC mismatch (wrong key, tampering)
	ReasonExpired      Reason = 15  // EMUNGE_CRED_EXPIRED: now > encode_time + ttl
	ReasonRewound      Reason = 16  // EMUNGE_CRED_REWOUND: now < encode_time - ttl
	ReasonReplayed     Reason = 17  // EMUNGE_CRED_REPLAYED: seen before and not yet expired
	ReasonUnauthorized Reason = 18  // EMUNGE_CRED_UNAUTHORIZED: auth_uid/auth_gid exclude us
	ReasonNobody       Reason = 100 // Slurm: uid or gid is SLURM_AUTH_NOBODY (99)
)

var reasonNames = map[Reason]string{
	ReasonNone:         "success",
	ReasonSnafu:        "internal error",
	ReasonBadArg:       "no credential",
	ReasonBadLength:    "bad length",
	ReasonNoMemory:     "replay cache full",
	ReasonBadCred:      "malformed credential",
	ReasonBadVersion:   "bad version",
	ReasonBadCipher:    "bad cipher",
	ReasonBadMAC:       "bad mac",
	ReasonBadZip:       "bad compression",
	ReasonInvalid:      "invalid",
	ReasonExpired:      "expired",
	ReasonRewound:      "rewound",
	ReasonReplayed:     "replayed",
	ReasonUnauthorized: "unauthorized",
	ReasonNobody:       "nobody uid/gid",
}

func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return "unknown"
}

// The errors Decode and Verify return. They are preallocated so a refused
// credential costs no allocation; compare with == or use ReasonOf. All of
// them carry SLURM_PROTOCOL_AUTHENTICATION_ERROR, the code slurmctld
// reports for any auth_g_verify failure (see the package comment).
var (
	ErrNoCred       = authErr("munge: no credential specified")
	ErrTooLong      = authErr("munge: credential exceeds the maximum request length")
	ErrBadPrefix    = authErr("munge: failed to match armor prefix")
	ErrBadSuffix    = authErr("munge: failed to match armor suffix")
	ErrBadBase64    = authErr("munge: failed to base64-decode credential")
	ErrTruncated    = authErr("munge: truncated credential")
	ErrTrailing     = authErr("munge: trailing bytes after payload")
	ErrBadAddrLen   = authErr("munge: invalid origin IP addr length")
	ErrPayloadLen   = authErr("munge: payload exceeds the maximum of 1048576 bytes")
	ErrBadVersion   = authErr("munge: invalid credential version (only v3 exists)")
	ErrBadCipher    = authErr("munge: invalid cipher type")
	ErrBadMAC       = authErr("munge: invalid MAC type")
	ErrMACTooShort  = authErr("munge: MAC type too short for the cipher's key")
	ErrBadZip       = authErr("munge: invalid compression type")
	ErrInvalid      = authErr("munge: invalid credential")
	ErrExpired      = authErr("munge: expired credential")
	ErrRewound      = authErr("munge: rewound credential, future ctime")
	ErrReplayed     = authErr("munge: replayed credential")
	ErrUnauthorized = authErr("munge: unauthorized credential decode")
	ErrNobody       = authErr("munge: credential uid or gid is SLURM_AUTH_NOBODY (99), rejected by Slurm")
	ErrCacheFull    = authErr("munge: replay cache full")
)

var reasonOf = map[*codec.Error]Reason{
	ErrNoCred:       ReasonBadArg,
	ErrTooLong:      ReasonBadLength,
	ErrBadPrefix:    ReasonBadCred,
	ErrBadSuffix:    ReasonBadCred,
	ErrBadBase64:    ReasonBadCred,
	ErrTruncated:    ReasonBadCred,
	ErrTrailing:     ReasonBadCred,
	ErrBadAddrLen:   ReasonBadCred,
	ErrPayloadLen:   ReasonBadLength,
	ErrBadVersion:   ReasonBadVersion,
	ErrBadCipher:    ReasonBadCipher,
	ErrBadMAC:       ReasonBadMAC,
	ErrMACTooShort:  ReasonBadMAC,
	ErrBadZip:       ReasonBadZip,
	ErrInvalid:      ReasonInvalid,
	ErrExpired:      ReasonExpired,
	ErrRewound:      ReasonRewound,
	ErrReplayed:     ReasonReplayed,
	ErrUnauthorized: ReasonUnauthorized,
	ErrNobody:       ReasonNobody,
	ErrCacheFull:    ReasonNoMemory,
}

func authErr(msg string) *codec.Error {
	return &codec.Error{Code: codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, Msg: msg}
}

// ReasonOf returns the MUNGE-level reason behind an error from Decode or
// Verify: ReasonNone for nil, ReasonSnafu for an error from elsewhere.
func ReasonOf(err error) Reason {
	if err == nil {
		return ReasonNone
	}
	if e, ok := err.(*codec.Error); ok {
		if r, ok := reasonOf[e]; ok {
			return r
		}
	}
	return ReasonSnafu
}

// Body-hash errors (CheckBodyHash): slurmctld turns every one into
// ESLURM_PROTOCOL_INCOMPLETE_PACKET.
var (
	ErrHashMismatch = &codec.Error{Code: codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "munge: body hash mismatch"}
	ErrHashNone     = &codec.Error{Code: codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "munge: malformed NONE body hash"}
	ErrHashType     = &codec.Error{Code: codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "munge: body hash type not loaded by a default slurmctld"}
)
