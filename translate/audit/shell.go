package audit

import (
	"strings"
)

// A wrapper script calls sbatch, srun or salloc with options: to audit
// those calls the audit reads the script as the shell would split it into
// commands and words. This is a reader of POSIX shell good for finding
// commands, not an interpreter: what only running the script would tell
// (a variable set by a command, a loop's values) is marked dynamic, and
// the audit says so instead of guessing.

// word is one shell word after quote removal.
type word struct {
	text    string
	dynamic bool // holds an expansion whose value is only known when the script runs
	// from is, for a process substitution <(cat <<EOF …), 1 + the index
	// of that cat command (whose here-document is the file's content).
	from int
}

// heredoc is a here-document given to a command's standard input.
type heredoc struct {
	body   string
	expand bool // unquoted delimiter: the shell expands $… in the body
	line   int  // the body's first line
}

// command is one simple command: its words (assignments, redirections
// and their targets left out) and where it starts.
type command struct {
	line    int
	words   []word
	assigns []assign // NAME=value words before the command word
	stdin   *heredoc
}

type assign struct {
	name string
	val  word
}

// lexer reads shell text into commands.
type lexer struct {
	src  string
	pos  int
	line int
	vars map[string]string // variables with a known value, as assigned so far
	out  []command
	cur  command
	// heredocs waiting for their bodies (read after the line that
	// introduced them ends).
	pending []pendingDoc
	inCmd   bool
}

type pendingDoc struct {
	idx    int // index in out of the command, -1 while it is being read
	delim  string
	strip  bool // <<-: leading tabs removed
	expand bool
}

// shellCommands splits src into its simple commands, in order, including
// those inside $(…) and `…`. Variables assigned from literals (NAME=value,
// export NAME=value) are followed in order of appearance, so that a
// later $NAME is known; anything else is dynamic.
func shellCommands(src string) []command {
	lx := &lexer{src: src, line: 1, vars: map[string]string{}}
	lx.run(false)
	lx.endCommand()
	return lx.out
}

func (lx *lexer) peek(off int) byte {
	if lx.pos+off < len(lx.src) {
		return lx.src[lx.pos+off]
	}
	return 0
}

// run reads commands until the end of the text, or, when nested, until
// the ")" that closes a $( … ).
func (lx *lexer) run(nested bool) {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\n':
			lx.pos++
			lx.endCommand()
			lx.line++
			lx.readHeredocs()
		case c == ' ' || c == '\t' || c == '\r':
			lx.pos++
		case c == '\\' && lx.peek(1) == '\n':
			lx.pos += 2
			lx.line++
		case c == '#':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.pos++
			}
		case c == ';' || c == '&' || c == '|' || c == '(' || c == '{' || c == '}':
			// Separators and grouping: each ends the command before.
			lx.pos++
			if (c == '&' || c == '|') && lx.peek(0) == c {
				lx.pos++
			}
			if c == ';' && lx.peek(0) == ';' {
				lx.pos++
			}
			if c == '&' && lx.peek(0) == '>' { // &> file
				lx.pos++
				lx.redirectTarget()
				continue
			}
			lx.endCommand()
		case c == ')':
			lx.pos++
			lx.endCommand()
			if nested {
				return
			}
		case c == '<' || c == '>' || (c >= '0' && c <= '9' && lx.isRedirect()):
			lx.redirect()
		default:
			w := lx.word()
			lx.addWord(w)
		}
	}
}

// isRedirect reports whether the digits at pos start a redirection (2>,
// 1>&2).
func (lx *lexer) isRedirect() bool {
	i := lx.pos
	for i < len(lx.src) && lx.src[i] >= '0' && lx.src[i] <= '9' {
		i++
	}
	return i < len(lx.src) && (lx.src[i] == '>' || lx.src[i] == '<')
}

