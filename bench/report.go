package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the machine-readable output of one or more bench runs.
type Report struct {
	Meta Meta      `json:"meta"`
	Runs []*Result `json:"runs"`
}

// Meta describes how the runs were made.
type Meta struct {
	Generated time.Time         `json:"generated"`
	Machine   Machine           `json:"machine"`
	Commands  []string          `json:"commands,omitempty"`
	Targets   []string          `json:"targets"` // in order; the first is the subject of the ratios
	Workloads map[string]string `json:"workloads,omitempty"`
	Notes     []string          `json:"notes,omitempty"`
}

// NewReport starts a report for this machine.
func NewReport(cmd string) *Report {
	return &Report{Meta: Meta{Generated: time.Now(), Machine: ThisMachine(), Commands: []string{cmd}, Workloads: map[string]string{}}}
}

// Add records a run (and its target and workload).
func (r *Report) Add(res *Result, wl *Workload) {
	r.Runs = append(r.Runs, res)
	if !contains(r.Meta.Targets, res.Target) {
		r.Meta.Targets = append(r.Meta.Targets, res.Target)
	}
	if wl != nil {
		if r.Meta.Workloads == nil {
			r.Meta.Workloads = map[string]string{}
		}
		r.Meta.Workloads[wl.Name] = wl.Doc
	}
}

func contains(a []string, s string) bool {
	for _, x := range a {
		if x == s {
			return true
		}
	}
	return false
}

// Merge appends another report's runs, commands and notes.
func (r *Report) Merge(o *Report) {
	r.Meta.Commands = append(r.Meta.Commands, o.Meta.Commands...)
	r.Meta.Notes = append(r.Meta.Notes, o.Meta.Notes...)
	for _, t := range o.Meta.Targets {
		if !contains(r.Meta.Targets, t) {
			r.Meta.Targets = append(r.Meta.Targets, t)
		}
	}
	if r.Meta.Workloads == nil {
		r.Meta.Workloads = map[string]string{}
	}
	for k, v := range o.Meta.Workloads {
		r.Meta.Workloads[k] = v
	}
	r.Runs = append(r.Runs, o.Runs...)
}

// ReadReport loads a JSON report.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &r, nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// group is the runs of one workload/label/mode: one chart pair. When a
// point was measured several times (--repeat), the run with the median
// ops/s stands for it.
type group struct {
	Workload, Label, Mode string
	Points                []float64 // concurrency or rate, ascending
	Runs                  map[string]map[float64]*Result
	All                   map[string]map[float64][]*Result
}

func (g *group) title() string {
	t := g.Workload
	if g.Label != "" {
		t += " — " + g.Label
	}
	if g.Mode == "open" {
		t += " (open loop)"
	}
	return t
}

func point(r *Result) float64 {
	if r.Mode == "open" {
		return r.Rate
	}
	return float64(r.Concurrency)
}

func (r *Report) groups() []*group {
	var out []*group
	idx := map[string]*group{}
	for _, res := range r.Runs {
		k := res.Workload + "\x00" + res.Label + "\x00" + res.Mode
		g := idx[k]
		if g == nil {
			g = &group{Workload: res.Workload, Label: res.Label, Mode: res.Mode,
				Runs: map[string]map[float64]*Result{}, All: map[string]map[float64][]*Result{}}
			idx[k] = g
			out = append(out, g)
		}
		p := point(res)
		if g.All[res.Target] == nil {
			g.All[res.Target] = map[float64][]*Result{}
		}
		g.All[res.Target][p] = append(g.All[res.Target][p], res)
		found := false
		for _, x := range g.Points {
			if x == p {
				found = true
			}
		}
		if !found {
			g.Points = append(g.Points, p)
		}
	}
	for _, g := range out {
		sort.Float64s(g.Points)
		for t, byPoint := range g.All {
			g.Runs[t] = map[float64]*Result{}
			for p, list := range byPoint {
				g.Runs[t][p] = median(list)
			}
		}
	}
	return out
}

