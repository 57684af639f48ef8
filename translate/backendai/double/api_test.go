package double

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The worked examples of the reference §1.1.
func TestHMACVectors(t *testing.T) {
	const secret = "exampleSecretKey0123456789abcdefghijklmn"
	const date = "2026-08-23T01:02:03.456789+00:00"
	tm, ok := parseHTTPDate(date)
	if !ok {
		t.Fatal("date")
	}
	cases := []struct{ method, uri, ct, want string }{
		{"GET", "/session/slurm-42/logs?owner_access_key=AKIAUSERKEY000000000", "text/plain", "44e713c60cfdb9cb11dd3f17ae32075846f74527ad076a6bcdfe79ce40b369d8"},
		{"POST", "/session", "application/json", "f71ce8e68e0074344659bad6248ac132529ac5a1f7ed730d863c63e4826fac5d"},
	}
	for _, c := range cases {
		if got := Sign(c.method, c.uri, date, tm, "manager.example.com:8081", c.ct, "v9.20250722", secret); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.method, c.uri, got, c.want)
		}
	}
	// The per-day key uses the date in the header's own zone.
	kst := "2026-08-23T01:02:03.456789+09:00"
	tk, _ := parseHTTPDate(kst)
	if Sign("POST", "/session", kst, tk, "h", "application/json", "v9.20250722", secret) ==
		Sign("POST", "/session", kst, tk.UTC(), "h", "application/json", "v9.20250722", secret) {
		t.Error("zone of the date header ignored")
	}
}

func TestHello(t *testing.T) {
	fx := newFixture(t, Options{})
	resp, err := http.Get(fx.d.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	if resp.StatusCode != 200 || b.String() != `{"version": "v9.20250722", "manager": "26.8.1"}` {
		t.Fatalf("%d %q", resp.StatusCode, b.String())
	}
	if resp.Header.Get("X-RateLimit-Limit") != "1000" || resp.Header.Get("Server") != "BackendAI" {
		t.Fatalf("headers %v", resp.Header)
	}
}

func TestAuthRejections(t *testing.T) {
	fx := newFixture(t, Options{})
	c := fx.alice
	// wrong secret: 401 HMAC signature mismatch
	bad := *c
	bad.sk = "wrong"
	m := bad.get("/session/x").problem(t, 401, "auth-failed", "user_auth_unauthorized")
	if m["msg"] != "HMAC signature mismatch" {
		t.Fatalf("msg %v", m["msg"])
	}
	// unknown access key
	unk := *c
	unk.ak = "AKIANOPE"
	if m := unk.get("/session/x").problem(t, 401, "auth-failed", "user_auth_unauthorized"); m["msg"] != "Access key not found in HMAC" {
		t.Fatalf("msg %v", m["msg"])
	}
	// date out of the ±15 min window: 400
	r := c.req("GET", "/session/x", nil, func(r *http.Request) { r.Header.Set("Date", isoformat(time.Now().Add(-16*time.Minute).UTC())) })
	if m := r.problem(t, 400, "invalid-auth-params", "user_auth_invalid-parameters"); m["msg"] != "Date/time sync error" {
		t.Fatalf("msg %v", m["msg"])
	}
	// no date at all
	r = c.req("GET", "/session/x", nil, func(r *http.Request) { r.Header.Del("Date") })
	r.problem(t, 400, "invalid-auth-params", "user_auth_invalid-parameters")
	// wrong scheme
	r = c.req("GET", "/session/x", nil, func(r *http.Request) { r.Header.Set("Authorization", "Bearer x") })
	if m := r.problem(t, 400, "invalid-auth-params", "user_auth_invalid-parameters"); m["msg"] != "Invalid authorization type name" {
		t.Fatalf("msg %v", m["msg"])
	}
	// missing credential
	r = c.req("GET", "/session/x", nil, func(r *http.Request) { r.Header.Set("Authorization", "BackendAI signMethod=HMAC-SHA256") })
	r.problem(t, 400, "invalid-auth-params", "user_auth_invalid-parameters")
	// a parameter without '=': unmapped ValueError, 500
	r = c.req("GET", "/session/x", nil, func(r *http.Request) { r.Header.Set("Authorization", "BackendAI signMethod") })
	r.problem(t, 500, "internal-server-error", "backendai_generic_internal-error")
	// missing version header with HMAC: 400 (errata 3)
	r = c.req("GET", "/session/x", nil, func(r *http.Request) { r.Header.Del("X-BackendAI-Version") })
	if m := r.problem(t, 400, "invalid-auth-params", "user_auth_invalid-parameters"); m["msg"] != "API version missing in request headers" {
		t.Fatalf("msg %v", m["msg"])
	}
	// unknown version, correctly signed: 400 generic-bad-request after auth
	v := *c
	v.version = "v10.20990101"
	if m := v.get("/session/x").problem(t, 400, "generic-bad-request", "backendai_generic_bad-request"); m["msg"] != "Unsupported API version." {
		t.Fatalf("msg %v", m["msg"])
	}
	// unknown version with a bad signature: 401 wins
	v.sk = "wrong"
	v.get("/session/x").problem(t, 401, "auth-failed", "user_auth_unauthorized")
	// no Authorization at all: the route decorator's 401
	resp, _ := http.Get(fx.d.URL() + "/session/x")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("unauthenticated: %d", resp.StatusCode)
	}
	// no Content-Type: signed as application/octet-stream
	r = c.req("GET", "/config/resource-slots", nil, func(r *http.Request) {
		r.Header.Del("Content-Type")
		now, _ := parseHTTPDate(r.Header.Get("Date"))
		sig := Sign("GET", "/config/resource-slots", r.Header.Get("Date"), now, c.host, "application/octet-stream", c.version, c.sk)
		r.Header.Set("Authorization", "BackendAI signMethod=HMAC-SHA256, credential="+c.ak+":"+sig)
	})
	if r.status != 200 || r.hdr.Get("X-RateLimit-Window") != "900" {
		t.Fatalf("%d %s %v", r.status, r.body, r.hdr)
	}
	// path includes the query string
	r = c.req("GET", "/config/resource-slots?x=1", nil, func(r *http.Request) {
		now, _ := parseHTTPDate(r.Header.Get("Date"))
		sig := Sign("GET", "/config/resource-slots", r.Header.Get("Date"), now, c.host, "text/plain", c.version, c.sk)
		r.Header.Set("Authorization", "BackendAI signMethod=HMAC-SHA256, credential="+c.ak+":"+sig)
	})
	r.problem(t, 401, "auth-failed", "user_auth_unauthorized")
	// unknown route
	fx.admin.get("/nope").problem(t, 404, "url-not-found", "api_read_not-found")
	// Act-As by a non-superadmin
	r = c.req("GET", "/config/resource-slots", nil, func(r *http.Request) { r.Header.Set("X-BackendAI-Act-As", "00000000-0000-0000-0000-000000000000") })
	r.problem(t, 403, "insufficient-privilege", "user_auth_forbidden")
}

