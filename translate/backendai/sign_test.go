package backendai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The two worked examples of the reference note §1.1 (checked against the
// algorithm of src/ai/backend/common/auth/utils.py generate_signature).
func TestSignatureVectors(t *testing.T) {
	base := SignParams{
		Date:    "2026-08-23T01:02:03.456789+00:00",
		Day:     "20260823",
		Host:    "manager.example.com:8081",
		Version: "v9.20250722",
	}
	cases := []struct {
		method, uri, ct, want string
	}{
		{"GET", "/session/slurm-42/logs?owner_access_key=AKIAUSERKEY000000000", "text/plain",
			"44e713c60cfdb9cb11dd3f17ae32075846f74527ad076a6bcdfe79ce40b369d8"},
		{"POST", "/session", "application/json",
			"f71ce8e68e0074344659bad6248ac132529ac5a1f7ed730d863c63e4826fac5d"},
		// The content type is signed lower-case without parameters.
		{"post", "/session", "Application/JSON; charset=utf-8",
			"f71ce8e68e0074344659bad6248ac132529ac5a1f7ed730d863c63e4826fac5d"},
	}
	for _, c := range cases {
		p := base
		p.Method, p.RequestURI, p.ContentType = c.method, c.uri, c.ct
		if got := Signature([]byte("exampleSecretKey0123456789abcdefghijklmn"), p); got != c.want {
			t.Errorf("%s %s: got %s, want %s", c.method, c.uri, got, c.want)
		}
	}
}

func TestSignDateFormat(t *testing.T) {
	tm := time.Date(2026, 8, 23, 10, 2, 3, 456789000, time.FixedZone("KST", 9*3600))
	date, day := signDate(tm)
	if date != "2026-08-23T01:02:03.456789+00:00" || day != "20260823" {
		t.Fatalf("got %q %q", date, day)
	}
	// Just after midnight in KST is still the previous UTC day: the day
	// key must follow the header's timezone, which is UTC.
	date, day = signDate(time.Date(2026, 8, 23, 0, 30, 0, 0, time.FixedZone("KST", 9*3600)))
	if day != "20260822" || !strings.HasPrefix(date, "2026-08-22T15:30:00.000000+00:00") {
		t.Fatalf("got %q %q", date, day)
	}
}

// What is signed is what goes on the wire: the stub re-derives the
// signature from the received request-target (query included, with
// escaping), Host with port, and Content-Type.
func TestWireMatchesSignature(t *testing.T) {
	s, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"result": map[string]any{"logs": "hello\n"}, "stats": map[string]any{}})
	})
	ctx := context.Background()
	if _, err := c.ContainerLogs(ctx, "3F2504E0-4F89-11D3-9A0C-0305E82C3301", LogsOptions{OwnerAccessKey: "AK+/= x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DestroySession(ctx, "3f2504e04f8911d39a0c0305e82c3301", DestroyOptions{Forced: true, OwnerAccessKey: "AKUSER"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, Request{Method: "POST", Path: "/session", Body: map[string]string{"a": "b"}}, nil); err != nil {
		t.Fatal(err)
	}
	rs := s.requests()
	if rs[0].URI != "/session/3f2504e0-4f89-11d3-9a0c-0305e82c3301/logs?owner_access_key=AK%2B%2F%3D+x" {
		t.Errorf("logs URI %q", rs[0].URI)
	}
	if rs[1].Method != "DELETE" || rs[1].URI != "/session/3f2504e0-4f89-11d3-9a0c-0305e82c3301?forced=true&owner_access_key=AKUSER" {
		t.Errorf("destroy %s %q", rs[1].Method, rs[1].URI)
	}
	if rs[2].ContentType != "application/json" || rs[0].ContentType != "text/plain" {
		t.Errorf("content types %q %q", rs[2].ContentType, rs[0].ContentType)
	}
	for _, r := range rs {
		if r.Header.Get("X-BackendAI-Version") != DefaultAPIVersion {
			t.Errorf("version header %q", r.Header.Get("X-BackendAI-Version"))
		}
	}
}

func TestEndpointPathPrefix(t *testing.T) {
	s, c := newStub(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"cpu": "count"}) })
	c2, err := New(Config{Endpoint: s.srv.URL + "/api/", AccessKey: testAK, SecretKey: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	_ = c
	if _, err := c2.ResourceSlotTypes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.requests()[0].URI; got != "/api/config/resource-slots" {
		t.Errorf("URI %q", got)
	}
}

func TestSecretNeverShown(t *testing.T) {
	cfg := Config{Endpoint: "https://m.example:8081", AccessKey: "AK", SecretKey: testSecret}
	for _, s := range []string{cfg.String(), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, testSecret) {
			t.Errorf("secret shown: %s", s)
		}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.String(), testSecret) || strings.Contains(fmt.Sprintf("%v", c), testSecret) {
		t.Error("secret in client String")
	}
	// Errors of a refused request do not carry it either.
	s, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		problem(w, 401, "auth-failed", "Credential/signature mismatch.", "user_auth_unauthorized", "HMAC signature mismatch", nil)
	})
	_ = s
	_, err = c.ResourceSlotTypes(context.Background())
	if !IsAuthFailed(err) || strings.Contains(err.Error(), testSecret) || strings.Contains(fmt.Sprintf("%#v", err), testSecret) {
		t.Errorf("err %v", err)
	}
	if _, err := New(Config{Endpoint: "ftp://x", AccessKey: "a", SecretKey: testSecret}); err == nil ||
		strings.Contains(err.Error(), testSecret) || !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("New err %v", err)
	}
}
