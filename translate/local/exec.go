package local

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// Errors of the executor.
var (
	ErrNoSpool    = fmt.Errorf("embedded engine: no spool directory configured, sessions cannot run: %w", translate.ErrNotSupported)
	ErrNoSession  = fmt.Errorf("embedded engine: %w", translate.ErrNoSession)
	ErrNotRunning = fmt.Errorf("embedded engine: %w", translate.ErrNotRunning)
	ErrClosed     = fmt.Errorf("embedded engine: closed: %w", translate.ErrUnavailable)
)

// Files of a session directory (spool/<session id>/). Each belongs to one
// party and is only ever replaced atomically (write, fsync, rename, fsync
// the directory); together they are the session's state:
//
//	session.json  engine, at CreateSession (fsync'ed before it returns)
//	priority      engine, UpdatePriority of a pending session
//	launch.json   engine, when the session is placed (spec, nodes, final env, cgroup plan)
//	claim         shim, O_EXCL, first thing: "PID START" (a second shim for the same session exits)
//	running.json  shim, once the batch script was started
//	status.json   shim when the script ended; engine when cancelled, never placeable, or lost
//	destroy       engine, DestroySession of a placed session: "graceful" or "forced"
//	timelimit     engine, UpdateTimeLimit (nanoseconds; the shim re-reads it on SIGHUP)
//	notify-N      engine, NotifySession (a message; the shim writes it to the job's stderr on SIGUSR1)
//	shim.log      the shim's own log
//	jobNNNNN/     the batch script directory (slurm_script), while the script runs
const (
	fSession   = "session.json"
	fPriority  = "priority"
	fLaunch    = "launch.json"
	fClaim     = "claim"
	fRunning   = "running.json"
	fStatus    = "status.json"
	fDestroy   = "destroy"
	fTimeLimit = "timelimit"
	fShimLog   = "shim.log"
	fNotify    = "notify-" // engine, NotifySession: one file per message (the shim removes it)
)

type sessionRecord struct {
	ID      string                `json:"id"`
	Seq     uint64                `json:"seq"`
	Created time.Time             `json:"created"`
	Spec    translate.SessionSpec `json:"spec"`
}

type launchRecord struct {
	ID        string                `json:"id"`
	Spec      translate.SessionSpec `json:"spec"`
	Env       []string              `json:"env"` // spec.Env with the placement filled in
	Nodes     []allocNode           `json:"nodes"`
	Node      string                `json:"node"` // where the batch script runs (first node)
	ScriptDir string                `json:"script_dir"`
	Cgroup    *cgroupPlan           `json:"cgroup,omitempty"`
	Scheduled time.Time             `json:"scheduled"`
}

type runningRecord struct {
	Started  time.Time `json:"started"`
	BatchPID int       `json:"batch_pid"` // the script's pid inside the session's PID namespace
}

type statusRecord struct {
	Status   translate.SessionStatus `json:"status"`
	Reason   string                  `json:"reason"`
	ExitCode int                     `json:"exit_code"`
	Signal   int                     `json:"signal"`
	Started  time.Time               `json:"started,omitzero"`
	Ended    time.Time               `json:"ended"`
	OOMKills int                     `json:"oom_kills,omitempty"`
	Message  string                  `json:"message,omitempty"`
	UserCPU  time.Duration           `json:"user_cpu,omitempty"`
	SysCPU   time.Duration           `json:"sys_cpu,omitempty"`
	MaxRSSKB int64                   `json:"max_rss_kb,omitempty"`
}

// usage is what the record says the session's processes used.
func (f *statusRecord) usage() *translate.Usage {
	return &translate.Usage{UserCPU: f.UserCPU, SysCPU: f.SysCPU, MaxRSSKB: f.MaxRSSKB, OOMKills: f.OOMKills}
}

type session struct {
	id         translate.SessionID
	dir        string
	seq        uint64
	created    time.Time
	spec       translate.SessionSpec
	status     translate.SessionStatus
	nodes      []string
	alloc      []allocNode // held resources while placed (nil otherwise)
	placedAt   time.Time
	started    time.Time
	shimPID    int
	shimStart  uint64
	batchPID   int
	destroying bool
	direct     bool   // ended by endDirectly: the shim never saw the cancel
	gate       func() // lets the shim started by this engine start the script (letGo)
	final      *statusRecord
}

// letGo opens the gate of a shim this engine started: it starts the
// script (and closes the pipe). A shim found after a restart has none:
// its gate is EOF and it does not wait.
func (s *session) letGo() {
	if s.gate != nil {
		s.gate()
	}
}

type executor struct {
	spool     string
	log       *log.Logger
	shim      []string
	retention time.Duration
	cg        cgroupSetup

	mu       sync.Mutex
	sessions map[translate.SessionID]*session
	seq      uint64
	pl       *placer
	closed   bool

	kick       chan struct{}
	done       chan struct{}
	startTimer *time.Timer // kicks the scheduler at the earliest StartAt (x.mu)

	evMu   sync.Mutex
	evQ    []translate.SessionEvent
	evWake chan struct{}
	out    chan translate.SessionEvent
}

