package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveOnce runs `serve` with args and returns its exit code and stderr,
// killing it if it is still running after wait (then code is -1).
func serveOnce(t *testing.T, wait time.Duration, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), append([]string{"serve"}, args...)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), errb.String()
	case <-time.After(wait):
		cmd.Process.Kill()
		<-done
		return -1, errb.String()
	}
}

func testKey(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "munge.key")
	if err := os.WriteFile(p, []byte(strings.Repeat("k", 128)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The operator sees one clear line and a non-zero exit for each way the
// server cannot start.
func TestServeStartupErrors(t *testing.T) {
	key := testKey(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().String()
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o600)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"port taken", []string{"--listen", busy, "--munge-key", key, "--state-dir", t.TempDir()}, "address already in use"},
		{"key missing", []string{"--listen", "127.0.0.1:0", "--munge-key", "/nonexistent/munge.key", "--state-dir", t.TempDir()}, "munge key"},
		{"key too short", []string{"--listen", "127.0.0.1:0", "--munge-key", writeShortKey(t), "--state-dir", t.TempDir()}, "munge key"},
		{"state dir unusable", []string{"--listen", "127.0.0.1:0", "--munge-key", key, "--state-dir", filepath.Join(notDir, "state")}, "state dir"},
		{"bad config", []string{"--config", writeConf(t, "PartitionName=p Nodes=ghost\n"), "--munge-key", key, "--state-dir", t.TempDir()}, "unknown node ghost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, errs := serveOnce(t, 10*time.Second, c.args...)
			if code <= 0 {
				t.Fatalf("exit code %d, want non-zero; stderr:\n%s", code, errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Fatalf("stderr does not say %q:\n%s", c.want, errs)
			}
			if strings.Contains(errs, "ready:") {
				t.Fatalf("claimed ready:\n%s", errs)
			}
		})
	}
}

func writeShortKey(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "short.key")
	os.WriteFile(p, []byte("short"), 0o600)
	return p
}

func writeConf(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "frontend.conf")
	os.WriteFile(p, []byte(body), 0o644)
	return p
}

// With no config the embedded engine serves this host as one node in one
// default partition, with its real CPU count and memory.
func TestServeDefaultThisHost(t *testing.T) {
	code, errs := serveOnce(t, 3*time.Second, "--listen", "127.0.0.1:0", "--munge-key", testKey(t), "--state-dir", t.TempDir())
	if code != -1 {
		t.Fatalf("server exited (%d):\n%s", code, errs)
	}
	if !strings.Contains(errs, "ready:") || !strings.Contains(errs, "1 nodes, 1 partitions") {
		t.Fatalf("ready line missing or wrong:\n%s", errs)
	}
	out, err := exec.Command(buildBinary(t), "client-conf", "--listen", "127.0.0.1:6817").Output()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	if !strings.Contains(string(out), "NodeName="+host+" ") {
		t.Fatalf("client-conf has no node for this host %q:\n%s", host, out)
	}
	if !strings.Contains(string(out), "PartitionName=debug Nodes="+host+" Default=YES") {
		t.Fatalf("client-conf has no default partition:\n%s", out)
	}
	if !strings.Contains(string(out), "CPUs="+itoaTest(numCPU())+" ") {
		t.Fatalf("client-conf does not give this host's %d CPUs:\n%s", numCPU(), out)
	}
}

func numCPU() int { return runtime.NumCPU() }

func itoaTest(n int) string { return strconv.Itoa(n) }

// A site's slurm.conf with Include lines: the nodes and partitions of the
// included files are served (stock sinfo of each release lists them), a
// relative Include is taken from slurm.conf's directory (as slurmctld
// since 23.02), and a missing included file stops the server with the
// file and line in its one error line.
func TestServeConfigInclude(t *testing.T) {
	dir := workDir(t, "include-")
	os.MkdirAll(filepath.Join(dir, "conf.d"), 0o755)
	// slurm.conf includes conf.d/nodes.conf (relative: from slurm.conf's
	// directory), which includes conf.d/parts.conf (relative too: from
	// slurm.conf's directory as well, not the including file's).
	os.WriteFile(filepath.Join(dir, "conf.d", "nodes.conf"), []byte(
		"NodeName=inc[1-3] NodeAddr=127.0.0.[1-3] CPUs=8 RealMemory=16000 State=UNKNOWN\n"+
			"Include conf.d/parts.conf\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "conf.d", "parts.conf"), []byte("PartitionName=incpart Nodes=inc[1-3] Default=YES MaxTime=INFINITE State=UP\n"), 0o644)
	main := filepath.Join(dir, "slurm.conf")
	os.WriteFile(main, []byte("ClusterName=inccluster\nInclude conf.d/nodes.conf\n"), 0o644)
	out, err := exec.Command(buildBinary(t), "client-conf", "--config", main, "--listen", "127.0.0.1:6817").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nPartitionName=incpart Nodes=inc[1-3] ") || !strings.Contains(string(out), "\nNodeName=inc3 ") {
		t.Fatalf("client-conf of a slurm.conf with relative Includes: %v\n%s", err, out)
	}
	// The server on it: newFrontend writes its own file in its own
	// directory, which includes the site's by absolute path; relative
	// names then go from that file's directory, so the site file's
	// Include is made absolute here.
	os.WriteFile(main, []byte("ClusterName=inccluster\nInclude "+filepath.Join(dir, "conf.d", "nodes.conf")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "conf.d", "nodes.conf"), []byte(
		"NodeName=inc[1-3] NodeAddr=127.0.0.[1-3] CPUs=8 RealMemory=16000 State=UNKNOWN\n"+
			"Include "+filepath.Join(dir, "conf.d", "parts.conf")+"\n"), 0o644)
	f := newFrontend(t, "Include "+main+"\n")
	for _, rel := range releases {
		out := f.mustRun(rel, "sinfo", "-h", "-o", "%P %D %N")
		if strings.TrimSpace(out) != "incpart* 3 inc[1-3]" {
			t.Errorf("%s sinfo with an included config: %q, want %q", rel, out, "incpart* 3 inc[1-3]")
		}
	}
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("ClusterName=x\n\nInclude nosuch.conf\n"), 0o644)
	code, errs := serveOnce(t, 10*time.Second, "--config", bad, "--state-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--munge-key", testKey(t))
	if code == 0 || code == -1 || !strings.Contains(errs, bad+":3") || !strings.Contains(errs, "nosuch.conf") {
		t.Errorf("serve with a missing included file: exit %d, stderr %q; want a non-zero exit naming %s:3 and the file", code, errs, bad)
	}
}
