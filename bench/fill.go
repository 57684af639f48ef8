package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// FillResult reports a fill.
type FillResult struct {
	Submitted int64            `json:"submitted"`
	Seconds   float64          `json:"seconds"`
	PerSec    float64          `json:"per_sec"`
	FirstID   uint32           `json:"first_job_id"`
	LastID    uint32           `json:"last_job_id"`
	Errors    map[string]int64 `json:"errors,omitempty"`
}

// Fill submits n held jobs (the sbatch workload's job descriptor) to addr
// with conc concurrent submitters, retrying failed submissions (after a
// short pause) until n succeeded or too many failed in a row.
func Fill(ctx context.Context, addr string, n, conc int, m *Minter, timeout time.Duration, progress io.Writer) (*FillResult, error) {
	return FillWith(ctx, addr, HeldJobDesc(), n, conc, m, timeout, progress)
}

// FillWith is Fill with another job descriptor (RunnableJobDesc: jobs the
// engine starts).
func FillWith(ctx context.Context, addr string, jd codec.JobDesc, n, conc int, m *Minter, timeout time.Duration, progress io.Writer) (*FillResult, error) {
	if conc <= 0 {
		conc = 16
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	body := encode(m.Version, &jd)
	var (
		tickets atomic.Int64
		done    atomic.Int64
		streak  atomic.Int64 // consecutive failures
		firstID atomic.Uint32
		lastID  atomic.Uint32
		mu      sync.Mutex
		errs    = map[string]int64{}
		wg      sync.WaitGroup
		giveUp  atomic.Bool
	)
	firstID.Store(^uint32(0))
	start := time.Now()
	stopProg := make(chan struct{})
	progDone := make(chan struct{})
	go func() {
		defer close(progDone)
		if progress == nil {
			<-stopProg
			return
		}
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopProg:
				return
			case <-t.C:
				d := done.Load()
				fmt.Fprintf(progress, "fill %s: %d/%d held jobs (%.0f/s)\n", addr, d, n, float64(d)/time.Since(start).Seconds())
			}
		}
	}()
	for i := 0; i < conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := caller{timeout: timeout}
			rnd := newRand()
			var frame, buf []byte
			for ctx.Err() == nil && !giveUp.Load() {
				if tickets.Add(1) > int64(n) {
					return
				}
				var err error
				frame, err = m.Frame(frame[:0], rnd, codec.REQUEST_SUBMIT_BATCH_JOB, munge.UIDAny, body)
				if err != nil {
					giveUp.Store(true)
					mu.Lock()
					errs["mint: "+err.Error()]++
					mu.Unlock()
					return
				}
				raw, rerr := cl.call(addr, frame, &buf)
				var id uint32
				if rerr == nil {
					id, rerr = submitReply(raw, m.Version)
				}
				if rerr != nil {
					tickets.Add(-1)
					mu.Lock()
					errs[rerr.Kind]++
					mu.Unlock()
					if streak.Add(1) > int64(100+conc) {
						giveUp.Store(true)
					}
					time.Sleep(50 * time.Millisecond)
					continue
				}
				streak.Store(0)
				done.Add(1)
				for {
					f := firstID.Load()
					if id >= f || firstID.CompareAndSwap(f, id) {
						break
					}
				}
				for {
					l := lastID.Load()
					if id <= l || lastID.CompareAndSwap(l, id) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stopProg)
	<-progDone
	res := &FillResult{Submitted: done.Load(), Seconds: time.Since(start).Seconds(), LastID: lastID.Load()}
	if res.Submitted > 0 {
		res.FirstID = firstID.Load()
	}
	res.PerSec = float64(res.Submitted) / res.Seconds
	if len(errs) > 0 {
		res.Errors = errs
	}
	if res.Submitted < int64(n) {
		return res, fmt.Errorf("fill %s: only %d of %d jobs submitted (errors: %s)", addr, res.Submitted, n, fmtErrors(errs))
	}
	return res, ctx.Err()
}

func submitReply(raw []byte, v uint16) (uint32, *rpcError) {
	rep, err := parseReply(raw)
	if err != nil {
		return 0, err
	}
	if rep.msgType == codec.RESPONSE_SLURM_RC {
		return 0, &rpcError{Kind: rcKind(rcOf(rep.body))}
	}
	if rep.msgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
		return 0, &rpcError{Kind: fmt.Sprintf("%s %d", ErrUnexpected, rep.msgType)}
	}
	var m codec.SubmitResponse
	rd := codec.NewReader(rep.body)
	if derr := m.Decode(&rd, v); derr != nil {
		return 0, &rpcError{Kind: ErrBadFrame, Err: derr}
	}
	if m.ErrorCode != 0 && m.ErrorCode != codec.ESLURM_JOB_HELD {
		return 0, &rpcError{Kind: rcKind(m.ErrorCode)}
	}
	return m.StepID.JobID, nil
}

func fmtErrors(e map[string]int64) string {
	if len(e) == 0 {
		return "none"
	}
	var s []string
	for k, v := range e {
		s = append(s, fmt.Sprintf("%s: %d", k, v))
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
