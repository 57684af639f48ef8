package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/zstd"
)

// Job history: what sacct reads, kept long after the controller forgets a
// job (MinJobAge) and the engine purges its session. A finished job's run
// is one record: the job as the job store keeps it, plus what only
// accounting needs (its steps, who cancelled it, its usage), compressed.
// A step's record is written when the step ends, apart from its job's
// (a running job's steps are history already).
//
// Keys (in the job store's Badger, so a job's end and its history are one
// transaction):
//
//	hist/j/<job id><start>                  the run's record
//	hist/e/<end><job id><start>             index by end time
//	hist/u/<uid><end><job id><start>        index by user
//	hist/a/<account>\x00<end><job id><start> index by account
//	hist/r/<array job id><job id><start>    an array task, by its array
//	hist/s/<job id><step id>                a step's record
//
// Numbers are big-endian so keys sort by them. A job requeued and run
// again has a record per run (sacct -D shows them all).
//
// Records are tagged (a field number and wire type before each value, as
// protocol buffers): a field can be added without rewriting old records,
// and a reader skips the fields it does not know.

var (
	prefixHistJob  = []byte("hist/j/")
	prefixHistEnd  = []byte("hist/e/")
	prefixHistUser = []byte("hist/u/")
	prefixHistAcct = []byte("hist/a/")
	prefixHistStep = []byte("hist/s/")
	prefixHistArr  = []byte("hist/r/")
)

// HistStep is a job step as accounting keeps it.
type HistStep struct {
	ID         uint32 // step id (SLURM_BATCH_SCRIPT etc. for the special ones)
	Name       string
	Nodes      string
	NNodes     uint32
	NTasks     uint32
	CPUs       uint32
	Start, End int64
	ExitCode   uint32 // raw wait status
	State      uint32 // JOB_* state
	ReqUID     uint32 // who cancelled it (NoVal: nobody)
	SubmitLine string
	TresAlloc  string
	TaskDist   uint32
	// Usage, where the engine measured it (0: not measured).
	UserCPUus, SysCPUus uint64
	MaxRSS              uint64 // bytes, the largest task's
	MaxRSSTask          uint32 // that task (global id)
	MaxRSSNode          uint32 // its node's index in the step
	IOOut, IOIn         uint64 // task I/O to and from srun, bytes
	// The --cpu-freq asked for (min, max, governor), where known (an
	// imported step); otherwise as srun sends none.
	ReqCPUFreq    [3]uint32
	ReqCPUFreqSet bool
}

// HistJob is one run of a job.
type HistJob struct {
	Job
	ReqUID    uint32 // who cancelled it (NoVal: nobody)
	DerivedEC uint32 // the highest exit code of its steps (sacct's DerivedExitCode)
	UserCPUus uint64
	SysCPUus  uint64
	MaxRSS    uint64
	Steps     []HistStep
	// The TRES as accounting writes them ("1=2,2=4000,4=1": TRES ids),
	// for runs whose job record has no squeue-form TRES (imported from a
	// slurmdbd database); "" = derived from the job's.
	TresAllocIDs, TresReqIDs string
	DBFlags                  uint32 // an imported run's SLURMDB_JOB_FLAG_*
}

// HistCond selects runs: every non-empty list must contain the run's
// value; the window keeps runs that were eligible or ran in it (ended at
// or after Start, or not at all, and started, or became eligible, at or
// before End; 0: no bound).
//
// The window is slurmdbd's (as_mysql_jobacct_process.c): with States,
// each state's own rule (a final state: ended in the window; RUNNING:
// ran in it; PENDING: waited in it); without, runs eligible before End
// and not ended before Start, or, for runs asked by id, submitted before
// End. Start and End are as the client and slurmdb_job_cond_def_start_end
// leave them (0: unbounded).
type HistCond struct {
	JobIDs     []uint32 // a job, or an array's tasks (by the array's id)
	ByID       bool     // the runs were asked by id (sacct -j)
	UIDs       []uint32
	Accounts   []string
	Partitions []string
	Names      []string
	States     []uint32 // base states
	Start, End int64
	NoSteps    bool // the runs without their steps (sacct -X)
}

const (
	histRecPlain byte = 1
	histRecZstd  byte = 2
	noVal32           = 0xfffffffe
)

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
)

