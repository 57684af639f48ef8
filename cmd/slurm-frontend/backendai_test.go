package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// baiDouble is the Backend.AI manager double, run by the binary itself
// (slurm-frontend backendai-double) in run mode: batch commands really
// run, as each user's container uid.
type baiDouble struct {
	url, keypair string
	cmd          *exec.Cmd
	logs         *strings.Builder
}

func startDouble(t *testing.T, dir string, args ...string) *baiDouble {
	t.Helper()
	port := freePort(t)
	kp := filepath.Join(dir, "backendai.keypair")
	cmd := exec.Command(buildBinary(t), append([]string{"backendai-double", "-listen", fmt.Sprintf("127.0.0.1:%d", port),
		"-mode", "run", "-agents", "2", "-agent-slots", "cpu=4,mem=8g", "-cycle", "100ms", "-long-cycle", "1s",
		"-keypair-file", kp, "-users", "root:0:0,slurm:64030:64030"}, args...)...)
	pr, pw, _ := os.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	d := &baiDouble{url: fmt.Sprintf("http://127.0.0.1:%d", port), keypair: kp, cmd: cmd, logs: &strings.Builder{}}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := false
		for sc.Scan() {
			d.logs.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "listening on") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the Backend.AI double did not start: %s", d.logs)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return d
}

var exitCodeRe = regexp.MustCompile(`\bExitCode=(\d+:\d+)`)

// Stock sbatch, squeue, scontrol, scancel and sinfo of every release
// against the frontend on a Backend.AI manager (the double, running the
// jobs for real): nodes are the agents, jobs are sessions owned by their
// users, exit codes and outputs are the script's, a cancel ends the
// session, and what Backend.AI cannot do is refused at submission.
func TestBackendAIEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	needClients(t)
	base := workDir(t, "bai-")
	d := startDouble(t, base)
	cfg := fmt.Sprintf("ClusterName=baicluster\nFrontendBackend=backendai\nFrontendBackendAIEndpoint=%s\nFrontendBackendAIKeypair=%s\nFrontendImage=python\n", d.url, d.keypair)
	f := newFrontend(t, cfg)
	if !strings.Contains(f.Logs(), "engine backend.ai") {
		t.Fatalf("the server is not on the Backend.AI engine:\n%s", f.Logs())
	}
	r := f.as(t)
	// The nodes are the manager's agents, the partition its resource group.
	out := r.mustRun("24.11", "sinfo", "-h", "-N", "-o", "%N %P %c %m")
	if out != "i-agent0000 default* 4 8192\ni-agent0001 default* 4 8192\n" {
		t.Errorf("sinfo on Backend.AI: %q", out)
	}
	for i, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir := workDir(t, "bai-job-")
			os.Chown(dir, 64030, 64030)
			ru := f.as(t).in(dir).user("slurm")
			outFile := filepath.Join(dir, "out-%j")
			sub := ru.mustRun(rel, "sbatch", "-o", outFile, "--mem=2G", "--wrap",
				fmt.Sprintf("echo job $SLURM_JOB_ID as $(id -u) in $PWD; echo to stderr >&2; exit %d", 3+i))
			m := submittedRe.FindStringSubmatch(sub)
			if m == nil {
				t.Fatalf("sbatch: %q", sub)
			}
			id := atoi(m[1])
			rows := waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "FAILED" })
			if rows[id].reason != "NonZeroExitCode" {
				t.Errorf("job %d: reason %q", id, rows[id].reason)
			}
			show := r.mustRun(rel, "scontrol", "show", "job", fmt.Sprint(id))
			if m := exitCodeRe.FindStringSubmatch(show); m == nil || m[1] != fmt.Sprintf("%d:0", 3+i) {
				t.Errorf("scontrol show job %d: exit code %v, want %d:0", id, m, 3+i)
			}
			path := filepath.Join(dir, fmt.Sprintf("out-%d", id))
			b, err := os.ReadFile(path)
			if want := fmt.Sprintf("job %d as 64030 in %s\nto stderr\n", id, dir); err != nil || string(b) != want {
				t.Errorf("output %q (%v), want %q", b, err, want)
			}
			var st syscall.Stat_t
			if syscall.Stat(path, &st) == nil && st.Uid != 64030 {
				t.Errorf("the output belongs to uid %d, want the job's 64030", st.Uid)
			}

			// A running job cancelled.
			sub = ru.mustRun(rel, "sbatch", "-o", "/dev/null", "--mem=2G", "--wrap", "sleep 300")
			long := atoi(submittedRe.FindStringSubmatch(sub)[1])
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[long].state == "RUNNING" })
			ru.mustRun(rel, "scancel", fmt.Sprint(long))
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[long].state == "CANCELLED" })

			// What Backend.AI cannot do: refused up front.
			_, errs, code := ru.run(rel, "sbatch", "--exclusive", "-o", "/dev/null", "--wrap", "true")
			if code == 0 || !strings.Contains(errs, "not supported") {
				t.Errorf("sbatch --exclusive on Backend.AI: exit %d %q, want a refusal", code, errs)
			}
		})
	}
	// A user Backend.AI does not know gets a failed launch, not a job
	// run as someone else.
	dir := workDir(t, "bai-nobody-")
	rn := f.as(t).in(dir).user("nobody")
	sub := rn.mustRun("24.11", "sbatch", "-o", "/dev/null", "--mem=2G", "--wrap", "true")
	id := atoi(submittedRe.FindStringSubmatch(sub)[1])
	rows := waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "FAILED" })
	t.Logf("RESULT backend.ai engine: 3 releases, exit codes, outputs as the job's uid, cancel, --exclusive refused; unknown user's job: %s (%s)", rows[id].state, rows[id].reason)
}
