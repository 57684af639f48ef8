package double

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// GET /stream/session/{session_name}/execute: the streaming execute of
// 26.8.1 (api/rest/stream/handler.py stream_execute).
//
// Before the upgrade: the name (a UUID is first turned into the
// session's name, ResolveSessionNameAction) must match a RUNNING session
// of the current user (the caller, or the X-BackendAI-Act-As target:
// current_user()), else SessionNotFound as a plain HTTP error. Then the
// WebSocket: the first client message {"mode","code","options"}; the
// handler loops ExecuteInStreamAction (each one re-checks the session,
// then runs the agent's execute with flush_timeout 0.2) sending
// {"status","console","exitCode","options","files"} after each, until
// "finished". Errors are {"status":"error","msg":...} (a JSON error of
// the first message, a BackendAIError); the socket then closes normally
// (1000), as aiohttp closes it when the handler returns. Any other
// exception (a first message that is not a JSON object, an error the
// agent raises) is swallowed by the handler's `finally: return ws`: the
// socket just closes.
//
// What the manager does not do, the double does not either:
//   - The handler never reads the socket after the first message (batch
//     mode never waits for input), so a client's close is not noticed:
//     ws.closed stays false (aiohttp 3.13 sets it only in receive() and
//     close(); handlers are not cancelled on disconnect) and the
//     interrupt branch is never taken. The
//     handler ends when a send fails once the connection is gone; the
//     command runs on to its end and its run keeps the kernel's output
//     queue, so later executes on the kernel wait for ever. An interrupt
//     is POST /session/{name}/interrupt (hInterrupt).
//   - KernelTerminatingBroadcastEvent is never produced in 26.8.1, so
//     handle_kernel_terminating never cancels a handler: when the
//     session is destroyed, the next action finds no RUNNING session and
//     the client gets the SessionNotFound error. A run still waiting for
//     the output queue when its kernel goes hears nothing more; the
//     double's Close answers it "server-restarting" (stream_shutdown).
const maxWSMsgSize = 16 << 20 // manager.max_wsmsg_size

func (d *Double) hStreamExecute(c *rctx) (*response, *problem) {
	u := c.auth.user
	if c.auth.actAs != nil {
		u = c.auth.actAs
	}
	d.mu.Lock()
	name, p := d.streamSessionName(c.vars["session_name"])
	var x *kexec
	if p == nil {
		var s *session
		if s, p = d.streamingSession(name, u.uuid); p == nil {
			x = s.main().x
		}
	}
	d.mu.Unlock()
	if p != nil {
		return nil, p
	}
	if !wsHandshakeOK(c.r) {
		// aiohttp's HTTPBadRequest, GenericBadRequest by the exception
		// middleware
		return nil, errGenericBadRequest.bare()
	}
	if v := c.r.Header.Get("Sec-WebSocket-Version"); v == "8" || v == "7" {
		c.r.Header.Set("Sec-WebSocket-Version", "13") // aiohttp speaks RFC 6455 to them too
	}
	c.streamed = true
	conn, err := websocket.Accept(c.w, c.r, &websocket.AcceptOptions{InsecureSkipVerify: true,
		CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, nil
	}
	conn.SetReadLimit(maxWSMsgSize)
	d.streamExecute(conn, name, u.uuid, x)
	return nil, nil
}

// wsHandshakeOK is the validation of aiohttp's WebSocketResponse
// _handshake.
func wsHandshakeOK(r *http.Request) bool {
	if strings.TrimSpace(strings.ToLower(r.Header.Get("Upgrade"))) != "websocket" {
		return false
	}
	if !strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
		return false
	}
	switch r.Header.Get("Sec-WebSocket-Version") {
	case "13", "8", "7":
	default:
		return false
	}
	key, err := base64.StdEncoding.DecodeString(r.Header.Get("Sec-WebSocket-Key"))
	return err == nil && len(key) == 16
}

// streamSessionName is _resolve_session_name: a UUID (as Python's
// uuid.UUID parses it) is replaced by that session's name, whoever owns
// it and whatever its status; anything else is a name (d.mu held).
func (d *Double) streamSessionName(ref string) (string, *problem) {
	id, ok := pyUUID(ref)
	if !ok {
		return ref, nil
	}
	s := d.sessions[id]
	if s == nil {
		return "", sessionNotFound(fmt.Sprintf("Session with id %s not found", id))
	}
	return s.name, nil
}

