package backendai

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// The engine: the controller's translate.Backend and translate.Executor
// over a Backend.AI manager. Every job is a batch session owned by the
// job's user (delegation with owner_access_key), in the partition's
// resource group and the job's project; the manager schedules it, and
// its events and listings are the truth the controller follows.
//
// What a job needs that Backend.AI has no field for travels in the
// session's startup command (startupScript): the job script itself, the
// working directory, the -i/-o/-e redirections, and a marker line with
// the script's exit status written to the container log, because 26.8's
// batch result is only SUCCESS or FAILURE. The job's paths are used as
// they are: the site mounts the file systems its login nodes share into
// its containers at the same paths (an agent mount, or vfolders mounted
// there), as a Slurm site mounts them on its compute nodes.

// EngineConfig configures an Engine.
type EngineConfig struct {
	Client *Client
	// Cluster names the frontend in session tags ("slurm:<cluster>:<job>"):
	// several frontends may share one manager.
	Cluster string
	Domain  string // the users' domain (default "default")
	// Project is the Backend.AI project (group) of jobs that name none
	// (-A) on partitions that name none (default "default").
	Project string
	// Image runs jobs that name none (--container) on partitions that
	// name none (FrontendImage=).
	Image string
	// Account maps a Unix user name to its Backend.AI username (default:
	// the same name).
	Account func(unixName string) string
	// AnyContainerUID lets a job run for a Backend.AI user whose
	// container uid is not the job's Unix uid (its files would be
	// written as another uid: refused by default).
	AnyContainerUID bool
	// Mounts are vfolders every job mounts, FOLDER[:DEST[:PERM]] with %u
	// for the user name (FrontendMounts=).
	Mounts []string
	Logger *log.Logger
}

// Engine is a translate.Backend and translate.Executor on Backend.AI.
type Engine struct {
	cfg       EngineConfig
	c         *Client
	tag       string // "slurm:<cluster>:"
	events    chan translate.SessionEvent
	ctx       context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup
	ends      chan string // session ids whose end is to be read
	closeOnce sync.Once
	lanes     [lanes]chan func() // per-session ordered event work (lane)

	mu       sync.Mutex
	dir      *translate.DirectoryInfo // Directory's, read at dirAt (e.mu)
	dirAt    time.Time
	users    map[string]userEntry             // username → account
	sessions map[string]*tracked              // ours, by session id
	ended    map[string]translate.SessionInfo // ends read, until purged
	foreign  map[string]string                // sessions not ours, listed live: owner's access key
	images   map[string]imageEntry            // image reference → its minimums (checkImageMemory)
	byEmail  map[string]userEntry             // owner email → account (foreign sessions)
	listed   time.Time                        // the last complete Sessions
	fs       fairShareCache                   // FairShares' answer (e.mu)
}

type userEntry struct {
	u   *User
	err error
	at  time.Time
}

// tracked is what the engine knows of one of its sessions.
type tracked struct {
	job    uint32
	owner  string // access key
	status translate.SessionStatus
	nodes  []string
	ending bool // its end is being read
	// limit is an interactive session's time limit, which the manager
	// does not enforce (batch_timeout is for batch sessions): the engine
	// destroys it once it has run that long (timer), and its end is
	// then TIMEOUT (timedOut).
	limit    time.Duration
	timer    *time.Timer
	timedOut bool
}

// exitMarker starts the line the startup command writes to the container
// log when the job script has ended ("<marker> <status>"); launchMarker,
// once the job's redirections are in place.
const (
	exitMarker   = "\x1eslurm-frontend exit"
	signalMarker = "\x1eslurm-frontend signal"
	launchMarker = "\x1eslurm-frontend launched"
)

// endedKept is how long an ended session's end stays cached (the
// controller has applied it long before; the manager keeps it for good).
const endedKept = time.Hour

// userTTL is how long an account lookup is trusted.
const userTTL = 2 * time.Minute

// NewEngine starts an engine (its event stream) on cfg.Client.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.Client == nil {
		return nil, errors.New("backendai: no client")
	}
	if cfg.Domain == "" {
		cfg.Domain = "default"
	}
	if cfg.Project == "" {
		cfg.Project = "default"
	}
	if cfg.Cluster == "" {
		cfg.Cluster = "cluster"
	}
	if cfg.Account == nil {
		cfg.Account = func(s string) string { return s }
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(discard{}, "", 0)
	}
	ctx, stop := context.WithCancel(context.Background())
	e := &Engine{cfg: cfg, c: cfg.Client, tag: "slurm:" + cfg.Cluster + ":", events: make(chan translate.SessionEvent, 4096),
		ctx: ctx, stop: stop, ends: make(chan string, 4096), users: map[string]userEntry{},
		sessions: map[string]*tracked{}, ended: map[string]translate.SessionInfo{}}
	e.wg.Add(2 + lanes)
	for i := range e.lanes {
		e.lanes[i] = make(chan func(), 1024)
		go e.runLane(e.lanes[i])
	}
	go e.stream()
	go e.readEnds()
	return e, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Close stops the event stream; sessions run on.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.stop()
		e.wg.Wait()
		close(e.events)
	})
	return nil
}

// CreateParallelism: the manager takes creates concurrently and queues
// sessions by priority and creation time itself.
func (e *Engine) CreateParallelism() int { return 8 }

// Name is the engine's name in logs and sdiag.
func (e *Engine) Name() string { return "backend.ai" }

// Events delivers session status changes, in order per session.
func (e *Engine) Events() <-chan translate.SessionEvent { return e.events }

// ---------------------------------------------------------------------
// Topology.

// Topology reads the manager's agents and active resource groups.
func (e *Engine) Topology(ctx context.Context) (*translate.Topology, error) {
	return Topology(ctx, e.c)
}

// SetSchedulable takes agents out of the manager's scheduling (Slurm's
// drain) or back: the agents' schedulable flag, which the manager keeps
// in its database and its scheduler honours (running sessions stay).
func (e *Engine) SetSchedulable(ctx context.Context, agents []string, schedulable bool) error {
	err := e.c.SetAgentsSchedulable(ctx, agents, schedulable)
	if err != nil && IsNotFound(err) {
		return fmt.Errorf("%w: %v", translate.ErrNoAgent, err)
	}
	return engineErr(err)
}

