package codec

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// miscCodec is any message of this package's Decode/Encode shape.
type miscCodec interface {
	Decode(r *Reader, version uint16) error
	Encode(w *Writer, version uint16)
}

// miscSameBytes fails with the first differing offset.
func miscSameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(i-16, 0)
	t.Fatalf("%s: bytes differ at offset %d (got %d bytes, want %d)\n got[%d:] %x\nwant[%d:] %x",
		what, i, len(got), len(want), lo, got[lo:min(i+16, len(got))], lo, want[lo:min(i+16, len(want))])
}

// miscGolden decodes body into m with version, re-encodes it and
// compares the bytes.
func miscGolden(t testing.TB, what string, m miscCodec, body []byte, version uint16) {
	t.Helper()
	r := NewReader(body)
	if err := m.Decode(&r, version); err != nil {
		t.Fatalf("%s: decode: %v", what, err)
	}
	var w Writer
	m.Encode(&w, version)
	miscSameBytes(t, what, w.B, body)
}

// miscRoundTrip encodes in, decodes into out, and checks out deep-equals
// want and that re-encoding gives the same bytes. It returns the bytes.
func miscRoundTrip(t testing.TB, what string, in, out miscCodec, want any, version uint16) []byte {
	t.Helper()
	var w Writer
	in.Encode(&w, version)
	r := NewReader(w.B)
	if err := out.Decode(&r, version); err != nil {
		t.Fatalf("%s %s: decode: %v", what, VersionName(version), err)
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("%s %s: round trip differs: %s", what, VersionName(version), miscFieldDiff(out, want))
	}
	var w2 Writer
	out.Encode(&w2, version)
	miscSameBytes(t, what+" "+VersionName(version)+" re-encode", w2.B, w.B)
	return w.B
}

// miscFieldDiff names the top-level fields where two structs (or
// pointers to them) differ, with both values.
func miscFieldDiff(got, want any) string {
	g, w := reflect.Indirect(reflect.ValueOf(got)), reflect.Indirect(reflect.ValueOf(want))
	if g.Kind() != reflect.Struct || g.Type() != w.Type() {
		return fmt.Sprintf("\n got %+v\nwant %+v", got, want)
	}
	var b strings.Builder
	for i := 0; i < g.NumField(); i++ {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			fmt.Fprintf(&b, "\n  %s: got %#v, want %#v", g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
	return b.String()
}

// miscTruncations checks that every strict prefix of a valid body is
// rejected with ESLURM_PROTOCOL_INCOMPLETE_PACKET and that one trailing
// byte is too.
func miscTruncations(t testing.TB, what string, newMsg func() miscCodec, body []byte, version uint16) {
	t.Helper()
	for n := 0; n < len(body); n++ {
		r := NewReader(body[:n])
		if err := newMsg().Decode(&r, version); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Fatalf("%s %s: %d of %d bytes: err %v", what, VersionName(version), n, len(body), err)
		}
	}
	long := append(append([]byte(nil), body...), 0)
	r := NewReader(long)
	if err := newMsg().Decode(&r, version); err != ErrTrailing {
		t.Fatalf("%s %s: trailing byte: err %v", what, VersionName(version), err)
	}
}

// miscFill sets every field reachable from v to a distinct non-zero
// value (strings get their field name), so a dropped or swapped field
// shows in a round trip. Slices get one element.
func miscFill(v reflect.Value, name string, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(int64(1000000 + *n))
	case reflect.Float64, reflect.Float32:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		miscFill(v.Index(0), name+"0", n)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			miscFill(v.Index(i), name, n)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			miscFill(v.Field(i), v.Type().Field(i).Name, n)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		miscFill(v.Elem(), name, n)
	}
}

// miscZeroFields lists the top-level fields of struct s that are zero.
func miscZeroFields(s any) []string {
	v := reflect.ValueOf(s)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var out []string
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			out = append(out, v.Type().Field(i).Name)
		}
	}
	return out
}

// miscSlurmConf reads the key=value lines (first word of each line) of a
// capture directory's slurm.conf, keys lower-cased.
func miscSlurmConf(t testing.TB, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", dir, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(strings.Fields(line)[0], "=")
		if ok {
			out[strings.ToLower(k)] = v
		}
	}
	return out
}

