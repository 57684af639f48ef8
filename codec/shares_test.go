package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"testing"
)

// A real 24.11 `sshare -a` against a real slurmctld: both messages decode
// with nothing left over and re-encode to the captured bodies, in the
// capture's version and in 22.05 and 26.05 too (the layout is the same
// in every release's source).
func TestSharesGolden(t *testing.T) {
	const rel = "slurm-24.11/sshare-a-24.11.pcap"
	var req, resp int
	for _, c := range allocConns(t, rel) {
		for _, list := range [][][]byte{c.Requests, c.Replies} {
			for _, raw := range list {
				var f Frame
				if DecodeFrame(raw, &f) != nil {
					continue
				}
				if f.Version != V24_11 {
					t.Fatalf("frame version %#x", f.Version)
				}
				switch f.MsgType {
				case REQUEST_SHARE_INFO:
					req++
					if len(raw) != 224 {
						t.Errorf("request frame %d bytes, want 224", len(raw))
					}
					// sshare -a: both lists NULL (NO_VAL).
					miscSameBytes(t, "request body", f.Body, []byte{0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfe})
					for _, v := range []uint16{V22_05, V24_11, V26_05} {
						var m ShareInfoRequest
						sharesGoldenBody(t, "ShareInfoRequest", &m, f.Body, v)
						if m.AccountsSet || m.UsersSet {
							t.Errorf("%s: request %+v", VersionName(v), m)
						}
					}
				case RESPONSE_SHARE_INFO:
					resp++
					if len(raw) != 1472 {
						t.Errorf("response frame %d bytes, want 1472", len(raw))
					}
					for _, v := range []uint16{V22_05, V24_11, V26_05} {
						var m ShareInfo
						sharesGoldenBody(t, "ShareInfo", &m, f.Body, v)
						if len(m.TRESNames) != 8 || len(m.Assocs) != 4 {
							t.Fatalf("%s: %d TRES names, %d rows", VersionName(v), len(m.TRESNames), len(m.Assocs))
						}
						for i, a := range m.Assocs {
							if len(a.TRESRunSecs) != 8 || len(a.TRESGrpMins) != 8 || len(a.UsageTRESRaw) != 8 {
								t.Errorf("row %d: TRES arrays %d/%d/%d", i, len(a.TRESRunSecs), len(a.TRESGrpMins), len(a.UsageTRESRaw))
							}
						}
					}
				}
			}
		}
	}
	if req != 1 || resp != 1 {
		t.Fatalf("%d requests, %d responses", req, resp)
	}
}

// sharesGoldenBody decodes body (nothing may be left), re-encodes it and
// requires the same bytes.
func sharesGoldenBody(t *testing.T, what string, m miscCodec, body []byte, v uint16) {
	t.Helper()
	r := NewReader(body)
	if err := m.Decode(&r, v); err != nil {
		t.Fatalf("%s %s: decode: %v", what, VersionName(v), err)
	}
	if r.Remaining() != 0 {
		t.Fatalf("%s %s: %d bytes left", what, VersionName(v), r.Remaining())
	}
	var w Writer
	m.Encode(&w, v)
	miscSameBytes(t, what+" "+VersionName(v), w.B, body)
}

// One share row built byte by byte from the field list of
// _pack_assoc_shares_object (the same in 22.05, 24.11 and 26.05).
func TestSharesLayout(t *testing.T) {
	var b wire
	b.u32(2)
	b.str("cpu")
	b.str("mem")
	b.u32(1) // one row
	b.u32(7)
	b.str("c")
	b.str("alice")
	b.str("acct")
	b.null()
	b.dbl(0.25)
	b.u32(0x7FFFFFFF)
	b.u32(2)
	b.u64(60)
	b.u64(120) // tres_run_secs
	b.u32(2)
	b.u64(math.MaxUint64)
	b.u64(5) // tres_grp_mins
	b.dbl(0.5)
	b.dbl(0.125)
	b.u64(99)
	b.u32(2)
	b.str("12.500000")
	b.str("inf") // usage_tres_raw as %Lf text
	b.dbl(1)
	b.dbl(2)
	b.u16(1)
	b.u64(10) // tot_shares
	in := ShareInfo{
		TRESNames: []string{"cpu", "mem"},
		Assocs: []AssocShares{{
			AssocID: 7, Cluster: "c", Name: "alice", Parent: "acct", SharesNorm: 0.25, SharesRaw: 0x7FFFFFFF,
			TRESRunSecs: []uint64{60, 120}, TRESGrpMins: []uint64{math.MaxUint64, 5}, UsageEfctv: 0.5, UsageNorm: 0.125,
			UsageRaw: 99, UsageTRESRaw: []float64{12.5, math.Inf(1)}, FSFactor: 1, LevelFS: 2, User: true,
		}},
		TotShares: 10,
	}
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		var w Writer
		in.Encode(&w, v)
		miscSameBytes(t, "shares "+VersionName(v), w.B, b.B)
		var got ShareInfo
		sharesGoldenBody(t, "ShareInfo", &got, b.B, v)
		if !reflect.DeepEqual(got, in) {
			t.Fatalf("%s: %s", VersionName(v), miscFieldDiff(got, in))
		}
	}
}

