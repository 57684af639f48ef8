// Package local is the embedded engine: the default backend, needing no
// Backend.AI. It advertises the nodes and partitions of the frontend's
// config; with no config, this host as one node in one default partition
// with its real CPU count and memory.
//
// With a spool directory (WithSpoolDir) it also implements
// translate.Executor and runs batch jobs for real on this host; the
// configured nodes are slots of this one host.
//
// Placement (sched.go): sessions wait in a queue; the scheduler starts
// them in priority order, then FIFO, when Nodes nodes of the session's
// partition have its CPUs, memory and GPUs (Gres=gpu:N, counted; the job
// sees the indices it holds in CUDA_VISIBLE_DEVICES) free, honouring
// ReqNodes, ExcNodes and Exclusive. A session that does not fit yet holds
// the nodes it waits for (strict priority, no backfill); one that can
// never fit the configuration ends at once with ERROR "failed-to-start".
//
// Execution (shim.go): each session runs under a shim, the same binary
// re-executed as "slurm-frontend shim run DIR" in its own session and as
// the init of a new PID and mount namespace. The shim claims the session
// (once only), makes mounts private and mounts a fresh /proc, creates the
// output files as the job's user (fsuid/fsgid/groups on a throw-away
// thread: owner the user, mode 0644, truncated unless AppendOut; StdErr
// "" shares stdout's open file), writes the script to DIR/jobNNNNN/
// slurm_script (root:gid 0750 directory, uid 0700 file, as slurmd
// does; if the spool is not reachable by the user, a tmpfs over the first
// unreachable directory — one the user could not enter anyway — exposes
// just that directory inside the job's mount namespace), and starts it as
// the user's uid, gid and groups, setsid, in WorkDir (as slurmstepd: if
// the user cannot enter it, "couldn't chdir ... going to /tmp instead"),
// with exactly the session's environment plus what only the placement
// knows (for a Slurm job's environment, one with SLURM_JOB_ID, what
// slurmd adds: node list and count, SLURMD_NODENAME, HOSTNAME, CPUs on
// the node, topology address, TMPDIR=/tmp when unset, SLURM_TASK_PID; and
// the GPU variables when it holds GPUs), stdin from StdIn or /dev/null,
// and Argv[1:] as arguments. A script without "#!" fails
// as execve does under slurmstepd (exit code 8, "Exec format error" on
// stderr). The shim stays pid 1 of the namespace, to reap, to signal, and
// so that untrapped signals act on the script as they do on Slurm (a pid
// 1 would ignore them); the script is the lowest pid free after the
// shim's threads (a small number) and SLURM_TASK_PID, when the spec has
// it, says which: the job's first process is "shim exec", which puts its
// own pid there and execs the script in place.
//
// Limits: the shim enforces the time limit itself (it outlives the
// server): "*** JOB n ON node CANCELLED AT t DUE TO TIME LIMIT ***" on
// stderr, SIGCONT and SIGTERM to every process, SIGKILL after KillWait
// (default 30 s), reason "task-timeout"; --signal is sent Warn before the
// limit. Memory (MemPerNodeMB) and CPUs (CPUsPerNode, as a CFS quota) are
// enforced with cgroup v2 when the memory and cpu controllers are
// delegated to the server's cgroup, else with the cgroup v1 memory and cpu
// hierarchies; an OOM kill gives reason "oom-killed". When neither is
// usable the engine says so in its log at start and memory and CPU limits
// are NOT enforced (time limits still are). The CPU limit is a quota, not
// a cpuset: nproc in a job still shows every CPU of the host (configured
// nodes may have more CPUs than the host). The cgroup v1 path was tested
// on a hybrid host; the v2 path (memory.max, cpu.max, memory.events, and
// moving the server into a leaf cgroup when its own cgroup must delegate)
// could only be tested there up to the delegation check.
//
// Signals: DestroySession is scancel (stderr "*** JOB n ON node CANCELLED
// AT t ***", SIGCONT+SIGTERM to all, SIGKILL after KillWait; forced:
// SIGKILL at once); SignalSession reaches every process of the job or
// the batch shell only; --signal without B: goes to every process (Slurm
// sends it to job steps only, which the frontend does not have).
//
// Durability (exec.go): every session is a directory of write-once files
// in the spool (see the file list there). The job survives the server's
// death (the shim is in its own session, and it, not the server, records
// the exit status, atomically); a new engine on the same spool replays
// every session's state on Events, re-attaches running shims, starts
// placed sessions whose shim never claimed them (the claim file makes a
// second start impossible), and reports sessions that ended meanwhile
// with their exit status. If a shim dies without a status (host reboot),
// its PID namespace died with it, and the session ends in ERROR
// "agent-termination".
//
// Running jobs needs root (credentials, namespaces, cgroups).
package local

