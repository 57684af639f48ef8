// Package node is the frontend's slurmd: the stand-in of every node that
// srun talks to. It checks a launch (the job credential the controller
// signed, the user, the node), runs the step's tasks in the job's
// session through the engine, and speaks slurmstepd's side of srun's
// protocols: the task I/O stream, the launch response and the task exits
// to srun's ports.
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/bpf"
	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// Controller is what a node asks the controller.
type Controller interface {
	// StepOf returns a live step's layout: its job's session, its
	// nodes, their global task ids and CPUs.
	StepOf(jobID, stepID uint32) (l translate.StepLayout, ok bool)
	// StepNodeDone: every task of the step on node has ended; u is
	// what they used, where the engine measured it.
	StepNodeDone(jobID, stepID uint32, node string, rc uint32, u translate.TaskUsage)
	// VerifyCred checks a job credential's signature.
	VerifyCred(body []byte, sig string) bool
}

// Caller sends a message to one of srun's ports (the edge signs it).
type Caller interface {
	Call(ctx context.Context, to netip.AddrPort, version, msgType uint16, body []byte, forUID uint32, reply bool) (uint32, error)
}

// Request is one message to a node.
type Request struct {
	Version, MsgType uint16
	UID, GID         uint32
	Peer             netip.Addr // srun's host: its ports are there
	Body             []byte
}

// Reply is the node's answer (RESPONSE_SLURM_RC with Body's code).
type Reply struct {
	MsgType uint16
	Body    []byte
}

func rc(code uint32) Reply {
	return Reply{MsgType: codec.RESPONSE_SLURM_RC, Body: []byte{byte(code >> 24), byte(code >> 16), byte(code >> 8), byte(code)}}
}

// slurmd's error codes (slurm_errno.h).
const (
	esInvalidJobCredential = 4004 // ESLURMD_INVALID_JOB_CREDENTIAL
	esCredentialExpired    = 4007 // ESLURMD_CREDENTIAL_EXPIRED
	esExecveFailed         = 4020 // ESLURMD_EXECVE_FAILED
	// sigOOM is slurmstepd's SIG_OOM, the dummy signal of a task
	// status that says the step met the OOM killer.
	sigOOM = 253
)

// credTTL: a credential older than this is refused (slurmd's cred_expire).
const credTTL = 120 * time.Second

// Service is every node's stand-in.
type Service struct {
	Ctl      Controller
	Exec     translate.StepExecutor
	Group    translate.StepGroupExecutor // preferred to Exec when set
	Call     Caller
	Log      *log.Logger
	SlurmUID uint32

	// Meter counts each step's I/O connection in the kernel (eBPF); nil,
	// or a connection it cannot track, is counted by the relay itself.
	Meter bpf.FlowMeter

	ioMu    sync.Mutex
	ioLive  map[stepKey]*liveIO
	ioTotal map[string]*bpf.IO // by counter ("ebpf", "userspace"): ended steps

	mu    sync.Mutex
	steps map[stepKey]*nodeStep
	used  map[string]time.Time // credential signature + node: launched (replays)
}

type stepKey struct {
	job, step uint32
	node      string
}

// nodeStep is a step's tasks on one node.
type nodeStep struct {
	tasks []*task
	// Where slurmstepd's own messages about the step go: srun's I/O
	// stream, as the stderr of the node's first task (when it is
	// relayed), on the step's first node only.
	out      *ioWriter
	idx      int
	first    uint32
	errRelay bool
	// lost: srun was told the node failed (AbandonStep); it hears no
	// more of the step from here, as of a node that is gone.
	lost bool
}

type task struct {
	gtid, ltid uint32
	proc       translate.TaskProc
}

func (s *Service) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log.Printf(format, args...)
	}
}

