package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// ShimMain is the hidden "slurm-frontend shim" subcommand, not meant to
// be run by hand:
//
//	shim run DIR                  run the session whose spool directory is
//	                              DIR (the engine starts it as the init of
//	                              a new PID and mount namespace, in its own
//	                              session)
//	shim exec NODE LIMITS SCRIPT [ARG…]
//	                              the job's first process (already the
//	                              user, in the work directory, with the
//	                              job's environment and stdio): apply the
//	                              propagated soft limits (LIMITS, see
//	                              formatRlimits), set SLURM_TASK_PID to
//	                              its own pid and execve the script,
//	                              reporting a failure as slurmstepd does
func ShimMain(args []string) error {
	switch {
	case len(args) == 2 && args[0] == "run":
		return runShim(args[1])
	case len(args) == 1 && args[0] == "task":
		return taskMain()
	case len(args) == 1 && args[0] == "version":
		fmt.Println(ShimIdentity())
		return nil
	case len(args) >= 4 && args[0] == "exec":
		applyRlimits(args[2])
		shimExec(args[1], args[3], args[4:])
	}
	return errors.New("usage: slurm-frontend shim run SESSION-DIR (started by the embedded engine)")
}

// shimProtocol changes whenever what the engine and its shim exchange
// (spool files, arguments) changes incompatibly.
const shimProtocol = 1

// ShimIdentity names the shim code a binary carries: the protocol and,
// when the build recorded it, the source revision. The engine runs a
// separate shim binary only if it answers `shim version` with the
// engine's own identity.
func ShimIdentity() string {
	id := "slurm-frontend-shim protocol " + strconv.Itoa(shimProtocol)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" || kv.Key == "vcs.modified" {
				id += " " + kv.Key + "=" + kv.Value
			}
		}
	}
	return id
}

// shimExec becomes the batch script. It only returns by exiting: with
// errno, after slurmstepd's message, when execve fails.
func shimExec(node, script string, args []string) {
	// fd 3: the shim's go-ahead. It closes the pipe once it has checked,
	// after this process exists, that the job was not cancelled while the
	// kernel created it; killed instead, the script never runs. EOF (the
	// shim gone) lets it run, as before there was a gate.
	var st syscall.Stat_t
	if syscall.Fstat(3, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
		var b [1]byte
		_ = noEINTR(func() error { _, err := syscall.Read(3, b[:]); return err })
		syscall.Close(3)
	}
	env := os.Environ()
	for i, kv := range env {
		if strings.HasPrefix(kv, "SLURM_TASK_PID=") {
			env[i] = "SLURM_TASK_PID=" + strconv.Itoa(os.Getpid())
		}
	}
	err := syscall.Exec(script, append([]string{script}, args...), env)
	errno := syscall.EINVAL
	var en syscall.Errno
	if errors.As(err, &en) {
		errno = en
	}
	if b := readHead(script); errno == syscall.ENOENT && strings.HasPrefix(b, "#!") {
		fmt.Fprintf(os.Stderr, "slurmstepd-%s: error: execve(): bad interpreter(%s): %s\n", node, strings.TrimPrefix(b, "#!"), strerror(errno))
	} else {
		fmt.Fprintf(os.Stderr, "slurmstepd-%s: error: execve(): %s: %s\n", node, script, strerror(errno))
	}
	os.Exit(int(errno))
}

type shim struct {
	log    *log.Logger
	d      *os.File // the session directory, usable after mounts cover its path
	lr     launchRecord
	cred   cred
	notify *os.File // fd 3: pipe to the engine that started us (may be gone)
	gate   *os.File // fd 4: the engine writes to it once the job shows RUNNING
	// announced: the running record was written before the gate (waitShown)
	announced bool
	cg        *cgroupPlan
	errw      io.Writer // the job's stderr, for slurmstepd's messages
	sigc      chan os.Signal

	cancelled, forced bool
}

// p names a file of the session directory through the open directory, so
// it stays reachable whatever is mounted over the spool path.
func (sh *shim) p(name string) string {
	return fmt.Sprintf("/proc/self/fd/%d/%s", sh.d.Fd(), name)
}

