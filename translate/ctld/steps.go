package ctld

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// Job steps (srun). The controller gives a step its id, its layout over
// the job's nodes and a job credential it signs; srun hands the
// credential to the node stand-ins (translate/node), which check it and
// run the tasks in the job's session. Steps live in memory: they are as
// long-lived as the srun that made them, and a restart of the server
// loses them as it loses the task I/O they need.

// step is one live job step.
type step struct {
	id         uint32
	name       string
	nodes      []string
	nodeList   string
	tasks      uint32
	tids       [][]uint32
	cpus       uint32
	start      int64
	timeLimit  uint32
	srun       netip.AddrPort // srun's step port (SRUN_* notices)
	srunPID    uint32
	srunHost   string
	version    uint16
	submitLine string
	left       map[string]bool     // nodes whose tasks still run
	rc         uint32              // the largest raw status of its nodes so far
	usage      translate.TaskUsage // its ended nodes' tasks' use
	timedOut   bool                // ended at its own time limit
	killedBy   uint32              // uid+1 of who cancelled it (0: nobody)
	// cpusOn: the job's CPUs this step has on each of its nodes
	// (SLURM_CPUS_ON_NODE); unless it overlaps, it holds them: other
	// steps may not use them meanwhile.
	cpusOn  map[string]uint32
	overlap bool
}

// jobSteps are the steps of one job.
type jobSteps struct {
	next uint32 // the next step id
	live map[uint32]*step
	// waiting: sruns whose step could not have its CPUs yet
	// (ESLURM_NODES_BUSY); each waits for a connection to its port,
	// made when a step ends, to ask again.
	waiting []waitingStep
}

// waitingStep is srun's step-create port, as slurmctld keeps it in a
// pending step record.
type waitingStep struct {
	to      netip.AddrPort
	version uint16
	uid     uint32
}

// used is the CPUs the live steps hold on each node.
func (js *jobSteps) used() map[string]uint32 {
	u := map[string]uint32{}
	for _, s := range js.live {
		if s.overlap {
			continue
		}
		for n, c := range s.cpusOn {
			u[n] += c
		}
	}
	return u
}

// jobCPUsOn is the CPUs job j holds on each of its nodes, as its
// allocation tells srun (cpuGroups).
func jobCPUsOn(j *state.Job, nodes []string) map[string]uint32 {
	vals, reps := cpuGroups(j, uint32(len(nodes)))
	out := make(map[string]uint32, len(nodes))
	i := 0
	for g, v := range vals {
		for range reps[g] {
			if i < len(nodes) {
				out[nodes[i]] = uint32(v)
				i++
			}
		}
	}
	return out
}

// credTTL is how long a job credential may be used for a launch after it
// is made (slurmd's cred_expire default).
const credTTL = 120 * time.Second

// credSignature signs a credential body: an HMAC keyed by the server's
// secret (the munge key: users cannot read it), so that a node stand-in
// can tell a credential this server made from a forged one. srun never
// looks inside the signature; it uses it as the key of its I/O streams.
func (c *Controller) credSignature(body []byte) string {
	m := hmac.New(sha256.New, c.opt.CredKey)
	m.Write([]byte("slurm-frontend job credential\x00"))
	m.Write(body)
	return "SFCRED:" + base64.RawStdEncoding.EncodeToString(m.Sum(nil))
}

// VerifyCred reports whether sig is this server's signature of body.
func (c *Controller) VerifyCred(body []byte, sig string) bool {
	return len(c.opt.CredKey) > 0 && hmac.Equal([]byte(c.credSignature(body)), []byte(sig))
}

