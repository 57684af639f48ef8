package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Job records are stored in a compact binary form:
//
//	byte 0      format (jobRecV1)
//	then        every field of Job in declaration order: unsigned
//	            integers as uvarints, signed ones as (zig-zag) varints,
//	            strings as a uvarint length and the bytes, and the
//	            bools together as one uvarint bitset (jobRecBool*) at the
//	            place of the first of them (KillInvalidDep). A bool added
//	            is a bit more: older records read with it clear.
//
// The record must end exactly after the last field. A change to the
// field list needs a new format byte (and the old one kept readable).
// Records written by older versions are JSON objects; they start with
// '{' and are still read as JSON.
const (
	jobRecV1 byte = 1
	jobRecV2 byte = 2 // V1 + AccrueTime at the end
	jobRecV3 byte = 3 // V2 + Origin, RespHost, AllocPort, OtherPort at the end
)

// Bits of the bool bitset.
const (
	jobRecBoolKillInvalidDep = 1 << iota
	jobRecBoolWarnBatchOnly
	jobRecBoolRequeue
	jobRecBoolExclusive
	jobRecBoolContiguous
	jobRecBoolNoRequeue
	jobRecBoolPrioSet
	jobRecBoolAll = 1<<iota - 1
)

var errJobRecShort = errors.New("job record: truncated")

// appendJobRecord appends the binary record of j to b.
func appendJobRecord(b []byte, j *Job) []byte {
	u := binary.AppendUvarint
	v := binary.AppendVarint
	s := func(b []byte, x string) []byte {
		return append(binary.AppendUvarint(b, uint64(len(x))), x...)
	}
	b = append(b, jobRecV3)
	b = u(b, uint64(j.ID))
	b = u(b, uint64(j.ArrayJobID))
	b = u(b, uint64(j.ArrayTaskID))
	b = s(b, j.ArrayTasks)
	b = u(b, uint64(j.ArrayMax))
	b = s(b, j.ArraySpec)

	b = s(b, j.Name)
	b = u(b, uint64(j.UserID))
	b = u(b, uint64(j.GroupID))
	b = s(b, j.UserName)
	b = s(b, j.Partition)
	b = s(b, j.Account)
	b = s(b, j.QOS)
	b = s(b, j.Comment)
	b = s(b, j.WorkDir)
	b = s(b, j.StdIn)
	b = s(b, j.StdOut)
	b = s(b, j.StdErr)
	b = s(b, j.Container)
	b = s(b, j.AllocNode)
	b = u(b, uint64(j.AllocSID))
	b = s(b, j.SubmitLine)
	b = u(b, j.DescFlags)

	var bits uint64
	if j.KillInvalidDep {
		bits |= jobRecBoolKillInvalidDep
	}
	if j.WarnBatchOnly {
		bits |= jobRecBoolWarnBatchOnly
	}
	if j.Requeue {
		bits |= jobRecBoolRequeue
	}
	if j.Exclusive {
		bits |= jobRecBoolExclusive
	}
	if j.Contiguous {
		bits |= jobRecBoolContiguous
	}
	if j.NoRequeue {
		bits |= jobRecBoolNoRequeue
	}
	if j.PrioSet {
		bits |= jobRecBoolPrioSet
	}
	b = u(b, bits)
	b = u(b, uint64(j.Restarts))
	b = u(b, uint64(j.WarnSignal))
	b = u(b, uint64(j.WarnTime))
	b = s(b, j.Command)

	b = v(b, j.SubmitTime)
	b = v(b, j.EligibleTime)
	b = v(b, j.BeginTime)
	b = v(b, j.StartTime)
	b = v(b, j.EndTime)
	b = v(b, j.Deadline)

	b = u(b, uint64(j.TimeLimit))
	b = u(b, uint64(j.TimeMin))

	b = u(b, uint64(j.State))
	b = u(b, uint64(j.Reason))
	b = u(b, uint64(j.Priority))
	b = v(b, int64(j.Nice))
	b = u(b, uint64(j.HeldBy))

	b = u(b, uint64(j.MinNodes))
	b = u(b, uint64(j.MaxNodes))
	b = u(b, uint64(j.NumTasks))
	b = u(b, uint64(j.TasksPerNode))
	b = u(b, uint64(j.CPUsPerTask))
	b = u(b, uint64(j.MinCPUs))
	b = u(b, j.MemPerNodeMB)
	b = u(b, j.MemPerCPUMB)
	b = s(b, j.TresPerNode)
	b = s(b, j.TresPerJob)
	b = s(b, j.TresPerTask)
	b = s(b, j.ReqNodes)
	b = s(b, j.ExcNodes)
	b = s(b, j.Features)
	b = s(b, j.Dependency)
	b = u(b, uint64(j.OpenMode))
	b = u(b, uint64(j.MailType))
	b = s(b, j.MailUser)
	b = u(b, uint64(j.ExitCode))
	b = s(b, j.Nodes)
	b = s(b, j.BatchHost)
	b = s(b, j.SessionID)
	b = u(b, uint64(j.ProtoVersion))
	b = s(b, j.TresReqStr)
	b = s(b, j.TresAllocStr)
	b = s(b, j.Network)
	b = v(b, j.LastSchedEval)
	b = v(b, j.AccrueTime) // format 2
	b = s(b, j.Origin)     // format 3
	b = s(b, j.RespHost)
	b = u(b, uint64(j.AllocPort))
	b = u(b, uint64(j.OtherPort))
	return b
}

