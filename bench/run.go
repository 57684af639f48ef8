package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

// RunSpec is one measurement: one workload against one target at one
// concurrency (closed loop) or one rate (open loop).
type RunSpec struct {
	Target   Target
	Workload *Workload
	Label    string // scenario, e.g. "10000 jobs"

	// Closed loop: Concurrency workers each start their next operation
	// as soon as the previous one ends. Open loop (Rate > 0): operation
	// i is scheduled at start + i/Rate whatever happened before, and its
	// latency is measured from that scheduled time (no coordinated
	// omission); Concurrency then bounds the operations in flight
	// (default 4096): when all are busy, the next ones start late and
	// their lateness is part of their latency.
	Concurrency int
	Rate        float64

	Warmup   time.Duration // load before the window, not counted
	Duration time.Duration // the measurement window
	Timeout  time.Duration // per RPC, like a client's MessageTimeout (default 10 s)

	// Settle waits after the run until the target's CPU use falls below
	// 5 % of a core (at most SettleMax), so that work a slow server still
	// has queued does not leak into the next run.
	Settle    bool
	SettleMax time.Duration

	Hold     int    // connections held open to the target during the run
	HoldMode string // "idle" (connect, send nothing) or "slow" (one byte a second)

	// CopyReplies copies every reply byte into the generator. By default
	// only a reply's first 64 KiB are (all the generator looks at); the
	// rest is received and dropped in the kernel (see caller.keep).
	CopyReplies bool

	Progress io.Writer // progress line (nil: none)
}

// RPCStats are one message type's figures within a run.
type RPCStats struct {
	Name       string  `json:"name"`
	Count      int64   `json:"count"`   // completed OK within the window
	PerSec     float64 `json:"per_sec"` // Count / window
	ReplyBytes int64   `json:"reply_bytes"`
	Latency    Summary `json:"latency"` // of those sent within the window
}

// Result is one run's report.
type Result struct {
	Target      string    `json:"target"`
	Addr        string    `json:"addr"`
	Workload    string    `json:"workload"`
	Label       string    `json:"label,omitempty"`
	Mode        string    `json:"mode"` // "closed" or "open"
	Concurrency int       `json:"concurrency"`
	Rep         int       `json:"rep,omitempty"`  // repetition (--repeat), from 0
	Rate        float64   `json:"rate,omitempty"` // scheduled ops/s (open loop)
	Started     time.Time `json:"started"`
	WarmupS     float64   `json:"warmup_s"`
	DurationS   float64   `json:"duration_s"`
	TimeoutS    float64   `json:"timeout_s"`

	Ops       int64   `json:"ops"` // operations completed OK within the window
	OpsPerSec float64 `json:"ops_per_sec"`
	RPCs      int64   `json:"rpcs"` // RPCs completed OK within the window
	RPCPerSec float64 `json:"rpc_per_sec"`
	// Latency of the operations started in the window that succeeded
	// (open loop: from their scheduled time).
	Latency  Summary    `json:"latency"`
	PerRPC   []RPCStats `json:"per_rpc"`
	ErrorOps int64      `json:"error_ops"` // operations started in the window that failed
	// Errors by kind, for the operations started in the window.
	Errors    map[string]int64 `json:"errors,omitempty"`
	ErrorRate float64          `json:"error_rate"`         // ErrorOps / (ErrorOps + successes started in the window)
	SendLag   *Summary         `json:"send_lag,omitempty"` // open loop: how late operations started
	JobsSeen  int64            `json:"jobs_seen"`          // record_count of the last JOB_INFO reply (-1: none)

	Server           *ProcStats  `json:"server,omitempty"`
	Aux              []ProcStats `json:"aux,omitempty"`
	ServerCPUPerOpUs float64     `json:"server_cpu_per_op_us,omitempty"`
	GeneratorCores   float64     `json:"generator_cores"`
	MachineCores     float64     `json:"machine_busy_cores"`
	OtherCores       float64     `json:"other_cores"` // machine busy minus generator, server and aux: other load on the box
	LoadAvg1         float64     `json:"loadavg1"`
	SettleS          float64     `json:"settle_s,omitempty"`
	Hold             int         `json:"hold,omitempty"`
	HoldMode         string      `json:"hold_mode,omitempty"`
	HoldOpen         int         `json:"hold_open,omitempty"` // held connections still open at the end
}