// pairedMedian picks, of repeated runs (--repeat), the repetition whose
// ratio subject/other is the median, so that a ratio compares two runs
// of one round: rounds differ (the sbatch workload adds jobs between
// them), and the two targets' medians could come from different ones.
// Without matching repetitions a and b stand.
func pairedMedian(as, bs []*Result, a, b *Result) (*Result, *Result) {
	if len(as) < 2 {
		return a, b
	}
	byRep := map[int]*Result{}
	for _, r := range bs {
		byRep[r.Rep] = r
	}
	type pair struct {
		a, b  *Result
		ratio float64
	}
	var ps []pair
	for _, r := range as {
		if o := byRep[r.Rep]; o != nil && o.OpsPerSec > 0 {
			ps = append(ps, pair{r, o, r.OpsPerSec / o.OpsPerSec})
		}
	}
	if len(ps) < 2 {
		return a, b
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].ratio < ps[j].ratio })
	m := ps[len(ps)/2]
	return m.a, m.b
}

// median returns the run with the median ops/s (the upper one of an even
// count).
func median(list []*Result) *Result {
	s := append([]*Result(nil), list...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].OpsPerSec < s[j].OpsPerSec })
	return s[len(s)/2]
}

// keyP99 is the latency the targets are stated in: JOB_INFO's p99 when
// the workload sends JOB_INFO, else the operation's p99.
func keyP99(r *Result) (float64, string) {
	for _, p := range r.PerRPC {
		if p.Name == "JOB_INFO" && r.Workload != "mix" {
			return p.Latency.P99Ms, "JOB_INFO p99"
		}
	}
	return r.Latency.P99Ms, "p99"
}

// Ratio is one comparison of the subject (first target) with another.
type Ratio struct {
	Workload, Label, Mode string
	Point                 float64
	Subject, Other        string
	SubjectOps, OtherOps  float64
	OpsRatio              float64 // subject / other
	SubjectP99, OtherP99  float64
	P99Ratio              float64 // other / subject: how many times lower the subject's is
	P99Name               string
	IsNull                bool
	// Checks against the targets, where they apply (none for
	// low loads or an A/B variant); Pass is set when there are any and
	// tells whether all were met.
	Checks []Check
	Pass   *bool
	Caveat string // errors or other load that make the comparison suspect
	// Against a real controller, when the group has a null server run
	// at the same point: the null server's ops/s ratio and p99 ratio to
	// that controller, i.e. the best any server could show on this
	// machine with this generator.
	CeilingOps, CeilingP99 float64
}

// Check is one target: what is wanted, whether the subject meets it and,
// against a real controller, whether the null server measured at the
// same point meets it. A target the null server misses too is past what
// this machine and generator can show, whatever the server.
type Check struct {
	Want    string
	Pass    bool
	Ceiling *bool
}

