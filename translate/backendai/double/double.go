// Package double is a test double of the Backend.AI manager 26.8.1 for
// the subset a Slurm bridge uses: HMAC (and JWT) authentication, the v1
// session REST API, the legacy GraphQL reads, resource groups, agents,
// the SSE session event stream, and a lifecycle engine with the sokovan
// scheduler's statuses, reasons, priorities and preemption. It was built
// from the manager's source at tag 26.8.1 (lablup/backend.ai); comments
// name the source files each behaviour comes from. Where the source and
// /work/shared/reference/backendai-api.md disagree, the source wins and
// a comment says "source differs from the reference".
//
// Two modes: ModeScale runs no processes (a batch session "runs" for
// Options.RunTime, or until destroyed); ModeRun runs each batch session's
// startup command for real, as the owner's container uid/gid, through
// the embedded engine of package translate/local, and gives every other
// session's main kernel a waiting "container" process in which the
// streaming execute (GET /stream/session/{name}/execute, stream.go) runs
// commands as the kernel runner would (kexec.go).
package double

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

// Mode selects what a running batch session is.
type Mode string

const (
	ModeScale Mode = "scale"
	ModeRun   Mode = "run"
)

// ManagerVersion is what GET / reports as "manager".
const ManagerVersion = "26.8.1"

// APIVersion is LATEST_API_VERSION of 26.8.1.
const APIVersion = "v9.20250722"

// Options configure New.
type Options struct {
	Mode   Mode   // default ModeScale
	Listen string // default "127.0.0.1:0" (loopback only)

	// Cycle is the scheduler's short interval (the manager uses 2 s);
	// every cycle advances each session by at most one scheduler stage.
	// Default 2 s.
	Cycle time.Duration
	// LongCycle is the interval at which pending sessions that failed to
	// be placed are retried without a trigger (the manager: 60 s).
	LongCycle time.Duration
	// MaxRetries is the default handler max_retry_count (5): after that
	// many failed scheduling passes a pending session is deprioritized.
	MaxRetries int

	// PullTime is how long an agent pulls an image it does not have
	// (kernels show PULLING meanwhile). CreateTime is how long a
	// container takes to start. Both default to 0 (next cycle).
	PullTime, CreateTime time.Duration

	// RunTime is how long a batch session runs in scale mode before its
	// task finishes (exit code ScaleExitCode). 0 = until destroyed.
	RunTime       time.Duration
	ScaleExitCode int

	// StaleKernelAfter is how long after an agent is marked LOST its
	// kernels are found stale and terminated (sweep-stale-kernels).
	// Default 60 s; negative = never.
	StaleKernelAfter time.Duration

	// HideAgents is the manager's hide_agents option.
	HideAgents bool

	// Run mode: WorkRoot holds per-kernel scratch directories (the
	// container's /home/work) and logs; SpoolDir is the embedded
	// engine's spool; ShimCommand runs the engine's shim ("run DIR" is
	// appended; default /proc/self/exe shim). KernelUID/KernelGID are
	// the agent's kernel-uid/kernel-gid used for users without a
	// container_uid (default: this process's uid/gid, as -1 means).
	// KillGrace is the SIGTERM→SIGKILL grace when a kernel is destroyed.
	WorkRoot    string
	SpoolDir    string
	ShimCommand []string
	KernelUID   int
	KernelGID   int
	KillGrace   time.Duration

	// SlotTypes adds or overrides known slot types ("count", "bytes",
	// "unique"). cpu and mem are always known; every slot an agent
	// advertises becomes known (as "count" unless its name has "mem").
	SlotTypes map[string]string

	// NoDefaults skips the default domain, project, resource group,
	// superadmin and image.
	NoDefaults bool

	Logger *log.Logger
}

// Domain, Project, User, KeyPair, ResourceGroup, Agent, Image and VFolder
// seed the double's database.
type Domain struct {
	Name              string
	Inactive          bool
	AllowedRegistries []string // nil = every registry
}

type Project struct {
	ID       string // UUID; generated when empty
	Name     string
	Domain   string // default "default"
	Inactive bool
}

