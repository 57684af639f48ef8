package backendai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// Problem bodies exactly as BackendAIError.__init__ builds them for the
// manager's exception classes at 26.8.1 (type = error_type, title =
// error_title or "No such <object_name>." for ObjectNotFound subclasses,
// error_code = str(error_code()), msg / data when given).
var problemCases = []struct {
	class            string // exception class (source file)
	status           int
	typ, title, code string
	msg              string
	data             string // raw JSON
	want             string // predicates expected true, comma-separated
}{
	{"SessionNotFound (manager/errors/kernel.py)", 404, "object-not-found", "No such session.", "session_read_not-found",
		"Session (id=3f25…) does not exist.", "", "NotFound"},
	{"ImageNotFound (manager/errors/image.py)", 404, "object-not-found", "No such environment image.", "image_read_not-found",
		"unknown alias or disallowed registry", "", "InvalidImage,NotFound"},
	{"UnknownImageReferenceError (manager/errors/image.py)", 404, "object-not-found", "No such image reference.", "image_read_internal-error",
		"Unknown image reference: nope:1", "", "InvalidImage,NotFound"},
	{"ImageAliasNotFound (manager/errors/image.py)", 404, "object-not-found", "No such image alias.", "image-alias_read_not-found",
		"", "", "InvalidImage,NotFound"},
	{"VFolderNotFound (manager/errors/storage.py)", 404, "object-not-found", "No such virtual folder.", "vfolder_read_not-found",
		"", `["data"]`, "NotFound"},
	{"VFolderNotFound (common/exception.py)", 404, "vfolder-not-found", "Virtual Folder Not Found", "vfolder_read_not-found",
		"", "", "NotFound"},
	{"ProjectNotFound (manager/errors/resource.py)", 404, "project-not-found", "Project not found.", "group_read_not-found",
		"", "", "NotFound"},
	{"UserNotFound (manager/errors/auth.py)", 404, "object-not-found", "No such user.", "user_read_not-found",
		"Impersonation target user not found", "", "NotFound"},
	{"ScalingGroupNotFound (manager/errors/resource.py)", 404, "object-not-found", "No such scaling group.", "scaling-group_read_not-found",
		"", "", "NotFound"},
	{"TooManySessionsMatched (manager/errors/kernel.py)", 404, "too-many-sessions-matched", "Too many sessions matched.", "session_read_conflict",
		"", `{"matches":[{"id":"a","name":"slurm-1","status":"TERMINATED"},{"id":"b","name":"slurm-1","status":"RUNNING"}]}`, "Ambiguous"},
	{"URLNotFound (manager/errors/common.py)", 404, "url-not-found", "Unknown URL path.", "api_read_not-found",
		"", `"/v3/nothing"`, ""},
	{"NoCompatibleAgentError (sokovan/.../selectors/exceptions.py)", 404, "no-compatible-agents", "No compatible agents for the request.", "agent_schedule_unavailable",
		"", "", ""},
	{"SessionAlreadyExists (manager/errors/kernel.py)", 400, "session-already-exists",
		"The session already exists but you requested not to reuse existing one.", "session_create_already-exists",
		"", `{"existingSessionId":"9d9d9d9d-0000-4000-8000-0000000000aa"}`, "AlreadyExists"},
	{"VFolderAlreadyExists (manager/errors/storage.py)", 409, "vfolder-already-exists",
		"The virtual folder already exists with the same name.", "vfolder_create_already-exists", "", "", "AlreadyExists"},
	{"QuotaExceeded (manager/errors/kernel.py) from PriorityLimitRule", 400, "quota-exceeded", "You have reached your resource limit.",
		"session_create_unavailable", "The requested session priority 90 exceeds the allowed maximum priority of 50.", "", "QuotaExceeded"},
	{"QuotaExceeded from PendingSessionCountLimitRule", 400, "quota-exceeded", "You have reached your resource limit.",
		"session_create_unavailable", "You cannot create more than 3 pending session(s).", "", "QuotaExceeded"},
	{"ConcurrencyLimitExceeded (sokovan/.../validators/exceptions.py)", 412, "concurrency-limit-exceeded", "Concurrent session limit exceeded.",
		"session_check-limit_forbidden", "", "", "QuotaExceeded"},
	{"UserResourceQuotaExceeded", 412, "user-resource-quota-exceeded", "User resource quota exceeded.", "user_check-limit_forbidden", "", "", "QuotaExceeded"},
	{"ProjectResourceQuotaExceeded", 412, "group-resource-quota-exceeded", "Project resource quota exceeded.", "group_check-limit_forbidden", "", "", "QuotaExceeded"},
	{"DomainResourceQuotaExceeded", 412, "domain-resource-quota-exceeded", "Domain resource quota exceeded.", "domain_check-limit_forbidden", "", "", "QuotaExceeded"},
	{"DependenciesNotSatisfied", 412, "dependencies-not-satisfied", "Session dependencies not satisfied.", "session_check-limit_forbidden", "", "", ""},
	{"InvalidAPIParameters (common/exception.py: DTO validation)", 400, "generic-bad-request", "Invalid or Missing API Parameters.",
		"api_parsing_invalid-parameters", "", `{"errors":[{"loc":["body","image"],"msg":"Field required"}]}`, "InvalidParams"},
	{"InvalidAPIParameters (manager/errors/api.py: handler checks)", 400, "invalid-api-params", "Missing or invalid API parameters.",
		"api_generic_invalid-parameters", "Batch sessions must have a non-empty startup command.", "", "InvalidParams"},
	{"GenericBadRequest (Unsupported API version.)", 400, "generic-bad-request", "Bad request.", "backendai_generic_bad-request",
		"Unsupported API version.", "", "InvalidParams"},
	{"UnknownResourceSlotType (common/exception.py)", 400, "unknown-resource-slot-type", "Unknown resource slot type.",
		"backendai_parsing_not-found", "Unknown slot type: 'shmem' (Put it at the 'resource_opts' field in API, or use '--resource-opts shmem=...' in CLI)", "", "InvalidParams"},
	{"ScalingGroupSessionTypeNotAllowed (manager/errors/resource.py)", 422, "scaling-group-session-type-not-allowed",
		"Scaling group does not allow this session type.", "scaling-group_read_invalid-parameters", "", "", "InvalidParams"},
	{"GenericForbidden (manager/errors/common.py)", 403, "generic-forbidden", "Forbidden operation.", "backendai_generic_forbidden",
		"", "", "Forbidden"},
	{"InsufficientPrivilege (manager/errors/auth.py)", 403, "insufficient-privilege", "Insufficient privilege.", "user_auth_forbidden",
		"Only superadmin may use X-BackendAI-Act-As", "", "Forbidden"},
	{"RejectedByHook (manager/errors/common.py)", 400, "rejected-by-hook", "Operation rejected by a hook plugin.", "plugin_hook_forbidden",
		"", "", "Forbidden"},
	{"VFolderPermissionError (manager/errors/storage.py)", 400, "vfolder-permission-error",
		"The virtual folder does not permit the specified permission.", "vfolder_access_forbidden", "", "", "Forbidden"},
	{"AuthorizationFailed (manager/errors/auth.py)", 401, "auth-failed", "Credential/signature mismatch.", "user_auth_unauthorized",
		"HMAC signature mismatch", "", "AuthFailed"},
	{"InvalidAuthParameters (manager/errors/auth.py)", 400, "invalid-auth-params", "Missing or invalid authorization parameters.",
		"user_auth_invalid-parameters", "Date/time sync error", "", "AuthFailed"},
	{"RateLimitExceeded (manager/errors/api.py)", 429, "rate-limit-exceeded", "You have reached your API query rate limit.",
		"api_access_unavailable", "", "", "RateLimited"},
	{"ServerFrozen (manager/errors/common.py)", 503, "server-frozen",
		"The server is frozen due to maintenance. Please try again later.", "api_access_unavailable", "", "", "Unavailable"},
	{"ServiceUnavailable (manager/errors/common.py)", 503, "service-unavailable", "Serivce unavailable.", "backendai_generic_unavailable",
		"Server is not in the required status: frozenset({<ManagerStatus.RUNNING: 'running'>})", "", "Unavailable"},
	{"StorageProxyTimeoutError (manager/errors/storage.py)", 504, "storage-proxy-timeout", "Request to storage proxy timed out.",
		"storage-proxy_request_timeout", "", "", "Unavailable"},
	{"NotImplementedAPI (manager/errors/api.py)", 501, "not-implemented", "This API is not implemented.", "api_generic_not-implemented",
		"Session restart is no longer supported. Terminate the session and enqueue a new one instead.", "", "NotImplemented"},
	{"InternalServerError (manager/errors/common.py)", 500, "internal-server-error", "Internal server error.",
		"backendai_generic_internal-error", "", "", ""},
}

