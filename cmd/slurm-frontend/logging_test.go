package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// logRecords parses the server's log as logfmt, one record per line
// (what an operator's collector does); a line that is not a record fails
// the test.
func logRecords(t *testing.T, logs string) []map[string]string {
	t.Helper()
	kv := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_.]*)=("(?:[^"\\]|\\.)*"|\S*)`)
	var out []map[string]string
	for _, l := range strings.Split(logs, "\n") {
		if l == "" || strings.HasPrefix(l, "-----") {
			continue // the harness's restart marks
		}
		rec := map[string]string{}
		rest := kv.ReplaceAllStringFunc(l, func(m string) string {
			p := kv.FindStringSubmatch(m)
			v := p[2]
			if strings.HasPrefix(v, `"`) {
				fmt.Sscanf(v, "%q", &v)
			}
			rec[p[1]] = v
			return ""
		})
		if strings.TrimSpace(rest) != "" || rec["time"] == "" || rec["level"] == "" || rec["msg"] == "" {
			t.Fatalf("not a logfmt record: %q", l)
		}
		out = append(out, rec)
	}
	return out
}

// TestLogging: the log is structured (every line a logfmt record with
// time, level and message), SlurmctldDebug sets the level, at debug every
// RPC has a line (its type, protocol version, uid, peer), and `scontrol
// setdebug` changes the level while the server runs, for root only, with
// slurmctld's answers (compared with a real slurmctld of each release).
func TestLogging(t *testing.T) {
	f := newFrontend(t, fakeCluster+"SlurmctldDebug=debug\n")
	slurm := f.as(t).user("slurm")
	slurm.mustRun("24.11", "squeue")
	slurm.mustRun("22.05", "sinfo")
	waitLog(f, "type=REQUEST_PARTITION_INFO version=22.05 uid=64030")
	var rpcs []map[string]string
	for _, r := range logRecords(t, f.Logs()) {
		if r["msg"] == "rpc" && r["uid"] == "64030" {
			rpcs = append(rpcs, r)
		}
	}
	found := map[string]bool{}
	for _, r := range rpcs {
		if r["level"] != "DEBUG" || r["peer"] != "127.0.0.1" || r["took"] == "" || r["path"] == "" {
			t.Errorf("rpc line %v", r)
		}
		found[r["type"]+" "+r["version"]] = true
	}
	if !found["REQUEST_JOB_INFO 24.11"] || !found["REQUEST_PARTITION_INFO 22.05"] {
		t.Errorf("no debug line for squeue (24.11) or sinfo (22.05): %v", found)
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			real := startRealCtld(t, rel)
			var refusals []string
			for _, side := range []struct {
				name string
				r    runner
			}{{"frontend", f.as(t)}, {"slurmctld", real.as(t)}} {
				// A user may not; root may, and show config says so.
				out, errs, code := side.r.user("slurm").run(rel, "scontrol", "setdebug", "debug2")
				refusals = append(refusals, fmt.Sprintf("%d %s%s", code, out, errs))
				if out, errs, code := side.r.run(rel, "scontrol", "setdebug", "verbose"); code != 0 || out+errs != "" {
					t.Errorf("%s: setdebug verbose as root: exit %d %q", side.name, code, out+errs)
				}
				show := side.r.mustRun(rel, "scontrol", "show", "config")
				if m := regexp.MustCompile(`(?m)^SlurmctldDebug\s+= (\S+)$`).FindStringSubmatch(show); m == nil || m[1] != "verbose" {
					t.Errorf("%s: show config after setdebug: %v", side.name, m)
				}
			}
			if refusals[0] != refusals[1] || !strings.Contains(refusals[0], "Permission denied") || refusals[0][0] == '0' {
				t.Errorf("setdebug as a user: frontend %q, slurmctld %q", refusals[0], refusals[1])
			}
			// verbose is above debug: squeue no longer logged.
			time.Sleep(500 * time.Millisecond) // the log's pipe drained
			before := strings.Count(f.Logs(), "msg=rpc")
			slurm.mustRun(rel, "squeue")
			time.Sleep(500 * time.Millisecond)
			if n := strings.Count(f.Logs(), "msg=rpc"); n != before {
				t.Errorf("at verbose, %d rpc lines were logged", n-before)
			}
			f.mustRun(rel, "scontrol", "setdebug", "debug")
		})
	}
	if !waitLog(f, `msg="Set debug level to 'verbose'"`) {
		t.Errorf("the change of level is not logged")
	}
	// JSON on request.
	g := newFrontend(t, fakeCluster+"FrontendLogFormat=json\nSlurmctldDebug=debug2\n")
	g.as(t).user("slurm").mustRun("26.05", "squeue")
	waitLog(g, `"type":"REQUEST_JOB_INFO"`)
	rpc := false
	for _, l := range strings.Split(strings.TrimSpace(g.Logs()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not a JSON record: %q", l)
		}
		if rec["msg"] == "rpc" && rec["type"] == "REQUEST_JOB_INFO" && rec["version"] == "26.05" && rec["level"] == "DEBUG" {
			rpc = true
		}
	}
	if !rpc {
		t.Errorf("no JSON rpc record:\n%s", g.Logs())
	}
	// A level slurmctld would not read is refused at start.
	h := &frontend{t: t, dir: f.dir, stateDir: t.TempDir(), port: freePort(t), configPath: filepath.Join(f.dir, "bad.conf")}
	os.WriteFile(h.configPath, []byte(fakeCluster+"SlurmctldDebug=chatty\n"), 0o644)
	if err := h.tryStart(); err == nil || !strings.Contains(h.Logs(), "SlurmctldDebug=chatty") {
		h.stop()
		t.Errorf("SlurmctldDebug=chatty accepted (%v):\n%s", err, h.Logs())
	}
}

