package edge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/bpf"
	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
	"github.com/lablup/slurm-frontend/state/memfile"
)

// Config tunes the listener.
type Config struct {
	Addr        string        // host:port
	Loops       int           // event loops; 0 = GOMAXPROCS
	Workers     int           // goroutines for Slow requests
	WaitWorkers int           // goroutines for the Slow requests that mostly wait (below)
	QueueLen    int           // pending Slow requests before clients are told to back off
	IdleTimeout time.Duration // a connection that has not sent a whole request by then is closed
	DoneTimeout time.Duration // an answered connection the client did not close
	MaxFrame    int
	RateLimit   *RateLimit // nil: every request admitted
	Observer    Observer   // nil: no metrics beyond Stats
	// Slog gets a debug line per RPC (when enabled at debug) and gnet's
	// own lines; nil: neither.
	Slog *slog.Logger
	// IO is the transport: IOEpoll (gnet, the default) or IOUring
	// (uring_server.go; epoll when the kernel refuses io_uring).
	IO string
}

func (c *Config) defaults() {
	if c.Loops <= 0 {
		c.Loops = runtime.GOMAXPROCS(0)
	}
	if c.Workers <= 0 {
		c.Workers = 16
	}
	// The requests the handler says mostly wait (Waiter: a write
	// waiting for the shared sync of its group commit) get as many
	// goroutines as slurmctld's server threads, so that every
	// concurrent writer joins the same sync, while heavy work (a
	// listing encoded on the spot) stays bounded by Workers.
	if c.WaitWorkers <= 0 {
		c.WaitWorkers = 256
	}
	if c.QueueLen <= 0 {
		c.QueueLen = 4096
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 60 * time.Second
	}
	if c.DoneTimeout <= 0 {
		c.DoneTimeout = 10 * time.Second
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = codec.MaxFrame
	}
}

// Server is the controller-port listener.
type Server struct {
	gnet.BuiltinEventEngine
	cfg       Config
	h         Handler
	auth      Authenticator
	signer    Signer
	stats     Stats
	log       Logger
	eng       gnet.Engine
	ready     chan error
	work      chan *job
	waitq     chan *job // the wait pool's (Config.WaitWorkers); nil without a Waiter
	waits     Waiter
	quit      chan struct{} // closed when the listener has stopped: workers leave
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[gnet.Conn]*connState
	open      atomic.Int64
	stopped   atomic.Bool
	acct      bpf.Accounting // per-source-host connection load (eBPF, or userspace)
	noSndbuf  atomic.Bool    // SO_SNDBUFFORCE refused (not CAP_NET_ADMIN)
	user      *bpf.Userspace // set when acct is the userspace fallback
	lastWakes atomic.Int64   // OnTraffic calls of the last closed connection (tests)
	lastLog   time.Time
	// authFail counts refused requests by munge.Reason (body-hash
	// failures under badHash): slurmctld only logs them, an operator
	// wants the totals too.
	authFail [256]atomic.Uint64
	badHash  atomic.Uint64
	rl       atomic.Pointer[limiter] // nil: no rate limits
	ur       *uringEngine            // the io_uring transport, when it serves
}

type connState struct {
	opened time.Time
	peer   netip.Addr  // the client's address (unmapped)
	done   atomic.Bool // answered (or refused): ignore further input
	// working: its request is with a worker (a slow RPC may take
	// seconds: an allocation waiting for its session, an engine call);
	// the sweeper leaves it open until the reply is written.
	working atomic.Bool
	// streaming: the rest of a big reply is being written by a
	// goroutine of its own (streamRest); it closes the connection.
	streaming atomic.Bool
	doneAt    atomic.Int64 // monoNow() when answered
	lowat     int          // SO_RCVLOWAT last set (event-loop goroutine only)
	wakes     int          // OnTraffic calls (event-loop goroutine only; tests)
}

// monoNow is the monotonic clock in nanoseconds since the process
// started: when a connection was answered, compared by the sweeper, must
// not move with steps of the wall clock (a step forward would cut off
// replies still draining, a step back keep dead connections for as long).
func monoNow() int64 { return int64(time.Since(monoBase)) }

var monoBase = time.Now()

type job struct {
	c     gnet.Conn
	req   Request
	start time.Time
	// held: a request the rate limit made wait (22.05 clients); the
	// worker answers it as the event loop would have (Fast, then Slow).
	held bool
}

