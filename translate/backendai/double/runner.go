package double

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/local"
)

// Run mode: the main kernel of a batch session runs its startup command
// for real once the session is RUNNING (RunningTransitionHook →
// agent execute_batch → kernel runner run_subproc, which is
// asyncio.create_subprocess_shell: /bin/sh -c COMMAND with the kernel's
// environment plus _BACKEND_BATCH_MODE=1). It runs through the embedded
// engine (translate/local), as the kernel's uid/gid/groups, in a scratch
// directory standing for /home/work, its stdout and stderr captured as
// the container log. The main kernel of any other session gets an idle
// process in its place (exec sleep 2147483647, same identity, directory
// and environment): the container that streaming executes enter
// (kexec.go); only a destroy ends it. Destroying the kernel SIGTERMs,
// then SIGKILLs after KillGrace, every process of it.

const runNode = "bai-double"

type runner struct {
	d        *Double
	eng      *local.Engine
	root     string
	ownRoot  bool
	spool    string
	ownSpool bool
	mu       sync.Mutex
	byJob    map[uint32]*kernel
	seq      uint32
	wg       sync.WaitGroup
}

type procState uint8

const (
	procNone procState = iota
	procStarting
	procRunning
	procDone
)

func newRunner(d *Double) (*runner, error) {
	r := &runner{d: d, byJob: map[uint32]*kernel{}}
	var err error
	if d.opts.WorkRoot == "" {
		if r.root, err = os.MkdirTemp("", "bai-double-work-"); err != nil {
			return nil, err
		}
		r.ownRoot = true
	} else {
		r.root = d.opts.WorkRoot
		if err = os.MkdirAll(r.root, 0o711); err != nil {
			return nil, err
		}
	}
	os.Chmod(r.root, 0o711)
	if d.opts.SpoolDir == "" {
		if r.spool, err = os.MkdirTemp("", "bai-double-spool-"); err != nil {
			return nil, err
		}
		r.ownSpool = true
	} else {
		r.spool = d.opts.SpoolDir
	}
	os.Chmod(r.spool, 0o711)
	cfg := conf.New()
	cfg.Nodes = []conf.Node{{Name: runNode, Addr: "127.0.0.1", Hostname: runNode, CPUs: 4096, Boards: 1, Sockets: 1,
		CoresPerSocket: 4096, ThreadsPerCore: 1, RealMemory: 1 << 30, Weight: 1, State: "IDLE"}}
	cfg.Partitions = []conf.Partition{{Name: "p", Nodes: []string{runNode}, NodesExpr: runNode, Default: true,
		State: "UP", MaxTime: conf.Infinite}}
	opts := []local.Option{local.WithSpoolDir(r.spool), local.WithLogger(d.log), local.WithRetention(time.Hour)}
	if len(d.opts.ShimCommand) > 0 {
		opts = append(opts, local.WithShimCommand(d.opts.ShimCommand...))
	}
	r.eng = local.New(cfg, opts...)
	if err := r.eng.Err(); err != nil {
		return nil, fmt.Errorf("double: run mode: %w", err)
	}
	r.wg.Add(1)
	go r.events()
	return r, nil
}

// start runs the kernel's batch command (d.mu held).
func (r *runner) start(k *kernel) {
	s := k.sess
	if s.startupCommand == nil {
		return
	}
	x := r.launch(k, "#!/bin/sh\nexec /bin/sh -c \"$1\"\n", []string{"slurm_script", *s.startupCommand}, false)
	// The batch job (run id "batch-job") holds the kernel's output queue
	// until its command ends (agent execute_batch → kernel.execute).
	x.held = true
}

// startIdle gives a non-batch session's main kernel its "container": a
// process that only waits, so that executes can enter its namespaces
// (d.mu held). Nothing ends it but a destroy.
func (r *runner) startIdle(k *kernel) {
	k.idle = true
	r.launch(k, "#!/bin/sh\nexec sleep 2147483647\n", []string{"slurm_script"}, true)
}

