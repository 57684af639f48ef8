package double

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Status is a session or kernel status name of 26.8.1
// (manager/data/session/types.py SessionStatus, data/kernel/types.py
// KernelStatus).
type Status uint8

const (
	StPending Status = iota
	StDeprioritizing
	StReserved
	StScheduled
	StPreparing
	StBuilding
	StPulling
	StPrepared
	StCreating
	StRunning
	StRestarting
	StRunningDegraded
	StResizing
	StSuspended
	StPreempted
	StRescheduling
	StTerminating
	StTerminated
	StError
	StCancelled
	nStatus
)

var statusNames = [...]string{"PENDING", "DEPRIORITIZING", "RESERVED", "SCHEDULED", "PREPARING", "BUILDING",
	"PULLING", "PREPARED", "CREATING", "RUNNING", "RESTARTING", "RUNNING_DEGRADED", "RESIZING", "SUSPENDED",
	"PREEMPTED", "RESCHEDULING", "TERMINATING", "TERMINATED", "ERROR", "CANCELLED"}

func (s Status) String() string { return statusNames[s] }

// ParseStatus maps a status name (case-insensitive, as CIStrEnum does) to
// a Status.
func ParseStatus(name string) (Status, bool) {
	u := strings.ToUpper(name)
	for i, n := range statusNames {
		if n == u {
			return Status(i), true
		}
	}
	return 0, false
}

// parseStatusKey is SessionStatus[name]: exact member name only.
func parseStatusKey(name string, kernel bool) (Status, bool) {
	for i, n := range statusNames {
		if n == name {
			st := Status(i)
			if !kernel && (st == StBuilding || st == StResizing || st == StSuspended) {
				return 0, false
			}
			if kernel && (st == StDeprioritizing || st == StRunningDegraded || st == StPreempted || st == StRescheduling) {
				return 0, false
			}
			return st, true
		}
	}
	return 0, false
}

func (s Status) terminal() bool { return s == StTerminated || s == StError || s == StCancelled }

// dead: DEAD_SESSION_STATUSES (v1 lookups skip them unless allow_stale).
func (s Status) dead() bool { return s == StTerminated || s == StCancelled }

// SessionStatus.terminatable_statuses
func (s Status) terminatable() bool {
	return s != StTerminating && s != StTerminated && s != StCancelled && s != StError
}

// SessionStatus.force_terminatable_statuses
func (s Status) forceTerminatable() bool {
	return s != StTerminated && s != StCancelled && s != StError
}

// SessionStatus.resource_occupied_statuses
func (s Status) occupying() bool {
	switch s {
	case StPending, StDeprioritizing, StPreempted, StRescheduling, StTerminated, StCancelled, StError:
		return false
	}
	return true
}

// SessionStatus.preemption_victim_statuses
func (s Status) victimable() bool { return s.occupying() && s.terminatable() && s != StReserved }

// KernelStatus.resource_holding_statuses
func (s Status) kernelHolding() bool {
	switch s {
	case StRunning, StTerminating, StReserved, StScheduled, StPreparing, StPulling, StPrepared, StCreating:
		return true
	}
	return false
}

type result uint8

const (
	resUndefined result = iota
	resSuccess
	resFailure
)

func (r result) String() string { return [...]string{"UNDEFINED", "SUCCESS", "FAILURE"}[r] }

type histEntry struct {
	st Status
	at time.Time
}

type history []histEntry

// set merges {STATUS: iso} into the JSON map (sql_json_merge): an existing
// key keeps its position and takes the new time.
func (h history) set(st Status, at time.Time) history {
	for i := range h {
		if h[i].st == st {
			h[i].at = at
			return h
		}
	}
	return append(h, histEntry{st, at})
}

func (h history) get(st Status) (time.Time, bool) {
	for _, e := range h {
		if e.st == st {
			return e.at, true
		}
	}
	return time.Time{}, false
}

func (h history) toObj() obj {
	o := make(obj, 0, len(h))
	for _, e := range h {
		o = append(o, kv{e.st.String(), isoformat(e.at)})
	}
	return o
}

type domain struct {
	name              string
	active            bool
	allowedRegistries []string
	createdAt         time.Time
}

type project struct {
	id        string
	name      string
	domain    string
	active    bool
	createdAt time.Time
	rgs       []string
}

type user struct {
	uuid, username, email, fullName, domain, role string
	status                                        string
	projects                                      []*project
	containerUID, containerMainGID                *int
	containerGIDs                                 []int
	mainAccessKey                                 string
	createdAt                                     time.Time
	sudo                                          bool
	unixName                                      string
}

type keypair struct {
	accessKey, secretKey string
	user                 *user
	isAdmin, isActive    bool
	rateLimit            int
	resourcePolicy       string
	maxPriority          *int
	maxContainers        int
	maxPendingSessions   int
	createdAt            time.Time
	numQueries           int
	bootstrapScript      string
}

