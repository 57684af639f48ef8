package codec

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// The pieces of REQUEST_KILL_JOBS (5041) / RESPONSE_KILL_JOBS (5042)
// that go beyond the message layouts (KillJobsRequest, KillJobsResponse
// and KillJobsStep, with the other job control messages in job_ctl.go):
// the job id strings of kill_jobs_msg_t.jobs_array as slurmctld reads
// them (unfmt_job_id_string), the ids of the answer as scancel prints
// them (fmt_job_id_string), and the return codes and texts a kill-jobs
// answer carries (slurm/slurm_errno.h and src/common/slurm_errno.c; the
// values and texts are the same in 23.11 through 26.05).
//
// The message exists from protocol 23.11 on: scancel --ctld (or
// SCANCEL_CTLD, or 26.05's --admin-comment) of 24.11 and 26.05 sends it.
// 22.05's scancel has a --ctld option too, but it only changes how job
// steps are signalled: jobs still go out as REQUEST_KILL_JOB.

// Return codes of the kill-jobs RPC and of its per-job answers.
const (
	ESLURM_TRANSITION_STATE_NO_UPDATE = 2020
	ESLURM_NOT_WHOLE_HET_JOB          = 2108

	// unfmt_job_id_string's complaints (a contiguous block).
	ESLURM_EMPTY_JOB_ID                     = 2136
	ESLURM_INVALID_JOB_ID_ZERO              = 2137
	ESLURM_INVALID_JOB_ID_NEGATIVE          = 2138
	ESLURM_INVALID_JOB_ID_TOO_LARGE         = 2139
	ESLURM_INVALID_JOB_ID_NON_NUMERIC       = 2140
	ESLURM_EMPTY_JOB_ARRAY_ID               = 2141
	ESLURM_INVALID_JOB_ARRAY_ID_NEGATIVE    = 2142
	ESLURM_INVALID_JOB_ARRAY_ID_TOO_LARGE   = 2143
	ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC = 2144
	ESLURM_INVALID_HET_JOB_AND_ARRAY        = 2145
	ESLURM_EMPTY_HET_JOB_COMP               = 2146
	ESLURM_INVALID_HET_JOB_COMP_NEGATIVE    = 2147
	ESLURM_INVALID_HET_JOB_COMP_TOO_LARGE   = 2148
	ESLURM_INVALID_HET_JOB_COMP_NON_NUMERIC = 2149
	ESLURM_EMPTY_STEP_ID                    = 2150
	ESLURM_INVALID_STEP_ID_NEGATIVE         = 2151
	ESLURM_INVALID_STEP_ID_TOO_LARGE        = 2152
	ESLURM_INVALID_STEP_ID_NON_NUMERIC      = 2153
	ESLURM_EMPTY_HET_STEP                   = 2154
	ESLURM_INVALID_HET_STEP_ZERO            = 2155
	ESLURM_INVALID_HET_STEP_NEGATIVE        = 2156
	ESLURM_INVALID_HET_STEP_TOO_LARGE       = 2157
	ESLURM_INVALID_HET_STEP_NON_NUMERIC     = 2158
	ESLURM_INVALID_HET_STEP_JOB             = 2159

	ESLURM_JOB_SIGNAL_FAILED   = 2172 // a job named by id that the filters exclude
	ESLURM_SIGNAL_JOBS_INVALID = 2173 // neither a job id nor a filter
)

