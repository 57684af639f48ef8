package ctld

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/capture"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/local"
)

const testPort = 16817

// fakeCluster returns the slurm.conf the reference captures were made
// with (the fake 16-node cluster, paths and ports included).
func fakeCluster(t testing.TB, rel string) *conf.Config {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "codec", "testdata", rel, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := conf.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newTestController builds a controller over a temporary state dir and
// the local engine, as `slurm-frontend serve` does.
func newTestController(t testing.TB, cfg *conf.Config, stats *state.RPCStats) *Controller {
	t.Helper()
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c, err := New(context.Background(), Options{
		Conf: cfg, Store: store, Backend: local.New(cfg), Stats: stats,
		ClusterName: cfg.Get("ClusterName", "cluster"), ServerHost: "slurm-frontend", ServerAddr: "127.0.0.1",
		Port: testPort, SlurmUser: "root", SlurmUID: 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBuildInfoEveryVersion: scontrol show config decodes for every
// protocol version, through the Fast path, with the values a user sees.
func TestBuildInfoEveryVersion(t *testing.T) {
	c := newTestController(t, fakeCluster(t, "slurm-24.11"), state.NewRPCStats())
	s := c.Snapshot()
	for _, v := range codec.Versions {
		w := codec.Writer{}
		(&codec.BuildInfoRequest{}).Encode(&w, v)
		rep, ok := c.Fast(&Request{Version: v, MsgType: codec.REQUEST_BUILD_INFO, Body: w.B})
		if !ok || rep.Frame == nil {
			t.Fatalf("%s: build info not answered from the snapshot", codec.VersionName(v))
		}
		var f codec.Frame
		if err := codec.DecodeFrame(rep.Frame, &f); err != nil {
			t.Fatalf("%s: frame: %v", codec.VersionName(v), err)
		}
		if f.Version != v || f.MsgType != codec.RESPONSE_BUILD_INFO {
			t.Fatalf("%s: reply version %#x type %d", codec.VersionName(v), f.Version, f.MsgType)
		}
		var got codec.BuildInfo
		r := codec.NewReader(f.Body)
		if err := got.Decode(&r, v); err != nil {
			t.Fatalf("%s: decode: %v", codec.VersionName(v), err)
		}
		// Round trip: what we encode is what a client decodes.
		want := c.buildInfo(s, v)
		w2 := codec.Writer{}
		got.Encode(&w2, v)
		if string(w2.B) != string(f.Body) {
			t.Errorf("%s: re-encoding the decoded reply changes its bytes", codec.VersionName(v))
		}
		if got.ClusterName != "refcluster" || got.SlurmctldPort != testPort || got.SlurmdPort != testPort+1 ||
			got.NextJobID != c.opt.Store.NextID() || got.Version != versionString(v) || got.Version != want.Version {
			t.Errorf("%s: cluster %q port %d/%d next job %d version %q", codec.VersionName(v),
				got.ClusterName, got.SlurmctldPort, got.SlurmdPort, got.NextJobID, got.Version)
		}
		if got.AuthType != "auth/munge" || got.SelectType != "select/cons_tres" || got.PriorityType != "priority/basic" ||
			got.MsgTimeout != 10 || got.MaxJobCount != 200000 || got.SelectTypeParam != crCore|crMemory ||
			got.ReturnToService != 2 || got.HashVal != codec.NoVal {
			t.Errorf("%s: auth %q select %q priority %q MessageTimeout %d MaxJobCount %d SelectTypeParameters %#x RTS %d hash %#x",
				codec.VersionName(v), got.AuthType, got.SelectType, got.PriorityType, got.MsgTimeout,
				got.MaxJobCount, got.SelectTypeParam, got.ReturnToService, got.HashVal)
		}
		if !reflect.DeepEqual(got.ControlMachine, []string{"slurm-frontend"}) || !reflect.DeepEqual(got.ControlAddr, []string{"127.0.0.1"}) {
			t.Errorf("%s: controllers %q %q", codec.VersionName(v), got.ControlMachine, got.ControlAddr)
		}
		wantAcct := ""
		if v < codec.V23_11 {
			wantAcct = "accounting_storage/none"
		}
		if got.AccountingStorageType != wantAcct {
			t.Errorf("%s: AccountingStorageType %q, want %q", codec.VersionName(v), got.AccountingStorageType, wantAcct)
		}
	}
}

// TestBuildInfoMatchesRealSlurmctld compares our reply with what the
// real slurmctld of 22.05, 24.11 and 26.05 sent for the same slurm.conf
// (the captures in codec/testdata), field by field, except what is
// genuinely the frontend's own.
func TestBuildInfoMatchesRealSlurmctld(t *testing.T) {
	ours := map[string]bool{
		"LastUpdate": true, "BootTime": true, // our clock
		"ControlMachine": true, "ControlAddr": true, // our host
		"NextJobID":         true, // our job store
		"HashVal":           true, // a hash of our own file means nothing to a client
		"PluginDir":         true, // we load no Slurm plugins
		"SlurmConf":         true, // the path of our config file
		"StateSaveLocation": true, // our state dir, not slurmctld's
		"SlurmctldLogFile":  true, // we log to stderr
		"SlurmctldPidFile":  true, // we write no pid file
		"MPIConf":           true, // the PMIx plugin installed beside 24.11's slurmctld; we have no MPI plugin
	}
	for _, rel := range []string{"slurm-22.05", "slurm-24.11", "slurm-26.05"} {
		cfg := fakeCluster(t, rel)
		real, v := capturedBuildInfo(t, rel)
		c := newTestController(t, cfg, state.NewRPCStats())
		c.opt.Port = uint16(real.SlurmctldPort)
		got := c.buildInfo(c.Snapshot(), v)
		gv, rv := reflect.ValueOf(got), reflect.ValueOf(real)
		for i := 0; i < gv.NumField(); i++ {
			name := gv.Type().Field(i).Name
			if ours[name] {
				continue
			}
			g, r := gv.Field(i).Interface(), rv.Field(i).Interface()
			if !reflect.DeepEqual(g, r) {
				t.Errorf("%s: %s = %#v, real slurmctld sent %#v", rel, name, g, r)
			}
		}
	}
}

func capturedBuildInfo(t *testing.T, rel string) (codec.BuildInfo, uint16) {
	t.Helper()
	name := filepath.Join("..", "..", "codec", "testdata", rel, "scontrol-show-config-"+rel[len("slurm-"):]+".pcap")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	conns, err := capture.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, cn := range conns {
		for _, raw := range cn.Replies {
			var f codec.Frame
			if codec.DecodeFrame(raw, &f) != nil || f.MsgType != codec.RESPONSE_BUILD_INFO {
				continue
			}
			var m codec.BuildInfo
			r := codec.NewReader(f.Body)
			if err := m.Decode(&r, f.Version); err != nil {
				t.Fatal(err)
			}
			return m, f.Version
		}
	}
	t.Fatalf("no RESPONSE_BUILD_INFO in %s", name)
	return codec.BuildInfo{}, 0
}

func statsRequest(v uint16, uid uint32, cmd uint16) *Request {
	w := codec.Writer{}
	(&codec.StatsInfoRequest{Command: cmd}).Encode(&w, v)
	return &Request{Version: v, MsgType: codec.REQUEST_STATS_INFO, UID: uid, GID: uid, Body: w.B}
}

// TestStatsInfo: sdiag's reply decodes for every version and carries the
// edge's counts; only root (or SlurmUser/operators) may reset them.
func TestStatsInfo(t *testing.T) {
	const user = 1000
	stats := state.NewRPCStats()
	c := newTestController(t, fakeCluster(t, "slurm-24.11"), stats)
	for i := 0; i < 3; i++ {
		stats.Record(codec.REQUEST_PING, user, 2*time.Millisecond)
	}
	c.counters.submitted.Add(2)
	for _, v := range codec.Versions {
		name := codec.VersionName(v)
		rep := c.statsInfo(statsRequest(v, user, codec.StatCommandGet))
		if rep.MsgType != codec.RESPONSE_STATS_INFO {
			t.Fatalf("%s: reply type %d", name, rep.MsgType)
		}
		var si codec.StatsInfo
		r := codec.NewReader(rep.Body)
		if err := si.Decode(&r, v); err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		if si.PartsPacked == 0 || si.ReqTime < c.started.Unix() || si.ReqTimeStart > si.ReqTime || si.JobsSubmitted != 2 || si.ServerThreadCount == 0 {
			t.Errorf("%s: parts %d req_time %d start %d submitted %d threads %d", name,
				si.PartsPacked, si.ReqTime, si.ReqTimeStart, si.JobsSubmitted, si.ServerThreadCount)
		}
		if v >= codec.V23_11 && (len(si.ScheduleExit) != scheduleExitCount || len(si.BFExit) != bfExitCount) {
			t.Errorf("%s: exit arrays %d/%d", name, len(si.ScheduleExit), len(si.BFExit))
		}
		if len(si.RPCTypes) != 1 || si.RPCTypes[0].Type != codec.REQUEST_PING || si.RPCTypes[0].Count != 3 || si.RPCTypes[0].Time != 6000 {
			t.Errorf("%s: rpc types %+v, want 3 pings of 6000 us", name, si.RPCTypes)
		}
		if len(si.RPCUsers) != 2 || si.RPCUsers[0].UID != 0 || si.RPCUsers[1].UID != user || si.RPCUsers[1].Count != 3 {
			t.Errorf("%s: rpc users %+v, want root then uid %d with 3", name, si.RPCUsers, user)
		}
	}

	// A user may not reset; the counts stay.
	for _, v := range codec.Versions {
		rep := c.statsInfo(statsRequest(v, user, codec.StatCommandReset))
		if rep.MsgType != codec.RESPONSE_SLURM_RC || be32(rep.Body) != codec.ESLURM_ACCESS_DENIED {
			t.Errorf("%s: reset by uid %d answered type %d body %x", codec.VersionName(v), user, rep.MsgType, rep.Body)
		}
	}
	if rows := stats.ByType(); len(rows) != 1 || rows[0].Count != 3 {
		t.Fatalf("refused reset changed the counts: %+v", rows)
	}

	// Root may: 24.05+ answer RC 0, older ones the emptied tables.
	for _, v := range []uint16{codec.V22_05, codec.V24_11} {
		stats.Record(codec.REQUEST_PING, user, time.Millisecond)
		rep := c.statsInfo(statsRequest(v, 0, codec.StatCommandReset))
		if v >= codec.V24_05 {
			if rep.MsgType != codec.RESPONSE_SLURM_RC || be32(rep.Body) != codec.SLURM_SUCCESS {
				t.Errorf("%s: root reset answered type %d body %x", codec.VersionName(v), rep.MsgType, rep.Body)
			}
		} else {
			var si codec.StatsInfo
			r := codec.NewReader(rep.Body)
			if rep.MsgType != codec.RESPONSE_STATS_INFO || si.Decode(&r, v) != nil || si.PartsPacked != 0 ||
				len(si.RPCTypes) != 0 || len(si.RPCUsers) != 1 || si.RPCUsers[0].UID != 0 {
				t.Errorf("%s: root reset answered type %d %+v", codec.VersionName(v), rep.MsgType, si)
			}
		}
		if rows := stats.ByType(); len(rows) != 0 {
			t.Errorf("%s: counts after reset: %+v", codec.VersionName(v), rows)
		}
		if c.counters.submitted.Load() != 0 {
			t.Errorf("%s: jobs submitted after reset: %d", codec.VersionName(v), c.counters.submitted.Load())
		}
	}
}

func TestArrayTaskCount(t *testing.T) {
	for expr, want := range map[string]uint32{"": 1, "1-5": 5, "0-999%10": 1000, "1,3,5-7": 5, "0-10:5": 3} {
		if got := arrayTaskCount(&state.Job{ArrayTasks: expr}); got != want {
			t.Errorf("%q: %d tasks, want %d", expr, got, want)
		}
	}
}

func TestTimeSecs(t *testing.T) {
	for in, want := range map[string]uint32{"5": 300, "5:30": 330, "1:00:00": 3600, "2-0": 172800, "1-2:03:04": 93784, "INFINITE": codec.Infinite} {
		if got, ok := timeSecs(in); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, ok, want)
		}
	}
}
