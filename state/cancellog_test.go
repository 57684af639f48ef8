package state

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A bulk cancel's log survives a restart until dropped, its ids exact.
func TestCancelLog(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	ids := make([]uint32, 0, 100_000)
	for id := uint32(100_000); id > 0; id-- {
		if id%7 != 0 { // not a dense range
			ids = append(ids, id)
		}
	}
	ids = append(ids, 0xFFFFFFF0, 5) // the largest id, and a duplicate
	at := time.Now().Unix()
	seq, err := s.LogCancels(ids, at, 1000)
	require.NoError(t, err)
	seq2, err := s.LogCancels([]uint32{42}, at+1, 0)
	require.NoError(t, err)
	require.Greater(t, seq2, seq)
	require.NoError(t, s.Close())

	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	logs, err := s.CancelLogs()
	require.NoError(t, err)
	require.Len(t, logs, 2)
	l := logs[0]
	require.Equal(t, seq, l.Seq)
	require.Equal(t, at, l.At)
	require.Equal(t, uint32(1000), l.UID)
	require.Len(t, l.IDs, len(ids)-1)
	require.Equal(t, uint32(1), l.IDs[0])
	require.Equal(t, uint32(0xFFFFFFF0), l.IDs[len(l.IDs)-1])
	for i := 1; i < len(l.IDs); i++ {
		require.Less(t, l.IDs[i-1], l.IDs[i])
		require.NotZero(t, l.IDs[i]%7, "id %d", l.IDs[i])
	}
	require.Equal(t, []uint32{42}, logs[1].IDs)
	require.Zero(t, l.Done)

	// Written up to id 10: the records and the progress together.
	require.NoError(t, s.PutCancelled(seq, 10, &Job{ID: 3, State: 4, EndTime: at, StartTime: at}))
	logs, err = s.CancelLogs()
	require.NoError(t, err)
	require.Equal(t, uint32(10), logs[0].Done)
	r := s.NewJobReader()
	var j Job
	require.NoError(t, r.Read(3, &j))
	r.Close()
	require.Equal(t, uint32(4), j.State)

	require.NoError(t, s.DropCancelLog(seq))
	logs, err = s.CancelLogs()
	require.NoError(t, err)
	require.Len(t, logs, 1)
	require.Equal(t, seq2, logs[0].Seq)
}

// A damaged log record is reported, not misread.
func FuzzDecodeCancelLog(f *testing.F) {
	f.Add(zenc.EncodeAll([]byte{1, 2, 2, 1, 1}, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		var l CancelLog
		if decodeCancelLog(v, &l) == nil {
			for i := 1; i < len(l.IDs); i++ {
				if l.IDs[i] < l.IDs[i-1] {
					t.Fatalf("ids out of order: %v", l.IDs)
				}
			}
		}
	})
}