// Handle answers a message to node (the node whose listener got it).
func (s *Service) Handle(node string, req *Request) Reply {
	switch req.MsgType {
	case codec.REQUEST_LAUNCH_TASKS:
		return s.launch(node, req)
	case codec.REQUEST_SIGNAL_TASKS, codec.REQUEST_TERMINATE_TASKS:
		var m codec.SignalTasksRequest
		r := codec.NewReader(req.Body)
		if err := m.Decode(&r, req.Version); err != nil {
			return rc(codec.CodeOf(err))
		}
		sig := int(m.Signal)
		if req.MsgType == codec.REQUEST_TERMINATE_TASKS || sig == 0 {
			sig = 9
		}
		if !s.signal(stepKey{m.StepID.JobID, m.StepID.StepID, node}, sig, req.UID) {
			return rc(codec.ESLURM_INVALID_JOB_ID)
		}
		return rc(codec.SLURM_SUCCESS)
	case codec.REQUEST_PING:
		return rc(codec.SLURM_SUCCESS)
	}
	return rc(codec.ESLURM_NOT_SUPPORTED)
}

// AbandonStep: srun has been told the step's nodes failed (the server
// stops); nothing more of the step is sent to it.
func (s *Service) AbandonStep(jobID, stepID uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, ns := range s.steps {
		if k.job == jobID && k.step == stepID {
			ns.lost = true
		}
	}
}

// SignalStep sends sig to every task of a step, on every node.
func (s *Service) SignalStep(jobID, stepID uint32, sig int) bool {
	s.mu.Lock()
	var found []*nodeStep
	for k, ns := range s.steps {
		if k.job == jobID && k.step == stepID {
			found = append(found, ns)
		}
	}
	s.mu.Unlock()
	for _, ns := range found {
		for _, t := range ns.tasks {
			if t.proc != nil {
				_ = t.proc.Signal(sig)
			}
		}
	}
	return len(found) > 0
}

// TimeoutStep ends a step past its time limit as slurmd does (its
// _rpc_timelimit): slurmstepd's "*** STEP J.S ON NODE CANCELLED AT TIME
// DUE TO TIME LIMIT ***" to srun from the step's first node, SIGCONT and
// SIGTERM to every task, SIGKILL after killWait (at least 5 s).
func (s *Service) TimeoutStep(jobID, stepID uint32, killWait time.Duration) bool {
	s.mu.Lock()
	var found []*nodeStep
	var names []string
	for k, ns := range s.steps {
		if k.job == jobID && k.step == stepID {
			found, names = append(found, ns), append(names, k.node)
		}
	}
	s.mu.Unlock()
	now := time.Now().Format("2006-01-02T15:04:05")
	for i, ns := range found {
		s.mu.Lock()
		out, idx, first, errRelay := ns.out, ns.idx, ns.first, ns.errRelay
		s.mu.Unlock()
		if out != nil && idx == 0 && errRelay {
			msg := fmt.Sprintf("slurmstepd: error: *** STEP %d.%d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***\n", jobID, stepID, names[i], now)
			out.frame(codec.IOStderr, uint16(first), 0, []byte(msg))
		}
		for _, sig := range []int{int(syscall.SIGCONT), int(syscall.SIGTERM)} {
			for _, t := range ns.tasks {
				if t.proc != nil {
					_ = t.proc.Signal(sig)
				}
			}
		}
	}
	if len(found) > 0 {
		go func() {
			time.Sleep(max(killWait, 5*time.Second))
			s.SignalStep(jobID, stepID, int(syscall.SIGKILL))
		}()
	}
	return len(found) > 0
}

func (s *Service) signal(k stepKey, sig int, uid uint32) bool {
	if k.node == "" {
		// The shared node listener: the step wherever it runs.
		return s.SignalStep(k.job, k.step, sig)
	}
	s.mu.Lock()
	ns := s.steps[k]
	s.mu.Unlock()
	if ns == nil {
		return false
	}
	for _, t := range ns.tasks {
		if t.proc != nil {
			_ = t.proc.Signal(sig)
		}
	}
	return true
}

