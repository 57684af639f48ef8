package ctld

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Show flags (slurm.h).
const (
	showAll    = 0x0001
	showDetail = 0x0002
	showLocal  = 0x0010
)

// fastInfo answers the read RPCs. Request decoders allocate nothing;
// whole replies come prebuilt from the snapshot. On the event loop
// (mayBlock false) a job listing is served only when it can be without
// I/O or a large encode: from a listing already built. One that is not
// (the first squeue after a change, flags without a cached listing, held
// or finished jobs kept only in the store) is declined (ok false) and
// answered by a worker, which calls fastInfo again with mayBlock.
func (c *Controller) fastInfo(s *Snapshot, req *Request, mayBlock bool) (Reply, bool) {
	r := codec.NewReader(req.Body)
	v := req.Version
	switch req.MsgType {
	case codec.REQUEST_JOB_INFO:
		var m codec.JobInfoRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		if unchanged(m.LastUpdate, s.JobsUpdate) {
			return s.rc(v, codec.SLURM_NO_CHANGE_IN_DATA), true
		}
		if m.JobIDsSet && m.JobIDs.Len() > 0 {
			return s.jobInfoIDs(v, m.ShowFlags, m.JobIDs.Len(), m.JobIDs.At, req.UID, false, mayBlock)
		}
		if c.hides(privateJobs, req.UID) {
			// PrivateData=jobs: the caller's own jobs, a count of what
			// is sent (pack_all_jobs skips the others silently).
			return s.listPositions(v, m.ShowFlags, s.userJobs(req.UID), mayBlock)
		}
		if echo, ok := listing(v, m.ShowFlags); ok {
			jr := s.recordsFor(v, echo, mayBlock)
			if jr == nil {
				return Reply{}, false
			}
			return Reply{Frame: jr.head, More: jr.pieces}, true
		}
		if !mayBlock {
			return Reply{}, false
		}
		// Flags with no cached listing: every record encoded on the spot.
		w := codec.Writer{}
		codec.AppendJobInfoHeader(&w, v, uint32(len(s.jobs)), s.JobsUpdate, 0)
		s.encodeFresh(&w, v, m.ShowFlags, len(s.jobs), func(k int) *jobEntry { return s.jobs[k] })
		return Reply{MsgType: codec.RESPONSE_JOB_INFO, Body: w.B}, true
	case codec.REQUEST_JOB_STATE:
		return c.jobState(s, req, mayBlock)
	case codec.REQUEST_JOB_INFO_SINGLE:
		var m codec.JobInfoSingleRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		return s.jobInfoIDs(v, m.ShowFlags, 1, func(int) uint32 { return m.JobID }, req.UID, true, mayBlock)
	case codec.REQUEST_JOB_USER_INFO:
		var m codec.JobUserInfoRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		var pos []int32
		if m.UserID == req.UID || !c.hides(privateJobs, req.UID) {
			// Another user's jobs are a filter, not a refusal: under
			// PrivateData=jobs the list is empty.
			pos = s.userJobs(m.UserID)
		}
		return s.listPositions(v, m.ShowFlags, pos, mayBlock)
	case codec.REQUEST_PARTITION_INFO:
		var m codec.PartitionInfoRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		if c.hides(privatePartitions, req.UID) {
			return s.rc(v, codec.ESLURM_ACCESS_DENIED), true
		}
		if unchanged(m.LastUpdate, s.PartsUpdate) {
			return s.rc(v, codec.SLURM_NO_CHANGE_IN_DATA), true
		}
		all := m.ShowFlags&showAll != 0
		kind := kPartInfo
		if all {
			kind = kPartInfoAll
		}
		return Reply{Frame: s.cached(v, kind, func(w *codec.Writer) uint16 {
			s.encodePartitions(w, v, all)
			return codec.RESPONSE_PARTITION_INFO
		})}, true
	case codec.REQUEST_NODE_INFO:
		var m codec.NodeInfoRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		if c.hides(privateNodes, req.UID) {
			return s.rc(v, codec.ESLURM_ACCESS_DENIED), true
		}
		if unchanged(m.LastUpdate, s.NodesUpdate) {
			return s.rc(v, codec.SLURM_NO_CHANGE_IN_DATA), true
		}
		return Reply{Frame: s.cached(v, kNodeInfo, func(w *codec.Writer) uint16 {
			s.encodeNodes(w, v, "")
			return codec.RESPONSE_NODE_INFO
		})}, true
	case codec.REQUEST_NODE_INFO_SINGLE:
		var m codec.NodeInfoSingleRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		if c.hides(privateNodes, req.UID) {
			return s.rc(v, codec.ESLURM_ACCESS_DENIED), true
		}
		if len(m.NodeName) == 0 {
			return Reply{Frame: s.cached(v, kNodeInfo, func(w *codec.Writer) uint16 {
				s.encodeNodes(w, v, "")
				return codec.RESPONSE_NODE_INFO
			})}, true
		}
		w := codec.Writer{}
		if !s.encodeNodes(&w, v, string(m.NodeName)) {
			return s.rc(v, codec.ESLURM_INVALID_NODE_NAME), true
		}
		return Reply{MsgType: codec.RESPONSE_NODE_INFO, Body: w.B}, true
	case codec.REQUEST_BUILD_INFO:
		var m codec.BuildInfoRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		if unchanged(m.LastUpdate, s.ConfUpdate) {
			return s.rc(v, codec.SLURM_NO_CHANGE_IN_DATA), true
		}
		return Reply{Frame: s.cached(v, kBuildInfo, func(w *codec.Writer) uint16 {
			bi := c.buildInfo(s, v)
			bi.Encode(w, v)
			return codec.RESPONSE_BUILD_INFO
		})}, true
	case codec.REQUEST_FED_INFO:
		return Reply{Frame: s.cached(v, kFedInfo, func(w *codec.Writer) uint16 {
			(&codec.FedInfo{}).Encode(w, v)
			return codec.RESPONSE_FED_INFO
		})}, true
	case codec.REQUEST_LICENSE_INFO:
		return Reply{Frame: s.cached(v, kLicenseInfo, func(w *codec.Writer) uint16 {
			(&codec.LicenseInfoMsg{LastUpdate: s.ConfUpdate}).Encode(w, v)
			return codec.RESPONSE_LICENSE_INFO
		})}, true
	case codec.REQUEST_RESERVATION_INFO:
		return Reply{Frame: s.cached(v, kResvInfo, func(w *codec.Writer) uint16 {
			(&codec.ReservationInfoMsg{LastUpdate: s.ConfUpdate}).Encode(w, v)
			return codec.RESPONSE_RESERVATION_INFO
		})}, true
	case codec.REQUEST_JOB_STEP_INFO:
		var m codec.JobStepInfoRequest
		if err := m.Decode(&r, v); err != nil {
			return s.rc(v, codec.CodeOf(err)), true
		}
		msg := codec.JobStepInfoMsg{LastUpdate: s.JobsUpdate}
		for _, st := range s.steps {
			if (m.StepID.JobID == codec.NoVal || m.StepID.JobID == st.StepID.JobID) &&
				(m.StepID.StepID == codec.NoVal || m.StepID.StepID == st.StepID.StepID) {
				msg.Steps = append(msg.Steps, st)
			}
		}
		w := codec.Writer{}
		msg.Encode(&w, v)
		return Reply{MsgType: codec.RESPONSE_JOB_STEP_INFO, Body: w.B}, true
	}
	return Reply{}, false
}