// miscFuzzBody runs the shared fuzz property for a decoder: it never
// panics, and whatever it accepts re-encodes to bytes that decode again
// to the same value.
func miscFuzzBody(t *testing.T, v uint16, body []byte, newMsg func() miscCodec) {
	v = Versions[int(v)%len(Versions)]
	m := newMsg()
	r := NewReader(body)
	if m.Decode(&r, v) != nil {
		return
	}
	var w Writer
	m.Encode(&w, v)
	m2 := newMsg()
	r2 := NewReader(w.B)
	if err := m2.Decode(&r2, v); err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if !reflect.DeepEqual(m, m2) {
		// A NaN (a share factor of 0/0, as sshare shows it) is never
		// DeepEqual to itself: the property is then that the value
		// encodes to the same bytes again.
		var w2 Writer
		m2.Encode(&w2, v)
		if !bytes.Equal(w.B, w2.B) {
			t.Fatalf("re-decode differs:\n%+v\n%+v", m, m2)
		}
	}
}

// miscSeed adds the encoding of m for every version.
func miscSeed(f *testing.F, m miscCodec) {
	for _, v := range Versions {
		var w Writer
		m.Encode(&w, v)
		f.Add(v, w.B)
	}
}

// miscZeroAlloc checks that decoding body into m allocates nothing.
func miscZeroAlloc(t *testing.T, what string, m miscCodec, body []byte, v uint16) {
	t.Helper()
	var err error
	var r Reader // outside: through the interface call it would escape
	n := testing.AllocsPerRun(200, func() {
		r.Reset(body)
		err = m.Decode(&r, v)
	})
	if err != nil || n != 0 {
		t.Fatalf("%s %s: %v allocs, err %v", what, VersionName(v), n, err)
	}
}

func TestShareInfoGolden(t *testing.T) {
	rel := "slurm-24.11/sshare-a-24.11.pcap"
	for _, f := range goldenFrames(t, rel, REQUEST_SHARE_INFO) {
		var m ShareInfoRequest
		miscGolden(t, rel+" request", &m, f.Body, f.Version)
		// sshare -a: no account and no user filter.
		if m.AccountsSet || m.UsersSet || len(m.Accounts)+len(m.Users) != 0 {
			t.Errorf("request %+v", m)
		}
		miscZeroAlloc(t, "ShareInfoRequest", &m, f.Body, f.Version)
	}
	frames := goldenFrames(t, rel, RESPONSE_SHARE_INFO)
	var m ShareInfo
	miscGolden(t, rel, &m, frames[0].Body, frames[0].Version)
	wantTRES := []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}
	if !reflect.DeepEqual(m.TRESNames, wantTRES) || len(m.Assocs) != 4 || m.TotShares != 0 {
		t.Fatalf("tres %q, %d rows, tot %d", m.TRESNames, len(m.Assocs), m.TotShares)
	}
	// The association tree of the accounting capture: root, root's
	// user row, account refacct and user root under it.
	rows := [][4]string{{"root", "", "0", "1"}, {"root", "root", "1", "2"}, {"refacct", "root", "0", "3"}, {"root", "refacct", "1", "4"}}
	for i, want := range rows {
		a := m.Assocs[i]
		got := [4]string{a.Name, a.Parent, map[bool]string{true: "1", false: "0"}[a.User], strconv.Itoa(int(a.AssocID))}
		if got != want || a.Cluster != "refcluster" || len(a.TRESRunSecs) != 8 || len(a.UsageTRESRaw) != 8 {
			t.Errorf("row %d: %v (cluster %q, %d/%d tres)", i, got, a.Cluster, len(a.TRESRunSecs), len(a.UsageTRESRaw))
		}
		if a.TRESGrpMins[0] != math.MaxUint64 || a.UsageTRESRaw[0] != 0 {
			t.Errorf("row %d: grp_mins %v usage %v", i, a.TRESGrpMins, a.UsageTRESRaw)
		}
	}
	// Children of root have one raw share each, normalised to 0.5.
	if m.Assocs[1].SharesRaw != 1 || m.Assocs[1].SharesNorm != 0.5 || !math.IsInf(m.Assocs[1].LevelFS, 1) {
		t.Errorf("row 1: raw %d norm %v level_fs %v", m.Assocs[1].SharesRaw, m.Assocs[1].SharesNorm, m.Assocs[1].LevelFS)
	}
}

