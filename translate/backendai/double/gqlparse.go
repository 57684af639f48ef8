package double

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A GraphQL query parser sufficient for the queries a client sends to
// the legacy schema: operations (query, named, with variables),
// selection sets, aliases, arguments (every literal kind and variables),
// fragments and inline fragments, @include/@skip.

type gqlPos struct{ line, col int }

type gqlValue struct {
	kind   string // int float string bool null enum list object var
	raw    string
	list   []*gqlValue
	fields []gqlObjField
	pos    gqlPos
}

type gqlObjField struct {
	name string
	val  *gqlValue
}

type gqlArg struct {
	name string
	val  *gqlValue
	pos  gqlPos
}

type gqlDirective struct {
	name string
	args []gqlArg
}

type gqlSel struct {
	// field
	alias, name string
	args        []gqlArg
	sub         []*gqlSel
	hasSub      bool
	// fragment spread / inline fragment
	spread     string
	inline     bool
	typeCond   string
	directives []gqlDirective
	pos        gqlPos
}

type gqlVarDef struct {
	name string
	typ  string
	def  *gqlValue
}

type gqlOp struct {
	kind string // query mutation subscription
	name string
	vars []gqlVarDef
	sels []*gqlSel
	pos  gqlPos
}

type gqlFrag struct {
	name, typeCond string
	sels           []*gqlSel
}

type gqlDoc struct {
	ops   []*gqlOp
	frags map[string]*gqlFrag
}

type gqlErr struct {
	msg  string
	locs []gqlPos
	path []any
}

func (e *gqlErr) Error() string { return e.msg }

type gqlTok struct {
	kind string // punct name int float string eof
	val  string
	pos  gqlPos
}

type gqlLexer struct {
	src       string
	i         int
	line, col int
}

func (l *gqlLexer) errf(p gqlPos, f string, a ...any) *gqlErr {
	return &gqlErr{msg: "Syntax Error: " + fmt.Sprintf(f, a...), locs: []gqlPos{p}}
}

