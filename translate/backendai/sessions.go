package backendai

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Session statuses (SessionStatus in src/ai/backend/manager/data/session/types.py).
const (
	StatusPending         = "PENDING"
	StatusDeprioritizing  = "DEPRIORITIZING"
	StatusReserved        = "RESERVED"
	StatusScheduled       = "SCHEDULED"
	StatusPreparing       = "PREPARING"
	StatusPulling         = "PULLING"
	StatusPrepared        = "PREPARED"
	StatusCreating        = "CREATING"
	StatusRunning         = "RUNNING"
	StatusRestarting      = "RESTARTING"
	StatusRunningDegraded = "RUNNING_DEGRADED"
	StatusPreempted       = "PREEMPTED"
	StatusRescheduling    = "RESCHEDULING"
	StatusTerminating     = "TERMINATING"
	StatusTerminated      = "TERMINATED"
	StatusError           = "ERROR"
	StatusCancelled       = "CANCELLED"
)

// AllSessionStatuses lists every session status of 26.8.1.
var AllSessionStatuses = []string{
	StatusPending, StatusDeprioritizing, StatusReserved, StatusScheduled, StatusPreparing,
	StatusPulling, StatusPrepared, StatusCreating, StatusRunning, StatusRestarting,
	StatusRunningDegraded, StatusPreempted, StatusRescheduling, StatusTerminating,
	StatusTerminated, StatusError, StatusCancelled,
}

// Session results (SessionResult; batch exit: SUCCESS when the startup
// command exited 0).
const (
	ResultUndefined = "UNDEFINED"
	ResultSuccess   = "SUCCESS"
	ResultFailure   = "FAILURE"
)

// IsTerminalStatus: ERROR, TERMINATED, CANCELLED.
func IsTerminalStatus(s string) bool {
	return s == StatusError || s == StatusTerminated || s == StatusCancelled
}

// Session is a legacy GraphQL ComputeSession.
type Session struct {
	ID             string
	Name           string
	Type           string // enum name: BATCH, INTERACTIVE, …
	Tag            string
	Priority       int
	Image          string
	Architecture   string
	ClusterMode    string // single-node / multi-node
	ClusterSize    int
	DomainName     string
	GroupID        string
	GroupName      string // list queries only (see GetSession)
	UserID         string
	UserEmail      string
	AccessKey      string // the owner's
	ScalingGroup   string
	Status         string
	StatusChanged  *time.Time
	StatusInfo     string // reason, e.g. task-finished, user-requested, PENDING_TIMEOUT_EXCEEDED
	StatusData     JSONString
	StatusHistory  map[string]time.Time // status → when it was entered
	Result         string               // UNDEFINED, SUCCESS, FAILURE
	CreatedAt      *time.Time           // enqueue
	StartsAt       *time.Time           // actual start (set at RUNNING)
	ScheduledAt    *time.Time
	TerminatedAt   *time.Time
	StartupCommand string
	AgentIDs       []string
	RequestedSlots SlotMap // use this for accounting
	OccupiedSlots  SlotMap // live allocations: {} once terminated
	ServicePorts   JSONString
	Mounts         []string
	Dependencies   []string // session IDs this one waits for
	Kernels        []Kernel // nil unless asked for
}

// Kernel is a legacy GraphQL ComputeContainer.
type Kernel struct {
	ID              string
	ClusterRole     string // main / sub
	ClusterIdx      int
	LocalRank       int
	ClusterHostname string
	Image           string
	Architecture    string
	Status          string
	StatusInfo      string
	StatusData      JSONString // may hold kernel.exit_code
	Agent           string
	AgentAddr       string
	ContainerID     string
	OccupiedSlots   SlotMap
	CreatedAt       *time.Time
	StartsAt        *time.Time
	TerminatedAt    *time.Time
	LastStat        JSONString // the container's stats at termination (KernelStats)
}

// KernelStats is what a kernel's last_stat says of its use, as the agent
// serializes its metrics: cpu_used (msec) and mem's maximum (bytes).
type KernelStats struct {
	CPUMsec     float64
	MaxMemBytes uint64
	Known       bool
}

