package codec

import (
	"errors"
	"fmt"
)

// Slurm return codes (slurm/slurm_errno.h) that this server sends or reads.
const (
	SLURM_SUCCESS                         = 0
	SLURM_ERROR                           = 0xFFFFFFFF // -1
	EAGAIN                                = 11
	EACCES                                = 13
	EINVAL                                = 22
	SLURM_UNEXPECTED_MSG_ERROR            = 1000
	SLURM_COMMUNICATIONS_CONNECTION_ERROR = 1001
	SLURM_PROTOCOL_VERSION_ERROR          = 1005
	SLURM_PROTOCOL_AUTHENTICATION_ERROR   = 1007
	SLURM_PROTOCOL_INSANE_MSG_LENGTH      = 1008
	SLURMCTLD_COMMUNICATIONS_BACKOFF      = 1804
	SLURM_NO_CHANGE_IN_DATA               = 1900
	ESLURM_INVALID_PARTITION_NAME         = 2000
	ESLURM_DEFAULT_PARTITION_NOT_SET      = 2001
	ESLURM_ACCESS_DENIED                  = 2002
	ESLURM_REQUESTED_NODES_NOT_IN_PART    = 2004
	ESLURM_TOO_MANY_REQUESTED_CPUS        = 2005
	ESLURM_INVALID_NODE_COUNT             = 2006
	ESLURM_ERROR_ON_DESC_TO_RECORD_COPY   = 2007
	ESLURM_JOB_SCRIPT_MISSING             = 2009
	ESLURM_USER_ID_MISSING                = 2010
	ESLURM_PATHNAME_TOO_LONG              = 2012
	ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL  = 2014
	ESLURM_REQUESTED_PART_CONFIG_UNAVAIL  = 2015
	ESLURM_INVALID_JOB_ID                 = 2017
	ESLURM_INVALID_NODE_NAME              = 2018
	ESLURM_WRITING_TO_FILE                = 2019
	ESLURM_ALREADY_DONE                   = 2021
	ESLURM_INVALID_NODE_STATE             = 2028
	ESLURM_JOB_PENDING                    = 2024
	ESLURM_BAD_TASK_COUNT                 = 2025
	ESLURM_NOT_SUPPORTED                  = 2036
	ESLURM_DISABLED                       = 2037
	ESLURM_DUPLICATE_STEP_ID              = 2110
	ESLURM_DEPENDENCY                     = 2038
	ESLURM_BATCH_ONLY                     = 2039
	ESLURM_INVALID_TASK_MEMORY            = 2044
	ESLURM_INVALID_ACCOUNT                = 2045
	ESLURM_ACCOUNTING_POLICY              = 2050
	ESLURM_INVALID_LICENSES               = 2048
	ESLURM_RESERVATION_INVALID            = 2053
	ESLURM_INVALID_FEATURE                = 2029
	ESLURM_INVALID_BURST_BUFFER_REQUEST   = 2094
	ESLURM_PRIO_RESET_FAIL                = 2095
	ESLURM_INVALID_TIME_LIMIT             = 2051
	ESLURM_INVALID_TIME_VALUE             = 2054
	ESLURM_INVALID_QOS                    = 2066
	ESLURM_INVALID_CPU_COUNT              = 2069
	ESLURM_INVALID_GRES                   = 2072
	ESLURM_JOB_NOT_PENDING                = 2073
	ESLURM_NODES_BUSY                     = 2016
	ESLURM_CAN_NOT_START_IMMEDIATELY      = 2078
	ESLURM_INVALID_ARRAY                  = 2081
	ESLURM_JOB_STARTED                    = 2083
	ESLURM_JOB_FINISHED                   = 2084
	ESLURM_JOB_NOT_RUNNING                = 2085
	ESLURM_INTERNAL                       = 2090
	ESLURM_GROUP_ID_MISSING               = 2113
	ESLURM_INVALID_NICE                   = 2123
	ESLURM_CONFIGLESS_DISABLED            = 2126
	ESLURM_ENVIRONMENT_MISSING            = 2127
	ESLURM_PROTOCOL_INCOMPLETE_PACKET     = 5003
	ESLURM_AUTH_CRED_INVALID              = 6000
	ESLURM_AUTH_EXPIRED                   = 6001
	ESLURM_AUTH_UNPACK                    = 6007
	ESLURM_CONTAINER_NOT_CONFIGURED       = 10000
)

// Error is an error that becomes a Slurm return code on the wire.
type Error struct {
	Code uint32 // the Slurm/errno code sent in RESPONSE_SLURM_RC
	Msg  string // for logs; never sent (except in RESPONSE_SLURM_RC_MSG)
}

func (e *Error) Error() string { return fmt.Sprintf("slurm rc %d: %s", e.Code, e.Msg) }

// Errorf builds an *Error carrying code.
func Errorf(code uint32, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Preallocated errors for the decode hot path (no allocation on failure).
var (
	ErrShort    = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "buffer too short"}
	ErrBadCount = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "count exceeds remaining bytes"}
	ErrNoNUL    = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "string not NUL-terminated"}
	ErrVersion  = &Error{Code: SLURM_PROTOCOL_VERSION_ERROR, Msg: "unsupported protocol version"}
	ErrTooLarge = &Error{Code: SLURM_PROTOCOL_INSANE_MSG_LENGTH, Msg: "message too large"}
	ErrTrailing = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "trailing bytes after body"}
)

// CodeOf extracts the Slurm code from err (SLURM_ERROR if it carries none).
func CodeOf(err error) uint32 {
	if err == nil {
		return SLURM_SUCCESS
	}
	if e, ok := err.(*Error); ok {
		return e.Code
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return SLURM_ERROR
}