// launch handles REQUEST_LAUNCH_TASKS: checked now and answered; the
// tasks are started, their I/O relayed and their exits reported after.
func (s *Service) launch(node string, req *Request) Reply {
	var m codec.LaunchTasksRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		s.logf("node %s: undecodable launch from uid %d at %v: %v", node, req.UID, req.Peer, err)
		return rc(codec.CodeOf(err))
	}
	job, stepID := m.StepID.JobID, m.StepID.StepID
	refuse := func(code uint32, format string, args ...any) Reply {
		s.logf("node %s: launch of step %d.%d from uid %d at %v refused: %s", node, job, stepID, req.UID, req.Peer, fmt.Sprintf(format, args...))
		return rc(code)
	}
	cr := &m.Cred
	nodes := expand(m.CompleteNodelist)
	if node == "" {
		// The listener every node shares (an engine whose nodes come
		// and go: Backend.AI's agents): a one-node step says its node.
		if len(nodes) != 1 {
			return refuse(codec.ESLURM_NOT_SUPPORTED, "a step over %d nodes on the shared node listener", len(nodes))
		}
		node = nodes[0]
	}
	idx := slices.Index(nodes, node)
	switch {
	case idx < 0:
		return refuse(codec.ESLURM_INVALID_NODE_NAME, "node not in the step's node list %q", m.CompleteNodelist)
	case !s.Ctl.VerifyCred(m.CredBody, cr.Signature):
		return refuse(esInvalidJobCredential, "Security violation: the job credential's signature is not this server's")
	case time.Since(time.Unix(cr.CTime, 0)) > credTTL:
		return refuse(esCredentialExpired, "job credential expired")
	case cr.StepID.JobID != job || cr.StepID.StepID != stepID:
		return refuse(esInvalidJobCredential, "credential for step %d.%d", cr.StepID.JobID, cr.StepID.StepID)
	case req.UID != cr.UID && req.UID != 0 && req.UID != s.SlurmUID:
		return refuse(codec.ESLURM_USER_ID_MISSING, "Security violation: uid %d launching for uid %d", req.UID, cr.UID)
	case slices.Index(expand(cr.StepHostlist), node) < 0:
		return refuse(esInvalidJobCredential, "node not in the credential's step hosts %q", cr.StepHostlist)
	case idx >= len(m.GlobalTaskIDs) || len(m.IOPorts) == 0 || len(m.RespPorts) == 0:
		return refuse(codec.EINVAL, "no tasks, I/O or response port for node index %d", idx)
	}
	// srun --multi-prog: each task's command line from the file's
	// contents, which srun sends as argv[1].
	var argvs [][]string
	if m.Flags&codec.LaunchMultiProg != 0 {
		if len(m.Argv) < 2 {
			return refuse(codec.EINVAL, "--multi-prog without its configuration")
		}
		for _, g := range m.GlobalTaskIDs[idx] {
			argv, err := multiProgArgv(m.Argv[1], g, m.Argv[2:])
			if err != nil {
				return refuse(esExecveFailed, "--multi-prog %s: %v", m.Argv[0], err)
			}
			argvs = append(argvs, argv)
		}
	}
	replay := cr.Signature + "\x00" + node
	s.mu.Lock()
	if s.steps == nil {
		s.steps, s.used = map[stepKey]*nodeStep{}, map[string]time.Time{}
	}
	for k, at := range s.used {
		if time.Since(at) > 2*credTTL {
			delete(s.used, k)
		}
	}
	if _, seen := s.used[replay]; seen {
		s.mu.Unlock()
		return refuse(esInvalidJobCredential, "Security violation: replayed job credential")
	}
	s.used[replay] = time.Now()
	s.mu.Unlock()
	layout, ok := s.Ctl.StepOf(job, stepID)
	sid, stepNodes, tids := layout.Session, layout.Nodes, layout.TIDs
	if !ok {
		return refuse(codec.ESLURM_INVALID_JOB_ID, "no such live step")
	}
	if slices.Index(stepNodes, node) != idx || idx >= len(tids) || !slices.Equal(tids[idx], m.GlobalTaskIDs[idx]) {
		return refuse(esInvalidJobCredential, "tasks %v on node %s are not the step's layout", m.GlobalTaskIDs[idx], node)
	}
	s.mu.Lock()
	key := stepKey{job, stepID, node}
	ns := &nodeStep{}
	s.steps[key] = ns
	s.mu.Unlock()
	cpus := uint32(0)
	if idx < len(layout.CPUs) {
		cpus = layout.CPUs[idx]
	}
	go s.run(key, ns, sid, &m, idx, argvs, cpus, req)
	return rc(codec.SLURM_SUCCESS)
}