// Topology reads a manager's agents and active resource groups as the
// controller's topology.
func Topology(ctx context.Context, c *Client) (*translate.Topology, error) {
	agents, err := c.Agents(ctx, AgentFilter{})
	if err != nil {
		return nil, engineErr(err)
	}
	groups, err := c.ResourceGroups(ctx, true)
	if err != nil {
		return nil, engineErr(err)
	}
	topo := &translate.Topology{}
	members := map[string][]string{}
	for _, a := range agents {
		if a.Status == "TERMINATED" {
			continue // gone for good: not a node any more
		}
		cpu, _ := a.AvailableSlots.Float("cpu")
		mem, _ := a.AvailableSlots.Uint("mem")
		fam := accelOf(a.AvailableSlots)
		gpu, _ := a.AvailableSlots.Float(fam + ".device")
		ocpu, _ := a.OccupiedSlots.Float("cpu")
		omem, _ := a.OccupiedSlots.Uint("mem")
		ogpu, _ := a.OccupiedSlots.Float(fam + ".device")
		shares, _ := a.AvailableSlots.Float("cuda.shares")
		oshares, _ := a.OccupiedSlots.Float("cuda.shares")
		cores := uint16(max(1, min(cpu, 65535)))
		ta := translate.Agent{ID: a.ID, Addr: agentHost(a.Addr), ResourceGroup: a.ResourceGroup,
			Status: translate.AgentStatus(a.Status), Schedulable: a.Schedulable, Arch: a.Architecture,
			Capacity: translate.Slots{CPU: cpu, Mem: mem, GPUs: gpu, GPUShares: shares},
			Occupied: translate.Slots{CPU: ocpu, Mem: omem, GPUs: ogpu, GPUShares: oshares},
			Sockets:  1, CoresPerSocket: cores, ThreadsPerCore: 1, Boards: 1, Version: a.Version}
		if gpu > 0 {
			ta.GPUType = fam
		}
		if a.FirstContact != nil {
			ta.BootTime = a.FirstContact.Unix()
		}
		topo.Agents = append(topo.Agents, ta)
		members[a.ResourceGroup] = append(members[a.ResourceGroup], a.ID)
	}
	for _, g := range groups {
		topo.Groups = append(topo.Groups, translate.ResourceGroup{Name: g.Name, IsActive: g.IsActive, AgentIDs: members[g.Name]})
	}
	return topo, nil
}

// agentHost is the host of an agent's RPC address ("tcp://10.0.0.5:6001").
func agentHost(addr string) string {
	a := strings.TrimPrefix(strings.TrimPrefix(addr, "tcp://"), "http://")
	if h, _, ok := strings.Cut(a, ":"); ok && !strings.Contains(h, "[") {
		return h
	}
	return a
}

// ---------------------------------------------------------------------
// Accounts and images.

// account finds the Backend.AI user a Unix user's jobs run as, and checks
// that its containers run with the job's identity.
func (e *Engine) account(ctx context.Context, spec *translate.SessionSpec) (*User, error) {
	name := e.cfg.Account(spec.UserName)
	e.mu.Lock()
	ue, ok := e.users[name]
	e.mu.Unlock()
	if !ok || time.Since(ue.at) > userTTL {
		u, err := e.c.UserByUsername(ctx, name, e.cfg.Domain)
		switch {
		case err == nil && (!u.IsActive || u.MainAccessKey == ""):
			err = fmt.Errorf("%w: Backend.AI user %q is not active or has no keypair", translate.ErrNoAccount, name)
			u = nil
		case IsNotFound(err):
			err = fmt.Errorf("%w: no Backend.AI user %q in domain %s", translate.ErrNoAccount, name, e.cfg.Domain)
		case IsAmbiguous(err):
			err = fmt.Errorf("%w: Backend.AI username %q is ambiguous", translate.ErrNoAccount, name)
		case err != nil:
			return nil, engineErr(err) // not cached: the manager may be back soon
		}
		ue = userEntry{u: u, err: err, at: time.Now()}
		e.mu.Lock()
		e.users[name] = ue
		e.mu.Unlock()
	}
	if ue.err != nil {
		return nil, ue.err
	}
	u := ue.u
	if !e.cfg.AnyContainerUID && (u.ContainerUID == nil || uint32(*u.ContainerUID) != spec.UID) {
		have := "the agents' kernel uid"
		if u.ContainerUID != nil {
			have = "uid " + strconv.Itoa(*u.ContainerUID)
		}
		return nil, fmt.Errorf("%w: Backend.AI user %q runs containers as %s, not as uid %d: the job's files would belong to someone else (set the user's container_uid)",
			translate.ErrForbidden, name, have, spec.UID)
	}
	return u, nil
}

// CheckImage says whether an image (sbatch --container) exists for the
// manager. The manager is asked as the admin: the image registry is not
// per user, and no file of the user's is read.
func (e *Engine) CheckImage(image string, uid, gid uint32) error {
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	if _, err := e.c.Image(ctx, image, ""); err != nil {
		if IsInvalidImage(err) || IsNotFound(err) {
			return fmt.Errorf("%w: %s is not an image Backend.AI knows", translate.ErrInvalidImage, image)
		}
		return engineErr(err)
	}
	return nil
}

// ---------------------------------------------------------------------
// Sessions.

// CheckSpec refuses, at submission, what a Backend.AI session cannot do
// as Slurm would (honest compatibility: never run it with other
// semantics).
func (e *Engine) CheckSpec(spec *translate.SessionSpec) error {
	switch {
	case len(spec.ExcNodes) > 0:
		return fmt.Errorf("%w: Backend.AI cannot keep a session off given agents (--exclude)", translate.ErrNotSupported)
	case spec.Exclusive:
		return fmt.Errorf("%w: Backend.AI cannot give a session whole agents (--exclusive)", translate.ErrNotSupported)
	case spec.Signal != 0:
		return fmt.Errorf("%w: Backend.AI cannot signal a session before its time limit (--signal)", translate.ErrNotSupported)
	case len(spec.ReqNodes) > 0 && uint32(len(spec.ReqNodes)) != spec.Nodes:
		return fmt.Errorf("%w: Backend.AI places a session on exactly the agents it is given (-w must name -N agents)", translate.ErrNotSupported)
	case spec.GPUShare > 0 && spec.GPUsPerNode > 0:
		return fmt.Errorf("%w: a session takes whole GPUs or a share of one, not both", translate.ErrImpossible)
	}
	if _, err := directives(spec.Comment); err != nil {
		return err
	}
	if err := e.checkImageMemory(spec); err != nil {
		return err
	}
	if spec.UserName != "" {
		// A user Backend.AI does not know (or whose containers would
		// run as another uid) is refused now. While the manager cannot
		// be asked, the job is taken and the check made at hand-over.
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		defer cancel()
		if _, err := e.account(ctx, spec); err != nil && !errors.Is(err, translate.ErrUnavailable) {
			return err
		}
	}
	return nil
}