func TestShareInfoRoundTrip(t *testing.T) {
	in := ShareInfo{
		TRESNames: []string{"cpu", "mem"},
		Assocs: []AssocShares{{
			AssocID: 7, Cluster: "c", Name: "alice", Parent: "acct", SharesNorm: 0.25, SharesRaw: 0x7FFFFFFF,
			TRESRunSecs: []uint64{1, 2}, TRESGrpMins: []uint64{3, 4}, UsageEfctv: 0.5, UsageNorm: 0.125,
			UsageRaw: 99, UsageTRESRaw: []float64{12.5, math.Inf(1)}, FSFactor: 1, LevelFS: 2, User: true,
		}},
		TotShares: 5,
	}
	for _, v := range Versions {
		var got ShareInfo
		body := miscRoundTrip(t, "ShareInfo", &in, &got, &in, v)
		miscTruncations(t, "ShareInfo", func() miscCodec { return new(ShareInfo) }, body, v)
	}
	// Short TRES arrays are padded to the TRES count; no rows is NO_VAL.
	short := ShareInfo{TRESNames: []string{"cpu", "mem"}, Assocs: []AssocShares{{Name: "x"}}}
	var w Writer
	short.Encode(&w, V24_11)
	var got ShareInfo
	r := NewReader(w.B)
	if err := got.Decode(&r, V24_11); err != nil || len(got.Assocs[0].TRESRunSecs) != 2 || len(got.Assocs[0].UsageTRESRaw) != 2 {
		t.Fatalf("padding: %v %+v", err, got)
	}
	var w2 Writer
	(&ShareInfo{}).Encode(&w2, V24_11)
	miscSameBytes(t, "empty shares", w2.B, []byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0})
	// A TRES array count other than tres_cnt is refused, as clients do.
	b := append([]byte(nil), w.B...)
	i := bytes.Index(b, []byte{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0}) // tres_run_secs
	b[i+3] = 1
	r = NewReader(b)
	if err := new(ShareInfo).Decode(&r, V24_11); err != errShareTRESCount {
		t.Fatalf("tres count: %v", err)
	}
}

func TestShareInfoRequest(t *testing.T) {
	in := ShareInfoRequest{Accounts: [][]byte{[]byte("a1"), []byte("a2")}, AccountsSet: true, UsersSet: true}
	want := ShareInfoRequest{Accounts: in.Accounts, AccountsSet: true, UsersSet: true}
	for _, v := range Versions {
		var got ShareInfoRequest
		body := miscRoundTrip(t, "ShareInfoRequest", &in, &got, &want, v)
		// account list of 2, empty (not NULL) user list
		if len(body) != 4+7+7+4 {
			t.Fatalf("%d bytes", len(body))
		}
		miscTruncations(t, "ShareInfoRequest", func() miscCodec { return new(ShareInfoRequest) }, body, v)
		var m ShareInfoRequest
		miscZeroAlloc(t, "ShareInfoRequest", &m, body, v)
		if string(m.Accounts[1]) != "a2" {
			t.Fatal(m)
		}
	}
}

func TestFedInfo(t *testing.T) {
	for _, v := range Versions {
		var w Writer
		(&FedInfo{}).Encode(&w, v)
		miscSameBytes(t, "no federation", w.B, []byte{0})
		var got FedInfo
		miscRoundTrip(t, "FedInfo", &FedInfo{}, &got, &FedInfo{}, v)
		fed := FedInfo{Federated: true, Name: "fed1", Flags: 3, ClustersNull: true}
		body := miscRoundTrip(t, "FedInfo", &fed, &got, &fed, v)
		miscTruncations(t, "FedInfo", func() miscCodec { return new(FedInfo) }, body, v)
		// A record with cluster records is refused, not misread.
		b := append(body[:len(body)-4:len(body)-4], 0, 0, 0, 1, 0)
		r := NewReader(b)
		if err := new(FedInfo).Decode(&r, v); err != errFedClusters {
			t.Fatalf("clusters: %v", err)
		}
		miscZeroAlloc(t, "FedInfoRequest", &FedInfoRequest{}, nil, v)
		miscZeroAlloc(t, "PingRequest", &PingRequest{}, nil, v)
		for _, m := range []miscCodec{&FedInfoRequest{}, &PingRequest{}} {
			r := NewReader([]byte{0})
			if err := m.Decode(&r, v); err != ErrTrailing {
				t.Fatalf("%T with a body: %v", m, err)
			}
		}
	}
}

