package double

import (
	"fmt"
	"net/http"
	"sort"
	"time"
)

// GET /scaling-groups?group= (api/rest/scaling_group/handler.py,
// services/scaling_group/service.py list_allowed_sgroups).
func (d *Double) hScalingGroups(c *rctx) (*response, *problem) {
	g, ok := c.query("group", "group_id", "group_name")
	if !ok {
		return nil, validationProblem("ListScalingGroupsRequest", []verr{{loc: "group", typ: "missing", msg: "Field required", input: queryDict(c)}})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	au := c.auth
	dom := au.user.domain
	var proj *project
	if id, okU := canonUUID(g); okU {
		if p := d.projects[id]; p != nil && p.domain == dom {
			proj = p
		}
	} else {
		proj = d.projectByName(dom, g)
	}
	// An unknown project is not an error: domain and keypair groups stay.
	var names []any
	for _, rg := range d.allowedRGs(dom, proj, au.kp.accessKey) {
		if !au.isAdmin && !rg.public {
			continue
		}
		names = append(names, obj{{"name", rg.name}})
	}
	if names == nil {
		names = []any{}
	}
	return ok200(obj{{"scaling_groups", names}})
}

func queryDict(c *rctx) map[string]any {
	m := map[string]any{}
	for k, v := range c.r.URL.Query() {
		m[k] = v[0]
	}
	return m
}

// GET /config/resource-slots: known slot types (etcd config/resource_slots
// plus the intrinsic cpu and mem).
func (d *Double) hResourceSlots(c *rctx) (*response, *problem) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := obj{}
	for _, n := range d.slotOrder {
		o = append(o, kv{n, string(d.slotTypes[n])})
	}
	return ok200(o)
}

// GET /folders (api/rest/vfolder/handler.py list_folders): the
// requester's folders, or a project's with ?group_id=.
func (d *Double) hListFolders(c *rctx) (*response, *problem) {
	d.mu.Lock()
	defer d.mu.Unlock()
	au := c.auth
	owner := au.user
	if email, ok := c.query("owner_user_email"); ok {
		if !au.isSuperadmin {
			return nil, errInvalidAPIParams.with("Only superadmins may have user scopes.")
		}
		owner = d.byEmail[email]
		if owner == nil {
			return nil, objectNotFound("user", "user_read_not-found", strp(fmt.Sprintf("User not found (email:%s)", email)), nil)
		}
	}
	var groupID string
	if g, ok := c.query("group_id"); ok {
		id, okU := canonUUID(g)
		if !okU {
			return nil, validationProblem("ListVFoldersQuery", []verr{{loc: "group_id", typ: "uuid_parsing", msg: "Input should be a valid UUID", input: g}})
		}
		groupID = id
	}
	items := []any{}
	for _, vf := range d.vfolders {
		switch {
		case groupID != "":
			if vf.group == nil || vf.group.id != groupID {
				continue
			}
		case vf.user != nil:
			if vf.user != owner {
				continue
			}
		default:
			member := false
			for _, p := range owner.projects {
				if p == vf.group {
					member = true
				}
			}
			if !member {
				continue
			}
		}
		var userV, groupV any
		quota := ""
		creator := ""
		isOwner := false
		if vf.user != nil {
			userV = vf.user.uuid
			quota = "user:" + vf.user.uuid
			creator = vf.user.email
			isOwner = vf.user == owner
		} else {
			groupV = vf.group.id
			quota = "project:" + vf.group.id
		}
		items = append(items, obj{{"id", hex32(vf.id)}, {"name", vf.name}, {"quota_scope_id", quota}, {"host", vf.host},
			{"usage_mode", vf.usage}, {"created_at", pyStrDatetime(vf.createdAt)}, {"permission", vf.permission},
			{"creator", creator}, {"ownership_type", vf.ownership}, {"user", userV}, {"group", groupV},
			{"cloneable", vf.cloneable}, {"status", vf.status}, {"is_owner", isOwner}, {"max_size", 0},
			{"user_email", ""}, {"group_name", ""}, {"type", ""}, {"max_files", 0}, {"cur_size", 0}})
	}
	return ok200(items)
}

