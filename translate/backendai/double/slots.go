package double

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Resource slots. The manager keeps slot amounts as Decimals; "count"
// slots are quantized to 0.001 (Quantum in common/types.py) and "bytes"
// slots are whole bytes (BinarySize). Here a quantity is an int64: bytes
// for bytes slots, thousandths for the others.

type slotType string

const (
	slotCount  slotType = "count"
	slotBytes  slotType = "bytes"
	slotUnique slotType = "unique"
)

// slotQ is one slot of a request, in the order the request named it.
type slotQ struct {
	name string
	q    int64
}

type slotList []slotQ

func (l slotList) get(name string) int64 {
	for _, s := range l {
		if s.name == name {
			return s.q
		}
	}
	return 0
}

func (l slotList) has(name string) bool {
	for _, s := range l {
		if s.name == name {
			return true
		}
	}
	return false
}

func (l slotList) set(name string, q int64) slotList {
	for i, s := range l {
		if s.name == name {
			l[i].q = q
			return l
		}
	}
	return append(l, slotQ{name, q})
}

// sum adds b into a copy of a (keys of a first, then new keys of b),
// as ResourceSlot.__add__ does.
func (l slotList) sum(b slotList) slotList {
	out := append(slotList(nil), l...)
	for _, s := range b {
		out = out.set(s.name, out.get(s.name)+s.q)
	}
	return out
}

func isBytesSlot(name string, types map[string]slotType) bool {
	if t, ok := types[name]; ok {
		return t == slotBytes
	}
	return strings.Contains(name, "mem") // ResourceSlot._guess_slot_type
}

// fmtQty is _stringify_number of the Decimal: quantized to 0.01
// (ROUND_HALF_EVEN), trailing zeros dropped.
func fmtQty(name string, q int64, types map[string]slotType) string {
	if isBytesSlot(name, types) {
		return strconv.FormatInt(q, 10)
	}
	return fmtMilli(q)
}

func fmtMilli(q int64) string {
	neg := q < 0
	if neg {
		q = -q
	}
	// to hundredths, half-even on the last milli digit
	h, r := q/10, q%10
	if r > 5 || (r == 5 && h%2 == 1) {
		h++
	}
	s := strconv.FormatInt(h/100, 10)
	if f := h % 100; f != 0 {
		fs := fmt.Sprintf("%02d", f)
		s += "." + strings.TrimRight(fs, "0")
	}
	if neg && s != "0" {
		s = "-" + s
	}
	return s
}

// toJSON is ResourceSlot.to_json: {slot: "<decimal string>"}.
func (l slotList) toJSON(types map[string]slotType) obj {
	o := make(obj, 0, len(l))
	for _, s := range l {
		o = append(o, kv{s.name, fmtQty(s.name, s.q, types)})
	}
	return o
}

// pyReprSlots is repr(ResourceSlot): a dict of Decimals.
func (l slotList) pyRepr(types map[string]slotType) string {
	o := make(obj, 0, len(l))
	for _, s := range l {
		o = append(o, kv{s.name, rawRepr("Decimal('" + fmtQty(s.name, s.q, types) + "')")})
	}
	return pyRepr(o)
}