// tagged-record helpers: (field<<3|wire) then the value; wire 0 is a
// uvarint, 2 a length and bytes.
type trec struct{ b []byte }

func (t *trec) u(f int, v uint64) {
	if v == 0 {
		return
	}
	t.b = binary.AppendUvarint(t.b, uint64(f)<<3)
	t.b = binary.AppendUvarint(t.b, v)
}
func (t *trec) i(f int, v int64) { t.u(f, uint64(v<<1)^uint64(v>>63)) }
func (t *trec) bytes(f int, v []byte) {
	if len(v) == 0 {
		return
	}
	t.b = binary.AppendUvarint(t.b, uint64(f)<<3|2)
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}
func (t *trec) s(f int, v string) { t.bytes(f, []byte(v)) }

var errHistRec = errors.New("history record: malformed")

// fields calls fn for every field of a tagged record.
func fields(b []byte, fn func(f int, v uint64, p []byte) error) error {
	for len(b) > 0 {
		k, n := binary.Uvarint(b)
		if n <= 0 {
			return errHistRec
		}
		b = b[n:]
		switch k & 7 {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return errHistRec
			}
			b = b[n:]
			if err := fn(int(k>>3), v, nil); err != nil {
				return err
			}
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errHistRec
			}
			p := b[n : n+int(l)]
			b = b[n+int(l):]
			if err := fn(int(k>>3), 0, p); err != nil {
				return err
			}
		default:
			return errHistRec
		}
	}
	return nil
}

