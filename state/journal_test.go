package state

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyDir copies the regular files of src into a new directory.
func copyDir(t *testing.T, src string) string {
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Type().IsRegular() {
			copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
		}
	}
	return dst
}

func copyFile(t *testing.T, src, dst string) {
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.Create(dst)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

func submitN(t *testing.T, s *Store, n int, name string) {
	for i := 0; i < n; i++ {
		_, err := s.Submit(1, &Script{Text: "#!/bin/sh\necho " + strings.Repeat("x", 100) + "\n"}, func(id uint32) ([]*Job, error) {
			return []*Job{{ID: id, Name: fmt.Sprintf("%s%d", name, i), UserID: 1000, Partition: "cpu"}}, nil
		})
		require.NoError(t, err)
	}
}

// crash stops a store as a killed process would: Badger's files stay as
// the page cache has them, the journal is not checkpointed.
func crash(t *testing.T, s *Store) {
	require.NoError(t, s.db.Close())
	s.jr.close()
	s.lock.release()
}

// What Badger had not synced when the machine stopped is brought back
// from the journal: the snapshot of Badger's files taken at the last
// checkpoint plus the journal written since hold every acknowledged
// change, sets and deletes, in order.
func TestJournalRestoresWhatBadgerLost(t *testing.T) {
	a := t.TempDir()
	s, err := Open(a)
	require.NoError(t, err)
	submitN(t, s, 2, "before")
	require.NoError(t, s.Close())
	durable := copyDir(t, a) // Badger as the disk had it at the checkpoint

	s, err = Open(a)
	require.NoError(t, err)
	submitN(t, s, 3, "after")
	require.NoError(t, s.PutMeta("k", []byte("v1")))
	require.NoError(t, s.commit(64, func(txn *wtxn) error {
		if err := txn.Delete(append(append([]byte(nil), prefixMeta...), "k"...)); err != nil {
			return err
		}
		return txn.Set(append(append([]byte(nil), prefixMeta...), "k2"...), []byte("v2"))
	}))
	crash(t, s)
	// The machine stopped: Badger's files are the checkpoint's, the
	// journal is the one on disk.
	copyFile(t, filepath.Join(a, journalName), filepath.Join(durable, journalName))

	s, err = Open(durable)
	require.NoError(t, err)
	defer s.Close()
	jobs, err := s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 5)
	require.Equal(t, "after2", jobs[4].Name)
	require.Equal(t, uint32(6), s.NextID())
	sc, err := s.Script(5)
	require.NoError(t, err)
	require.Contains(t, sc.Text, "echo x")
	v, err := s.Meta("k")
	require.NoError(t, err)
	require.Nil(t, v, "the delete is replayed")
	v, err = s.Meta("k2")
	require.NoError(t, err)
	require.Equal(t, "v2", string(v))
}

// A record cut short or damaged (the one being written when the machine
// stopped) ends the replay: everything before it is kept, nothing after.
func TestJournalStopsAtATornRecord(t *testing.T) {
	a := t.TempDir()
	s, err := Open(a)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	durable := copyDir(t, a)
	s, err = Open(a)
	require.NoError(t, err)
	submitN(t, s, 3, "j")
	end := s.jr.off
	crash(t, s)

	j := filepath.Join(durable, journalName)
	copyFile(t, filepath.Join(a, journalName), j)
	f, err := os.OpenFile(j, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xff}, end-3) // in the third record's script
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s, err = Open(durable)
	require.NoError(t, err)
	jobs, err := s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	require.Equal(t, uint32(3), s.NextID(), "the lost submission's id was never acknowledged")
	// The next generation starts over the damaged record; a restart
	// reads only it.
	submitN(t, s, 1, "k")
	crash(t, s)
	s, err = Open(durable)
	require.NoError(t, err)
	defer s.Close()
	jobs, err = s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	require.Equal(t, "k0", jobs[2].Name)
	require.Equal(t, uint32(3), jobs[2].ID)
}

