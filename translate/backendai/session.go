package backendai

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Cluster modes (ClusterMode in src/ai/backend/common/types.py).
const (
	SingleNode = "single-node"
	MultiNode  = "multi-node"
)

// Mount permissions (MountPermission).
const (
	PermReadOnly  = "ro"
	PermReadWrite = "rw"
	PermRWDelete  = "wd"
)

// Resources is the per-kernel resource request (config.resources; the
// session's total is this × cluster size). Zero CPU or Mem lets the
// manager take the image's minimum.
type Resources struct {
	CPU         float64 // "cpu", cores
	Mem         uint64  // "mem", bytes
	CUDADevices float64 // "cuda.device"
	CUDAShares  float64 // "cuda.shares" (fractional GPU)
	// Extra holds other slots ("rocm.device", "cuda.device:1g.10gb-mig",
	// …) with quantities as the manager accepts them: decimals, or binary
	// sizes ("4g") for bytes-type slots.
	Extra map[string]string
}

func (r Resources) toJSON() (map[string]string, error) {
	m := map[string]string{}
	put := func(k string, v float64) error {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: resource %s = %v", ErrInvalidRequest, k, v)
		}
		if v > 0 {
			m[k] = strconv.FormatFloat(v, 'f', -1, 64)
		}
		return nil
	}
	if err := put("cpu", r.CPU); err != nil {
		return nil, err
	}
	if r.Mem > 0 {
		m["mem"] = strconv.FormatUint(r.Mem, 10)
	}
	if err := put("cuda.device", r.CUDADevices); err != nil {
		return nil, err
	}
	if err := put("cuda.shares", r.CUDAShares); err != nil {
		return nil, err
	}
	for k, v := range r.Extra {
		switch {
		case k == "" || strings.TrimSpace(v) == "":
			return nil, fmt.Errorf("%w: resource slot %q = %q", ErrInvalidRequest, k, v)
		case k == "shmem":
			return nil, fmt.Errorf("%w: shmem is a resource option (ResourceOpts.Shmem), not a slot", ErrInvalidRequest)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%w: resource slot %q given twice", ErrInvalidRequest, k)
		}
		m[k] = v
	}
	return m, nil
}

// ResourceOpts is config.resource_opts.
type ResourceOpts struct {
	Shmem uint64 // bytes of /dev/shm (counted in the container's memory); 0 = image default
	// AllowFractionalResourceFragmentation, when set, overrides the
	// resource group's setting.
	AllowFractionalResourceFragmentation *bool
	Extra                                map[string]any
}

func (o ResourceOpts) toJSON() map[string]any {
	m := map[string]any{}
	for k, v := range o.Extra {
		m[k] = v
	}
	if o.Shmem > 0 {
		m["shmem"] = strconv.FormatUint(o.Shmem, 10)
	}
	if o.AllowFractionalResourceFragmentation != nil {
		m["allow_fractional_resource_fragmentation"] = *o.AllowFractionalResourceFragmentation
	}
	return m
}

// Mount is one vfolder to mount. Prefer ID (a vfolder UUID; see
// ResolveMounts): a name-only mount is sent in the legacy name-keyed form,
// which the 26.8.1 manager resolves with an unscoped lookup over every
// vfolder of that name (any owner, any status).
type Mount struct {
	ID         string // vfolder UUID
	Name       string // vfolder name ("name/subpath" is understood by the manager)
	Dest       string // mount point; relative → under /home/work; "" = /home/work/<name>
	Permission string // "", ro, rw or wd
	Subpath    string // a sub-directory of the folder to mount instead of its root
}

