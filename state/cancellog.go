package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// The cancel log. A bulk cancel of pending jobs (scancel -u of 100,000
// of them) is acknowledged once one small record naming them is on disk:
// rewriting every job's record and writing its accounting record takes
// seconds, and is done after the answer, a chunk at a time, by the
// controller (which shows the jobs cancelled meanwhile). A restart finds
// the log and finishes the work; the log is dropped once it is done.
//
// A record: key prefixCancel + 8-byte sequence; value zstd(varint when,
// varint uid, varint count, varint deltas of the ascending job ids).

var (
	prefixCancel     = []byte("cancel/")
	prefixCancelDone = []byte("cancelp/") // + sequence: the highest id written (PutCancelled)
)

// CancelLog is one bulk cancel: jobs IDs cancelled at At by UID, those up
// to Done already written into their records.
type CancelLog struct {
	Seq  uint64
	At   int64
	UID  uint32
	IDs  []uint32 // ascending
	Done uint32
}

// LogCancels durably records that ids (pending jobs) were cancelled at
// at by uid, and returns the record's sequence for DropCancelLog.
func (s *Store) LogCancels(ids []uint32, at int64, uid uint32) (uint64, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	b := binary.AppendUvarint(nil, uint64(at))
	b = binary.AppendUvarint(b, uint64(uid))
	b = binary.AppendUvarint(b, uint64(len(ids)))
	prev := uint32(0)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	v := zenc.EncodeAll(b, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := uint64(time.Now().UnixNano())
	if seq <= s.cancelSeq {
		seq = s.cancelSeq + 1
	}
	s.cancelSeq = seq
	err := s.commit(int64(len(v))+64, func(txn *wtxn) error {
		return txn.Set(cancelKey(seq), v)
	})
	return seq, err
}

// CancelLogs returns the cancel logs not yet dropped, oldest first.
func (s *Store) CancelLogs() ([]CancelLog, error) {
	var out []CancelLog
	err := s.view(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = prefixCancel
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != len(prefixCancel)+8 {
				return fmt.Errorf("cancel log: bad key %q", k)
			}
			l := CancelLog{Seq: binary.BigEndian.Uint64(k[len(prefixCancel):])}
			if err := it.Item().Value(func(v []byte) error { return decodeCancelLog(v, &l) }); err != nil {
				return fmt.Errorf("cancel log %d: %w", l.Seq, err)
			}
			out = append(out, l)
		}
		for i := range out {
			item, err := txn.Get(cancelDoneKey(out[i].Seq))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := item.Value(func(v []byte) error {
				if len(v) != 4 {
					return fmt.Errorf("cancel log %d: bad progress", out[i].Seq)
				}
				out[i].Done = binary.BigEndian.Uint32(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// PutCancelled is Put for the jobs of cancel log seq, ascending, up to
// id upTo: with their records, in the same transaction, the log notes
// that every one up to upTo is written (a restart redoes only the rest).
func (s *Store) PutCancelled(seq uint64, upTo uint32, jobs ...*Job) error {
	return s.put(jobs, 64, func(txn *wtxn) error {
		return txn.Set(cancelDoneKey(seq), binary.BigEndian.AppendUint32(nil, upTo))
	})
}

// DropCancelLog removes a cancel log whose work is done.
func (s *Store) DropCancelLog(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commit(64, func(txn *wtxn) error {
		if err := txn.Delete(cancelKey(seq)); err != nil {
			return err
		}
		return txn.Delete(cancelDoneKey(seq))
	})
}

func cancelKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixCancel...), seq)
}

func cancelDoneKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixCancelDone...), seq)
}

var errCancelLog = errors.New("truncated or corrupt record")

func decodeCancelLog(v []byte, l *CancelLog) error {
	b, err := zdec.DecodeAll(v, nil)
	if err != nil {
		return err
	}
	next := func() (uint64, error) {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errCancelLog
		}
		b = b[n:]
		return x, nil
	}
	at, err := next()
	if err != nil {
		return err
	}
	uid, err := next()
	if err != nil || uid > 0xFFFFFFFF {
		return errCancelLog
	}
	n, err := next()
	if err != nil || n > uint64(len(b)) { // a varint takes a byte at least
		return errCancelLog
	}
	l.At, l.UID, l.IDs = int64(at), uint32(uid), make([]uint32, 0, n)
	prev := uint64(0)
	for range n {
		d, err := next()
		if err != nil {
			return err
		}
		prev += d
		if prev > 0xFFFFFFFF {
			return errCancelLog
		}
		l.IDs = append(l.IDs, uint32(prev))
	}
	if len(b) != 0 {
		return errCancelLog
	}
	return nil
}
