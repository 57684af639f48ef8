// Package ctld gives meaning to controller RPCs: it answers reads from an
// immutable snapshot whose encoded replies are cached per protocol
// version, and turns writes (submissions) into durable job records and
// engine operations. It implements edge.Handler's method set without
// importing edge (edge depends on translate, not the reverse).
package ctld

import (
	"context"
	"errors"
	"log"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/state/memfile"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Request mirrors edge.Request (same layout, converted by the caller).
type Request struct {
	Version uint16
	Flags   uint16
	MsgType uint16
	UID     uint32
	GID     uint32
	Origin  [4]byte // IPv4 address of the host that made the credential
	Body    []byte
	// Peer is the address the request came from (slow path only):
	// where callbacks to the client go (salloc's and srun's ports), as
	// slurmctld's resp_host.
	Peer netip.Addr
	// Local is the server's address the request came to (slow path
	// only): the one the client is known to reach it at.
	Local netip.Addr
}

// Reply mirrors edge.Reply.
type Reply struct {
	Frame   []byte
	More    []*memfile.Bytes // further pieces of a prebuilt frame, written after Frame
	MsgType uint16
	Body    []byte
	Drop    bool   // close without answering (what slurmctld does with undecodable messages)
	After   func() // called once the reply is written (slow path only)
}

// Options configure the controller.
type Options struct {
	Conf        *conf.Config
	Store       *state.Store
	Backend     translate.Backend
	Exec        translate.Executor // runs jobs; nil = jobs stay pending
	Stats       *state.RPCStats
	ClusterName string
	ServerHost  string // hostname advertised as SlurmctldHost
	ServerAddr  string
	Port        uint16
	SlurmUser   string
	SlurmUID    uint32
	Operators   map[uint32]bool // uids allowed to act on any job (root is always)
	Log         *log.Logger
	// Caller reaches clients' listening ports (salloc's, srun's); nil:
	// pending allocations are not pushed, SRUN_* notices not sent.
	Caller Caller
	// CredKey signs job credentials (steps); nil: no steps.
	CredKey []byte
	// Steps signals live steps' tasks (the node stand-ins).
	Steps StepSignaller
	// SetDebugLevel applies a Slurm log level (0 quiet ... 9 debug5) to
	// the server's log (scontrol setdebug); nil: refused.
	SetDebugLevel func(level int)
	// Login makes the slurm.conf served to configless login nodes
	// (REQUEST_CONFIG; configless.go); nil: one from the fields above.
	Login *LoginConf
	// NodeConfDir is where the slurm.conf of the server's node
	// stand-ins is kept, as a configless slurmd keeps its conf cache:
	// jobs run on this host (the embedded engine) get SLURM_CONF
	// pointing at it, as slurmd's jobs do, so the client commands they
	// run reach this server. "": jobs run elsewhere (Backend.AI).
	NodeConfDir string
	// Reload reads the config file again (scontrol reconfigure); nil:
	// reconfigure is not supported.
	Reload func() (*conf.Config, error)
	// OnReconfigure is called after a reconfigure took effect (to push
	// the new config to configless nodes).
	OnReconfigure func()
	// Shutdown stops the server (scontrol shutdown), as SIGTERM does.
	Shutdown func()
}

// Controller is the frontend's slurmctld.
type Controller struct {
	usage    usageCache // sshare's decayed usage (assoc.go)
	impOnce  sync.Once  // the imported accounts, read once (assoc.go)
	imp      *dirView
	dirMu    sync.Mutex // the engine directory's view, made once per directory (assoc.go)
	dirOf    *translate.DirectoryInfo
	dirView  dirView
	purgedAt int64 // when purgeFinished last looked (seconds; c.mu)
	opt      Options
	snap     atomic.Pointer[Snapshot]
	chunks   chunkCache // encoded job records, reused by the next snapshot
	mu       sync.Mutex // serializes snapshot rebuilds after writes
	started  time.Time
	cl       atomic.Pointer[cluster] // nodes and partitions (cluster.go)
	topoKick chan struct{}
	jobs     []*jobEntry
	counters counters
	kick     chan struct{}
	hosts    sync.Map                    // netip.Addr -> host name (reverse lookups)
	private  atomic.Uint32               // PrivateData bits (access.go)
	cfg      atomic.Pointer[conf.Config] // the config now (opt.Conf until a reconfigure; nodeadmin.go)
	nodes    nodeAdmin                   // administrators' node states (nodeadmin.go)
	troubles storeTroubles
	// lowestPrio is priority/basic's counter (nextPriority; c.mu).
	lowestPrio uint32
	// fsCache: the fair-share factors priority/multifactor reads.
	fsCache fairShares
	// prioCalcAt: when priority/multifactor's periodic pass last ran
	// (c.mu; 0: not yet).
	prioCalcAt int64
	// nodeConfText is the node stand-ins' slurm.conf last written
	// (nodeconf.go).
	// group: submissions waiting to share a store write
	// (groupcommit.go); batches counts the writes.
	group        groupCommit
	batches      atomic.Uint64
	nodeConfMu   sync.Mutex
	nodeConfText string
	// createdAt: when this run recorded a session id for a job (c.mu);
	// a resync ignores sessions recorded after it listed the engine's.
	createdAt map[string]time.Time
	keptTopo  []byte // the topology last recorded in the store (keepTopology)
	// creating: jobs whose session is being created (c.mu), closed once
	// the create has returned and, for a job cancelled meanwhile, the
	// session has been ended: a cancel waits for it before it is
	// acknowledged, so that no script starts after the client is told
	// the job is cancelled, even across a crash.
	creating map[uint32]chan struct{}
	// foreignDue: a session made outside the frontend changed (its
	// event came); foreignSkipped: those not shown, logged once (c.mu).
	foreignDue     atomic.Bool
	foreignSkipped map[translate.SessionID]bool
	// Interactive allocations (c.mu): requests waiting for their grant,
	// and those answered "pending" whose grant is pushed (the client's
	// protocol version); live job steps by job.
	grants        map[uint32]chan struct{}
	pendingGrants map[uint32]uint16
	relinquished  map[uint32]bool      // ended by their client: the session's end keeps their state
	lastActive    map[uint32]time.Time // allocations: when their client was last heard from (InactiveLimit)
	steps         map[uint32]*jobSteps
	saver         stepSaver  // writes the live steps' list (lost.go)
	hist          histWriter // writes ended steps' accounting records (history.go)
	dirty         bool       // engine changes wait for a coalesced rebuild (rebuildSoon)
	// jobsShared: c.jobs's array is also the published snapshot's
	// (rebuildWith shares it rather than copy it per submission): an
	// entry changed in place or removed copies it first (ownJobs); an
	// append writes past every snapshot's end and copies nothing.
	jobsShared bool
	shown      []func() // engine events' acknowledgements, called once the next rebuild is published
	rebuilds   rebuildStats
	debugLevel atomic.Uint32 // scontrol setdebug's level + 1; 0: SlurmctldDebug's
	facts      factCache     // cold entries' partitions for the metrics (metrics.go)
	cfgless    configless    // configless login nodes: served files, registered sackds (configless.go)
}

type counters struct {
	submitted, started, completed, canceled, failed atomic.Uint32
}

func topoAgents(t *translate.Topology) []translate.Agent {
	if t == nil {
		return nil
	}
	return t.Agents
}

// New loads jobs from the store and builds the first snapshot.
func New(ctx context.Context, opt Options) (*Controller, error) {
	c := &Controller{opt: opt, started: time.Now(), kick: make(chan struct{}, 1), topoKick: make(chan struct{}, 1), createdAt: map[string]time.Time{}, foreignSkipped: map[translate.SessionID]bool{},
		grants: map[uint32]chan struct{}{}, pendingGrants: map[uint32]uint16{}, relinquished: map[uint32]bool{}, steps: map[uint32]*jobSteps{}}
	c.cfg.Store(opt.Conf)
	c.private.Store(uint32(parsePrivateData(opt.Conf.Get("PrivateData", ""))))
	if err := c.loadNodeAdmin(); err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, engineTimeout)
	topo, err := opt.Backend.Topology(tctx)
	cancel()
	if errors.Is(err, translate.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		// The engine is down: serve the jobs of the store now, the
		// cluster as soon as the engine answers (refreshTopology).
		last := c.lastTopology()
		c.logf("topology: %v (serving the last one recorded, %d agents, until it answers)", err, len(topoAgents(last)))
		topo, err = last, nil
	} else if err == nil {
		c.keepTopology(topo)
	}
	if err != nil {
		return nil, err
	}
	c.cl.Store(c.newCluster(topo))
	// Cold jobs stay in the store: their entries keep nothing of j.
	entries, err := state.LoadJobs(opt.Store, func(j *state.Job) *jobEntry {
		if !keepCold(j) {
			hot := *j // j is reused for the next record
			j = &hot
		}
		return newEntry(j, opt.Store, true)
	})
	if err != nil {
		return nil, err
	}
	c.jobs = entries
	finishCancels, err := c.recoverCancels()
	if err != nil {
		return nil, err
	}
	c.recoverPriorities()
	if len(entries) >= 10000 {
		// Loading allocates about twice what it keeps (records copied
		// out of the store and decoded); do not hold that until the
		// next GC.
		defer freeOSMemory()
	}
	c.purgeFinished(time.Now().Unix())
	c.rebuild(time.Now().Unix())
	finishCancels()
	return c, nil
}

