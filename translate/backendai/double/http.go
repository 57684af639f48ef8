package double

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The REST layer. Middleware order of 26.8.1 (server.py, api/rest/app.py):
// request_id → exception → auth → api (route match, X-BackendAI-Version)
// → metric → ratelimit → route middlewares (auth_required, server status,
// in the order each route declares them) → handler.

type rctx struct {
	d          *Double
	w          http.ResponseWriter
	r          *http.Request
	auth       *authResult
	apiMajor   int
	apiRev     string
	vars       map[string]string
	streamed   bool // the handler wrote the response itself (SSE, WebSocket)
	body       []byte
	bodyRead   bool
	bodyAbsent bool
}

type response struct {
	status int
	body   any // encoded python-style
	raw    []byte
	ctype  string
}

type handlerFunc func(c *rctx) (*response, *problem)

type route struct {
	method  string
	segs    []string // "{x}" = variable
	mws     []string // "auth", "status:read", "status:all", "superadmin"
	handler handlerFunc
}

func (d *Double) routes() []route {
	ra := []string{"status:read", "auth"}
	aa := []string{"status:all", "auth"}
	ar := []string{"auth", "status:read"}
	a := []string{"auth"}
	return []route{
		{"GET", nil, nil, d.hHello},
		{"POST", sp("session"), aa, d.hCreateSession},
		{"POST", sp("session/_/create"), aa, d.hCreateSession},
		{"POST", sp("session/_/transit-status"), []string{"auth", "status:all"}, d.hNotImplemented("Manual session status reconciliation is no longer supported. Session status is automatically reconciled by the scheduler.")},
		{"GET", sp("session/{session_name}"), ra, d.hGetSession},
		{"PATCH", sp("session/{session_name}"), ra, d.hNotImplemented("Session restart is no longer supported. Terminate the session and enqueue a new one instead.")},
		{"DELETE", sp("session/{session_name}"), ra, d.hDestroySession},
		{"GET", sp("session/{session_name}/logs"), ra, d.hSessionLogs},
		{"GET", sp("session/{session_name}/status-history"), ra, d.hStatusHistory},
		{"POST", sp("admin/gql"), a, d.hGQL(false)},
		{"POST", sp("admin/graphql"), a, d.hGQL(true)},
		{"GET", sp("scaling-groups"), ar, d.hScalingGroups},
		{"GET", sp("config/resource-slots"), a, d.hResourceSlots},
		{"GET", sp("folders"), ar, d.hListFolders},
		{"POST", sp("session/{session_name}/interrupt"), ra, d.hInterrupt},
		{"GET", sp("events/session"), ra, d.hSessionEvents},
		{"GET", sp("stream/session/{session_name}/execute"), ra, d.hStreamExecute},
		{"GET", sp("auth"), a, d.hAuthTest},
		{"GET", sp("auth/test"), a, d.hAuthTest},
		{"POST", sp("auth"), a, d.hAuthTestPost},
		{"POST", sp("auth/test"), a, d.hAuthTestPost},
		// fair_share/registry.py (superadmin_required, checked by the handlers)
		{"POST", sp("fair-share/users/search"), a, d.hSearchUserFairShares},
		{"GET", sp("fair-share/users/{resource_group}/{project_id}/{user_uuid}"), a, d.hGetUserFairShare},
		// manager/registry.py (superadmin_required, checked by the handler)
		{"POST", sp("manager/scheduler/operation"), a, d.hSchedulerOps},
	}
}

func sp(p string) []string { return strings.Split(p, "/") }

func (d *Double) serve(ln net.Listener) {
	rs := d.routes()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { d.handle(rs, w, r) }),
		ReadHeaderTimeout: 30 * time.Second}
	d.srvMu.Lock()
	d.srv, d.ln = srv, ln
	d.srvMu.Unlock()
	go srv.Serve(ln)
}