type User struct {
	UUID     string // generated when empty
	Username string
	Email    string
	FullName string
	Domain   string // default "default"
	Role     string // superadmin | admin | user | monitor (default user)
	Projects []string
	// Container identity (users.container_uid / container_main_gid /
	// container_gids): what the kernel runs as. nil = the agent's
	// kernel-uid/kernel-gid.
	ContainerUID     *int
	ContainerMainGID *int
	ContainerGIDs    []int
	Inactive         bool
	SudoSession      bool
}

type KeyPair struct {
	AccessKey string // generated when empty
	SecretKey string // generated when empty
	UserEmail string
	IsAdmin   bool
	RateLimit int // 0 = 30000
	Inactive  bool
	// Main makes it the user's main_access_key (the first keypair of a
	// user is main anyway).
	Main bool
	// Keypair resource policy fields.
	MaxPriority            *int
	MaxContainersPerSessin int
	MaxPendingSessions     int
	BootstrapScript        string
}

// Preemption is scheduler_opts.preemption of a resource group.
type Preemption struct {
	Enabled     bool
	Mode        string        // terminate (default) | reschedule
	Order       string        // oldest (default) | newest | fewest-sessions | smallest-resources
	MinRuntime  time.Duration // preemption_min_runtime
	VictimScope string        // user (default) | project | domain | resource-group
}

type ResourceGroup struct {
	Name           string
	Description    string
	Inactive       bool
	Private        bool     // is_public = false
	Domains        []string // associated domains; nil = every domain
	Projects       []string // associated project names (or ids)
	KeyPairs       []string
	Scheduler      string // fifo (default) | lifo | drf | fair-share (ordering within a priority)
	AgentSelection string // dispersed (default) | concentrated
	Preemption     Preemption
	PendingTimeout time.Duration
	AllowedTypes   []string // allowed_session_types; nil = interactive, batch, inference
}

type Agent struct {
	ID            string
	ResourceGroup string            // default "default"
	Slots         map[string]string // e.g. {"cpu":"8","mem":"32g","cuda.device":"2"}
	Addr          string
	Arch          string // default x86_64
	Region        string
	Version       string
	Lost          bool
	Unschedulable bool
	// Images present on the agent; kernels of other images PULL first.
	// nil = every image is present.
	Images []string
}

type Image struct {
	Name     string // canonical, e.g. cr.backend.ai/stable/python:3.11-ubuntu22.04
	Arch     string // default x86_64
	Aliases  []string
	MinSlots map[string]string // default {"cpu":"1","mem":"1g"}
	Labels   map[string]string
	Local    bool
}

type VFolder struct {
	Name       string
	Host       string // default "local:volume1"
	OwnerEmail string // user-owned
	Project    string // or project-owned (project name)
	Permission string // rw (default) | ro | wd
	UsageMode  string // general (default) | model | data
}

// Double is a running fake manager.
type Double struct {
	opts Options
	log  *log.Logger

	mu        sync.Mutex
	domains   map[string]*domain
	projects  map[string]*project // id
	users     map[string]*user    // uuid
	byEmail   map[string]*user
	keypairs  map[string]*keypair
	rgs       map[string]*rgroup
	rgOrder   []*rgroup
	agents    map[string]*agent
	agentList []*agent
	images    []*image
	vfolders  []*vfolder
	slotTypes map[string]slotType
	slotOrder []string

	sessions map[string]*session
	byName   map[string][]*session // accessKey + "\x00" + name
	sessSeq  []*session            // creation order
	active   map[*session]struct{} // not terminal
	kernels  map[string]*kernel

	mgrStatus string // running | frozen | terminated ...
	rl        map[string]*rateWindow

	hub   *hub
	eng   *engine
	run   *runner
	start time.Time
	fs    *fsState // fair share (fairshare.go), d.mu

	srvMu   sync.Mutex
	srv     *http.Server
	ln      net.Listener
	addr    string
	outage  *time.Timer
	closed  bool
	closeCh chan struct{}
	wg      sync.WaitGroup

	adminAK, adminSK string
}