// stepCreate handles REQUEST_JOB_STEP_CREATE.
func (c *Controller) stepCreate(req *Request) Reply {
	var m codec.JobStepCreateRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	_, single := c.opt.Exec.(translate.StepExecutor)
	_, group := c.opt.Exec.(translate.StepGroupExecutor)
	if (!single && !group) || len(c.opt.CredKey) == 0 {
		c.logf("step for job %d: this engine runs no job steps", m.StepID.JobID)
		return refusal(userErr(codec.ESLURM_NOT_SUPPORTED, "job steps (srun) are not supported by this engine"), req.Version)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(m.StepID.JobID)
	if e == nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	j := *e.job()
	switch {
	case !c.mayControl(req.UID, &j) || (m.UserID != req.UID && m.UserID != codec.SlurmAuthNobody && m.UserID != codec.NoVal &&
		req.UID != 0 && req.UID != c.opt.SlurmUID):
		// srun 23.02+ sends user_id 99 (SLURM_AUTH_NOBODY) unless --uid.
		c.logf("Security violation, JOB_STEP_CREATE RPC from uid=%d for job %d of uid %d", req.UID, j.ID, j.UserID)
		return rcReply(codec.ESLURM_ACCESS_DENIED)
	case codec.JobIsPending(j.State):
		return rcReply(codec.ESLURM_JOB_PENDING)
	case !codec.JobIsRunning(j.State) || j.State&codec.JOB_COMPLETING != 0:
		return rcReply(codec.ESLURM_ALREADY_DONE)
	case j.SessionID == "" || j.SessionID == sessionCreating:
		return rcReply(codec.ESLURM_JOB_PENDING)
	}
	jobNodes := expandNodes(j.Nodes)
	if len(jobNodes) == 0 {
		return rcReply(codec.ESLURM_INVALID_NODE_NAME)
	}
	js := c.steps[j.ID]
	if js == nil {
		js = &jobSteps{live: map[uint32]*step{}}
		c.steps[j.ID] = js
	}
	// The job's CPUs are shared out among its steps as slurmctld's step
	// manager does: a step holds the CPUs of its tasks (--exact), or all
	// the job's CPUs on its nodes (srun's default, SSF_WHOLE), and no
	// other step may use them until it ends, unless it asks for
	// --overlap (which holds none either). The batch script and
	// salloc's shell hold none.
	overlap := m.Flags&(codec.StepFlagOverlapForce|codec.StepFlagExtLauncher|codec.StepFlagInteractive) != 0
	whole := m.Flags&codec.StepFlagWhole != 0
	have, used := jobCPUsOn(&j, jobNodes), js.used()
	free := func(n string) uint32 {
		if overlap {
			return have[n]
		}
		if whole && used[n] > 0 {
			return 0
		}
		return have[n] - min(used[n], have[n])
	}
	// The step's nodes: those named (-w), else the first -N of the
	// job's, else as many as the tasks need, else all of them; the
	// first ones with CPUs free.
	nodes := jobNodes
	if m.NodeList != "" {
		want := expandNodes(m.NodeList)
		for _, n := range want {
			if !slices.Contains(jobNodes, n) {
				return rcReply(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL)
			}
		}
		nodes = want
	} else if m.MinNodes != codec.NoVal && m.MinNodes > 0 {
		if int(m.MinNodes) > len(jobNodes) {
			return refusal(userErr(codec.ESLURM_INVALID_NODE_COUNT, "Requested node configuration is not available"), req.Version)
		}
		nodes = freeFirst(jobNodes, free)[:m.MinNodes]
	}
	tasks := m.NumTasks
	if tasks == codec.NoVal || tasks == 0 {
		tasks = uint32(len(nodes))
	}
	if int(tasks) < len(nodes) {
		nodes = freeFirst(nodes, free)[:tasks]
	}
	if sr, ok := c.opt.Exec.(translate.StepRefuser); ok {
		if err := sr.RefuseStep(j.Origin == "", uint32(len(nodes))); err != nil {
			c.logf("step for job %d refused: %v", j.ID, err)
			return refusal(userErr(engineCode(err), err.Error()), req.Version)
		}
	}
	if m.Flags&codec.StepFlagOvercommit == 0 && (m.NumTasks != codec.NoVal && m.CPUCount != codec.NoVal && tasks > max(j.MinCPUs, 1) ||
		m.CPUCount != codec.NoVal && m.CPUCount > max(j.MinCPUs, 1)) {
		// More tasks, or CPUs (-n × -c), than the job has (and no
		// --overcommit): as slurmctld, which cannot lay them out (srun:
		// "Unable to create step for job N: More processors requested
		// than permitted").
		return rcReply(codec.ESLURM_TOO_MANY_REQUESTED_CPUS)
	}
	// Block distribution: consecutive task ids, the first nodes taking
	// the remainder; each task's CPUs (-c) on its node.
	n := uint32(len(nodes))
	perTask := uint32(1)
	if m.CPUCount != codec.NoVal && m.NumTasks != codec.NoVal && m.NumTasks > 0 && m.CPUCount > m.NumTasks {
		perTask = m.CPUCount / m.NumTasks
	}
	var tids [][]uint32
	cpusOn := map[string]uint32{}
	next := uint32(0)
	busy := false
	for i := uint32(0); i < n; i++ {
		cnt := tasks / n
		if i < tasks%n {
			cnt++
		}
		ids := make([]uint32, cnt)
		for k := range ids {
			ids[k] = next
			next++
		}
		tids = append(tids, ids)
		need := min(cnt*perTask, have[nodes[i]])
		if whole {
			need = have[nodes[i]]
		}
		cpusOn[nodes[i]] = need
		if !overlap && (m.Flags&codec.StepFlagOvercommit == 0 && free(nodes[i]) < need || free(nodes[i]) == 0) {
			busy = true
		}
	}
	if busy {
		// Not now: srun says "step creation temporarily disabled,
		// retrying (Requested nodes are busy)" and waits on its port
		// for a step of the job to end.
		if req.Peer.IsValid() && m.Port != 0 && len(js.waiting) < maxWaitingSteps {
			js.waiting = append(js.waiting, waitingStep{to: netip.AddrPortFrom(req.Peer, m.Port), version: req.Version, uid: j.UserID})
		}
		return rcReply(codec.ESLURM_NODES_BUSY)
	}
	id := js.next
	switch want := m.StepID.StepID; {
	case m.Flags&codec.StepFlagInteractive != 0:
		id = codec.SLURM_INTERACTIVE_STEP
	case want != codec.NoVal:
		// A step id srun asks for (26.05's srun does, inside an
		// allocation): taken as slurmctld takes it, unless live.
		if _, live := js.live[want]; live {
			return rcReply(codec.ESLURM_DUPLICATE_STEP_ID)
		}
		id = want
		if m.StepID.StepHetComp == codec.NoVal {
			js.next = max(js.next, want) + 1
		}
	default:
		js.next++
	}
	s := &step{id: id, name: m.Name, nodes: nodes, nodeList: hostlist.Compress(nodes), tasks: tasks,
		cpus: max(m.CPUCount, tasks), start: time.Now().Unix(), timeLimit: m.TimeLimit, srunPID: m.SrunPID,
		srunHost: m.Host, version: req.Version, submitLine: m.SubmitLine, left: map[string]bool{},
		tids: tids, cpusOn: cpusOn, overlap: overlap}
	for _, nd := range nodes {
		s.left[nd] = true
	}
	if held := sumCPUs(cpusOn); held > 0 {
		s.cpus = held // what the step has, as squeue -s shows it
	}
	if s.cpus == codec.NoVal {
		s.cpus = tasks
	}
	if req.Peer.IsValid() && m.Port != 0 {
		s.srun = netip.AddrPortFrom(req.Peer, m.Port)
	}
	cred := c.jobCred(&j, s, req.Version)
	resp := codec.JobStepCreateResponse{
		JobID: j.ID, StepID: id, StepHetComp: codec.NoVal, Cred: cred, UseProtocolVer: req.Version,
		SelectPluginID: selectConsTres, State: codec.JOB_RUNNING,
		Layout: &codec.StepLayout{NodeList: s.nodeList, NodeCnt: n, StartProtocolVer: req.Version,
			TaskCnt: tasks, TaskDist: taskDistBlock, TIDs: s.tids},
	}
	if req.Version < codec.V23_11 {
		resp.SwitchInfo = []byte{0, 0, 0, 100} // switch/none's plugin id, no data
	}
	js.live[id] = s
	c.stepsChanged()
	c.rebuild(time.Now().Unix())
	c.logf("job %d: step %d (%s) of %d tasks on %s for uid %d", j.ID, id, s.name, tasks, s.nodeList, req.UID)
	var w codec.Writer
	resp.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_JOB_STEP_CREATE, Body: w.B}
}

