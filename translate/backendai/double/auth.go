package double

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"hash"
	"net/http"
	"strings"
	"time"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/blake2s"
	"golang.org/x/crypto/sha3"
)

// Authentication as src/ai/backend/manager/api/rest/middleware/auth.py
// (26.8.1) does it.

// authResult is what the middleware puts on the request.
type authResult struct {
	authorized   bool
	isAdmin      bool // keypair is_admin
	isSuperadmin bool // user role == superadmin
	kp           *keypair
	user         *user
	actAs        *user // X-BackendAI-Act-As target
}

// hashFor maps the hash of "HMAC-<hash>" (lower-cased) to a constructor,
// for the names in Python's hashlib.algorithms_guaranteed.
func hashFor(name string) (func() hash.Hash, bool) {
	switch name {
	case "md5":
		return md5.New, true
	case "sha1":
		return sha1.New, true
	case "sha224":
		return sha256.New224, true
	case "sha256":
		return sha256.New, true
	case "sha384":
		return sha512.New384, true
	case "sha512":
		return sha512.New, true
	case "sha3_224":
		return sha3.New224, true
	case "sha3_256":
		return sha3.New256, true
	case "sha3_384":
		return sha3.New384, true
	case "sha3_512":
		return sha3.New512, true
	case "blake2b":
		return func() hash.Hash { h, _ := blake2b.New512(nil); return h }, true
	case "blake2s":
		return func() hash.Hash { h, _ := blake2s.New256(nil); return h }, true
	}
	return nil, false
}

func hmacSum(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}

// Sign computes a request signature as the SDK and the manager do
// (common/auth/utils.py, sign_request in the auth middleware): the
// string to sign is seven lines (method, path with query, date header,
// host, content type, version header, body hash), the key is
// HMAC(HMAC(secret, YYYYMMDD of the date), host). dateValue must be the
// exact header value; dateT its parsed time (whose zone gives the day).
func Sign(method, requestURI, dateValue string, dateT time.Time, host, contentType, version, secret string) string {
	return signWith(sha256.New, method, requestURI, dateValue, dateT, host, contentType, "backendai", version, secret, nil)
}

func signWith(h func() hash.Hash, method, path, rawDate string, date time.Time, host, contentType, verName, version, secret string, body []byte) string {
	bh := h()
	bh.Write(body)
	bodyHash := hex.EncodeToString(bh.Sum(nil))
	s := method + "\n" + path + "\n" + rawDate + "\nhost:" + host + "\ncontent-type:" + contentType +
		"\nx-" + verName + "-version:" + version + "\n" + bodyHash
	k := hmacSum(h, []byte(secret), []byte(date.Format("20060102")))
	k = hmacSum(h, k, []byte(host))
	return hex.EncodeToString(hmacSum(h, k, []byte(s)))
}

// aiohttpContentType is aiohttp's request.content_type (helpers.py
// EnsureOctetStream.get_content_type, 3.13): the header lower-cased, up to
// ";", stripped; application/octet-stream when absent or without exactly
// one "/".
func aiohttpContentType(r *http.Request) string {
	raw, ok := r.Header["Content-Type"]
	if !ok || len(raw) == 0 {
		return "application/octet-stream"
	}
	v := strings.ToLower(raw[0])
	v, _, _ = strings.Cut(v, ";")
	v = strings.TrimSpace(v)
	if strings.Count(v, "/") != 1 {
		return "application/octet-stream"
	}
	return v
}

// checkDate is check_date: the date header parsed (dateutil), strictly
// within ±15 minutes of now.
func checkDate(r *http.Request) (raw string, t time.Time, ok bool) {
	raw = r.Header.Get("Date")
	if raw == "" {
		raw = r.Header.Get("X-BackendAI-Date")
		if raw == "" {
			raw = r.Header.Get("X-Sorna-Date")
		}
	}
	if raw == "" {
		return raw, t, false
	}
	t, ok = parseHTTPDate(raw)
	if !ok {
		return raw, t, false
	}
	now := time.Now()
	if !(now.Add(-15*time.Minute).Before(t) && t.Before(now.Add(15*time.Minute))) {
		return raw, t, false
	}
	return raw, t, true
}

var tzAbbrev = map[string]int{
	"UTC": 0, "GMT": 0, "Z": 0, "UT": 0, "KST": 9 * 3600, "JST": 9 * 3600, "EST": -5 * 3600, "EDT": -4 * 3600,
	"CST": -6 * 3600, "CDT": -5 * 3600, "MST": -7 * 3600, "MDT": -6 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
	"CET": 3600, "CEST": 2 * 3600, "BST": 6 * 3600, "IST": 5*3600 + 1800, "HKT": 8 * 3600, "SGT": 8 * 3600,
	"AEST": 10 * 3600, "AEDT": 11 * 3600, "WET": 0, "EET": 2 * 3600, "MSK": 3 * 3600,
}

