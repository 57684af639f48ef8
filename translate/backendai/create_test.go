package backendai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func intp(i int) *int { return &i }

// fullRequest is the Go request for the same session as
// testdata/create_full.json's SDK arguments.
func fullRequest() CreateSessionRequest {
	return CreateSessionRequest{
		Name:           "slurm-42",
		Image:          "cr.backend.ai/stable/python:3.11-ubuntu22.04",
		Architecture:   "aarch64",
		Domain:         "research",
		Group:          "proj-a",
		OwnerAccessKey: "AKIAUSERKEY000000000",
		ResourceGroup:  "gpu",
		Resources:      Resources{CPU: 4, Mem: 8 << 30, CUDADevices: 1},
		ResourceOpts:   ResourceOpts{Shmem: 1 << 30},
		ClusterMode:    MultiNode,
		ClusterSize:    2,
		Mounts: []Mount{
			{Name: "data", Dest: "/data", Permission: PermReadOnly},
			{ID: "0b8e4f7a-1c2d-4e5f-8a9b-abcdefabcdef", Dest: "/scratch"},
		},
		Environ:         map[string]string{"SLURM_JOB_ID": "42", "OMP_NUM_THREADS": "4"},
		StartupCommand:  "bash /home/work/.slurm/job.sh",
		BootstrapScript: "echo hi",
		StartsAt:        time.Date(2026, 8, 23, 1, 2, 3, 0, time.UTC),
		BatchTimeout:    time.Hour,
		Dependencies:    []string{"6F1C8A4E-2B1D-4C3E-9A7F-0123456789AB"},
		Priority:        intp(20),
		Tag:             "slurm-job:42",
	}
}

func minimalRequest() CreateSessionRequest {
	return CreateSessionRequest{
		Name: "slurm-7", Image: "python:3.11", Domain: "default", Group: "default",
		OwnerAccessKey: "AKIAUSERKEY000000000", StartupCommand: "/bin/true",
		Resources: Resources{CPU: 1, Mem: 1 << 30},
	}
}

// Accepted JSON keys (field names and validation aliases) of
// CreateFromParamsRequest (src/ai/backend/common/dto/manager/session/
// request.py) and CreationConfigV7 (…/types.py) at 26.8.1.
var (
	createKeys = map[string]string{
		"session_name": "name", "name": "name", "clientSessionToken": "name",
		"priority": "priority", "job_priority": "job_priority", "is_preemptible": "is_preemptible",
		"image": "image", "lang": "image", "architecture": "architecture", "arch": "architecture",
		"session_type": "type", "type": "type", "sessionType": "type",
		"group": "group", "groupName": "group", "group_name": "group",
		"domain": "domain", "domainName": "domain", "domain_name": "domain",
		"cluster_size": "cluster_size", "clusterSize": "cluster_size",
		"cluster_mode": "cluster_mode", "clusterMode": "cluster_mode",
		"config": "config", "tag": "tag", "enqueue_only": "enqueue_only", "enqueueOnly": "enqueue_only",
		"max_wait_seconds": "max_wait_seconds", "maxWaitSeconds": "max_wait_seconds",
		"starts_at": "starts_at", "startsAt": "starts_at",
		"batch_timeout": "batch_timeout", "batchTimeout": "batch_timeout",
		"reuse": "reuse", "reuseIfExists": "reuse",
		"startup_command": "startup_command", "startupCommand": "startup_command",
		"bootstrap_script": "bootstrap_script", "bootstrapScript": "bootstrap_script",
		"dependencies": "dependencies", "callback_url": "callback_url", "callbackUrl": "callback_url",
		"callbackURL": "callback_url", "owner_access_key": "owner_access_key",
	}
	configKeys = map[string]string{
		"mounts": "mounts", "mount_map": "mount_map", "mountMap": "mount_map", "mount_ids": "mount_ids",
		"mount_id_map": "mount_id_map", "mountIdMap": "mount_id_map",
		"mount_options": "mount_options", "mountOptions": "mount_options", "environ": "environ",
		"scaling_group": "scaling_group", "scalingGroup": "scaling_group", "resources": "resources",
		"resource_opts": "resource_opts", "resourceOpts": "resource_opts",
		"preopen_ports": "preopen_ports", "preopenPorts": "preopen_ports",
		"agent_list": "agent_list", "agentList": "agent_list",
		"attach_network": "attach_network", "attachNetwork": "attach_network",
	}
	mountOptionKeys = map[string]bool{"mount_destination": true, "type": true, "permission": true, "perm": true, "subpath": true}
)

