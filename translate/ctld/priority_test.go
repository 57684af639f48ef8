package ctld

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// TestBasicPriority: priority/basic as slurmctld's set_job_prio gives it —
// one less than the lowest given so far, none for a held submission, a
// new (lower) one at release, so a released job queues behind every job
// given a priority before it.
func TestBasicPriority(t *testing.T) {
	c := newTestController(t, fakeCluster(t, "slurm-24.11"), state.NewRPCStats())
	const v = codec.V24_11
	submit := func(held bool) uint32 {
		t.Helper()
		d := codec.NewJobDesc()
		d.Script, d.Environment, d.UserID, d.GroupID, d.WorkDir = "#!/bin/sh\ntrue\n", []string{"PATH=/bin"}, 0, 0, "/tmp"
		if held {
			d.Priority = 0
		}
		w := codec.Writer{}
		d.Encode(&w, v)
		rep := c.Slow(&Request{Version: v, MsgType: codec.REQUEST_SUBMIT_BATCH_JOB, Body: w.B})
		if rep.MsgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
			t.Fatalf("submit: reply type %d", rep.MsgType)
		}
		var resp codec.SubmitResponse
		r := codec.NewReader(rep.Body)
		if err := resp.Decode(&r, v); err != nil {
			t.Fatal(err)
		}
		return resp.StepID.JobID
	}
	prio := func(id uint32) uint32 { return c.entry(id).job().Priority }
	a := submit(false)
	h := submit(true)
	b := submit(false)
	if prio(a) != topPriority-1 || prio(h) != 0 || prio(b) != topPriority-2 {
		t.Fatalf("priorities %d %d %d, want %d, 0 (held), %d (the held job took none)", prio(a), prio(h), prio(b), topPriority-1, topPriority-2)
	}
	d := codec.NewJobDesc()
	d.JobIDStr, d.Priority = strconv.FormatUint(uint64(h), 10), codec.Infinite
	w := codec.Writer{}
	d.Encode(&w, v)
	if rep := c.Slow(&Request{Version: v, MsgType: codec.REQUEST_UPDATE_JOB, Body: w.B}); rep.MsgType != codec.RESPONSE_SLURM_RC {
		t.Fatalf("release: reply type %d", rep.MsgType)
	}
	if got := prio(h); got != topPriority-3 {
		t.Errorf("released job's priority %d, want %d: below every job given one before the release", got, topPriority-3)
	}
	// No scheduler runs in this test: the reason is the release's own.
	if got := c.entry(h).job().Reason; got != codec.WAIT_NO_REASON {
		t.Errorf("released job's reason %s, want None (slurmctld's _release_job_rec)", codec.JobReasonString(got, v))
	}
}

// TestMultifactorPriority: under priority/multifactor a job's priority is
// the weighted sum of slurmctld's factors at submission (job size
// favouring large jobs, partition factor over the largest), and sprio
// gets the same weighted factors.
func TestMultifactorPriority(t *testing.T) {
	cfg, err := conf.Parse(strings.NewReader(`ClusterName=mf
PriorityType=priority/multifactor
PriorityWeightJobSize=1000
PriorityWeightPartition=2000
PriorityWeightAge=500
NodeName=n[1-4] CPUs=8 RealMemory=8000 State=UNKNOWN
PartitionName=low Nodes=n[1-4] Default=YES PriorityJobFactor=1 State=UP
PartitionName=high Nodes=n[1-4] PriorityJobFactor=4 State=UP
`))
	if err != nil {
		t.Fatal(err)
	}
	c := newTestController(t, cfg, state.NewRPCStats())
	const v = codec.V24_11
	submit := func(part string, nodes, tasks uint32) uint32 {
		t.Helper()
		d := testJobDesc()
		d.Partition, d.MinNodes, d.NumTasks = part, nodes, tasks
		id := submitDesc(t, c, &d)
		if id == 0 {
			t.FailNow() // refused (reported)
		}
		return id
	}
	small := submit("low", 1, 1)   // js (1/4 + 1/32)/2 = 0.140625 → 140.625; part 1/4 → 500
	large := submit("high", 4, 32) // js (4/4 + 32/32)/2 = 1 → 1000; part 1 → 2000
	if got := c.entry(small).job().Priority; got != 640 {
		t.Errorf("small job in the low partition: priority %d, want 640 (140.625 job size + 500 partition)", got)
	}
	if got := c.entry(large).job().Priority; got != 3000 {
		t.Errorf("large job in the high partition: priority %d, want 3000", got)
	}
	w := codec.Writer{}
	(&codec.PriorityFactorsRequest{}).Encode(&w, v)
	rep := c.Slow(&Request{Version: v, MsgType: codec.REQUEST_PRIORITY_FACTORS, Body: w.B})
	if rep.MsgType == 0 {
		rep, _ = c.Fast(&Request{Version: v, MsgType: codec.REQUEST_PRIORITY_FACTORS, Body: w.B})
	}
	var info codec.PriorityFactorsInfo
	r := codec.NewReader(rep.Body)
	if err := info.Decode(&r, v); err != nil {
		t.Fatal(err)
	}
	if len(info.Jobs) != 2 {
		t.Fatalf("sprio: %d jobs, want 2", len(info.Jobs))
	}
	for _, o := range info.Jobs {
		f := o.Factors
		if o.StepID.JobID == small && (f.JS != 140.625 || f.Part != 500 || f.Age != 0 || o.Partition != "low") {
			t.Errorf("sprio, small job: %+v in %s", f, o.Partition)
		}
		if o.StepID.JobID == large && (f.JS != 1000 || f.Part != 2000 || o.Partition != "high") {
			t.Errorf("sprio, large job: %+v in %s", f, o.Partition)
		}
	}
}

