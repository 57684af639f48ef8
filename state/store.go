// Package state keeps what Slurm users expect and Backend.AI does not
// model: small integer job IDs, the job records, their scripts. It is
// durable (Badger, each change first synced to the store's own journal:
// journal.go) and serves reads from immutable snapshots swapped
// atomically.
package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
)

var (
	keyNextID   = []byte("meta/next_job_id")
	prefixJob   = []byte("job/")
	prefixScrpt = []byte("script/")
)

// ErrIDsExhausted is Submit's answer once the 32-bit job id space is used up.
var ErrIDsExhausted = errors.New("job id space exhausted")

// FirstJobID is where a fresh store starts counting, as slurmctld does.
const FirstJobID = 1

// Store is the durable job store.
type Store struct {
	db     *badger.DB
	dir    string
	jr     *journal      // what makes a commit durable (journal.go)
	ops    []byte        // the journal record's buffer, reused (s.mu)
	room   *room         // whether the file system can take a write (room.go)
	lock   *dirLock      // keeps a second server off the directory (lock.go)
	mu     sync.Mutex    // serializes ID allocation and writes
	reads  atomic.Uint64 // job records read back (JobReader.Read)
	nextID uint32
	// histSpan: the history's longest run span + 1 (history.go; 0 = not read yet).
	histSpan atomic.Int64
	// assocNext: the next association id (assoc.go; 0 = not read yet).
	assocNext uint32
	// cancelSeq: the last cancel log's sequence (cancellog.go).
	cancelSeq uint64
	// Close waits for the database's uses (acquire: open JobReaders,
	// views, commits; Badger panics on a transaction of a closed
	// database); uses begun once it started get ErrClosed, so one begun
	// inside another cannot deadlock it.
	rmu      sync.Mutex
	usesDone sync.Cond // signalled when uses drops to 0
	uses     int
	closed   bool

	hist histNotes // what a finished job's history record takes beyond the job (history.go)
}

// Closed reports whether Close was called (a background writer stops).
func (s *Store) Closed() bool {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.closed
}

// Open opens (creating if needed) the store in dir. It fails clearly if
// the directory is unusable.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	probe := filepath.Join(dir, ".probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return nil, fmt.Errorf("state dir %s is not writable: %w", dir, err)
	}
	os.Remove(probe)
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	jr, err := openJournal(dir)
	if err != nil {
		lock.release()
		return nil, err
	}
	var replay int64 // the journal's records go into Badger's log again
	jr.replay(func(ops []byte) error { replay += int64(len(ops)); return nil })
	rm := newRoom(dir)
	if err := rm.checkFlush(replay); err != nil {
		// Opening writes the log of the last run out as tables: without
		// the room for it Badger would die of SIGBUS (room.go).
		jr.close()
		lock.release()
		return nil, fmt.Errorf("not enough room to open the store (opening writes the log of the last run out as tables): %w", err)
	}
	opts := badger.DefaultOptions(dir).
		// Our lock instead of Badger's (lock.go).
		WithBypassLockGuard(true).
		// A change is durable once in the journal (journal.go), which
		// costs a quarter of Badger's own sync.
		WithSyncWrites(false).
		WithLogger(nil).
		WithNumVersionsToKeep(1).
		WithMemTableSize(16 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2).
		// Jobs are read at start, held and finished ones again when
		// looked at (a JobReader, mostly in sequence); scripts when a
		// job starts. A large block cache would only keep those scans
		// resident (Badger's default is 256 MB).
		WithBlockCacheSize(4 << 20)
	db, err := badger.Open(opts)
	if err != nil {
		jr.close()
		lock.release()
		return nil, fmt.Errorf("open state in %s: %w", dir, err)
	}
	if err := replayJournal(db, jr); err != nil {
		db.Close()
		jr.close()
		lock.release()
		return nil, err
	}
	s := &Store{db: db, dir: dir, jr: jr, room: rm, lock: lock, nextID: FirstJobID}
	s.usesDone.L = &s.rmu
	err = db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(keyNextID)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			if len(v) != 4 {
				return fmt.Errorf("corrupt next job id")
			}
			s.nextID = binary.BigEndian.Uint32(v)
			return nil
		})
	})
	if err != nil {
		db.Close()
		jr.close()
		lock.release()
		return nil, err
	}
	return s, nil
}