type stepStats struct {
	hist  Hist
	done  atomic.Int64
	bytes atomic.Int64
}

type runner struct {
	spec     *RunSpec
	minter   *Minter
	caller   caller
	start    time.Time
	winStart time.Time
	winEnd   time.Time
	interval time.Duration // open loop

	opHist   Hist
	lagHist  Hist
	steps    map[uint16]*stepStats
	opsDone  atomic.Int64 // completed in window
	rpcsDone atomic.Int64
	okStart  atomic.Int64 // succeeded, started in window
	errOps   atomic.Int64
	inFlight atomic.Int64
	next     atomic.Int64 // open loop schedule index
	jobsSeen atomic.Int64
	stopped  atomic.Bool

	errMu  sync.Mutex
	errors map[string]int64
}

func (r *runner) addErr(kind string) {
	r.errMu.Lock()
	r.errors[kind]++
	r.errMu.Unlock()
}

func in(t, a, b time.Time) bool { return !t.Before(a) && t.Before(b) }

// worker state, one per goroutine.
type worker struct {
	rnd    *rand.Rand
	chacha *rand.ChaCha8
	frame  []byte
	buf    []byte
	// last is the job this worker submitted last and has not cancelled
	// (0: none); submitFirst is the submission a cancel without one makes.
	last        uint32
	submitFirst *Step
}

// doOp runs one operation whose latency counts from opStart.
func (r *runner) doOp(w *worker, opStart time.Time) {
	steps := r.spec.Workload.ops(w.rnd)
	if len(steps) == 1 && steps[0].Cancel && w.last == 0 {
		// Nothing of this worker's to cancel yet: submit one first.
		steps = []Step{*r.submitStep(), steps[0]}
	}
	counted := in(opStart, r.winStart, r.winEnd)
	for i := range steps {
		st := &steps[i]
		body := st.Body
		if st.Cancel {
			body = KillBody(r.minter.Version, w.last)
			w.last = 0
		}
		var err error
		w.frame, err = r.minter.Frame(w.frame[:0], w.chacha, st.MsgType, st.AuthUID, body)
		if err != nil {
			if counted {
				r.errOps.Add(1)
				r.addErr("mint: " + err.Error())
			}
			return
		}
		t0 := time.Now()
		raw, rerr := r.caller.call(r.spec.Target.Addr, w.frame, &w.buf)
		if rerr == nil {
			rerr = r.check(st, raw)
		}
		if rerr == nil && st.MsgType == codec.REQUEST_SUBMIT_BATCH_JOB {
			w.last = submittedID(raw, r.minter.Version)
		}
		t1 := time.Now()
		if rerr != nil {
			if counted {
				r.errOps.Add(1)
				r.addErr(rerr.Kind)
			}
			if strings.HasPrefix(rerr.Kind, "connect") {
				time.Sleep(10 * time.Millisecond) // do not spin on a dead server
			}
			return
		}
		ss := r.steps[st.MsgType]
		if in(t0, r.winStart, r.winEnd) {
			ss.hist.Record(t1.Sub(t0))
		}
		if in(t1, r.winStart, r.winEnd) {
			ss.done.Add(1)
			ss.bytes.Add(int64(frameLen(raw)))
			r.rpcsDone.Add(1)
		}
	}
	end := time.Now()
	if counted {
		r.opHist.Record(end.Sub(opStart))
		r.okStart.Add(1)
	}
	if in(end, r.winStart, r.winEnd) {
		r.opsDone.Add(1)
	}
}

// submitStep is the workload's submission (the storm's SUBMIT_BATCH_JOB).
func (r *runner) submitStep() *Step {
	for i, st := range r.spec.Workload.StepTypes() {
		if st.MsgType == codec.REQUEST_SUBMIT_BATCH_JOB {
			return &r.spec.Workload.StepTypes()[i]
		}
	}
	panic("bench: a cancel step in a workload without a submission")
}