var predicates = map[string]func(error) bool{
	"NotFound": IsNotFound, "Ambiguous": IsAmbiguous, "AlreadyExists": IsAlreadyExists,
	"QuotaExceeded": IsQuotaExceeded, "InvalidImage": IsInvalidImage, "InvalidParams": IsInvalidParams,
	"Forbidden": IsForbidden, "AuthFailed": IsAuthFailed, "RateLimited": IsRateLimited,
	"Unavailable": IsUnavailable, "NotImplemented": IsNotImplemented,
}

func truePredicates(err error) string {
	var names []string
	for n, p := range predicates {
		if p(err) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func sorted(csv string) string {
	if csv == "" {
		return ""
	}
	p := strings.Split(csv, ",")
	sort.Strings(p)
	return strings.Join(p, ",")
}

func TestProblemDecodingAndClassification(t *testing.T) {
	i := 0
	_, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		pc := problemCases[i]
		body := fmt.Sprintf(`{"type": %q, "title": %q, "error_code": %q`, ProbPrefix+pc.typ, pc.title, pc.code)
		if pc.msg != "" {
			body += fmt.Sprintf(`, "msg": %q`, pc.msg)
		}
		if pc.data != "" {
			body += `, "data": ` + pc.data
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(pc.status)
		fmt.Fprint(w, body+"}")
	})
	// No retries here: every answer is looked at once.
	c.retry.MaxAttempts = 1
	for i = range problemCases {
		pc := problemCases[i]
		err := c.Do(context.Background(), Request{Method: "POST", Path: "/session", Body: map[string]any{}}, nil)
		var e *APIError
		if !errors.As(err, &e) {
			t.Fatalf("%s: %T %v", pc.class, err, err)
		}
		if e.Status != pc.status || e.Type != ProbPrefix+pc.typ || e.Title != pc.title || e.ErrorCode != pc.code || e.Msg != pc.msg {
			t.Errorf("%s: decoded %+v", pc.class, e)
		}
		if (pc.data == "") != (e.Data == nil) {
			t.Errorf("%s: data %s", pc.class, e.Data)
		}
		if got := truePredicates(err); got != sorted(pc.want) {
			t.Errorf("%s: predicates %q, want %q", pc.class, got, sorted(pc.want))
		}
		if strings.Contains(pc.class, "SessionAlreadyExists") && e.ExistingSessionID() != "9d9d9d9d-0000-4000-8000-0000000000aa" {
			t.Errorf("existingSessionId %q", e.ExistingSessionID())
		}
	}
}

// GraphQL errors carry the BackendAIError code in extensions.code
// (GQLExceptionMiddleware in api/gql_legacy/schema.py).
func TestGraphQLErrorClassification(t *testing.T) {
	cases := []struct {
		msg, code, want string
	}{
		{"No such environment image. (Unknown image references: x)", "image_read_not-found", "InvalidImage,NotFound"},
		{"Forbidden operation.", "backendai_generic_forbidden", "Forbidden"},
		{"Insufficient privilege.", "user_auth_forbidden", "Forbidden"},
		{"Concurrent session limit exceeded. (keypair limit 3)", "session_check-limit_forbidden", "QuotaExceeded"},
		{"Session dependencies not satisfied.", "session_check-limit_forbidden", ""},
		{"No such session.", "session_read_not-found", "NotFound"},
		{"Missing or invalid API parameters. (Unknown client role)", "api_generic_invalid-parameters", "InvalidParams"},
		{"Cannot query field \"nope\" on type \"ComputeSession\".", "", "InvalidParams"},
		{"'BOGUS'", "backendai_generic_internal-error", ""},
	}
	k := 0
	_, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		cc := cases[k]
		e := map[string]any{"message": cc.msg, "locations": []any{map[string]int{"line": 1, "column": 3}}, "path": []string{"x"}}
		if cc.code != "" {
			e["extensions"] = map[string]string{"code": cc.code}
		}
		writeJSON(w, 200, map[string]any{"data": map[string]any{"x": nil}, "errors": []any{e}})
	})
	for k = range cases {
		err := c.Query(context.Background(), "{ x }", nil, &struct{}{})
		var e *APIError
		if !errors.As(err, &e) || e.Type != ProbGraphQLError || e.ErrorCode != cases[k].code || e.Msg != cases[k].msg || e.Status != 200 {
			t.Fatalf("case %d: %#v", k, err)
		}
		if got := truePredicates(err); got != sorted(cases[k].want) {
			t.Errorf("case %d (%s): predicates %q, want %q", k, cases[k].code, got, sorted(cases[k].want))
		}
	}
}

