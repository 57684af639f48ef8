package jobopt

import (
	"fmt"
	"time"
)

// parseTime is parse_time(str, 0): absolute and relative times for
// --begin and --deadline, relative to p.now in its time zone. It returns
// 0, false (after the client's message) when the string is invalid.
func (p *parser) parseTime(s string) (int64, bool) {
	if hasPrefixFold(s, "uts") {
		v, rest, ok := strtol(s[3:], 10)
		if !ok {
			rest = s[3:]
		}
		if v < 1000000 || v == 1<<63-1 || rest != "" {
			p.raw(fmt.Sprintf("Invalid time specification (pos=%d): %s", 0, s))
			return 0, false
		}
		return v, true
	}
	now := p.now
	loc := now.Location()
	hour, minute, second := -1, -1, 0
	month, mday, year := -1, -1, -1
	pos := 0
	bad := func() (int64, bool) {
		p.raw(fmt.Sprintf("Invalid time specification (pos=%d): %s", pos, s))
		return 0, false
	}
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	for pos = 0; pos < len(s) && s[pos] != '\n'; pos++ {
		c := s[pos]
		if c == ' ' || c == '\t' || c == '-' || c == 'T' {
			continue
		}
		rest := s[pos:]
		switch {
		case hasPrefixFold(rest, "today"):
			month, mday, year = int(now.Month())-1, now.Day(), now.Year()-1900
			pos += 4
			continue
		case hasPrefixFold(rest, "tomorrow"):
			t := now.Add(24 * time.Hour)
			month, mday, year = int(t.Month())-1, t.Day(), t.Year()-1900
			pos += 7
			continue
		case hasPrefixFold(rest, "midnight"):
			hour, minute, second = 0, 0, 0
			pos += 7
			continue
		case hasPrefixFold(rest, "noon"):
			hour, minute, second = 12, 0, 0
			pos += 3
			continue
		case hasPrefixFold(rest, "elevenses"):
			hour, minute, second = 11, 0, 0
			pos += 8
			continue
		case hasPrefixFold(rest, "fika"):
			hour, minute, second = 15, 0, 0
			pos += 3
			continue
		case hasPrefixFold(rest, "teatime"):
			hour, minute, second = 16, 0, 0
			pos += 6
			continue
		case hasPrefixFold(rest, "now"):
			var delta int64
			for i := pos + 3; ; i++ {
				ch := at(i)
				if ch == '+' || ch == '-' {
					pos += i
					d, ok := getDelta(s, &pos)
					if !ok {
						return bad()
					}
					delta = d
					if ch == '-' {
						delta = -d
					}
					break
				}
				if ch == ' ' || ch == '\t' {
					continue
				}
				if ch == 0 || ch == '\n' {
					pos += i - 1
					break
				}
				pos += i
				return bad()
			}
			t := now.Add(time.Duration(delta) * time.Second)
			month, mday, year = int(t.Month())-1, t.Day(), t.Year()-1900
			hour, minute, second = t.Hour(), t.Minute(), t.Second()
			continue
		}
		if !isDigit(c) {
			return bad()
		}
		if at(pos+1) == ':' || at(pos+2) == ':' {
			if !getClock(s, &pos, &hour, &minute, &second) {
				return bad()
			}
			continue
		}
		if !getDate(s, &pos, &month, &mday, &year) {
			return bad()
		}
	}
	if hour == -1 && month == -1 {
		return 0, true
	} else if hour == -1 && month != -1 {
		hour, minute = 0, 0
	} else if hour != -1 && month == -1 {
		if hour > now.Hour() || hour == now.Hour() && minute > now.Minute() {
			month, mday, year = int(now.Month())-1, now.Day(), now.Year()-1900
		} else {
			t := now.Add(24 * time.Hour)
			month, mday, year = int(t.Month())-1, t.Day(), t.Year()-1900
		}
	}
	if year == -1 {
		nm, nd := int(now.Month())-1, now.Day()
		if month > nm || month == nm && mday > nd || month == nm && mday == nd && hour > now.Hour() ||
			month == nm && mday == nd && hour == now.Hour() && minute > now.Minute() {
			year = now.Year() - 1900
		} else {
			year = now.Year() - 1900 + 1
		}
	}
	t := time.Date(year+1900, time.Month(month+1), mday, hour, minute, second, 0, loc)
	return t.Unix(), true
}

var timeUnits = []struct {
	name string
	mult int64
}{
	{"seconds", 1}, {"second", 1}, {"minutes", 60}, {"minute", 60}, {"hours", 3600}, {"hour", 3600},
	{"days", 86400}, {"day", 86400}, {"weeks", 604800}, {"week", 604800},
}

