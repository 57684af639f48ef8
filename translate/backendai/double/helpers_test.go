package double

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate/local"
)

// The test binary doubles as the embedded engine's shim ("shim run DIR").
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		if err := local.ShimMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "shim:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type client struct {
	t       *testing.T
	base    string
	host    string
	ak, sk  string
	version string
	hc      *http.Client
}

func newClient(t *testing.T, d *Double, ak, sk string) *client {
	return &client{t: t, base: d.URL(), host: d.Addr(), ak: ak, sk: sk, version: APIVersion, hc: &http.Client{Timeout: 30 * time.Second}}
}

type reply struct {
	status int
	hdr    http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not a JSON object (%d): %s", r.status, r.body)
	}
	return m
}

// problem asserts a problem+json reply.
func (r reply) problem(t *testing.T, status int, typ, code string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.hdr.Get("Content-Type"); ct != "application/problem+json; charset=utf-8" {
		t.Fatalf("content type %q: %s", ct, r.body)
	}
	m := r.json(t)
	if m["type"] != "https://api.backend.ai/probs/"+typ || m["error_code"] != code {
		t.Fatalf("problem %v/%v, want %s/%s: %s", m["type"], m["error_code"], typ, code, r.body)
	}
	return m
}

func (c *client) req(method, path string, body any, mod func(*http.Request)) reply {
	c.t.Helper()
	var rd io.Reader
	ct := "text/plain"
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
		ct = "application/json"
	}
	r, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	now := time.Now().UTC()
	date := isoformat(now)
	r.Header.Set("Date", date)
	r.Header.Set("Content-Type", ct)
	r.Header.Set("X-BackendAI-Version", c.version)
	sig := Sign(method, r.URL.RequestURI(), date, now, c.host, ct, c.version, c.sk)
	r.Header.Set("Authorization", "BackendAI signMethod=HMAC-SHA256, credential="+c.ak+":"+sig)
	if mod != nil {
		mod(r)
	}
	resp, err := c.hc.Do(r)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

func (c *client) get(path string) reply            { return c.req("GET", path, nil, nil) }
func (c *client) post(path string, body any) reply { return c.req("POST", path, body, nil) }
func (c *client) delete(path string) reply         { return c.req("DELETE", path, nil, nil) }
func (c *client) gql(q string, vars map[string]any) reply {
	b := map[string]any{"query": q}
	if vars != nil {
		b["variables"] = vars
	}
	return c.post("/admin/gql", b)
}

// gqlData runs a query and returns data, failing on errors.
func (c *client) gqlData(q string, vars map[string]any) map[string]any {
	c.t.Helper()
	r := c.gql(q, vars)
	if r.status != 200 {
		c.t.Fatalf("gql: %d %s", r.status, r.body)
	}
	m := r.json(c.t)
	if m["errors"] != nil {
		c.t.Fatalf("gql errors: %s", r.body)
	}
	return m["data"].(map[string]any)
}

// testDouble is a scale-mode double with fast cycles, a user "alice" in
// project default and an agent.
type fixture struct {
	d            *Double
	admin, alice *client
	aliceAK      string
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	if opts.Cycle == 0 {
		opts.Cycle = 10 * time.Millisecond
	}
	if opts.LongCycle == 0 {
		opts.LongCycle = 50 * time.Millisecond
	}
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.AddUser(User{Username: "alice", Email: "alice@example.com", Projects: []string{"default"}}); err != nil {
		t.Fatal(err)
	}
	kp, err := d.AddKeyPair(KeyPair{UserEmail: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.AddAgent(Agent{ID: "i-ag1", Slots: map[string]string{"cpu": "4", "mem": "16g", "cuda.device": "2"}}); err != nil {
		t.Fatal(err)
	}
	ak, sk := d.AdminKeys()
	return &fixture{d: d, admin: newClient(t, d, ak, sk), alice: newClient(t, d, kp.AccessKey, kp.SecretKey), aliceAK: kp.AccessKey}
}

func batchBody(name string) map[string]any {
	return map[string]any{"name": name, "image": "python", "type": "batch", "startupCommand": "true",
		"enqueueOnly": true, "config": map[string]any{"resources": map[string]any{"cpu": 1, "mem": "2g"}}}
}

// sseReader reads SSE frames.
type sseReader struct {
	resp *http.Response
	br   *bufio.Reader
}

func (c *client) sse(t *testing.T, query string) *sseReader {
	t.Helper()
	path := "/events/session"
	if query != "" {
		path += "?" + query
	}
	r, _ := http.NewRequest("GET", c.base+path, nil)
	now := time.Now().UTC()
	date := isoformat(now)
	r.Header.Set("Date", date)
	r.Header.Set("X-BackendAI-Version", c.version)
	sig := Sign("GET", r.URL.RequestURI(), date, now, c.host, "application/octet-stream", c.version, c.sk)
	r.Header.Set("Authorization", "BackendAI signMethod=HMAC-SHA256, credential="+c.ak+":"+sig)
	resp, err := (&http.Client{}).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("sse: %d %s", resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sseReader{resp: resp, br: bufio.NewReader(resp.Body)}
}

// frame reads one raw frame (up to and including the blank line).
func (s *sseReader) frame(t *testing.T, timeout time.Duration) string {
	t.Helper()
	type res struct {
		f   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := s.br.ReadString('\n')
			b.WriteString(line)
			if err != nil {
				ch <- res{b.String(), err}
				return
			}
			if line == "\r\n" {
				ch <- res{b.String(), nil}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("sse read: %v (%q)", r.err, r.f)
		}
		return r.f
	case <-time.After(timeout):
		t.Fatalf("sse: no frame within %v", timeout)
	}
	return ""
}

// until reads frames until one has the event name, returning its data.
func (s *sseReader) until(t *testing.T, event string, timeout time.Duration) (string, map[string]any) {
	t.Helper()
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		f := s.frame(t, time.Until(end))
		if strings.HasPrefix(f, "event: "+event+"\r\n") {
			data := strings.TrimSuffix(strings.SplitN(f, "\r\ndata: ", 2)[1], "\r\n\r\n")
			var m map[string]any
			json.Unmarshal([]byte(data), &m)
			return f, m
		}
	}
	t.Fatalf("sse: no %s within %v", event, timeout)
	return "", nil
}

func makeJWT(claims map[string]any, secret string) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	p, _ := json.Marshal(claims)
	ps := base64.RawURLEncoding.EncodeToString(p)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(h + "." + ps))
	return h + "." + ps + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