// run starts the node's tasks of the step and relays them to srun.
// argvs: each task's command line (--multi-prog), else nil: m.Argv;
// cpus: the step's CPUs on this node.
func (s *Service) run(key stepKey, ns *nodeStep, sid translate.SessionID, m *codec.LaunchTasksRequest, idx int, argvs [][]string, cpus uint32, req *Request) {
	defer func() {
		s.mu.Lock()
		delete(s.steps, key)
		s.mu.Unlock()
	}()
	v := req.Version
	uid := m.Cred.UID
	gtids := m.GlobalTaskIDs[idx]
	ioPort := m.IOPorts[idx%len(m.IOPorts)]
	respTo := netip.AddrPortFrom(req.Peer, m.RespPorts[idx%len(m.RespPorts)])
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", netip.AddrPortFrom(req.Peer, ioPort).String())
	cancel()
	if err != nil {
		s.logf("node %s: step %d.%d: srun's I/O port %v: %v", key.node, key.job, key.step, ioPort, err)
		s.launchFailed(key, m, gtids, respTo, v, uid, esExecveFailed)
		return
	}
	cc := s.ioStart(key, conn)
	// At the step's end a goroutine takes the connection over (finish);
	// before that, a return closes it here.
	var finish func()
	defer func() {
		if finish != nil {
			go finish()
			return
		}
		s.ioEnd(key)
		conn.Close()
	}()
	out := &ioWriter{c: cc}
	n := uint32(len(gtids))
	usePTY := m.Flags&codec.LaunchPTY != 0
	s.mu.Lock()
	ns.out, ns.idx, ns.errRelay = out, idx, !usePTY && !isFile(m.EFName)
	if len(gtids) > 0 {
		ns.first = gtids[0]
	}
	s.mu.Unlock()
	init := codec.IOInitMsg{Version: v, NodeID: uint32(idx), StdoutObjs: n, StderrObjs: n, IOKey: []byte(m.Cred.Signature)}
	// --output/--error FILE: those streams go to files, not to srun.
	if isFile(m.OFName) {
		init.StdoutObjs = 0
	}
	if isFile(m.EFName) {
		init.StderrObjs = 0
	}
	if usePTY {
		// Task 0 alone has the terminal, stdout and stderr merged;
		// the others have /dev/null (as slurmstepd).
		init.StdoutObjs, init.StderrObjs = 0, 0
		if slices.Index(gtids, 0) >= 0 {
			init.StdoutObjs = 1
		}
	}
	if _, err := cc.Write(codec.AppendIOInitMsg(nil, &init)); err != nil {
		s.logf("node %s: step %d.%d: I/O init: %v", key.node, key.job, key.step, err)
		s.launchFailed(key, m, gtids, respTo, v, uid, esExecveFailed)
		return
	}
	// Start the tasks.
	type started struct {
		t                  *task
		stdin              *os.File
		pty                *os.File // the terminal's master (srun --pty, task 0)
		outDone, errDone   chan struct{}
		relayOut, relayErr bool // its stdout, stderr go to srun (EOF frames at its end)
	}
	type prepared struct {
		st                 *started
		spec               *translate.StepTask
		closeAfter         []*os.File
		relayOut, relayErr *os.File
		env                []string
	}
	var preps []*prepared
	var all []*started
	var pids []uint32
	failed := uint32(0)
	for l, g := range gtids {
		t := &task{gtid: g, ltid: uint32(l)}
		env := taskEnv(m, key.node, idx, g, uint32(l), gtids, req.Peer, cpus)
		st := &started{t: t, outDone: make(chan struct{}), errDone: make(chan struct{})}
		argv := m.Argv
		if argvs != nil {
			argv = argvs[l]
		}
		spec := &translate.StepTask{Node: key.node, Argv: argv, Env: env, Cwd: m.Cwd, UID: m.Cred.UID, GID: m.Cred.GID, Groups: m.Cred.GIDs}
		pr := &prepared{st: st, spec: spec, env: env}
		preps = append(preps, pr)
		switch {
		case usePTY && g == 0:
			master, tty, err := openPTY(env)
			if err != nil {
				s.logf("node %s: step %d.%d: pty: %v", key.node, key.job, key.step, err)
				failed = esExecveFailed
			} else {
				spec.Stdin, spec.Stdout, spec.Stderr, spec.PTY = tty, tty, tty, true
				pr.closeAfter = append(pr.closeAfter, tty)
				pr.relayOut, st.stdin, st.pty = master, master, master
				close(st.errDone)
			}
		case usePTY:
			close(st.outDone)
			close(st.errDone)
		default:
			names := fnameVars{job: key.job, step: key.step, task: g, node: uint32(idx), nodeName: key.node, user: m.Cred.UserName, env: m.Env}
			if isFile(m.IFName) {
				spec.InPath = names.expand(m.IFName)
			} else {
				inR, inW, _ := os.Pipe()
				spec.Stdin, st.stdin = inR, inW
				pr.closeAfter = append(pr.closeAfter, inR)
			}
			if isFile(m.OFName) {
				spec.OutPath = names.expand(m.OFName)
				close(st.outDone)
			} else {
				outR, outW, _ := os.Pipe()
				spec.Stdout, pr.relayOut = outW, outR
				pr.closeAfter = append(pr.closeAfter, outW)
			}
			if isFile(m.EFName) {
				spec.ErrPath = names.expand(m.EFName)
				close(st.errDone)
			} else {
				errR, errW, _ := os.Pipe()
				spec.Stderr, pr.relayErr = errW, errR
				pr.closeAfter = append(pr.closeAfter, errW)
			}
			spec.AppendOut = m.OpenMode == 1 // OPEN_MODE_APPEND
		}
		if failed != 0 {
			break
		}
	}
	// Start them: all at once where the engine can, else one by one.
	var procs []translate.TaskProc
	if failed == 0 {
		if s.Group != nil {
			specs := make([]*translate.StepTask, len(preps))
			for i, pr := range preps {
				specs[i] = pr.spec
			}
			ps, err := s.Group.ExecTasks(context.Background(), sid, specs)
			if err != nil {
				s.logf("node %s: step %d.%d: %v", key.node, key.job, key.step, err)
				failed = launchCode(err)
			}
			procs = ps
		} else {
			for i, pr := range preps {
				p, err := s.Exec.ExecTask(context.Background(), sid, pr.spec)
				if err != nil {
					s.logf("node %s: step %d.%d task %d: %v", key.node, key.job, key.step, gtids[i], err)
					failed = launchCode(err)
					break
				}
				procs = append(procs, p)
			}
		}
	}
	for i, pr := range preps {
		for _, f := range pr.closeAfter {
			f.Close()
		}
		if i >= len(procs) {
			for _, f := range []*os.File{pr.st.stdin, pr.relayOut, pr.relayErr} {
				if f != nil {
					f.Close()
				}
			}
			continue
		}
		st, p := pr.st, procs[i]
		st.t.proc = p
		if pr.relayOut != nil {
			st.relayOut = true
			go out.relay(pr.relayOut, codec.IOStdout, uint16(st.t.gtid), uint16(st.t.ltid), st.outDone)
		}
		if pr.relayErr != nil {
			st.relayErr = true
			go out.relay(pr.relayErr, codec.IOStderr, uint16(st.t.gtid), uint16(st.t.ltid), st.errDone)
		}
		if st.pty != nil {
			go s.windowSizes(req.Peer, pr.env, st.pty)
		}
		all = append(all, st)
		pids = append(pids, uint32(max(p.PID(), 0)))
	}
	s.mu.Lock()
	for _, st := range all {
		ns.tasks = append(ns.tasks, st.t)
	}
	s.mu.Unlock()
	if failed != 0 {
		for _, st := range all {
			_ = st.t.proc.Signal(9)
		}
		s.launchFailed(key, m, gtids, respTo, v, uid, failed)
		return
	}
	resp := codec.LaunchTasksResponse{StepID: m.StepID, ReturnCode: 0, NodeName: key.node, LocalPIDs: pids, TaskIDs: gtids}
	var w codec.Writer
	resp.Encode(&w, v)
	s.send(respTo, v, codec.RESPONSE_LAUNCH_TASKS, w.B, uid, key)
	// srun's stdin and connection tests.
	stdins := make(map[uint32]*os.File, len(all))
	for _, st := range all {
		if st.stdin != nil {
			stdins[st.t.gtid] = st.stdin
		}
	}
	go out.readStdin(cc, stdins)
	// Each task's exit, once its output is through.
	var maxRC uint32
	var usage translate.TaskUsage // the node's tasks', as jobacct_gather sums them
	var wg sync.WaitGroup
	var mu sync.Mutex
	var oomOnce sync.Once
	var oom atomic.Bool
	for _, st := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _ := st.t.proc.Wait()
			if ur, ok := st.t.proc.(translate.UsageReporter); ok {
				u := ur.Usage()
				u.MaxRSSTask, u.MaxRSSNode = st.t.gtid, uint32(idx)
				mu.Lock()
				usage.Add(u)
				mu.Unlock()
			}
			<-st.outDone
			<-st.errDone
			g, l := uint16(st.t.gtid), uint16(st.t.ltid)
			if or, ok := st.t.proc.(translate.OOMReporter); ok {
				if n := or.OOMKills(); n > 0 {
					// As slurmstepd: the step's OOM kills on its
					// stderr, once, and SIG_OOM as every later
					// exit's status (srun: "task N: Out Of
					// Memory", exit code 1).
					oomOnce.Do(func() {
						plural := ""
						if n > 1 {
							plural = "s"
						}
						msg := fmt.Sprintf("slurmstepd-%s: error: Detected %d oom_kill event%s in StepId=%d.%d. Some of the step tasks have been OOM Killed.\n", key.node, n, plural, key.job, key.step)
						if st.relayErr {
							out.frame(codec.IOStderr, g, l, []byte(msg))
						} else {
							s.logf("node %s: %s", key.node, strings.TrimSpace(msg))
						}
					})
					oom.Store(true)
				}
			}
			if oom.Load() {
				status = sigOOM
			}
			if st.relayOut {
				out.frame(codec.IOStdout, g, l, nil)
			}
			if st.relayErr {
				out.frame(codec.IOStderr, g, l, nil)
			}
			mu.Lock()
			maxRC = max(maxRC, status)
			mu.Unlock()
			s.mu.Lock()
			lost := ns.lost
			s.mu.Unlock()
			if lost {
				return
			}
			exit := codec.TaskExitMsg{ReturnCode: status, TaskIDs: []uint32{st.t.gtid}, StepID: m.StepID}
			var w codec.Writer
			exit.Encode(&w, v)
			s.send(respTo, v, codec.MESSAGE_TASK_EXIT, w.B, uid, key)
		}()
	}
	wg.Wait()
	out.mu.Lock()
	out.closed = true
	out.mu.Unlock()
	s.Ctl.StepNodeDone(key.job, key.step, key.node, maxRC, usage)
	// The kernel's count waits for the last output to be sent and
	// acknowledged (srun's delayed ACK can take milliseconds): off the
	// step's path, with the connection open until then.
	finish = func() {
		fig := s.ioEnd(key)
		conn.Close()
		relay := ""
		if fig.Counter != "userspace" {
			relay = fmt.Sprintf("; the relay's: %d and %d", fig.RelayOut, fig.RelayIn)
		}
		s.logf("node %s: step %d.%d ended: %d tasks, status %#x, I/O %d bytes to srun, %d bytes from it (%s%s)", key.node, key.job, key.step, len(all), maxRC, fig.Out, fig.In, fig.Counter, relay)
	}
}