// Snapshot returns the current snapshot.
func (c *Controller) Snapshot() *Snapshot { return c.snap.Load() }

// Fast answers read RPCs from the snapshot without blocking.
func (c *Controller) Fast(req *Request) (Reply, bool) {
	s := c.snap.Load()
	switch req.MsgType {
	case codec.REQUEST_PING:
		return s.rc(req.Version, codec.SLURM_SUCCESS), true
	}
	if r, ok := c.adminDenied(s, req); ok {
		return r, true
	}
	if r, ok := c.fastInfo(s, req, false); ok {
		return r, true
	}
	if _, slow := slowHandlers[req.MsgType]; slow {
		return Reply{}, false // a write, or a listing fastInfo declined (it would block)
	}
	// Anything else: slurmctld answers unknown RPCs with EINVAL; those
	// we know but do not (yet) support get ESLURM_NOT_SUPPORTED so the
	// client prints an honest reason.
	if _, known := knownUnsupported[req.MsgType]; known {
		return s.rc(req.Version, codec.ESLURM_NOT_SUPPORTED), true
	}
	if code, why, ok := inventoryRefusal(req); ok { // inventory.go
		c.logf("debug: %s from uid %d refused: %s", codec.MsgTypeName(req.MsgType), req.UID, why)
		return s.rc(req.Version, code), true
	}
	if slurmDecodes(req.MsgType) {
		return s.rc(req.Version, codec.EINVAL), true
	}
	return Reply{Drop: true}, true
}

