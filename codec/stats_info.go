package codec

// REQUEST_STATS_INFO (2035) / RESPONSE_STATS_INFO (2036): `sdiag`.
//
// The reply is what slurmctld builds from pack_all_stat
// (src/slurmctld/statistics.c) followed by _pack_rpc_stats
// (src/slurmctld/proc_req.c) and agent_pack_pending_rpc_stats
// (src/slurmctld/agent.c); clients read it with
// _unpack_stats_response_msg (src/common/slurm_protocol_pack.c). Layout
// per version, from each release's own branch:
//
//   - 22.05, 23.02: u32 parts_packed; if non-zero the scheduler block
//     (no exit arrays); rpc types; rpc users; pending; dump.
//   - 23.11: the block gains schedule_exit (after schedule_cycle_depth)
//     and bf_exit (at its end).
//   - 24.05-25.05: u8 rpc_queue_enabled and, if set, four per-type
//     arrays, between the rpc-type and rpc-user arrays.
//   - 25.11+: no parts_packed (the block is always there) and
//     schedule_cycle_sum is a u64.

// Values of StatsInfoRequest.Command.
const (
	StatCommandReset uint16 = 0 // `sdiag -r`, operators only
	StatCommandGet   uint16 = 1
)

// StatsInfoRequest is REQUEST_STATS_INFO (u16 command_id, all versions).
// A RESET is answered with RESPONSE_SLURM_RC 0 by 24.05+ controllers and
// with a RESPONSE_STATS_INFO of PartsPacked 0 by older ones; every
// client accepts either.
type StatsInfoRequest struct {
	Command uint16
}

func (m *StatsInfoRequest) Decode(r *Reader, version uint16) error {
	m.Command = r.U16()
	return miscEnd(r)
}

func (m *StatsInfoRequest) Encode(w *Writer, version uint16) { w.U16(m.Command) }

// StatsRPCType is one message type's counters (the rpc_type_* arrays).
// Queued, Dropped, CycleLast and CycleMax travel only to 24.05+ clients
// and only when StatsInfo.RPCQueueEnabled.
type StatsRPCType struct {
	Type      uint16 // message type, e.g. REQUEST_JOB_INFO
	Count     uint32
	Time      uint64 // total microseconds spent
	Queued    uint16
	Dropped   uint64
	CycleLast uint16
	CycleMax  uint16
}

// StatsRPCUser is one user's counters (the rpc_user_* arrays).
type StatsRPCUser struct {
	UID   uint32
	Count uint32
	Time  uint64 // total microseconds spent
}

// StatsPendingRPC counts queued outgoing RPCs of one type
// (rpc_queue_type_id / rpc_queue_count).
type StatsPendingRPC struct {
	Type  uint32
	Count uint32
}

// StatsRPCDump is one queued outgoing RPC and its target hosts
// (rpc_dump_types / rpc_dump_hostlist).
type StatsRPCDump struct {
	Type  uint32
	Hosts string
}