// jobDirectives are the "bai:" words of a job's --comment: what a job
// asks of Backend.AI that no sbatch option carries, in a form stock
// sbatch passes through unchanged (also as #SBATCH --comment=...).
//
//	bai:mount=FOLDER[:DEST[:ro|rw|wd]]  mount a vfolder (DEST default /home/work/FOLDER)
//	bai:shmem=SIZE                      /dev/shm size (resource_opts.shmem), e.g. 8g
type jobDirectives struct {
	mounts []Mount
	shmem  uint64
}

func directives(comment string) (*jobDirectives, error) {
	d := &jobDirectives{}
	for _, w := range strings.Fields(comment) {
		rest, ok := strings.CutPrefix(w, "bai:")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(rest, "=")
		switch k {
		case "mount":
			m, err := parseMount(v)
			if err != nil {
				return nil, err
			}
			d.mounts = append(d.mounts, m)
		case "shmem":
			n, err := parseSize(v)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("%w: --comment bai:shmem=%q: want a size such as 8g", translate.ErrImpossible, v)
			}
			d.shmem = n
		default:
			return nil, fmt.Errorf("%w: --comment %q: unknown Backend.AI directive (bai:mount=, bai:shmem=)", translate.ErrNotSupported, w)
		}
	}
	return d, nil
}

// parseMount reads FOLDER[:DEST[:PERM]].
func parseMount(v string) (Mount, error) {
	parts := strings.Split(v, ":")
	m := Mount{Name: parts[0]}
	if len(parts) > 1 {
		m.Dest = parts[1]
	}
	if len(parts) > 2 {
		m.Permission = parts[2]
	}
	switch {
	case m.Name == "" || len(parts) > 3:
		return m, fmt.Errorf("%w: mount %q: want FOLDER[:DEST[:ro|rw|wd]]", translate.ErrImpossible, v)
	case m.Permission != "" && m.Permission != PermReadOnly && m.Permission != PermReadWrite && m.Permission != PermRWDelete:
		return m, fmt.Errorf("%w: mount %q: permission %q is not ro, rw or wd", translate.ErrImpossible, v, m.Permission)
	}
	return m, nil
}

// parseSize reads 123, 64k, 512m, 8g, 1t (binary units).
func parseSize(v string) (uint64, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := uint64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k':
			mult, v = 1<<10, v[:n-1]
		case 'm':
			mult, v = 1<<20, v[:n-1]
		case 'g':
			mult, v = 1<<30, v[:n-1]
		case 't':
			mult, v = 1<<40, v[:n-1]
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > (1<<63)/mult {
		return 0, errors.New("bad size")
	}
	return n * mult, nil
}

// accelFamilies are the accelerator families Backend.AI has compute
// plugins for whose slot is FAMILY.device, cuda first (a node shows its
// accelerators as Gres=gpu:FAMILY:N, and --gres=gpu:FAMILY:N asks for
// them).
var accelFamilies = []string{"cuda", "rocm", "tpu", "ipu", "gaudi", "gaudi2", "gaudi3", "atom", "atom-plus",
	"atom-max", "warboy", "rngd", "hyperaccel-lpu", "tt-n300"}

// accelOf is the accelerator family of an agent's slots: the first of
// accelFamilies it has any of ("cuda" when none: no GPUs).
func accelOf(slots SlotMap) string {
	for _, f := range accelFamilies {
		if v, ok := slots.Float(f + ".device"); ok && v > 0 {
			return f
		}
	}
	return "cuda"
}

// gpuSlot is the resource slot of a GPU type: an accelerator family
// Backend.AI has a plugin for by its own name, anything else (no type)
// NVIDIA's cuda.device. (A model name such as a100 is refused before
// this: nodes show their GPUs by family, and the manager does not tell
// models apart.)
func gpuSlot(typ string) string {
	if t := strings.ToLower(typ); slices.Contains(accelFamilies, t) {
		return t + ".device"
	}
	return "cuda.device"
}