func runShim(dir string) error {
	sh := &shim{log: log.New(os.Stderr, fmt.Sprintf("shim %s: ", filepath.Base(dir)), log.LstdFlags|log.Lmicroseconds)}
	// Signals first: as the init of a PID namespace, a signal from outside
	// without a handler would be dropped.
	sh.sigc = make(chan os.Signal, 16)
	signal.Notify(sh.sigc, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGUSR1)
	syscall.Umask(0o022)

	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	sh.d = d
	// Our pid as the host sees it: /proc is still the host's.
	self, err := os.Readlink("/proc/self")
	if err != nil {
		return err
	}
	hostPID, _ := strconv.Atoi(self)
	start, _ := procStart(hostPID)
	f, err := os.OpenFile(sh.p(fClaim), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if os.IsExist(err) {
		sh.log.Printf("session already claimed by another shim; exiting")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "%d %d\n", hostPID, start)
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	_ = syncDir(sh.p(""))
	// fd 3: the pipe to the engine that started us, if it gave one.
	var st syscall.Stat_t
	if syscall.Fstat(3, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
		syscall.CloseOnExec(3) // inherited without it; the job must not get it
		sh.notify = os.NewFile(3, "notify")
		if syscall.Fstat(4, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
			syscall.CloseOnExec(4)
			sh.gate = os.NewFile(4, "gate")
		}
	}
	if err := readJSON(sh.p(fLaunch), &sh.lr); err != nil {
		return sh.end(&statusRecord{Status: translate.SessionError, Reason: "failed-to-start", Message: "launch record: " + err.Error()})
	}
	sh.log.Printf("job %d: claimed (host pid %d)", sh.lr.Spec.JobID, hostPID)
	if sh.checkDestroy(); sh.cancelled {
		return sh.end(&statusRecord{Status: translate.SessionCancelled, Reason: "user-requested"})
	}
	return sh.run()
}

// launchFailure is the end of a job slurmstepd could not launch (its
// output file cannot be created, ...): ERROR "failed-to-start", and the
// signal 53 slurmd reports for it ("task 0 died by signal: 53": FAILED,
// JobLaunchFailure, ExitCode 0:53 in scontrol).
func launchFailure(msg string) *statusRecord {
	return &statusRecord{Status: translate.SessionError, Reason: "failed-to-start", Signal: 53, Message: msg}
}

// checkDestroy reads the engine's destroy request, if any.
func (sh *shim) checkDestroy() {
	b, err := os.ReadFile(sh.p(fDestroy))
	if err != nil {
		return
	}
	sh.cancelled = true
	if strings.TrimSpace(string(b)) == "forced" {
		sh.forced = true
	}
}

// end records the session's end (atomically, durably) and cleans up.
func (sh *shim) end(st *statusRecord) error {
	if st.Ended.IsZero() {
		st.Ended = time.Now()
	}
	if st.Message != "" {
		sh.log.Print(st.Message)
	}
	sh.cg.remove()
	if sh.lr.ScriptDir != "" {
		os.RemoveAll(sh.p(filepath.Base(sh.lr.ScriptDir)))
	}
	if err := writeJSON(sh.p(fStatus), st); err != nil {
		sh.log.Printf("cannot write status: %v", err)
		return err
	}
	sh.log.Printf("job %d: %s %s exit %d signal %d", sh.lr.Spec.JobID, st.Status, st.Reason, st.ExitCode, st.Signal)
	return nil
}

// openStdio opens one of the job's standard streams (with the caller's
// identity, see asUser) without blocking in open: a FIFO nobody reads,
// planted as the output file, would otherwise hold the shim, and the
// job's nodes, before it could be cancelled. Such a FIFO is refused
// (ENXIO, the job fails to launch); the stream is then made blocking
// again, as the job expects.
func openStdio(path string, flags int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flags|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// stepd writes one of slurmstepd's messages to the job's stderr.
func (sh *shim) stepd(format string, args ...any) {
	if sh.errw != nil {
		fmt.Fprintf(sh.errw, "slurmstepd-%s: error: %s\n", sh.lr.Node, fmt.Sprintf(format, args...))
	}
}

func (sh *shim) run() error {
	spec := &sh.lr.Spec
	// Private mounts, and a /proc of the new PID namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		sh.log.Printf("make mounts private: %v", err)
	} else if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		sh.log.Printf("mount /proc: %v", err)
	}
	if sh.lr.Cgroup != nil {
		if err := sh.lr.Cgroup.create(); err != nil {
			sh.log.Printf("cgroup: %v (limits not enforced for this job)", err)
			sh.lr.Cgroup.remove()
		} else {
			sh.cg = sh.lr.Cgroup
		}
	}
	sh.cred = cred{uid: spec.UID, gid: spec.GID, groups: jobGroups(spec)}
	if spec.Interactive {
		return sh.end(sh.hold())
	}
	for _, f := range []*string{&spec.StdIn, &spec.StdOut, &spec.StdErr} {
		if *f != "" && !filepath.IsAbs(*f) {
			*f = filepath.Join(orDefault(spec.WorkDir, "/"), *f) // as slurmstepd resolves them
		}
	}

	// Standard streams, opened as the user.
	var stdin, stdout, stderr *os.File
	var what, path string
	err := asUser(sh.cred, func() error {
		var err error
		what, path = "stdin", orDefault(spec.StdIn, "/dev/null")
		if stdin, err = openStdio(path, os.O_RDONLY, 0); err != nil {
			return err
		}
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if spec.AppendOut {
			flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
		what, path = "stdout", orDefault(spec.StdOut, "/dev/null")
		if stdout, err = openStdio(path, flags, 0o666); err != nil {
			return err
		}
		if spec.StdErr == "" || spec.StdErr == spec.StdOut {
			stderr = stdout
			return nil
		}
		what, path = "stderr", spec.StdErr
		stderr, err = openStdio(path, flags, 0o666)
		return err
	})
	if err != nil {
		// slurmstepd: "Could not open stdout file ...", the job fails to
		// launch (FAILED, JobLaunchFailure).
		msg := fmt.Sprintf("Could not open %s file %s: %s", what, path, strerror(err))
		var ie *identityError
		if errors.As(err, &ie) {
			msg = err.Error()
		}
		return sh.end(launchFailure(msg))
	}
	sh.errw = stderr

	// Working directory, as the user; slurmstepd falls back to /tmp.
	wd := orDefault(spec.WorkDir, "/")
	if err := asUser(sh.cred, func() error { _, err := os.Stat(filepath.Join(wd, ".")); return err }); err != nil {
		msg := fmt.Sprintf("couldn't chdir to `%s': %s: going to /tmp instead", wd, strerror(err))
		sh.stepd("%s", msg)
		sh.stepd("%s", msg)
		wd = "/tmp"
	}
	env := append([]string(nil), sh.lr.Env...)
	env = sh.tmpdir(env)

	// The script, where slurmd keeps it.
	scriptDir := sh.p(filepath.Base(sh.lr.ScriptDir))
	script := filepath.Join(sh.lr.ScriptDir, "slurm_script")
	if err := sh.writeScript(scriptDir); err != nil {
		return sh.end(launchFailure("script: " + err.Error()))
	}
	cover, err := exposeForUser(sh.lr.ScriptDir, sh.cred)
	if err != nil {
		sh.log.Printf("exposing %s to uid %d: %v", sh.lr.ScriptDir, spec.UID, err)
	}

	sh.drainSignals()
	if sh.checkDestroy(); sh.cancelled {
		return sh.end(&statusRecord{Status: translate.SessionCancelled, Reason: "user-requested"})
	}
	umask := 0o022
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SLURM_UMASK="); ok {
			if m, err := strconv.ParseUint(v, 8, 32); err == nil {
				umask = int(m & 0o777)
			}
		}
	}
	// The job's first process is this binary as "shim exec" (the
	// credentials, directory, environment and stdio are the job's from
	// the fork on); it learns its pid, puts it in SLURM_TASK_PID, and
	// execs the script in place. If the user may not execute this binary,
	// the script is executed directly (SLURM_TASK_PID left as given).
	self := os.Args[:max(len(os.Args)-2, 1)] // how we were called, without "run DIR"
	argv := append(append(append([]string{}, self...), "exec", sh.lr.Node, formatRlimits(spec.Rlimits), script), argvTail(spec.Argv)...)
	exe := "/proc/self/exe"
	direct := !executable(exe, sh.cred)
	if direct {
		sh.log.Printf("uid %d may not execute this binary: running the script directly, without propagated limits", spec.UID)
		exe, argv = script, append([]string{script}, argvTail(spec.Argv)...)
	}
	cmd := &exec.Cmd{
		Path: exe, Args: argv, Env: env, Dir: wd,
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:     true,
			Credential: &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: sh.cred.groups},
		},
	}
	// The helper waits at fd 3 for the go-ahead (shimExec): a cancel that
	// comes while the kernel creates the process (cgroup moves and fork
	// can wait seconds for the cgroup lock when many jobs end at once)
	// still keeps the script from running.
	var goAhead *os.File
	if !direct && spec.Image == "" {
		r, w, perr := os.Pipe()
		if perr != nil {
			return sh.end(launchFailure("starting the job's process: " + perr.Error()))
		}
		defer r.Close()
		defer w.Close()
		cmd.ExtraFiles, goAhead = []*os.File{r}, w
	}
	// The start time: the controller's (the running record's, before the
	// gate) and the job's variables'.
	now := time.Now()
	if !sh.waitShown(now) {
		return sh.end(&statusRecord{Status: translate.SessionCancelled, Reason: "user-requested"})
	}
	// Times only the start knows, for the variables the job has.
	for i, kv := range cmd.Env {
		switch {
		case strings.HasPrefix(kv, "SLURM_JOB_START_TIME="):
			cmd.Env[i] = "SLURM_JOB_START_TIME=" + strconv.FormatInt(now.Unix(), 10)
		case strings.HasPrefix(kv, "SLURM_JOB_END_TIME=") && sh.timeLimit() > 0:
			cmd.Env[i] = "SLURM_JOB_END_TIME=" + strconv.FormatInt(now.Add(sh.timeLimit()).Unix(), 10)
		}
	}
	if spec.Image != "" {
		// sbatch --container: the script runs in the OCI bundle, under
		// crun run rootless as the user (container.go). Its config and
		// state go in a directory of the user's inside the script's
		// directory (root's, and reachable by the user: exposeForUser).
		dir := filepath.Join(sh.lr.ScriptDir, "oci")
		os.RemoveAll(filepath.Join(scriptDir, "oci")) // a leftover (RemoveAll follows no links)
		if err := os.Mkdir(filepath.Join(scriptDir, "oci"), 0o700); err != nil {
			return sh.end(launchFailure("container " + spec.Image + ": " + err.Error()))
		}
		if err := os.Chown(filepath.Join(scriptDir, "oci"), int(spec.UID), int(spec.GID)); err != nil {
			return sh.end(launchFailure("container " + spec.Image + ": " + err.Error()))
		}
		args, err := containerConfig(spec, sh.cred, dir, script, cover, wd, cmd.Env)
		if err != nil {
			return sh.end(launchFailure("container " + spec.Image + ": " + err.Error()))
		}
		// On a hybrid cgroup host crun 1.8 refuses to run while the v2
		// hierarchy has controllers; cgroups are ours to manage (crun
		// runs with them disabled), so the job's mount namespace hides
		// that hierarchy.
		var st syscall.Statfs_t
		if syscall.Statfs("/sys/fs/cgroup", &st) == nil && st.Type != cgroup2Magic {
			_ = syscall.Unmount("/sys/fs/cgroup/unified", syscall.MNT_DETACH)
		}
		cmd.Path, cmd.Args, cmd.Dir = args[0], args, "/"
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/"}
		direct = false // crun keeps the user's credential from cmd.SysProcAttr
	}
	cloexecFrom(3) // the job gets 0, 1 and 2 only
	// Rewind the namespace's pid counter: the script gets the lowest pid
	// the shim's threads left free.
	_ = os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte("1"), 0)
	syscall.Umask(umask)
	// A start the kernel holds up (cgroup moves wait for the cgroup
	// lock, fork for memory) is logged: the job's output says it started
	// late, the log says where the time went.
	gated := time.Now()
	if d := gated.Sub(now); d > time.Second {
		sh.log.Printf("job %d: waited %v to be shown RUNNING", spec.JobID, d.Round(time.Millisecond))
	}
	var took startTimes
	if sh.cg != nil {
		var cgErr error
		proto := cmd
		cmd, cgErr, err, took = sh.cg.start(func() *exec.Cmd { return cloneCmd(proto) })
		if cgErr != nil {
			sh.log.Printf("cgroup: %v (limits not enforced for this job)", cgErr)
		}
	} else {
		err = cmd.Start()
		took.fork = time.Since(gated)
	}
	if d := time.Since(gated); d > time.Second {
		sh.log.Printf("job %d: starting its process took %v (%v)", spec.JobID, d.Round(time.Millisecond), took)
	}
	syscall.Umask(0o022)
	started := now
	var en syscall.Errno
	if err != nil && (!direct || !errors.As(err, &en)) {
		return sh.end(launchFailure("starting the job's process: " + err.Error()))
	}
	batch := 0
	if err == nil {
		batch = cmd.Process.Pid
	}
	if goAhead != nil && err == nil {
		if sh.checkDestroy(); sh.cancelled {
			// Cancelled while the process was made: it goes before the
			// script runs (it waits for the go-ahead).
			_ = cmd.Process.Kill()
			var ws syscall.WaitStatus
			_ = noEINTR(func() error { _, err := syscall.Wait4(batch, &ws, 0, nil); return err })
			sh.log.Printf("job %d: cancelled as its process was made; the script did not run", spec.JobID)
			return sh.end(&statusRecord{Status: translate.SessionCancelled, Reason: "user-requested"})
		}
		goAhead.Close()
	}
	// Durable already when announced (waitShown): only the pid is new,
	// and a lost one is looked up (signalNamespace).
	if b, werr := json.Marshal(&runningRecord{Started: started, BatchPID: batch}); werr == nil {
		werr = writeFileAtomic(sh.p(fRunning), b, 0o600, !sh.announced)
		if werr != nil {
			sh.log.Printf("running record: %v", werr)
		}
	}
	if sh.notify != nil {
		_, _ = sh.notify.Write([]byte("R\n"))
	}
	if err != nil {
		// execve of the script failed: what slurmstepd's child does.
		if b := readHead(filepath.Join(scriptDir, "slurm_script")); en == syscall.ENOENT && strings.HasPrefix(b, "#!") {
			sh.stepd("execve(): bad interpreter(%s): %s", strings.TrimPrefix(b, "#!"), strerror(en))
		} else {
			sh.stepd("execve(): %s: %s", script, strerror(en))
		}
		return sh.end(&statusRecord{Status: translate.SessionTerminated, Reason: "task-finished",
			ExitCode: int(en), Started: started, Ended: time.Now()})
	}
	sh.log.Printf("job %d: script started (pid %d in the namespace) as uid %d", spec.JobID, batch, spec.UID)
	return sh.end(sh.supervise(batch, started))
}