func hex32(id string) string {
	b := make([]byte, 0, 32)
	for i := 0; i < len(id); i++ {
		if id[i] != '-' {
			b = append(b, id[i])
		}
	}
	return string(b)
}

// ---- test knobs on agents and sessions

// MarkAgentLost marks an agent LOST (heartbeat timeout): it leaves
// scheduling at once; its kernels are found stale StaleKernelAfter later.
func (d *Double) MarkAgentLost(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.agents[id]
	if a == nil {
		return fmt.Errorf("double: no agent %q", id)
	}
	if a.status == "LOST" || a.status == "TERMINATED" {
		return nil
	}
	now := time.Now().UTC()
	a.status, a.lostAt, a.statusChanged = "LOST", now, now
	return nil
}

// MarkAgentAlive brings an agent back (ALIVE).
func (d *Double) MarkAgentAlive(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.agents[id]
	if a == nil {
		return fmt.Errorf("double: no agent %q", id)
	}
	a.status, a.statusChanged = "ALIVE", time.Now().UTC()
	a.rg.scheduleNeeded = true
	return nil
}

// SetAgentSchedulable sets an agent's schedulable flag.
func (d *Double) SetAgentSchedulable(id string, on bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.agents[id]
	if a == nil {
		return fmt.Errorf("double: no agent %q", id)
	}
	a.schedulable = on
	a.rg.scheduleNeeded = true
	return nil
}

// SessionInfo is a snapshot of a session for tests.
type SessionInfo struct {
	ID, Name, AccessKey, Type string
	Status                    string
	StatusInfo                *string
	Result                    string
	Priority, JobPriority     int
	Agents                    []string
	KernelStatuses            []string
	History                   []string // status names in status_history order
	CreatedAt, StartsAt       time.Time
	TerminatedAt              time.Time
	ResourceGroup             string
}

// Session returns a snapshot of a session by id.
func (d *Double) Session(id string) (SessionInfo, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sessions[id]
	if s == nil {
		return SessionInfo{}, false
	}
	return d.snapshot(s), true
}

func (d *Double) snapshot(s *session) SessionInfo {
	si := SessionInfo{ID: s.id, Name: s.name, AccessKey: s.accessKey, Type: s.typ, Status: s.status.String(),
		Result: s.result.String(), Priority: s.priority, JobPriority: s.jobPriority, CreatedAt: s.createdAt,
		StartsAt: s.startsAt, TerminatedAt: s.termAt, ResourceGroup: s.rg.name}
	if s.statusInfo != nil {
		v := *s.statusInfo
		si.StatusInfo = &v
	}
	for _, k := range s.kernels {
		if k.agent != nil && !containsStr(si.Agents, k.agent.id) {
			si.Agents = append(si.Agents, k.agent.id)
		}
		si.KernelStatuses = append(si.KernelStatuses, k.status.String())
	}
	for _, h := range s.hist {
		si.History = append(si.History, h.st.String())
	}
	return si
}

// Sessions lists snapshots of every session in creation order.
func (d *Double) Sessions() []SessionInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]SessionInfo, 0, len(d.sessSeq))
	for _, s := range d.sessSeq {
		out = append(out, d.snapshot(s))
	}
	return out
}

// Counts returns how many sessions are in each status.
func (d *Double) Counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := map[string]int{}
	for _, s := range d.sessSeq {
		m[s.status.String()]++
	}
	return m
}

