package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/bench"
	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// rateLimitCluster: slurmctld's per-user limit, small enough that a few
// concurrent squeue exceed it.
const rateLimitCluster = fakeCluster + "SlurmctldParameters=rl_enable,rl_bucket_size=4,rl_refill_rate=2,rl_refill_period=1,rl_log_freq=0\n"

// TestRateLimit: one user's storm of stock squeue, of each release, is
// told to back off (24.11, 26.05: the clients sleep and retry, as they
// do against slurmctld) or held (22.05, whose clients know no back-off)
// and every squeue succeeds; sdiag counts exactly the RPCs served, none
// of the refusals; another user and root are not limited.
func TestRateLimit(t *testing.T) {
	f := newFrontend(t, rateLimitCluster)
	root := f.as(t)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			storm := f.as(t).user("slurm").within(3 * time.Minute)
			// RPCs one squeue sends, as sdiag counts them for its user.
			before := sdiagUserCount(t, root, rel, "slurm")
			time.Sleep(3 * time.Second) // the bucket refills
			storm.mustRun(rel, "squeue")
			per := sdiagUserCount(t, root, rel, "slurm") - before
			if per < 1 {
				t.Fatalf("sdiag counted %d RPCs for one squeue", per)
			}
			time.Sleep(3 * time.Second)
			const procs, rounds = 8, 2
			var mu sync.Mutex
			limited := 0
			var wg sync.WaitGroup
			for p := 0; p < procs; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < rounds; r++ {
						out, errs, code := storm.run(rel, "squeue", "-v")
						if code != 0 || !strings.Contains(out, "JOBID") {
							t.Errorf("stormer's squeue: exit %d\n%s%s", code, out, errs)
							return
						}
						if strings.Contains(errs, "RPC rate limited") {
							mu.Lock()
							limited++
							mu.Unlock()
						}
					}
				}()
			}
			// Another user within their own rate, and root, meanwhile:
			// never limited.
			for i := 0; i < 3; i++ {
				time.Sleep(1500 * time.Millisecond)
				out, errs, code := f.as(t).user("nobody").run(rel, "squeue", "-v")
				if code != 0 || strings.Contains(errs, "rate limited") {
					t.Errorf("another user's squeue during the storm: exit %d\n%s%s", code, out, errs)
				}
				if _, errs, code := root.run(rel, "sinfo", "-v"); code != 0 || strings.Contains(errs, "rate limited") {
					t.Errorf("root's sinfo during the storm: exit %d\n%s", code, errs)
				}
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			// Served RPCs only: one squeue's worth per squeue run, the
			// back-off answers not among them.
			if got, want := sdiagUserCount(t, root, rel, "slurm")-before, per*(1+procs*rounds); got != want {
				t.Errorf("sdiag counts %d RPCs of the stormer, want %d (%d squeue of %d RPCs)", got, want, 1+procs*rounds, per)
			}
			logs := f.Logs()
			if rel == "22.05" {
				if limited != 0 {
					t.Errorf("22.05 clients printed a rate-limit line %d times: they cannot back off", limited)
				}
				if !strings.Contains(logs, "exceeded by uid 64030") || !strings.Contains(logs, "telling to wait") {
					t.Errorf("no 22.05 request was held:\n%s", logs)
				}
			} else if limited == 0 {
				t.Errorf("no %s squeue of %d was told to back off", rel, procs*rounds)
			}
			t.Logf("%s: %d of %d squeue backed off, all succeeded", rel, limited, procs*rounds)
		})
	}
	if logs := f.Logs(); strings.Contains(logs, "exceeded by uid 65534") || strings.Contains(logs, "exceeded by uid 0 ") {
		t.Errorf("another user or root was limited:\n%s", logs)
	}
}