// launchCode is the code srun is told for a launch the engine refused:
// what the engine cannot do at all says so, anything else is slurmd's
// execve failure.
func launchCode(err error) uint32 {
	if errors.Is(err, translate.ErrNotSupported) {
		return codec.ESLURM_NOT_SUPPORTED
	}
	return esExecveFailed
}

// launchFailed tells srun that the node's tasks could not start.
func (s *Service) launchFailed(key stepKey, m *codec.LaunchTasksRequest, gtids []uint32, to netip.AddrPort, v uint16, uid, code uint32) {
	resp := codec.LaunchTasksResponse{StepID: m.StepID, ReturnCode: code, NodeName: key.node,
		LocalPIDs: make([]uint32, len(gtids)), TaskIDs: gtids}
	var w codec.Writer
	resp.Encode(&w, v)
	s.send(to, v, codec.RESPONSE_LAUNCH_TASKS, w.B, uid, key)
	s.Ctl.StepNodeDone(key.job, key.step, key.node, code, translate.TaskUsage{})
}

func (s *Service) send(to netip.AddrPort, v, msgType uint16, body []byte, uid uint32, key stepKey) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := s.Call.Call(ctx, to, v, msgType, body, uid, true); err != nil {
		s.logf("node %s: step %d.%d: %s to srun at %v: %v", key.node, key.job, key.step, codec.MsgTypeName(msgType), to, err)
	}
}

