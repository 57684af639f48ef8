package hostlist

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExpandCompress(t *testing.T) {
	cases := []struct {
		expr  string
		names []string
		back  string
	}{
		{"n[1-3]", []string{"n1", "n2", "n3"}, "n[1-3]"},
		{"n[1-2,5],gpu[08-10]", []string{"n1", "n2", "n5", "gpu08", "gpu09", "gpu10"}, "n[1-2,5],gpu[08-10]"},
		{"host", []string{"host"}, "host"},
		{"127.0.0.[1-2]", []string{"127.0.0.1", "127.0.0.2"}, "127.0.0.[1-2]"},
		{"r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}, "r1n[1-2],r2n[1-2]"},
	}
	for _, c := range cases {
		got, err := Expand(c.expr)
		require.NoError(t, err, c.expr)
		require.Equal(t, c.names, got, c.expr)
		require.Equal(t, c.back, Compress(got), c.expr)
	}
}

func TestExpandRejects(t *testing.T) {
	for _, bad := range []string{"n[1-", "n[3-1]", "n[a-b]", "n]", "n[0-99999999]"} {
		_, err := Expand(bad)
		require.Error(t, err, bad)
	}
}

func FuzzExpand(f *testing.F) {
	f.Add("n[1-12,15],gpu[01-04]")
	f.Fuzz(func(t *testing.T, s string) {
		names, err := Expand(s)
		if err != nil || len(names) > 10000 {
			return
		}
		_ = Compress(names)
	})
}