func TestJWT(t *testing.T) {
	fx := newFixture(t, Options{})
	_, sk := fx.d.AdminKeys()
	ak, _ := fx.d.AdminKeys()
	tok := makeJWT(map[string]any{"access_key": ak, "role": "superadmin", "exp": time.Now().Add(time.Minute).Unix(), "iat": time.Now().Unix()}, sk)
	req, _ := http.NewRequest("GET", fx.d.URL()+"/config/resource-slots", nil)
	req.Header.Set("X-BackendAI-Token", tok)
	req.Header.Set("X-BackendAI-Version", APIVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("jwt: %d", resp.StatusCode)
	}
}

func TestRateLimit(t *testing.T) {
	fx := newFixture(t, Options{})
	kp, _ := fx.d.AddKeyPair(KeyPair{UserEmail: "alice@example.com", RateLimit: 2})
	c := newClient(t, fx.d, kp.AccessKey, kp.SecretKey)
	r := c.get("/config/resource-slots")
	if r.hdr.Get("X-RateLimit-Limit") != "2" || r.hdr.Get("X-RateLimit-Remaining") != "1" {
		t.Fatalf("headers %v", r.hdr)
	}
	c.get("/config/resource-slots")
	r = c.get("/config/resource-slots")
	r.problem(t, 429, "rate-limit-exceeded", "api_access_unavailable")
	if r.hdr.Get("X-RateLimit-Limit") != "" {
		t.Fatal("a raised error carries no rate-limit headers")
	}
}

