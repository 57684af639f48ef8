package ctld

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// jobInfo renders a job as slurmctld's job_info record. Values that
// Backend.AI does not model take slurmctld's defaults for a plain batch
// job, checked field by field against real captures (see jobinfo_test).
func (c *Controller) jobInfo(s *Snapshot, j *state.Job, v uint16, detail bool) codec.JobInfo {
	ji := codec.JobInfo{
		JobID: j.ID, ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, ArrayMaxTasks: j.ArrayMax,
		HetJobOffset: codec.NoVal, UserID: j.UserID, GroupID: j.GroupID,
		JobState: j.State, StateReason: j.Reason, BatchFlag: batchFlag(j), Bitflags: j.DescFlags,
		ExitCode: j.ExitCode, Priority: j.Priority, SiteFactor: codec.NiceOffset,
		BillableTRES: float64(codec.NoVal), StartProtocolVer: j.ProtoVersion,
		SubmitTime: j.SubmitTime, EligibleTime: j.EligibleTime, AccrueTime: j.AccrueTime, StartTime: j.StartTime, EndTime: j.EndTime,
		LastSchedEval: j.SubmitTime, Deadline: j.Deadline, TimeLimit: j.TimeLimit, TimeMin: j.TimeMin,
		Nice: codec.NiceToWire(j.Nice), Account: j.Account, AllocNode: j.AllocNode,
		Cluster: c.opt.ClusterName, Comment: j.Comment, Container: j.Container,
		MailType: j.MailType, MailUser: j.MailUser, Name: j.Name, Network: j.Network,
		Nodes: j.Nodes, Partition: j.Partition, QOS: j.QOS, TRESReqStr: j.TresReqStr,
		TRESAllocStr: j.TresAllocStr, TRESPerNode: j.TresPerNode, TRESPerJob: j.TresPerJob,
		TRESPerTask: j.TresPerTask, BatchHost: j.BatchHost,
		CPUFreqMin: codec.NoVal, CPUFreqMax: codec.NoVal, CPUFreqGov: codec.NoVal,
		Dependency: s.dependencyDisplay(j), NTasksPerNode: j.TasksPerNode, Requeue: 1,
		WorkDir: j.WorkDir, Features: j.Features, Command: j.Command,
		NumCPUs: j.MinCPUs, NumNodes: j.MinNodes, MaxNodes: j.MaxNodes, NumTasks: j.NumTasks,
		Shared: codec.NoVal16, CoreSpec: codec.NoVal16, CPUsPerTask: j.CPUsPerTask,
		PnMinCPUs: j.CPUsPerTask, PnMinMemory: j.MemPerNodeMB, OOMKillStep: codec.NoVal16,
		ReqNodes: j.ReqNodes, ExcNodes: j.ExcNodes, StdErr: j.StdErr, StdIn: j.StdIn, StdOut: j.StdOut,
		SelectPluginID: 109,
		MC: &codec.JobMultiCore{
			// What slurmctld keeps for a job that asked for no layout.
			SocketsPerNode: codec.NoVal16, CoresPerSocket: codec.NoVal16, ThreadsPerCore: codec.NoVal16,
			NTasksPerSocket: codec.Infinite16, NTasksPerCore: codec.Infinite16,
		},
	}
	if j.ArrayTasks != "" && j.ArrayTaskID == codec.NoVal {
		// The pending tasks travel as a hex bitmap ("0xE" for 1-3);
		// squeue prints them as 123_[1-3%2].
		if a, err := parseArray(j.ArrayTasks, maxArrayIndex); err == nil {
			ji.ArrayTaskStr = a.hex()
			ji.ArrayMaxTasks = a.limit
		}
	}
	if j.NoRequeue {
		// slurmctld reports the cluster default (JobRequeue=1) unless
		// the job said --no-requeue.
		ji.Requeue = 0
	}
	if j.MailUser == "" {
		ji.MailUser = j.UserName
	}
	if ji.StdIn == "" {
		ji.StdIn = "/dev/null"
	}
	if j.MemPerCPUMB > 0 {
		ji.PnMinMemory = j.MemPerCPUMB | codec.MemPerCPU
	}
	if j.Exclusive {
		ji.Shared = 0
	}
	if j.Contiguous {
		ji.Contiguous = 1
	}
	if j.MaxNodes == 0 && !(codec.JobIsPending(j.State) && unevaluated(j)) {
		switch {
		case v >= codec.V25_11:
			// 25.11+ slurmctld caps an unset node count at the task
			// count (JOB_IMPLICIT_MAX_NODES): NumNodes=1-2 for -n 2.
			ji.MaxNodes = j.NumTasks
		case v >= codec.V23_02 && j.DescFlags&jobNtasksSet == 0:
			// 23.02-25.05 settle on the minimum unless -n was given.
			ji.MaxNodes = j.MinNodes
		}
	}
	if codec.JobIsPending(j.State) {
		ji.NumNodes = c.pendingNodeEstimate(j)
		if j.BeginTime > 0 && j.Priority != 0 && (j.Reason == codec.WAIT_TIME || j.Reason == codec.WAIT_NO_REASON) {
			// Waiting for its --begin (or the requeue delay): slurmctld
			// accrues age from it without accounting limits, and its
			// scheduler expects the job to start then.
			if ji.AccrueTime == 0 {
				ji.AccrueTime = j.BeginTime
			}
			ji.StartTime = j.BeginTime
		}
	}
	if ji.StdOut == "" && v >= codec.V25_11 {
		// From 25.11 slurmctld stores the default output pattern itself.
		if j.ArrayTasks != "" {
			ji.StdOut = "slurm-%A_%a.out"
		} else {
			ji.StdOut = "slurm-%j.out"
		}
	}
	if ji.TimeMin == codec.NoVal {
		ji.TimeMin = 0
	}
	ji.AllocSID = j.AllocSID
	ji.RestartCnt = j.Restarts
	ji.SubmitLine = j.SubmitLine
	if j.Nodes != "" {
		if names, err := hostlist.Expand(j.Nodes); err == nil {
			var idx []int
			for _, n := range names {
				if i := s.cl.nodeIndex(n); i >= 0 {
					idx = append(idx, i)
				}
			}
			ji.NodeInx = codec.NewHexBits(len(s.cl.nodes), idx...)
		}
	}
	if ji.TimeLimit == codec.NoVal {
		ji.TimeLimit = conf.Infinite
	}
	if !c.accountingOn() && (v < codec.V24_11 || !codec.JobIsPending(j.State)) {
		// Without accounting a job has no QOS record: slurmctld shows
		// none, except that 24.11+ show a pending job's requested one.
		ji.QOS = ""
	}
	if codec.JobIsPending(j.State) && (j.Reason == codec.WAIT_PRIORITY || j.Reason == codec.WAIT_RESOURCES) {
		// An eligible job its nodes keep from running (drained, down):
		// what slurmctld's scheduler says of it (nodeadmin.go). Records
		// of pending jobs are encoded again when node availability
		// changes (jobChunk.availGen).
		if r, desc, ok := s.cl.blockedReason(j, v); ok {
			ji.StateReason, ji.StateDesc = r, desc
		}
	}
	if j.HeldBy == heldRequeued && codec.JobIsPending(j.State) {
		ji.StateDesc = "job requeued in held state"
	}
	if j.State&codec.JOB_STATE_BASE == codec.JOB_NODE_FAIL && j.Reason == codec.FAIL_DOWN_NODE {
		if v >= codec.V23_02 {
			// The node that failed (slurmctld's failed_node): the
			// job's first, where it ran its batch script.
			ji.FailedNode = j.BatchHost
			if ji.FailedNode == "" {
				ji.FailedNode, _, _ = strings.Cut(j.Nodes, ",")
			}
		}
		if v >= codec.V24_11 {
			// 24.11+ end a job on a failed node with exit code 1;
			// before, its batch script's end status stands.
			ji.ExitCode = 1
		}
	}
	if j.Reason == codec.FAIL_SIGNAL {
		if v < codec.V23_02 {
			// 22.05 has no FAIL_SIGNAL (its 33 is BlockMaxError): its
			// slurmctld gives a job its signal ended FAIL_LAUNCH.
			ji.StateReason = codec.FAIL_LAUNCH
		} else if j.ExitCode&0x7f != 0 {
			// 23.02+ describe it (job_mgr.c: "RaisedSignal:%d(%s)"
			// with strsignal).
			ji.StateDesc = raisedSignal(int(j.ExitCode & 0x7f))
		}
	}
	return ji
}

