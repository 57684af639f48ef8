// Package munge verifies and makes MUNGE credentials in process, so the
// server never talks to munged on its hot path. It implements the v3
// credential format of MUNGE 0.5.x (doc/credential_v3_format.txt,
// src/munged/{enc,dec,conf,replay}.c) with the key munged uses, and the
// Slurm body hash carried in the credential payload
// (slurm_protocol_api.c _compute_hash/_check_hash).
//
// Format: "MUNGE:" base64(OUTER || MAC || INNER) ":". OUTER is version (3),
// cipher, mac, zip, realm_len, realm, IV (one cipher block); INNER
// (encrypted in CBC mode, PKCS#7 padding to the cipher's block) is
// salt[8], addr_len, addr, encode_time, ttl, uid, gid, auth_uid,
// auth_gid, data_len, data, all big-endian. The MAC is HMAC(MAC subkey,
// OUTER || INNER plaintext, after compression); the cipher key (the DEK)
// is HMAC(DEK subkey, MAC) with the same hash, truncated to the cipher's
// key size; the subkeys are SHA1(key file || "1") and SHA1(key file ||
// "2"), whatever the cipher and MAC.
//
// Decode accepts everything munged accepts (cipher.c, mac.c/md.c):
//
//	cipher         id  key  block/IV  munged's OpenSSL / libgcrypt name
//	none           0   -    -
//	Blowfish-CBC   2   16   8         EVP_bf_cbc / GCRY_CIPHER_BLOWFISH
//	CAST5-CBC      3   16   8         EVP_cast5_cbc / GCRY_CIPHER_CAST5
//	AES-128-CBC    4   16   16        EVP_aes_128_cbc / GCRY_CIPHER_AES128 (munged's default)
//	AES-256-CBC    5   32   16        EVP_aes_256_cbc / GCRY_CIPHER_AES256
//
//	MAC (HMAC-)    id  size
//	MD5            2   16
//	SHA-1          3   20
//	RIPEMD-160     4   20
//	SHA-256        5   32   (munged's default)
//	SHA-512        6   64
//
// and zip none (0), bzip2 (2), zlib (3). Like munged (dec.c
// dec_unpack_outer, and enc.c, which will not make one) it refuses a MAC
// shorter than the cipher's key: AES-256 with MD5, SHA-1 or RIPEMD-160
// (ErrMACTooShort). Blowfish keeps the first 16 bytes of the DEK (its
// variable key length is reported as 16 by both libraries), CAST5 takes
// 16 bytes (CAST-128, 16 rounds). Blowfish and CAST5 come from
// golang.org/x/crypto (table-based, as in OpenSSL and libgcrypt) and cost
// a few small allocations per credential, unlike the AES path (see
// Performance); munged makes them only when asked to (munged --cipher,
// munge -c). RIPEMD-160 (x/crypto too) allocates nothing. Encode
// makes what munged makes by default: AES-128-CBC, HMAC-SHA256, no
// compression, no realm.
//
// Verify performs munged's decode checks in munged's order (dec.c
// dec_process_msg): armor and base64, outer layer, decryption, MAC
// (constant-time; the padding check is constant-time too, against the
// cipher's block size, and a padding error is reported only after the
// MAC, exactly like a MAC error, so there is no padding oracle),
// decompression, inner
// layer, then dec_validate_auth (auth_uid must be UIDAny or the server's
// uid: root is not exempt, MUNGE_AUTH_ROOT_ALLOW_FLAG is 0; auth_gid must
// be GIDAny or one of the server's gids), dec_validate_time (ttl capped
// to the max ttl, 3600; valid while encode_time - ttl <= now <=
// encode_time + ttl, because munged always sets got_clock_skew, which
// makes the allowed skew equal to the ttl; a ttl of 0 is replaced by 300
// only when encoding, so a credential carrying ttl 0 is valid during its
// encode second only), dec_validate_replay (keyed by the first 16 bytes
// of the MAC and the expiry; entries live until encode_time + ttl), and
// last Slurm's own check in auth_munge.c _decode_cred: uid or gid 99
// (SLURM_AUTH_NOBODY) is invalid.
//
// # Errors and what slurmctld does with them
//
// auth/munge maps every munged failure to errno ESLURM_AUTH_CRED_INVALID
// (6000), which only reaches the log; slurm_unpack_received_msg then
// returns SLURM_PROTOCOL_AUTHENTICATION_ERROR (1007) for any auth_g_verify
// failure. ESLURM_AUTH_EXPIRED (6001) is used by auth/jwt only, never for
// MUNGE. What the client sees depends on the controller release:
//
//   - 22.05, 23.02, 23.11, 24.05 (controller.c _service_connection):
//     slurm_receive_msg fails, slurmctld logs and closes the connection
//     without any reply; the client reports a receive error.
//   - 24.11, 25.05, 25.11, 26.05 (controller.c _on_msg): on
//     SLURM_PROTOCOL_AUTHENTICATION_ERROR, or whenever the auth ids could
//     not be set, it answers RESPONSE_SLURM_RC 1007 without a credential
//     ("Protocol authentication error"), then closes.
//   - A body-hash failure (and any other unpack failure after a good
//     credential) is ESLURM_PROTOCOL_INCOMPLETE_PACKET (5003): every
//     release closes the connection without a reply.
//
// Every error of Decode and Verify is a preallocated *codec.Error with
// Code 1007; ReasonOf gives the MUNGE-level reason for logs:
//
//	error            Reason             munged's error (unmunge STATUS)   Code to client
//	ErrNoCred        ReasonBadArg       EMUNGE_BAD_ARG (2)                1007
//	ErrTooLong       ReasonBadLength    EMUNGE_BAD_LENGTH (3)             1007
//	ErrPayloadLen    ReasonBadLength    EMUNGE_BAD_LENGTH (3)             1007
//	ErrBadPrefix, ErrBadSuffix, ErrBadBase64, ErrTruncated, ErrTrailing,
//	ErrBadAddrLen    ReasonBadCred      EMUNGE_BAD_CRED (8)               1007
//	ErrBadVersion    ReasonBadVersion   EMUNGE_BAD_VERSION (9)            1007
//	ErrBadCipher     ReasonBadCipher    EMUNGE_BAD_CIPHER (10)            1007
//	ErrBadMAC, ErrMACTooShort
//	                 ReasonBadMAC       EMUNGE_BAD_MAC (11)               1007
//	ErrBadZip        ReasonBadZip       EMUNGE_BAD_ZIP (12)               1007
//	ErrInvalid       ReasonInvalid      EMUNGE_CRED_INVALID (14)          1007
//	ErrExpired       ReasonExpired      EMUNGE_CRED_EXPIRED (15)          1007
//	ErrRewound       ReasonRewound      EMUNGE_CRED_REWOUND (16)          1007
//	ErrReplayed      ReasonReplayed     EMUNGE_CRED_REPLAYED (17)         1007
//	ErrUnauthorized  ReasonUnauthorized EMUNGE_CRED_UNAUTHORIZED (18)     1007
//	ErrCacheFull     ReasonNoMemory     EMUNGE_NO_MEMORY (5)              1007
//	ErrNobody        ReasonNobody       success; refused by auth/munge    1007
//	ErrHashMismatch, ErrHashNone, ErrHashType
//	                 (CheckBodyHash)    success; refused by _check_hash   5003, no reply
//
// # Body hash
//
// Slurm 22.05 and every later release put a hash of the packed body in
// the payload of each credential it makes (requests, and 22.05 replies):
// one type byte and 32 bytes of KangarooTwelve over the body, with the
// message type (2 bytes, big-endian) as customization string. All
// captured 22.05, 24.11 and 26.05 credentials carry it. See BodyHash and
// CheckBodyHash.
//
// # Performance
//
// Decode and Verify do not allocate in steady state for uncompressed
// credentials that are unencrypted or use AES, with any MAC (Decode given
// a reused scratch buffer; Verify keeps pooled buffers and reuses the
// Cred's slices; only the replay tables grow, to their working size).
// crypto/aes allocates a key schedule per key, and every credential has
// its own key, so decryption uses our own AES: AES-NI on amd64
// (aes_amd64.s), the constant-time bit-sliced rounds in aes.go elsewhere;
// both are checked against crypto/aes in the tests.
package munge