// gateWait bounds how long a script waits for the controller to show
// its job RUNNING: a server too busy to say so must not hold jobs back
// for longer.
const gateWait = 10 * time.Second

// waitShown tells the engine the script is about to start (the running
// record without a pid, then "S") and waits until the engine lets it go,
// once the controller shows the job RUNNING (slurmctld launches a job
// only after marking it so: the job's own squeue sees it running). A
// gone engine (EOF) or gateWait lets it go too. False: the job was
// cancelled meanwhile.
func (sh *shim) waitShown(started time.Time) bool {
	if sh.notify == nil || sh.gate == nil {
		return true
	}
	if err := writeJSON(sh.p(fRunning), &runningRecord{Started: started}); err != nil {
		sh.log.Printf("running record: %v", err)
		return true
	}
	sh.announced = true
	if _, err := sh.notify.Write([]byte("S\n")); err != nil {
		return true
	}
	done := make(chan struct{})
	go func() {
		var b [2]byte
		_, _ = sh.gate.Read(b[:])
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(gateWait):
		sh.log.Printf("job %d: not shown RUNNING within %v; starting it anyway", sh.lr.Spec.JobID, gateWait)
	}
	sh.checkDestroy()
	return !sh.cancelled
}

// hold is an allocation's session (salloc, srun outside a job): no
// script runs; the namespace and the cgroup wait for the job's steps,
// whose tasks the engine starts in them, until the session is destroyed
// or its time limit passes. Nothing is started or moved into the cgroup
// here, so the grant waits for no process start and no cgroup migration
// (moving a process costs the kernel an RCU grace period, milliseconds).
func (sh *shim) hold() *statusRecord {
	started := time.Now()
	if err := writeJSON(sh.p(fRunning), &runningRecord{Started: started}); err != nil {
		sh.log.Printf("running record: %v", err)
	}
	if sh.notify != nil {
		_, _ = sh.notify.Write([]byte("R\n"))
	}
	sh.log.Printf("job %d: allocation held for uid %d", sh.lr.Spec.JobID, sh.lr.Spec.UID)
	sh.drainSignals()
	sh.checkDestroy()
	return sh.supervise(0, started)
}

