package local

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// Job steps on the embedded engine. A step's task runs where slurmstepd
// would run it: inside the job's PID and mount namespaces (those of the
// session's shim), in the job's cgroup, as the job's user. The engine
// enters the namespaces with nsenter(1) (a Go process cannot enter a
// mount namespace itself: it is multithreaded), running this binary as
// "shim task", which joins the cgroup, drops to the user and executes
// the task. nsenter stays the task's parent on the host: its exit status
// is the task's (it re-raises a signal the task died of), and the task's
// host pid is nsenter's only child.

// taskSpec is what "shim task" reads on fd 3.
type taskSpec struct {
	Argv    []string `json:"argv"`
	Env     []string `json:"env"`
	Cwd     string   `json:"cwd"`
	UID     uint32   `json:"uid"`
	GID     uint32   `json:"gid"`
	Groups  []uint32 `json:"groups"`
	PTY     bool     `json:"pty"`
	Cgroups []string `json:"cgroups"` // the job's cgroup directories
	// CgroupV1: the directories are cgroup v1 hierarchies (the task's
	// thread joins them alone, see joinCgroups).
	CgroupV1 bool   `json:"cgroup_v1,omitempty"`
	Rlimits  string `json:"rlimits"` // formatRlimits of the job's
	Node     string `json:"node"`
	Out      string `json:"out,omitempty"` // files the task opens as the user
	Err      string `json:"err,omitempty"`
	In       string `json:"in,omitempty"`
	Append   bool   `json:"append,omitempty"`
}

// ErrNsenter: the host has no nsenter(1) (util-linux), which steps need.
var ErrNsenter = errors.New("embedded engine: nsenter (util-linux) is not installed: job steps cannot run")

// ExecTask starts a task of a step in the running session id.
func (e *Engine) ExecTask(ctx context.Context, id translate.SessionID, t *translate.StepTask) (translate.TaskProc, error) {
	x, err := e.exec()
	if err != nil {
		return nil, err
	}
	return x.execTask(ctx, id, t)
}

var _ translate.StepExecutor = (*Engine)(nil)

