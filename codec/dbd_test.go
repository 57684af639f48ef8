package codec

import (
	"bytes"
	"testing"
)

// The real 24.11 sacct ⇄ slurmdbd conversations: every message decodes,
// and encodes back to the same bytes.
func TestDBDGolden(t *testing.T) {
	for _, name := range []string{"sacct-24.11.pcap", "sacct-j-parsable2-24.11.pcap"} {
		t.Run(name, func(t *testing.T) {
			conns := allocConns(t, "slurm-24.11/"+name)
			if len(conns) != 1 || len(conns[0].Requests) != 3 || len(conns[0].Replies) != 2 {
				t.Fatalf("want one connection of 3 requests and 2 replies")
			}
			c := conns[0]
			var f Frame
			var init PersistInit
			if err := DecodePersistInit(c.Requests[0], &f, &init); err != nil {
				t.Fatal(err)
			}
			if init.Version != V24_11 || init.ClusterName != "refcluster" || init.PersistType != PersistTypeDBD || f.Flags&FlagDBDConnection == 0 {
				t.Errorf("persist init: %+v flags %#x", init, f.Flags)
			}
			if got := AppendPersistInit(nil, f.Cred, &init); !bytes.Equal(got, c.Requests[0]) {
				t.Errorf("persist init re-encoded:\n%x\nwant\n%x", got, c.Requests[0])
			}
			typ, body, err := DecodeDBDFrame(c.Replies[0])
			var rc PersistRC
			r := NewReader(body)
			if err != nil || typ != PERSIST_RC || rc.Decode(&r) != nil || rc.RC != 0 || rc.RetInfo != V24_11 {
				t.Fatalf("persist rc: %d %+v %v", typ, rc, err)
			}
			var w Writer
			rc.Encode(&w)
			if !bytes.Equal(AppendDBDFrame(nil, PERSIST_RC, w.B), c.Replies[0]) {
				t.Errorf("persist rc re-encoded differs")
			}

			typ, body, err = DecodeDBDFrame(c.Requests[1])
			if err != nil || typ != DBD_GET_JOBS_COND {
				t.Fatalf("second request: %d %v", typ, err)
			}
			var cond JobCond
			r = NewReader(body)
			if err := cond.Decode(&r, V24_11); err != nil || r.Remaining() != 0 {
				t.Fatalf("job cond: %v, %d left", err, r.Remaining())
			}
			if len(cond.ClusterList) != 1 || cond.ClusterList[0] != "refcluster" || cond.Flags&JobCondNoTrunc == 0 {
				t.Errorf("job cond: %+v", cond)
			}
			if name == "sacct-j-parsable2-24.11.pcap" {
				if len(cond.StepList) != 1 || cond.StepList[0].StepID.JobID != 2 || cond.StepList[0].StepID.StepID != NoVal {
					t.Errorf("sacct -j 2: step list %+v", cond.StepList)
				}
			} else if cond.UsageStart == 0 || cond.UsageEnd <= cond.UsageStart || cond.StepListSet {
				t.Errorf("plain sacct: window %d..%d, steps %v", cond.UsageStart, cond.UsageEnd, cond.StepList)
			}
			w = Writer{}
			cond.Encode(&w, V24_11)
			if !bytes.Equal(AppendDBDFrame(nil, DBD_GET_JOBS_COND, w.B), c.Requests[1]) {
				t.Errorf("job cond re-encoded:\n%x\nwant\n%x", w.B, body)
			}

			typ, body, err = DecodeDBDFrame(c.Replies[1])
			if err != nil || typ != DBD_GOT_JOBS {
				t.Fatalf("second reply: %d %v", typ, err)
			}
			var got GotJobs
			r = NewReader(body)
			if err := got.Decode(&r, V24_11); err != nil || r.Remaining() != 0 {
				t.Fatalf("got jobs: %v, %d left", err, r.Remaining())
			}
			if len(got.Jobs) == 0 {
				t.Fatal("no jobs")
			}
			for _, j := range got.Jobs {
				if j.Cluster != "refcluster" || j.ShowFull != 1 || len(j.Steps) != 1 || j.Steps[0].StepName != "batch" || j.Steps[0].StepID.StepID != SLURM_BATCH_SCRIPT {
					t.Errorf("job %d: %+v", j.JobID, j)
				}
			}
			if j := got.Jobs[len(got.Jobs)-1]; j.JobName != "failjob" || j.ExitCode != 3<<8 || j.State != JOB_FAILED {
				t.Errorf("the failed job: %s exit %#x state %d", j.JobName, j.ExitCode, j.State)
			}
			w = Writer{}
			got.Encode(&w, V24_11)
			if !bytes.Equal(w.B, body) {
				t.Errorf("got jobs re-encoded differ (%d bytes, want %d)", len(w.B), len(body))
			}

			typ, body, err = DecodeDBDFrame(c.Requests[2])
			var fini DBDFini
			r = NewReader(body)
			if err != nil || typ != DBD_FINI || fini.Decode(&r) != nil || fini.CloseConn != 1 {
				t.Errorf("fini: %d %+v %v", typ, fini, err)
			}
		})
	}
}