// New starts a double on opts.Listen (127.0.0.1:0 by default).
func New(opts Options) (*Double, error) {
	if opts.Mode == "" {
		opts.Mode = ModeScale
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.Cycle <= 0 {
		opts.Cycle = 2 * time.Second
	}
	if opts.LongCycle <= 0 {
		opts.LongCycle = 60 * time.Second
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 5
	}
	if opts.StaleKernelAfter == 0 {
		opts.StaleKernelAfter = 60 * time.Second
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = 2 * time.Second
	}
	if opts.KernelUID == 0 && opts.KernelGID == 0 {
		opts.KernelUID, opts.KernelGID = os.Getuid(), os.Getgid()
	}
	d := &Double{
		opts: opts, log: opts.Logger,
		domains: map[string]*domain{}, projects: map[string]*project{}, users: map[string]*user{},
		byEmail: map[string]*user{}, keypairs: map[string]*keypair{}, rgs: map[string]*rgroup{},
		agents: map[string]*agent{}, slotTypes: map[string]slotType{"cpu": slotCount, "mem": slotBytes},
		slotOrder: []string{"cpu", "mem"},
		sessions:  map[string]*session{}, byName: map[string][]*session{}, active: map[*session]struct{}{},
		kernels: map[string]*kernel{}, mgrStatus: "running", rl: map[string]*rateWindow{},
		closeCh: make(chan struct{}), start: time.Now(),
	}
	if d.log == nil {
		d.log = log.New(io.Discard, "", 0)
	}
	for k, v := range opts.SlotTypes {
		d.addSlotType(k, slotType(v))
	}
	d.hub = newHub(d)
	d.eng = newEngine(d)
	if opts.Mode == ModeRun {
		r, err := newRunner(d)
		if err != nil {
			return nil, err
		}
		d.run = r
	}
	if !opts.NoDefaults {
		d.seedDefaults()
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, err
	}
	d.addr = ln.Addr().String()
	d.serve(ln)
	d.wg.Add(1)
	go d.eng.loop()
	return d, nil
}

func (d *Double) seedDefaults() {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(d.AddDomain(Domain{Name: "default"}))
	_, err := d.AddProject(Project{Name: "default", Domain: "default"})
	must(err)
	must(d.AddResourceGroup(ResourceGroup{Name: "default"}))
	must(d.AddImage(Image{Name: "cr.backend.ai/stable/python:3.11-ubuntu22.04", Aliases: []string{"python"}}))
	_, err = d.AddUser(User{Username: "admin", Email: "admin@lablup.com", Role: "superadmin", Projects: []string{"default"}})
	must(err)
	kp, err := d.AddKeyPair(KeyPair{UserEmail: "admin@lablup.com", IsAdmin: true, RateLimit: 1 << 30})
	must(err)
	d.adminAK, d.adminSK = kp.AccessKey, kp.SecretKey
}

// URL is the manager endpoint, e.g. http://127.0.0.1:41234.
func (d *Double) URL() string { return "http://" + d.addr }

// Addr is the listening host:port.
func (d *Double) Addr() string { return d.addr }

// AdminKeys is the default superadmin keypair (empty with NoDefaults).
func (d *Double) AdminKeys() (accessKey, secretKey string) { return d.adminAK, d.adminSK }

// Close stops the server, the scheduler and (run mode) every process.
func (d *Double) Close() error {
	d.srvMu.Lock()
	if d.closed {
		d.srvMu.Unlock()
		return nil
	}
	d.closed = true
	close(d.closeCh)
	if d.outage != nil {
		d.outage.Stop()
	}
	srv := d.srv
	d.srvMu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		srv.Shutdown(ctx)
		cancel()
		srv.Close()
	}
	d.hub.closeAll()
	d.wg.Wait()
	if d.run != nil {
		d.run.close()
	}
	return nil
}

func (d *Double) addSlotType(name string, t slotType) {
	if _, ok := d.slotTypes[name]; !ok {
		d.slotOrder = append(d.slotOrder, name)
	}
	d.slotTypes[name] = t
}

