package codec

// Job states, state flags and wait reasons (slurm/slurm.h) as they travel
// in job and step records. Compared in slurm.h of the 22.05.8, 23.02.0,
// 23.11.0, 24.05.0, 24.11.5, 25.05.0, 25.11.0 and 26.05.3 tags: values
// never moved; a few names were retired or reused (noted per constant).

// Base job states (enum job_states), the low byte of job_state.
const (
	JOB_PENDING   uint32 = 0
	JOB_RUNNING   uint32 = 1
	JOB_SUSPENDED uint32 = 2
	JOB_COMPLETE  uint32 = 3
	JOB_CANCELLED uint32 = 4
	JOB_FAILED    uint32 = 5
	JOB_TIMEOUT   uint32 = 6
	JOB_NODE_FAIL uint32 = 7
	JOB_PREEMPTED uint32 = 8
	JOB_BOOT_FAIL uint32 = 9
	JOB_DEADLINE  uint32 = 10
	JOB_OOM       uint32 = 11
	JOB_END       uint32 = 12

	JOB_STATE_BASE  uint32 = 0x000000ff
	JOB_STATE_FLAGS uint32 = 0xffffff00
)

// Job state flag bits, or-ed onto the base state.
const (
	JOB_LAUNCH_FAILED uint32 = 1 << 8
	// Bit 9: JOB_UPDATE_DB (22.05-24.05, controller-internal), unused in
	// 24.11, JOB_GETENV_FAILED from 25.05 on.
	JOB_UPDATE_DB     uint32 = 1 << 9
	JOB_GETENV_FAILED uint32 = 1 << 9
	JOB_REQUEUE       uint32 = 1 << 10 // requeue job in completing state
	JOB_REQUEUE_HOLD  uint32 = 1 << 11
	JOB_SPECIAL_EXIT  uint32 = 1 << 12
	JOB_RESIZING      uint32 = 1 << 13
	JOB_CONFIGURING   uint32 = 1 << 14 // allocated nodes booting
	JOB_COMPLETING    uint32 = 1 << 15 // waiting for epilog completion
	JOB_STOPPED       uint32 = 1 << 16
	JOB_RECONFIG_FAIL uint32 = 1 << 17
	JOB_POWER_UP_NODE uint32 = 1 << 18
	JOB_REVOKED       uint32 = 1 << 19 // federation sibling revoked
	JOB_REQUEUE_FED   uint32 = 1 << 20
	JOB_RESV_DEL_HOLD uint32 = 1 << 21
	JOB_SIGNALING     uint32 = 1 << 22
	JOB_STAGE_OUT     uint32 = 1 << 23
	JOB_EXPEDITING    uint32 = 1 << 24 // 25.11+
)

// JobIsPending etc. mirror the IS_JOB_* macros clients apply to job_state.
func JobIsPending(state uint32) bool    { return state&JOB_STATE_BASE == JOB_PENDING }
func JobIsRunning(state uint32) bool    { return state&JOB_STATE_BASE == JOB_RUNNING }
func JobIsSuspended(state uint32) bool  { return state&JOB_STATE_BASE == JOB_SUSPENDED }
func JobIsCompleting(state uint32) bool { return state&JOB_COMPLETING != 0 }

// JobIsFinished reports a base state past JOB_SUSPENDED (completed,
// cancelled, failed, ...), as IS_JOB_FINISHED.
func JobIsFinished(state uint32) bool { return state&JOB_STATE_BASE > JOB_SUSPENDED }

// JobIsStarted reports a base state past JOB_PENDING, as IS_JOB_STARTED.
func JobIsStarted(state uint32) bool { return state&JOB_STATE_BASE > JOB_PENDING }

// JobStateString is job_state_string(): the first matching flag name,
// else the base state name ("PENDING", "COMPLETED", ...).
func JobStateString(state uint32) string {
	for _, f := range jobStateFlagNames {
		if state&f.bit != 0 {
			return f.name
		}
	}
	if b := state & JOB_STATE_BASE; b < JOB_END {
		return jobStateBaseNames[b]
	}
	return "?"
}

var jobStateBaseNames = [...]string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETED",
	"CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
	"DEADLINE", "OUT_OF_MEMORY"}

var jobStateFlagNames = [...]struct {
	bit  uint32
	name string
}{
	{JOB_COMPLETING, "COMPLETING"}, {JOB_STAGE_OUT, "STAGE_OUT"},
	{JOB_CONFIGURING, "CONFIGURING"}, {JOB_EXPEDITING, "EXPEDITING"},
	{JOB_RESIZING, "RESIZING"}, {JOB_REQUEUE, "REQUEUED"},
	{JOB_REQUEUE_FED, "REQUEUE_FED"}, {JOB_REQUEUE_HOLD, "REQUEUE_HOLD"},
	{JOB_SPECIAL_EXIT, "SPECIAL_EXIT"}, {JOB_STOPPED, "STOPPED"},
	{JOB_REVOKED, "REVOKED"}, {JOB_RESV_DEL_HOLD, "RESV_DEL_HOLD"},
	{JOB_SIGNALING, "SIGNALING"},
}

// NICE_OFFSET semantics: job nice (and site_factor) travel as value +
// NiceOffset (0x80000000) in a u32, so nice 0 is 0x80000000 and nice -5
// is 0x7ffffffb. Clients subtract the offset for display.

// NiceToWire converts a nice value (-2147483645..2147483645) to its wire form.
func NiceToWire(nice int32) uint32 { return uint32(int64(nice) + int64(NiceOffset)) }

// NiceFromWire converts a wire nice (or site_factor) back to its value.
func NiceFromWire(v uint32) int32 { return int32(int64(v) - int64(NiceOffset)) }