// decodeJobRecord fills *j (overwriting every field) from a stored
// record, binary or legacy JSON. For binary records it allocates only
// the strings; in, if not nil, shares equal strings of fields that tend
// to repeat across jobs (user, partition, paths, TRES strings).
func decodeJobRecord(b []byte, j *Job, in *interner) error {
	if len(b) == 0 {
		return errors.New("job record: empty")
	}
	switch b[0] {
	case '{':
		*j = Job{}
		return json.Unmarshal(b, j)
	case jobRecV1, jobRecV2, jobRecV3:
		d := jobDec{b: b[1:], in: in}
		d.v1(j)
		j.AccrueTime, j.Origin, j.RespHost, j.AllocPort, j.OtherPort = 0, "", "", 0, 0
		if b[0] >= jobRecV2 {
			j.AccrueTime = d.i64()
		}
		if b[0] >= jobRecV3 {
			j.Origin = d.common()
			j.RespHost = d.common()
			j.AllocPort = d.u16()
			j.OtherPort = d.u16()
		}
		if d.err != nil {
			return d.err
		}
		if len(d.b) != 0 {
			return fmt.Errorf("job record: %d trailing bytes", len(d.b))
		}
		return nil
	default:
		return fmt.Errorf("job record: unknown format %#x", b[0])
	}
}

type jobDec struct {
	b   []byte
	err error
	in  *interner
}

func (d *jobDec) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *jobDec) u(max uint64) uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errJobRecShort)
		return 0
	}
	d.b = d.b[n:]
	if x > max {
		d.fail(fmt.Errorf("job record: value %d out of range", x))
		return 0
	}
	return x
}

func (d *jobDec) u8() uint8   { return uint8(d.u(math.MaxUint8)) }
func (d *jobDec) u16() uint16 { return uint16(d.u(math.MaxUint16)) }
func (d *jobDec) u32() uint32 { return uint32(d.u(math.MaxUint32)) }
func (d *jobDec) u64() uint64 { return d.u(math.MaxUint64) }

func (d *jobDec) i64() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errJobRecShort)
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *jobDec) i32() int32 {
	x := d.i64()
	if x < math.MinInt32 || x > math.MaxInt32 {
		d.fail(fmt.Errorf("job record: value %d out of range", x))
		return 0
	}
	return int32(x)
}

// raw returns the bytes of the next string without copying them. The
// length is checked against what is left before anything is allocated,
// so a record can never make the decoder allocate more than its size.
func (d *jobDec) raw() []byte {
	l, n := binary.Uvarint(d.b)
	if n <= 0 || l > uint64(len(d.b)-n) {
		d.fail(errJobRecShort)
		return nil
	}
	s := d.b[n : n+int(l)]
	d.b = d.b[n+int(l):]
	return s
}