// The journal grows to journalMax and then starts over after a
// checkpoint; nothing is lost across the wraps, killed or closed.
func TestJournalWraps(t *testing.T) {
	oldMax, oldStep := journalMax, journalStep
	journalMax, journalStep = 16<<10, 4<<10
	defer func() { journalMax, journalStep = oldMax, oldStep }()
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	gen := s.jr.gen
	submitN(t, s, 300, "w")
	require.Greater(t, s.jr.gen, gen+5, "wrapped several times")
	st, err := os.Stat(filepath.Join(dir, journalName))
	require.NoError(t, err)
	require.LessOrEqual(t, st.Size(), journalMax+journalStep)
	crash(t, s)
	s, err = Open(dir)
	require.NoError(t, err)
	jobs, err := s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 300)
	submitN(t, s, 10, "v")
	require.NoError(t, s.Close())
	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	jobs, err = s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 310)
	require.Equal(t, uint32(311), s.NextID())
}

// A journal write that fails fails the change: Badger never sees it, the
// record is wiped, and no later change is acknowledged until a restart
// (the disk's state is unknown). The restart does not bring it back.
func TestJournalFailureFailsTheChange(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	submitN(t, s, 1, "ok")
	old := journalSync
	journalSync = func(int) error { return syscall.EIO }
	_, err = s.Submit(1, nil, func(id uint32) ([]*Job, error) { return []*Job{{ID: id, Name: "lost"}}, nil })
	journalSync = old
	require.ErrorIs(t, err, syscall.EIO)
	_, err = s.Submit(1, nil, func(id uint32) ([]*Job, error) { return []*Job{{ID: id, Name: "later"}}, nil })
	require.ErrorIs(t, err, syscall.EIO, "broken until a restart")
	jobs, err := s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	crash(t, s)

	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	jobs, err = s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, "ok0", jobs[0].Name)
	require.Equal(t, uint32(2), s.NextID())
	submitN(t, s, 1, "again")
}

// A damaged header is refused (its records may be the store's latest
// changes) rather than started over.
func TestJournalDamagedHeaderRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	f, err := os.OpenFile(filepath.Join(dir, journalName), os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("XX"), 5)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = Open(dir)
	require.ErrorContains(t, err, "header is not a journal's")
	// And the directory is not left locked.
	_, err = Open(dir)
	require.ErrorContains(t, err, "header is not a journal's")
}

func TestEachOpRejectsDamage(t *testing.T) {
	good := []byte{opSet, 1, 'k', 2, 'v', 'w', opDelete, 1, 'k'}
	var got []string
	require.NoError(t, eachOp(good, func(op byte, k, v []byte) error {
		got = append(got, fmt.Sprintf("%c %s %s", op, k, v))
		return nil
	}))
	require.Equal(t, []string{"s k vw", "d k "}, got)
	for _, bad := range [][]byte{{opSet, 5, 'k'}, {opSet, 1, 'k'}, {'x', 1, 'k'}, {opDelete, 0xff}} {
		require.ErrorIs(t, eachOp(bad, func(byte, []byte, []byte) error { return nil }), errBadOps, "%v", bad)
	}
}

// A journal record's ops never panic the replay, whatever the bytes;
// what parses, re-encoded, parses to the same ops.
func FuzzEachOp(f *testing.F) {
	f.Add([]byte{opSet, 1, 'k', 2, 'v', 'w', opDelete, 1, 'k'})
	f.Add([]byte{opSet, 0, 0})
	f.Add([]byte{opSet, 1, 0x30, 0x82, 0x00, 0x30, 0x30}) // a length of two bytes for 2
	f.Add([]byte{opDelete, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	parse := func(b []byte) ([]string, []byte, error) {
		var ops []string
		var re []byte
		err := eachOp(b, func(op byte, k, v []byte) error {
			ops = append(ops, fmt.Sprintf("%c %q %q", op, k, v))
			re = append(re, op)
			re = binary.AppendUvarint(re, uint64(len(k)))
			re = append(re, k...)
			if op == opSet {
				re = binary.AppendUvarint(re, uint64(len(v)))
				re = append(re, v...)
			}
			return nil
		})
		return ops, re, err
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ops, re, err := parse(b)
		if err != nil {
			return
		}
		again, _, err := parse(re)
		if err != nil || fmt.Sprint(again) != fmt.Sprint(ops) {
			t.Fatalf("re-encoded %x (of %x) parses to %v (%v), not %v", re, b, again, err, ops)
		}
	})
}
