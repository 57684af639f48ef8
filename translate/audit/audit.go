// Package audit tells a site, before it switches, which of its job
// scripts will run unchanged on the frontend, which will run with a
// documented difference, and which will be refused and why.
//
// Each job is read as the stock client of the chosen release reads it
// (translate/jobopt: #SBATCH lines, command-line options, SBATCH_*
// variables), then given to the server's own submit-time checks (a
// ctld.Controller's CheckSubmit and CheckAllocation): there is one set of
// rules, and the audit asks it. Wrappers that call sbatch, srun or salloc
// are read as the shell splits them (shell.go); what only running them
// would tell (a variable set by a command, a template's placeholder) is
// reported as unresolved, never guessed.
package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate/ctld"
	"github.com/lablup/slurm-frontend/translate/jobopt"
)

// Checker is the server's submit-time checks (a *ctld.Controller).
type Checker interface {
	CheckSubmit(d *codec.JobDesc, uid, gid uint32, v uint16) ([]ctld.Difference, error)
	CheckAllocation(d *codec.JobDesc, uid, gid uint32, v uint16) ([]ctld.Difference, error)
	CheckHetSubmit() error
}

// Auditor classifies job scripts against a Checker.
type Auditor struct {
	Check   Checker
	Version uint16 // the clients' protocol version (codec.V24_11 ...)
	// UID and GID submit every job; nil: each file's owner.
	UID, GID *uint32
	// Env is the submitting users' environment as the clients read it
	// (SBATCH_* variables); PATH and HOME are added when missing.
	Env []string
	// GresTypes are the config's (the clients check --gres names
	// against them).
	GresTypes []string
	Now       time.Time
	// MaxFile: larger files are skipped (default 1 MiB).
	MaxFile int64
}

// clients the audit follows in wrappers.
var clients = map[string]bool{"sbatch": true, "srun": true, "salloc": true}

// file is one file read by the walk.
type file struct {
	path     string
	data     []byte
	uid, gid uint32
	shell    bool
	batch    bool // has #SBATCH directives, or is submitted by an sbatch call seen in the walk
}

// Scripts walks paths (files or directories) and classifies every job
// found: each batch script (a file with #SBATCH lines, or one a wrapper
// submits) and each sbatch, salloc and srun call in a wrapper.
func (a *Auditor) Scripts(paths []string) (*Report, error) {
	if a.Now.IsZero() {
		a.Now = time.Now()
	}
	r := &Report{Generated: a.Now, Paths: paths}
	var files []*file
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				r.Skipped = append(r.Skipped, Skipped{File: path, Reason: err.Error()})
				return nil
			}
			if d.IsDir() {
				if path != root && (d.Name() == ".git" || d.Name() == ".svn" || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil // symbolic links are not followed: the file they name is walked where it lies
			}
			f, skip := a.read(path)
			r.Files++
			if skip != "" {
				r.Skipped = append(r.Skipped, Skipped{File: path, Reason: skip})
				return nil
			}
			if f != nil {
				files = append(files, f)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Scripts submitted by a wrapper are batch scripts: srun inside them
	// is a step, not an allocation.
	byPath := map[string]*file{}
	for _, f := range files {
		byPath[f.path] = f
	}
	calls := map[*file][]command{}
	for _, f := range files {
		if !f.shell {
			continue
		}
		cs := shellCommands(string(f.data))
		calls[f] = cs
		for _, c := range cs {
			if prog, args := c.call(); prog == "sbatch" {
				if s := scriptArg(args); s != "" {
					if g := byPath[resolve(f.path, s)]; g != nil {
						g.batch = true
					}
				}
			}
		}
	}
	for _, f := range files {
		if hasDirectives(f.data) {
			r.Jobs = append(r.Jobs, a.script(f))
		}
		for _, c := range calls[f] {
			prog, args := c.call()
			if !clients[prog] || (prog != "sbatch" && f.batch) {
				continue
			}
			r.Jobs = append(r.Jobs, a.call(f, c, prog, args, byPath, calls[f]))
		}
		if !f.shell && bytes.Contains(f.data, []byte("sbatch")) && !hasDirectives(f.data) {
			r.Skipped = append(r.Skipped, Skipped{File: f.path, Reason: "not a shell script: the sbatch calls it makes are not followed"})
		}
	}
	r.Summary = summarize(r.Jobs)
	return r, nil
}

// read reads a file the walk found: nil for files with nothing of Slurm
// in them, a reason for those it cannot read.
func (a *Auditor) read(path string) (*file, string) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err.Error()
	}
	limit := a.MaxFile
	if limit == 0 {
		limit = 1 << 20
	}
	if st.Size() > limit {
		return nil, ""
	}
	data, err := readRegular(path)
	if err != nil {
		return nil, err.Error()
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, "" // binary
	}
	if !bytes.Contains(data, []byte("#SBATCH")) && !bytes.Contains(data, []byte("sbatch")) &&
		!bytes.Contains(data, []byte("srun")) && !bytes.Contains(data, []byte("salloc")) {
		return nil, ""
	}
	f := &file{path: path, data: data, shell: isShell(path, data)}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		f.uid, f.gid = sys.Uid, sys.Gid
	}
	f.batch = hasDirectives(data)
	return f, ""
}