func TestLicenseInfo(t *testing.T) {
	full := LicenseInfo{Name: "matlab", Total: 10, InUse: 3, Reserved: 1, Remote: true,
		LastConsumed: 4, LastDeficit: 5, LastUpdate: 1700000000, Mode: 2, Nodes: "n[1-2]"}
	for _, v := range Versions {
		want := full
		size := 4 + 11 + 12 + 1 // count; name; total, in_use, reserved; remote
		if v < V23_02 {
			want.LastConsumed, want.LastDeficit, want.LastUpdate = 0, 0, 0
		} else {
			size += 16
		}
		if v < V25_05 {
			want.Mode, want.Nodes = 0, ""
		} else {
			size += 1 + 11
		}
		in := LicenseInfoMsg{LastUpdate: 42, Licenses: []LicenseInfo{full}}
		var got LicenseInfoMsg
		body := miscRoundTrip(t, "LicenseInfoMsg", &in, &got, &LicenseInfoMsg{LastUpdate: 42, Licenses: []LicenseInfo{want}}, v)
		if len(body) != size+8 {
			t.Errorf("%s: %d bytes, want %d", VersionName(v), len(body), size+8)
		}
		miscTruncations(t, "LicenseInfoMsg", func() miscCodec { return new(LicenseInfoMsg) }, body, v)

		req := LicenseInfoRequest{LastUpdate: 9, ShowFlags: 1}
		var gotReq LicenseInfoRequest
		body = miscRoundTrip(t, "LicenseInfoRequest", &req, &gotReq, &req, v)
		miscTruncations(t, "LicenseInfoRequest", func() miscCodec { return new(LicenseInfoRequest) }, body, v)
		miscZeroAlloc(t, "LicenseInfoRequest", &gotReq, body, v)
	}
}

func TestReservationInfo(t *testing.T) {
	var full ReservationInfo
	n := 0
	miscFill(reflect.ValueOf(&full).Elem(), "", &n)
	full.NodeInxBits, full.NodeInx = 16, "0x0003"
	for _, v := range Versions {
		want := full
		empty := reservationMinLen
		if v < V23_02 {
			want.Comment = ""
		} else {
			empty += 4
		}
		if v >= V25_11 {
			want.ResvWatts = 0
			empty += 8 - 4
		} else {
			want.QOS, want.AllowedParts = "", ""
		}
		in := ReservationInfoMsg{LastUpdate: 5, Reservations: []ReservationInfo{full, {}}}
		var got ReservationInfoMsg
		body := miscRoundTrip(t, "ReservationInfoMsg", &in, &got,
			&ReservationInfoMsg{LastUpdate: 5, Reservations: []ReservationInfo{want, {}}}, v)
		miscTruncations(t, "ReservationInfoMsg", func() miscCodec { return new(ReservationInfoMsg) }, body, v)

		var w Writer
		(&ReservationInfo{}).encode(&w, v)
		if len(w.B) != empty {
			t.Errorf("%s: empty record %d bytes, want %d", VersionName(v), len(w.B), empty)
		}
		var w2 Writer
		(&ReservationInfoMsg{LastUpdate: 5}).Encode(&w2, v)
		miscSameBytes(t, "no reservations", w2.B, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5})

		req := ReservationInfoRequest{LastUpdate: 77}
		var gotReq ReservationInfoRequest
		body = miscRoundTrip(t, "ReservationInfoRequest", &req, &gotReq, &req, v)
		miscTruncations(t, "ReservationInfoRequest", func() miscCodec { return new(ReservationInfoRequest) }, body, v)
		miscZeroAlloc(t, "ReservationInfoRequest", &gotReq, body, v)
	}
}

