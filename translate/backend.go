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
	"errors"
	"os"
	"time"

	"github.com/lablup/slurm-frontend/translate/conf"
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
	// GPUShares is fractional GPU capacity (Backend.AI's cuda.shares),
	// in GPUs: Slurm's shard gres, a hundredth of a GPU each.
	GPUShares float64
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

// Scheduling is implemented by engines whose agents an administrator
// can keep from taking new sessions (Slurm's DRAIN, Backend.AI's
// schedulable flag): SetSchedulable(false) leaves the sessions running
// there alone and places no new one there; true takes the agents back.
// The engine keeps the flag across restarts, as Backend.AI's manager
// keeps it in its database. ErrNoAgent (wrapped) names agents it does
// not know; the others are changed all the same.
type Scheduling interface {
	SetSchedulable(ctx context.Context, agents []string, schedulable bool) error
}

// Reconfigurer is implemented by engines that read the frontend's
// config (the embedded engine's nodes and partitions): Reconfigure takes
// a newly read one (scontrol reconfigure) without disturbing running
// sessions; on an error the engine keeps the old one.
type Reconfigurer interface {
	Reconfigure(cfg *conf.Config) error
}

// ErrNoAgent is Scheduling's error for an agent the engine does not know.
var ErrNoAgent = errors.New("no such agent")

// ImageChecker is implemented by engines that run sessions in images
// (sbatch --container): CheckImage says, at submission, why one cannot
// be used by the submitting user (nil when it can). Whatever it looks
// at, it looks at with that user's identity: the image is the user's
// choice and the server is root.
type ImageChecker interface {
	CheckImage(image string, uid, gid uint32) error
}

// Differ is implemented by engines that run some accepted requests
// otherwise than a Slurm cluster would (the embedded engine's GPUs are
// devices it makes up; a Backend.AI --container names an image, not a
// bundle): what the migration audit reports as documented differences.
type Differ interface {
	Differences(spec *SessionSpec) []Difference
}

// Difference is one such difference: the option, and what the job gets.
type Difference struct {
	Option, Text string
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
	// Tier is the partition's PriorityTier: a higher tier's waiting job
	// may preempt a lower tier's on the same hardware (Backend.AI's
	// job_priority), where the engine preempts.
	Tier int

	UID, GID uint32
	Groups   []uint32
	UserName string

	Project   string // Backend.AI project (group): the job's -A, else the partition's; "" = the user's default
	Image     string // --container, else the partition's; "" = run on the host (embedded engine)
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
	GPUType      string // the gres type asked for (--gres=gpu:TYPE:N), "" any
	// GPUShare is a fraction of one GPU per node (--gres=mps:N or
	// shard:N, in hundredths of a GPU), 0 none.
	GPUShare uint32
	// Comment is the job's --comment: engines may read directives from
	// it (Backend.AI: "bai:mount=…", "bai:shmem=…").
	Comment   string
	ReqNodes  []string // designated agents
	ExcNodes  []string
	Exclusive bool

	// StartAt: the session may not start before (Slurm's --begin,
	// Backend.AI's starts_at); zero = as soon as it fits.
	StartAt time.Time

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

	// Interactive: an allocation (salloc, srun outside a job): the
	// session runs no script of its own but holds its resources for
	// the job's steps until it is destroyed or its time limit passes.
	// Engines that need a command to hold a session run Script.
	Interactive bool
}

// Rlimit is one propagated soft resource limit.
type Rlimit struct {
	Name   string // Slurm's name: CPU FSIZE DATA STACK CORE RSS NPROC NOFILE MEMLOCK AS
	Soft   uint64 // math.MaxUint64 = unlimited
	Strict bool   // asked for with --propagate: not lowered to the hard limit
}

// EndReason is why a session is where it is, in Backend.AI's status_info
// words (the embedded engine uses the same), so that the controller maps
// one vocabulary to Slurm's states and reasons.
type EndReason string

