package ctld

import (
	"errors"
	"net"
	"net/netip"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// submit handles REQUEST_SUBMIT_BATCH_JOB: validate as slurmctld does,
// allocate the job ID durably, store the record, publish a new snapshot,
// then answer. Nothing is acknowledged before it is on disk.
func (c *Controller) submit(req *Request) Reply {
	var d codec.JobDesc
	r := codec.NewReader(req.Body)
	if err := d.Decode(&r, req.Version); err != nil {
		c.logf("submit from uid %d: undecodable job description: %v", req.UID, err)
		return rcReply(codec.CodeOf(err))
	}
	job, sc, err := c.translateJobDesc(req, &d)
	if err != nil {
		c.logf("submit from uid %d refused: %v", req.UID, err)
		var bc badConstraints
		if errors.As(err, &bc) && job != nil {
			c.keepBadConstraints(job, sc)
		}
		return refusal(err, req.Version)
	}
	if diffs := c.differences(&d, job); len(diffs) > 0 {
		c.logDifferences(req.UID, diffs)
	}
	jobs, err := c.commitSubmission(job, sc)
	if err != nil {
		c.logf("submit: %v", err)
		return rcReply(storeWriteCode(err))
	}
	c.counters.submitted.Add(1)
	if jobs[0].Priority != 0 {
		// A held job has nothing to hand over: no dispatch pass (a walk
		// of every job) per held submission; the periodic one still
		// sees its deadline and reason.
		c.wake()
	}
	resp := codec.SubmitResponse{StepID: codec.JobStepID{JobID: jobs[0].ID, StepID: codec.SLURM_BATCH_SCRIPT, StepHetComp: codec.NoVal}}
	if jobs[0].Priority == 0 {
		// slurmctld tells sbatch the job was accepted but held.
		resp.ErrorCode = codec.ESLURM_JOB_HELD
	}
	w := codec.Writer{}
	resp.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_SUBMIT_BATCH_JOB, Body: w.B}
}

// keepBadConstraints records a submission refused because no node set of
// its partition could hold it, as slurmctld does: a job FAILED at once
// (exit code 1, reason BadConstraints) that takes an id and a priority,
// and that squeue --states=all and sacct show.
func (c *Controller) keepBadConstraints(job *state.Job, sc *state.Script) {
	now := time.Now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	jobs, err := c.opt.Store.Submit(1, sc, func(id uint32) ([]*state.Job, error) {
		j := *job
		j.ID = id
		if j.Priority != 0 {
			j.Priority = c.setJobPrio(&j, now)
		}
		if j.ArrayTasks != "" {
			j.ArrayJobID = id
		}
		j.State, j.Reason, j.ExitCode = codec.JOB_FAILED, codec.FAIL_BAD_CONSTRAINTS, 1<<8
		j.StartTime, j.EndTime, j.EligibleTime = now, now, now
		return []*state.Job{&j}, nil
	})
	if err != nil {
		c.logf("submit: keeping the refused job: %v", err)
		return
	}
	// Written again as finished: its history record (sacct).
	if err := c.opt.Store.Put(jobs[0]); err != nil {
		c.logf("submit: keeping the refused job: %v", err)
	}
	c.addJob(newEntry(jobs[0], c.opt.Store, true))
	c.rebuild(now)
}

// storeWriteCode is the Slurm error for a submission the store could not
// take: the id space used up is slurmctld's "Unable to create job
// record"; anything else is a write that failed (state.FSError: full,
// read-only; or an I/O error).
func storeWriteCode(err error) uint32 {
	if errors.Is(err, state.ErrIDsExhausted) {
		return codec.ESLURM_ERROR_ON_DESC_TO_RECORD_COPY
	}
	// slurmctld's answer to a submission it cannot write to its
	// StateSaveLocation; sbatch: "Batch job submission failed: I/O error
	// writing script/environment to file". Nothing was kept.
	return codec.ESLURM_WRITING_TO_FILE
}

// translateJobDesc turns a job description into a job record, refusing
// up front what cannot be honoured (honest compatibility).
func (c *Controller) translateJobDesc(req *Request, d *codec.JobDesc) (*state.Job, *state.Script, error) {
	return c.translateJobDescFor(req, d, false)
}

