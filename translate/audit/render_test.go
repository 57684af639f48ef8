package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	hostileFile = `jobs/<script>alert("x")</script>'q'.sh`
	unicodeFile = "jobs/données/ジョブ.sh"
	resvMessage = "sbatch: error: Batch job submission failed: Requested reservation is invalid"
)

func refusedResv() Finding {
	return Finding{Option: "--reservation", Verdict: Refused,
		Reason:     "reservations do not exist on Backend.AI",
		SlurmError: "ESLURM_RESERVATION_INVALID", Code: 2053, Message: resvMessage}
}

func memBind() Finding {
	return Finding{Option: "--mem-bind", Verdict: Difference,
		Reason: "ignored: Backend.AI places a session's memory itself"}
}

func opts(names ...string) []OptionUse {
	var o []OptionUse
	for _, n := range names {
		o = append(o, OptionUse{Name: n, Value: "x", Source: "#SBATCH line 2"})
	}
	return o
}

// sampleReport has 8 jobs: 3 refused (2 by --reservation, 1 by --gres),
// 2 with a difference, 3 unchanged; --time is used by every job and
// causes nothing. Jobs are in walk order, not in listing order.
func sampleReport() *Report {
	return &Report{
		Generated: time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC),
		Config:    "/etc/slurm/slurm.conf",
		Backend:   "embedded",
		Release:   "24.11",
		Paths:     []string{"/home/lab/jobs", "/opt/wrappers"},
		Files:     9,
		Jobs: []Job{
			{File: "jobs/a.sh", Kind: "script", Client: "sbatch", Options: opts("--time"), Verdict: Unchanged},
			{File: "jobs/prep.sh", Kind: "script", Client: "sbatch", Options: opts("--time", "--mem-bind"),
				Verdict: Difference, Findings: []Finding{memBind()}},
			{File: "jobs/train.sh", Kind: "script", Client: "sbatch", Options: opts("--time", "--reservation", "--mem-bind"),
				Verdict: Refused, Findings: []Finding{refusedResv(), memBind()}},
			{File: "wrappers/run_all.sh", Line: 12, Kind: "command", Client: "srun", Command: "srun --gres=gpu:a100:2 ./train",
				Options: opts("--time", "--gres"), Verdict: Refused,
				Findings: []Finding{{Option: "--gres", Verdict: Refused, Reason: "GPU type a100 is not in the cluster's gres.conf",
					SlurmError: "ESLURM_INVALID_GRES", Code: 2070,
					Message: "srun: error: Unable to allocate resources: Invalid generic resource (gres) specification"}}},
			{File: hostileFile, Kind: "script", Client: "sbatch", Options: opts("--time"), Verdict: Unchanged,
				Unresolved: []string{"--partition"}},
			{File: unicodeFile, Kind: "script", Client: "sbatch", Options: opts("--time", "--reservation"),
				Verdict: Refused, Findings: []Finding{refusedResv()}},
			{File: "jobs/mpi.sh", Kind: "script", Client: "sbatch", Options: opts("--time", "--exclusive"),
				Verdict: Difference, Findings: []Finding{{Option: "--exclusive", Verdict: Difference,
					Reason: "the node is not kept free of other sessions"}}},
			{File: "jobs/b.sh", Kind: "script", Client: "sbatch", Options: opts("--time"), Verdict: Unchanged},
		},
		Skipped: []Skipped{{File: "jobs/core.bin", Reason: "binary file"}},
		Summary: Summary{Jobs: 8, Unchanged: 3, Difference: 2, Refused: 3, ByOption: []OptionCount{
			{Option: "--time", Unchanged: 3, Difference: 2, Refused: 3},
			{Option: "--mem-bind", Difference: 1, Refused: 1},
			{Option: "--gres", Refused: 1},
			{Option: "--exclusive", Difference: 1},
			{Option: "--reservation", Refused: 2},
		}},
	}
}

