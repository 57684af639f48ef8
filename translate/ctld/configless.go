package ctld

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Configless login nodes, as slurmctld serves them (read in
// src/slurmctld/proc_req.c _slurm_rpc_config_request, sackd_mgr.c and
// src/common/fetch_config.c at slurm-22-05-8-1, 24-11-5-1, 26-05-3-1):
//
//   - SlurmctldParameters containing enable_configless (any case, as a
//     substring, like xstrcasestr) turns it on; otherwise every
//     REQUEST_CONFIG gets ESLURM_CONFIGLESS_DISABLED.
//   - Flags with CONFIG_REQUEST_SLURMD (slurmd --conf-server) are for root
//     and SlurmUser only (ESLURM_USER_ID_MISSING otherwise) and get
//     slurmd's file list and SlurmdSpoolDir; any other request gets the
//     clients' list. Each list is the requesting release's.
//   - slurm.conf is the login nodes' (LoginConf.SlurmConf, the same text
//     `slurm-frontend client-conf` prints) with the cluster's current
//     nodes and partitions; the other files are the operator's, of the
//     same name beside the server's config file, read at start (Start)
//     and again by PushConfig, as slurmctld reads them at start and
//     reconfigure; a missing one is sent exists=false, and sackd then
//     removes its copy.
//   - A sackd (CONFIG_REQUEST_SACKD, 23.11+) is remembered by the host its
//     credential came from, with the address it connected from and the
//     port it listens on (25.05+: the one it sent, 0 meaning SlurmdPort;
//     before: SlurmdPort). Pushes (REQUEST_RECONFIGURE_SACKD, no reply)
//     go there, signed for SlurmUser; one that fails forgets the sackd.
//     The list is kept in the store, as slurmctld keeps it in its state.
//
// slurmctld pushes after `scontrol reconfigure` (PushConfig). The
// frontend also pushes when the slurm.conf it serves is no longer the one
// it last pushed: at start (the operator changed the config and
// restarted) and when the engine's topology changes the nodes or
// partitions (Backend.AI agents and resource groups come and go).
//
// Not served: the files named by Include lines of the served files (the
// served slurm.conf is generated, with none; plugstack.conf's includes
// are the login node's own), and slurmd's Prolog/Epilog scripts (the
// served slurm.conf names none).

// defaultSlurmdPort is Slurm's SLURMD_PORT, a sackd's port when the
// served slurm.conf says none.
const defaultSlurmdPort = 6818

// pushTimeout bounds one push (slurmctld's MessageTimeout default).
const pushTimeout = 10 * time.Second

// maxSackds bounds the remembered sackds (one per host).
const maxSackds = 1 << 14

// maxServedFile bounds one operator file sent to login nodes.
const maxServedFile = 16 << 20

// The files slurmctld lists, by release (see codec.ConfigRequest).
var (
	clientFiles2205 = []string{"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf"}
	clientFiles2311 = []string{"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf", "oci.conf", "scrun.lua"}
	clientFiles2511 = []string{"cli_filter.lua", "oci.conf", "plugstack.conf", "scrun.lua", "slurm.conf", "topology.conf", "topology.yaml"}
	slurmdFiles2205 = []string{"slurm.conf", "acct_gather.conf", "cgroup.conf", "cli_filter.lua", "ext_sensors.conf", "gres.conf",
		"helpers.conf", "job_container.conf", "knl_cray.conf", "mpi.conf", "oci.conf", "plugstack.conf", "topology.conf"}
	slurmdFiles2311 = []string{"slurm.conf", "acct_gather.conf", "cgroup.conf", "cli_filter.lua", "ext_sensors.conf", "gres.conf",
		"helpers.conf", "job_container.conf", "knl_cray.conf", "mpi.conf", "oci.conf", "plugstack.conf", "scrun.lua", "topology.conf"}
	slurmdFiles2405 = []string{"slurm.conf", "acct_gather.conf", "cgroup.conf", "cli_filter.lua", "gres.conf",
		"helpers.conf", "job_container.conf", "mpi.conf", "oci.conf", "plugstack.conf", "scrun.lua", "topology.conf"}
	slurmdFiles2511 = []string{"acct_gather.conf", "cgroup.conf", "cli_filter.lua", "gres.conf", "helpers.conf", "job_container.conf",
		"mpi.conf", "namespace.yaml", "oci.conf", "plugstack.conf", "scrun.lua", "slurm.conf", "topology.conf", "topology.yaml"}
)

// configFileNames lists the files a release's slurmctld sends.
func configFileNames(v uint16, slurmd bool) []string {
	switch {
	case slurmd && v >= codec.V25_11:
		return slurmdFiles2511
	case slurmd && v >= codec.V24_05:
		return slurmdFiles2405
	case slurmd && v >= codec.V23_11:
		return slurmdFiles2311
	case slurmd:
		return slurmdFiles2205
	case v >= codec.V25_11:
		return clientFiles2511
	case v >= codec.V23_11:
		return clientFiles2311
	}
	return clientFiles2205
}

// configless is the controller's part: the operator's files as last read,
// the sackds to push to, and what was last pushed.
type configless struct {
	mu     sync.Mutex
	files  map[string]codec.ConfigFile // nil until first read
	loaded bool                        // the sackd list was read from the store
	sackds map[string]*sackdNode       // by the host its credentials came from
	pushed string                      // hash of the slurm.conf last pushed (or current at the first start)
}

// sackdNode is one registered sackd (slurmctld's sackd_node_t).
type sackdNode struct {
	Host    string     `json:"host"`    // its credentials' origin
	Addr    netip.Addr `json:"addr"`    // where it connected from: pushes go there
	Port    uint16     `json:"port"`    // where it listens
	Version uint16     `json:"version"` // its protocol version
	Local   netip.Addr `json:"local"`   // the server address it reached
	Updated int64      `json:"updated"`
}

// configlessState is what the store keeps (meta "configless").
type configlessState struct {
	Sackds []sackdNode `json:"sackds"`
	Pushed string      `json:"pushed"`
}

// configlessOn reports whether SlurmctldParameters has
// enable_configless.
func (c *Controller) configlessOn() bool {
	return containsFold(c.opt.Conf.Get("SlurmctldParameters", ""), "enable_configless")
}

// login is the LoginConf in use.
func (c *Controller) login() *LoginConf {
	if c.opt.Login != nil {
		return c.opt.Login
	}
	return &LoginConf{ClusterName: c.opt.ClusterName, Host: c.opt.ServerHost, Addr: c.opt.ServerAddr,
		Port: c.opt.Port, SlurmUser: c.opt.SlurmUser}
}

// slurmdPort is what the served slurm.conf tells a sackd to listen on.
func (c *Controller) slurmdPort() uint16 {
	if p := c.login().SlurmdPort; p != 0 {
		return p
	}
	return defaultSlurmdPort
}

// configRequest handles REQUEST_CONFIG.
func (c *Controller) configRequest(req *Request) Reply {
	var m codec.ConfigRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		c.logf("config request from uid %d: %v", req.UID, err)
		return rcReply(codec.CodeOf(err))
	}
	if !c.configlessOn() {
		c.logf("config request from uid %d at %v: rejected, configless is disabled (SlurmctldParameters=enable_configless turns it on)", req.UID, req.Peer)
		return rcReply(codec.ESLURM_CONFIGLESS_DISABLED)
	}
	slurmd := m.Flags&codec.ConfigRequestSlurmd != 0
	if slurmd && req.UID != 0 && req.UID != c.opt.SlurmUID {
		c.logf("config request for slurmd configs by uid %d at %v: rejected (root and SlurmUser only)", req.UID, req.Peer)
		return rcReply(codec.ESLURM_USER_ID_MISSING)
	}
	var w codec.Writer
	c.configResponse(req.Version, slurmd, req.Local).Encode(&w, req.Version)
	if m.Flags&codec.ConfigRequestSackd != 0 && req.Version >= codec.V23_11 {
		port := c.slurmdPort()
		if req.Version >= codec.V25_05 && m.Port != 0 {
			port = m.Port
		}
		c.addSackd(req, port)
	}
	return Reply{MsgType: codec.RESPONSE_CONFIG, Body: w.B}
}

