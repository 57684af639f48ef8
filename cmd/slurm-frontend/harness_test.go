package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests drive the real binary with the stock Slurm clients
// of each release, installed by tools/install.sh. `make test` sets
// SLURM_FRONTEND_E2E=1, which turns a missing install into a failure
// instead of a skip.

const sharedDir = "/srv/slurm-frontend"

var releases = []string{"22.05", "24.11", "26.05"}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func repoRoot(t testing.TB) string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func needClients(t testing.TB) {
	t.Helper()
	missing := ""
	if _, err := os.Stat("/usr/bin/sinfo"); err != nil {
		missing = "host Slurm 22.05 clients"
	} else if _, err := os.Stat("/opt/slurm-roots/trixie/usr/bin/sinfo"); err != nil {
		missing = "Slurm 24.11 root"
	} else if _, err := os.Stat("/opt/slurm-roots/sid/usr/bin/sinfo"); err != nil {
		missing = "Slurm 26.05 root"
	} else if _, err := os.Stat("/etc/munge/munge.key"); err != nil {
		missing = "munge key"
	} else if os.Getuid() != 0 {
		missing = "root (chroot into the client roots)"
	}
	if missing == "" {
		if err := exec.Command("bash", filepath.Join(repoRoot(t), "tools/munged.sh"), "start").Run(); err != nil {
			missing = "a running munged"
		}
	}
	if missing != "" {
		if os.Getenv("SLURM_FRONTEND_E2E") != "" {
			t.Fatalf("end-to-end test needs %s: run tools/install.sh", missing)
		}
		t.Skipf("needs %s (run 'make setup', or 'make test' which does)", missing)
	}
}

func buildBinary(t testing.TB) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "slurm-frontend-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "slurm-frontend")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Dir = filepath.Join(repoRoot(t), "cmd", "slurm-frontend")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// frontend is one running server plus the client slurm.conf for it.
type frontend struct {
	t          testing.TB
	dir        string // under sharedDir
	stateDir   string
	configPath string
	clientConf string
	port       int
	cmd        *exec.Cmd
	logs       *bytes.Buffer
	logMu      sync.Mutex
}

// fakeCluster is the reference cluster of the captures (16 nodes, cpu,
// gpu, debug partitions), so outputs compare with a real slurmctld's.
const fakeCluster = `ClusterName=refcluster
GresTypes=gpu
NodeName=n[1-12] NodeAddr=127.0.0.[1-12] CPUs=32 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=128000 State=UNKNOWN
NodeName=n[13-16] NodeAddr=127.0.0.[13-16] CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=512000 Gres=gpu:4 State=UNKNOWN
PartitionName=cpu Nodes=n[1-12] Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=n[13-16] MaxTime=INFINITE State=UP
PartitionName=debug Nodes=n1 MaxTime=60 State=UP
`

func newFrontend(t testing.TB, clusterConf string) *frontend {
	t.Helper()
	needClients(t)
	bin := buildBinary(t)
	if err := os.MkdirAll(sharedDir, 0o1777); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(sharedDir, "e2e-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o1777)
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &frontend{t: t, dir: dir, stateDir: filepath.Join(dir, "state"), port: freePort(t)}
	f.configPath = filepath.Join(dir, "frontend.conf")
	if err := os.WriteFile(f.configPath, []byte(clusterConf), 0o644); err != nil {
		t.Fatal(err)
	}
	f.clientConf = filepath.Join(dir, "slurm.conf")
	out, err := exec.Command(bin, "client-conf", "--config", f.configPath,
		"--listen", fmt.Sprintf("127.0.0.1:%d", f.port)).Output()
	if err != nil {
		t.Fatalf("client-conf: %v", err)
	}
	if err := os.WriteFile(f.clientConf, out, 0o644); err != nil {
		t.Fatal(err)
	}
	f.start()
	t.Cleanup(f.stop)
	return f
}

func (f *frontend) start() {
	f.t.Helper()
	f.logs = &bytes.Buffer{}
	f.cmd = exec.Command(buildBinary(f.t), "serve", "--config", f.configPath, "--state-dir", f.stateDir,
		"--listen", fmt.Sprintf("127.0.0.1:%d", f.port), "--munge-key", "/etc/munge/munge.key")
	stderr, _ := f.cmd.StderrPipe()
	if err := f.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			f.logMu.Lock()
			f.logs.WriteString(line + "\n")
			f.logMu.Unlock()
			if strings.Contains(line, "ready:") {
				select {
				case ready <- true:
				default:
				}
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			f.cmd.Wait()
			f.t.Fatalf("server exited before ready:\n%s", f.Logs())
		}
	case <-time.After(20 * time.Second):
		f.t.Fatalf("server not ready in 20s:\n%s", f.Logs())
	}
}

func (f *frontend) stop() {
	if f.cmd == nil || f.cmd.Process == nil {
		return
	}
	f.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { f.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		f.cmd.Process.Kill()
		<-done
	}
	f.cmd = nil
}

// Logs returns what the server printed so far.
func (f *frontend) Logs() string {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	return f.logs.String()
}

// run runs a stock client of release rel against the server and returns
// its stdout, stderr and exit code.
func (f *frontend) run(rel string, args ...string) (string, string, int) {
	f.t.Helper()
	return runClient(f.t, rel, f.clientConf, f.dir, nil, args...)
}

func runClient(t testing.TB, rel, conf, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "tools/run-client.sh"), rel, conf}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s %v: timed out", rel, args)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// mustRun runs a client and fails the test on a non-zero exit.
func (f *frontend) mustRun(rel string, args ...string) string {
	f.t.Helper()
	out, errs, code := f.run(rel, args...)
	if code != 0 {
		f.t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s\nserver log:\n%s", rel, strings.Join(args, " "), code, out, errs, f.Logs())
	}
	return out
}
