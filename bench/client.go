package bench

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// Minter makes the request frames stock clients send: a fresh MUNGE
// credential per message (AES-128/HMAC-SHA256 as munged makes them, from
// the site key) whose payload is the K12 hash of the body, exactly like
// Slurm's auth/munge. Minting in process costs a few microseconds, far
// less than a round trip to munged: the generator measures the server,
// not munged.
type Minter struct {
	Key     *munge.Key
	UID     uint32 // identity the credential proves (munged fills in the caller's)
	GID     uint32
	TTL     uint32  // 0 = munged's default, 300 s
	Addr    [4]byte // the encoding host's address (munged's)
	Version uint16  // protocol version of the requests (default 24.11)
}

// NewMinter loads the key and mints as the calling process's uid/gid.
func NewMinter(keyPath string) (*Minter, error) {
	k, err := munge.LoadKey(keyPath)
	if err != nil {
		return nil, err
	}
	return &Minter{Key: k, UID: uint32(os.Getuid()), GID: uint32(os.Getgid()),
		Addr: [4]byte{127, 0, 0, 1}, Version: codec.V24_11}, nil
}

// newRand returns a fast per-worker random source for salts and IVs,
// seeded from the system CSPRNG (a load generator needs unique
// credentials, not secret ones).
func newRand() *rand.ChaCha8 {
	var seed [32]byte
	_, _ = crand.Read(seed[:])
	return rand.NewChaCha8(seed)
}

// Frame appends a complete request frame for msgType/body with a fresh
// credential restricted to authUID (munge.UIDAny for most RPCs; the
// SlurmUser's uid for REQUEST_PING, as scontrol does).
func (m *Minter) Frame(dst []byte, rnd io.Reader, msgType uint16, authUID uint32, body []byte) ([]byte, error) {
	var payload [64]byte
	c := munge.Cred{
		Addr: m.Addr, EncodeTime: uint32(time.Now().Unix()), TTL: m.TTL,
		UID: m.UID, GID: m.GID, AuthUID: authUID, AuthGID: munge.GIDAny,
		Payload: munge.BodyHash(payload[:0], munge.HashK12, msgType, body),
	}
	var credBuf [256]byte
	cred, err := m.Key.Encode(credBuf[:0], &c, rnd)
	if err != nil {
		return dst, err
	}
	v := m.Version
	if v == 0 {
		v = codec.V24_11
	}
	return codec.AppendFrame(dst, v, msgType, cred, body), nil
}

// rpcError is a failed RPC, classified for the report ("errors by kind").
type rpcError struct {
	Kind string
	Err  error
}

func (e *rpcError) Error() string {
	if e.Err != nil {
		return e.Kind + ": " + e.Err.Error()
	}
	return e.Kind
}

// Error kinds. RC errors are "rc N (NAME)".
const (
	ErrConnRefused   = "connect refused"
	ErrConnTimeout   = "connect timeout"
	ErrNoLocalPort   = "connect: no local port"
	ErrConnOther     = "connect error"
	ErrWrite         = "write error"
	ErrTimeout       = "timeout"
	ErrClosedNoReply = "closed without reply"
	ErrShortRead     = "short read"
	ErrReset         = "connection reset"
	ErrBadFrame      = "bad reply frame"
	ErrUnexpected    = "unexpected reply type"
)

func classifyDial(err error) *rpcError {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &rpcError{Kind: ErrConnRefused}
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return &rpcError{Kind: ErrNoLocalPort}
	case errors.As(err, &ne) && ne.Timeout():
		return &rpcError{Kind: ErrConnTimeout}
	}
	return &rpcError{Kind: ErrConnOther, Err: err}
}

func classifyRead(err error, got int) *rpcError {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return &rpcError{Kind: ErrTimeout}
	case errors.Is(err, syscall.ECONNRESET):
		if got == 0 {
			return &rpcError{Kind: ErrClosedNoReply, Err: err}
		}
		return &rpcError{Kind: ErrReset}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if got == 0 {
			return &rpcError{Kind: ErrClosedNoReply}
		}
		return &rpcError{Kind: ErrShortRead}
	}
	return &rpcError{Kind: "read error", Err: err}
}

// rcKind names a Slurm return code for the error table.
func rcKind(rc uint32) string {
	if n, ok := rcNames[rc]; ok {
		return fmt.Sprintf("rc %d (%s)", rc, n)
	}
	return fmt.Sprintf("rc %d", rc)
}