func (x *executor) execTask(ctx context.Context, id translate.SessionID, t *translate.StepTask) (translate.TaskProc, error) {
	x.mu.Lock()
	s := x.sessions[id]
	var pid int
	var start uint64
	var dir string
	if s != nil {
		pid, start, dir = s.shimPID, s.shimStart, s.dir
	}
	running := s != nil && s.status == translate.SessionRunning
	x.mu.Unlock()
	switch {
	case s == nil:
		return nil, fmt.Errorf("%w: %s", translate.ErrNoSession, id)
	case !running || pid == 0 || !alive(pid, start):
		return nil, fmt.Errorf("%w: %s", translate.ErrNotRunning, id)
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return nil, ErrNsenter
	}
	var lr launchRecord
	if err := readJSON(filepath.Join(dir, fLaunch), &lr); err != nil {
		return nil, fmt.Errorf("embedded engine: session %s: %w", id, err)
	}
	spec := taskSpec{Argv: t.Argv, Env: t.Env, Cwd: t.Cwd, UID: t.UID, GID: t.GID, Groups: t.Groups, PTY: t.PTY,
		Rlimits: formatRlimits(lr.Spec.Rlimits), Node: t.Node, Out: t.OutPath, Err: t.ErrPath, In: t.InPath, Append: t.AppendOut}
	if lr.Cgroup != nil {
		spec.Cgroups, spec.CgroupV1 = lr.Cgroup.Dirs, lr.Cgroup.Version == 1
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, err
	}
	// Inside the mount namespace /proc is the job's: /proc/1/exe is the
	// shim's binary, which is this one.
	cmd := &exec.Cmd{
		Path: nsenter,
		Args: []string{"nsenter", "-t", strconv.Itoa(pid), "-m", "-p", "--", "/proc/1/exe", "shim", "task"},
		Env:  []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
		Dir:  "/",
		// The task's stdio; nil is /dev/null.
		Stdin: t.Stdin, Stdout: t.Stdout, Stderr: t.Stderr,
		ExtraFiles:  []*os.File{specR, readyW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if t.Stdin == nil {
		cmd.Stdin = nil
	}
	// Go starts nsenter sharing this process's memory until the exec
	// (CLONE_VM), so its peak RSS starts at this process's (Usage).
	forkKB := selfHWM()
	if lr.Cgroup != nil && lr.Cgroup.Version == 2 {
		// nsenter, and so the task, is born in the job's cgroup: no
		// migration (joinCgroups); else the task joins it itself.
		var cgErr error
		proto := cmd
		if cmd, cgErr, err = bornIn(func() *exec.Cmd { return cloneCmd(proto) }, lr.Cgroup.Dirs[0]); cgErr == nil {
			spec.Cgroups = nil
		}
	} else {
		// cgroup v1: the task's thread joins (joinCgroups). Not the
		// server's thread (cgroupPlan.start): a job at its CPU quota
		// would throttle it while it holds the fork lock.
		err = cmd.Start()
	}
	specR.Close()
	readyW.Close()
	if err != nil {
		specW.Close()
		readyR.Close()
		return nil, fmt.Errorf("embedded engine: starting the task: %w", err)
	}
	js, err := json.Marshal(&spec)
	if err == nil {
		_, err = specW.Write(js)
	}
	specW.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		readyR.Close()
		return nil, fmt.Errorf("embedded engine: the task's spec: %w", err)
	}
	p := &taskProc{cmd: cmd, done: make(chan struct{}), cg: lr.Cgroup, forkKB: forkKB}
	if p.cg != nil {
		p.oomBase = p.cg.oomKills()
	}
	// "R" once the task is set up, right before it executes (the pipe
	// closes at the exec); the task's host pid is nsenter's child.
	line, _ := bufio.NewReader(readyR).ReadString('\n')
	readyR.Close()
	if f := strings.Fields(line); len(f) > 0 && f[0] == "R" {
		p.hostPID = childOf(cmd.Process.Pid)
		if len(f) > 1 {
			p.launcherKB, _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// childOf is the first child of process pid (0 if none).
func childOf(pid int) int {
	for range 50 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			return 0
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.Atoi(f[0])
			return n
		}
		time.Sleep(2 * time.Millisecond) // nsenter forks after setns
	}
	return 0
}

type taskProc struct {
	cmd     *exec.Cmd
	hostPID int
	done    chan struct{}
	err     error
	cg      *cgroupPlan // the job's, for its OOM kills
	oomBase int         // the job's OOM kills when the task started
	// launcherKB: the launcher's peak RSS at the exec, which the task's
	// peak (ru_maxrss survives an exec) cannot be told from.
	launcherKB uint64
	forkKB     uint64 // the server's peak resident set when it started nsenter
}

func (p *taskProc) PID() int { return p.hostPID }

// OOMKills is the OOM kills in the job's memory cgroup since the task
// started (0 without cgroups).
func (p *taskProc) OOMKills() int {
	if p.cg == nil {
		return 0
	}
	return max(p.cg.oomKills()-p.oomBase, 0)
}

// Usage is the task's rusage as its nsenter parent was reaped with it:
// nsenter's own (small) and the task's, which nsenter waited for.
func (p *taskProc) Usage() translate.TaskUsage {
	<-p.done
	ps := p.cmd.ProcessState
	if ps == nil {
		return translate.TaskUsage{}
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return translate.TaskUsage{}
	}
	u := translate.TaskUsage{UserCPU: time.Duration(ru.Utime.Nano()), SysCPU: time.Duration(ru.Stime.Nano()), Measured: true}
	// ru_maxrss (KiB) survives fork and exec: it starts at the server's
	// own peak (nsenter is started from it) and at the launcher's
	// peak. Above both (and a margin for what the server grew between
	// its look and the fork) it is the task's own; below, the task's
	// peak is unknown and left out rather than reported wrong.
	if kb := uint64(ru.Maxrss); kb > max(p.launcherKB, p.forkKB)+1024 {
		u.MaxRSS = kb * 1024
	}
	return u
}

// selfHWM is this process's peak resident set (VmHWM, kB).
func selfHWM() uint64 { return selfStatusKB("VmHWM:") }

// selfStatusKB is a kB figure of /proc/self/status.
func selfStatusKB(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func (p *taskProc) Wait() (uint32, error) {
	<-p.done
	ps := p.cmd.ProcessState
	if ps == nil {
		return 0, p.err
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return 0, p.err
	}
	if ws.Signaled() {
		st := uint32(ws.Signal())
		if ws.CoreDump() {
			st |= 0x80
		}
		return st, nil
	}
	return uint32(ws.ExitStatus()) << 8, nil
}

func (p *taskProc) Signal(sig int) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if p.hostPID > 0 {
		// Its process group (the task made one), then itself.
		if err := syscall.Kill(-p.hostPID, syscall.Signal(sig)); err == nil {
			return nil
		}
		return syscall.Kill(p.hostPID, syscall.Signal(sig))
	}
	return p.cmd.Process.Signal(syscall.Signal(sig))
}

// taskMain is "shim task": inside the job's namespaces as root, it joins
// the job's cgroup, takes the job's limits and identity, and becomes the
// task.
func taskMain() error {
	// One thread from here to the exec: it joins the cgroups (v1) and
	// becomes the task.
	runtime.LockOSThread()
	specF := os.NewFile(3, "spec")
	readyF := os.NewFile(4, "ready")
	if specF == nil || readyF == nil {
		return errors.New("shim task: started without its spec")
	}
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	var spec taskSpec
	if err := json.NewDecoder(specF).Decode(&spec); err != nil {
		return fmt.Errorf("shim task: spec: %w", err)
	}
	specF.Close()
	if len(spec.Argv) == 0 {
		return errors.New("shim task: no command")
	}
	joinCgroups(&spec)
	applyRlimits(spec.Rlimits)
	if spec.PTY {
		// A session of its own with the terminal as its controlling one.
		if _, err := syscall.Setsid(); err == nil {
			_ = ioctlSetCtty(0)
		}
	} else {
		_ = syscall.Setpgid(0, 0)
	}
	groups := make([]int, 0, len(spec.Groups))
	for _, g := range spec.Groups {
		groups = append(groups, int(g))
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("shim task: setgroups: %w", err)
	}
	if err := syscall.Setresgid(int(spec.GID), int(spec.GID), int(spec.GID)); err != nil {
		return fmt.Errorf("shim task: setgid: %w", err)
	}
	if err := syscall.Setresuid(int(spec.UID), int(spec.UID), int(spec.UID)); err != nil {
		return fmt.Errorf("shim task: setuid: %w", err)
	}
	// The user's permissions decide what the task may reach.
	if spec.Cwd != "" {
		if err := syscall.Chdir(spec.Cwd); err != nil {
			// slurmstepd runs the task in /tmp when it cannot enter
			// the directory, and says so.
			fmt.Fprintf(os.Stderr, "slurmstepd-%s: error: couldn't chdir to `%s': %s: going to /tmp instead\n", spec.Node, spec.Cwd, strerror(err))
			_ = syscall.Chdir("/tmp")
		}
	}
	// srun --output/--error/--input: opened now, as the user, from
	// the task's directory, as slurmstepd opens them.
	for _, f := range []struct {
		path  string
		fd    int
		flags int
	}{{spec.In, 0, syscall.O_RDONLY}, {spec.Out, 1, syscall.O_WRONLY | syscall.O_CREAT | map[bool]int{true: syscall.O_APPEND, false: syscall.O_TRUNC}[spec.Append]},
		{spec.Err, 2, syscall.O_WRONLY | syscall.O_CREAT | map[bool]int{true: syscall.O_APPEND, false: syscall.O_TRUNC}[spec.Append]}} {
		if f.path == "" {
			continue
		}
		if spec.Out == spec.Err && f.fd == 2 {
			_ = syscall.Dup2(1, 2) // one file for both: one open, shared offset
			continue
		}
		fd, err := syscall.Open(f.path, f.flags|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o666)
		if err != nil {
			fmt.Fprintf(os.Stderr, "slurmstepd-%s: error: Could not open %s file %s: %s\n", spec.Node, map[int]string{0: "stdin", 1: "stdout", 2: "stderr"}[f.fd], f.path, strerror(err))
			os.Exit(1)
		}
		_, _ = unixClearNonblock(fd)
		_ = syscall.Dup2(fd, f.fd)
		syscall.Close(fd)
	}
	path := spec.Argv[0]
	if !strings.Contains(path, "/") {
		path = lookPath(path, envValue(spec.Env, "PATH"))
	}
	// "R" and this process's peak RSS so far (kB): the exec keeps the
	// peak, so the engine knows what of the task's is the launcher's.
	_, _ = readyF.Write([]byte("R " + strconv.FormatUint(selfHWM(), 10) + "\n"))
	err := syscall.Exec(path, spec.Argv, spec.Env)
	// What slurmstepd's child prints when execve fails; exit code 2
	// (srun: "error: ... Exited with exit code 2").
	fmt.Fprintf(os.Stderr, "slurmstepd-%s: error: execve(): %s: %s\n", spec.Node, spec.Argv[0], strerror(err))
	os.Exit(2)
	return nil
}

// joinCgroups puts the task in the job's cgroups. Moving a whole
// process (cgroup.procs) takes the kernel's global threadgroup lock,
// which waits for an RCU grace period: milliseconds per task. On cgroup
// v1 this thread moves alone ("0" in tasks skips that lock) and is the
// one that executes the task (taskMain locked it), so the task, whose
// only thread it becomes, is in the cgroups; the runtime's other threads
// end at the exec. cgroup v2 has no per-thread move outside threaded
// subtrees: there the engine starts the task in the cgroup, and this
// moves the process only when it could not.
func joinCgroups(spec *taskSpec) {
	file := "cgroup.procs"
	if spec.CgroupV1 {
		file = "tasks"
	}
	for _, d := range spec.Cgroups {
		if err := os.WriteFile(filepath.Join(d, file), []byte("0"), 0); err != nil {
			fmt.Fprintf(os.Stderr, "slurmstepd-%s: error: cgroup %s: %v\n", spec.Node, d, err)
		}
	}
}

// lookPath finds name in the colon-separated dirs as execvp does ("" dirs
// and a missing PATH mean the current directory); name itself when it is
// nowhere (execve then reports ENOENT).
func lookPath(name, dirs string) string {
	for _, d := range strings.Split(dirs, ":") {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && syscall.Access(p, 1) == nil {
			return p
		}
	}
	return name
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

func ioctlSetCtty(fd int) error {
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSCTTY, 0)
	if e != 0 {
		return e
	}
	return nil
}

// unixClearNonblock makes fd blocking again (it was opened non-blocking
// so that a FIFO planted at the path cannot hold the task).
func unixClearNonblock(fd int) (int, error) {
	fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if e != 0 {
		return 0, e
	}
	_, _, e = syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, fl&^syscall.O_NONBLOCK)
	if e != 0 {
		return 0, e
	}
	return 0, nil
}
