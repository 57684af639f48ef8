package ctld

import "github.com/lablup/slurm-frontend/codec"

// The inventory is every message type slurmctld answers (its RPC table,
// proc_req.c slurmctld_rpcs, in 22.05, 24.11 and 26.05) with who sends it
// (the stock clients, libslurm's API on their behalf, the daemons) and,
// for those this server does not serve, the error it answers instead:
// the one slurmctld gives when the feature is disabled or absent, so the
// client prints why, never "Invalid argument" nor a connection error.
// What serves a type is not written here but read from the dispatch
// tables (Fast, fastInfo, slowHandlers: servedBy), so a new handler takes
// over its type without touching this table.
//
// Left out: REQUEST_NODE_REGISTRATION_STATUS (1001), which slurmctld
// sends to slurmds and answers with EINVAL itself ("slurmctld is talking
// with itself"), and the federation sibling messages slurmctld only
// accepts inside REQUEST_CTLD_MULT_MSG.
type invEntry struct {
	Type    uint16
	Senders string
	// Since is the first protocol version with the type (0: 22.05 has
	// it), Before the first without it (0: 26.05 still has it); other
	// versions cannot send it and get what any unknown type gets.
	Since, Before uint16
	// Code is the answer when no handler serves the type (0: one must).
	Code uint32
	Why  string
}

// Refusal reasons shared by several types.
const (
	whySlurmd     = "sent by slurmd/slurmstepd: nodes are Backend.AI agents run by in-process stand-ins, no slurmd belongs to this cluster"
	whyBackup     = "backup controllers: this server is the cluster's only controller"
	whyFederation = "federation: this server is a single cluster"
	whyStepd      = "step layouts feed sattach, sstat and listpids, which talk to slurmstepd; the node stand-ins run no slurmstepd"
	whySbcast     = "sbcast: file broadcast goes to slurmd, which the node stand-ins do not run"
	whyDbd        = "messages slurmdbd pushes to its controllers: the server keeps accounting itself"
)