func withHistory(r *Report) *Report {
	r.History = &History{
		Source: "/var/tmp/sacct-2025.txt", Jobs: 1000, Unchanged: 900, Difference: 60, Refused: 40,
		ByUser: []UserCount{
			{User: "bob", Jobs: 100, Refused: 5, ByOption: map[string]int{"--gres": 5}},
			{User: "alice", Jobs: 500, Refused: 30, Different: 12, ByOption: map[string]int{"--reservation": 20, "--gres": 6, "--licenses": 3, "--bb": 1}},
			{User: "<b>eve</b>", Jobs: 400, Refused: 5, Different: 48, ByOption: map[string]int{"--reservation": 5}},
		},
		ByOption: []OptionCount{
			{Option: "--gres", Unchanged: 100, Refused: 11},
			{Option: "--reservation", Refused: 25},
			{Option: "--licenses", Refused: 3},
			{Option: "--bb", Refused: 1},
			{Option: "--mem-bind", Unchanged: 5, Difference: 60},
		},
	}
	return r
}

func text(t *testing.T, r *Report, verbose bool) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r, verbose))
	return b.String()
}

// section is the text from the line starting with title to the next blank line.
func section(t *testing.T, out, title string) []string {
	t.Helper()
	i := strings.Index(out, "\n"+title)
	require.GreaterOrEqual(t, i, 0, "no section %q in:\n%s", title, out)
	rest := out[i+1:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return strings.Split(strings.TrimRight(rest, "\n"), "\n")
}

var spaces = regexp.MustCompile(`\s{2,}`)

// cells splits a tab-aligned line into its columns.
func cells(line string) []string { return spaces.Split(strings.TrimSpace(line), -1) }

func TestWriteTextSummary(t *testing.T) {
	out := text(t, sampleReport(), false)
	t.Log("\n" + out)

	assert.True(t, strings.HasPrefix(out, "slurm-frontend audit: 8 jobs in 9 files (1 skipped)\n"))
	assert.Contains(t, out, "2026-03-14 09:26:53 UTC")
	assert.Contains(t, out, "/home/lab/jobs, /opt/wrappers")

	v := section(t, out, "Verdicts")
	assert.Equal(t, []string{"runs unchanged", "3", "37.5%"}, cells(v[1]))
	assert.Equal(t, []string{"runs with a documented difference", "2", "25.0%"}, cells(v[2]))
	assert.Equal(t, []string{"refused", "3", "37.5%"}, cells(v[3]))
	assert.Equal(t, []string{"total", "8"}, cells(v[4]))

	// Most refusals first; --time, used by every job, causes nothing and
	// is not listed.
	o := section(t, out, "Options that cause refusals or differences")
	require.Len(t, o, 6, "%q", o)
	assert.Equal(t, []string{"OPTION", "JOBS USING IT", "REFUSED", "DIFFERENT", "SLURM ERROR", "REASON"}, cells(o[1]))
	assert.Equal(t, []string{"--reservation", "2", "2", "0", "ESLURM_RESERVATION_INVALID (2053)", "reservations do not exist on Backend.AI"}, cells(o[2]))
	assert.Equal(t, []string{"--gres", "1", "1", "0", "ESLURM_INVALID_GRES (2070)", "GPU type a100 is not in the cluster's gres.conf"}, cells(o[3]))
	assert.Equal(t, []string{"--mem-bind", "2", "0", "2", "ignored: Backend.AI places a session's memory itself"}, cells(o[4]))
	assert.Equal(t, "--exclusive", cells(o[5])[0])
	assert.NotContains(t, strings.Join(o, "\n"), "--time")
	// Aligned as a terminal shows them: names and text from the left,
	// counts from the right.
	head := spans(o[1])
	for _, line := range o[2:] {
		c := spans(line)
		assert.Equal(t, head[0][0], c[0][0], "OPTION in %q", line)
		for i := 1; i <= 3; i++ {
			assert.Equal(t, head[i][1], c[i][1], "column %d in %q", i, line)
		}
		assert.Equal(t, head[5][0], c[len(c)-1][0], "REASON in %q", line)
	}

	// Refused jobs, then differences; unchanged ones only counted.
	refused := section(t, out, "Refused (3 jobs)")
	require.Len(t, refused, 6)
	assert.Equal(t, []string{"FILE:LINE", "CLIENT", "OPTION", "SLURM ERROR", "MESSAGE OR REASON"}, cells(refused[1]))
	assert.Equal(t, []string{unicodeFile, "sbatch", "--reservation", "ESLURM_RESERVATION_INVALID (2053)", resvMessage}, cells(refused[2]))
	assert.Equal(t, []string{"jobs/train.sh", "sbatch", "--reservation", "ESLURM_RESERVATION_INVALID (2053)", resvMessage}, cells(refused[3]))
	// The job's second finding, a difference, on a line of its own.
	assert.Equal(t, []string{"--mem-bind (difference)", "ignored: Backend.AI places a session's memory itself"}, cells(refused[4]))
	assert.Equal(t, []string{"wrappers/run_all.sh:12", "srun", "--gres", "ESLURM_INVALID_GRES (2070)",
		"srun: error: Unable to allocate resources: Invalid generic resource (gres) specification"}, cells(refused[5]))
	// The Japanese file name, twice as wide on a terminal, keeps its row
	// in line.
	head = spans(refused[1])
	for _, line := range []string{refused[2], refused[3], refused[5]} {
		for i, c := range spans(line) {
			assert.Equal(t, head[i][0], c[0], "column %d in %q", i, line)
		}
	}
	assert.Equal(t, head[2][0], spans(refused[4])[0][0], "a job's second finding under OPTION")

	diff := section(t, out, "Runs with a documented difference (2 jobs)")
	require.Len(t, diff, 4)
	assert.Equal(t, "jobs/mpi.sh", cells(diff[2])[0])
	assert.Equal(t, "jobs/prep.sh", cells(diff[3])[0])
	assert.Less(t, strings.Index(out, "Refused (3 jobs)"), strings.Index(out, "Runs with a documented difference"))

	assert.Contains(t, out, "\n3 jobs run unchanged (not listed; -v lists them)\n")
	assert.NotContains(t, out, "jobs/a.sh")
	assert.NotContains(t, out, "Runs unchanged (")
	assert.Contains(t, out, "\n1 file skipped (-v lists them)\n")
	assert.NotContains(t, out, "jobs/core.bin")
	assert.NotContains(t, out, "History")
}

var cellRE = regexp.MustCompile(`\S+(?: \S+)*`)

// spans are the terminal columns where each cell of a line starts and ends.
func spans(line string) [][2]int {
	var out [][2]int
	for _, m := range cellRE.FindAllStringIndex(line, -1) {
		out = append(out, [2]int{displayWidth(line[:m[0]]), displayWidth(line[:m[1]])})
	}
	return out
}

func TestWriteTextVerbose(t *testing.T) {
	out := text(t, sampleReport(), true)
	unchanged := section(t, out, "Runs unchanged (3 jobs)")
	require.Len(t, unchanged, 5)
	// The hostile name, escaped nowhere (a terminal is not HTML), with the
	// option only known at run time.
	assert.Equal(t, []string{hostileFile, "sbatch", "--partition", "value known only at run time"}, cells(unchanged[2]))
	assert.Equal(t, []string{"jobs/a.sh", "sbatch"}, cells(unchanged[3]))
	assert.Equal(t, "jobs/b.sh", cells(unchanged[4])[0])
	assert.Less(t, strings.Index(out, "Runs with a documented difference"), strings.Index(out, "Runs unchanged ("))
	assert.NotContains(t, out, "not listed")

	skipped := section(t, out, "Skipped files (1)")
	assert.Equal(t, []string{"jobs/core.bin", "binary file"}, cells(skipped[2]))
}

func TestWriteTextControlCharacters(t *testing.T) {
	r := sampleReport()
	r.Jobs[2].File = "jobs/\x1b[31mred\x1b[0m\tand\nnewline\u202e.sh"
	r.Jobs[2].Findings[0].Message = "line one\nline two"
	out := text(t, r, false)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\t")
	assert.NotContains(t, out, "\u202e")
	assert.Contains(t, out, `jobs/\x1b[31mred\x1b[0m\tand\nnewline\u202e.sh`)
	// A multi-line message is cut to its first line.
	assert.Contains(t, out, "line one …")
	assert.NotContains(t, out, "line two")
	refused := section(t, out, "Refused (3 jobs)")
	assert.Len(t, refused, 6, "one line per finding, whatever the strings hold")
}

func TestWriteTextEmpty(t *testing.T) {
	out := text(t, &Report{Config: "/etc/slurm/slurm.conf"}, false)
	v := section(t, out, "Verdicts")
	assert.Equal(t, []string{"refused", "0", "-"}, cells(v[3]))
	assert.Contains(t, out, "\nNo jobs found.\n")
	assert.NotContains(t, out, "Options that cause")
	assert.NotContains(t, out, "unchanged (not listed")

	assert.Error(t, WriteText(&bytes.Buffer{}, nil, false))
}

func TestWriteTextHistory(t *testing.T) {
	out := text(t, withHistory(sampleReport()), false)
	h := section(t, out, "History: 1000 past jobs from /var/tmp/sacct-2025.txt")
	assert.Equal(t, []string{"refused", "40", "4.0%"}, cells(h[3]))

	users := section(t, out, "  USER")
	require.Len(t, users, 4)
	assert.Equal(t, []string{"USER", "JOBS", "WOULD BE REFUSED", "SHARE", "DIFFERENT", "TOP REFUSED OPTIONS"}, cells(users[0]))
	// Most refused first; on a tie, most jobs first.
	assert.Equal(t, []string{"alice", "500", "30", "6.0%", "12", "--reservation 20, --gres 6, --licenses 3, (+1 more)"}, cells(users[1]))
	assert.Equal(t, []string{"<b>eve</b>", "400", "5", "1.2%", "48", "--reservation 5"}, cells(users[2]))
	assert.Equal(t, []string{"bob", "100", "5", "5.0%", "0", "--gres 5"}, cells(users[3]))

	// History's options come after the scripts' own table: the last OPTION header.
	i := strings.LastIndex(out, "  OPTION")
	require.Greater(t, i, strings.Index(out, "History:"))
	hist := strings.Split(strings.TrimSpace(out[i:]), "\n")
	var names []string
	for _, l := range hist[1:] {
		names = append(names, cells(l)[0])
	}
	assert.Equal(t, []string{"--reservation", "--gres", "--licenses", "--bb", "--mem-bind"}, names)
	// The error comes from the scripts' findings for the same option.
	assert.Equal(t, []string{"--reservation", "25", "25", "0", "ESLURM_RESERVATION_INVALID (2053)", "reservations do not exist on Backend.AI"}, cells(hist[1]))
}

func TestWriteTextWholeRequest(t *testing.T) {
	r := &Report{Jobs: []Job{{File: "x.sh", Client: "sbatch", Verdict: Refused,
		Findings: []Finding{{Verdict: Refused, Reason: "no partition can run it", SlurmError: "ESLURM_PARTITION_NOT_AVAIL"}}}},
		Summary: Summary{Jobs: 1, Refused: 1}}
	out := text(t, r, false)
	o := section(t, out, "Options that cause")
	assert.Equal(t, []string{"(whole request)", "1", "1", "0", "ESLURM_PARTITION_NOT_AVAIL", "no partition can run it"}, cells(o[2]))
	j := section(t, out, "Refused (1 job)")
	assert.Equal(t, []string{"x.sh", "sbatch", "(whole request)", "ESLURM_PARTITION_NOT_AVAIL", "no partition can run it"}, cells(j[2]))
}

func TestWriteJSON(t *testing.T) {
	r := withHistory(sampleReport())
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, r))
	out := b.String()

	var back Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.True(t, back.Generated.Equal(r.Generated))
	back.Generated = r.Generated
	assert.Equal(t, *r, back)

	// Indented, fields in struct order, strings as they are.
	assert.True(t, strings.HasPrefix(out, "{\n  \"generated\": \"2026-03-14T09:26:53Z\",\n  \"config\": \"/etc/slurm/slurm.conf\",\n"))
	order := []string{`"generated"`, `"config"`, `"backend"`, `"release"`, `"paths"`, `"files"`, `"jobs"`, `"skipped"`, `"summary"`, `"history"`}
	for i := 1; i < len(order); i++ {
		assert.Less(t, strings.Index(out, order[i-1]), strings.Index(out, order[i]), "%s before %s", order[i-1], order[i])
	}
	assert.Contains(t, out, `"file": "jobs/<script>alert(\"x\")</script>'q'.sh"`)
	assert.Contains(t, out, `"file": "jobs/données/ジョブ.sh"`)
	// Walk order, not listing order: JSON is the data.
	assert.Less(t, strings.Index(out, `"jobs/a.sh"`), strings.Index(out, `"jobs/train.sh"`))
}

