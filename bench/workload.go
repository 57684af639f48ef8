package bench

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// Step is one RPC of an operation: the request (its body is fixed, only
// the credential changes per send) and the reply a healthy controller
// gives.
type Step struct {
	Name    string // e.g. "JOB_INFO"
	MsgType uint16
	AuthUID uint32 // credential restriction (munge.UIDAny, or SlurmUser for ping)
	Body    []byte
	Expect  uint16 // reply message type
	// Cancel: the body is a REQUEST_KILL_JOB of the job this worker
	// submitted last (made per send; a worker with none submits one
	// first, in the same operation).
	Cancel bool
}

// Workload is a kind of operation. An operation is a sequence of RPCs (a
// squeue is JOB_INFO then PARTITION_INFO); the mix picks one RPC per
// operation by weight.
type Workload struct {
	Name  string
	Doc   string
	Steps []Step // fixed sequence (Weights nil)
	Mix   []Step // or: one of these per operation
	Cum   []int  // cumulative weights for Mix
}

// weigh makes w a mix of steps by weight, and says what it is.
func (w *Workload) weigh(steps map[string]Step, weights []Weight) string {
	var parts []string
	cum := 0
	for _, m := range weights {
		w.Mix = append(w.Mix, steps[m.Name])
		cum += m.Weight
		w.Cum = append(w.Cum, cum)
		parts = append(parts, fmt.Sprintf("%s %d%%", m.Name, m.Weight))
	}
	return strings.Join(parts, ", ")
}

// KillBody is REQUEST_KILL_JOB's body for scancel ID (SIGKILL), as the
// stock scancel of version v sends it.
func KillBody(v uint16, id uint32) []byte {
	m := codec.KillJobRequest{StepID: codec.JobStepID{JobID: codec.NoVal, StepID: codec.NoVal, StepHetComp: codec.NoVal},
		SJobID: fmt.Sprint(id), Signal: 9}
	return encode(v, &m)
}

// ops returns the steps of the next operation.
func (w *Workload) ops(r *rand.Rand) []Step {
	if w.Mix == nil {
		return w.Steps
	}
	x := r.IntN(w.Cum[len(w.Cum)-1])
	i := sort.SearchInts(w.Cum, x+1)
	return w.Mix[i : i+1]
}

// StepTypes lists every distinct RPC the workload sends.
func (w *Workload) StepTypes() []Step {
	if w.Mix != nil {
		return w.Mix
	}
	return w.Steps
}

// Show flags stock clients send (from the 24.11 captures in
// codec/testdata): squeue asks for jobs with SHOW_LOCAL and for
// partitions with SHOW_ALL|SHOW_LOCAL; sinfo asks for both with
// SHOW_LOCAL (|SHOW_MIXED from 23.02 on).
const (
	showAll   = 0x01
	showMixed = 0x08
	showLocal = 0x10
)

func encode(v uint16, m interface {
	Encode(w *codec.Writer, version uint16)
}) []byte {
	var w codec.Writer
	m.Encode(&w, v)
	if w.B == nil {
		return []byte{}
	}
	return w.B
}

// SqueueJobInfo is the REQUEST_JOB_INFO body of a stock squeue.
func SqueueJobInfo(v uint16) []byte {
	return encode(v, &codec.JobInfoRequest{ShowFlags: showLocal})
}

// SqueuePartInfo is the REQUEST_PARTITION_INFO body of a stock squeue.
func SqueuePartInfo(v uint16) []byte {
	return encode(v, &codec.PartitionInfoRequest{ShowFlags: showAll | showLocal})
}

// sinfoFlags: the 22.05 sinfo sends SHOW_LOCAL, the 24.11 and 26.05
// ones SHOW_LOCAL|SHOW_MIXED (captures); releases in between are
// assumed to be like 24.11.
func sinfoFlags(v uint16) uint16 {
	if v < codec.V23_02 {
		return showLocal
	}
	return showMixed | showLocal
}

// SinfoPartInfo is sinfo's REQUEST_PARTITION_INFO body.
func SinfoPartInfo(v uint16) []byte {
	return encode(v, &codec.PartitionInfoRequest{ShowFlags: sinfoFlags(v)})
}

// SinfoNodeInfo is sinfo's REQUEST_NODE_INFO body.
func SinfoNodeInfo(v uint16) []byte {
	return encode(v, &codec.NodeInfoRequest{ShowFlags: sinfoFlags(v)})
}