// New makes a server; call Run.
func New(cfg Config, h Handler, auth Authenticator, signer Signer, stats Stats, log Logger) *Server {
	cfg.defaults()
	s := &Server{cfg: cfg, h: h, auth: auth, signer: signer, stats: stats, log: log,
		ready: make(chan error, 1), conns: map[gnet.Conn]*connState{}}
	s.SetRateLimit(cfg.RateLimit)
	return s
}

// SetRateLimit replaces the rate limits (scontrol reconfigure): new
// buckets, as slurmctld's restart makes them; nil or zero sizes turn
// them off. The counts of refusals carry over.
func (s *Server) SetRateLimit(rl *RateLimit) {
	var l *limiter
	if rl != nil && (rl.User.on() || rl.Host.on()) {
		l = newLimiter(*rl)
	}
	if old := s.rl.Swap(l); old != nil && l != nil {
		l.UserBackoffs.Add(old.UserBackoffs.Load())
		l.UserHolds.Add(old.UserHolds.Load())
		l.HostBackoffs.Add(old.HostBackoffs.Load())
		l.HostHolds.Add(old.HostHolds.Load())
	}
}

// RateLimited returns the requests told to back off and those held (22.05
// clients) since start, by the limit that acted ("user", "host").
func (s *Server) RateLimited() (backoffs, holds map[string]uint64) {
	rl := s.rl.Load()
	if rl == nil {
		return nil, nil
	}
	return map[string]uint64{"user": rl.UserBackoffs.Load(), "host": rl.HostBackoffs.Load()},
		map[string]uint64{"user": rl.UserHolds.Load(), "host": rl.HostHolds.Load()}
}

// Ready is closed (after sending nil) once the listener accepts, or gets
// the startup error.
func (s *Server) Ready() <-chan error { return s.ready }

// Open reports the number of open connections.
func (s *Server) Open() int64 { return s.open.Load() }

// Run blocks serving until Stop. The port is bound before Ready fires.
func (s *Server) Run() error {
	// Bind once ourselves first so "address in use" is a clear,
	// synchronous error rather than a log line from inside gnet.
	ln, err := listenWait(s.cfg.Addr, portWait, s.logf)
	if err != nil {
		s.ready <- err
		return err
	}
	ln.Close()
	s.work = make(chan *job, s.cfg.QueueLen)
	s.quit = make(chan struct{})
	for i := 0; i < s.cfg.Workers; i++ {
		s.wg.Add(1)
		go s.worker(s.work)
	}
	if w, ok := s.h.(Waiter); ok {
		s.waits = w
		s.waitq = make(chan *job, s.cfg.QueueLen)
		for i := 0; i < s.cfg.WaitWorkers; i++ {
			s.wg.Add(1)
			go s.worker(s.waitq)
		}
	}
	if s.cfg.IO == IOUring {
		started, err := s.runUring()
		if started {
			close(s.quit)
			s.wg.Wait()
			return err
		}
		s.logf("io_uring unavailable (%v): serving with epoll", err)
	}
	opts := []gnet.Option{
		gnet.WithMulticore(s.cfg.Loops > 1),
		gnet.WithNumEventLoop(s.cfg.Loops),
		gnet.WithReusePort(false),
		gnet.WithReuseAddr(true), // restart on the same port despite TIME-WAIT
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithTicker(true),
		gnet.WithSocketRecvBuffer(0),
		gnet.WithLogLevel(4), // errors only
	}
	if s.cfg.Slog != nil {
		opts = append(opts, gnet.WithLogger(gnetLogger{s.cfg.Slog}))
	}
	err = gnet.Run(s, "tcp://"+s.cfg.Addr, opts...)
	if err != nil {
		select {
		case s.ready <- err:
		default:
		}
	}
	close(s.quit)
	s.wg.Wait()
	return err
}

// AuthFailures returns the requests refused since start for their
// credential, by reason ("expired", "invalid", ...; "body hash" for a
// body that does not match its credential's hash).
func (s *Server) AuthFailures() map[string]uint64 {
	out := map[string]uint64{}
	for r := range s.authFail {
		if n := s.authFail[r].Load(); n > 0 {
			out[munge.Reason(r).String()] = n
		}
	}
	if n := s.badHash.Load(); n > 0 {
		out["body hash"] = n
	}
	return out
}

func (s *Server) authSummary() string {
	m := s.AuthFailures()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	return b.String()
}