// onlyOurs are keys the SDK does not send but the DTO accepts.
var onlyOurs = map[string]bool{"job_priority": true, "is_preemptible": true}

type golden struct {
	Method string         `json:"method"`
	Path   string         `json:"path"`
	Body   map[string]any `json:"body"`
}

func loadGolden(t *testing.T, name string) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func ourBody(t *testing.T, r CreateSessionRequest) map[string]any {
	t.Helper()
	b, err := buildCreateBody(r)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// isEmpty: null, {}, [] and absent all mean the DTO default.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func compareBodies(t *testing.T, where string, ours, sdk map[string]any, keys map[string]string) {
	t.Helper()
	all := map[string]bool{}
	for k := range ours {
		all[k] = true
	}
	for k := range sdk {
		all[k] = true
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ov, inOurs := ours[k]
		sv, inSDK := sdk[k]
		if inOurs {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s.%s: not a key the manager's DTO accepts", where, k)
			}
		}
		switch {
		case inOurs && !inSDK:
			if !onlyOurs[k] {
				t.Errorf("%s.%s: we send %v, the SDK does not", where, k, ov)
			}
		case !inOurs && inSDK:
			if !isEmpty(sv) {
				t.Errorf("%s.%s: the SDK sends %v, we do not", where, k, sv)
			}
		case k == "config":
			compareBodies(t, where+".config", ov.(map[string]any), sv.(map[string]any), configKeys)
		case k == "starts_at":
			a, _ := parseISOTime(ov.(string))
			b, _ := parseISOTime(sv.(string))
			if !a.Equal(b) {
				t.Errorf("%s.starts_at: %v vs %v", where, ov, sv)
			}
		case isEmpty(ov) && isEmpty(sv):
		default:
			if !reflect.DeepEqual(ov, sv) {
				t.Errorf("%s.%s: we send %#v, the SDK %#v", where, k, ov, sv)
			}
		}
	}
}

func TestCreateBodyMatchesPythonSDK(t *testing.T) {
	for _, c := range []struct {
		golden string
		req    CreateSessionRequest
	}{
		{"create_full.json", fullRequest()},
		{"create_minimal.json", minimalRequest()},
	} {
		g := loadGolden(t, c.golden)
		if g.Method != "POST" || g.Path != "/session" {
			t.Fatalf("%s: %s %s", c.golden, g.Method, g.Path)
		}
		compareBodies(t, c.golden, ourBody(t, c.req), g.Body, createKeys)
	}
}

func TestCreateBodyDetails(t *testing.T) {
	r := fullRequest()
	r.JobPriority = intp(5)
	no := false
	r.IsPreemptible = &no
	r.Resources.CUDAShares = 0.5
	r.Resources.Extra = map[string]string{"rocm.device": "2"}
	r.Mounts = append(r.Mounts, Mount{ID: "11111111-2222-3333-4444-555555555555", Subpath: "runs/7", Permission: PermReadWrite})
	m := ourBody(t, r)
	if m["type"] != "batch" || m["enqueueOnly"] != true || m["reuseIfExists"] != false {
		t.Errorf("type/enqueueOnly/reuse: %v %v %v", m["type"], m["enqueueOnly"], m["reuseIfExists"])
	}
	if m["job_priority"] != 5.0 || m["is_preemptible"] != false || m["batch_timeout"] != 3600.0 {
		t.Errorf("job_priority %v is_preemptible %v batch_timeout %v", m["job_priority"], m["is_preemptible"], m["batch_timeout"])
	}
	if d := m["dependencies"].([]any); d[0] != "6f1c8a4e-2b1d-4c3e-9a7f-0123456789ab" {
		t.Errorf("dependency not canonical: %v", d)
	}
	cfg := m["config"].(map[string]any)
	res := cfg["resources"].(map[string]any)
	if res["cuda.shares"] != "0.5" || res["rocm.device"] != "2" || res["mem"] != "8589934592" {
		t.Errorf("resources %v", res)
	}
	opt := cfg["mount_options"].(map[string]any)["11111111-2222-3333-4444-555555555555"].(map[string]any)
	if opt["subpath"] != "runs/7" || opt["permission"] != "rw" || opt["type"] != "bind" {
		t.Errorf("mount option %v", opt)
	}
	for k := range opt {
		if !mountOptionKeys[k] {
			t.Errorf("mount option key %q", k)
		}
	}
	// Sub-second timeouts round up; the manager takes whole seconds.
	r = minimalRequest()
	r.BatchTimeout = 1500 * time.Millisecond
	if ourBody(t, r)["batch_timeout"] != 2.0 {
		t.Error("batch timeout not rounded up")
	}
}

