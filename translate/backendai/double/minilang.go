package double

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The filter and order mini-languages of the legacy GraphQL list queries
// (manager/models/minilang/queryfilter.py, ordering.py): `field OP value`
// with == != > >= < <= contains in is isnot like ilike, combined with & |
// ! and parentheses (the LALR grammar shifts, so & and | are
// right-associative with equal precedence and ! covers what follows).

type mlKind int

const (
	mlStr mlKind = iota
	mlNum
	mlTime
	mlBool
	mlEnum // compared by member name; the literal may be name or value
	mlArray
)

// mlField is one filterable field: its kind and a getter.
type mlField struct {
	kind  mlKind
	enum  func(string) (string, bool) // literal → member name
	get   func(row any) any           // string, float64, time.Time, bool, nil, []string
	dtfmt bool
}

type mlExpr interface{ eval(row any) bool }

type mlAnd struct{ a, b mlExpr }
type mlOr struct{ a, b mlExpr }
type mlNot struct{ e mlExpr }
type mlCmp struct {
	f   *mlField
	op  string
	val any
}

func (e mlAnd) eval(r any) bool { return e.a.eval(r) && e.b.eval(r) }
func (e mlOr) eval(r any) bool  { return e.a.eval(r) || e.b.eval(r) }
func (e mlNot) eval(r any) bool { return !e.e.eval(r) }

type mlTok struct{ kind, val string }

var mlTokRe = regexp.MustCompile(`^\s*(?:(==|!=|>=|<=|>|<|&|\||!|\(|\)|\[|\]|,)|("(?:[^"\\]|\\.)*")|([+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*))`)

func mlLex(s string) ([]mlTok, error) {
	var out []mlTok
	for {
		s = strings.TrimLeft(s, " \t\r\n\f")
		if s == "" {
			return out, nil
		}
		m := mlTokRe.FindStringSubmatchIndex(s)
		if m == nil {
			return nil, fmt.Errorf("No terminal matches '%c' in the current parser context", s[0])
		}
		switch {
		case m[2] >= 0:
			out = append(out, mlTok{"op", s[m[2]:m[3]]})
		case m[4] >= 0:
			out = append(out, mlTok{"str", s[m[4]:m[5]]})
		case m[6] >= 0:
			out = append(out, mlTok{"num", s[m[6]:m[7]]})
		default:
			w := s[m[8]:m[9]]
			switch w {
			case "contains", "in", "isnot", "is", "like", "ilike":
				out = append(out, mlTok{"op", w})
			case "null", "true", "false":
				out = append(out, mlTok{"atom", w})
			default:
				out = append(out, mlTok{"name", w})
			}
		}
		s = s[m[1]:]
	}
}

type mlParser struct {
	toks   []mlTok
	i      int
	fields map[string]*mlField
}

// parseFilter returns the Python-side error text on failure.
func parseFilter(src string, fields map[string]*mlField) (mlExpr, string) {
	toks, err := mlLex(src)
	if err != nil {
		return nil, "Query filter parsing error: " + err.Error()
	}
	p := &mlParser{toks: toks, fields: fields}
	e, perr := p.expr()
	if perr != "" {
		return nil, perr
	}
	if p.i != len(p.toks) {
		return nil, fmt.Sprintf("Query filter parsing error: Unexpected token Token('%s', '%s')", strings.ToUpper(p.toks[p.i].kind), p.toks[p.i].val)
	}
	return e, ""
}

func (p *mlParser) peek() *mlTok {
	if p.i < len(p.toks) {
		return &p.toks[p.i]
	}
	return nil
}

