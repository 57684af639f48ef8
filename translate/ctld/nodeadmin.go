package ctld

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// Node administration, as slurmctld's update_node (node_mgr.c):
// scontrol update NodeName=LIST State=DRAIN|FAIL|DOWN|RESUME|UNDRAIN|IDLE
// [Reason=...]. What an administrator sets is kept in the store
// (state.NodeAdmin: flags, reason, the reason's uid and time), survives
// restarts as slurmctld's node state file does, and shows in node
// listings (sinfo -R, sinfo -N -l, scontrol show node).
//
//   - DRAIN, FAIL: the node takes no new job; running ones go on
//     (draining, then drained). The engine is told (translate.Scheduling:
//     the embedded engine's placer, Backend.AI's schedulable flag).
//   - DOWN: as DRAIN, and the jobs running there end as slurmctld ends
//     them (kill_running_job_by_node_name): a batch job that may be
//     requeued (JobRequeue=1 or --requeue, not --no-requeue) goes back to
//     pending, eligible again 121 s later (BeginTime, the credential
//     lifetime slurmctld waits out); any other ends NODE_FAIL. The node
//     stays DOWN until resumed, as with ReturnToService=0/1 (there is no
//     slurmd to register it back).
//   - RESUME clears DOWN, DRAIN and FAIL; UNDRAIN clears DRAIN (and FAIL
//     on an idle node); IDLE (valid on idle and down nodes) clears all
//     three. A node back in service loses its reason, as with accounting.
//   - Nodes the engine alone keeps out (Backend.AI's console) show as
//     drained, and a resume takes them back; nodes the config marks
//     DOWN/DRAIN/FUTURE are the config's to change.
//
// Pending jobs whose partition has fewer available nodes than they need
// show what slurmctld's scheduler says of them (Resources, "Nodes
// required for job are DOWN, DRAINED or reserved for jobs in higher
// priority partitions"); jobs asking for such nodes by name
// ReqNodeNotAvail.

// nodeAdmin is the controller's part of it.
type nodeAdmin struct {
	// mu serializes node updates and reconfigures: the engine is called
	// between reading the records and writing them, without c.mu.
	mu sync.Mutex
	// recs by node name, replaced whole on a change (clusters share
	// it); read and written under c.mu.
	recs map[string]state.NodeAdmin
	// confUpdate: when the config was last read again (c.mu).
	confUpdate int64
	// sched: when agents were last taken out of scheduling (false) or
	// back (true) here (c.mu): a topology read begun before does not
	// know it yet.
	sched map[string]schedChange
}

type schedChange struct {
	at time.Time
	on bool
}

// newerThan is topo with the agents' schedulable flags changed here
// since readAt (c.mu held).
func (n *nodeAdmin) newerThan(topo *translate.Topology, readAt time.Time) *translate.Topology {
	var off, on []string
	for id, ch := range n.sched {
		switch {
		case !ch.at.Before(readAt) && ch.on:
			on = append(on, id)
		case !ch.at.Before(readAt):
			off = append(off, id)
		case time.Since(ch.at) > time.Minute:
			delete(n.sched, id) // every read since knows it
		}
	}
	return withSchedulable(topo, off, on)
}

// Config is the configuration in effect (the file as last read).
func (c *Controller) Config() *conf.Config { return c.config() }

// config is the config now: Options.Conf, or what the last reconfigure
// read.
func (c *Controller) config() *conf.Config {
	if cfg := c.cfg.Load(); cfg != nil {
		return cfg
	}
	return c.opt.Conf // a Controller made without New (tests)
}

// loadNodeAdmin reads the recorded node states (New).
func (c *Controller) loadNodeAdmin() error {
	c.nodes.recs = map[string]state.NodeAdmin{}
	if c.opt.Store == nil {
		return nil
	}
	recs, err := c.opt.Store.NodeAdmins()
	if err != nil {
		return fmt.Errorf("node states: %w", err)
	}
	c.nodes.recs = recs
	return nil
}

// newCluster is the cluster of the config now over topo, with the
// administrators' node states (c.mu held, or in New).
func (c *Controller) newCluster(topo *translate.Topology) *cluster {
	cl := newCluster(c.config(), topo)
	cl.admin = c.nodes.recs
	cl.setAvailability(c.cl.Load())
	return cl
}

