package double

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// GET /events/session: api/rest/events/handler.py push_session_events and
// manager/events/hub/propagators/session.py SessionEventPropagator of
// 26.8.1, framed by aiohttp_sse (>= 2.2): "event: NAME\r\ndata: JSON\r\n\r\n",
// a ": ping\r\n\r\n" comment every 15 s.

type evt struct {
	name      string
	kernelEvt bool
	domainID  string // session id, or kernel id for kernel events
	sessionID string
	sessName  string
	accessKey string
	domain    string
	groupID   string
	userUUID  string
	reason    string
	kernelID  string
	role      string
	idx       int
	exitCode  any // always nil: the propagator stores "exit_Code", reads "exit_code"
}

type sub struct {
	role        string
	userUUID    string
	domain      string
	groupID     string // "*" or id
	sessionName string
	sessionID   string // "*" (WILDCARD) or id
	accessKey   string
	scopeSess   bool
	scopeKern   bool

	mu     sync.Mutex
	q      [][]byte
	wake   chan struct{}
	closed bool
}

type hub struct {
	d     *Double
	mu    sync.Mutex
	subs  map[*sub]struct{}
	lose  int
	loseF func(name, sessionID string) bool
	ping  time.Duration
}

func newHub(d *Double) *hub { return &hub{d: d, subs: map[*sub]struct{}{}, ping: 15 * time.Second} }

// LoseEvents drops the next n SSE events (every subscriber misses them),
// as a broken event bus would.
func (d *Double) LoseEvents(n int) {
	d.hub.mu.Lock()
	d.hub.lose += n
	d.hub.mu.Unlock()
}

// LoseEventsMatching drops every SSE event for which f returns true
// (nil clears it).
func (d *Double) LoseEventsMatching(f func(eventName, sessionID string) bool) {
	d.hub.mu.Lock()
	d.hub.loseF = f
	d.hub.mu.Unlock()
}

// SetSSEPing changes the ping interval (15 s in aiohttp_sse).
func (d *Double) SetSSEPing(iv time.Duration) {
	d.hub.mu.Lock()
	d.hub.ping = iv
	d.hub.mu.Unlock()
}

func (h *hub) publish(e *evt) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lose > 0 {
		h.lose--
		return
	}
	if h.loseF != nil && h.loseF(e.name, e.sessionID) {
		return
	}
	if len(h.subs) == 0 {
		return
	}
	var frame []byte
	for s := range h.subs {
		if !s.accepts(e) {
			continue
		}
		if frame == nil {
			frame = e.frame()
		}
		s.push(frame)
	}
}

func (e *evt) frame() []byte {
	o := obj{{"reason", e.reason}, {"sessionName", e.sessName}, {"ownerAccessKey", e.accessKey},
		{"sessionId", e.sessionID}, {"exitCode", nil}}
	if e.kernelID != "" {
		o = o.add("kernelId", e.kernelID)
	}
	if e.role != "" {
		o = o.add("clusterRole", e.role)
	}
	if e.idx != 0 {
		o = o.add("clusterIdx", e.idx)
	}
	data := encode(orjsonStyle, o)
	b := make([]byte, 0, len(data)+len(e.name)+24)
	b = append(b, "event: "...)
	b = append(b, strings.NewReplacer("\r\n", "", "\r", "", "\n", "").Replace(e.name)...)
	b = append(b, "\r\ndata: "...)
	b = append(b, data...)
	b = append(b, "\r\n\r\n"...)
	return b
}

// accepts is the event hub's alias match plus _should_send_event.
func (s *sub) accepts(e *evt) bool {
	if e.kernelEvt {
		// Kernel events carry domain_id = kernel id: only the wildcard
		// alias reaches them (reference errata 1).
		if !s.scopeKern || s.sessionID != "*" {
			return false
		}
	} else {
		if !s.scopeSess || (s.sessionID != "*" && s.sessionID != e.domainID) {
			return false
		}
	}
	if s.role == "user" || s.role == "admin" {
		if e.domain != s.domain {
			return false
		}
	}
	if s.role == "user" && e.userUUID != s.userUUID {
		return false
	}
	if s.groupID != "*" && e.groupID != s.groupID {
		return false
	}
	if s.sessionID != "*" {
		if e.sessionID != s.sessionID {
			return false
		}
	} else if s.sessionName != "*" {
		if !(e.sessName == s.sessionName && e.accessKey == s.accessKey) {
			return false
		}
	}
	return true
}

