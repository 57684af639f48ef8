package audit

import (
	"bufio"
	"fmt"
	"io"
	"os/user"
	"sort"
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/jobopt"
)

// HistoryColumns is the sacct field list the history audit reads best
// (others are ignored; JobID and User are needed):
//
//	sacct -a -X --parsable2 -S 2025-01-01 -o "$(slurm-frontend audit --sacct-format)"
const HistoryColumns = "JobID,User,Partition,SubmitLine,ReqTRES,ReqMem,Timelimit,Constraints,Reservation,QOS,Account,WCKey,JobName"

// History reads sacct --parsable2 output (a header line, then one job per
// line, fields separated by |) and classifies every past job as if it
// were submitted now: its submit line as the client reads it (SubmitLine,
// 23.02+), with what accounting recorded of the request that the line
// does not show (the script's #SBATCH lines: partition, time limit,
// constraints, reservation, sizes, GPUs, licenses) given as options
// before it. Steps (JobID with a dot) are skipped; an array counts once.
func (a *Auditor) History(r io.Reader, source string) (*History, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: empty: want sacct --parsable2 output with its header line", source)
	}
	header := strings.Split(strings.TrimSpace(sc.Text()), "|")
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(h)] = i
	}
	if _, ok := col["jobid"]; !ok {
		return nil, fmt.Errorf("%s: no JobID column in the header %q (sacct --parsable2 -o %s)", source, sc.Text(), HistoryColumns)
	}
	if _, ok := col["user"]; !ok {
		return nil, fmt.Errorf("%s: no User column in the header (sacct --parsable2 -o %s)", source, HistoryColumns)
	}
	h := &History{Source: source}
	users := map[string]*UserCount{}
	var jobs []Job
	seenArray := map[string]bool{}
	line := 1
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), "|")
		get := func(name string) string {
			if i, ok := col[strings.ToLower(name)]; ok && i < len(fields) {
				return strings.TrimSpace(fields[i])
			}
			return ""
		}
		id := get("JobID")
		if id == "" || strings.Contains(id, ".") {
			continue // a step, or a blank line
		}
		if i := strings.IndexByte(id, '_'); i > 0 {
			if seenArray[id[:i]] {
				continue
			}
			seenArray[id[:i]] = true
		}
		j := a.pastJob(id, get, source, line)
		jobs = append(jobs, j)
		name := get("User")
		u := users[name]
		if u == nil {
			u = &UserCount{User: name}
			users[name] = u
		}
		u.Jobs++
		h.Jobs++
		switch j.Verdict {
		case Unchanged:
			h.Unchanged++
		case Difference:
			h.Difference++
			u.Different++
		case Refused:
			h.Refused++
			u.Refused++
			opt := "(whole request)"
			for _, f := range j.Findings {
				if f.Verdict == Refused && f.Option != "" {
					opt = f.Option
				}
			}
			if u.ByOption == nil {
				u.ByOption = map[string]int{}
			}
			u.ByOption[opt]++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, u := range users {
		h.ByUser = append(h.ByUser, *u)
	}
	sort.Slice(h.ByUser, func(i, k int) bool {
		if h.ByUser[i].Refused != h.ByUser[k].Refused {
			return h.ByUser[i].Refused > h.ByUser[k].Refused
		}
		return h.ByUser[i].User < h.ByUser[k].User
	})
	h.ByOption = summarize(jobs).ByOption
	return h, nil
}