// redirect reads a redirection operator and its target; a here-document
// is queued for its body.
func (lx *lexer) redirect() {
	for lx.pos < len(lx.src) && lx.src[lx.pos] >= '0' && lx.src[lx.pos] <= '9' {
		lx.pos++
	}
	if strings.HasPrefix(lx.src[lx.pos:], "<<<") {
		lx.pos += 3
		lx.redirectTarget()
		return
	}
	if strings.HasPrefix(lx.src[lx.pos:], "<<") {
		lx.pos += 2
		strip := false
		if lx.peek(0) == '-' {
			strip = true
			lx.pos++
		}
		for lx.peek(0) == ' ' || lx.peek(0) == '\t' {
			lx.pos++
		}
		start := lx.pos
		w := lx.word()
		raw := lx.since(start)
		expand := !strings.ContainsAny(raw, `'"\`)
		lx.inCmd = true
		lx.pending = append(lx.pending, pendingDoc{idx: -1, delim: w.text, strip: strip, expand: expand})
		return
	}
	if strings.HasPrefix(lx.src[lx.pos:], "<(") {
		// A process substitution: a file argument made by a command
		// (sbatch <(cat <<EOF …)).
		lx.pos += 2
		sub := &lexer{src: lx.src, pos: lx.pos, line: lx.line, vars: lx.vars}
		sub.run(true)
		sub.endCommand()
		base := len(lx.out)
		lx.out = append(lx.out, sub.out...)
		for _, p := range sub.pending {
			p.idx += base
			lx.pending = append(lx.pending, p)
		}
		lx.pos, lx.line = sub.pos, sub.line
		w := word{text: "/dev/fd/63", dynamic: true}
		for i := base; i < len(lx.out); i++ {
			if prog, _ := lx.out[i].call(); prog == "cat" {
				w.from = i + 1
			}
		}
		lx.addWord(w)
		return
	}
	// > >> < <> >& <& >|
	lx.pos++
	for lx.pos < len(lx.src) && strings.IndexByte("<>&|", lx.src[lx.pos]) >= 0 {
		lx.pos++
	}
	lx.redirectTarget()
}

func (lx *lexer) redirectTarget() {
	for lx.peek(0) == ' ' || lx.peek(0) == '\t' {
		lx.pos++
	}
	if lx.pos < len(lx.src) && strings.IndexByte("\n;&|()", lx.src[lx.pos]) < 0 {
		lx.word()
	}
}

// readHeredocs reads the bodies of the here-documents the line just
// ended introduced.
func (lx *lexer) readHeredocs() {
	for _, p := range lx.pending {
		var body strings.Builder
		first := lx.line
		for lx.pos < len(lx.src) {
			end := strings.IndexByte(lx.src[lx.pos:], '\n')
			var ln string
			if end < 0 {
				ln, lx.pos = lx.src[lx.pos:], len(lx.src)
			} else {
				ln, lx.pos = lx.src[lx.pos:lx.pos+end], lx.pos+end+1
			}
			lx.line++
			cmp := ln
			if p.strip {
				cmp = strings.TrimLeft(ln, "\t")
			}
			if cmp == p.delim {
				break
			}
			if p.strip {
				ln = strings.TrimLeft(ln, "\t")
			}
			body.WriteString(ln)
			body.WriteByte('\n')
		}
		if p.idx >= 0 && p.idx < len(lx.out) {
			lx.out[p.idx].stdin = &heredoc{body: body.String(), expand: p.expand, line: first}
		}
	}
	lx.pending = nil
}

// word reads one word at pos.
func (lx *lexer) word() word {
	// An unclosed quote or expansion ends the text: pos stops there.
	defer lx.clamp()
	var b strings.Builder
	w := word{}
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == ')':
			w.text = b.String()
			return w
		case c == '(':
			// name=(array) or a function definition: read balanced.
			depth := 0
			for lx.pos < len(lx.src) {
				ch := lx.src[lx.pos]
				if ch == '(' {
					depth++
				} else if ch == ')' {
					depth--
					if depth == 0 {
						lx.pos++
						break
					}
				} else if ch == '\n' {
					lx.line++
				}
				b.WriteByte(ch)
				lx.pos++
			}
			w.dynamic = true
		case c == '\\':
			if lx.pos+1 < len(lx.src) {
				if lx.src[lx.pos+1] == '\n' {
					lx.line++
				} else {
					b.WriteByte(lx.src[lx.pos+1])
				}
			}
			lx.pos += 2
		case c == '\'':
			end := strings.IndexByte(lx.src[lx.pos+1:], '\'')
			if end < 0 {
				end = len(lx.src) - lx.pos - 1
			}
			s := lx.src[lx.pos+1 : lx.pos+1+end]
			lx.line += strings.Count(s, "\n")
			b.WriteString(s)
			lx.pos += end + 2
		case c == '"':
			lx.pos++
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '"' {
				ch := lx.src[lx.pos]
				switch {
				case ch == '\\' && lx.pos+1 < len(lx.src) && strings.IndexByte("$`\"\\\n", lx.src[lx.pos+1]) >= 0:
					if lx.src[lx.pos+1] == '\n' {
						lx.line++
					} else {
						b.WriteByte(lx.src[lx.pos+1])
					}
					lx.pos += 2
				case ch == '$' || ch == '`':
					s, known := lx.expansion()
					b.WriteString(s)
					w.dynamic = w.dynamic || !known
				default:
					if ch == '\n' {
						lx.line++
					}
					b.WriteByte(ch)
					lx.pos++
				}
			}
			lx.pos++
		case c == '$' || c == '`':
			s, known := lx.expansion()
			b.WriteString(s)
			w.dynamic = w.dynamic || !known
		default:
			b.WriteByte(c)
			lx.pos++
		}
	}
	w.text = b.String()
	return w
}

