package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state/memfile"
)

// NullServer is the machine's ceiling for a workload: it accepts, reads
// one request frame, writes a prebuilt reply frame for the request's
// message type, and closes, with no authentication, no decoding and no
// state. The same generator measures it in the same run as the
// controllers, so "ours / null" is the share of what this machine and
// this generator can do at all that the real read path achieves. Large
// replies go out the way slurm-frontend sends its listings (sendfile
// from a sealed memory file), so that the ceiling stays a ceiling.
type NullServer struct {
	mu      sync.RWMutex
	replies map[uint16]*memfile.Bytes // by request message type
	deflt   *memfile.Bytes
	served  atomic.Int64
	ln      net.Listener
}

// NewNullServer makes a null server answering every request with a
// RESPONSE_JOB_INFO-typed frame of replySize bytes, except the RPCs the
// workloads send, which get frames of the right type: a PARTITION_INFO
// and NODE_INFO reply of the sizes the reference 16-node cluster's
// replies have (634 and 5,259 bytes), RC 0 for pings, and a held
// submit's reply. Use SetReplies (or FetchReplies) for real bytes.
func NewNullServer(replySize int) *NullServer {
	s := &NullServer{}
	s.SetReplies(SyntheticReplies(codec.V24_11, replySize))
	return s
}

// heldReply is the canned answer to a submission: job 1, held.
func heldReply(v uint16) []byte {
	var w codec.Writer
	sub := codec.SubmitResponse{StepID: codec.JobStepID{JobID: 1, StepID: 0xfffffffb}, ErrorCode: codec.ESLURM_JOB_HELD}
	sub.Encode(&w, v)
	return codec.AppendFrame(nil, v, codec.RESPONSE_SUBMIT_BATCH_JOB, nil, w.B)
}

// SyntheticReplies builds the null server's default replies.
func SyntheticReplies(v uint16, jobInfoSize int) map[uint16][]byte {
	sized := func(msgType uint16, total int) []byte {
		bodyLen := max(total-4-codec.HeaderLen, 20)
		body := make([]byte, bodyLen)
		return codec.AppendFrame(nil, v, msgType, nil, body)
	}
	return map[uint16][]byte{
		codec.REQUEST_JOB_INFO:         sized(codec.RESPONSE_JOB_INFO, jobInfoSize),
		codec.REQUEST_PARTITION_INFO:   sized(codec.RESPONSE_PARTITION_INFO, 634),
		codec.REQUEST_NODE_INFO:        sized(codec.RESPONSE_NODE_INFO, 5259),
		codec.REQUEST_PING:             codec.AppendRC(nil, v, nil, 0),
		codec.REQUEST_SUBMIT_BATCH_JOB: heldReply(v),
		0:                              sized(codec.RESPONSE_JOB_INFO, jobInfoSize),
	}
}

// FetchReplies asks a controller for the reply bytes of each workload RPC
// (squeue's JOB_INFO and PARTITION_INFO, sinfo's NODE_INFO, a ping) so
// the null server writes exactly what that controller would. Submits are
// not sent (they would add a job); they keep the synthetic reply.
func FetchReplies(addr string, m *Minter, slurmUID uint32, timeout time.Duration) (map[uint16][]byte, error) {
	wl, err := NewWorkload("mix", m.Version, slurmUID)
	if err != nil {
		return nil, err
	}
	out := map[uint16][]byte{}
	cl := caller{timeout: timeout}
	rnd := newRand()
	steps := wl.Mix
	if js, err := NewWorkload("jobstate", m.Version, slurmUID); err == nil {
		steps = append(steps[:len(steps):len(steps)], js.Steps...) // squeue --only-job-state, 24.05+
	}
	for _, st := range steps {
		if st.MsgType == codec.REQUEST_SUBMIT_BATCH_JOB {
			continue
		}
		req, err := m.Frame(nil, rnd, st.MsgType, st.AuthUID, st.Body)
		if err != nil {
			return nil, err
		}
		var buf []byte
		raw, rerr := cl.call(addr, req, &buf)
		if rerr != nil {
			return nil, fmt.Errorf("fetch %s from %s: %v", st.Name, addr, rerr)
		}
		rep, rerr := parseReply(raw)
		if rerr != nil {
			return nil, fmt.Errorf("fetch %s from %s: %v", st.Name, addr, rerr)
		}
		if rep.msgType != st.Expect {
			return nil, fmt.Errorf("fetch %s from %s: reply type %d (rc %d)", st.Name, addr, rep.msgType, rcOf(rep.body))
		}
		out[st.MsgType] = append([]byte(nil), raw...)
	}
	out[0] = out[codec.REQUEST_JOB_INFO]
	out[codec.REQUEST_SUBMIT_BATCH_JOB] = heldReply(m.Version)
	return out, nil
}

// SetReplies replaces the replies (key 0 is the default for other types).
func (s *NullServer) SetReplies(r map[uint16][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = map[uint16]*memfile.Bytes{}
	s.deflt = nil
	for k, v := range r {
		if k == 0 {
			s.deflt = memfile.New(v)
		} else {
			s.replies[k] = memfile.New(v)
		}
	}
	if s.deflt == nil {
		s.deflt = memfile.Heap(codec.AppendRC(nil, codec.V24_11, nil, codec.SLURM_UNEXPECTED_MSG_ERROR))
	}
}

// ReplySizes reports the reply size per request type.
func (s *NullServer) ReplySizes() map[string]int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]int{"default": s.deflt.Len()}
	for k, v := range s.replies {
		out[codec.MsgTypeName(k)] = v.Len()
	}
	return out
}

// Served counts the requests answered.
func (s *NullServer) Served() int64 { return s.served.Load() }

// Listen binds addr.
func (s *NullServer) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	return nil
}

// Addr is the bound address.
func (s *NullServer) Addr() string { return s.ln.Addr().String() }

// Serve accepts until Close.
func (s *NullServer) Serve() error {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// EMFILE and friends: back off a little, like any server.
			time.Sleep(5 * time.Millisecond)
			continue
		}
		go s.handle(c)
	}
}

// Close stops accepting.
func (s *NullServer) Close() error { return s.ln.Close() }

func (s *NullServer) handle(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	var small [512]byte
	if _, err := io.ReadFull(c, small[:4]); err != nil {
		return
	}
	n := int(binary.BigEndian.Uint32(small[:4]))
	if n < codec.HeaderLen || n > codec.MaxFrame {
		return
	}
	var buf []byte
	if n+4 <= len(small) {
		buf = small[:n+4]
	} else {
		buf = make([]byte, n+4)
		copy(buf, small[:4])
	}
	if _, err := io.ReadFull(c, buf[4:]); err != nil {
		return
	}
	msgType := binary.BigEndian.Uint16(buf[8:])
	s.mu.RLock()
	rep, ok := s.replies[msgType]
	if !ok {
		rep = s.deflt
	}
	s.mu.RUnlock()
	if err := writeReply(c, rep); err == nil {
		s.served.Add(1)
	}
}

// writeReply writes rep: from its memory file with sendfile, else with
// write.
func writeReply(c net.Conn, rep *memfile.Bytes) error {
	tc, ok := c.(*net.TCPConn)
	if _, file := rep.File(); !file || !ok {
		_, err := c.Write(rep.Bytes())
		return err
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var off int64
	var serr error
	err = raw.Write(func(fd uintptr) bool {
		serr = rep.SendTo(int(fd), &off)
		return serr != unix.EAGAIN // else wait until writable
	})
	if err != nil {
		return err
	}
	return serr
}
