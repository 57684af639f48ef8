package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate/backendai"
	"github.com/lablup/slurm-frontend/translate/backendai/double"
)

// client is a manager client with the admin keypair (what the console
// does, acting for users).
func (d *baiDouble) client(t *testing.T) *backendai.Client {
	t.Helper()
	ak, sk := d.AdminKeys()
	cl, err := backendai.New(backendai.Config{Endpoint: d.url, AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestBackendAIConsoleSessions: sessions a user starts in Backend.AI's
// console (here: through the manager's API, as the console does, with
// the admin keypair acting for the user) show up in squeue as jobs of
// that user, in the partition of their resource group; one terminated in
// the console ends there too; one cancelled with scancel ends in
// Backend.AI. They cannot be requeued or changed: they have no script.
func TestBackendAIConsoleSessions(t *testing.T) {
	d, f := baiFrontend(t, nil, "")
	cl := d.client(t)
	console := func(name string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := cl.CreateBatchSession(ctx, backendai.CreateSessionRequest{
			Name: name, Image: "python", Domain: "default", Group: "default", OwnerAccessKey: d.keys["slurm"],
			ResourceGroup: "default", Resources: backendai.Resources{CPU: 2, Mem: 2 << 30}, StartupCommand: "sleep 300",
		})
		if err != nil {
			t.Fatalf("creating session %s in the console: %v", name, err)
		}
		return cs.SessionID
	}
	dir, ru := slurmDir(t, f, "bai-console-")
	sid := console("notebook-1")
	// squeue as the user: the session is a job of theirs, RUNNING.
	var id int
	deadline := time.Now().Add(60 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		out, _, code := ru.run("24.11", "squeue", "-h", "-o", "%i|%j|%u|%P|%T|%C")
		if code != 0 {
			continue
		}
		for _, l := range lines(out) {
			p := strings.Split(l, "|")
			if len(p) == 6 && p[1] == "notebook-1" && p[4] == "RUNNING" {
				id = atoi(p[0])
				if p[2] != "slurm" || p[3] != "default" || p[5] != "2" {
					t.Errorf("squeue row of the console session: %q, want user slurm, partition default, 2 CPUs", l)
				}
			}
		}
		if id != 0 {
			break
		}
	}
	if id == 0 {
		t.Fatalf("the console session %s never showed in squeue as RUNNING:\n%s", sid, lastLines(f.Logs(), 30))
	}
	for _, rel := range releases {
		show := ru.mustRun(rel, "scontrol", "show", "job", fmt.Sprint(id))
		for _, want := range []string{"UserId=slurm(64030)", "BatchFlag=0", "Comment=Backend.AI session " + sid, "JobState=RUNNING", "Partition=default"} {
			if !strings.Contains(show, want) {
				t.Errorf("%s scontrol show job %d: no %q in\n%s", rel, id, want, show)
			}
		}
		// No script: it cannot be requeued or changed.
		if _, errs, code := ru.run(rel, "scontrol", "requeue", fmt.Sprint(id)); code == 0 || !strings.Contains(errs, "Only batch jobs are accepted or processed") {
			t.Errorf("%s scontrol requeue of a console session: exit %d %q", rel, code, errs)
		}
		if _, errs, code := ru.run(rel, "scontrol", "update", "JobId="+fmt.Sprint(id), "JobName=x"); code == 0 || !strings.Contains(errs, "not supported") {
			t.Errorf("%s scontrol update of a console session: exit %d %q", rel, code, errs)
		}
	}
	// Another user may not cancel it.
	if _, errs, code := f.as(t).in(dir).user("nobody").run("24.11", "scancel", fmt.Sprint(id)); code == 0 {
		t.Errorf("scancel by nobody of slurm's console session: exit 0 %q", errs)
	}
	// Terminated in the console: the job ends.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if _, err := cl.DestroySession(ctx, sid, backendai.DestroyOptions{OwnerAccessKey: d.keys["slurm"]}); err != nil {
		t.Fatalf("terminating the session in the console: %v", err)
	}
	cancel()
	rows := waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool {
		return rows[id].state != "" && rows[id].state != "RUNNING" && rows[id].state != "COMPLETING"
	})
	if rows[id].state != "CANCELLED" {
		t.Errorf("console session terminated by its user: job %d %s, want CANCELLED", id, rows[id].state)
	}

	// Cancelled with scancel: the session ends in Backend.AI.
	sid2 := console("notebook-2")
	var id2 int
	waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool {
		for jid, r := range rows {
			if jid > id && r.state == "RUNNING" {
				id2 = jid
			}
		}
		return id2 != 0
	})
	ru.mustRun("26.05", "scancel", fmt.Sprint(id2))
	waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id2].state == "CANCELLED" })
	deadline = time.Now().Add(30 * time.Second)
	for {
		var st string
		for _, s := range d.Sessions() {
			if s.ID == sid2 {
				st = s.Status
			}
		}
		if st == "TERMINATED" || st == "CANCELLED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scancel %d: the console session %s is %s in Backend.AI", id2, sid2, st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if logs := f.Logs(); panicRe.MatchString(logs) {
		t.Errorf("server log has a panic:\n%s", lastLines(logs, 60))
	}
}