// Every release's records round-trip (22.05 and 26.05 have no captures:
// their layouts are from slurmdb_pack.c of those releases).
func TestDBDJobRoundTrip(t *testing.T) {
	j := DBDJob{Account: "a", ArrayTaskID: NoVal, Cluster: "c", JobID: 7, JobName: "n", Lft: 3, Extra: "x", Licenses: "l",
		QOSReq: "q", RestartCnt: 2, StdOut: "/o", Exclusive: "e", Oversubscribe: "o", ResvReq: "r", SLUID: 9, SegmentSize: 4,
		ShowFull: 1, State: JOB_COMPLETE, User: "u", WorkDir: "/w", ReqUID: NoVal,
		Steps: []DBDStep{{StepName: "s", StepID: JobStepID{JobID: 7, StepID: 0, StepHetComp: NoVal}, Cwd: "/c", Timelimit: 5, State: 3, Stats: DBDStats{TRESUsage: [16]string{0: "1=2"}}}}}
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		var w Writer
		(&GotJobs{Jobs: []DBDJob{j}}).Encode(&w, v)
		var got GotJobs
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || r.Remaining() != 0 || len(got.Jobs) != 1 {
			t.Fatalf("%#x: %v", v, err)
		}
		var w2 Writer
		got.Encode(&w2, v)
		if !bytes.Equal(w.B, w2.B) {
			t.Errorf("%#x: round trip differs", v)
		}
		g := got.Jobs[0]
		if (v == V22_05) != (g.Extra == "") || (v == V22_05) != (g.Lft == 3) || (v == V26_05) != (g.SLUID == 9) || (v == V26_05) != (g.Steps[0].Cwd == "/c") {
			t.Errorf("%#x: fields of the wrong release: %+v", v, g)
		}
	}
}

// dbdSeeds adds the captured bodies of a persist message type as seeds.
func dbdSeeds(f *testing.F, msgType uint16, replies bool) {
	for _, name := range []string{"sacct-24.11.pcap", "sacct-j-parsable2-24.11.pcap"} {
		for _, c := range allocConns(f, "slurm-24.11/"+name) {
			frames := c.Requests
			if replies {
				frames = c.Replies
			}
			for _, fr := range frames {
				if typ, body, err := DecodeDBDFrame(fr); err == nil && typ == msgType {
					f.Add(jcVersionIndex(V24_11), body)
				}
			}
		}
	}
}

func FuzzDecodeJobCond(f *testing.F) {
	dbdSeeds(f, DBD_GET_JOBS_COND, false)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[JobCond](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeGotJobs(f *testing.F) {
	dbdSeeds(f, DBD_GOT_JOBS, true)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[GotJobs](t, jcFuzzVersion(vb), body, nil)
	})
}

// The opening message: never a panic, whatever arrives.
func FuzzDecodePersistInit(f *testing.F) {
	for _, c := range allocConns(f, "slurm-24.11/sacct-24.11.pcap") {
		f.Add(c.Requests[0])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		var m PersistInit
		_ = DecodePersistInit(b, &fr, &m)
		_, _, _ = DecodeDBDFrame(b)
	})
}

// The builder's body is GotJobs' encoding of the records it kept.
func TestGotJobsBuilder(t *testing.T) {
	jobs := []DBDJob{{JobID: 1, JobName: "a", ShowFull: 1, ArrayTaskID: NoVal}, {JobID: 2, JobName: "b", ShowFull: 1, ArrayTaskID: NoVal,
		Steps: []DBDStep{{StepName: "batch", StepID: JobStepID{JobID: 2, StepID: SLURM_BATCH_SCRIPT, StepHetComp: NoVal}}}},
		{JobID: 3, JobName: "c", ShowFull: 1, ArrayTaskID: NoVal}}
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		b := NewGotJobsBuilder(v, 0)
		for i := range jobs {
			b.Add(&jobs[i])
		}
		want := Writer{}
		(&GotJobs{Jobs: jobs, RC: 7}).Encode(&want, v)
		if got := bytes.Join(b.Finish(7), nil); !bytes.Equal(got, want.B) {
			t.Errorf("%s: builder body differs", VersionName(v))
		}
		b = NewGotJobsBuilder(v, 0)
		for i := range jobs {
			b.Add(&jobs[i])
		}
		b.Drop(1)
		b.Drop(1)
		want = Writer{}
		(&GotJobs{Jobs: []DBDJob{jobs[0], jobs[2]}}).Encode(&want, v)
		if got := bytes.Join(b.Finish(0), nil); !bytes.Equal(got, want.B) {
			t.Errorf("%s: builder body with a record dropped differs", VersionName(v))
		}
		var back GotJobs
		r := NewReader(want.B)
		if err := back.Decode(&r, v); err != nil || len(back.Jobs) != 2 || back.Jobs[1].JobID != 3 {
			t.Errorf("%s: %+v %v", VersionName(v), back, err)
		}
	}
}