// jobInfoIDs answers for specific job IDs (n of them, idAt(i)): for
// REQUEST_JOB_INFO's list (single false) each ID's own record
// (pack_spec_jobs: find_job_record, no array expansion), for
// REQUEST_JOB_INFO_SINGLE the job with every task of an array job
// (pack_one_job, in its order); in ID order for the list. squeue -j and scontrol
// show job of one job, which job-status pollers (workflow managers) send
// in storms, cost the job's own records, not a scan of the queue. Jobs
// PrivateData hides from uid are left out; single (REQUEST_JOB_INFO_SINGLE)
// answers ESLURM_INVALID_JOB_ID when nothing is left, as slurmctld does
// for an unknown job (a hidden job and a missing one look the same).
func (s *Snapshot) jobInfoIDs(v uint16, showFlags uint16, n int, idAt func(int) uint32, uid uint32, single, mayBlock bool) (Reply, bool) {
	var pos []int32
	for k := range n {
		id := idAt(k)
		self := int32(-1)
		if i := s.index(id); i >= 0 && s.c.jobVisible(uid, s.jobs[i]) {
			self = int32(i)
			pos = append(pos, self)
		}
		if !single {
			continue
		}
		// pack_one_job: the record with the asked id first, then the
		// array's other records as slurmctld's array hash chain holds
		// them, the newest split task first.
		tasks := s.arrayTasks(id)
		for t := len(tasks) - 1; t >= 0; t-- {
			if tasks[t] != self && s.c.jobVisible(uid, s.jobs[tasks[t]]) {
				pos = append(pos, tasks[t])
			}
		}
	}
	if !single {
		slices.Sort(pos)
		pos = slices.Compact(pos)
	}
	if single && len(pos) == 0 {
		return s.rc(v, codec.ESLURM_INVALID_JOB_ID), true
	}
	return s.listPositions(v, showFlags, pos, mayBlock)
}