// verdict says, per target, met or missed, and whether the ceiling
// would: "ops/s ≥ 10×: met; p99 ≤ 1/20: MISS (null misses it too)".
func (ra Ratio) verdict(miss string) string {
	var parts []string
	for _, c := range ra.Checks {
		v := c.Want + ": met"
		if !c.Pass {
			v = c.Want + ": " + miss
			switch {
			case c.Ceiling == nil:
			case *c.Ceiling:
				v += " (null meets it)"
			default:
				v += " (null misses it too)"
			}
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "; ")
}

func (ra Ratio) ceiling() string {
	if ra.CeilingOps == 0 {
		return ""
	}
	return fmtRatio(ra.CeilingOps) + " / " + fmtRatio(ra.CeilingP99)
}

// IsNullTarget tells whether a target name denotes the null server.
func IsNullTarget(name string) bool { return strings.Contains(strings.ToLower(name), "null") }

// Ratios compares the first target with every other at every point,
// with the targets where they apply (see targets).
func (r *Report) Ratios() []Ratio {
	if len(r.Meta.Targets) < 2 {
		return nil
	}
	subj := r.Meta.Targets[0]
	var out []Ratio
	for _, g := range r.groups() {
		sr := g.Runs[subj]
		if sr == nil {
			continue
		}
		top := g.Points[len(g.Points)-1]
		for _, other := range r.Meta.Targets[1:] {
			or := g.Runs[other]
			if or == nil {
				continue
			}
			for _, p := range g.Points {
				a, b := sr[p], or[p]
				if a == nil || b == nil {
					continue
				}
				a, b = pairedMedian(g.All[subj][p], g.All[other][p], a, b)
				ra := Ratio{Workload: g.Workload, Label: g.Label, Mode: g.Mode, Point: p, Subject: subj, Other: other,
					SubjectOps: a.OpsPerSec, OtherOps: b.OpsPerSec, IsNull: IsNullTarget(other)}
				ra.OpsRatio = safeDiv(a.OpsPerSec, b.OpsPerSec)
				ra.SubjectP99, ra.P99Name = keyP99(a)
				ra.OtherP99, _ = keyP99(b)
				ra.P99Ratio = safeDiv(ra.OtherP99, ra.SubjectP99)
				var cv []string
				for _, x := range []*Result{a, b} {
					if x.ErrorOps > 0 {
						cv = append(cv, fmt.Sprintf("%s: %.1f%% errors", x.Target, 100*x.ErrorRate))
					}
					if x.OtherCores > busyOther {
						cv = append(cv, fmt.Sprintf("%s: %.2f other cores busy", x.Target, x.OtherCores))
					}
				}
				// Different queues (running records are larger than
				// pending ones) make different replies: the ratio then
				// says as much about the bytes as about the server.
				if ab, bb := jobInfoBytes(a), jobInfoBytes(b); ab > 0 && bb > 0 && !IsNullTarget(other) {
					if d := float64(ab) / float64(bb); d > 1.05 || d < 1/1.05 {
						cv = append(cv, fmt.Sprintf("job listings differ: %s %s, %s %s a reply; per byte %s",
							a.Target, fmtBytes(ab), b.Target, fmtBytes(bb), fmtRatio(ra.OpsRatio*d)))
					}
				}
				ra.Caveat = strings.Join(cv, "; ")
				if !ra.IsNull {
					for _, n := range r.Meta.Targets {
						if nr := g.Runs[n][p]; IsNullTarget(n) && nr != nil {
							np99, _ := keyP99(nr)
							ra.CeilingOps = safeDiv(nr.OpsPerSec, b.OpsPerSec)
							ra.CeilingP99 = safeDiv(ra.OtherP99, np99)
							break
						}
					}
				}
				if g.Mode == "closed" {
					ra.Checks = targets(ra, other, subj, p == top, jobInfoBytes(b) > 64<<10)
				}
				if len(ra.Checks) > 0 {
					ok := true
					for _, c := range ra.Checks {
						ok = ok && c.Pass
					}
					ra.Pass = &ok
				}
				out = append(out, ra)
			}
		}
	}
	return out
}

// targets lists the issues' targets that apply to ra: at least half the
// null server's rate at every point; against a real controller, for
// reads (issue 4) at the highest concurrency, at least 10× its rate and,
// when its job replies are large, a JOB_INFO p99 at most 1/20 of its;
// for held submissions (issue 18) at 16 clients and more, at least 10×
// its rate with a p99 below its. A variant of the subject (ours-b: other
// flags) is an A/B comparison with no target.
func targets(ra Ratio, other, subj string, top, bigJobs bool) []Check {
	var ceil = func(ok bool) *bool {
		if ra.CeilingOps == 0 {
			return nil
		}
		return &ok
	}
	tenX := Check{Want: "ops/s ≥ 10×", Pass: ra.OpsRatio >= 10, Ceiling: ceil(ra.CeilingOps >= 10)}
	switch {
	case ra.IsNull:
		return []Check{{Want: "ops/s ≥ 0.5× null", Pass: ra.OpsRatio >= 0.5}}
	case strings.HasPrefix(other, subj):
		return nil
	case ra.Workload == "sbatch" && ra.Point >= 16:
		return []Check{tenX, {Want: "p99 below", Pass: ra.P99Ratio > 1, Ceiling: ceil(ra.CeilingP99 > 1)}}
	case ra.Workload == "sbatch" || !top:
		return nil
	case bigJobs:
		return []Check{tenX, {Want: "p99 ≤ 1/20", Pass: ra.P99Ratio >= 20, Ceiling: ceil(ra.CeilingP99 >= 20)}}
	}
	return []Check{tenX}
}

// HoldRatio compares a run made while connections were held open with
// the same target, workload and load point without them, at the same
// queue size.
type HoldRatio struct {
	Target, Workload string
	Base, Held       *Result
	Slowdown         float64 // base ops/s ÷ held ops/s
	P99Ratio         float64 // held p99 ÷ base p99
}

func (h HoldRatio) verdict() string {
	if h.Slowdown <= 2 && h.P99Ratio <= 2 {
		return "ok (≤ 2× slower)"
	}
	return "MISS (≤ 2× slower)"
}

// HoldRatios pairs every run with held connections with its baseline.
func (r *Report) HoldRatios() []HoldRatio {
	var out []HoldRatio
	for _, g := range r.groups() {
		for t, byPoint := range g.Runs {
			for p, held := range byPoint {
				if held.Hold == 0 {
					continue
				}
				for _, g2 := range r.groups() {
					base := g2.Runs[t][p]
					if g2.Workload != g.Workload || g2.Mode != g.Mode || base == nil || base.Hold != 0 || base.JobsSeen != held.JobsSeen {
						continue
					}
					out = append(out, HoldRatio{Target: t, Workload: g.Workload, Base: base, Held: held,
						Slowdown: safeDiv(base.OpsPerSec, held.OpsPerSec), P99Ratio: safeDiv(held.Latency.P99Ms, base.Latency.P99Ms)})
					break
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		if a.Held.HoldMode != b.Held.HoldMode {
			return a.Held.HoldMode < b.Held.HoldMode
		}
		return point(a.Base) < point(b.Base)
	})
	return out
}

// busyOther is the other load (cores) above which a run is flagged: the
// machine was not quiet.
const busyOther = 0.3

func jobInfoBytes(r *Result) int64 {
	for _, p := range r.PerRPC {
		if p.Name == "JOB_INFO" {
			return p.ReplyBytes
		}
	}
	return 0
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return a / b
}

func fmtRatio(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case math.IsInf(x, 1):
		return "∞"
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

func fmtPoint(mode string, p float64) string {
	if mode == "open" {
		return fmt.Sprintf("%g/s", p)
	}
	return fmt.Sprintf("%g", p)
}

// WriteText prints every run and the ratio table.
func (r *Report) WriteText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tworkload\tscenario\tload\tops/s\trpc/s\tp50\tp99\tp99.9\tmax\tJOB_INFO p99\terrors\tserver cores\tserver µs/op\tpeak mem\tgen cores\tother cores\tjobs\t")
	for _, res := range r.Runs {
		jp := "-"
		for _, p := range res.PerRPC {
			if p.Name == "JOB_INFO" {
				jp = fmtMs(p.Latency.P99Ms)
			}
		}
		sc, su, rss := "-", "-", "-"
		if res.Server != nil {
			sc = fmt.Sprintf("%.2f", res.Server.CPUCores)
			rss = fmtKiB(res.Server.PeakMemKiB())
			if res.ServerCPUPerOpUs > 0 {
				su = fmt.Sprintf("%.0f", res.ServerCPUPerOpUs)
			}
		}
		errs := "0"
		if res.ErrorOps > 0 {
			errs = fmt.Sprintf("%d (%.1f%%)", res.ErrorOps, 100*res.ErrorRate)
		}
		jobs := "-"
		if res.JobsSeen >= 0 {
			jobs = fmt.Sprint(res.JobsSeen)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t\n",
			res.Target, res.Workload, res.Label, fmtPoint(res.Mode, point(res)), res.OpsPerSec, res.RPCPerSec,
			fmtMs(res.Latency.P50Ms), fmtMs(res.Latency.P99Ms), fmtMs(res.Latency.P999Ms), fmtMs(res.Latency.MaxMs),
			jp, errs, sc, su, rss, res.GeneratorCores, res.OtherCores, jobs)
	}
	tw.Flush()
	if hs := r.HoldRatios(); len(hs) > 0 {
		fmt.Fprintln(w, "\nheld connections (same target, workload, load and queue, without vs with; target: at most 2× slower):")
		tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "target\tworkload\tload\tjobs\theld\tops/s without\tops/s with\tslowdown\tp99 without\tp99 with\tp99 ratio\ttarget\t")
		for _, h := range hs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d %s\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", h.Target, h.Workload, fmtPoint(h.Base.Mode, point(h.Base)),
				h.Base.JobsSeen, h.Held.HoldOpen, h.Held.HoldMode, h.Base.OpsPerSec, h.Held.OpsPerSec, fmtRatio(h.Slowdown),
				fmtMs(h.Base.Latency.P99Ms), fmtMs(h.Held.Latency.P99Ms), fmtRatio(h.P99Ratio), h.verdict())
		}
		tw.Flush()
	}
	rs := r.Ratios()
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nratios (%s against each other target; p99 ratio = other's p99 / %s's):\n", r.Meta.Targets[0], r.Meta.Targets[0])
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tscenario\tload\tvs\tops/s\tother ops/s\tops ratio\tp99\tother p99\tp99 ratio\tceiling (null)\ttarget\tcaveat\t")
	for _, ra := range rs {
		verdict := ra.verdict("MISS")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", ra.Workload, ra.Label, fmtPoint(ra.Mode, ra.Point), ra.Other,
			ra.SubjectOps, ra.OtherOps, fmtRatio(ra.OpsRatio), fmtMs(ra.SubjectP99), fmtMs(ra.OtherP99), fmtRatio(ra.P99Ratio), ra.ceiling(), verdict, ra.Caveat)
	}
	tw.Flush()
}

