package state

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/stretchr/testify/require"
)

func histJob(id, uid uint32, acct string, start, end int64, state uint32) *Job {
	return &Job{ID: id, Name: "job" + string(rune('a'+id%26)), UserID: uid, GroupID: uid, UserName: "u", Account: acct,
		Partition: "batch", SubmitTime: start - 10, EligibleTime: start - 5, StartTime: start, EndTime: end,
		State: state, TimeLimit: 60, NumTasks: 1, MinCPUs: 2, CPUsPerTask: 1, ArrayTaskID: noVal32,
		Nodes: "n1", TresAllocStr: "1=2,2=1024,4=1", WorkDir: "/home/u/work", SubmitLine: "sbatch x.sh"}
}

func TestHistRecordRoundTrip(t *testing.T) {
	h := HistJob{Job: *histJob(7, 1000, "proj", 1000, 2000, 3), ReqUID: 0, DerivedEC: 3 << 8, UserCPUus: 12345, MaxRSS: 1 << 30}
	b := appendHistRecord(nil, &h)
	var got HistJob
	require.NoError(t, decodeHistRecord(b, &got))
	require.Equal(t, h, got, "uid 0 cancelling is kept apart from nobody")

	h.ReqUID = noVal32
	require.NoError(t, decodeHistRecord(appendHistRecord(nil, &h), &got))
	require.Equal(t, uint32(noVal32), got.ReqUID)

	st := HistStep{ID: 0, Name: "python3", Nodes: "n[1-2]", NNodes: 2, NTasks: 4, CPUs: 4, Start: 1100, End: 1900,
		ExitCode: 9, State: 4, ReqUID: 1000, TresAlloc: "1=4", IOOut: 1 << 20, IOIn: 7}
	var gs HistStep
	require.NoError(t, decodeStepRecord(appendStepRecord(nil, &st), &gs))
	require.Equal(t, st, gs)

	// A field this version does not know (as a later one may add) is
	// skipped, the rest read.
	rec := appendStepRecord(nil, &st)
	rec = binary.AppendUvarint(rec, 99<<3|2)
	rec = binary.AppendUvarint(rec, 3)
	rec = append(rec, "new"...)
	rec = binary.AppendUvarint(rec, 98<<3)
	rec = binary.AppendUvarint(rec, 5)
	require.NoError(t, decodeStepRecord(rec, &gs))
	require.Equal(t, st, gs)
	// Truncated: an error, never a panic.
	for i := range rec {
		_ = decodeStepRecord(rec[:i], &gs)
	}
	for i := range b {
		_ = decodeHistRecord(b[:i], &got)
	}
}

