package ctld

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/local"
)

// Held and finished jobs are left in the store (cold) and read back when
// looked at: squeue, scontrol show job and a release see exactly what
// the store holds, and a job that becomes schedulable is held in memory
// again.
func TestColdJobs(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	fillHeld(t, store, n)
	cfg := fakeCluster(t, "slurm-24.11")
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(), ClusterName: "refcluster"})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range c.jobs {
		if e.hot != nil {
			t.Fatalf("held job %d is held in memory", e.id)
		}
		if got := e.job(); *got != *stored[i] {
			t.Fatalf("job %d read back as %+v, stored %+v", e.id, *got, *stored[i])
		}
	}

	// The listing equals one encoded from the store's records directly,
	// in every version.
	s := c.Snapshot()
	for _, v := range codec.Versions {
		m := codec.JobInfoMsg{LastUpdate: s.JobsUpdate}
		for _, j := range stored {
			m.Jobs = append(m.Jobs, c.jobInfo(s, j, v, false))
		}
		w := codec.Writer{}
		m.Encode(&w, v)
		want := codec.AppendFrame(nil, v, codec.RESPONSE_JOB_INFO, nil, w.B)
		body := codec.Writer{}
		(&codec.JobInfoRequest{}).Encode(&body, v)
		rep := serve(c, &Request{Version: v, MsgType: codec.REQUEST_JOB_INFO, Body: body.B})
		if !bytes.Equal(joined(rep), want) {
			t.Fatalf("%s: listing of cold jobs differs from the stored records' encoding", codec.VersionName(v))
		}
		// One job by ID (scontrol show job) reads it back too.
		body = codec.Writer{}
		(&codec.JobInfoSingleRequest{JobID: 150}).Encode(&body, v)
		rep = serve(c, &Request{Version: v, MsgType: codec.REQUEST_JOB_INFO_SINGLE, Body: body.B})
		if rep.MsgType != codec.RESPONSE_JOB_INFO {
			t.Fatalf("%s: job 150 answered with %s", codec.VersionName(v), codec.MsgTypeName(rep.MsgType))
		}
		var one codec.JobInfoMsg
		r := codec.NewReader(rep.Body)
		if err := one.Decode(&r, v); err != nil || len(one.Jobs) != 1 || one.Jobs[0].Name != stored[149].Name {
			t.Fatalf("%s: job 150 answered as %+v (%v)", codec.VersionName(v), one.Jobs, err)
		}
	}

	// Released: in memory again (the dispatcher looks at it). Finished:
	// cold again.
	c.mu.Lock()
	e := c.entry(10)
	j := *e.job()
	j.Priority, j.Reason, j.HeldBy = 1000, codec.WAIT_PRIORITY, 0
	if err := store.Put(&j); err != nil {
		t.Fatal(err)
	}
	c.replace(e, &j)
	if c.entry(10).hot == nil {
		t.Error("a released job stayed cold")
	}
	done := j
	done.State, done.EndTime = codec.JOB_COMPLETE, 1
	if err := store.Put(&done); err != nil {
		t.Fatal(err)
	}
	c.replace(c.entry(10), &done)
	if e := c.entry(10); e.hot != nil || e.job().State != codec.JOB_COMPLETE {
		t.Error("a finished job is held in memory or read back wrong")
	}
	// A change the store did not take stays in memory.
	lost := done
	lost.ExitCode = 9
	c.swap(c.entry(10), &lost, false)
	if e := c.entry(10); e.hot == nil || e.job().ExitCode != 9 {
		t.Error("an unstored change was left to the store")
	}
	c.mu.Unlock()

	// A store that cannot be read: the entry's own fields, no crash.
	store.Close()
	if j := c.entry(20).job(); j.ID != 20 || j.State != codec.JOB_PENDING || j.UserID != stored[19].UserID {
		t.Errorf("unreadable store: job 20 read back as %+v", *j)
	}
}

// BenchmarkChunkEncode re-encodes one full chunk (a change, then the next
// squeue) of held jobs: cold (read from the store) against the same jobs
// held in memory.
func BenchmarkChunkEncode(b *testing.B) {
	s := chunkBenchSnapshot(b, fakeCluster(b, "slurm-24.11"))
	cold := s.jobs[1:] // ID 0 starts no chunk: IDs 1..127 share chunk 0
	hot := make([]*jobEntry, len(cold))
	for i, e := range cold {
		hot[i] = newEntry(e.job(), nil, false)
	}
	for _, bc := range []struct {
		name  string
		group []*jobEntry
	}{{"cold", cold}, {"hot", hot}} {
		b.Run(bc.name, func(b *testing.B) {
			var w codec.Writer
			b.ReportAllocs()
			for b.Loop() {
				s.encodeChunk(0, bc.group, codec.V24_11, 0, &w)
			}
		})
	}
}

