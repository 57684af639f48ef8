package backendai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Agent statuses (AgentStatus in src/ai/backend/manager/data/agent/types.py).
const (
	AgentAlive      = "ALIVE"
	AgentLost       = "LOST"
	AgentRestarting = "RESTARTING"
	AgentTerminated = "TERMINATED"
)

// ResourceGroup is a legacy GraphQL ScalingGroup (a Slurm partition).
type ResourceGroup struct {
	Name           string     `json:"name"`
	Description    string     `json:"description"`
	IsActive       bool       `json:"is_active"`
	IsPublic       bool       `json:"is_public"`
	Driver         string     `json:"driver"`
	Scheduler      string     `json:"scheduler"`
	SchedulerOpts  JSONString `json:"scheduler_opts"` // allowed_session_types, pending_timeout, preemption, …
	UseHostNetwork bool       `json:"use_host_network"`
	// ResourceAllocationLimitForSessions is, in 26.8.1, the per-slot
	// maximum over the group's schedulable agents' capacities (the most
	// one single-node kernel could get), computed by the resolver.
	ResourceAllocationLimitForSessions SlotMap `json:"resource_allocation_limit_for_sessions"`
}

const resourceGroupFields = `name description is_active is_public driver scheduler scheduler_opts
  use_host_network resource_allocation_limit_for_sessions`

// ResourceGroups lists every resource group (superadmin; legacy GraphQL
// scaling_groups). activeOnly filters on is_active. (The schema also
// declares a "name" argument the 26.8.1 resolver does not accept, so it is
// never sent.)
func (c *Client) ResourceGroups(ctx context.Context, activeOnly bool) ([]ResourceGroup, error) {
	q := "query($active: Boolean) { scaling_groups(is_active: $active) { " + resourceGroupFields + " } }"
	vars := map[string]any{}
	if activeOnly {
		vars["active"] = true
	}
	var ans struct {
		Groups []*ResourceGroup `json:"scaling_groups"`
	}
	if err := c.Query(ctx, q, vars, &ans); err != nil {
		return nil, err
	}
	return derefAll(ans.Groups), nil
}

// ResourceGroupsForProject lists the resource groups associated with a
// project (superadmin; scaling_groups_for_user_group, which takes the
// project UUID). A user may use the union of the domain's, the project's
// and the keypair's groups.
func (c *Client) ResourceGroupsForProject(ctx context.Context, projectID string, activeOnly bool) ([]ResourceGroup, error) {
	id, err := canonicalUUID(projectID)
	if err != nil {
		return nil, err
	}
	q := "query($g: String!, $active: Boolean) { scaling_groups_for_user_group(user_group: $g, is_active: $active) { " + resourceGroupFields + " } }"
	vars := map[string]any{"g": id}
	if activeOnly {
		vars["active"] = true
	}
	var ans struct {
		Groups []*ResourceGroup `json:"scaling_groups_for_user_group"`
	}
	if err := c.Query(ctx, q, vars, &ans); err != nil {
		return nil, err
	}
	return derefAll(ans.Groups), nil
}

// ResourceGroupsForKeypair lists the resource groups associated with an
// access key (superadmin; scaling_groups_for_keypair).
func (c *Client) ResourceGroupsForKeypair(ctx context.Context, accessKey string, activeOnly bool) ([]ResourceGroup, error) {
	q := "query($ak: String!, $active: Boolean) { scaling_groups_for_keypair(access_key: $ak, is_active: $active) { " + resourceGroupFields + " } }"
	vars := map[string]any{"ak": accessKey}
	if activeOnly {
		vars["active"] = true
	}
	var ans struct {
		Groups []*ResourceGroup `json:"scaling_groups_for_keypair"`
	}
	if err := c.Query(ctx, q, vars, &ans); err != nil {
		return nil, err
	}
	return derefAll(ans.Groups), nil
}

// AllowedResourceGroups is GET /scaling-groups?group=<project name or
// UUID>: the names usable by the *admin keypair itself* in that project
// (the handler uses the caller's domain and access key; there is no
// delegation). group is mandatory.
func (c *Client) AllowedResourceGroups(ctx context.Context, project string) ([]string, error) {
	if project == "" {
		return nil, fmt.Errorf("%w: project is required", ErrInvalidRequest)
	}
	var ans struct {
		ScalingGroups []struct {
			Name string `json:"name"`
		} `json:"scaling_groups"`
	}
	if err := c.Do(ctx, Request{Method: http.MethodGet, Path: "/scaling-groups", Query: url.Values{"group": {project}}}, &ans); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ans.ScalingGroups))
	for _, g := range ans.ScalingGroups {
		names = append(names, g.Name)
	}
	return names, nil
}

// Agent is a legacy GraphQL Agent (a Slurm node).
type Agent struct {
	ID             string
	Status         string // ALIVE, LOST, RESTARTING, TERMINATED
	StatusChanged  *time.Time
	Region         string
	ResourceGroup  string
	Schedulable    bool
	AvailableSlots SlotMap // capacity
	OccupiedSlots  SlotMap
	Addr           string
	Architecture   string
	FirstContact   *time.Time
	LostAt         *time.Time
	Version        string
	ComputePlugins JSONString
}

