package backendai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/translate"
	"golang.org/x/sys/unix"
)

// Job steps on Backend.AI. The manager has one way to run a command in a
// live session as its owner that streams the output back: the streaming
// execute API in batch mode (stream.go). Its PTY stream bridges to the
// kernel runner's REPL, not to a process with a terminal, and its tcpproxy
// needs an image with an sshd or ttyd service; neither is a general
// "exec with PTY", so srun --pty is refused. The execute reaches the main
// kernel only, and the kernel runner runs one command at a time, its
// batch command first: steps run in allocations (interactive sessions,
// which run no command of their own) of one node, and each node's tasks
// of a step start together from one command, as slurmstepd starts them.
//
// That command runs a small launcher in the container's Python
// (Backend.AI's own /opt/backend.ai/bin/python is in every container;
// python3 otherwise). It forks each task (its own process group, its
// directory, environment and --input/--output/--error files) and writes
// their output back framed, one line per chunk: "\x1eSF o|e TASK BASE64",
// then "\x1eSF x TASK STATUS" with the raw wait status once the task's
// output is through. Base64 keeps every byte: the console items are
// text. SIGINT (the manager's interrupt, when the stream is closed) or
// SIGTERM makes it send SIGTERM to every task, and SIGKILL after
// KILLWAIT seconds.

const stepFrame = "\x1eSF "

// stepKillWait is the launcher's SIGTERM → SIGKILL grace: slurm.conf's
// default KillWait.
const stepKillWait = 30 * time.Second

// launcherPy is the in-container launcher; argv[1] is the base64 JSON
// {"kill_wait": S, "tasks": [{"argv","env","cwd","node","in","out","err","append"}]}.
const launcherPy = `import base64, json, os, select, signal, sys, time
spec = json.loads(base64.b64decode(sys.argv[1]))
def put(b):
    while b:
        b = b[os.write(1, b):]
def frame(kind, i, data):
    put(b"\x1eSF " + kind + b" %d " % i + data + b"\n")
fds = {}
kids = {}
left = {}
for i, t in enumerate(spec["tasks"]):
    po = os.pipe() if not t["out"] else None
    pe = os.pipe() if not t["err"] else None
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            if po:
                os.dup2(po[1], 1)
            if pe:
                os.dup2(pe[1], 2)
            try:
                os.chdir(t["cwd"] or "/")
            except OSError as e:
                os.write(2, ("slurmstepd-%s: error: couldn't chdir to ` + "`" + `%s': %s: going to /tmp instead\n" % (t["node"], t["cwd"], e.strerror)).encode())
                os.chdir("/tmp")
            mode = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if t["append"] else os.O_TRUNC)
            for path, fd, fl, name in ((t["in"] or "/dev/null", 0, os.O_RDONLY, "stdin"), (t["out"], 1, mode, "stdout"), (t["err"], 2, mode, "stderr")):
                if not path:
                    continue
                if fd == 2 and path == t["out"]:
                    os.dup2(1, 2)
                    continue
                try:
                    f = os.open(path, fl, 0o666)
                except OSError as e:
                    os.write(2, ("slurmstepd-%s: error: Could not open %s file %s: %s\n" % (t["node"], name, path, e.strerror)).encode())
                    os._exit(1)
                os.dup2(f, fd)
                os.close(f)
            for fd in range(3, 1024):
                try:
                    os.close(fd)
                except OSError:
                    pass
            os.execvpe(t["argv"][0], t["argv"], dict(e.split("=", 1) for e in t["env"] if "=" in e))
        except OSError as e:
            os.write(2, ("slurmstepd-%s: error: execve(): %s: %s\n" % (t["node"], t["argv"][0], e.strerror)).encode())
        os._exit(2)
    kids[pid] = i
    left[i] = 0
    for p, kind in ((po, b"o"), (pe, b"e")):
        if p:
            os.close(p[1])
            fds[p[0]] = (kind, i)
            left[i] += 1
stop = [0.0]
def on_signal(sig, frm):
    if not stop[0]:
        stop[0] = time.time() + float(spec["kill_wait"])
        for pid in list(kids):
            try:
                os.killpg(pid, signal.SIGTERM)
            except OSError:
                pass
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, on_signal)
status = {}
def reap():
    for pid in list(kids):
        try:
            got, st = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            got, st = pid, 0
        if got:
            status[kids.pop(pid)] = st
    for i in list(status):
        if left[i] == 0:
            frame(b"x", i, b"%d" % status.pop(i))
            left[i] = -1
while kids or status or fds:
    if stop[0] and time.time() > stop[0]:
        for pid in list(kids):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        r, _, _ = select.select(list(fds), [], [], 0.05)
    except InterruptedError:
        r = []
    for fd in r:
        data = os.read(fd, 65536)
        kind, i = fds[fd]
        if data:
            frame(kind, i, base64.b64encode(data))
        else:
            os.close(fd)
            del fds[fd]
            left[i] -= 1
    reap()
    if not kids and not status and fds and not r:
        # Every task ended; a descendant still holds its output open:
        # what it wrote so far was relayed, the rest is not waited for.
        for fd in list(fds):
            os.close(fd)
            left[fds.pop(fd)[1]] -= 1
        reap()
`

