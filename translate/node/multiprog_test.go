package node

import (
	"errors"
	"slices"
	"testing"
)

// The example of srun(1) (MULTIPLE PROGRAM CONFIGURATION) and the rest
// of the format: ranks, %t and %o, quotes, escapes, continued lines,
// comments, the extra arguments srun passes after the file.
func TestMultiProgArgv(t *testing.T) {
	silly := `###################################################################
# srun multiple program configuration file
#
# srun -n8 -l --multi-prog silly.conf
###################################################################
4-6       hostname
1,7       echo  task:%t
0,2-3     echo  offset:%o
`
	for _, c := range []struct {
		conf  string
		rank  uint32
		extra []string
		want  []string
	}{
		{silly, 0, nil, []string{"echo", "offset:0"}},
		{silly, 1, nil, []string{"echo", "task:1"}},
		{silly, 2, nil, []string{"echo", "offset:1"}},
		{silly, 3, nil, []string{"echo", "offset:2"}},
		{silly, 5, nil, []string{"hostname"}},
		{silly, 7, nil, []string{"echo", "task:7"}},
		{"* sh -c 'echo a  b; exit %t'\n", 3, nil, []string{"sh", "-c", "echo a  b; exit %t"}},
		{"0 echo a\\ b c%t%x\n", 0, nil, []string{"echo", "a b", "c0"}},
		{"0 echo a \\\n  b\n1 echo one\n", 0, nil, []string{"echo", "a", "b"}},
		{"0 echo a \\\n  b\n1 echo one\n", 1, nil, []string{"echo", "one"}},
		{"  # comment\n\n0-1 prog ''\n", 1, []string{"x", "y"}, []string{"prog", "", "x", "y"}},
		{"0-1,5 prog %o\n", 5, nil, []string{"prog", "2"}},
		{"bad-range,3 prog\n", 3, nil, []string{"prog"}},
	} {
		got, err := multiProgArgv(c.conf, c.rank, c.extra)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("rank %d of %q: %q (%v), want %q", c.rank, c.conf, got, err, c.want)
		}
	}
	for _, c := range []struct {
		conf string
		rank uint32
	}{
		{silly, 8},            // no line holds it
		{"0\n", 0},            // ranks and no command
		{"0 echo 'open\n", 0}, // unclosed quote
		{"# only a comment\n", 0},
	} {
		if got, err := multiProgArgv(c.conf, c.rank, nil); err == nil {
			t.Errorf("rank %d of %q: %q, want an error", c.rank, c.conf, got)
		}
	}
	if _, err := multiProgArgv(silly, 9, nil); !errors.Is(err, errNoProgram) {
		t.Errorf("a rank no line holds: %v, want errNoProgram", err)
	}
}

func FuzzMultiProgArgv(f *testing.F) {
	f.Add("0-3 echo %t '%o' a\\ b \\\n c\n* x\n", uint32(2))
	f.Fuzz(func(t *testing.T, conf string, rank uint32) {
		argv, err := multiProgArgv(conf, rank, []string{"extra"})
		if err == nil && (len(argv) == 0 || len(argv) >= maxMultiProgArgs) {
			t.Fatalf("argv %q", argv)
		}
	})
}