// Job state reasons (enum job_state_reason). state_reason is a u16 on the
// wire in 22.05 and a u32 from 23.02 on; numbering is identical in every
// version (e.g. WAIT_HELD_USER is 16 everywhere), only the names of a
// few retired slots changed.
const (
	WAIT_NO_REASON                         uint32 = 0
	WAIT_PRIORITY                          uint32 = 1
	WAIT_DEPENDENCY                        uint32 = 2
	WAIT_RESOURCES                         uint32 = 3
	WAIT_PART_NODE_LIMIT                   uint32 = 4
	WAIT_PART_TIME_LIMIT                   uint32 = 5
	WAIT_PART_DOWN                         uint32 = 6
	WAIT_PART_INACTIVE                     uint32 = 7
	WAIT_HELD                              uint32 = 8
	WAIT_TIME                              uint32 = 9
	WAIT_LICENSES                          uint32 = 10
	WAIT_ASSOC_JOB_LIMIT                   uint32 = 11
	WAIT_ASSOC_RESOURCE_LIMIT              uint32 = 12
	WAIT_ASSOC_TIME_LIMIT                  uint32 = 13
	WAIT_RESERVATION                       uint32 = 14
	WAIT_NODE_NOT_AVAIL                    uint32 = 15
	WAIT_HELD_USER                         uint32 = 16
	WAIT_FRONT_END                         uint32 = 17 // 22.05-24.11
	DEFUNCT_WAIT_17                        uint32 = 17 // 25.05 only
	WAIT_NVIDIA_IMEX_CHANNELS              uint32 = 17 // 25.11+
	FAIL_DEFER                             uint32 = 18
	FAIL_DOWN_PARTITION                    uint32 = 19
	FAIL_DOWN_NODE                         uint32 = 20
	FAIL_BAD_CONSTRAINTS                   uint32 = 21
	FAIL_SYSTEM                            uint32 = 22
	FAIL_LAUNCH                            uint32 = 23
	FAIL_EXIT_CODE                         uint32 = 24
	FAIL_TIMEOUT                           uint32 = 25
	FAIL_INACTIVE_LIMIT                    uint32 = 26
	FAIL_ACCOUNT                           uint32 = 27
	FAIL_QOS                               uint32 = 28
	WAIT_QOS_THRES                         uint32 = 29
	WAIT_QOS_JOB_LIMIT                     uint32 = 30
	WAIT_QOS_RESOURCE_LIMIT                uint32 = 31
	WAIT_QOS_TIME_LIMIT                    uint32 = 32
	WAIT_BLOCK_MAX_ERR                     uint32 = 33 // 22.05 only
	FAIL_SIGNAL                            uint32 = 33 // 23.02+
	WAIT_BLOCK_D_ACTION                    uint32 = 34 // 22.05 only
	DEFUNCT_WAIT_34                        uint32 = 34 // 23.02+
	WAIT_CLEANING                          uint32 = 35
	WAIT_PROLOG                            uint32 = 36
	WAIT_QOS                               uint32 = 37
	WAIT_ACCOUNT                           uint32 = 38
	WAIT_DEP_INVALID                       uint32 = 39
	WAIT_QOS_GRP_CPU                       uint32 = 40
	WAIT_QOS_GRP_CPU_MIN                   uint32 = 41
	WAIT_QOS_GRP_CPU_RUN_MIN               uint32 = 42
	WAIT_QOS_GRP_JOB                       uint32 = 43
	WAIT_QOS_GRP_MEM                       uint32 = 44
	WAIT_QOS_GRP_NODE                      uint32 = 45
	WAIT_QOS_GRP_SUB_JOB                   uint32 = 46
	WAIT_QOS_GRP_WALL                      uint32 = 47
	WAIT_QOS_MAX_CPU_PER_JOB               uint32 = 48
	WAIT_QOS_MAX_CPU_MINS_PER_JOB          uint32 = 49
	WAIT_QOS_MAX_NODE_PER_JOB              uint32 = 50
	WAIT_QOS_MAX_WALL_PER_JOB              uint32 = 51
	WAIT_QOS_MAX_CPU_PER_USER              uint32 = 52
	WAIT_QOS_MAX_JOB_PER_USER              uint32 = 53
	WAIT_QOS_MAX_NODE_PER_USER             uint32 = 54
	WAIT_QOS_MAX_SUB_JOB                   uint32 = 55
	WAIT_QOS_MIN_CPU                       uint32 = 56
	WAIT_ASSOC_GRP_CPU                     uint32 = 57
	WAIT_ASSOC_GRP_CPU_MIN                 uint32 = 58
	WAIT_ASSOC_GRP_CPU_RUN_MIN             uint32 = 59
	WAIT_ASSOC_GRP_JOB                     uint32 = 60
	WAIT_ASSOC_GRP_MEM                     uint32 = 61
	WAIT_ASSOC_GRP_NODE                    uint32 = 62
	WAIT_ASSOC_GRP_SUB_JOB                 uint32 = 63
	WAIT_ASSOC_GRP_WALL                    uint32 = 64
	WAIT_ASSOC_MAX_JOBS                    uint32 = 65
	WAIT_ASSOC_MAX_CPU_PER_JOB             uint32 = 66
	WAIT_ASSOC_MAX_CPU_MINS_PER_JOB        uint32 = 67
	WAIT_ASSOC_MAX_NODE_PER_JOB            uint32 = 68
	WAIT_ASSOC_MAX_WALL_PER_JOB            uint32 = 69
	WAIT_ASSOC_MAX_SUB_JOB                 uint32 = 70
	WAIT_MAX_REQUEUE                       uint32 = 71
	WAIT_ARRAY_TASK_LIMIT                  uint32 = 72
	WAIT_BURST_BUFFER_RESOURCE             uint32 = 73
	WAIT_BURST_BUFFER_STAGING              uint32 = 74
	FAIL_BURST_BUFFER_OP                   uint32 = 75
	WAIT_POWER_NOT_AVAIL                   uint32 = 76 // 22.05-23.11
	DEFUNCT_WAIT_76                        uint32 = 76 // 24.05+
	WAIT_POWER_RESERVED                    uint32 = 77 // 22.05-23.11
	DEFUNCT_WAIT_77                        uint32 = 77 // 24.05+
	WAIT_ASSOC_GRP_UNK                     uint32 = 78
	WAIT_ASSOC_GRP_UNK_MIN                 uint32 = 79
	WAIT_ASSOC_GRP_UNK_RUN_MIN             uint32 = 80
	WAIT_ASSOC_MAX_UNK_PER_JOB             uint32 = 81
	WAIT_ASSOC_MAX_UNK_PER_NODE            uint32 = 82
	WAIT_ASSOC_MAX_UNK_MINS_PER_JOB        uint32 = 83
	WAIT_ASSOC_MAX_CPU_PER_NODE            uint32 = 84
	WAIT_ASSOC_GRP_MEM_MIN                 uint32 = 85
	WAIT_ASSOC_GRP_MEM_RUN_MIN             uint32 = 86
	WAIT_ASSOC_MAX_MEM_PER_JOB             uint32 = 87
	WAIT_ASSOC_MAX_MEM_PER_NODE            uint32 = 88
	WAIT_ASSOC_MAX_MEM_MINS_PER_JOB        uint32 = 89
	WAIT_ASSOC_GRP_NODE_MIN                uint32 = 90
	WAIT_ASSOC_GRP_NODE_RUN_MIN            uint32 = 91
	WAIT_ASSOC_MAX_NODE_MINS_PER_JOB       uint32 = 92
	WAIT_ASSOC_GRP_ENERGY                  uint32 = 93
	WAIT_ASSOC_GRP_ENERGY_MIN              uint32 = 94
	WAIT_ASSOC_GRP_ENERGY_RUN_MIN          uint32 = 95
	WAIT_ASSOC_MAX_ENERGY_PER_JOB          uint32 = 96
	WAIT_ASSOC_MAX_ENERGY_PER_NODE         uint32 = 97
	WAIT_ASSOC_MAX_ENERGY_MINS_PER_JOB     uint32 = 98
	WAIT_ASSOC_GRP_GRES                    uint32 = 99
	WAIT_ASSOC_GRP_GRES_MIN                uint32 = 100
	WAIT_ASSOC_GRP_GRES_RUN_MIN            uint32 = 101
	WAIT_ASSOC_MAX_GRES_PER_JOB            uint32 = 102
	WAIT_ASSOC_MAX_GRES_PER_NODE           uint32 = 103
	WAIT_ASSOC_MAX_GRES_MINS_PER_JOB       uint32 = 104
	WAIT_ASSOC_GRP_LIC                     uint32 = 105
	WAIT_ASSOC_GRP_LIC_MIN                 uint32 = 106
	WAIT_ASSOC_GRP_LIC_RUN_MIN             uint32 = 107
	WAIT_ASSOC_MAX_LIC_PER_JOB             uint32 = 108
	WAIT_ASSOC_MAX_LIC_MINS_PER_JOB        uint32 = 109
	WAIT_ASSOC_GRP_BB                      uint32 = 110
	WAIT_ASSOC_GRP_BB_MIN                  uint32 = 111
	WAIT_ASSOC_GRP_BB_RUN_MIN              uint32 = 112
	WAIT_ASSOC_MAX_BB_PER_JOB              uint32 = 113
	WAIT_ASSOC_MAX_BB_PER_NODE             uint32 = 114
	WAIT_ASSOC_MAX_BB_MINS_PER_JOB         uint32 = 115
	WAIT_QOS_GRP_UNK                       uint32 = 116
	WAIT_QOS_GRP_UNK_MIN                   uint32 = 117
	WAIT_QOS_GRP_UNK_RUN_MIN               uint32 = 118
	WAIT_QOS_MAX_UNK_PER_JOB               uint32 = 119
	WAIT_QOS_MAX_UNK_PER_NODE              uint32 = 120
	WAIT_QOS_MAX_UNK_PER_USER              uint32 = 121
	WAIT_QOS_MAX_UNK_MINS_PER_JOB          uint32 = 122
	WAIT_QOS_MIN_UNK                       uint32 = 123
	WAIT_QOS_MAX_CPU_PER_NODE              uint32 = 124
	WAIT_QOS_GRP_MEM_MIN                   uint32 = 125
	WAIT_QOS_GRP_MEM_RUN_MIN               uint32 = 126
	WAIT_QOS_MAX_MEM_MINS_PER_JOB          uint32 = 127
	WAIT_QOS_MAX_MEM_PER_JOB               uint32 = 128
	WAIT_QOS_MAX_MEM_PER_NODE              uint32 = 129
	WAIT_QOS_MAX_MEM_PER_USER              uint32 = 130
	WAIT_QOS_MIN_MEM                       uint32 = 131
	WAIT_QOS_GRP_ENERGY                    uint32 = 132
	WAIT_QOS_GRP_ENERGY_MIN                uint32 = 133
	WAIT_QOS_GRP_ENERGY_RUN_MIN            uint32 = 134
	WAIT_QOS_MAX_ENERGY_PER_JOB            uint32 = 135
	WAIT_QOS_MAX_ENERGY_PER_NODE           uint32 = 136
	WAIT_QOS_MAX_ENERGY_PER_USER           uint32 = 137
	WAIT_QOS_MAX_ENERGY_MINS_PER_JOB       uint32 = 138
	WAIT_QOS_MIN_ENERGY                    uint32 = 139
	WAIT_QOS_GRP_NODE_MIN                  uint32 = 140
	WAIT_QOS_GRP_NODE_RUN_MIN              uint32 = 141
	WAIT_QOS_MAX_NODE_MINS_PER_JOB         uint32 = 142
	WAIT_QOS_MIN_NODE                      uint32 = 143
	WAIT_QOS_GRP_GRES                      uint32 = 144
	WAIT_QOS_GRP_GRES_MIN                  uint32 = 145
	WAIT_QOS_GRP_GRES_RUN_MIN              uint32 = 146
	WAIT_QOS_MAX_GRES_PER_JOB              uint32 = 147
	WAIT_QOS_MAX_GRES_PER_NODE             uint32 = 148
	WAIT_QOS_MAX_GRES_PER_USER             uint32 = 149
	WAIT_QOS_MAX_GRES_MINS_PER_JOB         uint32 = 150
	WAIT_QOS_MIN_GRES                      uint32 = 151
	WAIT_QOS_GRP_LIC                       uint32 = 152
	WAIT_QOS_GRP_LIC_MIN                   uint32 = 153
	WAIT_QOS_GRP_LIC_RUN_MIN               uint32 = 154
	WAIT_QOS_MAX_LIC_PER_JOB               uint32 = 155
	WAIT_QOS_MAX_LIC_PER_USER              uint32 = 156
	WAIT_QOS_MAX_LIC_MINS_PER_JOB          uint32 = 157
	WAIT_QOS_MIN_LIC                       uint32 = 158
	WAIT_QOS_GRP_BB                        uint32 = 159
	WAIT_QOS_GRP_BB_MIN                    uint32 = 160
	WAIT_QOS_GRP_BB_RUN_MIN                uint32 = 161
	WAIT_QOS_MAX_BB_PER_JOB                uint32 = 162
	WAIT_QOS_MAX_BB_PER_NODE               uint32 = 163
	WAIT_QOS_MAX_BB_PER_USER               uint32 = 164
	WAIT_QOS_MAX_BB_MINS_PER_JOB           uint32 = 165
	WAIT_QOS_MIN_BB                        uint32 = 166
	FAIL_DEADLINE                          uint32 = 167
	WAIT_QOS_MAX_BB_PER_ACCT               uint32 = 168
	WAIT_QOS_MAX_CPU_PER_ACCT              uint32 = 169
	WAIT_QOS_MAX_ENERGY_PER_ACCT           uint32 = 170
	WAIT_QOS_MAX_GRES_PER_ACCT             uint32 = 171
	WAIT_QOS_MAX_NODE_PER_ACCT             uint32 = 172
	WAIT_QOS_MAX_LIC_PER_ACCT              uint32 = 173
	WAIT_QOS_MAX_MEM_PER_ACCT              uint32 = 174
	WAIT_QOS_MAX_UNK_PER_ACCT              uint32 = 175
	WAIT_QOS_MAX_JOB_PER_ACCT              uint32 = 176
	WAIT_QOS_MAX_SUB_JOB_PER_ACCT          uint32 = 177
	WAIT_PART_CONFIG                       uint32 = 178
	WAIT_ACCOUNT_POLICY                    uint32 = 179
	WAIT_FED_JOB_LOCK                      uint32 = 180
	FAIL_OOM                               uint32 = 181
	WAIT_PN_MEM_LIMIT                      uint32 = 182
	WAIT_ASSOC_GRP_BILLING                 uint32 = 183
	WAIT_ASSOC_GRP_BILLING_MIN             uint32 = 184
	WAIT_ASSOC_GRP_BILLING_RUN_MIN         uint32 = 185
	WAIT_ASSOC_MAX_BILLING_PER_JOB         uint32 = 186
	WAIT_ASSOC_MAX_BILLING_PER_NODE        uint32 = 187
	WAIT_ASSOC_MAX_BILLING_MINS_PER_JOB    uint32 = 188
	WAIT_QOS_GRP_BILLING                   uint32 = 189
	WAIT_QOS_GRP_BILLING_MIN               uint32 = 190
	WAIT_QOS_GRP_BILLING_RUN_MIN           uint32 = 191
	WAIT_QOS_MAX_BILLING_PER_JOB           uint32 = 192
	WAIT_QOS_MAX_BILLING_PER_NODE          uint32 = 193
	WAIT_QOS_MAX_BILLING_PER_USER          uint32 = 194
	WAIT_QOS_MAX_BILLING_MINS_PER_JOB      uint32 = 195
	WAIT_QOS_MAX_BILLING_PER_ACCT          uint32 = 196
	WAIT_QOS_MIN_BILLING                   uint32 = 197
	WAIT_RESV_DELETED                      uint32 = 198
	WAIT_RESV_INVALID                      uint32 = 199 // 23.11+
	FAIL_CONSTRAINTS                       uint32 = 200 // 23.11+
	WAIT_QOS_MAX_BB_RUN_MINS_PER_ACCT      uint32 = 201 // 24.05+
	WAIT_QOS_MAX_BILLING_RUN_MINS_PER_ACCT uint32 = 202 // 24.05+
	WAIT_QOS_MAX_CPU_RUN_MINS_PER_ACCT     uint32 = 203 // 24.05+
	WAIT_QOS_MAX_ENERGY_RUN_MINS_PER_ACCT  uint32 = 204 // 24.05+
	WAIT_QOS_MAX_GRES_RUN_MINS_PER_ACCT    uint32 = 205 // 24.05+
	WAIT_QOS_MAX_NODE_RUN_MINS_PER_ACCT    uint32 = 206 // 24.05+
	WAIT_QOS_MAX_LIC_RUN_MINS_PER_ACCT     uint32 = 207 // 24.05+
	WAIT_QOS_MAX_MEM_RUN_MINS_PER_ACCT     uint32 = 208 // 24.05+
	WAIT_QOS_MAX_UNK_RUN_MINS_PER_ACCT     uint32 = 209 // 24.05+
	WAIT_QOS_MAX_BB_RUN_MINS_PER_USER      uint32 = 210 // 24.05+
	WAIT_QOS_MAX_BILLING_RUN_MINS_PER_USER uint32 = 211 // 24.05+
	WAIT_QOS_MAX_CPU_RUN_MINS_PER_USER     uint32 = 212 // 24.05+
	WAIT_QOS_MAX_ENERGY_RUN_MINS_PER_USER  uint32 = 213 // 24.05+
	WAIT_QOS_MAX_GRES_RUN_MINS_PER_USER    uint32 = 214 // 24.05+
	WAIT_QOS_MAX_NODE_RUN_MINS_PER_USER    uint32 = 215 // 24.05+
	WAIT_QOS_MAX_LIC_RUN_MINS_PER_USER     uint32 = 216 // 24.05+
	WAIT_QOS_MAX_MEM_RUN_MINS_PER_USER     uint32 = 217 // 24.05+
	WAIT_QOS_MAX_UNK_RUN_MINS_PER_USER     uint32 = 218 // 24.05+
	WAIT_MAX_POWERED_NODES                 uint32 = 219 // 24.05+
	WAIT_MPI_PORTS_BUSY                    uint32 = 220 // 24.05+
	REASON_END                             uint32 = 221 // 24.05+
)

