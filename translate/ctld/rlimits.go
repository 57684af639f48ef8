package ctld

import (
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/translate"
)

// rlimitNames are the limits sbatch can forward as SLURM_RLIMIT_<NAME>
// (Slurm's slurm_rlimits_info.c, in its order).
var rlimitNames = []string{"CPU", "FSIZE", "DATA", "STACK", "CORE", "RSS", "NPROC", "NOFILE", "MEMLOCK", "AS"}

// propagatedRlimits is the set of limits slurm.conf says the node applies
// (PropagateResourceLimits, default ALL, or PropagateResourceLimitsExcept):
// slurmstepd parses the same keys and applies a forwarded limit only
// when its name is in this set or the user asked with --propagate.
// Unknown names make slurmd refuse the file; here they are ignored.
func (c *Controller) propagatedRlimits() map[string]bool {
	set := map[string]bool{}
	list, in := c.config().Get("PropagateResourceLimits", "ALL"), true
	if except := c.config().Get("PropagateResourceLimitsExcept", ""); except != "" {
		list, in = except, false
	}
	switch list {
	case "ALL":
		for _, n := range rlimitNames {
			set[n] = in
		}
		return set
	case "NONE":
		for _, n := range rlimitNames {
			set[n] = !in
		}
		return set
	}
	for _, n := range rlimitNames {
		set[n] = !in
	}
	for _, tok := range strings.FieldsFunc(list, func(r rune) bool { return strings.ContainsRune(", \t\n", r) }) {
		set[strings.TrimPrefix(tok, "RLIMIT_")] = in
	}
	return set
}

// jobRlimits turns the SLURM_RLIMIT_* variables sbatch sent into the
// soft limits the job's processes get. A value prefixed "U" was asked
// for with --propagate: it is applied whatever slurm.conf says, and not
// lowered to the node's hard limit (setting it fails instead), as
// slurmstepd's _set_limit does. Malformed values are skipped.
func (c *Controller) jobRlimits(sent []string) []translate.Rlimit {
	var prop map[string]bool
	var out []translate.Rlimit
	for _, kv := range sent {
		k, v, ok := strings.Cut(kv, "=")
		name, isLimit := strings.CutPrefix(k, "SLURM_RLIMIT_")
		if !ok || !isLimit {
			continue
		}
		user := strings.HasPrefix(v, "U")
		val, err := strconv.ParseUint(strings.TrimPrefix(v, "U"), 10, 64)
		if err != nil {
			continue
		}
		if !user {
			if prop == nil {
				prop = c.propagatedRlimits()
			}
			if !prop[name] {
				continue
			}
		}
		for _, n := range rlimitNames {
			if n == name {
				out = append(out, translate.Rlimit{Name: name, Soft: val, Strict: user})
			}
		}
	}
	return out
}