// Stats reads the kernel's last_stat; Known is false when it has none.
func (k *Kernel) Stats() KernelStats {
	var m map[string]map[string]any
	if len(k.LastStat) == 0 || k.LastStat.Decode(&m) != nil {
		return KernelStats{}
	}
	num := func(metric, field string) (float64, bool) {
		v, ok := m[metric][field]
		if !ok {
			return 0, false
		}
		switch x := v.(type) {
		case string:
			f, err := strconv.ParseFloat(x, 64)
			return f, err == nil
		case float64:
			return x, true
		}
		return 0, false
	}
	var st KernelStats
	if v, ok := num("cpu_used", "current"); ok {
		st.CPUMsec, st.Known = v, true
	}
	mem, ok := num("mem", "stats.max")
	if !ok {
		mem, ok = num("mem", "current")
	}
	if ok && mem > 0 {
		st.MaxMemBytes, st.Known = uint64(mem), true
	}
	return st
}

// ExitCode returns status_data.kernel.exit_code when the manager stored
// it (the container's exit code, which is not necessarily the batch
// command's).
func (k Kernel) ExitCode() (int, bool) {
	var sd struct {
		Kernel struct {
			ExitCode *int `json:"exit_code"`
		} `json:"kernel"`
	}
	if k.StatusData.Decode(&sd) != nil || sd.Kernel.ExitCode == nil {
		return 0, false
	}
	return *sd.Kernel.ExitCode, true
}

// The selection sets avoid fields that call out of the database per row
// (commit_status, abusing_reports, idle_checks, inference_metrics, the
// kernels' live_stat/last_stat, which 26.8.1 reads from Valkey).
const sessionFields = `id name type tag priority image architecture cluster_mode cluster_size
  domain_name group_id user_id user_email access_key scaling_group
  status status_changed status_info status_data status_history result
  created_at starts_at scheduled_at terminated_at startup_command
  agent_ids requested_slots occupied_slots service_ports mounts`

// briefFields are what the resync reads of a live session: its state,
// where it runs, and for one made outside the frontend what its job
// shows (Engine.foreignOf).
const briefFields = `id name type tag status status_changed status_info status_history result
  created_at starts_at terminated_at access_key agent_ids cluster_size
  scaling_group user_email group_name image requested_slots`

// Kernels are asked for with ended sessions only (their end is read once),
// so their last_stat, the stats at termination, costs one read each.
const kernelFields = `containers { id cluster_role cluster_idx local_rank cluster_hostname image architecture
  status status_info status_data agent agent_addr container_id occupied_slots created_at starts_at terminated_at last_stat }`

