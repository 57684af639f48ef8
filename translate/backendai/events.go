package backendai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event names the 26.8.1 manager sends on GET /events/session
// (src/ai/backend/manager/events/hub/propagators/session.py). Scheduler
// transitions (SchedulingBroadcastEvent) are named "session_" + the
// lower-cased target status, RUNNING being "session_started"; batch
// results come from the agents; the kernel scope carries kernel_* events.
const (
	EvSessionPending         = "session_pending"
	EvSessionDeprioritizing  = "session_deprioritizing"
	EvSessionReserved        = "session_reserved"
	EvSessionScheduled       = "session_scheduled"
	EvSessionPreparing       = "session_preparing"
	EvSessionPulling         = "session_pulling"
	EvSessionPrepared        = "session_prepared"
	EvSessionCreating        = "session_creating"
	EvSessionStarted         = "session_started" // RUNNING
	EvSessionRestarting      = "session_restarting"
	EvSessionRunningDegraded = "session_running_degraded"
	EvSessionPreempted       = "session_preempted"
	EvSessionRescheduling    = "session_rescheduling"
	EvSessionTerminating     = "session_terminating"
	EvSessionTerminated      = "session_terminated"
	EvSessionError           = "session_error"
	EvSessionCancelled       = "session_cancelled"
	EvSessionSuccess         = "session_success" // batch command exited 0
	EvSessionFailure         = "session_failure" // batch command failed or timed out
	// EvSessionEnqueued and EvSessionCheckingPrecondition are legacy
	// event classes the propagator still maps; no 26.8.1 producer was
	// found (enqueue is announced as session_pending).
	EvSessionEnqueued             = "session_enqueued"
	EvSessionCheckingPrecondition = "session_checking_precondition"

	EvKernelPreparing   = "kernel_preparing"
	EvKernelPulling     = "kernel_pulling"
	EvKernelCreating    = "kernel_creating"
	EvKernelStarted     = "kernel_started"
	EvKernelCancelled   = "kernel_cancelled"
	EvKernelTerminating = "kernel_terminating"
	EvKernelTerminated  = "kernel_terminated"
)

// Event is one SSE message of the session event stream. The data keys are
// the manager's: reason, sessionName, ownerAccessKey, sessionId, exitCode,
// and for kernel events kernelId, clusterRole, clusterIdx (each of the
// last three sent only when truthy, so clusterIdx 0 is absent).
type Event struct {
	Name           string // the SSE "event:" field
	SessionID      string
	SessionName    string
	OwnerAccessKey string
	Reason         string
	// ExitCode is always nil from a 26.8.1 manager: the propagator stores
	// the code under "exit_Code" and reads "exit_code". Use the session's
	// result and status_info instead.
	ExitCode    *int
	KernelID    string
	ClusterRole string
	ClusterIdx  *int
	Raw         json.RawMessage // the data as received
}

// IsKernelEvent reports a kernel-scope event.
func (e Event) IsKernelEvent() bool { return strings.HasPrefix(e.Name, "kernel_") }

// Status is the session (or kernel) status an event announces ("" for
// result events and unknown names).
func (e Event) Status() string {
	var rest string
	switch {
	case strings.HasPrefix(e.Name, "session_"):
		rest = strings.TrimPrefix(e.Name, "session_")
		switch rest {
		case "started":
			return StatusRunning
		case "enqueued":
			return StatusPending
		case "success", "failure", "checking_precondition":
			return ""
		}
	case strings.HasPrefix(e.Name, "kernel_"):
		rest = strings.TrimPrefix(e.Name, "kernel_")
		if rest == "started" {
			return StatusRunning
		}
	default:
		return ""
	}
	up := strings.ToUpper(rest)
	for _, s := range AllSessionStatuses {
		if s == up {
			return s
		}
	}
	return ""
}

// Result is SUCCESS or FAILURE for session_success / session_failure, ""
// otherwise.
func (e Event) Result() string {
	switch e.Name {
	case EvSessionSuccess:
		return ResultSuccess
	case EvSessionFailure:
		return ResultFailure
	}
	return ""
}

