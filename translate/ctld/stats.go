package ctld

import (
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// Exit-reason counters slurmctld sends from 23.11 on (SCHEDULE_EXIT_COUNT
// and BF_EXIT_COUNT in src/slurmctld/slurmctld.h): sdiag prints one line
// per element, so the arrays must have exactly this length.
const (
	scheduleExitCount = 6
	bfExitCount       = 6
)

// statsInfo answers REQUEST_STATS_INFO (sdiag) from real figures: the
// edge's per-RPC counters, the controller's job counters and the current
// snapshot. Nothing here runs a scheduler cycle or backfill, so those
// sections are honest zeros (sdiag prints "Last cycle when: N/A"); there
// is no agent queue and no slurmdbd. `sdiag -r` (STAT_COMMAND_RESET) is
// for root, the SlurmUser and operators only, as in slurmctld.
func (c *Controller) statsInfo(req *Request) Reply {
	var m codec.StatsInfoRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	if m.Command == codec.StatCommandReset {
		if !c.isOperator(req.UID) {
			c.logf("uid %d may not reset statistics", req.UID)
			return rcReply(codec.ESLURM_ACCESS_DENIED)
		}
		c.resetStats()
		if req.Version >= codec.V24_05 {
			return rcReply(codec.SLURM_SUCCESS)
		}
		// Older controllers answer a reset with the (now empty) tables
		// and no scheduler block.
		si := c.rpcTables()
		w := codec.Writer{}
		si.Encode(&w, req.Version)
		return Reply{MsgType: codec.RESPONSE_STATS_INFO, Body: w.B}
	}
	si := c.stats(time.Now())
	w := codec.Writer{B: make([]byte, 0, 512)}
	si.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_STATS_INFO, Body: w.B}
}

// resetStats clears what `sdiag -r` clears: the RPC tables and the job
// counters (slurmctld's reset_stats and _clear_rpc_stats).
func (c *Controller) resetStats() {
	if c.opt.Stats != nil {
		c.opt.Stats.Reset()
	}
	c.counters.submitted.Store(0)
	c.counters.started.Store(0)
	c.counters.completed.Store(0)
	c.counters.canceled.Store(0)
	c.counters.failed.Store(0)
}

// stats builds the full reply.
func (c *Controller) stats(now time.Time) codec.StatsInfo {
	si := c.rpcTables()
	si.PartsPacked = 1
	si.ReqTime = now.Unix()
	si.ReqTimeStart = c.started.Unix()
	if c.opt.Stats != nil {
		si.ReqTimeStart = c.opt.Stats.ResetTime()
		// slurmctld's server_thread_count is the number of RPCs being
		// served, one thread each; ours is the open connections (this
		// one included).
		si.ServerThreadCount = uint32(max(c.opt.Stats.Conns.Load(), 1))
	} else {
		si.ServerThreadCount = 1
	}
	si.GetTimeOfDayLatency = clockLatency()
	si.JobsSubmitted = c.counters.submitted.Load()
	si.JobsStarted = c.counters.started.Load()
	si.JobsCompleted = c.counters.completed.Load()
	si.JobsCanceled = c.counters.canceled.Load()
	si.JobsFailed = c.counters.failed.Load()
	si.JobsPending, si.JobsRunning = jobStateCounts(c.snap.Load())
	si.JobStatesTime = si.ReqTime // counted just now
	si.ScheduleExit = make([]uint32, scheduleExitCount)
	si.BFExit = make([]uint32, bfExitCount)
	return si
}

// rpcTables fills the per-type and per-user tables from the edge's
// counters. slurmctld always lists root (uid 0) first, even with no RPCs.
func (c *Controller) rpcTables() codec.StatsInfo {
	var si codec.StatsInfo
	root := codec.StatsRPCUser{UID: 0}
	var users []codec.StatsRPCUser
	if c.opt.Stats != nil {
		for _, t := range c.opt.Stats.ByType() {
			si.RPCTypes = append(si.RPCTypes, codec.StatsRPCType{Type: uint16(t.ID), Count: t.Count, Time: t.Usec})
		}
		for _, u := range c.opt.Stats.ByUser() {
			if u.ID == 0 {
				root.Count, root.Time = u.Count, u.Usec
				continue
			}
			users = append(users, codec.StatsRPCUser{UID: u.ID, Count: u.Count, Time: u.Usec})
		}
	}
	si.RPCUsers = append([]codec.StatsRPCUser{root}, users...)
	return si
}

// jobStateCounts counts pending jobs (array tasks one by one, as
// slurmctld's _foreach_job_running does) and running ones.
func jobStateCounts(s *Snapshot) (pending, running uint32) {
	if s == nil {
		return 0, 0
	}
	for _, e := range s.jobs {
		switch {
		case e.pending() && e.hot == nil: // cold: never an array's pending record
			pending++
		case e.pending():
			pending += arrayTaskCount(e.hot)
		case codec.JobIsRunning(e.state):
			running++
		}
	}
	return pending, running
}

// arrayTaskCount is the number of tasks a pending record stands for: 1,
// or the tasks of an array meta record ("1-3,7,10-20:5%2").
func arrayTaskCount(j *state.Job) uint32 {
	expr := j.ArrayTasks
	if expr == "" {
		return 1
	}
	if i := strings.IndexByte(expr, '%'); i >= 0 {
		expr = expr[:i]
	}
	var n uint32
	for _, part := range strings.Split(expr, ",") {
		step := uint64(1)
		if rng, st, ok := strings.Cut(part, ":"); ok {
			part = rng
			if v, err := strconv.ParseUint(st, 10, 32); err == nil && v > 0 {
				step = v
			}
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 32)
		if err != nil {
			continue
		}
		if !isRange {
			n++
			continue
		}
		b, err := strconv.ParseUint(hi, 10, 32)
		if err != nil || b < a {
			continue
		}
		n += uint32((b-a)/step + 1)
	}
	return max(n, 1)
}

// clockLatency measures 1000 reads of the clock in microseconds, what
// slurmctld reports as "Latency for 1000 calls to gettimeofday()".
func clockLatency() uint32 {
	start := time.Now()
	var sink int64
	for i := 0; i < 1000; i++ {
		sink += time.Now().UnixNano()
	}
	_ = sink
	return uint32(time.Since(start) / time.Microsecond)
}
