package state

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/stretchr/testify/require"
)

// lockHelperEnv makes the test binary a server stand-in: it opens the
// store in the named directory, starts a child that holds a copy of
// every descriptor it has (what a shim forked at the moment of a kill
// holds until its exec), prints the child's pid and waits to be killed.
const lockHelperEnv = "STATE_LOCK_HELPER_DIR"

func init() {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		return
	}
	s, err := Open(dir)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(2)
	}
	_ = s
	var files []*os.File
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			files = append(files, os.NewFile(uintptr(fd), e.Name()))
		}
	}
	child := exec.Command("sleep", "300")
	child.ExtraFiles = files
	if err := child.Start(); err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(2)
	}
	os.Stdout.WriteString("child " + strconv.Itoa(child.Process.Pid) + "\n")
	select {}
}

// A server killed while a child held copies of its descriptors is
// restarted at once: the state lock went with the process. A second
// server while the first lives is turned away, told which pid has it.
func TestStoreLockGoesWithTheProcess(t *testing.T) {
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	out, err := helper.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, helper.Start())
	defer helper.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "helper said nothing")
	require.True(t, strings.HasPrefix(line, "child "), "helper: %q", line)
	childPID, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "child ")))
	require.NoError(t, err)
	defer syscall.Kill(childPID, syscall.SIGKILL)
	// The child has every descriptor of the helper, the lock's too (a
	// lock file, or the directory itself for a flock of it).
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(childPID) + "/fd")
	require.NoError(t, err)
	holds := false
	for _, e := range ents {
		if l, err := os.Readlink("/proc/" + strconv.Itoa(childPID) + "/fd/" + e.Name()); err == nil && (l == dir || strings.HasSuffix(l, "/"+lockName)) {
			holds = true
		}
	}
	require.True(t, holds, "the child should hold a copy of the lock file's descriptor")

	_, err = Open(dir)
	require.Error(t, err, "a second store on a directory in use")
	require.Contains(t, err.Error(), "in use by pid "+strconv.Itoa(helper.Process.Pid))

	require.NoError(t, helper.Process.Signal(syscall.SIGKILL))
	_ = helper.Wait()
	// The child lives on with its copies; the directory is free.
	require.NoError(t, syscall.Kill(childPID, 0), "the child should still run")
	start := time.Now()
	s, err := Open(dir)
	require.NoError(t, err, "reopen after the holder was killed")
	t.Logf("reopened %v after the kill", time.Since(start))
	require.NoError(t, s.Close())
	// Closed, it is free again (this process took and dropped it).
	s, err = Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// A store whose tables cannot be written (its directory removed under
// it) still closes, within the bound, with an error saying so: a server
// told to stop stops (Badger alone retries for ever).
func TestStoreCloseIsBounded(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }))
	require.NoError(t, os.RemoveAll(dir))
	old := closeTimeout
	closeTimeout = time.Second
	defer func() { closeTimeout = old }()
	start := time.Now()
	err = s.Close()
	took := time.Since(start)
	require.Error(t, err)
	require.Contains(t, err.Error(), "did not close")
	require.Less(t, took, 10*time.Second)
}

// A store whose directory was removed under it refuses changes instead
// of acknowledging what no restart would find.
func TestStoreRefusesChangesOnceRemoved(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	submitN(t, s, 1, "kept")
	require.NoError(t, os.RemoveAll(dir))
	_, err = s.Submit(1, nil, func(id uint32) ([]*Job, error) { return []*Job{{ID: id, Name: "lost"}}, nil })
	require.ErrorIs(t, err, ErrJournalRemoved)
	old := closeTimeout
	closeTimeout = time.Second
	defer func() { closeTimeout = old }()
	s.Close()
}