// CreateSessionRequest is a batch session for POST /session
// (CreateFromParamsRequest + CreationConfigV7 at API v9).
type CreateSessionRequest struct {
	Name         string // unique per owner among live sessions; 1–64 characters
	Image        string // canonical reference or alias
	Architecture string // "" = x86_64 (the manager's DEFAULT_IMAGE_ARCH)
	// Domain and Group (project name) are required: the manager defaults
	// both to "default", not to the owner's.
	Domain string
	Group  string
	// OwnerAccessKey makes the session the user's (delegation by the admin
	// keypair); "" = owned by the admin.
	OwnerAccessKey string
	ResourceGroup  string // config.scaling_group; "" = the first one allowed
	Resources      Resources
	ResourceOpts   ResourceOpts
	ClusterMode    string // "" = single-node
	ClusterSize    int    // 0 = 1
	Mounts         []Mount
	Environ        map[string]string
	// StartupCommand is the batch command, run through a shell in the
	// main container; required unless Interactive.
	StartupCommand string
	// Interactive makes an interactive session (no startup command, no
	// starts_at or batch_timeout: the manager accepts those for batch
	// sessions only).
	Interactive     bool
	BootstrapScript string        // plain script text; "" = the owner keypair's
	StartsAt        time.Time     // deferred start (batch only); zero = none
	BatchTimeout    time.Duration // run-time limit; 0 = none (rounded up to seconds)
	Dependencies    []string      // session UUIDs that must end TERMINATED/SUCCESS (afterok)
	Priority        *int          // 0–100, default 10; capped by the keypair's max_priority
	JobPriority     *int          // preemption rank among the owner's sessions
	IsPreemptible   *bool
	AgentList       []string // designated agent IDs
	PreopenPorts    []int
	AttachNetwork   string // persistent network UUID
	// Tag (≤64 characters, stored with the session) doubles as the
	// idempotency token: give each job a unique one (e.g.
	// "slurm:<cluster>:<jobid>") and a retried or repeated create finds the
	// session already made instead of making a second one.
	Tag string
}

// createBody is the JSON body, keyed as the Python SDK
// (src/ai/backend/client/func/session.py get_or_create) keys it at API v9,
// plus job_priority / is_preemptible which the SDK does not send.
type createBody struct {
	Name            string       `json:"name"`
	Image           string       `json:"image"`
	Architecture    string       `json:"architecture"`
	Type            string       `json:"type"`
	Group           string       `json:"group"`
	Domain          string       `json:"domain"`
	ClusterSize     int          `json:"clusterSize"`
	ClusterMode     string       `json:"clusterMode"`
	Config          createConfig `json:"config"`
	Tag             string       `json:"tag,omitempty"`
	EnqueueOnly     bool         `json:"enqueueOnly"`
	MaxWaitSeconds  int          `json:"maxWaitSeconds"`
	ReuseIfExists   bool         `json:"reuseIfExists"`
	StartupCommand  string       `json:"startupCommand"`
	BootstrapScript string       `json:"bootstrap_script,omitempty"`
	StartsAt        string       `json:"starts_at,omitempty"`
	BatchTimeout    int64        `json:"batch_timeout,omitempty"`
	Dependencies    []string     `json:"dependencies,omitempty"`
	Priority        *int         `json:"priority,omitempty"`
	JobPriority     *int         `json:"job_priority,omitempty"`
	IsPreemptible   *bool        `json:"is_preemptible,omitempty"`
	OwnerAccessKey  string       `json:"owner_access_key,omitempty"`
}

type createConfig struct {
	Resources     map[string]string         `json:"resources"`
	ResourceOpts  map[string]any            `json:"resource_opts"`
	ScalingGroup  string                    `json:"scalingGroup,omitempty"`
	Mounts        []string                  `json:"mounts"`
	MountMap      map[string]string         `json:"mount_map"`
	MountIDs      []string                  `json:"mount_ids"`
	MountIDMap    map[string]string         `json:"mount_id_map"`
	MountOptions  map[string]map[string]any `json:"mount_options"`
	Environ       map[string]string         `json:"environ,omitempty"`
	PreopenPorts  []int                     `json:"preopen_ports,omitempty"`
	AgentList     []string                  `json:"agentList,omitempty"`
	AttachNetwork string                    `json:"attach_network,omitempty"`
}

const maxNameLen, maxTagLen = 64, 64