const (
	ReasonNone            EndReason = ""
	ReasonTaskFinished    EndReason = "task-finished"            // the batch command exited (its code says how)
	ReasonTaskFailed      EndReason = "task-failed"              // Backend.AI: the batch command failed (code unknown)
	ReasonTaskTimeout     EndReason = "task-timeout"             // batch_timeout / the time limit
	ReasonUserRequested   EndReason = "user-requested"           // destroyed (scancel)
	ReasonForceTerminated EndReason = "force-terminated"         // destroyed with force
	ReasonOOMKilled       EndReason = "oom-killed"               // the kernel's OOM killer ended it
	ReasonFailedToStart   EndReason = "failed-to-start"          // never got going (output file, image, ...)
	ReasonAgentLost       EndReason = "agent-termination"        // its node (agent) went away with it
	ReasonPreempted       EndReason = "PREEMPTED_BY_SCHEDULER"   // Backend.AI's scheduler made room for a higher tier
	ReasonPendingTimeout  EndReason = "PENDING_TIMEOUT_EXCEEDED" // waited longer than the engine allows
	ReasonLost            EndReason = "session-lost"             // the engine no longer knows it (the controller's word)
)

// Usage is what a session's processes used, when the engine knows it.
type Usage struct {
	UserCPU, SysCPU time.Duration
	MaxRSSKB        int64
	OOMKills        int
}

// SessionEvent reports a status change of a session.
type SessionEvent struct {
	ID     SessionID
	JobID  uint32
	Status SessionStatus
	Time   time.Time
	Nodes  []string // agents the session runs on (from SCHEDULED on)
	// ExitCode and Signal end a terminal session (TERMINATED): the
	// process's exit status, or the signal that ended it. ExitUnknown
	// says the engine does not know them (Backend.AI 26.8's batch
	// result is SUCCESS or FAILURE only).
	ExitCode    int
	Signal      int
	ExitUnknown bool
	Reason      EndReason
	Usage       *Usage // terminal sessions, when known
	// Foreign marks an event of a session the frontend did not create
	// (JobID 0): the controller lists the engine's sessions soon, to
	// show it as a job (SessionInfo.Foreign).
	Foreign bool
	// Shown, when set, is called once the controller shows the event's
	// state to clients, or has dropped the event (Ack). The embedded
	// engine holds a starting job's first process until then, as
	// slurmctld marks a job RUNNING before it launches it: the job's own
	// squeue sees it running.
	Shown func()
}

// Ack calls ev.Shown, if set: every consumer of an engine's events calls
// it once it is done with the event.
func (ev SessionEvent) Ack() {
	if ev.Shown != nil {
		ev.Shown()
	}
}

// SessionInfo is a session as the engine knows it now: the controller
// reconciles with it after a restart and periodically, so that a lost
// event leaves no drift. A terminal session carries its end as an event
// would.
type SessionInfo struct {
	ID          SessionID
	JobID       uint32
	Status      SessionStatus
	Nodes       []string
	Started     time.Time // when it started running (zero if it did not)
	Ended       time.Time // terminal sessions
	ExitCode    int
	Signal      int
	ExitUnknown bool
	Reason      EndReason
	Usage       *Usage
	// Foreign describes a live session the frontend did not create (made
	// in Backend.AI's console or through its API by the user): JobID is
	// 0, and the controller shows it as a job of its own.
	Foreign *ForeignSession
}

// ForeignSession is what a job record of a session the frontend did not
// create is made from.
type ForeignSession struct {
	Name          string
	User          string // the owner's username (the Unix user of the same name owns the job)
	Project       string
	ResourceGroup string
	Image         string
	Created       time.Time
	CPUs          uint32 // requested
	MemMB         uint64 // requested
	GPUs          string // requested accelerators as a gres, e.g. "gres/gpu:2" ("" none)
}

// Event is the SessionEvent a terminal or running SessionInfo stands for
// (what reconciliation applies when the event itself was missed).
func (s *SessionInfo) Event() SessionEvent {
	ev := SessionEvent{ID: s.ID, JobID: s.JobID, Status: s.Status, Nodes: s.Nodes, ExitCode: s.ExitCode,
		Signal: s.Signal, ExitUnknown: s.ExitUnknown, Reason: s.Reason, Usage: s.Usage, Time: s.Ended}
	if !s.Status.Terminal() {
		ev.Time = s.Started
	}
	return ev
}

// Errors engines return, wrapped with their own words (errors.Is finds
// them): the controller maps each to the Slurm error a user should see.
// Engines never see Slurm's codes.
var (
	ErrNoSession    = errors.New("no such session")
	ErrNotRunning   = errors.New("session is not running")
	ErrUnavailable  = errors.New("engine unavailable for now") // retry later: the engine (or its storage) cannot take the request now
	ErrNotSupported = errors.New("not supported by this engine")
	ErrOverLimit    = errors.New("over a limit of the engine") // a quota or resource policy
	ErrInvalidImage = errors.New("no such image")
	ErrImpossible   = errors.New("request the engine can never satisfy") // resources no agent has
	ErrNoAccount    = errors.New("no engine account for this user")
	ErrForbidden    = errors.New("refused by the engine")
)

