package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	osuser "os/user"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/edge"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/backendai"
	"github.com/lablup/slurm-frontend/translate/ctld"
	"github.com/lablup/slurm-frontend/translate/node"
)

// metricsHub is the Prometheus endpoint (--metrics-listen). Figures that
// happen per request (latency histograms, how replies were made, engine
// calls) are counted as they happen, without allocating on the hot path;
// everything else is read from its owner at scrape time: sdiag's RPC
// tables (the same counters sdiag reads, so the two agree), the
// controller's jobs and nodes, the munge replay cache, the eBPF
// per-source-host counters, srun's I/O, the rate limits.
//
// Names: slurm_frontend_* in Prometheus's conventions, and beside them
// the names the widely used Slurm exporter (vpenso/prometheus-slurm-
// exporter and its forks) gives the same figures (slurm_queue_*,
// slurm_nodes_*, slurm_cpus_*, slurm_rpc_stats*, slurm_user_rpc_stats*,
// slurm_scheduler_*), so a site's dashboards and alerts keep working.
type metricsHub struct {
	set   *metrics.Set
	rpc   [8192]atomic.Pointer[rpcTypeMetrics] // by msg_type - 1000
	mu    sync.Mutex                           // creates rpc entries and engine ops
	eng   sync.Map                             // op -> *engineOp
	start time.Time
	// byUser: latency histograms per user, when the operator asks for
	// them (FrontendMetricsUserHistograms=yes): a series per user and
	// bucket is more than most sites want in Prometheus, so by default
	// users get sdiag's count and total time only.
	byUser   bool
	userMu   sync.RWMutex
	userHist map[uint32]*userHist

	// Scrape-time sources (nil: not this deployment's).
	srv   *edge.Server
	auth  *edge.MungeAuth
	nodes *node.Service
	stats *state.RPCStats
	ctl   *ctld.Controller
	users sync.Map // uid -> user name
}

type rpcTypeMetrics struct {
	hist    [8]*metrics.PrometheusHistogram // by protocol version, 22.05 (0) ... 26.05
	replies [4]*metrics.Counter             // by edge.Path
}

type engineOp struct {
	hist   *metrics.PrometheusHistogram
	errors sync.Map // kind -> *metrics.Counter
}

// rpcBuckets: from the event loop's tens of microseconds to a
// submission that waits for the engine.
var rpcBuckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// engineBuckets: the manager's answers, from a cached GET to a slow
// session creation.
var engineBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func newMetricsHub(byUser bool) *metricsHub {
	return &metricsHub{set: metrics.NewSet(), start: time.Now(), byUser: byUser, userHist: map[uint32]*userHist{}}
}

// userBuckets: coarser than rpcBuckets, since there is a series per
// user.
var userBuckets = [...]time.Duration{100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond,
	100 * time.Millisecond, time.Second, 10 * time.Second}

// userHist is one user's latency histogram, kept here and written at
// scrape time: the user's name is looked up there, off the event loops
// (a lookup may go to LDAP).
type userHist struct {
	buckets [len(userBuckets) + 1]atomic.Uint64 // the last: above every bound
	sumNs   atomic.Uint64
}

func (h *userHist) update(d time.Duration) {
	i := 0
	for i < len(userBuckets) && d > userBuckets[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sumNs.Add(uint64(d))
}

// Observe records one answered RPC (edge.Observer; event loops).
func (m *metricsHub) Observe(msgType, version uint16, uid uint32, path edge.Path, d time.Duration) {
	if m.byUser {
		m.userHistogram(uid).update(d)
	}
	i := int(msgType) - 1000
	if i < 0 || i >= len(m.rpc) {
		return
	}
	t := m.rpc[i].Load()
	if t == nil {
		t = m.newRPCType(msgType, i)
	}
	if vi := int(version>>8) - int(codec.MinVersion>>8); vi >= 0 && vi < len(t.hist) && t.hist[vi] != nil {
		t.hist[vi].Update(d.Seconds())
	}
	if int(path) < len(t.replies) {
		t.replies[path].Inc()
	}
}

func (m *metricsHub) userHistogram(uid uint32) *userHist {
	m.userMu.RLock()
	h := m.userHist[uid]
	m.userMu.RUnlock()
	if h != nil {
		return h
	}
	m.userMu.Lock()
	defer m.userMu.Unlock()
	if h = m.userHist[uid]; h == nil {
		h = &userHist{}
		m.userHist[uid] = h
	}
	return h
}

// writeUserHistograms writes slurm_frontend_rpc_user_duration_seconds
// in Prometheus's histogram form (cumulative buckets, sum, count).
func (m *metricsHub) writeUserHistograms(w io.Writer) {
	m.userMu.RLock()
	uids := make([]uint32, 0, len(m.userHist))
	for uid := range m.userHist {
		uids = append(uids, uid)
	}
	m.userMu.RUnlock()
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	for _, uid := range uids {
		m.userMu.RLock()
		h := m.userHist[uid]
		m.userMu.RUnlock()
		user := m.userName(uid)
		var cum uint64
		for i := range h.buckets {
			cum += h.buckets[i].Load()
			le := "+Inf"
			if i < len(userBuckets) {
				le = strconv.FormatFloat(userBuckets[i].Seconds(), 'g', -1, 64)
			}
			metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rpc_user_duration_seconds_bucket{user=%q,le=%q}`, user, le), cum)
		}
		metrics.WriteCounterFloat64(w, fmt.Sprintf(`slurm_frontend_rpc_user_duration_seconds_sum{user=%q}`, user), float64(h.sumNs.Load())/1e9)
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rpc_user_duration_seconds_count{user=%q}`, user), cum)
	}
}

