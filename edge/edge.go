// Package edge is the network front of the frontend: gnet event loops that
// frame Slurm messages, authenticate them and hand them to a Handler. It
// holds no business rules: what an RPC means is the Handler's business.
//
// One RPC per connection, as stock clients do: read one framed request,
// answer once, then wait for the client to close (idle and finished
// connections are reaped by a sweeper, so slow or silent peers cost one
// file descriptor and a few bytes each, never an event-loop stall).
package edge

import (
	"net/netip"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state/memfile"
)

// Request is one authenticated RPC handed to the Handler. Body is only
// valid during a Fast call; Slow calls get their own copy.
type Request struct {
	Version uint16
	Flags   uint16
	MsgType uint16
	UID     uint32
	GID     uint32
	Origin  [4]byte // IPv4 address of the host that made the credential
	Body    []byte
	// Peer is the address the request came from: where callbacks to
	// the client go (salloc's and srun's ports), as slurmctld's
	// resp_host.
	Peer netip.Addr
	// Local is the server's address the request came to (slow path
	// only): the one the client is known to reach it at.
	Local netip.Addr
}

// Reply is what a Handler answers: either a whole prebuilt frame without
// an auth section (valid for 23.02+ clients, which take unsigned replies),
// or a message type and body that edge frames (and signs for 22.05).
type Reply struct {
	Frame   []byte
	More    []*memfile.Bytes // further pieces of a prebuilt frame, written after Frame (from memory files by sendfile)
	MsgType uint16
	Body    []byte
	Drop    bool   // close the connection without answering
	After   func() // called once the reply is written (slow path only)
}

// RC makes a RESPONSE_SLURM_RC reply.
func RC(rc uint32) Reply {
	return Reply{MsgType: codec.RESPONSE_SLURM_RC, Body: []byte{byte(rc >> 24), byte(rc >> 16), byte(rc >> 8), byte(rc)}}
}

// Handler gives meaning to RPCs.
type Handler interface {
	// Fast answers in the event loop and must not block (snapshot
	// reads). ok=false sends the request to Slow on a worker.
	Fast(req *Request) (r Reply, ok bool)
	// Slow runs on a worker goroutine and may block (durable writes,
	// backend calls).
	Slow(req *Request) Reply
}

// Waiter is what a Handler may also tell: which Slow requests mostly
// wait rather than work (a write waiting for the sync it shares with
// the others of its group commit). They get a pool of their own
// (Config.WaitWorkers).
type Waiter interface {
	Waits(msgType uint16) bool
}

// Authenticator verifies a request's credential and body hash and returns
// the identity it proves.
type Authenticator interface {
	Verify(cred []byte, msgType uint16, body []byte) (uid, gid uint32, origin [4]byte, err error)
}

// Signer makes the credential 22.05 clients require on every reply,
// restricted to the requesting uid. As in 22.05, the credential does
// not depend on the body (body may be nil: large prebuilt replies are
// signed without being joined).
type Signer interface {
	Sign(dst []byte, forUID uint32, msgType uint16, body []byte) ([]byte, error)
}

// Stats receives one record per answered RPC (sdiag's counters).
type Stats interface {
	Record(msgType uint16, uid uint32, d time.Duration)
}

// Path says how a reply was made.
type Path uint8

const (
	PathCache  Path = iota // a prebuilt reply of the snapshot, written as is
	PathBuilt              // encoded for this request in the event loop
	PathWorker             // made by a worker (writes, engine calls, cold reads)
	PathHeld               // held by the rate limit (22.05 clients), then answered
)

func (p Path) String() string {
	return [...]string{"cache", "built", "worker", "held"}[p]
}

// Observer sees every answered RPC (the metrics endpoint's latency
// histograms); it is called on the event loops and must not block.
type Observer interface {
	Observe(msgType, version uint16, uid uint32, path Path, d time.Duration)
}

// Logger is the small logging surface edge needs.
type Logger interface {
	Printf(format string, args ...any)
}