// Availability of nodes, per cluster.

// nodeOut reports whether node name takes no new job (down: because it
// is down, not drained).
func (cl *cluster) nodeOut(name string) (out, down bool) {
	if r, ok := cl.admin[name]; ok && r.Unavailable() {
		out, down = true, r.Down
	}
	if a := cl.agent(name); a != nil {
		if a.Status != translate.AgentAlive {
			return true, true
		}
		if !a.Schedulable {
			out = true
		}
	}
	if n := cl.node(name); n != nil {
		switch strings.ToUpper(n.State) {
		case "DOWN":
			return true, true
		case "DRAIN", "FUTURE":
			out = true
		}
	}
	return out, down
}

// setAvailability counts each partition's available nodes and numbers
// the availability: the same as old's keeps old's number, so job
// records encoded under it stay valid (jobChunk.availGen).
func (cl *cluster) setAvailability(old *cluster) {
	cl.avail = make(map[string]int, len(cl.parts))
	var sig strings.Builder
	for _, n := range cl.nodes {
		if out, down := cl.nodeOut(n.Name); out {
			fmt.Fprintf(&sig, "%s:%v,", n.Name, down)
			cl.anyOut = true
		}
	}
	for _, p := range cl.parts {
		k := 0
		for _, name := range p.Nodes {
			if out, _ := cl.nodeOut(name); !out {
				k++
			}
		}
		cl.avail[p.Name] = k
		fmt.Fprintf(&sig, "|%s=%d/%d", p.Name, k, len(p.Nodes))
	}
	cl.availSig = sig.String()
	cl.availGen = 1
	if old != nil {
		cl.availGen = old.availGen
		if old.availSig != cl.availSig {
			cl.availGen++
		}
	}
}

// Texts of slurmctld's scheduler for a job its nodes keep from running
// (job_scheduler.c, node_scheduler.c; the same in 22.05 to 26.05).
const (
	descPartNodesOut = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
	descReqNodesOut  = "ReqNodeNotAvail, May be reserved for other job"
	descReqNodesDown = "ReqNodeNotAvail, UnavailableNodes:"
)

// blockedReason is the reason and description slurmctld's scheduler (of
// version v) gives an eligible pending job whose nodes are out: the nodes
// it asks for by name (ReqNodeNotAvail, naming those unavailable: from
// 24.11 on only those down, not drained), or too few available in its
// partition (Resources); ok false when none applies.
func (cl *cluster) blockedReason(j *state.Job, v uint16) (reason uint32, desc string, ok bool) {
	if !cl.anyOut {
		return 0, "", false // the common case: every node in service
	}
	if j.ReqNodes != "" {
		if names, err := hostlist.Expand(j.ReqNodes); err == nil {
			var outs, downs []string
			for _, n := range names {
				if out, down := cl.nodeOut(n); out {
					outs = append(outs, n)
					if down || v < codec.V24_11 {
						downs = append(downs, n)
					}
				}
			}
			switch {
			case len(downs) > 0:
				return codec.WAIT_NODE_NOT_AVAIL, descReqNodesDown + hostlist.Compress(downs), true
			case len(outs) > 0:
				return codec.WAIT_NODE_NOT_AVAIL, descReqNodesOut, true
			}
		}
	}
	need := max(int(j.MinNodes), 1)
	blocked := false
	for _, p := range strings.Split(j.Partition, ",") {
		k, known := cl.avail[p]
		if !known {
			return 0, "", false
		}
		if k >= need {
			return 0, "", false
		}
		blocked = true
	}
	if !blocked {
		return 0, "", false
	}
	return codec.WAIT_RESOURCES, descPartNodesOut, true
}

// ---- REQUEST_UPDATE_NODE