// wire builds expected bodies by hand, the way each pack function lays
// them out, so the layout tests do not lean on the Writer.
type wire struct{ B []byte }

func (b *wire) u16(v uint16) { b.B = binary.BigEndian.AppendUint16(b.B, v) }
func (b *wire) u32(v uint32) { b.B = binary.BigEndian.AppendUint32(b.B, v) }
func (b *wire) u64(v uint64) { b.B = binary.BigEndian.AppendUint64(b.B, v) }
func (b *wire) dbl(v float64) {
	b.u64(math.Float64bits(v * 1e6)) // packdouble: value * FLOAT_MULT
}
func (b *wire) null() { b.u32(0) }
func (b *wire) str(s string) {
	b.u32(uint32(len(s) + 1))
	b.B = append(b.B, s...)
	b.B = append(b.B, 0)
}

// prioSample is one job with every field set, two TRES and factors.
func prioSample(direct float64) PriorityFactorsJob {
	return PriorityFactorsJob{
		StepID:     JobStepID{SLUID: 0x1234, JobID: 42, StepID: NoVal, StepHetComp: NoVal},
		UserID:     1000,
		Account:    "acct",
		Partition:  "debug",
		QOS:        "normal",
		DirectPrio: direct,
		Factors: PriorityFactors{
			Age: 1, Assoc: 2, FS: 3, JS: 4, Part: 5, QOS: 6,
			Site: NiceOffset, Nice: NiceOffset + 10,
			TRES: []PriorityTRES{{Name: "cpu", Factor: 7, Weight: 0.5}, {Name: "mem", Factor: 8, Weight: 0.25}},
		},
	}
}

// prioWire is prioSample as each release's _pack_priority_factors_object
// packs it, field by field.
func prioWire(v uint16, direct float64) []byte {
	var b wire
	tres := func(cntBetween bool) {
		b.u32(2)
		b.dbl(7)
		b.dbl(8) // priority_tres
		if cntBetween {
			b.u32(2) // 22.05 tres_cnt
		}
		b.u32(2)
		b.str("cpu")
		b.str("mem")
		b.u32(2)
		b.dbl(0.5)
		b.dbl(0.25) // tres_weights
	}
	b.u32(1) // list count
	if v < V23_02 {
		b.u32(42)
		b.u32(1000)
		for _, f := range []float64{1, 2, 3, 4, 5, 6} {
			b.dbl(f)
		}
		b.dbl(direct)
		b.u32(NiceOffset)
		tres(true)
		b.u32(NiceOffset + 10)
		b.str("debug")
		return b.B
	}
	b.str("acct")
	if v >= V26_05 {
		b.u64(0x1234)
		b.u32(42)
		b.u32(NoVal)
		b.u32(NoVal)
	} else {
		b.u32(42)
	}
	b.str("debug")
	b.dbl(direct)
	if direct == 0 {
		for _, f := range []float64{1, 2, 3, 4, 5, 6} {
			b.dbl(f)
		}
		b.u32(NiceOffset)
		tres(false)
		b.u32(NiceOffset + 10)
	}
	b.str("normal")
	b.u32(1000)
	return b.B
}

// prioFor is what version v carries of j.
func prioFor(j PriorityFactorsJob, v uint16) PriorityFactorsJob {
	if v < V26_05 {
		j.StepID = JobStepID{JobID: j.StepID.JobID, StepID: NoVal, StepHetComp: NoVal}
	}
	if v < V23_02 {
		j.Account, j.QOS = "", ""
	} else if j.DirectPrio != 0 {
		j.Factors = PriorityFactors{}
	}
	return j
}