// Executor is the part of Backend that runs sessions. Methods may block;
// callers never call them from an event loop, and always with a deadline.
type Executor interface {
	// CreateSession enqueues a session; the engine decides when it
	// starts and reports progress through Events.
	CreateSession(ctx context.Context, spec SessionSpec) (SessionID, error)
	// DestroySession terminates (forced: kills at once) a session. A
	// session that already ended is not an error.
	DestroySession(ctx context.Context, id SessionID, forced bool) error
	// Sessions lists the sessions the engine knows, with their current
	// status (terminal ones with their end) for reconciliation.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// Events delivers status changes, in order per session. Events may
	// be lost (a reconnect); Sessions is the truth.
	Events() <-chan SessionEvent
}

// Optional capabilities of an Executor. The controller asks for each with
// a type assertion and refuses, with the Slurm error that says so, what
// the engine underneath cannot do.
type (
	// Signaller delivers sig to a running session's processes (all of
	// them, or the batch script only).
	Signaller interface {
		SignalSession(ctx context.Context, id SessionID, sig int, batchOnly bool) error
	}
	// TimeLimiter changes the time limit of a session, pending or
	// running (counted from its start), and enforces the new one.
	TimeLimiter interface {
		UpdateTimeLimit(ctx context.Context, id SessionID, limit time.Duration) error
	}
	// Prioritizer changes the priority of a pending session in place.
	Prioritizer interface {
		UpdatePriority(ctx context.Context, id SessionID, prio int64) error
	}
	// SpecChecker refuses, at submission, a session the engine could
	// not run with Slurm's semantics (an error wrapping ErrNotSupported
	// that says what and why).
	SpecChecker interface {
		CheckSpec(spec *SessionSpec) error
	}
	// SessionGetter reads one session (the controller asks it for a
	// session it expected in Sessions and did not find, before it calls
	// the session lost): ErrNoSession when the engine has none.
	SessionGetter interface {
		Session(ctx context.Context, id SessionID) (*SessionInfo, error)
	}
	// Purger forgets an ended session once its end is recorded elsewhere.
	Purger interface {
		Purge(ctx context.Context, id SessionID) error
	}
	// StepExecutor runs a job step's task inside a running session (its
	// namespaces, cgroup and credentials): what slurmstepd does for
	// srun's tasks. The task's stdio are the files given; the engine
	// owns nothing of them once Start returns.
	StepExecutor interface {
		ExecTask(ctx context.Context, id SessionID, t *StepTask) (TaskProc, error)
	}
	// StepGroupExecutor starts all of a step's tasks on one node at once
	// (an engine whose sessions run one command at a time: one command
	// starts them all, as slurmstepd does). Preferred to StepExecutor.
	StepGroupExecutor interface {
		ExecTasks(ctx context.Context, id SessionID, tasks []*StepTask) ([]TaskProc, error)
	}
	// StepRefuser refuses, at step creation, the steps an engine cannot
	// run (wrapping ErrNotSupported, naming what is missing): batch is
	// whether the job is a batch job (else an allocation), nodes how
	// many nodes the step uses.
	StepRefuser interface {
		RefuseStep(batch bool, nodes uint32) error
		// RefuseStepSignal refuses signals the engine cannot deliver
		// to a step's tasks (scancel J.S), saying why.
		RefuseStepSignal(sig int) error
	}
	// ParallelCreator is an engine whose creates are round trips that
	// may overlap (a remote manager, which orders its queue by priority
	// and creation time itself): the controller hands up to
	// CreateParallelism jobs over at once. Others get one at a time, in
	// the controller's priority order.
	ParallelCreator interface {
		CreateParallelism() int
	}
)

// StepLayout is a live job step as the controller laid it out: the
// session of its job, its nodes and, per node, its global task ids and
// its CPUs there.
type StepLayout struct {
	Session SessionID
	Nodes   []string
	TIDs    [][]uint32
	CPUs    []uint32
}