// taskEnv is the task's environment: srun's, plus what slurmd and
// slurmstepd set for each task.
func taskEnv(m *codec.LaunchTasksRequest, node string, nodeID int, gtid, ltid uint32, gtids []uint32, srunHost netip.Addr, cpus uint32) []string {
	if cpus == 0 {
		cpus = uint32(max(len(gtids), 1))
	}
	ids := make([]string, len(gtids))
	for i, g := range gtids {
		ids[i] = strconv.FormatUint(uint64(g), 10)
	}
	set := map[string]string{
		"SLURM_PROCID":                strconv.FormatUint(uint64(gtid), 10),
		"SLURM_LOCALID":               strconv.FormatUint(uint64(ltid), 10),
		"SLURM_NODEID":                strconv.Itoa(nodeID),
		"SLURM_GTIDS":                 strings.Join(ids, ","),
		"SLURMD_NODENAME":             node,
		"SLURM_TOPOLOGY_ADDR":         node,
		"SLURM_TOPOLOGY_ADDR_PATTERN": "node",
		"SLURM_SRUN_COMM_HOST":        srunHost.String(),
		"SLURM_LAUNCH_NODE_IPADDR":    srunHost.String(),
		"SLURM_JOB_UID":               strconv.FormatUint(uint64(m.Cred.UID), 10),
		"SLURM_JOB_GID":               strconv.FormatUint(uint64(m.Cred.GID), 10),
		"SLURM_JOB_USER":              m.Cred.UserName,
		"SLURM_CPUS_ON_NODE":          strconv.FormatUint(uint64(cpus), 10), // the step's, as slurmstepd sets it
		// srun sends these too; set here, they also let a restarted
		// server find a lost step's tasks (ctld's lost steps).
		"SLURM_JOB_ID":  strconv.FormatUint(uint64(m.StepID.JobID), 10),
		"SLURM_JOBID":   strconv.FormatUint(uint64(m.StepID.JobID), 10),
		"SLURM_STEP_ID": strconv.FormatUint(uint64(m.StepID.StepID), 10),
		"SLURM_STEPID":  strconv.FormatUint(uint64(m.StepID.StepID), 10),
	}
	out := make([]string, 0, len(m.Env)+len(set))
	for _, kv := range m.Env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := set[k]; !ours {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// ioWriter writes I/O frames to srun, one at a time.
type ioWriter struct {
	mu     sync.Mutex
	c      net.Conn
	closed bool
	broken bool
}

func (w *ioWriter) frame(typ, gtid, ltid uint16, p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return
	}
	b := codec.AppendIOHeader(make([]byte, 0, codec.IOHeaderLen+len(p)), codec.IOHeader{Type: typ, GTaskID: gtid, LTaskID: ltid, Length: uint32(len(p))})
	b = append(b, p...)
	if _, err := w.c.Write(b); err != nil {
		w.broken = true
		return
	}
}

// relay sends what r gives as frames of typ (at most IOMaxPayload each),
// then the stream's EOF frame.
func (w *ioWriter) relay(r *os.File, typ uint16, gtid, ltid uint16, done chan struct{}) {
	defer close(done)
	defer r.Close()
	buf := make([]byte, codec.IOMaxPayload)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.frame(typ, gtid, ltid, buf[:n])
		}
		if err != nil {
			break
		}
	}
	// The stream's EOF frame is the task's to send (endStreams), after
	// what the node says of the task's end.
}