// expansion reads a $… or `…` at pos: a known variable's value, or the
// text as written and false. Commands inside $(…) and `…` are read as
// commands of their own (a wrapper's jobid=$(sbatch …) is a call).
func (lx *lexer) expansion() (string, bool) {
	defer lx.clamp()
	start := lx.pos
	if lx.src[lx.pos] == '`' {
		end := strings.IndexByte(lx.src[lx.pos+1:], '`')
		if end < 0 {
			end = len(lx.src) - lx.pos - 1
		}
		inner := lx.src[lx.pos+1 : lx.pos+1+end]
		lx.nested(inner)
		lx.line += strings.Count(inner, "\n")
		lx.pos += end + 2
		return lx.since(start), false
	}
	lx.pos++ // $
	switch c := lx.peek(0); {
	case c == '(':
		if lx.peek(1) == '(' { // $(( arithmetic ))
			depth := 0
			for lx.pos < len(lx.src) {
				if lx.src[lx.pos] == '(' {
					depth++
				} else if lx.src[lx.pos] == ')' {
					depth--
					if depth == 0 {
						lx.pos++
						break
					}
				}
				lx.pos++
			}
			return lx.since(start), false
		}
		lx.pos++
		sub := &lexer{src: lx.src, pos: lx.pos, line: lx.line, vars: lx.vars}
		sub.run(true)
		sub.endCommand()
		base := len(lx.out)
		lx.out = append(lx.out, sub.out...)
		for _, p := range sub.pending {
			// A here-document opened inside $( … ): its body follows
			// the outer line.
			p.idx += base
			lx.pending = append(lx.pending, p)
		}
		lx.pos, lx.line = sub.pos, sub.line
		return lx.since(start), false
	case c == '{':
		end := strings.IndexByte(lx.src[lx.pos:], '}')
		if end < 0 {
			lx.pos = len(lx.src)
			return lx.src[start:], false
		}
		expr := lx.src[lx.pos+1 : lx.pos+end]
		lx.pos += end + 1
		name, rest := expr, ""
		if i := strings.IndexAny(expr, ":-=+?#%/^,["); i >= 0 {
			name, rest = expr[:i], expr[i:]
		}
		if v, ok := lx.vars[name]; ok && rest == "" {
			return v, true
		}
		if v, ok := lx.vars[name]; ok && (strings.HasPrefix(rest, ":-") || strings.HasPrefix(rest, "-")) && v != "" {
			return v, true
		}
		return lx.since(start), false
	case isNameStart(c):
		i := lx.pos
		for i < len(lx.src) && isNameChar(lx.src[i]) {
			i++
		}
		name := lx.src[lx.pos:i]
		lx.pos = i
		if v, ok := lx.vars[name]; ok {
			return v, true
		}
		return lx.since(start), false
	case c != 0 && strings.IndexByte("0123456789@*#?$!-", c) >= 0:
		lx.pos++
		return lx.since(start), false
	}
	return "$", true
}