// serve answers req as the edge does: on the event loop if Fast takes
// it, else on a worker.
func serve(c *Controller, req *Request) Reply {
	if rep, ok := c.Fast(req); ok {
		return rep
	}
	return c.Slow(req)
}

// The event loop never reads the store: job listings that need held or
// finished jobs read back (the first listing after a change, scontrol
// show job of a held job, flags without a cached listing) are declined
// by Fast and answered by Slow, with the same bytes; once built, the
// listing is served by Fast, still without a read.
func TestFastNeverReadsStore(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fillHeldUsers(t, store, 500, 5)
	cfg := fakeCluster(t, "slurm-24.11")
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(), ClusterName: "refcluster"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range codec.Versions {
		reqs := map[string]*Request{}
		add := func(name string, t uint16, m interface{ Encode(*codec.Writer, uint16) }) {
			w := codec.Writer{}
			m.Encode(&w, v)
			reqs[name] = &Request{Version: v, MsgType: t, Body: w.B}
		}
		add("squeue", codec.REQUEST_JOB_INFO, &codec.JobInfoRequest{ShowFlags: showLocal})
		add("squeue rare flags", codec.REQUEST_JOB_INFO, &codec.JobInfoRequest{ShowFlags: showLocal | 0x20})
		add("scontrol show job (held)", codec.REQUEST_JOB_INFO_SINGLE, &codec.JobInfoSingleRequest{JobID: 250, StepID: codec.NoVal, StepHetComp: codec.NoVal})
		add("squeue -u", codec.REQUEST_JOB_USER_INFO, &codec.JobUserInfoRequest{UserID: 1003, ShowFlags: showLocal})
		for name, req := range reqs {
			before := store.JobReads()
			rep, ok := c.Fast(req)
			if got := store.JobReads() - before; got != 0 {
				t.Fatalf("%s %s: Fast read %d job records from the store", codec.VersionName(v), name, got)
			}
			slow := c.Slow(req)
			if ok && !bytes.Equal(joined(rep), joined(slow)) {
				t.Fatalf("%s %s: Fast and Slow answer differently", codec.VersionName(v), name)
			}
			asFrame := slow
			if slow.Frame == nil {
				asFrame = Reply{Frame: codec.AppendFrame(nil, v, slow.MsgType, nil, slow.Body)}
			}
			if m := decodeListing(t, asFrame); len(m.Jobs) == 0 {
				t.Fatalf("%s %s: Slow listed no jobs", codec.VersionName(v), name)
			}
			before = store.JobReads()
			if rep, ok = c.Fast(req); ok && !bytes.Equal(joined(rep), joined(slow)) {
				t.Fatalf("%s %s: Fast, once built, answers differently from Slow", codec.VersionName(v), name)
			}
			if got := store.JobReads() - before; got != 0 {
				t.Fatalf("%s %s: Fast read %d job records from the store once built", codec.VersionName(v), name, got)
			}
			if prebuilt := name != "squeue rare flags" || v >= codec.V24_11; prebuilt && !ok {
				t.Errorf("%s %s: still declined by Fast once a worker built the listing", codec.VersionName(v), name)
			}
		}
	}
}

// BenchmarkChunkEncodeLargeCluster encodes a chunk of held jobs on a
// cluster of 2,000 nodes in one partition (the Backend.AI benchmark's
// shape): a pending job's node estimate must not walk the partition.
func BenchmarkChunkEncodeLargeCluster(b *testing.B) {
	cfg, err := conf.Parse(strings.NewReader("ClusterName=big\nNodeName=i[0000-1999] CPUs=64 RealMemory=262144\nPartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"))
	if err != nil {
		b.Fatal(err)
	}
	s := chunkBenchSnapshot(b, cfg)
	hot := make([]*jobEntry, 0, len(s.jobs))
	for _, e := range s.jobs[1:] {
		j := *e.job()
		j.Partition = "batch" // fillHeld's are the reference cluster's
		hot = append(hot, newEntry(&j, nil, false))
	}
	var w codec.Writer
	b.ReportAllocs()
	for b.Loop() {
		s.encodeChunk(0, hot, codec.V24_11, 0, &w)
	}
}

// chunkBenchSnapshot is the snapshot of a controller on cfg over a store
// holding one chunk of held jobs (closed with the benchmark).
func chunkBenchSnapshot(b *testing.B, cfg *conf.Config) *Snapshot {
	store, err := state.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	fillHeld(b, store, 1<<chunkShift)
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(), ClusterName: cfg.Get("ClusterName", "refcluster")})
	if err != nil {
		b.Fatal(err)
	}
	return c.Snapshot()
}
