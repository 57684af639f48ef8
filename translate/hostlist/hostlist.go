// Package hostlist expands and compresses Slurm host lists such as
// "n[1-12,15],gpu[01-04]" (zero padding kept, as Slurm does).
package hostlist

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxExpand bounds the hosts one expression may name, so a hostile or
// mistyped range cannot exhaust memory.
const MaxExpand = 1 << 20

// MaxExpandBytes bounds the total length of the names one expression
// expands to: a long zero-padded range ("n[000…0001-1000]") names few
// hosts but could still ask for gigabytes.
const MaxExpandBytes = 64 << 20

// ErrTooLarge is wrapped by the errors for expressions past the bounds.
var ErrTooLarge = errors.New("hostlist: too large")

// Expand turns a host list expression into names, in the order written
// and keeping duplicates (as Slurm's hostlist_create does). Commas and
// whitespace outside brackets separate expressions (Slurm's separators
// are ", \t\n"); commas inside brackets separate ranges. Several bracket
// groups multiply out, leftmost slowest: r[1-2]n[1-2] is r1n1, r1n2,
// r2n1, r2n2. A range's low end sets the zero padding (n[08-10]).
func Expand(expr string) ([]string, error) {
	return ExpandLimit(expr, MaxExpand, MaxExpandBytes)
}

// ExpandLimit is Expand with the caller's bounds: it fails, before
// building any name, if expr names more than maxNames hosts or their
// names could add up to more than maxBytes bytes.
func ExpandLimit(expr string, maxNames, maxBytes int) ([]string, error) {
	var out []string
	used := 0
	for _, part := range splitTop(expr) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var err error
		if out, used, err = expandOne(out, part, maxNames-len(out), maxBytes-used, used); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isSep(c byte) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' }

func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '[':
			depth++
		case s[i] == ']':
			depth--
		case depth == 0 && isSep(s[i]):
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// span is one range inside brackets: lo-hi, printed at least width
// digits wide.
type span struct {
	lo, hi uint64
	width  int
}

func digits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// expandOne appends the names of one expression (no top-level
// separators) to out. It parses the whole expression and checks the
// bounds before building anything; used is the byte count so far.
func expandOne(out []string, s string, maxNames, maxBytes, used int) ([]string, int, error) {
	var lits []string
	var groups [][]span
	maxLen := 0 // longest possible name
	rest := s
	for {
		open := strings.IndexByte(rest, '[')
		lit := rest
		if open >= 0 {
			lit = rest[:open]
		}
		if strings.IndexByte(lit, ']') >= 0 {
			return nil, 0, fmt.Errorf("hostlist: unbalanced bracket in %q", s)
		}
		lits = append(lits, lit)
		maxLen += len(lit)
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], ']')
		if end < 0 {
			return nil, 0, fmt.Errorf("hostlist: unbalanced bracket in %q", s)
		}
		end += open
		var g []span
		widest := 0
		for _, r := range strings.Split(rest[open+1:end], ",") {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.ParseUint(lo, 10, 64)
			b, err2 := strconv.ParseUint(hi, 10, 64)
			if err1 != nil || err2 != nil || b < a {
				return nil, 0, fmt.Errorf("hostlist: bad range %q in %q", r, s)
			}
			sp := span{lo: a, hi: b}
			if len(lo) > 1 && lo[0] == '0' {
				sp.width = len(lo)
			}
			widest = max(widest, sp.width, digits(b))
			g = append(g, sp)
		}
		groups = append(groups, g)
		maxLen += widest
		rest = rest[end+1:]
	}

	// Count the names without overflowing: every partial count stays
	// at or below maxNames.
	limit := uint64(max(maxNames, 0))
	total := uint64(1)
	for _, g := range groups {
		n := uint64(0)
		for _, sp := range g {
			if sp.hi-sp.lo >= limit-n { // n + (hi-lo+1) > limit
				return nil, 0, fmt.Errorf("%w: %q names more than %d hosts", ErrTooLarge, s, limit)
			}
			n += sp.hi - sp.lo + 1
		}
		if total > limit/n {
			return nil, 0, fmt.Errorf("%w: %q names more than %d hosts", ErrTooLarge, s, limit)
		}
		total *= n
	}
	if total > limit {
		return nil, 0, fmt.Errorf("%w: %q names more than %d hosts", ErrTooLarge, s, limit)
	}
	if maxLen > 0 && total > uint64(max(maxBytes, 0))/uint64(maxLen) {
		return nil, 0, fmt.Errorf("%w: %q could expand to more than %d bytes", ErrTooLarge, s, max(maxBytes, 0))
	}

	// Walk the groups like an odometer, last group fastest.
	cur := make([]int, len(groups))    // range index per group
	val := make([]uint64, len(groups)) // value per group
	for i, g := range groups {
		val[i] = g[0].lo
	}
	buf := make([]byte, 0, maxLen)
	for {
		buf = buf[:0]
		for i, g := range groups {
			buf = append(buf, lits[i]...)
			buf = appendPadded(buf, val[i], g[cur[i]].width)
		}
		buf = append(buf, lits[len(groups)]...)
		out = append(out, string(buf))
		used += len(buf)
		i := len(groups) - 1
		for ; i >= 0; i-- {
			g := groups[i]
			if val[i] < g[cur[i]].hi {
				val[i]++
				break
			}
			if cur[i]+1 < len(g) {
				cur[i]++
				val[i] = g[cur[i]].lo
				break
			}
			cur[i], val[i] = 0, g[0].lo
		}
		if i < 0 {
			return out, used, nil
		}
	}
}