// killJobsTexts are slurm_strerror's texts for the codes a kill-jobs
// answer carries. ESLURM_INVALID_HET_JOB_AND_ARRAY and
// ESLURM_INVALID_HET_JOB_COMP_NON_NUMERIC have none in Slurm's table:
// slurm_strerror falls back to strerror's "Unknown error N".
var killJobsTexts = map[uint32]string{
	ESLURM_ACCESS_DENIED:                    "Access/permission denied",
	ESLURM_JOB_SCRIPT_MISSING:               "Job script not specified",
	ESLURM_INVALID_JOB_ID:                   "Invalid job id specified",
	ESLURM_TRANSITION_STATE_NO_UPDATE:       "Job can not be altered now, try again later",
	ESLURM_ALREADY_DONE:                     "Job/step already completing or completed",
	ESLURM_JOB_PENDING:                      "Job is pending execution",
	ESLURM_NOT_SUPPORTED:                    "Requested operation not supported on this system",
	ESLURM_INTERNAL:                         "Internal error",
	ESLURM_NOT_WHOLE_HET_JOB:                "Operation not permitted on individual component of heterogeneous job",
	ESLURM_EMPTY_JOB_ID:                     "JobID must not be an empty string",
	ESLURM_INVALID_JOB_ID_ZERO:              "JobID can not be zero",
	ESLURM_INVALID_JOB_ID_NEGATIVE:          "JobID can not be a negative number",
	ESLURM_INVALID_JOB_ID_TOO_LARGE:         "JobID larger than acceptable range",
	ESLURM_INVALID_JOB_ID_NON_NUMERIC:       "JobID includes unexpected non-numeric characters",
	ESLURM_EMPTY_JOB_ARRAY_ID:               "Job Array ID must not be an empty string",
	ESLURM_INVALID_JOB_ARRAY_ID_NEGATIVE:    "Job Array ID can not be a negative number",
	ESLURM_INVALID_JOB_ARRAY_ID_TOO_LARGE:   "Job Array ID larger than acceptable range",
	ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC: "Job Array ID includes unexpected non-numeric characters",
	ESLURM_EMPTY_HET_JOB_COMP:               "HetJob component must not be an empty string",
	ESLURM_INVALID_HET_JOB_COMP_NEGATIVE:    "HetJob component can not be a negative number",
	ESLURM_INVALID_HET_JOB_COMP_TOO_LARGE:   "HetJob component larger than acceptable range",
	ESLURM_EMPTY_STEP_ID:                    "StepID must not be an empty string",
	ESLURM_INVALID_STEP_ID_NEGATIVE:         "StepID can not be a negative number",
	ESLURM_INVALID_STEP_ID_TOO_LARGE:        "StepID larger than acceptable range",
	ESLURM_INVALID_STEP_ID_NON_NUMERIC:      "StepID includes unexpected non-numeric characters",
	ESLURM_EMPTY_HET_STEP:                   "HetStep component must not be an empty string",
	ESLURM_INVALID_HET_STEP_ZERO:            "HetStep component can not be zero",
	ESLURM_INVALID_HET_STEP_NEGATIVE:        "HetStep component can not be a negative number",
	ESLURM_INVALID_HET_STEP_TOO_LARGE:       "HetStep component larger than acceptable range",
	ESLURM_INVALID_HET_STEP_NON_NUMERIC:     "HetStep component includes unexpected non-numeric characters",
	ESLURM_INVALID_HET_STEP_JOB:             "HetJob can not Het step id",
	ESLURM_JOB_SIGNAL_FAILED:                "Cannot signal job",
	ESLURM_SIGNAL_JOBS_INVALID:              "Invalid signal jobs request, at least one job id or filter is required.",
}

// KillJobsErrorText is slurm_strerror(code) for the codes of a kill-jobs
// answer ("Unknown error N" for others, as strerror says).
func KillJobsErrorText(code uint32) string {
	if s, ok := killJobsTexts[code]; ok {
		return s
	}
	return "Unknown error " + strconv.FormatUint(uint64(code), 10)
}

// Limits of unfmt_job_id_string (slurm/slurm.h).
const (
	MaxFedJobID          = 0x03ffffff // MAX_FED_JOB_ID: job ids are below it
	MaxHetJobComponents  = 128        // MAX_HET_JOB_COMPONENTS
	jobIDStrLongMax      = 1<<63 - 1  // LONG_MAX, strtol's overflow value
	jobIDStrLongOverflow = 1 << 63
)

