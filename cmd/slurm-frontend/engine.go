package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

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
		engine := local.New(s.cfg, local.WithSpoolDir(filepath.Join(s.stateDir, "spool")), local.WithLogger(logger))
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
		UserAgent: "slurm-frontend/" + Version})
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