// HeldJobDesc is the job descriptor of `sbatch --hold -o /tmp/job-%j.out
// --wrap "sleep 100"` as the stock 24.11 sbatch sends it (identical to
// codec/testdata/slurm-24.11/sbatch-24.11.pcap, environment included).
// RunnableJobDesc is HeldJobDesc without the hold: the engine starts it.
func RunnableJobDesc() codec.JobDesc {
	d := HeldJobDesc()
	d.Priority = codec.NoVal
	d.SubmitLine = "sbatch -o /tmp/job-%j.out --wrap sleep 100"
	return d
}

func HeldJobDesc() codec.JobDesc {
	d := codec.NewJobDesc()
	d.Contiguous = 0
	d.TaskDist = 0x2000 // SLURM_DIST_UNKNOWN
	d.OOMKillStep = codec.NoVal16
	d.AllocSID = 1395
	d.MemBindType = 0
	d.MinCPUs = 1
	d.ResvPortCnt = codec.NoVal16
	d.MailType = 0
	d.Bitflags = 503316480 // USE_DEFAULT_ACCT|PART|QOS|WCKEY
	d.Priority = 0         // --hold
	d.Name = "wrap"
	d.Script = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nsleep 100\n"
	d.StdIn = "/dev/null"
	d.StdOut = "/tmp/job-%j.out"
	d.SubmitLine = "sbatch --hold -o /tmp/job-%j.out --wrap sleep 100"
	d.WorkDir = "/"
	d.Environment = []string{
		"HOME=/root", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "TERM=xterm",
		"USER=root", "LOGNAME=root", "SLURM_CONF=/var/lib/realslurm/p16817/slurm.conf",
		"SLURM_RLIMIT_CPU=18446744073709551615", "SLURM_RLIMIT_FSIZE=18446744073709551615",
		"SLURM_RLIMIT_DATA=18446744073709551615", "SLURM_RLIMIT_STACK=8388608", "SLURM_RLIMIT_CORE=0",
		"SLURM_RLIMIT_RSS=18446744073709551615", "SLURM_RLIMIT_NPROC=96364", "SLURM_RLIMIT_NOFILE=20000",
		"SLURM_RLIMIT_MEMLOCK=8388608", "SLURM_RLIMIT_AS=18446744073709551615", "SLURM_PRIO_PROCESS=0",
		"SLURM_SUBMIT_DIR=/", "SLURM_SUBMIT_HOST=vm", "SLURM_UMASK=0022",
		"OMPI_MCA_plm_slurm_args=--external-launcher", "PRTE_MCA_plm_slurm_args=--external-launcher",
		"HYDRA_BOOTSTRAP=slurm", "HYDRA_LAUNCHER_EXTRA_ARGS=--external-launcher",
		"I_MPI_HYDRA_BOOTSTRAP=slurm", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS=--external-launcher",
	}
	return d
}

// Mix weights: a busy site's sdiag "Remote Procedure Call statistics by
// message type" is dominated by pollers (squeue, sinfo, dashboards and
// job-status scripts): JOB_INFO and PARTITION_INFO (every squeue sends
// both; sinfo and many other clients ask for partitions), then NODE_INFO
// (sinfo, monitoring), pings (scontrol ping, health checks) and a few
// percent of submissions. Each mix operation is one RPC drawn with these
// weights (percent). Submissions are held jobs, so the queue grows by
// about 2 % of the RPC rate while a mix runs.
var MixWeights = []Weight{
	{"JOB_INFO", 45},
	{"PARTITION_INFO", 35},
	{"NODE_INFO", 10},
	{"PING", 8},
	{"SUBMIT_BATCH_JOB", 2},
}

// Weight is an RPC's share of a mix, in percent.
type Weight struct {
	Name   string
	Weight int
}

// Workloads lists the workload names.
var Workloads = []string{"squeue", "jobstate", "sinfo", "ping", "sbatch", "mix", "storm"}

// StormWeights is the mixed storm of reads and writes at once: squeue
// pollers, submitters and cancellers (each canceller ends a job its
// worker submitted). Each RPC's latency is reported apart, so squeue's
// p99 during the writes shows next to a read-only storm's.
var StormWeights = []Weight{
	{"JOB_INFO", 50},
	{"PARTITION_INFO", 20},
	{"SUBMIT_BATCH_JOB", 20},
	{"KILL_JOB", 10},
}