// parseHTTPDate covers the forms clients send (ISO 8601 with or without
// offset, RFC 1123/850, asctime); a date without a zone is UTC, as
// check_date makes it.
func parseHTTPDate(raw string) (time.Time, bool) {
	s := strings.TrimSpace(raw)
	layouts := []string{
		"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999",
		"20060102T150405Z0700", "20060102T150405",
		time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700", time.RFC850, time.ANSIC, "2006-01-02",
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	// A trailing zone abbreviation (RFC 1123 "GMT", "KST", ...).
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		if off, ok := tzAbbrev[strings.ToUpper(s[i+1:])]; ok {
			head := s[:i]
			for _, l := range []string{"Mon, 02 Jan 2006 15:04:05", "Mon, 2 Jan 2006 15:04:05", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "Monday, 02-Jan-06 15:04:05"} {
				if t, err := time.Parse(l, head); err == nil {
					name := strings.ToUpper(s[i+1:])
					loc := time.FixedZone(name, off)
					if off == 0 {
						loc = time.UTC
					}
					return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc), true
				}
			}
		}
	}
	return time.Time{}, false
}

// authenticate runs the global auth middleware for a route that needs
// it. A nil problem with res.authorized=false means "no credentials"
// (the route decorator then answers 401).
func (d *Double) authenticate(r *http.Request) (*authResult, *problem) {
	res := &authResult{}
	if tok := r.Header.Get("X-BackendAI-Token"); tok != "" {
		if p := d.authJWT(r, tok, res); p != nil {
			return res, p
		}
	} else if hdr := r.Header.Get("Authorization"); hdr != "" {
		if p := d.authHMAC(r, hdr, res); p != nil {
			return res, p
		}
	}
	// PRE_AUTH_MIDDLEWARE hook: no plugins in the double.
	if res.authorized {
		if raw := r.Header.Get("X-BackendAI-Act-As"); raw != "" {
			if !res.isSuperadmin {
				return res, errInsufficientPriv.with("Only superadmin may use X-BackendAI-Act-As")
			}
			id, ok := canonUUID(raw)
			if !ok {
				return res, errInvalidAuthParams.with("X-BackendAI-Act-As must be a valid user UUID")
			}
			d.mu.Lock()
			u := d.users[id]
			d.mu.Unlock()
			if u == nil {
				return res, objectNotFound("user", "user_read_not-found", strp("Impersonation target user not found"), nil)
			}
			res.actAs = u
		}
	}
	return res, nil
}

func (d *Double) authHMAC(r *http.Request, hdr string, res *authResult) *problem {
	rawDate, date, ok := checkDate(r)
	if !ok {
		return errInvalidAuthParams.with("Date/time sync error")
	}
	scheme, rest, found := strings.Cut(hdr, " ")
	if !found {
		return errInvalidAuthParams.with("Malformed authorization header")
	}
	if scheme != "BackendAI" && scheme != "Sorna" {
		return errInvalidAuthParams.with("Invalid authorization type name")
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		p = strings.TrimSpace(p)
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			// `key, value = param.split("=", 1)` raises an unmapped
			// ValueError: HTTP 500 (reference errata 5).
			return internalError()
		}
		params[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	cred, ok1 := params["credential"]
	method, ok2 := params["signMethod"]
	ak, sig, ok3 := strings.Cut(cred, ":")
	if !ok1 || !ok2 || !ok3 {
		return errInvalidAuthParams.with("Missing or malformed authorization parameters")
	}
	d.mu.Lock()
	kp := d.keypairs[ak]
	d.mu.Unlock()
	if kp == nil || !kp.isActive {
		return errAuthFailed.with("Access key not found in HMAC")
	}
	// sign_request
	parts := strings.Split(method, "-")
	if len(parts) != 2 {
		return errAuthFailed.with("Invalid signature")
	}
	if strings.ToLower(parts[0]) != "hmac" {
		return errInvalidAuthParams.with("Unsupported request signing method (MAC type)")
	}
	hf, ok := hashFor(strings.ToLower(parts[1]))
	if !ok {
		if n := strings.ToLower(parts[1]); n == "shake_128" || n == "shake_256" {
			return internalError() // hexdigest() needs a length: TypeError
		}
		return errInvalidAuthParams.with("Unsupported request signing method (hash type)")
	}
	newVals, newPresent := r.Header["X-Backendai-Version"]
	legVals, legPresent := r.Header["X-Sorna-Version"]
	ver, haveVer := "", false
	if newPresent && newVals[0] != "" {
		ver, haveVer = newVals[0], true
	} else if legPresent {
		ver, haveVer = legVals[0], true
	}
	if !haveVer {
		return errInvalidAuthParams.with("API version missing in request headers")
	}
	verName := "sorna"
	if newPresent {
		verName = "backendai"
	}
	var body []byte
	if ver < "v4.20181215" {
		if aiohttpContentType(r) != "multipart/form-data" {
			body = readBody(r)
		}
	}
	path, host := r.RequestURI, r.Host
	if fwd := r.Header.Get("X-Forwarded-URL"); fwd != "" {
		// 26.8.1 trusts X-Forwarded-URL unconditionally (main restricts
		// it to trusted proxies).
		path, host = forwardedPathHost(fwd)
	}
	mine := signWith(hf, r.Method, path, rawDate, date, host, aiohttpContentType(r), verName, ver, kp.secretKey, body)
	if subtle.ConstantTimeCompare([]byte(mine), []byte(sig)) != 1 {
		return errAuthFailed.with("HMAC signature mismatch")
	}
	d.populate(res, kp)
	return nil
}

func forwardedPathHost(u string) (string, string) {
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	} else if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
	} else {
		// urlparse without a scheme: everything is the path
		p := rest
		if j := strings.IndexAny(p, "?#"); j >= 0 {
			p = p[:j]
		}
		return p, ""
	}
	host, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	if j := strings.IndexAny(path, "?#"); j >= 0 {
		path = path[:j] // urlparse(...).path has no query
	}
	return path, host
}