func newExecutor(cfg *conf.Config, o *options) (*executor, error) {
	if err := os.MkdirAll(o.spool, 0o711); err != nil {
		return nil, spoolErr(err)
	}
	x := &executor{
		spool: o.spool, log: o.log, shim: o.shim, retention: o.retention,
		sessions: map[translate.SessionID]*session{}, pl: newPlacer(cfg),
		kick: make(chan struct{}, 1), done: make(chan struct{}),
		evWake: make(chan struct{}, 1), out: make(chan translate.SessionEvent),
	}
	// Nodes drained before a restart stay so from the first pass on.
	x.pl.setHeld(loadUnschedulable(o.spool))
	// Descriptors this server inherited without close-on-exec must not
	// reach the shims (and through them the jobs).
	cloexecFrom(3)
	x.cg = probeCgroups()
	if x.cg.Version == 0 {
		x.log.Printf("embedded engine: cgroups not usable (%s): memory and CPU limits are NOT enforced; time limits are", x.cg.Why)
	} else {
		x.log.Printf("embedded engine: cgroup v%d under %s: memory and CPU limits enforced", x.cg.Version, strings.Join(x.cg.Base, ", "))
	}
	if err := x.recover(); err != nil {
		return nil, err
	}
	go x.pump()
	go x.loop()
	x.kickSched()
	return x, nil
}

// ---- events

// emit queues an event. Its time is when the session entered the status
// (also when the event is replayed after a restart).
func (x *executor) emit(s *session, st translate.SessionStatus, f *statusRecord) {
	if x.closed {
		return
	}
	ev := translate.SessionEvent{ID: s.id, JobID: s.spec.JobID, Status: st, Time: time.Now(), Nodes: s.nodes}
	switch {
	case st == translate.SessionPending && !s.created.IsZero():
		ev.Time = s.created
	case st == translate.SessionScheduled && !s.placedAt.IsZero():
		ev.Time = s.placedAt
	case st == translate.SessionRunning && !s.started.IsZero():
		ev.Time = s.started
	}
	if f != nil {
		ev.ExitCode, ev.Signal, ev.Reason = f.ExitCode, f.Signal, translate.EndReason(f.Reason)
		if !f.Ended.IsZero() {
			ev.Time = f.Ended
		}
		if st.Terminal() {
			ev.Usage = f.usage()
		}
	}
	if st == translate.SessionRunning {
		ev.Shown = s.gate
	}
	x.evMu.Lock()
	x.evQ = append(x.evQ, ev)
	x.evMu.Unlock()
	select {
	case x.evWake <- struct{}{}:
	default:
	}
}

// pump hands queued events to the consumer: the queue is unbounded, so
// the engine never blocks on a slow reader and never drops an event.
func (x *executor) pump() {
	defer close(x.out)
	for {
		x.evMu.Lock()
		if len(x.evQ) == 0 {
			x.evMu.Unlock()
			select {
			case <-x.evWake:
				continue
			case <-x.done:
				return
			}
		}
		ev := x.evQ[0]
		x.evQ[0] = translate.SessionEvent{}
		x.evQ = x.evQ[1:]
		x.evMu.Unlock()
		select {
		case x.out <- ev:
		case <-x.done:
			return
		}
	}
}

// ---- scheduling

