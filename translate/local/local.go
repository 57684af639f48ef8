// Package local is the embedded engine: the default backend, needing no
// Backend.AI. It advertises the nodes and partitions of the frontend's
// config; with no config, this host as one node in one default partition
// with its real CPU count and memory.
package local

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Engine is the embedded engine.
type Engine struct {
	cfg  *conf.Config
	boot int64
}

// New returns an engine over cfg. If cfg has no nodes, this host becomes
// one node and one default partition in cfg (so the rest of the frontend
// sees a normal config).
func New(cfg *conf.Config) *Engine {
	if len(cfg.Nodes) == 0 {
		AddThisHost(cfg)
	}
	return &Engine{cfg: cfg, boot: bootTime()}
}

// AddThisHost adds this machine as node and a default partition "debug"
// (Slurm's packaged example name) holding it.
func AddThisHost(cfg *conf.Config) {
	name, _ := os.Hostname()
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	if name == "" {
		name = "localhost"
	}
	cpus := runtime.NumCPU()
	memMB := memTotalMB()
	sockets, cores, threads := cpuTopology(cpus)
	cfg.Nodes = append(cfg.Nodes, conf.Node{
		Name: name, Addr: "127.0.0.1", Hostname: name, CPUs: uint16(cpus), Boards: 1,
		Sockets: sockets, CoresPerSocket: cores, ThreadsPerCore: threads,
		RealMemory: memMB, Weight: 1, State: "IDLE",
	})
	if len(cfg.Partitions) == 0 {
		cfg.Partitions = append(cfg.Partitions, conf.Partition{
			Name: "debug", Nodes: []string{name}, NodesExpr: name, Default: true, State: "UP",
			MaxTime: conf.Infinite, DefaultTime: 0xFFFFFFFE, MaxNodes: conf.Infinite,
			PriorityTier: 1, PriorityFactor: 1, OverSubscribe: "NO",
			AllowAccounts: "ALL", AllowGroups: "ALL", AllowQos: "ALL",
		})
	}
}

func (e *Engine) Name() string { return "local" }

// Topology maps partitions to resource groups and nodes to agents. A node
// belongs to the first partition naming it (Backend.AI agents belong to
// exactly one resource group; Slurm nodes may be in several, which the
// frontend's partition view keeps from the config).
func (e *Engine) Topology(ctx context.Context) (*translate.Topology, error) {
	t := &translate.Topology{}
	owner := map[string]string{}
	for _, p := range e.cfg.Partitions {
		g := translate.ResourceGroup{Name: p.Name, IsActive: p.State == "UP"}
		for _, n := range p.Nodes {
			if _, ok := owner[n]; !ok {
				owner[n] = p.Name
				g.AgentIDs = append(g.AgentIDs, n)
			}
		}
		t.Groups = append(t.Groups, g)
	}
	load := loadAvg()
	free := memFreeMB()
	for _, n := range e.cfg.Nodes {
		a := translate.Agent{
			ID: n.Name, Addr: n.Addr, ResourceGroup: owner[n.Name], Status: translate.AgentAlive,
			Schedulable: n.State != "DOWN" && n.State != "DRAIN" && n.State != "FUTURE",
			Arch:        runtime.GOARCH, Sockets: n.Sockets, CoresPerSocket: n.CoresPerSocket,
			ThreadsPerCore: n.ThreadsPerCore, Boards: n.Boards, BootTime: e.boot,
			Capacity: translate.Slots{CPU: float64(n.CPUs), Mem: n.RealMemory << 20, GPUs: gresGPUs(n.Gres)},
			OS:       osName(), CPULoad: load, FreeMem: free << 20,
		}
		if a.Arch == "amd64" {
			a.Arch = "x86_64"
		}
		if n.State == "DOWN" {
			a.Status = translate.AgentLost
		}
		t.Agents = append(t.Agents, a)
	}
	return t, nil
}

func gresGPUs(gres string) float64 {
	for _, g := range strings.Split(gres, ",") {
		parts := strings.Split(g, ":")
		if len(parts) >= 2 && parts[0] == "gpu" {
			if n, err := strconv.ParseFloat(parts[len(parts)-1], 64); err == nil {
				return n
			}
		}
	}
	return 0
}

func memTotalMB() uint64 { return meminfo("MemTotal:") }
func memFreeMB() uint64  { return meminfo("MemAvailable:") }

func meminfo(key string) uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == key {
			kb, _ := strconv.ParseUint(fs[1], 10, 64)
			return kb / 1024
		}
	}
	return 1
}

// cpuTopology reads sockets/cores/threads from /proc/cpuinfo, falling
// back to one socket of single-thread cores.
func cpuTopology(cpus int) (sockets, cores, threads uint16) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 1, uint16(cpus), 1
	}
	phys := map[string]bool{}
	coresPer, siblings := 0, 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "physical id":
			phys[v] = true
		case "cpu cores":
			coresPer, _ = strconv.Atoi(v)
		case "siblings":
			siblings, _ = strconv.Atoi(v)
		}
	}
	s := len(phys)
	if s == 0 || coresPer == 0 || siblings == 0 || s*siblings != cpus {
		return 1, uint16(cpus), 1
	}
	return uint16(s), uint16(coresPer), uint16(siblings / coresPer)
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func bootTime() int64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Now().Unix()
	}
	f := strings.Fields(string(b))
	up, _ := strconv.ParseFloat(f[0], 64)
	return time.Now().Unix() - int64(up)
}

func osName() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "Linux"
	}
	return "Linux " + strings.TrimSpace(string(b))
}
