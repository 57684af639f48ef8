package jobopt

import (
	"strconv"
	"strings"
)

// The client's own environment changes (setenv calls) and the job's
// environment sbatch sends. Values only the running client knows
// (SLURM_SUBMIT_HOST, SLURM_UMASK, SLURM_PRIO_PROCESS, SLURM_RLIMIT_*)
// are not produced.

// hetEnv is sbatch_env_t: per-component variables set at the end.
type hetEnv struct {
	cpusPerTask                                           int
	dist, memBind, memBindSort, memBindVerbose            string
	ntasks, ntasksPerCore, ntasksPerGPU, ntasksPerNode    int
	ntasksPerSocket, ntasksPerTRES, planeSize, threadsPer int
}

func newHetEnv() hetEnv {
	return hetEnv{cpusPerTask: noValInt, ntasks: noValInt, ntasksPerCore: noValInt, ntasksPerGPU: noValInt,
		ntasksPerNode: noValInt, ntasksPerSocket: noValInt, ntasksPerTRES: noValInt, planeSize: noValInt,
		threadsPer: noValInt}
}

func (p *parser) setEnv(name, val string) {
	if _, ok := p.env[name]; !ok {
		p.envOrder = append(p.envOrder, name)
	}
	p.env[name] = val
}

func (p *parser) setEnvIfUnset(name, val string) {
	if _, ok := p.env[name]; !ok {
		p.setEnv(name, val)
	}
}

// envList is the process environment in order.
type envList struct {
	names []string
	vals  map[string]string
}

func (e *envList) set(name, val string) {
	if e.vals == nil {
		e.vals = map[string]string{}
	}
	if _, ok := e.vals[name]; !ok {
		e.names = append(e.names, name)
	}
	e.vals[name] = val
}

// append is env_array_append: only when the name is not there yet.
func (e *envList) append(name, val string) {
	if _, ok := e.vals[name]; !ok {
		e.set(name, val)
	}
}

func (e *envList) setHet(name string, comp int, val string) {
	if comp < 0 {
		e.set(name, val)
		return
	}
	e.set(name+"_PACK_GROUP_"+strconv.Itoa(comp), val)
	e.set(name+"_HET_GROUP_"+strconv.Itoa(comp), val)
}

func (e *envList) list() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.vals[n])
	}
	return out
}

// jobEnvironment is the environment part of _fill_job_desc_from_opts.
func (p *parser) jobEnvironment() *envList {
	o := &p.o
	// Set just before the descriptor is built (sbatch.c main loop).
	p.setEnv("SLURM_SUBMIT_DIR", p.in.Cwd)
	env := &envList{}
	all := func() {
		for _, n := range p.envOrder {
			if p.rel >= r26 && n == "SLURM_JWT" {
				continue
			}
			env.set(n, p.env[n])
		}
	}
	slurmOnly := func() {
		for _, n := range p.envOrder {
			if strings.HasPrefix(n, "SLURM") || p.rel >= r24 && strings.HasPrefix(n, "_SLURM_SPANK_OPTION_") {
				env.set(n, p.env[n])
			}
		}
	}
	getUserEnv := o.getUserEnvTime >= 0
	if p.rel >= r26 {
		getUserEnv = o.getUserEnv
	}
	switch {
	case !o.exportEnv.ok || strings.EqualFold(o.exportEnv.s, "ALL"):
		all()
	case p.rel >= r24 && strings.EqualFold(o.exportEnv.s, "NIL"):
		slurmOnly()
	case strings.EqualFold(o.exportEnv.s, "NONE"):
		slurmOnly()
		getUserEnv = true
	default:
		for _, tok := range quoteTokens(o.exportEnv.s) {
			if strings.EqualFold(tok, "ALL") {
				all()
				continue
			}
			if k, v, ok := strings.Cut(tok, "="); ok {
				env.set(k, v)
				continue
			}
			if v, ok := p.env[tok]; ok {
				env.set(tok, v)
			}
		}
		slurmOnly()
		getUserEnv = true
	}
	if getUserEnv {
		env.set("SLURM_GET_USER_ENV", "1")
	}
	if o.distribution&distBase == distArbitrary {
		env.set("SLURM_ARBITRARY_NODELIST", o.nodelist.s)
	}
	return env
}

// quoteTokens is find_quote_token over ",": commas inside quotes do not
// split, and the quotes stay.
func quoteTokens(s string) []string {
	var out []string
	var cur []byte
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			cur = append(cur, c)
		case c == '"' || c == '\'':
			quote = c
			cur = append(cur, c)
		case c == ',':
			if len(cur) > 0 {
				out = append(out, string(cur))
			}
			cur = cur[:0]
		default:
			cur = append(cur, c)
		}
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}