func (p *mlParser) expr() (mlExpr, string) {
	var left mlExpr
	t := p.peek()
	switch {
	case t == nil:
		return nil, "Query filter parsing error: Unexpected end-of-input."
	case t.kind == "op" && t.val == "!":
		p.i++
		e, err := p.expr()
		if err != "" {
			return nil, err
		}
		return mlNot{e}, ""
	case t.kind == "op" && t.val == "(":
		p.i++
		e, err := p.expr()
		if err != "" {
			return nil, err
		}
		if t := p.peek(); t == nil || t.val != ")" {
			return nil, "Query filter parsing error: Unexpected end-of-input. Expected one of: \n\t* RPAR\n"
		}
		p.i++
		left = e
	case t.kind == "name":
		p.i++
		op := p.peek()
		if op == nil || op.kind != "op" || !isBinOp(op.val) {
			return nil, "Query filter parsing error: Unexpected end-of-input. Expected one of: \n\t* BINARY_OP\n"
		}
		p.i++
		val, err := p.value()
		if err != "" {
			return nil, err
		}
		c, cerr := p.cmp(t.val, op.val, val)
		if cerr != "" {
			return nil, cerr
		}
		left = c
	default:
		return nil, fmt.Sprintf("Query filter parsing error: Unexpected token Token('%s', '%s')", strings.ToUpper(t.kind), t.val)
	}
	if t := p.peek(); t != nil && t.kind == "op" && (t.val == "&" || t.val == "|") {
		p.i++
		right, err := p.expr()
		if err != "" {
			return nil, err
		}
		if t.val == "&" {
			return mlAnd{left, right}, ""
		}
		return mlOr{left, right}, ""
	}
	return left, ""
}

func isBinOp(s string) bool {
	switch s {
	case "==", "!=", ">", ">=", "<", "<=", "contains", "in", "isnot", "is", "like", "ilike":
		return true
	}
	return false
}

type mlNull struct{}

func (p *mlParser) value() (any, string) {
	t := p.peek()
	if t == nil {
		return nil, "Query filter parsing error: Unexpected end-of-input."
	}
	p.i++
	switch t.kind {
	case "str":
		return strings.ReplaceAll(t.val[1:len(t.val)-1], `\"`, `"`), ""
	case "num":
		if strings.Contains(t.val, ".") {
			f, _ := strconv.ParseFloat(t.val, 64)
			return f, ""
		}
		n, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			return nil, "Query filter parsing error: bad number"
		}
		return n, ""
	case "atom":
		switch t.val {
		case "null":
			return mlNull{}, ""
		case "true":
			return true, ""
		}
		return false, ""
	case "op":
		if t.val == "[" {
			var list []any
			for {
				if x := p.peek(); x != nil && x.val == "]" {
					p.i++
					return list, ""
				}
				v, err := p.value()
				if err != "" {
					return nil, err
				}
				list = append(list, v)
				if x := p.peek(); x != nil && x.val == "," {
					p.i++
				}
			}
		}
	}
	return nil, fmt.Sprintf("Query filter parsing error: Unexpected token Token('%s', '%s')", strings.ToUpper(t.kind), t.val)
}

func visitErr(msg string) string {
	return "Query filter parsing error: Error trying to process rule \"binary_expr\":\n\n" + msg
}

func (p *mlParser) cmp(name, op string, val any) (mlExpr, string) {
	f := p.fields[name]
	if f == nil {
		return nil, visitErr(fmt.Sprintf("('Unknown/unsupported field name', %s)", pyStrRepr(name)))
	}
	conv := func(v any) (any, string) {
		switch x := v.(type) {
		case string:
			if f.enum != nil {
				n, ok := f.enum(x)
				if !ok {
					return nil, visitErr(fmt.Sprintf("%s is not a valid member", pyStrRepr(x)))
				}
				return n, ""
			}
			if f.kind == mlTime {
				t, ok := parseHTTPDate(x)
				if !ok {
					if t2, ok2 := isoparse(x); ok2 {
						return t2, ""
					}
					return nil, visitErr("String does not contain a date: " + pyStrRepr(x))
				}
				return t, ""
			}
		}
		return v, ""
	}
	if l, ok := val.([]any); ok {
		out := make([]any, len(l))
		for i, e := range l {
			c, err := conv(e)
			if err != "" {
				return nil, err
			}
			out[i] = c
		}
		val = out
	} else {
		c, err := conv(val)
		if err != "" {
			return nil, err
		}
		val = c
	}
	return mlCmp{f, op, val}, ""
}

