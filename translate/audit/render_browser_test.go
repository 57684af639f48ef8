package audit

// The HTML report in a real browser: Debian's chromium, headless, which
// tools/install.sh installs. Without it the test is skipped, except under
// SLURM_FRONTEND_E2E=1 (make test), where a missing part is a failure like
// for the other end-to-end tests. SLURM_FRONTEND_KEEP=1 keeps the page and
// its screenshot for a look.

import (
	"bytes"
	"context"
	"html"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const chromiumPath = "/usr/bin/chromium"

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("SLURM_FRONTEND_E2E") != "" {
			t.Fatalf("browser test needs %s: run tools/install.sh", chromiumPath)
		}
		t.Skipf("needs %s (run 'make setup')", chromiumPath)
	}
}

// chromium runs a headless browser to its end, with its own profile in
// dir and no network of its own (no updates, sync or prefetch).
func chromium(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	// A guard against a hung browser, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	cmd := exec.CommandContext(ctx, chromiumPath, append(base, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	// The browser's helpers are in its process group: end them together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium %s:\n%s", strings.Join(args, " "), stderr.String())
	return out
}

var (
	rectRE = regexp.MustCompile(`<rect\b[^>]*>`)
	attrRE = regexp.MustCompile(`([\w-]+)="([^"]*)"`)
)

// bars are the rects of the SVG chart with this id in a DOM dump, each as
// its attributes.
func bars(t *testing.T, dom, id string) []map[string]string {
	t.Helper()
	i := strings.Index(dom, `<svg id="`+id+`"`)
	require.GreaterOrEqual(t, i, 0, "no chart %s in the page", id)
	svg := dom[i:]
	svg = svg[:strings.Index(svg, "</svg>")]
	var out []map[string]string
	for _, rect := range rectRE.FindAllString(svg, -1) {
		attrs := map[string]string{}
		for _, a := range attrRE.FindAllStringSubmatch(rect, -1) {
			attrs[a[1]] = html.UnescapeString(a[2])
		}
		out = append(out, attrs)
	}
	return out
}

// counts maps each bar's keys to its data-count.
func counts(bs []map[string]string, keys ...string) map[string]string {
	m := map[string]string{}
	for _, b := range bs {
		var k []string
		for _, key := range keys {
			k = append(k, b[key])
		}
		m[strings.Join(k, " / ")] = b["data-count"]
	}
	return m
}

func TestHTMLReportInChromium(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	r := withHistory(sampleReport())
	var b bytes.Buffer
	require.NoError(t, WriteHTML(&b, r))
	// A space and non-ASCII in the page's own name, as a mailed file may have.
	file := filepath.Join(dir, "audit 報告.html")
	require.NoError(t, os.WriteFile(file, b.Bytes(), 0o644))
	page := (&url.URL{Scheme: "file", Path: file}).String()

	// The DOM after the page's script ran: the charts are drawn from the
	// embedded data, under the page's content policy.
	dom := string(chromium(t, dir, "--dump-dom", page))
	assert.Equal(t, map[string]string{
		"runs unchanged":                    "3",
		"runs with a documented difference": "2",
		"refused":                           "3",
	}, counts(bars(t, dom, "chart-verdicts"), "data-verdict"))
	assert.Equal(t, map[string]string{
		"--reservation / refused":                           "2",
		"--reservation / runs with a documented difference": "0",
		"--gres / refused":                                  "1",
		"--gres / runs with a documented difference":        "0",
		"--mem-bind / refused":                              "0",
		"--mem-bind / runs with a documented difference":    "2",
		"--exclusive / refused":                             "0",
		"--exclusive / runs with a documented difference":   "1",
	}, counts(bars(t, dom, "chart-options"), "data-option", "data-verdict"))
	assert.Equal(t, map[string]string{
		"runs unchanged":                    "900",
		"runs with a documented difference": "60",
		"refused":                           "40",
	}, counts(bars(t, dom, "chart-history-verdicts"), "data-verdict"))
	assert.Equal(t, "25", counts(bars(t, dom, "chart-history-options"), "data-option", "data-verdict")["--reservation / refused"])
	// Bars are as long as their counts: refused (3) as long as unchanged (3),
	// a difference (2) two thirds of it.
	vb := bars(t, dom, "chart-verdicts")
	width := func(b map[string]string) float64 {
		w, err := strconv.ParseFloat(b["width"], 64)
		require.NoError(t, err)
		return w
	}
	require.Len(t, vb, 3)
	assert.Equal(t, width(vb[0]), width(vb[2]))
	assert.Greater(t, width(vb[0]), 100.0)
	assert.InDelta(t, width(vb[0])*2/3, width(vb[1]), 0.01)
	// The job filters are shown and count the jobs.
	assert.Contains(t, dom, `<div class="filters" id="job-filters">`)
	assert.Contains(t, dom, `<span id="job-count" class="note">8 of 8 jobs shown</span>`)

	// What a reader sees: the page painted in its colours (the style ran
	// under the policy too), at the window's size.
	shot := filepath.Join(dir, "report.png")
	chromium(t, dir, "--hide-scrollbars", "--window-size=1280,1600", "--screenshot="+shot, page)
	f, err := os.Open(shot)
	require.NoError(t, err)
	img, err := png.Decode(f)
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 1280, 1600), img.Bounds())
	painted := map[string]int{}
	palette := map[color.RGBA]string{
		{0x2e, 0x7d, 0x32, 0xff}: "unchanged", {0xb7, 0x79, 0x1f, 0xff}: "difference", {0xc6, 0x28, 0x28, 0xff}: "refused",
	}
	for y := 0; y < 1600; y++ {
		for x := 0; x < 1280; x++ {
			r, g, b, a := img.At(x, y).RGBA()
			if v, ok := palette[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}]; ok {
				painted[v]++
			}
		}
	}
	for _, v := range []string{"unchanged", "difference", "refused"} {
		assert.Greater(t, painted[v], 1000, "pixels of the %s colour", v)
	}

	if os.Getenv("SLURM_FRONTEND_KEEP") != "" {
		keep, err := os.MkdirTemp("", "audit-report-")
		require.NoError(t, err)
		for _, name := range []string{file, shot} {
			data, err := os.ReadFile(name)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(keep, filepath.Base(name)), data, 0o644))
		}
		t.Logf("page and screenshot kept in %s", keep)
	}
}