// gqlSession mirrors the wire shape.
type gqlSession struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Type           string     `json:"type"`
	Tag            *string    `json:"tag"`
	Priority       *int       `json:"priority"`
	Image          string     `json:"image"`
	Architecture   string     `json:"architecture"`
	ClusterMode    string     `json:"cluster_mode"`
	ClusterSize    int        `json:"cluster_size"`
	DomainName     string     `json:"domain_name"`
	GroupID        string     `json:"group_id"`
	GroupName      string     `json:"group_name"`
	UserID         string     `json:"user_id"`
	UserEmail      string     `json:"user_email"`
	AccessKey      string     `json:"access_key"`
	ScalingGroup   string     `json:"scaling_group"`
	Status         string     `json:"status"`
	StatusChanged  gqlTime    `json:"status_changed"`
	StatusInfo     *string    `json:"status_info"`
	StatusData     JSONString `json:"status_data"`
	StatusHistory  JSONString `json:"status_history"`
	Result         string     `json:"result"`
	CreatedAt      gqlTime    `json:"created_at"`
	StartsAt       gqlTime    `json:"starts_at"`
	ScheduledAt    gqlTime    `json:"scheduled_at"`
	TerminatedAt   gqlTime    `json:"terminated_at"`
	StartupCommand *string    `json:"startup_command"`
	AgentIDs       []string   `json:"agent_ids"`
	RequestedSlots SlotMap    `json:"requested_slots"`
	OccupiedSlots  SlotMap    `json:"occupied_slots"`
	ServicePorts   JSONString `json:"service_ports"`
	Mounts         []string   `json:"mounts"`
	Dependencies   []struct {
		ID string `json:"id"`
	} `json:"dependencies"`
	Containers []struct {
		ID              string     `json:"id"`
		ClusterRole     string     `json:"cluster_role"`
		ClusterIdx      int        `json:"cluster_idx"`
		LocalRank       int        `json:"local_rank"`
		ClusterHostname string     `json:"cluster_hostname"`
		Image           string     `json:"image"`
		Architecture    string     `json:"architecture"`
		Status          string     `json:"status"`
		StatusInfo      *string    `json:"status_info"`
		StatusData      JSONString `json:"status_data"`
		Agent           *string    `json:"agent"`
		AgentAddr       *string    `json:"agent_addr"`
		ContainerID     *string    `json:"container_id"`
		OccupiedSlots   SlotMap    `json:"occupied_slots"`
		CreatedAt       gqlTime    `json:"created_at"`
		StartsAt        gqlTime    `json:"starts_at"`
		TerminatedAt    gqlTime    `json:"terminated_at"`
		LastStat        JSONString `json:"last_stat"`
	} `json:"containers"`
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (g *gqlSession) toSession() Session {
	s := Session{
		ID: g.ID, Name: g.Name, Type: g.Type, Tag: deref(g.Tag), Priority: deref(g.Priority),
		Image: g.Image, Architecture: g.Architecture, ClusterMode: g.ClusterMode, ClusterSize: g.ClusterSize,
		DomainName: g.DomainName, GroupID: g.GroupID, GroupName: g.GroupName, UserID: g.UserID,
		UserEmail: g.UserEmail, AccessKey: g.AccessKey, ScalingGroup: g.ScalingGroup,
		Status: g.Status, StatusChanged: g.StatusChanged.t, StatusInfo: deref(g.StatusInfo),
		StatusData: g.StatusData, Result: g.Result,
		CreatedAt: g.CreatedAt.t, StartsAt: g.StartsAt.t, ScheduledAt: g.ScheduledAt.t, TerminatedAt: g.TerminatedAt.t,
		StartupCommand: deref(g.StartupCommand), AgentIDs: g.AgentIDs,
		RequestedSlots: g.RequestedSlots, OccupiedSlots: g.OccupiedSlots,
		ServicePorts: g.ServicePorts, Mounts: g.Mounts,
	}
	if s.StatusInfo == "None" {
		s.StatusInfo = ""
	}
	s.StatusHistory = decodeStatusHistory(g.StatusHistory)
	for _, d := range g.Dependencies {
		s.Dependencies = append(s.Dependencies, d.ID)
	}
	if g.Containers != nil {
		s.Kernels = make([]Kernel, 0, len(g.Containers))
		for _, k := range g.Containers {
			s.Kernels = append(s.Kernels, Kernel{
				ID: k.ID, ClusterRole: k.ClusterRole, ClusterIdx: k.ClusterIdx, LocalRank: k.LocalRank,
				ClusterHostname: k.ClusterHostname, Image: k.Image, Architecture: k.Architecture,
				Status: k.Status, StatusInfo: deref(k.StatusInfo), StatusData: k.StatusData,
				Agent: deref(k.Agent), AgentAddr: deref(k.AgentAddr), ContainerID: deref(k.ContainerID),
				OccupiedSlots: k.OccupiedSlots, CreatedAt: k.CreatedAt.t, StartsAt: k.StartsAt.t,
				TerminatedAt: k.TerminatedAt.t, LastStat: k.LastStat,
			})
		}
	}
	return s
}

// decodeStatusHistory reads {"PENDING": "2026-…", …}; entries that are not
// timestamps are skipped.
func decodeStatusHistory(js JSONString) map[string]time.Time {
	var raw map[string]json.RawMessage
	if js.Decode(&raw) != nil || len(raw) == 0 {
		return nil
	}
	out := make(map[string]time.Time, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		if t, ok := parseISOTime(s); ok {
			out[k] = t
		}
	}
	return out
}

// GetSession reads one session by UUID in any status (legacy GraphQL
// compute_session(id)); a missing session gives an error for which
// IsNotFound is true. GroupName is left empty: in 26.8.1 the single-row
// loader labels the project name as a scalar and parse_row takes its
// first element, so compute_session.group_name is only the first letter of
// the project name (use GroupID, or ListSessions).
func (c *Client) GetSession(ctx context.Context, sessionID string, withKernels bool) (*Session, error) {
	id, err := canonicalUUID(sessionID)
	if err != nil {
		return nil, err
	}
	sel := sessionFields + " dependencies { id }"
	if withKernels {
		sel += " " + kernelFields
	}
	q := "query($id: UUID!) { compute_session(id: $id) { " + sel + " } }"
	var ans struct {
		Session *gqlSession `json:"compute_session"`
	}
	if err := c.Query(ctx, q, map[string]any{"id": id}, &ans); err != nil {
		return nil, err
	}
	if ans.Session == nil {
		return nil, fmt.Errorf("backendai: session %s: %w", id, ErrNotFound)
	}
	s := ans.Session.toSession()
	s.GroupName = ""
	return &s, nil
}