func (l *gqlLexer) next() (gqlTok, *gqlErr) {
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c == '\n' {
			l.i++
			l.line++
			l.col = 1
			continue
		}
		if c == '\r' {
			l.i++
			if l.i < len(l.src) && l.src[l.i] == '\n' {
				l.i++
			}
			l.line++
			l.col = 1
			continue
		}
		if c == ' ' || c == '\t' || c == ',' || c == 0xef && strings.HasPrefix(l.src[l.i:], "\ufeff") {
			if c == 0xef {
				l.i += 3
			} else {
				l.i++
			}
			l.col++
			continue
		}
		if c == '#' {
			for l.i < len(l.src) && l.src[l.i] != '\n' && l.src[l.i] != '\r' {
				l.i++
			}
			continue
		}
		break
	}
	p := gqlPos{l.line, l.col}
	if l.i >= len(l.src) {
		return gqlTok{kind: "eof", pos: p}, nil
	}
	c := l.src[l.i]
	adv := func(n int) { l.i += n; l.col += n }
	switch {
	case strings.ContainsRune("!$&()...:=@[]{}|", rune(c)):
		if c == '.' {
			if strings.HasPrefix(l.src[l.i:], "...") {
				adv(3)
				return gqlTok{kind: "punct", val: "...", pos: p}, nil
			}
			return gqlTok{}, l.errf(p, "Unexpected character: '.'.")
		}
		adv(1)
		return gqlTok{kind: "punct", val: string(c), pos: p}, nil
	case c == '_' || isAlpha(c):
		j := l.i
		for j < len(l.src) && (l.src[j] == '_' || isAlpha(l.src[j]) || (l.src[j] >= '0' && l.src[j] <= '9')) {
			j++
		}
		v := l.src[l.i:j]
		adv(j - l.i)
		return gqlTok{kind: "name", val: v, pos: p}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		j := l.i
		if l.src[j] == '-' {
			j++
		}
		for j < len(l.src) && l.src[j] >= '0' && l.src[j] <= '9' {
			j++
		}
		kind := "int"
		if j < len(l.src) && l.src[j] == '.' {
			kind = "float"
			j++
			for j < len(l.src) && l.src[j] >= '0' && l.src[j] <= '9' {
				j++
			}
		}
		if j < len(l.src) && (l.src[j] == 'e' || l.src[j] == 'E') {
			kind = "float"
			j++
			if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
				j++
			}
			for j < len(l.src) && l.src[j] >= '0' && l.src[j] <= '9' {
				j++
			}
		}
		v := l.src[l.i:j]
		adv(j - l.i)
		return gqlTok{kind: kind, val: v, pos: p}, nil
	case c == '"':
		if strings.HasPrefix(l.src[l.i:], `"""`) {
			end := strings.Index(l.src[l.i+3:], `"""`)
			if end < 0 {
				return gqlTok{}, l.errf(p, "Unterminated string.")
			}
			raw := l.src[l.i+3 : l.i+3+end]
			for _, r := range l.src[l.i : l.i+6+end] {
				if r == '\n' {
					l.line++
					l.col = 1
				} else {
					l.col++
				}
			}
			l.i += 6 + end
			return gqlTok{kind: "string", val: blockString(strings.ReplaceAll(raw, `\"""`, `"""`)), pos: p}, nil
		}
		var b strings.Builder
		j := l.i + 1
		for {
			if j >= len(l.src) || l.src[j] == '\n' || l.src[j] == '\r' {
				return gqlTok{}, l.errf(p, "Unterminated string.")
			}
			ch := l.src[j]
			if ch == '"' {
				j++
				break
			}
			if ch == '\\' && j+1 < len(l.src) {
				e := l.src[j+1]
				switch e {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				case 'b':
					b.WriteByte('\b')
				case 'f':
					b.WriteByte('\f')
				case '/', '\\', '"':
					b.WriteByte(e)
				case 'u':
					if j+6 <= len(l.src) {
						n, err := strconv.ParseUint(l.src[j+2:j+6], 16, 32)
						if err == nil {
							b.WriteRune(rune(n))
							j += 6
							continue
						}
					}
					return gqlTok{}, l.errf(p, "Invalid Unicode escape sequence.")
				default:
					return gqlTok{}, l.errf(p, "Invalid character escape sequence: '\\%c'.", e)
				}
				j += 2
				continue
			}
			r, size := utf8.DecodeRuneInString(l.src[j:])
			b.WriteRune(r)
			j += size
		}
		l.col += utf8.RuneCountInString(l.src[l.i:j])
		l.i = j
		return gqlTok{kind: "string", val: b.String(), pos: p}, nil
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.i:])
	return gqlTok{}, l.errf(p, "Unexpected character: %s.", pyStrRepr(string(r)))
}

