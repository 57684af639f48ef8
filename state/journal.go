package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"golang.org/x/sys/unix"
)

// The store's own write-ahead journal: what makes a commit durable.
//
// Badger's synchronous commit msyncs its whole log mapping (an fsync
// that also writes the inode's new times, so a file-system journal
// commit each time) and then faults again on the page it writes next:
// about 250 µs of CPU and 450 µs of wall time a commit here. A record
// appended with pwrite into a file of already written zeros and made
// durable with fdatasync changes no metadata: about a quarter of that
// CPU and half the wall time. So Badger runs with synchronous writes
// off and every change is first written here:
//
//   - commit: the transaction's sets and deletes become one record,
//     written and fdatasync'ed before Badger commits it (so a failed
//     journal write leaves nothing behind, and Badger never holds a
//     change the journal lacks). A killed process loses nothing either
//     way (Badger's log is in the page cache); a lost machine loses
//     nothing the journal acknowledged.
//   - open: the records of the current generation are applied to Badger
//     again (whole-value sets and deletes in their order: applying them
//     over any older state gives the same state), then a checkpoint.
//   - checkpoint: every file of Badger's is fsync'ed, then the header's
//     generation is bumped; the file is written again from the start,
//     and records of older generations are not read. Done when the file
//     reaches journalMax, at open and at a clean close.
//
// Layout: a header block (magic, generation, CRC) and records, each
// crc32c(gen|len|ops) | gen | len | ops, ops being 's' key value or
// 'd' key, lengths as uvarints.
const (
	journalName  = "journal"
	journalHdr   = 4096
	journalMagic = "SFJ1"
	recHdr       = 12
)

// Sizes (variables for tests): the file grows in journalStep pieces of
// written zeros (so that appends change no metadata) up to journalMax,
// then wraps after a checkpoint.
var (
	journalStep = int64(1 << 20)
	journalMax  = int64(64 << 20)
)

// ErrJournalRemoved: the journal's file is no longer in the state
// directory, so what it is given would not survive a restart.
var ErrJournalRemoved = errors.New("the state directory's journal was removed while the server ran; restart the server")

// journalSync makes the journal's writes durable (tests make it fail).
var journalSync = unix.Fdatasync

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type journal struct {
	dir  string
	f    *os.File
	gen  uint32
	off  int64 // where the next record goes
	size int64 // bytes written (zeros beyond off)
	buf  []byte
	// broken: a write that failed. What it held may or may not be on
	// disk, so nothing more is acknowledged until a restart replays
	// what is there.
	broken error
}

