// Package fuzzcheck holds checks that fuzz targets of every package share:
// that decoding hostile input allocates within a bound of the input's
// size, whatever lengths and counts the input claims.
package fuzzcheck

import (
	"runtime/metrics"
	"testing"
)

// The bound: Factor bytes per input byte (decoded records are larger than
// their encoding: a JobInfo is ~2 KiB of Go struct for a few hundred wire
// bytes) plus Slack.
const (
	Factor = 64
	Slack  = 256 << 10
)

var sample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// Allocated returns what fn allocated on the heap. The runtime counts
// large allocations (32 KiB and up, the ones a hostile length could
// cause) as they happen and small ones per span, so the figure is exact
// for what matters here and within a few spans for the rest; reading it
// does not stop the world, so it is cheap enough for every fuzz input.
// Not safe for concurrent use with other allocating goroutines' figures.
func Allocated(fn func()) uint64 {
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	fn()
	metrics.Read(sample)
	return sample[0].Value.Uint64() - before
}

// AllocBound runs fn, which decodes n bytes of input, and fails t if it
// allocated more than the bound for n. The figure is the whole process's
// (a fuzz worker's own goroutines allocate too), so a run past the bound
// is repeated: a decoder allocates the same for the same input every
// time, the others do not; the least of three runs counts.
func AllocBound(t testing.TB, what string, n int, fn func()) {
	t.Helper()
	bound := uint64(Factor*n + Slack)
	got := Allocated(fn)
	for i := 0; i < 2 && got > bound; i++ {
		got = min(got, Allocated(fn))
	}
	if got > bound {
		t.Fatalf("%s: decoding %d bytes allocated %d bytes (bound %d)", what, n, got, bound)
	}
}