// pastJob rebuilds and classifies one job of the history.
func (a *Auditor) pastJob(id string, get func(string) string, source string, line int) Job {
	j := Job{File: source, Line: line, Kind: "history", Client: "sbatch", Command: "job " + id}
	var opts []string
	add := func(opt, v string) {
		if v != "" {
			opts = append(opts, opt+"="+v)
		}
	}
	add("--partition", get("Partition"))
	if t := get("Timelimit"); t != "" && t != "Partition_Limit" && t != "UNLIMITED" && t != "INVALID" {
		add("--time", t)
	}
	add("--constraint", get("Constraints"))
	add("--reservation", get("Reservation"))
	add("--account", get("Account"))
	add("--job-name", get("JobName"))
	if w := get("WCKey"); w != "" && w != "*" {
		add("--wckey", strings.TrimPrefix(w, "*"))
	}
	tres := parseTRES(get("ReqTRES"))
	nodes := tres["node"]
	if nodes != "" {
		add("--nodes", nodes)
	}
	if cpus := tres["cpu"]; cpus != "" {
		add("--ntasks", cpus)
	}
	if m := get("ReqMem"); m != "" && m != "0" {
		// 22.05: 4Gn per node, 4Gc per CPU; 23.02+: 4G (per node).
		switch {
		case strings.HasSuffix(m, "c"):
			add("--mem-per-cpu", strings.TrimSuffix(m, "c"))
		default:
			add("--mem", strings.TrimSuffix(m, "n"))
		}
	}
	var gpus []string
	var lic []string
	for k, v := range tres {
		switch {
		case k == "gres/gpu":
			gpus = append(gpus, v)
		case strings.HasPrefix(k, "gres/gpu:"):
			gpus = append(gpus, strings.TrimPrefix(k, "gres/gpu:")+":"+v)
		case strings.HasPrefix(k, "license/"):
			lic = append(lic, strings.TrimPrefix(k, "license/")+":"+v)
		}
	}
	sort.Strings(gpus)
	sort.Strings(lic)
	if len(gpus) > 0 {
		if len(gpus) > 1 && !strings.Contains(gpus[0], ":") {
			gpus = gpus[1:] // the untyped total beside its typed parts
		}
		add("--gpus", strings.Join(gpus, ","))
	}
	add("--licenses", strings.Join(lic, ","))
	if i := strings.Index(id, "_["); i > 0 {
		add("--array", strings.TrimSuffix(id[i+2:], "]"))
	}
	// The submit line as typed: its options come after, and win, as a
	// command-line option beats the script's #SBATCH line.
	prog, rest := "sbatch", []string(nil)
	if sl := get("SubmitLine"); sl != "" {
		for _, c := range shellCommands(sl) {
			if p, args := c.call(); clients[p] {
				prog = p
				for _, w := range args {
					rest = append(rest, w.text)
				}
				break
			}
		}
	}
	j.Client = prog
	args := opts
	uidName := get("User")
	var uid, gid uint32 = 65534, 65534
	if u, err := user.Lookup(uidName); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			uid = uint32(n)
		}
		if n, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			gid = uint32(n)
		}
	}
	if a.UID != nil {
		uid = *a.UID
	}
	if a.GID != nil {
		gid = *a.GID
	}
	in := jobopt.Input{Env: a.env(), Cwd: "/", UID: uid, GID: gid, Version: a.Version, Now: a.Now, GresTypes: a.GresTypes}
	if prog == "sbatch" {
		// The script's arguments are not the job's request; the script
		// itself is gone (its #SBATCH lines are in the fields above).
		if s := scriptArg(wordsOf(rest)); s != "" {
			for i, w := range rest {
				if w == s {
					rest = rest[:i]
					break
				}
			}
		}
		wrap := false
		for _, w := range rest {
			if w == "--wrap" || strings.HasPrefix(w, "--wrap=") || strings.HasPrefix(w, "--wra") {
				wrap = true
			}
		}
		args = append(args, rest...)
		if !wrap {
			args = append(args, "job.sh")
			in.Script = []byte("#!/bin/sh\ntrue\n")
		}
	} else {
		args = append(args, rest...)
	}
	in.Args = args
	a.classify(&j, prog, in)
	return j
}

// parseTRES reads "cpu=4,mem=8G,node=1,billing=4,gres/gpu=2".
func parseTRES(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// HistoryStore is History over a frontend state directory's job history:
// the runs `slurm-frontend import-slurmdbd` read from a site's slurmdbd
// database (and the frontend's own). Each run is turned into the fields
// sacct would print for it, then classified as History classifies them.
func (a *Auditor) HistoryStore(store *state.Store, source string) (*History, error) {
	var rows []map[string]string
	err := store.History(&state.HistCond{NoSteps: true}, func(h *state.HistJob) bool {
		rows = append(rows, histFields(h))
		return true
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	cols := strings.Split(HistoryColumns, ",")
	b.WriteString(strings.Join(cols, "|"))
	b.WriteByte('\n')
	for _, r := range rows {
		for i, c := range cols {
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(strings.ReplaceAll(r[c], "|", " "))
		}
		b.WriteByte('\n')
	}
	return a.History(strings.NewReader(b.String()), source)
}

// histFields are a run's sacct fields (HistoryColumns).
func histFields(h *state.HistJob) map[string]string {
	j := &h.Job
	id := strconv.FormatUint(uint64(j.ID), 10)
	if j.ArrayTaskID != codec.NoVal && j.ArrayJobID != 0 {
		id = strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_" + strconv.FormatUint(uint64(j.ArrayTaskID), 10)
	}
	f := map[string]string{"JobID": id, "User": j.UserName, "Partition": j.Partition, "SubmitLine": j.SubmitLine,
		"Constraints": j.Features, "QOS": j.QOS, "Account": j.Account, "JobName": j.Name}
	if f["User"] == "" {
		f["User"] = strconv.FormatUint(uint64(j.UserID), 10)
	}
	if j.TimeLimit != codec.NoVal && j.TimeLimit != codec.Infinite {
		f["Timelimit"] = strconv.FormatUint(uint64(j.TimeLimit), 10)
	}
	tres := j.TresReqStr
	if tres == "" && h.TresReqIDs != "" {
		// slurmdbd's numbering of the fixed TRES: 1 cpu, 2 mem (MB),
		// 4 node; GRES ids are the database's own, not kept here.
		var parts []string
		for _, kv := range strings.Split(h.TresReqIDs, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "1":
				parts = append(parts, "cpu="+v)
			case "2":
				parts = append(parts, "mem="+v+"M")
			case "4":
				parts = append(parts, "node="+v)
			}
		}
		tres = strings.Join(parts, ",")
	}
	f["ReqTRES"] = tres
	switch {
	case j.MemPerCPUMB > 0:
		f["ReqMem"] = strconv.FormatUint(j.MemPerCPUMB, 10) + "Mc"
	case j.MemPerNodeMB > 0:
		f["ReqMem"] = strconv.FormatUint(j.MemPerNodeMB, 10) + "M"
	}
	return f
}