func appendPadded(b []byte, v uint64, width int) []byte {
	var d [20]byte
	num := strconv.AppendUint(d[:0], v, 10)
	for i := len(num); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, num...)
}

// Compress renders names as a Slurm host list. What it promises:
// Expand(Compress(names)) names the same set of hosts, each once, and
// Compress of that expansion gives the same string back. Duplicates are
// dropped. Names without a numeric suffix come first, in input order;
// then names sharing a prefix and zero padding form one group, groups
// in order of first appearance, each group's numbers sorted into ranges.
//
// Slurm's hostlist_ranged_string keeps list order and duplicates
// (n3,n1,n1 prints as n[3,1,1]); its callers either sort and dedup first
// (hostlist_uniq) or build the list from a node bitmap, which has
// neither duplicates nor disorder within a prefix. Node lists here are
// sets, so Compress gives the sorted, deduplicated form.
//
// Names Expand cannot give back as one name (containing a bracket, a
// comma or whitespace) are written as they are, ungrouped; empty names
// are dropped.
func Compress(names []string) string {
	type group struct {
		prefix string
		width  int // zero padding; 0 means none
		nums   []uint64
	}
	var groups []*group
	idx := map[string]*group{}
	seen := make(map[string]bool, len(names))
	var plain []string
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if strings.ContainsAny(n, "[], \t\n") {
			plain = append(plain, n)
			continue
		}
		i := len(n)
		for i > 0 && n[i-1] >= '0' && n[i-1] <= '9' {
			i--
		}
		if i == len(n) {
			plain = append(plain, n)
			continue
		}
		digits := n[i:]
		width := 0
		if len(digits) > 1 && digits[0] == '0' {
			width = len(digits)
		}
		v, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			plain = append(plain, n)
			continue
		}
		k := n[:i] + "\x00" + strconv.Itoa(width)
		if width == 0 {
			// An unpadded number as long as a padded group's width
			// joins it (gpu08, gpu10 -> gpu[08-10]), as Slurm does.
			if pg := idx[n[:i]+"\x00"+strconv.Itoa(len(digits))]; pg != nil {
				k = n[:i] + "\x00" + strconv.Itoa(len(digits))
			}
		}
		g := idx[k]
		if g == nil {
			g = &group{prefix: n[:i], width: width}
			idx[k] = g
			groups = append(groups, g)
		}
		g.nums = append(g.nums, v)
	}
	var b strings.Builder
	first := true
	sep := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
	}
	for _, p := range plain {
		sep()
		b.WriteString(p)
	}
	pad := func(v uint64, w int) {
		var d [20]byte
		b.Write(appendPadded(d[:0], v, w))
	}
	for _, g := range groups {
		sort.Slice(g.nums, func(i, j int) bool { return g.nums[i] < g.nums[j] })
		sep()
		b.WriteString(g.prefix)
		if len(g.nums) == 1 {
			pad(g.nums[0], g.width)
			continue
		}
		b.WriteByte('[')
		for i := 0; i < len(g.nums); {
			j := i
			for j+1 < len(g.nums) && g.nums[j+1] == g.nums[j]+1 {
				j++
			}
			if i > 0 {
				b.WriteByte(',')
			}
			pad(g.nums[i], g.width)
			if j > i {
				b.WriteByte('-')
				pad(g.nums[j], g.width)
			}
			i = j + 1
		}
		b.WriteByte(']')
	}
	return b.String()
}
