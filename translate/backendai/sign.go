package backendai

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// emptyBodyHash is the SHA-256 of the empty string. Since API v4.20181215
// the body is not signed and this constant takes its place.
const emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// dateLayout renders the Date header as the Python SDK does
// (datetime.isoformat() of an aware UTC datetime with microseconds).
const dateLayout = "2006-01-02T15:04:05.000000-07:00"

// SignParams are the inputs of one request signature.
type SignParams struct {
	Method      string // HTTP method, any case
	RequestURI  string // path plus "?query" exactly as sent on the wire
	Date        string // Date header value exactly as sent
	Day         string // the Date rendered as YYYYMMDD in its own timezone
	Host        string // Host header value exactly as sent (with ":port" when present)
	ContentType string // media type without parameters
	Version     string // X-BackendAI-Version value
}

// Signature computes the lower-case hex HMAC-SHA256 signature of p with
// secret, as sign_request() in the manager's auth middleware does:
//
//	k1 = HMAC(secret, Day); k2 = HMAC(k1, Host)
//	sig = HMAC(k2, METHOD \n URI \n Date \n host:Host \n content-type:CT \n x-backendai-version:V \n emptyhash)
func Signature(secret []byte, p SignParams) string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(p.Method))
	b.WriteByte('\n')
	b.WriteString(p.RequestURI)
	b.WriteByte('\n')
	b.WriteString(p.Date)
	b.WriteString("\nhost:")
	b.WriteString(p.Host)
	b.WriteString("\ncontent-type:")
	b.WriteString(strings.ToLower(mediaType(p.ContentType)))
	b.WriteString("\nx-backendai-version:")
	b.WriteString(p.Version)
	b.WriteByte('\n')
	b.WriteString(emptyBodyHash)

	k := hmacSHA256(secret, []byte(p.Day))
	k = hmacSHA256(k, []byte(p.Host))
	return hex.EncodeToString(hmacSHA256(k, []byte(b.String())))
}

// authorizationHeader is the Authorization value for accessKey and sig.
func authorizationHeader(accessKey, sig string) string {
	return "BackendAI signMethod=HMAC-SHA256, credential=" + accessKey + ":" + sig
}

// signDate returns the Date header and the YYYYMMDD day for t. Always UTC,
// so the day the server derives from the header is the same.
func signDate(t time.Time) (date, day string) {
	u := t.UTC()
	return u.Format(dateLayout), u.Format("20060102")
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// mediaType strips parameters (";charset=…") as aiohttp's
// request.content_type does on the server.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(ct)
}