// NewWorkload builds a workload for protocol version v. slurmUID is the
// controller's SlurmUser uid (REQUEST_PING credentials are restricted
// to it, as scontrol does).
func NewWorkload(name string, v uint16, slurmUID uint32) (*Workload, error) {
	jd := HeldJobDesc()
	steps := map[string]Step{
		"JOB_INFO":         {Name: "JOB_INFO", MsgType: codec.REQUEST_JOB_INFO, AuthUID: munge.UIDAny, Body: SqueueJobInfo(v), Expect: codec.RESPONSE_JOB_INFO},
		"PARTITION_INFO":   {Name: "PARTITION_INFO", MsgType: codec.REQUEST_PARTITION_INFO, AuthUID: munge.UIDAny, Body: SqueuePartInfo(v), Expect: codec.RESPONSE_PARTITION_INFO},
		"NODE_INFO":        {Name: "NODE_INFO", MsgType: codec.REQUEST_NODE_INFO, AuthUID: munge.UIDAny, Body: SinfoNodeInfo(v), Expect: codec.RESPONSE_NODE_INFO},
		"PING":             {Name: "PING", MsgType: codec.REQUEST_PING, AuthUID: slurmUID, Body: []byte{}, Expect: codec.RESPONSE_SLURM_RC},
		"SUBMIT_BATCH_JOB": {Name: "SUBMIT_BATCH_JOB", MsgType: codec.REQUEST_SUBMIT_BATCH_JOB, AuthUID: munge.UIDAny, Body: encode(v, &jd), Expect: codec.RESPONSE_SUBMIT_BATCH_JOB},
		"KILL_JOB":         {Name: "KILL_JOB", MsgType: codec.REQUEST_KILL_JOB, AuthUID: munge.UIDAny, Expect: codec.RESPONSE_SLURM_RC, Cancel: true},
	}
	w := &Workload{Name: name}
	switch name {
	case "squeue":
		w.Doc = "stock squeue: REQUEST_JOB_INFO (show_flags SHOW_LOCAL) then REQUEST_PARTITION_INFO (SHOW_ALL|SHOW_LOCAL), each on its own connection; one operation = both replies complete"
		w.Steps = []Step{steps["JOB_INFO"], steps["PARTITION_INFO"]}
	case "jobstate":
		if v < codec.V24_05 {
			return nil, fmt.Errorf("workload jobstate: REQUEST_JOB_STATE is 24.05+ (squeue --only-job-state), not %s", codec.VersionName(v))
		}
		w.Doc = "squeue --only-job-state: REQUEST_JOB_STATE with no job ids (every job's id and state), answered by RESPONSE_JOB_STATE; no partition listing"
		w.Steps = []Step{{Name: "JOB_STATE", MsgType: codec.REQUEST_JOB_STATE, AuthUID: munge.UIDAny, Body: encode(v, &codec.JobStateRequest{}), Expect: codec.RESPONSE_JOB_STATE}}
	case "sinfo":
		w.Doc = "stock sinfo: REQUEST_PARTITION_INFO then REQUEST_NODE_INFO (SHOW_LOCAL|SHOW_MIXED), each on its own connection"
		part := steps["PARTITION_INFO"]
		part.Body = SinfoPartInfo(v)
		w.Steps = []Step{part, steps["NODE_INFO"]}
	case "ping":
		w.Doc = "scontrol ping: REQUEST_PING (credential restricted to SlurmUser) answered by RESPONSE_SLURM_RC 0"
		w.Steps = []Step{steps["PING"]}
	case "sbatch":
		w.Doc = "sbatch --hold --wrap 'sleep 100': REQUEST_SUBMIT_BATCH_JOB (1,470-byte job_desc) answered by RESPONSE_SUBMIT_BATCH_JOB (error_code 0 or ESLURM_JOB_HELD)"
		w.Steps = []Step{steps["SUBMIT_BATCH_JOB"]}
	case "mix":
		w.Doc = "busy site (sdiag-style), one RPC per operation: " + w.weigh(steps, MixWeights) + " (squeue's JOB_INFO/PARTITION_INFO bodies, sinfo's NODE_INFO, held submissions)"
	case "storm":
		w.Doc = "mixed storm, one RPC per operation: " + w.weigh(steps, StormWeights) + " (squeue's bodies; held submissions; each KILL_JOB (scancel) ends the job its worker submitted last)"
	default:
		return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(Workloads, ", "))
	}
	return w, nil
}