// CreateSession enqueues the job's batch session as its user.
func (e *Engine) CreateSession(ctx context.Context, spec translate.SessionSpec) (translate.SessionID, error) {
	if err := e.CheckSpec(&spec); err != nil {
		return "", err
	}
	u, err := e.account(ctx, &spec)
	if err != nil {
		return "", err
	}
	image := spec.Image
	if image == "" {
		image = e.cfg.Image
	}
	if image == "" {
		return "", fmt.Errorf("%w: no image: give the partition FrontendImage= or the job --container", translate.ErrInvalidImage)
	}
	project := spec.Project
	if project == "" {
		project = e.cfg.Project
	}
	cmd, err := startupScript(&spec)
	if err != nil {
		return "", err
	}
	dir, err := directives(spec.Comment)
	if err != nil {
		return "", err
	}
	req := CreateSessionRequest{
		Name: sessionName(spec), Image: image, Domain: e.cfg.Domain, Group: project, OwnerAccessKey: u.MainAccessKey,
		ResourceGroup: spec.ResourceGroup, StartupCommand: cmd, StartsAt: spec.StartAt,
		Tag: e.tag + strconv.FormatUint(uint64(spec.JobID), 10), Environ: environ(spec.Env),
		Resources: Resources{CPU: float64(max(1, spec.CPUsPerNode))},
		AgentList: spec.ReqNodes,
	}
	switch slot := gpuSlot(spec.GPUType); {
	case spec.GPUShare > 0:
		req.Resources.CUDAShares = float64(spec.GPUShare) / 100
	case spec.GPUsPerNode > 0 && slot == "cuda.device":
		req.Resources.CUDADevices = float64(spec.GPUsPerNode)
	case spec.GPUsPerNode > 0:
		req.Resources.Extra = map[string]string{slot: strconv.FormatUint(uint64(spec.GPUsPerNode), 10)}
	}
	req.ResourceOpts.Shmem = dir.shmem
	// The site's mounts for every job (%u: the user), then the job's.
	for _, m := range e.cfg.Mounts {
		mm, err := parseMount(strings.ReplaceAll(m, "%u", spec.UserName))
		if err != nil {
			return "", fmt.Errorf("FrontendMounts: %w", err)
		}
		req.Mounts = append(req.Mounts, mm)
	}
	req.Mounts = append(req.Mounts, dir.mounts...)
	if len(req.Mounts) > 0 {
		// By folder id, as the owner sees them (a name alone is looked
		// up among every user's folders by the 26.8.1 manager).
		// The project's id lets its folders be found by name too; the
		// user's own folders are found without it.
		pid := ""
		if p, err := e.c.ProjectByName(ctx, project, e.cfg.Domain); err == nil {
			pid = p.ID
		} else if IsRetryable(err) {
			return "", engineErr(err)
		}
		mounts, err := e.c.ResolveMounts(ctx, u.Email, pid, req.Mounts)
		if err != nil {
			return "", fmt.Errorf("%w: %v", translate.ErrImpossible, engineErr(err))
		}
		req.Mounts = mounts
	}
	if spec.Tier > 0 {
		// The partition's PriorityTier: Backend.AI preempts sessions of
		// a lower job_priority (of the same user, in a resource group
		// with preemption enabled) for a waiting higher one.
		tier := spec.Tier
		req.JobPriority = &tier
	}
	if spec.MemPerNodeMB > 0 && !spec.AllMemory {
		req.Resources.Mem = spec.MemPerNodeMB << 20
	}
	if spec.Nodes > 1 {
		req.ClusterMode, req.ClusterSize = MultiNode, int(spec.Nodes)
	}
	if spec.TimeLimit > 0 && !spec.Interactive {
		req.BatchTimeout = spec.TimeLimit
	}
	if spec.Interactive {
		// An allocation: an interactive session runs no command of its
		// own, so its kernel is free for the steps' commands.
		req.Interactive, req.StartupCommand, req.StartsAt = true, "", time.Time{}
	}
	cs, err := e.c.CreateBatchSession(ctx, req)
	if err != nil {
		return "", engineErr(err)
	}
	e.mu.Lock()
	if _, ok := e.sessions[cs.SessionID]; !ok {
		// No status yet: the stream's first event (PENDING) is passed on.
		e.sessions[cs.SessionID] = &tracked{job: spec.JobID, owner: u.MainAccessKey}
	}
	if spec.Interactive && spec.TimeLimit > 0 {
		e.sessions[cs.SessionID].limit = spec.TimeLimit
	}
	e.mu.Unlock()
	return translate.SessionID(cs.SessionID), nil
}

// sessionName is unique per owner among live sessions: one job, one name.
func sessionName(spec translate.SessionSpec) string {
	return "slurm-" + strconv.FormatUint(uint64(spec.JobID), 10)
}