// WaitStatus waits until the session reaches status (or any terminal
// status when status is "terminal"), returning the last snapshot.
func (d *Double) WaitStatus(id, status string, timeout time.Duration) (SessionInfo, error) {
	end := time.Now().Add(timeout)
	for {
		si, ok := d.Session(id)
		if ok {
			st, _ := ParseStatus(si.Status)
			if si.Status == status || (status == "terminal" && st.terminal()) {
				return si, nil
			}
		}
		if time.Now().After(end) {
			return si, fmt.Errorf("double: session %s is %s, not %s, after %v", id, si.Status, status, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// AdvanceSession forces a session to a status, as if the scheduler and
// agents had taken it there: PENDING→SCHEDULED..RUNNING places it
// (ignoring capacity) and walks the stages in order; TERMINATING /
// TERMINATED / CANCELLED terminate it with reason (default
// "user-requested"); ERROR ends it in ERROR with reason. For a batch
// session reaching RUNNING its task starts as usual; use FinishTask to
// end it with an exit code.
func (d *Double) AdvanceSession(id, status, reason string) error {
	target, ok := ParseStatus(status)
	if !ok {
		return fmt.Errorf("double: unknown status %q", status)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sessions[id]
	if s == nil {
		return fmt.Errorf("double: no session %s", id)
	}
	e := d.eng
	now := time.Now().UTC()
	if reason == "" {
		reason = "user-requested"
	}
	moved := map[*session]bool{}
	switch target {
	case StTerminating, StTerminated, StCancelled:
		if s.status == StPending && target != StCancelled {
			d.markTerminating([]*session{s}, reason, false, "", now)
			return nil
		}
		if target == StCancelled {
			if s.status != StPending {
				return fmt.Errorf("double: only a PENDING session can be CANCELLED (it is %s)", s.status)
			}
			d.markTerminating([]*session{s}, reason, false, "", now)
			return nil
		}
		d.markTerminating([]*session{s}, reason, target == StTerminated, "", now)
		return nil
	case StError:
		for _, k := range s.kernels {
			if !k.status.terminal() {
				if d.run != nil && k.live() {
					d.run.kill(k, true)
				}
				e.setKernel(k, StError, now, strp(reason))
			}
		}
		e.setStatus(s, StError, now, strp(reason))
		d.hub.sched(s, StError, reason)
		return nil
	}
	order := []Status{StPending, StScheduled, StPreparing, StPrepared, StCreating, StRunning}
	pos := func(st Status) int {
		for i, o := range order {
			if o == st {
				return i
			}
		}
		return -1
	}
	if pos(target) < 0 || pos(s.status) < 0 || pos(target) < pos(s.status) {
		return fmt.Errorf("double: cannot advance %s from %s to %s", id, s.status, target)
	}
	for pos(s.status) < pos(target) {
		switch s.status {
		case StPending:
			cands := s.rg.agents
			if len(cands) == 0 {
				return fmt.Errorf("double: resource group %s has no agents", s.rg.name)
			}
			for i, k := range s.kernels {
				a := cands[i%len(cands)]
				if s.clusterMode == "single-node" {
					a = cands[0]
				}
				d.allocate(k, a)
				e.setKernel(k, StScheduled, now, nil)
			}
			d.unqueuePending(s)
			e.setStatus(s, StScheduled, now, nil)
			d.hub.sched(s, StScheduled, "triggered-by-scheduler")
		case StScheduled:
			e.precondition(s, now, moved)
			for _, k := range s.kernels {
				k.due = now
			}
		case StPreparing:
			for _, k := range s.kernels {
				if k.status == StPreparing || k.status == StPulling {
					e.setKernel(k, StPrepared, now, nil)
				}
			}
			e.promote(s, StPrepared, now, "triggered-by-scheduler", moved)
		case StPrepared:
			e.start(s, now, moved)
		case StCreating:
			for _, k := range s.kernels {
				if k.status == StCreating {
					k.containerID = containerIDFor(k.id)
					e.setKernel(k, StRunning, now, strp(""))
					d.hub.kernel(k, "kernel_started", "")
				}
			}
			e.promote(s, StRunning, now, "triggered-by-scheduler", moved)
		}
	}
	return nil
}

// FinishTask ends a running batch session's task with an exit code, as
// the agent reports it (task-finished when 0, else task-failed).
func (d *Double) FinishTask(id string, exitCode int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sessions[id]
	if s == nil {
		return fmt.Errorf("double: no session %s", id)
	}
	if s.status != StRunning || s.typ != "BATCH" {
		return fmt.Errorf("double: session %s is not a running batch session", id)
	}
	reason := "task-finished"
	if exitCode != 0 {
		reason = "task-failed"
	}
	if d.run != nil {
		d.run.kill(s.main(), true)
	}
	d.eng.batchResult(s, exitCode, reason, time.Now().UTC(), map[*session]bool{})
	return nil
}

// AgentIDs lists agent ids sorted.
func (d *Double) AgentIDs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.agents))
	for id := range d.agents {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// PurgeTerminated forgets the sessions that have ended, as the manager's
// database cleanup does for old terminated sessions: they are no longer
// listed or found by id. It returns how many went.
func (d *Double) PurgeTerminated() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	keep := d.sessSeq[:0]
	for _, s := range d.sessSeq {
		if !s.status.terminal() {
			keep = append(keep, s)
			continue
		}
		n++
		delete(d.sessions, s.id)
		for _, k := range s.kernels {
			delete(d.kernels, k.id)
		}
		key := s.accessKey + "\x00" + s.name
		l := d.byName[key][:0]
		for _, x := range d.byName[key] {
			if x != s {
				l = append(l, x)
			}
		}
		if len(l) == 0 {
			delete(d.byName, key)
		} else {
			d.byName[key] = l
		}
	}
	for i := len(keep); i < len(d.sessSeq); i++ {
		d.sessSeq[i] = nil
	}
	d.sessSeq = keep
	return n
}

// POST /manager/scheduler/operation (api/rest/manager/handler.py
// perform_scheduler_ops, superadmin_required): {"op": "include-agents" |
// "exclude-agents", "args": [agent ids]} sets the agents' schedulable
// flag (services/manager_admin/service.py). The update covers the ids
// that exist; if it touched fewer rows than ids were given (an unknown
// id, or one given twice), the answer is InstanceNotFound, the update
// made all the same. 204 otherwise.
func (d *Double) hSchedulerOps(c *rctx) (*response, *problem) {
	if p := superadminOnly(c); p != nil {
		return nil, p
	}
	m, p := c.jsonBody()
	if p != nil {
		return nil, p
	}
	var errs fieldErrs
	op, hasOp := m["op"]
	opStr, isStr := op.(string)
	switch {
	case !hasOp:
		errs.add("op", "missing", "Field required", m)
	case !isStr:
		errs.add("op", "string_type", "Input should be a valid string", op)
	}
	args, hasArgs := m["args"]
	if !hasArgs {
		errs.add("args", "missing", "Field required", m)
	}
	if len(errs) > 0 {
		return nil, validationProblem("SchedulerOpsRequest", errs)
	}
	var enum string
	switch opStr {
	case "include-agents":
		enum = "SchedulerOps.INCLUDE_AGENTS"
	case "exclude-agents":
		enum = "SchedulerOps.EXCLUDE_AGENTS"
	default:
		// SchedulerOps(op) raises ValueError, which the exception
		// middleware turns into InternalServerError.
		return nil, internalError()
	}
	// trafaret t.List(t.String): a list of non-blank strings.
	list, ok := args.([]any)
	var ids []string
	var bad any
	if !ok {
		bad = "value is not a list"
	} else {
		perItem := map[string]any{}
		for i, v := range list {
			s, isS := v.(string)
			switch {
			case !isS:
				perItem[fmt.Sprint(i)] = "value is not a string"
			case s == "":
				perItem[fmt.Sprint(i)] = "blank value is not allowed"
			default:
				ids = append(ids, s)
			}
		}
		if len(perItem) > 0 {
			bad = perItem
		}
	}
	if bad != nil {
		return nil, errInvalidAPIParams.withData(strp("Input validation failed for args with "+enum), bad)
	}
	on := opStr == "include-agents"
	d.mu.Lock()
	rows := 0
	seen := map[string]bool{}
	for _, id := range ids {
		a := d.agents[id]
		if a == nil || seen[id] {
			continue
		}
		seen[id] = true
		rows++
		a.schedulable = on
		a.rg.scheduleNeeded = true
	}
	d.mu.Unlock()
	if rows < len(ids) {
		return nil, objectNotFound("agent instance", "instance_read_not-found", nil, nil)
	}
	return &response{status: http.StatusNoContent, raw: []byte{}}, nil
}

// AgentSchedulable reports an agent's schedulable flag (ok false: no
// such agent).
func (d *Double) AgentSchedulable(id string) (schedulable, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.agents[id]
	if a == nil {
		return false, false
	}
	return a.schedulable, true
}