// TestBackendAIGPUShares: an agent with fractional GPUs (cuda.shares)
// is a node with shard gres, a hundredth of a GPU each; --gres=shard:N
// and --gres=mps:N run as sessions with N/100 cuda.shares; more shards
// than a node has, or shards on a partition without any, are refused at
// submission as slurmctld refuses them.
func TestBackendAIGPUShares(t *testing.T) {
	d, f := baiFrontend(t, func(d *double.Double) {
		if err := d.AddAgent(double.Agent{ID: "i-frac0", Slots: map[string]string{"cpu": "4", "mem": "8g", "cuda.shares": "2"}}); err != nil {
			t.Fatal(err)
		}
		if err := d.AddAgent(double.Agent{ID: "i-rocm0", Slots: map[string]string{"cpu": "4", "mem": "8g", "rocm.device": "2"}}); err != nil {
			t.Fatal(err)
		}
	}, "")
	dir, ru := slurmDir(t, f, "bai-shares-")
	cl := d.client(t)
	out := ru.mustRun("24.11", "sinfo", "-h", "-N", "-n", "i-frac0", "-o", "%N %G")
	if out != "i-frac0 shard:200\n" {
		t.Errorf("sinfo of the fractional-GPU agent: %q, want shard:200", out)
	}
	for i, gres := range []string{"shard:50", "mps:25"} {
		rel := releases[i]
		sub := ru.mustRun(rel, "sbatch", "--gres="+gres, "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 1")
		id := atoi(submittedRe.FindStringSubmatch(sub)[1])
		waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
		want := map[string]string{"shard:50": "0.5", "mps:25": "0.25"}[gres]
		if agents, slots := jobSession(t, d, cl, id); slots["cuda.shares"] != want || !slices.Contains(agents, "i-frac0") {
			t.Errorf("--gres=%s: session on %v asked for %v, want cuda.shares %s on i-frac0", gres, agents, slots, want)
		}
	}
	// Another accelerator family: its slot is the node's typed gpu gres,
	// and --gres=gpu:rocm:N asks for rocm.device.
	if out := ru.mustRun("24.11", "sinfo", "-h", "-N", "-n", "i-rocm0", "-o", "%N %G"); out != "i-rocm0 gpu:rocm:2\n" {
		t.Errorf("sinfo of the ROCm agent: %q, want gpu:rocm:2", out)
	}
	sub := ru.mustRun("22.05", "sbatch", "--gres=gpu:rocm:1", "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 1")
	id := atoi(submittedRe.FindStringSubmatch(sub)[1])
	waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
	if agents, slots := jobSession(t, d, cl, id); slots["rocm.device"] != "1" || !slices.Contains(agents, "i-rocm0") {
		t.Errorf("--gres=gpu:rocm:1: session on %v asked for %v, want rocm.device 1 on i-rocm0", agents, slots)
	}
	for _, c := range []struct{ gres, want string }{
		{"shard:500", "Requested node configuration is not available"},
		{"gpu:rocm:3", "Requested node configuration is not available"},
		// A GPU model: the manager does not tell models apart, so it is
		// refused, not run on whatever GPU comes.
		{"gpu:a100:1", "Requested node configuration is not available"},
	} {
		_, errs, code := ru.run("26.05", "sbatch", "--gres="+c.gres, "-o", "/dev/null", "--wrap", "true")
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("sbatch --gres=%s: exit %d %q, want %q", c.gres, code, errs, c.want)
		}
	}
}

// jobSession is the agents and requested slots of job id's session in
// the double (fails the test if it has none).
func jobSession(t *testing.T, d *baiDouble, cl *backendai.Client, id int) ([]string, backendai.SlotMap) {
	t.Helper()
	for _, s := range d.Sessions() {
		if s.Name == fmt.Sprintf("slurm-%d", id) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			got, err := cl.GetSession(ctx, s.ID, false)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			return s.Agents, got.RequestedSlots
		}
	}
	t.Errorf("no session of job %d in the double", id)
	return nil, nil
}

