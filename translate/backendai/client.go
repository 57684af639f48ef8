package backendai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultAPIVersion is the newest API version of the 26.8 manager
// (VALID_VERSIONS in src/ai/backend/manager/api/rest/app.py). It selects
// the session-creation schema (CreationConfigV7).
const DefaultAPIVersion = "v9.20250722"

// Config configures a Client.
type Config struct {
	// Endpoint is the manager URL, e.g. "https://manager.example.com:8081".
	// A path prefix is kept; the Host signed is the URL's host[:port] as
	// written, which is what goes on the wire.
	Endpoint string
	// AccessKey and SecretKey are the admin keypair (superadmin for
	// delegation across domains). The secret never appears in logs,
	// errors or the String form of Config.
	AccessKey string
	SecretKey string
	// APIVersion is sent as X-BackendAI-Version (default DefaultAPIVersion).
	APIVersion string
	// HTTPClient does the requests (default: a client with no overall
	// timeout; attempts are bounded by RequestTimeout, the event stream by
	// its idle timeout).
	HTTPClient *http.Client
	// Logger receives one line per failed or retried request (nil: silent).
	Logger *log.Logger
	// Retry is the retry policy (zero fields take defaults).
	Retry RetryPolicy
	// RequestTimeout bounds one attempt of a non-streaming request
	// (default 30s; negative: none).
	RequestTimeout time.Duration
	// UserAgent is sent as User-Agent.
	UserAgent string
	// Observe, when set, is told of every attempt at a request: its
	// operation ("GET /session/:id", "gql compute_session_nodes"), how
	// long it took and how it failed (nil: it did not). The metrics
	// endpoint's engine latency and errors.
	Observe func(op string, d time.Duration, err error)
}

// String redacts the secret key.
func (c Config) String() string {
	return fmt.Sprintf("backendai.Config{Endpoint:%q AccessKey:%q SecretKey:%s APIVersion:%q}",
		c.Endpoint, c.AccessKey, redacted(c.SecretKey), c.APIVersion)
}

// GoString redacts the secret key for %#v as well.
func (c Config) GoString() string { return c.String() }

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "<redacted>"
}

// RetryPolicy says how failed requests that are safe to retry are retried.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts (default 4; 1: none).
	MaxAttempts int
	// BaseDelay is the first backoff step (default 250ms); step n waits a
	// random time in [d/2, d] with d = min(MaxDelay, BaseDelay·2ⁿ).
	BaseDelay time.Duration
	// MaxDelay caps one wait (default 15s).
	MaxDelay time.Duration
	// RateLimitDelay is the least wait after a 429 that carries no
	// Retry-After (default 5s; the manager sends none and counts refused
	// requests in its rolling window, so hammering makes it worse).
	RateLimitDelay time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 250 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 15 * time.Second
	}
	if p.RateLimitDelay <= 0 {
		p.RateLimitDelay = 5 * time.Second
	}
	return p
}

// backoff is the wait before attempt n+1 (n counts from 0) after err.
func (p RetryPolicy) backoff(n int, err error) time.Duration {
	d := p.BaseDelay
	for i := 0; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	d = d/2 + rand.N(d/2+1)
	if e, ok := asAPIError(err); ok {
		if e.RetryAfter > d {
			d = e.RetryAfter
		} else if e.Status == http.StatusTooManyRequests && e.RetryAfter == 0 && d < p.RateLimitDelay {
			d = p.RateLimitDelay + rand.N(p.RateLimitDelay/2+1)
		}
	}
	return d
}

// RateLimit is the manager's last reported request budget for the admin
// keypair (X-RateLimit-* headers of a successful response).
type RateLimit struct {
	Limit     int64 // -1 when the keypair has no limit ("None")
	Remaining int64
	Window    time.Duration
	Observed  time.Time // zero when no response carried the headers yet
}

