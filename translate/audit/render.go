package audit

// The audit's three outputs. The terminal summary is what an operator reads
// first, so it leads with the counts and the options to act on and lists
// only the jobs that change. JSON is the Report itself, for scripts. The
// HTML file is what gets mailed to the people who decide on the switch:
// one self-contained file (inline CSS and JS, no external URL, a CSP that
// forbids loading any) that opens offline in any browser.
//
// All three read the same view (newView), so they agree on the ordering:
// refusals before differences, most refusals first.

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

var errNoReport = errors.New("audit: no report to write")

// topOptions is how many options the HTML chart shows.
const topOptions = 10

// verdictKey is a verdict's short name, for CSS classes and chart colours.
func verdictKey(v Verdict) string {
	switch v {
	case Unchanged:
		return "unchanged"
	case Difference:
		return "difference"
	case Refused:
		return "refused"
	}
	return "other"
}

// verdictRank orders jobs in listings: refused first.
func verdictRank(v Verdict) int {
	switch v {
	case Refused:
		return 0
	case Difference:
		return 1
	case Unchanged:
		return 2
	}
	return 3
}

// share is n of total as a percentage; "-" when there is nothing to share.
func share(n, total int) string {
	if total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(total))
}

// verdictCount is one verdict's line in a summary.
type verdictCount struct {
	Verdict Verdict
	Key     string
	Count   int
	Share   string
}

func verdictCounts(unchanged, difference, refused, total int) []verdictCount {
	n := map[Verdict]int{Unchanged: unchanged, Difference: difference, Refused: refused}
	rows := make([]verdictCount, 0, len(Verdicts))
	for _, v := range Verdicts {
		rows = append(rows, verdictCount{v, verdictKey(v), n[v], share(n[v], total)})
	}
	return rows
}

// optionRow is one option: how many jobs use it, how many of those it
// makes refused or different, and what the findings say about it.
// Unchanged, Difference and Refused are the jobs whose verdict the option
// causes (Unchanged: jobs using it where it changes nothing), so that a
// common option such as --time does not look like a cause of refusals
// just because refused jobs use it too.
type optionRow struct {
	OptionCount
	Jobs   int      // jobs using it
	Errors []string // distinct Slurm errors of its findings, "ESLURM_X (2052)"
	Reason string   // the reason of its first refusal, else of its first difference
}

// Label names the option; findings about the request as a whole have none.
func (o optionRow) Label() string { return optionLabel(o.Option) }

func optionLabel(opt string) string {
	if opt == "" {
		return "(whole request)"
	}
	return opt
}

// ErrorText is the option's Slurm errors on one line.
func (o optionRow) ErrorText() string { return strings.Join(o.Errors, ", ") }

// Problem reports whether the option causes any refusal or difference.
func (o optionRow) Problem() bool { return o.Refused+o.Difference > 0 }

// errorText is a finding's Slurm error with its number.
func errorText(f Finding) string {
	switch {
	case f.SlurmError != "" && f.Code != 0:
		return fmt.Sprintf("%s (%d)", f.SlurmError, f.Code)
	case f.SlurmError != "":
		return f.SlurmError
	case f.Code != 0:
		return fmt.Sprintf("error %d", f.Code)
	}
	return ""
}

// findingInfo is what the findings say about one option, across all jobs.
type findingInfo struct {
	errors     []string
	reason     string
	reasonRank int
	caused     map[Verdict]int // jobs by the worst verdict of their findings on the option
}

func collectFindings(jobs []Job) map[string]*findingInfo {
	info := map[string]*findingInfo{}
	for _, j := range jobs {
		worst := map[string]Verdict{}
		for _, f := range j.Findings {
			fi := info[f.Option]
			if fi == nil {
				fi = &findingInfo{reasonRank: 99, caused: map[Verdict]int{}}
				info[f.Option] = fi
			}
			if e := errorText(f); e != "" && !slices.Contains(fi.errors, e) {
				fi.errors = append(fi.errors, e)
			}
			rank := verdictRank(f.Verdict)
			if f.Reason != "" && rank < fi.reasonRank {
				fi.reason, fi.reasonRank = f.Reason, rank
			}
			if w, ok := worst[f.Option]; !ok || rank < verdictRank(w) {
				worst[f.Option] = f.Verdict
			}
		}
		for opt, v := range worst {
			info[opt].caused[v]++
		}
	}
	return info
}

