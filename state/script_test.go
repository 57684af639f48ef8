package state

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScriptRecordRoundTrip(t *testing.T) {
	for _, sc := range []Script{
		{},
		{Text: "#!/bin/sh\necho hi\n", Env: []string{"A=b", "", "C=ü"}, Argv: []string{"x", ""}},
		{Text: string(make([]byte, 70000)), Env: []string{"PATH=/bin"}},
	} {
		var got Script
		require.NoError(t, decodeScriptRecord(appendScriptRecord(nil, &sc), &got))
		require.Equal(t, sc, got)
	}
}

// A script's record is allocated once, whatever the size of its
// environment (a submit storm's largest allocation was its growth).
func TestScriptRecordOneAllocation(t *testing.T) {
	sc := Script{Text: "#!/bin/sh\nsleep 100\n", Argv: []string{"a"}}
	for i := range 300 {
		sc.Env = append(sc.Env, fmt.Sprintf("VAR_%d=%0*d", i, i%200, i))
	}
	var rec []byte
	allocs := testing.AllocsPerRun(20, func() { rec = appendScriptRecord(nil, &sc) })
	require.Equal(t, 1.0, allocs, "allocations for a %d-byte record", len(rec))
	var got Script
	require.NoError(t, decodeScriptRecord(rec, &got))
	require.Equal(t, sc, got)
}

// Scripts stored before the binary record (JSON) still read.
func TestScriptRecordReadsJSON(t *testing.T) {
	sc := Script{Text: "#!/bin/sh\n", Env: []string{"A=b"}, Argv: []string{"one"}}
	b, err := json.Marshal(&sc)
	require.NoError(t, err)
	var got Script
	require.NoError(t, decodeScriptRecord(b, &got))
	require.Equal(t, sc, got)
}

func TestScriptRecordRejectsDamage(t *testing.T) {
	good := appendScriptRecord(nil, &Script{Text: "abc", Env: []string{"A=b"}})
	for i := 1; i < len(good); i++ {
		var sc Script
		require.Error(t, decodeScriptRecord(good[:i], &sc), "cut at %d", i)
	}
	var sc Script
	require.Error(t, decodeScriptRecord(append(append([]byte(nil), good...), 0), &sc), "trailing byte")
	require.Error(t, decodeScriptRecord(nil, &sc))
	require.Error(t, decodeScriptRecord([]byte{0x02}, &sc))
	require.Error(t, decodeScriptRecord([]byte{scriptTag, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}, &sc), "a count beyond the bytes left")
}

func FuzzDecodeScriptRecord(f *testing.F) {
	f.Add(appendScriptRecord(nil, &Script{Text: "abc", Env: []string{"A=b"}, Argv: []string{"x"}}))
	f.Add([]byte(`{"script":"x","env":["A=b"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var sc Script
		if decodeScriptRecord(b, &sc) != nil || (len(b) > 0 && b[0] == '{') {
			return
		}
		var again Script
		require.NoError(t, decodeScriptRecord(appendScriptRecord(nil, &sc), &again))
		require.Equal(t, sc, again)
	})
}