// TestMultifactorRecalc: priority/multifactor's periodic pass (slurmctld's
// decay thread, every PriorityCalcPeriod) gives pending jobs the age they
// accrued; a priority an operator set is kept through it and through
// later updates; sprio shows the factors of the last pass.
func TestMultifactorRecalc(t *testing.T) {
	cfg, err := conf.Parse(strings.NewReader(`ClusterName=mf
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityMaxAge=1-0
NodeName=n[1-4] CPUs=8 RealMemory=8000 State=UNKNOWN
PartitionName=low Nodes=n[1-4] Default=YES State=UP
`))
	if err != nil {
		t.Fatal(err)
	}
	c := newTestController(t, cfg, state.NewRPCStats())
	const v = codec.V24_11
	rpc := func(typ uint16, enc func(*codec.Writer)) Reply {
		t.Helper()
		w := codec.Writer{}
		enc(&w)
		return c.Slow(&Request{Version: v, MsgType: typ, Body: w.B})
	}
	submit := func() uint32 {
		t.Helper()
		d := codec.NewJobDesc()
		d.Script, d.Environment, d.UserID, d.GroupID, d.WorkDir = "#!/bin/sh\ntrue\n", []string{"PATH=/bin"}, 0, 0, "/tmp"
		rep := rpc(codec.REQUEST_SUBMIT_BATCH_JOB, func(w *codec.Writer) { d.Encode(w, v) })
		var resp codec.SubmitResponse
		r := codec.NewReader(rep.Body)
		if err := resp.Decode(&r, v); err != nil || rep.MsgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
			t.Fatalf("submit: type %d: %v", rep.MsgType, err)
		}
		return resp.StepID.JobID
	}
	a, b := submit(), submit()
	prio := func(id uint32) uint32 { return c.entry(id).job().Priority }
	if prio(a) != 1 || prio(b) != 1 {
		t.Fatalf("at submission: priorities %d %d, want 1 (no age yet, no other factor)", prio(a), prio(b))
	}
	// Both began to accrue half a PriorityMaxAge ago.
	now := time.Now().Unix()
	c.mu.Lock()
	for _, id := range []uint32{a, b} {
		j := *c.entry(id).job()
		j.AccrueTime = now - 12*3600
		c.replace(c.entry(id), &j)
	}
	c.mu.Unlock()
	// An operator sets b's priority.
	d := codec.NewJobDesc()
	d.JobIDStr, d.Priority = strconv.FormatUint(uint64(b), 10), 7
	if rep := rpc(codec.REQUEST_UPDATE_JOB, func(w *codec.Writer) { d.Encode(w, v) }); rep.MsgType != codec.RESPONSE_SLURM_RC || rep.Body[3] != 0 {
		t.Fatalf("update priority: %d %v", rep.MsgType, rep.Body)
	}
	c.recalcPriorities(now)
	if got := prio(a); got != 500 {
		t.Errorf("after the periodic pass: priority %d, want 500 (half of PriorityMaxAge: age factor 0.5 × 1000)", got)
	}
	if got := prio(b); got != 7 {
		t.Errorf("an operator's priority after the periodic pass: %d, want 7 (kept)", got)
	}
	// A later update of b (its name) keeps the operator's priority.
	d = codec.NewJobDesc()
	d.JobIDStr, d.Name = strconv.FormatUint(uint64(b), 10), "renamed"
	rpc(codec.REQUEST_UPDATE_JOB, func(w *codec.Writer) { d.Encode(w, v) })
	if got := prio(b); got != 7 {
		t.Errorf("an operator's priority after another update: %d, want 7 (kept)", got)
	}
	rep := rpc(codec.REQUEST_PRIORITY_FACTORS, func(w *codec.Writer) { (&codec.PriorityFactorsRequest{}).Encode(w, v) })
	var info codec.PriorityFactorsInfo
	r := codec.NewReader(rep.Body)
	if err := info.Decode(&r, v); err != nil {
		t.Fatal(err)
	}
	for _, o := range info.Jobs {
		if o.StepID.JobID == a && o.Factors.Age != 500 {
			t.Errorf("sprio: job %d's age factor %v, want 500 (the pass's)", a, o.Factors.Age)
		}
	}
}
