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
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate/audit"
	"github.com/lablup/slurm-frontend/translate/backendai/double"
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
			checked := agreeWithTestOnly(t, f, rel, r)
			t.Logf("%s: %d jobs in %d files (%d unchanged, %d with a difference, %d refused); %d checked with --test-only",
				rel, r.Summary.Jobs, len(perFile), r.Summary.Unchanged, r.Summary.Difference, r.Summary.Refused, checked)
			if checked < 20 {
				t.Errorf("only %d jobs checked against --test-only", checked)
			}
		})
	}
}

// agreeWithTestOnly submits every job of the report the audit could read
// in full with the stock client's --test-only (the server's
// REQUEST_JOB_WILL_RUN: the same checks as a submission, nothing kept),
// as the user the audit checked them as (slurm): a job said to run is
// accepted, a refused one refused with the error the audit named (or,
// refused by the client itself, with the very lines it quoted). It
// returns how many it checked.
func agreeWithTestOnly(t *testing.T, f *frontend, rel string, r *audit.Report) int {
	t.Helper()
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
	return checked
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

// TestAuditHistoryFromSlurmdbd: a real 24.11 cluster's jobs (slurmctld,
// slurmd, slurmdbd and MariaDB) audited against a smaller frontend
// cluster, from both kinds of history a site has: sacct --parsable2
// output, and the slurmdbd database imported with import-slurmdbd. Both
// give the same counts: the job asking for more CPUs than the new
// cluster's node has is refused (its option named), the --cpu-freq one
// runs with a documented difference, an array counts once.
func TestAuditHistoryFromSlurmdbd(t *testing.T) {
	needClients(t)
	const rel = "24.11"
	dir, _ := startRealAccounting(t, rel, "real-audit-")
	real := runner{t: t, conf: filepath.Join(dir, "slurm.conf"), dir: filepath.Join(dir, "w")}.user("slurm")
	os.MkdirAll(real.dir, 0o777)
	os.Chmod(real.dir, 0o777)
	t0 := time.Now().Add(-time.Minute).Format("2006-01-02T15:04:05")
	real.mustRun(rel, "sbatch", "-o", "/dev/null", "--wrap", "true")
	real.mustRun(rel, "sbatch", "-o", "/dev/null", "-n", "4", "--wrap", "true")
	real.mustRun(rel, "sbatch", "-o", "/dev/null", "--cpu-freq=high", "--wrap", "true")
	real.mustRun(rel, "sbatch", "-o", "/dev/null", "--array=1-3", "--wrap", "true")
	real.mustRun(rel, "srun", "-n", "2", "true")
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out, _, code := real.run(rel, "squeue", "-h"); code == 0 && out == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the real cluster's jobs did not finish")
		}
	}
	time.Sleep(2 * time.Second) // the records reach slurmdbd a moment after the ends

	work := workDir(t, "audit-hist-")
	// The new cluster: the same partition, on a node of 2 CPUs.
	confPath := filepath.Join(work, "frontend.conf")
	if err := os.WriteFile(confPath, []byte("ClusterName=acctdiff\nNodeName=n1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 State=UNKNOWN\nPartitionName=batch Nodes=n1 Default=YES MaxTime=INFINITE State=UP\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	format := strings.TrimSpace(string(mustOutput(t, exec.Command(buildBinary(t), "audit", "--sacct-format"))))
	sacctOut := real.mustRun(rel, "sacct", "-a", "-X", "--parsable2", "-S", t0, "-E", "now", "-o", format)
	hist := filepath.Join(work, "history.txt")
	if err := os.WriteFile(hist, []byte(sacctOut), 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(work, "state")
	sock := "/opt/slurm-roots/trixie/run/mysqld/mysqld.sock" // tools/real-accounting.sh's MariaDB for 24.11
	mustOutput(t, exec.Command(buildBinary(t), "import-slurmdbd", "--dsn", "root@unix("+sock+")/slurm_acct_db", "--config", confPath, "--state-dir", stateDir))

	auditHist := func(src ...string) *audit.History {
		t.Helper()
		out := mustOutput(t, exec.Command(buildBinary(t), append([]string{"audit", "--config", confPath, "--json"}, src...)...))
		var r audit.Report
		if err := json.Unmarshal(out, &r); err != nil || r.History == nil {
			t.Fatalf("audit %v: %v\n%s", src, err, out)
		}
		return r.History
	}
	for name, h := range map[string]*audit.History{"sacct": auditHist("--sacct", hist), "import": auditHist("--history-state", stateDir)} {
		if h.Jobs != 5 || h.Unchanged != 3 || h.Difference != 1 || h.Refused != 1 {
			t.Errorf("%s: %d jobs, %d unchanged, %d with a difference, %d refused; want 5, 3, 1, 1 (sacct:\n%s)", name, h.Jobs, h.Unchanged, h.Difference, h.Refused, sacctOut)
		}
		if len(h.ByUser) != 1 || h.ByUser[0].User != "slurm" || h.ByUser[0].Refused != 1 || h.ByUser[0].ByOption["--ntasks"] != 1 || h.ByUser[0].Different != 1 {
			t.Errorf("%s: by user %+v; want slurm with 1 refusal for --ntasks and 1 difference", name, h.ByUser)
		}
	}
}

func mustOutput(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr)
	}
	return out
}