// readStdin routes srun's stdin frames to the tasks and answers its
// connection tests, until srun closes the stream.
func (w *ioWriter) readStdin(c net.Conn, stdins map[uint32]*os.File) {
	defer func() {
		for _, f := range stdins {
			f.Close()
		}
	}()
	hdr := make([]byte, codec.IOHeaderLen)
	for {
		if _, err := io.ReadFull(c, hdr); err != nil {
			return
		}
		h, err := codec.DecodeIOHeader(hdr)
		if err != nil || h.Length > 1<<20 {
			return
		}
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(c, p); err != nil {
			return
		}
		switch h.Type {
		case codec.IOConnectionTest:
			w.frame(codec.IOConnectionTest, 0, 0, nil)
		case codec.IOAllStdin:
			for g, f := range stdins {
				if h.Length == 0 {
					f.Close()
					delete(stdins, g)
				} else if _, err := f.Write(p); err != nil && !errors.Is(err, os.ErrClosed) {
					f.Close()
					delete(stdins, g)
				}
			}
		case codec.IOStdin:
			if f := stdins[uint32(h.GTaskID)]; f != nil {
				if h.Length == 0 {
					f.Close()
					delete(stdins, uint32(h.GTaskID))
				} else {
					_, _ = f.Write(p)
				}
			}
		}
	}
}

