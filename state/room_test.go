package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeFS makes the store see its file system with free bytes left, and
// read-only (as statfs says, or as only a change finds: ext4's
// emergency_ro) when asked.
type fakeFS struct {
	free              int64
	rdonly, emergency bool
}

func (f *fakeFS) install(t *testing.T) {
	oldStatfs, oldTouch := roomStatfs, roomTouch
	roomStatfs = func(dir string, st *unix.Statfs_t) error {
		if err := oldStatfs(dir, st); err != nil {
			return err
		}
		st.Bsize, st.Bavail = 4096, uint64(f.free/4096)
		if f.rdonly {
			st.Flags |= unix.ST_RDONLY
		}
		return nil
	}
	roomTouch = func(dir string) error {
		if f.emergency {
			return syscall.EROFS
		}
		return oldTouch(dir)
	}
	t.Cleanup(func() { roomStatfs, roomTouch = oldStatfs, oldTouch })
}

func held(id uint32) *Job { return &Job{ID: id, Name: "held", UserID: 1000, Partition: "cpu"} }

// TestRoomRefusesWhatBadgerCannotWrite: on a file system without the
// room a write may take, or read-only (either way), Submit and Put
// refuse before Badger writes anything (Badger would die of SIGBUS
// writing its memory-mapped log there), with an error that carries
// ENOSPC or EROFS; nothing refused is stored, no id is used up, and
// writes work again once there is room.
func TestRoomRefusesWhatBadgerCannotWrite(t *testing.T) {
	fs := &fakeFS{free: 1 << 30}
	fs.install(t)
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	submit := func() (uint32, error) {
		jobs, err := s.Submit(1, &Script{Text: strings.Repeat("#", 8<<10), Env: []string{"A=b"}}, func(id uint32) ([]*Job, error) {
			return []*Job{held(id)}, nil
		})
		if err != nil {
			return 0, err
		}
		return jobs[0].ID, nil
	}
	id, err := submit()
	require.NoError(t, err)
	require.Equal(t, uint32(1), id)

	for _, c := range []struct {
		name  string
		set   func()
		errno syscall.Errno
	}{
		{"full", func() { fs.free = roomMargin / 2 }, syscall.ENOSPC},
		{"read-only", func() { fs.rdonly = true }, syscall.EROFS},
		{"emergency read-only", func() { fs.emergency = true }, syscall.EROFS},
	} {
		c.set()
		retouch(s) // as if rescanEvery had passed since the last touch
		_, err := submit()
		var fe *FSError
		require.ErrorAs(t, err, &fe, c.name)
		require.True(t, errors.Is(err, c.errno), "%s: %v", c.name, err)
		j := held(1)
		j.Name = "changed"
		require.ErrorIs(t, s.Put(j), c.errno, c.name)
		require.Equal(t, uint32(2), s.NextID(), "%s: a refused submission used up an id", c.name)
		*fs = fakeFS{free: 1 << 30}
		retouch(s)
	}
	// The room the log needs is counted: a store whose log holds more
	// than is free refuses even a small write.
	s.room.mu.Lock()
	s.room.scan()
	log := s.room.log
	s.room.mu.Unlock()
	require.Greater(t, log, int64(8<<10))
	fs.free = roomMargin + log/2
	require.ErrorIs(t, s.Put(held(1)), syscall.ENOSPC)
	fs.free = 1 << 30
	id, err = submit()
	require.NoError(t, err)
	require.Equal(t, uint32(2), id)
	require.NoError(t, s.Close())

	s, err = Open(dir)
	require.NoError(t, err)
	jobs, err := s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	require.Equal(t, "held", jobs[0].Name, "a refused Put reached the store")
	require.Equal(t, uint32(3), s.NextID())
	require.NoError(t, s.Close())
}

// TestRoomOpenAndClose: opening writes the last run's log out as tables
// and closing writes the current one: without the room for it (or on a
// read-only file system) Open refuses with a clear error and Close
// leaves the database to the process's exit instead of dying of SIGBUS
// (its log, synced at every write, is replayed at the next start).
func TestRoomOpenAndClose(t *testing.T) {
	fs := &fakeFS{free: 1 << 30}
	fs.install(t)
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	_, err = s.Submit(1, &Script{Text: strings.Repeat("#", 64<<10)}, func(id uint32) ([]*Job, error) { return []*Job{held(id)}, nil })
	require.NoError(t, err)
	fs.emergency = true
	err = s.Close()
	require.ErrorIs(t, err, syscall.EROFS)
	require.Contains(t, err.Error(), "replays its log")
	fs.emergency = false
	// What a crash leaves (the log not written out): a copy of the open
	// store's files.
	crashed := t.TempDir()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(crashed, e.Name()), b, 0o600))
	}
	require.NoError(t, s.db.Close()) // what the process's exit does

	fs.free = roomMargin + 32<<10 // less than margin + the log
	_, err = Open(crashed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Contains(t, err.Error(), "not enough room to open the store")
	fs.free = 1 << 30
	s, err = Open(crashed)
	require.NoError(t, err)
	jobs, err := s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.NoError(t, s.Close())
}

// retouch makes the store's next write touch its directory again.
func retouch(s *Store) {
	s.room.mu.Lock()
	s.room.touched = time.Time{}
	s.room.mu.Unlock()
}