// parseBinarySize is BinarySize.from_str for strings.
func parseBinarySize(expr string) (int64, error) {
	orig := expr
	low := strings.ToLower(expr)
	if low == "inf" || low == "infinite" || low == "infinity" {
		return 0, fmt.Errorf("Unconvertible value %q (infinite)", orig)
	}
	expr = strings.ReplaceAll(strings.TrimSpace(expr), "_", "")
	if strings.Contains(expr, ".") {
		if r, ok := new(big.Rat).SetString(expr); ok && r.IsInt() {
			expr = r.Num().String()
		}
	}
	if n, err := strconv.ParseInt(expr, 10, 64); err == nil {
		return n, nil
	}
	expr = strings.ToLower(expr)
	var stem string
	found := false
	for _, ending := range []string{"ibytes", "ibyte", "ib", "bytes", "byte", "b"} {
		if s, ok := strings.CutSuffix(expr, ending); ok {
			stem, found = s, true
			break
		}
	}
	var suffix byte
	var num string
	if found {
		if stem == "" {
			return 0, fmt.Errorf("Unconvertible value %q", orig)
		}
		suffix, num = stem[len(stem)-1], stem[:len(stem)-1]
	} else {
		if expr == "" {
			return 0, fmt.Errorf("Unconvertible value %q", orig)
		}
		last := expr[len(expr)-1]
		if last >= '0' && last <= '9' {
			return 0, fmt.Errorf("Fractional bytes are not allowed")
		}
		suffix, num = last, expr[:len(expr)-1]
	}
	mult := map[byte]float64{'y': math.Pow(2, 80), 'z': math.Pow(2, 70), 'e': math.Pow(2, 60), 'p': math.Pow(2, 50),
		't': math.Pow(2, 40), 'g': math.Pow(2, 30), 'm': math.Pow(2, 20), 'k': 1024, ' ': 1}
	m, ok := mult[suffix]
	if !ok {
		return 0, fmt.Errorf("Unconvertible value %q", orig)
	}
	r, ok := new(big.Rat).SetString(strings.TrimSpace(num))
	if !ok {
		return 0, fmt.Errorf("Unconvertible value %q", orig)
	}
	r.Mul(r, new(big.Rat).SetFloat64(m))
	i := new(big.Int).Quo(r.Num(), r.Denom())
	if !i.IsInt64() {
		return 0, fmt.Errorf("Unconvertible value %q", orig)
	}
	return i.Int64(), nil
}

// parseDecimal parses a Python Decimal() literal.
func parseDecimal(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "_", ""))
	if s == "" {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// toMilli quantizes to 0.001 with ROUND_HALF_EVEN.
func toMilli(r *big.Rat) int64 {
	x := new(big.Rat).Mul(r, big.NewRat(1000, 1))
	num, den := x.Num(), x.Denom()
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	// half-even
	twice := new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2))
	c := twice.Cmp(den)
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// normalizeSlot is ResourceSlot._normalize_value of one user value. It
// returns (quantity, errValue) where errValue != "" is the ValueError
// text, and negative=true when the value is negative
// (InvalidResourceSlotQuantity).
func normalizeSlot(name string, v any, bytesSlot bool) (q int64, verr string, negative bool) {
	bad := func() (int64, string, bool) {
		return 0, fmt.Sprintf("Cannot convert the slot %s to decimal: %s", pyStrRepr(name), pyRepr(reprable(v))), false
	}
	if bytesSlot {
		switch x := v.(type) {
		case json.Number:
			r, ok := parseDecimal(string(x))
			if !ok {
				return bad()
			}
			f, _ := r.Float64()
			q = int64(f)
			if r.IsInt() {
				q = r.Num().Int64()
			}
		case string:
			n, err := parseBinarySize(x)
			if err != nil {
				return bad()
			}
			q = n
		case bool:
			if x {
				q = 1
			}
		default:
			return bad()
		}
	} else {
		var r *big.Rat
		var ok bool
		switch x := v.(type) {
		case json.Number:
			r, ok = parseDecimal(string(x))
		case string:
			r, ok = parseDecimal(x)
		case bool:
			r, ok = big.NewRat(0, 1), true
			if x {
				r = big.NewRat(1, 1)
			}
		}
		if !ok {
			return bad()
		}
		q = toMilli(r)
	}
	if q < 0 {
		return q, "", true
	}
	return q, "", false
}

func reprable(v any) any {
	switch x := v.(type) {
	case json.Number:
		return rawRepr(string(x))
	case map[string]any, []any:
		return rawRepr(fmt.Sprint(x))
	}
	return v
}

// parseQuantity is resource_parse.parse_quantity for a stored quantity
// string: BinarySize first, then Decimal.
func parseQuantityString(s string, bytesSlot bool) int64 {
	if n, err := parseBinarySize(s); err == nil {
		if bytesSlot {
			return n
		}
		return n * 1000
	}
	r, ok := parseDecimal(s)
	if !ok {
		return 0
	}
	if bytesSlot {
		f, _ := r.Float64()
		return int64(f)
	}
	return toMilli(r)
}

// humanBytes is format(BinarySize(v), "s"): the largest binary suffix
// keeping the value readable, e.g. "1.06g".
func humanBytes(v int64) string {
	suffixes := []string{" ", "k", "m", "g", "t", "p", "e"}
	if v < 1024 {
		return strconv.FormatInt(v, 10) + " bytes"
	}
	f := float64(v)
	i := 0
	for f >= 1024 && i < len(suffixes)-1 {
		f /= 1024
		i++
	}
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + suffixes[i]
}
