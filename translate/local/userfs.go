package local

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// cred is the identity a job runs as.
type cred struct {
	uid, gid uint32
	groups   []uint32
}

// asUser runs fn on a dedicated OS thread whose filesystem identity
// (fsuid, fsgid and supplementary groups) is the user's, so that files fn
// creates belong to the user and every permission check is the user's
// (as slurmstepd does after dropping privileges). Linux keeps these
// credentials per thread; the raw syscalls change only this thread, which
// is never unlocked and so is discarded when fn returns.
func asUser(c cred, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread dies with this goroutine.
		if err := threadSetIDs(c); err != nil {
			errc <- &identityError{c, err}
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// identityError: the thread could not take the user's identity.
type identityError struct {
	c   cred
	err error
}

func (e *identityError) Error() string {
	return fmt.Sprintf("cannot act as uid %d gid %d groups %v: %v", e.c.uid, e.c.gid, e.c.groups, e.err)
}

func (e *identityError) Unwrap() error { return e.err }

func threadSetIDs(c cred) error {
	gs := c.groups
	if len(gs) == 0 {
		gs = []uint32{c.gid}
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(gs)), uintptr(unsafe.Pointer(&gs[0])), 0); e != 0 {
		return e
	}
	syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(c.gid), 0, 0)
	syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(c.uid), 0, 0)
	// setfs[ug]id return the previous value and report no errors; ask
	// again to check the change took.
	if r, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, ^uintptr(0), 0, 0); uint32(r) != c.uid {
		return syscall.EPERM
	}
	if r, _, _ := syscall.RawSyscall(syscall.SYS_SETFSGID, ^uintptr(0), 0, 0); uint32(r) != c.gid {
		return syscall.EPERM
	}
	return nil
}
