package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
	"github.com/lablup/slurm-frontend/state"
)

// CloneJobs grows the job store in dir to n jobs by copying its last job
// record (one submitted through the protocol, so its fields are a real
// submission's) under new IDs, in large transactions: filling 100,000
// jobs one RPC at a time would take minutes. The clones have no stored
// script (they are held and only listed); the store must not be open.
func CloneJobs(dir string, n int) (int, error) {
	st, err := state.Open(dir)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	jobs, err := st.Jobs()
	if err != nil {
		return 0, err
	}
	if len(jobs) == 0 {
		return 0, fmt.Errorf("%s holds no job to copy", dir)
	}
	tmpl := *jobs[len(jobs)-1]
	added := 0
	for len(jobs)+added < n {
		batch := min(1000, n-len(jobs)-added)
		_, err := st.Submit(uint32(batch), nil, func(first uint32) ([]*state.Job, error) {
			out := make([]*state.Job, batch)
			for k := range out {
				j := tmpl
				j.ID = first + uint32(k)
				j.Name = tmpl.Name + strconv.Itoa(int(j.ID))
				j.Priority = 0
				out[k] = &j
			}
			return out, nil
		})
		if err != nil {
			return added, err
		}
		added += batch
	}
	return added, nil
}

// StartResult is what starting a controller costs.
type StartResult struct {
	Serving      time.Duration // start to the first answered PARTITION_INFO
	FirstListing time.Duration // start to the first whole JOB_INFO reply received
	Jobs         uint32        // records in that reply
	ListingBytes int
	// Memory is RSS plus the memory files (see ProcMemory): the job
	// listings slurm-frontend keeps for sendfile are in memory files,
	// outside RSS until touched.
	MemKiB        int64 // right after the first listing
	HWMKiB        int64 // peak RSS until then (VmHWM)
	SettledMemKiB int64 // memory after Settle more (idle) time
	// The settled memory split: anonymous memory (the heap), file pages
	// mapped in (the store's tables and logs, which the kernel may
	// drop) and memory files (encoded listings).
	SettledAnonKiB, SettledFileKiB, SettledMemFilesKiB int64
}

// Settle is how long MeasureStart waits, idle, before reading RSS again:
// the Go runtime returns the start-up garbage to the system over a few
// seconds, so this is what the server keeps.
var Settle = 5 * time.Second

// MeasureStart starts argv (a controller that will listen on addr), and
// measures how long until it answers, how long until a stock squeue's
// first JOB_INFO is answered in full, and its RSS then. The process is
// stopped (SIGTERM) before returning, after then (if not nil) has run.
func MeasureStart(ctx context.Context, argv []string, addr string, m *Minter, timeout time.Duration, then func() error) (*StartResult, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	c := caller{timeout: timeout}
	rnd := newRand()
	var buf []byte
	res := &StartResult{}
	part, err := m.Frame(nil, rnd, codec.REQUEST_PARTITION_INFO, munge.UIDAny, SqueuePartInfo(m.Version))
	if err != nil {
		return nil, err
	}
	for {
		if _, rerr := c.call(addr, part, &buf); rerr == nil {
			res.Serving = time.Since(start)
			break
		}
		select {
		case err := <-done:
			done <- err
			return nil, fmt.Errorf("%s exited before serving: %v", argv[0], err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(start) > timeout {
			return nil, fmt.Errorf("%s not serving on %s after %v", argv[0], addr, timeout)
		}
	}
	ji, err := m.Frame(nil, rnd, codec.REQUEST_JOB_INFO, munge.UIDAny, SqueueJobInfo(m.Version))
	if err != nil {
		return nil, err
	}
	raw, rerr := c.call(addr, ji, &buf)
	if rerr != nil {
		return nil, rerr
	}
	res.FirstListing = time.Since(start)
	rep, rerr := parseReply(raw)
	if rerr != nil {
		return nil, rerr
	}
	if rep.msgType != codec.RESPONSE_JOB_INFO || len(rep.body) < 4 {
		return nil, fmt.Errorf("JOB_INFO answered with %s", codec.MsgTypeName(rep.msgType))
	}
	res.Jobs = binary.BigEndian.Uint32(rep.body)
	res.ListingBytes = len(raw)
	if res.MemKiB, err = ProcMemory(cmd.Process.Pid); err != nil {
		return nil, err
	}
	if _, res.HWMKiB, err = ProcMem(cmd.Process.Pid); err != nil {
		return nil, err
	}
	time.Sleep(Settle)
	st, err := ProcStatus(cmd.Process.Pid, "RssAnon", "RssFile")
	if err != nil {
		return nil, err
	}
	if res.SettledMemFilesKiB, err = ProcMemFiles(cmd.Process.Pid); err != nil {
		return nil, err
	}
	res.SettledAnonKiB, res.SettledFileKiB = st["RssAnon"], st["RssFile"]
	res.SettledMemKiB = res.SettledAnonKiB + res.SettledFileKiB + res.SettledMemFilesKiB
	if then != nil {
		if err := then(); err != nil {
			return nil, err
		}
	}
	return res, nil
}
