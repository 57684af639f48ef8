package double

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The manager is a Python program and its bytes on the wire come from two
// different JSON encoders: aiohttp's web.json_response uses the standard
// library (json.dumps: ", " and ": " separators, non-ASCII escaped as
// \uXXXX), while error bodies and SSE data use orjson (compact, UTF-8).
// Python dicts keep insertion order, so objects here are ordered lists of
// key/value pairs, written by one of the two styles.

// obj is a JSON object in insertion order.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) add(k string, v any) obj { return append(o, kv{k, v}) }

func (o obj) get(k string) (any, bool) {
	for _, e := range o {
		if e.k == k {
			return e.v, true
		}
	}
	return nil, false
}

// rawJSON is emitted verbatim.
type rawJSON string

type jsonStyle int

const (
	pyStyle     jsonStyle = iota // json.dumps defaults
	orjsonStyle                  // orjson.dumps
)

func encode(style jsonStyle, v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, style, v)
	return b.Bytes()
}

func pyDumps(v any) string { return string(encode(pyStyle, v)) }

func writeJSON(b *bytes.Buffer, style jsonStyle, v any) {
	sep, colon := ",", ":"
	if style == pyStyle {
		sep, colon = ", ", ": "
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case rawJSON:
		b.WriteString(string(x))
	case obj:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			writeString(b, style, e.k)
			b.WriteString(colon)
			writeJSON(b, style, e.v)
		}
		b.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(obj, 0, len(keys))
		for _, k := range keys {
			o = append(o, kv{k, x[k]})
		}
		writeJSON(b, style, o)
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(obj, 0, len(keys))
		for _, k := range keys {
			o = append(o, kv{k, x[k]})
		}
		writeJSON(b, style, o)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			writeJSON(b, style, e)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			writeString(b, style, e)
		}
		b.WriteByte(']')
	case []int:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(strconv.Itoa(e))
		}
		b.WriteByte(']')
	case []obj:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			writeJSON(b, style, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, style, x)
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint32:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case float64:
		b.WriteString(pyFloat(x))
	case time.Time:
		writeString(b, style, isoformat(x))
	case json.Number:
		b.WriteString(string(x))
	default:
		// Values decoded from request JSON (map[string]any etc. handled
		// above); anything else is a programming error made visible.
		writeString(b, style, fmt.Sprint(x))
	}
}

func writeString(b *bytes.Buffer, style jsonStyle, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 || (c == 0x7f && style == pyStyle && false) {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if style == pyStyle {
			if r >= 0x10000 {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// pyFloat renders a float as Python's repr does.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	if exp < -4 || exp >= 16 {
		if !strings.Contains(mant, ".") {
			return fmt.Sprintf("%se%s%02d", mant, sign(exp), abs(exp))
		}
		return fmt.Sprintf("%se%s%02d", mant, sign(exp), abs(exp))
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func sign(e int) string {
	if e < 0 {
		return "-"
	}
	return "+"
}

func abs(e int) int {
	if e < 0 {
		return -e
	}
	return e
}

// isoformat is Python's datetime.isoformat() of an aware datetime:
// microseconds only when non-zero, offset as +HH:MM.
func isoformat(t time.Time) string {
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + t.Format("-07:00")
}

// pyStrDatetime is str(datetime): a space instead of the T.
func pyStrDatetime(t time.Time) string { return strings.Replace(isoformat(t), "T", " ", 1) }

// pyRepr renders a value as Python's repr() would (for the legacy v1
// fields that are str() of a dict).
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case obj:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyStrRepr(e.k))
			b.WriteString(": ")
			writeRepr(b, e.v)
		}
		b.WriteByte('}')
	case string:
		b.WriteString(pyStrRepr(x))
	case rawRepr:
		b.WriteString(string(x))
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	default:
		b.WriteString(fmt.Sprint(x))
	}
}

type rawRepr string

// pyStrRepr is repr() of a str: single quotes unless the string holds a
// single quote and no double quote.
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
