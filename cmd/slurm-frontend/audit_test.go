package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate/audit"
	"github.com/lablup/slurm-frontend/translate/jobopt"
)

// realWorldDir is where tools/realworld.sh puts the job scripts Debian
// ships (examples and batch-system backends written by other people).
const realWorldDir = "/opt/slurm-roots/realworld"

// copyTree copies src into dst, readable by every test user.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v\n%s", src, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "a+rX", dst).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
}

// runAudit runs `slurm-frontend audit` as an operator would and reads
// its JSON report.
func runAudit(t *testing.T, f *frontend, rel string, extra ...string) *audit.Report {
	t.Helper()
	args := append([]string{"audit", "--config", f.configPath, "--release", rel, "--user", "slurm", "--json"}, extra...)
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = hermeticEnv()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("audit %v: %v\n%s", args, err, stderr)
	}
	var r audit.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("audit --json: %v\n%s", err, out)
	}
	return &r
}

// uses reports whether the job sets the option.
func uses(j audit.Job, name string) bool {
	for _, o := range j.Options {
		if o.Name == name {
			return true
		}
	}
	return false
}

// hasCommand reports whether a salloc/srun command line names a command
// after its options.
func hasCommand(prog string, args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return true
		}
		if jobopt.TakesValue(prog, a, codec.V26_05) {
			i++
		}
	}
	return false
}

var willRunRE = regexp.MustCompile(`(?m)^(sbatch|srun|salloc): Job \d+ to start at `)

