package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestart: jobs acknowledged to sbatch survive a restart of the server
// on the same state directory, after a clean stop (SIGTERM) and after a
// crash (SIGKILL right after the last sbatch returned), keeping their ids,
// and the next submission gets the next id.
func TestRestart(t *testing.T) {
	t.Run("SIGTERM", func(t *testing.T) { restart(t, syscall.SIGTERM) })
	t.Run("SIGKILL", func(t *testing.T) { restart(t, syscall.SIGKILL) })
}

func restart(t *testing.T, sig syscall.Signal) {
	f := newFrontend(t, fakeCluster)
	r := f.as(t)
	submitRe := regexp.MustCompile(`^Submitted batch job (\d+)\n$`)
	submit := func(rel string, args ...string) int {
		t.Helper()
		out := r.mustRun(rel, append([]string{"sbatch", "--hold"}, args...)...)
		m := submitRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sbatch %v: %q", args, out)
		}
		id, _ := strconv.Atoi(m[1])
		return id
	}
	// One job per release, the last one just before the stop.
	var ids []int
	for i, rel := range releases {
		ids = append(ids, submit(rel, "-J", "keep"+strconv.Itoa(i), "--wrap", "echo "+rel))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Fatalf("job ids %v are not consecutive", ids)
		}
	}
	// What the clients show before the stop.
	format := []string{"squeue", "-h", "-o", "%i %P %j %u %T %l %D %R"}
	before := map[string]string{}
	jobsBefore := map[string]map[int]string{}
	for _, rel := range releases {
		before[rel] = sortedLines(r.mustRun(rel, format...))
		jobsBefore[rel] = map[int]string{}
		for _, id := range ids {
			jobsBefore[rel][id] = r.mustRun(rel, "scontrol", "show", "job", strconv.Itoa(id))
		}
	}
	if n := len(lines(before["24.11"])); n != len(ids) {
		t.Fatalf("squeue lists %d jobs before the stop, want %d:\n%s", n, len(ids), before["24.11"])
	}

	// Crash right after the last acknowledged submission.
	last := submit("24.11", "-J", "last", "--wrap", "x")
	if last != ids[len(ids)-1]+1 {
		t.Errorf("job id %d after %v, want %d", last, ids, ids[len(ids)-1]+1)
	}
	ids = append(ids, last)
	ps, took, err := f.stopWith(sig, 10*time.Second)
	if err != nil {
		t.Fatalf("stop with %v: %v\n%s", sig, err, f.Logs())
	}
	switch sig {
	case syscall.SIGTERM:
		if ps.ExitCode() != 0 {
			t.Errorf("after SIGTERM the server exited with %v (want status 0) in %v:\n%s", ps, took, f.Logs())
		}
	case syscall.SIGKILL:
		if ws, ok := ps.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("server did not die of SIGKILL: %v", ps)
		}
	}

	if err := f.tryStart(); err != nil {
		if !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("restart: %v", err)
		}
		// A real slurmctld restarts on its port at once. Go on on another
		// port to check the state nevertheless.
		t.Errorf("restart on the same port failed: the listener does not set SO_REUSEADDR, so the "+
			"TIME_WAIT connections of the clients it served block the bind for 60 s:\n%s", lastLines(f.Logs(), 3))
		f.movePort()
		f.start()
	}

	for _, rel := range releases {
		out := r.mustRun(rel, format...)
		got := sortedLines(out)
		// The extra job "last" must be there too, as it was acknowledged.
		wantLast := strconv.Itoa(last) + " cpu last root PENDING UNLIMITED 1 (JobHeldUser)"
		want := sortedLines(before[rel] + wantLast + "\n")
		if got != want {
			t.Errorf("%s squeue after restart:\n%s\nwant:\n%s\nserver log:\n%s", rel, got, want, f.Logs())
		}
		for _, id := range ids[:len(ids)-1] {
			after := r.mustRun(rel, "scontrol", "show", "job", strconv.Itoa(id))
			if d := kvDiff(jobsBefore[rel][id], after); d != "" {
				t.Errorf("%s scontrol show job %d changed across the restart:\n%s", rel, id, d)
			}
		}
	}
	next := submit("26.05", "-J", "next", "--wrap", "x")
	if next != last+1 {
		t.Errorf("first job after the restart got id %d, want %d", next, last+1)
	}
	if out := r.mustRun("22.05", "squeue", "-h", "-j", strconv.Itoa(next), "-o", "%i %j %T"); out != strconv.Itoa(next)+" next PENDING\n" {
		t.Errorf("squeue -j %d after the restart: %q", next, out)
	}
}

// sortedLines returns the non-empty lines of s sorted, newline-terminated.
func sortedLines(s string) string {
	ls := lines(s)
	slices.Sort(ls)
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// kvDiff compares two `scontrol show` records field by field.
func kvDiff(a, b string) string {
	ka, kb := parseKV(a), parseKV(b)
	var d []string
	for k, v := range ka {
		if w, ok := kb[k]; !ok || w != v {
			d = append(d, k+": "+strconv.Quote(v)+" -> "+strconv.Quote(w))
		}
	}
	for k, w := range kb {
		if _, ok := ka[k]; !ok {
			d = append(d, k+": (absent) -> "+strconv.Quote(w))
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	ls := lines(s)
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