// ParseEvent decodes one message's data.
func ParseEvent(name string, data []byte) (Event, error) {
	var d struct {
		Reason         json.RawMessage `json:"reason"`
		SessionName    string          `json:"sessionName"`
		OwnerAccessKey string          `json:"ownerAccessKey"`
		SessionID      string          `json:"sessionId"`
		ExitCode       *json.Number    `json:"exitCode"`
		KernelID       string          `json:"kernelId"`
		ClusterRole    string          `json:"clusterRole"`
		ClusterIdx     *json.Number    `json:"clusterIdx"`
	}
	ev := Event{Name: name, Raw: append(json.RawMessage(nil), data...)}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return ev, fmt.Errorf("backendai: event %q: bad data: %w", name, err)
	}
	ev.SessionID, ev.SessionName, ev.OwnerAccessKey = d.SessionID, d.SessionName, d.OwnerAccessKey
	ev.Reason = rawToString(d.Reason)
	ev.KernelID, ev.ClusterRole = d.KernelID, d.ClusterRole
	num := func(n *json.Number) *int {
		if n == nil {
			return nil
		}
		if i, err := strconv.Atoi(n.String()); err == nil {
			return &i
		}
		if f, err := n.Float64(); err == nil {
			i := int(f)
			return &i
		}
		return nil
	}
	ev.ExitCode, ev.ClusterIdx = num(d.ExitCode), num(d.ClusterIdx)
	return ev, nil
}

// Event scopes of GET /events/session.
const (
	ScopeSession = "session"
	ScopeKernel  = "kernel"
	ScopeAll     = "*" // = "session,kernel"
)

// EventStreamOptions select and tune StreamSessionEvents.
type EventStreamOptions struct {
	// SessionName follows one session ("" = every session visible to the
	// admin keypair: all of them for a superadmin). With a name, kernel
	// events are never delivered in 26.8.1, and the name is resolved once,
	// at connect time, to the newest session of that name (dead ones too).
	SessionName    string
	OwnerAccessKey string // with SessionName: whose session
	GroupName      string // a project name ("" = every project)
	Scope          string // ScopeSession, ScopeKernel, ScopeAll (default ScopeAll)
	// SessionID filters client-side: the manager accepts sessionId but
	// does not filter on it in 26.8.1.
	SessionID string
	// IdleTimeout drops a connection that sends nothing (the server pings
	// every 15 s) for this long (default 50s).
	IdleTimeout time.Duration
	// MinBackoff / MaxBackoff bound the reconnection delay (1s / 30s);
	// a "retry:" field from the server raises the minimum.
	MinBackoff, MaxBackoff time.Duration
	// OnConnect is called each time the stream is (re)established, before
	// its first event. There is no resume: events sent while disconnected
	// are lost, so a caller reconciles (ListSessions) here.
	OnConnect func()
	// OnDisconnect is called with the reason when a connection ends and a
	// reconnection follows.
	OnDisconnect func(error)
}

