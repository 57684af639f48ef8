package double

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// kexec is, for a main kernel in run mode, the agent's code runner
// (agent/kernel.py AbstractCodeRunner) and the kernel runner in the
// container (kernel/base.py BaseRunner), as far as executes need them.
//
//   - One run at a time holds the output queue (attach_output_queue /
//     next_output_queue): a run waits, first come first served, until
//     the run before it has delivered "finished" to its caller. A batch
//     session's startup command is such a run ("batch-job") until the
//     command ends. A run whose caller went away keeps the queue: later
//     runs on the kernel wait for ever, as on the agent.
//   - The runner executes one task at a time (task_queue, run_tasks):
//     batch mode = clean, build, exec steps; each command is run_subproc:
//     /bin/sh -c CMD inside the container (ExecTask enters the kernel's
//     namespaces and becomes the kernel's uid/gid/groups, in its work
//     directory), stdin /dev/null, stdout and stderr piped, read 4096
//     bytes at a time (pipe_output) into the run's bounded queue (4096
//     records, asyncio.Queue(maxsize=4096): a full queue holds the pipe
//     reader back, so nothing is lost and memory stays bounded).
//   - Output bytes are decoded by one incremental UTF-8 decoder per
//     stream (errors="replace"), kept across runs, reset at
//     build-finished and finished (read_output).
type kexec struct {
	r *runner
	k *kernel

	mu      sync.Mutex
	held    bool     // the batch job holds the output queue
	cur     *execRun // the run holding it
	waiting []*execRun
	subproc translate.TaskProc // the running command (BaseRunner.subproc)
	buildOK *bool              // BaseRunner._build_success
	dec     [2]pyUTF8

	ready    chan struct{} // the container runs (kernel.ready of its launch)
	dead     chan struct{} // the kernel is gone
	deadOnce sync.Once
}

const (
	outputQueueSize = 4096
	pipeChunk       = 4096
	flushLogsDelay  = 10 * time.Millisecond // "extra delay to flush logs"
	streamFlush     = 200 * time.Millisecond
	// maxConsole bounds the text of one message (about half the agent's
	// full queue; JSON escaping at worst sextuples it, which stays under
	// a 64 MiB read limit).
	maxConsole = 8 << 20
)

// record is a ResultRecord: output (stdout, stderr) or a step's end
// (clean-finished, build-finished, finished) with its exit code.
type record struct {
	typ  string
	data string
	exit int
}

type execRun struct {
	recs chan record
	turn chan struct{} // closed when the run holds the output queue
}

func newKexec(r *runner, k *kernel) *kexec {
	return &kexec{r: r, k: k, ready: k.ready, dead: make(chan struct{})}
}

func newRun() *execRun {
	return &execRun{recs: make(chan record, outputQueueSize), turn: make(chan struct{})}
}

// gone: the kernel terminated (d.mu held).
func (x *kexec) gone() { x.deadOnce.Do(func() { close(x.dead) }) }

// attach waits for the run's turn at the output queue; false when stop
// closes first.
func (x *kexec) attach(run *execRun, stop <-chan struct{}) bool {
	x.mu.Lock()
	if x.cur == nil && !x.held {
		x.cur = run
		close(run.turn)
		x.mu.Unlock()
		return true
	}
	x.waiting = append(x.waiting, run)
	x.mu.Unlock()
	select {
	case <-run.turn:
		return true
	case <-stop:
		x.mu.Lock()
		for i, w := range x.waiting {
			if w == run {
				x.waiting = append(x.waiting[:i], x.waiting[i+1:]...)
				break
			}
		}
		x.mu.Unlock()
		return false
	}
}

// release is next_output_queue after run's "finished" (nil: the batch
// job's): the first waiting run proceeds.
func (x *kexec) release(run *execRun) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if run == nil {
		if !x.held {
			return
		}
		x.held = false
	} else {
		if x.cur != run {
			return
		}
		x.cur = nil
	}
	if len(x.waiting) > 0 {
		x.cur = x.waiting[0]
		x.waiting = x.waiting[1:]
		close(x.cur.turn)
	}
}

type task struct{ kind, cmd string }

// feed starts the run's tasks on the kernel runner (feed_batch /
// feed_code); the run holds the output queue.
func (x *kexec) feed(run *execRun, tasks []task) {
	x.r.wg.Add(1)
	go func() {
		defer x.r.wg.Done()
		for _, t := range tasks {
			if !x.runTask(run, t) {
				return
			}
		}
	}()
}