// TestBackendAIInteractive: salloc on Backend.AI holds an interactive
// session for the allocation, and srun's tasks run in it through the
// manager's streaming execute API (each node's tasks started together by
// one command); what the manager cannot do (a terminal, steps inside a
// batch session, whose kernel the batch script holds) is refused up front
// with an error naming what is missing, not run with other semantics or
// left hanging.
func TestBackendAIInteractive(t *testing.T) {
	d, f := baiFrontend(t, nil, "")
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "bai-salloc-")
			out, errs, code := ru.run(rel, "salloc", "-n", "3", "--mem=2G", "sh", "-c",
				"echo in-$SLURM_JOB_ID; srun -n 2 sh -c 'echo task $SLURM_PROCID of $SLURM_NTASKS as $(id -u) in $PWD'; "+
					"srun -l -n 3 echo x; srun -n 1 sh -c 'echo out; echo err >&2; exit 5'; echo srun-$?; "+
					// A signal cannot reach a step's tasks there: refused.
					"srun -n 1 sleep 20 & sleep 3; scancel $SLURM_JOB_ID.3; echo scancel-$?")
			if code != 0 || !strings.Contains(errs, "Granted job allocation") {
				t.Fatalf("salloc on Backend.AI: exit %d\n%s\n%s\n%s", code, out, errs, lastLines(f.Logs(), 30))
			}
			id := atoi(regexp.MustCompile(`Granted job allocation (\d+)`).FindStringSubmatch(errs)[1])
			lines := strings.Split(strings.TrimSpace(out), "\n")
			want := []string{fmt.Sprintf("in-%d", id),
				"task 0 of 2 as 64030 in " + dir, "task 1 of 2 as 64030 in " + dir,
				"0: x", "1: x", "2: x", "out", "srun-5"}
			var got []string
			for _, l := range lines {
				if strings.HasPrefix(l, "scancel-") {
					if l == "scancel-0" {
						t.Errorf("scancel of a step on Backend.AI succeeded")
					}
					continue
				}
				got = append(got, l)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("salloc + srun on Backend.AI: output\n%s\nwant (any order) %q\nstderr:\n%s\n%s", out, want, errs, lastLines(f.Logs(), 30))
			}
			if !strings.Contains(errs, "not supported") {
				t.Errorf("scancel of a step on Backend.AI: %q, want a refusal", errs)
			}
			if !strings.Contains(errs, "err\n") {
				t.Errorf("srun's task stderr did not reach srun: %q", errs)
			}
			// The allocation was an interactive session, and ended with
			// salloc.
			found := false
			for _, s := range d.Sessions() {
				if s.Name == fmt.Sprintf("slurm-%d", id) {
					found = true
					if !strings.EqualFold(s.Type, "interactive") {
						t.Errorf("allocation %d: a %s session, want interactive", id, s.Type)
					}
				}
			}
			if !found {
				t.Errorf("allocation %d: no session in the double", id)
			}
			waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
		})
	}
	// srun on its own: its allocation and its step.
	dir, ru := slurmDir(t, f, "bai-srun-")
	if out := ru.mustRun("24.11", "srun", "-n", "2", "--mem=2G", "echo", "alone"); out != "alone\nalone\n" {
		t.Errorf("srun -n 2 echo alone on Backend.AI: %q", out)
	}
	// srun --pty, on a terminal: refused, saying why.
	term := startOnTerminal(t, f, dir, "24.11", 40, 120, "srun", "--pty", "--mem=2G", "true")
	term.expect(regexp.MustCompile(`launch failed.*Requested operation not supported on this system`), 0, 60*time.Second)
	// srun inside a batch session: refused, and the script goes on.
	sub := ru.mustRun("22.05", "sbatch", "-o", filepath.Join(dir, "batch.out"), "--mem=2G", "--wrap", "srun true; echo srun-$?")
	id := atoi(submittedRe.FindStringSubmatch(sub)[1])
	waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
	b, _ := os.ReadFile(filepath.Join(dir, "batch.out"))
	if !strings.Contains(string(b), "srun-1") || !strings.Contains(string(b), "batch session") {
		t.Errorf("srun in a Backend.AI batch job: output %q, want a refusal naming the batch session", b)
	}
}

// TestBackendAIImageMinimum: a --mem below what the job's image needs is
// refused at submission, saying so, instead of failing at hand-over.
func TestBackendAIImageMinimum(t *testing.T) {
	_, f := baiFrontend(t, nil, "")
	_, ru := slurmDir(t, f, "bai-min-")
	_, errs, code := ru.run("24.11", "sbatch", "--mem=100M", "-o", "/dev/null", "--wrap", "true")
	if code == 0 || !strings.Contains(errs, "needs at least") {
		t.Errorf("sbatch --mem=100M on an image needing more: exit %d %q", code, errs)
	}
	ru.mustRun("24.11", "sbatch", "--mem=2G", "-o", "/dev/null", "--wrap", "true")
}