// translateJobDescFor is translateJobDesc; with assumeJobs, dependencies
// on jobs the server does not know are on jobs yet to be made (the
// audit's checks, check.go).
func (c *Controller) translateJobDescFor(req *Request, d *codec.JobDesc, assumeJobs bool) (*state.Job, *state.Script, error) {
	privileged := req.UID == 0 || req.UID == c.opt.SlurmUID
	// _valid_id: unset ids are the credential's (NO_VAL up to 23.11,
	// SLURM_AUTH_NOBODY after; from 24.11 NO_VAL is refused); only root
	// and the SlurmUser may submit for someone else.
	uid, gid := d.UserID, d.GroupID
	if req.Version >= codec.V24_11 && (uid == codec.NoVal || gid == codec.NoVal) {
		return nil, nil, codec.Errorf(codec.ESLURM_USER_ID_MISSING, "requested UID=NO_VAL or GID=NO_VAL")
	}
	if uid == codec.SlurmAuthNobody || uid == codec.NoVal {
		uid = req.UID
	}
	if gid == codec.SlurmAuthNobody || gid == codec.NoVal {
		gid = req.GID
	}
	if !privileged && uid != req.UID {
		return nil, nil, codec.Errorf(codec.ESLURM_USER_ID_MISSING, "requested UID=%d doesn't match user UID=%d", uid, req.UID)
	}
	if !privileged && gid != req.GID {
		return nil, nil, codec.Errorf(codec.ESLURM_GROUP_ID_MISSING, "requested GID=%d doesn't match user GID=%d", gid, req.GID)
	}
	if err := c.testJobDescFields(d, req.Version); err != nil {
		return nil, nil, err
	}
	if d.Script == "" {
		return nil, nil, codec.Errorf(codec.ESLURM_JOB_SCRIPT_MISSING, "no batch script")
	}
	if len(d.Environment) == 0 {
		return nil, nil, codec.Errorf(codec.ESLURM_ENVIRONMENT_MISSING, "no environment")
	}
	part, err := c.pickPartition(d.Partition)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now().Unix()
	j := &state.Job{
		ArrayTaskID: codec.NoVal, Name: d.Name, UserID: uid, GroupID: gid, UserName: userName(uid),
		Partition: part.Name, Account: d.Account, QOS: d.QOS, Comment: d.Comment, WorkDir: d.WorkDir,
		StdIn: d.StdIn, StdOut: d.StdOut, StdErr: d.StdErr, Container: d.Container,
		AllocNode: c.hostName(req.Origin), SubmitTime: now, BeginTime: d.BeginTime, Deadline: d.Deadline,
		TimeLimit: d.TimeLimit, TimeMin: d.TimeMin, State: codec.JOB_PENDING, Priority: 1, // set from the ID once allocated
		ReqNodes: d.ReqNodes, ExcNodes: d.ExcNodes, Features: d.Features, Dependency: d.Dependency,
		TresPerNode: d.TRESPerNode, TresPerJob: d.TRESPerJob, TresPerTask: d.TRESPerTask,
		MailUser: d.MailUser, Network: d.Network, ProtoVersion: req.Version, OpenMode: d.OpenMode,
		ArrayTasks: d.ArrayInx, AllocSID: d.AllocSID, SubmitLine: d.SubmitLine, DescFlags: d.Bitflags,
	}
	if j.AllocSID == codec.NoVal {
		j.AllocSID = 0
	}
	if j.Name == "" {
		j.Name = "sbatch"
	}
	if j.QOS == "" && c.accountingOn() {
		// With accounting every job has a QOS: the default one
		// (slurmdbd's "normal"), whether or not its user has an
		// association.
		j.QOS = "normal"
	}
	if d.Nice != codec.NoVal {
		j.Nice = codec.NiceFromWire(d.Nice)
	}
	if d.Requeue != codec.NoVal16 {
		j.Requeue, j.NoRequeue = d.Requeue == 1, d.Requeue == 0
	}
	if d.Shared == 0 {
		j.Exclusive = true
	}
	if d.MailType != codec.NoVal16 {
		j.MailType = d.MailType
	}
	if d.Contiguous == 1 {
		j.Contiguous = true
	}
	// Sizes, with slurmctld's defaults: one node, one task, one CPU each.
	j.MinNodes, j.MaxNodes = 1, d.MaxNodes
	if d.MinNodes != codec.NoVal && d.MinNodes > 0 {
		j.MinNodes = d.MinNodes
	}
	if j.MaxNodes == codec.NoVal || j.MaxNodes == 0 {
		j.MaxNodes = 0
	}
	j.NumTasks = 1
	if d.NumTasks != codec.NoVal && d.NumTasks > 0 {
		j.NumTasks = d.NumTasks
	}
	j.CPUsPerTask = 1
	if d.CPUsPerTask != codec.NoVal16 && d.CPUsPerTask > 0 {
		j.CPUsPerTask = d.CPUsPerTask
	}
	if d.NtasksPerNode != codec.NoVal16 {
		j.TasksPerNode = d.NtasksPerNode
		if d.NumTasks == codec.NoVal && j.TasksPerNode > 0 {
			j.NumTasks = uint32(j.TasksPerNode) * j.MinNodes
		}
	}
	j.MinCPUs = j.NumTasks * uint32(j.CPUsPerTask)
	if d.Overcommit == 1 {
		// -O: tasks share CPUs; the job holds what the client asks for,
		// one per node (slurmctld: NumCPUs=1 for -n8 -O on one node).
		j.MinCPUs = j.MinNodes
	}
	if d.MinCPUs != codec.NoVal && d.MinCPUs > j.MinCPUs {
		j.MinCPUs = d.MinCPUs
	}
	if perCPU, mb := d.MemPerCPU(); mb != codec.NoVal64 {
		if perCPU {
			j.MemPerCPUMB = mb
		} else {
			j.MemPerNodeMB = mb
		}
	} else {
		// No --mem: the partition's DefMemPerCPU, else the cluster's
		// DefMemPerNode or DefMemPerCPU, is the job's request, as
		// slurmctld's _validate_job_desc records it (without one the job
		// takes the nodes' whole memory).
		c.defaultMem(j, part)
	}
	// Time limit: the partition's default, else its maximum.
	if j.TimeLimit == codec.NoVal {
		if part.DefaultTime != codec.NoVal {
			j.TimeLimit = part.DefaultTime
		} else {
			j.TimeLimit = part.MaxTime
		}
	}
	var pend uint32 // 22.05: queued, though too large for the partition
	if err := c.fits(j, part); err != nil {
		var fe fitError
		if queuesOversize(req.Version) && errors.As(err, &fe) {
			pend = fe.pend
		} else {
			if cpn := c.cluster().partLimits(part).maxCPUs; cpn > 0 {
				// The nodes slurmctld's record says it asked for.
				j.MinNodes = max(j.MinNodes, (j.MinCPUs+cpn-1)/cpn)
			}
			j.Command = commandOf(d)
			// Refused before the partition's default limit applies
			// (sacct: Partition_Limit).
			j.TimeLimit = d.TimeLimit
			return j, &state.Script{Text: d.Script, Env: d.Environment, Argv: d.Argv}, badConstraints{err}
		}
	}
	if j.ArrayTasks != "" {
		a, err := parseArray(j.ArrayTasks, c.maxArraySize())
		if err != nil {
			return nil, nil, userErr(codec.ESLURM_INVALID_ARRAY, "Invalid job array specification")
		}
		j.ArrayTasks = a.String()
		j.ArraySpec = j.ArrayTasks
		j.ArrayMax = a.limit
	}
	if j.Dependency != "" {
		if err := c.validDependency(j.Dependency, uid, assumeJobs); err != nil {
			if req.Version < codec.V23_02 {
				// 22.05 accepts a dependency on an unknown job (it is
				// then never satisfied); later releases refuse it.
				if _, _, perr := parseDependency(j.Dependency); perr != nil {
					return nil, nil, err
				}
			} else {
				return nil, nil, codec.Errorf(codec.ESLURM_DEPENDENCY, "%v", err)
			}
		}
	}
	if j.MailType != 0 && c.mailProg() == "" {
		// No working MailProg: refuse rather than silently send nothing.
		return nil, nil, userErr(codec.ESLURM_NOT_SUPPORTED, "--mail-type needs a MailProg, and none is configured")
	}
	if err := c.refuseUnsupported(d); err != nil {
		return nil, nil, err
	}
	if d.Container != "" {
		ic, ok := c.opt.Backend.(translate.ImageChecker)
		if !ok {
			return nil, nil, userErr(codec.ESLURM_NOT_SUPPORTED, "--container is not supported by this engine")
		}
		if err := ic.CheckImage(d.Container, uid, gid); err != nil {
			return nil, nil, userErr(codec.ESLURM_NOT_SUPPORTED, "--container: "+err.Error())
		}
	}
	j.KillInvalidDep = d.Bitflags&killInvDep != 0
	if d.WarnSignal != 0 && d.WarnSignal != codec.NoVal16 {
		j.WarnSignal, j.WarnTime = d.WarnSignal, d.WarnTime
		j.WarnBatchOnly = d.WarnFlags&1 != 0 // KILL_JOB_BATCH: --signal=B:
	}
	// State: held (priority 0) or waiting.
	switch {
	case d.Priority == 0:
		// sbatch --hold is a user hold, whoever submits (as slurmctld).
		j.Priority, j.State = 0, codec.JOB_PENDING
		j.HeldBy, j.Reason = 2, codec.WAIT_HELD_USER
	case j.Dependency != "":
		j.Reason = codec.WAIT_DEPENDENCY
	case j.BeginTime > now:
		j.Reason = codec.WAIT_TIME
	case part.MaxTime != conf.Infinite && j.TimeLimit != conf.Infinite && j.TimeLimit > part.MaxTime:
		j.Reason = codec.WAIT_PART_TIME_LIMIT
	default:
		j.Reason = codec.WAIT_PRIORITY
	}
	if pend != 0 && j.Priority != 0 {
		j.Reason = pend
	}
	j.EligibleTime = 0
	if j.BeginTime > now {
		j.EligibleTime = j.BeginTime // scontrol shows EligibleTime = --begin
	}
	// Flags slurmctld adds to what the client sent.
	j.DescFlags |= jobDependent
	if d.Partition == "" {
		j.DescFlags |= jobPartAssigned
	}
	if _, mb := d.MemPerCPU(); mb != codec.NoVal64 {
		j.DescFlags |= jobMemSet
	}
	j.Command = commandOf(d)
	j.TresReqStr = tresString(j, c.nodeMemMB(part))
	if strings.Contains(d.Partition, ",") {
		// Validated against the first usable one; the job shows the
		// list until it starts in one of them (runPartition).
		j.Partition = d.Partition
	}
	sc := &state.Script{Text: d.Script, Env: d.Environment, Argv: d.Argv}
	if ck, ok := c.opt.Exec.(translate.SpecChecker); ok {
		// What the engine underneath cannot do as Slurm would is
		// refused now, not failed when the job would start.
		// Its shape only: the rest is built at hand-over.
		spec := sessionShape(j)
		if err := ck.CheckSpec(&spec); err != nil {
			return nil, nil, userErr(engineCode(err), err.Error())
		}
	}
	return j, sc, nil
}