// Client talks to one manager. It is safe for concurrent use.
type Client struct {
	base       *url.URL
	accessKey  string
	secret     []byte
	apiVersion string
	hc         *http.Client
	log        *log.Logger
	retry      RetryPolicy
	timeout    time.Duration
	userAgent  string
	now        func() time.Time
	observe    func(op string, d time.Duration, err error)

	mu sync.Mutex
	rl RateLimit
}

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.Endpoint == "" || cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, fmt.Errorf("%w: Endpoint, AccessKey and SecretKey are required", ErrInvalidRequest)
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: Endpoint %q is not an http(s) URL", ErrInvalidRequest, cfg.Endpoint)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%w: Endpoint %q must not carry a query, fragment or user info", ErrInvalidRequest, cfg.Endpoint)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	c := &Client{
		base:       u,
		accessKey:  cfg.AccessKey,
		secret:     []byte(cfg.SecretKey),
		apiVersion: cfg.APIVersion,
		hc:         cfg.HTTPClient,
		log:        cfg.Logger,
		retry:      cfg.Retry.withDefaults(),
		timeout:    cfg.RequestTimeout,
		userAgent:  cfg.UserAgent,
		now:        time.Now,
		observe:    cfg.Observe,
	}
	if c.apiVersion == "" {
		c.apiVersion = DefaultAPIVersion
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if c.timeout == 0 {
		c.timeout = 30 * time.Second
	}
	if c.userAgent == "" {
		c.userAgent = "slurm-frontend-backendai/1"
	}
	c.rl.Limit = -1
	return c, nil
}

// String identifies the client without its secret.
func (c *Client) String() string {
	return "backendai.Client{" + c.base.String() + " ak=" + c.accessKey + "}"
}

// RateLimit returns the last request budget the manager reported.
func (c *Client) RateLimit() RateLimit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rl
}

// Request is a raw API request, for calls this package has no typed
// method for.
type Request struct {
	Method string
	// Path is relative to the endpoint, starting with "/", already
	// escaped ("/session/3f…/logs").
	Path  string
	Query url.Values
	// Body, when non-nil, is sent as JSON.
	Body any
	// ActAs, when set, is sent as X-BackendAI-Act-As (a user UUID;
	// superadmin only). v1 handlers ignore it: use owner_access_key there.
	ActAs string
	// Idempotent requests are retried on RateLimited / Unavailable
	// errors. GET and DELETE are always idempotent.
	Idempotent bool
	// Anonymous requests are not signed (GET /).
	Anonymous bool
	// Op names the request for the metrics (default: the method and
	// the path with its ids replaced by ":id").
	Op string
}

// op is the request's name for the metrics: Op, or the method and the
// path with every segment that is an id (a UUID, hex, a number, or an
// operator-chosen name under /session/ and /folders/) replaced.
func (r Request) op() string {
	if r.Op != "" {
		return r.Op
	}
	segs := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")
	for i, sg := range segs {
		named := i == 1 && (segs[0] == "session" || segs[0] == "folders")
		if named || isUUID(sg) || isIDLike(sg) {
			segs[i] = ":id"
		}
	}
	return r.Method + " /" + strings.Join(segs, "/")
}

