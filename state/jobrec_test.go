package state

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/stretchr/testify/require"

	"github.com/lablup/slurm-frontend/codec/fuzzcheck"
)

// fullJob sets every field of Job to a distinct non-zero value, found by
// reflection so that a field added to Job but not to the record format
// makes the round-trip tests fail.
func fullJob(t testing.TB) *Job {
	var j Job
	v := reflect.ValueOf(&j).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(-int64(i + 1))
		case reflect.String:
			f.SetString(name + "-value")
		default:
			t.Fatalf("Job.%s has kind %s, which fullJob (and the record format) does not handle", name, f.Kind())
		}
	}
	return &j
}

// onlyField returns jobs each with exactly one field set (as fullJob
// sets it), to catch two fields of one type swapped in the format.
func onlyField(t testing.TB) map[string]*Job {
	full := reflect.ValueOf(fullJob(t)).Elem()
	out := map[string]*Job{}
	for i := 0; i < full.NumField(); i++ {
		var j Job
		reflect.ValueOf(&j).Elem().Field(i).Set(full.Field(i))
		out[full.Type().Field(i).Name] = &j
	}
	return out
}

func extremeJob() *Job {
	j := fullJob(nil)
	v := reflect.ValueOf(j).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(math.MaxUint64 >> (64 - f.Type().Bits()))
		case reflect.Int32, reflect.Int64:
			f.SetInt(math.MinInt64 >> (64 - f.Type().Bits()))
		case reflect.String:
			f.SetString(strings.Repeat("é\x00x", 100))
		}
	}
	return j
}

func TestJobRecordRoundTrip(t *testing.T) {
	cases := map[string]*Job{
		"zero":    {},
		"id only": {ID: 1},
		"typical": benchJob(4711, 12),
		"full":    fullJob(t),
		"extreme": extremeJob(),
		"max ints": func() *Job {
			j := extremeJob()
			j.Nice, j.SubmitTime, j.LastSchedEval = math.MaxInt32, math.MaxInt64, -1
			return j
		}(),
	}
	for name, j := range onlyField(t) {
		cases["only "+name] = j
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			rec := appendJobRecord(nil, want)
			require.Equal(t, jobRecV3, rec[0])
			for _, in := range []*interner{nil, {}} {
				got := Job{Name: "stale", Requeue: true, ExitCode: 9} // every field is overwritten
				require.NoError(t, decodeJobRecord(rec, &got, in))
				require.Equal(t, *want, got)
			}
			// The JSON the older versions wrote carries the same.
			js, err := json.Marshal(want)
			require.NoError(t, err)
			var got Job
			require.NoError(t, decodeJobRecord(js, &got, nil))
			require.Equal(t, *want, got)
		})
	}
}

func TestJobRecordFullIsFull(t *testing.T) {
	// Guard the guard: fullJob really leaves no field zero.
	v := reflect.ValueOf(fullJob(t)).Elem()
	for i := 0; i < v.NumField(); i++ {
		require.False(t, v.Field(i).IsZero(), v.Type().Field(i).Name)
	}
}