// listPositions is the RESPONSE_JOB_INFO reply listing the jobs at pos.
func (s *Snapshot) listPositions(v uint16, showFlags uint16, pos []int32, mayBlock bool) (Reply, bool) {
	body, ok := s.encodePositions(v, showFlags, pos, mayBlock)
	if !ok {
		return Reply{}, false
	}
	return Reply{MsgType: codec.RESPONSE_JOB_INFO, Body: body}, true
}

// jobIndexes list the snapshot's jobs by owner and by array job, built
// on first use: squeue -u / --me and scontrol show job of an array then
// cost the jobs listed, not a scan of the whole queue (0.8 ms at
// 100,000 jobs).
type jobIndexes struct {
	userOnce, arrayOnce sync.Once
	byUser              map[uint32][]int32 // uid -> indexes into the snapshot's jobs, ascending
	byArray             map[uint32][]int32 // array job ID -> its records' indexes, ascending
}

// userJobs returns the indexes of uid's jobs in s.jobs, ascending.
func (s *Snapshot) userJobs(uid uint32) []int32 {
	s.idx.userOnce.Do(func() {
		s.idx.byUser = s.indexBy(func(e *jobEntry) (uint32, bool) { return e.userID, true })
	})
	return s.idx.byUser[uid]
}

// arrayTasks returns the indexes in s.jobs of the records of array job
// id (its tasks and its pending remainder), ascending.
func (s *Snapshot) arrayTasks(id uint32) []int32 {
	s.idx.arrayOnce.Do(func() {
		s.idx.byArray = s.indexBy(func(e *jobEntry) (uint32, bool) { return e.arrayJobID, e.arrayJobID != 0 })
	})
	return s.idx.byArray[id]
}

// indexBy groups the indexes of s.jobs by key (entries key declines are
// left out), each group ascending.
func (s *Snapshot) indexBy(key func(*jobEntry) (uint32, bool)) map[uint32][]int32 {
	m := map[uint32][]int32{}
	for i, e := range s.jobs {
		if k, ok := key(e); ok {
			m[k] = append(m[k], int32(i))
		}
	}
	return m
}

// index returns the position of job id in s.jobs, or -1.
func (s *Snapshot) index(id uint32) int {
	i := sort.Search(len(s.jobs), func(i int) bool { return s.jobs[i].id >= id })
	if i < len(s.jobs) && s.jobs[i].id == id {
		return i
	}
	return -1
}