// launch starts the kernel's container process through the embedded
// engine (d.mu held) and gives the kernel its kernel runner.
func (r *runner) launch(k *kernel, script string, argv []string, appendOut bool) *kexec {
	r.mu.Lock()
	r.seq++
	job := r.seq
	r.byJob[job] = k
	r.mu.Unlock()
	k.jobID = job
	k.proc = procStarting
	k.ready = make(chan struct{})
	k.x = newKexec(r, k)
	dir := filepath.Join(r.root, k.id)
	work := filepath.Join(dir, "work")
	k.workDir, k.logPath = work, filepath.Join(dir, "container.log")
	env := append(r.d.procEnv(k), "_BACKEND_BATCH_MODE=1")
	cpus := uint32(1)
	if c := k.requested.get("cpu"); c > 0 {
		cpus = uint32((c + 999) / 1000)
	}
	var memMB uint64
	if m := k.requested.get("mem"); m > 0 {
		memMB = uint64(m) >> 20
	}
	spec := translate.SessionSpec{
		Name: "bai-" + k.id, JobID: job, ResourceGroup: "p", UID: uint32(k.uid), GID: uint32(k.gid), Groups: kernelGroups(k),
		Script: script, Argv: argv, Env: env,
		// Appending: execute output is appended to the same log.
		WorkDir: work, StdOut: k.logPath, AppendOut: appendOut, Nodes: 1, CPUsPerNode: cpus, MemPerNodeMB: memMB,
		KillWait: r.d.opts.KillGrace,
	}
	uid, gid := k.uid, k.gid
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		err := os.MkdirAll(work, 0o700)
		if err == nil {
			os.Chown(dir, uid, gid)
			os.Chmod(dir, 0o700)
			err = os.Chown(work, uid, gid)
		}
		var id translate.SessionID
		if err == nil {
			id, err = r.eng.CreateSession(context.Background(), spec)
		}
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		if err != nil {
			r.d.log.Printf("double: kernel %s: cannot start: %v", k.id, err)
			k.setProc(procDone)
			k.log = append(k.log, []byte(err.Error()+"\n")...)
			if k.killing {
				r.d.eng.kernelTerminated(k, reasonOf(k.sess), time.Now().UTC())
			} else if k.idle {
				r.d.eng.kernelTerminated(k, "failed-to-start", time.Now().UTC())
			} else if k.sess.status == StRunning {
				r.d.eng.batchResult(k.sess, -1, "task-failed", time.Now().UTC(), map[*session]bool{})
			}
			return
		}
		k.engineID = string(id)
		if k.killing {
			go r.eng.DestroySession(context.Background(), id, k.killForced)
		}
	}()
	return k.x
}

// procEnv is the environment of the kernel's processes without
// _BACKEND_BATCH_MODE: the image's defaults, then the kernel's environ
// (the kernel runner's child_env).
func (d *Double) procEnv(k *kernel) []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + k.workDir, "LANG=C.UTF-8",
		"LC_ALL=C.UTF-8", "TERM=xterm", "LOCAL_USER_ID=" + fmt.Sprint(k.uid), "LOCAL_GROUP_ID=" + fmt.Sprint(k.gid)}
	for _, e := range d.kernelEnviron(k) {
		env = append(env, e[0]+"="+e[1])
	}
	return env
}

func kernelGroups(k *kernel) []uint32 {
	groups := []uint32{uint32(k.gid)}
	for _, g := range k.gids {
		if uint32(g) != uint32(k.gid) {
			groups = append(groups, uint32(g))
		}
	}
	return groups
}

// setProc moves the container process's state; executes wait for
// ready (d.mu held).
func (k *kernel) setProc(p procState) {
	k.proc = p
	if (p == procRunning || p == procDone) && k.ready != nil {
		select {
		case <-k.ready:
		default:
			close(k.ready)
		}
	}
}