// slurmDecodes approximates which message types slurmctld can unpack (its
// msg_type enum blocks): those it answers with EINVAL when it does not
// serve them; anything else fails to unpack and the connection is closed
// without a reply.
func slurmDecodes(t uint16) bool {
	switch {
	case t >= 1001 && t <= 1030, t >= 2001 && t <= 2060, t >= 3001 && t <= 3015,
		t >= 4001 && t <= 4030, t >= 5001 && t <= 5045, t >= 6001 && t <= 6025,
		t >= 7001 && t <= 7020, t >= 8001 && t <= 8003, t >= 9001 && t <= 9002,
		t >= 10001 && t <= 10005, t >= 11001 && t <= 11003:
		return true
	}
	return false
}

var knownUnsupported = map[uint16]struct{}{
	codec.REQUEST_SUSPEND: {}, codec.REQUEST_HET_JOB_ALLOCATION: {},
	codec.REQUEST_SUBMIT_BATCH_HET_JOB: {},
}

// Waits reports the Slow RPCs that mostly wait rather than work: a
// submission waits for the sync it shares with every submission of its
// group commit (groupcommit.go), so the more of them wait at once, the
// fewer syncs; the edge gives them a pool of their own.
func (c *Controller) Waits(msgType uint16) bool {
	return msgType == codec.REQUEST_SUBMIT_BATCH_JOB
}