func (m *metricsHub) newRPCType(msgType uint16, i int) *rpcTypeMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.rpc[i].Load(); t != nil {
		return t
	}
	name := codec.MsgTypeName(msgType)
	t := &rpcTypeMetrics{}
	for vi := range t.hist {
		v := codec.MinVersion + uint16(vi)<<8
		if v > codec.MaxVersion {
			break
		}
		t.hist[vi] = m.set.NewPrometheusHistogramExt(
			fmt.Sprintf(`slurm_frontend_rpc_duration_seconds{type=%q,version=%q}`, name, codec.VersionName(v)), rpcBuckets)
	}
	for p := range t.replies {
		t.replies[p] = m.set.NewCounter(fmt.Sprintf(`slurm_frontend_rpc_replies_total{type=%q,path=%q}`, name, edge.Path(p)))
	}
	m.rpc[i].Store(t)
	return t
}

// observeEngine records one attempt at a Backend.AI manager request.
func (m *metricsHub) observeEngine(op string, d time.Duration, err error) {
	v, ok := m.eng.Load(op)
	if !ok {
		m.mu.Lock()
		if v, ok = m.eng.Load(op); !ok {
			v = &engineOp{hist: m.set.NewPrometheusHistogramExt(
				fmt.Sprintf(`slurm_frontend_engine_request_duration_seconds{engine="backendai",op=%q}`, op), engineBuckets)}
			m.eng.Store(op, v)
		}
		m.mu.Unlock()
	}
	e := v.(*engineOp)
	e.hist.Update(d.Seconds())
	if err == nil {
		return
	}
	kind := engineErrorKind(err)
	c, ok := e.errors.Load(kind)
	if !ok {
		c = m.set.GetOrCreateCounter(fmt.Sprintf(`slurm_frontend_engine_errors_total{engine="backendai",op=%q,kind=%q}`, op, kind))
		e.errors.Store(kind, c)
	}
	c.(*metrics.Counter).Inc()
}

// engineErrorKind sorts a manager failure for the error counter.
func engineErrorKind(err error) string {
	var te *backendai.TransportError
	switch {
	case backendai.IsRateLimited(err):
		return "rate_limited"
	case errors.As(err, &te):
		return "transport"
	case backendai.IsUnavailable(err):
		return "unavailable"
	case backendai.IsAuthFailed(err), backendai.IsForbidden(err):
		return "auth"
	case backendai.IsNotFound(err):
		return "not_found"
	case backendai.IsInvalidParams(err):
		return "invalid_request"
	}
	return "other"
}

// serve answers scrapes on addr; it returns once the listener is bound,
// so a bad address fails the start.
func (m *metricsHub) serve(addr string, logger *log.Logger) (io.Closer, error) {
	m.set.RegisterMetricsWriter(m.writeScraped)
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		m.set.WritePrometheus(w)
		metrics.WriteProcessMetrics(w)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
			logger.Printf("metrics listener %s: %v", addr, err)
		}
	}()
	logger.Printf("metrics on http://%s/metrics", ln.Addr())
	return hs, nil
}

