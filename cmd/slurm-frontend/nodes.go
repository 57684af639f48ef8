package main

import (
	"crypto/sha256"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"github.com/lablup/slurm-frontend/edge"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/ctld"
	"github.com/lablup/slurm-frontend/translate/node"
)

// Where each node's stand-in listens, and what login nodes' slurm.conf
// says of it (srun reaches a node at its NodeAddr and Port). A node whose
// NodeAddr is an address of this host (a loopback address, or one of its
// interfaces) listens there, on its Port or SlurmdPort; any other node
// listens on the controller's host, on a port of its own (its Port, else
// SlurmdPort plus its index), and login nodes are told that address.

// slurmdPort is the nodes' default port: SlurmdPort=, else the
// controller's port plus one (what scontrol show config reports).
func slurmdPort(s *settings) uint16 {
	if v, err := strconv.ParseUint(s.cfg.Get("SlurmdPort", ""), 10, 16); err == nil && v > 0 {
		return uint16(v)
	}
	_, _, port := serverIdentity(s.listen, "")
	return port + 1
}

// nodeEndpoints lists every configured node's listening address.
func nodeEndpoints(s *settings) []edge.NodeEndpoint {
	base := slurmdPort(s)
	host, _, _ := net.SplitHostPort(s.listen)
	ctlAddr, err := netip.ParseAddr(host)
	if err != nil {
		ctlAddr = netip.IPv4Unspecified()
	}
	local := localAddrs()
	if s.backend == "backendai" {
		// Agents come and go: one listener stands for every node, and
		// a launch says which node it is for (steps there use one).
		return []edge.NodeEndpoint{{Name: "", Addr: netip.AddrPortFrom(ctlAddr, base)}}
	}
	var out []edge.NodeEndpoint
	for i, n := range s.cfg.Nodes {
		port := n.Port
		if a, err := netip.ParseAddr(n.Addr); err == nil && (a.IsLoopback() || local[a.Unmap()]) {
			if port == 0 {
				port = base
			}
			out = append(out, edge.NodeEndpoint{Name: n.Name, Addr: netip.AddrPortFrom(a.Unmap(), port)})
			continue
		}
		if port == 0 {
			port = base + uint16(i)
		}
		out = append(out, edge.NodeEndpoint{Name: n.Name, Addr: netip.AddrPortFrom(ctlAddr, port)})
	}
	return out
}

// advertised is the NodeAddr and Port a login node uses for node n; ""
// for the controller's address (a stand-in listening on every address is
// reached where the controller is).
func advertised(n conf.Node, eps []edge.NodeEndpoint) (string, uint16) {
	for _, ep := range eps {
		if ep.Name != n.Name && ep.Name != "" { // "": every node's
			continue
		}
		if ep.Addr.Addr().IsUnspecified() {
			return "", ep.Addr.Port()
		}
		return ep.Addr.Addr().String(), ep.Addr.Port()
	}
	return n.Addr, 0
}

// loginConf is what login nodes' slurm.conf says of this server, written
// by client-conf (serving false: the controller's address is --server's,
// else the listener's) and served by the controller to configless login
// nodes (serving: a listener on every address leaves the address to each
// connection, the one its client reached the server at).
func loginConf(s *settings, serving bool) *ctld.LoginConf {
	host, addr, port := serverIdentity(s.listen, s.server)
	if h, _, _ := net.SplitHostPort(s.listen); serving && s.server == "" && unspecifiedHost(h) {
		addr = ""
	}
	eps := nodeEndpoints(s)
	_, acctPort := accountingEndpoint(s)
	slurmUser, _ := currentUser()
	lc := &ctld.LoginConf{ClusterName: s.clusterName, Host: host, Addr: addr, Port: port, SlurmdPort: slurmdPort(s),
		SlurmUser: slurmUser, AccountingHost: s.acctHost, AccountingPort: acctPort,
		NodeAddr: func(n conf.Node) (string, uint16) { return advertised(n, eps) }}
	if p := s.cfg.Get("FrontendConfigPath", ""); p != "" {
		lc.ConfDir = filepath.Dir(p)
	}
	return lc
}

func unspecifiedHost(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }

func localAddrs() map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out[p.Addr().Unmap()] = true
		}
	}
	return out
}

// credKey is the secret job credentials are signed with: derived from
// the munge key, which users cannot read, so that every node stand-in
// (and a restarted server) checks what any made.
func credKey(path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	h := sha256.New()
	h.Write([]byte("slurm-frontend job credential key\x00"))
	h.Write(raw)
	return h.Sum(nil)
}

// nodeHandler adapts the node service to the edge.
type nodeHandler struct{ s *node.Service }

func (h nodeHandler) HandleNode(name string, req *edge.Request) edge.Reply {
	r := h.s.Handle(name, &node.Request{Version: req.Version, MsgType: req.MsgType, UID: req.UID, GID: req.GID, Peer: req.Peer, Body: req.Body})
	return edge.Reply{MsgType: r.MsgType, Body: r.Body}
}

// accountingEndpoint is where the slurmdbd stand-in listens and the port
// login nodes are told (AccountingStoragePort): the configured one, else
// the controller's port + 2 (slurmdbd's 6819 beside slurmctld's 6817),
// moved past any node stand-in's port it would meet.
func accountingEndpoint(s *settings) (listen string, port uint16) {
	host, _, _ := net.SplitHostPort(s.listen)
	if v, err := strconv.ParseUint(s.cfg.Get("AccountingStoragePort", ""), 10, 16); err == nil && v > 0 {
		return net.JoinHostPort(host, strconv.FormatUint(v, 10)), uint16(v)
	}
	_, _, ctl := serverIdentity(s.listen, "")
	port = ctl + 2
	taken := map[uint16]bool{ctl: true}
	for _, ep := range nodeEndpoints(s) {
		taken[ep.Addr.Port()] = true
	}
	for taken[port] {
		port++
	}
	return net.JoinHostPort(host, strconv.FormatUint(uint64(port), 10)), port
}

// setAccounting tells the clients (client-conf) and the controller's
// config replies that accounting is ours: slurmdbd at the server's
// address (the operator's AccountingStorageHost, if set, stays).
func setAccounting(s *settings) string {
	listen, port := accountingEndpoint(s)
	_, addr, _ := serverIdentity(s.listen, s.server)
	if s.cfg.Get("AccountingStorageType", "") == "" {
		// The stand-in serves sacct either way; a job gets a cluster
		// with accounting's terms (its default QOS, fair share in its
		// priority) when the operator's file asks for accounting.
		s.cfg.Set("FrontendImplicitAccounting", "yes")
	}
	s.cfg.Set("AccountingStorageType", "accounting_storage/slurmdbd")
	if s.cfg.Get("AccountingStorageHost", "") == "" {
		s.cfg.Set("AccountingStorageHost", addr)
	}
	s.cfg.Set("AccountingStoragePort", strconv.FormatUint(uint64(port), 10))
	return listen
}
