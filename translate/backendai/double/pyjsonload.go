package double

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// pyLoads is Python 3.13's json.loads of a str (the C scanner of
// Modules/_json.c behind json.decoder): the value, or the JSONDecodeError
// message ("Expecting value: line 1 column 1 (char 0)"). The first
// message of a stream execute is parsed by it, and its errors reach the
// client verbatim.
//
// Values: pyDict, []any, string, pyInt (the digits), float64, bool, nil.
func pyLoads(doc string) (any, error) {
	p := &pyScanner{s: []rune(doc)}
	if len(p.s) > 0 && p.s[0] == '\ufeff' {
		return nil, p.fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	v, end, err := p.value(p.ws(0))
	if err != nil {
		return nil, err
	}
	if end = p.ws(end); end != len(p.s) {
		return nil, p.fail("Extra data", end)
	}
	return v, nil
}

type pyDict map[string]any

// pyInt is a JSON integer as Python keeps it (arbitrary precision).
type pyInt string

type pyJSONError struct{ msg string }

func (e *pyJSONError) Error() string { return e.msg }

type pyScanner struct{ s []rune }

func (p *pyScanner) fail(msg string, pos int) error {
	line := 1
	last := -1
	for i := 0; i < pos && i < len(p.s); i++ {
		if p.s[i] == '\n' {
			line++
			last = i
		}
	}
	return &pyJSONError{fmt.Sprintf("%s: line %d column %d (char %d)", msg, line, pos-last, pos)}
}

func isPyWS(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

func (p *pyScanner) ws(i int) int {
	for i < len(p.s) && isPyWS(p.s[i]) {
		i++
	}
	return i
}

func (p *pyScanner) lit(i int, w string) bool {
	r := []rune(w)
	if i+len(r) > len(p.s) {
		return false
	}
	for j, c := range r {
		if p.s[i+j] != c {
			return false
		}
	}
	return true
}

// value is scan_once: a StopIteration (nothing matches at i) becomes
// "Expecting value" at i, as raw_decode reports it.
func (p *pyScanner) value(i int) (any, int, error) {
	if i >= len(p.s) {
		return nil, 0, p.fail("Expecting value", i)
	}
	switch p.s[i] {
	case '"':
		return p.str(i + 1)
	case '{':
		return p.object(i + 1)
	case '[':
		return p.array(i + 1)
	case 'n':
		if p.lit(i, "null") {
			return nil, i + 4, nil
		}
	case 't':
		if p.lit(i, "true") {
			return true, i + 4, nil
		}
	case 'f':
		if p.lit(i, "false") {
			return false, i + 5, nil
		}
	case 'N':
		if p.lit(i, "NaN") {
			return math.NaN(), i + 3, nil
		}
	case 'I':
		if p.lit(i, "Infinity") {
			return math.Inf(1), i + 8, nil
		}
	case '-':
		if p.lit(i, "-Infinity") {
			return math.Inf(-1), i + 9, nil
		}
	}
	return p.number(i)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func (p *pyScanner) number(start int) (any, int, error) {
	i := start
	if i < len(p.s) && p.s[i] == '-' {
		i++
	}
	switch {
	case i < len(p.s) && p.s[i] >= '1' && p.s[i] <= '9':
		for i < len(p.s) && isDigit(p.s[i]) {
			i++
		}
	case i < len(p.s) && p.s[i] == '0':
		i++
	default:
		return nil, 0, p.fail("Expecting value", start)
	}
	isFloat := false
	if i+1 < len(p.s) && p.s[i] == '.' && isDigit(p.s[i+1]) {
		i += 2
		for i < len(p.s) && isDigit(p.s[i]) {
			i++
		}
		isFloat = true
	}
	if i < len(p.s) && (p.s[i] == 'e' || p.s[i] == 'E') {
		e := i
		i++
		if i < len(p.s) && (p.s[i] == '-' || p.s[i] == '+') {
			i++
		}
		d := i
		for i < len(p.s) && isDigit(p.s[i]) {
			i++
		}
		if i > d {
			isFloat = true
		} else {
			i = e
		}
	}
	txt := string(p.s[start:i])
	if isFloat {
		f, _ := strconv.ParseFloat(txt, 64) // out of range: ±Inf, as float() gives
		return f, i, nil
	}
	return pyInt(txt), i, nil
}

func (p *pyScanner) str(i int) (any, int, error) {
	begin := i - 1
	var b strings.Builder
	for {
		j := i
		for ; j < len(p.s); j++ {
			c := p.s[j]
			if c == '"' || c == '\\' {
				break
			}
			if c <= 0x1f {
				return nil, 0, p.fail("Invalid control character at", j)
			}
		}
		if j >= len(p.s) {
			return nil, 0, p.fail("Unterminated string starting at", begin)
		}
		b.WriteString(string(p.s[i:j]))
		c := p.s[j]
		j++
		if c == '"' {
			return b.String(), j, nil
		}
		if j == len(p.s) {
			return nil, 0, p.fail("Unterminated string starting at", begin)
		}
		c = p.s[j]
		if c != 'u' {
			m := map[rune]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
			r, ok := m[c]
			if !ok {
				return nil, 0, p.fail(`Invalid \escape`, j-1)
			}
			b.WriteRune(r)
			i = j + 1
			continue
		}
		j++
		end := j + 4
		if end >= len(p.s) {
			return nil, 0, p.fail(`Invalid \uXXXX escape`, j-1)
		}
		u, ok := p.hex4(j)
		if !ok {
			return nil, 0, p.fail(`Invalid \uXXXX escape`, end-4-1)
		}
		j = end
		if u >= 0xd800 && u <= 0xdbff && end+6 < len(p.s) && p.s[j] == '\\' && p.s[j+1] == 'u' {
			u2, ok := p.hex4(j + 2)
			if !ok {
				return nil, 0, p.fail(`Invalid \uXXXX escape`, j+1)
			}
			if u2 >= 0xdc00 && u2 <= 0xdfff {
				u = 0x10000 + (u-0xd800)<<10 + (u2 - 0xdc00)
				j += 6
			}
		}
		// A lone surrogate (Python keeps it) has no UTF-8 form.
		b.WriteRune(rune(u))
		i = j
	}
}

func (p *pyScanner) hex4(j int) (int, bool) {
	v := 0
	for k := j; k < j+4; k++ {
		c := p.s[k]
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= int(c-'A') + 10
		default:
			return 0, false
		}
	}
	return v, true
}

func (p *pyScanner) object(i int) (any, int, error) {
	d := pyDict{}
	i = p.ws(i)
	if i < len(p.s) && p.s[i] == '}' {
		return d, i + 1, nil
	}
	for {
		if i >= len(p.s) || p.s[i] != '"' {
			return nil, 0, p.fail("Expecting property name enclosed in double quotes", i)
		}
		k, next, err := p.str(i + 1)
		if err != nil {
			return nil, 0, err
		}
		i = p.ws(next)
		if i >= len(p.s) || p.s[i] != ':' {
			return nil, 0, p.fail("Expecting ':' delimiter", i)
		}
		v, next, err := p.value(p.ws(i + 1))
		if err != nil {
			return nil, 0, err
		}
		d[k.(string)] = v
		i = p.ws(next)
		if i < len(p.s) && p.s[i] == '}' {
			return d, i + 1, nil
		}
		if i >= len(p.s) || p.s[i] != ',' {
			return nil, 0, p.fail("Expecting ',' delimiter", i)
		}
		comma := i
		i = p.ws(i + 1)
		if i < len(p.s) && p.s[i] == '}' {
			return nil, 0, p.fail("Illegal trailing comma before end of object", comma)
		}
	}
}

func (p *pyScanner) array(i int) (any, int, error) {
	l := []any{}
	i = p.ws(i)
	if i < len(p.s) && p.s[i] == ']' {
		return l, i + 1, nil
	}
	for {
		v, next, err := p.value(i)
		if err != nil {
			return nil, 0, err
		}
		l = append(l, v)
		i = p.ws(next)
		if i < len(p.s) && p.s[i] == ']' {
			return l, i + 1, nil
		}
		if i >= len(p.s) || p.s[i] != ',' {
			return nil, 0, p.fail("Expecting ',' delimiter", i)
		}
		comma := i
		i = p.ws(i + 1)
		if i < len(p.s) && p.s[i] == ']' {
			return nil, 0, p.fail("Illegal trailing comma before end of array", comma)
		}
	}
}

// pyTruthy is bool(v).
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case pyInt:
		return strings.Trim(strings.TrimPrefix(string(x), "-"), "0") != ""
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case pyDict:
		return len(x) > 0
	}
	return true
}

// pyHashable: lists and dicts raise TypeError in a set lookup.
func pyHashable(v any) bool {
	switch v.(type) {
	case []any, pyDict:
		return false
	}
	return true
}