// buildCreateBody validates r and renders the POST /session body.
func buildCreateBody(r CreateSessionRequest) (*createBody, error) {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("%w: create session: %s", ErrInvalidRequest, fmt.Sprintf(f, a...))
	}
	switch {
	case r.Name == "" || len(r.Name) > maxNameLen:
		return nil, bad("name %q must have 1 to %d characters", r.Name, maxNameLen)
	case r.Name == "from-template":
		return nil, bad("name %q is reserved", r.Name)
	case strings.TrimSpace(r.Image) == "":
		return nil, bad("image is required")
	case r.Domain == "":
		return nil, bad("domain is required (the manager would assume \"default\")")
	case r.Group == "":
		return nil, bad("group (project) is required")
	case !r.Interactive && strings.TrimSpace(r.StartupCommand) == "":
		return nil, bad("a batch session needs a startup command")
	case r.Interactive && (r.StartupCommand != "" || !r.StartsAt.IsZero() || r.BatchTimeout != 0):
		return nil, bad("an interactive session takes no startup command, starts_at or batch_timeout")
	case len(r.Tag) > maxTagLen:
		return nil, bad("tag longer than %d characters", maxTagLen)
	case r.ClusterSize < 0:
		return nil, bad("cluster size %d", r.ClusterSize)
	case r.Priority != nil && (*r.Priority < 0 || *r.Priority > 100):
		return nil, bad("priority %d outside 0..100", *r.Priority)
	case r.BatchTimeout < 0:
		return nil, bad("negative batch timeout")
	}
	b := &createBody{
		Name:            r.Name,
		Image:           r.Image,
		Architecture:    r.Architecture,
		Type:            map[bool]string{false: "batch", true: "interactive"}[r.Interactive],
		Group:           r.Group,
		Domain:          r.Domain,
		ClusterSize:     r.ClusterSize,
		ClusterMode:     r.ClusterMode,
		Tag:             r.Tag,
		EnqueueOnly:     true,
		ReuseIfExists:   false,
		StartupCommand:  r.StartupCommand,
		BootstrapScript: r.BootstrapScript,
		Priority:        r.Priority,
		JobPriority:     r.JobPriority,
		IsPreemptible:   r.IsPreemptible,
		OwnerAccessKey:  r.OwnerAccessKey,
	}
	if b.Architecture == "" {
		b.Architecture = "x86_64"
	}
	if b.ClusterSize == 0 {
		b.ClusterSize = 1
	}
	switch b.ClusterMode {
	case "":
		b.ClusterMode = SingleNode
	case SingleNode, MultiNode:
	default:
		return nil, bad("cluster mode %q", r.ClusterMode)
	}
	if !r.StartsAt.IsZero() {
		b.StartsAt = r.StartsAt.UTC().Format(time.RFC3339Nano)
	}
	if r.BatchTimeout > 0 {
		b.BatchTimeout = int64((r.BatchTimeout + time.Second - 1) / time.Second)
	}
	for _, d := range r.Dependencies {
		id, err := canonicalUUID(d)
		if err != nil {
			return nil, bad("dependency %q is not a session UUID", d)
		}
		b.Dependencies = append(b.Dependencies, id)
	}
	res, err := r.Resources.toJSON()
	if err != nil {
		return nil, err
	}
	cfg := createConfig{
		Resources:    res,
		ResourceOpts: r.ResourceOpts.toJSON(),
		ScalingGroup: r.ResourceGroup,
		Mounts:       []string{},
		MountMap:     map[string]string{},
		MountIDs:     []string{},
		MountIDMap:   map[string]string{},
		MountOptions: map[string]map[string]any{},
		Environ:      r.Environ,
		PreopenPorts: r.PreopenPorts,
		AgentList:    r.AgentList,
	}
	if r.AttachNetwork != "" {
		id, err := canonicalUUID(r.AttachNetwork)
		if err != nil {
			return nil, bad("attach network %q is not a UUID", r.AttachNetwork)
		}
		cfg.AttachNetwork = id
	}
	dests := map[string]bool{}
	for _, m := range r.Mounts {
		key := m.Name
		if m.ID != "" {
			id, err := canonicalUUID(m.ID)
			if err != nil {
				return nil, bad("mount ID %q is not a vfolder UUID", m.ID)
			}
			key = id
		}
		if key == "" {
			return nil, bad("a mount needs a vfolder ID or name")
		}
		if _, dup := cfg.MountOptions[key]; dup || containsStr(cfg.Mounts, key) || containsStr(cfg.MountIDs, key) {
			return nil, bad("vfolder %q mounted twice", key)
		}
		if m.Dest != "" {
			if dests[m.Dest] {
				return nil, bad("two mounts at %q", m.Dest)
			}
			dests[m.Dest] = true
		}
		switch m.Permission {
		case "", PermReadOnly, PermReadWrite, PermRWDelete:
		default:
			return nil, bad("mount permission %q", m.Permission)
		}
		if m.ID != "" {
			cfg.MountIDs = append(cfg.MountIDs, key)
			if m.Dest != "" {
				cfg.MountIDMap[key] = m.Dest
			}
		} else {
			cfg.Mounts = append(cfg.Mounts, key)
			if m.Dest != "" {
				cfg.MountMap[key] = m.Dest
			}
		}
		if m.Permission != "" || m.Subpath != "" {
			opt := map[string]any{"type": "bind"}
			if m.Permission != "" {
				opt["permission"] = m.Permission
			}
			if m.Subpath != "" {
				opt["subpath"] = m.Subpath
			}
			cfg.MountOptions[key] = opt
		}
	}
	b.Config = cfg
	return b, nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CreatedSession is the outcome of CreateBatchSession.