// Stop shuts the listener down.
func (s *Server) Stop(ctx context.Context) error {
	s.stopped.Store(true)
	if top := s.TopSources(5); len(top) > 0 {
		s.logf("connection load since start, top sources: %s", strings.Join(top, "; "))
	}
	if sum := s.authSummary(); sum != "" {
		s.logf("requests refused for their credential since start: %s", sum)
	}
	var err error
	if s.ur != nil {
		err = s.ur.shutdown(ctx)
	} else {
		err = s.eng.Stop(ctx)
	}
	if s.acct != nil {
		s.acct.Close()
	}
	return err
}

func (s *Server) OnBoot(eng gnet.Engine) gnet.Action {
	s.eng = eng
	s.startAccounting()
	s.ready <- nil
	return gnet.None
}

// startAccounting attaches the eBPF connection-load program to the
// listener (accepted connections inherit it), or falls back to counting
// in OnOpen.
func (s *Server) startAccounting() {
	acct, err := bpf.New()
	s.acct = acct
	if u, ok := acct.(*bpf.Userspace); ok {
		s.user = u
		s.logf("connection accounting in userspace: %v", err)
		return
	}
	var fd int
	if s.ur != nil {
		fd, err = s.ur.dupListener()
	} else {
		fd, err = s.eng.Dup()
	}
	if err != nil {
		s.logf("connection accounting: %v", err)
		return
	}
	defer syscall.Close(fd)
	if err := acct.Attach(fd); err != nil {
		s.logf("connection accounting: %v; counting in userspace", err)
		acct.Close()
		s.user = bpf.NewUserspace()
		s.acct = s.user
		return
	}
	s.logf("connection accounting: eBPF on the listener")
}

// Sources is the connection load per source host so far, and how it was
// counted ("ebpf" or "userspace"). Valid once Ready has answered.
func (s *Server) Sources() (map[netip.Addr]bpf.Counters, string) {
	if s.acct == nil {
		return nil, ""
	}
	snap, err := s.acct.Snapshot()
	if err != nil {
		return nil, s.acct.Kind()
	}
	return snap, s.acct.Kind()
}

// TopSources returns the busiest source hosts by bytes sent to us.
func (s *Server) TopSources(n int) []string {
	if s.acct == nil {
		return nil
	}
	snap, err := s.acct.Snapshot()
	if err != nil {
		return nil
	}
	type row struct {
		a netip.Addr
		c bpf.Counters
	}
	var rows []row
	for a, c := range snap {
		rows = append(rows, row{a, c})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].c.Bytes > rows[j].c.Bytes })
	var out []string
	for i := 0; i < len(rows) && i < n; i++ {
		out = append(out, fmt.Sprintf("%s %d packets %d bytes", rows[i].a, rows[i].c.Packets, rows[i].c.Bytes))
	}
	return out
}

func (s *Server) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	st := &connState{opened: time.Now(), peer: peerAddr(c)}
	if s.user != nil && st.peer.IsValid() {
		s.user.Conn(st.peer)
	}
	c.SetContext(st)
	s.mu.Lock()
	s.conns[c] = st
	s.mu.Unlock()
	s.open.Add(1)
	return nil, gnet.None
}