func expand(expr string) []string {
	if expr == "" {
		return nil
	}
	names, err := hostlistExpand(expr)
	if err != nil {
		return nil
	}
	return names
}

func hostlistExpand(expr string) ([]string, error) { return hostlist.Expand(expr) }

// isFile: an --output/--error/--input name the node opens ("" and a bare
// task number, which srun handles itself, are not).
func isFile(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return true
		}
	}
	return false
}

// fnameVars expand srun's file name patterns (%j %J %s %t %n %N %u %x %A
// %a, with an optional zero-padding width) as slurmstepd does.
type fnameVars struct {
	job, step, task, node uint32
	nodeName, user        string
	env                   []string
}

func (v fnameVars) expand(pat string) string {
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		if pat[i] != '%' || i+1 >= len(pat) {
			b.WriteByte(pat[i])
			continue
		}
		j := i + 1
		width := 0
		for j < len(pat) && pat[j] >= '0' && pat[j] <= '9' {
			width = width*10 + int(pat[j]-'0')
			j++
		}
		if j >= len(pat) {
			b.WriteString(pat[i:])
			break
		}
		num := func(n uint32) string {
			s := strconv.FormatUint(uint64(n), 10)
			for len(s) < min(width, 10) {
				s = "0" + s
			}
			return s
		}
		switch pat[j] {
		case 'j':
			b.WriteString(num(v.job))
		case 'J':
			b.WriteString(num(v.job) + "." + strconv.FormatUint(uint64(v.step), 10))
		case 's':
			b.WriteString(num(v.step))
		case 't':
			b.WriteString(num(v.task))
		case 'n':
			b.WriteString(num(v.node))
		case 'N':
			b.WriteString(v.nodeName)
		case 'u':
			b.WriteString(v.user)
		case 'x':
			b.WriteString(envOf(v.env, "SLURM_JOB_NAME"))
		case 'A':
			b.WriteString(envOf(v.env, "SLURM_ARRAY_JOB_ID"))
		case 'a':
			b.WriteString(envOf(v.env, "SLURM_ARRAY_TASK_ID"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteString(pat[i : j+1])
		}
		i = j
	}
	return b.String()
}