// submittedID is the job id of a RESPONSE_SUBMIT_BATCH_JOB (0 if none).
func submittedID(raw []byte, v uint16) uint32 {
	rep, err := parseReply(raw)
	if err != nil || rep.msgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
		return 0
	}
	var m codec.SubmitResponse
	rd := codec.NewReader(rep.body)
	if m.Decode(&rd, v) != nil {
		return 0
	}
	return m.StepID.JobID
}

// check validates a reply against what the step expects.
func (r *runner) check(st *Step, raw []byte) *rpcError {
	rep, err := parseReply(raw)
	if err != nil {
		return err
	}
	if rep.msgType == codec.RESPONSE_SLURM_RC {
		if rc := rcOf(rep.body); rc != 0 || st.Expect != codec.RESPONSE_SLURM_RC {
			return &rpcError{Kind: rcKind(rc)}
		}
		return nil
	}
	if rep.msgType != st.Expect {
		return &rpcError{Kind: fmt.Sprintf("%s %d", ErrUnexpected, rep.msgType)}
	}
	switch rep.msgType {
	case codec.RESPONSE_JOB_INFO:
		if len(rep.body) >= 4 {
			r.jobsSeen.Store(int64(binary.BigEndian.Uint32(rep.body)))
		}
	case codec.RESPONSE_SUBMIT_BATCH_JOB:
		var m codec.SubmitResponse
		rd := codec.NewReader(rep.body)
		if err := m.Decode(&rd, r.minter.Version); err != nil {
			return &rpcError{Kind: ErrBadFrame, Err: err}
		}
		if m.ErrorCode != 0 && m.ErrorCode != codec.ESLURM_JOB_HELD {
			return &rpcError{Kind: rcKind(m.ErrorCode)}
		}
	}
	return nil
}

func newWorker() *worker {
	c := newRand()
	var seed [32]byte
	_, _ = c.Read(seed[:])
	return &worker{rnd: rand.New(rand.NewChaCha8(seed)), chacha: c, frame: make([]byte, 0, 4096)}
}

// replyHead is how much of a reply the generator copies in by default.
const replyHead = 64 << 10

func keepOf(copyAll bool) int {
	if copyAll {
		return 0
	}
	return replyHead
}