func (m *metricsHub) writeScraped(w io.Writer) {
	if m.stats != nil {
		m.writeRPCMetrics(w)
	}
	if m.byUser {
		m.writeUserHistograms(w)
	}
	if m.srv != nil {
		writeSourceMetrics(w, m.srv)
		writeEdgeMetrics(w, m.srv)
	}
	if m.auth != nil {
		entries, evicted := m.auth.Replay()
		metrics.WriteGaugeUint64(w, "slurm_frontend_munge_replay_cache_entries", entries)
		metrics.WriteCounterUint64(w, "slurm_frontend_munge_replay_cache_evictions_total", evicted)
	}
	if m.nodes != nil {
		writeStepIOMetrics(w, m.nodes)
	}
	if m.ctl != nil {
		writeControllerMetrics(w, m.ctl.Gauges())
	}
}

func (m *metricsHub) userName(uid uint32) string {
	if v, ok := m.users.Load(uid); ok {
		return v.(string)
	}
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := osuser.LookupId(name); err == nil {
		name = u.Username
	}
	m.users.Store(uid, name)
	return name
}

// writeRPCMetrics: sdiag's RPC tables (by message type and by user), the
// same counters sdiag reads, so the two agree; sdiag -r resets both.
func (m *metricsHub) writeRPCMetrics(w io.Writer) {
	for _, r := range m.stats.ByType() {
		name := codec.MsgTypeName(uint16(r.ID))
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rpc_requests_total{type=%q}`, name), uint64(r.Count))
		metrics.WriteCounterFloat64(w, fmt.Sprintf(`slurm_frontend_rpc_seconds_total{type=%q}`, name), float64(r.Usec)/1e6)
		// The exporter's: sdiag's figures as it parses them (µs).
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_rpc_stats{operation=%q}`, name), uint64(r.Count))
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_rpc_stats_avg_time{operation=%q}`, name), r.Usec/max(uint64(r.Count), 1))
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_rpc_stats_total_time{operation=%q}`, name), r.Usec)
	}
	for _, r := range m.stats.ByUser() {
		user := m.userName(r.ID)
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rpc_user_requests_total{user=%q}`, user), uint64(r.Count))
		metrics.WriteCounterFloat64(w, fmt.Sprintf(`slurm_frontend_rpc_user_seconds_total{user=%q}`, user), float64(r.Usec)/1e6)
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_user_rpc_stats{user=%q}`, user), uint64(r.Count))
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_user_rpc_stats_avg_time{user=%q}`, user), r.Usec/max(uint64(r.Count), 1))
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_user_rpc_stats_total_time{user=%q}`, user), r.Usec)
	}
	metrics.WriteGaugeFloat64(w, "slurm_frontend_rpc_stats_reset_time_seconds", float64(m.stats.ResetTime()))
}

func writeSourceMetrics(w io.Writer, srv *edge.Server) {
	snap, kind := srv.Sources()
	hosts := make([]string, 0, len(snap))
	byHost := map[string][3]uint64{}
	for a, c := range snap {
		h := a.String()
		hosts = append(hosts, h)
		byHost[h] = [3]uint64{c.Packets, c.Bytes, c.Conns}
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		c := byHost[h]
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_source_packets_total{host=%q,counter=%q}`, h, kind), c[0])
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_source_bytes_total{host=%q,counter=%q}`, h, kind), c[1])
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_source_connections_total{host=%q,counter=%q}`, h, kind), c[2])
	}
}

// writeEdgeMetrics: the controller port's connections, refusals for a
// credential (by munge's reason) and the rate limits' answers.
func writeEdgeMetrics(w io.Writer, srv *edge.Server) {
	metrics.WriteGaugeUint64(w, "slurm_frontend_connections_open", uint64(max(srv.Open(), 0)))
	fails := srv.AuthFailures()
	reasons := make([]string, 0, len(fails))
	for r := range fails {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_auth_failures_total{reason=%q}`, r), fails[r])
	}
	if backoffs, holds := srv.RateLimited(); backoffs != nil {
		for _, by := range []string{"user", "host"} {
			metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rate_limited_total{limit=%q,action="backoff"}`, by), backoffs[by])
			metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rate_limited_total{limit=%q,action="hold"}`, by), holds[by])
		}
	}
}