// stepTask is one task's part of the launcher's spec.
type stepTask struct {
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	Cwd    string   `json:"cwd"`
	Node   string   `json:"node"`
	In     string   `json:"in"`
	Out    string   `json:"out"`
	Err    string   `json:"err"`
	Append bool     `json:"append"`
}

// launcherCommand is the shell command the kernel runner runs for a
// node's tasks.
func launcherCommand(tasks []*translate.StepTask, killWait time.Duration) (string, error) {
	spec := struct {
		KillWait float64    `json:"kill_wait"`
		Tasks    []stepTask `json:"tasks"`
	}{KillWait: killWait.Seconds()}
	for _, t := range tasks {
		if len(t.Argv) == 0 {
			return "", fmt.Errorf("%w: a task with no command", translate.ErrImpossible)
		}
		spec.Tasks = append(spec.Tasks, stepTask{Argv: t.Argv, Env: t.Env, Cwd: t.Cwd, Node: t.Node,
			In: t.InPath, Out: t.OutPath, Err: t.ErrPath, Append: t.AppendOut})
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	arg := base64.StdEncoding.EncodeToString(b)
	return "for p in /opt/backend.ai/bin/python python3; do if command -v \"$p\" >/dev/null 2>&1; then exec \"$p\" -I -c " +
		shq(launcherPy) + " " + arg + "; fi; done\n" +
		"echo 'slurm-frontend: no Python in the container to launch the step' >&2; exit 127", nil
}

// RefuseStep: steps run in allocations of one node (see the top).
func (e *Engine) RefuseStep(batch bool, nodes uint32) error {
	switch {
	case batch:
		return fmt.Errorf("%w: job steps (srun) inside a Backend.AI batch session: its kernel runs one command at a time and the batch script holds it (run steps in an allocation: salloc, or srun on its own)", translate.ErrNotSupported)
	case nodes > 1:
		return fmt.Errorf("%w: a job step over several nodes on Backend.AI: the manager's execute API reaches a session's main kernel only", translate.ErrNotSupported)
	}
	return nil
}

// ExecTasks starts a node's tasks of a step in the job's session.
func (e *Engine) ExecTasks(ctx context.Context, id translate.SessionID, tasks []*translate.StepTask) ([]translate.TaskProc, error) {
	for _, t := range tasks {
		if t.PTY {
			return nil, fmt.Errorf("%w: srun --pty on Backend.AI: the manager has no exec-with-terminal API (its PTY stream talks to the kernel runner's REPL)", translate.ErrNotSupported)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := e.c.GetSession(cctx, string(id), false)
	if err != nil {
		return nil, engineErr(err)
	}
	if s.Type != "" && !strings.EqualFold(s.Type, "interactive") {
		return nil, fmt.Errorf("%w: session %s is a %s session: its kernel runs one command at a time", translate.ErrNotSupported, id, s.Type)
	}
	if len(s.AgentIDs) > 1 {
		return nil, fmt.Errorf("%w: a multi-node session's other kernels cannot be reached by the execute API", translate.ErrNotSupported)
	}
	cmd, err := launcherCommand(tasks, stepKillWait)
	if err != nil {
		return nil, err
	}
	// The task's descriptors belong to the node stand-in, which closes
	// its copies once this returns: keep our own.
	procs := make([]*stepProc, len(tasks))
	for i, t := range tasks {
		p := &stepProc{done: make(chan struct{})}
		var err error
		if p.out, err = dupFile(t.Stdout); err == nil {
			p.err, err = dupFile(t.Stderr)
		}
		if err != nil {
			for _, q := range procs[:i] {
				q.closeFiles()
			}
			p.closeFiles()
			return nil, err
		}
		procs[i] = p
	}
	st, err := e.c.StreamExecute(cctx, string(id), s.UserID, ExecRequest{Mode: "batch", Options: map[string]any{"exec": cmd}})
	if err != nil {
		for _, p := range procs {
			p.closeFiles()
		}
		return nil, engineErr(err)
	}
	run := &stepRun{st: st, procs: procs, logf: e.cfg.Logger.Printf, id: id}
	for _, p := range procs {
		p.run = run
	}
	go run.relay()
	out := make([]translate.TaskProc, len(procs))
	for i, p := range procs {
		out[i] = p
	}
	return out, nil
}

func dupFile(f *os.File) (*os.File, error) {
	if f == nil {
		return nil, nil
	}
	// Close-on-exec from the start (a dup then CloseOnExec leaves a
	// window in which a forked child inherits it).
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// stepRun is one node's execute of a step.
type stepRun struct {
	st    *ExecStream
	procs []*stepProc
	logf  func(string, ...any)
	id    translate.SessionID
}

// stepProc is one task of a stepRun.
type stepProc struct {
	run      *stepRun
	out, err *os.File
	done     chan struct{}
	status   uint32
	ended    bool
}

func (p *stepProc) closeFiles() {
	for _, f := range []*os.File{p.out, p.err} {
		if f != nil {
			f.Close()
		}
	}
	p.out, p.err = nil, nil
}

func (p *stepProc) finish(status uint32) {
	if p.ended {
		return
	}
	p.ended, p.status = true, status
	p.closeFiles()
	close(p.done)
}

func (p *stepProc) Wait() (uint32, error) {
	<-p.done
	return p.status, nil
}

// Signal: nothing reaches a task. The execute stream ignores its
// client going away (26.8.1 never reads the socket again: the command
// runs on), and the manager's interrupt (POST /session/{name}/interrupt)
// finds the requester's own sessions only, never a user's session for
// the admin keypair.
func (p *stepProc) Signal(sig int) error { return stepSignalErr(sig) }

func stepSignalErr(sig int) error {
	return fmt.Errorf("%w: signal %d to a step's tasks on Backend.AI: the manager interrupts a command only for the session's owner's own keypair (end the allocation to stop them)", translate.ErrNotSupported, sig)
}

// RefuseStepSignal: see stepProc.Signal.
func (e *Engine) RefuseStepSignal(sig int) error { return stepSignalErr(sig) }

func (p *stepProc) PID() int { return 0 }

// frameLine takes one line of the launcher's output.
func (r *stepRun) frameLine(l []byte) {
	if !bytes.HasPrefix(l, []byte(stepFrame)) {
		// The launcher's own words (no Python, a traceback): the
		// first task's stderr says what went wrong.
		if p := r.procs[0]; !p.ended && p.err != nil {
			p.err.Write(append(l, '\n'))
		}
		return
	}
	f := strings.Fields(string(l[len(stepFrame):]))
	if len(f) < 2 {
		return
	}
	i, err := strconv.Atoi(f[1])
	if err != nil || i < 0 || i >= len(r.procs) {
		return
	}
	p := r.procs[i]
	switch f[0] {
	case "o", "e":
		if len(f) < 3 || p.ended {
			return
		}
		data, err := base64.StdEncoding.DecodeString(f[2])
		if err != nil {
			return
		}
		w := p.out
		if f[0] == "e" {
			w = p.err
		}
		if w != nil {
			w.Write(data) // a reader gone (srun) is not the task's failure
		}
	case "x":
		if len(f) >= 3 {
			if st, err := strconv.ParseUint(f[2], 10, 32); err == nil {
				p.finish(uint32(st))
			}
		}
	}
}

// relay reads the manager's messages to the end, writing each task's
// output where it goes and ending each task at its status.
func (r *stepRun) relay() {
	var line []byte
	handle := r.frameLine
	var stderr []byte
	exit := -1
	for {
		res, err := r.st.Next(context.Background())
		if err != nil {
			if err != io.EOF {
				r.logf("backend.ai: session %s: step execute stream: %v", r.id, err)
			}
			break
		}
		res.Output(func(stream, text string) {
			if stream == "stderr" {
				stderr = append(stderr, text...)
				return
			}
			line = append(line, text...)
			for {
				k := bytes.IndexByte(line, '\n')
				if k < 0 {
					break
				}
				handle(line[:k])
				line = line[k+1:]
			}
		})
		if len(stderr) > 0 {
			// The launcher writes nothing to stderr; the shell before
			// it may (no Python).
			if p := r.procs[0]; !p.ended && p.err != nil {
				p.err.Write(stderr)
			}
			stderr = stderr[:0]
		}
		if res.Status == "finished" {
			if res.ExitCode != nil {
				exit = *res.ExitCode
			}
			break
		}
		if res.Status == "error" || res.Status == "exec-timeout" || res.Status == "server-restarting" {
			r.logf("backend.ai: session %s: step execute: %s %s", r.id, res.Status, res.Msg)
			break
		}
	}
	r.st.CloseNow()
	if len(line) > 0 {
		handle(line)
	}
	// Tasks whose end the launcher did not report: killed with the
	// session (the stream ended without "finished"), or the command's
	// own status.
	for _, p := range r.procs {
		switch {
		case p.ended:
		case exit < 0:
			p.finish(uint32(syscall.SIGKILL))
		case exit > 0 && exit < 256:
			p.finish(uint32(exit) << 8)
		default:
			p.finish(1 << 8)
		}
	}
}

var _ translate.StepGroupExecutor = (*Engine)(nil)
var _ translate.StepRefuser = (*Engine)(nil)