var rcNames = map[uint32]string{
	codec.SLURM_ERROR:                          "SLURM_ERROR",
	codec.EAGAIN:                               "EAGAIN",
	codec.EINVAL:                               "EINVAL",
	codec.SLURM_UNEXPECTED_MSG_ERROR:           "SLURM_UNEXPECTED_MSG_ERROR",
	codec.SLURM_PROTOCOL_VERSION_ERROR:         "SLURM_PROTOCOL_VERSION_ERROR",
	codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR:  "SLURM_PROTOCOL_AUTHENTICATION_ERROR",
	codec.SLURM_PROTOCOL_INSANE_MSG_LENGTH:     "SLURM_PROTOCOL_INSANE_MSG_LENGTH",
	codec.SLURMCTLD_COMMUNICATIONS_BACKOFF:     "SLURMCTLD_COMMUNICATIONS_BACKOFF",
	codec.SLURM_NO_CHANGE_IN_DATA:              "SLURM_NO_CHANGE_IN_DATA",
	codec.ESLURM_INVALID_PARTITION_NAME:        "ESLURM_INVALID_PARTITION_NAME",
	codec.ESLURM_DEFAULT_PARTITION_NOT_SET:     "ESLURM_DEFAULT_PARTITION_NOT_SET",
	codec.ESLURM_ACCESS_DENIED:                 "ESLURM_ACCESS_DENIED",
	codec.ESLURM_REQUESTED_NODES_NOT_IN_PART:   "ESLURM_REQUESTED_NODES_NOT_IN_PART",
	codec.ESLURM_TOO_MANY_REQUESTED_CPUS:       "ESLURM_TOO_MANY_REQUESTED_CPUS",
	codec.ESLURM_INVALID_NODE_COUNT:            "ESLURM_INVALID_NODE_COUNT",
	codec.ESLURM_ERROR_ON_DESC_TO_RECORD_COPY:  "ESLURM_ERROR_ON_DESC_TO_RECORD_COPY",
	codec.ESLURM_JOB_SCRIPT_MISSING:            "ESLURM_JOB_SCRIPT_MISSING",
	codec.ESLURM_USER_ID_MISSING:               "ESLURM_USER_ID_MISSING",
	codec.ESLURM_PATHNAME_TOO_LONG:             "ESLURM_PATHNAME_TOO_LONG",
	codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL: "ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL",
	codec.ESLURM_REQUESTED_PART_CONFIG_UNAVAIL: "ESLURM_REQUESTED_PART_CONFIG_UNAVAIL",
	codec.ESLURM_INVALID_JOB_ID:                "ESLURM_INVALID_JOB_ID",
	codec.ESLURM_INVALID_NODE_NAME:             "ESLURM_INVALID_NODE_NAME",
	codec.ESLURM_ALREADY_DONE:                  "ESLURM_ALREADY_DONE",
	codec.ESLURM_JOB_PENDING:                   "ESLURM_JOB_PENDING",
	codec.ESLURM_BAD_TASK_COUNT:                "ESLURM_BAD_TASK_COUNT",
	codec.ESLURM_NOT_SUPPORTED:                 "ESLURM_NOT_SUPPORTED",
	codec.ESLURM_DEPENDENCY:                    "ESLURM_DEPENDENCY",
	codec.ESLURM_INVALID_TASK_MEMORY:           "ESLURM_INVALID_TASK_MEMORY",
	codec.ESLURM_INVALID_ACCOUNT:               "ESLURM_INVALID_ACCOUNT",
	codec.ESLURM_INVALID_TIME_LIMIT:            "ESLURM_INVALID_TIME_LIMIT",
	codec.ESLURM_INVALID_TIME_VALUE:            "ESLURM_INVALID_TIME_VALUE",
	codec.ESLURM_INVALID_QOS:                   "ESLURM_INVALID_QOS",
	codec.ESLURM_INVALID_CPU_COUNT:             "ESLURM_INVALID_CPU_COUNT",
	codec.ESLURM_INVALID_GRES:                  "ESLURM_INVALID_GRES",
	codec.ESLURM_JOB_NOT_PENDING:               "ESLURM_JOB_NOT_PENDING",
	codec.ESLURM_INVALID_ARRAY:                 "ESLURM_INVALID_ARRAY",
	codec.ESLURM_INTERNAL:                      "ESLURM_INTERNAL",
	codec.ESLURM_GROUP_ID_MISSING:              "ESLURM_GROUP_ID_MISSING",
	codec.ESLURM_INVALID_NICE:                  "ESLURM_INVALID_NICE",
	codec.ESLURM_ENVIRONMENT_MISSING:           "ESLURM_ENVIRONMENT_MISSING",
	codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET:    "ESLURM_PROTOCOL_INCOMPLETE_PACKET",
	codec.ESLURM_AUTH_CRED_INVALID:             "ESLURM_AUTH_CRED_INVALID",
	codec.ESLURM_AUTH_EXPIRED:                  "ESLURM_AUTH_EXPIRED",
	codec.ESLURM_AUTH_UNPACK:                   "ESLURM_AUTH_UNPACK",
	codec.ESLURM_JOB_HELD:                      "ESLURM_JOB_HELD",
}