// environ is the job's environment as Backend.AI's environ map. A name
// given twice keeps its last value, as the kernel's environment would.
func environ(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

// startupScript is the batch command: it writes the job script into the
// container, enters the job's directory as slurmstepd does (or /tmp, with
// slurmstepd's message), opens the job's input and outputs as the
// container's user, runs the script with its arguments and writes its
// exit status to the container log.
func startupScript(spec *translate.SessionSpec) (string, error) {
	var delim string
	for {
		var b [8]byte
		rand.Read(b[:])
		delim = "SLURM_FRONTEND_" + hex.EncodeToString(b[:])
		if !strings.Contains(spec.Script, delim) {
			break
		}
	}
	if strings.ContainsRune(spec.Script, 0) {
		return "", fmt.Errorf("%w: the job script holds a NUL byte", translate.ErrImpossible)
	}
	script := spec.Script
	if !strings.HasSuffix(script, "\n") {
		script += "\n"
	}
	in := spec.StdIn
	if in == "" {
		in = "/dev/null"
	}
	out, errp := spec.StdOut, spec.StdErr
	if out == "" {
		out = "/dev/null"
	}
	redirOut := ">"
	if spec.AppendOut {
		redirOut = ">>"
	}
	var b strings.Builder
	b.WriteString("if [ -n \"${SLURM_UMASK:-}\" ]; then umask \"$SLURM_UMASK\"; fi\n")
	b.WriteString("t=$(mktemp -d \"${TMPDIR:-/tmp}/slurm-frontend.XXXXXX\") || exit 1\n")
	b.WriteString("cat > \"$t/slurm_script\" <<'" + delim + "'\n" + script + delim + "\n")
	b.WriteString("chmod 700 \"$t/slurm_script\"\n")
	wd := spec.WorkDir
	if wd == "" {
		wd = "/tmp"
	}
	fmt.Fprintf(&b, "cd -- %s 2>/dev/null || { printf '%%s\\n' %s >&2; cd /tmp; }\n", shq(wd),
		shq("slurmstepd: error: couldn't chdir to `"+wd+"': No such file or directory: going to /tmp instead"))
	b.WriteString("w=\nfor p in /opt/backend.ai/bin/python python3; do if command -v \"$p\" >/dev/null 2>&1; then w=$(command -v \"$p\"); break; fi; done\n")
	b.WriteString("(\n")
	fmt.Fprintf(&b, "exec <%s\n", shq(in))
	fmt.Fprintf(&b, "exec %s%s\n", redirOut, shq(out))
	if errp == "" || errp == out {
		b.WriteString("exec 2>&1\n")
	} else {
		fmt.Fprintf(&b, "exec 2%s%s\n", redirOut, shq(errp))
	}
	fmt.Fprintf(&b, "printf '%%s\\n' %s >&3\n", shq(launchMarker))
	var args strings.Builder
	for _, a := range spec.Argv[min(1, len(spec.Argv)):] {
		args.WriteString(" " + shq(a))
	}
	// A shell cannot tell a script killed by signal N from one that
	// exited 128+N; a waiter can (the container's Python: Backend.AI's
	// own is in every container).
	fmt.Fprintf(&b, "if [ -n \"$w\" ]; then exec \"$w\" -I -c %s \"$t/slurm_script\"%s; fi\n", shq(waiterPy), args.String())
	b.WriteString("exec 3>&- \"$t/slurm_script\"" + args.String())
	b.WriteString("\n) 3>&1\nrc=$?\nrm -rf \"$t\"\n")
	fmt.Fprintf(&b, "printf '%%s %%d\\n' %s \"$rc\"\nexit \"$rc\"\n", shq(exitMarker))
	return b.String(), nil
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// waiterPy runs the job script (argv[1:]) and, when a signal ended it,
// writes the signal's marker to fd 3 (the container log) before exiting
// 128+N as a shell would.
const waiterPy = `import os, sys
p = os.fork()
if p == 0:
    os.close(3)
    try:
        os.execv(sys.argv[1], sys.argv[1:])
    except OSError as e:
        os.write(2, ("slurmstepd: error: execve(): %s: %s\n" % (sys.argv[1], e.strerror)).encode())
        os._exit(127)
while True:
    try:
        st = os.waitpid(p, 0)[1]
        break
    except InterruptedError:
        pass
if os.WIFSIGNALED(st):
    os.write(3, b"` + signalMarker + ` %d\n" % os.WTERMSIG(st))
    os._exit(128 + os.WTERMSIG(st))
os._exit(os.WEXITSTATUS(st))
`

var (
	exitRe   = regexp.MustCompile(regexp.QuoteMeta(exitMarker) + ` (-?\d+)\n`)
	signalRe = regexp.MustCompile(regexp.QuoteMeta(signalMarker) + ` (\d+)\n`)
)

// exitFromLog finds the job script's exit status and whether its
// redirections were made, in a container log.
func exitFromLog(logs string) (code int, found, launched bool) {
	launched = strings.Contains(logs, launchMarker+"\n")
	m := exitRe.FindAllStringSubmatch(logs, -1)
	if len(m) == 0 {
		return 0, false, launched
	}
	code, err := strconv.Atoi(m[len(m)-1][1])
	if sm := signalRe.FindAllStringSubmatch(logs, -1); err == nil && len(sm) > 0 {
		// The waiter saw the signal: the code is -N (a shell's 128+N is
		// also an exit status a script can give).
		if n, err := strconv.Atoi(sm[len(sm)-1][1]); err == nil && code == 128+n {
			code = -n
		}
	}
	return code, err == nil, launched
}

// DestroySession terminates (or, pending, cancels) a session.
func (e *Engine) DestroySession(ctx context.Context, id translate.SessionID, forced bool) error {
	e.mu.Lock()
	var owner string
	if t := e.sessions[string(id)]; t != nil {
		owner = t.owner
	} else if o, ok := e.foreign[string(id)]; ok {
		owner = o
	}
	e.mu.Unlock()
	_, err := e.c.DestroySession(ctx, string(id), DestroyOptions{Forced: forced, OwnerAccessKey: owner})
	switch {
	case err == nil:
		return nil
	case IsNotFound(err):
		return fmt.Errorf("%w: %s", translate.ErrNoSession, id)
	case errors.Is(err, ErrInvalidRequest):
		return fmt.Errorf("%w: %s: %v", translate.ErrNoSession, id, err)
	}
	return engineErr(err)
}

// Purge forgets an ended session once the controller has recorded its end.
func (e *Engine) Purge(_ context.Context, id translate.SessionID) error {
	e.mu.Lock()
	delete(e.ended, string(id))
	delete(e.sessions, string(id))
	e.mu.Unlock()
	return nil
}

// status maps a Backend.AI session status onto the controller's.
func status(s string) (translate.SessionStatus, bool) {
	switch s {
	case StatusPending, StatusDeprioritizing, StatusReserved, StatusRescheduling:
		return translate.SessionPending, true
	case StatusPreempted:
		// Chosen as a victim, still holding its agents until it is
		// terminated or rescheduled.
		return translate.SessionRunning, true
	case StatusScheduled:
		return translate.SessionScheduled, true
	case StatusPreparing, StatusPulling, StatusPrepared, StatusCreating:
		return translate.SessionPreparing, true
	case StatusRunning, StatusRestarting, StatusRunningDegraded:
		return translate.SessionRunning, true
	case StatusTerminating:
		return translate.SessionTerminating, true
	case StatusTerminated:
		return translate.SessionTerminated, true
	case StatusCancelled:
		return translate.SessionCancelled, true
	case StatusError:
		return translate.SessionError, true
	}
	return "", false
}

// jobOf reads the job id from one of our tags ("" when not ours).
func (e *Engine) jobOf(tag string) (uint32, bool) {
	rest, ok := strings.CutPrefix(tag, e.tag)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(rest, 10, 32)
	return uint32(n), err == nil && n > 0
}

// info is a listed session as the controller sees it; logs (terminal
// sessions only) give the exit status.
func (e *Engine) info(s *Session, job uint32, logs string, haveLogs bool) translate.SessionInfo {
	st, _ := status(s.Status)
	in := translate.SessionInfo{ID: translate.SessionID(s.ID), JobID: job, Status: st, Nodes: s.AgentIDs}
	if at, ok := s.StatusHistory[StatusRunning]; ok {
		in.Started = at
	} else if s.StartsAt != nil && st != translate.SessionPending {
		in.Started = *s.StartsAt
	}
	if !st.Terminal() {
		if s.Status == StatusRescheduling || (st == translate.SessionPending && s.StatusInfo == "RESCHEDULED") {
			in.Reason = translate.ReasonPreempted // preempted and queued again
		}
		return in
	}
	if s.TerminatedAt != nil {
		in.Ended = *s.TerminatedAt
	} else if s.StatusChanged != nil {
		in.Ended = *s.StatusChanged
	} else {
		in.Ended = time.Now()
	}
	in.Reason = translate.EndReason(s.StatusInfo)
	in.Usage = usageOf(s.Kernels)
	e.mu.Lock()
	if t := e.sessions[s.ID]; t != nil {
		if t.timer != nil {
			t.timer.Stop()
		}
		if t.timedOut {
			// Destroyed by the engine at its time limit.
			e.mu.Unlock()
			in.Reason = translate.ReasonTaskTimeout
			return in
		}
	}
	e.mu.Unlock()
	code, found, launched := exitFromLog(logs)
	stale := false
	for _, k := range s.Kernels {
		stale = stale || k.StatusInfo == "STALE_KERNEL" || k.StatusInfo == string(translate.ReasonAgentLost)
	}
	switch in.Reason {
	case translate.ReasonTaskTimeout, translate.ReasonUserRequested, translate.ReasonForceTerminated, translate.ReasonPreempted,
		translate.ReasonPendingTimeout, translate.ReasonOOMKilled, translate.ReasonFailedToStart, translate.ReasonAgentLost:
		// The manager's own word for the end.
	default:
		if st == translate.SessionCancelled {
			break // ended before it ran
		}
		if stale && !found {
			// Its agent was lost with it (sweep-stale-kernels).
			in.Reason = translate.ReasonAgentLost
			break
		}
		// The batch command ended (task-finished / task-failed), or
		// the session ended some other way the manager does not name
		// (detect-termination leaves status_info as it was): the exit
		// status in the log says how; without it, only SUCCESS is a
		// success.
		switch {
		case found && !launched:
			// The job's input or outputs could not be opened: as
			// slurmstepd's launch failure.
			in.Status, in.Reason, in.Signal = translate.SessionError, translate.ReasonFailedToStart, 53
		case found:
			in.Reason, in.ExitCode = translate.ReasonTaskFinished, code
			if code < 0 {
				in.ExitCode, in.Signal = 0, -code
			}
		case s.Result == ResultSuccess:
			in.Reason = translate.ReasonTaskFinished
		default:
			in.Reason, in.ExitUnknown = translate.ReasonTaskFailed, true
			if !haveLogs {
				e.cfg.Logger.Printf("backend.ai: session %s (job %d): no container log: its exit status is unknown", s.ID, job)
			}
		}
	}
	return in
}

// Sessions lists the frontend's sessions: every live one, those that
// ended since the last listing, and the ends read and not purged.
func (e *Engine) Sessions(ctx context.Context) ([]translate.SessionInfo, error) {
	// The session list cannot be filtered by tag (not a filter field of
	// 26.8.1's compute_session_list): by our names, then by tag here.
	filter := `name like "slurm-%"`
	// Live sessions: all of them, so that those made in the console
	// (or through the API) show up as jobs too (foreign below).
	var live []string
	for _, s := range AllSessionStatuses {
		if !IsTerminalStatus(s) {
			live = append(live, s)
		}
	}
	started := time.Now()
	act, err := e.c.ListSessions(ctx, SessionFilter{Statuses: live, PageSize: 500, Brief: true})
	if err != nil {
		return nil, engineErr(err)
	}
	e.mu.Lock()
	since := e.listed.Add(-5 * time.Minute)
	e.mu.Unlock()
	if since.Before(started.Add(-24 * time.Hour)) {
		since = started.Add(-24 * time.Hour) // the first listing: a day of ends
	}
	var dead []string
	for _, s := range AllSessionStatuses {
		if IsTerminalStatus(s) {
			dead = append(dead, s)
		}
	}
	ended, err := e.c.ListSessions(ctx, SessionFilter{Statuses: dead, Filter: filter, TerminatedAfter: since, PageSize: 500, WithKernels: true})
	if err != nil {
		return nil, engineErr(err)
	}
	out := make([]translate.SessionInfo, 0, len(act)+len(ended))
	seen := map[string]bool{}
	fresh := map[string]string{} // the live foreign sessions: owners' access keys
	for i := range act {
		s := &act[i]
		job, ok := e.jobOf(s.Tag)
		if !ok {
			if strings.HasPrefix(s.Name, "slurm-") && strings.HasPrefix(s.Tag, "slurm:") {
				continue // another frontend's (another cluster name)
			}
			fresh[s.ID] = s.AccessKey
			if f := e.foreignOf(ctx, s); f != nil {
				in := e.info(s, 0, "", false)
				in.Foreign = f
				out = append(out, in)
			}
			continue
		}
		seen[s.ID] = true
		in := e.info(s, job, "", false)
		e.track(s.ID, job, s.AccessKey, in.Status, in.Nodes)
		out = append(out, in)
	}
	// Ended sessions: their exit status is in their log, read once.
	var read []*Session
	e.mu.Lock()
	e.foreign = fresh
	for i := range ended {
		s := &ended[i]
		if _, ok := e.jobOf(s.Tag); !ok || seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		if in, ok := e.ended[s.ID]; ok {
			out = append(out, in)
			continue
		}
		read = append(read, s)
	}
	for id, in := range e.ended {
		if !seen[id] {
			out = append(out, in)
		}
		if started.Sub(in.Ended) > endedKept {
			// Long reported and listed: forgotten, so that a frontend
			// that runs for months does not keep every job it ran.
			delete(e.ended, id)
			delete(e.sessions, id)
		}
	}
	e.mu.Unlock()
	var mu sync.Mutex
	eachLimit(read, 16, func(s *Session) {
		job, _ := e.jobOf(s.Tag)
		in := e.endOf(ctx, s, job)
		mu.Lock()
		out = append(out, in)
		mu.Unlock()
	})
	e.mu.Lock()
	e.listed = started
	e.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].JobID < out[j].JobID })
	return out, nil
}