func TestSlurmRCMsg(t *testing.T) {
	for _, v := range Versions {
		in := SlurmRCMsg{RC: ESLURM_INVALID_PARTITION_NAME, Message: "line one\nline two"}
		var got SlurmRCMsg
		body := miscRoundTrip(t, "SlurmRCMsg", &in, &got, &in, v)
		miscTruncations(t, "SlurmRCMsg", func() miscCodec { return new(SlurmRCMsg) }, body, v)
		var w Writer
		(&SlurmRCMsg{RC: 0}).Encode(&w, v)
		miscSameBytes(t, "rc msg with NULL text", w.B, []byte{0, 0, 0, 0, 0, 0, 0, 0})
	}
}

func TestJobReady(t *testing.T) {
	for _, v := range Versions {
		in := JobReadyRequest{SLUID: 1 << 40, JobID: 42, StepID: 3, StepHetComp: 4, ShowFlags: 1}
		want, size := in, 4+2
		if v < V25_11 {
			want.SLUID, want.StepID, want.StepHetComp = 0, NoVal, NoVal
		} else {
			size = 8 + 12 + 2
		}
		var got JobReadyRequest
		body := miscRoundTrip(t, "JobReadyRequest", &in, &got, &want, v)
		if len(body) != size {
			t.Errorf("%s: %d bytes", VersionName(v), len(body))
		}
		miscTruncations(t, "JobReadyRequest", func() miscCodec { return new(JobReadyRequest) }, body, v)
		miscZeroAlloc(t, "JobReadyRequest", &got, body, v)

		resp := JobReadyResponse{Ready: JobReadyNodes | JobReadyJob}
		var gotResp JobReadyResponse
		body = miscRoundTrip(t, "JobReadyResponse", &resp, &gotResp, &resp, v)
		miscSameBytes(t, "job ready", body, []byte{0, 0, 0, 3})
	}
}

func TestConfig(t *testing.T) {
	for _, v := range Versions {
		in := ConfigRequest{Flags: ConfigRequestSackd, Port: 6818}
		want, size := in, 6
		if v < V25_05 {
			want.Port, size = 0, 4
		}
		var got ConfigRequest
		body := miscRoundTrip(t, "ConfigRequest", &in, &got, &want, v)
		if len(body) != size {
			t.Errorf("%s: %d bytes", VersionName(v), len(body))
		}
		miscTruncations(t, "ConfigRequest", func() miscCodec { return new(ConfigRequest) }, body, v)
		miscZeroAlloc(t, "ConfigRequest", &got, body, v)

		resp := ConfigResponse{Files: []ConfigFile{
			{Exists: true, Execute: true, Name: "slurm.conf", Content: "ClusterName=c\n"},
			{Name: "plugstack.conf"},
		}}
		wantResp := resp
		wantResp.Files = append([]ConfigFile(nil), resp.Files...)
		if v < V23_11 {
			wantResp.Files[0].Execute = false
		}
		var gotResp ConfigResponse
		body = miscRoundTrip(t, "ConfigResponse", &resp, &gotResp, &wantResp, v)
		miscTruncations(t, "ConfigResponse", func() miscCodec { return new(ConfigResponse) }, body, v)
	}
}

func FuzzDecodeShareInfo(f *testing.F) {
	for _, fr := range goldenFrames(f, "slurm-24.11/sshare-a-24.11.pcap", RESPONSE_SHARE_INFO) {
		f.Add(fr.Version, fr.Body)
	}
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(ShareInfo) })
	})
}

func FuzzDecodeShareInfoRequest(f *testing.F) {
	for _, fr := range goldenFrames(f, "slurm-24.11/sshare-a-24.11.pcap", REQUEST_SHARE_INFO) {
		f.Add(fr.Version, fr.Body)
	}
	miscSeed(f, &ShareInfoRequest{Accounts: [][]byte{[]byte("a")}, AccountsSet: true, UsersSet: true})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(ShareInfoRequest) })
	})
}