type CreatedSession struct {
	SessionID   string
	SessionName string
	Status      string // "PENDING" when just enqueued; the found session's status otherwise
	// Created is false when the session already existed before this call
	// (same name and tag: a repeated submission) and was adopted.
	Created bool
}

// CreateBatchSession enqueues a batch session (POST /session with
// enqueueOnly=true and reuseIfExists=false) and makes the call idempotent
// by name and tag:
//
//   - 400 session-already-exists (a live session of that name for the
//     owner): the existing session (data.existingSessionId) is adopted when
//     its tag equals r.Tag (or, with no tag, when it was made by an earlier
//     attempt of this call); otherwise the *APIError is returned.
//   - A failure after which the request may have been processed (timeout,
//     reset, 5xx) is followed, before any re-send, by a GraphQL lookup of
//     the owner's sessions of that name in every status, so that a session
//     that was created and has already ended is not created twice.
//   - 429 and connection-refused failures are retried after backoff.
func (c *Client) CreateBatchSession(ctx context.Context, r CreateSessionRequest) (*CreatedSession, error) {
	body, err := buildCreateBody(r)
	if err != nil {
		return nil, err
	}
	start := c.now()
	req := Request{Method: http.MethodPost, Path: "/session", Body: body}
	var lastErr error
	uncertain := false // an earlier attempt may have created the session
	for attempt := 0; attempt < c.retry.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := c.sleep(ctx, c.retry.backoff(attempt-1, lastErr)); err != nil {
				break
			}
		}
		if uncertain {
			found, err := c.findCreated(ctx, r, start)
			if err != nil {
				if !IsRetryable(err) {
					return nil, fmt.Errorf("backendai: create %s: looking for an earlier attempt's session: %w; the session may have been created", r.Name, err)
				}
				lastErr = err
				continue // cannot tell: never re-send blind
			}
			if found != nil {
				found.Created = true
				return found, nil
			}
			uncertain = false
		}
		if attempt > 0 {
			c.logf("retrying POST /session %s (attempt %d): %v", r.Name, attempt+1, lastErr)
		}
		var ans struct {
			SessionID   string `json:"sessionId"`
			SessionName string `json:"sessionName"`
			Status      string `json:"status"`
			Created     *bool  `json:"created"`
		}
		_, err := c.do(ctx, req, &ans)
		if err == nil {
			created := ans.Created == nil || *ans.Created
			name := ans.SessionName
			if name == "" {
				name = r.Name
			}
			return &CreatedSession{SessionID: ans.SessionID, SessionName: name, Status: ans.Status, Created: created}, nil
		}
		if IsAlreadyExists(err) {
			return c.adoptExisting(ctx, r, err, attempt > 0)
		}
		if !IsRetryable(err) && !isServerError(err) {
			return nil, err
		}
		if mayHaveBeenProcessed(err) {
			uncertain = true
		}
		lastErr = err
	}
	if uncertain {
		return nil, fmt.Errorf("%w; the session may have been created", lastErr)
	}
	return nil, lastErr
}

// mayHaveBeenProcessed: the manager may have acted on the request.
// Refusals by middleware that runs before the handler (429 rate limit,
// 503 frozen) and failures to connect are certain not to have created
// anything.
func mayHaveBeenProcessed(err error) bool {
	if e, ok := asAPIError(err); ok {
		switch e.Type {
		case ProbRateLimitExceeded, ProbServerFrozen:
			return false
		}
		return e.Status >= 500
	}
	var te *TransportError
	if errors.As(err, &te) {
		return !isDialError(te.Err)
	}
	return true
}