func TestPriorityFactorsLayout(t *testing.T) {
	for _, v := range []uint16{V22_05, V23_02, V24_11, V25_11, V26_05} {
		for _, direct := range []float64{0, 12345} {
			in := PriorityFactorsInfo{Jobs: []PriorityFactorsJob{prioSample(direct)}}
			var w Writer
			in.Encode(&w, v)
			want := prioWire(v, direct)
			miscSameBytes(t, "priority factors "+VersionName(v), w.B, want)
			var got PriorityFactorsInfo
			sharesGoldenBody(t, "PriorityFactorsInfo", &got, want, v)
			exp := PriorityFactorsInfo{Jobs: []PriorityFactorsJob{prioFor(prioSample(direct), v)}}
			if !reflect.DeepEqual(got, exp) {
				t.Fatalf("%s direct %v: %s", VersionName(v), direct, miscFieldDiff(got.Jobs[0], exp.Jobs[0]))
			}
		}
	}
	// Sizes: 22.05 4+ (8 + 56 + 4 + (4+16) + 4 + (4+8+8) + (4+16) + 4 + 10)
	// = 150; 24.11 with factors 4 + 9 + 4 + 10 + 8 + 48 + 4 + 20 + 20 + 20
	// + 4 + 11 + 4 = 166, without 4 + 9 + 4 + 10 + 8 + 11 + 4 = 50;
	// 26.05 adds 16.
	sizes := []struct {
		v      uint16
		direct float64
		n      int
	}{{V22_05, 0, 150}, {V22_05, 1, 150}, {V24_11, 0, 166}, {V24_11, 1, 50}, {V26_05, 0, 182}, {V26_05, 1, 66}}
	for _, s := range sizes {
		if n := len(prioWire(s.v, s.direct)); n != s.n {
			t.Errorf("%s direct %v: %d bytes, want %d", VersionName(s.v), s.direct, n, s.n)
		}
	}
}

func TestPriorityFactorsRoundTrip(t *testing.T) {
	nan := prioSample(math.NaN()) // a NaN direct_prio counts as set, as in C
	for _, v := range Versions {
		for _, direct := range []float64{0, 1e9} {
			a, b := prioSample(direct), prioSample(0)
			b.StepID.JobID, b.Factors.TRES, b.Account, b.Partition = 43, nil, "", ""
			in := PriorityFactorsInfo{Jobs: []PriorityFactorsJob{a, b}}
			want := PriorityFactorsInfo{Jobs: []PriorityFactorsJob{prioFor(a, v), prioFor(b, v)}}
			var got PriorityFactorsInfo
			body := miscRoundTrip(t, "PriorityFactorsInfo", &in, &got, &want, v)
			miscTruncations(t, "PriorityFactorsInfo", func() miscCodec { return new(PriorityFactorsInfo) }, body, v)
		}
		var w Writer
		(&PriorityFactorsInfo{Jobs: []PriorityFactorsJob{nan}}).Encode(&w, v)
		var got PriorityFactorsInfo
		r := NewReader(w.B)
		if err := got.Decode(&r, v); err != nil || !math.IsNaN(got.Jobs[0].DirectPrio) {
			t.Fatalf("%s NaN: %v %+v", VersionName(v), err, got)
		}
		if v >= V23_02 && got.Jobs[0].Factors.TRES != nil {
			t.Fatalf("%s NaN: factors sent", VersionName(v))
		}
	}
	// No jobs: NO_VAL as slurmctld sends it; a count of 0 is kept.
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		var w Writer
		(&PriorityFactorsInfo{}).Encode(&w, v)
		miscSameBytes(t, "no jobs", w.B, []byte{0xff, 0xff, 0xff, 0xfe})
		for _, m := range []PriorityFactorsInfo{{}, {EmptyList: true}} {
			var got PriorityFactorsInfo
			miscRoundTrip(t, "PriorityFactorsInfo empty", &m, &got, &m, v)
		}
	}
}

// The three TRES arrays (and 22.05's tres_cnt between them) must agree.
func TestPriorityFactorsUnevenTRES(t *testing.T) {
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		body := prioWire(v, 0)
		// Every u32 2 in the body is one of the TRES counts.
		var at []int
		for i := 0; i+4 <= len(body); i++ {
			if binary.BigEndian.Uint32(body[i:]) == 2 {
				at = append(at, i)
			}
		}
		want := 3
		if v < V23_02 {
			want = 4
		}
		if len(at) != want {
			t.Fatalf("%s: %d TRES counts found", VersionName(v), len(at))
		}
		for k, i := range at {
			b := append([]byte(nil), body...)
			b[i+3] = 1
			r := NewReader(b)
			err := new(PriorityFactorsInfo).Decode(&r, v)
			if k > 0 && err != errPrioTRESCount || CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
				t.Fatalf("%s: count %d short: %v", VersionName(v), k, err)
			}
		}
	}
}