// slowHandlers are the RPCs served on a worker goroutine (writes, and
// what may block): the one table both Fast (which hands them over) and
// Slow (which runs them) read, so a new RPC is one entry.
var slowHandlers = map[uint16]func(*Controller, *Request) Reply{
	codec.REQUEST_SUBMIT_BATCH_JOB: (*Controller).submit,
	codec.REQUEST_KILL_JOB:         (*Controller).kill,
	codec.REQUEST_KILL_JOBS:        (*Controller).killJobs,
	codec.REQUEST_UPDATE_JOB:       (*Controller).update,
	codec.REQUEST_JOB_REQUEUE:      (*Controller).requeue,
	codec.REQUEST_TOP_JOB:          (*Controller).top,
	codec.REQUEST_JOB_WILL_RUN:     (*Controller).willRun,
	codec.REQUEST_STATS_INFO:       (*Controller).statsInfo,
	codec.REQUEST_JOB_NOTIFY:       (*Controller).jobNotify,
	codec.REQUEST_BATCH_SCRIPT:     (*Controller).batchScript,
	codec.REQUEST_SET_DEBUG_LEVEL:  (*Controller).setDebugLevel,
	codec.REQUEST_CONFIG:           (*Controller).configRequest, // configless login nodes (configless.go)
	// Administration: scontrol update node, reconfigure, shutdown.
	codec.REQUEST_UPDATE_NODE: (*Controller).updateNode,
	codec.REQUEST_RECONFIGURE: (*Controller).reconfigure,
	codec.REQUEST_SHUTDOWN:    (*Controller).shutdown,
	// Accounting's: sshare, sprio.
	codec.REQUEST_SHARE_INFO:       (*Controller).shareInfo,
	codec.REQUEST_PRIORITY_FACTORS: (*Controller).priorityFactors,
	// Interactive work: salloc, srun.
	codec.REQUEST_RESOURCE_ALLOCATION:     (*Controller).allocate,
	codec.REQUEST_JOB_READY:               (*Controller).jobReady,
	codec.REQUEST_JOB_ALLOCATION_INFO:     (*Controller).allocInfo,
	codec.REQUEST_HET_JOB_ALLOC_INFO:      (*Controller).allocInfo,
	codec.REQUEST_COMPLETE_JOB_ALLOCATION: (*Controller).completeAlloc,
	codec.REQUEST_JOB_STEP_CREATE:         (*Controller).stepCreate,
	codec.REQUEST_STEP_COMPLETE:           (*Controller).stepComplete,
	codec.REQUEST_CANCEL_JOB_STEP:         (*Controller).cancelStep,
	// Listings the event loop could not serve without blocking (a cold
	// record to read from the store).
	codec.REQUEST_JOB_INFO:        (*Controller).slowInfo,
	codec.REQUEST_JOB_INFO_SINGLE: (*Controller).slowInfo,
	codec.REQUEST_JOB_USER_INFO:   (*Controller).slowInfo,
	codec.REQUEST_JOB_STATE:       (*Controller).slowInfo,
}

// Slow runs an RPC of slowHandlers on a worker goroutine.
func (c *Controller) Slow(req *Request) Reply {
	if h, ok := slowHandlers[req.MsgType]; ok {
		return h(c, req)
	}
	return rcReply(codec.EINVAL)
}

func (c *Controller) slowInfo(req *Request) Reply {
	r, _ := c.fastInfo(c.snap.Load(), req, true)
	return r
}

func rcReply(rc uint32) Reply {
	return Reply{MsgType: codec.RESPONSE_SLURM_RC, Body: []byte{byte(rc >> 24), byte(rc >> 16), byte(rc >> 8), byte(rc)}}
}

func (c *Controller) logf(format string, args ...any) {
	if c.opt.Log != nil {
		c.opt.Log.Printf(format, args...)
	}
}

// at returns the position of job id in c.jobs, or -1. c.jobs is in ID
// order: new jobs (and split-off array tasks) get IDs above all others,
// and replacements keep their place.
func (c *Controller) at(id uint32) int {
	i := sort.Search(len(c.jobs), func(i int) bool { return c.jobs[i].id >= id })
	if i < len(c.jobs) && c.jobs[i].id == id {
		return i
	}
	return -1
}

// ownJobs gives c.jobs an array of its own before a change in place, if
// a snapshot shares the one it has (c.mu held).
func (c *Controller) ownJobs() {
	if c.jobsShared {
		c.jobs = append(make([]*jobEntry, 0, len(c.jobs)+len(c.jobs)/4+64), c.jobs...)
		c.jobsShared = false
	}
}

// addJob adds a new job's entry in ID order (c.mu held). IDs only grow,
// but the group commit writes a batch without c.mu: a job another path
// made meanwhile may have taken a higher ID and been added first.
func (c *Controller) addJob(e *jobEntry) {
	n := len(c.jobs)
	if n == 0 || c.jobs[n-1].id < e.id {
		c.jobs = append(c.jobs, e)
		return
	}
	c.ownJobs()
	i := sort.Search(n, func(i int) bool { return c.jobs[i].id >= e.id })
	c.jobs = slices.Insert(c.jobs, i, e)
}

// entry returns the current entry of job id, or nil.
func (c *Controller) entry(id uint32) *jobEntry {
	if i := c.at(id); i >= 0 {
		return c.jobs[i]
	}
	return nil
}