// JobIDSpec is one job id string of kill_jobs_msg_t.jobs_array as
// slurmctld reads it ("12", "12_3", "12_[1-3,7]", "12+1", "12.0").
type JobIDSpec struct {
	JobID        uint32
	ArrayTaskID  uint32   // NoVal unless "_N"
	ArrayTasks   []uint32 // the tasks of "_[...]", sorted and unique; nil otherwise
	HetJobOffset uint32   // NoVal unless "+N"
	StepID       uint32   // NoVal unless ".N"
	StepHetComp  uint32   // NoVal unless ".N+M"
}

// stepNames are the names unfmt_job_id_string takes for special steps.
var stepNames = []struct {
	name string
	id   uint32
}{
	{"TBD", SLURM_PENDING_STEP},
	{"extern", SLURM_EXTERN_CONT},
	{"batch", SLURM_BATCH_SCRIPT},
	{"interactive", SLURM_INTERACTIVE_STEP},
}

// strtol reads a decimal number at the start of s as C's strtol does
// (leading blanks and a sign allowed); n is the bytes consumed (0 when
// there are no digits). Overflow saturates, as strtol's LONG_MAX/MIN.
func strtol(s string) (v int64, n int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	over := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if u > (jobIDStrLongOverflow-uint64(s[i]-'0'))/10 {
			over = true
		} else {
			u = u*10 + uint64(s[i]-'0')
		}
		i++
	}
	if i == start {
		return 0, 0
	}
	if over || (!neg && u > jobIDStrLongMax) {
		if neg {
			return -jobIDStrLongMax - 1, i
		}
		return jobIDStrLongMax, i
	}
	if neg {
		return -int64(u), i
	}
	return int64(u), i
}