var inventory = []invEntry{
	// Served.
	{Type: codec.REQUEST_PING, Senders: "scontrol ping, every client's controller failover check, sackd"},
	{Type: codec.REQUEST_BUILD_INFO, Senders: "scontrol show config, every client without a local slurm.conf value it needs (slurm_load_ctl_conf)"},
	{Type: codec.REQUEST_JOB_INFO, Senders: "squeue, scontrol show job, sview; scancel's filters (22.05)"},
	{Type: codec.REQUEST_JOB_INFO_SINGLE, Senders: "scontrol show job ID, squeue -j ID, srun/salloc/sattach's job checks, scancel"},
	{Type: codec.REQUEST_JOB_USER_INFO, Senders: "squeue -u, scontrol show job with a user"},
	{Type: codec.REQUEST_JOB_STEP_INFO, Senders: "squeue -s, scontrol show step, scancel of steps, sstat, srun"},
	{Type: codec.REQUEST_NODE_INFO, Senders: "sinfo, scontrol show node, squeue (node names), srun/salloc"},
	{Type: codec.REQUEST_NODE_INFO_SINGLE, Senders: "scontrol show node NAME"},
	{Type: codec.REQUEST_PARTITION_INFO, Senders: "sinfo, scontrol show partition, squeue, sprio"},
	{Type: codec.REQUEST_CONFIG, Senders: "sackd, slurmd -Z/configless clients (fetch_config)"},
	{Type: codec.REQUEST_SHARE_INFO, Senders: "sshare"},
	{Type: codec.REQUEST_RESERVATION_INFO, Senders: "scontrol show reservation, sinfo -T, squeue (reservation checks)"},
	{Type: codec.REQUEST_PRIORITY_FACTORS, Senders: "sprio"},
	{Type: codec.REQUEST_STATS_INFO, Senders: "sdiag, sdiag -r"},
	{Type: codec.REQUEST_FED_INFO, Senders: "squeue, sinfo, scontrol, sbatch, srun, salloc, scancel (slurm_load_federation)"},
	{Type: codec.REQUEST_BATCH_SCRIPT, Senders: "scontrol write batch_script"},
	{Type: codec.REQUEST_LICENSE_INFO, Senders: "scontrol show licenses, sinfo/squeue -L (24.11+)"},
	{Type: codec.REQUEST_UPDATE_JOB, Senders: "scontrol update job, hold, uhold, release"},
	{Type: codec.REQUEST_UPDATE_NODE, Senders: "scontrol update node"},
	{Type: codec.REQUEST_RESOURCE_ALLOCATION, Senders: "salloc, srun outside an allocation"},
	{Type: codec.REQUEST_SUBMIT_BATCH_JOB, Senders: "sbatch, scrontab's entries (as jobs)"},
	{Type: codec.REQUEST_JOB_WILL_RUN, Senders: "sbatch/salloc/srun --test-only"},
	{Type: codec.REQUEST_JOB_ALLOCATION_INFO, Senders: "srun inside an allocation, sattach, sbcast"},
	{Type: codec.REQUEST_JOB_READY, Senders: "salloc/srun waiting for nodes (slurm_job_node_ready), scontrol wait_job"},
	{Type: codec.REQUEST_JOB_NOTIFY, Senders: "scontrol notify"},
	{Type: codec.REQUEST_HET_JOB_ALLOC_INFO, Senders: "srun inside an allocation (slurm_het_job_lookup)"},
	{Type: codec.REQUEST_JOB_STEP_CREATE, Senders: "srun"},
	{Type: codec.REQUEST_CANCEL_JOB_STEP, Senders: "scancel JOB.STEP, srun on a signal"},
	{Type: codec.REQUEST_STEP_COMPLETE, Senders: "srun (step end), slurmstepd"},
	{Type: codec.REQUEST_COMPLETE_JOB_ALLOCATION, Senders: "salloc and srun at exit"},
	{Type: codec.REQUEST_JOB_REQUEUE, Senders: "scontrol requeue, requeuehold"},
	{Type: codec.REQUEST_KILL_JOB, Senders: "scancel, scontrol (kill via slurm_kill_job), srun --kill-on-bad-exit, salloc"},
	{Type: codec.REQUEST_KILL_JOBS, Senders: "scancel (23.11+)", Since: codec.V23_11},
	{Type: codec.REQUEST_TOP_JOB, Senders: "scontrol top"},
	{Type: codec.REQUEST_RECONFIGURE, Senders: "scontrol reconfigure"},
	{Type: codec.REQUEST_SHUTDOWN, Senders: "scontrol shutdown"},
	{Type: codec.REQUEST_SET_DEBUG_LEVEL, Senders: "scontrol setdebug"},

	{Type: codec.REQUEST_JOB_STATE, Senders: "squeue --only-job-state (24.05+)", Since: codec.V24_05},

	// Administration of what Backend.AI owns.
	{Type: codec.REQUEST_CONTROL, Senders: "a backup slurmctld taking over (slurm_request_control)",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyBackup},
	{Type: codec.REQUEST_TAKEOVER, Senders: "scontrol takeover",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyBackup},
	{Type: codec.REQUEST_CONTROL_STATUS, Senders: "a backup slurmctld's status check",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyBackup},
	{Type: codec.REQUEST_SET_SCHEDLOG_LEVEL, Senders: "scontrol setschedloglevel",
		// slurmctld's answer without SlurmSchedLogFile.
		Code: codec.ESLURM_DISABLED, Why: "the scheduler log (SlurmSchedLogFile): the server keeps none"},
	{Type: codec.REQUEST_SET_DEBUG_FLAGS, Senders: "scontrol setdebugflags",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "DebugFlags select slurmctld subsystems' logs; the server's log has levels only (scontrol setdebug)"},
	{Type: codec.REQUEST_REBOOT_NODES, Senders: "scontrol reboot",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "node reboots (RebootProgram): nodes are Backend.AI agents, which the server cannot reboot"},
	{Type: codec.REQUEST_SET_FS_DAMPENING_FACTOR, Senders: "scontrol setfsdampeningfactor",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "FairShareDampeningFactor is read from slurm.conf only"},
	{Type: codec.REQUEST_SET_SUSPEND_EXC_NODES, Senders: "scontrol update SuspendExcNodes= (23.02+)", Since: codec.V23_02,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "power saving: Backend.AI scales its agents itself"},
	{Type: codec.REQUEST_SET_SUSPEND_EXC_PARTS, Senders: "scontrol update SuspendExcParts= (23.02+)", Since: codec.V23_02,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "power saving: Backend.AI scales its agents itself"},
	{Type: codec.REQUEST_SET_SUSPEND_EXC_STATES, Senders: "scontrol update SuspendExcStates= (23.02+)", Since: codec.V23_02,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "power saving: Backend.AI scales its agents itself"},
	{Type: codec.REQUEST_CREATE_PARTITION, Senders: "scontrol create partition",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "partitions are Backend.AI resource groups and slurm.conf's, changed there"},
	{Type: codec.REQUEST_UPDATE_PARTITION, Senders: "scontrol update partition",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "partitions are Backend.AI resource groups and slurm.conf's, changed there"},
	{Type: codec.REQUEST_DELETE_PARTITION, Senders: "scontrol delete partition",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "partitions are Backend.AI resource groups and slurm.conf's, changed there"},
	{Type: codec.REQUEST_CREATE_NODE, Senders: "scontrol create node",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "dynamic nodes: nodes are the Backend.AI agents"},
	{Type: codec.REQUEST_DELETE_NODE, Senders: "scontrol delete node",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "dynamic nodes: nodes are the Backend.AI agents"},
	{Type: codec.REQUEST_NODE_ALIAS_ADDRS, Senders: "scontrol getaddrs, message forwarding to cloud nodes (23.11+)", Since: codec.V23_11,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "cloud nodes' alias addresses: nodes are reached at their configured addresses"},
	{Type: codec.REQUEST_HOSTLIST_EXPANSION, Senders: "clients expanding a node list they cannot expand alone (25.05+)", Since: codec.V25_05,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "controller-side host list expressions"},
	{Type: codec.REQUEST_TOPO_INFO, Senders: "scontrol show topology",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "network topology plugins: Backend.AI has no switch topology"},
	{Type: codec.REQUEST_TOPO_CONFIG, Senders: "scontrol show topology (25.05+)", Since: codec.V25_05,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "network topology plugins: Backend.AI has no switch topology"},
	{Type: codec.REQUEST_ASSOC_MGR_INFO, Senders: "scontrol show assoc_mgr",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "slurmctld's association manager cache: associations are read with sacctmgr and sshare"},

	// Reservations: none exist.
	{Type: codec.REQUEST_CREATE_RESERVATION, Senders: "scontrol create reservation",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "reservations: Backend.AI has no advance reservations"},
	{Type: codec.REQUEST_UPDATE_RESERVATION, Senders: "scontrol update reservation",
		// slurmctld's answer for a reservation that does not exist.
		Code: codec.ESLURM_RESERVATION_INVALID, Why: "reservations: none exist"},
	{Type: codec.REQUEST_DELETE_RESERVATION, Senders: "scontrol delete reservation",
		Code: codec.ESLURM_RESERVATION_INVALID, Why: "reservations: none exist"},

	// Front ends (--enable-front-end builds), gone in 25.05.
	{Type: codec.REQUEST_FRONT_END_INFO, Senders: "scontrol show frontend, sinfo/squeue on front-end builds", Before: codec.V25_05,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "front end nodes: the server is not a front-end build"},
	{Type: codec.REQUEST_UPDATE_FRONT_END, Senders: "scontrol update frontendname", Before: codec.V25_05,
		// slurmctld's answer for a front end it does not have.
		Code: codec.ESLURM_INVALID_NODE_NAME, Why: "front end nodes: none exist"},

	// Burst buffers.
	{Type: codec.REQUEST_BURST_BUFFER_INFO, Senders: "scontrol show burstbuffer",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "burst buffers (BurstBufferType): Backend.AI storage is mounted virtual folders"},
	{Type: codec.REQUEST_BURST_BUFFER_STATUS, Senders: "scontrol show bbstat, scontrol show dwstat",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "burst buffers (BurstBufferType): Backend.AI storage is mounted virtual folders"},

	// Triggers: as slurmctld with SlurmctldParameters=disable_triggers.
	{Type: codec.REQUEST_TRIGGER_SET, Senders: "strigger --set",
		Code: codec.ESLURM_DISABLED, Why: "event triggers (strigger)"},
	{Type: codec.REQUEST_TRIGGER_GET, Senders: "strigger --get",
		Code: codec.ESLURM_DISABLED, Why: "event triggers (strigger)"},
	{Type: codec.REQUEST_TRIGGER_CLEAR, Senders: "strigger --clear",
		Code: codec.ESLURM_DISABLED, Why: "event triggers (strigger)"},
	{Type: codec.REQUEST_TRIGGER_PULL, Senders: "strigger (libslurm slurm_pull_trigger)",
		Code: codec.ESLURM_DISABLED, Why: "event triggers (strigger)"},

	// scrontab: as slurmctld without ScronParams=enable (scrontab itself
	// refuses first when the served config has no such parameter).
	{Type: codec.REQUEST_CRONTAB, Senders: "scrontab -l, scrontab -e",
		Code: codec.ESLURM_DISABLED, Why: "scrontab (ScronParams=enable)"},
	{Type: codec.REQUEST_UPDATE_CRONTAB, Senders: "scrontab FILE, scrontab -e, scrontab -r",
		Code: codec.ESLURM_DISABLED, Why: "scrontab (ScronParams=enable)"},

	// Jobs and steps.
	{Type: codec.REQUEST_HET_JOB_ALLOCATION, Senders: "salloc/srun with ':' components",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "heterogeneous jobs: submit the components as separate jobs"},
	{Type: codec.REQUEST_SUBMIT_BATCH_HET_JOB, Senders: "sbatch with hetjob components",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "heterogeneous jobs: submit the components as separate jobs"},
	{Type: codec.REQUEST_SUSPEND, Senders: "scontrol suspend, scontrol resume",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "suspending jobs: Backend.AI sessions cannot be paused"},
	{Type: codec.REQUEST_JOB_END_TIME, Senders: "scontrol pidinfo, libslurm slurm_get_rem_time (MPI, job scripts)",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "a job's end time by RPC: not served yet (squeue -o %L shows it)"},
	{Type: codec.REQUEST_UPDATE_JOB_STEP, Senders: "scontrol update stepid=",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "step time limits: a step runs for its job's time"},
	{Type: codec.REQUEST_STEP_LAYOUT, Senders: "sattach, sstat, scontrol listpids (slurm_job_step_layout_get)",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyStepd},
	{Type: codec.REQUEST_STEP_BY_CONTAINER_ID, Senders: "scontrol listjobs/liststeps with a container id, scrun (23.02+)", Since: codec.V23_02,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "OCI containers run by scrun"},
	{Type: codec.REQUEST_RESOURCE_LAYOUT, Senders: "scontrol show resources (25.11+)", Since: codec.V25_11,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "per-node resource layouts of jobs: Backend.AI allocates the sessions"},
	{Type: codec.REQUEST_JOB_SBCAST_CRED, Senders: "sbcast",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whySbcast},
	{Type: codec.REQUEST_SBCAST_CRED_NO_JOB, Senders: "sbcast --nodelist without a job (24.11+)", Since: codec.V24_11,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whySbcast},
	{Type: codec.REQUEST_AUTH_TOKEN, Senders: "scontrol token",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "JSON web tokens (AuthAltTypes=auth/jwt): clients authenticate with munge"},

	// Daemons.
	{Type: codec.MESSAGE_NODE_REGISTRATION_STATUS, Senders: "slurmd (registration)",
		Code: codec.ESLURM_INVALID_NODE_NAME, Why: whySlurmd},
	{Type: codec.MESSAGE_EPILOG_COMPLETE, Senders: "slurmd (epilog complete)",
		Code: codec.ESLURM_INVALID_NODE_NAME, Why: whySlurmd},
	{Type: codec.REQUEST_COMPLETE_PROLOG, Senders: "slurmd (prolog complete)",
		Code: codec.ESLURM_INVALID_NODE_NAME, Why: whySlurmd},
	{Type: codec.REQUEST_COMPLETE_BATCH_SCRIPT, Senders: "slurmstepd (batch script end)",
		Code: codec.ESLURM_INVALID_NODE_NAME, Why: whySlurmd},
	{Type: codec.RESPONSE_UPDATE_JOB_MEM, Senders: "slurmd (26.05)", Since: codec.V26_05,
		Code: codec.ESLURM_INVALID_NODE_NAME, Why: whySlurmd},
	{Type: codec.REQUEST_TLS_CERT, Senders: "slurmd, sackd (certmgr, 24.11+)", Since: codec.V24_11,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: "TLS certificates (certmgr): connections are munge-authenticated"},
	{Type: codec.REQUEST_DBD_RELAY, Senders: "accounting_storage/ctld_relay (24.05+)", Since: codec.V24_05,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyDbd},
	{Type: codec.REQUEST_PERSIST_INIT, Senders: "slurmdbd, federated slurmctlds (persistent connections)",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyDbd},
	{Type: codec.REQUEST_PERSIST_INIT_TLS, Senders: "slurmdbd, federated slurmctlds (24.05, 24.11)", Since: codec.V24_05, Before: codec.V25_05,
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyDbd},
	{Type: codec.ACCOUNTING_UPDATE_MSG, Senders: "slurmdbd",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyDbd},
	{Type: codec.ACCOUNTING_FIRST_REG, Senders: "slurmdbd",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyDbd},
	{Type: codec.ACCOUNTING_REGISTER_CTLD, Senders: "slurmdbd",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyDbd},
	{Type: codec.REQUEST_CTLD_MULT_MSG, Senders: "federated slurmctlds",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyFederation},
	{Type: codec.REQUEST_SIB_JOB_LOCK, Senders: "federated slurmctlds",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyFederation},
	{Type: codec.REQUEST_SIB_JOB_UNLOCK, Senders: "federated slurmctlds",
		Code: codec.ESLURM_NOT_SUPPORTED, Why: whyFederation},
}

// inventoryByType indexes inventory.
var inventoryByType = func() map[uint16]*invEntry {
	m := make(map[uint16]*invEntry, len(inventory))
	for i := range inventory {
		m[inventory[i].Type] = &inventory[i]
	}
	return m
}()

// has reports whether clients of protocol version v have the type.
func (e *invEntry) has(v uint16) bool {
	return (e.Since == 0 || v >= e.Since) && (e.Before == 0 || v < e.Before)
}

// inventoryRefusal is the code for a request of an inventoried type no
// handler serves, ok=false for anything else.
func inventoryRefusal(req *Request) (uint32, string, bool) {
	e := inventoryByType[req.MsgType]
	if e == nil || e.Code == 0 || !e.has(req.Version) {
		return 0, "", false
	}
	return e.Code, e.Why, true
}