func (d *Double) populate(res *authResult, kp *keypair) {
	d.mu.Lock()
	defer d.mu.Unlock()
	res.authorized = true
	res.kp = kp
	res.user = kp.user
	res.isAdmin = kp.isAdmin
	res.isSuperadmin = kp.user.role == "superadmin"
	kp.numQueries++
}

// authJWT is _authenticate_via_jwt with an HS256 token signed by the
// keypair's secret key.
func (d *Double) authJWT(r *http.Request, tok string, res *authResult) *problem {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return internalError() // pyjwt DecodeError is not a JWTError: unmapped
	}
	dec := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")) }
	hb, err1 := dec(parts[0])
	pb, err2 := dec(parts[1])
	sb, err3 := dec(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return internalError()
	}
	var header, payload map[string]any
	if json.Unmarshal(hb, &header) != nil || json.Unmarshal(pb, &payload) != nil {
		return internalError()
	}
	ak, _ := payload["access_key"].(string)
	if ak == "" {
		return errAuthFailed.with("Access key not found in JWT token")
	}
	d.mu.Lock()
	kp := d.keypairs[ak]
	d.mu.Unlock()
	if kp == nil || !kp.isActive {
		return errAuthFailed.with("Access key not found in database")
	}
	if alg, _ := header["alg"].(string); alg != "HS256" {
		return internalError()
	}
	mac := hmacSum(sha256.New, []byte(kp.secretKey), []byte(parts[0]+"."+parts[1]))
	if !hmac.Equal(mac, sb) {
		return errAuthFailed.with("JWT validation failed: Signature verification failed")
	}
	now := float64(time.Now().Unix())
	exp, ok := payload["exp"].(float64)
	if !ok {
		return errAuthFailed.with("JWT validation failed: Token is missing the \"exp\" claim")
	}
	if exp <= now {
		return errAuthFailed.with("JWT validation failed: Signature has expired")
	}
	if iat, ok := payload["iat"].(float64); ok && iat > now {
		return internalError() // ImmatureSignatureError escapes the validator
	}
	if role, ok := payload["role"].(string); ok && role != "superadmin" && role != "admin" && role != "user" {
		return errAuthFailed.with("JWT validation failed: invalid role")
	}
	d.populate(res, kp)
	return nil
}

// rateWindow is the rolling 15-minute counter of ratelimit/handler.py.
type rateWindow struct {
	ts []int64
}

const rateWindowSec = 900

func (d *Double) rateCount(ak string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.rl[ak]
	if w == nil {
		w = &rateWindow{}
		d.rl[ak] = w
	}
	now := time.Now().UnixNano()
	cut := now - rateWindowSec*int64(time.Second)
	i := 0
	for i < len(w.ts) && w.ts[i] <= cut {
		i++
	}
	if i > 0 {
		w.ts = append(w.ts[:0], w.ts[i:]...)
	}
	w.ts = append(w.ts, now)
	return len(w.ts)
}