// writeStepIOMetrics: every step's task I/O (the bytes of its connections
// to srun, framing included), in all and for each running step on each
// node, by who counted it (the kernel's eBPF program, or the relay).
func writeStepIOMetrics(w io.Writer, nodes *node.Service) {
	tot := nodes.StepIOTotals()
	for _, c := range []string{"ebpf", "userspace"} {
		t := tot[c]
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_step_io_bytes_total{direction="to_srun",counter=%q}`, c), t.Out)
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_step_io_bytes_total{direction="from_srun",counter=%q}`, c), t.In)
	}
	live := nodes.RunningStepIO()
	metrics.WriteGaugeUint64(w, "slurm_frontend_step_io_connections", uint64(len(live)))
	for _, f := range live {
		l := fmt.Sprintf(`job_id="%d",step_id="%d",node=%q,counter=%q`, f.Job, f.Step, f.Node, f.Counter)
		metrics.WriteGaugeUint64(w, `slurm_frontend_running_step_io_bytes{`+l+`,direction="to_srun"}`, f.Out)
		metrics.WriteGaugeUint64(w, `slurm_frontend_running_step_io_bytes{`+l+`,direction="from_srun"}`, f.In)
	}
}

// exporterQueueStates are the job states the exporter has a
// slurm_queue_* gauge for (always written, zero included, as it does).
var exporterQueueStates = []string{"pending", "running", "suspended", "cancelled", "completing", "completed",
	"configuring", "failed", "timeout", "preempted", "node_fail", "out_of_memory"}

var exporterNodeStates = []string{"alloc", "comp", "down", "drain", "fail", "idle", "maint", "mix"}

func writeControllerMetrics(w io.Writer, g ctld.Gauges) {
	sort.Slice(g.Jobs, func(i, j int) bool {
		if g.Jobs[i].State != g.Jobs[j].State {
			return g.Jobs[i].State < g.Jobs[j].State
		}
		return g.Jobs[i].Partition < g.Jobs[j].Partition
	})
	byState := map[string]int{}
	for _, j := range g.Jobs {
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_frontend_jobs{state=%q,partition=%q}`, j.State, j.Partition), uint64(j.N))
		byState[j.State] += j.N
	}
	for _, st := range exporterQueueStates {
		metrics.WriteGaugeUint64(w, "slurm_queue_"+st, uint64(byState[st]))
	}
	metrics.WriteGaugeUint64(w, "slurm_queue_pending_dependency", uint64(g.PendingDependency))
	states := make([]string, 0, len(g.Nodes))
	for st := range g.Nodes {
		states = append(states, st)
	}
	sort.Strings(states)
	total := 0
	for _, st := range states {
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`slurm_frontend_nodes{state=%q}`, st), uint64(g.Nodes[st]))
		total += g.Nodes[st]
	}
	for _, st := range exporterNodeStates {
		metrics.WriteGaugeUint64(w, "slurm_nodes_"+st, uint64(g.Nodes[st]))
	}
	metrics.WriteGaugeUint64(w, "slurm_nodes_total", uint64(total))
	metrics.WriteGaugeUint64(w, "slurm_cpus_alloc", g.CPUsAlloc)
	metrics.WriteGaugeUint64(w, "slurm_cpus_idle", g.CPUsIdle)
	metrics.WriteGaugeUint64(w, "slurm_cpus_other", g.CPUsOther)
	metrics.WriteGaugeUint64(w, "slurm_cpus_total", g.CPUsAlloc+g.CPUsIdle+g.CPUsOther)
	// sdiag's job counters.
	for _, c := range []struct {
		name string
		n    uint32
	}{{"submitted", g.Submitted}, {"started", g.Started}, {"completed", g.Completed}, {"canceled", g.Canceled}, {"failed", g.Failed}} {
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_jobs_total{event=%q}`, c.name), uint64(c.n))
	}
	// The scheduler is Backend.AI's (or the embedded engine's): no
	// cycles here. Threads are what sdiag shows: the open connections.
	metrics.WriteGaugeUint64(w, "slurm_scheduler_threads", uint64(max(g.OpenConnections, 1)))
	metrics.WriteGaugeUint64(w, "slurm_frontend_snapshot_generation", g.SnapshotGen)
	metrics.WriteGaugeFloat64(w, "slurm_frontend_snapshot_age_seconds", time.Since(g.SnapshotBuilt).Seconds())
	metrics.WriteCounterUint64(w, "slurm_frontend_snapshot_rebuilds_total", g.Rebuilds)
	metrics.WriteCounterFloat64(w, "slurm_frontend_snapshot_rebuild_seconds_total", g.RebuildTotal.Seconds())
	metrics.WriteGaugeFloat64(w, "slurm_frontend_snapshot_last_rebuild_seconds", g.RebuildLast.Seconds())
}
