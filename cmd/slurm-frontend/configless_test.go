package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate/backendai/double"
)

// Configless login nodes. A login node here is a private mount namespace
// in which a release's root (the host itself for 22.05) has no slurm.conf
// anywhere a client looks: a tmpfs over its /etc/slurm, and a /run of its
// own (a tmpfs, with munge's socket directory put back) where sackd
// writes /run/slurm/conf. Other tests using the roots at the same time see
// none of it.
type loginNode struct {
	t      testing.TB
	rel    string
	root   string // "/" for the host
	holder *exec.Cmd
}

// releaseRoot is where a release's binaries live.
func releaseRoot(rel string) string {
	switch rel {
	case "24.11":
		return "/opt/slurm-roots/trixie"
	case "26.05":
		return "/opt/slurm-roots/sid"
	}
	return "/"
}

// newLoginNode makes the namespace (held by a sleep, killed at cleanup).
func newLoginNode(t testing.TB, rel string) *loginNode {
	t.Helper()
	l := &loginNode{t: t, rel: rel, root: releaseRoot(rel)}
	if l.root != "/" {
		if out, err := exec.Command("bash", filepath.Join(repoRoot(t), "tools/roots.sh"), "mount", l.root).CombinedOutput(); err != nil {
			t.Fatalf("roots.sh mount %s: %v\n%s", l.root, err, out)
		}
	}
	// munge's directory is held on a directory outside /run while /run
	// is covered, then moved back under the new /run.
	hold := workDir(t, "munge-hold-")
	prefix := strings.TrimSuffix(l.root, "/")
	const script = `set -e; r=$0; h=$1
mount --bind /run/munge "$h"
mount -t tmpfs -o mode=755 tmpfs "$r/etc/slurm"
mount -t tmpfs -o mode=755 tmpfs "$r/run"
mkdir "$r/run/munge" "$r/run/slurm"
mount --move "$h" "$r/run/munge"
echo ready
exec sleep 100000`
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, prefix, hold)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb lockedBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l.holder = cmd
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("login node namespace: %q\n%s", line, errb.String())
	}
	if _, err := os.Stat(l.path("/etc/slurm/slurm.conf")); err == nil {
		t.Fatal("the login node has an /etc/slurm/slurm.conf")
	}
	return l
}

// path is where the namespace's file at p (in the root) is seen from here.
func (l *loginNode) path(p string) string {
	return fmt.Sprintf("/proc/%d/root%s%s", l.holder.Process.Pid, strings.TrimSuffix(l.root, "/"), p)
}

// command runs args in the login node as user (root or a user of the
// root), in dir, with a clean environment plus env: no SLURM_CONF.
func (l *loginNode) command(user, dir string, env []string, args ...string) *exec.Cmd {
	l.t.Helper()
	ns := []string{"-t", fmt.Sprint(l.holder.Process.Pid), "-m", "--", "chroot"}
	home := "/root"
	if user != "root" {
		out, err := exec.Command("chroot", l.root, "getent", "passwd", user).Output()
		f := strings.Split(strings.TrimSpace(string(out)), ":")
		if err != nil || len(f) < 6 {
			l.t.Fatalf("user %s in %s: %v", user, l.root, err)
		}
		ns = append(ns, "--userspec="+f[2]+":"+f[3])
		home = f[5]
	}
	ns = append(ns, l.root, "env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME="+home, "USER="+user, "LOGNAME="+user)
	ns = append(ns, env...)
	ns = append(ns, "/bin/sh", "-c", `cd "$0" && exec "$@"`, dir)
	return exec.Command("nsenter", append(ns, args...)...)
}

