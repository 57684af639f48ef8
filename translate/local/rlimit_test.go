package local

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
)

func TestRlimitsArgRoundTrip(t *testing.T) {
	for _, ls := range [][]translate.Rlimit{
		nil,
		{{Name: "NOFILE", Soft: 777}},
		{{Name: "CPU", Soft: 1<<64 - 1}, {Name: "CORE", Soft: 0, Strict: true}, {Name: "AS", Soft: 4096}},
	} {
		arg := formatRlimits(ls)
		if got := parseRlimits(arg); !reflect.DeepEqual(got, ls) {
			t.Errorf("%q: parsed %+v, want %+v", arg, got, ls)
		}
	}
	if got := parseRlimits("NOFILE=x,BOGUS=1,CORE=5"); !reflect.DeepEqual(got, []translate.Rlimit{{Name: "CORE", Soft: 5}}) {
		t.Errorf("malformed entries kept: %+v", got)
	}
}

// TestApplyRlimits runs this test binary as a child that applies limits
// and execs /bin/sh, which reports what it got: the soft limit set, one
// above the hard limit lowered to it, a strict one above it left alone.
func TestApplyRlimits(t *testing.T) {
	if arg := os.Getenv("RLIMIT_TEST_APPLY"); arg != "" {
		applyRlimits(arg)
		shimExec("n1", "/bin/sh", []string{"-c", "ulimit -S -n; ulimit -S -c; ulimit -H -n"})
		return
	}
	// What a child inherits unchanged: soft NOFILE, soft CORE, hard NOFILE.
	inherited := strings.Fields(run(t, "/bin/sh", "-c", "ulimit -S -n; ulimit -S -c; ulimit -H -n"))
	soft, core, hard := inherited[0], inherited[1], inherited[2]
	if hard == "unlimited" || hard == "333" || soft == "333" {
		t.Skipf("limits here (soft %s, hard %s) do not allow the test", soft, hard)
	}
	for _, tc := range []struct{ arg, want string }{
		{"NOFILE=333,CORE=0", "333\n0\n" + hard + "\n"},
		{"NOFILE=99999999999", hard + "\n" + core + "\n" + hard + "\n"},
		{"NOFILE=U99999999999,CORE=U0", soft + "\n0\n" + hard + "\n"},
		{"-", soft + "\n" + core + "\n" + hard + "\n"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestApplyRlimits$")
		cmd.Env = append(os.Environ(), "RLIMIT_TEST_APPLY="+tc.arg)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tc.arg, err)
		}
		if string(out) != tc.want {
			t.Errorf("%s: the exec'd shell reports %q, want %q", tc.arg, out, tc.want)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