func (s *Server) OnClose(c gnet.Conn, _ error) gnet.Action {
	if st, _ := c.Context().(*connState); st != nil {
		s.lastWakes.Store(int64(st.wakes))
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.open.Add(-1)
	return gnet.None
}

// peerAddr is the client's address, unmapped (::ffff:a.b.c.d is a.b.c.d).
func peerAddr(c gnet.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// OnTick reaps connections that idle too long or were answered but never
// closed by the peer, and charges hosts for the connections the
// accounting saw (the per-host rate limit).
func (s *Server) OnTick() (time.Duration, gnet.Action) {
	now := time.Now()
	if rl := s.rl.Load(); rl != nil && rl.cfg.Host.on() {
		if snap, _ := s.Sources(); snap != nil {
			rl.feed(snap, time.Duration(monoNow()))
		}
	}
	var victims, flushed []gnet.Conn
	s.mu.Lock()
	for c, st := range s.conns {
		if st.working.Load() {
			if now.Sub(st.opened) > 10*s.cfg.IdleTimeout {
				victims = append(victims, c) // a worker that never answers
			}
			continue
		}
		if st.streaming.Load() {
			continue // its writer closes it (bounded by streamTimeout)
		}
		if st.done.Load() {
			switch since := time.Duration(monoNow() - st.doneAt.Load()); {
			case since > s.cfg.DoneTimeout:
				victims = append(victims, c)
			case since > time.Second:
				flushed = append(flushed, c)
			}
		} else if now.Sub(st.opened) > s.cfg.IdleTimeout {
			victims = append(victims, c)
		}
	}
	s.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
	// An answered connection whose reply gnet has since finished writing
	// is closed too; its buffer belongs to its event loop, so it is
	// looked at there (an empty write runs the check on the loop).
	for _, c := range flushed {
		_ = c.AsyncWritev(nil, func(c gnet.Conn, err error) error {
			if err == nil && c.OutboundBuffered() == 0 {
				return c.Close()
			}
			return nil
		})
	}
	if now.Sub(s.lastLog) > 5*time.Minute {
		if s.lastLog.IsZero() {
			s.lastLog = now
		} else {
			if top := s.TopSources(3); len(top) > 0 {
				s.lastLog = now
				s.logf("connection load, top sources: %s", strings.Join(top, "; "))
			}
			if sum := s.authSummary(); sum != "" {
				s.lastLog = now
				s.logf("requests refused for their credential so far: %s", sum)
			}
		}
	}
	return 500 * time.Millisecond, gnet.None
}

func (s *Server) OnTraffic(c gnet.Conn) gnet.Action {
	st, _ := c.Context().(*connState)
	if st == nil || st.done.Load() {
		_, _ = c.Discard(c.InboundBuffered())
		return gnet.None
	}
	st.wakes++
	if have := c.InboundBuffered(); have < 4 {
		s.waitFor(c, st, 4-have)
		return gnet.None
	}
	hdr, err := c.Peek(4)
	if err != nil || len(hdr) < 4 {
		return gnet.None // wait for more
	}
	n := int(binary.BigEndian.Uint32(hdr))
	if n > s.cfg.MaxFrame || n < codec.HeaderLen {
		// slurmctld cannot read such a message either: it drops the
		// connection without a reply.
		s.logf("refusing frame of %d bytes from %s", n, c.RemoteAddr())
		st.done.Store(true)
		return gnet.Close
	}
	if have := c.InboundBuffered(); have < n+4 {
		s.waitFor(c, st, n+4-have)
		return gnet.None
	}
	raw, err := c.Peek(n + 4)
	if err != nil {
		return gnet.Close
	}
	start := time.Now()
	var f codec.Frame
	if err := codec.DecodeFrame(raw, &f); err != nil {
		_, _ = c.Discard(n + 4)
		return s.refuse(c, st, &f, err)
	}
	req := Request{Version: f.Version, Flags: f.Flags, MsgType: f.MsgType, Body: f.Body, Peer: st.peer}
	if f.Flags&codec.FlagNoAuthCred != 0 || f.AuthPlugin != codec.AuthPluginMunge {
		_, _ = c.Discard(n + 4)
		return s.refuse(c, st, &f, &codec.Error{Code: codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, Msg: "no munge credential"})
	}
	req.UID, req.GID, req.Origin, err = s.auth.Verify(f.Cred, f.MsgType, f.Body)
	if err != nil {
		_, _ = c.Discard(n + 4)
		return s.refuseAuth(c, st, &f, err)
	}
	if rl := s.rl.Load(); rl != nil {
		if a := s.admit(rl, c, st, &req, start); a != gnet.None || st.done.Load() {
			_, _ = c.Discard(n + 4)
			return a
		}
	}
	if rep, ok := s.h.Fast(&req); ok {
		if rep.Drop {
			_, _ = c.Discard(n + 4)
			st.done.Store(true)
			st.doneAt.Store(monoNow())
			return gnet.Close
		}
		var out []byte
		if rep.Frame != nil && len(rep.More) > 0 {
			head := rep.Frame
			if req.Version < codec.V23_02 {
				head = s.signedHead(&req, rep.Frame)
			}
			_, _ = c.Discard(n + 4)
			s.record(&req, PathCache, start)
			return s.finishPieces(c, st, head, rep.More)
		}
		if rep.Frame != nil && req.Version >= codec.V23_02 {
			out = rep.Frame // prebuilt and immutable: written as is, no copy
		} else {
			out = s.frame(nil, &req, rep)
		}
		_, _ = c.Discard(n + 4)
		path := PathBuilt
		if rep.Frame != nil {
			path = PathCache
		}
		s.record(&req, path, start)
		return s.finish(c, st, out)
	}
	// Slow path: copy the body off the connection buffer.
	req.Body = append([]byte(nil), f.Body...)
	req.Peer = st.peer
	req.Local = localAddr(c)
	_, _ = c.Discard(n + 4)
	st.done.Store(true)
	st.doneAt.Store(monoNow())
	st.working.Store(true)
	select {
	case s.queue(req.MsgType) <- &job{c: c, req: req, start: start}:
	default:
		if req.Version < codec.V23_02 {
			// 22.05 clients know no back-off (an error to them): they
			// wait for a worker instead.
			go s.enqueue(&job{c: c, req: req, start: start})
			return gnet.None
		}
		st.working.Store(false)
		s.logf("worker queue full; telling %s to back off", c.RemoteAddr())
		return s.finish(c, st, s.frame(nil, &req, RC(codec.SLURMCTLD_COMMUNICATIONS_BACKOFF)))
	}
	return gnet.None
}

// admit applies the rate limits to an authenticated request, as
// slurmctld checks rl_* before serving anything: a client of 23.02 or
// later over its limit is answered SLURMCTLD_COMMUNICATIONS_BACKOFF, on
// which it sleeps (1 s, then 2 s, ...) and retries; a refusal is not
// counted among the RPCs sdiag shows (slurmctld's is not either).
// 22.05 clients have no back-off (1804 is an unknown error to them), so
// their request is held until the bucket pays for it (at most MaxHold)
// and then served: they wait as long as a 23.02+ client would have
// slept. It returns gnet.None with the request still to serve when it
// is admitted.
func (s *Server) admit(rl *limiter, c gnet.Conn, st *connState, req *Request, start time.Time) gnet.Action {
	d := rl.admit(req.UID, st.peer, time.Duration(monoNow()), req.Version < codec.V23_02)
	if d.v == admitted {
		return gnet.None
	}
	if d.log {
		what := "back off"
		if d.v == held {
			what = fmt.Sprintf("wait %v", d.wait.Round(time.Millisecond))
		}
		s.logf("RPC rate limit (per %s) exceeded by uid %d with %s from %s, telling to %s",
			d.by, req.UID, codec.MsgTypeName(req.MsgType), st.peer, what)
	}
	if d.v == backOff {
		return s.finish(c, st, s.frame(nil, req, RC(codec.SLURMCTLD_COMMUNICATIONS_BACKOFF)))
	}
	r := *req
	r.Body = append([]byte(nil), req.Body...)
	r.Peer = st.peer
	st.done.Store(true)
	st.doneAt.Store(monoNow())
	st.working.Store(true)
	// Timed from its release: sdiag's figures are service times.
	time.AfterFunc(d.wait, func() { s.enqueue(&job{c: c, req: r, start: time.Now(), held: true}) })
	return gnet.None
}

// record counts an answered RPC for sdiag and the metrics, and logs it
// at debug level.
func (s *Server) record(req *Request, path Path, start time.Time) {
	d := time.Since(start)
	s.stats.Record(req.MsgType, req.UID, d)
	if s.cfg.Observer != nil {
		s.cfg.Observer.Observe(req.MsgType, req.Version, req.UID, path, d)
	}
	if l := s.cfg.Slog; l != nil && l.Enabled(context.Background(), slog.LevelDebug) {
		l.LogAttrs(context.Background(), slog.LevelDebug, "rpc",
			slog.String("type", codec.MsgTypeName(req.MsgType)), slog.String("version", codec.VersionName(req.Version)),
			slog.Uint64("uid", uint64(req.UID)), slog.String("peer", req.Peer.String()),
			slog.String("path", path.String()), slog.Duration("took", d))
	}
}

// gnetLogger hands gnet's own lines to the server's logger.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(f string, a ...any) { g.l.Debug(fmt.Sprintf(f, a...), "from", "gnet") }
func (g gnetLogger) Infof(f string, a ...any)  { g.l.Info(fmt.Sprintf(f, a...), "from", "gnet") }
func (g gnetLogger) Warnf(f string, a ...any)  { g.l.Warn(fmt.Sprintf(f, a...), "from", "gnet") }
func (g gnetLogger) Errorf(f string, a ...any) { g.l.Error(fmt.Sprintf(f, a...), "from", "gnet") }
func (g gnetLogger) Fatalf(f string, a ...any) { g.l.Error(fmt.Sprintf(f, a...), "from", "gnet") }

func (j *job) path() Path {
	if j.held {
		return PathHeld
	}
	return PathWorker
}

// enqueue hands j to a worker, waiting for room; after Stop the
// connection is closed instead.
func (s *Server) enqueue(j *job) {
	select {
	case s.queue(j.req.MsgType) <- j:
	case <-s.quit:
		_ = j.c.Close()
	}
}

// queue is where a Slow request of type t goes: the wait pool's queue
// for what the handler says mostly waits, the workers' otherwise.
func (s *Server) queue(t uint16) chan *job {
	if s.waits != nil && s.waits.Waits(t) {
		return s.waitq
	}
	return s.work
}

func (s *Server) worker(q chan *job) {
	defer s.wg.Done()
	for {
		var j *job
		select {
		case j = <-q:
		case <-s.quit:
			return
		}
		var rep Reply
		fast := false
		if j.held {
			rep, fast = s.h.Fast(&j.req)
		}
		if !fast {
			rep = s.h.Slow(&j.req)
		} else if rep.Drop {
			_ = j.c.AsyncWrite(nil, func(c gnet.Conn, _ error) error { return c.Close() })
			continue
		}
		if rep.Frame != nil && len(rep.More) > 0 && s.streamFromWorker(j, rep) {
			continue
		}
		out := s.frame(nil, &j.req, rep)
		req := j.req
		start := j.start
		path := j.path()
		_ = j.c.AsyncWrite(out, func(c gnet.Conn, err error) error {
			if rep.After != nil {
				defer rep.After()
			}
			s.record(&req, path, start)
			if st, _ := c.Context().(*connState); st != nil {
				st.doneAt.Store(monoNow())
				st.working.Store(false)
			}
			if c.OutboundBuffered() == 0 {
				_ = c.Close()
			}
			return nil
		})
	}
}

// streamFromWorker sends a reply made of shared pieces that a worker
// built (the first listing of a new snapshot: requests arriving before
// it exists wait for it in the slow path) as the event loop sends one
// (finishPieces), not joined into one slice and copied again into
// gnet's buffer: the first 64 squeue of 200,000 jobs after a change were
// two copies of 140 MB each, and the server grew to 16 GB. It runs on
// the event loop (an empty AsyncWrite's callback): there the connection
// is known to be open, so its descriptor is its own, not a number a
// closed connection left to a newer client. false: the loop is gone
// (the caller answers as before).
func (s *Server) streamFromWorker(j *job, rep Reply) bool {
	st, _ := j.c.Context().(*connState)
	if st == nil {
		return false
	}
	head := rep.Frame
	if j.req.Version < codec.V23_02 {
		head = s.signedHead(&j.req, rep.Frame)
	}
	s.record(&j.req, j.path(), j.start)
	err := j.c.AsyncWrite(nil, func(c gnet.Conn, err error) error {
		if err == nil && s.finishPieces(c, st, head, rep.More) == gnet.Close {
			_ = c.Close()
		}
		// After finishPieces: a streamed rest has set streaming, and
		// the sweeper must see one or the other.
		st.working.Store(false)
		return nil
	})
	return err == nil
}

// finish writes the reply and marks the connection answered. A reply
// fully handed to the kernel lets us close at once; a partial one stays
// buffered and the connection is closed by the client or the sweeper.
func (s *Server) finish(c gnet.Conn, st *connState, out []byte) gnet.Action {
	st.done.Store(true)
	st.doneAt.Store(monoNow())
	if len(out) > bigReply && !s.noSndbuf.Load() {
		// Let the kernel take a large reply (a squeue of thousands of
		// jobs) in one write: what it cannot take, gnet would copy into
		// a per-connection buffer, a second copy of every byte.
		if err := unix.SetsockoptInt(c.Fd(), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, len(out)+64<<10); err != nil {
			s.noSndbuf.Store(true) // not privileged: stay with gnet's buffering
		}
	}
	_, _ = c.Write(out)
	if c.OutboundBuffered() == 0 {
		return gnet.Close
	}
	return gnet.None
}

// maxLowat caps SO_RCVLOWAT below the smallest receive buffer a
// connection can have, so that the wake-up always comes.
const maxLowat = 32 << 10

// waitFor tells the kernel not to wake the event loop for this
// connection until missing more bytes have arrived (or it is closed): a
// client that trickles its request (a slow link, or a byte-a-second
// attacker) then costs one wake-up per request instead of one per
// segment. Clients that send the whole frame at once never get here.
func (s *Server) waitFor(c gnet.Conn, st *connState, missing int) {
	want := min(max(missing, 1), maxLowat)
	if want == st.lowat || (want == 1 && st.lowat == 0) {
		return
	}
	if err := unix.SetsockoptInt(c.Fd(), unix.SOL_SOCKET, unix.SO_RCVLOWAT, want); err == nil {
		st.lowat = want
	}
}

// bigReply is the size above which a reply gets a socket buffer of its own.
const bigReply = 256 << 10

// finishPieces writes a prebuilt reply made of pieces (a squeue listing:
// head, then chunks of encoded job records) with writev and sendfile,
// straight from the shared immutable buffers; what the kernel does not
// take is handed to gnet's buffer.
func (s *Server) finishPieces(c gnet.Conn, st *connState, head []byte, more []*memfile.Bytes) gnet.Action {
	st.done.Store(true)
	st.doneAt.Store(monoNow())
	total, files := len(head), 0
	for _, p := range more {
		total += p.Len()
		if _, ok := p.File(); ok {
			files++
		}
	}
	if total > bigReply && !s.noSndbuf.Load() {
		if err := unix.SetsockoptInt(c.Fd(), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, total+64<<10); err != nil {
			s.noSndbuf.Store(true)
		}
	}
	// A reply written by several calls (sendfile per memory file) is
	// corked: each call would otherwise push its tail as a short segment
	// of its own, and the client would take more, smaller packets (and
	// wake-ups) per reply; measured, 5-8 % more squeue/s at 1,000 jobs.
	cork := files > 0 || len(more) >= iovMax
	if cork {
		_ = unix.SetsockoptInt(c.Fd(), unix.IPPROTO_TCP, unix.TCP_CORK, 1)
	}
	sent, err := writePieces(c.Fd(), head, more)
	if cork {
		_ = unix.SetsockoptInt(c.Fd(), unix.IPPROTO_TCP, unix.TCP_CORK, 0)
	}
	if err != nil {
		return gnet.Close
	}
	if sent < total && s.streamRest(c, st, head, more, sent) {
		return gnet.None
	}
	if sent < total {
		// The rest goes through gnet's buffer (a copy it would make
		// anyway; its writev does not split at the kernel's piece limit).
		rest := make([]byte, 0, total-sent)
		if sent < len(head) {
			rest = append(rest, head[sent:]...)
			sent = 0
		} else {
			sent -= len(head)
		}
		for _, p := range more {
			if sent >= p.Len() {
				sent -= p.Len()
				continue
			}
			rest = append(rest, p.Bytes()[sent:]...)
			sent = 0
		}
		runtime.KeepAlive(more)
		_, _ = c.Write(rest)
	}
	if c.OutboundBuffered() == 0 {
		return gnet.Close
	}
	return gnet.None
}

// streamTimeout bounds how long the rest of a reply may take to drain to
// a client that reads it slowly.
const streamTimeout = 10 * time.Minute

// streamRest writes what the kernel did not take of a reply from a
// goroutine of its own, on a duplicate of the connection's descriptor
// that Go's poller waits on, straight from the shared pieces (memory
// files by sendfile): no copy per connection. Copied into gnet's
// buffer instead, 64 concurrent listings of 200,000 jobs (140 MB each)
// were 9 GB of heap, and the server was killed for it. false: not
// possible here (the caller copies as before).
func (s *Server) streamRest(c gnet.Conn, st *connState, head []byte, more []*memfile.Bytes, sent int) bool {
	// Close-on-exec from the start: a shim forked between a dup and a
	// later CloseOnExec would keep the client's socket open for good.
	fd, err := unix.FcntlInt(uintptr(c.Fd()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "reply")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return false
	}
	// What is left: the rest of the piece the kernel stopped in (as a
	// head), then the pieces after it.
	h, m := head, more
	if sent < len(h) {
		h = h[sent:]
	} else {
		sent -= len(h)
		h = nil
		for len(m) > 0 && sent >= m[0].Len() {
			sent -= m[0].Len()
			m = m[1:]
		}
		if len(m) > 0 {
			h, m = m[0].Bytes()[sent:], m[1:]
		}
	}
	st.streaming.Store(true)
	go func() {
		defer c.Close()
		defer st.streaming.Store(false)
		defer f.Close()
		_ = f.SetWriteDeadline(time.Now().Add(streamTimeout))
		var werr error
		err := rc.Write(func(fd uintptr) bool {
			for len(h) > 0 || len(m) > 0 {
				want := len(h)
				for _, p := range m {
					want += p.Len()
				}
				n, err := writePieces(int(fd), h, m)
				if err != nil {
					werr = err
					return true
				}
				if n == want {
					h, m = nil, nil
					return true
				}
				if n == 0 {
					return false // full: wait until writable
				}
				// Partly taken: move past what was.
				if n < len(h) {
					h = h[n:]
					continue
				}
				n -= len(h)
				h = nil
				for len(m) > 0 && n >= m[0].Len() {
					n -= m[0].Len()
					m = m[1:]
				}
				if len(m) > 0 {
					h, m = m[0].Bytes()[n:], m[1:]
				}
			}
			return true
		})
		runtime.KeepAlive(more)
		if err == nil {
			err = werr
		}
		if err != nil && !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
			s.logf("a reply's rest to %v: %v", c.RemoteAddr(), err) // a client gone is not news
		}
	}()
	return true
}

// refuse answers a request that cannot be served with the Slurm error it
// carries, as slurmctld does, and logs why.
func (s *Server) refuse(c gnet.Conn, st *connState, f *codec.Frame, err error) gnet.Action {
	// A message slurmctld cannot unpack (bad header, unknown version,
	// unknown auth plugin, body length mismatch) is logged and the
	// connection closed without a reply, as 22.05 does; a client of a
	// version we do not speak could not read a reply anyway.
	s.logf("refused %s from %s (version %#x): %v", codec.MsgTypeName(f.MsgType), c.RemoteAddr(), f.Version, err)
	st.done.Store(true)
	st.doneAt.Store(monoNow())
	return gnet.Close
}

// refuseAuth answers a request whose credential or body hash failed as
// slurmctld does: a body-hash mismatch closes the connection silently
// (every release); a credential failure closes silently up to 24.05 and
// is answered with SLURM_PROTOCOL_AUTHENTICATION_ERROR from 24.11 on.
func (s *Server) refuseAuth(c gnet.Conn, st *connState, f *codec.Frame, err error) gnet.Action {
	if codec.CodeOf(err) == codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		s.badHash.Add(1)
	} else {
		s.authFail[munge.ReasonOf(err)].Add(1)
	}
	s.logf("refused %s from %s (version %s): authentication: %v", codec.MsgTypeName(f.MsgType), c.RemoteAddr(), codec.VersionName(f.Version), err)
	st.done.Store(true)
	st.doneAt.Store(monoNow())
	if codec.CodeOf(err) == codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET || f.Version < codec.V24_11 {
		return gnet.Close
	}
	return s.finish(c, st, codec.AppendRC(nil, f.Version, nil, codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR))
}

