// Package state keeps what Slurm users expect and Backend.AI does not
// model: small integer job IDs, the job records, their scripts. It is
// durable (Badger, synchronous writes) and serves reads from immutable
// snapshots swapped atomically.
package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

var (
	keyNextID   = []byte("meta/next_job_id")
	prefixJob   = []byte("job/")
	prefixScrpt = []byte("script/")
)

// FirstJobID is where a fresh store starts counting, as slurmctld does.
const FirstJobID = 1

// Store is the durable job store.
type Store struct {
	db     *badger.DB
	mu     sync.Mutex // serializes ID allocation and writes
	nextID uint32
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
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(true). // a job acknowledged to a client survives a crash
		WithLogger(nil).
		WithNumVersionsToKeep(1).
		WithMemTableSize(16 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open state in %s: %w", dir, err)
	}
	s := &Store{db: db, nextID: FirstJobID}
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
		return nil, err
	}
	return s, nil
}

// Close flushes and closes the store.
func (s *Store) Close() error { return s.db.Close() }

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

// Submit allocates count consecutive job IDs (count > 1 for array tasks
// created at once; 1 otherwise), lets build fill the records, and writes
// them with their script in one synchronous transaction. The IDs are
// never handed out again, even if the process dies right after.
func (s *Store) Submit(count uint32, sc *Script, build func(firstID uint32) ([]*Job, error)) ([]*Job, error) {
	if count == 0 {
		count = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.nextID
	if uint64(first)+uint64(count) >= 0xFFFFFFF0 {
		return nil, fmt.Errorf("job id space exhausted")
	}
	jobs, err := build(first)
	if err != nil {
		return nil, err
	}
	next := first + count
	err = s.db.Update(func(txn *badger.Txn) error {
		var nb [4]byte
		binary.BigEndian.PutUint32(nb[:], next)
		if err := txn.Set(keyNextID, nb[:]); err != nil {
			return err
		}
		for _, j := range jobs {
			v, err := json.Marshal(j)
			if err != nil {
				return err
			}
			if err := txn.Set(jobKey(j.ID), v); err != nil {
				return err
			}
		}
		if sc != nil {
			v, err := json.Marshal(sc)
			if err != nil {
				return err
			}
			if err := txn.Set(scriptKey(first), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store job: %w", err)
	}
	s.nextID = next
	return jobs, nil
}

// Put writes updated job records durably.
func (s *Store) Put(jobs ...*Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db.Update(func(txn *badger.Txn) error {
		for _, j := range jobs {
			v, err := json.Marshal(j)
			if err != nil {
				return err
			}
			if err := txn.Set(jobKey(j.ID), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// Jobs loads every job record, ordered by ID.
func (s *Store) Jobs() ([]*Job, error) {
	var out []*Job
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefixJob
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var j Job
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &j) }); err != nil {
				return err
			}
			out = append(out, &j)
		}
		return nil
	})
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, err
}

// Script returns the script stored with the submission whose first job
// ID is id.
func (s *Store) Script(id uint32) (*Script, error) {
	var sc Script
	err := s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(scriptKey(id))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error { return json.Unmarshal(v, &sc) })
	})
	if err != nil {
		return nil, err
	}
	return &sc, nil
}
