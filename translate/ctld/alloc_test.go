package ctld

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// allocValues is an allocation as plain values, for comparison.
func allocValues(a map[string]*nodeAlloc) map[string]nodeAlloc {
	out := make(map[string]nodeAlloc, len(a))
	for k, v := range a {
		out[k] = *v
	}
	return out
}

// TestAllocDelta: the allocation carried from one snapshot to the next
// through the jobs that started and ended equals a fresh walk over the
// running jobs, and the older snapshot's allocation is left as it was.
func TestAllocDelta(t *testing.T) {
	cl := &cluster{idx: map[string]int{}}
	for i := range 8 {
		name := fmt.Sprintf("n%d", i)
		cl.idx[name] = len(cl.nodes)
		cl.nodes = append(cl.nodes, conf.Node{Name: name, CPUs: 16, RealMemory: 64000})
	}
	rng := rand.New(rand.NewSource(1))
	job := func(id uint32) *jobEntry {
		j := &state.Job{ID: id, State: codec.JOB_RUNNING, MinCPUs: uint32(1 + rng.Intn(8)), ArrayTaskID: codec.NoVal}
		switch rng.Intn(3) {
		case 0:
			j.MemPerNodeMB = uint64(100 * (1 + rng.Intn(9)))
		case 1:
			j.MemPerCPUMB = uint64(10 * (1 + rng.Intn(9)))
		} // else: the whole node's memory
		first := rng.Intn(8)
		j.Nodes = fmt.Sprintf("n%d", first)
		if n := rng.Intn(3); n > 0 && first+n < 8 {
			j.Nodes = fmt.Sprintf("n[%d-%d]", first, first+n)
		}
		return newEntry(j, nil, true)
	}
	var holders []*jobEntry
	next := uint32(1)
	for range 40 {
		holders = append(holders, job(next))
		next++
	}
	alloc := allocOf(holders, cl)
	for step := range 300 {
		var now []*jobEntry
		for _, e := range holders {
			switch rng.Intn(10) {
			case 0: // ended
			case 1: // changed (a new record of the same job)
				nj := *e.job()
				nj.MinCPUs++
				now = append(now, newEntry(&nj, nil, true))
			default:
				now = append(now, e)
			}
		}
		for range rng.Intn(5) {
			now = append(now, job(next))
			next++
		}
		before := allocValues(alloc)
		got := allocDelta(alloc, holders, now, cl)
		require.Equal(t, allocValues(allocOf(now, cl)), allocValues(got), "step %d", step)
		require.Equal(t, before, allocValues(alloc), "step %d: the older allocation changed", step)
		holders, alloc = now, got
	}
}
