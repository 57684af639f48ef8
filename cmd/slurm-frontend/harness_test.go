package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
// instead of a skip. SLURM_FRONTEND_KEEP=1 keeps the directory (configs,
// state) of a server whose test failed, under /srv/slurm-frontend/e2e-*.

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
	if testing.Short() && os.Getenv("SLURM_FRONTEND_E2E") == "" {
		// make test-unit: no real clients or daemons, whatever is installed.
		t.Skip("end-to-end test (-short): make test runs it")
	}
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

// needRealCtld is needClients plus the real slurmctld of every release
// (tools/install.sh installs them too).
func needRealCtld(t testing.TB) {
	t.Helper()
	needClients(t)
	for _, p := range []string{"/usr/sbin/slurmctld", "/opt/slurm-roots/trixie/usr/sbin/slurmctld", "/opt/slurm-roots/sid/usr/sbin/slurmctld"} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("SLURM_FRONTEND_E2E") != "" {
				t.Fatalf("differential test needs %s: run tools/install.sh", p)
			}
			t.Skipf("needs %s (run 'make setup')", p)
		}
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
		// The shim binary beside it, as `make build` lays them out: the
		// server then runs every job and srun task through it.
		for _, b := range [][2]string{{binPath, "slurm-frontend"}, {binPath + "-shim", "slurm-frontend-shim"}} {
			cmd := exec.Command("go", "build", "-o", b[0], ".")
			cmd.Dir = filepath.Join(repoRoot(t), "cmd", b[1])
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build: %v\n%s", err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// TestMain removes the binary buildBinary made.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// Ports for the tests come in blocks of portBlock, below the kernel's
// ephemeral range (32768 and up): a port from that range can be taken as
// the source port of some client's connection while the server is down for
// a restart, and the restart's bind then fails. A server listens on
// several ports next to its own (node stand-ins on port+1, slurmdbd's on
// port+2 or past the nodes'), so each caller gets a whole block, and this
// process never hands out a block twice while others remain: two parallel
// tests picking ports one apart collided before (bind: address in use).
const (
	portLow   = 20000
	portHigh  = 32000
	portBlock = 8
)

var (
	portMu   sync.Mutex
	portNext = -1 // index of the next block to try; -1: not yet seeded
)

// freePort returns the first port of a block of portBlock free ports.
func freePort(t testing.TB) int {
	t.Helper()
	portMu.Lock()
	defer portMu.Unlock()
	blocks := (portHigh - portLow) / portBlock
	if portNext < 0 {
		// Test processes of other runs on this machine start elsewhere.
		portNext = rand.IntN(blocks)
	}
	for range blocks {
		base := portLow + portNext*portBlock
		portNext = (portNext + 1) % blocks
		if blockFree(base) {
			return base
		}
	}
	t.Fatal("no free port block below the ephemeral range")
	return 0
}

// blockFree says whether every port of the block at base can be bound.
func blockFree(base int) bool {
	for p := base; p < base+portBlock; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// frontend is one running server plus the client slurm.conf for it.
type frontend struct {
	t          testing.TB
	dir        string // under sharedDir
	stateDir   string
	configPath string
	clientConf string
	port       int
	args       []string // extra serve flags
	cmd        *exec.Cmd
	exited     chan struct{} // closed when cmd has exited
	waitErr    error         // cmd.Wait's result, valid once exited is closed
	logMu      sync.Mutex
	logs       bytes.Buffer // every run's output, restarts marked
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

func newFrontend(t testing.TB, clusterConf string, serveArgs ...string) *frontend {
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
	// Writable by the non-root test user (RUN_AS=slurm) too.
	os.Chmod(dir, 0o1777)
	t.Cleanup(func() {
		if !t.Failed() || os.Getenv("SLURM_FRONTEND_KEEP") == "" {
			os.RemoveAll(dir)
		}
	})
	f := &frontend{t: t, dir: dir, stateDir: filepath.Join(dir, "state"), port: freePort(t), args: serveArgs}
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

// logWriter collects the server's output and signals the "ready:" line.
type logWriter struct {
	f       *frontend
	partial []byte
	ready   chan struct{}
	once    sync.Once
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.f.logMu.Lock()
	w.f.logs.Write(p)
	w.f.logMu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if bytes.Contains(w.partial[:i], []byte("ready:")) {
			w.once.Do(func() { close(w.ready) })
		}
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

// start runs the server on f's config, state dir and port, and waits for
// its "ready:" line.
func (f *frontend) start() {
	f.t.Helper()
	if err := f.tryStart(); err != nil {
		f.t.Fatal(err)
	}
}

// tryStart is start returning the failure instead of ending the test.
func (f *frontend) tryStart() error {
	if f.cmd != nil {
		return fmt.Errorf("start: server already running")
	}
	f.logMu.Lock()
	if f.logs.Len() > 0 {
		fmt.Fprintf(&f.logs, "----- restart at %s -----\n", time.Now().Format(time.TimeOnly))
	}
	f.logMu.Unlock()
	w := &logWriter{f: f, ready: make(chan struct{})}
	cmd := exec.Command(buildBinary(f.t), "serve", "--config", f.configPath, "--state-dir", f.stateDir,
		"--listen", fmt.Sprintf("127.0.0.1:%d", f.port), "--munge-key", "/etc/munge/munge.key")
	cmd.Args = append(cmd.Args, f.args...)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return err
	}
	f.cmd = cmd
	f.exited = make(chan struct{})
	exited := f.exited
	go func() { f.waitErr = cmd.Wait(); close(exited) }()
	select {
	case <-w.ready:
		return nil
	case <-exited:
		f.cmd = nil
		return fmt.Errorf("server exited before ready (%v):\n%s", f.waitErr, f.Logs())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-exited
		f.cmd = nil
		return fmt.Errorf("server not ready in 20s:\n%s", f.Logs())
	}
}

// movePort gives the (stopped) server a new port and rewrites the client
// slurm.conf for it.
func (f *frontend) movePort() {
	f.t.Helper()
	f.port = freePort(f.t)
	out, err := exec.Command(buildBinary(f.t), "client-conf", "--config", f.configPath,
		"--listen", fmt.Sprintf("127.0.0.1:%d", f.port)).Output()
	if err != nil {
		f.t.Fatalf("client-conf: %v", err)
	}
	if err := os.WriteFile(f.clientConf, out, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// alive reports whether the server process is still running.
func (f *frontend) alive() bool {
	if f.cmd == nil {
		return false
	}
	select {
	case <-f.exited:
		return false
	default:
		return true
	}
}

// stop ends the server with SIGTERM (SIGKILL after 10 s) and waits for it.
func (f *frontend) stop() { f.stopWith(syscall.SIGTERM, 10*time.Second) }

// stopWith sends sig, waits up to grace for the exit (then SIGKILLs), and
// returns how the process ended and how long it took to.
func (f *frontend) stopWith(sig syscall.Signal, grace time.Duration) (*os.ProcessState, time.Duration, error) {
	if f.cmd == nil {
		return nil, 0, nil
	}
	cmd := f.cmd
	f.cmd = nil
	start := time.Now()
	select {
	case <-f.exited: // died on its own
		return cmd.ProcessState, 0, fmt.Errorf("server had already exited: %v", f.waitErr)
	default:
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-f.exited:
		return cmd.ProcessState, time.Since(start), nil
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-f.exited
		return cmd.ProcessState, time.Since(start), fmt.Errorf("server did not exit within %v of %v", grace, sig)
	}
}

// Logs returns what the server printed so far.
func (f *frontend) Logs() string {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	return f.logs.String()
}

// runner runs stock clients against one controller for one (sub)test.
type runner struct {
	t    testing.TB
	conf string        // client slurm.conf
	dir  string        // working directory (under sharedDir)
	env  []string      // extra environment, e.g. RUN_AS=slurm
	logs func() string // the controller's log, for failure messages
	wait time.Duration // how long a client may run (0: 60 s)
}

// as returns a runner that reports to t (use it in subtests).
func (f *frontend) as(t testing.TB) runner {
	return runner{t: t, conf: f.clientConf, dir: f.dir, logs: f.Logs}
}

// user returns a copy of r that runs clients as the given local user.
func (r runner) user(name string) runner {
	r.env = append(append([]string(nil), r.env...), "RUN_AS="+name)
	return r
}

// within returns a copy of r whose clients may run for d.
func (r runner) within(d time.Duration) runner {
	r.wait = d
	return r
}

// in returns a copy of r that runs clients in dir (under sharedDir).
func (r runner) in(dir string) runner {
	r.dir = dir
	return r
}

func (r runner) run(rel string, args ...string) (string, string, int) {
	r.t.Helper()
	if r.wait > 0 {
		return runClientWithin(r.t, r.wait, rel, r.conf, r.dir, r.env, args...)
	}
	return runClient(r.t, rel, r.conf, r.dir, r.env, args...)
}

// mustRun runs a client and fails the test on a non-zero exit.
func (r runner) mustRun(rel string, args ...string) string {
	r.t.Helper()
	out, errs, code := r.run(rel, args...)
	if code != 0 {
		logs := ""
		if r.logs != nil {
			logs = r.logs()
		}
		r.t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s\ncontroller log:\n%s", rel, strings.Join(args, " "), code, out, errs, logs)
	}
	return out
}

// run runs a stock client of release rel against the server and returns
// its stdout, stderr and exit code.
func (f *frontend) run(rel string, args ...string) (string, string, int) {
	f.t.Helper()
	return f.as(f.t).run(rel, args...)
}

// mustRun runs a client and fails the test on a non-zero exit.
func (f *frontend) mustRun(rel string, args ...string) string {
	f.t.Helper()
	return f.as(f.t).mustRun(rel, args...)
}

// hermeticEnv is the test process's environment without the variables
// run-client.sh would pass on to the clients (SLURM_*, SQUEUE_FORMAT, ...),
// which would change what the clients print.
func hermeticEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := name == "RUN_AS"
		for _, p := range []string{"SLURM_", "SQUEUE_", "SINFO_", "SBATCH_", "SALLOC_", "SRUN_", "SACCT_", "SCANCEL_", "SCONTROL_", "SSHARE_", "SPRIO_", "SSTAT_"} {
			drop = drop || strings.HasPrefix(name, p)
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}

func runClient(t testing.TB, rel, conf, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runClientWithin(t, 60*time.Second, rel, conf, dir, env, args...)
}

func runClientWithin(t testing.TB, limit time.Duration, rel, conf, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "tools/run-client.sh"), rel, conf}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(hermeticEnv(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s %v: timed out after %v\nstdout:\n%s\nstderr:\n%s", rel, args, limit, out.String(), errb.String())
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// realCtld is a real slurmctld of one release on the fake cluster
// (tools/real-slurmctld.sh), with no slurmd: nodes stay UNKNOWN.
type realCtld struct {
	rel  string
	dir  string
	port int
	conf string
}

func startRealCtld(t testing.TB, rel string) *realCtld { return startRealCtldWith(t, rel, "") }

// startRealCtldWith starts a real slurmctld whose slurm.conf has the
// extra lines appended.
func startRealCtldWith(t testing.TB, rel, extra string) *realCtld {
	t.Helper()
	needRealCtld(t)
	if err := os.MkdirAll(sharedDir, 0o1777); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(sharedDir, "real-"+rel+"-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o1777)
	// SlurmctldPort and SlurmdPort (= port+1) must both be free. Pick
	// below the kernel's ephemeral range, which busy tests (and the bench
	// harness) churn through.
	port := portPair(t)
	r := &realCtld{rel: rel, dir: dir, port: port, conf: filepath.Join(dir, "slurm.conf")}
	tool := filepath.Join(repoRoot(t), "tools/real-slurmctld.sh")
	t.Cleanup(func() {
		if out, err := exec.Command("bash", tool, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping real slurmctld %s: %v\n%s", rel, err, out)
		}
		os.RemoveAll(dir)
	})
	for _, args := range [][]string{
		{"conf", dir, fmt.Sprint(port), "refcluster"},
		{"start", rel, dir, fmt.Sprint(port)},
	} {
		if args[0] == "start" && extra != "" {
			f, err := os.OpenFile(r.conf, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprint(f, extra)
			f.Close()
		}
		if out, err := exec.Command("bash", append([]string{tool}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("real-slurmctld.sh %v: %v\n%s", args, err, out)
		}
	}
	return r
}

func (r *realCtld) Logs() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "slurmctld.log"))
	return string(b)
}

// workDir makes a directory under sharedDir that every user may write,
// removed at the end of the test.
func workDir(t testing.TB, prefix string) string {
	t.Helper()
	if err := os.MkdirAll(sharedDir, 0o1777); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(sharedDir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o1777)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (r *realCtld) as(t testing.TB) runner {
	return runner{t: t, conf: r.conf, dir: r.dir, logs: r.Logs}
}

// portPair returns a port such that it and the next one are free (a real
// slurmctld's SlurmctldPort and SlurmdPort), picked below the kernel's
// ephemeral range, which busy tests and the bench harness churn through
// (slurmctld binds 0.0.0.0:port and fails on a port in TIME-WAIT use).
func portPair(t testing.TB) int {
	t.Helper()
	for i := 0; i < 200; i++ {
		port := 20000 + rand.IntN(12000)
		l1, err1 := net.Listen("tcp", fmt.Sprintf(":%d", port))
		l2, err2 := net.Listen("tcp", fmt.Sprintf(":%d", port+1))
		if l1 != nil {
			l1.Close()
		}
		if l2 != nil {
			l2.Close()
		}
		if err1 == nil && err2 == nil {
			return port
		}
	}
	t.Fatal("no two consecutive free ports")
	return 0
}