// nsEmpty reports whether nothing but this shim (pid 1) is left in the
// namespace (its /proc is the namespace's).
func nsEmpty() bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if n != "1" && n[0] >= '0' && n[0] <= '9' {
			return false
		}
	}
	return true
}

type reaped struct {
	pid int
	ws  syscall.WaitStatus
	ru  syscall.Rusage
}

// supervise waits for the script while enforcing the time limit, the
// --signal warning and destroy requests; then it kills what is left in
// the namespace and reaps it.
//
// batch 0 is an allocation held (hold): the session ends when it is
// destroyed or timed out and its steps' tasks are gone; those are not
// this process's children (only orphans are reaped here), so it looks
// at the namespace's /proc.
func (sh *shim) supervise(batch int, started time.Time) *statusRecord {
	spec := &sh.lr.Spec
	hold := batch == 0
	waitc := make(chan reaped, 16)
	stop := make(chan struct{})
	go func() {
		defer close(waitc)
		for {
			var r reaped
			pid, err := syscall.Wait4(-1, &r.ws, 0, &r.ru)
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.ECHILD && hold {
				// No child now; orphaned tasks may come.
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
					continue
				}
			}
			if err != nil {
				return
			}
			r.pid = pid
			waitc <- r
		}
	}()
	killWait := spec.KillWait
	if killWait <= 0 {
		killWait = 30 * time.Second
	}
	limit := sh.timeLimit()
	var (
		timedOut, warned bool
		killAt           time.Time
		killed           bool
		final            reaped
	)
	terminate := func(msg string) {
		sh.stepd("*** JOB %d ON %s CANCELLED AT %s%s ***", spec.JobID, sh.lr.Node, time.Now().Format("2006-01-02T15:04:05"), msg)
		_ = syscall.Kill(-1, syscall.SIGCONT)
		_ = syscall.Kill(-1, syscall.SIGTERM)
		if killAt.IsZero() {
			killAt = time.Now().Add(killWait)
		}
	}
	cancel := func() {
		if sh.forced {
			_ = syscall.Kill(-1, syscall.SIGKILL)
			killed = true
			return
		}
		if killAt.IsZero() {
			terminate("")
		}
	}
	if sh.cancelled {
		cancel()
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// hold: while ending, whether the tasks are gone yet.
	var poll <-chan time.Time
	if hold {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		poll = t.C
	}
	ending := func() bool { return hold && (killed || !killAt.IsZero()) && nsEmpty() }
	for done := ending(); !done; {
		now := time.Now()
		next := now.Add(time.Hour)
		if limit > 0 && !timedOut {
			deadline := started.Add(limit)
			if spec.Signal != 0 && !warned {
				next = minTime(next, deadline.Add(-spec.Warn))
			}
			next = minTime(next, deadline)
		}
		if !killAt.IsZero() && !killed {
			next = minTime(next, killAt)
		}
		timer.Reset(max(next.Sub(now), 0))
		select {
		case sig := <-sh.sigc:
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT:
				sh.checkDestroy()
				if sh.cancelled {
					cancel()
					done = ending()
				}
			case syscall.SIGHUP:
				limit = sh.timeLimit()
				sh.log.Printf("time limit now %v", limit)
			case syscall.SIGUSR1:
				sh.deliverNotes()
			}
		case r, ok := <-waitc:
			if !ok {
				done = true // no children at all: cannot happen before the script is reaped
				break
			}
			if r.pid == batch && !hold {
				final = r
				done = true
			}
		case <-poll:
			done = ending()
		case <-timer.C:
			now := time.Now()
			if limit > 0 && !timedOut {
				deadline := started.Add(limit)
				if spec.Signal != 0 && !warned && !now.Before(deadline.Add(-spec.Warn)) {
					warned = true
					if spec.SignalBatchOnly {
						if !hold { // an allocation has no batch step
							_ = syscall.Kill(batch, syscall.Signal(spec.Signal))
						}
					} else {
						_ = syscall.Kill(-1, syscall.Signal(spec.Signal))
					}
				}
				if !now.Before(deadline) && !sh.cancelled {
					timedOut = true
					terminate(" DUE TO TIME LIMIT")
				}
			}
			if !killAt.IsZero() && !killed && !now.Before(killAt) {
				_ = syscall.Kill(-1, syscall.SIGKILL)
				killed = true
			}
		}
	}
	ended := time.Now()
	// The batch script is done: what it left behind goes (slurmstepd's
	// proctrack does the same), and everything is reaped.
	_ = syscall.Kill(-1, syscall.SIGKILL)
	deadline := time.After(10 * time.Second)
	close(stop)