// scriptOptions is one row per option of the scripts: the jobs using it
// from the summary, what it causes from the findings. Options only in
// findings (a refusal of the whole request) get a row too.
func scriptOptions(counts []OptionCount, info map[string]*findingInfo) []optionRow {
	used := map[string]int{}
	var names []string
	for _, c := range counts {
		if _, ok := used[c.Option]; !ok {
			names = append(names, c.Option)
		}
		used[c.Option] += c.Unchanged + c.Difference + c.Refused
	}
	for opt := range info {
		if _, ok := used[opt]; !ok {
			names = append(names, opt)
			used[opt] = 0
		}
	}
	rows := make([]optionRow, 0, len(names))
	for _, opt := range names {
		row := optionRow{OptionCount: OptionCount{Option: opt}, Jobs: used[opt]}
		if fi := info[opt]; fi != nil {
			row.Refused, row.Difference = fi.caused[Refused], fi.caused[Difference]
			row.Errors, row.Reason = fi.errors, fi.reason
		}
		row.Jobs = max(row.Jobs, row.Refused+row.Difference)
		row.Unchanged = row.Jobs - row.Refused - row.Difference
		rows = append(rows, row)
	}
	sortOptions(rows)
	return rows
}

// historyOptions is one row per option of the accounting history, whose
// jobs have no findings: its counts are taken as they are; the errors and
// reasons, where the scripts have the option too, from their findings.
func historyOptions(counts []OptionCount, info map[string]*findingInfo) []optionRow {
	rows := make([]optionRow, 0, len(counts))
	for _, c := range counts {
		row := optionRow{OptionCount: c, Jobs: c.Unchanged + c.Difference + c.Refused}
		if fi := info[c.Option]; fi != nil {
			row.Errors, row.Reason = fi.errors, fi.reason
		}
		rows = append(rows, row)
	}
	sortOptions(rows)
	return rows
}

func sortOptions(rows []optionRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Refused != b.Refused {
			return a.Refused > b.Refused
		}
		if a.Difference != b.Difference {
			return a.Difference > b.Difference
		}
		if a.Jobs != b.Jobs {
			return a.Jobs > b.Jobs
		}
		return a.Option < b.Option
	})
}

// userRow is one user's past jobs with their top refused options.
type userRow struct {
	UserCount
	Share string // refused of the user's jobs
	Top   string // "--reservation 15, --gres 5"
}

// maxUserOptions is how many of a user's refused options are named.
const maxUserOptions = 3

func userRows(users []UserCount) []userRow {
	rows := make([]userRow, 0, len(users))
	for _, u := range users {
		type kv struct {
			k string
			v int
		}
		var opts []kv
		for k, v := range u.ByOption {
			opts = append(opts, kv{k, v})
		}
		sort.Slice(opts, func(i, j int) bool {
			if opts[i].v != opts[j].v {
				return opts[i].v > opts[j].v
			}
			return opts[i].k < opts[j].k
		})
		var top []string
		for i, o := range opts {
			if i == maxUserOptions {
				top = append(top, fmt.Sprintf("(+%d more)", len(opts)-i))
				break
			}
			top = append(top, fmt.Sprintf("%s %d", o.k, o.v))
		}
		rows = append(rows, userRow{u, share(u.Refused, u.Jobs), strings.Join(top, ", ")})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Refused != b.Refused {
			return a.Refused > b.Refused
		}
		if a.Jobs != b.Jobs {
			return a.Jobs > b.Jobs
		}
		return a.User < b.User
	})
	return rows
}

// view is the report as the outputs show it: counts with shares, options
// and jobs in listing order.
type view struct {
	R        *Report
	Verdicts []verdictCount
	Options  []optionRow
	Jobs     []Job // refused first, then by file and line
	History  *historyView
}

type historyView struct {
	*History
	Verdicts []verdictCount
	Users    []userRow
	Options  []optionRow
}