// updateNode handles REQUEST_UPDATE_NODE (scontrol update NodeName=...)
// from an administrator (adminDenied turned away the others).
func (c *Controller) updateNode(req *Request) Reply {
	var m codec.UpdateNodeRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	if m.NodeNames == "" {
		return rcReply(codec.ESLURM_INVALID_NODE_NAME)
	}
	if ch := m.Changes(); len(ch) > 0 {
		// Node attributes are the config's and the engine's: only the
		// state and its reason are administered here.
		c.logf("update_node %s: %s cannot be changed here (only State= and Reason=)", m.NodeNames, strings.Join(ch, ", "))
		return rcReply(codec.ESLURM_NOT_SUPPORTED)
	}
	names, err := hostlist.Expand(m.NodeNames)
	if err != nil || len(names) == 0 {
		return rcReply(codec.ESLURM_INVALID_NODE_NAME)
	}
	c.nodes.mu.Lock()
	defer c.nodes.mu.Unlock()
	now := time.Now().Unix()

	c.mu.Lock()
	cl := c.cluster()
	old := c.nodes.recs
	c.mu.Unlock()
	recs := make(map[string]state.NodeAdmin, len(old)+len(names))
	for k, v := range old {
		recs[k] = v
	}
	rc := uint32(codec.SLURM_SUCCESS)
	var downed []string
	resumed := map[string]bool{}
	for _, name := range names {
		if cl.node(name) == nil {
			// slurmctld stops at an unknown node; those before it
			// are changed.
			c.logf("update_node: node %s does not exist", name)
			rc = codec.ESLURM_INVALID_NODE_NAME
			break
		}
		rec := recs[name]
		wasDown := rec.Down
		switch m.NodeState {
		case codec.NODE_RESUME, codec.NODE_STATE_UNDRAIN, codec.NODE_STATE_IDLE:
			resumed[name] = true
		}
		if m.Reason != "" {
			rec.Reason, rec.ReasonTime, rec.ReasonUID = m.Reason, now, req.UID
		}
		if code := c.nodeState(cl, name, &rec, m.NodeState, req.Version); code != codec.SLURM_SUCCESS {
			rc = code // the next nodes are updated all the same; the reason stands
		}
		if rec.Down && !wasDown {
			downed = append(downed, name)
		}
		if !rec.Unavailable() {
			// Back in service, the node's reason goes: slurmctld
			// with accounting (as this server presents itself,
			// AccountingStorageType=accounting_storage/slurmdbd)
			// clears it then (clusteracct_storage_g_node_up); one
			// without keeps it until a job is allocated there.
			delete(recs, name)
			continue
		}
		rec.Name = name
		recs[name] = rec
	}
	// The engine first: a drain it did not take would be a lie.
	off, on, err := c.applySchedulable(cl, old, recs, resumed)
	if err != nil {
		c.logf("update_node %s: the engine refused: %v", m.NodeNames, err)
		return rcReply(engineCode(err))
	}
	c.mu.Lock()
	if c.opt.Store != nil {
		if err := c.opt.Store.PutNodeAdmin(recs); err != nil {
			c.mu.Unlock()
			c.logf("update_node %s: %v", m.NodeNames, err)
			return rcReply(codec.ESLURM_INTERNAL)
		}
	}
	c.nodes.recs = recs
	if c.nodes.sched == nil {
		c.nodes.sched = map[string]schedChange{}
	}
	at := time.Now()
	for _, id := range off {
		c.nodes.sched[id] = schedChange{at: at}
	}
	for _, id := range on {
		c.nodes.sched[id] = schedChange{at: at, on: true}
	}
	c.cl.Store(c.newCluster(withSchedulable(c.cluster().topo, off, on)))
	ended := c.endJobsOnNodes(downed, now)
	c.rebuild(now)
	c.mu.Unlock()
	ended.finish(c)
	c.wake()
	c.kickTopology()
	for _, n := range names {
		if r, ok := recs[n]; ok {
			c.logf("update_node: node %s: %s, reason %q", n, adminStateName(r), r.Reason)
		} else if _, was := old[n]; was {
			c.logf("update_node: node %s resumed", n)
		}
	}
	return rcReply(rc)
}

func adminStateName(r state.NodeAdmin) string {
	var s []string
	if r.Down {
		s = append(s, "DOWN")
	}
	if r.Drain {
		s = append(s, "DRAIN")
	}
	if r.Fail {
		s = append(s, "FAIL")
	}
	if len(s) == 0 {
		return "available"
	}
	return strings.Join(s, "+")
}

