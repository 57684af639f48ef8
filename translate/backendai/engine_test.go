package backendai_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/backendai"
	"github.com/lablup/slurm-frontend/translate/backendai/double"
	"github.com/lablup/slurm-frontend/translate/enginetest"
	"github.com/lablup/slurm-frontend/translate/local"
)

// The double runs batch commands through the embedded engine's shim,
// which is this test binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		if err := local.ShimMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "shim:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func requireRunner(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("run mode needs root (uid switching, namespaces)")
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot create PID and mount namespaces here: %v", err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// fixture: a double in run mode with two agents, and the user "nobody"
// (uid 65534) whose containers run as 65534.
type fixture struct {
	d   *double.Double
	e   *backendai.Engine
	out string
}

func newFixture(t *testing.T, mut func(*double.Options)) *fixture {
	t.Helper()
	requireRunner(t)
	lg := log.New(testWriter{t}, "", log.Lmicroseconds)
	opts := double.Options{Mode: double.ModeRun, Cycle: 20 * time.Millisecond, LongCycle: 200 * time.Millisecond,
		KillGrace: 500 * time.Millisecond, Logger: lg}
	if mut != nil {
		mut(&opts)
	}
	d, err := double.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	uid, gid := 65534, 65534
	if _, err := d.AddUser(double.User{Username: "nobody", Email: "nobody@example.com", Projects: []string{"default"},
		ContainerUID: &uid, ContainerMainGID: &gid}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddKeyPair(double.KeyPair{UserEmail: "nobody@example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"i-ag1", "i-ag2"} {
		if err := d.AddAgent(double.Agent{ID: id, Slots: map[string]string{"cpu": "4", "mem": "8g", "cuda.device": "1"}}); err != nil {
			t.Fatal(err)
		}
	}
	ak, sk := d.AdminKeys()
	c, err := backendai.New(backendai.Config{Endpoint: d.URL(), AccessKey: ak, SecretKey: sk, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	e, err := backendai.NewEngine(backendai.EngineConfig{Client: c, Cluster: "test", Image: "python", Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	out, err := os.MkdirTemp("", "slurmfe-bai-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o777)
	t.Cleanup(func() { os.RemoveAll(out) })
	return &fixture{d: d, e: e, out: out}
}

func (f *fixture) spec(job uint32, script string) translate.SessionSpec {
	return translate.SessionSpec{Name: fmt.Sprintf("slurm-%d", job), JobID: job, ResourceGroup: "default",
		UID: 65534, GID: 65534, UserName: "nobody", Script: script, Argv: []string{"slurm_script"},
		Env: []string{"SLURM_JOB_ID=" + fmt.Sprint(job), "PATH=/usr/bin:/bin"}, WorkDir: f.out,
		StdOut: filepath.Join(f.out, fmt.Sprintf("slurm-%d.out", job)), Nodes: 1, CPUsPerNode: 1, MemPerNodeMB: 2048}
}

// The Backend.AI engine keeps the engine contract, over the manager double.
func TestEngineContract(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) *enginetest.Harness {
		f := newFixture(t, nil)
		return &enginetest.Harness{
			Engine: f.e,
			Spec:   f.spec,
			Output: func(_ translate.SessionID, spec translate.SessionSpec) string {
				b, _ := os.ReadFile(spec.StdOut)
				return string(b)
			},
			Patience: 2,
		}
	})
}

func ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func waitEnd(t *testing.T, e *backendai.Engine, id translate.SessionID) translate.SessionEvent {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev := <-e.Events():
			if ev.ID == id && ev.Status.Terminal() {
				return ev
			}
		case <-deadline:
			t.Fatalf("session %s did not end", id)
		}
	}
}

// destroy ends a session, trying again while the manager cannot take it
// (a session in some transitions), as the controller's resync would.
func destroy(t *testing.T, e *backendai.Engine, id translate.SessionID) {
	t.Helper()
	var err error
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		c, cancel := ctx()
		err = e.DestroySession(c, id, true)
		cancel()
		if err == nil {
			return
		}
	}
	t.Fatalf("DestroySession %s: %v", id, err)
}

// What a job sees: its files as its user, its directory, its arguments,
// stderr apart, and exact exit statuses and launch failures.
func TestEngineJobSemantics(t *testing.T) {
	f := newFixture(t, nil)
	c, cancel := ctx()
	defer cancel()
	spec := f.spec(21, "#!/bin/sh\necho \"out $1 $2 $(id -u):$(id -g) $PWD $SLURM_JOB_ID\"\necho err >&2\nexit 7\n")
	spec.Argv = []string{"slurm_script", "a b", "it's"}
	spec.StdErr = filepath.Join(f.out, "err")
	id, err := f.e.CreateSession(c, spec)
	if err != nil {
		t.Fatal(err)
	}
	end := waitEnd(t, f.e, id)
	if end.ExitUnknown || end.ExitCode != 7 || end.Status != translate.SessionTerminated || end.Reason != translate.ReasonTaskFinished {
		t.Errorf("exit 7 ended %+v", end)
	}
	b, _ := os.ReadFile(spec.StdOut)
	if want := fmt.Sprintf("out a b it's 65534:65534 %s 21\n", f.out); string(b) != want {
		t.Errorf("stdout %q, want %q", b, want)
	}
	if b, _ := os.ReadFile(spec.StdErr); string(b) != "err\n" {
		t.Errorf("stderr %q", b)
	}
	var st syscall.Stat_t
	if syscall.Stat(spec.StdOut, &st) != nil || st.Uid != 65534 {
		t.Errorf("the output file belongs to uid %d, want the job's 65534", st.Uid)
	}

	// An output file the user cannot create: a launch failure.
	bad := f.spec(22, "#!/bin/sh\necho never\n")
	bad.StdOut = "/root/not-yours.out"
	id, err = f.e.CreateSession(c, bad)
	if err != nil {
		t.Fatal(err)
	}
	if end := waitEnd(t, f.e, id); end.Status != translate.SessionError || end.Reason != translate.ReasonFailedToStart {
		t.Errorf("unwritable output ended %+v, want a launch failure", end)
	}
	if _, err := os.Stat(bad.StdOut); err == nil {
		t.Errorf("%s was created", bad.StdOut)
	}
}

// Refusals: a user Backend.AI does not know, one whose containers run as
// another uid, what Backend.AI cannot do, an unknown image.
func TestEngineRefusals(t *testing.T) {
	f := newFixture(t, nil)
	uid := 1234
	f.d.AddUser(double.User{Username: "slurm", Email: "slurm@example.com", Projects: []string{"default"}, ContainerUID: &uid, ContainerMainGID: &uid})
	f.d.AddKeyPair(double.KeyPair{UserEmail: "slurm@example.com"})
	c, cancel := ctx()
	defer cancel()
	for _, tc := range []struct {
		what string
		mut  func(*translate.SessionSpec)
		want error
	}{
		{"unknown user", func(s *translate.SessionSpec) { s.UserName, s.UID = "ghost", 4242 }, translate.ErrNoAccount},
		{"other container uid", func(s *translate.SessionSpec) { s.UserName, s.UID = "slurm", 64030 }, translate.ErrForbidden},
		{"--exclude", func(s *translate.SessionSpec) { s.ExcNodes = []string{"i-ag1"} }, translate.ErrNotSupported},
		{"--exclusive", func(s *translate.SessionSpec) { s.Exclusive = true }, translate.ErrNotSupported},
		{"unknown image", func(s *translate.SessionSpec) { s.Image = "no/such:image" }, translate.ErrInvalidImage},
		{"more than any agent has", func(s *translate.SessionSpec) { s.CPUsPerNode = 512 }, nil},
	} {
		s := f.spec(30, "#!/bin/sh\ntrue\n")
		tc.mut(&s)
		id, err := f.e.CreateSession(c, s)
		if tc.want == nil {
			if err == nil {
				// The manager takes it and never places it; the
				// controller refuses it at submission from the topology.
				f.e.DestroySession(c, id, true)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: CreateSession: %v, want %v", tc.what, err, tc.want)
		}
		if err == nil {
			f.e.DestroySession(c, id, true)
		}
	}
	if err := f.e.CheckImage("no/such:image", 65534, 65534); !errors.Is(err, translate.ErrInvalidImage) {
		t.Errorf("CheckImage of an unknown image: %v", err)
	}
	if err := f.e.CheckImage("python", 65534, 65534); err != nil {
		t.Errorf("CheckImage python: %v", err)
	}
}

// A restart of the frontend: a new engine finds the sessions of the old
// one in its listing, with the exit status of those that ended meanwhile.
func TestEngineSessionsAfterRestart(t *testing.T) {
	f := newFixture(t, nil)
	c, cancel := ctx()
	defer cancel()
	id, err := f.e.CreateSession(c, f.spec(41, "#!/bin/sh\nexit 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	long, err := f.e.CreateSession(c, f.spec(42, "#!/bin/sh\nexec sleep 300\n"))
	if err != nil {
		t.Fatal(err)
	}
	waitEnd(t, f.e, id)
	f.e.Close()
	ak, sk := f.d.AdminKeys()
	cl, _ := backendai.New(backendai.Config{Endpoint: f.d.URL(), AccessKey: ak, SecretKey: sk})
	e2, err := backendai.NewEngine(backendai.EngineConfig{Client: cl, Cluster: "test", Image: "python"})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	ss, err := e2.Sessions(c)
	if err != nil {
		t.Fatal(err)
	}
	got := map[translate.SessionID]translate.SessionInfo{}
	for _, s := range ss {
		got[s.ID] = s
	}
	if s := got[id]; s.JobID != 41 || s.Status != translate.SessionTerminated || s.ExitCode != 5 || s.ExitUnknown {
		t.Errorf("the ended session after a restart: %+v", s)
	}
	if s := got[long]; s.JobID != 42 || s.Status.Terminal() {
		t.Errorf("the live session after a restart: %+v", s)
	}
	// Another frontend's sessions are not ours.
	cl3, _ := backendai.New(backendai.Config{Endpoint: f.d.URL(), AccessKey: ak, SecretKey: sk})
	e3, _ := backendai.NewEngine(backendai.EngineConfig{Client: cl3, Cluster: "other", Image: "python"})
	defer e3.Close()
	if ss, err := e3.Sessions(c); err != nil || len(ss) != 0 {
		t.Errorf("another cluster's frontend lists %d sessions (%v), want none", len(ss), err)
	}
	if err := e2.DestroySession(c, long, true); err != nil {
		t.Errorf("destroy after a restart: %v", err)
	}
}

// What a job asks for becomes the session's request: typed accelerators
// their slot, a GPU share cuda.shares, bai:shmem resource_opts, bai:mount
// the owner's vfolder by id; a folder the user has not is refused.
func TestEngineResourceMapping(t *testing.T) {
	f := newFixture(t, nil)
	if err := f.d.AddAgent(double.Agent{ID: "i-rocm", Slots: map[string]string{"cpu": "8", "mem": "16g", "rocm.device": "2", "cuda.shares": "4"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.AddVFolder(double.VFolder{Name: "data", OwnerEmail: "nobody@example.com"}); err != nil {
		t.Fatal(err)
	}
	ak, sk := f.d.AdminKeys()
	cl, _ := backendai.New(backendai.Config{Endpoint: f.d.URL(), AccessKey: ak, SecretKey: sk})
	c, cancel := ctx()
	defer cancel()
	for _, tc := range []struct {
		what string
		mut  func(*translate.SessionSpec)
		slot string
		want string
	}{
		{"--gres=gpu:rocm:2", func(s *translate.SessionSpec) { s.GPUType, s.GPUsPerNode = "rocm", 2 }, "rocm.device", "2"},
		{"--gres=gpu:1", func(s *translate.SessionSpec) { s.GPUsPerNode = 1 }, "cuda.device", "1"},
		{"--gres=mps:50", func(s *translate.SessionSpec) { s.GPUShare = 50 }, "cuda.shares", "0.5"},
		{"bai:shmem, bai:mount", func(s *translate.SessionSpec) { s.Comment = "keep this bai:shmem=256m bai:mount=data:/data:ro" }, "mem", "2147483648"},
	} {
		s := f.spec(50, "#!/bin/sh\nexec sleep 300\n")
		tc.mut(&s)
		if err := f.e.CheckSpec(&s); err != nil {
			t.Errorf("%s: CheckSpec: %v", tc.what, err)
			continue
		}
		id, err := f.e.CreateSession(c, s)
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			continue
		}
		got, err := cl.GetSession(c, string(id), false)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := got.RequestedSlots[tc.slot]; v != tc.want {
			t.Errorf("%s: requested %s = %q, want %q (%v)", tc.what, tc.slot, v, tc.want, got.RequestedSlots)
		}
		destroy(t, f.e, id)
		waitEnd(t, f.e, id)
	}
	s := f.spec(51, "#!/bin/sh\ntrue\n")
	s.Comment = "bai:mount=not-mine"
	if _, err := f.e.CreateSession(c, s); !errors.Is(err, translate.ErrImpossible) {
		t.Errorf("a folder the user has not: %v, want ErrImpossible", err)
	}
	for _, bad := range []string{"bai:mount=", "bai:mount=a:b:xx", "bai:shmem=lots", "bai:gpu=4"} {
		s.Comment = bad
		if err := f.e.CheckSpec(&s); err == nil {
			t.Errorf("CheckSpec accepted --comment %q", bad)
		}
	}
}

// A session whose agent is lost ends with it: NODE_FAIL's reason.
func TestEngineAgentLost(t *testing.T) {
	f := newFixture(t, func(o *double.Options) { o.StaleKernelAfter = 500 * time.Millisecond })
	c, cancel := ctx()
	defer cancel()
	s := f.spec(61, "#!/bin/sh\nexec sleep 300\n")
	s.ReqNodes = []string{"i-ag2"}
	id, err := f.e.CreateSession(c, s)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for running := false; !running; {
		select {
		case ev := <-f.e.Events():
			running = ev.ID == id && ev.Status == translate.SessionRunning
		case <-deadline:
			t.Fatal("not running")
		}
	}
	if err := f.d.MarkAgentLost("i-ag2"); err != nil {
		t.Fatal(err)
	}
	if end := waitEnd(t, f.e, id); end.Reason != translate.ReasonAgentLost {
		t.Errorf("the session of a lost agent ended %+v, want agent-termination", end)
	}
}

// What a session used comes back with its end, from the kernels'
// last_stat: the CPU time its processes took and their peak memory.
func TestEngineUsage(t *testing.T) {
	f := newFixture(t, nil)
	c, cancel := ctx()
	defer cancel()
	// One to two seconds of CPU, and a 40 MB string held by bash.
	s := f.spec(71, "#!/bin/bash\nend=$((SECONDS+2)); while [ $SECONDS -lt $end ]; do :; done\nx=$(head -c 40000000 /dev/zero | tr '\\0' a)\necho ${#x}\n")
	id, err := f.e.CreateSession(c, s)
	if err != nil {
		t.Fatal(err)
	}
	ev := waitEnd(t, f.e, id)
	if ev.Usage == nil {
		t.Fatalf("end of %s without usage: %+v", id, ev)
	}
	if cpu := ev.Usage.UserCPU + ev.Usage.SysCPU; cpu < 500*time.Millisecond || cpu > 30*time.Second {
		t.Errorf("CPU time %v, want one to two seconds", cpu)
	}
	if ev.Usage.MaxRSSKB < 38000 {
		t.Errorf("max RSS %d KiB, want at least 38,000 (bash holds 40 MB)", ev.Usage.MaxRSSKB)
	}
	// The same from the session listing, after the event.
	got, err := f.e.Session(c, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Usage == nil || *got.Usage != *ev.Usage {
		t.Errorf("Session(%s).Usage = %+v, the event said %+v", id, got.Usage, ev.Usage)
	}
}
