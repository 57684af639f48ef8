package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/backendai"
	"github.com/lablup/slurm-frontend/translate/ctld"
	"github.com/lablup/slurm-frontend/translate/local"
)

// openEngine starts the engine the settings name: the embedded one, or a
// Backend.AI manager. exec is nil when the embedded engine cannot run
// jobs here (they stay pending, and the log says why).
func openEngine(s *settings, logger *log.Logger) (translate.Backend, translate.Executor, func(), error) {
	if s.backend != "backendai" {
		opts := []local.Option{local.WithSpoolDir(filepath.Join(s.stateDir, "spool")), local.WithLogger(logger)}
		if argv := shimCommand(s.cfg.Get("FrontendShim", ""), logger); argv != nil {
			opts = append(opts, local.WithShimCommand(argv...))
		}
		engine := local.New(s.cfg, opts...)
		if err := engine.Err(); err != nil {
			logger.Printf("jobs will stay pending: %v", err)
			return engine, nil, func() { engine.Close() }, nil
		}
		return engine, engine, func() { engine.Close() }, nil
	}
	e, err := backendAIEngine(s, logger)
	if err != nil {
		return nil, nil, nil, err
	}
	return e, e, func() { e.Close() }, nil
}

// backendAIEngine connects to the manager with the admin keypair and
// checks, before serving, that the keypair is good.
func backendAIEngine(s *settings, logger *log.Logger) (*backendai.Engine, error) {
	c, err := backendAIClient(s, logger, false)
	if err != nil {
		return nil, err
	}
	return backendai.NewEngine(backendai.EngineConfig{Client: c, Cluster: s.clusterName,
		Domain: s.cfg.Get("FrontendBackendAIDomain", "default"), Project: s.cfg.Get("FrontendBackendAIProject", "default"),
		Image: s.cfg.Get("FrontendImage", ""), Mounts: splitList(s.cfg.Get("FrontendMounts", "")), Logger: logger})
}

// backendAIClient connects to the manager and checks the keypair.
func backendAIClient(s *settings, logger *log.Logger, mustReach bool) (*backendai.Client, error) {
	ak, sk, err := readKeypair(s.baiKeypair)
	if err != nil {
		return nil, err
	}
	c, err := backendai.New(backendai.Config{Endpoint: s.baiEndpoint, AccessKey: ak, SecretKey: sk, Logger: logger,
		UserAgent: "slurm-frontend/" + Version, Observe: s.engineObserve})
	if err != nil {
		return nil, fmt.Errorf("backend.ai: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.Probe(ctx)
	if err != nil && !mustReach && (backendai.IsRetryable(err) || errors.Is(err, context.DeadlineExceeded) || isTransport(err)) {
		// Down or unreachable now: serve the jobs the store holds and
		// the last view of the cluster; the engine connects when it can
		// (a restart during a manager outage must not take squeue down).
		logger.Printf("backend.ai manager %s unreachable (%v): serving from the state store; the engine retries", s.baiEndpoint, err)
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("backend.ai manager %s: %w", s.baiEndpoint, err)
	}
	if _, err := c.Agents(ctx, backendai.AgentFilter{PageSize: 1}); err != nil {
		return nil, fmt.Errorf("backend.ai manager %s: the keypair in %s cannot list agents (a superadmin keypair is needed): %w", s.baiEndpoint, s.baiKeypair, err)
	}
	logger.Printf("backend.ai manager %s: %s (API %s)", s.baiEndpoint, v.Manager, v.APIVersion)
	return c, nil
}

// readKeypair reads "ACCESS_KEY\nSECRET_KEY\n" (or the two on one line).
// The file is a superadmin credential: it must be the server's own and
// not readable by others.
func readKeypair(path string) (string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("backend.ai keypair: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", fmt.Errorf("backend.ai keypair: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", "", fmt.Errorf("backend.ai keypair %s: mode %v: it must not be readable by group or others (chmod 600)", path, st.Mode().Perm())
	}
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	fields := strings.Fields(string(b[:n]))
	if len(fields) != 2 {
		return "", "", errors.New("backend.ai keypair " + path + ": want the access key and the secret key")
	}
	return fields[0], fields[1], nil
}

// topologyConf fills the config's nodes and partitions from the manager
// where the config names none (client-conf).
func topologyConf(s *settings) error {
	c, err := backendAIClient(s, log.New(io.Discard, "", 0), true)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topo, err := backendai.Topology(ctx, c)
	if err != nil {
		return fmt.Errorf("backend.ai topology: %w", err)
	}
	s.cfg.Nodes, s.cfg.Partitions = ctld.ClusterOf(s.cfg, topo)
	return nil
}

// splitList splits a comma list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func isTransport(err error) bool {
	var te *backendai.TransportError
	return errors.As(err, &te)
}

// shimCommand picks the binary that supervises each job and srun task:
// slurm-frontend-shim (FrontendShim=PATH, or the one next to this
// executable), which starts in about half the time of this binary (it
// starts once per job and once per srun task), or nil for this binary's
// own "shim". The server runs it as root for every job, so it is used
// only if no one but root can have written it or any directory above it,
// and only if it carries this binary's shim (same protocol and revision).
func shimCommand(path string, logger *log.Logger) []string {
	named := path != ""
	if !named {
		exe, err := os.Executable()
		if err != nil {
			return nil
		}
		path = filepath.Join(filepath.Dir(exe), "slurm-frontend-shim")
		if _, err := os.Stat(path); err != nil {
			return nil
		}
	}
	real, err := checkShim(path)
	if err != nil {
		logger.Printf("not using %s as the jobs' shim (this binary's own instead): %v", path, err)
		return nil
	}
	// The checked file itself, not a link to it: a link's directory is
	// not checked, and whoever can write there could point it elsewhere.
	return []string{real, "shim"}
}

// checkShim returns the file path names (links resolved) if it can be
// trusted as the jobs' shim.
func checkShim(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	for p, first := real, true; ; p, first = filepath.Dir(p), false {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return "", err
		}
		if first && (st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0) {
			return "", fmt.Errorf("not an executable file")
		}
		// A sticky directory (/tmp) lets no one else replace what root owns in it.
		if st.Uid != 0 || st.Mode&0o022 != 0 && (first || st.Mode&unix.S_ISVTX == 0) {
			return "", fmt.Errorf("%s can be written by others than root", p)
		}
		if p == "/" {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, real, "shim", "version").Output()
	if err != nil {
		return "", fmt.Errorf("shim version: %v", err)
	}
	if got, want := strings.TrimSpace(string(out)), local.ShimIdentity(); got != want {
		return "", fmt.Errorf("it carries another shim (%q, this binary %q)", got, want)
	}
	return real, nil
}