// signedHead gives the head of a prebuilt unsigned frame (frame head and
// the start of the body) the credential 22.05 requires. A 22.05
// credential carries no hash of the body, so the prebuilt pieces of a
// large reply follow as they are instead of being joined and copied.
func (s *Server) signedHead(req *Request, head []byte) []byte {
	var f codec.Frame
	if err := codec.DecodeFrameHead(head, &f); err != nil {
		s.logf("prebuilt reply unreadable, sent unsigned: %v", err)
		return head
	}
	cred := s.sign(req.UID, f.MsgType, nil)
	out := codec.AppendFrameHead(make([]byte, 0, len(head)+len(cred)+16), req.Version, f.MsgType, cred, int(f.BodyLen))
	return append(out, f.Body...)
}

// sign makes the credential of a 22.05 reply; a failure is logged and
// the reply goes with an empty one.
func (s *Server) sign(uid uint32, msgType uint16, body []byte) []byte {
	cred, err := s.signer.Sign(nil, uid, msgType, body)
	if err != nil {
		s.logf("cannot sign reply: %v", err)
		return []byte{}
	}
	return cred
}

// frame turns a Reply into bytes in the request's version.
func (s *Server) frame(dst []byte, req *Request, rep Reply) []byte {
	if rep.Frame != nil {
		head := rep.Frame // prebuilt frames carry no credential; 22.05 needs one
		if req.Version < codec.V23_02 {
			head = s.signedHead(req, rep.Frame)
		}
		dst = append(dst, head...)
		for _, p := range rep.More {
			dst = append(dst, p.Bytes()...)
		}
		runtime.KeepAlive(rep.More)
		return dst
	}
	var cred []byte
	if req.Version < codec.V23_02 {
		cred = s.sign(req.UID, rep.MsgType, rep.Body)
	}
	return codec.AppendFrame(dst, req.Version, rep.MsgType, cred, rep.Body)
}

func (s *Server) logf(format string, args ...any) {
	if s.log != nil {
		s.log.Printf(format, args...)
	}
}

// String describes the server for logs.
func (s *Server) String() string { return fmt.Sprintf("ctld edge on %s", s.cfg.Addr) }