drain:
	for {
		select {
		case _, ok := <-waitc:
			if !ok {
				break drain
			}
		case <-poll:
			if nsEmpty() {
				break drain
			}
		case <-deadline:
			sh.log.Printf("processes of the job did not exit 10 s after SIGKILL")
			break drain
		}
	}
	st := &statusRecord{Status: translate.SessionTerminated, Started: started, Ended: ended,
		UserCPU: time.Duration(final.ru.Utime.Nano()), SysCPU: time.Duration(final.ru.Stime.Nano()), MaxRSSKB: final.ru.Maxrss}
	switch {
	case final.ws.Exited():
		st.ExitCode = final.ws.ExitStatus()
	case final.ws.Signaled():
		st.Signal = int(final.ws.Signal())
	}
	if sh.cg != nil {
		st.OOMKills = sh.cg.oomKills()
	}
	if st.OOMKills > 0 {
		s := ""
		if st.OOMKills > 1 {
			s = "s"
		}
		sh.stepd("Detected %d oom_kill event%s in StepId=%d.batch. Some of the step tasks have been OOM Killed.", st.OOMKills, s, spec.JobID)
	}
	switch {
	case sh.cancelled:
		st.Reason = "user-requested"
	case timedOut:
		st.Reason = "task-timeout"
	case st.OOMKills > 0:
		st.Reason = "oom-killed"
	default:
		st.Reason = "task-finished"
	}
	return st
}