type gqlAgent struct {
	ID             string     `json:"id"`
	Status         string     `json:"status"`
	StatusChanged  gqlTime    `json:"status_changed"`
	Region         *string    `json:"region"`
	ScalingGroup   string     `json:"scaling_group"`
	Schedulable    *bool      `json:"schedulable"`
	AvailableSlots SlotMap    `json:"available_slots"`
	OccupiedSlots  SlotMap    `json:"occupied_slots"`
	Addr           string     `json:"addr"`
	Architecture   string     `json:"architecture"`
	FirstContact   gqlTime    `json:"first_contact"`
	LostAt         gqlTime    `json:"lost_at"`
	Version        string     `json:"version"`
	ComputePlugins JSONString `json:"compute_plugins"`
}

// AgentFilter selects agents for Agents.
type AgentFilter struct {
	ResourceGroup string
	Statuses      []string // default: every status
	// SchedulableOnly adds "schedulable == true".
	SchedulableOnly bool
	Filter          string // extra minilang expression
	PageSize        int
}

// Agents pages through legacy GraphQL agent_list (superadmin). The
// hardware_metadata and live_stat fields are not asked for: they call the
// agents.
func (c *Client) Agents(ctx context.Context, f AgentFilter) ([]Agent, error) {
	vars := map[string]any{"order": "+id"}
	if f.ResourceGroup != "" {
		vars["sg"] = f.ResourceGroup
	}
	if len(f.Statuses) > 0 {
		vars["status"] = strings.Join(f.Statuses, ",")
	}
	var parts []string
	if f.SchedulableOnly {
		parts = append(parts, "schedulable == true")
	}
	if f.Filter != "" {
		parts = append(parts, f.Filter)
	}
	if e := andFilters(parts...); e != "" {
		vars["filter"] = e
	}
	q := `query($limit: Int!, $offset: Int!, $filter: String, $order: String, $sg: String, $status: String) {
  agent_list(limit: $limit, offset: $offset, filter: $filter, order: $order, scaling_group: $sg, status: $status) {
    total_count
    items { id status status_changed region scaling_group schedulable available_slots occupied_slots
            addr architecture first_contact lost_at version compute_plugins }
  }
}`
	var out []Agent
	err := pageAll(ctx, f.PageSize, 0, func(ctx context.Context, offset, limit int) (int, int, error) {
		vars["limit"], vars["offset"] = limit, offset
		var ans struct {
			List *struct {
				TotalCount int         `json:"total_count"`
				Items      []*gqlAgent `json:"items"`
			} `json:"agent_list"`
		}
		if err := c.Query(ctx, q, vars, &ans); err != nil {
			return 0, 0, err
		}
		if ans.List == nil {
			return 0, 0, nil
		}
		for _, a := range ans.List.Items {
			if a == nil {
				continue
			}
			out = append(out, Agent{
				ID: a.ID, Status: a.Status, StatusChanged: a.StatusChanged.t, Region: deref(a.Region),
				ResourceGroup: a.ScalingGroup, Schedulable: deref(a.Schedulable),
				AvailableSlots: a.AvailableSlots, OccupiedSlots: a.OccupiedSlots, Addr: a.Addr,
				Architecture: a.Architecture, FirstContact: a.FirstContact.t, LostAt: a.LostAt.t,
				Version: a.Version, ComputePlugins: a.ComputePlugins,
			})
		}
		return len(ans.List.Items), ans.List.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Slot types (SlotTypes).
const (
	SlotCount  = "count"
	SlotBytes  = "bytes"
	SlotUnique = "unique"
)

// ResourceSlotTypes is GET /config/resource-slots: every slot name the
// cluster knows with its type ("count", "bytes", "unique").
func (c *Client) ResourceSlotTypes(ctx context.Context) (map[string]string, error) {
	var ans map[string]string
	if err := c.Do(ctx, Request{Method: http.MethodGet, Path: "/config/resource-slots"}, &ans); err != nil {
		return nil, err
	}
	return ans, nil
}

func derefAll[T any](in []*T) []T {
	out := make([]T, 0, len(in))
	for _, p := range in {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// SetAgentsSchedulable is POST /manager/scheduler/operation
// (superadmin): op "exclude-agents" takes the agents out of scheduling
// (running sessions stay), "include-agents" takes them back; 204 No
// Content. The manager updates the ids it knows and answers
// InstanceNotFound (404) when any is unknown, the others changed all
// the same; an id given twice counts as unknown there, so ids are sent
// once each. Setting a flag is idempotent: the request is retried.
func (c *Client) SetAgentsSchedulable(ctx context.Context, ids []string, schedulable bool) error {
	if len(ids) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(ids))
	args := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			args = append(args, id)
		}
	}
	op := "exclude-agents"
	if schedulable {
		op = "include-agents"
	}
	return c.Do(ctx, Request{Method: http.MethodPost, Path: "/manager/scheduler/operation",
		Body: map[string]any{"op": op, "args": args}, Idempotent: true}, nil)
}