// ParseJobIDString reads a job id string as unfmt_job_id_string does;
// maxArraySize (MaxArraySize) bounds the tasks of "_[...]". A failure
// returns the Slurm code slurmctld answers the whole request with.
func ParseJobIDString(src string, maxArraySize uint32) (JobIDSpec, uint32) {
	id := JobIDSpec{JobID: NoVal, ArrayTaskID: NoVal, HetJobOffset: NoVal, StepID: NoVal, StepHetComp: NoVal}
	if src == "" {
		return id, ESLURM_EMPTY_JOB_ID
	}
	job, n := strtol(src)
	switch {
	case job == 0:
		return id, ESLURM_INVALID_JOB_ID_ZERO
	case job < 0:
		return id, ESLURM_INVALID_JOB_ID_NEGATIVE
	case job >= MaxFedJobID:
		return id, ESLURM_INVALID_JOB_ID_TOO_LARGE
	}
	id.JobID = uint32(job)
	rest := src[n:]

	switch {
	case strings.HasPrefix(rest, "_["):
		if maxArraySize == 0 || maxArraySize == NoVal {
			return id, ESLURM_INVALID_JOB_ID_NON_NUMERIC
		}
		end := strings.IndexByte(rest[2:], ']')
		if end < 0 || 2+end+1 != len(rest) {
			return id, ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC
		}
		tasks, ok := parseArrayExpr(rest[1:], maxArraySize)
		if !ok {
			return id, ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC
		}
		id.ArrayTasks = tasks
		rest = ""
	case strings.HasPrefix(rest, "_"):
		if len(rest) == 1 {
			return id, ESLURM_EMPTY_JOB_ARRAY_ID
		}
		task, n := strtol(rest[1:])
		switch {
		case task < 0:
			return id, ESLURM_INVALID_JOB_ARRAY_ID_NEGATIVE
		case task == jobIDStrLongMax:
			return id, ESLURM_INVALID_JOB_ARRAY_ID_TOO_LARGE
		case n == 0:
			return id, ESLURM_INVALID_JOB_ARRAY_ID_NON_NUMERIC
		}
		id.ArrayTaskID = uint32(task)
		rest = rest[1+n:]
	}

	if strings.HasPrefix(rest, "+") {
		if id.ArrayTaskID != NoVal {
			return id, ESLURM_INVALID_HET_JOB_AND_ARRAY
		}
		if len(rest) == 1 {
			return id, ESLURM_EMPTY_HET_JOB_COMP
		}
		het, n := strtol(rest[1:])
		switch {
		case het < 0:
			return id, ESLURM_INVALID_HET_JOB_COMP_NEGATIVE
		case het > MaxHetJobComponents:
			return id, ESLURM_INVALID_HET_JOB_COMP_TOO_LARGE
		case n == 0:
			return id, ESLURM_INVALID_HET_JOB_COMP_NON_NUMERIC
		}
		id.HetJobOffset = uint32(het)
		rest = rest[1+n:]
		if strings.HasPrefix(rest, "_") {
			return id, ESLURM_INVALID_HET_JOB_AND_ARRAY
		}
	}

	if rest == "" {
		return id, SLURM_SUCCESS
	}
	if rest[0] != '.' {
		return id, ESLURM_INVALID_JOB_ID_NON_NUMERIC
	}
	rest = rest[1:]
	if rest == "" {
		return id, ESLURM_EMPTY_STEP_ID
	}
	step, n := strtol(rest)
	if n == 0 {
		found := false
		for _, sn := range stepNames {
			if len(rest) >= len(sn.name) && strings.EqualFold(rest[:len(sn.name)], sn.name) {
				step, n, found = int64(sn.id), len(sn.name), true
				break
			}
		}
		if !found {
			return id, ESLURM_INVALID_STEP_ID_NON_NUMERIC
		}
	} else if step < 0 {
		return id, ESLURM_INVALID_STEP_ID_NEGATIVE
	} else if step >= int64(SLURM_MAX_NORMAL_STEP_ID) {
		return id, ESLURM_INVALID_STEP_ID_TOO_LARGE
	}
	id.StepID = uint32(step)
	rest = rest[n:]
	if rest == "" {
		return id, SLURM_SUCCESS
	}
	if rest[0] != '+' {
		return id, ESLURM_INVALID_STEP_ID_NON_NUMERIC
	}
	if id.HetJobOffset != NoVal {
		return id, ESLURM_INVALID_HET_STEP_JOB
	}
	rest = rest[1:]
	if rest == "" {
		return id, SLURM_SUCCESS
	}
	comp, n := strtol(rest)
	switch {
	case n == 0:
		return id, ESLURM_EMPTY_HET_STEP
	case comp == 0:
		return id, ESLURM_INVALID_HET_STEP_ZERO
	case comp < 0:
		return id, ESLURM_INVALID_HET_STEP_NEGATIVE
	case comp >= MaxHetJobComponents:
		return id, ESLURM_INVALID_HET_STEP_TOO_LARGE
	case n != len(rest):
		return id, ESLURM_INVALID_HET_STEP_NON_NUMERIC
	}
	id.StepHetComp = uint32(comp)
	return id, SLURM_SUCCESS
}

// parseArrayExpr reads "[1-3,5,7-11:2]" as slurm_array_str2bitmap: comma
// separated elements, a "[" stripped before and a "]" after each, a
// "%N" throttle ignored; every task below max and at least one.
func parseArrayExpr(s string, max uint32) ([]uint32, bool) {
	set := make([]uint64, (uint64(max)+63)/64) // as slurmctld, a bitmap of MaxArraySize
	for _, tok := range strings.Split(s, ",") {
		if tok == "" {
			continue // strtok skips empty tokens
		}
		tok = strings.TrimPrefix(tok, "[")
		first, n := strtol(tok)
		rest := strings.TrimPrefix(tok[n:], "]")
		if first < 0 {
			return nil, false
		}
		last, step := first, int64(1)
		endOK := func(r string) bool { return r == "" || r[0] == '%' }
		if strings.HasPrefix(rest, "-") {
			var m int
			last, m = strtol(rest[1:])
			rest = strings.TrimPrefix(rest[1+m:], "]")
			if strings.HasPrefix(rest, ":") {
				step, m = strtol(rest[1:])
				rest = strings.TrimPrefix(rest[1+m:], "]")
				if !endOK(rest) || step <= 0 || step >= int64(max) {
					return nil, false
				}
			} else if !endOK(rest) {
				return nil, false
			}
			if last < first {
				return nil, false
			}
		} else if !endOK(rest) {
			return nil, false
		}
		if last >= int64(max) {
			return nil, false
		}
		for i := first; i <= last; i += step {
			set[i/64] |= 1 << (i % 64)
		}
	}
	var tasks []uint32
	for w, word := range set {
		for ; word != 0; word &= word - 1 {
			tasks = append(tasks, uint32(w*64+bits.TrailingZeros64(word)))
		}
	}
	return tasks, len(tasks) > 0
}