// TestLogsHoldNoSecrets: at the most verbose level, through submissions,
// job environments, scripts, srun steps, refused credentials and a
// Backend.AI manager's keypair, no secret reaches the log: not the munge
// key, not a credential, not the manager's secret key, not a job's
// environment or script.
func TestLogsHoldNoSecrets(t *testing.T) {
	const envSecret, scriptSecret = "envsecret-6f1d2c", "scriptsecret-9a8b7c"
	f := newFrontend(t, batchCluster+"SlurmctldDebug=debug5\n")
	dir, ru := slurmDir(t, f, "secrets-")
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n# "+scriptSecret+"\necho done\n"), 0o755)
	ru.env = append(ru.env, "MY_TOKEN="+envSecret)
	for _, rel := range releases {
		sub := ru.mustRun(rel, "sbatch", "--export=ALL", "-o", filepath.Join(dir, "out-%j"), script)
		id := atoi(submittedRe.FindStringSubmatch(sub)[1])
		waitRows(t, f, dir, 60*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
		ru.mustRun(rel, "srun", "-n1", "sh", "-c", "echo $MY_TOKEN >/dev/null")
	}
	d, g := baiFrontend(t, nil, "SlurmctldDebug=debug5\n")
	_, bru := slurmDir(t, g, "bai-secrets-")
	bru.env = append(bru.env, "MY_TOKEN="+envSecret)
	bru.mustRun("24.11", "sbatch", "--export=ALL", "--mem=2G", "-o", "/dev/null", "--wrap", "echo "+scriptSecret)
	time.Sleep(2 * time.Second)

	key, err := os.ReadFile("/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := os.ReadFile(d.keypair)
	if err != nil {
		t.Fatal(err)
	}
	secretKey := strings.Fields(string(kp))[1]
	logs := f.Logs() + g.Logs()
	for what, s := range map[string]string{
		"a job's environment": envSecret, "a job script": scriptSecret,
		"the Backend.AI secret key": secretKey, "a munge credential": "MUNGE:",
		"the munge key (hex)": hex.EncodeToString(key[:16]), "the munge key (base64)": base64.StdEncoding.EncodeToString(key[:15]),
	} {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds %s", what)
		}
	}
	if bytes.Contains([]byte(logs), key[:16]) {
		t.Errorf("the log holds the munge key's bytes")
	}
	if n := strings.Count(logs, "msg=rpc"); n < 20 {
		t.Errorf("only %d rpc lines at debug5: the test logged too little to tell", n)
	}
}