func unzig(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// ReqUID is kept +1 so that 0 (absent) is "nobody".
func reqUIDOut(v uint32) uint64 {
	if v == noVal32 || v == 0xffffffff {
		return 0
	}
	return uint64(v) + 1
}
func reqUIDIn(v uint64) uint32 {
	if v == 0 {
		return noVal32
	}
	return uint32(v - 1)
}

func appendStepRecord(b []byte, s *HistStep) []byte {
	t := trec{b}
	t.u(1, uint64(s.ID)+1) // +1: step 0 is not absent
	t.s(2, s.Name)
	t.s(3, s.Nodes)
	t.u(4, uint64(s.NNodes))
	t.u(5, uint64(s.NTasks))
	t.u(6, uint64(s.CPUs))
	t.i(7, s.Start)
	t.i(8, s.End)
	t.u(9, uint64(s.ExitCode))
	t.u(10, uint64(s.State))
	t.u(11, reqUIDOut(s.ReqUID))
	t.s(12, s.SubmitLine)
	t.s(13, s.TresAlloc)
	t.u(14, uint64(s.TaskDist))
	t.u(15, s.UserCPUus)
	t.u(16, s.SysCPUus)
	t.u(17, s.MaxRSS)
	t.u(18, s.IOOut)
	t.u(19, s.IOIn)
	t.u(20, uint64(s.MaxRSSTask))
	t.u(21, uint64(s.MaxRSSNode))
	if s.ReqCPUFreqSet {
		for i, f := range s.ReqCPUFreq {
			t.u(22+i, uint64(f)+1) // +1: 0 is a value
		}
	}
	return t.b
}

func decodeStepRecord(b []byte, s *HistStep) error {
	*s = HistStep{ReqUID: noVal32}
	return fields(b, func(f int, v uint64, p []byte) error {
		switch f {
		case 1:
			s.ID = uint32(v - 1)
		case 2:
			s.Name = string(p)
		case 3:
			s.Nodes = string(p)
		case 4:
			s.NNodes = uint32(v)
		case 5:
			s.NTasks = uint32(v)
		case 6:
			s.CPUs = uint32(v)
		case 7:
			s.Start = unzig(v)
		case 8:
			s.End = unzig(v)
		case 9:
			s.ExitCode = uint32(v)
		case 10:
			s.State = uint32(v)
		case 11:
			s.ReqUID = reqUIDIn(v)
		case 12:
			s.SubmitLine = string(p)
		case 13:
			s.TresAlloc = string(p)
		case 14:
			s.TaskDist = uint32(v)
		case 15:
			s.UserCPUus = v
		case 16:
			s.SysCPUus = v
		case 17:
			s.MaxRSS = v
		case 18:
			s.IOOut = v
		case 19:
			s.IOIn = v
		case 22, 23, 24:
			s.ReqCPUFreq[f-22], s.ReqCPUFreqSet = uint32(v-1), true
		case 20:
			s.MaxRSSTask = uint32(v)
		case 21:
			s.MaxRSSNode = uint32(v)
		}
		return nil
	})
}

// appendHistRecord: the job (in the job store's own record format, which
// versions itself), then the history fields; compressed when that pays.
func appendHistRecord(b []byte, h *HistJob) []byte {
	return appendHistRecordOf(b, h, appendJobRecord(nil, &h.Job))
}

// appendHistRecordOf is appendHistRecord with h.Job's record already
// encoded (job).
func appendHistRecordOf(b []byte, h *HistJob, job []byte) []byte {
	t := trec{nil}
	t.bytes(1, job)
	t.u(2, reqUIDOut(h.ReqUID))
	t.u(3, uint64(h.DerivedEC))
	t.u(4, h.UserCPUus)
	t.u(5, h.SysCPUus)
	t.u(6, h.MaxRSS)
	if h.TresAllocIDs != "" {
		t.s(7, h.TresAllocIDs)
	}
	if h.TresReqIDs != "" {
		t.s(8, h.TresReqIDs)
	}
	if h.DBFlags != 0 {
		t.u(9, uint64(h.DBFlags))
	}
	if z := zenc.EncodeAll(t.b, nil); len(z) < len(t.b) {
		return append(append(b, histRecZstd), z...)
	}
	return append(append(b, histRecPlain), t.b...)
}

func decodeHistRecord(b []byte, h *HistJob) error { return decodeHistRecordIn(b, h, &interner{}) }

// decodeHistRecordIn is decodeHistRecord sharing in across records (a
// History pass: the same partitions, users and directories again).
func decodeHistRecordIn(b []byte, h *HistJob, in *interner) error {
	if len(b) == 0 {
		return errHistRec
	}
	p := b[1:]
	switch b[0] {
	case histRecPlain:
	case histRecZstd:
		var err error
		if p, err = zdec.DecodeAll(p, nil); err != nil {
			return fmt.Errorf("history record: %w", err)
		}
	default:
		return fmt.Errorf("history record: format %d", b[0])
	}
	*h = HistJob{ReqUID: noVal32}
	job := false
	err := fields(p, func(f int, v uint64, p []byte) error {
		switch f {
		case 1:
			job = true
			return decodeJobRecord(p, &h.Job, in)
		case 2:
			h.ReqUID = reqUIDIn(v)
		case 3:
			h.DerivedEC = uint32(v)
		case 4:
			h.UserCPUus = v
		case 5:
			h.SysCPUus = v
		case 6:
			h.MaxRSS = v
		case 7:
			h.TresAllocIDs = string(p)
		case 8:
			h.TresReqIDs = string(p)
		case 9:
			h.DBFlags = uint32(v)
		}
		return nil
	})
	if err == nil && !job {
		err = errHistRec
	}
	return err
}

func be32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func be64(b []byte, v int64) []byte  { return binary.BigEndian.AppendUint64(b, uint64(v)) }

func histJobKey(id uint32, start int64) []byte {
	return be64(be32(append([]byte(nil), prefixHistJob...), id), start)
}

// histKeys are the run's record key and its index keys.
func histKeys(j *Job) (rec []byte, idx [][]byte) {
	rec = histJobKey(j.ID, j.StartTime)
	tail := be64(be32(nil, j.ID), j.StartTime)
	idx = append(idx, append(be64(append([]byte(nil), prefixHistEnd...), j.EndTime), tail...))
	idx = append(idx, append(be64(be32(append([]byte(nil), prefixHistUser...), j.UserID), j.EndTime), tail...))
	a := append(append(append([]byte(nil), prefixHistAcct...), j.Account...), 0)
	idx = append(idx, append(be64(a, j.EndTime), tail...))
	if j.ArrayJobID != 0 && j.ArrayJobID != j.ID {
		idx = append(idx, append(be32(append([]byte(nil), prefixHistArr...), j.ArrayJobID), tail...))
	}
	return rec, idx
}

// jobFinal: the job's run is over (its record can go to history).
func jobFinal(j *Job) bool {
	base := j.State & 0xff        // JOB_STATE_BASE
	return base >= 3 && base < 12 // COMPLETE .. OUT_OF_MEMORY (PREEMPTED ends a run too)
}

// historyTxn writes the history of the finished runs among jobs (called
// in Put's transaction). ReqUID and usage the job store does not have
// come from History.note, if the controller left them there.
func (s *Store) historyTxn(txn *wtxn, jobs []*Job, hists [][]byte) error {
	// One association check per user and account of the transaction (a
	// scancel -u writes thousands of one user's runs at once).
	type ua struct {
		uid  uint32
		acct string
	}
	var assocs map[ua]bool
	for i, j := range jobs {
		if hists[i] == nil {
			continue
		}
		rec, idx := histKeys(j)
		if _, err := txn.Get(rec); err == nil {
			continue // the run's record is written once, at its end
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		s.hist.drop(j.ID)
		if err := txn.Set(rec, hists[i]); err != nil {
			return err
		}
		if err := s.noteSpan(txn, j); err != nil {
			return err
		}
		if k := (ua{j.UserID, j.Account}); !assocs[k] {
			if assocs == nil {
				assocs = map[ua]bool{}
			}
			assocs[k] = true
			if err := s.assocTxn(txn, j); err != nil {
				return err
			}
		}
		for _, k := range idx {
			if err := txn.Set(k, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// histNotes holds, until the job's record is written, what the controller
// knows of a job beyond the job record (who cancelled it, its usage).
type histNotes struct {
	mu sync.Mutex
	m  map[uint32]HistJob
}

// peek fills h with what was noted for job id (encodePut); drop forgets
// it once the run's record is written.
func (n *histNotes) peek(id uint32, h *HistJob) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if x, ok := n.m[id]; ok {
		h.ReqUID, h.DerivedEC, h.UserCPUus, h.SysCPUus, h.MaxRSS = x.ReqUID, x.DerivedEC, x.UserCPUus, x.SysCPUus, x.MaxRSS
	}
}

func (n *histNotes) drop(id uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, id)
}

// histable: j's run is over and its record may go to history (Put).
func histable(j *Job) bool {
	return jobFinal(j) && j.EndTime != 0 && j.State&0x8000 == 0 // JOB_COMPLETING: not yet
}

// NoteJobEnd records, for the history record written when the job's
// final state is stored, who cancelled it (NoVal: nobody) and its usage.
func (s *Store) NoteJobEnd(id uint32, reqUID, derivedEC uint32, userCPUus, sysCPUus, maxRSS uint64) {
	s.hist.mu.Lock()
	defer s.hist.mu.Unlock()
	if s.hist.m == nil {
		s.hist.m = map[uint32]HistJob{}
	}
	s.hist.m[id] = HistJob{ReqUID: reqUID, DerivedEC: derivedEC, UserCPUus: userCPUus, SysCPUus: sysCPUus, MaxRSS: maxRSS}
}

// PutStep records a job step that ended.
func (s *Store) PutStep(jobID uint32, st *HistStep) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := appendStepRecord(nil, st)
	k := be32(be32(append([]byte(nil), prefixHistStep...), jobID), st.ID)
	return s.commit(int64(len(k)+len(v))+64, func(txn *wtxn) error { return txn.Set(k, v) })
}

// StepsOf is the ended steps of a job (a running one's too: sacct lists
// them under the job the controller shows).
func (s *Store) StepsOf(jobID uint32) (out []HistStep, err error) {
	err = s.view(func(txn *badger.Txn) error {
		out, err = s.steps(txn, jobID)
		return err
	})
	return out, err
}

func (s *Store) steps(txn *badger.Txn, jobID uint32) ([]HistStep, error) {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistStep})
	defer it.Close()
	return stepsAt(&cursor{it: it}, jobID)
}

// stepsAt reads a job's steps with an iterator over prefixHistStep (one
// iterator serves a whole History pass: making one costs more than a
// seek).
func stepsAt(c *cursor, jobID uint32) ([]HistStep, error) {
	p := be32(append([]byte(nil), prefixHistStep...), jobID)
	var out []HistStep
	for c.seek(p); c.it.ValidForPrefix(p); c.next() {
		var st HistStep
		if err := c.it.Item().Value(func(v []byte) error { return decodeStepRecord(v, &st) }); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// cursor is an iterator that remembers the key before its position: a
// seek to a key just past that one is no seek at all. Runs read in end
// order are mostly in id order too, and a record or step a key or two
// on costs a Next where a Seek searches every level of the tree.
type cursor struct {
	it    *badger.Iterator
	prev  []byte // the key before the position, if known
	known bool   // false after a Seek
}

func (c *cursor) next() {
	c.prev, c.known = append(c.prev[:0], c.it.Item().Key()...), true
	c.it.Next()
}

// seek positions c at the first key at or after key.
func (c *cursor) seek(key []byte) {
	for n := 0; n < 16 && c.it.Valid(); n++ {
		if bytes.Compare(c.it.Item().Key(), key) >= 0 {
			if c.known && bytes.Compare(c.prev, key) < 0 {
				return
			}
			break
		}
		c.next()
	}
	c.it.Seek(key)
	c.known = false
}

func contains[T comparable](l []T, v T) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// Match reports whether the cond selects job j's run.
func (c *HistCond) Match(j *Job) bool {
	if len(c.JobIDs) > 0 && !contains(c.JobIDs, j.ID) && !(j.ArrayJobID != 0 && contains(c.JobIDs, j.ArrayJobID)) {
		return false
	}
	if len(c.UIDs) > 0 && !contains(c.UIDs, j.UserID) ||
		len(c.Accounts) > 0 && !contains(c.Accounts, j.Account) ||
		len(c.Partitions) > 0 && !contains(c.Partitions, j.Partition) ||
		len(c.Names) > 0 && !contains(c.Names, j.Name) {
		return false
	}
	S, E := c.Start, c.End
	state := j.State & 0xff
	end := int64(0) // slurmdbd's time_end: 0 until the run ends
	if jobFinal(j) {
		end = j.EndTime
	}
	start, elig := j.StartTime, j.EligibleTime
	if len(c.States) > 0 {
		if S == 0 && E == 0 {
			return contains(c.States, state)
		}
		for _, want := range c.States {
			var ok bool
			switch want {
			case 0: // PENDING: waited in the window
				ok = elig != 0 && (start != 0 && S < start || start == 0 && end != 0 && S < end ||
					start == 0 && end == 0 && state == 0) && E > elig
			case 1: // RUNNING: ran in it
				ok = start != 0 && (S < end || end == 0 && state == 1) && E > start
			case 2: // SUSPENDED: never, here
			default: // a final state: ended in it
				ok = state == want && end != 0 && end >= S && end <= E
			}
			if ok {
				return true
			}
		}
		return false
	}
	switch {
	case c.ByID:
		return (E == 0 || j.SubmitTime < E) && (end >= S || end == 0)
	case S != 0 && E == 0:
		return end >= S || end == 0
	case S != 0:
		return elig != 0 && elig < E && (end >= S || end == 0)
	case E != 0:
		return elig != 0 && elig < E
	}
	return true
}

// History calls fn, in job id order (then start), for every finished run
// that cond selects, with its steps, until fn returns false.
func (s *Store) History(cond *HistCond, fn func(*HistJob) bool) error {
	return s.view(func(txn *badger.Txn) error {
		var stepIt *badger.Iterator
		var steps *cursor
		defer func() {
			if stepIt != nil {
				stepIt.Close()
			}
		}()
		// The records, through an iterator rather than a Get each: most
		// runs come in about their id order (seekNear).
		recIt := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistJob, PrefetchValues: false})
		defer recIt.Close()
		rec := &cursor{it: recIt}
		in := &interner{}
		emit := func(key []byte) (bool, error) {
			rec.seek(key)
			if !recIt.Valid() || !bytes.Equal(recIt.Item().Key(), key) {
				return true, nil // retention removed it meanwhile
			}
			var h HistJob
			if err := recIt.Item().Value(func(v []byte) error { return decodeHistRecordIn(v, &h, in) }); err != nil {
				return false, err
			}
			if !cond.Match(&h.Job) {
				return true, nil
			}
			if !cond.NoSteps {
				if stepIt == nil {
					stepIt = txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistStep, PrefetchValues: false})
					steps = &cursor{it: stepIt}
				}
				var err error
				if h.Steps, err = stepsAt(steps, h.ID); err != nil {
					return false, err
				}
			}
			return fn(&h), nil
		}
		// No run that ended after End + the longest span a run has had
		// (end less its eligible, start or submit time) can be in the
		// window: the index scans stop there.
		stop := int64(math.MaxInt64)
		if cond.End != 0 && !cond.ByID {
			if span, err := s.maxSpan(txn); err != nil {
				return err
			} else if span >= 0 {
				stop = cond.End + span
			}
		}
		scan := func(prefix, from []byte, tail func(k []byte) []byte) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: false})
			defer it.Close()
			endAt := len(from) - 8 // the end time's place in these keys (from ends with it)
			for it.Seek(from); it.ValidForPrefix(prefix); it.Next() {
				k := it.Item().Key()
				if endAt >= len(prefix) && len(k) >= endAt+8 && int64(binary.BigEndian.Uint64(k[endAt:])) > stop {
					return nil
				}
				more, err := emit(append(append([]byte(nil), prefixHistJob...), tail(k)...))
				if err != nil || !more {
					return err
				}
			}
			return nil
		}
		last12 := func(k []byte) []byte { return k[len(k)-12:] }
		// The index scans gather the runs' keys, then read the records
		// (and steps) in key order: in end order they are scattered
		// over the job ids, and each would be a seek.
		var hits [][12]byte
		collect := func(prefix, from []byte) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: false})
			defer it.Close()
			endAt := len(from) - 8
			for it.Seek(from); it.ValidForPrefix(prefix); it.Next() {
				k := it.Item().Key()
				if len(k) >= endAt+8 && int64(binary.BigEndian.Uint64(k[endAt:])) > stop {
					return nil
				}
				hits = append(hits, [12]byte(k[len(k)-12:]))
			}
			return nil
		}
		switch {
		case len(cond.JobIDs) > 0:
			// Each job's runs, and an array's tasks (their own ids
			// differ) by the array index.
			for _, id := range cond.JobIDs {
				p := be32(append([]byte(nil), prefixHistJob...), id)
				if err := scan(p, p, func(k []byte) []byte { return k[len(prefixHistJob):] }); err != nil {
					return err
				}
				p = be32(append([]byte(nil), prefixHistArr...), id)
				if err := scan(p, p, last12); err != nil {
					return err
				}
			}
			return nil
		case len(cond.UIDs) > 0:
			for _, uid := range cond.UIDs {
				p := be32(append([]byte(nil), prefixHistUser...), uid)
				if err := collect(p, be64(append([]byte(nil), p...), cond.Start)); err != nil {
					return err
				}
			}
		case len(cond.Accounts) > 0:
			for _, a := range cond.Accounts {
				p := append(append(append([]byte(nil), prefixHistAcct...), a...), 0)
				if err := collect(p, be64(append([]byte(nil), p...), cond.Start)); err != nil {
					return err
				}
			}
		default:
			if err := collect(prefixHistEnd, be64(append([]byte(nil), prefixHistEnd...), cond.Start)); err != nil {
				return err
			}
		}
		slices.SortFunc(hits, func(a, b [12]byte) int { return bytes.Compare(a[:], b[:]) })
		key := append([]byte(nil), prefixHistJob...)
		for _, h := range hits {
			more, err := emit(append(key[:len(prefixHistJob)], h[:]...))
			if err != nil || !more {
				return err
			}
		}
		return nil
	})
}