// ---- seeding

// AddDomain adds a domain.
func (d *Double) AddDomain(x Domain) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x.Name == "" {
		return errors.New("double: domain needs a name")
	}
	d.domains[x.Name] = &domain{name: x.Name, active: !x.Inactive, allowedRegistries: x.AllowedRegistries, createdAt: time.Now().UTC()}
	return nil
}

// AddProject adds a project (group) and returns its id.
func (d *Double) AddProject(x Project) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x.Domain == "" {
		x.Domain = "default"
	}
	if _, ok := d.domains[x.Domain]; !ok {
		return "", fmt.Errorf("double: no domain %q", x.Domain)
	}
	id := x.ID
	if id == "" {
		id = newUUID()
	} else if c, ok := canonUUID(id); ok {
		id = c
	} else {
		return "", fmt.Errorf("double: project id %q is not a UUID", id)
	}
	d.projects[id] = &project{id: id, name: x.Name, domain: x.Domain, active: !x.Inactive, createdAt: time.Now().UTC()}
	return id, nil
}

func (d *Double) projectByName(domainName, name string) *project {
	for _, p := range d.sortedProjects() {
		if p.name == name && (domainName == "" || p.domain == domainName) {
			return p
		}
	}
	return nil
}

func (d *Double) sortedProjects() []*project {
	ps := make([]*project, 0, len(d.projects))
	for _, p := range d.projects {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool {
		return ps[i].createdAt.Before(ps[j].createdAt) || (ps[i].createdAt.Equal(ps[j].createdAt) && ps[i].id < ps[j].id)
	})
	return ps
}

// AddUser adds a user and returns its UUID.
func (d *Double) AddUser(x User) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x.Email == "" {
		return "", errors.New("double: user needs an email")
	}
	if x.Domain == "" {
		x.Domain = "default"
	}
	if x.Role == "" {
		x.Role = "user"
	}
	switch x.Role {
	case "superadmin", "admin", "user", "monitor":
	default:
		return "", fmt.Errorf("double: unknown role %q", x.Role)
	}
	if x.Username == "" {
		x.Username = x.Email
	}
	id := x.UUID
	if id == "" {
		id = newUUID()
	} else if c, ok := canonUUID(id); ok {
		id = c
	}
	u := &user{uuid: id, username: x.Username, email: x.Email, fullName: x.FullName, domain: x.Domain,
		role: x.Role, status: "active", containerUID: x.ContainerUID, containerMainGID: x.ContainerMainGID,
		containerGIDs: x.ContainerGIDs, createdAt: time.Now().UTC(), sudo: x.SudoSession}
	if x.Inactive {
		u.status = "inactive"
	}
	for _, pn := range x.Projects {
		p := d.projects[pn]
		if p == nil {
			p = d.projectByName(x.Domain, pn)
		}
		if p == nil {
			return "", fmt.Errorf("double: no project %q in domain %q", pn, x.Domain)
		}
		u.projects = append(u.projects, p)
	}
	d.users[id] = u
	d.byEmail[x.Email] = u
	return id, nil
}

// AddKeyPair adds a keypair of an existing user (by email) and returns it
// with generated keys filled in.
func (d *Double) AddKeyPair(x KeyPair) (KeyPair, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	u := d.byEmail[x.UserEmail]
	if u == nil {
		return x, fmt.Errorf("double: no user %q", x.UserEmail)
	}
	if x.AccessKey == "" {
		x.AccessKey = randKey("AKIA", 16)
	}
	if x.SecretKey == "" {
		x.SecretKey = randToken(20)
	}
	if x.RateLimit == 0 {
		x.RateLimit = 30000
	}
	kp := &keypair{accessKey: x.AccessKey, secretKey: x.SecretKey, user: u, isAdmin: x.IsAdmin, isActive: !x.Inactive,
		rateLimit: x.RateLimit, resourcePolicy: "default", maxPriority: x.MaxPriority, maxContainers: x.MaxContainersPerSessin,
		maxPendingSessions: x.MaxPendingSessions, createdAt: time.Now().UTC(), bootstrapScript: x.BootstrapScript}
	d.keypairs[x.AccessKey] = kp
	if u.mainAccessKey == "" || x.Main {
		u.mainAccessKey = x.AccessKey
	}
	return x, nil
}