// replayJournal applies the journal's records to Badger (what a lost
// machine may have taken from Badger's unsynced log), then checkpoints.
func replayJournal(db *badger.DB, jr *journal) error {
	txn := db.NewTransaction(true)
	defer func() { txn.Discard() }()
	do := func(op byte, k, v []byte) error {
		if op == opSet {
			return txn.Set(k, v)
		}
		return txn.Delete(k)
	}
	_, err := jr.replay(func(ops []byte) error {
		// Badger keeps the slices until the commit; the journal's
		// buffer is reused for the next record.
		ops = append([]byte(nil), ops...)
		return eachOp(ops, func(op byte, k, v []byte) error {
			err := do(op, k, v)
			if errors.Is(err, badger.ErrTxnTooBig) {
				if err := txn.Commit(); err != nil {
					return err
				}
				txn = db.NewTransaction(true)
				err = do(op, k, v)
			}
			return err
		})
	})
	if err == nil {
		err = txn.Commit()
	}
	if err == nil {
		err = jr.checkpoint(func() error { return syncBadger(jr.dir) })
	}
	if err != nil {
		return fmt.Errorf("replay the store's journal: %w", err)
	}
	return nil
}

// Close flushes and closes the store.
func (s *Store) Close() error {
	s.rmu.Lock()
	if s.closed {
		s.rmu.Unlock()
		return nil
	}
	s.closed = true
	for s.uses > 0 {
		s.usesDone.Wait()
	}
	s.rmu.Unlock()
	if err := s.room.checkFlush(0); err != nil {
		// Closing writes the log out as tables, which this file system
		// cannot take (Badger would die of SIGBUS). Every change is in
		// Badger's log and the journal already and the next start
		// replays them: the database is left to the process's exit.
		return fmt.Errorf("state store left open: %w; the next start replays its log", err)
	}
	// Badger retries a failed table write for ever (a directory
	// removed under it, an I/O error): a server told to stop must stop.
	// What is not written out is in the log and the journal.
	done := make(chan error, 1)
	go func() { done <- s.db.Close() }()
	select {
	case err := <-done:
		if err == nil {
			// Badger wrote everything out: the next start has nothing
			// to replay.
			err = s.jr.checkpoint(func() error { return syncBadger(s.dir) })
		}
		s.jr.close()
		s.lock.release()
		return err
	case <-time.After(closeTimeout):
		return fmt.Errorf("state store did not close within %v (its tables cannot be written); left to the process's exit, the next start replays its log", closeTimeout)
	}
}

// closeTimeout bounds Close (a variable for tests).
var closeTimeout = 30 * time.Second

// acquire holds Close off for one use of the database (Badger panics on
// a transaction of a closed one: a background loop still at work when
// the server stops); false once Close has begun. It never waits, so a
// use inside another cannot deadlock Close.
func (s *Store) acquire() bool {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.closed {
		return false
	}
	s.uses++
	return true
}

// release ends a use acquire began.
func (s *Store) release() {
	s.rmu.Lock()
	if s.uses--; s.uses == 0 {
		s.usesDone.Broadcast()
	}
	s.rmu.Unlock()
}

// view is Badger's View, held against Close.
func (s *Store) view(fn func(txn *badger.Txn) error) error {
	if !s.acquire() {
		return ErrClosed
	}
	defer s.release()
	return s.db.View(fn)
}

// ErrClosed is what reading a closed store gives.
var ErrClosed = errors.New("state store closed")

func jobKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), prefixJob...), id)
}

func scriptKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), prefixScrpt...), id)
}

// NextID reports the ID the next submission will get.
func (s *Store) NextID() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextID
}

// ReserveID consumes one job ID without storing a job, as slurmctld does
// for a --test-only request (it creates a job record and purges it at
// once). The ID is durable like a submission's: never handed out again.
func (s *Store) ReserveID() (uint32, error) {
	var id uint32
	_, err := s.Submit(1, nil, func(first uint32) ([]*Job, error) {
		id = first
		return nil, nil
	})
	return id, err
}

