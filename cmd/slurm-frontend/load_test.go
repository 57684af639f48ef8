package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/bench"
	"github.com/lablup/slurm-frontend/codec"
)

// TestLoad is the load part of the hardening campaign (make reliability;
// SLURM_FRONTEND_RELIABILITY=1): 2,000 queued jobs, then at once 10,000
// idle connections, 1,000 slowloris writers (a request one byte a
// second), 200 clients that send a squeue request and never read the
// 1.3 MB reply, and a storm of 64 squeue pollers for 20 s. Meanwhile a
// canary pings the server every 100 ms and the stock squeue of each
// release runs every 2 s: none may fail or starve (the loop never waits
// for a peer), and the server's memory (RSS and memory files) stays
// bounded. The never-reading clients' connections are let go by the
// server; the storm's rate is reported beside the same storm without the
// hostile connections, measured in the same run.
func TestLoad(t *testing.T) {
	if os.Getenv("SLURM_FRONTEND_RELIABILITY") == "" {
		t.Skip("part of the reliability campaign: make reliability (SLURM_FRONTEND_RELIABILITY=1)")
	}
	var lim syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	if lim.Max < 14000 {
		t.Skipf("RLIMIT_NOFILE hard limit %d: the test holds 11,400 connections", lim.Max)
	}
	old := lim
	lim.Cur = lim.Max
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) // the server inherits it
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })

	f := newFrontend(t, fakeCluster)
	addr := fmt.Sprintf("127.0.0.1:%d", f.port)
	pid := f.cmd.Process.Pid
	m, err := bench.NewMinter("/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := bench.Fill(ctx, addr, 2000, 16, m, 0, nil); err != nil {
		t.Fatal(err)
	}
	wl, err := bench.NewWorkload("squeue", codec.V24_11, 0)
	if err != nil {
		t.Fatal(err)
	}
	target := bench.Target{Name: "ours", Addr: addr, PID: pid}
	storm := func() *bench.Result {
		r, err := bench.Run(ctx, bench.RunSpec{Target: target, Workload: wl, Concurrency: 64, Warmup: 2 * time.Second, Duration: 20 * time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := storm()
	memBase, _ := bench.ProcMemory(pid) // KiB
	fdBase := fds(pid)

	// The hostile connections.
	idle, err := bench.Hold(addr, 10000, "idle", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	slow, err := bench.Hold(addr, 1000, "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	var deaf []net.Conn
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.(*net.TCPConn).SetReadBuffer(4096) // and never read
		fr, _ := m.Frame(nil, rand.Reader, codec.REQUEST_JOB_INFO, 0xffffffff, bench.SqueueJobInfo(codec.V24_11))
		c.Write(fr)
		deaf = append(deaf, c)
	}
	defer func() {
		for _, c := range deaf {
			c.Close()
		}
	}()

	// Watchers: canary pings, stock clients, memory.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var canary []time.Duration
	var canaryFail atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			start := time.Now()
			if err := pingOnce(addr, m); err != nil {
				canaryFail.Add(1)
				continue
			}
			canary = append(canary, time.Since(start))
		}
	}()
	type clientRun struct {
		rel  string
		took time.Duration
		ok   bool
		err  string
	}
	var mu sync.Mutex
	var clients []clientRun
	for _, rel := range releases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Second):
				}
				start := time.Now()
				out, errs, code := runClient(t, rel, f.clientConf, f.dir, nil, "squeue", "-h", "-o", "%i")
				cr := clientRun{rel: rel, took: time.Since(start), ok: code == 0 && strings.Count(out, "\n") == 2000}
				if !cr.ok {
					cr.err = fmt.Sprintf("exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errs)
				}
				mu.Lock()
				clients = append(clients, cr)
				mu.Unlock()
			}
		}()
	}
	var memPeak atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			if v, err := bench.ProcMemory(pid); err == nil && v > memPeak.Load() {
				memPeak.Store(v)
			}
		}
	}()

	loaded := storm()
	heldIdle, heldSlow := idle.Open(), slow.Open()
	close(stop)
	wg.Wait()

	// The deaf clients' connections: the server wrote each reply into the
	// socket (what the kernel would take) and let go; within the sweeper's
	// DoneTimeout (10 s) at the latest, none is left open on its side.
	deadline := time.Now().Add(15 * time.Second)
	var fdNow int
	for {
		fdNow = fds(pid)
		if fdNow <= fdBase+heldIdle+heldSlow+50 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}

	if !f.alive() {
		t.Fatalf("server died:\n%s", f.Logs())
	}
	if n := canaryFail.Load(); n > 0 {
		t.Errorf("%d canary pings failed under load", n)
	}
	sort.Slice(canary, func(i, j int) bool { return canary[i] < canary[j] })
	pct := func(p float64) time.Duration {
		if len(canary) == 0 {
			return 0
		}
		return canary[min(len(canary)-1, int(p*float64(len(canary))))]
	}
	if len(canary) < 50 || pct(1) > 5*time.Second {
		t.Errorf("canary: %d pings answered, slowest %v: a client starved", len(canary), pct(1))
	}
	failed, slowest := 0, time.Duration(0)
	for _, c := range clients {
		if !c.ok {
			failed++
			t.Errorf("stock squeue %s under load: %s", c.rel, c.err)
		}
		slowest = max(slowest, c.took)
	}
	if len(clients) < 9 {
		t.Errorf("only %d stock squeue runs completed in the storm", len(clients))
	}
	if loaded.ErrorOps > 0 {
		t.Errorf("the storm under load had %d failed operations: %v", loaded.ErrorOps, loaded.Errors)
	}
	const memBoundKiB = 1 << 20 // 1 GiB
	if memPeak.Load() > memBoundKiB {
		t.Errorf("server memory peaked at %d MiB under load (bound %d MiB)", memPeak.Load()>>10, memBoundKiB>>10)
	}
	if fdNow > fdBase+heldIdle+heldSlow+50 {
		t.Errorf("the server still holds %d descriptors 15 s after the deaf clients' requests (%d before, %d held connections)", fdNow, fdBase, heldIdle+heldSlow)
	}
	t.Logf("RESULT load: %d idle + %d slowloris connections held, 200 never-reading clients let go (server descriptors %d before, %d after); "+
		"squeue storm (64 pollers, 2,000 jobs) %.0f/s under load vs %.0f/s without (%.2fx), p99 %.1f ms vs %.1f ms, %d errors; "+
		"canary ping p50 %v p99 %v max %v over %d pings, %d failed; stock squeue 22.05/24.11/26.05: %d runs, %d failed, slowest %v; "+
		"server memory %d MiB before, peak %d MiB",
		heldIdle, heldSlow, fdBase, fdNow, loaded.OpsPerSec, base.OpsPerSec, loaded.OpsPerSec/base.OpsPerSec,
		loaded.Latency.P99Ms, base.Latency.P99Ms, loaded.ErrorOps,
		pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond), len(canary), canaryFail.Load(),
		len(clients), failed, slowest.Round(time.Millisecond), memBase>>10, memPeak.Load()>>10)
}

// pingOnce sends one REQUEST_PING and waits for its RC.
func pingOnce(addr string, m *bench.Minter) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fr, err := m.Frame(nil, rand.Reader, codec.REQUEST_PING, 0, nil)
	if err != nil {
		return err
	}
	if _, err := c.Write(fr); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	var f codec.Frame
	if err := codec.DecodeFrame(buf[:n], &f); err != nil || f.MsgType != codec.RESPONSE_SLURM_RC {
		return fmt.Errorf("ping reply %x: %v", buf[:n], err)
	}
	return nil
}

// fds counts a process's open descriptors.
func fds(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}