// isShell: a #! line naming a shell, a shell file name, or no #! line
// and #SBATCH directives (sbatch runs those with /bin/sh... once it has
// a #! line; the audit still reads them).
func isShell(path string, data []byte) bool {
	if bytes.HasPrefix(data, []byte("#!")) {
		first := string(data[:max(bytes.IndexByte(data, '\n'), 0)])
		for _, sh := range []string{"sh", "bash", "zsh", "ksh", "dash", "mksh", "ash"} {
			if strings.HasSuffix(strings.Fields(first + " x")[0], "/"+sh) || strings.Contains(first, "env "+sh) {
				return true
			}
		}
		return false
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".sh", ".bash", ".slurm", ".sbatch", ".job", ".batch", ".ksh", ".zsh":
		return true
	case ".py", ".r", ".pl", ".pm", ".rb", ".js", ".go", ".c", ".h", ".html", ".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".xml", ".tmpl", ".in":
		return false
	}
	return hasDirectives(data)
}

// hasDirectives reports whether sbatch reads #SBATCH lines from data
// (a template's, once its code is taken out).
func hasDirectives(data []byte) bool {
	data, _ = untemplate(data)
	return len(directives(data)) > 0
}

// directives are the #SBATCH (and #SLURM) lines sbatch reads from data,
// where it reads them: from the top, up to the first command. Where a
// release reads them differently the differences are in quoting and
// errors, not in which lines are read: the latest release's reading is
// used to find them.
func directives(data []byte) []jobopt.Directive {
	return jobopt.ScanScript(data, codec.V26_05, "script").Directives
}

func (a *Auditor) ids(f *file) (uint32, uint32) {
	uid, gid := f.uid, f.gid
	if a.UID != nil {
		uid = *a.UID
	}
	if a.GID != nil {
		gid = *a.GID
	}
	return uid, gid
}

