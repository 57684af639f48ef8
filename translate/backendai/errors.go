package backendai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Problem type URLs of the manager (error_type of BackendAIError
// subclasses in src/ai/backend/common/exception.py and
// src/ai/backend/manager/errors/*.py at 26.8.1).
const (
	ProbPrefix = "https://api.backend.ai/probs/"

	ProbObjectNotFound         = ProbPrefix + "object-not-found"
	ProbURLNotFound            = ProbPrefix + "url-not-found"
	ProbTooManySessionsMatched = ProbPrefix + "too-many-sessions-matched"
	ProbTooManyKernels         = ProbPrefix + "too-many-kernels"
	ProbTooManyVFolders        = ProbPrefix + "too-many-vfolders"
	ProbSessionAlreadyExists   = ProbPrefix + "session-already-exists"
	ProbQuotaExceeded          = ProbPrefix + "quota-exceeded"
	ProbRateLimitExceeded      = ProbPrefix + "rate-limit-exceeded"
	ProbServerFrozen           = ProbPrefix + "server-frozen"
	ProbServiceUnavailable     = ProbPrefix + "service-unavailable"
	ProbAuthFailed             = ProbPrefix + "auth-failed"
	ProbInvalidAuthParams      = ProbPrefix + "invalid-auth-params"
	ProbGenericBadRequest      = ProbPrefix + "generic-bad-request"
	ProbInvalidAPIParams       = ProbPrefix + "invalid-api-params"
	ProbGenericForbidden       = ProbPrefix + "generic-forbidden"
	ProbInsufficientPrivilege  = ProbPrefix + "insufficient-privilege"
	ProbNotImplemented         = ProbPrefix + "not-implemented"
	ProbGraphQLError           = ProbPrefix + "graphql-error"
	ProbNoCompatibleAgents     = ProbPrefix + "no-compatible-agents"
)

// Sentinel errors for conditions the client itself detects.
var (
	// ErrNotFound: a lookup found nothing (a GraphQL query returned null or
	// an empty list). IsNotFound reports true for it.
	ErrNotFound = errors.New("backendai: not found")
	// ErrAmbiguous: a lookup by name matched more than one object.
	ErrAmbiguous = errors.New("backendai: ambiguous name")
	// ErrUnsupportedManager: the manager is older than 26.8 or speaks an
	// older API than configured.
	ErrUnsupportedManager = errors.New("backendai: unsupported manager version")
	// ErrUnknownImage: no ALIVE image has that reference or alias.
	// IsInvalidImage and IsNotFound report true for it.
	ErrUnknownImage = fmt.Errorf("backendai: unknown image: %w", ErrNotFound)
	// ErrInvalidRequest: the client refused a request before sending it.
	// IsInvalidParams reports true for it.
	ErrInvalidRequest = errors.New("backendai: invalid request")
)

// APIError is an error answered by the manager: an RFC 7807 problem
// (application/problem+json with type, title, error_code, msg, data), a
// GraphQL error list (Status 200, Type ProbGraphQLError), or a non-JSON
// answer from something in front of the manager (Type empty).
type APIError struct {
	Status    int             // HTTP status
	Type      string          // problem type URL
	Title     string          // problem title
	ErrorCode string          // "<domain>_<operation>_<detail>", e.g. "session_read_not-found"
	Msg       string          // extra message (msg)
	Data      json.RawMessage // extra data (data), raw JSON; nil when absent

	Method, Path string        // the request (path without query)
	RetryAfter   time.Duration // from a Retry-After header, 0 if none
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("backendai: ")
	if e.Method != "" {
		b.WriteString(e.Method)
		b.WriteByte(' ')
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "HTTP %d", e.Status)
	if e.Type != "" {
		b.WriteByte(' ')
		b.WriteString(strings.TrimPrefix(e.Type, ProbPrefix))
	}
	if e.ErrorCode != "" {
		b.WriteString(" (")
		b.WriteString(e.ErrorCode)
		b.WriteByte(')')
	}
	if e.Title != "" {
		b.WriteString(": ")
		b.WriteString(e.Title)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// ExistingSessionID is data.existingSessionId of a session-already-exists
// problem ("" otherwise).
func (e *APIError) ExistingSessionID() string {
	if len(e.Data) == 0 {
		return ""
	}
	var d struct {
		ExistingSessionID string `json:"existingSessionId"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.ExistingSessionID
}

// codeParts splits ErrorCode into domain, operation, detail.
func (e *APIError) codeParts() (domain, op, detail string) {
	p := strings.SplitN(e.ErrorCode, "_", 3)
	if len(p) != 3 {
		return "", "", ""
	}
	return p[0], p[1], p[2]
}

func (e *APIError) typeName() string { return strings.TrimPrefix(e.Type, ProbPrefix) }

// isGraphQL: errors from a GraphQL body carry no HTTP status of their own;
// only their extensions.code classifies them.
func (e *APIError) isGraphQL() bool { return e.Type == ProbGraphQLError && e.Status == http.StatusOK }

// TransportError is a request that got no HTTP answer (connection
// refused, reset, DNS failure, attempt timeout, truncated body).
type TransportError struct {
	Method, Path string
	Err          error
}

func (e *TransportError) Error() string {
	return "backendai: " + e.Method + " " + e.Path + ": " + e.Err.Error()
}
func (e *TransportError) Unwrap() error { return e.Err }

// decodeError turns a non-2xx response into an *APIError.
func decodeError(resp *http.Response, body []byte, method, path string) *APIError {
	e := &APIError{Status: resp.StatusCode, Method: method, Path: path}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	var p struct {
		Type      string          `json:"type"`
		Title     string          `json:"title"`
		ErrorCode string          `json:"error_code"`
		Msg       json.RawMessage `json:"msg"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &p); err == nil && (p.Type != "" || p.Title != "" || p.ErrorCode != "") {
		e.Type, e.Title, e.ErrorCode = p.Type, p.Title, p.ErrorCode
		e.Msg = rawToString(p.Msg)
		if len(p.Data) > 0 && string(p.Data) != "null" {
			e.Data = append(json.RawMessage(nil), p.Data...)
		}
		return e
	}
	// Not a problem document (a proxy's HTML page, an empty body).
	e.Title = http.StatusText(resp.StatusCode)
	e.Msg = snippet(body)
	return e
}

// rawToString renders msg, which is normally a string but is not
// guaranteed to be one.
func rawToString(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return string(r)
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 256 {
		s = s[:256] + "…"
	}
	return s
}

func asAPIError(err error) (*APIError, bool) {
	var e *APIError
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// ---------------------------------------------------------------------
// Classification. The predicates are not exclusive (an unknown image is
// also "not found"); a caller mapping to one code should test in the
// order: AuthFailed, Forbidden, RateLimited, Unavailable, QuotaExceeded,
// InvalidImage, AlreadyExists, Ambiguous, NotFound, InvalidParams.
// ---------------------------------------------------------------------

// IsNotFound: the object does not exist (or is not visible to the
// caller): HTTP 404 problems except url-not-found (a route the manager
// lacks), the too-many-* ambiguity problems and no-compatible-agents;
// GraphQL errors whose code ends in "_not-found"; ErrNotFound.
func IsNotFound(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	if e.isGraphQL() {
		_, op, d := e.codeParts()
		return d == "not-found" && op != "parsing"
	}
	if e.Status != http.StatusNotFound {
		return false
	}
	switch e.Type {
	case ProbURLNotFound, ProbTooManySessionsMatched, ProbTooManyKernels, ProbTooManyVFolders, ProbNoCompatibleAgents:
		return false
	}
	return true
}

// IsAmbiguous: a name matched several objects (too-many-sessions-matched,
// too-many-kernels, too-many-vfolders, all HTTP 404; ErrAmbiguous).
func IsAmbiguous(err error) bool {
	if errors.Is(err, ErrAmbiguous) {
		return true
	}
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	switch e.Type {
	case ProbTooManySessionsMatched, ProbTooManyKernels, ProbTooManyVFolders:
		return true
	}
	_, _, d := e.codeParts()
	return e.isGraphQL() && d == "conflict" && strings.HasSuffix(e.ErrorCode, "_read_conflict")
}

// IsAlreadyExists: session-already-exists (400, data.existingSessionId),
// vfolder-already-exists, vfolder-grant-already-exists,
// email-already-exists, user-conflict, unique-constraint-violation, and any
// code whose detail is "already-exists".
func IsAlreadyExists(err error) bool {
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	switch e.typeName() {
	case "session-already-exists", "vfolder-already-exists", "vfolder-grant-already-exists",
		"email-already-exists", "user-conflict", "unique-constraint-violation":
		return true
	}
	_, _, d := e.codeParts()
	return d == "already-exists"
}

// quotaTypes are the problem types that mean "over a limit" (see the
// table in the package's report): quota-exceeded is what the enqueue-time
// validators raise (max_priority, max_pending_session_count,
// max_pending_session_resource_slots, max_containers_per_session,
// customized image count); the others are the scheduler's resource-policy
// validators (412), normally seen in scheduling history rather than over
// HTTP.
var quotaTypes = map[string]bool{
	"quota-exceeded":                 true,
	"concurrency-limit-exceeded":     true,
	"user-resource-quota-exceeded":   true,
	"group-resource-quota-exceeded":  true,
	"domain-resource-quota-exceeded": true,
}

// IsQuotaExceeded: a resource-policy limit refuses the request:
// quotaTypes over REST; over GraphQL (where only extensions.code is known)
// session_create_unavailable, <user|group|domain>_check-limit_forbidden,
// and session_check-limit_forbidden when the message names a limit
// (ConcurrencyLimitExceeded shares that code with DependenciesNotSatisfied
// and ReservedBatchSessionNotReady, which are not limits).
func IsQuotaExceeded(err error) bool {
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	if quotaTypes[e.typeName()] {
		return true
	}
	if !e.isGraphQL() {
		return false
	}
	switch e.ErrorCode {
	case "session_create_unavailable", "user_check-limit_forbidden",
		"group_check-limit_forbidden", "domain_check-limit_forbidden":
		return true
	case "session_check-limit_forbidden":
		return strings.Contains(strings.ToLower(e.Msg), "limit")
	}
	return false
}

// IsInvalidImage: the image cannot be resolved or used: ImageNotFound
// (image_read_not-found, also raised for a registry not allowed in the
// domain), UnknownImageReferenceError (image_read_internal-error, type
// object-not-found), ImageAliasNotFound (image-alias_read_not-found),
// ImageAccessForbiddenError (image_access_forbidden).
func IsInvalidImage(err error) bool {
	if errors.Is(err, ErrUnknownImage) {
		return true
	}
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	dom, op, d := e.codeParts()
	switch {
	case dom == "image" && op == "read" && (d == "not-found" || d == "internal-error"):
		return e.Status == http.StatusNotFound || e.isGraphQL()
	case dom == "image-alias" && op == "read" && d == "not-found":
		return true
	case dom == "image" && op == "access" && d == "forbidden":
		return true
	}
	return false
}

// IsInvalidParams: the request is malformed or inconsistent: HTTP 400 and
// 422 problems that are not auth, quota, already-exists, image or hook
// refusals (generic-bad-request for DTO validation, invalid-api-params for
// handler checks, unknown-resource-slot-type, invalid-resource-slot-
// quantity, schema-validation-failed, no-available-scaling-group,
// scaling-group-session-type-not-allowed, …); GraphQL errors with detail
// invalid-parameters or bad-request, or with no code at all (query
// validation); ErrInvalidRequest.
func IsInvalidParams(err error) bool {
	if errors.Is(err, ErrInvalidRequest) {
		return true
	}
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	if IsAuthFailed(err) || IsQuotaExceeded(err) || IsAlreadyExists(err) || IsInvalidImage(err) || IsForbidden(err) {
		return false
	}
	if e.isGraphQL() {
		_, op, d := e.codeParts()
		return e.ErrorCode == "" || d == "invalid-parameters" || d == "bad-request" ||
			(op == "parsing" && d == "not-found")
	}
	return e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity
}

// IsForbidden: the caller may not do this: HTTP 403 (generic-forbidden,
// insufficient-privilege — e.g. delegation to a user the keypair may not
// act for, X-BackendAI-Act-As by a non-superadmin —, forbidden,
// keypair-forbidden, invalid-client-ip-config, permission-denied,
// jwt-invalid-claims), rejected-by-hook (400), vfolder-permission-error
// and storage-permission-not-allowed (400), and GraphQL codes with detail
// "forbidden" that are not limit checks.
func IsForbidden(err error) bool {
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	if e.Status == http.StatusForbidden {
		return true
	}
	switch e.typeName() {
	case "rejected-by-hook", "vfolder-permission-error", "storage-permission-not-allowed":
		return true
	}
	if e.isGraphQL() {
		_, op, d := e.codeParts()
		return d == "forbidden" && op != "check-limit" && op != "schedule"
	}
	return false
}

// IsAuthFailed: the admin credentials were refused: HTTP 401 (auth-failed
// — unknown or inactive access key, signature mismatch —, jwt-*,
// password-expired, login-session-expired), invalid-auth-params (400:
// missing or garbled Authorization, Date outside ±15 minutes, missing
// X-BackendAI-Version), invalid-credentials.
func IsAuthFailed(err error) bool {
	e, ok := asAPIError(err)
	if !ok {
		return false
	}
	if e.Status == http.StatusUnauthorized {
		return true
	}
	switch e.typeName() {
	case "invalid-auth-params", "invalid-credentials", "auth-failed":
		return true
	}
	return e.isGraphQL() && strings.HasSuffix(e.ErrorCode, "_unauthorized")
}

// IsRateLimited: HTTP 429 (rate-limit-exceeded: the keypair's rate_limit
// over the rolling 15-minute window). Retryable, but note that refused
// requests still count in the manager's window.
func IsRateLimited(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.Status == http.StatusTooManyRequests
}

// IsUnavailable: the manager could not serve the request now: HTTP 503
// (server-frozen for writes during maintenance, service-unavailable,
// agent/storage-proxy/instance unavailability), 502 and 504 (proxies,
// storage-proxy-timeout), connection refused or reset, DNS failure, attempt
// timeouts, truncated bodies. Retryable. A context cancelled or expired by
// the caller is not "unavailable".
func IsUnavailable(err error) bool {
	if e, ok := asAPIError(err); ok {
		switch e.Status {
		case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var te *TransportError
	if !errors.As(err, &te) {
		return false
	}
	if errors.Is(te.Err, context.Canceled) || errors.Is(te.Err, errCallerContext) {
		return false
	}
	return true
}

// IsRetryable: RateLimited or Unavailable.
func IsRetryable(err error) bool { return IsRateLimited(err) || IsUnavailable(err) }

// IsNotImplemented: HTTP 501 (restart and transit-status in 26.8.1).
func IsNotImplemented(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.Status == http.StatusNotImplemented
}

// errCallerContext marks transport errors caused by the caller's context.
var errCallerContext = errors.New("caller context done")

// isDialError: the request certainly never reached the manager.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// isTruncation: the connection broke mid-response.
func isTruncation(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}
