package state

import (
	"testing"

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
