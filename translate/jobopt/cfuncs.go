package jobopt

import (
	"math"
	"strings"
)

// C library behaviours the Slurm parsers lean on.

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// strtol is C strtol (base 10 or 0): leading white space, a sign, the
// digits; rest is what follows; ok is false when no digit was read (rest
// is then the whole input, as endptr == nptr). Overflow saturates.
func strtol(s string, base int) (v int64, rest string, ok bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 0 {
		base = 10
		if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && hexVal(s[i+2]) >= 0 {
			base = 16
			i += 2
		} else if i < len(s) && s[i] == '0' {
			base = 8
		}
	} else if base == 16 && i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && hexVal(s[i+2]) >= 0 {
		i += 2
	}
	start := i
	var u uint64
	over := false
	for i < len(s) {
		d := hexVal(s[i])
		if d < 0 || d >= base {
			break
		}
		if u > (math.MaxUint64-uint64(d))/uint64(base) {
			over = true
		} else {
			u = u*uint64(base) + uint64(d)
		}
		i++
	}
	if i == start {
		return 0, s, false
	}
	if neg {
		if over || u > 1<<63 {
			return math.MinInt64, s[i:], true
		}
		return -int64(u), s[i:], true
	}
	if over || u > math.MaxInt64 {
		return math.MaxInt64, s[i:], true
	}
	return int64(u), s[i:], true
}

// strtoul is C strtoul in base 10 (a '-' negates modulo 2^64).
func strtoul(s string) (v uint64, rest string, ok bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	over := false
	for i < len(s) && isDigit(s[i]) {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			over = true
		} else {
			u = u*10 + d
		}
		i++
	}
	if i == start {
		return 0, s, false
	}
	if over {
		return math.MaxUint64, s[i:], true
	}
	if neg {
		u = -u
	}
	return u, s[i:], true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// atoi is C atoi (strtol truncated to int).
func atoi(s string) int {
	v, _, _ := strtol(s, 10)
	return int(int32(v))
}

// int32 clamping as a C cast of a long to int.
func cInt(v int64) int { return int(int32(v)) }

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// containsFold is xstrcasestr != NULL.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// indexFold is the offset xstrcasestr finds, or -1.
func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}

// isWhitespace is xstring_is_whitespace.
func isWhitespace(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return false
		}
	}
	return true
}

// strtok splits s on any of seps, dropping empty tokens (strtok_r).
func strtok(s, seps string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(seps, r) })
}