// encodePositions returns the RESPONSE_JOB_INFO body listing the jobs at
// pos (ascending indexes into s.jobs), copying their records from the
// snapshot's chunks when the flags have a cached listing (see listing),
// encoding them otherwise. Without mayBlock it only copies from a
// listing already built, and ok=false says it would have had to do more.
func (s *Snapshot) encodePositions(v uint16, showFlags uint16, pos []int32, mayBlock bool) (body []byte, ok bool) {
	echo, cached := listing(v, showFlags)
	if !cached {
		if !mayBlock && len(pos) > 0 {
			return nil, false
		}
		w := codec.Writer{}
		codec.AppendJobInfoHeader(&w, v, uint32(len(pos)), s.JobsUpdate, 0)
		s.encodeFresh(&w, v, showFlags, len(pos), func(k int) *jobEntry { return s.jobs[pos[k]] })
		return w.B, true
	}
	jr := s.recordsFor(v, echo, mayBlock || len(pos) == 0)
	if jr == nil {
		return nil, false
	}
	size := 64
	jr.each(pos, func(rec []byte) { size += len(rec) })
	w := codec.Writer{B: make([]byte, 0, size)}
	codec.AppendJobInfoHeader(&w, v, uint32(len(pos)), s.JobsUpdate, 0)
	jr.each(pos, func(rec []byte) { w.B = append(w.B, rec...) })
	return w.B, true
}

// encodeFresh encodes the records of the n jobs at(0..n-1) for the
// request's show_flags, reading cold jobs from the store.
func (s *Snapshot) encodeFresh(w *codec.Writer, v uint16, showFlags uint16, n int, at func(int) *jobEntry) {
	var cr coldReader
	defer cr.close()
	for k := range n {
		ji := s.c.jobInfo(s, cr.view(at(k)), v, showFlags&showDetail != 0)
		ji.EncodeFor(w, v, showFlags)
	}
}

func (s *Snapshot) encodePartitions(w *codec.Writer, v uint16, all bool) {
	parts := s.cl.parts
	var keep []*conf.Partition
	for i := range parts {
		if parts[i].Hidden && !all {
			continue
		}
		keep = append(keep, &parts[i])
	}
	codec.AppendPartitionInfoHeader(w, v, uint32(len(keep)), s.PartsUpdate)
	for _, p := range keep {
		pi := s.c.partitionInfo(s.cl, p)
		pi.Encode(w, v)
	}
}

// encodeNodes writes every node, or only the named one (reporting
// whether it exists).
func (s *Snapshot) encodeNodes(w *codec.Writer, v uint16, only string) bool {
	nodes := s.cl.nodes
	if only != "" {
		i := s.cl.nodeIndex(only)
		if i < 0 {
			return false
		}
		codec.AppendNodeInfoSingleHeader(w, v, 1, s.NodesUpdate)
		ni := s.c.nodeInfo(s, &nodes[i], v)
		ni.Encode(w, v)
		return true
	}
	codec.AppendNodeInfoHeader(w, v, uint32(len(nodes)), s.NodesUpdate)
	for i := range nodes {
		ni := s.c.nodeInfo(s, &nodes[i], v)
		ni.Encode(w, v)
	}
	return true
}