func TestCreateValidation(t *testing.T) {
	fx := newFixture(t, Options{})
	c := fx.alice
	// batch without startup command
	b := batchBody("b1")
	delete(b, "startupCommand")
	m := c.post("/session", b).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	if m["msg"] != "Batch sessions must have a non-empty startup command." {
		t.Fatalf("msg %v", m["msg"])
	}
	// starts_at / batch_timeout only for batch
	m = c.post("/session", map[string]any{"name": "i1", "image": "python", "startsAt": "1h"}).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	if m["msg"] != "Parameter starts_at should be used only for batch sessions" {
		t.Fatalf("msg %v", m["msg"])
	}
	m = c.post("/session", map[string]any{"name": "i1", "image": "python", "batchTimeout": "5m"}).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	if m["msg"] != "Parameter batch_timeout should be used only for batch sessions" {
		t.Fatalf("msg %v", m["msg"])
	}
	// DTO validation: missing image → common InvalidAPIParameters
	c.post("/session", map[string]any{"name": "x"}).problem(t, 400, "generic-bad-request", "api_parsing_invalid-parameters")
	c.post("/session", map[string]any{"name": "x", "image": "python", "priority": 101}).problem(t, 400, "generic-bad-request", "api_parsing_invalid-parameters")
	// malformed body
	r := c.req("POST", "/session", nil, func(r *http.Request) {})
	r.problem(t, 400, "generic-bad-request", "api_parsing_bad-request")
	// unknown slot
	b = batchBody("b2")
	b["config"] = map[string]any{"resources": map[string]any{"cpu": 1, "shmem": "1g"}}
	m = c.post("/session", b).problem(t, 400, "unknown-resource-slot-type", "backendai_parsing_not-found")
	if !strings.Contains(m["msg"].(string), "Unknown slot type: 'shmem' (Put it at the 'resource_opts'") {
		t.Fatalf("msg %v", m["msg"])
	}
	// a slot no agent of the group serves
	fx.d.addSlotTypeForTest("rocm.device")
	b = batchBody("b3")
	b["config"] = map[string]any{"resources": map[string]any{"cpu": 1, "rocm.device": 1}}
	c.post("/session", b).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	// dependencies must exist
	b = batchBody("b4")
	b["dependencies"] = []string{"0b7a3bd5-56e0-4a7a-bfb1-9d3fca7b9d1e"}
	m = c.post("/session", b).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	if m["msg"] != "Unknown session ID in the dependency list" || m["data"].(map[string]any)["session_ref"] != "0b7a3bd5-56e0-4a7a-bfb1-9d3fca7b9d1e" {
		t.Fatalf("%v", m)
	}
	// a dependency that is not a UUID: 500 (errata 5)
	b = batchBody("b5")
	b["dependencies"] = []string{"slurm-1"}
	c.post("/session", b).problem(t, 500, "internal-server-error", "backendai_generic_internal-error")
	// project membership
	b = batchBody("b6")
	b["group"] = "other"
	m = c.post("/session", b).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	if !strings.HasPrefix(m["msg"].(string), "Invalid group (other)") {
		t.Fatalf("msg %v", m["msg"])
	}
	// unknown image
	b = batchBody("b7")
	b["image"] = "nope"
	c.post("/session", b).problem(t, 404, "object-not-found", "image_read_not-found")
	// reserved name
	b = batchBody("from-template")
	c.post("/session", b).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	// delegation: a user may not act for others
	b = batchBody("b8")
	ak, _ := fx.d.AdminKeys()
	b["owner_access_key"] = ak
	m = c.post("/session", b).problem(t, 403, "generic-forbidden", "backendai_generic_forbidden")
	if m["msg"] != "Only admins can perform operations on behalf of other users." {
		t.Fatalf("msg %v", m["msg"])
	}
	b["owner_access_key"] = "AKIANOBODY"
	fx.admin.post("/session", b).problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	// unknown resource group
	b = batchBody("b9")
	b["config"] = map[string]any{"scaling_group": "gpu"}
	c.post("/session", b).problem(t, 404, "object-not-found", "scaling-group_read_not-found")

	// success, then the name clash rules
	r = c.post("/session", batchBody("dup"))
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if string(r.body) == "" || !strings.Contains(string(r.body), `"status": "PENDING", "servicePorts": [], "created": true}`) {
		t.Fatalf("body %s", r.body)
	}
	id := r.json(t)["sessionId"].(string)
	again := c.post("/session", batchBody("dup"))
	if again.status != 201 || again.json(t)["created"] != false || again.json(t)["sessionId"] != id {
		t.Fatalf("reuse: %d %s", again.status, again.body)
	}
	b = batchBody("dup")
	b["reuse"] = false
	m = c.post("/session", b).problem(t, 400, "session-already-exists", "session_create_already-exists")
	if m["data"].(map[string]any)["existingSessionId"] != id {
		t.Fatalf("%v", m)
	}
	// delegated creation by the superadmin: owned by alice
	b = batchBody("deleg")
	b["owner_access_key"] = fx.aliceAK
	r = fx.admin.post("/session", b)
	if r.status != 201 {
		t.Fatalf("delegated: %d %s", r.status, r.body)
	}
	si, _ := fx.d.Session(r.json(t)["sessionId"].(string))
	if si.AccessKey != fx.aliceAK {
		t.Fatalf("owner %s", si.AccessKey)
	}
	// max_priority rejects (not caps)
	mp := 5
	fx.d.AddUser(User{Email: "capped@example.com", Projects: []string{"default"}})
	kp, _ := fx.d.AddKeyPair(KeyPair{UserEmail: "capped@example.com", MaxPriority: &mp})
	cc := newClient(t, fx.d, kp.AccessKey, kp.SecretKey)
	b = batchBody("prio")
	b["priority"] = 50
	cc.post("/session", b).problem(t, 400, "quota-exceeded", "session_create_unavailable")
	// frozen manager: creation 503, reads still answer
	fx.d.Freeze(true)
	c.post("/session", batchBody("frozen")).problem(t, 503, "server-frozen", "api_access_unavailable")
	if r := c.get("/session/dup"); r.status != 200 {
		t.Fatalf("read while frozen: %d %s", r.status, r.body)
	}
	fx.d.Freeze(false)
	// restart is not implemented
	c.req("PATCH", "/session/dup", nil, nil).problem(t, 501, "not-implemented", "api_generic_not-implemented")
}