// streamingSession is StreamDBSource.get_streaming_session: name, owner
// and status RUNNING (d.mu held).
func (d *Double) streamingSession(name, userUUID string) (*session, *problem) {
	var ms []*session
	for _, s := range d.sessions {
		if s.name == name && s.owner.uuid == userUUID && s.status == StRunning {
			ms = append(ms, s)
		}
	}
	if len(ms) == 0 {
		return nil, sessionNotFound(fmt.Sprintf("Session (name=%s) does not exist.", name))
	}
	if len(ms) > 1 {
		sort.Slice(ms, func(i, j int) bool { return ms[i].createdAt.Before(ms[j].createdAt) })
		var list []any
		for _, s := range ms {
			list = append(list, obj{{"session_id", s.id}, {"session_name", s.name}, {"status", s.status.String()},
				{"created_at", isoformat(s.createdAt)}})
		}
		return nil, errTooManySessions.withData(nil, obj{{"matches", list}})
	}
	return ms[0], nil
}

// pyUUID parses s as uuid.UUID(s) does (urn:/uuid: and braces dropped,
// dashes ignored, 32 digits as int(hex, 16) reads them) and returns the
// canonical form.
func pyUUID(s string) (string, bool) {
	h := strings.ReplaceAll(strings.ReplaceAll(s, "urn:", ""), "uuid:", "")
	h = strings.ReplaceAll(strings.Trim(h, "{}"), "-", "")
	if utf8.RuneCountInString(h) != 32 {
		return "", false
	}
	t := strings.TrimFunc(h, unicode.IsSpace)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
		t = strings.TrimPrefix(t, "_") // int("0x_1", 16) is allowed
	}
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return "", false
	}
	v, ok := new(big.Int).SetString(strings.ReplaceAll(t, "_", ""), 16)
	if !ok || (neg && v.Sign() != 0) {
		return "", false
	}
	x := fmt.Sprintf("%032x", v)
	if len(x) != 32 {
		return "", false
	}
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:], true
}

// backendRepr is repr() of a BackendAIError:
// "<Class(status): title (msg)>" and its extra data line.
func backendRepr(class string, p *problem) string {
	s := fmt.Sprintf("<%s(%d): %s>", class, p.status, p.title)
	if p.msg != nil && *p.msg != "" {
		s = fmt.Sprintf("<%s(%d): %s (%s)>", class, p.status, p.title, *p.msg)
	}
	if p.data != nil {
		s += "\n -> extra_data: " + pyRepr(p.data)
	}
	return s
}

func problemClass(p *problem) string {
	switch p.typ {
	case "object-not-found":
		return "SessionNotFound"
	case "too-many-sessions-matched":
		return "TooManySessionsMatched"
	case "invalid-stream-mode":
		return "InvalidStreamMode"
	}
	return "BackendAIError"
}

var errInvalidStreamMode = probKind{400, "invalid-stream-mode", "Invalid or missing stream mode parameter.", "session_execute_invalid-parameters"}

type wsSession struct {
	d    *Double
	conn *websocket.Conn
	ctx  context.Context
}

func (w *wsSession) send(v any) error {
	return w.conn.Write(w.ctx, websocket.MessageText, encode(pyStyle, v))
}

func (w *wsSession) sendError(p *problem) {
	w.send(obj{{"status", "error"}, {"msg", "BackendError: " + backendRepr(problemClass(p), p)}})
}

