package ctld

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/local"
)

// joined is a reply's bytes as the client receives them.
func joined(rep Reply) []byte {
	out := append([]byte(nil), rep.Frame...)
	for _, p := range rep.More {
		out = append(out, p.Bytes()...)
	}
	return out
}

func decodeListing(t testing.TB, rep Reply) *codec.JobInfoMsg {
	t.Helper()
	var f codec.Frame
	if err := codec.DecodeFrame(joined(rep), &f); err != nil {
		t.Fatal(err)
	}
	var m codec.JobInfoMsg
	r := codec.NewReader(f.Body)
	if err := m.Decode(&r, f.Version); err != nil {
		t.Fatal(err)
	}
	return &m
}

// The plain listing, served in chunks, is the same message a whole
// encode gives, in every version; after one job changes, only its chunk
// is encoded again and the others are shared with the old snapshot.
func TestJobListingChunks(t *testing.T) {
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const n = 1000 // IDs 1..1000: 8 chunks, the first and last partial
	fillHeld(t, store, n)
	cfg := fakeCluster(t, "slurm-24.11")
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(), ClusterName: "refcluster"})
	if err != nil {
		t.Fatal(err)
	}

	// whole encodes the listing job by job, as for a request with flags.
	whole := func(s *Snapshot, v, flags uint16, keep func(*jobEntry) bool) []byte {
		w := codec.Writer{}
		var n uint32
		for _, e := range s.jobs {
			if keep(e) {
				n++
			}
		}
		codec.AppendJobInfoHeader(&w, v, n, s.JobsUpdate, 0)
		for _, e := range s.jobs {
			if keep(e) {
				ji := c.jobInfo(s, e.job(), v, flags&showDetail != 0)
				ji.EncodeFor(&w, v, flags)
			}
		}
		return codec.AppendFrame(nil, v, codec.RESPONSE_JOB_INFO, nil, w.B)
	}
	all := func(*jobEntry) bool { return true }
	// Some jobs of another user, for squeue -u.
	c.mu.Lock()
	for id := uint32(10); id < 300; id += 7 {
		e := c.entry(id)
		j := *e.job()
		j.UserID, j.UserName = 1001, "alice"
		if err := c.opt.Store.Put(&j); err != nil {
			t.Fatal(err)
		}
		c.replace(e, &j)
	}
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	asBytes := func(v uint16, rep Reply) []byte {
		if rep.Frame != nil {
			return joined(rep)
		}
		return codec.AppendFrame(nil, v, rep.MsgType, nil, rep.Body)
	}
	for _, v := range codec.Versions {
		// squeue (SHOW_LOCAL), squeue -a, scontrol show job (none,
		// SHOW_ALL, -d SHOW_DETAIL): prebuilt chunks; rare flags up to
		// 24.05 (they are echoed): encoded per request.
		for _, flags := range []uint16{showLocal, showAll | showLocal, 0, showAll, showAll | showDetail, showDetail | showLocal, 0x20 | showLocal} {
			name := fmt.Sprintf("%s show_flags %#x", codec.VersionName(v), flags)
			body := codec.Writer{}
			(&codec.JobInfoRequest{ShowFlags: flags}).Encode(&body, v)
			req := &Request{Version: v, MsgType: codec.REQUEST_JOB_INFO, Body: body.B}
			rep := serve(c, req)
			if _, ok := c.Fast(req); !ok && (flags&0x20 == 0 || v >= codec.V24_11) {
				t.Fatalf("%s: not answered from the snapshot once the listing is built", name)
			}
			if want := whole(c.Snapshot(), v, flags, all); !bytes.Equal(asBytes(v, rep), want) {
				t.Fatalf("%s: listing (%d bytes in %d pieces) differs from the whole encode (%d bytes)",
					name, len(asBytes(v, rep)), len(rep.More), len(want))
			}
			prebuilt := flags&0x20 == 0 || v >= codec.V24_11
			if prebuilt && len(rep.More) != n>>chunkShift+1 {
				t.Errorf("%s: %d pieces for IDs 1..%d, want %d", name, len(rep.More), n, n>>chunkShift+1)
			}
			if !prebuilt && rep.Frame != nil {
				t.Errorf("%s: answered from chunks", name)
			}
			if m := decodeListing(t, Reply{Frame: asBytes(v, rep)}); v < codec.V24_11 && m.Jobs[0].ShowFlags != flags {
				t.Errorf("%s: record echoes show_flags %#x", name, m.Jobs[0].ShowFlags)
			}
			// squeue -u: the user's records, copied from the same chunks.
			body = codec.Writer{}
			(&codec.JobUserInfoRequest{UserID: 1001, ShowFlags: flags}).Encode(&body, v)
			rep = serve(c, &Request{Version: v, MsgType: codec.REQUEST_JOB_USER_INFO, Body: body.B})
			mine := func(e *jobEntry) bool { return e.userID == 1001 }
			if want := whole(c.Snapshot(), v, flags, mine); !bytes.Equal(asBytes(v, rep), want) {
				t.Fatalf("%s: user listing differs from the whole encode", name)
			}
			if m := decodeListing(t, Reply{Frame: asBytes(v, rep)}); len(m.Jobs) != 42 || m.Jobs[0].UserID != 1001 {
				t.Fatalf("%s: squeue -u lists %d jobs", name, len(m.Jobs))
			}
		}
	}

	// scontrol show job / squeue -j of one job: an array job lists its
	// tasks (records 600-610 here), a task itself only.
	c.mu.Lock()
	for id := uint32(600); id <= 610; id++ {
		e := c.entry(id)
		j := *e.job()
		j.ArrayJobID, j.ArrayTaskID = 600, id-600
		if err := c.opt.Store.Put(&j); err != nil {
			t.Fatal(err)
		}
		c.replace(e, &j)
	}
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	for _, v := range codec.Versions {
		for _, flags := range []uint16{0, showLocal, showDetail | showAll, 0x20 | showLocal} {
			for _, q := range []struct{ id, want uint32 }{{600, 11}, {605, 1}, {1, 1}, {n, 1}} {
				name := fmt.Sprintf("%s show_flags %#x job %d", codec.VersionName(v), flags, q.id)
				body := codec.Writer{}
				(&codec.JobInfoSingleRequest{JobID: q.id, ShowFlags: flags, StepID: codec.NoVal, StepHetComp: codec.NoVal}).Encode(&body, v)
				rep := serve(c, &Request{Version: v, MsgType: codec.REQUEST_JOB_INFO_SINGLE, Body: body.B})
				keep := func(e *jobEntry) bool { return e.id == q.id || e.arrayJobID == q.id }
				m := decodeListing(t, Reply{Frame: asBytes(v, rep)})
				if uint32(len(m.Jobs)) != q.want {
					t.Fatalf("%s: %d records, want %d", name, len(m.Jobs), q.want)
				}
				if q.want == 1 {
					if want := whole(c.Snapshot(), v, flags, keep); !bytes.Equal(asBytes(v, rep), want) {
						t.Fatalf("%s: differs from the whole encode", name)
					}
					continue
				}
				// An array: its own record first, then its tasks newest
				// first (slurmctld's pack_one_job).
				for i, j := range m.Jobs {
					want := uint32(600)
					if i > 0 {
						want = 611 - uint32(i)
					}
					if j.JobID != want {
						t.Fatalf("%s: record %d is job %d, want %d", name, i, j.JobID, want)
					}
				}
			}
			body := codec.Writer{}
			(&codec.JobInfoSingleRequest{JobID: n + 5, ShowFlags: flags, StepID: codec.NoVal, StepHetComp: codec.NoVal}).Encode(&body, v)
			rep := serve(c, &Request{Version: v, MsgType: codec.REQUEST_JOB_INFO_SINGLE, Body: body.B})
			var f codec.Frame
			if err := codec.DecodeFrame(asBytes(v, rep), &f); err != nil || f.MsgType != codec.RESPONSE_SLURM_RC || binary.BigEndian.Uint32(f.Body) != codec.ESLURM_INVALID_JOB_ID {
				t.Fatalf("unknown job: %v %s", err, codec.MsgTypeName(f.MsgType))
			}
		}
	}

	v := codec.V24_11
	old := c.Snapshot().records(v, 0).chunks
	c.mu.Lock()
	e := c.entry(300)
	j := *e.job()
	j.Name = "renamed"
	if err := c.opt.Store.Put(&j); err != nil {
		t.Fatal(err)
	}
	c.replace(e, &j)
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	s := c.Snapshot()
	now := s.records(v, 0).chunks
	for i := range now {
		shared := now[i] == old[i]
		if wantShared := i != 300>>chunkShift; shared != wantShared {
			t.Errorf("chunk %d: shared with the old snapshot %v, want %v", i, shared, wantShared)
		}
	}
	m := decodeListing(t, Reply{Frame: s.records(v, 0).head, More: s.records(v, 0).pieces})
	if len(m.Jobs) != n || m.Jobs[299].Name != "renamed" || m.Jobs[298].Name != "fill298" {
		t.Errorf("after the change: %d jobs, job 300 named %q, job 299 %q", len(m.Jobs), m.Jobs[299].Name, m.Jobs[298].Name)
	}

	// A job whose record shows another job's state is never shared.
	c.mu.Lock()
	e = c.entry(5)
	j = *e.job()
	j.Dependency = "afterok:4"
	if err := c.opt.Store.Put(&j); err != nil {
		t.Fatal(err)
	}
	c.replace(e, &j)
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	first := c.Snapshot().records(v, 0).chunks[0]
	c.mu.Lock()
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	if c.Snapshot().records(v, 0).chunks[0] == first {
		t.Error("a chunk holding a dependent job was reused by the next snapshot")
	}
}