func TestWriteJSONEmpty(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, &Report{}))
	out := b.String()
	assert.Contains(t, out, `"paths": [],`)
	assert.Contains(t, out, `"jobs": [],`)
	assert.Contains(t, out, `"by_option": []`)
	assert.NotContains(t, out, "null")
	assert.NotContains(t, out, `"history"`)
	assert.Error(t, WriteJSON(&b, nil))
}

func htmlOut(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteHTML(&b, r))
	return b.String()
}

var (
	scriptRE = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	dataRE   = regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`)
	cspRE    = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
	rowRE    = regexp.MustCompile(`(?s)<tr data-verdict="([^"]*)" class="v-[a-z]+">\s*<td><code>(.*?)</code>`)
)

// chartJSON is the data the page's script draws from.
func chartJSON(t *testing.T, page string) chartData {
	t.Helper()
	m := dataRE.FindStringSubmatch(page)
	require.NotNil(t, m, "no report-data element")
	var d chartData
	require.NoError(t, json.Unmarshal([]byte(m[1]), &d))
	return d
}

// tableRows is the text of each cell of each body row of the table with this id.
func tableRows(t *testing.T, page, id string) [][]string {
	t.Helper()
	i := strings.Index(page, `<table id="`+id+`"`)
	if i < 0 {
		i = strings.Index(page, `<table class="narrow" id="`+id+`"`)
	}
	require.GreaterOrEqual(t, i, 0, "no table %s", id)
	body := page[i:]
	body = body[strings.Index(body, "<tbody>"):strings.Index(body, "</tbody>")]
	tags := regexp.MustCompile(`<[^>]*>`)
	var rows [][]string
	for _, tr := range strings.Split(body, "<tr")[1:] {
		var row []string
		for _, td := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(tr, -1) {
			row = append(row, html.UnescapeString(tags.ReplaceAllString(td[1], "")))
		}
		rows = append(rows, row)
	}
	return rows
}