func (lx *lexer) clamp() { lx.pos = min(lx.pos, len(lx.src)) }

// since is the text read from start.
func (lx *lexer) since(start int) string {
	lx.clamp()
	return lx.src[min(start, lx.pos):lx.pos]
}

// nested reads the commands of a `…` substitution.
func (lx *lexer) nested(inner string) {
	sub := &lexer{src: inner, line: lx.line, vars: lx.vars}
	sub.run(false)
	sub.endCommand()
	lx.out = append(lx.out, sub.out...)
}

func isNameStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isNameChar(c byte) bool  { return isNameStart(c) || (c >= '0' && c <= '9') }

// addWord adds w to the command being read: leading NAME=value words are
// assignments.
func (lx *lexer) addWord(w word) {
	if !lx.inCmd {
		lx.cur = command{line: lx.line}
		lx.inCmd = true
	}
	if len(lx.cur.words) == 0 {
		if i := strings.IndexByte(w.text, '='); i > 0 && isName(w.text[:i]) {
			lx.cur.assigns = append(lx.cur.assigns, assign{name: w.text[:i], val: word{text: w.text[i+1:], dynamic: w.dynamic}})
			return
		}
	}
	lx.cur.words = append(lx.cur.words, w)
}

func isName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

// endCommand ends the command being read: kept if it has words (or a
// here-document), its assignments remembered when they stand alone.
func (lx *lexer) endCommand() {
	if !lx.inCmd {
		return
	}
	lx.inCmd = false
	c := lx.cur
	lx.cur = command{}
	if c.line == 0 {
		c.line = lx.line
	}
	if len(c.words) == 0 || (len(c.words) >= 1 && (c.words[0].text == "export" || c.words[0].text == "readonly" || c.words[0].text == "local" || c.words[0].text == "declare")) {
		// NAME=value (a shell variable) or export NAME=value.
		for _, a := range c.assigns {
			lx.setVar(a.name, a.val)
		}
		for _, w := range c.words[min(1, len(c.words)):] {
			if i := strings.IndexByte(w.text, '='); i > 0 && isName(w.text[:i]) {
				lx.setVar(w.text[:i], word{text: w.text[i+1:], dynamic: w.dynamic})
			}
		}
	}
	for i := range lx.pending {
		if lx.pending[i].idx < 0 {
			lx.pending[i].idx = len(lx.out)
		}
	}
	lx.out = append(lx.out, c)
}

func (lx *lexer) setVar(name string, v word) {
	if v.dynamic {
		delete(lx.vars, name)
		return
	}
	lx.vars[name] = v.text
}

// prefixes run the command that follows them.
var prefixes = map[string]bool{"exec": true, "time": true, "nohup": true, "command": true, "builtin": true,
	"then": true, "do": true, "else": true, "elif": true, "if": true, "while": true, "until": true, "!": true, "env": true}

// call is a command's program (base name) and its arguments, past the
// words that only run it (exec, time, if, ...).
func (c *command) call() (string, []word) {
	ws := c.words
	for len(ws) > 0 && prefixes[ws[0].text] {
		ws = ws[1:]
		// env NAME=value cmd
		for len(ws) > 0 && strings.IndexByte(ws[0].text, '=') > 0 && isName(ws[0].text[:strings.IndexByte(ws[0].text, '=')]) {
			ws = ws[1:]
		}
	}
	if len(ws) == 0 {
		return "", nil
	}
	prog := ws[0].text
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	if ws[0].dynamic && !clients[prog] {
		// ${bindir}/sbatch is still sbatch; $CMD is anyone.
		prog = ""
	}
	return prog, ws[1:]
}