// run runs a client to its end (60 s at most).
func (l *loginNode) run(user, dir string, env []string, args ...string) (string, string, int) {
	l.t.Helper()
	cmd := l.command(user, dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		l.t.Fatalf("%s %v on the login node: timed out\nstdout:\n%s\nstderr:\n%s", l.rel, args, out.String(), errb.String())
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func (l *loginNode) mustRun(user, dir string, env []string, logs func() string, args ...string) string {
	l.t.Helper()
	out, errs, code := l.run(user, dir, env, args...)
	if code != 0 {
		l.t.Fatalf("%s %s on the login node: exit %d\nstdout:\n%s\nstderr:\n%s\nserver log:\n%s", l.rel, strings.Join(args, " "), code, out, errs, logs())
	}
	return out
}

// daemon is a Slurm daemon (sackd, slurmd) started on a login node.
type daemon struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

// start runs a daemon as user in the foreground; it is stopped at cleanup.
func (l *loginNode) start(user string, args ...string) *daemon {
	l.t.Helper()
	d := &daemon{cmd: l.command(user, "/", nil, args...), out: &lockedBuffer{}, done: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	l.t.Cleanup(d.stop)
	return d
}

// stop ends the daemon (SIGTERM, then SIGKILL) and waits for it. nsenter
// (no fork to enter a mount namespace), chroot and env exec in place, so
// the process started is the daemon.
func (d *daemon) stop() {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// configlessConf is a cluster whose login nodes are configless: one node
// whose stand-in listens on nodePort, and SlurmdPort (what a 24.11 sackd
// listens on) another free port.
func configlessConf(slurmdPort, nodePort int, extra string) string {
	return fmt.Sprintf(`ClusterName=cfgless
SlurmctldParameters=enable_configless
SlurmdPort=%d
NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000
PartitionName=cpu Nodes=n1 Default=YES MaxTime=INFINITE State=UP
%s`, slurmdPort, nodePort, extra)
}

// A cli_filter.lua beside the server's config, served to the login nodes
// (CliFilterPlugins=lua in the served slurm.conf): it names every job.
const filterLua = `function slurm_cli_setup_defaults(options, early_pass) return slurm.SUCCESS end
function slurm_cli_pre_submit(options, pack_offset)
	options["job-name"] = "filtered"
	return slurm.SUCCESS
end
function slurm_cli_post_submit(offset, job_id, step_id) return slurm.SUCCESS end
`

var submitted = regexp.MustCompile(`^Submitted batch job (\d+)\n$`)

// TestConfigless: login nodes with no slurm.conf, the stock way of each
// release. 24.11 and 26.05: the real sackd (--conf-server, 26.05 also
// --port) fetches the configs from the frontend into /run/slurm/conf, and
// sinfo, squeue, sbatch (a job that runs, named by the cli_filter.lua the
// server hands out) and sacct run as a user with no SLURM_CONF. The
// slurm.conf sackd writes is the one client-conf prints, byte for byte.
// When the server comes back with another partition, it pushes the new
// slurm.conf to the sackd, which rewrites its copy: sinfo shows the
// partition. 22.05 has no sackd: its clients fetch the configs themselves
// (SLURM_CONF_SERVER), and its slurmd --conf-server gets slurmd's files
// into its spool directory's conf-cache; then, as the frontend is no
// slurmctld to register with, it is told its node is unknown
// (ESLURM_INVALID_NODE_NAME, translate/ctld/inventory.go) and keeps
// retrying, while the clients carry on.
func TestConfigless(t *testing.T) {
	for _, rel := range []string{"24.11", "26.05"} {
		t.Run(rel, func(t *testing.T) { configlessSackd(t, rel) })
	}
	t.Run("22.05", configless2205)
}

func configlessSackd(t *testing.T, rel string) {
	slurmdPort, nodePort := freePort(t), freePort(t)
	f := newFrontend(t, configlessConf(slurmdPort, nodePort, "CliFilterPlugins=lua\n"))
	if err := os.WriteFile(filepath.Join(f.dir, "cli_filter.lua"), []byte(filterLua), 0o644); err != nil {
		t.Fatal(err)
	}
	// Read at a start, as slurmctld reads them.
	f.stop()
	f.start()
	l := newLoginNode(t, rel)
	args := []string{"/usr/sbin/sackd", "-D", "--conf-server", fmt.Sprintf("127.0.0.1:%d", f.port)}
	pushPort := slurmdPort
	if rel >= "25.05" {
		pushPort = freePort(t) // 25.05+: sent in the request
		args = append(args, "--port", fmt.Sprint(pushPort))
	}
	sackd := l.start("root", args...)
	conf := l.path("/run/slurm/conf/slurm.conf")
	if !waitFor(30*time.Second, func() bool { _, err := os.Stat(conf); return err == nil }) {
		t.Fatalf("sackd wrote no slurm.conf\nsackd:\n%s\nserver log:\n%s", sackd.out.String(), f.Logs())
	}
	got, _ := os.ReadFile(conf)
	want, _ := os.ReadFile(f.clientConf)
	if !bytes.Equal(got, want) {
		t.Errorf("sackd's slurm.conf differs from client-conf's:\n%s\nwant:\n%s", got, want)
	}
	if lua, err := os.ReadFile(l.path("/run/slurm/conf/cli_filter.lua")); string(lua) != filterLua {
		t.Errorf("sackd's cli_filter.lua: %q, %v", lua, err)
	}
	// Files the server has none of are not written (exists=false).
	if ents, _ := os.ReadDir(l.path("/run/slurm/conf")); len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("sackd wrote %v, want cli_filter.lua and slurm.conf", names)
	}

	dir := workDir(t, "cfgless-")
	os.Chown(dir, 64030, 64030)
	run := func(args ...string) string { return l.mustRun("slurm", dir, nil, f.Logs, args...) }
	if out := run("sinfo"); out != "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ncpu*         up   infinite      1   idle n1\n" {
		t.Errorf("sinfo:\n%s", out)
	}
	if out := run("scontrol", "show", "config"); !strings.Contains(out, "SlurmctldParameters     = enable_configless\n") ||
		!strings.Contains(out, fmt.Sprintf("SlurmdPort              = %d\n", slurmdPort)) {
		t.Errorf("scontrol show config:\n%s", out)
	}
	out := run("sbatch", "-o", "job.out", "--wrap", `echo "$SLURM_JOB_NAME ran on $SLURMD_NODENAME"`)
	m := submitted.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sbatch: %q", out)
	}
	if !waitFor(60*time.Second, func() bool {
		return run("squeue", "-h", "-t", "all", "-j", m[1], "-o", "%T") == "COMPLETED\n"
	}) {
		t.Fatalf("job %s did not complete: %s\nserver log:\n%s", m[1], run("squeue", "-h", "-t", "all", "-o", "%i %T %r"), f.Logs())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "job.out")); string(b) != "filtered ran on n1\n" {
		t.Errorf("job output %q, %v", b, err)
	}
	if out := run("squeue", "-h", "-t", "all", "-o", "%i %j %u %T"); out != m[1]+" filtered slurm COMPLETED\n" {
		t.Errorf("squeue: %q", out)
	}
	// sacct: AccountingStorage* of the served slurm.conf lead to the
	// server's slurmdbd stand-in.
	if out := run("sacct", "-n", "-X", "-P", "-j", m[1], "-o", "JobID,JobName,State"); out != m[1]+"|filtered|COMPLETED\n" {
		t.Errorf("sacct: %q", out)
	}

	// The operator adds a partition and runs scontrol reconfigure: the
	// sackd gets the new slurm.conf pushed (it never fetches on its own).
	cf, err := os.OpenFile(f.configPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(cf, "PartitionName=extra Nodes=n1 MaxTime=30 State=UP")
	cf.Close()
	f.mustRun(rel, "scontrol", "reconfigure")
	if !waitFor(30*time.Second, func() bool {
		b, _ := os.ReadFile(conf)
		return bytes.Contains(b, []byte("\nPartitionName=extra Nodes=n1 MaxTime=30 State=UP\n"))
	}) {
		t.Fatalf("the new slurm.conf did not reach sackd (port %d)\nsackd:\n%s\nserver log:\n%s", pushPort, sackd.out.String(), f.Logs())
	}
	if !strings.Contains(sackd.out.String(), "reconfigure requested by") {
		t.Errorf("sackd says nothing of a reconfigure:\n%s", sackd.out.String())
	}
	want, _ = exec.Command(buildBinary(t), "client-conf", "--config", f.configPath, "--listen", fmt.Sprintf("127.0.0.1:%d", f.port)).Output()
	if got, _ := os.ReadFile(conf); !bytes.Equal(got, want) {
		t.Errorf("pushed slurm.conf differs from client-conf's:\n%s\nwant:\n%s", got, want)
	}
	if out := run("sinfo"); !strings.Contains(out, "\nextra        up      30:00      1   idle n1\n") {
		t.Errorf("sinfo after the push:\n%s", out)
	}
	if sackd.exited() {
		t.Errorf("sackd exited:\n%s", sackd.out.String())
	}
}

func configless2205(t *testing.T) {
	slurmdPort, nodePort, slurmdNodePort := freePort(t), freePort(t), freePort(t)
	spool := workDir(t, "cfgless-spool-")
	// Node n2's port is slurmd's: held while the server starts, so that
	// no stand-in takes it.
	hold, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", slurmdNodePort))
	if err != nil {
		t.Fatal(err)
	}
	f := newFrontend(t, configlessConf(slurmdPort, nodePort, fmt.Sprintf("SlurmdSpoolDir=%s/%%n\n", spool)+
		fmt.Sprintf("NodeName=n2 NodeAddr=127.0.0.1 Port=%d CPUs=2 RealMemory=1000\n", slurmdNodePort)))
	hold.Close()
	// A file of slurmd's list beside the config: served to slurmd only.
	if err := os.WriteFile(filepath.Join(f.dir, "acct_gather.conf"), []byte("# for slurmd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.stop() // read at a start, as slurmctld reads them
	hold, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", slurmdNodePort))
	if err != nil {
		t.Fatal(err)
	}
	f.start()
	hold.Close()
	l := newLoginNode(t, "22.05")
	env := []string{fmt.Sprintf("SLURM_CONF_SERVER=127.0.0.1:%d", f.port)}
	dir := workDir(t, "cfgless-")
	os.Chown(dir, 64030, 64030)
	run := func(args ...string) string { return l.mustRun("slurm", dir, env, f.Logs, args...) }
	// n2 is slurmd's, in no partition.
	if out := run("sinfo"); out != "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ncpu*         up   infinite      1   idle n1\n" {
		t.Errorf("sinfo:\n%s", out)
	}
	m := submitted.FindStringSubmatch(run("sbatch", "-o", "job.out", "--wrap", `echo "$SLURM_JOB_NAME ran on $SLURMD_NODENAME"`))
	if m == nil {
		t.Fatal("sbatch printed no job id")
	}
	if !waitFor(60*time.Second, func() bool { return run("squeue", "-h", "-t", "all", "-j", m[1], "-o", "%T") == "COMPLETED\n" }) {
		t.Fatalf("job %s did not complete\nserver log:\n%s", m[1], f.Logs())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "job.out")); string(b) != "wrap ran on n1\n" {
		t.Errorf("job output %q, %v", b, err)
	}
	if out := run("sacct", "-n", "-X", "-P", "-j", m[1], "-o", "JobID,State"); out != m[1]+"|COMPLETED\n" {
		t.Errorf("sacct: %q", out)
	}

	// slurmd --conf-server, as root: slurmd's files into its conf-cache
	// (and /run/slurm/conf pointing there).
	slurmd := l.start("root", "/usr/sbin/slurmd", "-D", "-vv", "-N", "n2", "--conf-server", fmt.Sprintf("127.0.0.1:%d", f.port))
	cache := filepath.Join(spool, "n2", "conf-cache")
	if !waitFor(30*time.Second, func() bool {
		return strings.Contains(slurmd.out.String(), "Unable to register with slurm controller") || slurmd.exited()
	}) || slurmd.exited() {
		t.Fatalf("slurmd:\n%s\nserver log:\n%s", slurmd.out.String(), f.Logs())
	}
	got, _ := os.ReadFile(filepath.Join(cache, "slurm.conf"))
	want, _ := os.ReadFile(f.clientConf)
	if !bytes.Equal(got, want) {
		t.Errorf("slurmd's conf-cache/slurm.conf:\n%s\nwant:\n%s", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "acct_gather.conf")); string(b) != "# for slurmd\n" {
		t.Errorf("slurmd's acct_gather.conf: %q, %v", b, err)
	}
	if link, err := os.Readlink(l.path("/run/slurm/conf")); link != cache {
		t.Errorf("/run/slurm/conf -> %q (%v), want %s", link, err, cache)
	}
	// Its registration is refused (no slurmd belongs to the cluster: the
	// nodes are the engine's), and it keeps trying; nothing else changes.
	if !strings.Contains(slurmd.out.String(), "Unable to register with slurm controller (retry in 1s): Invalid node name specified") {
		t.Errorf("slurmd:\n%s", slurmd.out.String())
	}
	if out := run("squeue", "-h", "-t", "all", "-o", "%i %T"); out != m[1]+" COMPLETED\n" {
		t.Errorf("squeue beside the slurmd: %q", out)
	}
	slurmd.stop()
}

// stripStamp drops the "[2026-12-06T07:40:39.132] " a daemon puts before
// its lines once its log is set up.
var stampRe = regexp.MustCompile(`(?m)^\[[0-9T:.-]+\] `)

// untilLine is a daemon's output up to and with its first line holding
// s, time stamps dropped ("" if it has none yet).
func untilLine(out, s string) string {
	out = stampRe.ReplaceAllString(out, "")
	i := strings.Index(out, s)
	if i < 0 {
		return ""
	}
	if j := strings.IndexByte(out[i:], '\n'); j >= 0 {
		return out[:i+j+1]
	}
	return out
}

// TestConfiglessRefused: what a client sees when the server refuses, the
// same as from a real slurmctld of its release. Without enable_configless
// a client with SLURM_CONF_SERVER (and no slurm.conf) prints slurmctld's
// "ConfigLess mode is disabled in slurm configuration." and gives up;
// slurmd --conf-server run by a user other than root or SlurmUser is
// refused slurmd's files ("Invalid user id"): 22.05's slurmd exits,
// 24.11's and 26.05's retry every 10 s.
func TestConfiglessRefused(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			l := newLoginNode(t, rel)
			off := newFrontend(t, fakeCluster)
			on := newFrontend(t, "SlurmctldParameters=enable_configless\n"+fakeCluster)
			realOff := startRealCtld(t, rel)
			realOn := startRealCtldWith(t, rel, "SlurmctldParameters=enable_configless\n")
			dir := workDir(t, "cfgless-")
			sinfo := func(port int) (string, string, int) {
				return l.run("slurm", dir, []string{fmt.Sprintf("SLURM_CONF_SERVER=127.0.0.1:%d", port)}, "sinfo")
			}
			out, errs, code := sinfo(off.port)
			rOut, rErrs, rCode := sinfo(realOff.port)
			if out != rOut || errs != rErrs || code != rCode || !strings.Contains(errs, "ConfigLess mode is disabled in slurm configuration.") {
				t.Errorf("configless off: exit %d\nstdout %q\nstderr:\n%s\nreal slurmctld: exit %d\nstdout %q\nstderr:\n%s", code, out, errs, rCode, rOut, rErrs)
			}
			// With it on, the same client works against both (captured
			// with SLURM_FRONTEND_CAPTURE, as configless-client-REL.pcap).
			if out, errs, code := sinfo(on.port); code != 0 || !strings.HasPrefix(out, "PARTITION AVAIL") {
				t.Errorf("configless on: exit %d\n%s%s", code, out, errs)
			}
			stop := captureConfigless(t, "configless-client-"+rel+".pcap", realOn.port, realOn.port)
			if out, errs, code := sinfo(realOn.port); code != 0 || !strings.HasPrefix(out, "PARTITION AVAIL") {
				t.Errorf("configless on, real slurmctld: exit %d\n%s%s", code, out, errs)
			}
			stop()

			slurmd := func(port int) string {
				d := l.start("slurm", "/usr/sbin/slurmd", "-D", "--conf-server", fmt.Sprintf("127.0.0.1:%d", port))
				var got string
				waitFor(30*time.Second, func() bool {
					got = untilLine(d.out.String(), "_establish_configuration: failed to load configs")
					return got != "" || d.exited()
				})
				d.stop()
				if got == "" {
					got = d.out.String()
				}
				return got
			}
			got, want := slurmd(on.port), slurmd(realOn.port)
			if got != want || !strings.Contains(got, "failed to fetch remote configs: Invalid user id") {
				t.Errorf("slurmd as slurm:\n%s\nreal slurmctld:\n%s", got, want)
			}
			if !strings.Contains(on.Logs(), "config request for slurmd configs by uid 64030 at 127.0.0.1: rejected") {
				t.Errorf("the server did not log the refusal:\n%s", on.Logs())
			}
		})
	}
}