func TestPriorityFactorsRequest(t *testing.T) {
	in := PriorityFactorsRequest{
		JobIDs: []uint32{42, 43}, JobIDsSet: true,
		UIDs: []uint32{1000}, UIDsSet: true,
		Partitions: "debug,gpu", PartitionsSet: true,
	}
	// 22.05: sprio -j 42,43 -u 1000 -p debug,gpu.
	var b wire
	b.u32(2)
	b.u32(42)
	b.u32(43)
	b.u32(1)
	b.u32(1000)
	b.str("debug,gpu")
	var w Writer
	in.Encode(&w, V22_05)
	miscSameBytes(t, "22.05 request", w.B, b.B)
	var got PriorityFactorsRequest
	body := miscRoundTrip(t, "PriorityFactorsRequest", &in, &got, &in, V22_05)
	miscTruncations(t, "PriorityFactorsRequest", func() miscCodec { return new(PriorityFactorsRequest) }, body, V22_05)
	// Plain sprio in 22.05: NULL lists and NULL partitions.
	var w0 Writer
	(&PriorityFactorsRequest{}).Encode(&w0, V22_05)
	miscSameBytes(t, "22.05 plain", w0.B, []byte{0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0})
	// Empty lists and "" are kept apart from NULL (an empty filter
	// matches nothing in 22.05's _filter_job).
	empty := PriorityFactorsRequest{JobIDsSet: true, UIDsSet: true, PartitionsSet: true}
	var w1 Writer
	empty.Encode(&w1, V22_05)
	miscSameBytes(t, "22.05 empty", w1.B, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0})
	var gotEmpty PriorityFactorsRequest
	miscRoundTrip(t, "PriorityFactorsRequest empty", &empty, &gotEmpty, &empty, V22_05)
	// Reusing one request decodes without allocating (no partitions).
	var w2 Writer
	(&PriorityFactorsRequest{JobIDs: []uint32{1, 2}, JobIDsSet: true, UIDs: []uint32{3}, UIDsSet: true}).Encode(&w2, V22_05)
	var reused PriorityFactorsRequest
	miscZeroAlloc(t, "PriorityFactorsRequest", &reused, w2.B, V22_05)
	// 23.02 on: no body; one byte is refused.
	for _, v := range Versions {
		if v < V23_02 {
			continue
		}
		var w Writer
		in.Encode(&w, v)
		if len(w.B) != 0 {
			t.Fatalf("%s: request body %x", VersionName(v), w.B)
		}
		var m PriorityFactorsRequest
		r := NewReader(nil)
		if err := m.Decode(&r, v); err != nil || !reflect.DeepEqual(m, PriorityFactorsRequest{}) {
			t.Fatalf("%s: %v %+v", VersionName(v), err, m)
		}
		r = NewReader([]byte{0})
		if err := m.Decode(&r, v); err != ErrTrailing {
			t.Fatalf("%s: one byte: %v", VersionName(v), err)
		}
	}
}

// Hostile counts in the new decoders stay within the allocation bound
// (the same check TestAllocBound makes for the decoders it lists).
func TestPriorityFactorsAllocBound(t *testing.T) {
	bodies := hostileBodies()
	for _, v := range Versions {
		body := prioWire(v, 0)
		bodies := append(bodies, body)
		for _, b := range bodies {
			checkAllocBound(t, "PriorityFactorsInfo", new(PriorityFactorsInfo), v, b)
			checkAllocBound(t, "PriorityFactorsRequest", new(PriorityFactorsRequest), v, b)
		}
	}
	// A TRES count just over what is left fails before allocating.
	body := prioWire(V24_11, 0)
	i := bytes.Index(body, []byte{0, 0, 0, 2, 0x41}) // priority_tres count, then 7e6's first byte
	if i < 0 {
		t.Fatal("no TRES count")
	}
	b := append([]byte(nil), body...)
	binary.BigEndian.PutUint32(b[i:], uint32(len(b)))
	r := NewReader(b)
	if err := new(PriorityFactorsInfo).Decode(&r, V24_11); err != ErrBadCount {
		t.Fatalf("big TRES count: %v", err)
	}
}

func prioSeeds(f *testing.F) {
	for _, d := range []float64{0, 5} {
		miscSeed(f, &PriorityFactorsInfo{Jobs: []PriorityFactorsJob{prioSample(d), prioSample(0)}})
	}
	miscSeed(f, &PriorityFactorsInfo{})
}

func FuzzDecodePriorityFactors(f *testing.F) {
	prioSeeds(f)
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(PriorityFactorsInfo) })
		checkAllocBound(t, "PriorityFactorsInfo", new(PriorityFactorsInfo), Versions[int(v)%len(Versions)], b)
	})
}

func FuzzDecodePriorityFactorsRequest(f *testing.F) {
	miscSeed(f, &PriorityFactorsRequest{JobIDs: []uint32{1, 2}, JobIDsSet: true, UIDsSet: true, Partitions: "p"})
	miscSeed(f, &PriorityFactorsRequest{})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(PriorityFactorsRequest) })
		checkAllocBound(t, "PriorityFactorsRequest", new(PriorityFactorsRequest), Versions[int(v)%len(Versions)], b)
	})
}