// timeLimit is the session's time limit: UpdateTimeLimit's, else the
// spec's (0 = none).
func (sh *shim) timeLimit() time.Duration {
	if b, err := os.ReadFile(sh.p(fTimeLimit)); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			return time.Duration(v)
		}
	}
	return sh.lr.Spec.TimeLimit
}

// deliverNotes writes the engine's queued notify messages to the job's
// stderr, oldest first, as slurmstepd logs them (error("%s", msg)).
func (sh *shim) deliverNotes() {
	ents, err := os.ReadDir(sh.p(""))
	if err != nil {
		return
	}
	for _, e := range ents { // sorted by name: by sequence
		if !strings.HasPrefix(e.Name(), fNotify) || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if b, err := os.ReadFile(sh.p(e.Name())); err == nil {
			sh.stepd("%s", b)
		}
		os.Remove(sh.p(e.Name()))
	}
}

// drainSignals handles signals that came before the script started.
func (sh *shim) drainSignals() {
	for {
		select {
		case sig := <-sh.sigc:
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT:
				sh.checkDestroy()
			case syscall.SIGUSR1:
				sh.deliverNotes()
			}
		default:
			return
		}
	}
}

// writeScript writes slurm_script as slurmd does: directory root:gid
// 0750, script uid:root 0700.
func (sh *shim) writeScript(dir string) error {
	spec := &sh.lr.Spec
	if err := os.Mkdir(dir, 0o750); err != nil && !os.IsExist(err) {
		return err
	}
	if err := os.Chown(dir, 0, int(spec.GID)); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		return err
	}
	path := filepath.Join(dir, "slurm_script")
	os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return err
	}
	_, err = f.WriteString(spec.Script)
	if err == nil {
		err = f.Chown(int(spec.UID), 0)
	}
	if err == nil {
		err = f.Chmod(0o700)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tmpdir does what slurmstepd does with TMPDIR: create it as the user if
// missing, and fall back to /tmp if that is impossible.
func (sh *shim) tmpdir(env []string) []string {
	for i, kv := range env {
		dir, ok := strings.CutPrefix(kv, "TMPDIR=")
		if !ok || dir == "" {
			continue
		}
		err := asUser(sh.cred, func() error { return os.Mkdir(dir, 0o700) })
		if err == nil || os.IsExist(err) {
			if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
				return env
			} else if serr == nil {
				sh.stepd("TMPDIR [%s] is not a directory", dir)
			}
		} else {
			sh.stepd("Unable to create TMPDIR [%s]: %s", dir, strerror(err))
		}
		sh.stepd("Setting TMPDIR to /tmp")
		env[i] = "TMPDIR=/tmp"
		return env
	}
	return env
}

