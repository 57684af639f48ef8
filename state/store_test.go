package state

import (
	"errors"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/stretchr/testify/require"
)

func TestSubmitDurableAndIDsContinue(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	var ids []uint32
	for i := 0; i < 3; i++ {
		jobs, err := s.Submit(1, &Script{Text: "#!/bin/sh\necho hi\n", Env: []string{"A=b"}}, func(id uint32) ([]*Job, error) {
			return []*Job{{ID: id, Name: "wrap", UserID: 1000, Partition: "cpu"}}, nil
		})
		require.NoError(t, err)
		ids = append(ids, jobs[0].ID)
	}
	require.Equal(t, []uint32{1, 2, 3}, ids)
	require.NoError(t, s.Close())

	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	jobs, err := s.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	require.Equal(t, "wrap", jobs[2].Name)
	sc, err := s.Script(2)
	require.NoError(t, err)
	require.Equal(t, []string{"A=b"}, sc.Env)
	require.Equal(t, uint32(4), s.NextID())
}

func TestOpenUnusableDir(t *testing.T) {
	_, err := Open("/proc/version/x")
	require.Error(t, err)
}

// A JobReader gives the stored record whatever order it is asked in,
// reports missing jobs, and a store closed under it neither panics nor
// closes before the reader is done.
func TestJobReader(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	n := 300
	fillStore(t, s, n)
	r := s.NewJobReader()
	var j Job
	for _, id := range []uint32{FirstJobID, FirstJobID + 1, FirstJobID + 5, FirstJobID + 200, FirstJobID + 3, uint32(FirstJobID + n - 1)} {
		require.NoError(t, r.Read(id, &j))
		require.Equal(t, *benchJob(id, int(id-FirstJobID)), j)
	}
	require.ErrorIs(t, r.Read(uint32(FirstJobID+n), &j), badger.ErrKeyNotFound)
	require.NoError(t, r.Read(FirstJobID+7, &j), "a miss does not spoil the reader")

	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("the store closed under an open reader")
	case <-time.After(100 * time.Millisecond):
	}
	// Opened while Close waits: refused, not deadlocked.
	r2 := s.NewJobReader()
	require.ErrorIs(t, r2.Read(FirstJobID, &j), ErrClosed)
	r2.Close()
	require.NoError(t, r.Read(FirstJobID+8, &j))
	r.Close()
	<-closed
	r3 := s.NewJobReader()
	require.ErrorIs(t, r3.Read(FirstJobID, &j), ErrClosed)
	r3.Close()
}

// Close waits for a use of the database under way (a background loop's
// view when the server stops: Badger panics on a transaction of a closed
// database), and later uses get ErrClosed instead of a panic.
func TestCloseWaitsForUses(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inView, release := make(chan struct{}), make(chan struct{})
	viewErr := make(chan error, 1)
	go func() {
		viewErr <- s.view(func(txn *badger.Txn) error {
			close(inView)
			<-release
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistJob})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
			}
			return nil
		})
	}()
	<-inView
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a view was open", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-viewErr; err != nil {
		t.Fatalf("the view Close waited for: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.BackfillSpan(); !errors.Is(err, ErrClosed) {
		t.Errorf("BackfillSpan after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Submit(1, &Script{Text: "#!/bin/sh\n"}, func(id uint32) ([]*Job, error) {
		return []*Job{{ID: id, Name: "late", UserID: 1000, Partition: "cpu"}}, nil
	}); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
}