// refuseUnsupported refuses the job_desc fields the frontend cannot
// honour, with the error slurmctld gives when the cluster lacks the
// feature (see the table in doc.go).
func (c *Controller) refuseUnsupported(d *codec.JobDesc) error {
	switch {
	case d.Reservation != "":
		return codec.Errorf(codec.ESLURM_RESERVATION_INVALID, "no reservations")
	case d.Licenses != "":
		return codec.Errorf(codec.ESLURM_INVALID_LICENSES, "no licenses configured")
	case d.BurstBuffer != "":
		return codec.Errorf(codec.ESLURM_INVALID_BURST_BUFFER_REQUEST, "no burst buffers")
	case d.Features != "" && !c.featuresKnown(d.Features):
		return codec.Errorf(codec.ESLURM_INVALID_FEATURE, "unknown feature %q", d.Features)
	case d.Clusters != "":
		return userErr(codec.ESLURM_NOT_SUPPORTED, "-M/--clusters: this controller serves one cluster")
	case d.Reboot == 1:
		return userErr(codec.ESLURM_NOT_SUPPORTED, "--reboot: nodes are Backend.AI agents and are not rebooted for jobs")
	case d.CoreSpec != codec.NoVal16 && d.CoreSpec != 0:
		return userErr(codec.ESLURM_NOT_SUPPORTED, "--core-spec/--thread-spec: no core specialization")
	case d.X11 != 0:
		return userErr(codec.ESLURM_NOT_SUPPORTED, "--x11: X11 forwarding is not supported")
	case d.ReqSwitch != codec.NoVal && d.ReqSwitch != 0:
		return userErr(codec.ESLURM_NOT_SUPPORTED, "--switches: no network topology")
	}
	return nil
}