func TestCreateValidation(t *testing.T) {
	mod := func(f func(*CreateSessionRequest)) CreateSessionRequest {
		r := minimalRequest()
		f(&r)
		return r
	}
	bad := []CreateSessionRequest{
		mod(func(r *CreateSessionRequest) { r.Name = "" }),
		mod(func(r *CreateSessionRequest) { r.Name = strings.Repeat("x", 65) }),
		mod(func(r *CreateSessionRequest) { r.Name = "from-template" }),
		mod(func(r *CreateSessionRequest) { r.Domain = "" }),
		mod(func(r *CreateSessionRequest) { r.Group = "" }),
		mod(func(r *CreateSessionRequest) { r.StartupCommand = " " }),
		mod(func(r *CreateSessionRequest) { r.Tag = strings.Repeat("t", 65) }),
		mod(func(r *CreateSessionRequest) { r.Priority = intp(101) }),
		mod(func(r *CreateSessionRequest) { r.Dependencies = []string{"slurm-41"} }),
		mod(func(r *CreateSessionRequest) { r.ClusterMode = "single_node_x" }),
		mod(func(r *CreateSessionRequest) { r.Resources.Extra = map[string]string{"shmem": "1g"} }),
		mod(func(r *CreateSessionRequest) { r.Mounts = []Mount{{Name: "a"}, {Name: "a"}} }),
		mod(func(r *CreateSessionRequest) { r.Mounts = []Mount{{Name: "a", Dest: "/x"}, {Name: "b", Dest: "/x"}} }),
		mod(func(r *CreateSessionRequest) { r.Mounts = []Mount{{ID: "nope"}} }),
		mod(func(r *CreateSessionRequest) { r.Mounts = []Mount{{Name: "a", Permission: "rx"}} }),
	}
	for i, r := range bad {
		_, err := buildCreateBody(r)
		if !errors.Is(err, ErrInvalidRequest) || !IsInvalidParams(err) {
			t.Errorf("case %d: err %v", i, err)
		}
	}
}

// createStub answers POST /session and the GraphQL lookups of the
// idempotency logic.
type createStub struct {
	posts, gqls  atomic.Int32
	onPost       func(n int32, w http.ResponseWriter, r *http.Request) bool // true: handled
	sessions     []map[string]any                                           // what GraphQL knows
	lastGQLQuery atomic.Value
}

func (cs *createStub) handler(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/session":
		n := cs.posts.Add(1)
		if cs.onPost != nil && cs.onPost(n, w, r) {
			return
		}
		writeJSON(w, 201, map[string]any{"sessionId": "9d9d9d9d-0000-4000-8000-000000000001", "sessionName": "slurm-42", "status": "PENDING", "servicePorts": []any{}, "created": true})
	case "/admin/gql":
		cs.gqls.Add(1)
		var q struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		cs.lastGQLQuery.Store(q)
		if strings.Contains(q.Query, "compute_session_list") {
			writeJSON(w, 200, map[string]any{"data": map[string]any{"compute_session_list": map[string]any{
				"total_count": len(cs.sessions), "items": cs.sessions}}})
			return
		}
		var hit any
		for _, s := range cs.sessions {
			if s["id"] == q.Variables["id"] {
				hit = s
			}
		}
		writeJSON(w, 200, map[string]any{"data": map[string]any{"compute_session": hit}})
	default:
		http.NotFound(w, r)
	}
}

func gqlSessionRow(id, name, tag, status string, created time.Time) map[string]any {
	return map[string]any{
		"id": id, "name": name, "tag": tag, "status": status, "type": "BATCH", "result": "UNDEFINED",
		"access_key": "AKIAUSERKEY000000000", "created_at": created.UTC().Format("2006-01-02T15:04:05.000000+00:00"),
		"requested_slots": gqlString(map[string]string{"cpu": "4"}), "status_data": gqlString(map[string]any{}),
	}
}