// SLURM_DIST_BLOCK (slurm.h task_dist_states).
const taskDistBlock = 0x0001

// jobCred is the signed job credential of step s of job j (c.mu held).
func (c *Controller) jobCred(j *state.Job, s *step, v uint16) []byte {
	u := lookupUser(j.UserName)
	cr := codec.JobCred{
		StepID: codec.JobStepID{JobID: j.ID, StepID: s.id, StepHetComp: codec.NoVal},
		UID:    j.UserID, GID: j.GroupID, UserName: j.UserName, Gecos: u.gecos, Dir: u.dir, Shell: u.shell,
		GIDs:        supplementaryGroups(j.UserName, j.GroupID),
		JobCoreSpec: codec.NoVal16, JobAccount: j.Account, JobComment: j.Comment, JobConstraints: j.Features,
		JobPartition: j.Partition, JobStdErr: j.StdErr, JobStdIn: j.StdIn, JobStdOut: j.StdOut,
		StepHostlist: s.nodeList, CTime: time.Now().Unix(), JobHostlist: j.Nodes,
		JobNHosts: uint32(len(expandNodes(j.Nodes))), JobNTasks: j.NumTasks,
		JobStartTime: j.StartTime, JobEndTime: j.EndTime,
	}
	var w codec.Writer
	cr.EncodeBody(&w, v)
	cr.Signature = c.credSignature(w.B)
	return codec.AppendJobCred(nil, &cr, v)
}