// TestAuditBackendAI audits scripts against a frontend on Backend.AI (the
// manager test double, with a GPU agent): the engine's own rules decide —
// an image the manager knows is a --container that runs (named as an
// image, a documented difference), one it does not know is refused; GPUs
// are real devices there (no difference); more GPUs than an agent has are
// refused. The stock clients' --test-only agree.
func TestAuditBackendAI(t *testing.T) {
	d, f := baiFrontend(t, func(d *double.Double) {
		if err := d.AddAgent(double.Agent{ID: "i-gpu0", Slots: map[string]string{"cpu": "8", "mem": "16g", "cuda.device": "2"}}); err != nil {
			t.Fatal(err)
		}
	}, "")
	dir := filepath.Join(f.dir, "scripts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{
		"plain.sh":         "#SBATCH -n 2\n#SBATCH -t 10\nsrun hostname\n",
		"image.sh":         "#SBATCH --container=python\npython -V\n",
		"unknown_image.sh": "#SBATCH --container=example.org/nosuch:1\ntrue\n",
		"gpu.sh":           "#SBATCH --gres=gpu:1\nnvidia-smi\n",
		"gpu_too_many.sh":  "#SBATCH --gres=gpu:4\nnvidia-smi\n",
		"reservation.sh":   "#SBATCH --reservation=maint\ntrue\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/bash\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const rel = "24.11"
	r := runAudit(t, f, rel, dir)
	if r.Backend != "Backend.AI "+d.url {
		t.Errorf("report backend %q", r.Backend)
	}
	want := map[string]struct {
		verdict    audit.Verdict
		err, issue string
	}{
		"plain.sh":         {audit.Unchanged, "", ""},
		"image.sh":         {audit.Difference, "", "--container"},
		"unknown_image.sh": {audit.Refused, "ESLURM_NOT_SUPPORTED", "--container"},
		"gpu.sh":           {audit.Unchanged, "", ""},
		"gpu_too_many.sh":  {audit.Refused, "ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE", "--gres"},
		"reservation.sh":   {audit.Refused, "ESLURM_RESERVATION_INVALID", "--reservation"},
	}
	seen := 0
	for _, j := range r.Jobs {
		w, ok := want[filepath.Base(j.File)]
		if !ok {
			t.Errorf("unexpected job %+v", j)
			continue
		}
		seen++
		var errName, opt string
		if len(j.Findings) > 0 {
			errName, opt = j.Findings[0].SlurmError, j.Findings[0].Option
		}
		if j.Verdict != w.verdict || errName != w.err || opt != w.issue {
			t.Errorf("%s: %s %s %s; want %s %s %s (findings %+v)", filepath.Base(j.File), j.Verdict, errName, opt, w.verdict, w.err, w.issue, j.Findings)
		}
	}
	if seen != len(want) {
		t.Errorf("%d jobs classified, want %d", seen, len(want))
	}
	if n := agreeWithTestOnly(t, f, rel, r); n != len(want) {
		t.Errorf("%d jobs checked with --test-only, want %d", n, len(want))
	}
}
