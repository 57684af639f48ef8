// Package translate maps Slurm concepts onto the engine underneath and
// holds the rules of honest compatibility. The engine is reached only
// through Backend, shaped after Backend.AI's manager API: resource groups
// (Slurm partitions) made of agents (Slurm nodes), and sessions (Slurm
// jobs) that are created, observed through events, and destroyed. The
// embedded engine (translate/local) and the Backend.AI client both
// implement it.
package translate

import (
	"context"
	"time"
)

// AgentStatus follows Backend.AI's agent status names.
type AgentStatus string

const (
	AgentAlive      AgentStatus = "ALIVE"
	AgentLost       AgentStatus = "LOST"
	AgentRestarting AgentStatus = "RESTARTING"
	AgentTerminated AgentStatus = "TERMINATED"
)

// Slots is a resource-slot map in Backend.AI's units (cpu in cores,
// mem in bytes, accelerators as device counts).
type Slots struct {
	CPU  float64
	Mem  uint64
	GPUs float64 // cuda.device (or fake devices on the embedded engine)
}

// Agent is one compute host of a resource group.
type Agent struct {
	ID             string
	Addr           string
	ResourceGroup  string
	Status         AgentStatus
	Schedulable    bool
	Arch           string
	Capacity       Slots
	Occupied       Slots
	Sockets        uint16
	CoresPerSocket uint16
	ThreadsPerCore uint16
	Boards         uint16
	BootTime       int64
	OS             string
	Version        string
	GPUType        string
	CPULoad        float64 // load average × 1 (sinfo shows CPU_LOAD ×100 internally)
	FreeMem        uint64  // bytes
}

// ResourceGroup is a Backend.AI scaling group.
type ResourceGroup struct {
	Name     string
	IsActive bool
	AgentIDs []string
}

// Topology is the engine's view of capacity.
type Topology struct {
	Groups []ResourceGroup
	Agents []Agent
}

// Backend is the engine underneath. Methods may block; callers never call
// them from an event loop.
type Backend interface {
	// Name is "local" or "backend.ai".
	Name() string
	// Topology returns resource groups and agents.
	Topology(ctx context.Context) (*Topology, error)
}

// ImageChecker is implemented by engines that run sessions in images
// (sbatch --container): CheckImage says, at submission, why one cannot
// be used by the submitting user (nil when it can). Whatever it looks
// at, it looks at with that user's identity: the image is the user's
// choice and the server is root.
type ImageChecker interface {
	CheckImage(image string, uid, gid uint32) error
}

// Notifier is implemented by engines that can deliver a message to a
// running session's error output (scontrol notify: slurmstepd logs it
// there as "error: MSG").
type Notifier interface {
	NotifySession(ctx context.Context, id SessionID, message string) error
}

// SessionID names a session in the engine.
type SessionID string

// SessionStatus follows Backend.AI's session status names (26.8).
type SessionStatus string

const (
	SessionPending     SessionStatus = "PENDING"
	SessionScheduled   SessionStatus = "SCHEDULED"
	SessionPreparing   SessionStatus = "PREPARING"
	SessionRunning     SessionStatus = "RUNNING"
	SessionTerminating SessionStatus = "TERMINATING"
	SessionTerminated  SessionStatus = "TERMINATED"
	SessionCancelled   SessionStatus = "CANCELLED"
	SessionError       SessionStatus = "ERROR"
)

// Terminal reports whether a session has ended.
func (s SessionStatus) Terminal() bool {
	return s == SessionTerminated || s == SessionCancelled || s == SessionError
}

// SessionSpec is a batch session to create: one Slurm job (or array task).
// Paths are already expanded (no %j patterns); the engine creates the
// output files as Slurm does.
type SessionSpec struct {
	Name          string // "slurm-<jobid>" or "slurm-<arrayjob>_<task>"
	JobID         uint32
	ResourceGroup string // the partition
	Priority      int64  // higher starts first

	UID, GID uint32
	Groups   []uint32
	UserName string

	Image     string // --container; "" = run on the host (embedded engine)
	Script    string
	Argv      []string
	Env       []string // the job's whole environment, SLURM_* included
	WorkDir   string
	StdIn     string
	StdOut    string
	StdErr    string // "" = same file as StdOut
	AppendOut bool

	Nodes        uint32 // cluster size
	CPUsPerNode  uint32
	MemPerNodeMB uint64
	AllMemory    bool // all of each node's memory (Slurm's --mem=0, or no --mem without DefMemPer*)
	GPUsPerNode  uint32
	ReqNodes     []string // designated agents
	ExcNodes     []string
	Exclusive    bool

	TimeLimit       time.Duration // 0 = unlimited
	KillWait        time.Duration // SIGTERM → SIGKILL grace at the limit
	Signal          int           // --signal number to send Warn before the limit (0 none)
	Warn            time.Duration
	SignalBatchOnly bool

	// Rlimits are the submitting shell's soft limits to apply to the
	// job's processes (Slurm's PropagateResourceLimits).
	Rlimits []Rlimit

	// Resource hints passed through to Backend.AI's agent selection.
	NUMA, RDMA, GPUDirect bool
}

// Rlimit is one propagated soft resource limit.
type Rlimit struct {
	Name   string // Slurm's name: CPU FSIZE DATA STACK CORE RSS NPROC NOFILE MEMLOCK AS
	Soft   uint64 // math.MaxUint64 = unlimited
	Strict bool   // asked for with --propagate: not lowered to the hard limit
}

// SessionEvent reports a status change of a session.
type SessionEvent struct {
	ID       SessionID
	JobID    uint32
	Status   SessionStatus
	Time     time.Time
	Nodes    []string // agents the session runs on (from SCHEDULED on)
	ExitCode int      // process exit code when TERMINATED
	Signal   int      // terminating signal, 0 if none
	// Reason is Backend.AI's status_info: "task-finished", "user-requested",
	// "task-timeout", "oom-killed", "failed-to-start", ...
	Reason string
}

// SessionInfo is a session as the engine currently knows it (used to
// reconcile after a restart).
type SessionInfo struct {
	ID     SessionID
	JobID  uint32
	Status SessionStatus
	Nodes  []string
}

// Executor is the part of Backend that runs sessions. Methods may block;
// callers never call them from an event loop.
type Executor interface {
	// CreateSession enqueues a session; the engine decides when it
	// starts and reports progress through Events.
	CreateSession(ctx context.Context, spec SessionSpec) (SessionID, error)
	// DestroySession terminates (forced: kills at once) a session.
	DestroySession(ctx context.Context, id SessionID, forced bool) error
	// SignalSession delivers sig to the session's processes (all of them,
	// or the batch script only). Engines that cannot do it honestly
	// return an error carrying ESLURM_NOT_SUPPORTED.
	SignalSession(ctx context.Context, id SessionID, sig int, batchOnly bool) error
	// Sessions lists the sessions the engine knows (after a restart).
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// Events delivers status changes, in order per session.
	Events() <-chan SessionEvent
}