// nodeState applies state (an update's node_state) to node name's
// record, as update_node and _valid_node_state_change do; it returns the
// error slurmctld of version v gives a state it refuses for this node.
func (c *Controller) nodeState(cl *cluster, name string, rec *state.NodeAdmin, st uint32, v uint16) uint32 {
	out, down := cl.nodeOut(name)
	if n := cl.node(name); n != nil && (st == codec.NODE_RESUME || st == codec.NODE_STATE_UNDRAIN || st == codec.NODE_STATE_IDLE) {
		switch cs := strings.ToUpper(n.State); cs {
		case "DOWN", "DRAIN", "FUTURE":
			// The config says so, and it is what the engine reads:
			// it is changed there (and scontrol reconfigure).
			c.logf("update_node: node %s is State=%s in the config: change it there and reconfigure", name, cs)
			return codec.ESLURM_NOT_SUPPORTED
		}
	}
	refused := uint32(codec.ESLURM_INVALID_NODE_STATE)
	if v >= codec.V25_11 {
		refused = codec.ESLURM_INVALID_NODE_STATE_TRANSITION
	}
	switch st {
	case codec.NoVal:
		return codec.SLURM_SUCCESS
	case codec.NODE_STATE_DOWN:
		rec.Down = true // the DRAIN or FAIL flag stays (_make_node_down)
	case codec.NODE_STATE_DRAIN:
		rec.Drain, rec.Fail = true, false
	case codec.NODE_STATE_FAIL:
		rec.Drain, rec.Fail = false, true
	case codec.NODE_RESUME:
		// Valid on a node down, drained or failed, whoever made it so.
		if !out && !rec.Unavailable() {
			return refused
		}
		rec.Down, rec.Drain, rec.Fail = false, false, false
	case codec.NODE_STATE_UNDRAIN:
		// Then the node's base state is applied again: an idle node
		// is made IDLE, which clears FAIL too; a down one stays down.
		rec.Drain = false
		if !rec.Down && !c.nodeBusy(cl, name) {
			rec.Fail = false
		}
	case codec.NODE_STATE_IDLE:
		// Valid on idle and down nodes; clears DRAIN and FAIL too.
		if !down && !rec.Down && c.nodeBusy(cl, name) {
			return refused
		}
		rec.Down, rec.Drain, rec.Fail = false, false, false
	case codec.NODE_STATE_FUTURE, codec.NODE_STATE_NO_RESPOND:
		// Valid in slurmctld, but nodes here are the engine's: they
		// neither leave the cluster nor stop answering on request.
		return codec.ESLURM_NOT_SUPPORTED
	default:
		// ALLOCATED and the like, POWER_* without PowerSave,
		// CANCEL_REBOOT without a reboot: _valid_node_state_change
		// refuses them.
		return refused
	}
	return codec.SLURM_SUCCESS
}

// applySchedulable tells the engine which nodes stopped and started
// taking new jobs between the records old and recs. An agent the engine
// keeps out of scheduling without a record here (made unschedulable in
// Backend.AI's console: a drain as Slurm shows it) is taken back when
// an update in resumed (RESUME, UNDRAIN, IDLE) names it.
func (c *Controller) applySchedulable(cl *cluster, old, recs map[string]state.NodeAdmin, resumed map[string]bool) (off, on []string, err error) {
	sc, ok := c.opt.Backend.(translate.Scheduling)
	if !ok {
		return nil, nil, nil
	}
	for name, r := range recs {
		if r.Unavailable() && !old[name].Unavailable() {
			off = append(off, name)
		}
	}
	for name, r := range old {
		if r.Unavailable() && !recs[name].Unavailable() {
			on = append(on, name)
		}
	}
	for _, a := range cl.topo.Agents {
		if resumed[a.ID] && !a.Schedulable && !old[a.ID].Unavailable() && !recs[a.ID].Unavailable() {
			on = append(on, a.ID)
		}
	}
	sort.Strings(off)
	sort.Strings(on)
	ctx, cancel := engineCtx()
	defer cancel()
	if len(off) > 0 {
		if err := sc.SetSchedulable(ctx, off, false); err != nil {
			return nil, nil, err
		}
	}
	if len(on) > 0 {
		if err := sc.SetSchedulable(ctx, on, true); err != nil && !errors.Is(err, translate.ErrNoAgent) {
			return nil, nil, err
		}
	}
	return off, on, nil
}

