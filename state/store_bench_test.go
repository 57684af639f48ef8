package state

import (
	"strconv"
	"testing"
)

// benchJob is a held job as TestSize100k (translate/ctld) stores them.
func benchJob(id uint32, i int) *Job {
	return &Job{
		ID: id, ArrayTaskID: 0xfffffffe, Name: "fill" + strconv.Itoa(i),
		UserName: "root", Partition: "cpu", WorkDir: "/tmp",
		StdIn: "/dev/null", StdOut: "/dev/null", SubmitTime: 1767225600 + int64(i),
		TimeLimit: 0xffffffff, State: 0, Reason: 2,
		MinNodes: 1, NumTasks: 1, CPUsPerTask: 1, MinCPUs: 1, TresReqStr: "cpu=1,mem=125G,node=1,billing=1",
		ProtoVersion: 0x2A00, DescFlags: 0xbe000000,
	}
}

func fillStore(b testing.TB, s *Store, n int) {
	const batch = 1000
	for i := 0; i < n; i += batch {
		c := min(batch, n-i)
		_, err := s.Submit(uint32(c), nil, func(first uint32) ([]*Job, error) {
			jobs := make([]*Job, c)
			for k := range jobs {
				jobs[k] = benchJob(first+uint32(k), i+k)
			}
			return jobs, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// reopened is a store holding n jobs, closed and opened again as after a
// restart: the records are in tables, not the memtable.
func reopened(b *testing.B, n int) *Store {
	dir := b.TempDir()
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	fillStore(b, s, n)
	s.Close()
	if s, err = Open(dir); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkJobsLoad measures Store.Jobs over 10,000 stored records, as
// on a restart.
func BenchmarkJobsLoad(b *testing.B) {
	const n = 10000
	s := reopened(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		jobs, err := s.Jobs()
		if err != nil || len(jobs) != n {
			b.Fatalf("%d jobs, %v", len(jobs), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/job")
}

// BenchmarkJobsLoadSequential is BenchmarkJobsLoad on one goroutine
// (what Store.Jobs does with GOMAXPROCS=1).
func BenchmarkJobsLoadSequential(b *testing.B) {
	const n = 10000
	s := reopened(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		jobs, err := jobsSeq(s, copyJob)
		if err != nil || len(jobs) != n {
			b.Fatalf("%d jobs, %v", len(jobs), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/job")
}