func TestWriteHTMLSummary(t *testing.T) {
	page := htmlOut(t, sampleReport())

	d := chartJSON(t, page)
	assert.Equal(t, 8, d.Total)
	assert.Equal(t, []chartVerdict{{Unchanged, "unchanged", 3}, {Difference, "difference", 2}, {Refused, "refused", 3}}, d.Verdicts)
	assert.Equal(t, []chartOption{{"--reservation", 2, 0}, {"--gres", 1, 0}, {"--mem-bind", 0, 2}, {"--exclusive", 0, 1}}, d.Options)
	assert.Nil(t, d.History)

	assert.Equal(t, [][]string{{"runs unchanged", "3", "37.5%"}, {"runs with a documented difference", "2", "25.0%"}, {"refused", "3", "37.5%"}},
		tableRows(t, page, "summary-table"))
	assert.Contains(t, page, `<tfoot><tr><th>Total</th><th class="num">8</th>`)
	// Without scripts, the summary is still there.
	noscript := page[strings.Index(page, "<noscript>"):strings.Index(page, "</noscript>")]
	assert.Contains(t, noscript, `<td><span class="badge v-refused">refused</span></td><td class="num">3</td><td class="num">37.5%</td>`)

	assert.Equal(t, [][]string{
		{"--reservation", "2", "0", "0", "2", "ESLURM_RESERVATION_INVALID (2053)", "reservations do not exist on Backend.AI"},
		{"--gres", "1", "0", "0", "1", "ESLURM_INVALID_GRES (2070)", "GPU type a100 is not in the cluster's gres.conf"},
		{"--mem-bind", "2", "0", "2", "0", "", "ignored: Backend.AI places a session's memory itself"},
		{"--exclusive", "1", "0", "1", "0", "", "the node is not kept free of other sessions"},
		{"--time", "8", "8", "0", "0", "", ""},
	}, tableRows(t, page, "option-table"))

	// Every job, refused first; the filter and the verdict choice are there.
	var order []string
	for _, m := range rowRE.FindAllStringSubmatch(page, -1) {
		order = append(order, m[1]+" "+html.UnescapeString(m[2]))
	}
	assert.Equal(t, []string{
		"refused " + unicodeFile, "refused jobs/train.sh", "refused wrappers/run_all.sh",
		"runs with a documented difference jobs/mpi.sh", "runs with a documented difference jobs/prep.sh",
		"runs unchanged " + hostileFile, "runs unchanged jobs/a.sh", "runs unchanged jobs/b.sh",
	}, order)
	jobs := tableRows(t, page, "jobs")
	assert.Equal(t, "12", jobs[2][1])
	assert.Contains(t, jobs[1][4], "--reservation refused ESLURM_RESERVATION_INVALID (2053)"+resvMessage)
	assert.Contains(t, jobs[1][4], "--mem-bind runs with a documented difference")
	assert.Contains(t, jobs[5][4], "Value known only at run time: --partition")
	assert.Contains(t, page, `<input id="job-filter" type="search"`)
	assert.Contains(t, page, `<option value="refused">refused</option>`)
	assert.Equal(t, [][]string{{"jobs/core.bin", "binary file"}}, tableRows(t, page, "skipped"))

	// Header.
	for _, s := range []string{"2026-03-14 09:26:53 UTC", "<code>/etc/slurm/slurm.conf</code>", "<dd>embedded</dd>", "<dd>24.11</dd>",
		"<code>/home/lab/jobs</code>, <code>/opt/wrappers</code>", "<dd>9 (1 skipped)</dd>"} {
		assert.Contains(t, page, s)
	}
	assert.NotContains(t, page, `id="history"`)
}