// Session reads one session (the controller asks for sessions it expected
// in a listing and did not find).
func (e *Engine) Session(ctx context.Context, id translate.SessionID) (*translate.SessionInfo, error) {
	e.mu.Lock()
	in, ok := e.ended[string(id)]
	e.mu.Unlock()
	if ok {
		return &in, nil
	}
	s, err := e.c.GetSession(ctx, string(id), true)
	if err != nil {
		if IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s", translate.ErrNoSession, id)
		}
		return nil, engineErr(err)
	}
	job, ok := e.jobOf(s.Tag)
	st, _ := status(s.Status)
	if !ok {
		if strings.HasPrefix(s.Tag, "slurm:") {
			return nil, fmt.Errorf("%w: %s is not a session of this frontend", translate.ErrNoSession, id)
		}
		// A session made in the console, shown as a job: no exit status
		// of ours in its log, its end is the manager's word.
		in := e.info(s, 0, "", false)
		if st.Terminal() {
			in = e.info(s, 0, "", true)
		}
		return &in, nil
	}
	if !st.Terminal() {
		in := e.info(s, job, "", false)
		return &in, nil
	}
	in = e.endOf(ctx, s, job)
	return &in, nil
}

// endOf reads an ended session's log and remembers its end.
func (e *Engine) endOf(ctx context.Context, s *Session, job uint32) translate.SessionInfo {
	if s.Status == StatusCancelled {
		// Never ran: no log, no exit status.
		in := e.info(s, job, "", true)
		e.mu.Lock()
		e.ended[s.ID] = in
		e.mu.Unlock()
		return in
	}
	logs, err := e.c.ContainerLogs(ctx, s.ID, LogsOptions{OwnerAccessKey: s.AccessKey})
	in := e.info(s, job, logs, err == nil)
	if err == nil || !IsRetryable(err) {
		e.mu.Lock()
		e.ended[s.ID] = in
		e.mu.Unlock()
	}
	return in
}