// featuresKnown reports whether every feature named in a -C expression
// is offered by some node (operators & | and brackets are separators).
func (c *Controller) featuresKnown(expr string) bool {
	have := map[string]bool{}
	for _, n := range c.cluster().nodes {
		for _, f := range strings.Split(n.Features, ",") {
			if f != "" {
				have[f] = true
			}
		}
	}
	// Operators and grouping separate names; "name*count" asks for count
	// nodes with it. Digits are part of names ("avx2", "a100").
	for _, f := range strings.FieldsFunc(expr, func(r rune) bool { return strings.ContainsRune("&|,[]()", r) }) {
		f, _, _ = strings.Cut(f, "*")
		if f != "" && !have[f] {
			return false
		}
	}
	return true
}

// hostName is what slurmctld records as a job's submit host (alloc_node):
// the reverse lookup of the address in the client's credential, short
// form; loopback resolves to "localhost" (from /etc/hosts).
func (c *Controller) hostName(ip [4]byte) string {
	key := netip.AddrFrom4(ip)
	if v, ok := c.hosts.Load(key); ok {
		return v.(string)
	}
	name := key.String()
	if names, err := net.LookupAddr(name); err == nil && len(names) > 0 {
		name = strings.TrimSuffix(names[0], ".")
		if i := strings.IndexByte(name, '.'); i > 0 {
			name = name[:i]
		}
	}
	c.hosts.Store(key, name)
	return name
}