func blockString(raw string) string {
	lines := strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n")
	common := -1
	for i, ln := range lines {
		if i == 0 {
			continue
		}
		ind := len(ln) - len(strings.TrimLeft(ln, " \t"))
		if ind < len(ln) && (common < 0 || ind < common) {
			common = ind
		}
	}
	if common > 0 {
		for i := 1; i < len(lines); i++ {
			if len(lines[i]) >= common {
				lines[i] = lines[i][common:]
			}
		}
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

type gqlParser struct {
	lx  *gqlLexer
	tok gqlTok
}

func parseGQL(src string) (*gqlDoc, *gqlErr) {
	p := &gqlParser{lx: &gqlLexer{src: src, line: 1, col: 1}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	doc := &gqlDoc{frags: map[string]*gqlFrag{}}
	if p.tok.kind == "eof" {
		return nil, &gqlErr{msg: "Syntax Error: Unexpected <EOF>.", locs: []gqlPos{p.tok.pos}}
	}
	for p.tok.kind != "eof" {
		switch {
		case p.isPunct("{"):
			op := &gqlOp{kind: "query", pos: p.tok.pos}
			sels, err := p.selectionSet()
			if err != nil {
				return nil, err
			}
			op.sels = sels
			doc.ops = append(doc.ops, op)
		case p.tok.kind == "name" && (p.tok.val == "query" || p.tok.val == "mutation" || p.tok.val == "subscription"):
			op := &gqlOp{kind: p.tok.val, pos: p.tok.pos}
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind == "name" {
				op.name = p.tok.val
				if err := p.advance(); err != nil {
					return nil, err
				}
			}
			if p.isPunct("(") {
				vars, err := p.varDefs()
				if err != nil {
					return nil, err
				}
				op.vars = vars
			}
			if _, err := p.directives(); err != nil {
				return nil, err
			}
			sels, err := p.selectionSet()
			if err != nil {
				return nil, err
			}
			op.sels = sels
			doc.ops = append(doc.ops, op)
		case p.tok.kind == "name" && p.tok.val == "fragment":
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind != "name" || p.tok.val == "on" {
				return nil, p.unexpected()
			}
			f := &gqlFrag{name: p.tok.val}
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind != "name" || p.tok.val != "on" {
				return nil, &gqlErr{msg: "Syntax Error: Expected \"on\", found " + p.describe() + ".", locs: []gqlPos{p.tok.pos}}
			}
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind != "name" {
				return nil, p.unexpected()
			}
			f.typeCond = p.tok.val
			if err := p.advance(); err != nil {
				return nil, err
			}
			if _, err := p.directives(); err != nil {
				return nil, err
			}
			sels, err := p.selectionSet()
			if err != nil {
				return nil, err
			}
			f.sels = sels
			doc.frags[f.name] = f
		default:
			return nil, p.unexpected()
		}
	}
	return doc, nil
}

func (p *gqlParser) advance() *gqlErr {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *gqlParser) isPunct(v string) bool { return p.tok.kind == "punct" && p.tok.val == v }

func (p *gqlParser) describe() string {
	switch p.tok.kind {
	case "eof":
		return "<EOF>"
	case "name":
		return "Name " + pyDQ(p.tok.val)
	case "int":
		return "Int " + pyDQ(p.tok.val)
	case "float":
		return "Float " + pyDQ(p.tok.val)
	case "string":
		return "String " + pyDQ(p.tok.val)
	}
	return pyDQ(p.tok.val)
}

func pyDQ(s string) string { return `"` + s + `"` }

func (p *gqlParser) unexpected() *gqlErr {
	return &gqlErr{msg: "Syntax Error: Unexpected " + p.describe() + ".", locs: []gqlPos{p.tok.pos}}
}

func (p *gqlParser) expect(v string) *gqlErr {
	if !p.isPunct(v) {
		return &gqlErr{msg: "Syntax Error: Expected " + pyDQ(v) + ", found " + p.describe() + ".", locs: []gqlPos{p.tok.pos}}
	}
	return p.advance()
}

func (p *gqlParser) varDefs() ([]gqlVarDef, *gqlErr) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var out []gqlVarDef
	for !p.isPunct(")") {
		if err := p.expect("$"); err != nil {
			return nil, err
		}
		if p.tok.kind != "name" {
			return nil, p.unexpected()
		}
		vd := gqlVarDef{name: p.tok.val}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		t, err := p.typeRef()
		if err != nil {
			return nil, err
		}
		vd.typ = t
		if p.isPunct("=") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			v, err := p.value(true)
			if err != nil {
				return nil, err
			}
			vd.def = v
		}
		if _, err := p.directives(); err != nil {
			return nil, err
		}
		out = append(out, vd)
	}
	return out, p.advance()
}

func (p *gqlParser) typeRef() (string, *gqlErr) {
	var t string
	if p.isPunct("[") {
		if err := p.advance(); err != nil {
			return "", err
		}
		inner, err := p.typeRef()
		if err != nil {
			return "", err
		}
		if err := p.expect("]"); err != nil {
			return "", err
		}
		t = "[" + inner + "]"
	} else {
		if p.tok.kind != "name" {
			return "", p.unexpected()
		}
		t = p.tok.val
		if err := p.advance(); err != nil {
			return "", err
		}
	}
	if p.isPunct("!") {
		if err := p.advance(); err != nil {
			return "", err
		}
		t += "!"
	}
	return t, nil
}

func (p *gqlParser) directives() ([]gqlDirective, *gqlErr) {
	var out []gqlDirective
	for p.isPunct("@") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != "name" {
			return nil, p.unexpected()
		}
		dv := gqlDirective{name: p.tok.val}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.isPunct("(") {
			args, err := p.arguments()
			if err != nil {
				return nil, err
			}
			dv.args = args
		}
		out = append(out, dv)
	}
	return out, nil
}

