package ctld

import (
	"bytes"
	"context"
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

func decodeListing(t *testing.T, rep Reply) *codec.JobInfoMsg {
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

	whole := func(s *Snapshot, v uint16) []byte {
		m := codec.JobInfoMsg{LastUpdate: s.JobsUpdate}
		for _, e := range s.jobs {
			m.Jobs = append(m.Jobs, c.jobInfo(s, e.job(), v, false))
		}
		w := codec.Writer{}
		m.Encode(&w, v)
		return codec.AppendFrame(nil, v, codec.RESPONSE_JOB_INFO, nil, w.B)
	}
	for _, v := range codec.Versions {
		body := codec.Writer{}
		(&codec.JobInfoRequest{}).Encode(&body, v)
		rep, ok := c.Fast(&Request{Version: v, MsgType: codec.REQUEST_JOB_INFO, Body: body.B})
		if !ok {
			t.Fatalf("%s: not answered from the snapshot", codec.VersionName(v))
		}
		if want := whole(c.Snapshot(), v); !bytes.Equal(joined(rep), want) {
			t.Fatalf("%s: chunked listing (%d bytes in %d pieces) differs from the whole encode (%d bytes)",
				codec.VersionName(v), len(joined(rep)), len(rep.More), len(want))
		}
		if len(rep.More) != n>>chunkShift+1 {
			t.Errorf("%s: %d pieces for IDs 1..%d, want %d", codec.VersionName(v), len(rep.More), n, n>>chunkShift+1)
		}
	}

	v := codec.V24_11
	old := c.Snapshot().records(v).chunks
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
	now := s.records(v).chunks
	for i := range now {
		shared := now[i] == old[i]
		if wantShared := i != 300>>chunkShift; shared != wantShared {
			t.Errorf("chunk %d: shared with the old snapshot %v, want %v", i, shared, wantShared)
		}
	}
	m := decodeListing(t, Reply{Frame: s.records(v).head, More: s.records(v).pieces})
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
	first := c.Snapshot().records(v).chunks[0]
	c.mu.Lock()
	c.rebuild(time.Now().Unix())
	c.mu.Unlock()
	if c.Snapshot().records(v).chunks[0] == first {
		t.Error("a chunk holding a dependent job was reused by the next snapshot")
	}
}
