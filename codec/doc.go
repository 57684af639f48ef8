// Package codec holds Slurm's wire format: primitives, the message header,
// the auth envelope and one file per message family, for every protocol
// version from 22.05 (0x2600) to 26.05 (0x2D00). It does no I/O.
//
// Conventions:
//   - Decoders read from a Reader (sticky error, no allocation for views);
//     encoders append to a caller-owned []byte through a Writer.
//   - Every version difference is a small explicit branch on the header's
//     protocol version (see Version constants).
//   - Errors that reach a client carry the Slurm error code they become
//     (see Error).
package codec