func (x *executor) kickSched() {
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

func (x *executor) loop() {
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	for {
		select {
		case <-x.kick:
			x.schedule()
		case <-purge.C:
			x.purgeOld()
		case <-x.done:
			return
		}
	}
}

// schedule starts pending sessions in priority order (then FIFO). A
// session that does not fit yet holds the nodes it waits for, so no
// lower-priority session passes it there (no backfill); one that can
// never fit is failed at once and holds nothing.
func (x *executor) schedule() {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	var pend []*session
	now := time.Now()
	var next time.Time // the earliest start of a session that may not start yet
	for _, s := range x.sessions {
		if s.status != translate.SessionPending {
			continue
		}
		if at := s.spec.StartAt; !at.IsZero() && now.Before(at) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		pend = append(pend, s)
	}
	if !next.IsZero() {
		// Not yet (--begin / starts_at): look again then.
		if x.startTimer == nil {
			x.startTimer = time.AfterFunc(next.Sub(now), x.kickSched)
		} else {
			x.startTimer.Reset(next.Sub(now))
		}
	}
	sort.Slice(pend, func(i, j int) bool {
		if pend[i].spec.Priority != pend[j].spec.Priority {
			return pend[i].spec.Priority > pend[j].spec.Priority
		}
		return pend[i].seq < pend[j].seq
	})
	blocked := map[string]bool{}
	var starts []*session
	for _, s := range pend {
		alloc, f, waitFor, why := x.pl.place(&s.spec, blocked)
		switch f {
		case fitNow:
			x.pl.reserve(alloc)
			s.alloc = alloc
			s.nodes = allocNames(alloc)
			s.status = translate.SessionScheduled
			s.placedAt = time.Now()
			x.emit(s, translate.SessionScheduled, nil)
			starts = append(starts, s)
		case fitLater:
			for _, n := range waitFor {
				blocked[n] = true
			}
		case fitNever:
			x.log.Printf("embedded engine: session %s (job %d) can never run here: %s", s.id, s.spec.JobID, why)
			x.finishLocked(s, &statusRecord{Status: translate.SessionError, Reason: "failed-to-start",
				Message: why, Ended: time.Now()}, true)
		}
	}
	x.mu.Unlock()
	for _, s := range starts {
		x.launch(s)
	}
}

func allocNames(a []allocNode) []string {
	out := make([]string, len(a))
	for i, n := range a {
		out[i] = n.Name
	}
	return out
}

// launch writes the launch record of a placed session and starts its shim.
func (x *executor) launch(s *session) {
	x.mu.Lock()
	spec, alloc := s.spec, s.alloc
	x.mu.Unlock()
	lr := &launchRecord{
		ID: string(s.id), Spec: spec, Nodes: alloc, Node: alloc[0].Name, Scheduled: time.Now(),
		Env:       placementEnv(spec, alloc),
		ScriptDir: filepath.Join(s.dir, fmt.Sprintf("job%05d", spec.JobID)),
	}
	mem := spec.MemPerNodeMB << 20
	if mem == 0 && spec.Exclusive {
		mem = alloc[0].MemMB << 20
	}
	lr.Cgroup = x.cg.plan(fmt.Sprintf("job_%d_%s", spec.JobID, string(s.id)[:8]), mem, float64(alloc[0].CPUs))
	if err := writeJSON(filepath.Join(s.dir, fLaunch), lr); err != nil {
		x.mu.Lock()
		x.finishLocked(s, &statusRecord{Status: translate.SessionError, Reason: "failed-to-start",
			Message: "spool: " + err.Error(), Ended: time.Now()}, true)
		x.mu.Unlock()
		return
	}
	x.startShim(s)
}

// startShim starts `slurm-frontend shim run DIR` as the init of a new PID
// and mount namespace, in its own session, so that it outlives the
// server. The pipe on its fd 3 tells a live engine when the script runs.
func (x *executor) startShim(s *session) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed || s.status.Terminal() {
		return
	}
	if s.destroying {
		x.finishLocked(s, &statusRecord{Status: translate.SessionCancelled, Reason: "user-requested", Ended: time.Now()}, true)
		return
	}
	fail := func(err error) {
		x.log.Printf("embedded engine: session %s (job %d): cannot start shim: %v", s.id, s.spec.JobID, err)
		x.finishLocked(s, &statusRecord{Status: translate.SessionError, Reason: "failed-to-start",
			Message: "shim: " + err.Error(), Ended: time.Now()}, true)
	}
	r, w, err := os.Pipe()
	if err != nil {
		fail(err)
		return
	}
	gr, gw, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		fail(err)
		return
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, fShimLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		r.Close()
		w.Close()
		gr.Close()
		gw.Close()
		fail(err)
		return
	}
	args := append(append([]string{}, x.shim...), "run", s.dir)
	if args[0] == "/proc/self/exe" {
		args[0] = "slurm-frontend"
	}
	cmd := &exec.Cmd{
		Path: x.shim[0], Args: args, Env: os.Environ(),
		Stdout: logf, Stderr: logf, ExtraFiles: []*os.File{w, gr},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS},
	}
	err = cmd.Start()
	w.Close()
	gr.Close()
	logf.Close()
	if err != nil {
		r.Close()
		gw.Close()
		fail(err)
		return
	}
	s.shimPID = cmd.Process.Pid
	s.shimStart, _ = procStart(s.shimPID)
	var once sync.Once
	s.gate = func() { once.Do(func() { _, _ = gw.Write([]byte("G\n")); gw.Close() }) }
	go x.watchChild(s, cmd, r)
}

// watchChild follows a shim this engine started: "S" on the pipe means
// the script is about to start: the session runs, and the shim waits for
// the event's consumer to show it (letGo); "R" means the script runs
// (its pid is known); EOF means the shim is gone.
func (x *executor) watchChild(s *session, cmd *exec.Cmd, r *os.File) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if l := strings.TrimSpace(line); l == "S" || l == "R" {
			x.onRunning(s)
		}
		if err != nil {
			break
		}
	}
	r.Close()
	_ = cmd.Wait()
	s.letGo() // closes the gate's pipe if no one did
	x.onShimExit(s)
}

// watchAttached follows a shim found alive after a restart (not this
// process's child): poll its liveness and its files.
func (x *executor) watchAttached(s *session) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-x.done:
			return
		case <-t.C:
		}
		x.mu.Lock()
		pid, start, st := s.shimPID, s.shimStart, s.status
		x.mu.Unlock()
		if st == translate.SessionScheduled && exists(filepath.Join(s.dir, fRunning)) {
			x.onRunning(s)
		}
		if !alive(pid, start) {
			x.onShimExit(s)
			return
		}
	}
}

func (x *executor) onRunning(s *session) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.markRunningLocked(s)
}

