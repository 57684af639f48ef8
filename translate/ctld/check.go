package ctld

import (
	"errors"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
)

// Difference is a job_desc field the frontend accepts and keeps but does
// not act on as a slurmctld with the matching plugin would: the job runs,
// without that effect. These are the "kept as hints" rows of the table in
// doc_jobdesc.go; the audit reports them, and a submission that uses one
// is logged (debug) so an operator can see who relies on it.
type Difference struct {
	Option string // the client option that sets the field ("--tmp")
	Text   string // what the job gets instead
}

// hint is one row of the table: set reports whether the field was sent
// (the clients leave each at slurm_init_job_desc_msg's unset value
// otherwise).
type hint struct {
	option, text string
	set          func(d *codec.JobDesc) bool
}

// distUnknown is SLURM_DIST_UNKNOWN, what the clients send without -m.
const distUnknown = 0x2000

func set16(v uint16) bool { return v != codec.NoVal16 }
func set32(v uint32) bool { return v != codec.NoVal }

// hints are the fields kept without effect. (--wait-all-nodes and
// --delay-boot are not among them: nodes here are always booted, so a
// job that waits for its nodes starts when placed, as there.) Each is what a slurmctld
// without the plugin that acts on it does too (so the job is accepted as
// there), or what the engine places by itself (task layout and binding).
var hints = []hint{
	{"--cpu-freq", "kept; CPU frequency and governor are left to the node (no cpufreq control)",
		func(d *codec.JobDesc) bool {
			return set32(d.CPUFreqMin) || set32(d.CPUFreqMax) || set32(d.CPUFreqGov)
		}},
	{"--gpu-freq", "kept; GPU clocks are left to the node", func(d *codec.JobDesc) bool { return d.TRESFreq != "" }},
	{"--profile", "kept; no profiling data is gathered (AcctGatherProfileType=none)", func(d *codec.JobDesc) bool { return d.Profile != 0 && d.Profile != codec.NoVal }},
	{"--acctg-freq", "kept; usage is sampled at the engine's own interval", func(d *codec.JobDesc) bool { return d.AcctgFreq != "" }},
	{"--network", "kept; no network plugin acts on it", func(d *codec.JobDesc) bool { return d.Network != "" }},
	{"--wckey", "kept and shown; no workload characterization keys are tracked", func(d *codec.JobDesc) bool { return d.Wckey != "" }},
	{"--mcs-label", "kept; no MCS plugin groups jobs", func(d *codec.JobDesc) bool { return d.MCSLabel != "" }},
	{"--prefer", "kept; preferred features do not order placement", func(d *codec.JobDesc) bool { return d.Prefer != "" }},
	{"--tmp", "kept; local disk space is not a placement constraint", func(d *codec.JobDesc) bool { return set32(d.PnMinTmpDisk) && d.PnMinTmpDisk != 0 }},
	{"--mincpus", "kept; placement counts the tasks' CPUs", func(d *codec.JobDesc) bool {
		// The clients set it themselves to the CPUs a node's tasks
		// need (-c times --ntasks-per-node); only more is a request.
		perNode := uint32(1)
		if set16(d.CPUsPerTask) && d.CPUsPerTask > 0 {
			perNode = uint32(d.CPUsPerTask)
		}
		if set16(d.NtasksPerNode) && d.NtasksPerNode > 0 {
			perNode *= uint32(d.NtasksPerNode)
		}
		return set16(d.PnMinCPUs) && uint32(d.PnMinCPUs) > perNode
	}},
	{"--distribution", "kept; tasks are laid out by the engine (block)", func(d *codec.JobDesc) bool {
		return set32(d.TaskDist) && d.TaskDist != 0 && d.TaskDist != distUnknown
	}},
	{"--cpu-bind", "kept; tasks are not bound to CPUs beyond the job's cgroup", func(d *codec.JobDesc) bool {
		return d.CPUBind != "" || (set16(d.CPUBindType) && d.CPUBindType != 0)
	}},
	{"--mem-bind", "kept; memory is not bound to NUMA nodes", func(d *codec.JobDesc) bool {
		return d.MemBind != "" || (set16(d.MemBindType) && d.MemBindType != 0)
	}},
	{"--ntasks-per-socket", "kept; no socket layout", func(d *codec.JobDesc) bool { return set16(d.NtasksPerSocket) }},
	{"--ntasks-per-core", "kept; no core layout", func(d *codec.JobDesc) bool { return set16(d.NtasksPerCore) }},
	{"--ntasks-per-gpu", "kept; tasks are not spread by GPU", func(d *codec.JobDesc) bool { return set16(d.NtasksPerTRES) }},
	{"--sockets-per-node", "kept; nodes are chosen by CPU count", func(d *codec.JobDesc) bool { return set16(d.SocketsPerNode) }},
	{"--cores-per-socket", "kept; nodes are chosen by CPU count", func(d *codec.JobDesc) bool { return set16(d.CoresPerSocket) }},
	{"--threads-per-core", "kept; nodes are chosen by CPU count", func(d *codec.JobDesc) bool { return set16(d.ThreadsPerCore) }},
	{"--gpus-per-socket", "kept as GPUs per node", func(d *codec.JobDesc) bool { return d.TRESPerSocket != "" }},
	{"--cpus-per-gpu", "kept; CPUs are counted per task", func(d *codec.JobDesc) bool { return d.CPUsPerTRES != "" }},
	{"--mem-per-gpu", "kept; memory is counted per node or CPU", func(d *codec.JobDesc) bool { return d.MemPerTRES != "" }},
	{"--gpu-bind", "kept; GPUs are given to the job, not bound per task", func(d *codec.JobDesc) bool { return d.TRESBind != "" }},
	{"--oversubscribe", "kept; the engine shares nodes by free CPUs", func(d *codec.JobDesc) bool { return d.Shared != codec.NoVal16 && d.Shared != 0 }},
	{"--no-kill", "kept; a job whose node fails ends (NODE_FAIL)", func(d *codec.JobDesc) bool { return set16(d.KillOnNodeFail) && d.KillOnNodeFail == 0 }},
	{"--cluster-constraint", "kept; one cluster", func(d *codec.JobDesc) bool { return d.ClusterFeatures != "" }},
	{"--batch", "kept; the batch script runs on the job's first node", func(d *codec.JobDesc) bool { return d.BatchFeatures != "" }},
	{"--extra", "kept and shown", func(d *codec.JobDesc) bool { return d.Extra != "" }},
}