// str decodes a string field whose values are mostly unique.
func (d *jobDec) str() string {
	r := d.raw()
	if len(r) == 0 {
		return ""
	}
	return string(r)
}

// common decodes a string field whose values tend to repeat.
func (d *jobDec) common() string {
	r := d.raw()
	if len(r) == 0 {
		return ""
	}
	if d.in != nil {
		return d.in.intern(r)
	}
	return string(r)
}

func (d *jobDec) v1(j *Job) {
	j.ID = d.u32()
	j.ArrayJobID = d.u32()
	j.ArrayTaskID = d.u32()
	j.ArrayTasks = d.str()
	j.ArrayMax = d.u32()
	j.ArraySpec = d.common()

	j.Name = d.str()
	j.UserID = d.u32()
	j.GroupID = d.u32()
	j.UserName = d.common()
	j.Partition = d.common()
	j.Account = d.common()
	j.QOS = d.common()
	j.Comment = d.str()
	j.WorkDir = d.common()
	j.StdIn = d.common()
	j.StdOut = d.common()
	j.StdErr = d.common()
	j.Container = d.common()
	j.AllocNode = d.common()
	j.AllocSID = d.u32()
	j.SubmitLine = d.str()
	j.DescFlags = d.u64()

	bits := d.u(jobRecBoolAll)
	j.KillInvalidDep = bits&jobRecBoolKillInvalidDep != 0
	j.WarnBatchOnly = bits&jobRecBoolWarnBatchOnly != 0
	j.Requeue = bits&jobRecBoolRequeue != 0
	j.Exclusive = bits&jobRecBoolExclusive != 0
	j.Contiguous = bits&jobRecBoolContiguous != 0
	j.NoRequeue = bits&jobRecBoolNoRequeue != 0
	j.PrioSet = bits&jobRecBoolPrioSet != 0
	j.Restarts = d.u16()
	j.WarnSignal = d.u16()
	j.WarnTime = d.u16()
	j.Command = d.common()

	j.SubmitTime = d.i64()
	j.EligibleTime = d.i64()
	j.BeginTime = d.i64()
	j.StartTime = d.i64()
	j.EndTime = d.i64()
	j.Deadline = d.i64()

	j.TimeLimit = d.u32()
	j.TimeMin = d.u32()

	j.State = d.u32()
	j.Reason = d.u32()
	j.Priority = d.u32()
	j.Nice = d.i32()
	j.HeldBy = d.u8()

	j.MinNodes = d.u32()
	j.MaxNodes = d.u32()
	j.NumTasks = d.u32()
	j.TasksPerNode = d.u16()
	j.CPUsPerTask = d.u16()
	j.MinCPUs = d.u32()
	j.MemPerNodeMB = d.u64()
	j.MemPerCPUMB = d.u64()
	j.TresPerNode = d.common()
	j.TresPerJob = d.common()
	j.TresPerTask = d.common()
	j.ReqNodes = d.common()
	j.ExcNodes = d.common()
	j.Features = d.common()
	j.Dependency = d.str()
	j.OpenMode = d.u8()
	j.MailType = d.u16()
	j.MailUser = d.common()
	j.ExitCode = d.u32()
	j.Nodes = d.common()
	j.BatchHost = d.common()
	j.SessionID = d.str()
	j.ProtoVersion = d.u16()
	j.TresReqStr = d.common()
	j.TresAllocStr = d.common()
	j.Network = d.common()
	j.LastSchedEval = d.i64()
}

// interner shares equal strings among the jobs of one load. It is
// bounded: short strings only, and once full it stops adding, so a store
// where such fields are all distinct costs little more than no
// interning. Not safe for concurrent use; use one per goroutine.
type interner struct {
	m map[string]string
}

const (
	internMaxLen     = 128
	internMaxEntries = 4096
)

func (in *interner) intern(b []byte) string {
	if len(b) > internMaxLen {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = make(map[string]string, 64)
	}
	if len(in.m) < internMaxEntries {
		in.m[s] = s
	}
	return s
}