import (
	"bufio"
	"context"
	"io"
	"log"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Engine is the embedded engine.
type Engine struct {
	mu   sync.Mutex      // cfg and off (admin.go)
	cfg  *conf.Config    // replaced whole by Reconfigure
	off  map[string]bool // nodes out of scheduling (admin.go)
	boot int64
	x    *executor // nil without a spool directory
	xErr error     // why the executor could not start
}

// Option configures New.
type Option func(*options)

type options struct {
	spool     string
	log       *log.Logger
	shim      []string
	retention time.Duration
}

// WithSpoolDir enables running sessions, keeping their state in dir (the
// server passes its state directory + "/spool"). Without it the engine
// only advertises topology and the Executor methods return ErrNoSpool.
func WithSpoolDir(dir string) Option { return func(o *options) { o.spool = dir } }

// WithLogger sets where the engine logs (default: discarded).
func WithLogger(l *log.Logger) Option { return func(o *options) { o.log = l } }

// WithShimCommand sets the command that runs a session's shim; "run DIR"
// is appended. Default: this very binary, "/proc/self/exe shim".
func WithShimCommand(argv ...string) Option { return func(o *options) { o.shim = argv } }

// WithRetention sets how long ended sessions stay in the spool (and in
// Sessions) before they are purged; 0 keeps them until Purge. Default 7
// days.
func WithRetention(d time.Duration) Option { return func(o *options) { o.retention = d } }

// New returns an engine over cfg. If cfg has no nodes, this host becomes
// one node and one default partition in cfg (so the rest of the frontend
// sees a normal config). With WithSpoolDir it recovers the spool and
// starts scheduling; a failure there is logged and returned by Err and
// by every Executor method.
func New(cfg *conf.Config, opts ...Option) *Engine {
	if len(cfg.Nodes) == 0 {
		AddThisHost(cfg)
	}
	e := &Engine{cfg: cfg, boot: bootTime(), off: map[string]bool{}}
	o := &options{shim: []string{"/proc/self/exe", "shim"}, retention: 7 * 24 * time.Hour}
	for _, f := range opts {
		f(o)
	}
	if len(o.shim) == 0 {
		o.shim = []string{"/proc/self/exe", "shim"}
	}
	if o.log == nil {
		o.log = log.New(io.Discard, "", 0)
	}
	if o.spool != "" {
		e.off = loadUnschedulable(o.spool)
		e.x, e.xErr = newExecutor(cfg, o)
		if e.xErr != nil {
			o.log.Printf("embedded engine: cannot run sessions: %v", e.xErr)
		}
	}
	return e
}

// Err reports why the engine cannot run sessions (nil if it can, or if
// no spool directory was given).
func (e *Engine) Err() error { return e.xErr }

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
	e.mu.Lock()
	cfg, off := e.cfg, e.off
	e.mu.Unlock()
	t := &translate.Topology{}
	owner := map[string]string{}
	for _, p := range cfg.Partitions {
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
	var used map[string]translate.Slots
	if e.x != nil {
		used = e.x.occupied()
	}
	for _, n := range cfg.Nodes {
		a := translate.Agent{
			ID: n.Name, Addr: n.Addr, ResourceGroup: owner[n.Name], Status: translate.AgentAlive,
			Schedulable: n.State != "DOWN" && n.State != "DRAIN" && n.State != "FUTURE" && !off[n.Name],
			Arch:        runtime.GOARCH, Sockets: n.Sockets, CoresPerSocket: n.CoresPerSocket,
			ThreadsPerCore: n.ThreadsPerCore, Boards: n.Boards, BootTime: e.boot,
			Capacity: translate.Slots{CPU: float64(n.CPUs), Mem: n.RealMemory << 20, GPUs: gresGPUs(n.Gres)},
			OS:       osName(), CPULoad: load, FreeMem: free << 20, Occupied: used[n.Name],
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

// osName is what slurmd registers as the node's OS: uname's sysname,
// release and version ("Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC ...").
func osName() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "Linux"
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}