// TestConfiglessRealCtld: the real sackd of 24.11 and 26.05 against a
// real slurmctld of its release with enable_configless and against the
// frontend, each with the same operator files beside its config: a
// cli_filter.lua and a plugstack.conf (oci.conf, scrun.lua, topology.conf
// absent), read by a reconfigure. Each sackd writes the same files with
// the same contents; after cli_filter.lua changes, `scontrol
// reconfigure` pushes it and each sackd rewrites its copy.
//
// With SLURM_FRONTEND_CAPTURE=DIR the exchanges with the real slurmctld
// (REQUEST_CONFIG, RESPONSE_CONFIG, REQUEST_RECONFIGURE_SACKD) are
// captured into DIR/configless-sackd-REL.pcap (codec/testdata/configless;
// TestConfiglessRefused captures a client's fetch).
func TestConfiglessRealCtld(t *testing.T) {
	const plugstack = "# no SPANK plugins on the login nodes\n"
	for _, rel := range []string{"24.11", "26.05"} {
		t.Run(rel, func(t *testing.T) {
			type side struct {
				dir   string
				files map[string]string
			}
			serve := func(name, confDir string, port int, push func(), sackdPort int, capture func() func()) side {
				os.WriteFile(filepath.Join(confDir, "cli_filter.lua"), []byte(filterLua), 0o644)
				os.WriteFile(filepath.Join(confDir, "plugstack.conf"), []byte(plugstack), 0o644)
				push() // slurmctld read its files when it started
				stopCapture := capture()
				defer stopCapture()
				l := newLoginNode(t, rel)
				args := []string{"/usr/sbin/sackd", "-D", "--conf-server", fmt.Sprintf("127.0.0.1:%d", port)}
				if rel >= "25.05" {
					args = append(args, "--port", fmt.Sprint(sackdPort))
				}
				d := l.start("root", args...)
				cf := l.path("/run/slurm/conf/plugstack.conf")
				if !waitFor(30*time.Second, func() bool { _, err := os.Stat(cf); return err == nil }) {
					t.Fatalf("%s: sackd wrote nothing:\n%s", name, d.out.String())
				}
				// A new cli_filter.lua, pushed.
				changed := strings.Replace(filterLua, `"filtered"`, `"refiltered"`, 1)
				os.WriteFile(filepath.Join(confDir, "cli_filter.lua"), []byte(changed), 0o644)
				push()
				lua := l.path("/run/slurm/conf/cli_filter.lua")
				if !waitFor(30*time.Second, func() bool { b, _ := os.ReadFile(lua); return string(b) == changed }) {
					t.Errorf("%s: the new cli_filter.lua did not reach sackd:\n%s", name, d.out.String())
				}
				s := side{files: map[string]string{}}
				ents, _ := os.ReadDir(l.path("/run/slurm/conf"))
				for _, e := range ents {
					b, _ := os.ReadFile(l.path("/run/slurm/conf/" + e.Name()))
					s.files[e.Name()] = string(b)
				}
				d.stop()
				return s
			}

			r := startRealCtldWith(t, rel, "SlurmctldParameters=enable_configless\n")
			sackdPort := r.port + 1 // 24.11: the SlurmdPort the slurm.conf names
			if rel >= "25.05" {
				sackdPort = freePort(t)
			}
			real := serve("real slurmctld", r.dir, r.port, func() {
				if out, errs, code := runClient(t, rel, r.conf, r.dir, nil, "scontrol", "reconfigure"); code != 0 {
					t.Fatalf("scontrol reconfigure: %s%s", out, errs)
				}
			}, sackdPort, func() func() { return captureConfigless(t, "configless-sackd-"+rel+".pcap", r.port, sackdPort) })

			f := newFrontend(t, configlessConf(freePort(t), freePort(t), ""))
			ours := serve("frontend", f.dir, f.port, func() {
				if out, errs, code := f.run(rel, "scontrol", "reconfigure"); code != 0 {
					t.Fatalf("scontrol reconfigure: %s%s", out, errs)
				}
			}, freePort(t), func() func() { return func() {} })

			if len(real.files) != 3 || len(ours.files) != 3 {
				t.Errorf("files written: real %d, frontend %d (want slurm.conf, cli_filter.lua, plugstack.conf)", len(real.files), len(ours.files))
			}
			for name, content := range real.files {
				if name == "slurm.conf" {
					continue // each server's own
				}
				if ours.files[name] != content {
					t.Errorf("%s: real slurmctld served %q, the frontend %q", name, content, ours.files[name])
				}
			}
			if _, ok := ours.files["slurm.conf"]; !ok {
				t.Error("no slurm.conf from the frontend")
			}
		})
	}
}