// openJournal opens (creating if needed) dir's journal.
func openJournal(dir string) (*journal, error) {
	path := filepath.Join(dir, journalName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &journal{dir: dir, f: f, size: st.Size(), off: journalHdr}
	if j.size < journalHdr {
		// New (or cut short before its header was ever synced: it held
		// nothing).
		j.size = journalHdr
		if err := f.Truncate(journalHdr); err != nil {
			f.Close()
			return nil, fmt.Errorf("journal: %w", err)
		}
		if err := j.writeHeader(1); err != nil {
			f.Close()
			return nil, err
		}
		if err := syncDir(dir); err != nil {
			f.Close()
			return nil, fmt.Errorf("journal: %w", err)
		}
		return j, nil
	}
	var h [12]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	if string(h[:4]) != journalMagic || crc32.Checksum(h[:8], castagnoli) != binary.BigEndian.Uint32(h[8:]) {
		f.Close()
		return nil, fmt.Errorf("journal %s: header is not a journal's (corrupt); the store's latest changes may be in it", path)
	}
	j.gen = binary.BigEndian.Uint32(h[4:])
	return j, nil
}

func (j *journal) writeHeader(gen uint32) error {
	var h [12]byte
	copy(h[:4], journalMagic)
	binary.BigEndian.PutUint32(h[4:], gen)
	binary.BigEndian.PutUint32(h[8:], crc32.Checksum(h[:8], castagnoli))
	if _, err := j.f.WriteAt(h[:], 0); err != nil {
		return fmt.Errorf("journal header: %w", err)
	}
	if err := journalSync(int(j.f.Fd())); err != nil {
		return fmt.Errorf("journal header: %w", err)
	}
	j.gen = gen
	return nil
}

// replay calls apply with each record's ops of the current generation,
// in order, up to the first that is not whole (the one being written
// when the machine stopped). It returns how many it applied.
func (j *journal) replay(apply func(ops []byte) error) (int, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(j.f, journalHdr, j.size-journalHdr), 1<<20)
	n := 0
	var h [recHdr]byte
	var ops []byte
	for off := int64(journalHdr); ; {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return n, nil
		}
		gen, l := binary.BigEndian.Uint32(h[4:]), int64(binary.BigEndian.Uint32(h[8:]))
		if gen != j.gen || l == 0 || off+recHdr+l > j.size {
			return n, nil
		}
		if int64(cap(ops)) < l {
			ops = make([]byte, l)
		}
		ops = ops[:l]
		if _, err := io.ReadFull(r, ops); err != nil {
			return n, nil
		}
		c := crc32.Update(crc32.Checksum(h[4:], castagnoli), castagnoli, ops)
		if c != binary.BigEndian.Uint32(h[:4]) {
			return n, nil
		}
		if err := apply(ops); err != nil {
			return n, fmt.Errorf("journal record at %d: %w", off, err)
		}
		n++
		off += recHdr + l
	}
}

// append makes ops durable as one record; checkpoint is how the
// journal makes Badger's files durable when it wraps.
func (j *journal) append(ops []byte, checkpoint func() error) error {
	if j.broken != nil {
		return j.broken
	}
	need := int64(recHdr + len(ops))
	if j.off+need > j.size {
		if err := j.room(need, checkpoint); err != nil {
			return err
		}
	}
	b := j.buf[:0]
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, j.gen)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ops)))
	b = append(b, ops...)
	binary.BigEndian.PutUint32(b, crc32.Checksum(b[4:], castagnoli))
	j.buf = b[:0]
	if _, err := j.f.WriteAt(b, j.off); err != nil {
		return j.fail("write", err)
	}
	fd := int(j.f.Fd())
	if err := journalSync(fd); err != nil {
		return j.fail("sync", err)
	}
	// A journal removed under the server (its state directory deleted)
	// still takes writes, but no restart will find them: the change is
	// refused, not acknowledged and lost. One fstat per batch.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil && st.Nlink == 0 {
		return j.fail("write", ErrJournalRemoved)
	}
	j.off += need
	if cap(j.buf) > 4<<20 {
		j.buf = nil // one huge transaction's buffer is not kept
	}
	return nil
}

// fail marks the journal broken after a record's write or sync failed.
// The client is told the change failed, so the record is wiped as well
// as the disk still lets it be (its header zeroed): a restart should not
// bring it back.
func (j *journal) fail(what string, err error) error {
	var z [recHdr]byte
	j.f.WriteAt(z[:], j.off)
	j.broken = fmt.Errorf("journal %s: %w", what, err)
	return j.broken
}

// room makes the file hold need more bytes at off: it grows (zeros,
// synced) up to journalMax, and beyond that, or when the file system is
// full, wraps after a checkpoint.
func (j *journal) room(need int64, checkpoint func() error) error {
	limit := max(journalMax, journalHdr+need)
	if j.off+need > limit && j.off > journalHdr {
		if err := j.checkpoint(checkpoint); err != nil {
			return err
		}
		if j.off+need <= j.size {
			return nil
		}
	}
	err := j.grow(j.off + need)
	if err != nil && j.off > journalHdr {
		// No room to grow: what is written can be let go instead.
		if cerr := j.checkpoint(checkpoint); cerr != nil {
			return cerr
		}
		if j.off+need <= j.size {
			return nil
		}
		err = j.grow(j.off + need)
	}
	return err
}

