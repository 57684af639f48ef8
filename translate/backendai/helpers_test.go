package backendai

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The httptest servers here are transport stubs for unit tests only; they
// check what the client puts on the wire, not the manager's behaviour.

const (
	testAK     = "AKIAADMINKEY00000000"
	testSecret = "exampleSecretKey0123456789abcdefghijklmn"
)

// stub is a test server that verifies every request's signature the way
// the manager's middleware does (request-target, Host and Content-Type as
// received) and records requests.
type stub struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	logBuf bytes.Buffer
}

type recorded struct {
	Method, URI, ContentType string
	Header                   http.Header
	Body                     []byte
}

func newStub(t *testing.T, h http.HandlerFunc) (*stub, *Client) {
	t.Helper()
	s := &stub{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{r.Method, r.RequestURI, r.Header.Get("Content-Type"), r.Header.Clone(), body})
		s.mu.Unlock()
		if r.URL.Path != "/" {
			if msg := verifySignature(r); msg != "" {
				t.Errorf("%s %s: %s", r.Method, r.RequestURI, msg)
				problem(w, 401, "auth-failed", "Credential/signature mismatch.", "user_auth_unauthorized", msg, nil)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(s.srv.Close)
	c, err := New(Config{
		Endpoint:  s.srv.URL,
		AccessKey: testAK,
		SecretKey: testSecret,
		Logger:    log.New(&s.logBuf, "", 0),
		Retry:     RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, RateLimitDelay: 2 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.Contains(s.logBuf.String(), testSecret) {
			t.Errorf("secret key in the log: %s", s.logBuf.String())
		}
	})
	return s, c
}

func (s *stub) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// verifySignature re-does sign_request() from what arrived.
func verifySignature(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	const pfx = "BackendAI signMethod=HMAC-SHA256, credential="
	if !strings.HasPrefix(auth, pfx) {
		return "bad Authorization " + auth
	}
	ak, sig, ok := strings.Cut(strings.TrimPrefix(auth, pfx), ":")
	if !ok || ak != testAK {
		return "bad credential"
	}
	date := r.Header.Get("Date")
	t, err := time.Parse("2006-01-02T15:04:05.999999-07:00", date)
	if err != nil {
		return "bad Date " + date
	}
	if d := time.Since(t); d > 15*time.Minute || d < -15*time.Minute {
		return "Date/time sync error"
	}
	ver := r.Header.Get("X-BackendAI-Version")
	if ver == "" {
		return "API version missing in request headers"
	}
	ct := mediaType(r.Header.Get("Content-Type"))
	if ct == "" {
		ct = "application/octet-stream"
	}
	want := Signature([]byte(testSecret), SignParams{
		Method: r.Method, RequestURI: r.RequestURI, Date: date, Day: t.Format("20060102"),
		Host: r.Host, ContentType: ct, Version: ver,
	})
	if want != sig {
		return "HMAC signature mismatch"
	}
	return ""
}

// problem writes an application/problem+json body shaped like
// BackendAIError.__init__ builds it.
func problem(w http.ResponseWriter, status int, typ, title, code, msg string, data any) {
	body := map[string]any{"type": ProbPrefix + typ, "title": title, "error_code": code}
	if msg != "" {
		body["msg"] = msg
	}
	if data != nil {
		body["data"] = data
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// gqlString renders v as a Graphene JSONString value would appear.
func gqlString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