// userInfo is what a credential's identity carries besides the ids.
type userInfo struct{ gecos, dir, shell string }

func lookupUser(name string) userInfo {
	var u userInfo
	b, err := readPasswd()
	if err != nil {
		return u
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, ":")
		if len(f) >= 7 && f[0] == name {
			return userInfo{gecos: f[4], dir: f[5], shell: f[6]}
		}
	}
	return u
}

// StepOf returns the session of job id and the step's layout, for a
// node stand-in checking a launch: ok false when the job does not run or
// the step is not live.
func (c *Controller) StepOf(jobID, stepID uint32) (l translate.StepLayout, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(jobID)
	if e == nil || !codec.JobIsRunning(e.job().State) || e.job().State&codec.JOB_COMPLETING != 0 {
		return l, false
	}
	js := c.steps[jobID]
	if js == nil {
		return l, false
	}
	s := js.live[stepID]
	if s == nil {
		return l, false
	}
	l = translate.StepLayout{Session: translate.SessionID(e.job().SessionID), Nodes: s.nodes, TIDs: s.tids}
	for _, n := range s.nodes {
		l.CPUs = append(l.CPUs, s.cpusOn[n])
	}
	return l, true
}

// StepNodeDone records that the tasks of step stepID on node have all
// ended (rc: the largest raw status); the step ends with its last node.
func (c *Controller) StepNodeDone(jobID, stepID uint32, node string, rc uint32, u translate.TaskUsage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	js := c.steps[jobID]
	if js == nil {
		return
	}
	s := js.live[stepID]
	if s == nil {
		return
	}
	delete(s.left, node)
	s.rc = max(s.rc, rc)
	s.usage.Add(u)
	if len(s.left) == 0 {
		c.recordStep(jobID, s, s.rc, stepState(s, s.rc), time.Now().Unix())
		delete(js.live, stepID)
		c.stepsChanged()
		c.logf("job %d: step %d ended (status %#x)", jobID, stepID, rc)
		c.rebuild(time.Now().Unix())
		c.wakeWaitingSteps(js)
	}
}

// maxWaitingSteps bounds the sruns a job keeps waiting (a flood of
// step requests cannot grow the list without end; one left out still
// asks again when its wait times out).
const maxWaitingSteps = 256

// wakeWaitingSteps tells the sruns waiting for CPUs of the job that a
// step ended (c.mu held): as slurmctld, SRUN_STEP_SIGNAL with signal 0
// for the pending step to the port each waits on; srun then asks again.
func (c *Controller) wakeWaitingSteps(js *jobSteps) {
	if len(js.waiting) == 0 || c.opt.Caller == nil {
		js.waiting = nil
		return
	}
	ws := js.waiting
	js.waiting = nil
	go func() {
		for _, w := range ws {
			m := codec.SrunStepSignal{StepID: codec.JobStepID{StepID: codec.SLURM_PENDING_STEP, StepHetComp: codec.NoVal}}
			var b codec.Writer
			m.Encode(&b, w.version)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, _ = c.opt.Caller.Call(ctx, w.to, w.version, codec.SRUN_STEP_SIGNAL, b.B, w.uid, false)
			cancel()
		}
	}()
}

func sumCPUs(m map[string]uint32) uint32 {
	var t uint32
	for _, c := range m {
		t += c
	}
	return t
}