// configResponse is RESPONSE_CONFIG for a release's client (or slurmd)
// that reached the server at local.
func (c *Controller) configResponse(v uint16, slurmd bool, local netip.Addr) *codec.ConfigResponse {
	files := c.servedFiles(false)
	names := configFileNames(v, slurmd)
	resp := &codec.ConfigResponse{Files: make([]codec.ConfigFile, 0, len(names))}
	for _, name := range names {
		if name == "slurm.conf" {
			resp.Files = append(resp.Files, codec.ConfigFile{Exists: true, Name: name, Content: c.loginSlurmConf(local)})
			continue
		}
		f := files[name]
		f.Name = name
		resp.Files = append(resp.Files, f)
	}
	if slurmd {
		resp.SlurmdSpoolDir = c.opt.Conf.Get("SlurmdSpoolDir", "/var/spool/slurmd")
	}
	return resp
}

// loginSlurmConf is the served slurm.conf for a login node that reached
// the server at local (invalid: the server's own address).
func (c *Controller) loginSlurmConf(local netip.Addr) string {
	addr := c.opt.ServerAddr
	if local.IsValid() {
		addr = local.Unmap().String()
	}
	cl := c.cluster()
	return c.login().SlurmConf(c.opt.Conf, cl.nodes, cl.parts, addr)
}