func TestJobRecordDecodeAllocatesOnlyStrings(t *testing.T) {
	j := fullJob(t)
	nstr := 0
	v := reflect.ValueOf(j).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).Kind() == reflect.String {
			nstr++
		}
	}
	rec := appendJobRecord(nil, j)
	var got Job
	allocs := testing.AllocsPerRun(100, func() {
		if err := decodeJobRecord(rec, &got, nil); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, float64(nstr), allocs)

	// With an interner, repeated values are shared: only the unique
	// fields allocate once the interner has seen the common ones.
	var in interner
	require.NoError(t, decodeJobRecord(rec, &got, &in))
	allocs = testing.AllocsPerRun(100, func() {
		if err := decodeJobRecord(rec, &got, &in); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, float64(6), allocs) // ArrayTasks Name Comment SubmitLine Dependency SessionID
}

func TestJobRecordRejectsDamage(t *testing.T) {
	rec := appendJobRecord(nil, fullJob(t))
	var j Job
	for n := 0; n < len(rec); n++ {
		require.Error(t, decodeJobRecord(rec[:n], &j, nil), "truncated to %d", n)
	}
	require.Error(t, decodeJobRecord(append(rec[:len(rec):len(rec)], 0), &j, nil), "trailing byte")
	bad := append([]byte(nil), rec...)
	bad[0] = 4
	require.ErrorContains(t, decodeJobRecord(bad, &j, nil), "unknown format")
	// A format-2 record (no Origin) written before format 3 still loads,
	// and a format-1 one (no AccrueTime either) written before format 2.
	full := fullJob(t)
	v2 := appendJobRecord(nil, full)
	v3len := len(binary.AppendUvarint(nil, uint64(len(full.Origin)))) + len(full.Origin) +
		len(binary.AppendUvarint(nil, uint64(len(full.RespHost)))) + len(full.RespHost) +
		len(binary.AppendUvarint(nil, uint64(full.AllocPort))) + len(binary.AppendUvarint(nil, uint64(full.OtherPort)))
	v2 = v2[:len(v2)-v3len]
	v2[0] = jobRecV2
	old := Job{Origin: "stale", RespHost: "x", AllocPort: 1, OtherPort: 2}
	require.NoError(t, decodeJobRecord(v2, &old, nil))
	full.Origin, full.RespHost, full.AllocPort, full.OtherPort = "", "", 0, 0
	require.Equal(t, *full, old)
	v1 := v2[:len(v2)-len(binary.AppendVarint(nil, full.AccrueTime))]
	v1[0] = jobRecV1
	old = Job{AccrueTime: 7}
	require.NoError(t, decodeJobRecord(v1, &old, nil))
	full.AccrueTime = 0
	require.Equal(t, *full, old)

	// Integers wider than their field are refused, not truncated.
	for name, dec := range map[string]func(d *jobDec){
		"u8":  func(d *jobDec) { d.u8() },
		"u16": func(d *jobDec) { d.u16() },
		"u32": func(d *jobDec) { d.u32() },
	} {
		bits := map[string]uint{"u8": 8, "u16": 16, "u32": 32}[name]
		d := jobDec{b: binary.AppendUvarint(nil, 1<<bits)}
		dec(&d)
		require.ErrorContains(t, d.err, "out of range", name)
		d = jobDec{b: binary.AppendUvarint(nil, 1<<bits-1)}
		dec(&d)
		require.NoError(t, d.err, name)
	}
	d := jobDec{b: binary.AppendVarint(nil, math.MaxInt32+1)}
	d.i32()
	require.ErrorContains(t, d.err, "out of range")
	d = jobDec{b: binary.AppendVarint(nil, math.MinInt32)}
	require.Equal(t, int32(math.MinInt32), d.i32())
	require.NoError(t, d.err)
	// Unknown bool bits.
	d = jobDec{b: binary.AppendUvarint(nil, jobRecBoolAll+1)}
	d.u(jobRecBoolAll)
	require.Error(t, d.err)
}

// A record written by a version that stored JSON still loads, next to
// binary ones, and is rewritten in binary by the next Put.
func TestLegacyJSONRecordLoads(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	require.NoError(t, err)
	// As json.Marshal(state.Job) wrote it before the binary format.
	legacy := `{"id":7,"array_task_id":4294967294,"name":"old job","uid":1000,"gid":1000,"user":"alice","partition":"cpu",` +
		`"work_dir":"/home/alice","stdout":"/home/alice/slurm-%j.out","submit_line":"sbatch --wrap hostname","desc_flags":3187671040,` +
		`"warn_batch_only":true,"submit_time":1700000000,"time_limit":60,"state":1,"reason":0,"priority":4294901759,"nice":-5,` +
		`"min_nodes":1,"max_nodes":1,"num_tasks":1,"cpus_per_task":2,"min_cpus":2,"mem_per_cpu_mb":1024,"tres_per_node":"gres/gpu:2",` +
		`"requeue":true,"exit_code":256,"nodes":"n1","proto_version":10752,"tres_req":"cpu=2,mem=2G,node=1,billing=2"}`
	require.NoError(t, s.db.Update(func(txn *badger.Txn) error { return txn.Set(jobKey(7), []byte(legacy)) }))
	require.NoError(t, s.Put(&Job{ID: 3, Name: "new"}, &Job{ID: 9, Name: "newer"}))
	require.NoError(t, s.Close())

	want := Job{ID: 7, ArrayTaskID: 4294967294, Name: "old job", UserID: 1000, GroupID: 1000, UserName: "alice", Partition: "cpu",
		WorkDir: "/home/alice", StdOut: "/home/alice/slurm-%j.out", SubmitLine: "sbatch --wrap hostname", DescFlags: 3187671040,
		WarnBatchOnly: true, SubmitTime: 1700000000, TimeLimit: 60, State: 1, Priority: 4294901759, Nice: -5,
		MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 2, MinCPUs: 2, MemPerCPUMB: 1024, TresPerNode: "gres/gpu:2",
		Requeue: true, ExitCode: 256, Nodes: "n1", ProtoVersion: 10752, TresReqStr: "cpu=2,mem=2G,node=1,billing=2"}
	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	seq := func() ([]*Job, error) { return jobsSeq(s, copyJob) }
	for _, load := range []func() ([]*Job, error){s.Jobs, seq} {
		jobs, err := load()
		require.NoError(t, err)
		require.Len(t, jobs, 3)
		require.Equal(t, []uint32{3, 7, 9}, []uint32{jobs[0].ID, jobs[1].ID, jobs[2].ID})
		require.Equal(t, want, *jobs[1])
		require.Equal(t, "newer", jobs[2].Name)
	}

	require.NoError(t, s.Put(&want))
	require.NoError(t, s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(jobKey(7))
		require.NoError(t, err)
		return it.Value(func(v []byte) error {
			require.Equal(t, jobRecV3, v[0])
			return nil
		})
	}))
}