var palette = []string{"#1f63b4", "#d62728", "#6b6b6b", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b"}

func (r *Report) color(target string) string {
	for i, t := range r.Meta.Targets {
		if t == target {
			return palette[i%len(palette)]
		}
	}
	return "#000"
}

// WriteHTML writes a self-contained HTML report with inline SVG charts.
func (r *Report) WriteHTML(path string) error {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>slurm-frontend bench</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1320px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f4f4f4}td.l,th.l{text-align:left}.ok{background:#e3f5e1}.miss{background:#fbe0e0}
.charts{display:flex;flex-wrap:wrap;gap:12px}code,pre{background:#f6f6f6;padding:1px 4px}pre{padding:8px;overflow:auto;white-space:pre-wrap}
.small{color:#666;font-size:12px}.warn{background:#fff3c4}</style></head><body>`)
	b.WriteString("<h1>slurm-frontend bench</h1>")
	m := r.Meta
	fmt.Fprintf(&b, "<p>Generated %s on <b>%s</b>: %d × %s, %d MiB, Linux %s, %s (GOMAXPROCS %d).</p>",
		e(m.Generated.Format(time.RFC3339)), e(m.Machine.Host), m.Machine.CPUs, e(m.Machine.CPUModel), m.Machine.MemMiB,
		e(m.Machine.Kernel), e(m.Machine.GoVersion), m.Machine.GOMAXPROCS)
	if len(m.Commands) > 0 {
		b.WriteString("<p>Commands:</p><pre>")
		for _, c := range m.Commands {
			b.WriteString(e(c) + "\n")
		}
		b.WriteString("</pre>")
	}
	b.WriteString("<p>Targets (the first is compared with the others): ")
	for i, t := range m.Targets {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `<b style="color:%s">%s</b>`, r.color(t), e(t))
	}
	b.WriteString(".</p>")

	if rs := r.Ratios(); len(rs) > 0 {
		fmt.Fprintf(&b, "<h2>Ratios: %s against the others</h2>", e(m.Targets[0]))
		b.WriteString(`<p class="small">ops ratio = ` + e(m.Targets[0]) + `'s ops/s ÷ the other's; p99 ratio = the other's p99 ÷ ` + e(m.Targets[0]) +
			`'s (JOB_INFO's p99 for squeue). Targets: reads (issue 4), ≥ 10× a real controller's rate at the highest concurrency, with p99 ≤ 1/20 when job replies are large; held submissions (issue 18), ≥ 10× its rate with a lower p99 at 16 clients and more; ≥ 0.5× the null server's rate everywhere. "ceiling" is the null server's ratios to the same controller at the same point: no server can show more on this machine with this generator.</p>`)
		b.WriteString(`<table><tr><th class="l">workload</th><th class="l">scenario</th><th>load</th><th class="l">vs</th><th>ops/s</th><th>other ops/s</th><th>ops ratio</th><th>p99</th><th>other p99</th><th>p99 ratio</th><th>ceiling: null's ops / p99 ratio</th><th class="l">target</th><th class="l">caveat</th></tr>`)
		for _, ra := range rs {
			cls, verdict := "", ra.verdict("missed")
			if ra.Pass != nil {
				cls = "miss"
				if *ra.Pass {
					cls = "ok"
				}
			}
			fmt.Fprintf(&b, `<tr class="%s"><td class="l">%s</td><td class="l">%s</td><td>%s</td><td class="l">%s</td><td>%.1f</td><td>%.1f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="l">%s</td><td class="l">%s</td></tr>`,
				cls, e(ra.Workload), e(ra.Label), fmtPoint(ra.Mode, ra.Point), e(ra.Other), ra.SubjectOps, ra.OtherOps, fmtRatio(ra.OpsRatio),
				fmtMs(ra.SubjectP99), fmtMs(ra.OtherP99), fmtRatio(ra.P99Ratio), e(ra.ceiling()), e(verdict), e(ra.Caveat))
		}
		b.WriteString("</table>")
	}

	if hs := r.HoldRatios(); len(hs) > 0 {
		b.WriteString(`<h2>Held connections</h2><p class="small">Each run made while idle or slow connections were held open, against the same target, workload, load and queue without them. Target (issue 4): a new client's squeue at most 2× slower.</p>`)
		b.WriteString(`<table><tr><th class="l">target</th><th class="l">workload</th><th>load</th><th>jobs</th><th>held</th><th>ops/s without</th><th>ops/s with</th><th>slowdown</th><th>p99 without</th><th>p99 with</th><th>p99 ratio</th><th class="l">target</th></tr>`)
		for _, h := range hs {
			cls := "ok"
			if !strings.HasPrefix(h.verdict(), "ok") {
				cls = "miss"
			}
			fmt.Fprintf(&b, `<tr class="%s"><td class="l">%s</td><td class="l">%s</td><td>%s</td><td>%d</td><td>%d %s</td><td>%.1f</td><td>%.1f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="l">%s</td></tr>`,
				cls, e(h.Target), e(h.Workload), fmtPoint(h.Base.Mode, point(h.Base)), h.Base.JobsSeen, h.Held.HoldOpen, e(h.Held.HoldMode),
				h.Base.OpsPerSec, h.Held.OpsPerSec, fmtRatio(h.Slowdown), fmtMs(h.Base.Latency.P99Ms), fmtMs(h.Held.Latency.P99Ms), fmtRatio(h.P99Ratio), e(h.verdict()))
		}
		b.WriteString("</table>")
	}

	for _, g := range r.groups() {
		fmt.Fprintf(&b, "<h2>%s</h2>", e(g.title()))
		if d := m.Workloads[g.Workload]; d != "" {
			fmt.Fprintf(&b, `<p class="small">%s</p>`, e(d))
		}
		xl := "concurrent clients (closed loop)"
		if g.Mode == "open" {
			xl = "scheduled rate, ops/s (open loop)"
		}
		var thr, lat []series
		for _, t := range m.Targets {
			runs := g.Runs[t]
			if runs == nil {
				continue
			}
			st := series{name: t, color: r.color(t)}
			s50 := series{name: t + " p50", color: r.color(t), dash: true}
			s99 := series{name: t + " p99", color: r.color(t)}
			for _, p := range g.Points {
				if res := runs[p]; res != nil {
					st.pts = append(st.pts, xy{p, res.OpsPerSec})
					s50.pts = append(s50.pts, xy{p, res.Latency.P50Ms})
					s99.pts = append(s99.pts, xy{p, res.Latency.P99Ms})
				}
			}
			thr = append(thr, st)
			lat = append(lat, s99, s50)
		}
		opName := "operations"
		if g.Workload == "squeue" {
			opName = "squeues (JOB_INFO + PARTITION_INFO)"
		}
		b.WriteString(`<div class="charts">`)
		b.WriteString(svgChart("Throughput: "+opName+"/s", xl, "ops/s (log)", g.Points, thr))
		b.WriteString(svgChart("Latency per operation, p99 (solid) and p50 (dashed)", xl, "ms (log)", g.Points, lat))
		b.WriteString("</div>")
		writeRunTable(&b, r, g)
	}

	b.WriteString(`<h2>Method</h2><ul class="small">
<li>Every RPC opens a new TCP connection, writes one request frame with a fresh MUNGE credential (minted in process from the site key, K12 body hash, as Slurm's auth/munge sends it), reads one whole reply frame and closes, exactly like stock clients. A squeue is two such RPCs in sequence.</li>
<li>Closed loop: N clients each start the next operation when the previous one ends. Open loop: operation i is scheduled at start + i/rate and its latency is measured from that scheduled time, so a server that stalls is charged for the operations that should have been sent meanwhile (no coordinated omission).</li>
<li>After a warmup, ops/s counts operations completed inside the window; latencies are those of operations started inside it (the run waits for them to finish, each RPC bounded by the client timeout); errors are counted by kind for operations started inside it and excluded from latencies.</li>
<li>Latency histograms are log-linear (128 sub-buckets per power of two: ≤ 0.8 % error); max is exact.</li>
<li>Server CPU is /proc/PID/stat utime+stime during the window ÷ its length (cores); peak mem is the highest RSS sampled every 100 ms during the run (VmRSS less shared-memory pages) plus the memory files (memfd) the server holds at the end of the run, where slurm-frontend keeps large job listings for sendfile; VmHWM (in the JSON) is the peak RSS since the process started. "gen" is the generator's own CPU, "other" the rest of the machine's busy CPU (other load on the box: keep it near 0 for clean numbers). A real slurmctld verifies credentials through munged: its CPU is listed separately when given as aux=munged:PID.</li>
<li>The null server accepts, reads one request frame and writes a prebuilt reply of the same bytes a controller sends (or of a given size), with no authentication: the ceiling of this machine and this generator.</li>
</ul>`)
	if len(m.Notes) > 0 {
		b.WriteString("<h2>Notes</h2><ul>")
		for _, n := range m.Notes {
			fmt.Fprintf(&b, "<li>%s</li>", e(n))
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</body></html>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func writeRunTable(b *strings.Builder, r *Report, g *group) {
	e := html.EscapeString
	b.WriteString(`<table><tr><th class="l">target</th><th>load</th><th>ops/s</th><th>RPC/s</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th class="l">per RPC p99 (reply bytes)</th><th class="l">errors</th><th>server cores</th><th>server µs/op</th><th>server peak mem</th><th class="l">aux</th><th>gen cores</th><th>other cores</th><th>jobs</th></tr>`)
	for _, t := range r.Meta.Targets {
		for _, p := range g.Points {
			res := g.Runs[t][p]
			if res == nil {
				continue
			}
			reps := ""
			if all := g.All[t][p]; len(all) > 1 {
				var v []string
				for _, x := range all {
					v = append(v, fmt.Sprintf("%.0f", x.OpsPerSec))
				}
				reps = fmt.Sprintf(" (median of %d: %s)", len(all), strings.Join(v, ", "))
			}
			var per []string
			for _, x := range res.PerRPC {
				per = append(per, fmt.Sprintf("%s %s (%d B)", x.Name, fmtMs(x.Latency.P99Ms), x.ReplyBytes))
			}
			errs := "0"
			if res.ErrorOps > 0 {
				var k []string
				for kind, n := range res.Errors {
					k = append(k, fmt.Sprintf("%s: %d", kind, n))
				}
				sort.Strings(k)
				errs = fmt.Sprintf("%d (%.1f%%): %s", res.ErrorOps, 100*res.ErrorRate, strings.Join(k, "; "))
			}
			sc, su, rss := "-", "-", "-"
			if res.Server != nil {
				sc, rss = fmt.Sprintf("%.2f", res.Server.CPUCores), fmtKiB(res.Server.PeakMemKiB())
				if res.ServerCPUPerOpUs > 0 {
					su = fmt.Sprintf("%.0f", res.ServerCPUPerOpUs)
				}
			}
			var aux []string
			for _, a := range res.Aux {
				aux = append(aux, fmt.Sprintf("%s %.2f cores", a.Label, a.CPUCores))
			}
			jobs := "-"
			if res.JobsSeen >= 0 {
				jobs = fmt.Sprint(res.JobsSeen)
			}
			if res.Hold > 0 {
				jobs += fmt.Sprintf(" (holding %d %s)", res.HoldOpen, res.HoldMode)
			}
			fmt.Fprintf(b, `<tr><td class="l" style="color:%s">%s</td><td>%s</td><td>%.1f%s</td><td>%.1f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="l">%s</td><td class="l%s">%s</td><td>%s</td><td>%s</td><td>%s</td><td class="l">%s</td><td>%.2f</td><td class="%s">%.2f</td><td>%s</td></tr>`,
				r.color(t), e(t), fmtPoint(res.Mode, p), res.OpsPerSec, e(reps), res.RPCPerSec, fmtMs(res.Latency.P50Ms), fmtMs(res.Latency.P99Ms),
				fmtMs(res.Latency.P999Ms), fmtMs(res.Latency.MaxMs), e(strings.Join(per, ", ")), flag(res.ErrorOps > 0), e(errs), sc, su, rss,
				e(strings.Join(aux, ", ")), res.GeneratorCores, flag(res.OtherCores > busyOther), res.OtherCores, e(jobs))
		}
	}
	b.WriteString("</table>")
}

func flag(bad bool) string {
	if bad {
		return " warn"
	}
	return ""
}

type xy struct{ x, y float64 }

type series struct {
	name  string
	color string
	dash  bool
	pts   []xy
}

// svgChart draws lines over categorical x positions (the sweep points,
// evenly spaced) with a log y axis.
func svgChart(title, xlabel, ylabel string, xs []float64, ss []series) string {
	const W, H = 620, 340
	const ml, mr, mt, mb = 64, 170, 34, 48
	pw, ph := float64(W-ml-mr), float64(H-mt-mb)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.pts {
			if p.y > 0 {
				lo, hi = math.Min(lo, p.y), math.Max(hi, p.y)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	xpos := func(x float64) float64 {
		for i, v := range xs {
			if v == x {
				if len(xs) == 1 {
					return ml + pw/2
				}
				return ml + pw*float64(i)/float64(len(xs)-1)
			}
		}
		return ml
	}
	ypos := func(y float64) float64 {
		if y <= 0 {
			y = math.Pow(10, dlo)
		}
		return mt + ph*(1-(math.Log10(y)-dlo)/(dhi-dlo))
	}
	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="system-ui,sans-serif" font-size="11">`, W, H, W, H)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="13" font-weight="600">%s</text>`, ml, e(title))
	// y grid: decades, with 2 and 5 as light lines
	for d := dlo; d <= dhi; d++ {
		v := math.Pow(10, d)
		y := ypos(v)
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ccc"/>`, ml, ml+pw, y, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, ml-6, y, fmtTick(v))
		if d < dhi {
			for _, k := range []float64{2, 5} {
				y := ypos(v * k)
				fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eee"/>`, ml, ml+pw, y, y)
				if dhi-dlo <= 2 {
					fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#888">%s</text>`, ml-6, y, fmtTick(v*k))
				}
			}
		}
	}
	for _, x := range xs {
		px := xpos(x)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#eee"/>`, px, px, mt, mt+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px, mt+ph+16, fmtTick(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`, ml, mt, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, ml+pw/2, H-8, e(xlabel))
	fmt.Fprintf(&b, `<text transform="translate(14,%.1f) rotate(-90)" text-anchor="middle">%s</text>`, mt+ph/2, e(ylabel))
	for i, s := range ss {
		if len(s.pts) == 0 {
			continue
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="5,4"`
		}
		var pts []string
		for _, p := range s.pts {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xpos(p.x), ypos(p.y)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, s.color, dash, strings.Join(pts, " "))
		for _, p := range s.pts {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s at %s: %s</title></circle>`,
				xpos(p.x), ypos(p.y), s.color, e(s.name), fmtTick(p.x), fmtVal(p.y))
		}
		ly := float64(mt + 8 + 18*i)
		lx := float64(ml) + pw + 12
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`, lx, lx+22, ly, ly, s.color, dash)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`, lx+28, ly, e(s.name))
	}
	b.WriteString("</svg>")
	return b.String()
}

func fmtTick(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

func fmtVal(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// fmtBytes is a size for a reader: 1.5 MB, 640 kB, 36 B.
func fmtBytes(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
