package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
)

// A script's record: scriptTag, then the text, the environment and the
// arguments, each string a uvarint length and its bytes, each list a
// uvarint count. Records written before this format are JSON (they begin
// with '{') and still read. encoding/json took 3% of the server's CPU in
// a submit storm.
const scriptTag = 0x01

var errBadScript = errors.New("malformed script record")

func appendScriptRecord(b []byte, sc *Script) []byte {
	// Sized once: a script's environment is a few hundred strings, and
	// growing the record as it is written cost a submit storm more
	// allocation than any other step of the submission.
	n := 1 + binary.MaxVarintLen64*3 + len(sc.Text) + binary.MaxVarintLen32*(len(sc.Env)+len(sc.Argv))
	for _, s := range sc.Env {
		n += len(s)
	}
	for _, s := range sc.Argv {
		n += len(s)
	}
	b = slices.Grow(b, n)
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	list := func(l []string) {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, s := range l {
			str(s)
		}
	}
	b = append(b, scriptTag)
	str(sc.Text)
	list(sc.Env)
	list(sc.Argv)
	return b
}

// decodeScriptRecord fills *sc from v (either format).
func decodeScriptRecord(v []byte, sc *Script) error {
	if len(v) > 0 && v[0] == '{' {
		return json.Unmarshal(v, sc)
	}
	if len(v) == 0 || v[0] != scriptTag {
		return errBadScript
	}
	v = v[1:]
	num := func() (int, bool) {
		n, w := binary.Uvarint(v)
		if w <= 0 || n > uint64(len(v)-w) {
			return 0, false
		}
		v = v[w:]
		return int(n), true
	}
	str := func() (string, bool) {
		n, ok := num()
		if !ok {
			return "", false
		}
		s := string(v[:n])
		v = v[n:]
		return s, true
	}
	list := func() ([]string, bool) {
		n, ok := num() // each entry takes a byte at least: n <= len(v)
		if !ok || n == 0 {
			return nil, ok
		}
		l := make([]string, n)
		for i := range l {
			if l[i], ok = str(); !ok {
				return nil, false
			}
		}
		return l, true
	}
	var ok bool
	*sc = Script{}
	if sc.Text, ok = str(); !ok {
		return errBadScript
	}
	if sc.Env, ok = list(); !ok {
		return errBadScript
	}
	if sc.Argv, ok = list(); !ok || len(v) != 0 {
		return errBadScript
	}
	return nil
}
