package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The controller port on io_uring (--io=uring) answers the stock clients
// of every release exactly as the epoll one does: the same jobs submitted
// to both (held, one cancelled), then squeue, sinfo and scontrol show job
// print the same on both.
func TestUringServesLikeEpoll(t *testing.T) {
	epoll := newFrontend(t, fakeCluster)
	ur := newFrontend(t, fakeCluster, "--io=uring")
	if !strings.Contains(ur.Logs(), "controller port on io_uring") {
		t.Fatalf("the --io=uring server does not serve on io_uring:\n%s", ur.Logs())
	}
	if strings.Contains(epoll.Logs(), "io_uring") {
		t.Fatalf("the default server mentions io_uring:\n%s", epoll.Logs())
	}
	dir := workDir(t, "uring-")
	os.Chown(dir, 64030, 64030) // the slurm user's, as slurmDir
	// Times and the servers' own ports are all that may differ.
	stamp := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)
	norm := func(s string) string { return stamp.ReplaceAllString(s, "TIME") }
	both := func(t *testing.T, rel string, args ...string) string {
		t.Helper()
		a := norm(epoll.as(t).in(dir).user("slurm").mustRun(rel, args...))
		b := norm(ur.as(t).in(dir).user("slurm").mustRun(rel, args...))
		if a != b {
			t.Fatalf("%s %s:\nepoll:\n%s\nio_uring:\n%s", rel, strings.Join(args, " "), a, b)
		}
		return b
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			var ids []string
			for _, args := range [][]string{
				{"-J", "one", "--wrap", "true"},
				{"-J", "two", "-p", "gpu", "--gres=gpu:2", "-N", "2", "--wrap", "true"},
				{"-J", "three", "-n", "4", "--mem=1G", "--wrap", "true"},
			} {
				out := both(t, rel, append([]string{"sbatch", "--hold", "-o", "/dev/null"}, args...)...)
				m := submittedRe.FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("sbatch: %q", out)
				}
				ids = append(ids, m[1])
			}
			both(t, rel, "scancel", ids[1])
			sq := both(t, rel, "squeue", "--states=all")
			for _, id := range ids {
				if !strings.Contains(sq, " "+id+" ") {
					t.Errorf("squeue lacks job %s:\n%s", id, sq)
				}
			}
			both(t, rel, "sinfo")
			for _, id := range ids {
				job := both(t, rel, "scontrol", "show", "job", id)
				if !strings.Contains(job, "JobId="+id+" ") {
					t.Errorf("scontrol show job %s:\n%s", id, job)
				}
			}
			both(t, rel, "scancel", ids[0], ids[2])
			both(t, rel, "squeue", "-t", "all", "-o", "%i %j %T %r")
		})
	}
}