func (d *Double) addSlotTypeForTest(name string) {
	d.mu.Lock()
	d.addSlotType(name, slotCount)
	d.mu.Unlock()
}

func TestGetSessionAndDestroy(t *testing.T) {
	fx := newFixture(t, Options{Cycle: time.Hour, LongCycle: time.Hour})
	c := fx.alice
	r := c.post("/session", batchBody("slurm-1"))
	id := r.json(t)["sessionId"].(string)
	g := c.get("/session/slurm-1")
	if g.status != 200 {
		t.Fatalf("%d %s", g.status, g.body)
	}
	m := g.json(t)
	if m["status"] != "PENDING" || m["statusInfo"] != "None" || m["image"] != "cr.backend.ai/stable/python:3.11-ubuntu22.04" ||
		m["requestedSlots"] != "{'cpu': Decimal('1'), 'mem': Decimal('2147483648')}" {
		t.Fatalf("%s", g.body)
	}
	// another user's session is not found by name
	fx.admin.get("/session/slurm-1").problem(t, 404, "object-not-found", "session_read_not-found")
	// PENDING → CANCELLED
	d := c.delete("/session/" + id)
	if d.status != 200 || string(d.body) != `{"stats": {"status": "cancelled"}}` {
		t.Fatalf("%d %s", d.status, d.body)
	}
	si, _ := fx.d.Session(id)
	if si.Status != "CANCELLED" || *si.StatusInfo != "user-requested" {
		t.Fatalf("%+v", si)
	}
	// again (stale lookup by UUID): nothing to do
	if d := c.delete("/session/" + id); string(d.body) != `{"stats": {}}` {
		t.Fatalf("%s", d.body)
	}
	// a dead session is not visible to GET
	c.get("/session/"+id).problem(t, 404, "object-not-found", "session_read_not-found")
	// logs of a session never placed: no agent
	c.get("/session/"+id+"/logs").problem(t, 404, "object-not-found", "instance_read_not-found")
	// two sessions with the same name, one dead: DELETE by name is ambiguous
	c.post("/session", batchBody("slurm-1"))
	c.delete("/session/slurm-1").problem(t, 404, "too-many-sessions-matched", "session_read_conflict")
}

func TestScalingGroupsAndSlots(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.d.AddResourceGroup(ResourceGroup{Name: "private", Private: true})
	r := fx.alice.get("/scaling-groups?group=default")
	if string(r.body) != `{"scaling_groups": [{"name": "default"}]}` {
		t.Fatalf("%s", r.body)
	}
	r = fx.admin.get("/scaling-groups?group=default")
	if string(r.body) != `{"scaling_groups": [{"name": "default"}, {"name": "private"}]}` {
		t.Fatalf("%s", r.body)
	}
	fx.alice.get("/scaling-groups").problem(t, 400, "generic-bad-request", "api_parsing_invalid-parameters")
	r = fx.alice.get("/config/resource-slots")
	if string(r.body) != `{"cpu": "count", "mem": "bytes", "cuda.device": "count"}` {
		t.Fatalf("%s", r.body)
	}
	fx.d.AddVFolder(VFolder{Name: "home", OwnerEmail: "alice@example.com"})
	r = fx.alice.get("/folders")
	var l []map[string]any
	json.Unmarshal(r.body, &l)
	if len(l) != 1 || l[0]["name"] != "home" || l[0]["ownership_type"] != "user" {
		t.Fatalf("%s", r.body)
	}
}