// servedFiles returns the operator's files, reading them first if not
// yet read, or again if reload.
func (c *Controller) servedFiles(reload bool) map[string]codec.ConfigFile {
	cl := &c.cfgless
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.files != nil && !reload {
		return cl.files
	}
	files := map[string]codec.ConfigFile{}
	dir := c.login().ConfDir
	for _, list := range [][]string{slurmdFiles2205, slurmdFiles2311, slurmdFiles2405, slurmdFiles2511, clientFiles2511} {
		for _, name := range list {
			if _, done := files[name]; done || name == "slurm.conf" {
				continue
			}
			f, err := readServedFile(dir, name)
			if err != nil {
				c.logf("configless: %v (login nodes are told it does not exist)", err)
			}
			files[name] = f
		}
	}
	cl.files = files
	return files
}

// readServedFile reads dir/name as slurmctld's _load_conf2list: absent is
// exists=false, an empty file exists. Only a regular file is read: the
// server reads it as root, for anyone who may fetch the configs.
func readServedFile(dir, name string) (codec.ConfigFile, error) {
	f := codec.ConfigFile{Name: name}
	if dir == "" {
		return f, nil
	}
	path := filepath.Join(dir, name)
	rc, fi, err := conf.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	defer rc.Close()
	if fi.Size() > maxServedFile {
		return f, &fs.PathError{Op: "serve", Path: path, Err: errors.New("larger than 16 MiB")}
	}
	b, err := io.ReadAll(io.LimitReader(rc, maxServedFile))
	if err != nil {
		return f, err
	}
	f.Exists, f.Content = true, string(b)
	return f, nil
}

// loadSackds reads the remembered sackds and the last push from the
// store once (cl.mu held).
func (c *Controller) loadSackds() {
	cl := &c.cfgless
	if cl.loaded {
		return
	}
	cl.loaded = true
	cl.sackds = map[string]*sackdNode{}
	if c.opt.Store == nil {
		return
	}
	b, err := c.opt.Store.Meta("configless")
	if err != nil || len(b) == 0 {
		return
	}
	var st configlessState
	if err := json.Unmarshal(b, &st); err != nil {
		c.logf("configless: the remembered sackds are unreadable (%v): forgotten", err)
		return
	}
	for i := range st.Sackds {
		n := st.Sackds[i]
		if n.Host != "" && n.Addr.IsValid() && len(cl.sackds) < maxSackds {
			cl.sackds[n.Host] = &n
		}
	}
	cl.pushed = st.Pushed
}

// saveSackds writes the sackd list and the last push (cl.mu held).
func (c *Controller) saveSackds() {
	cl := &c.cfgless
	if c.opt.Store == nil {
		return
	}
	st := configlessState{Pushed: cl.pushed, Sackds: make([]sackdNode, 0, len(cl.sackds))}
	for _, n := range cl.sackds {
		st.Sackds = append(st.Sackds, *n)
	}
	sort.Slice(st.Sackds, func(i, j int) bool { return st.Sackds[i].Host < st.Sackds[j].Host })
	b, _ := json.Marshal(&st)
	if err := c.opt.Store.PutMeta("configless", b); err != nil {
		c.logf("configless: remembering the sackds: %v", err)
	}
}

// addSackd remembers the sackd that sent req (sackd_mgr_add_node).
func (c *Controller) addSackd(req *Request, port uint16) {
	host := req.Peer.String()
	if req.Origin != ([4]byte{}) {
		host = netip.AddrFrom4(req.Origin).String()
	}
	if !req.Peer.IsValid() {
		return
	}
	cl := &c.cfgless
	cl.mu.Lock()
	defer cl.mu.Unlock()
	c.loadSackds()
	n := cl.sackds[host]
	if n == nil {
		if len(cl.sackds) >= maxSackds {
			c.logf("configless: sackd on %s not remembered: %d are already", host, len(cl.sackds))
			return
		}
		n = &sackdNode{Host: host}
		cl.sackds[host] = n
		c.logf("configless: sackd on %s (%v port %d) registered", host, req.Peer, port)
	}
	same := n.Addr == req.Peer && n.Port == port && n.Version == req.Version && n.Local == req.Local
	n.Addr, n.Port, n.Version, n.Local, n.Updated = req.Peer, port, req.Version, req.Local, time.Now().Unix()
	if !same {
		c.saveSackds()
	}
}

