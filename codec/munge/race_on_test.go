//go:build race

package munge

// The race detector makes sync.Pool drop items and adds allocations.
const raceEnabled = true
