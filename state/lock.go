package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// lockName is the state directory's lock file (not Badger's "LOCK").
const lockName = "server.lock"

// dirLock keeps a second server off the state directory. It is a POSIX
// record lock, which belongs to the process, not Badger's flock of the
// directory, which belongs to the open file and so to every child that
// has a copy of it: a job's shim forked at the moment the server was
// killed (between clone and exec) held the flock on, and the restart
// was turned away ("Another process is using this Badger database").
// A record lock is never inherited and goes with the process that took
// it. It is also dropped when this process closes any descriptor of the
// file, so the file is opened here once and nowhere else.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state lock: %w", err)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		held := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
		who := ""
		if syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &held) == nil && held.Type != syscall.F_UNLCK {
			who = " by pid " + strconv.Itoa(int(held.Pid))
		}
		f.Close()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return nil, fmt.Errorf("state directory %s is in use%s (another server)", dir, who)
		}
		return nil, fmt.Errorf("state lock %s: %w", path, err)
	}
	// The holder's pid, for an operator looking (the lock itself says
	// who holds it; this is only a label).
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