// unevaluated reports whether slurmctld would not yet have tried to
// place a pending job: one waiting on a dependency or its begin time,
// released (None), or over its partition's time limit never reaches
// select_nodes, which is what sets its maximum node count (scontrol shows
// NumNodes=1 then, 1-1 once tried).
func unevaluated(j *state.Job) bool {
	switch j.Reason {
	case codec.WAIT_DEPENDENCY, codec.WAIT_DEP_INVALID, codec.WAIT_TIME, codec.WAIT_NO_REASON, codec.WAIT_PART_TIME_LIMIT:
		return true
	}
	return false
}

// raisedSignal is slurmctld's state_desc for a job ended by signal sig:
// glibc's strsignal text, which is Go's with a capital first letter.
func raisedSignal(sig int) string {
	name := syscall.Signal(sig).String()
	switch {
	case sig >= 34 && sig <= 64:
		name = "Real-time signal " + strconv.Itoa(sig-34)
	case name != "":
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	return "RaisedSignal:" + strconv.Itoa(sig) + "(" + name + ")"
}

// pendingNodeEstimate is the node count slurmctld reports for a pending
// job: at least the requested minimum, and enough nodes of the
// partition's largest CPU count to hold the tasks.
func (c *Controller) pendingNodeEstimate(j *state.Job) uint32 {
	n := j.MinNodes
	var maxCPUs uint32
	first, _, _ := strings.Cut(j.Partition, ",")
	cl := c.cluster()
	for i := range cl.parts {
		if cl.parts[i].Name == first {
			// The cluster's limits, worked out once per topology: a
			// walk of the partition's nodes per job was most of
			// encoding 100,000 pending jobs over 2,000 nodes.
			maxCPUs = max(maxCPUs, cl.partLimits(&cl.parts[i]).maxCPUs)
		}
	}
	if maxCPUs == 0 {
		return n
	}
	var est uint32
	switch {
	case j.TasksPerNode > 0:
		est = j.NumTasks / uint32(j.TasksPerNode)
	case j.CPUsPerTask > 1:
		perNode := max(maxCPUs/uint32(j.CPUsPerTask), 1)
		est = (j.NumTasks + perNode - 1) / perNode
	default:
		est = (j.NumTasks + maxCPUs - 1) / maxCPUs
	}
	return max(n, est)
}

// batchFlag is 1 for a batch job; 0 for one that shows a session made
// outside the frontend (it has no script, as an salloc job has none).
func batchFlag(j *state.Job) uint16 {
	if j.Origin != "" {
		return 0
	}
	return 1
}
