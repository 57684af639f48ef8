package codec

// Node states (slurm/slurm.h: enum node_states and NODE_STATE_* bits).
// node_state is a u32 on the wire in every supported version: a base
// state in the low four bits plus flag bits. The values below were
// compared in slurm.h of the 22.05.8, 23.02.8, 23.11.11, 24.05.8,
// 24.11.5, 25.05.8, 25.11.7 and 26.05.3 tags; bits never moved, a few
// were added or renamed (noted per constant).
const (
	NODE_STATE_UNKNOWN   uint32 = 0
	NODE_STATE_DOWN      uint32 = 1
	NODE_STATE_IDLE      uint32 = 2
	NODE_STATE_ALLOCATED uint32 = 3
	NODE_STATE_ERROR     uint32 = 4 // unused by slurmctld, still in the enum
	// MIXED is computed by clients (SHOW_MIXED) from the node's
	// alloc_cpus; slurmctld never stores it in node_state.
	NODE_STATE_MIXED  uint32 = 5
	NODE_STATE_FUTURE uint32 = 6
	NODE_STATE_END    uint32 = 7

	NODE_STATE_BASE  uint32 = 0x0000000f
	NODE_STATE_FLAGS uint32 = 0xfffffff0

	// Bit 4 is NODE_STATE_NET ("Cray network", 22.05-23.11), unused in
	// 24.05/24.11, and NODE_STATE_EXTERNAL (node without slurmd) from
	// 25.05 on. Same bit, different meaning: interpret per version.
	NODE_STATE_NET      uint32 = 1 << 4 // 22.05, 23.02, 23.11
	NODE_STATE_EXTERNAL uint32 = 1 << 4 // 25.05+

	NODE_STATE_RES              uint32 = 1 << 5
	NODE_STATE_UNDRAIN          uint32 = 1 << 6 // update requests only
	NODE_STATE_CLOUD            uint32 = 1 << 7
	NODE_RESUME                 uint32 = 1 << 8 // update requests only
	NODE_STATE_DRAIN            uint32 = 1 << 9
	NODE_STATE_COMPLETING       uint32 = 1 << 10
	NODE_STATE_NO_RESPOND       uint32 = 1 << 11
	NODE_STATE_POWERED_DOWN     uint32 = 1 << 12
	NODE_STATE_FAIL             uint32 = 1 << 13
	NODE_STATE_POWERING_UP      uint32 = 1 << 14
	NODE_STATE_MAINT            uint32 = 1 << 15
	NODE_STATE_REBOOT_REQUESTED uint32 = 1 << 16
	NODE_STATE_REBOOT_CANCEL    uint32 = 1 << 17
	NODE_STATE_POWERING_DOWN    uint32 = 1 << 18
	NODE_STATE_DYNAMIC_FUTURE   uint32 = 1 << 19
	NODE_STATE_REBOOT_ISSUED    uint32 = 1 << 20
	NODE_STATE_PLANNED          uint32 = 1 << 21
	NODE_STATE_INVALID_REG      uint32 = 1 << 22
	NODE_STATE_POWER_DOWN       uint32 = 1 << 23
	NODE_STATE_POWER_UP         uint32 = 1 << 24
	NODE_STATE_POWER_DRAIN      uint32 = 1 << 25
	NODE_STATE_DYNAMIC_NORM     uint32 = 1 << 26
	NODE_STATE_BLOCKED          uint32 = 1 << 27 // 24.05+ (exclusive topology)
)

// NODE_CERT_TOKEN_SET is the only cert_flags bit (node record, 25.05+).
const NODE_CERT_TOKEN_SET uint16 = 1 << 0

// Select plugin ids (src/interfaces/select.h, SELECT_PLUGIN_*). Node
// records up to 24.11 carry one of these in front of the allocation
// data; the id must name a select plugin the client can load.
const (
	SELECT_PLUGIN_CONS_RES       uint32 = 101 // removed in 23.11; 23.11+ map it to cons_tres for older peers
	SELECT_PLUGIN_LINEAR         uint32 = 102
	SELECT_PLUGIN_CRAY_LINEAR    uint32 = 107 // 22.05 only
	SELECT_PLUGIN_CRAY_CONS_RES  uint32 = 108 // 22.05 only
	SELECT_PLUGIN_CONS_TRES      uint32 = 109
	SELECT_PLUGIN_CRAY_CONS_TRES uint32 = 110 // 22.05 only
)

// Partition state_up values (slurm/slurm.h PARTITION_*): two bits,
// SUBMIT (accept jobs) and SCHED (start jobs). Unchanged 22.05-26.05.
const (
	PARTITION_SUBMIT   uint16 = 0x01
	PARTITION_SCHED    uint16 = 0x02
	PARTITION_INACTIVE uint16 = 0x00
	PARTITION_DOWN     uint16 = PARTITION_SUBMIT
	PARTITION_DRAIN    uint16 = PARTITION_SCHED
	PARTITION_UP       uint16 = PARTITION_SUBMIT | PARTITION_SCHED
)

// Partition flags (slurm/slurm.h PART_FLAG_*). The record carries them
// as u16 up to 23.11 and as u32 from 24.05, which is why bits >= 16
// only exist from 24.05. The *_CLR bits are used in update requests only.
const (
	PART_FLAG_DEFAULT        uint32 = 1 << 0 // set by slurmctld at pack time on the default partition
	PART_FLAG_HIDDEN         uint32 = 1 << 1
	PART_FLAG_NO_ROOT        uint32 = 1 << 2
	PART_FLAG_ROOT_ONLY      uint32 = 1 << 3
	PART_FLAG_REQ_RESV       uint32 = 1 << 4
	PART_FLAG_LLN            uint32 = 1 << 5
	PART_FLAG_EXCLUSIVE_USER uint32 = 1 << 6
	PART_FLAG_PDOI           uint32 = 1 << 7 // 23.02+ (power down on idle); bit unused in 22.05
	PART_FLAG_DEFAULT_CLR    uint32 = 1 << 8
	PART_FLAG_HIDDEN_CLR     uint32 = 1 << 9
	PART_FLAG_NO_ROOT_CLR    uint32 = 1 << 10
	PART_FLAG_ROOT_ONLY_CLR  uint32 = 1 << 11
	PART_FLAG_REQ_RESV_CLR   uint32 = 1 << 12
	PART_FLAG_LLN_CLR        uint32 = 1 << 13
	PART_FLAG_EXC_USER_CLR   uint32 = 1 << 14
	PART_FLAG_PDOI_CLR       uint32 = 1 << 15 // 23.02+
	PART_FLAG_EXCLUSIVE_TOPO uint32 = 1 << 16 // 24.05+
	PART_FLAG_EXC_TOPO_CLR   uint32 = 1 << 17 // 24.05+
	PART_FLAG_SCHED_FAILED   uint32 = 1 << 18 // 24.11+, slurmctld internal
	PART_FLAG_SCHED_CLEARED  uint32 = 1 << 19 // 24.11+, slurmctld internal
)

// SHARED_FORCE is the high bit of a partition's max_share
// (OverSubscribe=FORCE:n); the low 15 bits are n. 0 means EXCLUSIVE.
const SHARED_FORCE uint16 = 0x8000

// Partition job_defaults types (slurm/slurm.h JOB_DEF_*).
const (
	JOB_DEF_CPU_PER_GPU uint16 = 1
	JOB_DEF_MEM_PER_GPU uint16 = 2
)
