package local

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/translate"
)

// rlimitResource maps Slurm's limit names to Linux resources.
var rlimitResource = map[string]int{
	"CPU": unix.RLIMIT_CPU, "FSIZE": unix.RLIMIT_FSIZE, "DATA": unix.RLIMIT_DATA,
	"STACK": unix.RLIMIT_STACK, "CORE": unix.RLIMIT_CORE, "RSS": unix.RLIMIT_RSS,
	"NPROC": unix.RLIMIT_NPROC, "NOFILE": unix.RLIMIT_NOFILE, "MEMLOCK": unix.RLIMIT_MEMLOCK,
	"AS": unix.RLIMIT_AS,
}

// formatRlimits is the LIMITS argument of "shim exec": NAME=VALUE pairs
// joined by commas, VALUE prefixed "U" when strict (Slurm's own marker
// for --propagate), or "-" for none.
func formatRlimits(ls []translate.Rlimit) string {
	if len(ls) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.Name)
		b.WriteByte('=')
		if l.Strict {
			b.WriteByte('U')
		}
		b.WriteString(strconv.FormatUint(l.Soft, 10))
	}
	return b.String()
}

// parseRlimits reads formatRlimits' output; unknown names and malformed
// values are skipped.
func parseRlimits(s string) []translate.Rlimit {
	var out []translate.Rlimit
	if s == "-" {
		return nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, v, _ := strings.Cut(kv, "=")
		strict := strings.HasPrefix(v, "U")
		val, err := strconv.ParseUint(strings.TrimPrefix(v, "U"), 10, 64)
		if _, known := rlimitResource[name]; !known || err != nil {
			continue
		}
		out = append(out, translate.Rlimit{Name: name, Soft: val, Strict: strict})
	}
	return out
}

// applyRlimits sets this process's soft limits before it becomes the
// job, as slurmstepd's _set_limit does in the task: the hard limit is
// the node's; a value above it is lowered to it unless strict, when
// the limit is left unchanged (setrlimit refuses it). syscall.Setrlimit,
// not unix's: it also stops the Go runtime from restoring its original
// RLIMIT_NOFILE at exec.
func applyRlimits(arg string) {
	for _, l := range parseRlimits(arg) {
		res := rlimitResource[l.Name]
		var r syscall.Rlimit
		if syscall.Getrlimit(res, &r) != nil {
			continue
		}
		r.Cur = l.Soft
		if r.Cur > r.Max {
			if l.Strict {
				continue
			}
			r.Cur = r.Max
		}
		_ = syscall.Setrlimit(res, &r)
	}
}
