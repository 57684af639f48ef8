//go:build race

package bench

// The race detector makes sync.Pool drop items and adds allocations.
const raceEnabled = true