// Run performs one measurement.
func Run(ctx context.Context, spec RunSpec, m *Minter) (*Result, error) {
	if spec.Workload == nil {
		return nil, fmt.Errorf("no workload")
	}
	if spec.Timeout <= 0 {
		spec.Timeout = 10 * time.Second
	}
	if spec.Duration <= 0 {
		spec.Duration = 10 * time.Second
	}
	if spec.SettleMax <= 0 {
		spec.SettleMax = 20 * time.Second
	}
	open := spec.Rate > 0
	if spec.Concurrency <= 0 {
		if open {
			spec.Concurrency = 4096
		} else {
			spec.Concurrency = 1
		}
	}
	r := &runner{spec: &spec, minter: m, caller: caller{timeout: spec.Timeout, keep: keepOf(spec.CopyReplies)},
		steps: map[uint16]*stepStats{}, errors: map[string]int64{}}
	r.jobsSeen.Store(-1)
	for _, st := range spec.Workload.StepTypes() {
		if r.steps[st.MsgType] == nil {
			r.steps[st.MsgType] = &stepStats{}
		}
	}

	var holder *Holder
	if spec.Hold > 0 {
		var err error
		holder, err = Hold(spec.Target.Addr, spec.Hold, spec.HoldMode, spec.Progress)
		if err != nil {
			return nil, err
		}
		defer holder.Close()
	}

	pids, labels := []int{}, []string{}
	if p := spec.Target.ServerPID(); p > 0 {
		pids, labels = append(pids, p), append(labels, "server")
	}
	for _, a := range spec.Target.Aux {
		pids, labels = append(pids, a.PID), append(labels, a.Label)
	}
	rss := startRSSWatch(pids)

	r.start = time.Now()
	r.winStart = r.start.Add(spec.Warmup)
	r.winEnd = r.winStart.Add(spec.Duration)
	var snapA, snapB cpuSnap
	snapDone := make(chan struct{})
	go func() {
		defer close(snapDone)
		time.Sleep(time.Until(r.winStart))
		snapA = takeSnap(pids)
		time.Sleep(time.Until(r.winEnd))
		snapB = takeSnap(pids)
	}()
	stopProgress := r.progress()

	var wg sync.WaitGroup
	if open {
		r.interval = time.Duration(float64(time.Second) / spec.Rate)
		if r.interval <= 0 {
			r.interval = 1
		}
	}
	for i := 0; i < spec.Concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker()
			for ctx.Err() == nil {
				var opStart time.Time
				if open {
					k := r.next.Add(1) - 1
					opStart = r.start.Add(time.Duration(k) * r.interval)
					if !opStart.Before(r.winEnd) {
						return
					}
					if d := time.Until(opStart); d > 0 {
						time.Sleep(d)
					}
					if in(opStart, r.winStart, r.winEnd) {
						r.lagHist.Record(time.Since(opStart))
					}
				} else {
					opStart = time.Now()
					if !opStart.Before(r.winEnd) {
						return
					}
				}
				r.inFlight.Add(1)
				r.doOp(w, opStart)
				r.inFlight.Add(-1)
			}
		}()
	}
	wg.Wait()
	<-snapDone
	r.stopped.Store(true)
	stopProgress()

	res := &Result{
		Target: spec.Target.Name, Addr: spec.Target.Addr, Workload: spec.Workload.Name, Label: spec.Label,
		Mode: "closed", Concurrency: spec.Concurrency, Started: r.start,
		WarmupS: spec.Warmup.Seconds(), DurationS: spec.Duration.Seconds(), TimeoutS: spec.Timeout.Seconds(),
		Ops: r.opsDone.Load(), RPCs: r.rpcsDone.Load(), Latency: r.opHist.Summarize(),
		ErrorOps: r.errOps.Load(), JobsSeen: r.jobsSeen.Load(), LoadAvg1: loadAvg(),
		Hold: spec.Hold, HoldMode: spec.HoldMode,
	}
	if open {
		res.Mode, res.Rate = "open", spec.Rate
		lag := r.lagHist.Summarize()
		res.SendLag = &lag
	}
	if holder != nil {
		res.HoldOpen = holder.Open()
	}
	res.OpsPerSec = float64(res.Ops) / spec.Duration.Seconds()
	res.RPCPerSec = float64(res.RPCs) / spec.Duration.Seconds()
	if len(r.errors) > 0 {
		res.Errors = r.errors
	}
	if tot := res.ErrorOps + r.okStart.Load(); tot > 0 {
		res.ErrorRate = float64(res.ErrorOps) / float64(tot)
	}
	seen := map[uint16]bool{}
	for _, st := range spec.Workload.StepTypes() {
		if seen[st.MsgType] {
			continue
		}
		seen[st.MsgType] = true
		ss := r.steps[st.MsgType]
		rs := RPCStats{Name: st.Name, Count: ss.done.Load(), Latency: ss.hist.Summarize()}
		rs.PerSec = float64(rs.Count) / spec.Duration.Seconds()
		if rs.Count > 0 {
			rs.ReplyBytes = ss.bytes.Load() / rs.Count
		}
		res.PerRPC = append(res.PerRPC, rs)
	}

	if spec.Settle && len(pids) > 0 {
		t0 := time.Now()
		for time.Since(t0) < spec.SettleMax {
			c0, _ := ProcCPU(pids[0])
			time.Sleep(300 * time.Millisecond)
			c1, _ := ProcCPU(pids[0])
			if c1-c0 < 15*time.Millisecond {
				break
			}
		}
		res.SettleS = time.Since(t0).Seconds()
	}
	peak := rss.finish()
	ps := procStats(pids, labels, snapA, snapB, peak)
	used := 0.0
	for i, p := range ps {
		used += p.CPUCores
		if labels[i] == "server" {
			p := p
			res.Server = &p
		} else {
			res.Aux = append(res.Aux, p)
		}
	}
	res.GeneratorCores, res.MachineCores = cores(snapA, snapB)
	res.OtherCores = max(0, res.MachineCores-res.GeneratorCores-used)
	if res.Server != nil && res.Ops > 0 {
		res.ServerCPUPerOpUs = res.Server.CPUSeconds / float64(res.Ops) * 1e6
	}
	if spec.Progress != nil {
		fmt.Fprintln(spec.Progress, res.Line())
	}
	return res, ctx.Err()
}