// SessionFilter selects sessions for ListSessions. Empty fields do not
// filter. Non-superadmin keypairs are confined by the manager to their
// domain (admin) or own sessions (user).
type SessionFilter struct {
	Statuses       []string // status names (the "status" argument)
	OwnerAccessKey string   // the "access_key" scope argument
	DomainName     string
	GroupID        string // project UUID
	Name           string // name == …
	ScalingGroup   string
	Type           string // "batch", "interactive", …
	CreatedAfter   time.Time
	// TerminatedAfter selects sessions that ended at or after this time
	// (for accounting).
	TerminatedAfter time.Time
	// Filter is an extra minilang expression ANDed with the above
	// (src/ai/backend/manager/models/minilang/queryfilter.py).
	Filter string
	// Order is a minilang ordering ("-created_at"); default "+created_at".
	Order       string
	PageSize    int  // default 100
	Limit       int  // stop after this many; 0 = all
	WithKernels bool // also fetch the kernels (containers)
	// Brief asks only what a reconciliation of live sessions reads
	// (briefFields): the startup command alone (the job's whole script
	// in ours) was most of a listing's bytes.
	Brief bool
}

func (f SessionFilter) expr() (string, error) {
	var parts []string
	add := func(field, v string) error {
		if v == "" {
			return nil
		}
		q, err := quoteFilter(v)
		if err != nil {
			return err
		}
		parts = append(parts, field+" == "+q)
		return nil
	}
	if err := add("name", f.Name); err != nil {
		return "", err
	}
	if err := add("scaling_group", f.ScalingGroup); err != nil {
		return "", err
	}
	if err := add("type", strings.ToLower(f.Type)); err != nil {
		return "", err
	}
	if !f.CreatedAfter.IsZero() {
		parts = append(parts, `created_at >= "`+f.CreatedAfter.UTC().Format(time.RFC3339Nano)+`"`)
	}
	if !f.TerminatedAfter.IsZero() {
		parts = append(parts, `terminated_at >= "`+f.TerminatedAfter.UTC().Format(time.RFC3339Nano)+`"`)
	}
	if f.Filter != "" {
		parts = append(parts, f.Filter)
	}
	return andFilters(parts...), nil
}

// ListSessions pages through legacy GraphQL compute_session_list. Offset
// paging over a changing table can skip or repeat a session between
// pages; repeats are dropped here, and a caller that needs a complete
// picture reconciles with the event stream.
func (c *Client) ListSessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	filter, err := f.expr()
	if err != nil {
		return nil, err
	}
	for _, st := range f.Statuses {
		if strings.ContainsAny(st, ", ") || st == "" {
			return nil, fmt.Errorf("%w: status %q", ErrInvalidRequest, st)
		}
	}
	vars := map[string]any{}
	if filter != "" {
		vars["filter"] = filter
	}
	order := f.Order
	if order == "" {
		order = "+created_at"
	}
	vars["order"] = order
	if len(f.Statuses) > 0 {
		vars["status"] = strings.Join(f.Statuses, ",")
	}
	if f.OwnerAccessKey != "" {
		vars["ak"] = f.OwnerAccessKey
	}
	if f.DomainName != "" {
		vars["domain"] = f.DomainName
	}
	if f.GroupID != "" {
		g, err := canonicalUUID(f.GroupID)
		if err != nil {
			return nil, err
		}
		vars["group"] = g
	}
	sel := sessionFields + " group_name"
	if f.Brief {
		sel = briefFields
	}
	if f.WithKernels {
		sel += " " + kernelFields
	}
	q := `query($limit: Int!, $offset: Int!, $filter: String, $order: String, $domain: String, $group: String, $ak: String, $status: String) {
  compute_session_list(limit: $limit, offset: $offset, filter: $filter, order: $order,
      domain_name: $domain, group_id: $group, access_key: $ak, status: $status) {
    total_count
    items { ` + sel + ` }
  }
}`
	var out []Session
	seen := map[string]bool{}
	err = pageAll(ctx, f.PageSize, f.Limit, func(ctx context.Context, offset, limit int) (int, int, error) {
		vars["limit"], vars["offset"] = limit, offset
		var ans struct {
			List *struct {
				TotalCount int           `json:"total_count"`
				Items      []*gqlSession `json:"items"`
			} `json:"compute_session_list"`
		}
		if err := c.Query(ctx, q, vars, &ans); err != nil {
			return 0, 0, err
		}
		if ans.List == nil {
			return 0, 0, nil
		}
		for _, it := range ans.List.Items {
			if it == nil || seen[it.ID] {
				continue
			}
			seen[it.ID] = true
			out = append(out, it.toSession())
		}
		return len(ans.List.Items), ans.List.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
