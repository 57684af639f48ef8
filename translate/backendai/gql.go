package backendai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// GraphQLError is one entry of a GraphQL "errors" list. The manager's
// GQLExceptionMiddleware puts the BackendAIError code in
// extensions.code.
type GraphQLError struct {
	Message    string          `json:"message"`
	Path       []any           `json:"path,omitempty"`
	Extensions json.RawMessage `json:"extensions,omitempty"`
}

// Code is extensions.code ("" when absent, e.g. query validation errors).
func (g GraphQLError) Code() string {
	var x struct {
		Code string `json:"code"`
	}
	if len(g.Extensions) > 0 {
		_ = json.Unmarshal(g.Extensions, &x)
	}
	return x.Code
}

// Query runs a read-only legacy GraphQL query at POST /admin/gql (where
// errors come in the body with HTTP 200) and decodes "data" into out.
// Queries are retried like GETs; do not pass mutations here. A non-empty
// "errors" list is returned as an *APIError with Type ProbGraphQLError,
// Status 200, ErrorCode from the first error's extensions.code, Msg the
// messages and Data the raw list.
func (c *Client) Query(ctx context.Context, query string, vars map[string]any, out any) error {
	if vars == nil {
		vars = map[string]any{}
	}
	var ans struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	r := Request{
		Method:     http.MethodPost,
		Path:       "/admin/gql",
		Body:       map[string]any{"query": query, "variables": vars},
		Idempotent: true,
		Op:         "gql " + gqlField(query),
	}
	if err := c.Do(ctx, r, &ans); err != nil {
		return err
	}
	if len(ans.Errors) > 0 {
		msgs := make([]string, len(ans.Errors))
		for i, e := range ans.Errors {
			msgs[i] = e.Message
		}
		raw, _ := json.Marshal(ans.Errors)
		return &APIError{
			Status:    http.StatusOK,
			Type:      ProbGraphQLError,
			Title:     "GraphQL-generated error",
			ErrorCode: ans.Errors[0].Code(),
			Msg:       strings.Join(msgs, "; "),
			Data:      raw,
			Method:    http.MethodPost,
			Path:      "/admin/gql",
		}
	}
	if out == nil {
		return nil
	}
	if len(ans.Data) == 0 || string(ans.Data) == "null" {
		return fmt.Errorf("backendai: GraphQL answer without data: %w", ErrNotFound)
	}
	if err := json.Unmarshal(ans.Data, out); err != nil {
		return fmt.Errorf("backendai: decoding GraphQL data: %w", err)
	}
	return nil
}

// JSONString is a Graphene JSONString field: the manager serializes the
// value with json.dumps, so the GraphQL answer carries a JSON string whose
// content is JSON ("{\"cpu\": \"4\"}"). UnmarshalJSON undoes the double
// encoding; a raw object or array is accepted too, and null or "" leave
// it empty.
type JSONString json.RawMessage

// UnmarshalJSON implements json.Unmarshaler.
func (j *JSONString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*j = nil
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" || s == "null" {
			*j = nil
			return nil
		}
		if !json.Valid([]byte(s)) {
			return fmt.Errorf("backendai: JSONString holds invalid JSON: %.60q", s)
		}
		*j = JSONString(s)
		return nil
	}
	if !json.Valid(b) {
		return fmt.Errorf("backendai: invalid JSON value")
	}
	*j = append(JSONString(nil), b...)
	return nil
}

// MarshalJSON re-encodes the value as a JSON string, as the manager does.
func (j JSONString) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(string(j))
}

// Decode unmarshals the inner JSON into v (no-op when empty).
func (j JSONString) Decode(v any) error {
	if len(j) == 0 {
		return nil
	}
	return json.Unmarshal(j, v)
}

// SlotMap is a resource-slot map {slot: quantity}, as ResourceSlot.to_json
// renders it: decimal strings ("4", "0.5", "8589934592" for mem in bytes).
// It decodes from a JSONString or a plain object, and accepts numbers.
type SlotMap map[string]string

// UnmarshalJSON implements json.Unmarshaler.
func (m *SlotMap) UnmarshalJSON(b []byte) error {
	var js JSONString
	if err := js.UnmarshalJSON(b); err != nil {
		return err
	}
	if len(js) == 0 {
		*m = nil
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		return fmt.Errorf("backendai: slot map: %w", err)
	}
	out := make(SlotMap, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
			continue
		}
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return fmt.Errorf("backendai: slot %q: not a quantity: %s", k, v)
		}
		out[k] = n.String()
	}
	*m = out
	return nil
}

// Float returns slot as a float64 (0, false when absent or not a number;
// "Infinity" gives +Inf).
func (m SlotMap) Float(slot string) (float64, bool) {
	s, ok := m[slot]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// Uint returns slot as an integer (bytes for "mem").
func (m SlotMap) Uint(slot string) (uint64, bool) {
	f, ok := m.Float(slot)
	if !ok || f < 0 {
		return 0, false
	}
	return uint64(f), true
}

// gqlTime parses a GraphQL DateTime (Python isoformat; naive values are
// taken as UTC). Empty or null gives nil.
type gqlTime struct{ t *time.Time }

func (g *gqlTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		g.t = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, ok := parseISOTime(s)
	if !ok {
		if s == "" {
			return nil
		}
		return fmt.Errorf("backendai: bad timestamp %q", s)
	}
	g.t = &t
	return nil
}

var isoLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

func parseISOTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// quoteFilter renders s as a minilang string literal
// (src/ai/backend/manager/models/minilang/queryfilter.py: lark
// ESCAPED_STRING, unescaped with s[1:-1].replace('\\"', '"'), so
// backslashes are not unescaped and are refused here).
func quoteFilter(s string) (string, error) {
	if strings.ContainsAny(s, "\\\n\r") {
		return "", fmt.Errorf("%w: %q cannot be used in a filter", ErrInvalidRequest, s)
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`, nil
}

// andFilters joins minilang expressions with "&", each parenthesized.
func andFilters(parts ...string) string {
	var nonEmpty []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			nonEmpty = append(nonEmpty, "("+p+")")
		}
	}
	return strings.Join(nonEmpty, " & ")
}

// pageAll pages a legacy "<x>_list(limit, offset)" query. fetch returns
// one page's item count and the total_count.
func pageAll(ctx context.Context, pageSize, max int, fetch func(ctx context.Context, offset, limit int) (n, total int, err error)) error {
	if pageSize <= 0 {
		pageSize = 100
	}
	offset := 0
	for {
		limit := pageSize
		if max > 0 && max-offset < limit {
			limit = max - offset
		}
		if limit <= 0 {
			return nil
		}
		n, total, err := fetch(ctx, offset, limit)
		if err != nil {
			return err
		}
		offset += n
		if n == 0 || offset >= total {
			return nil
		}
	}
}

// gqlField is the first field a GraphQL document selects (the query's
// or mutation's name for the metrics): "compute_session_nodes" of
// "query($x: ...) { compute_session_nodes(...) { ... } }".
func gqlField(doc string) string {
	i := strings.IndexByte(doc, '{')
	if i < 0 {
		return "?"
	}
	rest := strings.TrimLeft(doc[i+1:], " \t\r\n")
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if end < 0 {
		end = len(rest)
	}
	if end == 0 {
		return "?"
	}
	return rest[:end]
}