func (a *Auditor) env() []string {
	env := append([]string(nil), a.Env...)
	has := func(k string) bool {
		for _, e := range env {
			if strings.HasPrefix(e, k+"=") {
				return true
			}
		}
		return false
	}
	if !has("PATH") {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	if !has("HOME") {
		env = append(env, "HOME=/")
	}
	if !has("DISPLAY") {
		// Users run srun --x11 from a desktop or ssh -X: the client
		// refuses it without a display before asking anything.
		env = append(env, "DISPLAY=localhost:10.0")
	}
	return env
}

// script classifies a batch script submitted as "sbatch FILE".
func (a *Auditor) script(f *file) Job {
	j := Job{File: f.path, Kind: "script", Client: "sbatch"}
	data, unresolved := placeholders(f.data, false)
	j.Unresolved = unresolved
	uid, gid := a.ids(f)
	j.Args = []string{filepath.Base(f.path)}
	in := jobopt.Input{Args: j.Args, Script: data, Env: a.env(), Cwd: filepath.Dir(f.path),
		UID: uid, GID: gid, Version: a.Version, Now: a.Now, GresTypes: a.GresTypes}
	a.classify(&j, "sbatch", in)
	return j
}

// call classifies one sbatch/srun/salloc call of a wrapper.
func (a *Auditor) call(f *file, c command, prog string, args []word, byPath map[string]*file, all []command) Job {
	j := Job{File: f.path, Line: c.line, Kind: "command", Client: prog}
	var argv []string
	var text []string
	var made *heredoc // the script, made by <(cat <<EOF …)
	for i := 0; i < len(args); i++ {
		w := args[i]
		text = append(text, w.text)
		if w.from > 0 && w.from <= len(all) && all[w.from-1].stdin != nil && prog == "sbatch" && scriptArg(wordsOf(argv)) == "" {
			made = all[w.from-1].stdin
			argv = append(argv, "MADE-SCRIPT")
			continue
		}
		if !w.dynamic {
			argv = append(argv, w.text)
			continue
		}
		// A value only the running script knows: the option is left
		// out (and listed), so that the rest can be checked.
		switch {
		case strings.HasPrefix(w.text, "--") && strings.Contains(w.text, "="):
			j.Unresolved = append(j.Unresolved, w.text[:strings.IndexByte(w.text, '=')])
		case strings.HasPrefix(w.text, "-") && len(w.text) > 2 && !strings.HasPrefix(w.text, "--"):
			j.Unresolved = append(j.Unresolved, w.text[:2])
		case len(argv) > 0 && strings.HasPrefix(argv[len(argv)-1], "-") && !strings.Contains(argv[len(argv)-1], "=") && takesValue(prog, argv[len(argv)-1]):
			j.Unresolved = append(j.Unresolved, argv[len(argv)-1])
			argv = argv[:len(argv)-1]
		default:
			j.Unresolved = append(j.Unresolved, w.text)
			if prog == "sbatch" && scriptArg(wordsOf(argv)) == "" {
				// The script itself is only known at run time.
				argv = append(argv, "UNRESOLVED-SCRIPT")
			}
		}
	}
	j.Command = prog + " " + strings.Join(text, " ")
	j.Args = argv
	uid, gid := a.ids(f)
	in := jobopt.Input{Args: argv, Env: a.env(), Cwd: filepath.Dir(f.path), UID: uid, GID: gid,
		Version: a.Version, Now: a.Now, GresTypes: a.GresTypes}
	if prog == "sbatch" {
		switch s := scriptArg(wordsOf(argv)); {
		case s == "UNRESOLVED-SCRIPT":
			in.Script = []byte("#!/bin/sh\n")
		case s == "MADE-SCRIPT":
			j.Kind = "heredoc"
			body, un := placeholders([]byte(made.body), made.expand)
			in.Script = body
			j.Unresolved = append(j.Unresolved, un...)
		case s != "":
			if g := byPath[resolve(f.path, s)]; g != nil {
				in.Script, _ = placeholders(g.data, false)
			} else if data, err := readRegular(resolve(f.path, s)); err == nil {
				in.Script = data
			} else {
				j.Unresolved = append(j.Unresolved, "script "+s+" (not found beside the wrapper)")
				in.Script = []byte("#!/bin/sh\n")
			}
		case c.stdin != nil:
			j.Kind = "heredoc"
			body, un := placeholders([]byte(c.stdin.body), c.stdin.expand)
			in.Stdin = body
			j.Unresolved = append(j.Unresolved, un...)
		}
	}
	a.classify(&j, prog, in)
	return j
}

// readRegular reads a script a wrapper names outside the walked paths:
// a regular file only, never through a symbolic link (the audit may run
// as root over users' directories).
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return io.ReadAll(f)
}

func wordsOf(ss []string) []word {
	ws := make([]word, len(ss))
	for i, s := range ss {
		ws[i] = word{text: s}
	}
	return ws
}

// takesValue reports whether a client's option (as written) takes a
// separate value.
func takesValue(prog, opt string) bool {
	return jobopt.TakesValue(prog, opt, codec.V26_05)
}

