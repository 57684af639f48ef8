package double

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// Pydantic v2 lax-mode coercions for request fields.

type fieldErrs []verr

func (fe *fieldErrs) add(loc, typ, msg string, input any) {
	*fe = append(*fe, verr{loc: loc, typ: typ, msg: msg, input: input})
}

// pick returns the value of the first alias present (AliasChoices
// order; validate_by_name makes the field name one of them).
func alias(m map[string]any, keys ...string) (any, string, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, k, true
		}
	}
	return nil, "", false
}

func asStr(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// asInt is pydantic's lax int: ints, integral floats, numeric strings,
// bools.
func asInt(v any) (int64, string) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, ""
		}
		r, ok := new(big.Rat).SetString(string(x))
		if ok && r.IsInt() && r.Num().IsInt64() {
			return r.Num().Int64(), ""
		}
		if ok {
			return 0, "int_from_float"
		}
		return 0, "int_type"
	case bool:
		if x {
			return 1, ""
		}
		return 0, ""
	case string:
		s := strings.TrimSpace(x)
		if i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64); err == nil {
			return i, ""
		}
		return 0, "int_parsing"
	}
	return 0, "int_type"
}

func intMsg(code string) string {
	switch code {
	case "int_from_float":
		return "Input should be a valid integer, got a number with a fractional part"
	case "int_parsing":
		return "Input should be a valid integer, unable to parse string as an integer"
	}
	return "Input should be a valid integer"
}

// asBool is pydantic's lax bool.
func asBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case json.Number:
		switch string(x) {
		case "0", "0.0":
			return false, true
		case "1", "1.0":
			return true, true
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "0", "off", "f", "false", "n", "no":
			return false, true
		case "1", "on", "t", "true", "y", "yes":
			return true, true
		}
	}
	return false, false
}