func TestWriteHTMLSelfContained(t *testing.T) {
	page := htmlOut(t, withHistory(sampleReport()))
	for _, s := range []string{"http://", "https://", "//cdn", "<link", " src=", " href=", "@import", "url("} {
		assert.NotContains(t, page, s)
	}
	// The policy allows exactly the page's own script and style.
	m := cspRE.FindStringSubmatch(page)
	require.NotNil(t, m)
	policy := html.UnescapeString(m[1])
	assert.Contains(t, policy, "default-src 'none'")
	scripts := scriptRE.FindAllStringSubmatch(page, -1)
	require.Len(t, scripts, 1, "one executable script")
	assert.Contains(t, policy, "script-src 'sha256-"+sum(scripts[0][1])+"'")
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(page)
	require.NotNil(t, style)
	assert.Contains(t, policy, "style-src 'sha256-"+sum(style[1])+"'")
	assert.NotContains(t, page, " style=", "inline style attributes would be refused by the policy")
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}

func TestWriteHTMLEscapes(t *testing.T) {
	r := withHistory(sampleReport())
	r.Config = `/etc/slurm/"slurm".conf<`
	r.Jobs[2].Findings[0].Message = `</script><script>alert(1)</script>`
	r.Jobs[2].Command = `sbatch --comment='<img src=x onerror=alert(1)>'`
	page := htmlOut(t, r)

	assert.Equal(t, 1, strings.Count(page, "<script>"), "only the page's own script")
	assert.NotContains(t, page, "<b>eve</b>")
	assert.NotContains(t, page, "<img")
	assert.Contains(t, page, "&lt;b&gt;eve&lt;/b&gt;")
	assert.Contains(t, page, "jobs/&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&#39;q&#39;.sh")
	assert.Contains(t, page, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.Contains(t, page, "/etc/slurm/&#34;slurm&#34;.conf&lt;")
	assert.Contains(t, page, unicodeFile)

	// An option name in the chart data cannot end its element either.
	r.Summary.ByOption = append(r.Summary.ByOption, OptionCount{Option: "--x</script><script>", Refused: 1})
	r.Jobs[3].Findings = append(r.Jobs[3].Findings, Finding{Option: "--x</script><script>", Verdict: Refused})
	page = htmlOut(t, r)
	assert.Equal(t, 1, strings.Count(page, "<script>"))
	assert.Contains(t, chartJSON(t, page).Options, chartOption{"--x</script><script>", 1, 0})
}

func TestWriteHTMLEmpty(t *testing.T) {
	page := htmlOut(t, &Report{})
	d := chartJSON(t, page)
	assert.Equal(t, []chartVerdict{{Unchanged, "unchanged", 0}, {Difference, "difference", 0}, {Refused, "refused", 0}}, d.Verdicts)
	assert.Empty(t, d.Options)
	assert.Equal(t, [][]string{{"runs unchanged", "0", "-"}, {"runs with a documented difference", "0", "-"}, {"refused", "0", "-"}},
		tableRows(t, page, "summary-table"))
	assert.Contains(t, page, "No option causes a refusal or a difference.")
	assert.Contains(t, page, "No jobs found.")
	assert.NotContains(t, page, `id="chart-options"`)
	assert.NotContains(t, page, `id="jobs"`)
	assert.Error(t, WriteHTML(&bytes.Buffer{}, nil))
}

func TestWriteHTMLHistory(t *testing.T) {
	page := htmlOut(t, withHistory(sampleReport()))
	d := chartJSON(t, page)
	require.NotNil(t, d.History)
	assert.Equal(t, 1000, d.History.Total)
	assert.Equal(t, []chartVerdict{{Unchanged, "unchanged", 900}, {Difference, "difference", 60}, {Refused, "refused", 40}}, d.History.Verdicts)
	assert.Equal(t, chartOption{"--reservation", 25, 0}, d.History.Options[0])
	assert.Contains(t, page, "1000 past jobs, from <code>/var/tmp/sacct-2025.txt</code>")
	assert.Contains(t, page, `id="chart-history-verdicts"`)
	assert.Contains(t, page, `id="chart-history-options"`)

	assert.Equal(t, [][]string{
		{"alice", "500", "30", "6.0%", "12", "--reservation 20, --gres 6, --licenses 3, (+1 more)"},
		{"<b>eve</b>", "400", "5", "1.2%", "48", "--reservation 5"},
		{"bob", "100", "5", "5.0%", "0", "--gres 5"},
	}, tableRows(t, page, "history-users"))
	ho := tableRows(t, page, "history-options")
	require.Len(t, ho, 5)
	assert.Equal(t, []string{"--reservation", "25", "0", "0", "25", "ESLURM_RESERVATION_INVALID (2053)", "reservations do not exist on Backend.AI"}, ho[0])
	assert.Equal(t, []string{"--mem-bind", "65", "5", "60", "0", "", "ignored: Backend.AI places a session's memory itself"}, ho[4])
}
