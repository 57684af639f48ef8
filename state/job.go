package state

// OriginSlurmdbd marks a run imported from a slurmdbd database.
const OriginSlurmdbd = "slurmdbd"

// Job is what the frontend keeps about a Slurm job: the description the
// client submitted (in Slurm's terms) and the bookkeeping Backend.AI does
// not model. The batch script and environment are stored apart (see
// Store.Script) so snapshots stay small.
type Job struct {
	ID          uint32 `json:"id"`
	ArrayJobID  uint32 `json:"array_job_id,omitempty"`
	ArrayTaskID uint32 `json:"array_task_id,omitempty"` // NO_VAL when not an array task
	ArrayTasks  string `json:"array_tasks,omitempty"`   // pending meta record: "1-3%2"
	ArrayMax    uint32 `json:"array_max,omitempty"`
	ArraySpec   string `json:"array_spec,omitempty"` // the whole --array as submitted (SLURM_ARRAY_TASK_COUNT/MIN/MAX)

	Name       string `json:"name"`
	UserID     uint32 `json:"uid"`
	GroupID    uint32 `json:"gid"`
	UserName   string `json:"user,omitempty"`
	Partition  string `json:"partition"`
	Account    string `json:"account,omitempty"`
	QOS        string `json:"qos,omitempty"`
	Comment    string `json:"comment,omitempty"`
	WorkDir    string `json:"work_dir,omitempty"`
	StdIn      string `json:"stdin,omitempty"`
	StdOut     string `json:"stdout,omitempty"`
	StdErr     string `json:"stderr,omitempty"`
	Container  string `json:"container,omitempty"`
	AllocNode  string `json:"alloc_node,omitempty"` // submit host
	AllocSID   uint32 `json:"alloc_sid,omitempty"`  // submitter's session id
	SubmitLine string `json:"submit_line,omitempty"`
	DescFlags  uint64 `json:"desc_flags,omitempty"` // job_desc bitflags the client sent

	KillInvalidDep bool   `json:"kill_invalid_dep,omitempty"`
	Restarts       uint16 `json:"restarts,omitempty"`
	WarnSignal     uint16 `json:"warn_signal,omitempty"` // --signal
	WarnTime       uint16 `json:"warn_time,omitempty"`   // seconds before the limit
	WarnBatchOnly  bool   `json:"warn_batch_only,omitempty"`
	Command        string `json:"command,omitempty"` // script path or "(null)"

	SubmitTime   int64 `json:"submit_time"`
	EligibleTime int64 `json:"eligible_time,omitempty"`
	BeginTime    int64 `json:"begin_time,omitempty"`
	StartTime    int64 `json:"start_time,omitempty"`
	EndTime      int64 `json:"end_time,omitempty"`
	Deadline     int64 `json:"deadline,omitempty"`

	TimeLimit uint32 `json:"time_limit"` // minutes; Infinite; NoVal = partition default
	TimeMin   uint32 `json:"time_min,omitempty"`

	State    uint32 `json:"state"`  // JOB_* base state plus flags
	Reason   uint32 `json:"reason"` // enum job_state_reason (24.11 numbering)
	Priority uint32 `json:"priority"`
	Nice     int32  `json:"nice,omitempty"`
	HeldBy   uint8  `json:"held_by,omitempty"` // 0 none, 1 admin, 2 user
	// PrioSet: an operator set the priority (scontrol update
	// Priority=N), slurmctld's direct_set_prio: kept through updates and
	// priority/multifactor's periodic recalculation until a release or
	// requeue computes it again.
	PrioSet bool `json:"prio_set,omitempty"`

	MinNodes      uint32 `json:"min_nodes"`
	MaxNodes      uint32 `json:"max_nodes"`
	NumTasks      uint32 `json:"num_tasks"`
	TasksPerNode  uint16 `json:"tasks_per_node,omitempty"`
	CPUsPerTask   uint16 `json:"cpus_per_task"`
	MinCPUs       uint32 `json:"min_cpus"`
	MemPerNodeMB  uint64 `json:"mem_per_node_mb,omitempty"`
	MemPerCPUMB   uint64 `json:"mem_per_cpu_mb,omitempty"`
	TresPerNode   string `json:"tres_per_node,omitempty"` // "gres/gpu:2"
	TresPerJob    string `json:"tres_per_job,omitempty"`
	TresPerTask   string `json:"tres_per_task,omitempty"`
	ReqNodes      string `json:"req_nodes,omitempty"`
	ExcNodes      string `json:"exc_nodes,omitempty"`
	Features      string `json:"features,omitempty"`
	Dependency    string `json:"dependency,omitempty"`
	Requeue       bool   `json:"requeue,omitempty"`
	NoRequeue     bool   `json:"no_requeue,omitempty"` // --no-requeue (Requeue: --requeue; neither: JobRequeue decides)
	Exclusive     bool   `json:"exclusive,omitempty"`
	Contiguous    bool   `json:"contiguous,omitempty"`
	OpenMode      uint8  `json:"open_mode,omitempty"`
	MailType      uint16 `json:"mail_type,omitempty"`
	MailUser      string `json:"mail_user,omitempty"`
	ExitCode      uint32 `json:"exit_code,omitempty"`
	Nodes         string `json:"nodes,omitempty"` // allocated
	BatchHost     string `json:"batch_host,omitempty"`
	SessionID     string `json:"session_id,omitempty"` // backend session
	ProtoVersion  uint16 `json:"proto_version,omitempty"`
	TresReqStr    string `json:"tres_req,omitempty"`
	TresAllocStr  string `json:"tres_alloc,omitempty"`
	Network       string `json:"network,omitempty"`
	LastSchedEval int64  `json:"last_sched_eval,omitempty"`
	AccrueTime    int64  `json:"accrue_time,omitempty"` // when the job became eligible to accrue age (record format 2+)
	// Origin is "" for a job submitted through Slurm; "engine" for one
	// that shows a session made outside the frontend (Backend.AI's
	// console): it has no script and cannot be requeued or changed
	// (record format 3+); OriginSlurmdbd for a run imported from a
	// slurmdbd database (history only: its steps, the batch one too,
	// come from there).
	Origin string `json:"origin,omitempty"`
	// An interactive allocation's (salloc, srun without a job; Origin
	// "alloc"): where its client listens, for the grant of a pending
	// allocation (AllocPort) and for SRUN_* notices (OtherPort); RespHost
	// is the address the request came from (record format 3+).
	RespHost  string `json:"resp_host,omitempty"`
	AllocPort uint16 `json:"alloc_port,omitempty"`
	OtherPort uint16 `json:"other_port,omitempty"`
}

// Script is the batch script and environment of a job, stored apart.
type Script struct {
	Text string   `json:"script"`
	Env  []string `json:"env"`
	Argv []string `json:"argv,omitempty"`
}