// conn does one RPC on a new TCP connection, as stock clients do:
// connect, write the whole request, read one whole reply frame, close.
// The reply is left in *buf (grown as needed and reused).
type caller struct {
	dialer  net.Dialer
	timeout time.Duration
	// keep, if > 0, is how much of a reply is copied in: the rest is
	// still received (every byte crosses the connection, as for a stock
	// client) but dropped by the kernel (recv with MSG_TRUNC) instead of
	// copied into the generator. On a small machine that copy, 6 MB per
	// squeue at 10,000 jobs, is CPU the generator takes from the server
	// under test. The generator reads only a reply's head.
	keep int
}

func (c *caller) call(addr string, req []byte, buf *[]byte) ([]byte, *rpcError) {
	deadline := time.Now().Add(c.timeout)
	d := c.dialer // the caller is shared by the workers: each dials with its own deadline
	d.Deadline = deadline
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, classifyDial(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(deadline)
	if _, err := nc.Write(req); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &rpcError{Kind: ErrTimeout}
		}
		return nil, &rpcError{Kind: ErrWrite, Err: err}
	}
	b := *buf
	if cap(b) < 64<<10 {
		b = make([]byte, 0, 64<<10)
	}
	b = b[:4]
	n, err := io.ReadFull(nc, b)
	if err != nil {
		return nil, classifyRead(err, n)
	}
	total, ferr := codec.ReplyFrameLen(b)
	if ferr != nil || total < 4+codec.HeaderLen {
		return nil, &rpcError{Kind: ErrBadFrame, Err: ferr}
	}
	// Room for what is read: the head only when the rest is dropped
	// (each worker keeps its buffer: 64 of a 240 MB listing's size took
	// the generator out of memory).
	need := total
	if c.keep > 0 && total > c.keep {
		need = c.keep
	}
	if cap(b) < need {
		nb := make([]byte, need, need+need/4)
		copy(nb, b[:4])
		b = nb
	}
	if c.keep > 0 && total > c.keep {
		b = b[:c.keep]
		*buf = b
		if m, err := io.ReadFull(nc, b[4:]); err != nil {
			return nil, classifyRead(err, 4+m)
		}
		if m, err := discard(nc, total-c.keep); err != nil {
			return nil, classifyRead(err, c.keep+m)
		}
		return b, nil
	}
	b = b[:total]
	*buf = b
	if m, err := io.ReadFull(nc, b[4:]); err != nil {
		return nil, classifyRead(err, 4+m)
	}
	return b, nil
}

// discard receives n bytes from nc without copying them (recv with a
// NULL buffer and MSG_TRUNC, which TCP sockets drop in the kernel).
func discard(nc net.Conn, n int) (int, error) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		m, err := io.CopyN(io.Discard, nc, int64(n))
		return int(m), err
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	got := 0
	for got < n {
		var m int
		var eno syscall.Errno
		if err := rc.Read(func(fd uintptr) bool {
			r, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, fd, 0, uintptr(n-got), syscall.MSG_TRUNC|syscall.MSG_DONTWAIT, 0, 0)
			if e == syscall.EAGAIN {
				return false
			}
			m, eno = int(r), e
			return true
		}); err != nil {
			return got, err
		}
		switch {
		case eno != 0:
			return got, eno
		case m == 0:
			return got, io.ErrUnexpectedEOF
		}
		got += m
	}
	return got, nil
}

// frameLen is the length of the whole reply frame raw starts (raw may
// hold only its head; see caller.keep).
func frameLen(raw []byte) int {
	if len(raw) < 4 {
		return len(raw)
	}
	return 4 + int(binary.BigEndian.Uint32(raw))
}

// reply is the part of a reply frame the generator looks at.
type reply struct {
	msgType uint16
	body    []byte
}

func parseReply(b []byte) (reply, *rpcError) {
	var f codec.Frame
	if err := codec.DecodeFrameHead(b, &f); err != nil {
		return reply{}, &rpcError{Kind: ErrBadFrame, Err: err}
	}
	return reply{msgType: f.MsgType, body: f.Body}, nil
}

// rcOf returns the code of a RESPONSE_SLURM_RC body.
func rcOf(body []byte) uint32 {
	if len(body) < 4 {
		return codec.SLURM_ERROR
	}
	return binary.BigEndian.Uint32(body)
}