// Outage makes the manager unreachable (connections refused) for dur,
// then listens again on the same address. dur <= 0 = until Restore.
func (d *Double) Outage(dur time.Duration) {
	d.srvMu.Lock()
	srv := d.srv
	d.srv = nil
	if d.outage != nil {
		d.outage.Stop()
		d.outage = nil
	}
	if dur > 0 {
		d.outage = time.AfterFunc(dur, func() { d.Restore() })
	}
	d.srvMu.Unlock()
	if srv != nil {
		srv.Close()
	}
	d.hub.closeAll()
}

// Restore ends an Outage.
func (d *Double) Restore() error {
	d.srvMu.Lock()
	if d.closed || d.srv != nil {
		d.srvMu.Unlock()
		return nil
	}
	d.srvMu.Unlock()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", d.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	d.serve(ln)
	return nil
}

// Freeze sets the manager status FROZEN (on) or RUNNING: frozen, routes
// that need ALL_ALLOWED statuses (session creation) answer 503
// server-frozen; reads and destroy still work.
func (d *Double) Freeze(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if on {
		d.mgrStatus = "frozen"
	} else {
		d.mgrStatus = "running"
	}
}

// SetManagerStatus sets the manager status (running, frozen, preparing,
// terminated): any but running/frozen makes every status-checked route
// answer 503 service-unavailable.
func (d *Double) SetManagerStatus(s string) {
	d.mu.Lock()
	d.mgrStatus = s
	d.mu.Unlock()
}

func (d *Double) matchRoute(rs []route, method, path string) (*route, map[string]string, []string) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if path == "" || path == "/" {
		segs = nil
	}
	var allowed []string
	for i := range rs {
		rt := &rs[i]
		vars, ok := matchSegs(rt.segs, segs)
		if !ok {
			continue
		}
		if rt.method == method || (method == "HEAD" && rt.method == "GET") {
			return rt, vars, nil
		}
		allowed = append(allowed, rt.method)
	}
	return nil, nil, allowed
}