func reasonOf(s *session) string {
	if s.statusInfo != nil {
		return *s.statusInfo
	}
	return ""
}

// kill destroys the kernel's processes (d.mu held). When the process has
// already ended, the kernel terminates at once.
func (r *runner) kill(k *kernel, forced bool) {
	if k.proc == procNone || k.proc == procDone {
		if !k.status.terminal() && k.status != StPending {
			r.d.eng.kernelTerminated(k, reasonOf(k.sess), time.Now().UTC())
		}
		return
	}
	if k.killing && (!forced || k.killForced) {
		return
	}
	k.killing, k.killForced = true, k.killForced || forced
	if k.engineID != "" {
		id := translate.SessionID(k.engineID)
		go r.eng.DestroySession(context.Background(), id, forced)
	}
}

func (r *runner) events() {
	defer r.wg.Done()
	for ev := range r.eng.Events() {
		r.mu.Lock()
		k := r.byJob[ev.JobID]
		r.mu.Unlock()
		if k == nil {
			ev.Ack()
			continue
		}
		r.d.mu.Lock()
		now := time.Now().UTC()
		switch ev.Status {
		case translate.SessionRunning:
			if k.proc == procStarting {
				k.setProc(procRunning)
			}
		case translate.SessionTerminated, translate.SessionCancelled, translate.SessionError:
			k.setProc(procDone)
			if u := ev.Usage; u != nil {
				k.lastStat = lastStat(u)
			}
			exit := ev.ExitCode
			if ev.Signal != 0 {
				exit = -ev.Signal // Python's returncode for a signal
			}
			switch {
			case k.killing:
				if !k.status.terminal() {
					r.d.eng.kernelTerminated(k, reasonOf(k.sess), now)
				}
			case k.idle:
				// The container died by itself: the agent reports the
				// kernel gone, the session then terminates.
				if !k.status.terminal() {
					r.d.eng.kernelTerminated(k, "self-terminated", now)
				}
			case ev.Status == translate.SessionError:
				r.d.eng.batchResult(k.sess, -1, "task-failed", now, map[*session]bool{})
			case k.sess.status == StRunning:
				reason := "task-finished"
				if exit != 0 {
					reason = "task-failed"
				}
				r.d.eng.batchResult(k.sess, exit, reason, now, map[*session]bool{})
				// "finished" reached the agent: the next run waiting for
				// the output queue proceeds (next_output_queue).
				k.x.release(nil)
			}
			r.mu.Lock()
			delete(r.byJob, ev.JobID)
			r.mu.Unlock()
			go r.eng.Purge(context.Background(), ev.ID)
		}
		r.d.mu.Unlock()
		ev.Ack() // the kernel runs (its state above) before its script starts
	}
}

// logOf is the kernel's container log: its stdout and stderr, without
// the embedded engine's own slurmstepd lines.
func (r *runner) logOf(k *kernel) string {
	var b []byte
	if k.logPath != "" {
		b, _ = os.ReadFile(k.logPath)
	}
	b = append(append([]byte(nil), k.log...), b...)
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, "slurmstepd-"+runNode+": error: *** JOB ") {
			continue
		}
		out.WriteString(l)
	}
	return out.String()
}

func (r *runner) close() {
	r.d.mu.Lock()
	var ids []translate.SessionID
	for _, k := range r.d.kernels {
		if k.engineID != "" && k.proc != procDone {
			k.killing = true
			ids = append(ids, translate.SessionID(k.engineID))
		}
	}
	r.d.mu.Unlock()
	for _, id := range ids {
		r.eng.DestroySession(context.Background(), id, true)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		n := len(r.byJob)
		r.mu.Unlock()
		if n == 0 {
			break
		}
		if ss, err := r.eng.Sessions(context.Background()); err == nil {
			busy := false
			for _, s := range ss {
				if !s.Status.Terminal() {
					busy = true
				}
			}
			if !busy {
				break
			}
		}
	}
	r.eng.Close()
	r.wg.Wait()
	if r.ownRoot {
		os.RemoveAll(r.root)
	}
	if r.ownSpool {
		os.RemoveAll(r.spool)
	}
}

