//go:build !race

package munge

const raceEnabled = false