func (s *sub) push(b []byte) {
	s.mu.Lock()
	if !s.closed {
		s.q = append(s.q, b)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *sub) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (h *hub) closeAll() {
	h.mu.Lock()
	for s := range h.subs {
		s.close()
	}
	h.mu.Unlock()
}

func sessEvt(s *session, name, reason string) *evt {
	return &evt{name: name, domainID: s.id, sessionID: s.id, sessName: s.name, accessKey: s.accessKey,
		domain: s.domain, groupID: s.project.id, userUUID: s.owner.uuid, reason: reason}
}

// sched is a SchedulingBroadcastEvent: "session_" + lower-cased target
// status, RUNNING → "session_started".
func (h *hub) sched(s *session, st Status, reason string) {
	name := "session_" + strings.ToLower(st.String())
	if st == StRunning {
		name = "session_started"
	}
	h.publish(sessEvt(s, name, reason))
}

func (h *hub) sessionResult(s *session, name, reason string, _ int) {
	h.publish(sessEvt(s, name, reason))
}

func (h *hub) kernel(k *kernel, name, reason string) {
	s := k.sess
	h.publish(&evt{name: name, kernelEvt: true, domainID: k.id, sessionID: s.id, sessName: s.name,
		accessKey: s.accessKey, domain: s.domain, groupID: s.project.id, userUUID: s.owner.uuid,
		reason: reason, kernelID: k.id, role: k.role, idx: k.idx})
}

func (d *Double) hSessionEvents(c *rctx) (*response, *problem) {
	q := c.r.URL.Query()
	first := func(keys ...string) (string, bool) {
		for _, k := range keys {
			if v, ok := q[k]; ok && len(v) > 0 {
				return v[0], true
			}
		}
		return "", false
	}
	sessionName, ok := first("sessionName", "session_name")
	if !ok {
		sessionName = "*"
	}
	ownerAK, hasOwner := first("ownerAccessKey", "owner_access_key")
	if v, ok := first("sessionId", "session_id"); ok {
		if _, okU := canonUUID(v); !okU {
			return nil, validationProblem("PushSessionEventsRequest", []verr{{loc: "sessionId", typ: "uuid_parsing",
				msg: "Input should be a valid UUID, invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `" + firstBad(v) + "` at 1", input: v}})
		}
		// accepted but not used for filtering in 26.8.1
	}
	groupName, ok := first("groupName", "group_name")
	if !ok {
		groupName = "*"
	}
	scope, ok := first("scope")
	if !ok {
		scope = "*"
	}
	au := c.auth
	role := au.user.role
	ak := ownerAK
	if !hasOwner {
		ak = au.kp.accessKey
	}
	if role == "user" && ak != au.kp.accessKey {
		return nil, errGenericForbidden.bare()
	}
	if scope == "*" {
		scope = "session,kernel"
	}
	s := &sub{role: role, userUUID: au.user.uuid, domain: au.user.domain, sessionName: sessionName, accessKey: ak,
		sessionID: "*", groupID: "*", wake: make(chan struct{}, 1)}
	d.mu.Lock()
	if sessionName != "*" {
		// match_sessions by name (UUID first), stale included, newest first
		ms := d.matchSessions(sessionName, ak, true)
		if len(ms) == 0 {
			d.mu.Unlock()
			return nil, sessionNotFound("")
		}
		s.sessionID = ms[0].id
	}
	if groupName != "*" {
		var g *project
		for _, p := range d.sortedProjects() {
			if p.name == groupName {
				g = p
				break
			}
		}
		d.mu.Unlock()
		if g == nil {
			return nil, errProjectNotFound.bare()
		}
		// resolve_group_id returns uuid.UUID(row.id) of a value the GUID
		// column type already made a UUID: AttributeError, HTTP 500.
		// (source quirk; not in the reference)
		return nil, internalError()
	}
	d.mu.Unlock()
	for _, item := range strings.Split(scope, ",") {
		switch item {
		case "session":
			s.scopeSess = true
		case "kernel":
			s.scopeKern = true
		default:
			return nil, errInvalidAPIParams.with("Invalid scope: " + scope)
		}
	}
	d.hub.mu.Lock()
	d.hub.subs[s] = struct{}{}
	ping := d.hub.ping
	d.hub.mu.Unlock()
	defer func() {
		d.hub.mu.Lock()
		delete(d.hub.subs, s)
		d.hub.mu.Unlock()
	}()
	c.streamed = true
	w := c.w
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	t := time.NewTicker(ping)
	defer t.Stop()
	ctx := c.r.Context()
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-d.closeCh:
			return nil, nil
		case <-t.C:
			if _, err := w.Write([]byte(": ping\r\n\r\n")); err != nil {
				return nil, nil
			}
			if fl != nil {
				fl.Flush()
			}
		case <-s.wake:
		}
		s.mu.Lock()
		q, closed := s.q, s.closed
		s.q = nil
		s.mu.Unlock()
		for _, b := range q {
			if _, err := w.Write(b); err != nil {
				return nil, nil
			}
		}
		if fl != nil && len(q) > 0 {
			fl.Flush()
		}
		if closed {
			return nil, nil
		}
	}
}

func firstBad(v string) string {
	for _, r := range v {
		if !strings.ContainsRune("0123456789abcdefABCDEF-", r) {
			return string(r)
		}
	}
	return ""
}
