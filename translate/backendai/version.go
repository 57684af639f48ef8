package backendai

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// MinManagerMajor / MinManagerMinor: the oldest manager release the
// bridge supports (26.8: batch sessions with preemption states,
// X-BackendAI-Act-As, max_priority).
const (
	MinManagerMajor = 26
	MinManagerMinor = 8
)

// ManagerVersion is the answer of GET /.
type ManagerVersion struct {
	APIVersion string // "version", e.g. "v9.20250722"
	Manager    string // "manager", the package version, e.g. "26.8.1"
	Major      int
	Minor      int
	Patch      int
}

// Probe asks GET / (unauthenticated; app.py hello) and refuses a manager
// older than 26.8, or one whose newest API version is older than the
// configured one, with an error wrapping ErrUnsupportedManager.
func (c *Client) Probe(ctx context.Context) (*ManagerVersion, error) {
	var ans struct {
		Version string `json:"version"`
		Manager string `json:"manager"`
	}
	if err := c.Do(ctx, Request{Method: "GET", Path: "/", Anonymous: true}, &ans); err != nil {
		return nil, err
	}
	v := &ManagerVersion{APIVersion: ans.Version, Manager: ans.Manager}
	var ok bool
	v.Major, v.Minor, v.Patch, ok = parseRelease(ans.Manager)
	if !ok {
		return v, fmt.Errorf("%w: GET / reports manager version %q (API %q); need %d.%d or later",
			ErrUnsupportedManager, ans.Manager, ans.Version, MinManagerMajor, MinManagerMinor)
	}
	if v.Major < MinManagerMajor || v.Major == MinManagerMajor && v.Minor < MinManagerMinor {
		return v, fmt.Errorf("%w: manager %s is older than %d.%d; upgrade Backend.AI",
			ErrUnsupportedManager, ans.Manager, MinManagerMajor, MinManagerMinor)
	}
	if compareAPIVersion(ans.Version, c.apiVersion) < 0 {
		return v, fmt.Errorf("%w: manager %s speaks API %s, older than the configured %s",
			ErrUnsupportedManager, ans.Manager, ans.Version, c.apiVersion)
	}
	return v, nil
}

// parseRelease reads "26.8.1", "26.8.0rc1", "26.9.0.dev0".
func parseRelease(s string) (major, minor, patch int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(s), "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, 0, false
	}
	num := func(p string) (int, bool) {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 {
			return 0, false
		}
		n, err := strconv.Atoi(p[:end])
		return n, err == nil
	}
	var ok1, ok2 bool
	major, ok1 = num(parts[0])
	minor, ok2 = num(parts[1])
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	if len(parts) == 3 {
		patch, _ = num(parts[2])
	}
	return major, minor, patch, true
}

// compareAPIVersion orders "vN.YYYYMMDD" strings; unparsable ones compare
// as older.
func compareAPIVersion(a, b string) int {
	pa, oka := splitAPIVersion(a)
	pb, okb := splitAPIVersion(b)
	switch {
	case !oka && !okb:
		return 0
	case !oka:
		return -1
	case !okb:
		return 1
	}
	for i := range 2 {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func splitAPIVersion(s string) ([2]int, bool) {
	s = strings.TrimPrefix(s, "v")
	maj, date, found := strings.Cut(s, ".")
	if !found {
		return [2]int{}, false
	}
	m, err1 := strconv.Atoi(maj)
	d, err2 := strconv.Atoi(date)
	if err1 != nil || err2 != nil {
		return [2]int{}, false
	}
	return [2]int{m, d}, true
}
