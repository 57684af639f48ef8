package ctld

import (
	"os/user"
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// dependency is one "type:job[+minutes]" term of --dependency.
type dependency struct {
	kind  string // after, afterany, afterok, afternotok, aftercorr, singleton
	jobID uint32
	task  uint32 // NO_VAL = the whole job (all array tasks)
	delay int64  // seconds after the condition (+time)
}

// parseDependency splits a --dependency value into terms; any reports
// '?' (any term suffices) rather than ',' (all must hold). Unknown kinds
// or job ids are refused with ESLURM_DEPENDENCY, as slurmctld does.
func parseDependency(spec string) (deps []dependency, any bool, err error) {
	sep := ","
	if strings.Contains(spec, "?") {
		if strings.Contains(spec, ",") {
			return nil, false, codec.Errorf(codec.ESLURM_DEPENDENCY, "mixed , and ? in %q", spec)
		}
		sep, any = "?", true
	}
	for _, term := range strings.Split(spec, sep) {
		if term == "singleton" {
			deps = append(deps, dependency{kind: "singleton", task: codec.NoVal})
			continue
		}
		kind, ids, ok := strings.Cut(term, ":")
		switch kind {
		case "after", "afterany", "afterok", "afternotok", "aftercorr", "afterburstbuffer":
		default:
			return nil, false, codec.Errorf(codec.ESLURM_DEPENDENCY, "bad dependency %q", term)
		}
		if !ok || ids == "" {
			return nil, false, codec.Errorf(codec.ESLURM_DEPENDENCY, "no job in %q", term)
		}
		for _, id := range strings.Split(ids, ":") {
			d := dependency{kind: kind, task: codec.NoVal}
			if i := strings.IndexByte(id, '+'); i >= 0 {
				m, err := strconv.ParseUint(id[i+1:], 10, 32)
				if err != nil {
					return nil, false, codec.Errorf(codec.ESLURM_DEPENDENCY, "bad delay in %q", term)
				}
				d.delay, id = int64(m)*60, id[:i]
			}
			if i := strings.IndexByte(id, '_'); i >= 0 {
				t, err := strconv.ParseUint(id[i+1:], 10, 32)
				if err != nil {
					return nil, false, codec.Errorf(codec.ESLURM_DEPENDENCY, "bad task in %q", term)
				}
				d.task, id = uint32(t), id[:i]
			}
			v, err := strconv.ParseUint(id, 10, 32)
			if err != nil || v == 0 {
				return nil, false, codec.Errorf(codec.ESLURM_DEPENDENCY, "bad job id in %q", term)
			}
			d.jobID = uint32(v)
			deps = append(deps, d)
		}
	}
	return deps, any, nil
}

// depsSatisfied evaluates j's dependencies; never reports that they can
// no longer be satisfied (DependencyNeverSatisfied).
func (c *Controller) depsSatisfied(j *state.Job) (ok, never bool) {
	deps, any, err := parseDependency(j.Dependency)
	if err != nil {
		return false, true
	}
	now := j.SubmitTime
	if s := c.snap.Load(); s != nil {
		now = max(now, s.JobsUpdate)
	}
	allOK, anyOK, allNever := true, false, true
	for _, d := range deps {
		sat, nev := depTerm(c.jobs, j, d, now)
		allOK = allOK && sat
		anyOK = anyOK || sat
		allNever = allNever && nev
		if !any && nev {
			return false, true
		}
	}
	if any {
		return anyOK, !anyOK && allNever
	}
	return allOK, false
}

// depTerm evaluates one term against the jobs (every task of an array
// unless one is named).
func depTerm(jobs []*jobEntry, j *state.Job, d dependency, now int64) (sat, never bool) {
	if d.kind == "singleton" {
		for _, e := range jobs {
			// What the entry knows first: only then read the name.
			if e.id == j.ID || e.userID != j.UserID ||
				!(e.id < j.ID || codec.JobIsStarted(e.state)) || (e.finished() && e.state&codec.JOB_COMPLETING == 0) {
				continue
			}
			o := e.job()
			sameArray := j.ArrayJobID != 0 && o.ArrayJobID == j.ArrayJobID
			if o.ID != j.ID && o.UserID == j.UserID && o.Name == j.Name && !sameArray &&
				(o.ID < j.ID || codec.JobIsStarted(o.State)) && (!codec.JobIsFinished(o.State) || o.State&codec.JOB_COMPLETING != 0) {
				return false, false
			}
		}
		return true, false
	}
	var targets []*state.Job
	for _, e := range jobs {
		if e.id != d.jobID && (e.arrayJobID != d.jobID || e.arrayJobID == 0) {
			continue
		}
		o := e.job()
		if o.ID == d.jobID || (o.ArrayJobID == d.jobID && o.ArrayJobID != 0) {
			if d.task != codec.NoVal && o.ArrayTaskID != d.task {
				continue
			}
			if d.kind == "aftercorr" && o.ArrayTaskID != j.ArrayTaskID {
				continue
			}
			targets = append(targets, o)
		}
	}
	if len(targets) == 0 {
		// A job the controller no longer knows (purged, or never existed
		// for a 22.05 client, which may name one) does not hold anyone
		// back, as in slurmctld.
		return true, false
	}
	sat = true
	for _, o := range targets {
		st := o.State & codec.JOB_STATE_BASE
		done := codec.JobIsFinished(o.State) && o.State&codec.JOB_COMPLETING == 0
		switch d.kind {
		case "after":
			if !codec.JobIsStarted(o.State) && !done {
				sat = false
			}
		case "afterany", "afterburstbuffer":
			if !done {
				sat = false
			}
		case "afterok", "aftercorr":
			if done && st != codec.JOB_COMPLETE {
				return false, true
			}
			if !done {
				sat = false
			}
		case "afternotok":
			if done && st == codec.JOB_COMPLETE {
				return false, true
			}
			if !done {
				sat = false
			}
		}
		if sat && d.delay > 0 && o.EndTime+d.delay > now {
			sat = false
		}
	}
	return sat, false
}

// supplementaryGroups are the groups the job runs with, as slurmd looks
// them up for the user.
func supplementaryGroups(name string, gid uint32) []uint32 {
	out := []uint32{gid}
	u, err := user.Lookup(name)
	if err != nil {
		return out
	}
	ids, err := u.GroupIds()
	if err != nil {
		return out
	}
	for _, g := range ids {
		if v, err := strconv.ParseUint(g, 10, 32); err == nil && uint32(v) != gid {
			out = append(out, uint32(v))
		}
	}
	return out
}

func hostlistCompress(nodes []string) string { return hostlist.Compress(nodes) }

// dependencyDisplay is the Dependency field as slurmctld shows it: each
// term with "(unfulfilled)" or "(failed)".
// It reads the snapshot's jobs (no lock: it runs while encoding replies).
func (s *Snapshot) dependencyDisplay(j *state.Job) string {
	if j.Dependency == "" {
		return ""
	}
	deps, any, err := parseDependency(j.Dependency)
	if err != nil {
		return j.Dependency
	}
	sep := ","
	if any {
		sep = "?"
	}
	var b strings.Builder
	for i, d := range deps {
		if i > 0 {
			b.WriteString(sep)
		}
		if d.kind == "singleton" {
			b.WriteString("singleton")
		} else {
			b.WriteString(d.kind + ":" + strconv.FormatUint(uint64(d.jobID), 10))
			if d.task != codec.NoVal {
				b.WriteString("_" + strconv.FormatUint(uint64(d.task), 10))
			}
			if d.delay > 0 {
				b.WriteString("+" + strconv.FormatInt(d.delay/60, 10))
			}
		}
		if _, never := depTerm(s.jobs, j, d, j.SubmitTime); never {
			b.WriteString("(failed)")
		} else {
			b.WriteString("(unfulfilled)")
		}
	}
	return b.String()
}