// markRunningLocked reads the shim's running record: the first time
// ("S", or "R" of a shim without a gate) the session runs; later ("R"
// after "S") only the script's pid is new.
func (x *executor) markRunningLocked(s *session) {
	if x.closed || (s.status != translate.SessionScheduled && s.status != translate.SessionRunning) {
		return
	}
	var rr runningRecord
	if readJSON(filepath.Join(s.dir, fRunning), &rr) != nil {
		return
	}
	if s.status == translate.SessionRunning {
		if rr.BatchPID != 0 {
			s.batchPID = rr.BatchPID
		}
		return
	}
	s.batchPID, s.started = rr.BatchPID, rr.Started
	s.status = translate.SessionRunning
	x.emit(s, translate.SessionRunning, nil)
}

func (x *executor) onShimExit(s *session) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed || s.status.Terminal() {
		return
	}
	st := readStatus(s.dir)
	if st == nil {
		// A second shim (started after a restart) exits at once when the
		// first one holds the claim: follow the one that does.
		if pid, start, ok := readClaim(filepath.Join(s.dir, fClaim)); ok && pid != s.shimPID && alive(pid, start) {
			s.shimPID, s.shimStart = pid, start
			go x.watchAttached(s)
			return
		}
		st = x.lostStatus(s)
		go removeCgroups(s.dir)
		x.finishLocked(s, st, true)
		return
	}
	if s.direct && st.Status == translate.SessionTerminated {
		st.Reason = "user-requested" // the shim saw its script killed, not why
	}
	x.finishLocked(s, st, false)
}

// removeCgroups deletes the cgroups of a session whose shim died without
// cleaning up (killed, or the host's OOM killer): the kernel ends the
// processes with their PID namespace, but the job's empty cgroup
// directories would stay for good, one set per such job.
func removeCgroups(dir string) {
	var lr launchRecord
	if readJSON(filepath.Join(dir, fLaunch), &lr) == nil && lr.Cgroup != nil {
		lr.Cgroup.remove()
	}
}

// lostStatus is the end of a session whose shim died without writing a
// status: it never got going, was cancelled before the script started,
// or died with it (host reboot, shim killed): the PID namespace died
// with the shim, so nothing of the job is left running.
func (x *executor) lostStatus(s *session) *statusRecord {
	now := time.Now()
	switch {
	case exists(filepath.Join(s.dir, fDestroy)) && !exists(filepath.Join(s.dir, fRunning)):
		return &statusRecord{Status: translate.SessionCancelled, Reason: "user-requested", Ended: now}
	case s.destroying:
		// Ended while being destroyed, without recording it (the spool
		// took no file: endDirectly): the cancel ended it.
		return &statusRecord{Status: translate.SessionCancelled, Reason: "user-requested",
			Message: "ended by a cancel the spool could not record", Ended: now}
	case !exists(filepath.Join(s.dir, fClaim)):
		return &statusRecord{Status: translate.SessionError, Reason: "failed-to-start",
			Message: "shim exited before starting the job; see " + filepath.Join(s.dir, fShimLog), Ended: now}
	default:
		return &statusRecord{Status: translate.SessionError, Reason: "agent-termination",
			Message: "shim died without recording the job's end", Ended: now}
	}
}

// finishLocked records a session's end, frees its nodes and reports it.
func (x *executor) finishLocked(s *session, st *statusRecord, write bool) {
	if s.status.Terminal() {
		return
	}
	if write && !x.closed {
		if err := writeJSON(filepath.Join(s.dir, fStatus), st); err != nil {
			x.log.Printf("embedded engine: session %s: cannot record its end: %v", s.id, err)
		}
	}
	if st.Status == translate.SessionTerminated && s.status == translate.SessionScheduled {
		x.markRunningLocked(s) // a job too quick to be seen running
	}
	if s.alloc != nil {
		x.pl.release(s.alloc)
		s.alloc = nil
	}
	s.status = st.Status
	s.final = st
	x.emit(s, st.Status, st)
	x.kickSched()
}

// ---- recovery

