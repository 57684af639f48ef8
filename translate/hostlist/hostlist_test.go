package hostlist

import (
	"math/rand"
	"strconv"
	"strings"
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
		{"a[1-2]b[3-4]c", []string{"a1b3c", "a1b4c", "a2b3c", "a2b4c"}, "a1b3c,a1b4c,a2b3c,a2b4c"},
		// Expand keeps order and duplicates; Compress sorts and dedups.
		{"n[3,1,1-2]", []string{"n3", "n1", "n1", "n2"}, "n[1-3]"},
		{"a,b,a", []string{"a", "b", "a"}, "a,b"},
		// Slurm's separators include whitespace.
		{"n1 n2\tn3", []string{"n1", "n2", "n3"}, "n[1-3]"},
		// Padding comes from the low end; unpadded numbers of the same
		// width join a padded group.
		{"n[01-10]", []string{"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10"}, "n[01-10]"},
		{"n[8-010]", []string{"n8", "n9", "n10"}, "n[8-10]"},
		{"n1,n01,n001", []string{"n1", "n01", "n001"}, "n1,n01,n001"},
		// Numbers past 32 bits (found by FuzzRoundTrip).
		{"00000000000000,01000000000000", []string{"00000000000000", "01000000000000"}, "[00000000000000,01000000000000]"},
		{"n[4294967296-4294967297]", []string{"n4294967296", "n4294967297"}, "n[4294967296-4294967297]"},
		{"n[18446744073709551614-18446744073709551615]", []string{"n18446744073709551614", "n18446744073709551615"}, "n[18446744073709551614-18446744073709551615]"},
	}
	for _, c := range cases {
		got, err := Expand(c.expr)
		require.NoError(t, err, c.expr)
		require.Equal(t, c.names, got, c.expr)
		require.Equal(t, c.back, Compress(got), c.expr)
	}
}

func TestExpandRejects(t *testing.T) {
	for _, bad := range []string{
		"n[1-", "n[3-1]", "n[a-b]", "n]", "n[0-99999999]", "n[]", "n[1-2-3]", "n[-1]", "n[+1]",
		"][0]", "a]b[1]", // a stray ']' (found by FuzzRoundTrip)
		"n[0-18446744073709551615]",                   // count overflows 64 bits
		"n[0-1048575,0-1048575]",                      // each range fits, together they do not
		"a[0-1023]b[0-1023]c[0-1]",                    // the product is over MaxExpand
		"n[0" + strings.Repeat("0", 100) + "-999999]", // the padding is over MaxExpandBytes
	} {
		_, err := Expand(bad)
		require.Error(t, err, bad)
	}
}

func TestExpandLimit(t *testing.T) {
	_, err := ExpandLimit("n[1-10]", 9, 1<<20)
	require.Error(t, err)
	got, err := ExpandLimit("n[1-10]", 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, got, 10)
	_, err = ExpandLimit("n[1-5],m[1-5]", 9, 1<<20)
	require.Error(t, err, "the bound covers the whole list, not each expression")
	_, err = ExpandLimit("n[1-10]", 100, 10)
	require.Error(t, err, "byte bound")
	_, err = ExpandLimit("x", 0, 100)
	require.Error(t, err)
}

func FuzzExpand(f *testing.F) {
	f.Add("n[1-12,15],gpu[01-04]")
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ExpandLimit(s, 10000, 1<<20)
		if err != nil {
			return
		}
		if len(names) > 10000 {
			t.Fatalf("%q: %d names past the bound", s, len(names))
		}
		_ = Compress(names)
	})
}

// checkSet fails unless back names exactly the hosts in want, each once.
func checkSet(t *testing.T, what string, want, back []string) {
	t.Helper()
	w := map[string]bool{}
	for _, n := range want {
		w[n] = true
	}
	g := map[string]bool{}
	for _, n := range back {
		if g[n] {
			t.Fatalf("%s: %s named twice", what, n)
		}
		if !w[n] {
			t.Fatalf("%s: %s was not in the input", what, n)
		}
		g[n] = true
	}
	if len(g) != len(w) {
		t.Fatalf("%s: %d names, want %d", what, len(g), len(w))
	}
}

// FuzzRoundTrip checks Compress's promise on anything Expand accepts:
// Expand(Compress(Expand(x))) is the set Expand(x) (each host once), and
// Compress is a fixed point on its own output.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		"n[1-12,15],gpu[01-04]", "n[3,1,1-2]", "n[01-10]", "r[1-2]n[1-2]", "a,b,a",
		"n1,n01,n001", "gpu10,gpu08,gpu09", "n[8-010]", "[0-3]", "n[4294967295-4294967297]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ExpandLimit(s, 10000, 1<<20)
		if err != nil {
			return
		}
		c := Compress(names)
		back, err := Expand(c)
		if err != nil {
			t.Fatalf("Expand(Compress(Expand(%q))) = Expand(%q): %v", s, c, err)
		}
		checkSet(t, s+" -> "+c, names, back)
		if c2 := Compress(back); c2 != c {
			t.Fatalf("%q: Compress not stable: %q then %q", s, c, c2)
		}
	})
}

// FuzzCompressNames checks the promise from the other side: for any
// list of names that Expand would give back as themselves (no brackets,
// commas or whitespace), Expand(Compress(names)) is the same set.
func FuzzCompressNames(f *testing.F) {
	f.Add("n1 n01 n10 n2 n2 gpu08 gpu10 x 18446744073709551616 a9")
	f.Add("n09 n10 n010 n0 n00")
	f.Fuzz(func(t *testing.T, s string) {
		var names []string
		for _, n := range strings.Fields(s) {
			if strings.ContainsAny(n, "[],") || strings.TrimSpace(n) != n {
				continue
			}
			names = append(names, n)
		}
		if len(names) > 10000 {
			return
		}
		c := Compress(names)
		back, err := Expand(c)
		if err != nil {
			t.Fatalf("Expand(Compress(%q)) = Expand(%q): %v", names, c, err)
		}
		checkSet(t, c, names, back)
	})
}

// TestCompressRandom runs the FuzzCompressNames property over random
// lists of look-alike names (shared prefixes, mixed padding, neighbours).
func TestCompressRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	prefixes := []string{"n", "gpu", "r1n", "", "a-"}
	for iter := 0; iter < 2000; iter++ {
		var names []string
		for k := r.Intn(30); k >= 0; k-- {
			v := r.Intn(120)
			num := strconv.Itoa(v)
			if r.Intn(3) == 0 {
				num = strings.Repeat("0", r.Intn(3)) + num
			}
			names = append(names, prefixes[r.Intn(len(prefixes))]+num)
		}
		c := Compress(names)
		back, err := Expand(c)
		require.NoError(t, err, c)
		checkSet(t, c, names, back)
		require.Equal(t, c, Compress(back))
	}
}