// StreamSessionEvents reads GET /events/session, calling fn for every
// event, and reconnects with backoff when the connection drops, fails
// with a retryable error or goes idle. It returns when ctx ends (ctx's
// error), when fn returns an error (that error), or on a permanent
// failure (an *APIError: bad credentials, forbidden, unknown session
// name…).
func (c *Client) StreamSessionEvents(ctx context.Context, o EventStreamOptions, fn func(Event) error) error {
	if o.Scope == "" {
		o.Scope = ScopeAll
	}
	switch o.Scope {
	case ScopeSession, ScopeKernel, ScopeAll, "session,kernel", "kernel,session":
	default:
		return fmt.Errorf("%w: event scope %q", ErrInvalidRequest, o.Scope)
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 50 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = 30 * time.Second
		if o.MaxBackoff < o.MinBackoff {
			o.MaxBackoff = o.MinBackoff
		}
	}
	if o.SessionID != "" {
		id, err := canonicalUUID(o.SessionID)
		if err != nil {
			return err
		}
		o.SessionID = id
	}
	q := url.Values{}
	if o.SessionName != "" {
		q.Set("sessionName", o.SessionName)
	}
	if o.OwnerAccessKey != "" {
		q.Set("ownerAccessKey", o.OwnerAccessKey)
	}
	if o.GroupName != "" {
		q.Set("groupName", o.GroupName)
	}
	q.Set("scope", o.Scope)

	policy := RetryPolicy{BaseDelay: o.MinBackoff, MaxDelay: o.MaxBackoff}.withDefaults()
	failures := 0
	serverRetry := time.Duration(0)
	for {
		got, retry, err := c.streamOnce(ctx, q, o, fn)
		if retry > 0 {
			serverRetry = retry
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ue *userError
		if errors.As(err, &ue) {
			return ue.err
		}
		if e, ok := asAPIError(err); ok && !IsRetryable(e) {
			return err
		}
		if got {
			failures = 0 // the connection worked: start the backoff over
		}
		if o.OnDisconnect != nil {
			o.OnDisconnect(err)
		}
		wait := policy.backoff(failures, err)
		if wait < serverRetry {
			wait = serverRetry
		}
		failures++
		c.logf("event stream: %v; reconnecting in %v", err, wait.Round(time.Millisecond))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// userError carries an error returned by the caller's fn.
type userError struct{ err error }

func (u *userError) Error() string { return u.err.Error() }

// errIdle: the server sent nothing for IdleTimeout.
var errIdle = errors.New("event stream idle")

// streamOnce runs one connection. got reports whether it was established.
func (c *Client) streamOnce(ctx context.Context, q url.Values, o EventStreamOptions, fn func(Event) error) (got bool, retry time.Duration, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := Request{Method: http.MethodGet, Path: "/events/session", Query: q}
	req, err := c.newHTTPRequest(cctx, r, nil, "text/plain")
	if err != nil {
		return false, 0, &userError{err}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")

	// The watchdog cancels the request when nothing arrives for
	// IdleTimeout (including while waiting for the response headers).
	var mu sync.Mutex
	idle := false
	timer := time.AfterFunc(o.IdleTimeout, func() {
		mu.Lock()
		idle = true
		mu.Unlock()
		cancel()
	})
	defer timer.Stop()
	wrap := func(e error) error {
		mu.Lock()
		defer mu.Unlock()
		if idle {
			return &TransportError{Method: r.Method, Path: r.Path, Err: errIdle}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &TransportError{Method: r.Method, Path: r.Path, Err: e}
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return false, 0, wrap(err)
	}
	defer resp.Body.Close()
	c.noteRateLimit(resp.Header)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, 0, decodeError(resp, body, r.Method, r.Path)
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); ct != "" && ct != "text/event-stream" {
		return false, 0, &TransportError{Method: r.Method, Path: r.Path, Err: fmt.Errorf("answer is %s, not an event stream", ct)}
	}
	timer.Reset(o.IdleTimeout)
	if o.OnConnect != nil {
		o.OnConnect()
	}
	sr := newSSEReader(resp.Body)
	for {
		msg, err := sr.next(func() { timer.Reset(o.IdleTimeout) })
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the server never ends a session stream on purpose
			}
			return true, sr.retry, wrap(err)
		}
		switch msg.event {
		case "server_close":
			return true, sr.retry, &TransportError{Method: r.Method, Path: r.Path, Err: errors.New("server closed the stream")}
		case "message":
			continue // no such messages on this stream
		}
		ev, perr := ParseEvent(msg.event, []byte(msg.data))
		if perr != nil {
			c.logf("%v", perr)
			continue
		}
		if o.SessionID != "" && ev.SessionID != o.SessionID {
			continue
		}
		if err := fn(ev); err != nil {
			return true, sr.retry, &userError{err}
		}
	}
}

// sseMessage is one dispatched SSE message.
type sseMessage struct {
	event, data, id string
}

// sseReader parses text/event-stream (WHATWG rules: lines end in CRLF, LF
// or CR — aiohttp-sse uses CRLF —, ":" starts a comment such as the
// server's ": ping", "field: value" drops one leading space, data lines
// join with "\n", a blank line dispatches, an event without data is not
// dispatched).
type sseReader struct {
	br     *bufio.Reader
	retry  time.Duration
	lastCR bool
}

const maxSSELine = 1 << 20

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReaderSize(r, 64<<10)} }

// line reads one line without its terminator.
func (s *sseReader) line() (string, error) {
	var b []byte
	for {
		c, err := s.br.ReadByte()
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				return string(b), io.ErrUnexpectedEOF
			}
			return "", err
		}
		if s.lastCR {
			s.lastCR = false
			if c == '\n' {
				continue // the LF of a CRLF
			}
		}
		switch c {
		case '\n':
			return string(b), nil
		case '\r':
			s.lastCR = true
			return string(b), nil
		}
		if len(b) >= maxSSELine {
			return "", fmt.Errorf("event stream line longer than %d bytes", maxSSELine)
		}
		b = append(b, c)
	}
}

func (s *sseReader) next(activity func()) (sseMessage, error) {
	var m sseMessage
	var data []string
	hasData := false
	for {
		ln, err := s.line()
		if err != nil {
			return sseMessage{}, err
		}
		if activity != nil {
			activity()
		}
		if ln == "" {
			if !hasData {
				m = sseMessage{}
				continue
			}
			if m.event == "" {
				m.event = "message"
			}
			m.data = strings.Join(data, "\n")
			return m, nil
		}
		if ln[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(ln, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			m.event = value
		case "data":
			data = append(data, value)
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				m.id = value
			}
		case "retry":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 {
				s.retry = time.Duration(n) * time.Millisecond
			}
		}
	}
}