// recover reads the spool: pending sessions queue again, placed ones
// whose shim never claimed them get a shim (the claim guarantees one
// run), live shims are re-attached, finished ones are reported with their
// status. Every session's current state is replayed on Events.
func (x *executor) recover() error {
	ents, err := os.ReadDir(x.spool)
	if err != nil {
		return err
	}
	var list []*session
	var attach, relaunch []*session
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(x.spool, e.Name())
		var rec sessionRecord
		if err := readJSON(filepath.Join(dir, fSession), &rec); err != nil {
			// CreateSession never returned for it (its record is written
			// before), so nobody knows this session: drop it.
			if os.IsNotExist(err) {
				os.RemoveAll(dir)
			} else {
				x.log.Printf("embedded engine: spool %s: %v (left alone)", dir, err)
			}
			continue
		}
		s := &session{id: translate.SessionID(rec.ID), dir: dir, seq: rec.Seq, created: rec.Created,
			spec: rec.Spec, status: translate.SessionPending}
		if b, err := os.ReadFile(filepath.Join(dir, fPriority)); err == nil {
			if p, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				s.spec.Priority = p
			}
		}
		var lr launchRecord
		placed := readJSON(filepath.Join(dir, fLaunch), &lr) == nil
		if placed {
			s.nodes = allocNames(lr.Nodes)
			s.placedAt = lr.Scheduled
		}
		if st := readStatus(dir); st != nil {
			s.status, s.final = st.Status, st
		} else if placed {
			s.alloc = lr.Nodes
			x.pl.reserve(s.alloc)
			s.status = translate.SessionScheduled
			s.destroying = exists(filepath.Join(dir, fDestroy))
			if pid, start, ok := readClaim(filepath.Join(dir, fClaim)); ok {
				s.shimPID, s.shimStart = pid, start
				if alive(pid, start) {
					var rr runningRecord
					if readJSON(filepath.Join(dir, fRunning), &rr) == nil {
						s.status, s.batchPID, s.started = translate.SessionRunning, rr.BatchPID, rr.Started
					}
					attach = append(attach, s)
				} else if st := readStatus(dir); st != nil {
					x.pl.release(s.alloc)
					s.alloc = nil
					s.status, s.final = st.Status, st
				} else {
					st := x.lostStatus(s)
					go removeCgroups(dir)
					_ = writeJSON(filepath.Join(dir, fStatus), st)
					x.pl.release(s.alloc)
					s.alloc = nil
					s.status, s.final = st.Status, st
				}
			} else {
				relaunch = append(relaunch, s)
			}
		}
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].seq < list[j].seq })
	now := time.Now()
	for _, s := range list {
		if s.final != nil && x.retention > 0 && now.Sub(s.final.Ended) > x.retention {
			os.RemoveAll(s.dir)
			continue
		}
		x.sessions[s.id] = s
		x.seq = max(x.seq, s.seq)
		x.emit(s, s.status, s.final)
	}
	if n := len(list); n > 0 {
		x.log.Printf("embedded engine: recovered %d sessions from %s (%d running re-attached, %d to start)",
			n, x.spool, len(attach), len(relaunch))
	}
	for _, s := range attach {
		go x.watchAttached(s)
	}
	for _, s := range relaunch {
		go x.startShim(s)
	}
	return nil
}

func (x *executor) purgeOld() {
	if x.retention <= 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	now := time.Now()
	for id, s := range x.sessions {
		if s.final != nil && now.Sub(s.final.Ended) > x.retention {
			os.RemoveAll(s.dir)
			delete(x.sessions, id)
		}
	}
}

// ---- the Executor API

func (x *executor) create(spec translate.SessionSpec) (translate.SessionID, error) {
	if spec.Script == "" && !spec.Interactive { // an allocation runs none
		return "", errors.New("embedded engine: empty batch script")
	}
	id := newSessionID()
	dir := filepath.Join(x.spool, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", spoolErr(err)
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		os.RemoveAll(dir)
		return "", ErrClosed
	}
	x.seq++
	rec := sessionRecord{ID: id, Seq: x.seq, Created: time.Now(), Spec: spec}
	x.mu.Unlock()
	err := writeJSON(filepath.Join(dir, fSession), &rec)
	if err == nil {
		err = syncDir(x.spool)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", spoolErr(err)
	}
	x.mu.Lock()
	if x.closed {
		// Recorded: a restarted engine runs it.
		x.mu.Unlock()
		return translate.SessionID(id), nil
	}
	s := &session{id: translate.SessionID(id), dir: dir, seq: rec.Seq, created: rec.Created, spec: spec,
		status: translate.SessionPending}
	x.sessions[s.id] = s
	x.emit(s, translate.SessionPending, nil)
	x.mu.Unlock()
	x.kickSched()
	return s.id, nil
}

// destroy ends a session. It returns once no script of the session can
// start any more (the cancel is acknowledged after it): a placed session
// whose shim has not started the script yet is waited for (the shim sees
// the request and ends it, or has started the script just before), and
// a running one's processes get the signal from here at once, as well as
// from its shim (which a loaded machine may hold up for seconds, while
// the script would go on).
func (x *executor) destroy(id translate.SessionID, forced bool) error {
	x.mu.Lock()
	s := x.sessions[id]
	err := x.destroyLocked(s, forced)
	var pid int
	var start uint64
	if s != nil {
		pid, start = s.shimPID, s.shimStart
	}
	x.mu.Unlock()
	if err != nil || s == nil || pid == 0 {
		return err
	}
	status := func() translate.SessionStatus {
		x.mu.Lock()
		defer x.mu.Unlock()
		return s.status
	}
	started := func() bool { return exists(filepath.Join(s.dir, fRunning)) }
	for deadline := time.Now().Add(destroyWait); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st := status(); st == translate.SessionRunning || st.Terminal() || !alive(pid, start) || started() {
			break
		}
	}
	if st := status(); !st.Terminal() && alive(pid, start) && (st == translate.SessionRunning || started()) {
		// The shim's children (the script, steps' tasks) and their
		// process groups: one read of /proc, where a walk of every
		// process would cost a storm of cancels dearly.
		sigs := []syscall.Signal{syscall.SIGCONT, syscall.SIGTERM}
		if forced {
			sigs = []syscall.Signal{syscall.SIGKILL}
		}
		for _, c := range childPIDs(pid) {
			for _, sig := range sigs {
				_ = syscall.Kill(-c, sig)
				_ = syscall.Kill(c, sig)
			}
		}
	}
	return nil
}