func (c mlCmp) eval(row any) bool {
	v := c.f.get(row)
	if arr, ok := v.([]string); ok && c.f.kind == mlArray {
		for _, item := range arr {
			if cmpOne(item, c.op, c.val) {
				return true
			}
		}
		return false
	}
	return cmpOne(v, c.op, c.val)
}

func cmpOne(v any, op string, want any) bool {
	if _, isNull := want.(mlNull); isNull {
		switch op {
		case "is", "==":
			return v == nil
		case "isnot", "!=":
			return v != nil
		}
		return false
	}
	if v == nil {
		return false // SQL NULL compares unknown
	}
	switch op {
	case "in":
		l, _ := want.([]any)
		for _, w := range l {
			if cmpOne(v, "==", w) {
				return true
			}
		}
		return false
	case "contains":
		s, _ := v.(string)
		w, _ := want.(string)
		return strings.Contains(s, w)
	case "like", "ilike":
		s, _ := v.(string)
		w, _ := want.(string)
		return likeMatch(s, w, op == "ilike")
	case "is":
		return cmpOne(v, "==", want)
	case "isnot":
		return !cmpOne(v, "==", want)
	}
	c, ok := compare(v, want)
	if !ok {
		return op == "!="
	}
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	}
	return false
}

func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	case float64:
		var y float64
		switch z := b.(type) {
		case float64:
			y = z
		case bool:
			if z {
				y = 1
			}
		default:
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case bool:
		y, ok := b.(bool)
		if !ok {
			return 0, false
		}
		if x == y {
			return 0, true
		}
		if !x {
			return -1, true
		}
		return 1, true
	case time.Time:
		y, ok := b.(time.Time)
		if !ok {
			return 0, false
		}
		return x.Compare(y), true
	}
	return 0, false
}

func likeMatch(s, pat string, ci bool) bool {
	var b strings.Builder
	b.WriteString("^")
	if ci {
		b.WriteString("(?is)")
	} else {
		b.WriteString("(?s)")
	}
	for _, r := range pat {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return false
	}
	return re.MatchString(s)
}

// order: "field,-field,+field"
type mlOrder struct {
	f    *mlField
	desc bool
}

func parseOrder(src string, fields map[string]*mlField) ([]mlOrder, string) {
	var out []mlOrder
	for _, part := range strings.Split(src, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		desc := false
		if part[0] == '-' || part[0] == '+' {
			desc = part[0] == '-'
			part = strings.TrimSpace(part[1:])
		}
		f := fields[part]
		if f == nil {
			return nil, fmt.Sprintf("Query ordering parsing error: Error trying to process rule \"col\":\n\n('Unknown/unsupported field name', %s)", pyStrRepr(part))
		}
		out = append(out, mlOrder{f, desc})
	}
	return out, ""
}

func sortRows(rows []any, order []mlOrder) {
	sort.SliceStable(rows, func(i, j int) bool {
		for _, o := range order {
			a, b := o.f.get(rows[i]), o.f.get(rows[j])
			if a == nil && b == nil {
				continue
			}
			// PostgreSQL: NULLs sort last ascending, first descending
			if a == nil {
				return o.desc
			}
			if b == nil {
				return !o.desc
			}
			if as, ok := a.([]string); ok {
				a = strings.Join(as, "\x00")
				b = strings.Join(b.([]string), "\x00")
			}
			c, ok := compare(a, b)
			if !ok || c == 0 {
				continue
			}
			if o.desc {
				return c > 0
			}
			return c < 0
		}
		return false
	})
}