// nodeInfo describes a node as slurmctld would for a registered, idle
// slurmd: the engine's agent is the node's slurmd.
func (c *Controller) nodeInfo(s *Snapshot, n *conf.Node, v uint16) codec.NodeInfo {
	ni := codec.NodeInfo{
		NextState: codec.NoVal, Owner: codec.NoVal, ReasonUID: codec.NoVal, SuspendTime: codec.Infinite,
		// 22.05 nodes without external sensors or power capping.
		ExtSensorsConsumedEnergy: codec.NoVal64, ExtSensorsTemperature: codec.NoVal, PowerCapWatts: codec.NoVal,
	}
	ni.Name, ni.NodeHostname, ni.NodeAddr = n.Name, n.Hostname, n.Addr
	// Its stand-in's port: the node's Port=, else SlurmdPort (what
	// scontrol show config says).
	if ni.Port = n.Port; ni.Port == 0 {
		ni.Port = slurmConf{cfg: c.opt.Conf}.u16("SlurmdPort", c.opt.Port+1)
	}
	ni.NodeState = codec.NODE_STATE_IDLE
	ni.Version = versionString(v)
	ni.CPUs, ni.Boards, ni.Sockets, ni.Cores, ni.Threads = n.CPUs, n.Boards, n.Sockets, n.CoresPerSocket, n.ThreadsPerCore
	ni.RealMemory, ni.TmpDisk, ni.Weight = n.RealMemory, n.TmpDisk, n.Weight
	ni.CPUsEfctv = n.CPUs
	ni.Gres, ni.Features, ni.FeaturesAct = n.Gres, n.Features, n.Features
	ni.SelectPluginID = 109 // select/cons_tres
	ni.TRESFmtStr = nodeTRES(n, strings.Contains(c.config().Get("AccountingStorageTRES", ""), "gres/gpu"))
	ni.Arch = "x86_64"
	ni.OS = "Linux"
	if a := s.cl.agent(n.Name); a != nil {
		ni.BootTime, ni.SlurmdStartTime, ni.LastBusy = a.BootTime, c.started.Unix(), c.started.Unix()
		ni.Arch, ni.OS = a.Arch, a.OS
		ni.CPULoad = uint32(a.CPULoad * 100)
		ni.FreeMem = a.FreeMem >> 20
		if a.Status != translate.AgentAlive {
			ni.NodeState = codec.NODE_STATE_DOWN | codec.NODE_STATE_NO_RESPOND
		}
	}
	// What is allocated: the engine's occupied slots (sessions of any
	// origin), and at least what our own running jobs hold (the
	// engine's figures are as old as the last topology read).
	var cpus uint32
	var memMB uint64
	if a := s.alloc[n.Name]; a != nil {
		cpus, memMB = a.cpus, a.memMB
	}
	engineDrain := false
	if ag := s.cl.agent(n.Name); ag != nil {
		cpus, memMB = max(cpus, uint32(ag.Occupied.CPU+0.5)), max(memMB, ag.Occupied.Mem>>20)
		// The engine places nothing there (Backend.AI's schedulable
		// flag): Slurm's drain.
		engineDrain = !ag.Schedulable && ag.Status == translate.AgentAlive
	}
	if (cpus > 0 || memMB > 0) && ni.NodeState == codec.NODE_STATE_IDLE {
		// Clients show "mix" when fewer than all CPUs are allocated.
		ni.NodeState = codec.NODE_STATE_ALLOCATED
		ni.AllocCPUs = uint16(min(cpus, uint32(n.CPUs)))
		ni.AllocMemory = min(memMB, n.RealMemory)
		ni.AllocTRESFmtStr = "cpu=" + itoa(uint64(ni.AllocCPUs)) + ",mem=" + memString(ni.AllocMemory)
		ni.LastBusy = time.Now().Unix()
	}
	switch n.State {
	case "DOWN":
		ni.NodeState = codec.NODE_STATE_DOWN
	case "DRAIN":
		engineDrain = true
	case "FUTURE":
		ni.NodeState = codec.NODE_STATE_FUTURE
		engineDrain = false
	}
	// What an administrator set (scontrol update): the base state DOWN,
	// the DRAIN and FAIL flags over the allocation (drained, draining,
	// failing), and the reason with its user and time.
	rec, hasRec := s.cl.admin[n.Name]
	if hasRec && rec.Down {
		// Its jobs were ended or requeued: slurmctld deallocates the
		// node at once, whatever the engine still winds down there.
		ni.NodeState = codec.NODE_STATE_DOWN | ni.NodeState&codec.NODE_STATE_FLAGS
		ni.AllocCPUs, ni.AllocMemory, ni.AllocTRESFmtStr = 0, 0, ""
	}
	if hasRec && rec.Drain || engineDrain && !(hasRec && rec.Unavailable()) {
		ni.NodeState |= codec.NODE_STATE_DRAIN
	}
	if hasRec && rec.Fail {
		ni.NodeState |= codec.NODE_STATE_FAIL
	}
	if hasRec && rec.Reason != "" {
		ni.Reason, ni.ReasonTime, ni.ReasonUID = rec.Reason, rec.ReasonTime, rec.ReasonUID
	}
	return ni
}

// nodeTRES is a node's configured TRES; GPUs count only when the site
// accounts them (AccountingStorageTRES=gres/gpu), as in slurmctld.
func nodeTRES(n *conf.Node, gpus bool) string {
	s := "cpu=" + itoa(uint64(n.CPUs)) + ",mem=" + memString(n.RealMemory) + ",billing=" + itoa(uint64(n.CPUs))
	if g := gpuCount(n.Gres); gpus && g > 0 {
		s += ",gres/gpu=" + itoa(g)
	}
	return s
}