// destroyWait bounds how long a destroy waits for a shim to take it.
const destroyWait = 10 * time.Second

func (x *executor) destroyLocked(s *session, forced bool) error {
	if s == nil {
		return ErrNoSession
	}
	switch {
	case s.status.Terminal():
		return nil
	case s.status == translate.SessionPending:
		x.finishLocked(s, &statusRecord{Status: translate.SessionCancelled, Reason: "user-requested", Ended: time.Now()}, true)
		return nil
	}
	mode := "graceful"
	if forced {
		mode = "forced"
	}
	if err := writeFileAtomic(filepath.Join(s.dir, fDestroy), []byte(mode+"\n"), 0o600, true); err != nil {
		if !spoolUnwritable(err) {
			return spoolErr(err)
		}
		// The spool takes no file (read-only, full), so the shim, which
		// reads the request there, would never see it. The job is ended
		// from here instead, as the shim would end it (SIGCONT and
		// SIGTERM to its processes, SIGKILL after KillWait; at once if
		// forced); the shim then ends with the script, and the session
		// is reported cancelled (lostStatus: it was being destroyed).
		x.log.Printf("embedded engine: session %s (job %d): cannot record the cancel (%v): signalling the job's processes directly", s.id, s.spec.JobID, err)
		x.endDirectly(s, forced)
	}
	first := !s.destroying
	s.destroying = true
	if s.shimPID != 0 && alive(s.shimPID, s.shimStart) {
		_ = syscall.Kill(s.shimPID, syscall.SIGTERM)
	}
	if first {
		x.emit(s, translate.SessionTerminating, &statusRecord{Reason: "user-requested"})
	}
	return nil
}

// spoolErr wraps an error of the spool; one of a spool that takes no
// file now (full, read-only) is also translate.ErrUnavailable: the
// request may succeed later.
func spoolErr(err error) error {
	if spoolUnwritable(err) || errors.Is(err, syscall.EIO) {
		return fmt.Errorf("embedded engine spool: %w: %w", translate.ErrUnavailable, err)
	}
	return fmt.Errorf("embedded engine spool: %w", err)
}

// spoolUnwritable reports an error of a spool that takes no file now.
func spoolUnwritable(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// endDirectly ends a placed session's processes without the shim's help
// (x.mu held): what the shim does on a destroy request it cannot be
// given. A session without a shim yet has nothing to end (startShim
// sees s.destroying); one whose script may not have started loses its
// shim, whose PID namespace goes with it, since the shim would start the
// script not knowing of the cancel.
func (x *executor) endDirectly(s *session, forced bool) {
	pid, start := s.shimPID, s.shimStart
	if pid == 0 || !alive(pid, start) {
		return
	}
	s.direct = true
	if s.status != translate.SessionRunning {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return
	}
	if forced {
		_, _ = signalNamespace(pid, syscall.SIGKILL, 0)
		return
	}
	_, _ = signalNamespace(pid, syscall.SIGCONT, 0)
	_, _ = signalNamespace(pid, syscall.SIGTERM, 0)
	wait := s.spec.KillWait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	time.AfterFunc(wait, func() {
		if alive(pid, start) {
			_, _ = signalNamespace(pid, syscall.SIGKILL, 0)
		}
	})
}

func (x *executor) signal(id translate.SessionID, sig int, batchOnly bool) error {
	x.mu.Lock()
	s := x.sessions[id]
	if s == nil {
		x.mu.Unlock()
		return ErrNoSession
	}
	if s.status != translate.SessionRunning && s.status != translate.SessionTerminating {
		x.mu.Unlock()
		return ErrNotRunning
	}
	pid, start, batch := s.shimPID, s.shimStart, s.batchPID
	held := s.spec.Interactive
	x.mu.Unlock()
	if batchOnly && held {
		return nil // an allocation held by its shim has no batch process
	}
	if !alive(pid, start) {
		return ErrNotRunning
	}
	if !batchOnly {
		batch = 0
	} else if batch == 0 {
		batch = 2
	}
	_, err := signalNamespace(pid, syscall.Signal(sig), batch)
	return err
}

// notify queues message for the running session's shim, which writes
// it to the job's error output (scontrol notify). Each message is a file
// of its own (notify-SEQ), written atomically, then the shim is told.
func (x *executor) notify(id translate.SessionID, message string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.sessions[id]
	if s == nil {
		return ErrNoSession
	}
	if s.status != translate.SessionRunning || !alive(s.shimPID, s.shimStart) {
		return ErrNotRunning
	}
	x.seq++
	name := fmt.Sprintf("%s%020d", fNotify, x.seq)
	if err := writeFileAtomic(filepath.Join(s.dir, name), []byte(message), 0o600, false); err != nil {
		return spoolErr(err)
	}
	return syscall.Kill(s.shimPID, syscall.SIGUSR1)
}

func (x *executor) list() []translate.SessionInfo {
	x.mu.Lock()
	defer x.mu.Unlock()
	ss := make([]*session, 0, len(x.sessions))
	for _, s := range x.sessions {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].seq < ss[j].seq })
	out := make([]translate.SessionInfo, len(ss))
	for i, s := range ss {
		out[i] = translate.SessionInfo{ID: s.id, JobID: s.spec.JobID, Status: s.status, Nodes: s.nodes, Started: s.started}
		if f := s.final; f != nil && s.status.Terminal() {
			out[i].Ended, out[i].ExitCode, out[i].Signal = f.Ended, f.ExitCode, f.Signal
			out[i].Reason, out[i].Usage = translate.EndReason(f.Reason), f.usage()
			if !f.Started.IsZero() {
				out[i].Started = f.Started
			}
		}
	}
	return out
}

