package double

import (
	"fmt"
	"net/http"
)

// problem is a BackendAIError (ai/backend/common/exception.py): an
// RFC 7807 body {type, title, error_code[, msg][, data]} written by
// orjson with Content-Type application/problem+json.
type problem struct {
	status int
	typ    string // suffix of https://api.backend.ai/probs/
	title  string
	code   string // "<domain>_<operation>_<detail>"
	msg    *string
	data   any
	hdr    map[string]string
}

func (p *problem) Error() string {
	if p.msg != nil {
		return fmt.Sprintf("%s (%s)", p.title, *p.msg)
	}
	return p.title
}

// pyStr is str(BackendAIError): "title (msg)" plus the extra data line.
func (p *problem) pyStr() string {
	s := p.title
	if p.msg != nil && *p.msg != "" {
		s = fmt.Sprintf("%s (%s)", p.title, *p.msg)
	}
	if p.data != nil {
		s += "\n -> extra_data: " + pyRepr(p.data)
	}
	return s
}

func (p *problem) body() []byte {
	o := obj{{"type", "https://api.backend.ai/probs/" + p.typ}, {"title", p.title}, {"error_code", p.code}}
	if p.msg != nil {
		o = o.add("msg", *p.msg)
	}
	if p.data != nil {
		o = o.add("data", p.data)
	}
	return encode(orjsonStyle, o)
}

func (p *problem) write(w http.ResponseWriter) {
	for k, v := range p.hdr {
		w.Header().Set(k, v)
	}
	// BackendAIError sets content_type after aiohttp's HTTPException gave
	// the response a text body, so the charset stays.
	w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
	w.WriteHeader(p.status)
	w.Write(p.body())
}

type probKind struct {
	status int
	typ    string
	title  string
	code   string
}

func (k probKind) with(msg string) *problem {
	m := msg
	return &problem{status: k.status, typ: k.typ, title: k.title, code: k.code, msg: &m}
}

func (k probKind) bare() *problem {
	return &problem{status: k.status, typ: k.typ, title: k.title, code: k.code}
}

func (k probKind) withData(msg *string, data any) *problem {
	return &problem{status: k.status, typ: k.typ, title: k.title, code: k.code, msg: msg, data: data}
}

func strp(s string) *string { return &s }

// The problem kinds used here, with type/title/error_code exactly as the
// classes of 26.8.1 define them (src/ai/backend/common/exception.py,
// src/ai/backend/manager/errors/{common,api,auth,kernel,resource,image}.py).
var (
	// manager errors/auth.py
	errInvalidAuthParams = probKind{400, "invalid-auth-params", "Missing or invalid authorization parameters.", "user_auth_invalid-parameters"}
	errAuthFailed        = probKind{401, "auth-failed", "Credential/signature mismatch.", "user_auth_unauthorized"}
	errInsufficientPriv  = probKind{403, "insufficient-privilege", "Insufficient privilege.", "user_auth_forbidden"}
	// manager errors/common.py
	errURLNotFound       = probKind{404, "url-not-found", "Unknown URL path.", "api_read_not-found"}
	errGenericBadRequest = probKind{400, "generic-bad-request", "Bad request.", "backendai_generic_bad-request"}
	errGenericForbidden  = probKind{403, "generic-forbidden", "Forbidden operation.", "backendai_generic_forbidden"}
	errMethodNotAllowed  = probKind{405, "method-not-allowed", "HTTP Method Not Allowed.", "api_access_forbidden"}
	errInternal          = probKind{500, "internal-server-error", "Internal server error.", "backendai_generic_internal-error"}
	errServiceUnavail    = probKind{503, "service-unavailable", "Serivce unavailable.", "backendai_generic_unavailable"}
	errServerFrozen      = probKind{503, "server-frozen", "The server is frozen due to maintenance. Please try again later.", "api_access_unavailable"}
	// manager errors/api.py (handler-level checks)
	errInvalidAPIParams = probKind{400, "invalid-api-params", "Missing or invalid API parameters.", "api_generic_invalid-parameters"}
	errNotImplemented   = probKind{501, "not-implemented", "This API is not implemented.", "api_generic_not-implemented"}
	errRateLimit        = probKind{429, "rate-limit-exceeded", "You have reached your API query rate limit.", "api_access_unavailable"}
	// common exception.py (DTO / body parsing)
	errCommonInvalidAPIParams = probKind{400, "generic-bad-request", "Invalid or Missing API Parameters.", "api_parsing_invalid-parameters"}
	errMalformedBody          = probKind{400, "generic-bad-request", "Malformed request body.", "api_parsing_bad-request"}
	errUnknownSlot            = probKind{400, "unknown-resource-slot-type", "Unknown resource slot type.", "backendai_parsing_not-found"}
	errInvalidSlotQty         = probKind{400, "invalid-resource-slot-quantity", "Invalid resource slot quantity.", "backendai_parsing_invalid-parameters"}
	// manager errors/kernel.py
	errTooManySessions = probKind{404, "too-many-sessions-matched", "Too many sessions matched.", "session_read_conflict"}
	errSessionExists   = probKind{400, "session-already-exists", "The session already exists but you requested not to reuse existing one.", "session_create_already-exists"}
	errQuotaExceeded   = probKind{400, "quota-exceeded", "You have reached your resource limit.", "session_create_unavailable"}
	// manager errors/resource.py
	errProjectNotFound = probKind{404, "project-not-found", "Project not found.", "group_read_not-found"}
)

// objectNotFound is ObjectNotFound and its subclasses: title "No such X.".
func objectNotFound(object, code string, msg *string, data any) *problem {
	return &problem{status: 404, typ: "object-not-found", title: "No such " + object + ".", code: code, msg: msg, data: data}
}

func sessionNotFound(msg string) *problem {
	return objectNotFound("session", "session_read_not-found", strp(msg), nil)
}

func internalError() *problem { return errInternal.bare() }