// withSchedulable is topo with the agents in off and on as the engine
// now has them, until the next read of the engine's topology shows it.
func withSchedulable(topo *translate.Topology, off, on []string) *translate.Topology {
	if topo == nil || len(off)+len(on) == 0 {
		return topo
	}
	t := *topo
	t.Agents = append([]translate.Agent(nil), topo.Agents...)
	for i := range t.Agents {
		a := &t.Agents[i]
		switch {
		case slices.Contains(off, a.ID):
			a.Schedulable = false
		case slices.Contains(on, a.ID):
			a.Schedulable = true
		}
	}
	return &t
}

// nodeBusy reports whether jobs hold resources of node name (ours, or
// the engine's other sessions).
func (c *Controller) nodeBusy(cl *cluster, name string) bool {
	if a := c.snap.Load().alloc[name]; a != nil && (a.cpus > 0 || a.memMB > 0) {
		return true
	}
	if ag := cl.agent(name); ag != nil && (ag.Occupied.CPU > 0 || ag.Occupied.Mem > 0) {
		return true
	}
	return false
}

// ---- jobs on nodes going DOWN

// nodeDownEnd is what a DOWN left for the engine: sessions to end.
type nodeDownEnd struct {
	sessions []string
}

// finish ends the sessions (without c.mu).
func (e *nodeDownEnd) finish(c *Controller) {
	if e == nil || len(e.sessions) == 0 {
		return
	}
	c.destroySessions(e.sessions, false)
}

// requeueDelay is how long a job requeued by a node failure waits:
// slurmctld's batch_requeue_fini sets its begin time past the job
// credential's lifetime (120 s by default) plus one second.
const requeueDelay = 121

// endJobsOnNodes ends the jobs running on nodes that just went DOWN, as
// kill_running_job_by_node_name does (c.mu held): batch jobs that may be
// requeued go back to pending, the others end NODE_FAIL.
func (c *Controller) endJobsOnNodes(nodes []string, now int64) *nodeDownEnd {
	if len(nodes) == 0 {
		return nil
	}
	down := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		down[n] = true
	}
	jobRequeue := c.config().Get("JobRequeue", "1") != "0"
	end := &nodeDownEnd{}
	for _, e := range c.jobs {
		if e.hot == nil || !codec.JobIsRunning(e.state) {
			continue
		}
		j := *e.hot
		on := false
		for _, n := range e.expandedNodes(&j) {
			if down[n] {
				on = true
				break
			}
		}
		if !on {
			continue
		}
		if j.SessionID != "" && j.SessionID != sessionCreating {
			end.sessions = append(end.sessions, j.SessionID)
		}
		c.endSteps(j.ID)
		if j.Origin == "" && (j.Requeue || jobRequeue && !j.NoRequeue) {
			c.logf("requeue job %d due to failure of node %s", j.ID, firstOf(e.expandedNodes(&j), down))
			j.SessionID, j.State, j.Reason = "", codec.JOB_PENDING, codec.WAIT_TIME
			j.StartTime, j.EndTime, j.ExitCode, j.Nodes, j.BatchHost, j.TresAllocStr = 0, 0, 0, "", "", ""
			j.Restarts++
			j.SubmitTime, j.AccrueTime = now, 0
			j.BeginTime, j.EligibleTime = now+requeueDelay, now+requeueDelay
		} else {
			// Its session stays its own: the end the engine reports
			// gives the exit status releases before 24.11 show
			// (applyEvent); 24.11+ show 1 (jobInfo).
			c.logf("Killing job %d on failed node %s", j.ID, firstOf(e.expandedNodes(&j), down))
			j.State, j.Reason, j.EndTime, j.ExitCode = codec.JOB_NODE_FAIL, codec.FAIL_DOWN_NODE, now, 0
			c.counters.failed.Add(1)
			if j.Origin == originAlloc {
				c.allocEnded(&j)
			}
		}
		if err := c.opt.Store.Put(&j); err != nil {
			c.storeTrouble("job %d: %v; its new state is kept in memory and written once the store takes it", j.ID, err)
			c.swap(e, &j, false)
			go c.persistLater(j.ID)
			continue
		}
		c.replace(e, &j)
	}
	return end
}