func matchSegs(pat, segs []string) (map[string]string, bool) {
	if len(pat) != len(segs) {
		return nil, false
	}
	var vars map[string]string
	for i, p := range pat {
		if strings.HasPrefix(p, "{") {
			if segs[i] == "" {
				return nil, false
			}
			if vars == nil {
				vars = map[string]string{}
			}
			vars[p[1:len(p)-1]] = segs[i]
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return vars, true
}

func (d *Double) handle(rs []route, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "BackendAI")
	c := &rctx{d: d, w: w, r: r}
	// exception middleware
	defer func() {
		if e := recover(); e != nil {
			if e == http.ErrAbortHandler {
				panic(e)
			}
			d.log.Printf("double: panic in %s %s: %v\n%s", r.Method, r.URL.Path, e, debug.Stack())
			if !c.streamed {
				internalError().write(w)
			}
		}
	}()
	rt, vars, allowed := d.matchRoute(rs, r.Method, r.URL.Path)
	c.vars = vars
	// auth middleware: only routes wrapped with auth_required et al.
	needsAuth := rt != nil && containsStr(rt.mws, "auth")
	c.auth = &authResult{}
	if needsAuth {
		res, p := d.authenticate(r)
		c.auth = res
		if p != nil {
			p.write(w)
			return
		}
	}
	// api middleware
	if rt == nil {
		if len(allowed) > 0 {
			sort.Strings(allowed)
			p := errMethodNotAllowed.bare()
			p.hdr = map[string]string{"Allow": strings.Join(allowed, ",")}
			p.write(w)
			return
		}
		objp := errURLNotFound.withData(nil, r.URL.Path)
		objp.write(w)
		return
	}
	if p := c.checkVersion(); p != nil {
		p.write(w)
		return
	}
	// ratelimit middleware
	var rlHeaders [3]string
	if c.auth.authorized {
		n := d.rateCount(c.auth.kp.accessKey)
		limit := c.auth.kp.rateLimit
		if n > limit {
			errRateLimit.bare().write(w)
			return
		}
		rlHeaders = [3]string{strconv.Itoa(limit), strconv.Itoa(limit - n), strconv.Itoa(rateWindowSec)}
	} else {
		rlHeaders = [3]string{"1000", "1000", strconv.Itoa(rateWindowSec)}
	}
	// route middlewares
	for _, mw := range rt.mws {
		var p *problem
		switch mw {
		case "auth":
			if !c.auth.authorized {
				p = errAuthFailed.with("Unauthorized access")
			}
		case "status:read", "status:all":
			d.mu.Lock()
			st := d.mgrStatus
			d.mu.Unlock()
			ok := st == "running" || (mw == "status:read" && st == "frozen")
			if !ok {
				if st == "frozen" {
					p = errServerFrozen.bare()
				} else if mw == "status:read" {
					p = errServiceUnavail.with("Server is not in the required status: frozenset({<ManagerStatus.RUNNING: 'running'>, <ManagerStatus.FROZEN: 'frozen'>})")
				} else {
					p = errServiceUnavail.with("Server is not in the required status: frozenset({<ManagerStatus.RUNNING: 'running'>})")
				}
			}
		}
		if p != nil {
			p.write(w)
			return
		}
	}
	resp, p := rt.handler(c)
	if c.streamed {
		return
	}
	if p != nil {
		p.write(w)
		return
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", rlHeaders[0])
	h.Set("X-RateLimit-Remaining", rlHeaders[1])
	h.Set("X-RateLimit-Window", rlHeaders[2])
	ct := resp.ctype
	if ct == "" {
		ct = "application/json; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	b := resp.raw
	if b == nil {
		b = encode(pyStyle, resp.body)
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(resp.status)
	if r.Method != "HEAD" {
		w.Write(b)
	}
}

// checkVersion is the X-BackendAI-Version part of api_middleware. It
// runs after authentication (reference errata 3).
func (c *rctx) checkVersion() *problem {
	newV := c.r.Header.Get("X-BackendAI-Version")
	legV := c.r.Header.Get("X-Sorna-Version")
	v := newV
	if v == "" {
		v = legV
	}
	_, newPresent := c.r.Header["X-Backendai-Version"]
	_, legPresent := c.r.Header["X-Sorna-Version"]
	if !newPresent && !legPresent {
		// path_major_version = int(match_info.get("version", 5))
		c.apiMajor, c.apiRev = 5, "20191215"
		return nil
	}
	if newV == "" && !legPresent {
		// "" or None -> None: treated as absent
		c.apiMajor, c.apiRev = 5, "20191215"
		return nil
	}
	if !validVersions[v] {
		return errGenericBadRequest.with("Unsupported API version.")
	}
	major, rev, _ := strings.Cut(v, ".")
	c.apiMajor, _ = strconv.Atoi(major[1:])
	c.apiRev = rev
	return nil
}

// VALID_VERSIONS of api/rest/app.py.
var validVersions = map[string]bool{
	"v4.20181215": true, "v4.20190115": true, "v4.20190315": true, "v4.20190615": true, "v5.20191215": true,
	"v6.20200815": true, "v6.20220315": true, "v6.20220615": true, "v6.20221201": true, "v6.20230315": true,
	"v7.20230615": true, "v8.20240315": true, "v8.20240915": true, "v9.20250722": true,
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func readBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

// jsonBody is BodyParam extraction: request.json() (MalformedRequestBody
// when there is no body or it is not JSON), then model validation.
func (c *rctx) jsonBody() (map[string]any, *problem) {
	mal := errMalformedBody.with(fmt.Sprintf("Malformed body - URL: %s, Method: %s", c.fullURL(), c.r.Method))
	b := readBody(c.r)
	if c.r.ContentLength == 0 && len(b) == 0 && c.r.Header.Get("Transfer-Encoding") == "" {
		return nil, mal
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, mal
	}
	if dec.More() {
		return nil, mal
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, validationProblem(c.modelName(), []verr{{loc: "", typ: "model_type", msg: "Input should be a valid dictionary or instance of " + c.modelName(), input: v}})
	}
	return m, nil
}

func (c *rctx) modelName() string { return "Request" }

func (c *rctx) fullURL() string {
	return "http://" + c.r.Host + c.r.RequestURI
}

// query returns the first value of a query key (aiohttp MultiDict
// semantics), trying each alias in order.
func (c *rctx) query(keys ...string) (string, bool) {
	q := c.r.URL.Query()
	for _, k := range keys {
		if vs, ok := q[k]; ok && len(vs) > 0 {
			return vs[0], true
		}
	}
	return "", false
}

func ok200(body any) (*response, *problem) { return &response{status: 200, body: body}, nil }

func (d *Double) hHello(c *rctx) (*response, *problem) {
	return ok200(obj{{"version", APIVersion}, {"manager", ManagerVersion}})
}

func (d *Double) hNotImplemented(msg string) handlerFunc {
	return func(c *rctx) (*response, *problem) { return nil, errNotImplemented.with(msg) }
}

func (d *Double) hAuthTest(c *rctx) (*response, *problem) {
	return ok200(obj{{"authorized", "yes"}, {"echo", ""}})
}

func (d *Double) hAuthTestPost(c *rctx) (*response, *problem) {
	m, p := c.jsonBody()
	if p != nil {
		return nil, p
	}
	echo, ok := m["echo"].(string)
	if !ok {
		return nil, validationProblem("VerifyAuthRequest", []verr{{loc: "echo", typ: "missing", msg: "Field required", input: m}})
	}
	return ok200(obj{{"authorized", "yes"}, {"echo", echo}})
}

// verr is one pydantic error; validationProblem renders the
// InvalidAPIParameters(repr(BackendAISchemaValidationFailed)) the
// BodyParam/QueryParam wrappers raise.
type verr struct {
	loc, typ, msg string
	input         any
}

func validationProblem(model string, errs []verr) *problem {
	var b strings.Builder
	n := len(errs)
	s := "s"
	if n == 1 {
		s = ""
	}
	fmt.Fprintf(&b, "%d validation error%s for %s", n, s, model)
	for _, e := range errs {
		if e.loc != "" {
			b.WriteString("\n" + e.loc)
		}
		fmt.Fprintf(&b, "\n  %s [type=%s, input_value=%s, input_type=%s]", e.msg, e.typ, pyRepr(reprInput(e.input)), pyTypeName(e.input))
		fmt.Fprintf(&b, "\n    For further information visit https://errors.pydantic.dev/2.11/v/%s", e.typ)
	}
	summary := b.String()
	list := make([]any, 0, len(errs))
	for _, e := range errs {
		loc := []any{}
		if e.loc != "" {
			for _, part := range strings.Split(e.loc, ".") {
				loc = append(loc, part)
			}
		}
		list = append(list, obj{{"type", e.typ}, {"loc", loc}, {"msg", e.msg}})
	}
	inner := &problem{typ: "schema-validation-failed", title: "Schema validation failed.", msg: &summary,
		data: obj{{"errors", list}}}
	msg := fmt.Sprintf("<BackendAISchemaValidationFailed(400): Schema validation failed. (%s)>\n -> extra_data: %s", summary, pyRepr(inner.data))
	return errCommonInvalidAPIParams.with(msg)
}

func reprInput(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := obj{}
		for _, k := range keys {
			o = append(o, kv{k, reprInput(x[k])})
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = reprInput(e)
		}
		return out
	case json.Number:
		return rawRepr(string(x))
	}
	return v
}

func pyTypeName(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	case string:
		return "str"
	case bool:
		return "bool"
	case nil:
		return "NoneType"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "float"
		}
		return "int"
	}
	return "object"
}