func FuzzDecodeFedInfo(f *testing.F) {
	miscSeed(f, &FedInfo{})
	miscSeed(f, &FedInfo{Federated: true, Name: "f"})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(FedInfo) })
	})
}

func FuzzDecodeLicenseInfo(f *testing.F) {
	miscSeed(f, &LicenseInfoMsg{Licenses: []LicenseInfo{{Name: "a", Total: 1, Nodes: "n1"}}})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(LicenseInfoMsg) })
	})
}

func FuzzDecodeLicenseInfoRequest(f *testing.F) {
	miscSeed(f, &LicenseInfoRequest{LastUpdate: 1, ShowFlags: 1})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(LicenseInfoRequest) })
	})
}

func FuzzDecodeReservationInfo(f *testing.F) {
	miscSeed(f, &ReservationInfoMsg{Reservations: []ReservationInfo{{Name: "r", NodeInxBits: 4, NodeInx: "0x3",
		CoreSpec: []ReservationCoreSpec{{"n1", "0-1"}}}}})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(ReservationInfoMsg) })
	})
}

func FuzzDecodeReservationInfoRequest(f *testing.F) {
	miscSeed(f, &ReservationInfoRequest{LastUpdate: 1})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(ReservationInfoRequest) })
	})
}

func FuzzDecodeSlurmRCMsg(f *testing.F) {
	miscSeed(f, &SlurmRCMsg{RC: 1, Message: "m"})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(SlurmRCMsg) })
	})
}

func FuzzDecodeJobReadyRequest(f *testing.F) {
	miscSeed(f, &JobReadyRequest{JobID: 1})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(JobReadyRequest) })
	})
}

func FuzzDecodeJobReadyResponse(f *testing.F) {
	miscSeed(f, &JobReadyResponse{Ready: 3})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(JobReadyResponse) })
	})
}

func FuzzDecodeConfigRequest(f *testing.F) {
	miscSeed(f, &ConfigRequest{Flags: 2, Port: 1})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(ConfigRequest) })
	})
}

func FuzzDecodeConfigResponse(f *testing.F) {
	miscSeed(f, &ConfigResponse{Files: []ConfigFile{{Exists: true, Name: "slurm.conf", Content: "x"}}})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(ConfigResponse) })
	})
}

func FuzzDecodePingRequest(f *testing.F) {
	f.Add(V24_11, []byte{})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(PingRequest) })
		miscFuzzBody(t, v, b, func() miscCodec { return new(FedInfoRequest) })
	})
}

func TestBatchScript(t *testing.T) {
	for _, v := range Versions {
		in := BatchScriptRequest{JobID: 42, StepID: NoVal, StepHetComp: NoVal}
		var got BatchScriptRequest
		body := miscRoundTrip(t, "BatchScriptRequest", &in, &got, &in, v)
		miscTruncations(t, "BatchScriptRequest", func() miscCodec { return new(BatchScriptRequest) }, body, v)
		resp := BatchScriptResponse{Script: "#!/bin/sh\necho hi\n"}
		var gotResp BatchScriptResponse
		body = miscRoundTrip(t, "BatchScriptResponse", &resp, &gotResp, &resp, v)
		// packstr: u32 length with the NUL, the bytes, the NUL.
		if len(body) != 4+len(resp.Script)+1 || body[3] != byte(len(resp.Script)+1) || body[len(body)-1] != 0 {
			t.Errorf("%s: RESPONSE_BATCH_SCRIPT body %x is not one packstr", VersionName(v), body)
		}
		miscTruncations(t, "BatchScriptResponse", func() miscCodec { return new(BatchScriptResponse) }, body, v)
	}
}

func FuzzDecodeBatchScript(f *testing.F) {
	miscSeed(f, &BatchScriptResponse{Script: "#!/bin/sh\ntrue\n"})
	miscSeed(f, &BatchScriptRequest{JobID: 7, StepID: NoVal, StepHetComp: NoVal})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(BatchScriptResponse) })
		miscFuzzBody(t, v, b, func() miscCodec { return new(BatchScriptRequest) })
	})
}
