package jobopt

import (
	"strconv"
	"strings"
)

// A small hostlist: expand "n[1-3,5],m1" and compress back to the ranged
// form hostlist_ranged_string gives (same prefix and width runs joined).

type host struct {
	prefix string
	num    int // -1: no numeric suffix
	width  int
	suffix string
}

func (h host) String() string {
	if h.num < 0 {
		return h.prefix
	}
	n := strconv.Itoa(h.num)
	for len(n) < h.width {
		n = "0" + n
	}
	return h.prefix + n + h.suffix
}

// hostlistCreate splits at commas and white space outside brackets and
// expands bracket ranges.
func hostlistCreate(s string) ([]host, bool) {
	var out []host
	depth := 0
	start := 0
	flush := func(tok string) bool {
		if tok == "" {
			return true
		}
		hs, ok := expandHost(tok)
		if !ok {
			return false
		}
		out = append(out, hs...)
		return true
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0 && (c == ',' || isSpace(c)):
			if !flush(s[start:i]) {
				return nil, false
			}
			start = i + 1
		}
	}
	if depth != 0 {
		return nil, false
	}
	if !flush(s[start:]) {
		return nil, false
	}
	return out, true
}

func expandHost(tok string) ([]host, bool) {
	lb := strings.IndexByte(tok, '[')
	if lb < 0 {
		return []host{parseHost(tok)}, true
	}
	rb := strings.IndexByte(tok[lb:], ']')
	if rb < 0 {
		return nil, false
	}
	rb += lb
	prefix, body, suffix := tok[:lb], tok[lb+1:rb], tok[rb+1:]
	var out []host
	for _, r := range strings.Split(body, ",") {
		a, b, isRange := strings.Cut(r, "-")
		lo, err := strconv.Atoi(a)
		if err != nil || lo < 0 {
			return nil, false
		}
		hi := lo
		if isRange {
			if hi, err = strconv.Atoi(b); err != nil || hi < lo || hi-lo >= 64*1024 {
				return nil, false
			}
		}
		w := len(a)
		for n := lo; n <= hi; n++ {
			rest, ok := expandHost(suffix)
			if !ok {
				return nil, false
			}
			if suffix == "" {
				out = append(out, host{prefix: prefix, num: n, width: w})
				continue
			}
			for _, r := range rest {
				out = append(out, parseHost(host{prefix: prefix, num: n, width: w}.String()+r.String()))
			}
		}
	}
	return out, true
}

func parseHost(s string) host {
	i := len(s)
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	if i == len(s) {
		return host{prefix: s, num: -1}
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil || len(s)-i > 9 {
		return host{prefix: s, num: -1}
	}
	return host{prefix: s[:i], num: n, width: len(s) - i}
}

// uniq is hostlist_uniq: sorted, duplicates dropped.
func uniq(hl []host) []host {
	out := append([]host(nil), hl...)
	sortHosts(out)
	w := 0
	for i, h := range out {
		if i > 0 && h == out[w-1] {
			continue
		}
		out[w] = h
		w++
	}
	return out[:w]
}

func sortHosts(hl []host) {
	less := func(a, b host) bool {
		if a.prefix != b.prefix {
			return a.prefix < b.prefix
		}
		if a.num != b.num {
			return a.num < b.num
		}
		return a.width < b.width
	}
	for i := 1; i < len(hl); i++ {
		for j := i; j > 0 && less(hl[j], hl[j-1]); j-- {
			hl[j], hl[j-1] = hl[j-1], hl[j]
		}
	}
}

// hostlistRanged is hostlist_ranged_string: consecutive hosts of the
// same prefix and width as "p[1-3,5]".
func hostlistRanged(hl []host) string {
	var parts []string
	for i := 0; i < len(hl); {
		h := hl[i]
		if h.num < 0 {
			parts = append(parts, h.prefix)
			i++
			continue
		}
		j := i
		var ranges []string
		for j < len(hl) && hl[j].num >= 0 && hl[j].prefix == h.prefix && hl[j].width == h.width && hl[j].suffix == "" {
			k := j
			for k+1 < len(hl) && hl[k+1].num == hl[k].num+1 && hl[k+1].prefix == h.prefix && hl[k+1].width == h.width {
				k++
			}
			a := host{num: hl[j].num, width: h.width}.String()
			if k > j {
				ranges = append(ranges, a+"-"+host{num: hl[k].num, width: h.width}.String())
			} else {
				ranges = append(ranges, a)
			}
			j = k + 1
		}
		if j == i+1 && len(ranges) == 1 && !strings.Contains(ranges[0], "-") {
			parts = append(parts, h.String())
		} else {
			parts = append(parts, h.prefix+"["+strings.Join(ranges, ",")+"]")
		}
		i = j
	}
	return strings.Join(parts, ",")
}