// scriptArg is sbatch's script argument: the first word that is not an
// option or an option's value; "" when there is none (--wrap, stdin).
func scriptArg(args []word) string {
	for i := 0; i < len(args); i++ {
		w := args[i].text
		if w == "--" {
			if i+1 < len(args) {
				return args[i+1].text
			}
			return ""
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			return w
		}
		if !strings.Contains(w, "=") && takesValue("sbatch", w) {
			i++
		}
	}
	return ""
}

// resolve makes a script path of a wrapper absolute, from the wrapper's
// directory (where such wrappers are run from, as a rule).
func resolve(wrapper, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(wrapper), p)
}

// placeholders comments out the #SBATCH lines whose values are only
// known when the file is made or run: template placeholders ({{x}},
// <%= x %>, @X@, #X#), and, in a here-document the shell expands, $
// expansions. It returns the option each such line set.
func placeholders(data []byte, expand bool) ([]byte, []string) {
	data, unresolved := untemplate(data)
	changed := len(unresolved) > 0
	lines := strings.SplitAfter(string(data), "\n")
	for _, d := range directives(data) {
		ln := lines[d.Line-1]
		if !dynamicValue(d.Text, expand) {
			continue
		}
		opt := strings.Fields(d.Text + " x")[0]
		if i := strings.IndexByte(opt, '='); i > 0 {
			opt = opt[:i]
		}
		unresolved = append(unresolved, opt)
		lines[d.Line-1] = "#-" + ln[1:] // no longer a directive; the line numbers stay
		changed = true
	}
	if !changed {
		return data, nil
	}
	return []byte(strings.Join(lines, "")), unresolved
}

func dynamicValue(s string, expand bool) bool {
	if strings.Contains(s, "{{") || strings.Contains(s, "<%") {
		return true
	}
	if expand && strings.ContainsAny(s, "$`") {
		return true
	}
	for _, mark := range []string{"@", "#"} {
		rest := s
		for {
			i := strings.Index(rest, mark)
			if i < 0 {
				break
			}
			k := strings.Index(rest[i+1:], mark)
			if k < 0 {
				break
			}
			if isPlaceholder(rest[i+1 : i+1+k]) {
				return true
			}
			rest = rest[i+1:]
		}
	}
	return false
}