func TestCreateAdoptsSameTag(t *testing.T) {
	cs := &createStub{}
	existing := "9d9d9d9d-0000-4000-8000-0000000000aa"
	cs.sessions = []map[string]any{gqlSessionRow(existing, "slurm-42", "slurm-job:42", "RUNNING", time.Now().Add(-time.Hour))}
	cs.onPost = func(n int32, w http.ResponseWriter, r *http.Request) bool {
		problem(w, 400, "session-already-exists", "The session already exists but you requested not to reuse existing one.",
			"session_create_already-exists", "", map[string]string{"existingSessionId": existing})
		return true
	}
	_, c := newStub(t, cs.handler)
	got, err := c.CreateBatchSession(context.Background(), fullRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got.SessionID != existing || got.Created || got.Status != "RUNNING" {
		t.Errorf("got %+v", got)
	}

	// Another job's session of the same name: refused, with the ID.
	r := fullRequest()
	r.Tag = "slurm-job:43"
	_, err = c.CreateBatchSession(context.Background(), r)
	var ae *APIError
	if !IsAlreadyExists(err) || !errors.As(err, &ae) || ae.ExistingSessionID() != existing {
		t.Errorf("err %v", err)
	}
	if cs.posts.Load() != 2 {
		t.Errorf("posts %d", cs.posts.Load())
	}
}

// The first POST is processed but its answer is lost: the retry finds
// the session by name and tag and does not POST again.
func TestCreateLostAnswerIsNotDuplicated(t *testing.T) {
	cs := &createStub{}
	cs.onPost = func(n int32, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			cs.sessions = []map[string]any{
				gqlSessionRow("9d9d9d9d-0000-4000-8000-0000000000bb", "slurm-42", "slurm-job:42", "TERMINATED", time.Now()),
			}
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return true
		}
		return false
	}
	_, c := newStub(t, cs.handler)
	got, err := c.CreateBatchSession(context.Background(), fullRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got.SessionID != "9d9d9d9d-0000-4000-8000-0000000000bb" || !got.Created || cs.posts.Load() != 1 {
		t.Errorf("got %+v after %d posts", got, cs.posts.Load())
	}
	q := cs.lastGQLQuery.Load().(struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	})
	if q.Variables["filter"] != `(name == "slurm-42")` || q.Variables["ak"] != "AKIAUSERKEY000000000" || q.Variables["status"] != nil {
		t.Errorf("lookup variables %v", q.Variables)
	}
}

// A 500 that created nothing: the lookup is empty, the POST is re-sent.
func TestCreateRetriesAfterServerErrorWithLookup(t *testing.T) {
	cs := &createStub{}
	cs.onPost = func(n int32, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			problem(w, 500, "internal-server-error", "Internal server error.", "backendai_generic_internal-error", "", nil)
			return true
		}
		return false
	}
	_, c := newStub(t, cs.handler)
	got, err := c.CreateBatchSession(context.Background(), fullRequest())
	if err != nil || !got.Created || got.Status != "PENDING" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if cs.posts.Load() != 2 || cs.gqls.Load() != 1 {
		t.Errorf("posts %d gql %d", cs.posts.Load(), cs.gqls.Load())
	}
}

// A 429 comes from middleware before the handler: retry without lookup.
func TestCreateRetriesRateLimitWithoutLookup(t *testing.T) {
	cs := &createStub{}
	cs.onPost = func(n int32, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			problem(w, 429, "rate-limit-exceeded", "You have reached your API query rate limit.", "api_access_unavailable", "", nil)
			return true
		}
		return false
	}
	_, c := newStub(t, cs.handler)
	if _, err := c.CreateBatchSession(context.Background(), minimalRequest()); err != nil {
		t.Fatal(err)
	}
	if cs.posts.Load() != 2 || cs.gqls.Load() != 0 {
		t.Errorf("posts %d gql %d", cs.posts.Load(), cs.gqls.Load())
	}
}

// Errors that are not retryable come back at once.
func TestCreateQuotaNotRetried(t *testing.T) {
	cs := &createStub{}
	cs.onPost = func(n int32, w http.ResponseWriter, r *http.Request) bool {
		problem(w, 400, "quota-exceeded", "You have reached your resource limit.", "session_create_unavailable",
			"The requested session priority 90 exceeds the allowed maximum priority of 50.", nil)
		return true
	}
	_, c := newStub(t, cs.handler)
	_, err := c.CreateBatchSession(context.Background(), minimalRequest())
	if !IsQuotaExceeded(err) || IsInvalidParams(err) || cs.posts.Load() != 1 {
		t.Errorf("err %v posts %d", err, cs.posts.Load())
	}
}