// differences lists the hints d uses, then what the engine does
// differently for the job j it makes.
func (c *Controller) differences(d *codec.JobDesc, j *state.Job) []Difference {
	var out []Difference
	for _, h := range hints {
		if h.set(d) {
			out = append(out, Difference{Option: h.option, Text: h.text})
		}
	}
	if dn, ok := c.opt.Backend.(translate.Differ); ok {
		spec := sessionShape(j)
		for _, e := range dn.Differences(&spec) {
			out = append(out, Difference{Option: e.Option, Text: e.Text})
		}
	}
	return out
}

// CheckSubmit is the answer a submission of d (sbatch, with a client of
// protocol version v, by uid/gid from the host at origin) would get,
// without keeping anything: the checks of REQUEST_SUBMIT_BATCH_JOB
// themselves (translateJobDesc), then the accepted fields the job would
// run without. A dependency on a job the server does not know is taken
// as one on a job that will exist: an audited script's dependencies are
// made when it runs. The error carries the Slurm code and, where
// slurmctld sends one, the text the client prints (RefusalText).
func (c *Controller) CheckSubmit(d *codec.JobDesc, uid, gid uint32, v uint16) ([]Difference, error) {
	req := &Request{Version: v, MsgType: codec.REQUEST_SUBMIT_BATCH_JOB, UID: uid, GID: gid, Origin: [4]byte{127, 0, 0, 1}}
	j, _, err := c.translateJobDescFor(req, d, true)
	if err != nil {
		return nil, err
	}
	return c.differences(d, j), nil
}

// CheckAllocation is CheckSubmit for an allocation (salloc, or srun
// outside one): REQUEST_RESOURCE_ALLOCATION's checks.
func (c *Controller) CheckAllocation(d *codec.JobDesc, uid, gid uint32, v uint16) ([]Difference, error) {
	req := &Request{Version: v, MsgType: codec.REQUEST_RESOURCE_ALLOCATION, UID: uid, GID: gid, Origin: [4]byte{127, 0, 0, 1}}
	a := *d
	j, _, err := c.checkAllocation(req, &a, true)
	if err != nil {
		return nil, err
	}
	return c.differences(d, j), nil
}

// RefusalText is the message slurmctld sends with a refusal (the client
// prints it before the code's own text), or "".
func RefusalText(err error) string {
	var ue userError
	if errors.As(err, &ue) {
		return ue.e.Msg
	}
	return ""
}

// logDifferences says, at debug level, which accepted options a
// submission uses that its job runs without.
func (c *Controller) logDifferences(uid uint32, diffs []Difference) {
	opts := make([]string, len(diffs))
	for i, d := range diffs {
		opts[i] = d.Option
	}
	c.logf("debug: submit from uid %d: %s kept without their Slurm effect (see slurm-frontend audit)", uid, strings.Join(opts, " "))
}

// CheckHetSubmit is the answer to a heterogeneous batch job (sbatch with
// "#SBATCH hetjob" or ":" components): what the server answers
// REQUEST_SUBMIT_BATCH_HET_JOB with.
func (c *Controller) CheckHetSubmit() error {
	if _, ok := knownUnsupported[codec.REQUEST_SUBMIT_BATCH_HET_JOB]; ok {
		return codec.Errorf(codec.ESLURM_NOT_SUPPORTED, "heterogeneous jobs are not supported: submit the components as separate jobs")
	}
	return nil
}
