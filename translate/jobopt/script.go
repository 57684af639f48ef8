package jobopt

import (
	"bytes"
	"strconv"
	"strings"
)

// Directive is one #SBATCH (or #SLURM) line sbatch reads.
type Directive struct {
	Line  int      // 1-based line number in the script
	Magic string   // "#SBATCH" or "#SLURM" (which sbatch warns about)
	Text  string   // the line after the magic word
	Args  []string // the arguments sbatch splits it into
	Comp  int      // het job component ("#SBATCH hetjob" starts the next)
	// Packjob: the line uses the deprecated "packjob" separator.
	Packjob bool
	// Err is the client's complaint about the line (unmatched quote,
	// a leading ':'); sbatch stops there.
	Err *ClientError
}

// Scan is what sbatch reads of a script's directives.
type Scan struct {
	Directives []Directive
	// StopLine is the first line sbatch takes as a command, where it
	// stops reading directives (0: it read to the end).
	StopLine int
}

// ScanScript reads script as sbatch of the release reads it for
// directives: from the top, "#SBATCH" (or "#SLURM") at the very start of
// a line; blank lines and other comments (including "#!" and indented
// "#SBATCH") are skipped; the first other line ends the scan. file names
// the script in the client's messages ("job.sh", or "stdin").
func ScanScript(script []byte, version uint16, file string) Scan {
	var sc Scan
	r := relOf(version)
	comp := 0
	for lineno, line := range scriptLines(script) {
		lineno++
		var rest, magic string
		switch {
		case strings.HasPrefix(line, "#SBATCH"):
			magic, rest = "#SBATCH", line[7:]
		case strings.HasPrefix(line, "#SLURM"):
			magic, rest = "#SLURM", line[6:]
		default:
			if isCommand(line) {
				sc.StopLine = lineno
				return sc
			}
			continue
		}
		rest = strings.TrimLeft(rest, " \t\n\v\f\r")
		if isSepWord(rest, "packjob") || isSepWord(rest, "hetjob") {
			comp++
		}
		d := Directive{Line: lineno, Magic: magic, Text: rest, Comp: comp}
		d.Args, d.Packjob, d.Err = splitDirective(rest, file, lineno, r, magic)
		sc.Directives = append(sc.Directives, d)
		if d.Err != nil {
			return sc
		}
	}
	return sc
}

// scriptLines splits as next_line does: at '\n', each line a C string
// (cut at a NUL), no empty line after a final newline.
func scriptLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		if j := bytes.IndexByte(l, 0); j >= 0 {
			l = l[:j]
		}
		out = append(out, string(l))
	}
	return out
}

// isCommand: the first non-blank character is not '#'.
func isCommand(line string) bool {
	for i := 0; i < len(line); i++ {
		if isSpace(line[i]) {
			continue
		}
		return line[i] != '#'
	}
	return false
}

func isSepWord(s, w string) bool {
	return hasPrefixFold(s, w) && (len(s) == len(w) || isSpace(s[len(w)]))
}

// splitDirective is the get_argument loop over one line: words split at
// white space, '…' and "…" group, a backslash escapes the next character
// (24.11+: "\ " keeps the space; 22.05 ends the word there), an unquoted
// '#' starts a comment. "hetjob"/"packjob" words read as blanks.
func splitDirective(line, file string, lineno int, r rel, magic string) (args []string, warn bool, cerr *ClientError) {
	ptr := line
	for {
		start := ptr
		ptr = strings.TrimLeft(ptr, " \t\n\v\f\r")
		if isSepWord(ptr, "packjob") || isSepWord(ptr, "hetjob") {
			// The word is blanked in place and the scan stops at the
			// blank: nothing after it on the line is read.
			if isSepWord(ptr, "packjob") {
				warn = true
			}
			return args, warn, nil
		}
		if strings.HasPrefix(ptr, ":") {
			return args, warn, &ClientError{Exit: 1, Lines: []string{"sbatch: fatal: " + file + ": line " + itoa(lineno) + ": Unexpected `:` in [" + blankSep(start) + "]"}}
		}
		if ptr == "" {
			return args, warn, nil
		}
		var arg []byte
		got := false
		quoted, escape := false, false
		var q byte
		i := 0
		for i < len(ptr) && (quoted || !isSpace(ptr[i])) && ptr[i] != '\n' {
			c := ptr[i]
			if escape {
				escape = false
			} else if c == '\\' {
				i++
				if r >= r24 && i < len(ptr) && ptr[i] == ' ' {
					arg = append(arg, ' ')
					got = true
					i++
				} else {
					escape = true
				}
				continue
			} else if quoted {
				if c == q {
					quoted = false
					i++
					continue
				}
			} else if c == '"' || c == '\'' {
				quoted, q = true, c
				i++
				continue
			} else if c == '#' {
				break
			}
			arg = append(arg, c)
			got = true
			i++
		}
		if quoted {
			return args, warn, &ClientError{Exit: 1, Lines: []string{"sbatch: fatal: " + file + ": line " + itoa(lineno) + ": Unmatched `" + string(q) + "` in [" + blankSep(start) + "]"}}
		}
		ptr = ptr[i:]
		if !got {
			// get_argument returns NULL when it copied nothing.
			return args, warn, nil
		}
		args = append(args, string(arg))
	}
}

// blankSep shows the line as the client's copy reads after it blanked a
// leading hetjob/packjob word.
func blankSep(s string) string {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	lead := s[:len(s)-len(t)]
	if isSepWord(t, "packjob") {
		return lead + "       " + t[7:]
	}
	if isSepWord(t, "hetjob") {
		return lead + "      " + t[6:]
	}
	return s
}

func itoa(i int) string { return strconv.Itoa(i) }