func TestJobsManyBatchesInOrder(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	n := 3*jobBatchLen + 17
	fillStore(t, s, n)
	seq := func() ([]*Job, error) { return jobsSeq(s, copyJob) }
	for _, load := range []func() ([]*Job, error){s.Jobs, seq} {
		jobs, err := load()
		require.NoError(t, err)
		require.Len(t, jobs, n)
		for i, j := range jobs {
			require.Equal(t, *benchJob(uint32(FirstJobID+i), i), *j)
		}
	}
}

func TestJobsReportsCorruptRecord(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	fillStore(t, s, 2500)
	require.NoError(t, s.db.Update(func(txn *badger.Txn) error { return txn.Set(jobKey(2000), []byte{jobRecV1, 0x80}) }))
	_, err = s.Jobs()
	require.ErrorContains(t, err, "6a6f622f000007d0") // job/ + 2000
	_, err = jobsSeq(s, copyJob)
	require.ErrorContains(t, err, "6a6f622f000007d0")
}

func copyJob(j *Job) *Job { c := *j; return &c }

func FuzzDecodeJobRecord(f *testing.F) {
	f.Add(appendJobRecord(nil, fullJob(f)))
	f.Add(appendJobRecord(nil, extremeJob()))
	f.Add(appendJobRecord(nil, benchJob(1, 1)))
	f.Add(appendJobRecord(nil, &Job{}))
	js, _ := json.Marshal(fullJob(f))
	f.Add(js)
	f.Add([]byte{})
	f.Add([]byte{jobRecV1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, rec []byte) {
		var j Job
		var err error
		fuzzcheck.AllocBound(t, "job record", len(rec), func() { err = decodeJobRecord(rec, &j, nil) })
		var j2 Job
		err2 := decodeJobRecord(rec, &j2, &interner{})
		if (err == nil) != (err2 == nil) || (err == nil && j != j2) {
			t.Fatalf("interner changes the result: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		if rec[0] == jobRecV1 {
			// Bounded allocation: the strings come from the record,
			// never more bytes than it has.
			total := 0
			v := reflect.ValueOf(j)
			for i := 0; i < v.NumField(); i++ {
				if v.Field(i).Kind() == reflect.String {
					total += v.Field(i).Len()
				}
			}
			if total > len(rec) {
				t.Fatalf("%d string bytes from a %d-byte record", total, len(rec))
			}
			// Canonical encoding round-trips.
			if again := appendJobRecord(nil, &j); string(again) != string(rec) {
				// varints may be non-minimal in the input; the decoded
				// job must still survive re-encoding.
				var j3 Job
				if err := decodeJobRecord(again, &j3, nil); err != nil || j3 != j {
					t.Fatalf("re-encoded record differs: %v", err)
				}
			}
			return
		}
		var j3 Job
		if err := decodeJobRecord(appendJobRecord(nil, &j), &j3, nil); err != nil || j3 != j {
			t.Fatalf("JSON record does not survive binary re-encoding: %v", err)
		}
	})
}