// maxArraySize is MaxArraySize (slurmctld's default 1001).
func (c *Controller) maxArraySize() uint32 {
	v, err := strconv.ParseUint(c.config().Get("MaxArraySize", "1001"), 10, 32)
	if err != nil || v == 0 {
		return 1001
	}
	return uint32(v)
}

// validDependency refuses dependencies slurmctld refuses at submit time:
// bad syntax, or a job that does not exist.
// With assumeJobs only the syntax is checked.
func (c *Controller) validDependency(spec string, uid uint32, assumeJobs bool) error {
	if assumeJobs {
		if _, _, err := parseDependency(spec); err != nil {
			return userErr(codec.ESLURM_DEPENDENCY, "Job dependency problem")
		}
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.validDependencyLocked(spec)
}

// validDependencyLocked is validDependency for callers holding c.mu.
func (c *Controller) validDependencyLocked(spec string) error {
	deps, _, err := parseDependency(spec)
	if err != nil {
		return userErr(codec.ESLURM_DEPENDENCY, "Job dependency problem")
	}
	for _, d := range deps {
		if d.kind == "singleton" {
			continue
		}
		found := false
		for _, e := range c.jobs {
			if e.id == d.jobID || e.arrayJobID == d.jobID {
				found = true
				break
			}
		}
		if !found {
			return userErr(codec.ESLURM_DEPENDENCY, "Job dependency problem")
		}
	}
	return nil
}

// pickPartition resolves -p (possibly a comma list) or the default, for
// validating the request: with a list, the first usable one.
func (c *Controller) pickPartition(spec string) (*conf.Partition, error) {
	parts := c.cluster().parts
	if spec == "" {
		for i := range parts {
			if parts[i].Default {
				return &parts[i], nil
			}
		}
		return nil, codec.Errorf(codec.ESLURM_DEFAULT_PARTITION_NOT_SET, "no default partition")
	}
	// Every name must exist (slurmctld refuses the job otherwise); the
	// first usable one is used.
	var use *conf.Partition
	for _, name := range strings.Split(spec, ",") {
		found := false
		for i := range parts {
			if parts[i].Name == name {
				found = true
				if use == nil && (parts[i].State == "UP" || parts[i].State == "DOWN") {
					use = &parts[i]
				}
			}
		}
		if !found {
			return nil, userErr(codec.ESLURM_INVALID_PARTITION_NAME, "invalid partition specified: "+name)
		}
	}
	if use == nil {
		return nil, codec.Errorf(codec.ESLURM_INVALID_PARTITION_NAME, "no usable partition in %q", spec)
	}
	return use, nil
}

// fitError is a request larger than the partition (its node count or
// its CPUs): slurmctld 22.05 and 26.05 queue such a job, waiting with
// pend as its reason (EnforcePartLimits=NO leaves partition limits to
// the scheduler); 24.11 refuses it like any other that no node set fits.
type fitError struct {
	error
	pend uint32
}

func (f fitError) Unwrap() error { return f.error }

// queuesOversize reports whether slurmctld of the client's release
// queues a request larger than its partition (22.05 and 26.05, measured
// with TestFidelity; 24.11 refuses it, and the releases between, not
// measured here, are taken as 24.11).
func queuesOversize(v uint16) bool { return v < codec.V23_02 || v >= codec.V26_05 }

// badConstraints is a refusal by fits: slurmctld 23.02+ (and 22.05 for
// what it does not queue) keep a record of such a job, FAILED with reason
// BadConstraints, before refusing it (job_allocate's "fundamental flaw").
type badConstraints struct{ error }

func (b badConstraints) Unwrap() error { return b.error }

// fits refuses requests no node set of the partition could ever satisfy,
// with the errors slurmctld gives for them.
func (c *Controller) fits(j *state.Job, p *conf.Partition) error {
	l := c.cluster().partLimits(p)
	maxCPUs, maxMem, maxGPUs, maxShards, totalCPUs := l.maxCPUs, l.maxMem, l.maxGPUs, l.maxShard, l.totalCPUs
	nodes := uint32(len(p.Nodes))
	if j.MinNodes > nodes || (p.MaxNodes != conf.Infinite && j.MinNodes > p.MaxNodes) {
		return fitError{codec.Errorf(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "%d nodes requested, partition %s has %d", j.MinNodes, p.Name, nodes), codec.WAIT_PART_NODE_LIMIT}
	}
	if uint32(j.CPUsPerTask) > maxCPUs {
		return fitError{userErr(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "CPU count per node can not be satisfied"), codec.WAIT_PART_CONFIG}
	}
	// What one node must hold: --ntasks-per-node tasks, or the job's CPUs
	// spread over at most --nodes=MAX nodes (sbatch -N1 -n30 on 16-CPU
	// nodes can never start: slurmctld refuses it at submission).
	// With -O (overcommit) the job holds one CPU per node: nothing to
	// check.
	var perNode uint32
	if tasks := uint32(j.TasksPerNode) * uint32(max(j.CPUsPerTask, 1)); j.MinCPUs >= tasks {
		perNode = tasks
	}
	if j.MaxNodes > 0 && j.MaxNodes != codec.NoVal {
		perNode = max(perNode, (j.MinCPUs+j.MaxNodes-1)/j.MaxNodes)
	}
	if perNode > maxCPUs {
		return codec.Errorf(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "%d CPUs per node requested, partition %s nodes have at most %d", perNode, p.Name, maxCPUs)
	}
	if j.MinCPUs > totalCPUs {
		// More CPUs than the partition has: slurmctld 24.11 says only
		// "Requested node configuration is not available" (sbatch -n8,
		// srun, salloc on four CPUs).
		return fitError{codec.Errorf(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "%d CPUs requested, partition %s has %d", j.MinCPUs, p.Name, totalCPUs), codec.WAIT_PART_CONFIG}
	}
	if typ := strings.ToLower(gresGPUType(j)); typ != "" {
		// A named type is matched as slurmctld matches it: only nodes
		// with GPUs of that type count.
		if g := uint64(gpusPerNode(j)); g > l.maxTyped[typ] {
			return codec.Errorf(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "%d GPUs of type %s per node requested, partition %s nodes have at most %d", g, typ, p.Name, l.maxTyped[typ])
		}
	} else if g := uint64(gpusPerNode(j)); g > maxGPUs {
		return codec.Errorf(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "%d GPUs per node requested, partition %s nodes have at most %d", g, p.Name, maxGPUs)
	}
	if sh := uint64(gresShare(j)); sh > 0 && maxShards == 0 {
		// No node of the partition shares its GPUs: slurmctld knows no
		// such gres there.
		return codec.Errorf(codec.ESLURM_INVALID_GRES, "%d GPU shards per node requested, partition %s nodes have none", sh, p.Name)
	} else if sh > maxShards {
		return codec.Errorf(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "%d GPU shards per node requested, partition %s nodes have at most %d", sh, p.Name, maxShards)
	}
	if j.MemPerNodeMB > maxMem {
		return userErr(codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL, "Memory specification can not be satisfied")
	}
	if j.MemPerCPUMB > 0 && j.MemPerCPUMB*uint64(j.CPUsPerTask) > maxMem {
		return codec.Errorf(codec.ESLURM_INVALID_TASK_MEMORY, "%d MB per CPU cannot fit", j.MemPerCPUMB)
	}
	return nil
}

// job bit flags (slurm.h) slurmctld sets on a new job.
const (
	killInvDep      = 1 << 0  // --kill-on-invalid-dep=yes
	jobNtasksSet    = 1 << 14 // --ntasks given (set by the client)
	jobCPUsSet      = 1 << 15 // --cpus-per-task given (set by the client)
	jobMemSet       = 1 << 23
	jobDependent    = 1 << 29
	jobPartAssigned = 1 << 31 // no partition requested
)

// topPriority is slurmctld's TOP_PRIORITY: priority/basic counts down
// from it, so that jobs run in the order they became eligible (squeue %Q
// shows 4294901759 for the first job, as slurmctld does).
const topPriority = 0xFFFF0000

// nextPriority is what priority/basic's set_job_prio gives a job now (at
// submission, release from a hold, requeue): one less than the lowest
// priority given so far, so a job released from a hold queues behind
// every job given a priority before it, as a new submission would. A held
// submission (priority 0) takes none. Callers hold c.mu.
func (c *Controller) nextPriority() uint32 {
	p := uint32(1)
	if c.lowestPrio >= 2 {
		p = c.lowestPrio - 1
	}
	c.lowestPrio = min(c.lowestPrio, p)
	return p
}

// recoverPriorities sets the counter from the jobs loaded at start, as
// slurmctld recovers lowest_prio from its saved jobs.
func (c *Controller) recoverPriorities() {
	c.lowestPrio = topPriority
	for _, e := range c.jobs {
		if e.priority > 0 && !codec.JobIsFinished(e.state) {
			c.lowestPrio = min(c.lowestPrio, e.priority)
		}
	}
}

// userErr is a refusal whose text slurmctld also sends to the client
// (sbatch prints it as "sbatch: error: TEXT" before the error code's).
type userError struct{ e *codec.Error }

func (u userError) Error() string { return u.e.Error() }

// Unwrap lets codec.CodeOf-style callers reach the code.
func (u userError) Unwrap() error { return u.e }

func userErr(code uint32, text string) error {
	return userError{&codec.Error{Code: code, Msg: text}}
}

// refusal answers a refused request: RESPONSE_SLURM_RC_MSG with the text
// for refusals slurmctld explains, a plain RC otherwise.
func refusal(err error, v uint16) Reply {
	var ue userError
	if !errors.As(err, &ue) {
		return rcReply(codec.CodeOf(err))
	}
	w := codec.Writer{}
	(&codec.SlurmRCMsg{RC: ue.e.Code, Message: ue.e.Msg}).Encode(&w, v)
	return Reply{MsgType: codec.RESPONSE_SLURM_RC_MSG, Body: w.B}
}

func commandOf(d *codec.JobDesc) string {
	if len(d.Argv) > 0 && d.Argv[0] != "" {
		return d.Argv[0]
	}
	return ""
}

// defaultMem gives a job that asked no memory the configured default.
func (c *Controller) defaultMem(j *state.Job, p *conf.Partition) {
	if p.DefMemPerCPU > 0 {
		j.MemPerCPUMB = p.DefMemPerCPU
		return
	}
	cfg := c.config()
	if v, err := strconv.ParseUint(cfg.Get("DefMemPerNode", ""), 10, 64); err == nil && v > 0 {
		j.MemPerNodeMB = v
	} else if v, err := strconv.ParseUint(cfg.Get("DefMemPerCPU", ""), 10, 64); err == nil && v > 0 {
		j.MemPerCPUMB = v
	}
}

// nodeMemMB is the memory a job without --mem gets: a whole node's (the
// first node of the partition, as slurmctld reports before placement).
func (c *Controller) nodeMemMB(p *conf.Partition) uint64 {
	for _, name := range p.Nodes {
		if n := c.cluster().node(name); n != nil {
			return n.RealMemory
		}
	}
	return 0
}

func tresString(j *state.Job, wholeNodeMB uint64) string {
	var b strings.Builder
	b.WriteString("cpu=" + strconv.FormatUint(uint64(j.MinCPUs), 10))
	if j.MemPerNodeMB == 0 && j.MemPerCPUMB == 0 && wholeNodeMB > 0 {
		b.WriteString(",mem=" + memString(wholeNodeMB*uint64(j.MinNodes)))
	} else if j.MemPerNodeMB > 0 {
		b.WriteString(",mem=" + memString(j.MemPerNodeMB*uint64(j.MinNodes)))
	} else if j.MemPerCPUMB > 0 {
		b.WriteString(",mem=" + memString(j.MemPerCPUMB*uint64(j.MinCPUs)))
	}
	b.WriteString(",node=" + strconv.FormatUint(uint64(j.MinNodes), 10))
	b.WriteString(",billing=" + strconv.FormatUint(uint64(j.MinCPUs), 10))
	return b.String()
}

func memString(mb uint64) string {
	switch {
	case mb%(1024*1024) == 0 && mb > 0:
		return strconv.FormatUint(mb/(1024*1024), 10) + "T"
	case mb%1024 == 0 && mb > 0:
		return strconv.FormatUint(mb/1024, 10) + "G"
	}
	return strconv.FormatUint(mb, 10) + "M"
}

func userName(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return u.Username
	}
	return ""
}