// isIDLike: all digits or hex of 8 or more characters.
func isIDLike(s string) bool {
	if s == "" {
		return false
	}
	hex := len(s) >= 8
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-':
			if !hex {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Do sends r and decodes a JSON answer into out (unless out is nil).
func (c *Client) Do(ctx context.Context, r Request, out any) error {
	_, err := c.do(ctx, r, out)
	return err
}

// do runs the attempt loop and returns the final response headers.
func (c *Client) do(ctx context.Context, r Request, out any) (http.Header, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	if r.Method == http.MethodGet || r.Method == http.MethodDelete || r.Method == http.MethodHead {
		r.Idempotent = true
	}
	var body []byte
	if r.Body != nil {
		b, err := json.Marshal(r.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: encoding %s %s: %v", ErrInvalidRequest, r.Method, r.Path, err)
		}
		body = b
	}
	if r.ActAs != "" && !isUUID(r.ActAs) {
		return nil, fmt.Errorf("%w: ActAs %q is not a user UUID", ErrInvalidRequest, r.ActAs)
	}
	for attempt := 0; ; attempt++ {
		start := time.Now()
		hdr, err := c.once(ctx, r, body, out)
		if c.observe != nil {
			c.observe(r.op(), time.Since(start), err)
		}
		if err == nil {
			return hdr, nil
		}
		if !r.Idempotent || !IsRetryable(err) || attempt+1 >= c.retry.MaxAttempts {
			return nil, err
		}
		wait := c.retry.backoff(attempt, err)
		if err2 := c.sleep(ctx, wait); err2 != nil {
			return nil, err // the caller's deadline would pass: report the real failure
		}
		c.logf("retrying %s %s after %v (attempt %d): %v", r.Method, r.Path, wait.Round(time.Millisecond), attempt+2, err)
	}
}

// sleep waits d unless ctx ends first or its deadline is closer than d.
func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return context.DeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newHTTPRequest builds and signs one attempt.
func (c *Client) newHTTPRequest(ctx context.Context, r Request, body []byte, contentType string) (*http.Request, error) {
	u := *c.base
	raw := c.base.EscapedPath() + r.Path
	p, err := url.PathUnescape(raw)
	if err != nil || !strings.HasPrefix(r.Path, "/") {
		return nil, fmt.Errorf("%w: bad path %q", ErrInvalidRequest, r.Path)
	}
	u.Path, u.RawPath = p, raw
	if len(r.Query) > 0 {
		u.RawQuery = r.Query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrInvalidRequest, r.Method, r.Path, err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-BackendAI-Version", c.apiVersion)
	req.Header.Set("User-Agent", c.userAgent)
	if r.ActAs != "" {
		req.Header.Set("X-BackendAI-Act-As", r.ActAs)
	}
	if r.Anonymous {
		return req, nil
	}
	date, day := signDate(c.now())
	req.Header.Set("Date", date)
	sig := Signature(c.secret, SignParams{
		Method:      r.Method,
		RequestURI:  req.URL.RequestURI(),
		Date:        date,
		Day:         day,
		Host:        req.URL.Host,
		ContentType: contentType,
		Version:     c.apiVersion,
	})
	req.Header.Set("Authorization", authorizationHeader(c.accessKey, sig))
	return req, nil
}

// maxBody bounds what is read of one answer (container logs can be big).
const maxBody = 64 << 20

// once is one attempt.
func (c *Client) once(ctx context.Context, r Request, body []byte, out any) (http.Header, error) {
	actx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	ct := "text/plain"
	if body != nil {
		ct = "application/json"
	}
	req, err := c.newHTTPRequest(actx, r, body, ct)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportErr(ctx, r, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, c.transportErr(ctx, r, err)
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("backendai: %s %s: answer larger than %d bytes", r.Method, r.Path, maxBody)
	}
	c.noteRateLimit(resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := decodeError(resp, data, r.Method, r.Path)
		c.logf("%s %s: %v", r.Method, r.Path, e)
		return nil, e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("backendai: %s %s: decoding answer: %w", r.Method, r.Path, err)
		}
	}
	return resp.Header, nil
}

// transportErr wraps a failure with no HTTP answer; when the caller's own
// context ended, that is what is reported (not "unavailable").
func (c *Client) transportErr(ctx context.Context, r Request, err error) error {
	if ctx.Err() != nil {
		return &TransportError{Method: r.Method, Path: r.Path, Err: fmt.Errorf("%w: %w", errCallerContext, ctx.Err())}
	}
	return &TransportError{Method: r.Method, Path: r.Path, Err: err}
}

func (c *Client) noteRateLimit(h http.Header) {
	lim, rem, win := h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Window")
	if lim == "" && rem == "" {
		return
	}
	rl := RateLimit{Limit: -1, Observed: c.now()}
	if n, err := strconv.ParseInt(lim, 10, 64); err == nil {
		rl.Limit = n
	}
	if n, err := strconv.ParseInt(rem, 10, 64); err == nil {
		rl.Remaining = n
	}
	if n, err := strconv.ParseInt(win, 10, 64); err == nil {
		rl.Window = time.Duration(n) * time.Second
	}
	c.mu.Lock()
	c.rl = rl
	c.mu.Unlock()
	if rl.Limit > 0 && rl.Remaining*20 < rl.Limit {
		c.logf("rate limit nearly spent: %d of %d requests left in the %v window", rl.Remaining, rl.Limit, rl.Window)
	}
}

func (c *Client) logf(format string, args ...any) {
	if c.log != nil {
		c.log.Printf("backendai: "+format, args...)
	}
}

// parseRetryAfter reads delta-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// isUUID accepts the canonical and the plain-hex forms Python's uuid.UUID
// accepts.
func isUUID(s string) bool {
	_, err := canonicalUUID(s)
	return err == nil
}

// canonicalUUID normalizes a UUID to the dashed lower-case form.
func canonicalUUID(s string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	h = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(h, "{"), "}"), "urn:uuid:")
	h = strings.ReplaceAll(h, "-", "")
	if len(h) != 32 {
		return "", fmt.Errorf("%w: %q is not a UUID", ErrInvalidRequest, s)
	}
	for _, r := range h {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return "", fmt.Errorf("%w: %q is not a UUID", ErrInvalidRequest, s)
		}
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}
