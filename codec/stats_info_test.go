package codec

import (
	"reflect"
	"testing"
)

func statsFilled() StatsInfo {
	var m StatsInfo
	n := 0
	miscFill(reflect.ValueOf(&m).Elem(), "", &n)
	// Two entries everywhere, so parallel arrays are really parallel.
	m.RPCTypes = append(m.RPCTypes, StatsRPCType{Type: REQUEST_JOB_INFO, Count: 7, Time: 99, Queued: 1, Dropped: 2, CycleLast: 3, CycleMax: 4})
	m.RPCUsers = append(m.RPCUsers, StatsRPCUser{UID: 1000, Count: 5, Time: 6})
	m.Pending = append(m.Pending, StatsPendingRPC{Type: 1001, Count: 2})
	m.Dump = append(m.Dump, StatsRPCDump{Type: 1001, Hosts: "n[1-3]"})
	m.ScheduleExit = []uint32{1, 2, 3, 4, 5, 6}
	m.BFExit = []uint32{6, 5, 4, 3, 2, 1}
	return m
}

// statsFor is what a version can carry of m.
func statsFor(m StatsInfo, v uint16) StatsInfo {
	m.RPCTypes = append([]StatsRPCType(nil), m.RPCTypes...)
	if v >= V25_11 {
		m.PartsPacked = 1
	} else {
		m.ScheduleCycleSum = uint64(uint32(m.ScheduleCycleSum))
	}
	if v < V23_11 {
		m.ScheduleExit, m.BFExit = nil, nil
	}
	if v < V24_05 {
		m.RPCQueueEnabled = false
	}
	if !m.RPCQueueEnabled {
		for i := range m.RPCTypes {
			t := &m.RPCTypes[i]
			t.Queued, t.Dropped, t.CycleLast, t.CycleMax = 0, 0, 0, 0
		}
	}
	return m
}

func TestStatsInfoRoundTripVersions(t *testing.T) {
	full := statsFilled()
	full.ScheduleCycleSum = 1<<40 + 5 // only 25.11+ keep the high bits
	for _, v := range Versions {
		for _, queue := range []bool{true, false} {
			in := full
			in.RPCQueueEnabled = queue
			want := statsFor(in, v)
			var got StatsInfo
			body := miscRoundTrip(t, "StatsInfo", &in, &got, &want, v)
			if !testing.Short() {
				miscTruncations(t, "StatsInfo", func() miscCodec { return new(StatsInfo) }, body, v)
			}
		}
	}
}

// Byte sizes worked out from each release's _unpack_stats_response_msg:
// parts_packed 4 + the scheduler block 176 (16 of times, 6+7 u32, a
// time, 5+1+3 u32, a u64, 5 u32, a time, 7 u32) + 4 empty rpc/user
// size+arrays 32 + pending 8 + dump 8.
func TestStatsInfoSizes(t *testing.T) {
	want := map[uint16]int{
		V22_05: 228, V23_02: 228,
		V23_11: 236,                           // + schedule_exit, bf_exit (empty: 4 each)
		V24_05: 237, V24_11: 237, V25_05: 237, // + rpc_queue_enabled
		V25_11: 237, V26_05: 237, // - parts_packed, schedule_cycle_sum u64
	}
	for _, v := range Versions {
		var w Writer
		(&StatsInfo{PartsPacked: 1}).Encode(&w, v)
		if len(w.B) != want[v] {
			t.Errorf("%s: %d bytes, want %d", VersionName(v), len(w.B), want[v])
		}
	}
	// A 22.05-23.11 RESET reply: parts_packed 0 and no block.
	for _, v := range []uint16{V22_05, V23_02, V23_11} {
		var w Writer
		(&StatsInfo{}).Encode(&w, v)
		if len(w.B) != 4+32+16 {
			t.Errorf("%s reset: %d bytes", VersionName(v), len(w.B))
		}
		var got StatsInfo
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || got.PartsPacked != 0 {
			t.Errorf("%s reset: %v %+v", VersionName(v), err, got)
		}
	}
}