// freeFirst is nodes with those free reports CPUs on first, each group
// in its order.
func freeFirst(nodes []string, free func(string) uint32) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if free(n) > 0 {
			out = append(out, n)
		}
	}
	for _, n := range nodes {
		if free(n) == 0 {
			out = append(out, n)
		}
	}
	return out
}

// stepComplete handles REQUEST_STEP_COMPLETE (srun sends it when a launch
// failed): the nodes of the range are done.
func (c *Controller) stepComplete(req *Request) Reply {
	var m codec.StepCompleteRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	c.mu.Lock()
	js := c.steps[m.StepID.JobID]
	var s *step
	if js != nil {
		s = js.live[m.StepID.StepID]
	}
	e := c.entry(m.StepID.JobID)
	if s == nil || e == nil {
		c.mu.Unlock()
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	if j := e.job(); !c.mayControl(req.UID, j) {
		c.mu.Unlock()
		return rcReply(codec.ESLURM_ACCESS_DENIED)
	}
	var done []string
	for i := m.RangeFirst; i <= m.RangeLast && int(i) < len(s.nodes); i++ {
		done = append(done, s.nodes[i])
	}
	c.mu.Unlock()
	for _, n := range done {
		c.StepNodeDone(m.StepID.JobID, m.StepID.StepID, n, m.StepRC, translate.TaskUsage{})
	}
	return rcReply(codec.SLURM_SUCCESS)
}

// StepSignaller delivers a signal to a live step's tasks (the node
// stand-ins implement it).
type StepSignaller interface {
	SignalStep(jobID, stepID uint32, sig int) bool
	// TimeoutStep ends a step past its time limit (TERM, then KILL
	// after killWait), telling its srun why.
	TimeoutStep(jobID, stepID uint32, killWait time.Duration) bool
}

// stepLimitEvery is how often steps' own time limits are checked
// (slurmctld looks every 30 s).
const stepLimitEvery = 5 * time.Second

// watchStepLimits ends the steps that ran past their own time limit
// (srun -t inside an allocation), as slurmctld's
// check_job_step_time_limit does; a job's limit ends its steps with it.
func (c *Controller) watchStepLimits(ctx context.Context) {
	t := time.NewTicker(stepLimitEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c.opt.Steps == nil {
			continue
		}
		type due struct{ job, step uint32 }
		var over []due
		now := time.Now().Unix()
		c.mu.Lock()
		for job, js := range c.steps {
			for id, s := range js.live {
				if s.timeLimit == codec.NoVal || s.timeLimit == 0 || s.timeLimit == conf.Infinite || s.timedOut {
					continue
				}
				if now-s.start >= int64(s.timeLimit)*60 {
					s.timedOut = true
					over = append(over, due{job, id})
				}
			}
		}
		wait := time.Duration(c.killWait()) * time.Second
		c.mu.Unlock()
		for _, d := range over {
			c.logf("job %d: step %d: time limit reached: ending it", d.job, d.step)
			c.opt.Steps.TimeoutStep(d.job, d.step, wait)
		}
	}
}

// cancelStep handles REQUEST_CANCEL_JOB_STEP (scancel J.S, srun's abort):
// the step's tasks get the signal; SIGKILL ends the step.
func (c *Controller) cancelStep(req *Request) Reply {
	var m codec.KillJobRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	jobID, stepID := m.StepID.JobID, m.StepID.StepID
	if jobID == codec.NoVal && m.SJobID != "" {
		// "J.S" in sjob_id form.
		var err error
		jobID, stepID, err = parseStepSpec(m.SJobID)
		if err != nil {
			return rcReply(codec.ESLURM_INVALID_JOB_ID)
		}
	}
	c.mu.Lock()
	e := c.entry(jobID)
	var s *step
	if js := c.steps[jobID]; js != nil {
		s = js.live[stepID]
	}
	if e == nil {
		c.mu.Unlock()
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	if !c.mayControl(req.UID, e.job()) {
		c.mu.Unlock()
		return rcReply(codec.ESLURM_ACCESS_DENIED)
	}
	if codec.JobIsFinished(e.job().State) {
		c.mu.Unlock()
		return rcReply(codec.ESLURM_ALREADY_DONE)
	}
	c.mu.Unlock()
	if s == nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	sig := int(m.Signal)
	if sig == 0 || sig == int(codec.NoVal16) {
		sig = 9
	}
	if sr, ok := c.opt.Exec.(translate.StepRefuser); ok {
		if err := sr.RefuseStepSignal(sig); err != nil {
			c.logf("signal %d to step %d.%d refused: %v", sig, jobID, stepID, err)
			return refusal(userErr(engineCode(err), err.Error()), req.Version)
		}
	}
	if sig == 9 {
		c.mu.Lock()
		s.killedBy = req.UID + 1 // accounting: "CANCELLED by UID"
		c.mu.Unlock()
	}
	if c.opt.Steps == nil || !c.opt.Steps.SignalStep(jobID, stepID, sig) {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	return rcReply(codec.SLURM_SUCCESS)
}

// parseStepSpec reads "J.S".
func parseStepSpec(s string) (uint32, uint32, error) {
	j, st, ok := strings.Cut(s, ".")
	if !ok {
		return 0, 0, codec.Errorf(codec.ESLURM_INVALID_JOB_ID, "no step in %q", s)
	}
	jid, err := parseUint32(j)
	if err != nil {
		return 0, 0, err
	}
	sid, err := parseUint32(st)
	return jid, sid, err
}

// endSteps forgets the steps of a job that ended (c.mu held); their
// tasks end with the job's session.
func (c *Controller) endSteps(jobID uint32) {
	js := c.steps[jobID]
	if js == nil {
		return
	}
	delete(c.steps, jobID)
	if len(js.live) > 0 {
		c.stepsChanged()
	}
	now := time.Now().Unix()
	for _, s := range js.live {
		// Ended with the job: cancelled, as slurmctld marks them.
		c.recordStep(jobID, s, s.rc, codec.JOB_CANCELLED, now)
	}
	c.wakeWaitingSteps(js) // they ask again and learn the job is done
	for _, s := range js.live {
		if !s.srun.IsValid() || c.opt.Caller == nil {
			continue
		}
		// srun learns that its step is over only when its tasks'
		// exits arrive; the job's end is told to its step port.
		m := codec.SrunStepMsg{StepID: codec.JobStepID{JobID: jobID, StepID: s.id, StepHetComp: codec.NoVal}}
		var w codec.Writer
		m.Encode(&w, s.version)
		to, v := s.srun, s.version
		uid := uint32(0)
		if e := c.entry(jobID); e != nil {
			uid = e.job().UserID
		}
		go func() {
			time.Sleep(2 * time.Second) // after the tasks' own exits, normally
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = c.opt.Caller.Call(ctx, to, v, codec.SRUN_JOB_COMPLETE, w.B, uid, false)
		}()
	}
}

// stepInfos are the live steps as squeue -s / scontrol show step list
// them (c.mu held).
func (c *Controller) stepInfos() []codec.JobStepInfo {
	var out []codec.JobStepInfo
	now := time.Now().Unix()
	for jobID, js := range c.steps {
		e := c.entry(jobID)
		if e == nil {
			continue
		}
		j := e.job()
		for _, s := range js.live {
			out = append(out, codec.JobStepInfo{
				ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID,
				StepID: codec.JobStepID{JobID: jobID, StepID: s.id, StepHetComp: codec.NoVal},
				UserID: j.UserID, NumCPUs: s.cpus, NumTasks: s.tasks, TaskDist: taskDistBlock,
				CPUFreqMin: codec.NoVal, CPUFreqMax: codec.NoVal, CPUFreqGov: codec.NoVal,
				TimeLimit: stepLimit(s.timeLimit, j.TimeLimit), State: codec.JOB_RUNNING, SrunPID: s.srunPID,
				StartTime: s.start, RunTime: now - s.start, Cluster: c.opt.ClusterName, Partition: j.Partition,
				SrunHost: s.srunHost, Nodes: s.nodeList, Name: s.name, StartProtocolVer: s.version,
				SubmitLine: s.submitLine, TRESAllocStr: j.TresAllocStr,
			})
		}
	}
	return out
}

func stepLimit(step, job uint32) uint32 {
	if step == codec.NoVal || step == 0 {
		return job
	}
	return step
}

func expandNodes(expr string) []string {
	if expr == "" {
		return nil
	}
	names, err := hostlist.Expand(expr)
	if err != nil {
		return nil
	}
	return names
}

func readPasswd() ([]byte, error) { return os.ReadFile("/etc/passwd") }

func parseUint32(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, codec.Errorf(codec.ESLURM_INVALID_JOB_ID, "%q is not a number", s)
	}
	return uint32(v), nil
}
