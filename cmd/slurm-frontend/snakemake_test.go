package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Snakemake's Slurm executor (Debian's snakemake 7, its built-in --slurm)
// runs a two-rule workflow to completion against the frontend, with the
// 22.05 clients (bookworm's snakemake 7.21 on the host) and with the 24.11
// ones (trixie's 7.32 in the trixie root): it submits each rule with
// sbatch, polls sacct for the jobs' states, and runs each rule in its job
// as a step (srun -n1 --cpu-bind=q); the second rule's job reads the
// first's output. (A rule must not call srun itself: the executor's step
// holds the job's CPUs, and a second step waits for them, on Slurm as
// here.) The jobs run on this host, the embedded engine's node: there the
// host's snakemake and clients run the rules.
func TestSnakemake(t *testing.T) {
	if _, err := exec.LookPath("snakemake"); err != nil {
		t.Fatalf("snakemake is not installed: run tools/install.sh")
	}
	if _, err := os.Stat("/opt/slurm-roots/trixie/usr/bin/snakemake"); err != nil {
		t.Fatalf("snakemake is not installed in the trixie root: run tools/install.sh")
	}
	f := newFrontend(t, batchCluster)
	for _, rel := range []string{"22.05", "24.11"} {
		t.Run(rel, func(t *testing.T) { snakemake(t, f, rel) })
	}
}

func snakemake(t *testing.T, f *frontend, rel string) {
	dir, ru := slurmDir(t, f, "snakemake-")
	snakefile := `rule all:
    input: "b.txt"

rule a:
    output: "a.txt"
    shell: "echo hello from job $SLURM_JOB_ID > {output}"

rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "cat {input} > {output}; echo step $SLURM_STEP_ID of $SLURM_JOB_ID >> {output}"
`
	p := filepath.Join(dir, "Snakefile")
	if err := os.WriteFile(p, []byte(snakefile), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chown(p, 64030, 64030)
	start := time.Now()
	out, errs, code := ru.within(5*time.Minute).run(rel, "sh", "-c",
		"HOME="+dir+" XDG_CACHE_HOME="+dir+"/.cache timeout 240 snakemake --slurm --jobs 2 --latency-wait 5")
	if code != 0 || !strings.Contains(out+errs, "3 of 3 steps (100%) done") {
		t.Fatalf("snakemake --slurm: exit %d after %v\n%s\n%s\n%s", code, time.Since(start), out, errs, lastLines(f.Logs(), 20))
	}
	b, _ := os.ReadFile(filepath.Join(dir, "b.txt"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "hello from job ") || !strings.HasPrefix(lines[1], "step 0 of ") {
		t.Errorf("the workflow's output: %q", b)
	}
	// This workflow's jobs: the ones that ran in its directory.
	var states string
	for _, l := range strings.Split(ru.mustRun(rel, "sacct", "-X", "--parsable2", "-n", "-o", "State,WorkDir", "-S", start.Add(-time.Minute).Format("2006-01-02T15:04:05"), "-E", "now"), "\n") {
		if st, wd, _ := strings.Cut(l, "|"); wd == dir {
			states += st + "\n"
		}
	}
	if states != "COMPLETED\nCOMPLETED\n" {
		t.Errorf("sacct of the workflow's jobs: %q", states)
	}
}