// isServerError: an HTTP 5xx answer. For a create it is worth a lookup
// and a retry: the manager may have enqueued the session and failed after.
func isServerError(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.Status >= 500
}

// adoptExisting handles session-already-exists.
func (c *Client) adoptExisting(ctx context.Context, r CreateSessionRequest, exists error, retried bool) (*CreatedSession, error) {
	e, _ := asAPIError(exists)
	id := e.ExistingSessionID()
	if id == "" {
		return nil, exists
	}
	s, err := c.GetSession(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("%w (and reading session %s failed: %v)", exists, id, err)
	}
	if r.Tag != "" && s.Tag == r.Tag || r.Tag == "" && retried {
		return &CreatedSession{SessionID: s.ID, SessionName: s.Name, Status: s.Status, Created: retried}, nil
	}
	return nil, exists
}

// findCreated looks for the session an earlier attempt may have created:
// the owner's sessions named r.Name, newest first, with r.Tag, created at
// most two minutes (clock skew) before this call started or still live.
func (c *Client) findCreated(ctx context.Context, r CreateSessionRequest, start time.Time) (*CreatedSession, error) {
	list, err := c.ListSessions(ctx, SessionFilter{
		Name:           r.Name,
		OwnerAccessKey: r.OwnerAccessKey,
		Order:          "-created_at",
		Limit:          20,
	})
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.Name != r.Name || (r.Tag != "" && s.Tag != r.Tag) {
			continue
		}
		if !IsTerminalStatus(s.Status) || s.CreatedAt != nil && !s.CreatedAt.Before(start.Add(-2*time.Minute)) {
			return &CreatedSession{SessionID: s.ID, SessionName: s.Name, Status: s.Status}, nil
		}
	}
	return nil, nil
}

// DestroyOptions are the query of DELETE /session/{id}.
type DestroyOptions struct {
	Forced         bool   // TERMINATED at once (cleanup queued) instead of TERMINATING
	Recursive      bool   // also the sessions that depend on it, transitively
	OwnerAccessKey string // the owner (delegation)
}

// DestroyResult is {"stats": …} of DELETE /session/{id}.
type DestroyResult struct {
	// Status is "cancelled" (the session was PENDING), "terminated"
	// (marked terminating or force-terminated) or "" (nothing to do: it
	// had already ended).
	Status string
}

// DestroySession terminates (or cancels, while pending) a session by UUID.
// Only UUIDs are accepted: the manager looks names up among dead sessions
// too, so a reused name answers 404 too-many-sessions-matched.
func (c *Client) DestroySession(ctx context.Context, sessionID string, o DestroyOptions) (*DestroyResult, error) {
	id, err := canonicalUUID(sessionID)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if o.OwnerAccessKey != "" {
		q.Set("owner_access_key", o.OwnerAccessKey)
	}
	if o.Forced {
		q.Set("forced", "true")
	}
	if o.Recursive {
		q.Set("recursive", "true")
	}
	var ans struct {
		Stats struct {
			Status string `json:"status"`
		} `json:"stats"`
	}
	if err := c.Do(ctx, Request{Method: http.MethodDelete, Path: "/session/" + id, Query: q}, &ans); err != nil {
		return nil, err
	}
	return &DestroyResult{Status: ans.Stats.Status}, nil
}

// LogsOptions are the query of GET /session/{id}/logs.
type LogsOptions struct {
	OwnerAccessKey string
	KernelID       string // "" = the main kernel
}

// ContainerLogs returns a kernel's container log (GET /session/{id}/logs →
// {"result":{"logs":…}}). It works after termination: the manager keeps
// the log of a terminated kernel in its database.
func (c *Client) ContainerLogs(ctx context.Context, sessionID string, o LogsOptions) (string, error) {
	id, err := canonicalUUID(sessionID)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	if o.OwnerAccessKey != "" {
		q.Set("owner_access_key", o.OwnerAccessKey)
	}
	if o.KernelID != "" {
		k, err := canonicalUUID(o.KernelID)
		if err != nil {
			return "", err
		}
		q.Set("kernel_id", k)
	}
	var ans struct {
		Result struct {
			Logs string `json:"logs"`
		} `json:"result"`
	}
	if err := c.Do(ctx, Request{Method: http.MethodGet, Path: "/session/" + id + "/logs", Query: q}, &ans); err != nil {
		return "", err
	}
	return ans.Result.Logs, nil
}