// Bounds of slurmctld's _test_job_desc_fields (read_config.h).
const (
	defaultMaxScript     = 4 << 20 // DEFAULT_BATCH_SCRIPT_LIMIT
	defaultMaxSubmitLine = 1 << 20 // DEFAULT_MAX_SUBMIT_LINE_SIZE
	pathMax              = 4096    // PATH_MAX
)

// testJobDescFields refuses job descriptions with strings longer than
// slurmctld accepts (ESLURM_PATHNAME_TOO_LONG, as it answers): a request
// is up to codec.MaxFrame bytes, and what is accepted is kept (the script
// in the store and in the engine's spool). SchedulerParameters
// max_script_size= and max_submit_line_size= change two of the bounds.
func (c *Controller) testJobDescFields(d *codec.JobDesc, v uint16) error {
	sp := c.config().Get("SchedulerParameters", "")
	maxScript := schedParamInt(sp, "max_script_size=", defaultMaxScript)
	maxLine := schedParamInt(sp, "max_submit_line_size=", defaultMaxSubmitLine)
	fields := []struct {
		name string
		val  string
		max  int
	}{
		{"account", d.Account, 1024}, {"alloc_node", d.AllocNode, 1024}, {"array_inx", d.ArrayInx, 4 << 10},
		{"burst_buffer", d.BurstBuffer, 8 << 10}, {"comment", d.Comment, 1024}, {"cpu-bind", d.CPUBind, 128 << 10},
		{"cpus_per_tres", d.CPUsPerTRES, 1024}, {"dependency", d.Dependency, 128 << 10},
		{"features", d.Features, 1024}, {"cluster_features", d.ClusterFeatures, 1024}, {"licenses", d.Licenses, 1024},
		{"mail_user", d.MailUser, 1024}, {"mcs_label", d.MCSLabel, 1024}, {"mem-bind", d.MemBind, 128 << 10},
		{"mem_per_tres", d.MemPerTRES, 1024}, {"name", d.Name, 1024}, {"network", d.Network, 1024},
		{"partition", d.Partition, 1024}, {"prefer", d.Prefer, 1024}, {"qos", d.QOS, 1024},
		{"reservation", d.Reservation, 1024}, {"script", d.Script, maxScript},
		{"std_err", d.StdErr, pathMax}, {"std_in", d.StdIn, pathMax}, {"std_out", d.StdOut, pathMax},
		{"submit_line", d.SubmitLine, maxLine}, {"tres_bind", d.TRESBind, 1024}, {"tres_freq", d.TRESFreq, 1024},
		{"tres_per_job", d.TRESPerJob, 1024}, {"tres_per_node", d.TRESPerNode, 1024},
		{"tres_per_socket", d.TRESPerSocket, 1024}, {"tres_per_task", d.TRESPerTask, 1024},
		{"wckey", d.Wckey, 1024}, {"work_dir", d.WorkDir, pathMax},
	}
	for _, f := range fields {
		if len(f.val) > f.max {
			return codec.Errorf(codec.ESLURM_PATHNAME_TOO_LONG, "strlen(%s) too big (%d > %d)", f.name, len(f.val), f.max)
		}
	}
	if v >= codec.V23_02 && len(d.Extra) > 1024 { // "extra" is checked from 23.02 on
		return codec.Errorf(codec.ESLURM_PATHNAME_TOO_LONG, "strlen(extra) too big (%d > 1024)", len(d.Extra))
	}
	return nil
}

// schedParamInt reads "key=N" from SchedulerParameters as slurmctld does
// (atoi after a case-insensitive match), or def.
func schedParamInt(sp, key string, def int) int {
	i := strings.Index(strings.ToLower(sp), key)
	if i < 0 {
		return def
	}
	rest := sp[i+len(key):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	v, _ := strconv.Atoi(rest[:n])
	return v
}
