package edge

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// The node side of the wire: one listener per node stand-in (srun
// addresses each node at its slurm.conf NodeAddr and Port, and a node
// tells which node it is by the listener it was reached on), and the
// client that reaches srun's and salloc's own ports. Traffic here is a
// few messages per step, so plain goroutines serve it; the controller
// port's storm path stays on gnet.

// NodeHandler answers the messages of one node.
type NodeHandler interface {
	HandleNode(node string, req *Request) Reply
}

// NodeEndpoint is a node stand-in's listening address.
type NodeEndpoint struct {
	Name string
	Addr netip.AddrPort
}

// NodeServer serves every node stand-in's listener.
type NodeServer struct {
	h      NodeHandler
	auth   Authenticator
	signer Signer
	log    Logger
	wg     sync.WaitGroup
	mu     sync.Mutex
	ls     []net.Listener
	// served: the nodes listening here, any node when the shared
	// listener (name "") is: those a forwarded message can reach.
	served map[string]bool
}

// NewNodeServer listens for each endpoint; one that cannot be bound is
// logged and left out (its node takes no steps).
func NewNodeServer(eps []NodeEndpoint, h NodeHandler, auth Authenticator, signer Signer, log Logger) *NodeServer {
	s := &NodeServer{h: h, auth: auth, signer: signer, log: log, served: map[string]bool{}}
	bound := 0
	for _, ep := range eps {
		l, err := listenWait(ep.Addr.String(), time.Second, s.logf)
		if err != nil {
			s.logf("node %s: cannot listen on %v: %v (steps cannot use it)", ep.Name, ep.Addr, err)
			continue
		}
		bound++
		s.served[ep.Name] = true
		s.ls = append(s.ls, l)
		s.wg.Add(1)
		go s.accept(ep.Name, l)
	}
	if bound > 0 {
		s.logf("node stand-ins: %d of %d nodes listening (%v ...)", bound, len(eps), eps[0].Addr)
	}
	return s
}

// Close stops listening and waits for the acceptors.
func (s *NodeServer) Close() {
	s.mu.Lock()
	for _, l := range s.ls {
		l.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *NodeServer) logf(format string, args ...any) {
	if s.log != nil {
		s.log.Printf(format, args...)
	}
}

func (s *NodeServer) accept(node string, l net.Listener) {
	defer s.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go s.serve(node, c)
	}
}

// serve answers the one message of a connection (as slurmd does).
func (s *NodeServer) serve(node string, c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	raw, err := ReadFrame(bufio.NewReader(c))
	if err != nil {
		return
	}
	var f codec.Frame
	if err := codec.DecodeFrame(raw, &f); err != nil {
		s.logf("node %s: undecodable message from %v: %v", node, c.RemoteAddr(), err)
		return
	}
	req := Request{Version: f.Version, Flags: f.Flags, MsgType: f.MsgType, Body: f.Body}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		req.Peer = ap.Addr().Unmap()
	}
	if f.Flags&codec.FlagNoAuthCred != 0 || f.AuthPlugin != codec.AuthPluginMunge {
		s.logf("node %s: %s from %v without a munge credential: refused", node, codec.MsgTypeName(f.MsgType), c.RemoteAddr())
		_, _ = c.Write(s.reply(&req, RC(codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR)))
		return
	}
	req.UID, req.GID, req.Origin, err = s.auth.Verify(f.Cred, f.MsgType, f.Body)
	if err != nil {
		s.logf("node %s: %s from %v: authentication: %v", node, codec.MsgTypeName(f.MsgType), c.RemoteAddr(), err)
		_, _ = c.Write(s.reply(&req, RC(codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR)))
		return
	}
	if f.Forward > 0 {
		// srun passes a message to the first node of each span of
		// TreeWidth nodes, asking it to forward it to the rest: every
		// node stand-in is in this process, so each forwarded node
		// answers here, and the reply carries their answers in its ret
		// list, as slurmd's forwarding returns them.
		rep := s.h.HandleNode(node, &req)
		rets := s.forward(node, f.ForwardNodes, int(f.Forward), &req)
		var cred []byte
		if req.Version < codec.V23_02 && s.signer != nil {
			cred, _ = s.signer.Sign(nil, req.UID, rep.MsgType, rep.Body)
		}
		_, _ = c.Write(codec.AppendFrameRets(nil, req.Version, rep.MsgType, cred, rep.Body, rets))
		return
	}
	rep := s.h.HandleNode(node, &req)
	if rep.Drop {
		return
	}
	_, _ = c.Write(s.reply(&req, rep))
}