// sackdAddrs lists where pushes go (the registered sackds).
func (c *Controller) sackdAddrs() []netip.AddrPort {
	cl := &c.cfgless
	cl.mu.Lock()
	defer cl.mu.Unlock()
	c.loadSackds()
	var out []netip.AddrPort
	for _, n := range cl.sackds {
		out = append(out, netip.AddrPortFrom(n.Addr, n.Port))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// PushConfig is slurmctld's configless part of `scontrol reconfigure`
// (configless_update, then sackd_mgr_push_reconfig): it reads the
// operator's files served beside slurm.conf again, then sends every
// registered sackd REQUEST_RECONFIGURE_SACKD with the clients' files as
// that sackd would fetch them; sackd rewrites its copies and re-executes
// itself. A sackd that cannot be reached is forgotten, as slurmctld does
// (it is remembered again when it next fetches). It does nothing when
// configless is off (SlurmctldParameters without enable_configless) or the
// controller has no Caller, and returns how many sackds were reached.
// The sackds are reached concurrently, each within pushTimeout (10 s) or
// ctx; the call blocks until all are done, so an RPC handler that should
// answer at once runs it in its own goroutine.
func (c *Controller) PushConfig(ctx context.Context) int {
	c.writeNodeConf()
	if !c.configlessOn() {
		return 0
	}
	c.servedFiles(true)
	now := c.loginConfHash()
	cl := &c.cfgless
	cl.mu.Lock()
	c.loadSackds()
	cl.pushed = now
	c.saveSackds()
	cl.mu.Unlock()
	return c.pushSackds(ctx)
}

// loginConfHash identifies what login nodes are served: the slurm.conf
// (with the server's own address: what differs between login nodes is
// not a change) and the operator's files as last read.
func (c *Controller) loginConfHash() string {
	h := sha256.New()
	h.Write([]byte(c.loginSlurmConf(netip.Addr{})))
	files := c.servedFiles(false)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := files[name]
		fmt.Fprintf(h, "\x00%s\x00%t\x00%d\x00%s", name, f.Exists, len(f.Content), f.Content)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// pushIfChanged pushes to the sackds (in the background) when the
// served slurm.conf is not the one last pushed, or current at the first
// start with configless. It decides at once: called before the listener
// starts, no fetch can come between.
func (c *Controller) pushIfChanged(ctx context.Context) {
	c.writeNodeConf()
	if !c.configlessOn() {
		return
	}
	now := c.loginConfHash() // before the lock: it reads the files under it
	cl := &c.cfgless
	cl.mu.Lock()
	c.loadSackds()
	changed := cl.pushed != "" && cl.pushed != now
	if cl.pushed != now {
		cl.pushed = now
		c.saveSackds()
	}
	n := len(cl.sackds)
	cl.mu.Unlock()
	if changed && n > 0 && c.opt.Caller != nil {
		c.logf("configless: the login nodes' slurm.conf changed: pushing it to %d sackds", n)
		go c.pushSackds(ctx)
	}
}

// pushSackds sends every registered sackd its files.
func (c *Controller) pushSackds(ctx context.Context) int {
	if c.opt.Caller == nil {
		return 0
	}
	cl := &c.cfgless
	cl.mu.Lock()
	c.loadSackds()
	nodes := make([]sackdNode, 0, len(cl.sackds))
	for _, n := range cl.sackds {
		nodes = append(nodes, *n)
	}
	cl.mu.Unlock()
	var reached atomic.Int32
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var w codec.Writer
			c.configResponse(n.Version, false, n.Local).Encode(&w, n.Version)
			pctx, cancel := context.WithTimeout(ctx, pushTimeout)
			defer cancel()
			to := netip.AddrPortFrom(n.Addr, n.Port)
			if _, err := c.opt.Caller.Call(pctx, to, n.Version, codec.REQUEST_RECONFIGURE_SACKD, w.B, c.opt.SlurmUID, false); err != nil {
				c.logf("configless: pushing to the sackd on %s (%v): %v: forgotten", n.Host, to, err)
				c.dropSackd(n)
				return
			}
			reached.Add(1)
		}()
	}
	wg.Wait()
	return int(reached.Load())
}

// dropSackd forgets n unless it registered again since.
func (c *Controller) dropSackd(n sackdNode) {
	cl := &c.cfgless
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cur := cl.sackds[n.Host]; cur != nil && *cur == n {
		delete(cl.sackds, n.Host)
		c.saveSackds()
	}
}