// TestAuditAgreesWithTestOnly runs the audit on the hand-written corpus
// and on the real-world scripts Debian ships, then submits every job the
// audit could read in full with the stock client's --test-only (the
// server's REQUEST_JOB_WILL_RUN: the same checks as a submission, nothing
// kept), as the same user, for each release: a job said to run (unchanged
// or with a documented difference) is accepted, a refused one is refused
// with the error the audit named (or, refused by the client itself, with
// the very lines the audit quoted).
func TestAuditAgreesWithTestOnly(t *testing.T) {
	if _, err := os.Stat(filepath.Join(realWorldDir, ".ok")); err != nil {
		if os.Getenv("SLURM_FRONTEND_E2E") != "" {
			t.Fatalf("needs %s: run tools/install.sh (make setup)", realWorldDir)
		}
		t.Skipf("needs %s (make setup)", realWorldDir)
	}
	confText, err := os.ReadFile(filepath.Join(repoRoot(t), "translate", "audit", "testdata", "frontend.conf"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFrontend(t, string(confText))
	corpus := filepath.Join(f.dir, "corpus")
	real := filepath.Join(f.dir, "realworld")
	for _, d := range []string{corpus, real} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyTree(t, filepath.Join(repoRoot(t), "translate", "audit", "testdata", "corpus"), corpus)
	copyTree(t, realWorldDir, real)

	for _, rel := range []string{"22.05", "24.11", "26.05"} {
		t.Run(rel, func(t *testing.T) {
			r := runAudit(t, f, rel, corpus, real)
			// Every real-world file with a job in it is classified.
			perFile := map[string]int{}
			for _, j := range r.Jobs {
				perFile[j.File]++
				if j.Verdict != audit.Unchanged && j.Verdict != audit.Difference && j.Verdict != audit.Refused {
					t.Errorf("%s:%d: no verdict: %+v", j.File, j.Line, j)
				}
			}
			for _, name := range []string{
				"charliecloud-doc/usr/share/doc/charliecloud/examples/mpihello/slurm.sh",
				"charliecloud-doc/usr/share/doc/charliecloud/examples/spark/slurm.sh",
				"r-cran-irace/usr/lib/R/site-library/irace/examples/slurm/job.sh",
				"r-cran-irace/usr/lib/R/site-library/irace/examples/batchmode-cluster/target-runner-slurm",
				"r-cran-rslurm/usr/lib/R/site-library/rslurm/templates/submit_sh.txt",
				"r-cran-batchtools/usr/lib/R/site-library/batchtools/templates/slurm-simple.tmpl",
				"jube/usr/share/doc/jube/platform/slurm/chainJobs.sh",
				"condor/usr/libexec/blahp/slurm_submit.sh",
				"condor/usr/libexec/condor/annex/hpc.sh",
			} {
				if perFile[filepath.Join(real, name)] == 0 {
					t.Errorf("%s: no job found in it", name)
				}
			}
			checked := 0
			for _, j := range r.Jobs {
				if len(j.Unresolved) > 0 || j.Kind == "heredoc" || len(j.Args) == 0 {
					continue // what the audit could not read in full, --test-only cannot either
				}
				if uses(j, "--x11") {
					continue // srun --x11 needs an X display and xauth before it sends anything
				}
				if len(j.Findings) > 0 && strings.Contains(j.Findings[0].Reason, "heterogeneous") {
					// sbatch --test-only asks about a het job's components
					// one by one: it cannot tell that the submission is refused.
					continue
				}
				client, jargs := j.Client, j.Args
				if client == "salloc" {
					// salloc has no --test-only (24.11+): srun asks the
					// same allocation with the same options.
					client = "srun"
					if !hasCommand("salloc", jargs) {
						jargs = append(append([]string(nil), jargs...), "true")
					}
				}
				args := append([]string{client, "--test-only"}, jargs...)
				out, errs, code := f.as(t).user("slurm").in(filepath.Dir(j.File)).run(rel, args...)
				where := fmt.Sprintf("%s:%d (%s)", strings.TrimPrefix(j.File, f.dir+"/"), j.Line, strings.Join(args, " "))
				checked++
				switch j.Verdict {
				case audit.Unchanged, audit.Difference:
					if code != 0 || !willRunRE.MatchString(errs) {
						t.Errorf("%s: the audit says it runs (%s); --test-only: exit %d\nstdout: %s\nstderr: %s", where, j.Verdict, code, out, errs)
					}
				case audit.Refused:
					fd := j.Findings[0]
					if code == 0 {
						t.Errorf("%s: the audit says refused (%s %s); --test-only accepted it:\n%s", where, fd.SlurmError, fd.Reason, errs)
						continue
					}
					if fd.SlurmError == "" {
						// Refused by the client itself: the same lines.
						if strings.TrimSpace(errs) != strings.TrimSpace(fd.Message) {
							t.Errorf("%s: the client says\n%s\nthe audit quoted\n%s", where, errs, fd.Message)
						}
					} else if text := codec.ErrorText(fd.Code); !strings.Contains(errs, text) {
						t.Errorf("%s: refused with\n%s\nthe audit named %s (%q)", where, errs, fd.SlurmError, text)
					}
				}
			}
			t.Logf("%s: %d jobs in %d files (%d unchanged, %d with a difference, %d refused); %d checked with --test-only",
				rel, r.Summary.Jobs, len(perFile), r.Summary.Unchanged, r.Summary.Difference, r.Summary.Refused, checked)
			if checked < 20 {
				t.Errorf("only %d jobs checked against --test-only", checked)
			}
		})
	}
}

// TestAuditReportInBrowser writes the HTML report of the corpus with the
// audit command and opens it in headless chromium: the summary chart is
// drawn with the report's counts.
func TestAuditReportInBrowser(t *testing.T) {
	const chromiumBin = "/usr/bin/chromium"
	if _, err := os.Stat(chromiumBin); err != nil {
		if os.Getenv("SLURM_FRONTEND_E2E") != "" {
			t.Fatalf("needs %s: run tools/install.sh (make setup)", chromiumBin)
		}
		t.Skipf("needs %s (make setup)", chromiumBin)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "audit.html")
	confPath := filepath.Join(repoRoot(t), "translate", "audit", "testdata", "frontend.conf")
	cmd := exec.Command(buildBinary(t), "audit", "--config", confPath, "--json", "--html", page,
		filepath.Join(repoRoot(t), "translate", "audit", "testdata", "corpus"))
	cmd.Env = hermeticEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	var r audit.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	browser := exec.Command(chromiumBin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+page)
	browser.Env = append(os.Environ(), "HOME="+dir)
	dom, err := browser.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	chart := string(dom)
	if i := strings.Index(chart, `<svg id="chart-verdicts"`); i >= 0 {
		chart = chart[i:]
		chart = chart[:strings.Index(chart, "</svg>")]
	} else {
		t.Fatalf("no summary chart in the page:\n%s", dom)
	}
	counts := map[string]int{}
	for _, m := range regexp.MustCompile(`<rect\b[^>]*data-verdict="([^"]+)"[^>]*data-count="(\d+)"`).FindAllStringSubmatch(chart, -1) {
		n, _ := strconv.Atoi(m[2])
		counts[m[1]] = n
	}
	want := map[string]int{string(audit.Unchanged): r.Summary.Unchanged, string(audit.Difference): r.Summary.Difference, string(audit.Refused): r.Summary.Refused}
	for v, n := range want {
		if counts[v] != n {
			t.Errorf("summary chart bar %q: %d in the browser, %d in the report (bars %v)", v, counts[v], n, counts)
		}
	}
}
