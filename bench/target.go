package bench

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Target is a controller under test.
type Target struct {
	Name    string    `json:"name"`
	Addr    string    `json:"addr"`
	PID     int       `json:"pid,omitempty"`     // server process, for CPU and RSS
	PIDFile string    `json:"pidfile,omitempty"` // or where to read it (read at each run)
	Aux     []AuxProc `json:"aux,omitempty"`     // other processes whose CPU the target uses (munged)
}

// AuxProc is a helper process reported beside the server.
type AuxProc struct {
	Label string `json:"label"`
	PID   int    `json:"pid"`
}

// ParseTarget parses NAME=HOST:PORT[,pid=PID][,pidfile=FILE][,aux=LABEL:PID].
// NAME defaults to HOST:PORT.
func ParseTarget(s string) (Target, error) {
	var t Target
	parts := strings.Split(s, ",")
	first := parts[0]
	if name, addr, ok := strings.Cut(first, "="); ok {
		t.Name, t.Addr = name, addr
	} else {
		t.Addr = first
	}
	if _, _, err := net.SplitHostPort(t.Addr); err != nil {
		return t, fmt.Errorf("target %q: address %q: %v", s, t.Addr, err)
	}
	if t.Name == "" {
		t.Name = t.Addr
	}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return t, fmt.Errorf("target %q: %q is not key=value", s, p)
		}
		switch k {
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return t, fmt.Errorf("target %q: bad pid %q", s, v)
			}
			t.PID = n
		case "pidfile":
			t.PIDFile = v
		case "aux":
			l, ps, ok := strings.Cut(v, ":")
			n, err := strconv.Atoi(ps)
			if !ok || err != nil || n <= 0 {
				return t, fmt.Errorf("target %q: aux wants LABEL:PID, got %q", s, v)
			}
			t.Aux = append(t.Aux, AuxProc{Label: l, PID: n})
		default:
			return t, fmt.Errorf("target %q: unknown key %q (pid, pidfile, aux)", s, k)
		}
	}
	return t, nil
}

// ServerPID returns the server's pid (from PIDFile if given), 0 if unknown.
func (t *Target) ServerPID() int {
	if t.PIDFile != "" {
		b, err := os.ReadFile(t.PIDFile)
		if err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return n
			}
		}
	}
	return t.PID
}