// growth is what the file may grow by to take a record of about n
// bytes (the room a change needs beside Badger's: room.go).
func (j *journal) growth(n int64) int64 {
	if j.off+recHdr+n <= j.size {
		return 0
	}
	return (recHdr + n + journalStep - 1) / journalStep * journalStep
}

var zeros = make([]byte, 64<<10)

// grow writes zeros up to at least to (whole steps), and syncs them.
func (j *journal) grow(to int64) error {
	to = (to + journalStep - 1) / journalStep * journalStep
	for off := j.size; off < to; {
		n := min(int64(len(zeros)), to-off)
		if _, err := j.f.WriteAt(zeros[:n], off); err != nil {
			j.f.Truncate(j.size) // give back what was taken
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
				return &FSError{Dir: j.dir, Errno: syscall.ENOSPC, Need: to - j.size}
			}
			return fmt.Errorf("journal: %w", err)
		}
		off += n
	}
	if err := journalSync(int(j.f.Fd())); err != nil {
		j.f.Truncate(j.size)
		return fmt.Errorf("journal: %w", err)
	}
	j.size = to
	return nil
}

// checkpoint lets go of the records: once makeDurable has made Badger's
// files durable, the next generation starts at the beginning.
func (j *journal) checkpoint(makeDurable func() error) error {
	if makeDurable != nil {
		if err := makeDurable(); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if err := j.writeHeader(j.gen + 1); err != nil {
		j.broken = err
		return err
	}
	j.off = journalHdr
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// syncBadger makes every file of Badger's in dir durable (its log of
// the memtable in use and of those waiting to be written out, its value
// log, tables and manifest), then the directory: after it, Badger holds
// everything the journal does.
func syncBadger(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		// Not the lock file: closing any descriptor of it drops the
		// process's lock (lock.go).
		if !e.Type().IsRegular() || name == journalName || name == lockName || strings.HasPrefix(name, ".") {
			continue
		}
		if err := syncFile(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return syncDir(dir)
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error { return syncFile(dir) }

// The ops a write transaction records for the journal.
const (
	opSet    = 's'
	opDelete = 'd'
)

// wtxn is a write transaction whose sets and deletes are also recorded,
// as the journal's record of it.
type wtxn struct {
	*badger.Txn
	ops []byte
}

// Set is Badger's Set, recorded.
func (t *wtxn) Set(k, v []byte) error {
	if err := t.Txn.Set(k, v); err != nil {
		return err
	}
	t.ops = append(t.ops, opSet)
	t.ops = binary.AppendUvarint(t.ops, uint64(len(k)))
	t.ops = append(t.ops, k...)
	t.ops = binary.AppendUvarint(t.ops, uint64(len(v)))
	t.ops = append(t.ops, v...)
	return nil
}

// Delete is Badger's Delete, recorded.
func (t *wtxn) Delete(k []byte) error {
	if err := t.Txn.Delete(k); err != nil {
		return err
	}
	t.ops = append(t.ops, opDelete)
	t.ops = binary.AppendUvarint(t.ops, uint64(len(k)))
	t.ops = append(t.ops, k...)
	return nil
}

var errBadOps = errors.New("malformed journal record")

// eachOp calls f for each op of a record (v nil for a delete).
func eachOp(ops []byte, f func(op byte, k, v []byte) error) error {
	field := func() ([]byte, error) {
		n, w := binary.Uvarint(ops)
		if w <= 0 || n > uint64(len(ops)-w) {
			return nil, errBadOps
		}
		b := ops[w : w+int(n)]
		ops = ops[w+int(n):]
		return b, nil
	}
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		k, err := field()
		if err != nil {
			return err
		}
		var v []byte
		switch op {
		case opSet:
			if v, err = field(); err != nil {
				return err
			}
			if v == nil {
				v = []byte{}
			}
		case opDelete:
		default:
			return errBadOps
		}
		if err := f(op, k, v); err != nil {
			return err
		}
	}
	return nil
}