func TestHistoryQueriesAndRetention(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	day := int64(86400)
	t0 := time.Now().Unix() - 400*day
	var jobs []*Job
	for i := uint32(1); i <= 60; i++ {
		uid := 1000 + i%3
		acct := []string{"physics", "bio"}[i%2]
		start := t0 + int64(i)*7*day // one a week
		jobs = append(jobs, histJob(i, uid, acct, start, start+3600, 3+i%3))
	}
	// A running job and a pending one: not history.
	jobs = append(jobs, histJob(61, 1000, "bio", time.Now().Unix()-60, 0, 1), histJob(62, 1000, "bio", 0, 0, 0))
	s.NoteJobEnd(5, 1001, 0, 500, 20, 4<<20)
	require.NoError(t, s.Put(jobs...))
	require.NoError(t, s.PutStep(5, &HistStep{ID: 0, Name: "step0", Start: jobs[4].StartTime, End: jobs[4].EndTime, State: 3}))
	require.NoError(t, s.PutStep(5, &HistStep{ID: 1, Name: "step1", Start: jobs[4].StartTime, End: jobs[4].EndTime, State: 4}))

	collect := func(c HistCond) (ids []uint32) {
		require.NoError(t, s.History(&c, func(h *HistJob) bool { ids = append(ids, h.ID); return true }))
		return ids
	}
	require.Len(t, collect(HistCond{}), 60)
	require.Equal(t, []uint32{5}, collect(HistCond{JobIDs: []uint32{5}}))
	var five *HistJob
	require.NoError(t, s.History(&HistCond{JobIDs: []uint32{5}}, func(h *HistJob) bool { five = h; return true }))
	require.Equal(t, uint32(1001), five.ReqUID)
	require.Equal(t, uint64(4<<20), five.MaxRSS)
	require.Len(t, five.Steps, 2)
	require.Equal(t, "step1", five.Steps[1].Name)
	// By user: every third job, in end order.
	require.Equal(t, []uint32{1, 4, 7, 10}, collect(HistCond{UIDs: []uint32{1001}})[:4])
	// A window: the jobs that ran in weeks 10 to 12.
	require.Equal(t, []uint32{10, 11, 12}, collect(HistCond{Start: t0 + 10*7*day, End: t0 + 12*7*day + 1}))
	// Account, state, and both.
	require.Len(t, collect(HistCond{Accounts: []string{"bio"}}), 30)
	require.Len(t, collect(HistCond{States: []uint32{5}}), 20)
	require.Equal(t, []uint32{5}, collect(HistCond{Accounts: []string{"bio"}, States: []uint32{5}, End: t0 + 9*7*day})) // odd ids, i%3 == 2, started by week 9

	// Written once: the same final job stored again adds nothing.
	require.NoError(t, s.Put(jobs[0]))
	require.Len(t, collect(HistCond{}), 60)
	// Requeued and run again: a second record.
	again := *jobs[0]
	again.StartTime, again.EndTime = jobs[0].EndTime+100, jobs[0].EndTime+200
	require.NoError(t, s.Put(&again))
	require.Equal(t, []uint32{1, 1}, collect(HistCond{JobIDs: []uint32{1}}))

	// Across a restart.
	require.NoError(t, s.Close())
	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	require.Len(t, collect(HistCond{}), 61)

	// Retention: a year.
	n, err := s.PurgeHistory(time.Now().Add(-365 * 24 * time.Hour))
	require.NoError(t, err)
	left := collect(HistCond{})
	require.Equal(t, 61-n, len(left))
	require.Greater(t, n, 0)
	for _, id := range left {
		require.GreaterOrEqual(t, jobs[id-1].EndTime, time.Now().Unix()-365*day)
	}
	if jobs[4].EndTime < time.Now().Unix()-365*day {
		var st []HistStep
		require.NoError(t, s.db.View(func(txn *badger.Txn) error { var e error; st, e = s.steps(txn, 5); return e }))
		require.Empty(t, st, "a purged job's steps go with it")
	}
}

// BenchmarkHistoryRecord: encoding a typical finished job's record, and
// its size (B/job: the record; plain-B/job: before compression).
func BenchmarkHistoryRecord(b *testing.B) {
	h := HistJob{Job: *histJob(123456, 1000, "physics", time.Now().Unix()-3600, time.Now().Unix(), 3), ReqUID: noVal32}
	h.StdOut, h.StdErr, h.Command = "/home/u/work/slurm-%j.out", "/home/u/work/slurm-%j.out", "/home/u/work/x.sh"
	h.TresReqStr = "1=2,2=4096,4=1,5=2"
	var rec []byte
	for i := 0; i < b.N; i++ {
		rec = appendHistRecord(rec[:0], &h)
	}
	t := trec{}
	t.bytes(1, appendJobRecord(nil, &h.Job))
	b.ReportMetric(float64(len(rec)), "B/job")
	b.ReportMetric(float64(len(t.b)), "plain-B/job")
}