func (x *executor) updateTimeLimit(id translate.SessionID, d time.Duration) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.sessions[id]
	if s == nil {
		return ErrNoSession
	}
	if s.status.Terminal() {
		return ErrNotRunning
	}
	if err := writeFileAtomic(filepath.Join(s.dir, fTimeLimit), []byte(strconv.FormatInt(int64(d), 10)+"\n"), 0o600, true); err != nil {
		return err
	}
	s.spec.TimeLimit = d
	if s.shimPID != 0 && alive(s.shimPID, s.shimStart) {
		_ = syscall.Kill(s.shimPID, syscall.SIGHUP)
	}
	return nil
}

func (x *executor) updatePriority(id translate.SessionID, prio int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.sessions[id]
	if s == nil {
		return ErrNoSession
	}
	if s.status != translate.SessionPending {
		return errors.New("embedded engine: session is no longer pending")
	}
	if err := writeFileAtomic(filepath.Join(s.dir, fPriority), []byte(strconv.FormatInt(prio, 10)+"\n"), 0o600, true); err != nil {
		return err
	}
	s.spec.Priority = prio
	x.kickSched()
	return nil
}

func (x *executor) purge(id translate.SessionID) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.sessions[id]
	if s == nil {
		return ErrNoSession
	}
	if !s.status.Terminal() {
		return errors.New("embedded engine: session has not ended")
	}
	delete(x.sessions, id)
	return os.RemoveAll(s.dir)
}

func (x *executor) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.closed {
		x.closed = true
		close(x.done)
	}
}

// occupied sums the resources held per node (for Topology).
func (x *executor) occupied() map[string]translate.Slots {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := map[string]translate.Slots{}
	for _, s := range x.sessions {
		for _, a := range s.alloc {
			o := out[a.Name]
			o.CPU += float64(a.CPUs)
			o.Mem += a.MemMB << 20
			o.GPUs += float64(len(a.GPUs))
			out[a.Name] = o
		}
	}
	return out
}

// ---- helpers

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b, 0o600, true)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func readStatus(dir string) *statusRecord {
	var st statusRecord
	if readJSON(filepath.Join(dir, fStatus), &st) != nil || !st.Status.Terminal() {
		return nil
	}
	return &st
}

// placementEnv adds what only the placement knows. For a Slurm job (an
// environment with SLURM_JOB_ID) that is what slurmd adds to the batch
// script's environment: the node list and count, the batch node's name
// (also as HOSTNAME and SLURM_TOPOLOGY_ADDR), the CPUs, TMPDIR=/tmp when
// unset, and SLURM_TASK_PID (its value is set by the job's first process
// itself). Any other environment is kept exactly, but for variables of
// that list it already has, which are rewritten. Sessions holding GPUs on
// their batch node also get CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL and
// SLURM_JOB_GPUS (the indices of the fake or real devices).
func placementEnv(spec translate.SessionSpec, alloc []allocNode) []string {
	names := allocNames(alloc)
	list := hostlist.Compress(names)
	first := alloc[0]
	type kv struct{ k, v string }
	placed := []kv{
		{"SLURM_JOB_NODELIST", list},
		{"SLURM_NODELIST", list},
		{"SLURM_JOB_NUM_NODES", strconv.Itoa(len(alloc))},
		{"SLURM_NNODES", strconv.Itoa(len(alloc))},
		{"SLURM_JOB_CPUS_PER_NODE", cpusPerNode(alloc)},
		{"SLURM_CPUS_ON_NODE", strconv.Itoa(int(first.CPUs))},
		{"SLURMD_NODENAME", first.Name},
		{"SLURM_TOPOLOGY_ADDR", first.Name},
		{"SLURM_TOPOLOGY_ADDR_PATTERN", "node"},
		{"HOSTNAME", first.Name},
		{"SLURM_TASK_PID", "0"},
	}
	slurmJob := false
	have := map[string]bool{}
	for _, e := range spec.Env {
		k, _, _ := strings.Cut(e, "=")
		have[k] = true
		slurmJob = slurmJob || k == "SLURM_JOB_ID"
	}
	set := map[string]string{}
	var order []string
	add := func(k, v string) {
		if _, ok := set[k]; !ok {
			order = append(order, k)
		}
		set[k] = v
	}
	for _, p := range placed {
		if slurmJob || have[p.k] {
			if p.k == "SLURM_TASK_PID" && have[p.k] {
				continue // the first process puts its pid there
			}
			add(p.k, p.v)
		}
	}
	if slurmJob && !have["TMPDIR"] {
		add("TMPDIR", "/tmp")
	}
	if n := min(int(spec.GPUsPerNode), len(first.GPUs)); n > 0 {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = strconv.Itoa(first.GPUs[i])
		}
		v := strings.Join(ids, ",")
		add("CUDA_VISIBLE_DEVICES", v)
		add("GPU_DEVICE_ORDINAL", v)
		add("SLURM_JOB_GPUS", v)
	}
	out := make([]string, 0, len(spec.Env)+len(set))
	for _, e := range spec.Env {
		k, _, _ := strings.Cut(e, "=")
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
			delete(set, k)
			continue
		}
		out = append(out, e)
	}
	for _, k := range order {
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// cpusPerNode formats CPU counts as Slurm does: "2(x3),1".
func cpusPerNode(alloc []allocNode) string {
	var b strings.Builder
	for i := 0; i < len(alloc); {
		j := i
		for j < len(alloc) && alloc[j].CPUs == alloc[i].CPUs {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(alloc[i].CPUs)))
		if j-i > 1 {
			fmt.Fprintf(&b, "(x%d)", j-i)
		}
		i = j
	}
	return b.String()
}