// AddResourceGroup adds a resource group (scaling group).
func (d *Double) AddResourceGroup(x ResourceGroup) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x.Name == "" {
		return errors.New("double: resource group needs a name")
	}
	if x.Scheduler == "" {
		x.Scheduler = "fifo"
	}
	if x.AgentSelection == "" {
		x.AgentSelection = "dispersed"
	}
	if x.Preemption.Mode == "" {
		x.Preemption.Mode = "terminate"
	}
	if x.Preemption.Order == "" {
		x.Preemption.Order = "oldest"
	}
	if x.Preemption.VictimScope == "" {
		x.Preemption.VictimScope = "user"
	}
	rg := &rgroup{id: newUUID(), name: x.Name, description: x.Description, active: !x.Inactive, public: !x.Private,
		scheduler: x.Scheduler, selection: x.AgentSelection, keypairs: x.KeyPairs, preempt: x.Preemption,
		pendingTimeout: x.PendingTimeout, allowedTypes: x.AllowedTypes, createdAt: time.Now().UTC(),
		wsproxyAddr: "http://127.0.0.1:5050"}
	if x.Domains == nil {
		rg.domains = []string{"*"} // every domain, including later ones
	} else {
		rg.domains = x.Domains
	}
	for _, pn := range x.Projects {
		p := d.projects[pn]
		if p == nil {
			p = d.projectByName("", pn)
		}
		if p == nil {
			return fmt.Errorf("double: no project %q", pn)
		}
		rg.projects = append(rg.projects, p.id)
	}
	if old := d.rgs[x.Name]; old != nil {
		rg.agents, rg.pending = old.agents, old.pending
		for i, r := range d.rgOrder {
			if r == old {
				d.rgOrder[i] = rg
			}
		}
		for _, a := range rg.agents {
			a.rg = rg
		}
	} else {
		d.rgOrder = append(d.rgOrder, rg)
		sort.Slice(d.rgOrder, func(i, j int) bool { return d.rgOrder[i].name < d.rgOrder[j].name })
	}
	d.rgs[x.Name] = rg
	return nil
}

// AddAgent adds (or replaces) an agent.
func (d *Double) AddAgent(x Agent) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addAgentLocked(x)
}

// AddAgents adds many agents at once.
func (d *Double) AddAgents(xs []Agent) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, x := range xs {
		if err := d.addAgentLocked(x); err != nil {
			return err
		}
	}
	return nil
}