// StatsInfo is RESPONSE_STATS_INFO. The per-type and per-user arrays
// travel as parallel arrays with a separate size that sdiag uses to index
// them all, so they are kept here as slices of records and always encoded
// with consistent counts; Decode rejects parallel arrays of differing
// length (a client would read out of bounds or, for the pending/dump
// pairs, refuse the message).
type StatsInfo struct {
	// PartsPacked (before 25.11) is non-zero when the scheduler block
	// below is present: slurmctld sends 1, or 0 in a 22.05-23.11 RESET
	// reply. 25.11+ always carry the block; Decode sets 1 for them and
	// Encode ignores it.
	PartsPacked uint32

	ReqTime             int64 // when this reply was made
	ReqTimeStart        int64 // last statistics reset (or start)
	ServerThreadCount   uint32
	AgentQueueSize      uint32
	AgentCount          uint32
	AgentThreadCount    uint32
	DBDAgentQueueSize   uint32
	GetTimeOfDayLatency uint32 // microseconds

	JobsSubmitted uint32
	JobsStarted   uint32
	JobsCompleted uint32
	JobsCanceled  uint32
	JobsFailed    uint32
	JobsPending   uint32
	JobsRunning   uint32
	JobStatesTime int64 // when JobsPending/JobsRunning were counted

	ScheduleCycleMax     uint32 // microseconds
	ScheduleCycleLast    uint32
	ScheduleCycleSum     uint64 // u32 on the wire before 25.11
	ScheduleCycleCounter uint32
	ScheduleCycleDepth   uint32
	ScheduleExit         []uint32 // 23.11+; SCHEDULE_EXIT_COUNT (6) counters: end, max_depth, max_job_start, lic, rpc_cnt, timeout
	ScheduleQueueLen     uint32

	BFBackfilledJobs     uint32
	BFLastBackfilledJobs uint32
	BFCycleCounter       uint32
	BFCycleSum           uint64
	BFCycleLast          uint32
	BFLastDepth          uint32
	BFLastDepthTry       uint32
	BFQueueLen           uint32
	BFCycleMax           uint32
	BFWhenLastCycle      int64
	BFDepthSum           uint32
	BFDepthTrySum        uint32
	BFQueueLenSum        uint32
	BFTableSize          uint32
	BFTableSizeSum       uint32
	BFActive             uint32 // non-zero while a backfill cycle runs
	BFBackfilledHetJobs  uint32
	BFExit               []uint32 // 23.11+; BF_EXIT_COUNT (6) counters: end, max_job_start, max_job_test, state_changed, table_limit, timeout

	RPCTypes        []StatsRPCType
	RPCQueueEnabled bool           // 24.05+: SlurmctldParameters=rpc_queue
	RPCUsers        []StatsRPCUser // slurmctld always sends root (uid 0) first
	Pending         []StatsPendingRPC
	Dump            []StatsRPCDump
}

var errStatsArrays = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "sdiag parallel arrays differ in length"}