// captureConfigless starts tcpdump on loopback for the controller's and
// the sackd's ports, into name in the directory SLURM_FRONTEND_CAPTURE
// names (none: no capture); the returned function stops it.
func captureConfigless(t *testing.T, name string, ctlPort, sackdPort int) func() {
	dir := os.Getenv("SLURM_FRONTEND_CAPTURE")
	if dir == "" {
		return func() {}
	}
	file := filepath.Join(dir, name)
	cmd := exec.Command("tcpdump", "-i", "lo", "--immediate-mode", "-B", "16384", "-U", "-s", "0", "-w", file,
		fmt.Sprintf("tcp port %d or tcp port %d", ctlPort, sackdPort))
	errs, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatalf("tcpdump: %v", err)
	}
	line, _ := bufio.NewReader(errs).ReadString('\n')
	if !strings.Contains(line, "listening on") {
		t.Fatalf("tcpdump: %s", line)
	}
	rest := &lockedBuffer{}
	go func() { _, _ = io.Copy(rest, errs) }()
	stop := func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGINT)
			_ = cmd.Wait()
			t.Logf("tcpdump: %s", rest.String())
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestConfiglessBackendAI: on the Backend.AI engine the served slurm.conf
// has the manager's agents as nodes; when an agent joins, the frontend
// pushes the new slurm.conf to the sackd (26.05, on its --port: on this
// host SlurmdPort is the nodes' stand-in's), and the login node's sinfo
// shows the new node.
func TestConfiglessBackendAI(t *testing.T) {
	d, f := baiFrontend(t, nil, "SlurmctldParameters=enable_configless\n")
	l := newLoginNode(t, "26.05")
	sackd := l.start("root", "/usr/sbin/sackd", "-D", "--conf-server", fmt.Sprintf("127.0.0.1:%d", f.port), "--port", fmt.Sprint(freePort(t)))
	conf := l.path("/run/slurm/conf/slurm.conf")
	if !waitFor(30*time.Second, func() bool { _, err := os.Stat(conf); return err == nil }) {
		t.Fatalf("sackd wrote no slurm.conf\nsackd:\n%s\nserver log:\n%s", sackd.out.String(), f.Logs())
	}
	if got, _ := os.ReadFile(conf); !bytes.Contains(got, []byte("\nNodeName=i-agent0001 ")) || bytes.Contains(got, []byte("i-agent0002")) {
		t.Fatalf("served slurm.conf:\n%s", got)
	}
	dir := workDir(t, "cfgless-")
	sinfo := func() string { return l.mustRun("slurm", dir, nil, f.Logs, "sinfo", "-h", "-N", "-o", "%N") }
	if out := sinfo(); out != "i-agent0000\ni-agent0001\n" {
		t.Errorf("sinfo: %q", out)
	}
	if err := d.AddAgents([]double.Agent{{ID: "i-agent0002", Slots: map[string]string{"cpu": "2", "mem": "4g"}}}); err != nil {
		t.Fatal(err)
	}
	// The topology is read again within 10 s.
	if !waitFor(60*time.Second, func() bool {
		b, _ := os.ReadFile(conf)
		return bytes.Contains(b, []byte("\nNodeName=i-agent0002 "))
	}) {
		t.Fatalf("the new agent did not reach sackd\nsackd:\n%s\nserver log:\n%s", sackd.out.String(), f.Logs())
	}
	if out := sinfo(); out != "i-agent0000\ni-agent0001\ni-agent0002\n" {
		t.Errorf("sinfo after the push: %q", out)
	}
}