func (p *gqlParser) selectionSet() ([]*gqlSel, *gqlErr) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var out []*gqlSel
	for !p.isPunct("}") {
		if p.tok.kind == "eof" {
			return nil, p.unexpected()
		}
		sel, err := p.selection()
		if err != nil {
			return nil, err
		}
		out = append(out, sel)
	}
	if len(out) == 0 {
		return nil, p.unexpected()
	}
	return out, p.advance()
}

func (p *gqlParser) selection() (*gqlSel, *gqlErr) {
	pos := p.tok.pos
	if p.isPunct("...") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == "name" && p.tok.val != "on" {
			s := &gqlSel{spread: p.tok.val, pos: pos}
			if err := p.advance(); err != nil {
				return nil, err
			}
			ds, err := p.directives()
			s.directives = ds
			return s, err
		}
		s := &gqlSel{inline: true, pos: pos}
		if p.tok.kind == "name" && p.tok.val == "on" {
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind != "name" {
				return nil, p.unexpected()
			}
			s.typeCond = p.tok.val
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
		ds, err := p.directives()
		if err != nil {
			return nil, err
		}
		s.directives = ds
		sels, err := p.selectionSet()
		s.sub, s.hasSub = sels, true
		return s, err
	}
	if p.tok.kind != "name" {
		return nil, p.unexpected()
	}
	s := &gqlSel{name: p.tok.val, pos: pos}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.isPunct(":") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != "name" {
			return nil, p.unexpected()
		}
		s.alias, s.name = s.name, p.tok.val
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	if p.isPunct("(") {
		args, err := p.arguments()
		if err != nil {
			return nil, err
		}
		s.args = args
	}
	ds, err := p.directives()
	if err != nil {
		return nil, err
	}
	s.directives = ds
	if p.isPunct("{") {
		sels, err := p.selectionSet()
		if err != nil {
			return nil, err
		}
		s.sub, s.hasSub = sels, true
	}
	return s, nil
}

func (p *gqlParser) arguments() ([]gqlArg, *gqlErr) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var out []gqlArg
	for !p.isPunct(")") {
		if p.tok.kind != "name" {
			return nil, p.unexpected()
		}
		a := gqlArg{name: p.tok.val, pos: p.tok.pos}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.value(false)
		if err != nil {
			return nil, err
		}
		a.val = v
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, p.unexpected()
	}
	return out, p.advance()
}

func (p *gqlParser) value(constOnly bool) (*gqlValue, *gqlErr) {
	t := p.tok
	v := &gqlValue{pos: t.pos}
	switch {
	case p.isPunct("$") && !constOnly:
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != "name" {
			return nil, p.unexpected()
		}
		v.kind, v.raw = "var", p.tok.val
	case p.isPunct("["):
		if err := p.advance(); err != nil {
			return nil, err
		}
		v.kind = "list"
		for !p.isPunct("]") {
			e, err := p.value(constOnly)
			if err != nil {
				return nil, err
			}
			v.list = append(v.list, e)
		}
	case p.isPunct("{"):
		if err := p.advance(); err != nil {
			return nil, err
		}
		v.kind = "object"
		for !p.isPunct("}") {
			if p.tok.kind != "name" {
				return nil, p.unexpected()
			}
			name := p.tok.val
			if err := p.advance(); err != nil {
				return nil, err
			}
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			e, err := p.value(constOnly)
			if err != nil {
				return nil, err
			}
			v.fields = append(v.fields, gqlObjField{name, e})
			continue
		}
	case t.kind == "int" || t.kind == "float" || t.kind == "string":
		v.kind, v.raw = t.kind, t.val
	case t.kind == "name":
		switch t.val {
		case "true", "false":
			v.kind, v.raw = "bool", t.val
		case "null":
			v.kind = "null"
		default:
			v.kind, v.raw = "enum", t.val
		}
	default:
		return nil, p.unexpected()
	}
	return v, p.advance()
}
