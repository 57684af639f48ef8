package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Badger writes its log (the memtable's .mem file) and its tables through
// memory maps of sparse files. A page the file system cannot back, full
// or made read-only under the server, does not fail the write: the
// kernel sends SIGBUS and the whole server dies ("fatal error: fault" in
// Badger's write goroutine), in the middle of an answer, and again at
// every restart while the disk stays full (opening replays the log into
// tables). So the store looks before Badger writes: a read-only file
// system refuses every change (EROFS), and one without the room the
// change may make Badger take refuses it (ENOSPC). The room a write may
// take is the write itself, the log not yet written out as tables (a
// flush, when the memtable fills, writes about that much), the tables (a
// compaction rewrites them before it deletes the old ones) and a margin
// for Badger's small files and the engine's spool beside the store.
//
// Nothing is written, so nothing acknowledged is at risk: the caller
// answers with an error and the client may try again once there is
// room, which the next write sees.

// roomMargin is what the store leaves free beyond what Badger may need.
const roomMargin = 1 << 20

// FSError is a change the store refused because its file system could
// not take it safely: Errno is syscall.EROFS (read-only) or ENOSPC (Free
// bytes left, Need wanted), so errors.Is(err, syscall.ENOSPC) works.
type FSError struct {
	Dir        string
	Errno      syscall.Errno
	Free, Need int64
}

func (e *FSError) Error() string {
	if e.Errno == syscall.ENOSPC {
		return fmt.Sprintf("state dir %s: %s free, %s needed to write safely (%v)", e.Dir, mib(e.Free), mib(e.Need), e.Errno)
	}
	return fmt.Sprintf("state dir %s: %v", e.Dir, e.Errno)
}

func (e *FSError) Unwrap() error { return e.Errno }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// room tracks what a write into the store may take.
type room struct {
	dir string

	mu      sync.Mutex
	scanned time.Time // last scan of the directory (monotonic)
	log     int64     // allocated bytes of the .mem files at the scan
	tables  int64     // bytes of the .sst files at the scan
	since   int64     // bytes written since the scan
	touched time.Time // last touch of the directory (monotonic)
	roErr   bool      // what that touch found: read-only
	statfs  func(string, *unix.Statfs_t) error
	touch   func(string) error
}

// The file system calls room makes (tests replace them).
var (
	roomStatfs = unix.Statfs
	roomTouch  = touchDir
)

func newRoom(dir string) *room { return &room{dir: dir, statfs: roomStatfs, touch: roomTouch} }

// rescanEvery bounds how long the scan of the directory is trusted;
// between scans the bytes written are added to the log's size.
const rescanEvery = 250 * time.Millisecond

func (r *room) scan() {
	r.log, r.tables, r.since = 0, 0, 0
	r.scanned = time.Now()
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".mem") && !strings.HasSuffix(name, ".sst") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(r.dir, name), &st) != nil {
			continue
		}
		if strings.HasSuffix(name, ".mem") {
			r.log += st.Blocks * 512 // sparse: what is written so far
		} else {
			r.tables += st.Size
		}
	}
}

// need is what writing n bytes may take; withTables false: what writing
// out Badger's log (a flush) takes.
func (r *room) need(n int64, withTables bool) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.scanned) > rescanEvery {
		r.scan()
	}
	need := roomMargin + r.log + r.since + n
	if withTables {
		need += r.tables
	}
	return need
}

// wrote counts n bytes written since the last scan.
func (r *room) wrote(n int64) {
	r.mu.Lock()
	r.since += n
	r.mu.Unlock()
}

// readOnly reports a file system that takes no change: mounted
// read-only (statfs says so), or made read-only by the kernel after an
// error (ext4's errors=remount-ro marks it "emergency_ro", which statfs
// and access(2) do not show): touching the directory's times is the
// cheapest change that needs the file system's journal, and it fails
// with EROFS there.
// The touch is a metadata write of its own: it is made at most every
// rescanEvery (a read-only file system is noticed that late at most),
// not once per write.
func (r *room) readOnly(st *unix.Statfs_t) bool {
	if st.Flags&unix.ST_RDONLY != 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.touched.IsZero() || time.Since(r.touched) > rescanEvery {
		r.touched = time.Now()
		r.roErr = errors.Is(r.touch(r.dir), syscall.EROFS)
	}
	return r.roErr
}

func touchDir(dir string) error {
	return unix.UtimesNanoAt(unix.AT_FDCWD, dir, []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}, 0)
}

// check refuses a write of n bytes the file system cannot take safely.
func (r *room) check(n int64) error {
	var st unix.Statfs_t
	if err := r.statfs(r.dir, &st); err != nil {
		return nil // cannot tell: let Badger try
	}
	if r.readOnly(&st) {
		return &FSError{Dir: r.dir, Errno: syscall.EROFS}
	}
	free := int64(st.Bavail) * st.Bsize
	if need := r.need(n, true); free < need {
		return &FSError{Dir: r.dir, Errno: syscall.ENOSPC, Free: free, Need: need}
	}
	r.wrote(n)
	return nil
}

// checkFlush refuses what writes out Badger's log (opening the store,
// closing it) when the file system cannot take it; extra is what else
// goes into the log (the journal's records, replayed at open).
func (r *room) checkFlush(extra int64) error {
	var st unix.Statfs_t
	if err := r.statfs(r.dir, &st); err != nil {
		return nil
	}
	r.mu.Lock()
	r.scanned = time.Time{} // exact figures
	r.touched = time.Time{}
	r.mu.Unlock()
	if r.readOnly(&st) {
		return &FSError{Dir: r.dir, Errno: syscall.EROFS}
	}
	free := int64(st.Bavail) * st.Bsize
	if need := r.need(extra, false); free < need {
		return &FSError{Dir: r.dir, Errno: syscall.ENOSPC, Free: free, Need: need}
	}
	return nil
}