// JobReasonString is what clients print for a state_reason (squeue's
// NODELIST(REASON) column, scontrol's Reason=), e.g. "JobHeldUser" for
// WAIT_HELD_USER, as job_state_reason_string() of the given version.
func JobReasonString(reason uint32, version uint16) string {
	switch {
	case reason == 17 && version <= V24_11:
		return "FrontEndDown"
	case reason == 17 && version == V25_05:
		return jobReasonInvalid(reason, version)
	case reason == 33 && version == V22_05:
		return "BlockMaxError"
	case reason == 34 && version == V22_05:
		return "BlockFreeAction"
	case (reason == 76 || reason == 77) && version <= V23_11:
		return [...]string{"PowerNotAvail", "PowerReserved"}[reason-76]
	case reason >= 199 && version <= V23_02,
		reason >= 201 && version <= V23_11:
		return jobReasonInvalid(reason, version)
	}
	if int(reason) < len(jobReasonStrings) && jobReasonStrings[reason] != "" {
		return jobReasonStrings[reason]
	}
	return jobReasonInvalid(reason, version)
}

// jobReasonInvalid: 24.05+ clients print "InvalidReason", older ones the
// number.
func jobReasonInvalid(reason uint32, version uint16) string {
	if version >= V24_05 {
		return "InvalidReason"
	}
	return jobReasonItoa(reason)
}

func jobReasonItoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// jobReasonStrings is the 26.05 table (src/common/job_state_reason.c).
var jobReasonStrings = [...]string{
	WAIT_NO_REASON:                         "None",
	WAIT_PRIORITY:                          "Priority",
	WAIT_DEPENDENCY:                        "Dependency",
	WAIT_RESOURCES:                         "Resources",
	WAIT_PART_NODE_LIMIT:                   "PartitionNodeLimit",
	WAIT_PART_TIME_LIMIT:                   "PartitionTimeLimit",
	WAIT_PART_DOWN:                         "PartitionDown",
	WAIT_PART_INACTIVE:                     "PartitionInactive",
	WAIT_HELD:                              "JobHeldAdmin",
	WAIT_TIME:                              "BeginTime",
	WAIT_LICENSES:                          "Licenses",
	WAIT_ASSOC_JOB_LIMIT:                   "AssociationJobLimit",
	WAIT_ASSOC_RESOURCE_LIMIT:              "AssociationResourceLimit",
	WAIT_ASSOC_TIME_LIMIT:                  "AssociationTimeLimit",
	WAIT_RESERVATION:                       "Reservation",
	WAIT_NODE_NOT_AVAIL:                    "ReqNodeNotAvail",
	WAIT_HELD_USER:                         "JobHeldUser",
	WAIT_NVIDIA_IMEX_CHANNELS:              "NvidiaImexChannels",
	FAIL_DEFER:                             "SchedDefer",
	FAIL_DOWN_PARTITION:                    "PartitionDown",
	FAIL_DOWN_NODE:                         "NodeDown",
	FAIL_BAD_CONSTRAINTS:                   "BadConstraints",
	FAIL_SYSTEM:                            "SystemFailure",
	FAIL_LAUNCH:                            "JobLaunchFailure",
	FAIL_EXIT_CODE:                         "NonZeroExitCode",
	FAIL_TIMEOUT:                           "TimeLimit",
	FAIL_INACTIVE_LIMIT:                    "InactiveLimit",
	FAIL_ACCOUNT:                           "InvalidAccount",
	FAIL_QOS:                               "InvalidQOS",
	WAIT_QOS_THRES:                         "QOSUsageThreshold",
	WAIT_QOS_JOB_LIMIT:                     "QOSJobLimit",
	WAIT_QOS_RESOURCE_LIMIT:                "QOSResourceLimit",
	WAIT_QOS_TIME_LIMIT:                    "QOSTimeLimit",
	FAIL_SIGNAL:                            "RaisedSignal",
	WAIT_CLEANING:                          "Cleaning",
	WAIT_PROLOG:                            "Prolog",
	WAIT_QOS:                               "QOSNotAllowed",
	WAIT_ACCOUNT:                           "AccountNotAllowed",
	WAIT_DEP_INVALID:                       "DependencyNeverSatisfied",
	WAIT_QOS_GRP_CPU:                       "QOSGrpCpuLimit",
	WAIT_QOS_GRP_CPU_MIN:                   "QOSGrpCPUMinutesLimit",
	WAIT_QOS_GRP_CPU_RUN_MIN:               "QOSGrpCPURunMinutesLimit",
	WAIT_QOS_GRP_JOB:                       "QOSGrpJobsLimit",
	WAIT_QOS_GRP_MEM:                       "QOSGrpMemLimit",
	WAIT_QOS_GRP_NODE:                      "QOSGrpNodeLimit",
	WAIT_QOS_GRP_SUB_JOB:                   "QOSGrpSubmitJobsLimit",
	WAIT_QOS_GRP_WALL:                      "QOSGrpWallLimit",
	WAIT_QOS_MAX_CPU_PER_JOB:               "QOSMaxCpuPerJobLimit",
	WAIT_QOS_MAX_CPU_MINS_PER_JOB:          "QOSMaxCpuMinutesPerJobLimit",
	WAIT_QOS_MAX_NODE_PER_JOB:              "QOSMaxNodePerJobLimit",
	WAIT_QOS_MAX_WALL_PER_JOB:              "QOSMaxWallDurationPerJobLimit",
	WAIT_QOS_MAX_CPU_PER_USER:              "QOSMaxCpuPerUserLimit",
	WAIT_QOS_MAX_JOB_PER_USER:              "QOSMaxJobsPerUserLimit",
	WAIT_QOS_MAX_NODE_PER_USER:             "QOSMaxNodePerUserLimit",
	WAIT_QOS_MAX_SUB_JOB:                   "QOSMaxSubmitJobPerUserLimit",
	WAIT_QOS_MIN_CPU:                       "QOSMinCpuNotSatisfied",
	WAIT_ASSOC_GRP_CPU:                     "AssocGrpCpuLimit",
	WAIT_ASSOC_GRP_CPU_MIN:                 "AssocGrpCPUMinutesLimit",
	WAIT_ASSOC_GRP_CPU_RUN_MIN:             "AssocGrpCPURunMinutesLimit",
	WAIT_ASSOC_GRP_JOB:                     "AssocGrpJobsLimit",
	WAIT_ASSOC_GRP_MEM:                     "AssocGrpMemLimit",
	WAIT_ASSOC_GRP_NODE:                    "AssocGrpNodeLimit",
	WAIT_ASSOC_GRP_SUB_JOB:                 "AssocGrpSubmitJobsLimit",
	WAIT_ASSOC_GRP_WALL:                    "AssocGrpWallLimit",
	WAIT_ASSOC_MAX_JOBS:                    "AssocMaxJobsLimit",
	WAIT_ASSOC_MAX_CPU_PER_JOB:             "AssocMaxCpuPerJobLimit",
	WAIT_ASSOC_MAX_CPU_MINS_PER_JOB:        "AssocMaxCpuMinutesPerJobLimit",
	WAIT_ASSOC_MAX_NODE_PER_JOB:            "AssocMaxNodePerJobLimit",
	WAIT_ASSOC_MAX_WALL_PER_JOB:            "AssocMaxWallDurationPerJobLimit",
	WAIT_ASSOC_MAX_SUB_JOB:                 "AssocMaxSubmitJobLimit",
	WAIT_MAX_REQUEUE:                       "JobHoldMaxRequeue",
	WAIT_ARRAY_TASK_LIMIT:                  "JobArrayTaskLimit",
	WAIT_BURST_BUFFER_RESOURCE:             "BurstBufferResources",
	WAIT_BURST_BUFFER_STAGING:              "BurstBufferStageIn",
	FAIL_BURST_BUFFER_OP:                   "BurstBufferOperation",
	WAIT_ASSOC_GRP_UNK:                     "AssocGrpUnknown",
	WAIT_ASSOC_GRP_UNK_MIN:                 "AssocGrpUnknownMinutes",
	WAIT_ASSOC_GRP_UNK_RUN_MIN:             "AssocGrpUnknownRunMinutes",
	WAIT_ASSOC_MAX_UNK_PER_JOB:             "AssocMaxUnknownPerJob",
	WAIT_ASSOC_MAX_UNK_PER_NODE:            "AssocMaxUnknownPerNode",
	WAIT_ASSOC_MAX_UNK_MINS_PER_JOB:        "AssocMaxUnknownMinutesPerJob",
	WAIT_ASSOC_MAX_CPU_PER_NODE:            "AssocMaxCpuPerNode",
	WAIT_ASSOC_GRP_MEM_MIN:                 "AssocGrpMemMinutes",
	WAIT_ASSOC_GRP_MEM_RUN_MIN:             "AssocGrpMemRunMinutes",
	WAIT_ASSOC_MAX_MEM_PER_JOB:             "AssocMaxMemPerJob",
	WAIT_ASSOC_MAX_MEM_PER_NODE:            "AssocMaxMemPerNode",
	WAIT_ASSOC_MAX_MEM_MINS_PER_JOB:        "AssocMaxMemMinutesPerJob",
	WAIT_ASSOC_GRP_NODE_MIN:                "AssocGrpNodeMinutes",
	WAIT_ASSOC_GRP_NODE_RUN_MIN:            "AssocGrpNodeRunMinutes",
	WAIT_ASSOC_MAX_NODE_MINS_PER_JOB:       "AssocMaxNodeMinutesPerJob",
	WAIT_ASSOC_GRP_ENERGY:                  "AssocGrpEnergy",
	WAIT_ASSOC_GRP_ENERGY_MIN:              "AssocGrpEnergyMinutes",
	WAIT_ASSOC_GRP_ENERGY_RUN_MIN:          "AssocGrpEnergyRunMinutes",
	WAIT_ASSOC_MAX_ENERGY_PER_JOB:          "AssocMaxEnergyPerJob",
	WAIT_ASSOC_MAX_ENERGY_PER_NODE:         "AssocMaxEnergyPerNode",
	WAIT_ASSOC_MAX_ENERGY_MINS_PER_JOB:     "AssocMaxEnergyMinutesPerJob",
	WAIT_ASSOC_GRP_GRES:                    "AssocGrpGRES",
	WAIT_ASSOC_GRP_GRES_MIN:                "AssocGrpGRESMinutes",
	WAIT_ASSOC_GRP_GRES_RUN_MIN:            "AssocGrpGRESRunMinutes",
	WAIT_ASSOC_MAX_GRES_PER_JOB:            "AssocMaxGRESPerJob",
	WAIT_ASSOC_MAX_GRES_PER_NODE:           "AssocMaxGRESPerNode",
	WAIT_ASSOC_MAX_GRES_MINS_PER_JOB:       "AssocMaxGRESMinutesPerJob",
	WAIT_ASSOC_GRP_LIC:                     "AssocGrpLicense",
	WAIT_ASSOC_GRP_LIC_MIN:                 "AssocGrpLicenseMinutes",
	WAIT_ASSOC_GRP_LIC_RUN_MIN:             "AssocGrpLicenseRunMinutes",
	WAIT_ASSOC_MAX_LIC_PER_JOB:             "AssocMaxLicensePerJob",
	WAIT_ASSOC_MAX_LIC_MINS_PER_JOB:        "AssocMaxLicenseMinutesPerJob",
	WAIT_ASSOC_GRP_BB:                      "AssocGrpBB",
	WAIT_ASSOC_GRP_BB_MIN:                  "AssocGrpBBMinutes",
	WAIT_ASSOC_GRP_BB_RUN_MIN:              "AssocGrpBBRunMinutes",
	WAIT_ASSOC_MAX_BB_PER_JOB:              "AssocMaxBBPerJob",
	WAIT_ASSOC_MAX_BB_PER_NODE:             "AssocMaxBBPerNode",
	WAIT_ASSOC_MAX_BB_MINS_PER_JOB:         "AssocMaxBBMinutesPerJob",
	WAIT_QOS_GRP_UNK:                       "QOSGrpUnknown",
	WAIT_QOS_GRP_UNK_MIN:                   "QOSGrpUnknownMinutes",
	WAIT_QOS_GRP_UNK_RUN_MIN:               "QOSGrpUnknownRunMinutes",
	WAIT_QOS_MAX_UNK_PER_JOB:               "QOSMaxUnknownPerJob",
	WAIT_QOS_MAX_UNK_PER_NODE:              "QOSMaxUnknownPerNode",
	WAIT_QOS_MAX_UNK_PER_USER:              "QOSMaxUnknownPerUser",
	WAIT_QOS_MAX_UNK_MINS_PER_JOB:          "QOSMaxUnknownMinutesPerJob",
	WAIT_QOS_MIN_UNK:                       "QOSMinUnknown",
	WAIT_QOS_MAX_CPU_PER_NODE:              "QOSMaxCpuPerNode",
	WAIT_QOS_GRP_MEM_MIN:                   "QOSGrpMemoryMinutes",
	WAIT_QOS_GRP_MEM_RUN_MIN:               "QOSGrpMemoryRunMinutes",
	WAIT_QOS_MAX_MEM_MINS_PER_JOB:          "QOSMaxMemoryMinutesPerJob",
	WAIT_QOS_MAX_MEM_PER_JOB:               "QOSMaxMemoryPerJob",
	WAIT_QOS_MAX_MEM_PER_NODE:              "QOSMaxMemoryPerNode",
	WAIT_QOS_MAX_MEM_PER_USER:              "QOSMaxMemoryPerUser",
	WAIT_QOS_MIN_MEM:                       "QOSMinMemory",
	WAIT_QOS_GRP_ENERGY:                    "QOSGrpEnergy",
	WAIT_QOS_GRP_ENERGY_MIN:                "QOSGrpEnergyMinutes",
	WAIT_QOS_GRP_ENERGY_RUN_MIN:            "QOSGrpEnergyRunMinutes",
	WAIT_QOS_MAX_ENERGY_PER_JOB:            "QOSMaxEnergyPerJob",
	WAIT_QOS_MAX_ENERGY_PER_NODE:           "QOSMaxEnergyPerNode",
	WAIT_QOS_MAX_ENERGY_PER_USER:           "QOSMaxEnergyPerUser",
	WAIT_QOS_MAX_ENERGY_MINS_PER_JOB:       "QOSMaxEnergyMinutesPerJob",
	WAIT_QOS_MIN_ENERGY:                    "QOSMinEnergy",
	WAIT_QOS_GRP_NODE_MIN:                  "QOSGrpNodeMinutes",
	WAIT_QOS_GRP_NODE_RUN_MIN:              "QOSGrpNodeRunMinutes",
	WAIT_QOS_MAX_NODE_MINS_PER_JOB:         "QOSMaxNodeMinutesPerJob",
	WAIT_QOS_MIN_NODE:                      "QOSMinNode",
	WAIT_QOS_GRP_GRES:                      "QOSGrpGRES",
	WAIT_QOS_GRP_GRES_MIN:                  "QOSGrpGRESMinutes",
	WAIT_QOS_GRP_GRES_RUN_MIN:              "QOSGrpGRESRunMinutes",
	WAIT_QOS_MAX_GRES_PER_JOB:              "QOSMaxGRESPerJob",
	WAIT_QOS_MAX_GRES_PER_NODE:             "QOSMaxGRESPerNode",
	WAIT_QOS_MAX_GRES_PER_USER:             "QOSMaxGRESPerUser",
	WAIT_QOS_MAX_GRES_MINS_PER_JOB:         "QOSMaxGRESMinutesPerJob",
	WAIT_QOS_MIN_GRES:                      "QOSMinGRES",
	WAIT_QOS_GRP_LIC:                       "QOSGrpLicense",
	WAIT_QOS_GRP_LIC_MIN:                   "QOSGrpLicenseMinutes",
	WAIT_QOS_GRP_LIC_RUN_MIN:               "QOSGrpLicenseRunMinutes",
	WAIT_QOS_MAX_LIC_PER_JOB:               "QOSMaxLicensePerJob",
	WAIT_QOS_MAX_LIC_PER_USER:              "QOSMaxLicensePerUser",
	WAIT_QOS_MAX_LIC_MINS_PER_JOB:          "QOSMaxLicenseMinutesPerJob",
	WAIT_QOS_MIN_LIC:                       "QOSMinLicense",
	WAIT_QOS_GRP_BB:                        "QOSGrpBB",
	WAIT_QOS_GRP_BB_MIN:                    "QOSGrpBBMinutes",
	WAIT_QOS_GRP_BB_RUN_MIN:                "QOSGrpBBRunMinutes",
	WAIT_QOS_MAX_BB_PER_JOB:                "QOSMaxBBPerJob",
	WAIT_QOS_MAX_BB_PER_NODE:               "QOSMaxBBPerNode",
	WAIT_QOS_MAX_BB_PER_USER:               "QOSMaxBBPerUser",
	WAIT_QOS_MAX_BB_MINS_PER_JOB:           "AssocMaxBBMinutesPerJob",
	WAIT_QOS_MIN_BB:                        "QOSMinBB",
	FAIL_DEADLINE:                          "DeadLine",
	WAIT_QOS_MAX_BB_PER_ACCT:               "MaxBBPerAccount",
	WAIT_QOS_MAX_CPU_PER_ACCT:              "MaxCpuPerAccount",
	WAIT_QOS_MAX_ENERGY_PER_ACCT:           "MaxEnergyPerAccount",
	WAIT_QOS_MAX_GRES_PER_ACCT:             "MaxGRESPerAccount",
	WAIT_QOS_MAX_NODE_PER_ACCT:             "MaxNodePerAccount",
	WAIT_QOS_MAX_LIC_PER_ACCT:              "MaxLicensePerAccount",
	WAIT_QOS_MAX_MEM_PER_ACCT:              "MaxMemoryPerAccount",
	WAIT_QOS_MAX_UNK_PER_ACCT:              "MaxUnknownPerAccount",
	WAIT_QOS_MAX_JOB_PER_ACCT:              "MaxJobsPerAccount",
	WAIT_QOS_MAX_SUB_JOB_PER_ACCT:          "MaxSubmitJobsPerAccount",
	WAIT_PART_CONFIG:                       "PartitionConfig",
	WAIT_ACCOUNT_POLICY:                    "AccountingPolicy",
	WAIT_FED_JOB_LOCK:                      "FedJobLock",
	FAIL_OOM:                               "OutOfMemory",
	WAIT_PN_MEM_LIMIT:                      "MaxMemPerLimit",
	WAIT_ASSOC_GRP_BILLING:                 "AssocGrpBilling",
	WAIT_ASSOC_GRP_BILLING_MIN:             "AssocGrpBillingMinutes",
	WAIT_ASSOC_GRP_BILLING_RUN_MIN:         "AssocGrpBillingRunMinutes",
	WAIT_ASSOC_MAX_BILLING_PER_JOB:         "AssocMaxBillingPerJob",
	WAIT_ASSOC_MAX_BILLING_PER_NODE:        "AssocMaxBillingPerNode",
	WAIT_ASSOC_MAX_BILLING_MINS_PER_JOB:    "AssocMaxBillingMinutesPerJob",
	WAIT_QOS_GRP_BILLING:                   "QOSGrpBilling",
	WAIT_QOS_GRP_BILLING_MIN:               "QOSGrpBillingMinutes",
	WAIT_QOS_GRP_BILLING_RUN_MIN:           "QOSGrpBillingRunMinutes",
	WAIT_QOS_MAX_BILLING_PER_JOB:           "QOSMaxBillingPerJob",
	WAIT_QOS_MAX_BILLING_PER_NODE:          "QOSMaxBillingPerNode",
	WAIT_QOS_MAX_BILLING_PER_USER:          "QOSMaxBillingPerUser",
	WAIT_QOS_MAX_BILLING_MINS_PER_JOB:      "QOSMaxBillingMinutesPerJob",
	WAIT_QOS_MAX_BILLING_PER_ACCT:          "MaxBillingPerAccount",
	WAIT_QOS_MIN_BILLING:                   "QOSMinBilling",
	WAIT_RESV_DELETED:                      "ReservationDeleted",
	WAIT_RESV_INVALID:                      "ReservationInvalid",
	FAIL_CONSTRAINTS:                       "Constraints",
	WAIT_QOS_MAX_BB_RUN_MINS_PER_ACCT:      "MaxBBRunMinsPerAccount",
	WAIT_QOS_MAX_BILLING_RUN_MINS_PER_ACCT: "MaxBillingRunMinsPerAccount",
	WAIT_QOS_MAX_CPU_RUN_MINS_PER_ACCT:     "MaxCpuRunMinsPerAccount",
	WAIT_QOS_MAX_ENERGY_RUN_MINS_PER_ACCT:  "MaxEnergyRunMinsPerAccount",
	WAIT_QOS_MAX_GRES_RUN_MINS_PER_ACCT:    "MaxGRESRunMinsPerAccount",
	WAIT_QOS_MAX_NODE_RUN_MINS_PER_ACCT:    "MaxNodeRunMinsPerAccount",
	WAIT_QOS_MAX_LIC_RUN_MINS_PER_ACCT:     "MaxLicenseRunMinsPerAccount",
	WAIT_QOS_MAX_MEM_RUN_MINS_PER_ACCT:     "MaxMemoryRunMinsPerAccount",
	WAIT_QOS_MAX_UNK_RUN_MINS_PER_ACCT:     "MaxUnknownRunMinsPerAccount",
	WAIT_QOS_MAX_BB_RUN_MINS_PER_USER:      "MaxBBRunMinsPerUser",
	WAIT_QOS_MAX_BILLING_RUN_MINS_PER_USER: "MaxBillingRunMinsPerUser",
	WAIT_QOS_MAX_CPU_RUN_MINS_PER_USER:     "MaxCpuRunMinsPerUser",
	WAIT_QOS_MAX_ENERGY_RUN_MINS_PER_USER:  "MaxEnergyRunMinsPerUser",
	WAIT_QOS_MAX_GRES_RUN_MINS_PER_USER:    "MaxGRESRunMinsPerUser",
	WAIT_QOS_MAX_NODE_RUN_MINS_PER_USER:    "MaxNodeRunMinsPerUser",
	WAIT_QOS_MAX_LIC_RUN_MINS_PER_USER:     "MaxLicenseRunMinsPerUser",
	WAIT_QOS_MAX_MEM_RUN_MINS_PER_USER:     "MaxMemoryRunMinsPerUser",
	WAIT_QOS_MAX_UNK_RUN_MINS_PER_USER:     "MaxUnknownRunMinsPerUser",
	WAIT_MAX_POWERED_NODES:                 "MaxPoweredUpNodes",
	WAIT_MPI_PORTS_BUSY:                    "MpiPortsBusy",
}