func TestNonProblemAnswers(t *testing.T) {
	_, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		fmt.Fprint(w, "<html><body>502 Bad Gateway</body></html>")
	})
	c.retry.MaxAttempts = 1
	_, err := c.ResourceSlotTypes(context.Background())
	var e *APIError
	if !errors.As(err, &e) || e.Status != 502 || e.Type != "" || !strings.Contains(e.Msg, "Bad Gateway") || !IsUnavailable(err) {
		t.Fatalf("%v", err)
	}
}

func TestTransportErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: connection refused
	c, err := New(Config{Endpoint: "http://" + addr, AccessKey: "a", SecretKey: "s", Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ResourceSlotTypes(context.Background())
	var te *TransportError
	if !errors.As(err, &te) || !IsUnavailable(err) || !IsRetryable(err) || !isDialError(te.Err) {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.ResourceSlotTypes(ctx)
	if IsUnavailable(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	for _, e := range []error{ErrNotFound, ErrUnknownImage, ErrAmbiguous, ErrInvalidRequest} {
		t.Logf("%v → %s", e, truePredicates(e))
	}
	if !IsNotFound(ErrUnknownImage) || !IsInvalidImage(ErrUnknownImage) || !IsInvalidParams(ErrInvalidRequest) || !IsAmbiguous(ErrAmbiguous) {
		t.Error("sentinels")
	}
}