type rgroup struct {
	id, name         string
	description      string
	active, public   bool
	scheduler        string
	selection        string
	domains          []string
	projects         []string // project ids
	keypairs         []string
	preempt          Preemption
	pendingTimeout   time.Duration
	allowedTypes     []string
	createdAt        time.Time
	wsproxyAddr      string
	useHostNetwork   bool
	agents           []*agent
	pending          []*session // PENDING, in enqueue order
	scheduleNeeded   bool
	lastLongSchedule time.Time
	served           map[string]bool
}

type agent struct {
	id, addr, region, arch, version string
	rg                              *rgroup
	status                          string // ALIVE LOST RESTARTING TERMINATED
	schedulable                     bool
	capacity                        slotList
	used                            map[string]int64 // holding kernels' requested amounts
	prereserved                     map[string]int64
	containers                      int
	images                          map[string]bool
	firstContact, statusChanged     time.Time
	lostAt                          time.Time
	computePlugins                  obj
}

type image struct {
	id, name, arch, registry string
	aliases                  []string
	minSlots                 slotList
	labels                   map[string]string
	isLocal                  bool
}

type vfolder struct {
	id, name, host, usage, permission, ownership string
	user                                         *user
	group                                        *project
	createdAt                                    time.Time
	cloneable                                    bool
	status                                       string
}

type kernel struct {
	id               string
	sess             *session
	role             string
	idx, rank        int
	hostname         string
	agent            *agent
	status           Status
	statusInfo       *string
	statusData       obj
	hist             history
	statusChanged    time.Time
	createdAt        time.Time
	startsAt         time.Time
	terminatedAt     time.Time
	requested        slotList
	allocated        bool // holds resources on the agent
	prereserved      bool // preemption reservation on the agent
	containerID      string
	log              []byte
	engineID         string
	due              time.Time // agent-side work finishes (pull/create)
	exitCode         *int
	lastStat         obj // the agent's container stats at termination (run mode)
	preopen          []int
	resourceOpts     obj
	env              [][2]string
	uid, gid         int
	gids             []int
	workDir, logPath string
	lostAt           time.Time
	jobID            uint32
	proc             procState
	killing          bool
	killForced       bool
	idle             bool          // run mode: a non-batch kernel's waiting container process
	ready            chan struct{} // run mode: closed once the container runs (or failed)
	x                *kexec        // run mode: the main kernel's kernel runner
}

type session struct {
	id, creationID, name, accessKey string
	owner                           *user
	domain                          string
	project                         *project
	rg                              *rgroup
	typ                             string // INTERACTIVE BATCH INFERENCE SYSTEM
	clusterMode                     string // single-node / multi-node
	clusterSize                     int
	priority, jobPriority           int
	preemptible                     bool
	image                           *image
	status                          Status
	statusInfo                      *string
	statusData                      obj
	hist                            history
	statusChanged                   time.Time
	createdAt, startsAt, termAt     time.Time
	requestedStartsAt               time.Time
	batchTimeout                    int
	result                          result
	startupCommand, bootstrap       *string
	tag                             *string
	callbackURL                     *string
	environ                         [][2]string
	resourceOpts                    obj
	kernels                         []*kernel
	deps                            []string
	designated                      []string
	requested                       slotList
	numQueries                      int
	failAttempts                    int
	runUntil                        time.Time // scale mode: when the task ends
	timeoutAt                       time.Time // batch_timeout deadline
	victimOf                        string    // RESERVED session this victim frees resources for
	reservedFor                     []string  // victims a RESERVED session waits for
	dropped                         bool
	terminatingSince                time.Time
	forced                          bool
	exitCode                        int
	agentIDs                        []string
	queued                          bool
}

func (s *session) main() *kernel { return s.kernels[0] }

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// canonUUID returns the canonical form of a UUID string (Python's
// uuid.UUID accepts braces, urn:uuid: and missing dashes).
func canonUUID(s string) (string, bool) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(strings.TrimPrefix(t, "urn:"), "uuid:")
	t = strings.Trim(t, "{}")
	t = strings.ReplaceAll(t, "-", "")
	if len(t) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(t); err != nil {
		return "", false
	}
	t = strings.ToLower(t)
	return t[0:8] + "-" + t[8:12] + "-" + t[12:16] + "-" + t[16:20] + "-" + t[20:], true
}

func randToken(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func randKey(prefix string, n int) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return prefix + string(b)
}

func imageRegistry(name string) string {
	if i := strings.IndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	return "index.docker.io"
}

func containerIDFor(kid string) string {
	return strings.ReplaceAll(kid, "-", "") + strings.ReplaceAll(kid, "-", "")[:32]
}

func (k *kernel) String() string { return fmt.Sprintf("kernel %s", k.id) }
