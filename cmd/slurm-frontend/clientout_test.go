package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// Parsers for what the stock clients print, shared by the end-to-end
// tests. They are deliberately strict about layout (header names, field
// counts) so a changed output is noticed, and lenient only about spacing,
// which the clients choose.

// kvKey finds the start of each Key= in a line of `scontrol show` output.
// Keys start with a letter after the line start or a blank, so values such
// as "SubmitLine=sbatch --mem=1G" or "OS=Linux 6.1" stay whole.
var kvKey = regexp.MustCompile(`(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=`)

// parseKV parses one record of `scontrol show job|node|partition` into
// key -> value. A value runs to the next key; repeated keys keep the first.
func parseKV(rec string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(rec, "\n") {
		locs := kvKey.FindAllStringSubmatchIndex(line, -1)
		for i, loc := range locs {
			key := line[loc[2]:loc[3]]
			end := len(line)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			if _, dup := m[key]; !dup {
				m[key] = strings.TrimSpace(line[loc[1]:end])
			}
		}
	}
	return m
}

// records splits `scontrol show` output into blank-line separated records.
func records(out string) []string {
	var recs []string
	for _, r := range regexp.MustCompile(`\n\s*\n`).Split(out, -1) {
		if strings.TrimSpace(r) != "" {
			recs = append(recs, r)
		}
	}
	return recs
}

// table is a client table: header names and rows of fields.
type table struct {
	header []string
	rows   [][]string
}

// parseTable parses whitespace-separated output whose first line is the
// header. Every row must have as many fields as the header.
func parseTable(t testing.TB, what, out string) table {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		t.Fatalf("%s: no header in output %q", what, out)
	}
	tb := table{header: strings.Fields(lines[0])}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != len(tb.header) {
			t.Errorf("%s: row %q has %d fields, header %v has %d", what, l, len(f), tb.header, len(tb.header))
			continue
		}
		tb.rows = append(tb.rows, f)
	}
	return tb
}

// col returns the index of a header name.
func (tb table) col(t testing.TB, name string) int {
	t.Helper()
	for i, h := range tb.header {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q in header %v", name, tb.header)
	return -1
}

// wantHeader checks the header names.
func (tb table) wantHeader(t testing.TB, what string, names ...string) {
	t.Helper()
	if strings.Join(tb.header, " ") != strings.Join(names, " ") {
		t.Errorf("%s: header %v, want %v", what, tb.header, names)
	}
}

// dateLine is the first line of the -l outputs of sinfo and squeue.
const dateLayout = "Mon Jan _2 15:04:05 2006"

// splitDateLine checks that out starts with a current date line (local
// time, within the window) and returns the rest.
func splitDateLine(t testing.TB, what, out string, from, to time.Time) string {
	t.Helper()
	first, rest, _ := strings.Cut(out, "\n")
	d, err := time.ParseInLocation(dateLayout, first, time.Local)
	if err != nil {
		t.Errorf("%s: first line %q is not a date: %v", what, first, err)
		return rest
	}
	if d.Before(from.Truncate(time.Second)) || d.After(to.Add(time.Second)) {
		t.Errorf("%s: date line %q outside the test window %s..%s", what, first, from.Format(time.TimeOnly), to.Format(time.TimeOnly))
	}
	return rest
}

// parseConfig parses `scontrol show config` ("Key = Value" lines).
func parseConfig(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if _, dup := m[k]; !dup && k != "" && !strings.Contains(k, " ") {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestParseKV(t *testing.T) {
	m := parseKV("JobId=3 JobName=named\n   UserId=root(0) GroupId=root(0) MCS_label=N/A\n   SubmitLine=sbatch --mem=1G -J named --wrap x\n   OS=Linux 6.1 \n   NodeList=\n   CPUs/Task=2 ReqB:S:C:T=0:0:*:*")
	want := map[string]string{"JobId": "3", "JobName": "named", "UserId": "root(0)", "GroupId": "root(0)", "MCS_label": "N/A",
		"SubmitLine": "sbatch --mem=1G -J named --wrap x", "OS": "Linux 6.1", "NodeList": "", "CPUs/Task": "2", "ReqB:S:C:T": "0:0:*:*"}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if len(m) != len(want) {
		t.Errorf("parsed %d keys, want %d: %v", len(m), len(want), m)
	}
}
