// Package hostlist expands and compresses Slurm host lists such as
// "n[1-12,15],gpu[01-04]" (zero padding kept, as Slurm does).
package hostlist

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxExpand bounds the hosts one expression may name, so a hostile or
// mistyped range cannot exhaust memory.
const MaxExpand = 1 << 20

// Expand turns a host list expression into names. Commas inside brackets
// separate ranges; commas outside separate expressions.
func Expand(expr string) ([]string, error) {
	var out []string
	for _, part := range splitTop(expr) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		names, err := expandOne(part, MaxExpand-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func expandOne(s string, budget int) ([]string, error) {
	open := strings.IndexByte(s, '[')
	if open < 0 {
		if strings.ContainsAny(s, "]") {
			return nil, fmt.Errorf("hostlist: unbalanced bracket in %q", s)
		}
		return []string{s}, nil
	}
	close := strings.IndexByte(s[open:], ']')
	if close < 0 {
		return nil, fmt.Errorf("hostlist: unbalanced bracket in %q", s)
	}
	close += open
	prefix, body, rest := s[:open], s[open+1:close], s[close+1:]
	tails, err := expandOne(rest, budget)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range strings.Split(body, ",") {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.ParseUint(lo, 10, 32)
		b, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil || b < a {
			return nil, fmt.Errorf("hostlist: bad range %q in %q", r, s)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		if (b-a+1)*uint64(len(tails)) > uint64(budget) {
			return nil, fmt.Errorf("hostlist: %q names too many hosts", s)
		}
		for n := a; n <= b; n++ {
			num := strconv.FormatUint(n, 10)
			for len(num) < width {
				num = "0" + num
			}
			for _, t := range tails {
				out = append(out, prefix+num+t)
			}
		}
	}
	return out, nil
}

// Compress renders names as a Slurm host list: names sharing a prefix and
// numeric suffix width are grouped into sorted ranges. Order of first
// appearance of each prefix is kept, as in Slurm's output.
func Compress(names []string) string {
	type group struct {
		prefix string
		width  int
		nums   []uint64
	}
	var groups []*group
	idx := map[string]*group{}
	var b strings.Builder
	var plain []string
	for _, n := range names {
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
	pad := func(v uint64, w int) string {
		s := strconv.FormatUint(v, 10)
		for len(s) < w {
			s = "0" + s
		}
		return s
	}
	for _, g := range groups {
		sort.Slice(g.nums, func(i, j int) bool { return g.nums[i] < g.nums[j] })
		sep()
		b.WriteString(g.prefix)
		if len(g.nums) == 1 {
			b.WriteString(pad(g.nums[0], g.width))
			continue
		}
		b.WriteByte('[')
		for i := 0; i < len(g.nums); {
			j := i
			for j+1 < len(g.nums) && g.nums[j+1] <= g.nums[j]+1 {
				j++
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(pad(g.nums[i], g.width))
			if j > i {
				b.WriteByte('-')
				b.WriteString(pad(g.nums[j], g.width))
			}
			i = j + 1
		}
		b.WriteByte(']')
	}
	return b.String()
}