// forward answers req for each node of the forward list (cnt of them,
// the list srun wrote): a node not served here is returned as not
// reached (RESPONSE_FORWARD_FAILED), as slurmd marks a node it cannot
// connect to.
func (s *NodeServer) forward(from, list string, cnt int, req *Request) []codec.RetEntry {
	nodes, err := hostlist.ExpandLimit(list, 65535, 1<<20) // forward.cnt is 16 bits
	if err != nil {
		s.logf("node %s: %s from %v: forward list %q: %v", from, codec.MsgTypeName(req.MsgType), req.Peer, list, err)
		return nil // srun counts the answers missing as failed
	}
	if len(nodes) != cnt {
		s.logf("node %s: %s from %v: forward list %q names %d nodes, forward count %d", from, codec.MsgTypeName(req.MsgType), req.Peer, list, len(nodes), cnt)
	}
	rets := make([]codec.RetEntry, 0, len(nodes))
	for _, n := range nodes {
		if !s.served[n] && !s.served[""] {
			s.logf("node %s: %s: cannot forward to %s: not a node of this server", from, codec.MsgTypeName(req.MsgType), n)
			rets = append(rets, codec.RetEntry{Err: codec.SLURM_COMMUNICATIONS_CONNECTION_ERROR, MsgType: codec.RESPONSE_FORWARD_FAILED, NodeName: n, Body: []byte{}})
			continue
		}
		r := *req
		rep := s.h.HandleNode(n, &r)
		if rep.Drop || rep.MsgType == 0 {
			rep = RC(codec.SLURM_SUCCESS) // no answer of its own (slurmd notes such nodes as done)
		}
		rets = append(rets, codec.RetEntry{MsgType: rep.MsgType, NodeName: n, Body: rep.Body})
	}
	return rets
}

func (s *NodeServer) reply(req *Request, rep Reply) []byte {
	var cred []byte
	if req.Version < codec.V23_02 && s.signer != nil {
		cred, _ = s.signer.Sign(nil, req.UID, rep.MsgType, rep.Body)
	}
	return codec.AppendFrame(nil, req.Version, rep.MsgType, cred, rep.Body)
}

// ReadFrame reads one length-prefixed message (prefix included).
func ReadFrame(r io.Reader) ([]byte, error) {
	var p [4]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(p[:])
	if n > codec.MaxFrame {
		return nil, codec.ErrTooLarge
	}
	b := make([]byte, 4+n)
	copy(b, p[:])
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		return nil, err
	}
	return b, nil
}

// Caller sends messages to clients' listeners (srun's and salloc's
// ports), signed by the server for the client's uid.
type Caller struct {
	Signer Signer
}

// Call sends one message to to and, if reply, waits for its
// RESPONSE_SLURM_RC and returns the code.
func (k *Caller) Call(ctx context.Context, to netip.AddrPort, version, msgType uint16, body []byte, forUID uint32, reply bool) (uint32, error) {
	cred, err := k.Signer.Sign(nil, forUID, msgType, body)
	if err != nil {
		return 0, err
	}
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", to.String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write(codec.AppendFrame(nil, version, msgType, cred, body)); err != nil {
		return 0, err
	}
	if !reply {
		return 0, nil
	}
	raw, err := ReadFrame(bufio.NewReader(c))
	if err != nil {
		return 0, fmt.Errorf("no answer: %w", err)
	}
	var f codec.Frame
	if err := codec.DecodeFrame(raw, &f); err != nil {
		return 0, err
	}
	if (f.MsgType != codec.RESPONSE_SLURM_RC && f.MsgType != codec.RESPONSE_SLURM_RC_MSG) || len(f.Body) < 4 {
		return 0, fmt.Errorf("answered %s", codec.MsgTypeName(f.MsgType))
	}
	return binary.BigEndian.Uint32(f.Body), nil
}