// sdiagUserCount is sdiag's RPC count for user (root's view).
func sdiagUserCount(t *testing.T, r runner, rel, user string) int {
	t.Helper()
	out := r.mustRun(rel, "sdiag")
	m := regexp.MustCompile(`(?m)^\s*` + user + `\s*\(\s*\d+\)\s*count:(\d+)`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestRateLimitPerHost: the per-host bucket is charged for connections
// the kernel saw (the eBPF filter on the listener) that brought no
// request: a host that opens many idle connections is told to back off
// while another host, and the same user from it, are served.
func TestRateLimitPerHost(t *testing.T) {
	f := newFrontend(t, fakeCluster+"SlurmctldParameters=rl_host_bucket_size=20,rl_host_refill_rate=1,rl_host_refill_period=60\n")
	m, err := bench.NewMinter("/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	m.UID, m.GID = 64030, 64030
	addr := fmt.Sprintf("127.0.0.1:%d", f.port)
	ping := func(from string) uint32 {
		t.Helper()
		raw, err := m.Frame(nil, rand.Reader, codec.REQUEST_PING, munge.UIDAny, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := rpcFrom(from, addr, raw)
		if err != nil || rep.MsgType != codec.RESPONSE_SLURM_RC {
			t.Fatalf("ping from %s: %v, reply %d", from, err, rep.MsgType)
		}
		return rcOfFrame(rep)
	}
	if rc := ping("127.0.0.2"); rc != 0 {
		t.Fatalf("first ping from 127.0.0.2: rc %d", rc)
	}
	// 40 connections from 127.0.0.2 that say nothing.
	var idle []net.Conn
	for i := 0; i < 40; i++ {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		c, err := d.Dial("tcp4", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	time.Sleep(1500 * time.Millisecond) // the edge reads the counters twice a second
	if rc := ping("127.0.0.2"); rc != codec.SLURMCTLD_COMMUNICATIONS_BACKOFF {
		t.Fatalf("ping from the flooding host: rc %d, want SLURMCTLD_COMMUNICATIONS_BACKOFF\n%s", rc, f.Logs())
	}
	if rc := ping("127.0.0.3"); rc != 0 {
		t.Fatalf("ping from another host: rc %d", rc)
	}
	if !waitLog(f, "RPC rate limit (per host) exceeded by uid 64030 with REQUEST_PING from 127.0.0.2") {
		t.Errorf("no log line for the host's refusal:\n%s", f.Logs())
	}
	logs := f.Logs()
	if !strings.Contains(logs, "connection accounting: eBPF") {
		t.Logf("counted in userspace here:\n%s", logs)
	}
}

// TestReconfigureRateLimitsAndLevel: scontrol reconfigure applies the
// file's rate limits and log level (a restarted slurmctld's), and a file
// with an rl_* value slurmctld would not start on is refused, the old
// settings kept.
func TestReconfigureRateLimitsAndLevel(t *testing.T) {
	f := newFrontend(t, fakeCluster)
	slurm := f.as(t).user("slurm")
	burst := func() (limited int) {
		for i := 0; i < 6; i++ {
			_, errs, code := slurm.run("24.11", "squeue", "-v")
			if code != 0 {
				t.Fatalf("squeue: exit %d\n%s", code, errs)
			}
			if strings.Contains(errs, "RPC rate limited") {
				limited++
			}
		}
		return limited
	}
	if n := burst(); n != 0 {
		t.Fatalf("%d squeue limited with no limit configured", n)
	}
	appendConf := func(s string) {
		cf, err := os.OpenFile(f.configPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(cf, s)
		cf.Close()
	}
	appendConf("SlurmctldParameters=rl_enable,rl_bucket_size=2,rl_refill_rate=1\nSlurmctldDebug=debug\n")
	f.mustRun("26.05", "scontrol", "reconfigure")
	if n := burst(); n == 0 {
		t.Errorf("no squeue limited after a reconfigure to a bucket of 2")
	}
	if !waitLog(f, "msg=rpc") {
		t.Errorf("no debug line after a reconfigure to SlurmctldDebug=debug")
	}
	appendConf("SlurmctldParameters=rl_enable,rl_bucket_size=0\n")
	if _, _, code := f.run("26.05", "scontrol", "reconfigure"); code == 0 {
		t.Errorf("a reconfigure to rl_bucket_size=0 was accepted")
	}
	time.Sleep(3 * time.Second)
	if n := burst(); n == 0 {
		t.Errorf("the limits were dropped by a refused reconfigure")
	}
}

// rpcFrom sends one request frame to addr from the local address from
// (another host, as the per-host limit sees it) and returns the reply.
func rpcFrom(from, addr string, frame []byte) (codec.Frame, error) {
	var fr codec.Frame
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp4", addr)
	if err != nil {
		return fr, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(frame); err != nil {
		return fr, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return fr, err
	}
	rest := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(c, rest); err != nil {
		return fr, err
	}
	err = codec.DecodeFrame(append(hdr[:], rest...), &fr)
	return fr, err
}

// rcOfFrame is a RESPONSE_SLURM_RC's code (0 for another reply).
func rcOfFrame(f codec.Frame) uint32 {
	if f.MsgType != codec.RESPONSE_SLURM_RC || len(f.Body) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(f.Body)
}

// waitLog waits (up to 5 s) for the server's log to hold s: the log
// reaches the test through a pipe, read apart from the clients' replies.
func waitLog(f *frontend, s string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(f.Logs(), s) {
			return true
		}
	}
	return strings.Contains(f.Logs(), s)
}