func gpuCount(gres string) uint64 { return gresCount(gres, "gpu") }

// gpuTypes is how many GPUs of each named type (lower case) a node's Gres
// string has ("gpu:a100:2,gpu:v100:1"); untyped GPUs are not in it.
func gpuTypes(gres string) map[string]uint64 {
	var out map[string]uint64
	for _, g := range strings.Split(gres, ",") {
		parts := strings.Split(g, ":")
		if len(parts) != 3 || parts[0] != "gpu" {
			continue
		}
		n, err := strconv.ParseUint(strings.SplitN(parts[2], "(", 2)[0], 10, 64)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]uint64{}
		}
		out[strings.ToLower(parts[1])] += n
	}
	return out
}

// gresCount is how many of gres name a node's Gres string has.
func gresCount(gres, name string) uint64 {
	for _, g := range strings.Split(gres, ",") {
		parts := strings.Split(g, ":")
		if len(parts) >= 2 && parts[0] == name {
			var n uint64
			for _, ch := range parts[len(parts)-1] {
				if ch < '0' || ch > '9' {
					return 0
				}
				n = n*10 + uint64(ch-'0')
			}
			return n
		}
	}
	return 0
}

func (c *Controller) partitionInfo(cl *cluster, p *conf.Partition) codec.PartitionInfo {
	pi := codec.PartitionInfo{
		Name: p.Name, MaxTime: p.MaxTime, DefaultTime: p.DefaultTime, MaxNodes: p.MaxNodes,
		MinNodes: p.MinNodes, MaxCPUsPerNode: codec.Infinite, MaxCPUsPerSocket: codec.Infinite,
		MaxShare: 1, OverTimeLimit: codec.NoVal16, PreemptMode: codec.NoVal16,
		PriorityJobFactor: p.PriorityFactor, PriorityTier: p.PriorityTier,
		ResumeTimeout: codec.NoVal16, SuspendTimeout: codec.NoVal16, SuspendTime: codec.NoVal,
		Nodes: p.NodesExpr, DefMemPerCPU: p.DefMemPerCPU, MaxMemPerCPU: p.MaxMemPerCPU,
	}
	if p.AllowAccounts != "ALL" {
		pi.AllowAccounts = p.AllowAccounts
	}
	if p.AllowGroups != "ALL" {
		pi.AllowGroups = p.AllowGroups
	}
	if p.AllowQos != "ALL" {
		pi.AllowQOS = p.AllowQos
	}
	if p.Default {
		pi.Flags |= codec.PART_FLAG_DEFAULT
	}
	if p.Hidden {
		pi.Flags |= codec.PART_FLAG_HIDDEN
	}
	switch p.State {
	case "UP":
		pi.StateUp = codec.PARTITION_SUBMIT | codec.PARTITION_SCHED
	case "DRAIN":
		pi.StateUp = codec.PARTITION_SCHED
	case "INACTIVE":
		pi.StateUp = 0
	case "DOWN":
		pi.StateUp = codec.PARTITION_SUBMIT
	}
	switch p.OverSubscribe {
	case "EXCLUSIVE":
		pi.MaxShare = 0
	case "YES":
		pi.MaxShare = 4
	case "FORCE":
		pi.MaxShare = 4 | 0x8000
	}
	var cpus uint32
	var mem uint64
	var idx []int
	for _, name := range p.Nodes {
		if n := cl.node(name); n != nil {
			cpus += uint32(n.CPUs)
			mem += n.RealMemory
			idx = append(idx, cl.nodeIndex(name))
		}
	}
	pi.TotalNodes, pi.TotalCPUs = uint32(len(p.Nodes)), cpus
	hb := codec.NewHexBits(len(cl.nodes), idx...)
	pi.NodeInxBits, pi.NodeInx = hb.NBits, hb.Hex
	pi.TRESFmtStr = "cpu=" + itoa(uint64(cpus)) + ",mem=" + memString(mem) + ",node=" + itoa(uint64(len(p.Nodes))) + ",billing=" + itoa(uint64(cpus))
	return pi
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}
