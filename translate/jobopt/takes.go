package jobopt

import "strings"

// TakesValue reports whether opt, as written on a command line of prog
// ("sbatch", "salloc" or "srun") of the release, takes the next word as
// its value: "-p", "--part" (an abbreviation), but not "--hold",
// "--exclusive" (optional values are only given with "="), "-p4" or
// "--partition=x". Callers that split a command line themselves (the
// migration audit, reading wrappers) use it to tell a value from the
// script's name.
func TakesValue(prog, opt string, version uint16) bool {
	c := map[string]client{"sbatch": cSbatch, "salloc": cSalloc, "srun": cSrun}[prog]
	if c == 0 || !strings.HasPrefix(opt, "-") || strings.Contains(opt, "=") {
		return false
	}
	p := newParser(Input{Version: version}, c, prog)
	if strings.HasPrefix(opt, "--") {
		name := opt[2:]
		var found *optDef
		for _, d := range p.defs {
			if d.name == name {
				return d.has == reqArg
			}
			if found == nil && strings.HasPrefix(d.name, name) {
				found = d
			}
		}
		return found != nil && found.has == reqArg
	}
	// Bundled short options: the last one may take the next word.
	idx := shortIndex(p.defs)
	for i := 1; i < len(opt); i++ {
		d := idx[opt[i]]
		if d == nil {
			return false
		}
		if d.has != noArg {
			// Its value is the rest of the word, or the next word.
			return i == len(opt)-1 && d.has == reqArg
		}
	}
	return false
}
