package ctld

import (
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/local"
)

// pushCaller records the pushes a controller sends; calls to a port in
// down fail as an unreachable sackd does.
type pushCaller struct {
	mu    sync.Mutex
	calls []pushCall
	down  map[uint16]bool
}

type pushCall struct {
	to      netip.AddrPort
	version uint16
	msgType uint16
	forUID  uint32
	reply   bool
	body    []byte
}

func (p *pushCaller) Call(ctx context.Context, to netip.AddrPort, version, msgType uint16, body []byte, forUID uint32, reply bool) (uint32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down[to.Port()] {
		return 0, errors.New("connection refused")
	}
	p.calls = append(p.calls, pushCall{to, version, msgType, forUID, reply, append([]byte(nil), body...)})
	return 0, nil
}

func (p *pushCaller) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

func (p *pushCaller) take() []pushCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.calls
	p.calls = nil
	return out
}

const configlessConf = `ClusterName=lc
SlurmctldParameters=foo,Enable_Configless
NodeName=n[1-2] NodeAddr=127.0.0.[1-2] CPUs=4 RealMemory=1000
PartitionName=cpu Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
`

// configlessController is a controller on cfgText over store (a new one
// when nil), whose LoginConf serves files from dir.
func configlessController(t *testing.T, cfgText string, store *state.Store, dir string, caller Caller) *Controller {
	t.Helper()
	cfg, err := conf.Parse(strings.NewReader(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	if store == nil {
		if store, err = state.Open(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
	}
	login := &LoginConf{ClusterName: "lc", Host: "fe", Port: 6817, SlurmdPort: 6900, SlurmUser: "root",
		AccountingPort: 6819, ConfDir: dir,
		NodeAddr: func(n conf.Node) (string, uint16) { return "", 7000 }}
	c, err := New(context.Background(), Options{Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(),
		ClusterName: "lc", ServerHost: "fe", ServerAddr: "127.0.0.1", Port: 6817, SlurmUser: "root", SlurmUID: 0,
		Caller: caller, Login: login})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func configReq(v uint16, uid uint32, flags uint32, port uint16, peer, local string) *Request {
	var w codec.Writer
	(&codec.ConfigRequest{Flags: flags, Port: port}).Encode(&w, v)
	return &Request{Version: v, MsgType: codec.REQUEST_CONFIG, UID: uid, Body: w.B, Origin: netip.MustParseAddr(peer).As4(),
		Peer: netip.MustParseAddr(peer), Local: netip.MustParseAddr(local)}
}

// askConfig sends req the way edge does (Fast hands it to Slow).
func askConfig(t *testing.T, c *Controller, req *Request) Reply {
	t.Helper()
	if r, ok := c.Fast(req); ok {
		return r
	}
	return c.Slow(req)
}

func decodeConfig(t *testing.T, rep Reply, v uint16) codec.ConfigResponse {
	t.Helper()
	if rep.MsgType != codec.RESPONSE_CONFIG {
		t.Fatalf("reply %s %x, want RESPONSE_CONFIG", codec.MsgTypeName(rep.MsgType), rep.Body)
	}
	var m codec.ConfigResponse
	r := codec.NewReader(rep.Body)
	if err := m.Decode(&r, v); err != nil {
		t.Fatal(err)
	}
	return m
}

func names(files []codec.ConfigFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

func fileOf(m codec.ConfigResponse, name string) codec.ConfigFile {
	for _, f := range m.Files {
		if f.Name == name {
			return f
		}
	}
	return codec.ConfigFile{Name: "(none)"}
}

func rcOfReply(t *testing.T, rep Reply) uint32 {
	t.Helper()
	if rep.MsgType != codec.RESPONSE_SLURM_RC || len(rep.Body) != 4 {
		t.Fatalf("reply %s %x, want RESPONSE_SLURM_RC", codec.MsgTypeName(rep.MsgType), rep.Body)
	}
	return binary.BigEndian.Uint32(rep.Body)
}

// Without enable_configless every REQUEST_CONFIG gets
// ESLURM_CONFIGLESS_DISABLED, slurmd's too, as from slurmctld.
func TestConfigRequestDisabled(t *testing.T) {
	c := configlessController(t, strings.Replace(configlessConf, "Enable_Configless", "x", 1), nil, "", &pushCaller{})
	for _, v := range codec.Versions {
		for _, flags := range []uint32{codec.ConfigRequestSlurmConf, codec.ConfigRequestSlurmd, codec.ConfigRequestSackd} {
			if rc := rcOfReply(t, askConfig(t, c, configReq(v, 0, flags, 0, "10.0.0.5", "10.0.0.1"))); rc != codec.ESLURM_CONFIGLESS_DISABLED {
				t.Errorf("%s flags %d: rc %d", codec.VersionName(v), flags, rc)
			}
		}
	}
	if got := c.sackdAddrs(); len(got) != 0 {
		t.Errorf("sackds remembered while disabled: %v", got)
	}
}

// Each release gets its slurmctld's file list, slurm.conf the login
// nodes' (naming the address the client reached the server at), the
// operator's files beside the config when they are regular files, the
// others exists=false.
func TestConfigRequestFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cli_filter.lua"), []byte("function slurm_cli_pre_submit(o, i) return slurm.SUCCESS end\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "topology.conf"), nil, 0o644) // empty: exists, as slurmctld sends it
	os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte("never served: ours is generated\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "cgroup.conf"), []byte("CgroupPlugin=disabled\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "plugstack.conf"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := configlessController(t, configlessConf, nil, dir, &pushCaller{})
	want := map[uint16][]string{
		codec.V22_05: {"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf"},
		codec.V23_02: {"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf"},
		codec.V23_11: {"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf", "oci.conf", "scrun.lua"},
		codec.V24_11: {"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf", "oci.conf", "scrun.lua"},
		codec.V25_05: {"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf", "oci.conf", "scrun.lua"},
		codec.V26_05: {"cli_filter.lua", "oci.conf", "plugstack.conf", "scrun.lua", "slurm.conf", "topology.conf", "topology.yaml"},
	}
	for v, names0 := range want {
		m := decodeConfig(t, askConfig(t, c, configReq(v, 1000, codec.ConfigRequestSlurmConf, 0, "10.0.0.5", "10.0.0.1")), v)
		if got := names(m.Files); !reflect.DeepEqual(got, names0) {
			t.Errorf("%s: files %v, want %v", codec.VersionName(v), got, names0)
		}
		if m.SlurmdSpoolDir != "" {
			t.Errorf("%s: a client got SlurmdSpoolDir %q", codec.VersionName(v), m.SlurmdSpoolDir)
		}
		sc := fileOf(m, "slurm.conf")
		for _, line := range []string{"\nSlurmctldHost=fe(10.0.0.1)\n", "\nSlurmctldPort=6817\n", "\nSlurmdPort=6900\n",
			"\nAccountingStorageType=accounting_storage/slurmdbd\n", "\nAccountingStorageHost=10.0.0.1\n", "\nAccountingStoragePort=6819\n",
			"\nNodeName=n1 NodeAddr=10.0.0.1 Port=7000 ", "\nPartitionName=cpu Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP\n"} {
			if !sc.Exists || !strings.Contains(sc.Content, line) {
				t.Errorf("%s: served slurm.conf lacks %q:\n%s", codec.VersionName(v), line, sc.Content)
			}
		}
		if f := fileOf(m, "cli_filter.lua"); !f.Exists || !strings.HasPrefix(f.Content, "function slurm_cli_pre_submit") {
			t.Errorf("%s: cli_filter.lua %+v", codec.VersionName(v), f)
		}
		if f := fileOf(m, "topology.conf"); !f.Exists || f.Content != "" {
			t.Errorf("%s: empty topology.conf %+v", codec.VersionName(v), f)
		}
		if f := fileOf(m, "plugstack.conf"); f.Exists {
			t.Errorf("%s: a FIFO was served as plugstack.conf", codec.VersionName(v))
		}
	}
	// slurmd's list and spool directory, for root.
	m := decodeConfig(t, askConfig(t, c, configReq(codec.V24_11, 0, codec.ConfigRequestSlurmd, 0, "10.0.0.5", "10.0.0.1")), codec.V24_11)
	if got := names(m.Files); !reflect.DeepEqual(got, slurmdFiles2405) || m.SlurmdSpoolDir != "/var/spool/slurmd" {
		t.Errorf("slurmd: files %v spool %q", got, m.SlurmdSpoolDir)
	}
	if f := fileOf(m, "cgroup.conf"); !f.Exists || f.Content != "CgroupPlugin=disabled\n" {
		t.Errorf("slurmd's cgroup.conf %+v", f)
	}
	m = decodeConfig(t, askConfig(t, c, configReq(codec.V22_05, 0, codec.ConfigRequestSlurmd, 0, "10.0.0.5", "10.0.0.1")), codec.V22_05)
	if got := names(m.Files); !reflect.DeepEqual(got, slurmdFiles2205) {
		t.Errorf("22.05 slurmd: files %v", got)
	}
	// Anyone else asking for slurmd's: ESLURM_USER_ID_MISSING.
	for _, flags := range []uint32{codec.ConfigRequestSlurmd, codec.ConfigRequestSlurmd | codec.ConfigRequestSackd} {
		if rc := rcOfReply(t, askConfig(t, c, configReq(codec.V26_05, 1000, flags, 0, "10.0.0.5", "10.0.0.1"))); rc != codec.ESLURM_USER_ID_MISSING {
			t.Errorf("uid 1000 flags %d: rc %d", flags, rc)
		}
	}
	// A truncated body is refused, not served.
	req := configReq(codec.V24_11, 0, 0, 0, "10.0.0.5", "10.0.0.1")
	req.Body = req.Body[:2]
	if rc := rcOfReply(t, askConfig(t, c, req)); rc != codec.ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("truncated request: rc %d", rc)
	}
}

// A sackd is remembered (by its host, at the address it came from and the
// port it listens on) and gets the clients' files pushed, signed for
// SlurmUser, at its protocol version; one that cannot be reached is
// forgotten; the list outlives a restart, and a restart with a changed
// cluster pushes the new slurm.conf.
func TestConfiglessPush(t *testing.T) {
	storeDir := t.TempDir()
	store, err := state.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	pc := &pushCaller{down: map[uint16]bool{}}
	c := configlessController(t, configlessConf, store, "", pc)
	c.Start(context.Background())
	// 24.11: the served SlurmdPort; 26.05: the port sent, SlurmdPort for 0.
	for _, r := range []*Request{
		configReq(codec.V24_11, 0, codec.ConfigRequestSackd, 0, "10.0.0.5", "10.0.0.1"),
		configReq(codec.V26_05, 0, codec.ConfigRequestSackd, 7777, "10.0.0.6", "10.0.0.1"),
		configReq(codec.V26_05, 0, codec.ConfigRequestSackd, 0, "10.0.0.7", "10.0.0.1"),
		configReq(codec.V26_05, 1000, codec.ConfigRequestSlurmConf, 8888, "10.0.0.8", "10.0.0.1"), // a client: not remembered
	} {
		decodeConfig(t, askConfig(t, c, r), r.Version)
	}
	want := []netip.AddrPort{netip.MustParseAddrPort("10.0.0.5:6900"), netip.MustParseAddrPort("10.0.0.6:7777"), netip.MustParseAddrPort("10.0.0.7:6900")}
	if got := c.sackdAddrs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("sackds %v, want %v", got, want)
	}
	if n := c.PushConfig(context.Background()); n != 3 {
		t.Errorf("PushConfig reached %d", n)
	}
	calls := pc.take()
	if len(calls) != 3 {
		t.Fatalf("%d pushes", len(calls))
	}
	for _, call := range calls {
		wantV := codec.V26_05
		if call.to.Addr() == netip.MustParseAddr("10.0.0.5") {
			wantV = codec.V24_11
		}
		if call.msgType != codec.REQUEST_RECONFIGURE_SACKD || call.version != wantV || call.forUID != 0 || call.reply {
			t.Errorf("push to %v: type %d version %#x for uid %d reply %v", call.to, call.msgType, call.version, call.forUID, call.reply)
		}
		m := decodeConfig(t, Reply{MsgType: codec.RESPONSE_CONFIG, Body: call.body}, call.version)
		if !reflect.DeepEqual(names(m.Files), configFileNames(call.version, false)) || !strings.Contains(fileOf(m, "slurm.conf").Content, "SlurmctldHost=fe(10.0.0.1)\n") {
			t.Errorf("push to %v: files %v\n%s", call.to, names(m.Files), fileOf(m, "slurm.conf").Content)
		}
	}
	// Unreachable: forgotten.
	pc.down[7777] = true
	if n := c.PushConfig(context.Background()); n != 2 {
		t.Errorf("PushConfig with one sackd down reached %d", n)
	}
	pc.take()
	want = []netip.AddrPort{want[0], want[2]}
	if got := c.sackdAddrs(); !reflect.DeepEqual(got, want) {
		t.Errorf("after a failed push: sackds %v, want %v", got, want)
	}

	// A restart on the same config: the list is kept, nothing pushed.
	c2 := configlessController(t, configlessConf, store, "", pc)
	c2.Start(context.Background())
	if got := c2.sackdAddrs(); !reflect.DeepEqual(got, want) {
		t.Errorf("after a restart: sackds %v, want %v", got, want)
	}
	if calls := pc.take(); len(calls) != 0 {
		t.Errorf("a restart with the same config pushed %d times", len(calls))
	}
	// A restart with another partition: pushed, with it.
	c3 := configlessController(t, configlessConf+"PartitionName=more Nodes=n1 State=UP\n", store, "", pc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c3.Start(ctx)
	for i := 0; i < 1000 && pc.count() < 2; i++ {
		time.Sleep(10 * time.Millisecond) // the push runs in the background
	}
	calls = pc.take()
	if len(calls) != 2 {
		t.Fatalf("a restart with a changed config pushed %d times", len(calls))
	}
	for _, call := range calls {
		m := decodeConfig(t, Reply{MsgType: codec.RESPONSE_CONFIG, Body: call.body}, call.version)
		if !strings.Contains(fileOf(m, "slurm.conf").Content, "\nPartitionName=more Nodes=n1 MaxTime=INFINITE State=UP\n") {
			t.Errorf("push to %v after the change:\n%s", call.to, fileOf(m, "slurm.conf").Content)
		}
	}
	// A restart with a new operator file: pushed too.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugstack.conf"), []byte("# none\n"), 0o644)
	c4 := configlessController(t, configlessConf+"PartitionName=more Nodes=n1 State=UP\n", store, dir, pc)
	c4.Start(ctx)
	for i := 0; i < 1000 && pc.count() < 2; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	calls = pc.take()
	if len(calls) != 2 {
		t.Fatalf("a restart with a new plugstack.conf pushed %d times", len(calls))
	}
	for _, call := range calls {
		m := decodeConfig(t, Reply{MsgType: codec.RESPONSE_CONFIG, Body: call.body}, call.version)
		if f := fileOf(m, "plugstack.conf"); !f.Exists || f.Content != "# none\n" {
			t.Errorf("push to %v: plugstack.conf %+v", call.to, f)
		}
	}
}

// TestNodeConfDirOwnership: the node stand-ins' slurm.conf is written only
// into a directory of the server's that no one else may write, never
// through a link.
func TestNodeConfDirOwnership(t *testing.T) {
	cfg := fakeCluster(t, "slurm-24.11")
	base := t.TempDir()
	good := filepath.Join(base, "good")
	c := newTestController(t, cfg, state.NewRPCStats())
	c.opt.NodeConfDir = good
	c.writeNodeConf()
	if b, err := os.ReadFile(filepath.Join(good, "slurm.conf")); err != nil || !strings.Contains(string(b), "ClusterName=") {
		t.Fatalf("own directory: %v %q", err, b)
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(good, link)
	for _, dir := range []string{open, link} {
		c := newTestController(t, cfg, state.NewRPCStats())
		c.opt.NodeConfDir = dir
		c.writeNodeConf()
		if _, err := os.Lstat(filepath.Join(open, "slurm.conf")); err == nil {
			t.Errorf("%s: written into a directory others may write", dir)
		}
		if c.nodeConfText != "" {
			t.Errorf("%s: written through a link or into an open directory", dir)
		}
	}
}