// runTask runs one task; false when the kernel runner died with its
// container meanwhile (it reports nothing more).
func (x *kexec) runTask(run *execRun, t task) bool {
	switch t.kind {
	case "clean":
		ret := 0
		if t.cmd != "" && t.cmd != "*" { // "*": clean_heuristic, a no-op by default
			ret = x.runSubproc(run, t.cmd, false)
		}
		time.Sleep(flushLogsDelay)
		if x.runnerGone() {
			return false
		}
		x.put(run, record{typ: "clean-finished", exit: ret})
	case "build":
		ret := 0
		switch t.cmd {
		case "":
		case "*":
			// make when there is a Makefile; the base runner has no
			// other build heuristic (the image's runner would)
			if st, err := os.Stat(filepath.Join(x.k.workDir, "Makefile")); err == nil && st.Mode().IsRegular() {
				ret = x.runSubproc(run, "make", false)
			} else {
				ret = 127
			}
		default:
			ret = x.runSubproc(run, t.cmd, false)
		}
		time.Sleep(flushLogsDelay)
		if x.runnerGone() {
			return false
		}
		ok := ret == 0
		x.mu.Lock()
		x.buildOK = &ok
		x.mu.Unlock()
		x.put(run, record{typ: "build-finished", exit: ret})
	case "exec":
		x.mu.Lock()
		skip := x.buildOK != nil && !*x.buildOK
		if skip {
			x.buildOK = nil
		}
		x.mu.Unlock()
		if skip {
			// run_tasks skips the step after a failed build, "command
			// not found"
			x.put(run, record{typ: "finished", exit: 127})
			return true
		}
		ret := 0
		switch t.cmd {
		case "":
		case "*":
			ret = 127 // no execute_heuristic in the base runner
		default:
			ret = x.runSubproc(run, t.cmd, true)
		}
		time.Sleep(flushLogsDelay)
		if x.runnerGone() {
			return false
		}
		x.put(run, record{typ: "finished", exit: ret})
	case "query":
		// BaseRunner.query without a Jupyter kernel: "query mode is
		// disabled", exit code 127, no output.
		x.put(run, record{typ: "finished", exit: 127})
	}
	return true
}

// runnerGone: the kernel is being destroyed, and the kernel runner with
// it: a command killed by the destroy gets no "finished".
func (x *kexec) runnerGone() bool {
	select {
	case <-x.dead:
		return true
	default:
	}
	x.r.d.mu.Lock()
	defer x.r.d.mu.Unlock()
	return x.k.killing
}

// put hands a record to the run's queue (blocking while it is full),
// dropping it once the kernel is gone so that nothing waits for ever.
func (x *kexec) put(run *execRun, rec record) {
	if rec.typ == "build-finished" || rec.typ == "finished" {
		x.mu.Lock()
		x.dec[0].reset()
		x.dec[1].reset()
		x.mu.Unlock()
	}
	select {
	case run.recs <- rec:
	case <-x.dead:
	}
}

// runSubproc is BaseRunner.run_subproc(cmd, batch): its return code
// (negative: the signal that killed the shell), -1 when it cannot run.
func (x *kexec) runSubproc(run *execRun, cmd string, batch bool) int {
	k := x.k
	select {
	case <-x.ready:
	case <-x.dead:
		return -1
	}
	d := x.r.d
	d.mu.Lock()
	id := k.engineID
	env := d.procEnv(k)
	cwd, uid, gid, groups := k.workDir, uint32(k.uid), uint32(k.gid), kernelGroups(k)
	logPath := ""
	if k.idle {
		logPath = k.logPath
	}
	d.mu.Unlock()
	if id == "" {
		return -1
	}
	if batch {
		env = append(env, "_BACKEND_BATCH_MODE=1")
	}
	var pipes [2][2]*os.File
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			for j := 0; j < i; j++ {
				pipes[j][0].Close()
				pipes[j][1].Close()
			}
			return -1
		}
		pipes[i] = [2]*os.File{r, w}
	}
	proc, err := x.r.eng.ExecTask(context.Background(), translate.SessionID(id), &translate.StepTask{
		Node: runNode, Argv: []string{"/bin/sh", "-c", cmd}, Env: env, Cwd: cwd, UID: uid, GID: gid, Groups: groups,
		Stdout: pipes[0][1], Stderr: pipes[1][1],
	})
	pipes[0][1].Close()
	pipes[1][1].Close()
	if err != nil {
		pipes[0][0].Close()
		pipes[1][0].Close()
		d.log.Printf("double: kernel %s: execute: %v", k.id, err)
		return -1
	}
	x.mu.Lock()
	x.subproc = proc
	x.mu.Unlock()
	// The runner copies the output to its own stdout/stderr: the
	// container log.
	var logf *os.File
	if logPath != "" {
		logf, _ = os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	}
	var wg sync.WaitGroup
	for i, typ := range []string{"stdout", "stderr"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.pipeOutput(run, pipes[i][0], i, typ, logf)
		}()
	}
	st, werr := proc.Wait()
	wg.Wait()
	if logf != nil {
		logf.Close()
	}
	x.mu.Lock()
	x.subproc = nil
	x.mu.Unlock()
	if werr != nil {
		return -1
	}
	if sig := st & 0x7f; sig != 0 {
		return -int(sig) // asyncio's returncode for a signal
	}
	return int(st >> 8)
}