// untemplate takes a brew/ERB template's code out (batchtools' and
// future.batchtools' job templates): <% … %> blocks become blank lines
// (so that line numbers stay), and a line that is only a <%= … %>
// expression (which may print an #SBATCH line, or nothing) is blanked
// and reported as unresolved. What is left is read as the rendered
// script would be, its <%= %> values marked by placeholders.
func untemplate(data []byte) ([]byte, []string) {
	s := string(data)
	if !strings.Contains(s, "<%") {
		return data, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "<%")
		if i < 0 {
			b.WriteString(s)
			break
		}
		if strings.HasPrefix(s[i:], "<%=") {
			b.WriteString(s[:i+3])
			s = s[i+3:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.Index(s[i:], "%>")
		if end < 0 {
			// An unclosed block runs to the end: its lines stay, blank.
			b.WriteString(strings.Repeat("\n", strings.Count(s[i:], "\n")))
			break
		}
		b.WriteString(strings.Repeat("\n", strings.Count(s[i:i+end], "\n")))
		s = s[i+end+2:]
	}
	lines := strings.SplitAfter(b.String(), "\n")
	var unresolved []string
	for n, ln := range lines {
		t := strings.TrimSpace(ln)
		blank := ln[len(strings.TrimRight(ln, "\n")):] // the line's own end, if it has one
		if strings.HasPrefix(t, "<%=") && strings.HasSuffix(t, "%>") && strings.Count(t, "<%") == 1 {
			unresolved = append(unresolved, fmt.Sprintf("template line %d", n+1))
			lines[n] = blank
		} else if t == "-" || t == "-%>" {
			lines[n] = blank
		}
	}
	return []byte(strings.Join(lines, "")), unresolved
}

// isPlaceholder: an upper-case name, as JUBE's #NODES# or autoconf's
// @NODES@.
func isPlaceholder(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// classify parses the call as the client does and asks the checks.
func (a *Auditor) classify(j *Job, prog string, in jobopt.Input) {
	res, err := parse(prog, in)
	if err != nil {
		var ce *jobopt.ClientError
		if errors.As(err, &ce) {
			j.Verdict = Refused
			j.Findings = append(j.Findings, Finding{Option: ce.Option, Verdict: Refused,
				Reason:  prog + " itself refuses this, as it would on Slurm",
				Message: strings.Join(ce.Lines, "\n")})
			return
		}
		j.Verdict = Refused
		j.Findings = append(j.Findings, Finding{Verdict: Refused, Reason: err.Error()})
		return
	}
	// What the client would also read from files or the system (a
	// --nodefile, #PBS lines): left to run time, as shell values are.
	j.Unresolved = append(j.Unresolved, res.Unmodelled...)
	for _, u := range res.Uses {
		j.Options = append(j.Options, OptionUse{Name: u.Name, Written: u.Written, Value: u.Value, Source: source(u)})
	}
	for _, u := range res.Client {
		j.Options = append(j.Options, OptionUse{Name: u.Name, Written: u.Written, Value: u.Value, Source: source(u)})
	}
	diffs, err := a.check(prog, in, res)
	if err != nil {
		j.Verdict = Refused
		j.Findings = append(j.Findings, a.refusal(prog, in, res, err))
		return
	}
	j.Verdict = Unchanged
	for _, d := range diffs {
		j.Verdict = Difference
		j.Findings = append(j.Findings, Finding{Option: d.Option, Verdict: Difference, Reason: d.Text})
	}
}

func source(u jobopt.Use) string {
	if u.Source == "#SBATCH" && u.Line > 0 {
		return fmt.Sprintf("#SBATCH line %d", u.Line)
	}
	return u.Source
}

func parse(prog string, in jobopt.Input) (*jobopt.Result, error) {
	switch prog {
	case "salloc":
		return jobopt.Salloc(in)
	case "srun":
		return jobopt.Srun(in)
	}
	return jobopt.Sbatch(in)
}

// check asks the server's checks about each job the call makes.
func (a *Auditor) check(prog string, in jobopt.Input, res *jobopt.Result) ([]ctld.Difference, error) {
	if len(res.Jobs) > 1 {
		if err := a.Check.CheckHetSubmit(); err != nil {
			return nil, err
		}
	}
	var out []ctld.Difference
	for i := range res.Jobs {
		d := res.Jobs[i]
		var diffs []ctld.Difference
		var err error
		if prog == "sbatch" {
			diffs, err = a.Check.CheckSubmit(&d, in.UID, in.GID, a.Version)
		} else {
			diffs, err = a.Check.CheckAllocation(&d, in.UID, in.GID, a.Version)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, diffs...)
	}
	return out, nil
}

// refusal describes a refused job: the error the client would print,
// and the option that causes it, found by asking the checks again
// without each option in turn.
func (a *Auditor) refusal(prog string, in jobopt.Input, res *jobopt.Result, err error) Finding {
	code := codec.CodeOf(err)
	reason := err.Error()
	var ce *codec.Error
	if errors.As(err, &ce) {
		reason = ce.Msg
	}
	f := Finding{Verdict: Refused, SlurmError: codec.ErrorName(code), Code: code, Reason: reason}
	var lines []string
	if t := ctld.RefusalText(err); t != "" {
		lines = append(lines, prog+": error: "+t)
	}
	what := "Batch job submission failed"
	if prog != "sbatch" {
		what = "Job submit/allocate failed"
	}
	lines = append(lines, prog+": error: "+what+": "+codec.ErrorText(code))
	f.Message = strings.Join(lines, "\n")
	tried := map[string]bool{}
	for _, u := range res.Uses {
		if tried[u.Name] {
			continue
		}
		tried[u.Name] = true
		in2, res2, ok := withoutAll(prog, in, res, u.Name)
		if !ok {
			continue
		}
		if _, err2 := a.check(prog, in2, res2); err2 == nil || codec.CodeOf(err2) != code {
			f.Option = u.Name
			break
		}
	}
	return f
}

// withoutAll is the call with every setting of the option taken out (a
// command-line option hides the same option's #SBATCH line and
// variable: each is taken out in turn), parsed again.
func withoutAll(prog string, in jobopt.Input, res *jobopt.Result, name string) (jobopt.Input, *jobopt.Result, bool) {
	for range 8 {
		var use *jobopt.Use
		for i := range res.Uses {
			if res.Uses[i].Name == name {
				use = &res.Uses[i]
				break
			}
		}
		if use == nil {
			return in, res, true
		}
		in2, ok := without(in, *use)
		if !ok {
			return in, res, false
		}
		res2, err := parse(prog, in2)
		if err != nil {
			return in, res, false
		}
		in, res = in2, res2
	}
	return in, res, false
}

// without is the call with one option taken out: its #SBATCH line
// commented out, its command-line words removed, or its variable unset.
func without(in jobopt.Input, u jobopt.Use) (jobopt.Input, bool) {
	out := in
	switch {
	case u.Source == "#SBATCH" && u.Line > 0:
		script := in.Script
		if script == nil {
			script = in.Stdin
		}
		lines := strings.SplitAfter(string(script), "\n")
		if u.Line > len(lines) {
			return in, false
		}
		lines[u.Line-1] = "#-" + lines[u.Line-1][1:]
		if in.Script != nil {
			out.Script = []byte(strings.Join(lines, ""))
		} else {
			out.Stdin = []byte(strings.Join(lines, ""))
		}
	case u.Source == "command line":
		args := append([]string(nil), in.Args...)
		for i, w := range args {
			switch {
			case w == u.Written && i+1 < len(args) && args[i+1] == u.Value && u.Value != "":
				out.Args = append(args[:i:i], args[i+2:]...)
			case w == u.Written, w == u.Written+"="+u.Value, w == u.Written+u.Value:
				out.Args = append(args[:i:i], args[i+1:]...)
			default:
				continue
			}
			return out, true
		}
		return in, false
	case strings.HasPrefix(u.Source, "SBATCH_") || strings.HasPrefix(u.Source, "SALLOC_") || strings.HasPrefix(u.Source, "SLURM_"):
		out.Env = nil
		for _, e := range in.Env {
			if !strings.HasPrefix(e, u.Source+"=") {
				out.Env = append(out.Env, e)
			}
		}
	default:
		return in, false
	}
	return out, true
}

// summarize counts jobs by verdict, overall and per option (an option
// counts under the job's verdict; a finding's option under its own).
func summarize(jobs []Job) Summary {
	s := Summary{Jobs: len(jobs)}
	by := map[string]*OptionCount{}
	count := func(opt string, v Verdict) {
		c := by[opt]
		if c == nil {
			c = &OptionCount{Option: opt}
			by[opt] = c
		}
		switch v {
		case Unchanged:
			c.Unchanged++
		case Difference:
			c.Difference++
		case Refused:
			c.Refused++
		}
	}
	for _, j := range jobs {
		switch j.Verdict {
		case Unchanged:
			s.Unchanged++
		case Difference:
			s.Difference++
		case Refused:
			s.Refused++
		}
		seen := map[string]bool{}
		for _, f := range j.Findings {
			if f.Option != "" && !seen[f.Option] {
				seen[f.Option] = true
				count(f.Option, f.Verdict)
			}
		}
		for _, o := range j.Options {
			if !seen[o.Name] {
				seen[o.Name] = true
				count(o.Name, Unchanged)
			}
		}
	}
	for _, c := range by {
		s.ByOption = append(s.ByOption, *c)
	}
	sort.Slice(s.ByOption, func(i, k int) bool {
		a, b := s.ByOption[i], s.ByOption[k]
		if a.Refused != b.Refused {
			return a.Refused > b.Refused
		}
		if a.Difference != b.Difference {
			return a.Difference > b.Difference
		}
		if a.Unchanged != b.Unchanged {
			return a.Unchanged > b.Unchanged
		}
		return a.Option < b.Option
	})
	return s
}