// kernelEnviron is the kernel's environment as the launcher builds it
// (sokovan/scheduler/launcher/launcher.py): the session environ, the
// session-wide BACKENDAI_* variables, then the per-kernel ones.
func (d *Double) kernelEnviron(k *kernel) [][2]string {
	s := k.sess
	env := append([][2]string(nil), s.environ...)
	var hosts []string
	replicas := map[string]int{}
	var roles []string
	for _, x := range s.kernels {
		hosts = append(hosts, x.hostname)
		if replicas[x.role] == 0 {
			roles = append(roles, x.role)
		}
		replicas[x.role]++
	}
	var rep []string
	for _, role := range sortedStrings(roles) {
		rep = append(rep, fmt.Sprintf("%s:%d", role, replicas[role]))
	}
	var ports []string
	for _, p := range s.main().preopen {
		ports = append(ports, fmt.Sprint(p))
	}
	env = append(env,
		[2]string{"BACKENDAI_USER_UUID", s.owner.uuid}, [2]string{"BACKENDAI_USER_EMAIL", s.owner.email},
		[2]string{"BACKENDAI_USER_NAME", s.owner.username}, [2]string{"BACKENDAI_SESSION_ID", s.id},
		[2]string{"BACKENDAI_SESSION_NAME", s.name}, [2]string{"BACKENDAI_CLUSTER_SIZE", fmt.Sprint(len(s.kernels))},
		[2]string{"BACKENDAI_CLUSTER_REPLICAS", strings.Join(rep, ",")},
		[2]string{"BACKENDAI_CLUSTER_HOSTS", strings.Join(hosts, ",")},
		[2]string{"BACKENDAI_ACCESS_KEY", s.accessKey}, [2]string{"BACKENDAI_PREOPEN_PORTS", strings.Join(ports, ",")},
		[2]string{"BACKENDAI_KERNEL_ID", k.id}, [2]string{"BACKENDAI_KERNEL_IMAGE", s.image.name},
		[2]string{"BACKENDAI_CLUSTER_ROLE", k.role}, [2]string{"BACKENDAI_CLUSTER_IDX", fmt.Sprint(k.idx)},
		[2]string{"BACKENDAI_CLUSTER_LOCAL_RANK", fmt.Sprint(k.rank)}, [2]string{"BACKENDAI_CLUSTER_HOST", k.hostname},
		[2]string{"BACKENDAI_SERVICE_PORTS", s.image.labels["ai.backend.service-ports"]})
	return env
}

func sortedStrings(xs []string) []string {
	out := append([]string(nil), xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// live: the kernel's batch process is starting or running.
func (k *kernel) live() bool { return k.proc == procStarting || k.proc == procRunning }

// lastStat is the kernels.last_stat an agent leaves at termination, as
// 26.8.1's agent serializes its metrics (common/types.py MetricValue):
// cpu_used in msec (user plus system: the agent reads the cgroup's
// total), mem in bytes with its maximum kept (stats_filter {"max"}).
func lastStat(u *translate.Usage) obj {
	msec := (u.UserCPU + u.SysCPU).Milliseconds()
	mem := strconv.FormatInt(u.MaxRSSKB*1024, 10)
	return obj{
		{"cpu_used", obj{{"current", strconv.FormatInt(msec, 10)}, {"capacity", nil}, {"pct", "0.00"}, {"unit_hint", "msec"}}},
		{"mem", obj{{"current", mem}, {"capacity", nil}, {"pct", "0.00"}, {"unit_hint", "bytes"}, {"stats.max", mem}}},
	}
}