// exposeForUser makes dir reachable by the user inside this mount
// namespace when one of its ancestors is not: a small tmpfs goes over the
// topmost ancestor the user cannot search (so nothing the user could see
// is hidden), and dir is bound at the same path inside it.
func exposeForUser(dir string, c cred) (cover string, err error) {
	if c.uid == 0 {
		return "", nil
	}
	for cur := filepath.Dir(dir); ; cur = filepath.Dir(cur) {
		fi, err := os.Stat(cur)
		if err != nil {
			return "", err
		}
		if !searchable(fi, c) {
			cover = cur
		}
		if cur == "/" || cur == "." { // "." : a relative path ends there
			break
		}
	}
	if cover == "" || cover == "/" {
		return "", nil
	}
	fd, err := syscall.Open(dir, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer syscall.Close(fd)
	if err := syscall.Mount("tmpfs", cover, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0711,size=64k,nr_inodes=64"); err != nil {
		return "", fmt.Errorf("tmpfs on %s: %w", cover, err)
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", err
	}
	// Intermediate directories made by MkdirAll follow the umask (0022):
	// make them 0711 like the tmpfs root.
	for cur := dir; cur != cover; cur = filepath.Dir(cur) {
		_ = os.Chmod(cur, 0o711)
	}
	return cover, syscall.Mount(fmt.Sprintf("/proc/self/fd/%d", fd), dir, "", syscall.MS_BIND, "")
}

// executable reports whether the user may execute the file (mode bits).
func executable(path string, c cred) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	if c.uid == 0 {
		return st.Mode&0o111 != 0
	}
	return permFor(st, c)&1 != 0
}