// Submit allocates count consecutive job IDs (count > 1 for array tasks
// created at once; 1 otherwise), lets build fill the records, and writes
// them with their script in one synchronous transaction. The IDs are
// never handed out again, even if the process dies right after.
func (s *Store) Submit(count uint32, sc *Script, build func(firstID uint32) ([]*Job, error)) ([]*Job, error) {
	r := s.SubmitBatch([]Submission{{Count: count, Script: sc, Build: build}})
	return r[0].Jobs, r[0].Err
}

// Submission is one submission of a SubmitBatch: what Submit takes.
type Submission struct {
	Count  uint32
	Script *Script
	Build  func(firstID uint32) ([]*Job, error)
}

// Submitted is a Submission's outcome: its records, or why it failed.
type Submitted struct {
	Jobs []*Job
	Err  error
}

// SubmitBatch is Submit for several submissions at once (group commit):
// their IDs follow each other in the order given, and all of them are
// written in one synchronous transaction, one log sync for the batch
// where Submit each would take one each. A submission whose Build fails
// fails alone and takes no ID; if the write fails, every submission of
// the batch fails and no ID is used.
func (s *Store) SubmitBatch(subs []Submission) []Submitted {
	out := make([]Submitted, len(subs))
	s.mu.Lock()
	defer s.mu.Unlock()
	type rec struct {
		recs   [][]byte
		script []byte
		first  uint32
	}
	recs := make([]rec, len(subs))
	next := s.nextID
	size := int64(0)
	ok := 0
	for i, sub := range subs {
		count := max(sub.Count, 1)
		if uint64(next)+uint64(count) >= 0xFFFFFFF0 {
			out[i].Err = ErrIDsExhausted
			continue
		}
		jobs, err := sub.Build(next)
		if err == nil && sub.Script != nil {
			recs[i].script = appendScriptRecord(nil, sub.Script)
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		var n int64
		recs[i].recs, n = encodeJobs(jobs)
		recs[i].first = next
		size += n + int64(len(recs[i].script))
		out[i].Jobs = jobs
		next += count
		ok++
	}
	if ok == 0 {
		return out
	}
	err := s.commit(size, func(txn *wtxn) error {
		var nb [4]byte
		binary.BigEndian.PutUint32(nb[:], next)
		if err := txn.Set(keyNextID, nb[:]); err != nil {
			return err
		}
		type ua struct {
			uid  uint32
			acct string
		}
		seen := map[ua]bool{}
		for i := range subs {
			jobs := out[i].Jobs
			if out[i].Err != nil {
				continue
			}
			for k, j := range jobs {
				if err := txn.Set(jobKey(j.ID), recs[i].recs[k]); err != nil {
					return err
				}
			}
			if len(jobs) > 0 && !seen[ua{jobs[0].UserID, jobs[0].Account}] {
				// The user's association in the job's account, from its
				// submission on (one submission: one user and account).
				seen[ua{jobs[0].UserID, jobs[0].Account}] = true
				if err := s.assocTxn(txn, jobs[0]); err != nil {
					return err
				}
			}
			if recs[i].script != nil {
				if err := txn.Set(scriptKey(recs[i].first), recs[i].script); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("store job: %w", err)
		for i := range out {
			if out[i].Err == nil {
				out[i] = Submitted{Err: err}
			}
		}
		return out
	}
	s.nextID = next
	return out
}

// RaiseNextID makes the next job ID at least id (never lowers it): after
// an import of another cluster's history, new jobs continue its ids
// instead of reusing them.
func (s *Store) RaiseNextID(id uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id <= s.nextID || id >= 0xFFFFFFF0 {
		return nil
	}
	var nb [4]byte
	binary.BigEndian.PutUint32(nb[:], id)
	if err := s.commit(64, func(txn *wtxn) error { return txn.Set(keyNextID, nb[:]) }); err != nil {
		return err
	}
	s.nextID = id
	return nil
}

// Put writes updated job records durably.
func (s *Store) Put(jobs ...*Job) error {
	return s.put(jobs, 0, nil)
}

// put is Put; with more, what more sets (size bytes about) is written in
// the same transaction.
func (s *Store) put(jobs []*Job, size int64, more func(txn *wtxn) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, hists, n := s.encodePut(jobs)
	return s.commit(size+n, func(txn *wtxn) error {
		for i, j := range jobs {
			if err := txn.Set(jobKey(j.ID), recs[i]); err != nil {
				return err
			}
		}
		if err := s.historyTxn(txn, jobs, hists); err != nil {
			return err
		}
		if more != nil {
			return more(txn)
		}
		return nil
	})
}

// encodePut encodes Put's records: each job's, and the history record of
// each finished run (nil for the others), sharing the job's bytes; a
// large Put (scancel -u) is encoded by every CPU at once, outside the
// transaction.
func (s *Store) encodePut(jobs []*Job) (recs, hists [][]byte, size int64) {
	recs, hists = make([][]byte, len(jobs)), make([][]byte, len(jobs))
	sizes := make([]int64, len(jobs))
	one := func(i int) {
		j := jobs[i]
		recs[i] = appendJobRecord(nil, j)
		sizes[i] = int64(len(recs[i])) + 64
		if histable(j) {
			h := HistJob{Job: *j, ReqUID: noVal32}
			s.hist.peek(j.ID, &h)
			hists[i] = appendHistRecordOf(nil, &h, recs[i])
			sizes[i] += int64(len(hists[i])) + 5*64
		}
	}
	parallel(len(jobs), 256, one)
	for _, n := range sizes {
		size += n
	}
	return recs, hists, size
}

// parallel calls f(0..n-1), split over the CPUs when n reaches min.
func parallel(n, min int, f func(i int)) {
	w := runtime.GOMAXPROCS(0)
	if n < min || w < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + w - 1) / w
	for lo := 0; lo < n; lo += per {
		hi := lo + per
		if hi > n {
			hi = n
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// commit writes what fill sets in one transaction (s.mu held), size
// bytes about, once the file system can take them (room.go): otherwise
// nothing is written.
func (s *Store) commit(size int64, fill func(txn *wtxn) error) error {
	if err := s.room.check(size + s.jr.growth(size)); err != nil {
		return err
	}
	if !s.acquire() {
		return ErrClosed
	}
	defer s.release()
	txn := &wtxn{Txn: s.db.NewTransaction(true), ops: s.ops[:0]}
	defer txn.Discard()
	if err := fill(txn); err != nil {
		return err
	}
	if len(txn.ops) > 0 {
		// Durable in the journal first (journal.go): if this fails,
		// Badger never sees the change.
		err := s.jr.append(txn.ops, func() error { return syncBadger(s.dir) })
		if cap(txn.ops) <= 4<<20 {
			s.ops = txn.ops[:0]
		}
		if err != nil {
			return err
		}
	}
	if err := txn.Commit(); err != nil {
		// The journal holds the change and the next start applies it:
		// answer nothing more until then rather than tell a client its
		// change failed that a restart brings back.
		s.jr.broken = fmt.Errorf("store commit after its journal record: %w", err)
		return err
	}
	return nil
}

// encodeJobs encodes the records to write, and what they add to Badger's
// log (the records, their keys, the log's framing).
func encodeJobs(jobs []*Job) ([][]byte, int64) {
	recs := make([][]byte, len(jobs))
	n := int64(0)
	for i, j := range jobs {
		recs[i] = appendJobRecord(nil, j)
		n += int64(len(recs[i])) + 64
	}
	return recs, n
}

// JobReader reads job records in one read transaction: how callers that
// keep jobs in the store only (see LoadJobs) look at them. Close it when
// done; it is for one goroutine.
type JobReader struct {
	s   *Store // nil once closed, or if the store was
	txn *badger.Txn
	it  *badger.Iterator // opened on first Read
	key []byte
}

// JobReads is the number of job records read back from the store since
// it was opened (cold jobs looked at): the serving path's I/O, which the
// event loops must never do.
func (s *Store) JobReads() uint64 { return s.reads.Load() }

// NewJobReader starts a reader on the store's current state.
func (s *Store) NewJobReader() *JobReader {
	if !s.acquire() {
		return &JobReader{}
	}
	return &JobReader{s: s, txn: s.db.NewTransaction(false)}
}

// Read decodes job id's record into *j, overwriting every field. Reads
// in ascending ID order are the cheap case: the reader walks forward
// over the records (a squeue listing re-encoded chunk by chunk) instead
// of looking each one up through every level of the tree.
func (r *JobReader) Read(id uint32, j *Job) error {
	if r.s == nil {
		return fmt.Errorf("job %d: %w", id, ErrClosed)
	}
	r.s.reads.Add(1)
	r.key = binary.BigEndian.AppendUint32(append(r.key[:0], prefixJob...), id)
	if r.it == nil {
		r.it = r.txn.NewIterator(jobIterOpts())
	}
	r.position()
	if !r.it.Valid() || !bytes.Equal(r.it.Item().Key(), r.key) {
		return fmt.Errorf("job %d: %w", id, badger.ErrKeyNotFound)
	}
	if err := r.it.Item().Value(func(v []byte) error { return decodeJobRecord(v, j, nil) }); err != nil {
		return fmt.Errorf("job %d: %w", id, err)
	}
	return nil
}

// position moves the iterator to r.key, or to the record after it if
// there is none: a few steps forward when the key is just ahead, else a
// seek (backwards, far ahead, or after the end).
func (r *JobReader) position() {
	for n := 0; n < 8 && r.it.Valid(); n++ {
		switch c := bytes.Compare(r.it.Item().Key(), r.key); {
		case c == 0:
			return
		case c > 0 && n > 0:
			return // stepped past: no such record
		case c > 0:
			r.it.Seek(r.key) // behind us
			return
		}
		r.it.Next()
	}
	r.it.Seek(r.key)
}

// Close ends the reader's transaction.
func (r *JobReader) Close() {
	if r.s == nil {
		return
	}
	if r.it != nil {
		r.it.Close()
	}
	r.txn.Discard()
	s := r.s
	r.s = nil
	s.release()
}

// Jobs loads every job record, ordered by ID.
//
// With more than one CPU the records are decoded in batches by worker
// goroutines while the iterator reads ahead (see LoadJobs).
func (s *Store) Jobs() ([]*Job, error) {
	return LoadJobs(s, func(j *Job) *Job {
		c := new(Job)
		*c = *j
		return c
	})
}

// LoadJobs reads every job record, in ID order (keys are big-endian
// IDs under one prefix, which the iterator yields in order; callers
// depend on it), and returns what conv makes of each. conv's job is reused after
// it returns (copy what you keep), and conv is called from several
// goroutines at once. Callers that leave most jobs in the store (and
// read them back with a JobReader) use it so that no decoded copy of
// every job is held, even briefly.
func LoadJobs[T any](s *Store, conv func(j *Job) T) ([]T, error) {
	workers := runtime.GOMAXPROCS(0)
	if workers > 4 {
		workers = 4
	}
	var (
		out []T
		err error
	)
	if workers < 2 {
		out, err = jobsSeq(s, conv)
	} else {
		out, err = jobsPar(s, workers, conv)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func jobIterOpts() badger.IteratorOptions {
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefixJob
	// Job records are far below the value threshold, so their values
	// live in the LSM tree next to the keys and Item.Value costs nothing.
	// Badger's prefetch starts a goroutine per item to fetch values
	// from the value log; for inline values that only costs (2.4x
	// slower at 10,000 records).
	opts.PrefetchValues = false
	return opts
}

func jobsSeq[T any](s *Store, conv func(*Job) T) ([]T, error) {
	var out []T
	var in interner
	var j Job
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(jobIterOpts())
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			if err := item.Value(func(v []byte) error {
				if err := decodeJobRecord(v, &j, &in); err != nil {
					return err
				}
				out = append(out, conv(&j))
				return nil
			}); err != nil {
				return fmt.Errorf("job record %x: %w", item.Key(), err)
			}
		}
		return nil
	})
	return out, err
}

// rawJobs is a run of consecutive raw records handed to a decoder; its
// buffers are recycled once decoded (decoding copies the strings out).
type rawJobs struct {
	buf  []byte // the records back to back
	ends []int  // end offset of each record in buf
	keys []byte // the 4-byte IDs of the keys, for error messages
}

// jobBatch is what became of one rawJobs.
type jobBatch[T any] struct {
	raw *rawJobs
	out []T
	err error
}

const jobBatchLen = 1024

func jobsPar[T any](s *Store, workers int, conv func(*Job) T) ([]T, error) {
	var (
		batches []*jobBatch[T]
		wg      sync.WaitGroup
		work    = make(chan *jobBatch[T], workers)
		free    = make(chan *rawJobs, 2*workers+1)
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in interner
			var j Job
			for b := range work {
				r := b.raw
				b.raw = nil
				b.out = make([]T, 0, len(r.ends))
				start := 0
				for k, end := range r.ends {
					rec := r.buf[start:end]
					if err := decodeJobRecord(rec, &j, &in); err != nil {
						b.err = fmt.Errorf("job record %x%x: %w", prefixJob, r.keys[4*k:4*k+4], err)
						break
					}
					b.out = append(b.out, conv(&j))
					start = end
				}
				r.buf, r.ends, r.keys = r.buf[:0], r.ends[:0], r.keys[:0]
				select {
				case free <- r:
				default:
				}
			}
		}()
	}
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(jobIterOpts())
		defer it.Close()
		var cur *rawJobs
		send := func() {
			b := &jobBatch[T]{raw: cur}
			batches = append(batches, b)
			work <- b
			cur = nil
		}
		for it.Rewind(); it.Valid(); it.Next() {
			if cur == nil {
				select {
				case cur = <-free:
				default:
					cur = &rawJobs{buf: make([]byte, 0, 256<<10), ends: make([]int, 0, jobBatchLen), keys: make([]byte, 0, 4*jobBatchLen)}
				}
			}
			item := it.Item()
			if err := item.Value(func(v []byte) error {
				cur.buf = append(cur.buf, v...)
				return nil
			}); err != nil {
				return err
			}
			k := item.Key()[len(prefixJob):]
			if len(k) != 4 {
				return fmt.Errorf("corrupt job key %x", item.Key())
			}
			cur.keys = append(cur.keys, k...)
			cur.ends = append(cur.ends, len(cur.buf))
			if len(cur.ends) == jobBatchLen {
				send()
			}
		}
		if cur != nil {
			send()
		}
		return nil
	})
	close(work)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	n := 0
	for _, b := range batches {
		if b.err != nil {
			return nil, b.err
		}
		n += len(b.out)
	}
	out := make([]T, 0, n)
	for _, b := range batches {
		out = append(out, b.out...)
	}
	return out, nil
}

// Script returns the script stored with the submission whose first job
// ID is id.
func (s *Store) Script(id uint32) (*Script, error) {
	var sc Script
	err := s.view(func(txn *badger.Txn) error {
		it, err := txn.Get(scriptKey(id))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error { return decodeScriptRecord(v, &sc) })
	})
	if err != nil {
		return nil, err
	}
	return &sc, nil
}

// prefixMeta holds the controller's small records other than jobs (the
// engine's last topology).
var prefixMeta = []byte("meta/x/")

// PutMeta records value under name (a few KiB at most).
func (s *Store) PutMeta(name string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commit(int64(len(name)+len(value))+64, func(txn *wtxn) error {
		return txn.Set(append(append([]byte(nil), prefixMeta...), name...), value)
	})
}

// Meta reads what PutMeta recorded under name (nil, nil when nothing).
func (s *Store) Meta(name string) ([]byte, error) {
	var out []byte
	err := s.view(func(txn *badger.Txn) error {
		it, err := txn.Get(append(append([]byte(nil), prefixMeta...), name...))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		out, err = it.ValueCopy(nil)
		return err
	})
	return out, err
}