func newView(r *Report) *view {
	s := r.Summary
	info := collectFindings(r.Jobs)
	v := &view{
		R:        r,
		Verdicts: verdictCounts(s.Unchanged, s.Difference, s.Refused, s.Jobs),
		Options:  scriptOptions(s.ByOption, info),
	}
	v.Jobs = append([]Job(nil), r.Jobs...)
	sort.SliceStable(v.Jobs, func(i, j int) bool {
		a, b := v.Jobs[i], v.Jobs[j]
		if ra, rb := verdictRank(a.Verdict), verdictRank(b.Verdict); ra != rb {
			return ra < rb
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	if h := r.History; h != nil {
		v.History = &historyView{
			History:  h,
			Verdicts: verdictCounts(h.Unchanged, h.Difference, h.Refused, h.Jobs),
			Users:    userRows(h.ByUser),
			Options:  historyOptions(h.ByOption, info),
		}
	}
	return v
}

// problems are the options causing a refusal or a difference.
func problems(rows []optionRow) []optionRow {
	var out []optionRow
	for _, o := range rows {
		if o.Problem() {
			out = append(out, o)
		}
	}
	return out
}

func jobPlace(j Job) string {
	if j.Line > 0 {
		return j.File + ":" + strconv.Itoa(j.Line)
	}
	return j.File
}

func (v *view) generated() string {
	if v.R.Generated.IsZero() {
		return "-"
	}
	return v.R.Generated.Format("2006-01-02 15:04:05 MST")
}

// ---- text ------------------------------------------------------------------

// clean makes a string safe to print on a terminal in a tab-aligned
// column: file names and messages come from the site's files, and a tab,
// a newline or an escape sequence in one would break the table or drive
// the terminal. Control and bidi-format characters are written escaped.
func clean(s string) string {
	bad := func(r rune) bool {
		return r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf)
	}
	if !strings.ContainsFunc(s, bad) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case bad(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// oneLine is the first line of a reason, for a table cell.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return clean(s)
}

// textTable is a table of the terminal summary. Columns are padded by
// display width rather than with text/tabwriter, which counts runes: a
// Korean or Japanese file name is twice as wide on a terminal as its rune
// count, and would push the rest of its row out of line.
type textTable struct {
	right []bool // columns aligned right (counts)
	rows  [][]string
}

func (t *textTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(b *strings.Builder) {
	var widths []int
	for _, row := range t.rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	for _, row := range t.rows {
		var line strings.Builder
		line.WriteString("  ")
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-displayWidth(c))
			if i < len(t.right) && t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
			line.WriteString("  ")
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}

// displayWidth is how many terminal columns s takes: East Asian wide
// characters take two, combining marks none (the usual wcwidth ranges).
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me) || r == 0x200B:
		case wide(r):
			w += 2
		default:
			w++
		}
	}
	return w
}

func wide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115F || r == 0x2329 || r == 0x232A ||
		(r >= 0x2E80 && r <= 0xA4CF && r != 0x303F) || (r >= 0xAC00 && r <= 0xD7A3) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0xFE10 && r <= 0xFE19) || (r >= 0xFE30 && r <= 0xFE6F) ||
		(r >= 0xFF00 && r <= 0xFF60) || (r >= 0xFFE0 && r <= 0xFFE6) ||
		(r >= 0x1F300 && r <= 0x1F64F) || (r >= 0x1F900 && r <= 0x1F9FF) ||
		(r >= 0x20000 && r <= 0x3FFFD))
}