func (e *Engine) track(id string, job uint32, owner string, st translate.SessionStatus, nodes []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.sessions[id]
	if t == nil {
		t = &tracked{job: job, owner: owner}
		e.sessions[id] = t
	}
	t.status = st
	if len(nodes) > 0 {
		t.nodes = nodes
	}
}

// armLimit starts an interactive session's time limit, counted from when
// it began running.
func (e *Engine) armLimit(sid string, running time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.sessions[sid]
	if t == nil || t.limit <= 0 || t.timer != nil {
		return
	}
	t.timer = time.AfterFunc(max(0, t.limit-time.Since(running)), func() {
		e.mu.Lock()
		t.timedOut = true
		e.mu.Unlock()
		e.cfg.Logger.Printf("backend.ai: session %s (job %d): time limit %v reached: destroying it", sid, t.job, t.limit)
		ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
		defer cancel()
		if err := e.DestroySession(ctx, translate.SessionID(sid), false); err != nil {
			e.cfg.Logger.Printf("backend.ai: session %s: destroy at its time limit: %v", sid, err)
		}
	})
}

// eachLimit runs f over xs, n at a time.
func eachLimit[T any](xs []T, n int, f func(T)) {
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, x := range xs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(x)
		}()
	}
	wg.Wait()
}

// ---------------------------------------------------------------------
// Events.

// stream follows the manager's session events and turns those of our
// sessions into the controller's. An end is read (status_info, result,
// the log's exit status) before it is reported.
func (e *Engine) stream() {
	defer e.wg.Done()
	for e.ctx.Err() == nil {
		err := e.c.StreamSessionEvents(e.ctx, EventStreamOptions{Scope: ScopeSession,
			OnDisconnect: func(err error) {
				e.cfg.Logger.Printf("backend.ai: event stream: %v (reconnecting; the next resync catches up)", err)
			},
		}, e.onEvent)
		if e.ctx.Err() != nil {
			return
		}
		e.cfg.Logger.Printf("backend.ai: event stream ended: %v (again in 5 s)", err)
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

func (e *Engine) onEvent(ev Event) error {
	st, ok := status(ev.Status())
	if !ok || ev.SessionID == "" {
		return nil
	}
	e.mu.Lock()
	t := e.sessions[ev.SessionID]
	if t == nil {
		e.mu.Unlock()
		// Not one this run created: one of ours made before a restart
		// is known from the listings (the controller resyncs); one made
		// in the console is told to the controller, which lists the
		// sessions soon and shows it as a job.
		if strings.HasPrefix(ev.SessionName, "slurm-") {
			e.wg.Add(1) // in the stream's goroutine: Close waits for it
			go func() {
				defer e.wg.Done()
				e.adopt(ev.SessionID)
			}()
		} else {
			e.send(translate.SessionEvent{ID: translate.SessionID(ev.SessionID), Status: st, Time: time.Now(), Foreign: true})
		}
		return nil
	}
	if st == t.status && !st.Terminal() {
		e.mu.Unlock()
		return nil
	}
	t.status = st
	job := t.job
	nodes := t.nodes
	if st.Terminal() {
		if t.ending {
			e.mu.Unlock()
			return nil
		}
		t.ending = true
	}
	e.mu.Unlock()
	if ev.Name == EvSessionPreempted {
		return nil // its end or its rescheduling follows
	}
	// A session's events go through one lane, in order; sessions are
	// spread over the lanes, so that the lookups a start needs do not
	// hold up the stream (one at a time, they bounded the hand-over rate).
	sid, at := ev.SessionID, time.Now()
	e.lane(sid) <- func() {
		if st.Terminal() {
			select {
			case e.ends <- sid:
			case <-e.ctx.Done():
			}
			return
		}
		out := translate.SessionEvent{ID: translate.SessionID(sid), JobID: job, Status: st, Time: at, Nodes: nodes}
		if ev.Name == EvSessionRescheduling {
			out.Reason = translate.ReasonPreempted // queued again: the job is requeued
		}
		if st == translate.SessionRunning {
			// The agents are in the session's record, not in the event.
			ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
			s, err := e.c.GetSession(ctx, sid, false)
			cancel()
			if err == nil {
				out.Nodes = s.AgentIDs
				if t, ok := s.StatusHistory[StatusRunning]; ok {
					out.Time = t
				}
				e.track(sid, job, "", st, s.AgentIDs)
			}
			e.armLimit(sid, out.Time)
		}
		e.send(out)
	}
	return nil
}

// lanes is how many sessions' events are worked on at once.
const lanes = 16

// lane is the queue of session sid's events.
func (e *Engine) lane(sid string) chan<- func() {
	h := uint32(2166136261)
	for i := 0; i < len(sid); i++ {
		h = (h ^ uint32(sid[i])) * 16777619
	}
	return e.lanes[h%lanes]
}

func (e *Engine) runLane(q <-chan func()) {
	defer e.wg.Done()
	for {
		select {
		case f := <-q:
			f()
		case <-e.ctx.Done():
			return
		}
	}
}

// adopt starts following a session of ours this run did not create.
func (e *Engine) adopt(id string) {
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	s, err := e.c.GetSession(ctx, id, false)
	if err != nil {
		return
	}
	job, ok := e.jobOf(s.Tag)
	if !ok {
		return
	}
	st, _ := status(s.Status)
	e.mu.Lock()
	if e.sessions[id] != nil {
		e.mu.Unlock()
		return
	}
	e.sessions[id] = &tracked{job: job, owner: s.AccessKey, status: st, nodes: s.AgentIDs, ending: st.Terminal()}
	e.mu.Unlock()
	if st.Terminal() {
		select {
		case e.ends <- id:
		case <-e.ctx.Done():
		}
		return
	}
	in := e.info(s, job, "", false)
	e.send(in.Event())
}

// readEnds reports ended sessions once their end has been read.
func (e *Engine) readEnds() {
	defer e.wg.Done()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var id string
		select {
		case <-e.ctx.Done():
			return
		case id = <-e.ends:
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			for try := 0; e.ctx.Err() == nil; try++ {
				ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
				s, err := e.c.GetSession(ctx, id, true)
				var in translate.SessionInfo
				if err == nil {
					if job, ok := e.jobOf(s.Tag); ok {
						in = e.endOf(ctx, s, job)
					} else {
						cancel()
						return
					}
				}
				cancel()
				if err == nil {
					ev := in.Event()
					e.send(ev)
					return
				}
				if IsNotFound(err) || try >= 5 {
					// The listings (resync) settle it.
					e.cfg.Logger.Printf("backend.ai: session %s: cannot read its end: %v", id, err)
					e.mu.Lock()
					if t := e.sessions[id]; t != nil {
						t.ending = false
					}
					e.mu.Unlock()
					return
				}
				select {
				case <-e.ctx.Done():
					return
				case <-time.After(time.Duration(1<<try) * time.Second):
				}
			}
		}()
	}
}

func (e *Engine) send(ev translate.SessionEvent) {
	select {
	case e.events <- ev:
	case <-e.ctx.Done():
	}
}

// engineErr gives a manager error the controller's meaning.
func engineErr(err error) error {
	switch {
	case err == nil:
		return nil
	case IsInvalidImage(err):
		return fmt.Errorf("%w: %v", translate.ErrInvalidImage, err)
	case IsNotFound(err):
		return fmt.Errorf("%w: %v", translate.ErrNoSession, err)
	case IsQuotaExceeded(err):
		return fmt.Errorf("%w: %v", translate.ErrOverLimit, err)
	case IsForbidden(err), IsAuthFailed(err):
		return fmt.Errorf("%w: %v", translate.ErrForbidden, err)
	case IsInvalidParams(err), errors.Is(err, ErrInvalidRequest):
		return fmt.Errorf("%w: %v", translate.ErrImpossible, err)
	case IsRetryable(err):
		return fmt.Errorf("%w: %v", translate.ErrUnavailable, err)
	}
	var te *TransportError
	if errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", translate.ErrUnavailable, err)
	}
	return err
}