// permFor returns the rwx bits of st that apply to c: the owner's, the
// group's or the others'.
func permFor(st *syscall.Stat_t, c cred) uint32 {
	switch {
	case st.Uid == c.uid:
		return st.Mode >> 6 & 7
	case st.Gid == c.gid || containsGID(c.groups, st.Gid):
		return st.Mode >> 3 & 7
	default:
		return st.Mode & 7
	}
}

const oPath = 0x200000 // O_PATH (Linux, all architectures Go supports but alpha/parisc/sparc)

func searchable(fi os.FileInfo, c cred) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	return permFor(st, c)&1 != 0
}

func containsGID(gs []uint32, g uint32) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

// jobGroups are the supplementary groups the job runs with: the spec's,
// else the user's from the group database, always with the primary gid.
func jobGroups(spec *translate.SessionSpec) []uint32 {
	gs := append([]uint32(nil), spec.Groups...)
	if len(gs) == 0 {
		var u *user.User
		var err error
		if spec.UserName != "" {
			u, err = user.Lookup(spec.UserName)
		} else {
			u, err = user.LookupId(strconv.Itoa(int(spec.UID)))
		}
		if err == nil {
			if ids, err := u.GroupIds(); err == nil {
				for _, id := range ids {
					if g, err := strconv.ParseUint(id, 10, 32); err == nil {
						gs = append(gs, uint32(g))
					}
				}
			}
		}
	}
	if !containsGID(gs, spec.GID) {
		gs = append([]uint32{spec.GID}, gs...)
	}
	return gs
}

func argvTail(argv []string) []string {
	if len(argv) <= 1 {
		return nil
	}
	return argv[1:]
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func readHead(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return line
}

// strerror renders an error as C's strerror does ("No such file or
// directory"), for messages that imitate slurmstepd's.
func strerror(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