// WriteText writes the terminal summary: counts per verdict, the options
// that cause refusals and differences, then the jobs, refused first. With
// verbose false only the jobs that do not run unchanged are listed one by
// one (and skipped files are only counted).
func WriteText(w io.Writer, r *Report, verbose bool) error {
	if r == nil {
		return errNoReport
	}
	v := newView(r)
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }

	s := r.Summary
	p("slurm-frontend audit: %d %s in %d %s", s.Jobs, plural(s.Jobs, "job", "jobs"), r.Files, plural(r.Files, "file", "files"))
	if len(r.Skipped) > 0 {
		p(" (%d skipped)", len(r.Skipped))
	}
	p("\n")
	paths := make([]string, len(r.Paths))
	for i, x := range r.Paths {
		paths[i] = clean(x)
	}
	head := textTable{}
	head.add("generated", v.generated())
	head.add("config", clean(r.Config))
	head.add("backend", clean(r.Backend))
	head.add("client release", clean(r.Release))
	head.add("paths", strings.Join(paths, ", "))
	head.write(&b)

	p("\nVerdicts\n")
	verdictTable(v.Verdicts, s.Jobs).write(&b)

	if opts := problems(v.Options); len(opts) > 0 {
		p("\nOptions that cause refusals or differences (jobs)\n")
		optionTable(opts).write(&b)
	}

	listed := 0
	for _, verdict := range []Verdict{Refused, Difference, Unchanged} {
		var jobs []Job
		for _, j := range v.Jobs {
			if j.Verdict == verdict {
				jobs = append(jobs, j)
			}
		}
		if len(jobs) == 0 || (verdict == Unchanged && !verbose) {
			continue
		}
		listed += len(jobs)
		p("\n%s (%d %s)\n", upperFirst(string(verdict)), len(jobs), plural(len(jobs), "job", "jobs"))
		jobTable(jobs).write(&b)
	}
	// Verdicts the model does not know of (a newer walker) still get listed.
	var other []Job
	for _, j := range v.Jobs {
		if verdictRank(j.Verdict) == 3 {
			other = append(other, j)
		}
	}
	if len(other) > 0 {
		listed += len(other)
		p("\nOther verdicts (%d %s)\n", len(other), plural(len(other), "job", "jobs"))
		jobTable(other).write(&b)
	}
	if n := len(v.Jobs) - listed; n > 0 {
		p("\n%d %s unchanged (not listed; -v lists them)\n", n, plural(n, "job runs", "jobs run"))
	}
	if len(v.Jobs) == 0 {
		p("\nNo jobs found.\n")
	}

	if len(r.Skipped) > 0 {
		if verbose {
			p("\nSkipped files (%d)\n", len(r.Skipped))
			t := textTable{}
			t.add("FILE", "REASON")
			for _, sk := range r.Skipped {
				t.add(clean(sk.File), oneLine(sk.Reason))
			}
			t.write(&b)
		} else {
			p("\n%d %s skipped (-v lists them)\n", len(r.Skipped), plural(len(r.Skipped), "file", "files"))
		}
	}

	if h := v.History; h != nil {
		p("\nHistory: %d past jobs from %s\n", h.Jobs, clean(h.Source))
		verdictTable(h.Verdicts, h.Jobs).write(&b)
		if len(h.Users) > 0 {
			p("\n")
			t := textTable{right: []bool{false, true, true, true, true}}
			t.add("USER", "JOBS", "WOULD BE REFUSED", "SHARE", "DIFFERENT", "TOP REFUSED OPTIONS")
			for _, u := range h.Users {
				t.add(clean(u.User), strconv.Itoa(u.Jobs), strconv.Itoa(u.Refused), u.Share, strconv.Itoa(u.Different), clean(u.Top))
			}
			t.write(&b)
		}
		if opts := problems(h.Options); len(opts) > 0 {
			p("\n")
			optionTable(opts).write(&b)
		}
	}

	_, err := io.WriteString(w, b.String())
	return err
}

func verdictTable(rows []verdictCount, total int) *textTable {
	t := &textTable{right: []bool{false, true, true}}
	for _, c := range rows {
		t.add(string(c.Verdict), strconv.Itoa(c.Count), c.Share)
	}
	t.add("total", strconv.Itoa(total))
	return t
}

func optionTable(rows []optionRow) *textTable {
	t := &textTable{right: []bool{false, true, true, true}}
	t.add("OPTION", "JOBS USING IT", "REFUSED", "DIFFERENT", "SLURM ERROR", "REASON")
	for _, o := range rows {
		t.add(clean(o.Label()), strconv.Itoa(o.Jobs), strconv.Itoa(o.Refused), strconv.Itoa(o.Difference), clean(o.ErrorText()), oneLine(o.Reason))
	}
	return t
}