// ---- translate.Executor on Engine

var _ translate.Executor = (*Engine)(nil)

func (e *Engine) exec() (*executor, error) {
	if e.x == nil {
		if e.xErr != nil {
			return nil, e.xErr
		}
		return nil, ErrNoSpool
	}
	return e.x, nil
}

// CreateSession records the session durably (it survives a crash from
// the moment this returns) and queues it; the scheduler starts it.
func (e *Engine) CreateSession(ctx context.Context, spec translate.SessionSpec) (translate.SessionID, error) {
	x, err := e.exec()
	if err != nil {
		return "", err
	}
	return x.create(spec)
}

// DestroySession cancels a pending session (CANCELLED) or terminates a
// placed one: graceful = the job gets "CANCELLED AT" on stderr, SIGCONT
// and SIGTERM, and SIGKILL after KillWait, as scancel does; forced =
// SIGKILL at once. It reports TERMINATING, then TERMINATED with reason
// "user-requested" when the processes are gone.
func (e *Engine) DestroySession(ctx context.Context, id translate.SessionID, forced bool) error {
	x, err := e.exec()
	if err != nil {
		return err
	}
	return x.destroy(id, forced)
}

// SignalSession delivers sig to every process of the running session
// (its PID namespace, the shim excepted) or to the batch shell only.
func (e *Engine) SignalSession(ctx context.Context, id translate.SessionID, sig int, batchOnly bool) error {
	x, err := e.exec()
	if err != nil {
		return err
	}
	return x.signal(id, sig, batchOnly)
}

// Sessions lists every session the engine knows, in creation order.
func (e *Engine) Sessions(ctx context.Context) ([]translate.SessionInfo, error) {
	x, err := e.exec()
	if err != nil {
		return nil, err
	}
	return x.list(), nil
}

// Events delivers status changes in order. After New, it first replays
// the current state of every session found in the spool.
func (e *Engine) Events() <-chan translate.SessionEvent {
	x, err := e.exec()
	if err != nil {
		return nil
	}
	return x.out
}

// NotifySession writes message into a running session's error output,
// as slurmstepd does for scontrol notify ("slurmstepd-NODE: error: MSG").
func (e *Engine) NotifySession(ctx context.Context, id translate.SessionID, message string) error {
	x, err := e.exec()
	if err != nil {
		return err
	}
	return x.notify(id, message)
}

// UpdateTimeLimit changes the time limit of a pending or running session
// (counted from the script's start); a running shim applies it at once.
func (e *Engine) UpdateTimeLimit(ctx context.Context, id translate.SessionID, limit time.Duration) error {
	x, err := e.exec()
	if err != nil {
		return err
	}
	return x.updateTimeLimit(id, limit)
}

// UpdatePriority changes the priority of a pending session.
func (e *Engine) UpdatePriority(ctx context.Context, id translate.SessionID, prio int64) error {
	x, err := e.exec()
	if err != nil {
		return err
	}
	return x.updatePriority(id, prio)
}

// Purge forgets an ended session and deletes its spool directory (call it
// once the session's end is recorded elsewhere; otherwise ended sessions
// are purged after the retention, WithRetention).
func (e *Engine) Purge(ctx context.Context, id translate.SessionID) error {
	x, err := e.exec()
	if err != nil {
		return err
	}
	return x.purge(id)
}

// Close stops scheduling and closes Events. Running jobs are left to
// their shims; a new engine on the same spool re-attaches them.
func (e *Engine) Close() error {
	if e.x != nil {
		e.x.close()
	}
	return nil
}

// childPIDs lists the children of process pid (its main thread's).
func childPIDs(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}