// nodeFailed reports whether j was ended by its node going DOWN
// (endJobsOnNodes): finished, its session still winding down.
func nodeFailed(j *state.Job) bool {
	return j.State&codec.JOB_STATE_BASE == codec.JOB_NODE_FAIL && j.Reason == codec.FAIL_DOWN_NODE && j.State&codec.JOB_COMPLETING == 0
}

func firstOf(names []string, in map[string]bool) string {
	for _, n := range names {
		if in[n] {
			return n
		}
	}
	return ""
}

// reconcileSchedulable makes the engine agree with the recorded node
// states after a start: a node recorded out of service that the engine
// schedules on again is taken out again (the record stands until
// scontrol resume).
func (c *Controller) reconcileSchedulable(ctx context.Context) {
	sc, ok := c.opt.Backend.(translate.Scheduling)
	if !ok {
		return
	}
	c.mu.Lock()
	cl, recs := c.cluster(), c.nodes.recs
	c.mu.Unlock()
	var off []string
	for name, r := range recs {
		if a := cl.agent(name); r.Unavailable() && a != nil && a.Schedulable {
			off = append(off, name)
		}
	}
	if len(off) == 0 {
		return
	}
	sort.Strings(off)
	cctx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	if err := sc.SetSchedulable(cctx, off, false); err != nil {
		c.logf("nodes %v are recorded out of service but the engine schedules on them, and did not take them out: %v", off, err)
		return
	}
	c.kickTopology()
}

// ---- REQUEST_RECONFIGURE

// reconfigure handles REQUEST_RECONFIGURE (scontrol reconfigure): the
// config file is read again and its nodes, partitions, limits and other
// settings take effect; connections, jobs and node states stay. A file
// that cannot be read is refused, the old config kept, with what 23.11+
// answer when their new process fails to start (SLURM_ERROR: "Unspecified
// error"); 22.05's slurmctld exits there instead.
func (c *Controller) reconfigure(req *Request) Reply {
	if c.opt.Reload == nil {
		return rcReply(codec.ESLURM_NOT_SUPPORTED)
	}
	c.nodes.mu.Lock()
	defer c.nodes.mu.Unlock()
	cfg, err := c.opt.Reload()
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil {
		if rc, ok := c.opt.Backend.(translate.Reconfigurer); ok {
			err = rc.Reconfigure(cfg)
		}
	}
	if err != nil {
		c.logf("reconfigure: %v: the config stays as it was", err)
		return rcReply(codec.SLURM_ERROR)
	}
	now := time.Now().Unix()
	c.mu.Lock()
	c.cfg.Store(cfg)
	c.debugLevel.Store(0) // SlurmctldDebug's again, as a restarted slurmctld's
	c.private.Store(uint32(parsePrivateData(cfg.Get("PrivateData", ""))))
	c.nodes.confUpdate = now
	c.cl.Store(c.newCluster(c.cluster().topo))
	c.rebuild(now)
	c.mu.Unlock()
	c.logf("reconfigure: %d nodes, %d partitions", len(c.cluster().nodes), len(c.cluster().parts))
	c.kickTopology()
	c.wake()
	if c.opt.OnReconfigure != nil {
		// Configless nodes get the new files (sackd): the same
		// moment slurmctld pushes them (_post_reconfig).
		go c.opt.OnReconfigure()
	}
	return rcReply(codec.SLURM_SUCCESS)
}

// ---- REQUEST_SHUTDOWN

// shutdown handles REQUEST_SHUTDOWN (scontrol shutdown [slurmctld]):
// success, then the server stops as SIGTERM stops it. Jobs keep running
// (their shims, or the engine's sessions, outlive the server) as
// slurmstepds outlive slurmctld and slurmd. The nodes here are the
// engine's: a plain "shutdown", which stops every slurmd too, stops only
// the server's node stand-ins, which are part of it.
func (c *Controller) shutdown(req *Request) Reply {
	var m codec.ShutdownRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	if c.opt.Shutdown == nil {
		return rcReply(codec.ESLURM_NOT_SUPPORTED)
	}
	c.logf("Performing RPC: REQUEST_SHUTDOWN (options %d) from uid %d", m.Options, req.UID)
	// Once the answer is written: the shutdown closes the listeners.
	rep := rcReply(codec.SLURM_SUCCESS)
	rep.After = c.opt.Shutdown
	return rep
}