func (m *StatsInfo) Decode(r *Reader, version uint16) error {
	*m = StatsInfo{}
	block := true
	if version < V25_11 {
		m.PartsPacked = r.U32()
		block = m.PartsPacked != 0
	} else {
		m.PartsPacked = 1
	}
	if block {
		m.ReqTime = r.Time()
		m.ReqTimeStart = r.Time()
		m.ServerThreadCount = r.U32()
		m.AgentQueueSize = r.U32()
		m.AgentCount = r.U32()
		m.AgentThreadCount = r.U32()
		m.DBDAgentQueueSize = r.U32()
		m.GetTimeOfDayLatency = r.U32()
		m.JobsSubmitted = r.U32()
		m.JobsStarted = r.U32()
		m.JobsCompleted = r.U32()
		m.JobsCanceled = r.U32()
		m.JobsFailed = r.U32()
		m.JobsPending = r.U32()
		m.JobsRunning = r.U32()
		m.JobStatesTime = r.Time()
		m.ScheduleCycleMax = r.U32()
		m.ScheduleCycleLast = r.U32()
		if version >= V25_11 {
			m.ScheduleCycleSum = r.U64()
		} else {
			m.ScheduleCycleSum = uint64(r.U32())
		}
		m.ScheduleCycleCounter = r.U32()
		m.ScheduleCycleDepth = r.U32()
		if version >= V23_11 {
			m.ScheduleExit = r.U32Array()
		}
		m.ScheduleQueueLen = r.U32()
		m.BFBackfilledJobs = r.U32()
		m.BFLastBackfilledJobs = r.U32()
		m.BFCycleCounter = r.U32()
		m.BFCycleSum = r.U64()
		m.BFCycleLast = r.U32()
		m.BFLastDepth = r.U32()
		m.BFLastDepthTry = r.U32()
		m.BFQueueLen = r.U32()
		m.BFCycleMax = r.U32()
		m.BFWhenLastCycle = r.Time()
		m.BFDepthSum = r.U32()
		m.BFDepthTrySum = r.U32()
		m.BFQueueLenSum = r.U32()
		m.BFTableSize = r.U32()
		m.BFTableSizeSum = r.U32()
		m.BFActive = r.U32()
		m.BFBackfilledHetJobs = r.U32()
		if version >= V23_11 {
			m.BFExit = r.U32Array()
		}
	}

	// Per-type arrays: a size, then id/count/time arrays of that size.
	n := r.U32()
	if r.Err != nil {
		return r.Err
	}
	// The smallest encoding of one type across the three arrays is 14
	// bytes; bound the allocation by what is left.
	if uint64(n)*14 > uint64(r.Remaining()) {
		return ErrBadCount
	}
	if n > 0 {
		m.RPCTypes = make([]StatsRPCType, n)
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.RPCTypes {
		m.RPCTypes[i].Type = r.U16()
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.RPCTypes {
		m.RPCTypes[i].Count = r.U32()
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.RPCTypes {
		m.RPCTypes[i].Time = r.U64()
	}
	if version >= V24_05 {
		m.RPCQueueEnabled = r.U8() != 0
		if m.RPCQueueEnabled {
			if !statsArrayLen(r, n) {
				return miscErr(r, errStatsArrays)
			}
			for i := range m.RPCTypes {
				m.RPCTypes[i].Queued = r.U16()
			}
			if !statsArrayLen(r, n) {
				return miscErr(r, errStatsArrays)
			}
			for i := range m.RPCTypes {
				m.RPCTypes[i].Dropped = r.U64()
			}
			if !statsArrayLen(r, n) {
				return miscErr(r, errStatsArrays)
			}
			for i := range m.RPCTypes {
				m.RPCTypes[i].CycleLast = r.U16()
			}
			if !statsArrayLen(r, n) {
				return miscErr(r, errStatsArrays)
			}
			for i := range m.RPCTypes {
				m.RPCTypes[i].CycleMax = r.U16()
			}
		}
	}

	// Per-user arrays, same shape.
	n = r.U32()
	if r.Err != nil {
		return r.Err
	}
	if uint64(n)*16 > uint64(r.Remaining()) {
		return ErrBadCount
	}
	if n > 0 {
		m.RPCUsers = make([]StatsRPCUser, n)
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.RPCUsers {
		m.RPCUsers[i].UID = r.U32()
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.RPCUsers {
		m.RPCUsers[i].Count = r.U32()
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.RPCUsers {
		m.RPCUsers[i].Time = r.U64()
	}

	// Pending RPCs: two u32 arrays of one length (clients check it).
	n = miscCount(r, 4)
	if n > 0 {
		m.Pending = make([]StatsPendingRPC, n)
	}
	for i := range m.Pending {
		m.Pending[i].Type = r.U32()
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.Pending {
		m.Pending[i].Count = r.U32()
	}

	// Queued RPC dump: types, then a string array of the same length.
	n = miscCount(r, 4)
	if n > 0 {
		m.Dump = make([]StatsRPCDump, n)
	}
	for i := range m.Dump {
		m.Dump[i].Type = r.U32()
	}
	if !statsArrayLen(r, n) {
		return miscErr(r, errStatsArrays)
	}
	for i := range m.Dump {
		m.Dump[i].Hosts = r.String()
	}
	return miscEnd(r)
}

// statsArrayLen reads an array count and reports whether it is n (a read
// error also reports false; miscErr then returns the read error).
func statsArrayLen(r *Reader, n uint32) bool {
	c := r.U32()
	return r.Err == nil && c == n
}

func (m *StatsInfo) Encode(w *Writer, version uint16) {
	block := true
	if version < V25_11 {
		w.U32(m.PartsPacked)
		block = m.PartsPacked != 0
	}
	if block {
		w.Time(m.ReqTime)
		w.Time(m.ReqTimeStart)
		w.U32(m.ServerThreadCount)
		w.U32(m.AgentQueueSize)
		w.U32(m.AgentCount)
		w.U32(m.AgentThreadCount)
		w.U32(m.DBDAgentQueueSize)
		w.U32(m.GetTimeOfDayLatency)
		w.U32(m.JobsSubmitted)
		w.U32(m.JobsStarted)
		w.U32(m.JobsCompleted)
		w.U32(m.JobsCanceled)
		w.U32(m.JobsFailed)
		w.U32(m.JobsPending)
		w.U32(m.JobsRunning)
		w.Time(m.JobStatesTime)
		w.U32(m.ScheduleCycleMax)
		w.U32(m.ScheduleCycleLast)
		if version >= V25_11 {
			w.U64(m.ScheduleCycleSum)
		} else {
			w.U32(uint32(m.ScheduleCycleSum))
		}
		w.U32(m.ScheduleCycleCounter)
		w.U32(m.ScheduleCycleDepth)
		if version >= V23_11 {
			w.U32Array(m.ScheduleExit)
		}
		w.U32(m.ScheduleQueueLen)
		w.U32(m.BFBackfilledJobs)
		w.U32(m.BFLastBackfilledJobs)
		w.U32(m.BFCycleCounter)
		w.U64(m.BFCycleSum)
		w.U32(m.BFCycleLast)
		w.U32(m.BFLastDepth)
		w.U32(m.BFLastDepthTry)
		w.U32(m.BFQueueLen)
		w.U32(m.BFCycleMax)
		w.Time(m.BFWhenLastCycle)
		w.U32(m.BFDepthSum)
		w.U32(m.BFDepthTrySum)
		w.U32(m.BFQueueLenSum)
		w.U32(m.BFTableSize)
		w.U32(m.BFTableSizeSum)
		w.U32(m.BFActive)
		w.U32(m.BFBackfilledHetJobs)
		if version >= V23_11 {
			w.U32Array(m.BFExit)
		}
	}

	n := uint32(len(m.RPCTypes))
	w.U32(n) // rpc_type_size
	w.U32(n)
	for _, t := range m.RPCTypes {
		w.U16(t.Type)
	}
	w.U32(n)
	for _, t := range m.RPCTypes {
		w.U32(t.Count)
	}
	w.U32(n)
	for _, t := range m.RPCTypes {
		w.U64(t.Time)
	}
	if version >= V24_05 {
		w.Bool(m.RPCQueueEnabled)
		if m.RPCQueueEnabled {
			w.U32(n)
			for _, t := range m.RPCTypes {
				w.U16(t.Queued)
			}
			w.U32(n)
			for _, t := range m.RPCTypes {
				w.U64(t.Dropped)
			}
			w.U32(n)
			for _, t := range m.RPCTypes {
				w.U16(t.CycleLast)
			}
			w.U32(n)
			for _, t := range m.RPCTypes {
				w.U16(t.CycleMax)
			}
		}
	}

	n = uint32(len(m.RPCUsers))
	w.U32(n) // rpc_user_size
	w.U32(n)
	for _, u := range m.RPCUsers {
		w.U32(u.UID)
	}
	w.U32(n)
	for _, u := range m.RPCUsers {
		w.U32(u.Count)
	}
	w.U32(n)
	for _, u := range m.RPCUsers {
		w.U64(u.Time)
	}

	n = uint32(len(m.Pending))
	w.U32(n)
	for _, p := range m.Pending {
		w.U32(p.Type)
	}
	w.U32(n)
	for _, p := range m.Pending {
		w.U32(p.Count)
	}

	n = uint32(len(m.Dump))
	w.U32(n)
	for _, d := range m.Dump {
		w.U32(d.Type)
	}
	w.U32(n)
	for _, d := range m.Dump {
		w.Str(d.Hosts)
	}
}