// jobTable has one row per finding; the job's own cells only on its first
// row, so that each job reads as one block.
func jobTable(jobs []Job) *textTable {
	t := &textTable{}
	t.add("FILE:LINE", "CLIENT", "OPTION", "SLURM ERROR", "MESSAGE OR REASON")
	for _, j := range jobs {
		place, client := clean(jobPlace(j)), clean(j.Client)
		row := func(opt, err, msg string) {
			t.add(place, client, opt, err, msg)
			place, client = "", ""
		}
		for _, f := range j.Findings {
			opt := optionLabel(f.Option)
			if f.Verdict != j.Verdict {
				opt += " (" + verdictKey(f.Verdict) + ")"
			}
			msg := f.Message
			if msg == "" {
				msg = f.Reason
			}
			row(clean(opt), clean(errorText(f)), oneLine(msg))
		}
		if len(j.Unresolved) > 0 {
			names := make([]string, len(j.Unresolved))
			for i, u := range j.Unresolved {
				names[i] = clean(u)
			}
			row(strings.Join(names, ", "), "", "value known only at run time")
		}
		if place != "" { // no finding at all
			row("", "", "")
		}
	}
	return t
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// ---- JSON ------------------------------------------------------------------

// WriteJSON writes the report as indented JSON, fields in struct order.
// Empty lists are written as [] rather than null, so that `jq '.jobs[]'`
// works on an empty audit too; < > & are left as they are (the output is
// not meant to be pasted into HTML).
func WriteJSON(w io.Writer, r *Report) error {
	if r == nil {
		return errNoReport
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(forJSON(r))
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// forJSON is a copy of r with empty lists instead of nil ones.
func forJSON(r *Report) *Report {
	c := *r
	c.Paths = orEmpty(r.Paths)
	c.Jobs = make([]Job, len(r.Jobs))
	for i, j := range r.Jobs {
		j.Options = orEmpty(j.Options)
		c.Jobs[i] = j
	}
	c.Summary.ByOption = orEmpty(r.Summary.ByOption)
	if r.History != nil {
		h := *r.History
		h.ByUser = orEmpty(h.ByUser)
		h.ByOption = orEmpty(h.ByOption)
		c.History = &h
	}
	return &c
}

// ---- HTML ------------------------------------------------------------------

var (
	//go:embed templates/report.html.tmpl
	htmlTemplate string
	//go:embed templates/report.css
	reportCSS string
	//go:embed templates/report.js
	reportJS string
)

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"key":       verdictKey,
	"errorText": errorText,
	"place":     jobPlace,
	"label":     optionLabel,
	"join":      func(s []string) string { return strings.Join(s, ", ") },
}).Parse(htmlTemplate))

// contentPolicy lets the page run its own script and style, and load
// nothing else: the file stays self-contained even if a string in it were
// ever to escape its escaping.
var contentPolicy = fmt.Sprintf("default-src 'none'; script-src 'sha256-%s'; style-src 'sha256-%s'; base-uri 'none'; form-action 'none'",
	hash(reportJS), hash(reportCSS))

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// chartData is what the page's script draws, embedded as JSON.
type chartData struct {
	Total    int            `json:"total"`
	Verdicts []chartVerdict `json:"verdicts"`
	Options  []chartOption  `json:"options"`
	History  *chartData     `json:"history,omitempty"`
}

type chartVerdict struct {
	Verdict Verdict `json:"verdict"`
	Key     string  `json:"key"`
	Count   int     `json:"count"`
}

type chartOption struct {
	Option     string `json:"option"`
	Refused    int    `json:"refused"`
	Difference int    `json:"difference"`
}

func newChartData(total int, verdicts []verdictCount, options []optionRow) *chartData {
	c := &chartData{Total: total, Verdicts: []chartVerdict{}, Options: []chartOption{}}
	for _, v := range verdicts {
		c.Verdicts = append(c.Verdicts, chartVerdict{v.Verdict, v.Key, v.Count})
	}
	for _, o := range problems(options) {
		if len(c.Options) == topOptions {
			break
		}
		c.Options = append(c.Options, chartOption{o.Label(), o.Refused, o.Difference})
	}
	return c
}

type htmlPage struct {
	*view
	Generated string
	Policy    string
	CSS       template.CSS
	JS        template.JS
	Data      *chartData
	Problems  []optionRow
	TopN      int // options in the chart
	// Problems of the history, for its chart.
	HistoryProblems []optionRow
}

// WriteHTML writes the report as one self-contained HTML page: summary
// and option charts (SVG drawn by an inline script from the embedded
// JSON, with a table for browsers without scripts), tables per option and
// per job (with a filter), and the history when the report has one.
func WriteHTML(w io.Writer, r *Report) error {
	if r == nil {
		return errNoReport
	}
	v := newView(r)
	page := htmlPage{
		view:      v,
		Generated: v.generated(),
		Policy:    contentPolicy,
		CSS:       template.CSS(reportCSS),
		JS:        template.JS(reportJS),
		Data:      newChartData(r.Summary.Jobs, v.Verdicts, v.Options),
		Problems:  problems(v.Options),
		TopN:      topOptions,
	}
	if h := v.History; h != nil {
		page.Data.History = newChartData(h.Jobs, h.Verdicts, h.Options)
		page.HistoryProblems = problems(h.Options)
	}
	var buf bytes.Buffer
	if err := reportTemplate.Execute(&buf, page); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
