package audit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calls is what the audit sees of a wrapper: each sbatch/srun/salloc
// call, its words (dynamic ones marked with a leading ~), and its stdin.
func calls(src string) []string {
	var out []string
	for _, c := range shellCommands(src) {
		prog, args := c.call()
		if prog != "sbatch" && prog != "srun" && prog != "salloc" {
			continue
		}
		s := prog
		for _, a := range args {
			if a.dynamic {
				s += " ~" + a.text
			} else {
				s += " " + a.text
			}
		}
		if c.stdin != nil {
			s += " <<" + strings.ReplaceAll(c.stdin.body, "\n", "|")
		}
		out = append(out, s)
	}
	return out
}

func TestShellCommands(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"plain and quoted", `sbatch -p gpu --job-name="my job" 'run.sh' a\ b`, []string{"sbatch -p gpu --job-name=my job run.sh a b"}},
		{"continuation and comment", "sbatch \\\n  --array=1-3 \\\n  job.sh # submit\n", []string{"sbatch --array=1-3 job.sh"}},
		{"substitution", `jobid=$(sbatch --parsable first.sh); sbatch --dependency=afterok:$jobid second.sh`,
			[]string{"sbatch --parsable first.sh", "sbatch ~--dependency=afterok:$jobid second.sh"}},
		{"backticks", "ID=`sbatch --parsable a.sh`\n", []string{"sbatch --parsable a.sh"}},
		{"known variable", "PART=gpu\nexport NODES=2\nsbatch -p $PART -N ${NODES} x.sh\n", []string{"sbatch -p gpu -N 2 x.sh"}},
		{"unknown variable", "sbatch -p \"$1\" x.sh\n", []string{"sbatch -p ~$1 x.sh"}},
		{"heredoc", "sbatch 1> $tmp <<EOF\n#!/bin/bash\n#SBATCH -n 1\nsrun $EXE\nEOF\necho done\n",
			[]string{"sbatch <<#!/bin/bash|#SBATCH -n 1|srun $EXE|"}},
		{"prefixes and paths", "if /usr/bin/sbatch -H x.sh; then exec srun -n2 hostname; fi", []string{"sbatch -H x.sh", "srun -n2 hostname"}},
		{"redirections dropped", "sbatch x.sh > out.txt 2>&1 &", []string{"sbatch x.sh"}},
		{"not a call", "echo sbatch -p x\n# sbatch -p y\nmysbatch -p z\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, calls(tc.src))
		})
	}
}

func TestShellHeredocLines(t *testing.T) {
	cs := shellCommands("a=1\n\nsbatch <<'EOF'\n#SBATCH -N $X\nEOF\n")
	for _, c := range cs {
		if p, _ := c.call(); p == "sbatch" {
			require.NotNil(t, c.stdin)
			assert.Equal(t, 3, c.line)
			assert.Equal(t, 4, c.stdin.line)
			assert.False(t, c.stdin.expand, "a quoted delimiter keeps $X as written")
			return
		}
	}
	t.Fatal("no sbatch call")
}

// FuzzShellCommands: any text (a wrapper the audit walks into may be
// anything) is read without a panic, and placeholders keep the line count.
func FuzzShellCommands(f *testing.F) {
	for _, s := range []string{
		"sbatch -p gpu x.sh\n", "a=$(sbatch <<EOF\n#SBATCH -n1\nEOF\n)", "exec sbatch <(cat<<EOF\n#SBATCH -J $X\nEOF\n)\n",
		"sbatch `echo` \"$(( 1 + 2 ))\" ${X:-y} 'q\n", "<% x %>\n#SBATCH --nodes=<%= n %>\n", "#SBATCH -N #NODES#\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, c := range shellCommands(src) {
			c.call()
		}
		out, _ := placeholders([]byte(src), true)
		if strings.Count(string(out), "\n") != strings.Count(src, "\n") {
			t.Fatalf("placeholders changed the line count of %q: %q", src, out)
		}
	})
}