// Hand-built bodies (the 22.05 RESET form, then 24.05 with the queue
// arrays): any one parallel array one entry short is refused.
func TestStatsInfoRejectsUnevenArrays(t *testing.T) {
	build := func(v uint16, short int) []byte {
		var w Writer
		counts := func(k int) uint32 {
			if k == short {
				return 1
			}
			return 2
		}
		arr := func(k, size int) {
			n := counts(k)
			w.U32(n)
			for i := uint32(0); i < n; i++ {
				w.B = append(w.B, make([]byte, size)...)
			}
		}
		w.U32(0) // parts_packed
		w.U32(2) // rpc_type_size
		arr(0, 2)
		arr(1, 4)
		arr(2, 8)
		k := 3
		if v >= V24_05 {
			w.U8(1)
			arr(3, 2)
			arr(4, 8)
			arr(5, 2)
			arr(6, 2)
			k = 7
		}
		w.U32(2) // rpc_user_size
		arr(k, 4)
		arr(k+1, 4)
		arr(k+2, 8)
		arr(k+3, 4) // pending types
		arr(k+4, 4) // pending counts
		arr(k+5, 4) // dump types
		n := counts(k + 6)
		w.U32(n)
		for i := uint32(0); i < n; i++ {
			w.Str("n1")
		}
		return w.B
	}
	for _, v := range []uint16{V22_05, V24_05} {
		r := NewReader(build(v, -1))
		var m StatsInfo
		if err := m.Decode(&r, v); err != nil || len(m.RPCTypes) != 2 || len(m.Dump) != 2 {
			t.Fatalf("%s: even arrays: %v %+v", VersionName(v), err, m)
		}
		last := 9 // 3 type + 3 user arrays, 2 pending, 2 dump
		if v >= V24_05 {
			last += 4
		}
		for short := 0; short <= last; short++ {
			r := NewReader(build(v, short))
			if err := new(StatsInfo).Decode(&r, v); err != errStatsArrays {
				t.Errorf("%s: array %d short: err %v", VersionName(v), short, err)
			}
		}
	}
}

func TestStatsInfoRequest(t *testing.T) {
	for _, v := range Versions {
		var got StatsInfoRequest
		miscRoundTrip(t, "StatsInfoRequest", &StatsInfoRequest{Command: StatCommandGet}, &got, &StatsInfoRequest{Command: 1}, v)
		miscTruncations(t, "StatsInfoRequest", func() miscCodec { return new(StatsInfoRequest) }, []byte{0, 1}, v)
	}
	body := []byte{0, 0}
	var m StatsInfoRequest
	m.Command = 9
	if n := testing.AllocsPerRun(100, func() {
		r := NewReader(body)
		if err := m.Decode(&r, V22_05); err != nil {
			t.Fatal(err)
		}
	}); n != 0 || m.Command != StatCommandReset {
		t.Fatalf("%v allocs, command %d", n, m.Command)
	}
}

func FuzzDecodeStatsInfo(f *testing.F) {
	for _, v := range Versions {
		for _, q := range []bool{false, true} {
			m := statsFilled()
			m.RPCQueueEnabled = q
			var w Writer
			m.Encode(&w, v)
			f.Add(v, w.B)
		}
	}
	f.Fuzz(func(t *testing.T, v uint16, body []byte) {
		v = Versions[int(v)%len(Versions)]
		var m StatsInfo
		r := NewReader(body)
		if m.Decode(&r, v) != nil {
			return
		}
		var w Writer
		m.Encode(&w, v)
		var m2 StatsInfo
		r2 := NewReader(w.B)
		if err := m2.Decode(&r2, v); err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

func FuzzDecodeStatsInfoRequest(f *testing.F) {
	f.Add(V24_11, []byte{0, 1})
	f.Fuzz(func(t *testing.T, v uint16, body []byte) {
		var m StatsInfoRequest
		r := NewReader(body)
		if m.Decode(&r, v) == nil && len(body) != 2 {
			t.Fatalf("accepted %d bytes", len(body))
		}
	})
}