// streamExecute runs the upgraded connection.
func (d *Double) streamExecute(conn *websocket.Conn, name, userUUID string, x *kexec) {
	w := &wsSession{d: d, conn: conn, ctx: context.Background()}
	// Returning the handler closes the socket normally (write_eof).
	defer conn.Close(websocket.StatusNormalClosure, "")
	typ, data, err := conn.Read(w.ctx)
	if err != nil {
		return
	}
	if typ != websocket.MessageText {
		return // receive_str: WSMessageTypeError, swallowed by the handler
	}
	if !utf8.Valid(data) {
		conn.Close(websocket.StatusInvalidFramePayloadData, "")
		return
	}
	v, err := pyLoads(string(data))
	if err != nil {
		w.send(obj{{"status", "error"}, {"msg", "Invalid API parameters: JSONDecodeError(" + pyStrRepr(err.Error()) + ")"}})
		return
	}
	params, ok := v.(pyDict)
	if !ok {
		return // params.get: AttributeError, swallowed
	}
	mode := params["mode"]
	if !pyTruthy(mode) {
		w.sendError(errInvalidStreamMode.with("mode is missing or empty!"))
		return
	}
	if !pyHashable(mode) {
		return // TypeError in the set lookup, swallowed
	}
	if mode != "query" && mode != "batch" {
		w.sendError(errInvalidStreamMode.with("mode has an invalid value."))
		return
	}
	code, hasCode := params["code"]
	if !hasCode {
		code = ""
	}
	opts := params["options"]
	if !pyTruthy(opts) {
		opts = pyDict{}
	}
	if !codeLoggable(code) {
		// The agent's rpc execute logs code[:20] (+ "...") and raises
		// before it attaches the run. An agent-side exception reaches
		// the handler as callosum's RPCUserError, which nothing converts
		// (the client pool does not make it an AgentError): the handler
		// swallows it and the socket just closes.
		return
	}
	run := newRun()
	attached := false
	// stream_shutdown cancels the handler: it says so, the socket closes.
	stopped := func() {
		w.send(obj{{"status", "server-restarting"},
			{"msg", "The API server is going to restart for maintenance. Please connect again with the same run ID."}})
	}
	for {
		d.mu.Lock()
		_, p := d.streamingSession(name, userUUID)
		d.mu.Unlock()
		if p != nil {
			w.sendError(p)
			return
		}
		if x == nil {
			// No kernel runner (scale mode): the agent's "container for
			// kernel ... is not found" RuntimeError, swallowed likewise.
			return
		}
		if !attached {
			if !x.attach(run, d.closeCh) {
				stopped()
				return
			}
			attached = true
			tasks, ok := runTasks(mode.(string), code, opts)
			x.feed(run, tasks)
			if !ok {
				// The agent raised after attaching the run: swallowed as
				// above, and the run keeps the output queue (nobody takes
				// its "finished").
				return
			}
		}
		res, stop := x.nextResult(run, d.closeCh)
		if stop {
			stopped()
			return
		}
		if res.status == "finished" {
			x.release(run)
		}
		if err := w.send(obj{{"status", res.status}, {"console", res.console}, {"exitCode", res.exit},
			{"options", nil}, {"files", []any{}}}); err != nil {
			return
		}
		if res.status == "finished" {
			return
		}
	}
}

// runTasks is feed_batch / feed_code: the kernel runner's tasks; false
// when the agent raises on an option it cannot send (the tasks before it
// are sent already).
func runTasks(mode string, code, opts any) ([]task, bool) {
	if mode == "query" {
		c, ok := code.(string) // text.encode
		if !ok {
			return nil, false
		}
		return []task{{kind: "query", cmd: c}}, true
	}
	o, ok := opts.(pyDict)
	if !ok {
		return nil, false // opts.get: AttributeError
	}
	var ts []task
	for _, step := range []string{"clean", "build", "exec"} {
		v := o[step]
		if v == nil {
			v = ""
		}
		s, ok := v.(string)
		if !ok {
			return ts, false // .encode: AttributeError
		}
		ts = append(ts, task{kind: step, cmd: s})
	}
	return ts, true
}

// codeLoggable: the agent's `code[:20] + "..." if len(code) > 20 else
// code` does not raise (a str, or a list of at most 20 items).
func codeLoggable(code any) bool {
	switch c := code.(type) {
	case string:
		return true
	case []any:
		return len(c) <= 20
	}
	return false
}

// POST /session/{session_name}/interrupt (session/handler.py interrupt):
// the caller's own session (get_session_validated), the agent's
// interrupt_kernel → the kernel runner's _interrupt. 204.
func (d *Double) hInterrupt(c *rctx) (*response, *problem) {
	d.mu.Lock()
	s, p := d.getSession(c.vars["session_name"], c.auth.kp.accessKey, false)
	var x *kexec
	if p == nil {
		k := s.main()
		if k.agent == nil {
			p = agentNotAllocated(s)
		}
		x = k.x
	}
	d.mu.Unlock()
	if p != nil {
		return nil, p
	}
	if x != nil {
		x.interrupt()
	}
	return &response{status: http.StatusNoContent, raw: []byte{}}, nil
}

func agentNotAllocated(s *session) *problem {
	return probKind{500, "agent-not-allocated", "Agent ID has not been allocated for the session.", "agent_access_internal-error"}.
		with(fmt.Sprintf("Session %s main kernel has no agent allocated", s.id))
}