// getDelta is _get_delta: digits then an optional unit after '+'/'-'.
func getDelta(s string, pos *int) (int64, bool) {
	var cnt int64
	digits := 0
	off := *pos + 1
	for ; off < len(s) && s[off] != '\n'; off++ {
		if isSpace(s[off]) {
			continue
		}
		unit := false
		for _, u := range timeUnits {
			if hasPrefixFold(s[off:], u.name) {
				off += len(u.name)
				cnt *= u.mult
				unit = true
				break
			}
		}
		if unit {
			break
		}
		if isDigit(s[off]) {
			cnt = cnt*10 + int64(s[off]-'0')
			digits++
			continue
		}
		*pos = off - 1
		return 0, false
	}
	if digits == 0 {
		return 0, false
	}
	*pos = off - 1
	return cnt, true
}

// getClock is _get_time: HH:MM[:SS] [AM|PM].
func getClock(s string, pos *int, hour, minute, second *int) bool {
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	off := *pos
	fail := func() bool { *pos = off; return false }
	if !isDigit(at(off)) {
		return fail()
	}
	hr := int(at(off) - '0')
	off++
	if at(off) != ':' {
		if !isDigit(at(off)) {
			return fail()
		}
		hr = hr*10 + int(at(off)-'0')
		off++
	}
	if hr > 23 {
		off -= 2
		return fail()
	}
	if at(off) != ':' {
		return fail()
	}
	off++
	if !isDigit(at(off)) || !isDigit(at(off+1)) {
		if isDigit(at(off)) {
			off++
		}
		return fail()
	}
	mn := int(at(off)-'0')*10 + int(at(off+1)-'0')
	off += 2
	if mn > 59 {
		off -= 2
		return fail()
	}
	sec := 0
	if at(off) == ':' {
		off++
		if !isDigit(at(off)) || !isDigit(at(off+1)) {
			if isDigit(at(off)) {
				off++
			}
			return fail()
		}
		sec = int(at(off)-'0')*10 + int(at(off+1)-'0')
		off += 2
		if sec > 59 {
			off -= 2
			return fail()
		}
	}
	for off < len(s) && isSpace(s[off]) {
		off++
	}
	if hasPrefixFold(s[off:], "pm") {
		hr += 12
		if hr > 23 {
			if hr != 24 {
				return fail()
			}
			hr = 12
		}
		off += 2
	} else if hasPrefixFold(s[off:], "am") {
		if hr > 11 {
			if hr != 12 {
				return fail()
			}
			hr = 0
		}
		off += 2
	}
	*pos = off - 1
	*hour, *minute, *second = hr, mn, sec
	return true
}

// getDate is _get_date: YYYY-MM-DD, or MMDD[YY], MM/DD[/YY], MM.DD[.YY].
func getDate(s string, pos *int, month, mday, year *int) bool {
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	off := *pos
	fail := func() bool { *pos = off; return false }
	if len(s) >= off+7 && at(off+4) == '-' && at(off+7) == '-' {
		yr := 0
		for k := 0; k < 4; k++ {
			if !isDigit(at(off)) {
				return fail()
			}
			yr = yr*10 + int(at(off)-'0')
			off++
		}
		off++
		mon := int(at(off)) - '0'
		off++
		if isDigit(at(off)) {
			mon = mon*10 + int(at(off)-'0')
			off++
		}
		if mon < 1 || mon > 12 {
			off -= 2
			return fail()
		}
		off++
		if !isDigit(at(off)) {
			return fail()
		}
		day := int(at(off) - '0')
		off++
		if isDigit(at(off)) {
			day = day*10 + int(at(off)-'0')
			off++
		}
		if day < 1 || day > 31 {
			off -= 2
			return fail()
		}
		*pos = off - 1
		*month, *mday, *year = mon-1, day, yr-1900
		return true
	}
	mon := int(at(off)) - '0'
	off++
	if isDigit(at(off)) {
		mon = mon*10 + int(at(off)-'0')
		off++
	}
	if mon < 1 || mon > 12 {
		off -= 2
		return fail()
	}
	if at(off) == '.' || at(off) == '/' {
		off++
	}
	if !isDigit(at(off)) {
		return fail()
	}
	day := int(at(off) - '0')
	off++
	if isDigit(at(off)) {
		day = day*10 + int(at(off)-'0')
		off++
	}
	if day < 1 || day > 31 {
		off -= 2
		return fail()
	}
	if at(off) == '.' || at(off) == '/' {
		off++
	}
	yr := 0
	if isDigit(at(off)) {
		yr = int(at(off) - '0')
		off++
		if !isDigit(at(off)) {
			return fail()
		}
		yr = yr*10 + int(at(off)-'0')
		off++
	}
	*pos = off - 1
	*month, *mday = mon-1, day
	if yr != 0 {
		*year = yr + 100
	}
	return true
}
