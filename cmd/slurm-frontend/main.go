// Command slurm-frontend serves Slurm's controller protocol to stock Slurm
// clients and does the work on Backend.AI (or the embedded engine).
//
//	slurm-frontend serve [--config FILE] [--state-dir DIR] [--listen HOST:PORT]
//	                     [--munge-key FILE] [--cluster-name NAME]
//	slurm-frontend client-conf [same flags] [--server HOST:PORT]
//	slurm-frontend version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/bpf"
	"github.com/lablup/slurm-frontend/codec/munge"
	"github.com/lablup/slurm-frontend/edge"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/state/memfile"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/backendai/double"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/ctld"
	"github.com/lablup/slurm-frontend/translate/local"
	"github.com/lablup/slurm-frontend/translate/node"
)

// Version is the frontend's own version.
const Version = "0.1.0"

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "shim":
		err = shimMain(os.Args[2:])
	case "bench":
		err = benchMain(os.Args[2:])
	case "client-conf", "print-conf":
		err = clientConf(os.Args[2:], os.Stdout)
	case "audit":
		err = auditMain(os.Args[2:], os.Stdout)
	case "import-slurmdbd":
		err = importSlurmdbd(os.Args[2:], os.Stderr)
	case "backendai-double":
		// A Backend.AI manager test double (loopback only), for trying
		// the Backend.AI engine without a cluster.
		err = double.Main(os.Args[2:])
	case "version", "--version", "-V":
		fmt.Println("slurm-frontend", Version)
	case "help", "-h", "--help":
		usage(os.Stdout)
	default:
		usage(os.Stderr)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "slurm-frontend:", err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  slurm-frontend serve [--config FILE] [--state-dir DIR] [--listen HOST:PORT] [--munge-key FILE] [--cluster-name NAME]
  slurm-frontend client-conf [same flags] [--server HOST:PORT]
                                   (login nodes' slurm.conf; with SlurmctldParameters=enable_configless
                                    the server serves the same to 'sackd --conf-server HOST:PORT')
  slurm-frontend bench [flags]      (load generator; see 'slurm-frontend bench -h')
  slurm-frontend backendai-double [flags]  (a Backend.AI manager test double on loopback)
  slurm-frontend audit [--config FILE] [--backend ...] [--release 22.05|24.11|26.05] [--user NAME]
                       [--sacct FILE | --history-state DIR] [--json] [--html FILE] [-v] PATH...
                                   (which job scripts run unchanged, with a documented difference, or are refused)
  slurm-frontend import-slurmdbd --dsn DSN [--config FILE] [--state-dir DIR] [--cluster NAME]
                                   (a slurmdbd database's job history into the state dir; server stopped)
engine flags of serve and client-conf:
  --backend local|backendai --backendai-endpoint URL --backendai-keypair FILE
  slurm-frontend version
`)
}

// settings are the config file plus flag overrides.
type settings struct {
	cfg         *conf.Config
	stateDir    string
	listen      string
	mungeKey    string
	clusterName string
	server      string
	backend     string // "local" or "backendai"
	baiEndpoint string
	baiKeypair  string // file: access key, then secret key
	// metricsListen: the Prometheus endpoint's address, "" for none.
	metricsListen string
	// ioAccounting: how step I/O is counted, "auto" (eBPF, else the
	// relay) or "userspace".
	ioAccounting string
	// frontendIO: the controller port's transport, edge.IOEpoll or
	// edge.IOUring.
	frontendIO string
	// engineObserve: told of every Backend.AI manager request (metrics).
	engineObserve func(op string, d time.Duration, err error)
	// acctHost is the config's own AccountingStorageHost ("" for none:
	// the server's address).
	acctHost string
}

func loadSettings(name string, args []string, withServer bool) (*settings, error) {
	s, _, err := loadSettingsWith(name, args, withServer, nil)
	return s, err
}

// loadSettingsWith is loadSettings for a command with flags of its own
// (registered by extra) and arguments (returned).
func loadSettingsWith(name string, args []string, withServer bool, extra func(*flag.FlagSet)) (*settings, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if extra != nil {
		extra(fs)
	}
	cfgPath := fs.String("config", "", "cluster definition in slurm.conf syntax")
	stateDir := fs.String("state-dir", "", "where jobs are kept (default /var/lib/slurm-frontend)")
	listen := fs.String("listen", "", "controller address (default 0.0.0.0:SlurmctldPort or 0.0.0.0:6817)")
	mungeKey := fs.String("munge-key", "", "MUNGE key file (default /etc/munge/munge.key)")
	cluster := fs.String("cluster-name", "", "cluster name (default from config, else \"cluster\")")
	sendfile := fs.Bool("sendfile", true, "keep large job listings in sealed memory files and send them with sendfile (false: heap and write)")
	backend := fs.String("backend", "", "engine: local (embedded, the default) or backendai")
	baiEndpoint := fs.String("backendai-endpoint", "", "Backend.AI manager URL (with --backend backendai)")
	baiKeypair := fs.String("backendai-keypair", "", "file holding the Backend.AI superadmin access key and secret key")
	metricsListen := fs.String("metrics-listen", "", "Prometheus metrics on this address (HOST:PORT; off by default)")
	frontendIO := fs.String("io", "", "controller port transport: epoll (the default) or uring (io_uring; epoll where the kernel refuses it)")
	var server *string
	if withServer {
		server = fs.String("server", "", "address login nodes use to reach this server (HOST:PORT)")
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	memfile.SetEnabled(*sendfile)
	s := &settings{}
	if *cfgPath != "" {
		// ParseFile follows Include lines as slurmctld does; its
		// errors name the file and line.
		var err error
		if s.cfg, err = conf.ParseFile(*cfgPath); err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
	} else {
		s.cfg = conf.New()
	}
	s.acctHost = s.cfg.Get("AccountingStorageHost", "")
	pick := func(flagVal, key, def string) string {
		if flagVal != "" {
			return flagVal
		}
		return s.cfg.Get(key, def)
	}
	port := s.cfg.Get("SlurmctldPort", "6817")
	s.stateDir = pick(*stateDir, "FrontendStateDir", "/var/lib/slurm-frontend")
	if abs, err := filepath.Abs(s.stateDir); err == nil {
		// Shims and job paths are made from it after chdirs of their own.
		s.stateDir = abs
	}
	s.listen = pick(*listen, "FrontendListen", "0.0.0.0:"+port)
	s.mungeKey = pick(*mungeKey, "FrontendMungeKey", "/etc/munge/munge.key")
	s.clusterName = pick(*cluster, "ClusterName", "cluster")
	s.backend = strings.ToLower(pick(*backend, "FrontendBackend", "local"))
	s.baiEndpoint = pick(*baiEndpoint, "FrontendBackendAIEndpoint", "")
	s.baiKeypair = pick(*baiKeypair, "FrontendBackendAIKeypair", "/etc/slurm-frontend/backendai.keypair")
	s.metricsListen = pick(*metricsListen, "FrontendMetricsListen", "")
	var err error
	if s.frontendIO, err = edge.ParseIO(pick(*frontendIO, "FrontendIO", edge.IOEpoll)); err != nil {
		return nil, nil, fmt.Errorf("--io (FrontendIO=): %w", err)
	}
	s.ioAccounting = strings.ToLower(s.cfg.Get("FrontendIOAccounting", "auto"))
	if s.ioAccounting != "auto" && s.ioAccounting != "userspace" {
		return nil, nil, fmt.Errorf("FrontendIOAccounting=%s: auto (eBPF where the kernel allows) or userspace", s.ioAccounting)
	}
	switch s.backend {
	case "local":
	case "backendai", "backend.ai":
		s.backend = "backendai"
		if s.baiEndpoint == "" {
			return nil, nil, errors.New("--backend backendai needs --backendai-endpoint (or FrontendBackendAIEndpoint=)")
		}
		if s.cfg.Get("GresTypes", "") == "" {
			// Agents with GPUs come and go: the clients must know the
			// gres names they may ask for (they refuse others before
			// sending): whole GPUs, and fractions as mps or shard.
			s.cfg.Set("GresTypes", "gpu,mps,shard")
		}
	default:
		return nil, nil, fmt.Errorf("--backend %q: local or backendai", s.backend)
	}
	s.cfg.Set("ClusterName", s.clusterName)
	s.cfg.Set("FrontendStateDir", s.stateDir)
	if *cfgPath != "" {
		if abs, err := filepath.Abs(*cfgPath); err == nil {
			s.cfg.Set("FrontendConfigPath", abs)
		}
	}
	if _, p, err := net.SplitHostPort(s.listen); err == nil {
		s.cfg.Set("SlurmctldPort", p)
	} else {
		return nil, nil, fmt.Errorf("--listen %q: %v", s.listen, err)
	}
	if server != nil {
		s.server = *server
	}
	return s, fs.Args(), nil
}

func serve(args []string) error {
	s, err := loadSettings("serve", args, false)
	if err != nil {
		return err
	}
	level, err := parseSlurmLevel(s.cfg.Get("SlurmctldDebug", "info"))
	if err != nil {
		return err
	}
	lg, err := newLogging(os.Stderr, s.cfg.Get("FrontendLogFormat", "text"), level)
	if err != nil {
		return err
	}
	logger := lg.std
	key, err := munge.LoadKey(s.mungeKey)
	if err != nil {
		return fmt.Errorf("munge key: %w", err)
	}
	store, err := state.Open(s.stateDir)
	if err != nil {
		return err
	}
	defer func() {
		// A store that cannot be closed safely (its file system full or
		// read-only) says so; its log is replayed at the next start.
		if err := store.Close(); err != nil {
			logger.Printf("%v", err)
		}
	}()
	var hub *metricsHub
	if s.metricsListen != "" {
		hub = newMetricsHub(strings.EqualFold(s.cfg.Get("FrontendMetricsUserHistograms", "no"), "yes"))
		s.engineObserve = hub.observeEngine
	}
	engine, exec, closeEngine, err := openEngine(s, logger)
	if err != nil {
		return err
	}
	defer closeEngine()
	stats := state.NewRPCStats()
	dbdListen := setAccounting(s)
	host, addr, port := serverIdentity(s.listen, "")
	slurmUser, slurmUID := currentUser()
	auth := edge.NewMungeAuth(key, uint32(os.Getuid()), groups())
	caller := &edge.Caller{Signer: auth}
	// The nodes' stand-ins (srun's slurmd), where the engine runs steps.
	nodes := &node.Service{Call: caller, Log: logger, SlurmUID: slurmUID}
	if s.ioAccounting == "auto" {
		if m, err := bpf.NewFlowMeter(); err != nil {
			logger.Printf("step I/O accounting in userspace: %v", err)
		} else {
			nodes.Meter = m
			defer m.Close()
			logger.Printf("step I/O accounting: eBPF (tcx)")
		}
	} else {
		logger.Printf("step I/O accounting in userspace (FrontendIOAccounting=userspace)")
	}
	opts := ctld.Options{
		Conf: s.cfg, Store: store, Backend: engine, Exec: exec, Stats: stats,
		ClusterName: s.clusterName, ServerHost: host, ServerAddr: addr, Port: port,
		SlurmUser: slurmUser, SlurmUID: slurmUID, Log: logger, Caller: caller,
		SetDebugLevel: lg.setLevel,
		Login:         loginConf(s, true),
	}
	if s.backend != "backendai" {
		// Outside the state directory (root's alone: the store's files
		// are in it), one per server on the host, as slurmd's
		// /run/slurm/conf.
		opts.NodeConfDir = s.cfg.Get("FrontendNodeConfDir", fmt.Sprintf("/run/slurm-frontend/conf-%d", port))
	}
	// scontrol reconfigure and shutdown (reconfigure.go). After a
	// reconfigure: the log level and rate limits of the new file (a
	// restarted slurmctld's), and the files pushed to configless nodes.
	shutdown := newShutdownRequest()
	opts.Reload, opts.Shutdown = reloader(args, s, logger), shutdown.request
	var ctl *ctld.Controller
	var srv *edge.Server
	opts.OnReconfigure = func() {
		cfg := ctl.Config()
		if level, err := parseSlurmLevel(cfg.Get("SlurmctldDebug", "info")); err == nil {
			lg.setLevel(level)
		} else {
			logger.Printf("reconfigure: %v: the log level stays", err)
		}
		if rl, err := rateLimit(cfg, slurmUID); err == nil {
			srv.SetRateLimit(rl)
		} else {
			logger.Printf("reconfigure: %v: the rate limits stay", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if n := ctl.PushConfig(ctx); n > 0 {
			logger.Printf("reconfigure: the new configuration pushed to %d configless nodes", n)
		}
	}
	se, single := exec.(translate.StepExecutor)
	ge, group := exec.(translate.StepGroupExecutor)
	steps := single || group
	if steps {
		opts.CredKey, opts.Steps = credKey(s.mungeKey), nodes
		nodes.Exec, nodes.Group = se, ge
	}
	ctl, err = ctld.New(context.Background(), opts)
	if err != nil {
		return err
	}
	nodes.Ctl = ctl
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	ctl.Start(runCtx)
	if addr := s.cfg.Get("FrontendDebugListen", ""); addr != "" {
		// Go's profiler, for an operator chasing where the time goes:
		// opt-in, and meant for a loopback address.
		go func() { logger.Printf("debug listener %s: %v", addr, http.ListenAndServe(addr, nil)) }()
	}
	// sacct's slurmdbd.
	dbd, err := edge.NewDBDServer(dbdListen, ctl, auth, logger)
	if err != nil {
		return fmt.Errorf("accounting listener %s (AccountingStoragePort): %w", dbdListen, err)
	}
	defer dbd.Close()
	if steps {
		ns := edge.NewNodeServer(nodeEndpoints(s), nodeHandler{nodes}, auth, auth, logger)
		defer ns.Close()
	}
	rl, err := rateLimit(s.cfg, slurmUID)
	if err != nil {
		return err
	}
	if rl != nil {
		logger.Printf("RPC rate limiting enabled: per user %d tokens, %d every %v (table %d); per host %d tokens, %d every %v",
			rl.User.Size, rl.User.Rate, rl.User.Period, rl.TableSize, rl.Host.Size, rl.Host.Rate, rl.Host.Period)
	}
	ecfg := edge.Config{Addr: s.listen, RateLimit: rl, Slog: lg.log, IO: s.frontendIO}
	if hub != nil {
		ecfg.Observer = hub
	}
	srv = edge.New(ecfg, edge.AdaptController(ctl), auth, auth, stats, logger)
	errc := make(chan error, 1)
	go func() { errc <- srv.Run() }()
	select {
	case err := <-srv.Ready():
		if err != nil {
			return fmt.Errorf("listen %s: %w", s.listen, err)
		}
	case err := <-errc:
		return fmt.Errorf("listen %s: %w", s.listen, err)
	}
	if hub != nil {
		hub.srv, hub.auth, hub.stats, hub.ctl = srv, auth, stats, ctl
		if steps {
			hub.nodes = nodes
		}
		ms, err := hub.serve(s.metricsListen, logger)
		if err != nil {
			return err
		}
		defer ms.Close()
	}
	if engine.Name() == "local" {
		// slurmctld says as much ("default partition not set"); without
		// it the first sign is sbatch refused.
		if len(s.cfg.Partitions) == 0 {
			logger.Printf("warning: the config defines nodes but no partition (no PartitionName= line): every submission is refused (No partition specified or system default partition)")
		} else if !slices.ContainsFunc(s.cfg.Partitions, func(p conf.Partition) bool { return p.Default }) {
			logger.Printf("warning: the config sets no default partition (Default=YES): a submission without -p/--partition is refused (No partition specified or system default partition)")
		}
	}
	logger.Printf("ready: cluster %s, controller on %s, accounting on %s, %d nodes, %d partitions, %d jobs, next job id %d, engine %s",
		s.clusterName, s.listen, dbd.Addr(), len(s.cfg.Nodes), len(s.cfg.Partitions), ctl.Snapshot().NumJobs(), store.NextID(), engine.Name())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case <-shutdown.C:
		logger.Printf("shutdown requested (scontrol shutdown): stopping; jobs keep running")
	case err := <-errc:
		if err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The steps' I/O goes through this process: they end with it, and
	// their sruns are told so while the controller still answers them.
	ctl.StopSteps(ctx)
	_ = srv.Stop(ctx)
	logger.Printf("stopped")
	return nil
}

// rateLimit is SlurmctldParameters' rl_* settings for the edge; nil when
// off. Root and the SlurmUser are exempt, as slurmctld exempts them.
func rateLimit(cfg *conf.Config, slurmUID uint32) (*edge.RateLimit, error) {
	rl, err := cfg.RateLimits()
	if err != nil {
		return nil, err
	}
	if rl.User.Size == 0 && rl.Host.Size == 0 {
		return nil, nil
	}
	bucket := func(b conf.Bucket) edge.Bucket {
		return edge.Bucket{Size: b.Size, Rate: b.Rate, Period: time.Duration(b.Period) * time.Second}
	}
	// A held 22.05 request must be answered well within the clients'
	// MessageTimeout (default 10 s), or they give up.
	msgTimeout, _ := strconv.Atoi(cfg.Get("MessageTimeout", "10"))
	hold := min(4*time.Second, time.Duration(max(msgTimeout, 1))*time.Second*4/10)
	return &edge.RateLimit{
		User: bucket(rl.User), TableSize: int(rl.TableSize), LogFreq: rl.LogFreq,
		Host: bucket(rl.Host), MaxHold: hold,
		Exempt: func(uid uint32) bool { return uid == 0 || uid == slurmUID },
	}, nil
}

func currentUser() (string, uint32) {
	uid := os.Getuid()
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username, uint32(uid)
	}
	return strconv.Itoa(uid), uint32(uid)
}

func groups() []uint32 {
	gs, _ := os.Getgroups()
	out := []uint32{uint32(os.Getgid())}
	for _, g := range gs {
		out = append(out, uint32(g))
	}
	return out
}

// serverIdentity derives the host name and address login nodes use.
func serverIdentity(listen, server string) (host, addr string, port uint16) {
	h, p, _ := net.SplitHostPort(listen)
	if server != "" {
		if sh, sp, err := net.SplitHostPort(server); err == nil {
			h, p = sh, sp
		}
	}
	pn, _ := strconv.Atoi(p)
	port = uint16(pn)
	if h == "" || h == "0.0.0.0" || h == "::" {
		hn, _ := os.Hostname()
		if i := strings.IndexByte(hn, '.'); i > 0 {
			hn = hn[:i]
		}
		return hn, "127.0.0.1", port
	}
	if ip := net.ParseIP(h); ip != nil {
		return "slurm-frontend", h, port
	}
	return h, h, port
}

// clientConf prints the slurm.conf a login node needs.
func clientConf(args []string, w io.Writer) error {
	s, err := loadSettings("client-conf", args, true)
	if err != nil {
		return err
	}
	if s.backend == "backendai" {
		// Nodes and partitions are Backend.AI's agents and resource
		// groups, unless the config names them.
		if err := topologyConf(s); err != nil {
			return err
		}
	} else {
		local.New(s.cfg) // fills in this host when the config has no nodes
	}
	setAccounting(s)
	// The same text the controller serves configless login nodes.
	fmt.Fprint(w, loginConf(s, false).SlurmConf(s.cfg, s.cfg.Nodes, s.cfg.Partitions, ""))
	return nil
}

var _ = errors.New