// progress prints a status line every second (rewritten in place on a
// terminal, one line every 5 s otherwise) until the returned func runs.
func (r *runner) progress() func() {
	w := r.spec.Progress
	if w == nil {
		return func() {}
	}
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	every := 5 * time.Second
	if tty {
		every = time.Second
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		var lastOps int64
		last := time.Now()
		for {
			select {
			case <-stop:
				if tty {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case now := <-t.C:
				ops := r.opsDone.Load()
				rate := float64(ops-lastOps) / now.Sub(last).Seconds()
				lastOps, last = ops, now
				phase := "measure"
				switch {
				case now.Before(r.winStart):
					phase = "warmup"
				case !now.Before(r.winEnd):
					phase = "drain"
				}
				el := now.Sub(r.start).Truncate(time.Second)
				total := r.winEnd.Sub(r.start)
				r.errMu.Lock()
				nerr := int64(0)
				for _, v := range r.errors {
					nerr += v
				}
				r.errMu.Unlock()
				line := fmt.Sprintf("%s %s %s %s %v/%v  ops %d (%.0f/s)  in flight %d  p99 %s  errors %d",
					r.spec.Target.Name, r.spec.Workload.Name, r.spec.loadDesc(), phase, el, total, ops, rate,
					r.inFlight.Load(), fmtMs(ms(r.opHist.Quantile(0.99))), nerr)
				if tty {
					fmt.Fprint(w, "\r\033[K"+line)
				} else {
					fmt.Fprintln(w, line)
				}
			}
		}
	}()
	return func() { close(stop); <-done }
}

func (s *RunSpec) loadDesc() string {
	if s.Rate > 0 {
		return fmt.Sprintf("rate=%g/s", s.Rate)
	}
	return fmt.Sprintf("c=%d", s.Concurrency)
}

// Line is a one-line summary of a result.
func (r *Result) Line() string {
	load := fmt.Sprintf("c=%d", r.Concurrency)
	if r.Mode == "open" {
		load = fmt.Sprintf("rate=%g/s", r.Rate)
	}
	lbl := ""
	if r.Label != "" {
		lbl = " [" + r.Label + "]"
	}
	s := fmt.Sprintf("%-8s %-7s%s %-9s %9.1f ops/s %9.1f rpc/s  p50 %s p99 %s p99.9 %s max %s",
		r.Target, r.Workload, lbl, load, r.OpsPerSec, r.RPCPerSec,
		fmtMs(r.Latency.P50Ms), fmtMs(r.Latency.P99Ms), fmtMs(r.Latency.P999Ms), fmtMs(r.Latency.MaxMs))
	if r.Server != nil {
		s += fmt.Sprintf("  server %.2f cores %s", r.Server.CPUCores, fmtKiB(r.Server.PeakMemKiB()))
	}
	s += fmt.Sprintf("  gen %.2f other %.2f", r.GeneratorCores, r.OtherCores)
	if r.JobsSeen >= 0 {
		s += fmt.Sprintf("  jobs %d", r.JobsSeen)
	}
	if r.ErrorOps > 0 {
		var kinds []string
		for k, v := range r.Errors {
			kinds = append(kinds, fmt.Sprintf("%s: %d", k, v))
		}
		sort.Strings(kinds)
		s += fmt.Sprintf("  ERRORS %d (%s)", r.ErrorOps, strings.Join(kinds, ", "))
	}
	return s
}

func fmtMs(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case v < 10:
		return fmt.Sprintf("%.2fms", v)
	case v < 1000:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fs", v/1000)
}

func fmtKiB(k int64) string {
	switch {
	case k <= 0:
		return "-"
	case k < 10*1024:
		return fmt.Sprintf("%d KiB", k)
	}
	return fmt.Sprintf("%.1f MiB", float64(k)/1024)
}