// StepTask is one task of a job step to start in a session.
type StepTask struct {
	Node     string   // the node (agent) of the session it runs on
	Argv     []string // argv[0] is looked up in the task's PATH
	Env      []string // the whole environment
	Cwd      string
	UID, GID uint32
	Groups   []uint32
	// Stdin, Stdout, Stderr are the task's descriptors 0, 1 and 2 (nil:
	// /dev/null). With PTY, Stdin is the terminal the task gets as its
	// controlling terminal (and Stdout, Stderr the same terminal).
	Stdin, Stdout, Stderr *os.File
	PTY                   bool
	// OutPath, ErrPath, InPath are files the task's stdout, stderr and
	// stdin are instead (srun --output/--error/--input FILE, patterns
	// already expanded), opened by the task itself once it is the user,
	// relative to its directory; AppendOut: --open-mode=append.
	OutPath, ErrPath, InPath string
	AppendOut                bool
}

// TaskProc is a started task.
type TaskProc interface {
	// Wait waits for the task's end and returns its raw wait status
	// (exit code N is N<<8, a signal S is S), as slurmstepd reports it.
	Wait() (uint32, error)
	// Signal sends sig to the task's process group.
	Signal(sig int) error
	// PID is the task's process id as its session sees it (0 unknown).
	PID() int
}

// UsageReporter is a TaskProc that can tell, once it has ended, what the
// task used: its CPU time and that of what it waited for, and the largest
// resident set among them (bytes), as slurmstepd's jobacct_gather.
type UsageReporter interface {
	Usage() TaskUsage
}

// TaskUsage is a task's (or a step's, summed over tasks) resources used.
type TaskUsage struct {
	UserCPU, SysCPU time.Duration
	MaxRSS          uint64 // bytes; for a step, its largest task's
	MaxRSSTask      uint32 // the step's task with MaxRSS (global task id)
	MaxRSSNode      uint32 // and its node's index in the step
	Measured        bool
}

// Add sums u into t (CPU), keeping the larger RSS.
func (t *TaskUsage) Add(u TaskUsage) {
	if !u.Measured {
		return
	}
	t.UserCPU += u.UserCPU
	t.SysCPU += u.SysCPU
	if u.MaxRSS > t.MaxRSS || !t.Measured {
		t.MaxRSS, t.MaxRSSTask, t.MaxRSSNode = u.MaxRSS, u.MaxRSSTask, u.MaxRSSNode
	}
	t.Measured = true
}

// OOMReporter is a TaskProc that can tell, once it has ended, how many
// times the kernel's OOM killer acted in the job's memory cgroup while
// it ran (slurmstepd's oom_kill events of the step).
type OOMReporter interface {
	OOMKills() int
}

// Directory is implemented by engines that keep users and projects
// (Backend.AI): the accounts, users and associations accounting shows
// (sacctmgr, sshare), beside those the jobs have used.
type Directory interface {
	Directory(ctx context.Context) (*DirectoryInfo, error)
}

// DirAccount is an account: a Backend.AI project.
type DirAccount struct {
	Name, Description, Organization string
}

// DirUser is a user and the accounts it may use.
type DirUser struct {
	Name           string
	UID            uint32 // the uid its jobs run as (container uid), if known
	UIDKnown       bool
	DefaultAccount string
	Accounts       []string
	Admin          bool // may administer the cluster (Backend.AI superadmin)
}

// DirectoryInfo is the engine's directory.
type DirectoryInfo struct {
	Accounts []DirAccount
	Users    []DirUser
	// JobsAccount is the account jobs that name none run in (Backend.AI:
	// the engine's default project).
	JobsAccount string
}

// FairShareSource is implemented by engines that compute fair share (Backend.AI 26.3+).
type FairShareSource interface {
	FairShares(ctx context.Context) ([]FairShare, error)
}

// FairShare is the engine's fair-share state of one user in one project
// (account) of one resource group (partition), as the engine computed it.
// Backend.AI: Factor = 2^(-NormalizedUsage/Weight), in (0, 1], higher =
// more entitled (less past use), like Slurm's FairShare factor;
// NormalizedUsage is the weighted mean over resource types of decayed
// usage / (capacity × lookback window), so 0..1 when the user had the
// whole group; DecayedUsage is the decayed CPU use in core-seconds (like
// Slurm's RawUsage). An engine without the facility returns an error
// wrapping ErrNotSupported.
type FairShare struct {
	ResourceGroup, Project, User string
	Weight                       float64
	Factor                       float64
	DecayedUsage                 float64
	NormalizedUsage              float64
}
