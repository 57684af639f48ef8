package ctld

import (
	"fmt"
	"strings"

	"github.com/lablup/slurm-frontend/translate/conf"
)

// LoginConf is what the login nodes' slurm.conf is made of, besides the
// server's config and the cluster's nodes and partitions. One function
// (SlurmConf) writes it for both `slurm-frontend client-conf` and the
// controller's REQUEST_CONFIG (configless login nodes: sackd, and clients
// with SLURM_CONF_SERVER), so the two cannot differ.
type LoginConf struct {
	ClusterName string
	// Host and Addr are SlurmctldHost=Host(Addr). Addr "" stands for
	// the address the login node reached the server at (a server
	// listening on every address: what the asking client used is the
	// one address known to work for it); it must be set for client-conf.
	Host, Addr string
	Port       uint16
	// SlurmdPort is written when not 0: what a 24.11 sackd listens on
	// for the controller's pushes (and what scontrol show config says).
	SlurmdPort uint16
	SlurmUser  string
	// AccountingHost is where sacct finds the slurmdbd stand-in: the
	// operator's AccountingStorageHost, "" for Addr.
	AccountingHost string
	// AccountingPort is the stand-in's port; 0: the config's
	// AccountingStorage* settings as they are.
	AccountingPort uint16
	// NodeAddr is where login nodes reach node n (srun's launches go to
	// its stand-in): an address, "" for Addr, and a port, 0 for none
	// written. nil: the node's own NodeAddr.
	NodeAddr func(n conf.Node) (addr string, port uint16)
	// ConfDir is the directory of the server's config file, where the
	// other files slurmctld serves beside slurm.conf (cli_filter.lua,
	// plugstack.conf, ...) are looked for, as slurmctld looks for them
	// beside its slurm.conf; "" serves none.
	ConfDir string
}

// loginKeys are the settings written, with the value used when the
// server's config has none (FrontendDefaults where it has the key).
var loginKeys = [][2]string{
	{"AuthType", "auth/munge"}, {"CredType", "cred/munge"},
	{"SelectType", "select/cons_tres"}, {"SelectTypeParameters", FrontendDefaults["SelectTypeParameters"]},
	{"SchedulerType", FrontendDefaults["SchedulerType"]}, {"PriorityType", "priority/basic"},
	{"MpiDefault", FrontendDefaults["MpiDefault"]}, {"ProctrackType", FrontendDefaults["ProctrackType"]},
	{"TaskPlugin", FrontendDefaults["TaskPlugin"]},
	{"AccountingStorageType", "accounting_storage/none"},
	{"JobCompType", FrontendDefaults["JobCompType"]},
	{"JobAcctGatherType", FrontendDefaults["JobAcctGatherType"]}, {"ReturnToService", FrontendDefaults["ReturnToService"]},
}

// priorityKeys are the multifactor settings clients read, written when
// the server's config has them.
var priorityKeys = []string{"PriorityWeightAge", "PriorityWeightAssoc", "PriorityWeightFairshare", "PriorityWeightJobSize",
	"PriorityWeightPartition", "PriorityWeightQOS", "PriorityWeightTRES", "PriorityFlags", "PriorityMaxAge",
	"PriorityFavorSmall", "PriorityDecayHalfLife", "PriorityCalcPeriod"}

// SlurmConf writes the login nodes' slurm.conf: the controller's address,
// the settings clients read, accounting at the slurmdbd stand-in, and the
// cluster's nodes (at their stand-ins) and partitions. addr replaces an
// empty l.Addr (the address the asking login node used).
func (l *LoginConf) SlurmConf(cfg *conf.Config, nodes []conf.Node, parts []conf.Partition, addr string) string {
	if l.Addr != "" || addr == "" {
		addr = l.Addr
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# slurm.conf for login nodes using slurm-frontend ('slurm-frontend client-conf', or served to configless login nodes)\n")
	w("ClusterName=%s\n", l.ClusterName)
	w("SlurmctldHost=%s(%s)\n", l.Host, addr)
	w("SlurmctldPort=%d\n", l.Port)
	if l.SlurmdPort != 0 {
		w("SlurmdPort=%d\n", l.SlurmdPort)
	}
	w("SlurmUser=%s\n", l.SlurmUser)
	for _, kv := range loginKeys {
		if kv[0] != "AccountingStorageType" || l.AccountingPort == 0 {
			w("%s=%s\n", kv[0], cfg.Get(kv[0], kv[1]))
		}
		if kv[0] != "AccountingStorageType" {
			continue
		}
		if l.AccountingPort == 0 {
			w("AccountingStorageHost=%s\nAccountingStoragePort=%s\n", cfg.Get("AccountingStorageHost", ""), cfg.Get("AccountingStoragePort", ""))
			continue
		}
		// sacct's slurmdbd: the server's stand-in.
		acct := l.AccountingHost
		if acct == "" {
			acct = addr
		}
		w("AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=%s\nAccountingStoragePort=%d\n", acct, l.AccountingPort)
	}
	if g := cfg.Get("GresTypes", ""); g != "" {
		w("GresTypes=%s\n", g)
	}
	// sprio reads the priority weights from the login node's own
	// slurm.conf (and shows the factors whose weight is set).
	for _, k := range priorityKeys {
		if v := cfg.Get(k, ""); v != "" {
			w("%s=%s\n", k, v)
		}
	}
	// A slurmd fetching its configs (slurmd --conf-server) keeps its
	// state where the reply said, not in the default.
	if d := cfg.Get("SlurmdSpoolDir", ""); d != "" {
		w("SlurmdSpoolDir=%s\n", d)
	}
	// cli_filter runs in the clients themselves: the one site hook a
	// login node applies (with the cli_filter.lua served beside this).
	if p := cfg.Get("CliFilterPlugins", ""); p != "" {
		w("CliFilterPlugins=%s\n", p)
	}
	// srun reaches every node directly, at the node's stand-in: the
	// stand-ins are one server, so forwarding through a node (which
	// they answer too, for a narrower TreeWidth) only adds a hop.
	w("TreeWidth=%s\n", cfg.Get("TreeWidth", "65533"))
	for _, n := range nodes {
		nodeAddr, nodePort := n.Addr, uint16(0)
		if l.NodeAddr != nil {
			if nodeAddr, nodePort = l.NodeAddr(n); nodeAddr == "" {
				nodeAddr = addr
			}
		}
		w("NodeName=%s NodeAddr=%s", n.Name, nodeAddr)
		if nodePort != 0 {
			w(" Port=%d", nodePort)
		}
		w(" CPUs=%d Boards=%d SocketsPerBoard=%d CoresPerSocket=%d ThreadsPerCore=%d RealMemory=%d",
			n.CPUs, n.Boards, n.Sockets/max(n.Boards, 1), n.CoresPerSocket, n.ThreadsPerCore, n.RealMemory)
		if n.Gres != "" {
			w(" Gres=%s", n.Gres)
		}
		w(" State=UNKNOWN\n")
	}
	for _, p := range parts {
		w("PartitionName=%s Nodes=%s", p.Name, p.NodesExpr)
		if p.Default {
			w(" Default=YES")
		}
		if p.MaxTime == conf.Infinite {
			w(" MaxTime=INFINITE")
		} else {
			w(" MaxTime=%d", p.MaxTime)
		}
		w(" State=%s\n", p.State)
	}
	return b.String()
}