// TestConfiglessAnyAddress: a server listening on every address serves
// each login node the address it reached the server at (127.0.0.2 here),
// for the controller and the slurmdbd stand-in, not its own 127.0.0.1.
func TestConfiglessAnyAddress(t *testing.T) {
	port := freePort(t)
	f := newFrontend(t, configlessConf(freePort(t), freePort(t), ""), "--listen", fmt.Sprintf("0.0.0.0:%d", port))
	l := newLoginNode(t, "26.05")
	sackd := l.start("root", "/usr/sbin/sackd", "-D", "--conf-server", fmt.Sprintf("127.0.0.2:%d", port), "--port", fmt.Sprint(freePort(t)))
	conf := l.path("/run/slurm/conf/slurm.conf")
	if !waitFor(30*time.Second, func() bool { _, err := os.Stat(conf); return err == nil }) {
		t.Fatalf("sackd wrote no slurm.conf\nsackd:\n%s\nserver log:\n%s", sackd.out.String(), f.Logs())
	}
	got, _ := os.ReadFile(conf)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	for _, line := range []string{"\nSlurmctldHost=" + host + "(127.0.0.2)\n", fmt.Sprintf("\nSlurmctldPort=%d\n", port),
		"\nAccountingStorageHost=127.0.0.2\n", "\nNodeName=n1 NodeAddr=127.0.0.1 "} {
		if !bytes.Contains(got, []byte(line)) {
			t.Errorf("served slurm.conf lacks %q:\n%s", line, got)
		}
	}
	dir := workDir(t, "cfgless-")
	os.Chown(dir, 64030, 64030)
	if out := l.mustRun("slurm", dir, nil, f.Logs, "sinfo", "-h", "-o", "%P %D"); out != "cpu* 1\n" {
		t.Errorf("sinfo: %q", out)
	}
	if out, errs, code := l.run("slurm", dir, nil, "sacct", "-n", "-X"); code != 0 || out != "" {
		t.Errorf("sacct: exit %d %q %s", code, out, errs)
	}
}