// Step returns the spec as the selected step of a kill-jobs answer, its
// tasks as a bitmap of nbits (MaxArraySize, as slurmctld sizes it).
func (s JobIDSpec) Step(nbits uint32) KillJobsStep {
	st := KillJobsStep{
		StepID:       JobStepID{JobID: s.JobID, StepID: s.StepID, StepHetComp: s.StepHetComp},
		ArrayTaskID:  s.ArrayTaskID,
		HetJobOffset: s.HetJobOffset,
	}
	if s.ArrayTasks != nil {
		st.ArrayBitmap = TaskBitmap(nbits, s.ArrayTasks)
	}
	return st
}

// TaskBitmap is the bitmap of the given array tasks (sorted, as
// JobIDSpec.ArrayTasks), nbits wide (wider when a task does not fit).
func TaskBitmap(nbits uint32, tasks []uint32) *HexBits {
	if n := len(tasks); n > 0 && tasks[n-1] >= nbits {
		nbits = tasks[n-1] + 1
	}
	return &HexBits{NBits: nbits, Hex: string(BitHex(nil, int(nbits), func(i int) bool {
		_, found := slices.BinarySearch(tasks, uint32(i))
		return found
	}))}
}

// String formats the step as scancel prints the ids of a kill-jobs answer
// (fmt_job_id_string): "12", "12_3", "12_[1-3,7]", "12+1", "12.batch";
// "" where fmt_job_id_string fails.
func (s *KillJobsStep) String() string {
	if s.StepID.JobID == NoVal {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.FormatUint(uint64(s.StepID.JobID), 10))
	if s.ArrayTaskID != NoVal && s.HetJobOffset != NoVal {
		return ""
	}
	if s.ArrayBitmap != nil {
		var set []uint32
		for i := 0; i < int(s.ArrayBitmap.NBits); i++ {
			if s.ArrayBitmap.IsSet(i) {
				set = append(set, uint32(i))
			}
		}
		if len(set) > 0 {
			b.WriteString("_[")
			b.WriteString(rangeList(set))
			b.WriteString("]")
			return b.String()
		}
	}
	if s.ArrayTaskID != NoVal {
		b.WriteString("_" + strconv.FormatUint(uint64(s.ArrayTaskID), 10))
	}
	if s.HetJobOffset != NoVal {
		b.WriteString("+" + strconv.FormatUint(uint64(s.HetJobOffset), 10))
	}
	if s.StepID.StepID == NoVal {
		if s.StepID.StepHetComp != NoVal {
			return ""
		}
		return b.String()
	}
	name := ""
	for _, sn := range stepNames {
		if sn.id == s.StepID.StepID {
			name = sn.name
		}
	}
	if name == "" {
		name = strconv.FormatUint(uint64(s.StepID.StepID), 10)
	}
	b.WriteString("." + name)
	if s.StepID.StepHetComp != NoVal {
		b.WriteString("+" + strconv.FormatUint(uint64(s.StepID.StepHetComp), 10))
	}
	return b.String()
}

// rangeList formats sorted tasks as bit_fmt_full does: "1-3,7".
func rangeList(set []uint32) string {
	var b strings.Builder
	for i := 0; i < len(set); {
		j := i
		for j+1 < len(set) && set[j+1] == set[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(set[i]), 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(uint64(set[j]), 10))
		}
		i = j + 1
	}
	return b.String()
}