// foreignOf describes a live session the frontend did not create, for
// the job the controller shows for it; nil when it cannot be one (its
// owner is unknown to the manager).
func (e *Engine) foreignOf(ctx context.Context, s *Session) *translate.ForeignSession {
	e.mu.Lock()
	ue, ok := e.byEmail[s.UserEmail]
	e.mu.Unlock()
	if !ok || (ue.err != nil && time.Since(ue.at) > time.Minute) {
		u, err := e.c.UserByEmail(ctx, s.UserEmail)
		ue = userEntry{u: u, err: err, at: time.Now()}
		e.mu.Lock()
		if e.byEmail == nil {
			e.byEmail = map[string]userEntry{}
		}
		e.byEmail[s.UserEmail] = ue
		e.mu.Unlock()
	}
	if ue.err != nil || ue.u == nil || ue.u.Username == "" {
		return nil
	}
	f := &translate.ForeignSession{Name: s.Name, User: ue.u.Username, Project: s.GroupName,
		ResourceGroup: s.ScalingGroup, Image: s.Image}
	if s.CreatedAt != nil {
		f.Created = *s.CreatedAt
	}
	if v, ok := s.RequestedSlots.Float("cpu"); ok {
		f.CPUs = uint32(math.Ceil(v))
	}
	if v, ok := s.RequestedSlots.Uint("mem"); ok {
		f.MemMB = v >> 20
	}
	if fam := accelOf(s.RequestedSlots); fam != "cuda" {
		v, _ := s.RequestedSlots.Float(fam + ".device")
		f.GPUs = fmt.Sprintf("gres/gpu:%s:%d", fam, int(math.Ceil(v)))
	} else if v, ok := s.RequestedSlots.Float("cuda.device"); ok && v > 0 {
		f.GPUs = fmt.Sprintf("gres/gpu:%d", int(math.Ceil(v)))
	} else if v, ok := s.RequestedSlots.Float("cuda.shares"); ok && v > 0 {
		f.GPUs = fmt.Sprintf("gres/shard:%d", int(math.Ceil(v*100)))
	}
	return f
}

// usageOf sums what a session's kernels used, from their last_stat: the
// CPU time (the agent counts user and system time together: it is
// reported as user time) and the largest memory use of one kernel (the
// MaxRSS of Slurm's biggest task). nil when no kernel has stats.
func usageOf(ks []Kernel) *translate.Usage {
	var u translate.Usage
	known := false
	for i := range ks {
		st := ks[i].Stats()
		if !st.Known {
			continue
		}
		known = true
		u.UserCPU += time.Duration(st.CPUMsec * float64(time.Millisecond))
		u.MaxRSSKB = max(u.MaxRSSKB, int64(st.MaxMemBytes>>10))
	}
	if !known {
		return nil
	}
	return &u
}

type imageEntry struct {
	minMem uint64
	at     time.Time
}

// checkImageMemory refuses, at submission, a --mem below what the job's
// image needs (the manager would refuse the session at hand-over: "the
// resource request is smaller than the image minimum"). Without --mem
// the session gets the image's minimum. An image the manager cannot be
// asked about now is left to the hand-over.
func (e *Engine) checkImageMemory(spec *translate.SessionSpec) error {
	img := spec.Image
	if img == "" {
		img = e.cfg.Image
	}
	if img == "" || spec.MemPerNodeMB == 0 || spec.AllMemory {
		return nil
	}
	e.mu.Lock()
	ent, ok := e.images[img]
	e.mu.Unlock()
	if !ok || time.Since(ent.at) > 5*time.Minute {
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		im, err := e.c.Image(ctx, img, "")
		cancel()
		if err != nil {
			return nil // an unknown image is CheckImage's to refuse
		}
		ent = imageEntry{minMem: im.MinMemBytes(), at: time.Now()}
		e.mu.Lock()
		if e.images == nil {
			e.images = map[string]imageEntry{}
		}
		e.images[img] = ent
		e.mu.Unlock()
	}
	if ent.minMem > 0 && spec.MemPerNodeMB<<20 < ent.minMem {
		return fmt.Errorf("%w: the image %s needs at least %dM of memory per node (--mem=%dM asked)", translate.ErrImpossible, img, (ent.minMem+(1<<20)-1)>>20, spec.MemPerNodeMB)
	}
	return nil
}

// Differences are what a Backend.AI session runs otherwise than a Slurm
// job with the same request would (the migration audit's documented
// differences).
func (e *Engine) Differences(spec *translate.SessionSpec) []translate.Difference {
	var out []translate.Difference
	if spec.Image != "" {
		out = append(out, translate.Difference{Option: "--container",
			Text: "names the session's image (a Backend.AI image reference), not an OCI bundle path"})
	}
	if spec.GPUShare > 0 {
		out = append(out, translate.Difference{Option: "--gres",
			Text: "a GPU share is a fraction of one device (cuda.shares), not an MPS or shard count"})
	}
	return out
}