// A store from before the history: its finished jobs get records once.
func TestBackfillHistory(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	now := time.Now().Unix()
	jobs := []*Job{histJob(1, 1000, "a", now-100, now-50, 3), histJob(2, 1000, "a", now-10, 0, 1), histJob(3, 1001, "a", now-100, now-40, 4)}
	// As an older version wrote them: job records alone.
	recs, _ := encodeJobs(jobs)
	require.NoError(t, s.commit(0, func(txn *wtxn) error {
		for i, j := range jobs {
			if err := txn.Set(jobKey(j.ID), recs[i]); err != nil {
				return err
			}
		}
		return nil
	}))
	count := func() (n int) {
		require.NoError(t, s.History(&HistCond{}, func(*HistJob) bool { n++; return true }))
		return n
	}
	require.Equal(t, 0, count())
	n, err := s.BackfillHistory()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 2, count())
	n, err = s.BackfillHistory()
	require.NoError(t, err)
	require.Equal(t, 0, n, "once")
	require.Equal(t, 2, count())
}

// BenchmarkHistoryQuery: 100,000 runs over 30 days by 100 users, as sacct
// asks for them: one user's day, and everyone's month.
func BenchmarkHistoryQuery(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().Unix()
	const n, users = 100_000, 100
	for i := 0; i < n; i += 1000 {
		var batch []*Job
		for k := i; k < i+1000; k++ {
			start := now - 30*86400 + int64(k)*30*86400/n
			batch = append(batch, histJob(uint32(k+1), 1000+uint32(k%users), "physics", start, start+600, 3))
		}
		if err := s.Put(batch...); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []struct {
		name string
		c    HistCond
		want int
	}{
		{"user-day", HistCond{UIDs: []uint32{1042}, Start: now - 86400, End: now}, n / users / 30},
		{"all-month", HistCond{Start: now - 30*86400, End: now}, n},
	} {
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				got := 0
				c := q.c
				if err := s.History(&c, func(*HistJob) bool { got++; return true }); err != nil {
					b.Fatal(err)
				}
				if got < q.want*9/10 || got > q.want*11/10+1 {
					b.Fatalf("%d runs, want about %d", got, q.want)
				}
			}
		})
	}
}

// The index scans stop at End plus the longest span a run has had: the
// runs a window selects are the same as with a scan of everything, the
// long run that began before a window and ended long after it too.
func TestHistoryWindowBound(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.BackfillSpan()) // a new store: span 0
	day := int64(86400)
	t0 := time.Now().Unix() - 200*day
	var jobs []*Job
	for i := uint32(1); i <= 120; i++ {
		start := t0 + int64(i)*day
		jobs = append(jobs, histJob(i, 1000+i%2, []string{"a", "b"}[i%2], start, start+3600, 3))
	}
	long := histJob(121, 1000, "a", t0+5*day, t0+150*day, 3) // ran 145 days
	jobs = append(jobs, long)
	require.NoError(t, s.Put(jobs...))
	span, err := func() (v int64, err error) {
		err = s.db.View(func(txn *badger.Txn) error { v, err = s.maxSpan(txn); return err })
		return
	}()
	require.NoError(t, err)
	require.Equal(t, spanOf(long), span)
	var all []*HistJob
	require.NoError(t, s.History(&HistCond{}, func(h *HistJob) bool { c := *h; all = append(all, &c); return true }))
	for _, w := range [][2]int64{{t0 + 10*day, t0 + 11*day}, {t0 + 30*day, t0 + 60*day}, {t0, t0 + day}, {t0 + 149*day, t0 + 151*day}} {
		for _, c := range []HistCond{{Start: w[0], End: w[1]}, {Start: w[0], End: w[1], UIDs: []uint32{1000}},
			{Start: w[0], End: w[1], Accounts: []string{"a"}}, {Start: w[0], End: w[1], States: []uint32{3}}} {
			var want, got []uint32
			for _, h := range all {
				if c.Match(&h.Job) {
					want = append(want, h.ID)
				}
			}
			require.NoError(t, s.History(&c, func(h *HistJob) bool { got = append(got, h.ID); return true }))
			require.ElementsMatch(t, want, got, "window %v cond %+v", w, c)
		}
	}
	// The long run counts in an early window though it ended late.
	var ids []uint32
	require.NoError(t, s.History(&HistCond{Start: t0 + 10*day, End: t0 + 11*day}, func(h *HistJob) bool { ids = append(ids, h.ID); return true }))
	require.Contains(t, ids, uint32(121))
}