func (x *kexec) pipeOutput(run *execRun, f *os.File, i int, typ string, logf *os.File) {
	defer f.Close()
	buf := make([]byte, pipeChunk)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if logf != nil {
				logf.Write(buf[:n])
			}
			x.mu.Lock()
			text := x.dec[i].decode(buf[:n], false)
			x.mu.Unlock()
			x.put(run, record{typ: typ, data: text})
		}
		if err != nil {
			return
		}
	}
}

// interrupt is the kernel runner's _interrupt: SIGINT to the running
// command's process (self.subproc.send_signal: the /bin/sh itself, not
// its process group); nothing when no command runs (there is no Jupyter
// kernel to interrupt).
func (x *kexec) interrupt() {
	x.mu.Lock()
	p := x.subproc
	x.mu.Unlock()
	if p == nil {
		return
	}
	// The embedded engine's task pid is the host's (nsenter's child);
	// signal it alone when it is surely the job's process, else its
	// process group.
	if pid := p.PID(); pid > 0 && inJobPidNS(pid) {
		if syscall.Kill(pid, syscall.SIGINT) == nil {
			return
		}
	}
	p.Signal(int(syscall.SIGINT))
}

func inJobPidNS(pid int) bool {
	self, err1 := os.Readlink("/proc/self/ns/pid")
	other, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	return err1 == nil && err2 == nil && self != other
}

// execResult is what get_next_result returns: a status with the console
// items of the records it took (aggregate_console, API v2+).
type execResult struct {
	status  string
	console []any
	exit    any
}

// nextResult is get_next_result with the stream's flush timeout: records
// until a step ends, or until the timeout passes ("continued", possibly
// with no output). As on asyncio, records already queued when the
// timeout passes are still taken. stopped: stop closed first.
func (x *kexec) nextResult(run *execRun, stop <-chan struct{}) (res execResult, stopped bool) {
	var agg consoleAgg
	timer := time.NewTimer(streamFlush)
	defer timer.Stop()
	take := func(rec record) bool {
		switch rec.typ {
		case "stdout", "stderr":
			agg.add(rec.typ, rec.data)
			return false
		}
		res = execResult{status: rec.typ, exit: rec.exit}
		return true
	}
	for {
		select {
		case rec := <-run.recs:
			if take(rec) {
				res.console = agg.items()
				return res, false
			}
			if agg.size >= maxConsole {
				// A faster reader than the agent's could gather more
				// than its full queue within the timeout: cut early.
				return execResult{status: "continued", console: agg.items()}, false
			}
		case <-timer.C:
			for n := len(run.recs); n > 0 && agg.size < maxConsole; n-- {
				if take(<-run.recs) {
					res.console = agg.items()
					return res, false
				}
			}
			return execResult{status: "continued", console: agg.items()}, false
		case <-stop:
			return execResult{}, true
		}
	}
}

// consoleAgg merges consecutive records of one stream into one item.
type consoleAgg struct {
	out  []any
	last string
	buf  []byte
	size int
}

func (a *consoleAgg) add(typ, data string) {
	if len(a.buf) > 0 && typ != a.last {
		a.out = append(a.out, []any{a.last, string(a.buf)})
		a.buf = a.buf[:0]
	}
	a.last = typ
	a.buf = append(a.buf, data...)
	a.size += len(data)
}

func (a *consoleAgg) items() []any {
	out := a.out
	if len(a.buf) > 0 {
		out = append(out, []any{a.last, string(a.buf)})
	}
	if out == nil {
		out = []any{}
	}
	return out
}