// ImportHistory adds runs from elsewhere (a slurmdbd database) with
// their steps, in one transaction; a run already present (the same job id
// and start) is left as it is, so importing again adds nothing. Steps
// are keyed by job id: an imported run whose job id already has steps of
// another run gets its record but not its steps (counted in clashes).
func (s *Store) ImportHistory(runs []HistJob) (added, clashes int, err error) {
	var size int64
	stepOwners := map[uint32]bool{}
	err = s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistStep})
		defer it.Close()
		for i := range runs {
			size += 1024 + int64(len(runs[i].Steps))*256
			if len(runs[i].Steps) == 0 {
				continue
			}
			sp := be32(append([]byte(nil), prefixHistStep...), runs[i].ID)
			it.Seek(sp)
			if it.ValidForPrefix(sp) {
				stepOwners[runs[i].ID] = true
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	pending := map[uint32]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = s.commit(size, func(txn *wtxn) error {
		added, clashes = 0, 0
		clear(pending)
		for i := range runs {
			h := &runs[i]
			rec, idx := histKeys(&h.Job)
			if _, err := txn.Get(rec); err == nil {
				continue
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			steps := h.Steps
			h.Steps = nil
			v := appendHistRecord(nil, h)
			h.Steps = steps
			if err := txn.Set(rec, v); err != nil {
				return err
			}
			if err := s.noteSpan(txn, &h.Job); err != nil {
				return err
			}
			if err := s.assocTxn(txn, &h.Job); err != nil {
				return err
			}
			for _, k := range idx {
				if err := txn.Set(k, nil); err != nil {
					return err
				}
			}
			added++
			if len(steps) == 0 {
				continue
			}
			sp := be32(append([]byte(nil), prefixHistStep...), h.ID)
			// Another run's steps under this id: in the store before
			// (read outside the transaction: an iterator on a write
			// transaction sorts its pending writes each time), or in
			// this batch.
			if stepOwners[h.ID] || pending[h.ID] {
				clashes++
				continue
			}
			pending[h.ID] = true
			for j := range steps {
				if err := txn.Set(be32(append([]byte(nil), sp...), steps[j].ID), appendStepRecord(nil, &steps[j])); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return added, clashes, err
}

var keyHistSpan = []byte("meta/hist_max_span")

// spanOf is how long before its end a run first counted for a window:
// its end less the earliest of its eligible, start and submit times.
func spanOf(j *Job) int64 {
	first := j.EndTime
	for _, t := range []int64{j.EligibleTime, j.StartTime, j.SubmitTime} {
		if t > 0 && t < first {
			first = t
		}
	}
	return j.EndTime - first
}

// maxSpan is the longest span of the history's runs (-1: unknown).
func (s *Store) maxSpan(txn *badger.Txn) (int64, error) {
	if v := s.histSpan.Load(); v != 0 {
		return v - 1, nil
	}
	it, err := txn.Get(keyHistSpan)
	if errors.Is(err, badger.ErrKeyNotFound) {
		// A store whose runs were written before the span was kept:
		// unknown until BackfillSpan.
		return -1, nil
	} else if err != nil {
		return 0, err
	}
	var span int64 = -1
	err = it.Value(func(v []byte) error {
		if len(v) == 8 {
			span = int64(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	if span >= 0 {
		s.histSpan.Store(span + 1)
	}
	return span, err
}

// noteSpan keeps the longest span up to date (s.mu held, in the run's
// transaction).
func (s *Store) noteSpan(txn *wtxn, j *Job) error {
	cur, err := s.maxSpan(txn.Txn)
	if err != nil || cur < 0 {
		return err // unknown until BackfillSpan, which will see this run
	}
	if sp := spanOf(j); sp > cur {
		if err := txn.Set(keyHistSpan, be64(nil, max(sp, 0))); err != nil {
			return err
		}
		s.histSpan.Store(max(sp, 0) + 1)
	}
	return nil
}

// BackfillSpan computes the longest span of a history written before it
// was kept, once (holding the store: no run ends meanwhile, whose span
// the scan would miss).
func (s *Store) BackfillSpan() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var have bool
	var span int64
	err := s.view(func(txn *badger.Txn) error {
		if _, err := txn.Get(keyHistSpan); err == nil {
			have = true
			return nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistJob})
		defer it.Close()
		for it.Rewind(); it.ValidForPrefix(prefixHistJob); it.Next() {
			var h HistJob
			if err := it.Item().Value(func(v []byte) error { return decodeHistRecord(v, &h) }); err != nil {
				return err
			}
			span = max(span, spanOf(&h.Job))
		}
		return nil
	})
	if err != nil || have {
		return err
	}
	return s.commit(64, func(txn *wtxn) error {
		if err := txn.Set(keyHistSpan, be64(nil, span)); err != nil {
			return err
		}
		s.histSpan.Store(span + 1)
		return nil
	})
}

// RunsEnded calls fn for each run that ended in [from, to), in end order,
// without its steps (usage accounting).
func (s *Store) RunsEnded(from, to int64, fn func(*HistJob) bool) error {
	return s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistEnd})
		defer it.Close()
		for it.Seek(be64(append([]byte(nil), prefixHistEnd...), from)); it.ValidForPrefix(prefixHistEnd); it.Next() {
			k := it.Item().Key()
			if int64(binary.BigEndian.Uint64(k[len(prefixHistEnd):])) >= to {
				return nil
			}
			rec, err := txn.Get(append(append([]byte(nil), prefixHistJob...), k[len(k)-12:]...))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			} else if err != nil {
				return err
			}
			var h HistJob
			if err := rec.Value(func(v []byte) error { return decodeHistRecord(v, &h) }); err != nil {
				return err
			}
			if !fn(&h) {
				return nil
			}
		}
		return nil
	})
}

// PurgeHistory removes the runs that ended before cutoff, their index
// entries and steps (the retention). It returns how many went.
func (s *Store) PurgeHistory(cutoff time.Time) (int, error) {
	var doomed []*Job
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistEnd})
		defer it.Close()
		for it.Seek(prefixHistEnd); it.ValidForPrefix(prefixHistEnd); it.Next() {
			k := it.Item().Key()
			end := int64(binary.BigEndian.Uint64(k[len(prefixHistEnd):]))
			if end >= cutoff.Unix() {
				break
			}
			rk := append(append([]byte(nil), prefixHistJob...), k[len(k)-12:]...)
			item, err := txn.Get(rk)
			if err != nil {
				continue
			}
			var h HistJob
			if item.Value(func(v []byte) error { return decodeHistRecord(v, &h) }) == nil {
				doomed = append(doomed, &h.Job)
			}
		}
		return nil
	})
	if err != nil || len(doomed) == 0 {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	total := len(doomed)
	for len(doomed) > 0 {
		n := min(len(doomed), 500) // within a transaction's limits
		batch := doomed[:n]
		doomed = doomed[n:]
		err := s.commit(0, func(txn *wtxn) error {
			for _, j := range batch {
				rec, idx := histKeys(j)
				for _, k := range append(idx, rec) {
					if err := txn.Delete(k); err != nil {
						return err
					}
				}
				p := be32(append([]byte(nil), prefixHistStep...), j.ID)
				it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
				var sk [][]byte
				for it.Seek(p); it.ValidForPrefix(p); it.Next() {
					sk = append(sk, it.Item().KeyCopy(nil))
				}
				it.Close()
				for _, k := range sk {
					if err := txn.Delete(k); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}

// BackfillHistory writes the history records of finished jobs stored
// before the history existed (a store from an earlier version), once:
// afterwards it returns at once. Idempotent if interrupted.
func (s *Store) BackfillHistory() (int, error) {
	if b, err := s.Meta("history_backfilled"); err != nil || len(b) > 0 {
		return 0, err
	}
	var mu sync.Mutex // conv runs on several goroutines
	var done []*Job
	if _, err := LoadJobs(s, func(j *Job) struct{} {
		if jobFinal(j) && j.EndTime != 0 && j.State&0x8000 == 0 {
			c := *j
			mu.Lock()
			done = append(done, &c)
			mu.Unlock()
		}
		return struct{}{}
	}); err != nil {
		return 0, err
	}
	for i := 0; i < len(done); i += 500 {
		batch := done[i:min(i+500, len(done))]
		s.mu.Lock()
		_, hists, size := s.encodePut(batch)
		err := s.commit(size, func(txn *wtxn) error { return s.historyTxn(txn, batch, hists) })
		s.mu.Unlock()
		if err != nil {
			return i, err
		}
	}
	return len(done), s.PutMeta("history_backfilled", []byte("1"))
}

// jobRequeue is JOB_REQUEUE, the state flag of a run that was requeued
// (sacct: REQUEUED).
const jobRequeue = 1 << 10

// RequeueRun records that the run j (the job as it was before its
// requeue) was requeued, as slurmdbd keeps it: its record, written now
// if the run had not ended (a running job requeued) or changed if it had
// (a finished job requeued), carries JOB_REQUEUE beside the state it
// ended in (sacct shows REQUEUED; its batch step keeps the state).
func (s *Store) RequeueRun(j *Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commit(4096, func(txn *wtxn) error {
		rec, idx := histKeys(j)
		var h HistJob
		item, err := txn.Get(rec)
		switch {
		case err == nil:
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if err := decodeHistRecord(v, &h); err != nil {
				return err
			}
		case errors.Is(err, badger.ErrKeyNotFound):
			h = HistJob{Job: *j, ReqUID: noVal32}
			s.hist.peek(j.ID, &h)
			s.hist.drop(j.ID)
			if err := s.noteSpan(txn, j); err != nil {
				return err
			}
			if err := s.assocTxn(txn, j); err != nil {
				return err
			}
			for _, k := range idx {
				if err := txn.Set(k, nil); err != nil {
					return err
				}
			}
		default:
			return err
		}
		h.State |= jobRequeue
		return txn.Set(rec, appendHistRecord(nil, &h))
	})
}
