package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/bench"
	"github.com/lablup/slurm-frontend/state/memfile"
)

// memFiles counts the server's open listing memory files.
func memFiles(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "/memfd:"+memfile.Name) {
			n++
		}
	}
	return n
}

// A queue large enough for its listing to live in memory files (and go
// out by sendfile) reads the same in every release's squeue as with
// --sendfile=false (heap and write): whole listings, a user's listing
// (records copied out of the files), and after a change.
func TestListingFromMemoryFiles(t *testing.T) {
	const n = 700 // several 128-job chunks, each well over memfile.MinFile
	m, err := bench.NewMinter("/etc/munge/munge.key")
	if err != nil {
		t.Skip("no munge key:", err)
	}
	outs := map[bool]map[string]string{}
	for _, sendfile := range []bool{true, false} {
		f := newFrontend(t, fakeCluster, fmt.Sprintf("--sendfile=%v", sendfile))
		res, err := bench.Fill(context.Background(), fmt.Sprintf("127.0.0.1:%d", f.port), n, 8, m, 30*time.Second, nil)
		if err != nil || res.Submitted != n {
			t.Fatalf("fill: %v %+v", err, res)
		}
		r := f.as(t)
		// One more job, then a change to it: only its chunk is encoded again.
		r.mustRun("24.11", "sbatch", "--hold", "-J", "last", "--wrap", "true")
		r.mustRun("24.11", "scontrol", "update", fmt.Sprintf("jobid=%d", n+1), "name=renamed")
		got := map[string]string{}
		for _, rel := range releases {
			out := r.mustRun(rel, "squeue", "-h", "-S", "i", "-o", "%i %j %u %T %r")
			ls := lines(out)
			if len(ls) != n+1 {
				t.Fatalf("sendfile=%v: %s squeue lists %d jobs, want %d", sendfile, rel, len(ls), n+1)
			}
			for i, l := range ls {
				want := fmt.Sprintf("%d wrap root PENDING JobHeldUser", i+1)
				if i == n {
					want = fmt.Sprintf("%d renamed root PENDING JobHeldUser", n+1)
				}
				if l != want {
					t.Fatalf("sendfile=%v: %s squeue line %d: %q, want %q", sendfile, rel, i+1, l, want)
				}
			}
			got[rel] = out
			got[rel+" -u"] = r.mustRun(rel, "squeue", "-h", "-S", "i", "-u", "root", "-o", "%i %j %T")
			got[rel+" -a"] = r.mustRun(rel, "squeue", "-h", "-S", "i", "-a", "-o", "%i %P %j %l %D %R")
		}
		files := memFiles(t, f.cmd.Process.Pid)
		if sendfile && files == 0 {
			t.Errorf("a %d-job listing left no memory files open", n)
		}
		if !sendfile && files != 0 {
			t.Errorf("--sendfile=false: %d memory files open", files)
		}
		outs[sendfile] = got
		f.stop()
	}
	for k, v := range outs[true] {
		if outs[false][k] != v {
			t.Errorf("squeue %s differs with and without sendfile:\n%s\n---\n%s", k, v, outs[false][k])
		}
	}
}