func (d *Double) addAgentLocked(x Agent) error {
	if x.ID == "" {
		return errors.New("double: agent needs an id")
	}
	if x.ResourceGroup == "" {
		x.ResourceGroup = "default"
	}
	rg := d.rgs[x.ResourceGroup]
	if rg == nil {
		return fmt.Errorf("double: no resource group %q", x.ResourceGroup)
	}
	if x.Arch == "" {
		x.Arch = "x86_64"
	}
	if x.Addr == "" {
		x.Addr = "tcp://127.0.0.1:6011"
	}
	if x.Version == "" {
		x.Version = ManagerVersion
	}
	if x.Region == "" {
		x.Region = "local"
	}
	if x.Slots == nil {
		x.Slots = map[string]string{"cpu": "8", "mem": "32g"}
	}
	names := make([]string, 0, len(x.Slots))
	for k := range x.Slots {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		return slotRank(names[i]) < slotRank(names[j]) || (slotRank(names[i]) == slotRank(names[j]) && names[i] < names[j])
	})
	now := time.Now().UTC()
	a := &agent{id: x.ID, addr: x.Addr, region: x.Region, arch: x.Arch, version: x.Version, rg: rg,
		status: "ALIVE", schedulable: !x.Unschedulable, used: map[string]int64{}, firstContact: now, statusChanged: now}
	for _, n := range names {
		if _, ok := d.slotTypes[n]; !ok {
			t := slotCount
			if isBytesSlot(n, nil) {
				t = slotBytes
			}
			d.addSlotType(n, t)
		}
		q := parseQuantityString(x.Slots[n], d.slotTypes[n] == slotBytes)
		a.capacity = append(a.capacity, slotQ{n, q})
	}
	plugins := obj{}
	for _, n := range names {
		if n != "cpu" && n != "mem" {
			dev := n
			if i := len(dev); i > 0 {
				for j := 0; j < len(dev); j++ {
					if dev[j] == '.' {
						dev = dev[:j]
						break
					}
				}
			}
			if _, ok := plugins.get(dev); !ok {
				plugins = plugins.add(dev, obj{{"version", "26.8.1"}})
			}
		}
	}
	a.computePlugins = plugins
	if x.Images != nil {
		a.images = map[string]bool{}
		for _, im := range x.Images {
			a.images[im] = true
		}
	}
	if x.Lost {
		a.status = "LOST"
		a.lostAt = now
	}
	if old := d.agents[x.ID]; old != nil {
		a.used, a.containers = old.used, old.containers
		for i, o := range old.rg.agents {
			if o == old {
				old.rg.agents = append(old.rg.agents[:i], old.rg.agents[i+1:]...)
				break
			}
		}
		for i, o := range d.agentList {
			if o == old {
				d.agentList[i] = a
			}
		}
		for _, k := range d.kernels {
			if k.agent == old {
				k.agent = a
			}
		}
	} else {
		d.agentList = append(d.agentList, a)
	}
	d.agents[x.ID] = a
	rg.agents = append(rg.agents, a)
	rg.served = nil
	if old := d.agents[x.ID]; old != nil && old.rg != rg {
		old.rg.served = nil
	}
	rg.scheduleNeeded = true
	return nil
}

func slotRank(n string) int {
	switch n {
	case "cpu":
		return 0
	case "mem":
		return 1
	}
	return 2
}

// AddImage registers an image.
func (d *Double) AddImage(x Image) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x.Name == "" {
		return errors.New("double: image needs a name")
	}
	if x.Arch == "" {
		x.Arch = "x86_64"
	}
	if x.MinSlots == nil {
		x.MinSlots = map[string]string{"cpu": "1", "mem": "1g"}
	}
	im := &image{id: newUUID(), name: x.Name, arch: x.Arch, registry: imageRegistry(x.Name), aliases: x.Aliases,
		labels: x.Labels, isLocal: x.Local}
	names := make([]string, 0, len(x.MinSlots))
	for k := range x.MinSlots {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		return slotRank(names[i]) < slotRank(names[j]) || (slotRank(names[i]) == slotRank(names[j]) && names[i] < names[j])
	})
	for _, n := range names {
		im.minSlots = append(im.minSlots, slotQ{n, parseQuantityString(x.MinSlots[n], isBytesSlot(n, d.slotTypes))})
	}
	d.images = append(d.images, im)
	return nil
}

// AddVFolder registers a virtual folder (for GET /folders).
func (d *Double) AddVFolder(x VFolder) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x.Host == "" {
		x.Host = "local:volume1"
	}
	if x.Permission == "" {
		x.Permission = "rw"
	}
	if x.UsageMode == "" {
		x.UsageMode = "general"
	}
	vf := &vfolder{id: newUUID(), name: x.Name, host: x.Host, usage: x.UsageMode, permission: x.Permission,
		createdAt: time.Now().UTC(), status: "ready"}
	switch {
	case x.OwnerEmail != "":
		vf.user = d.byEmail[x.OwnerEmail]
		if vf.user == nil {
			return fmt.Errorf("double: no user %q", x.OwnerEmail)
		}
		vf.ownership = "user"
	case x.Project != "":
		vf.group = d.projectByName("", x.Project)
		if vf.group == nil {
			return fmt.Errorf("double: no project %q", x.Project)
		}
		vf.ownership = "group"
	default:
		return errors.New("double: vfolder needs an owner or a project")
	}
	d.vfolders = append(d.vfolders, vf)
	return nil
}
