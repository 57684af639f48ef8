package main

import (
	"log"
	"sync"

	"github.com/lablup/slurm-frontend/translate/conf"
)

// reloader reads the config again for scontrol reconfigure: the same
// file and flags as at start (loadSettings), so flag overrides stay. What
// the running server is bound to (its addresses, state directory, MUNGE
// key, engine, cluster name) takes effect at the next start only: it is
// logged, and the rest of the new config applies.
func reloader(args []string, started *settings, logger *log.Logger) func() (*conf.Config, error) {
	return func() (*conf.Config, error) {
		s, err := loadSettings("serve", args, false)
		if err != nil {
			return nil, err
		}
		// Values the server refuses at start are refused here too, the
		// old config kept (26.05's slurmctld does not start on them).
		if _, err := s.cfg.RateLimits(); err != nil {
			return nil, err
		}
		if _, err := parseSlurmLevel(s.cfg.Get("SlurmctldDebug", "info")); err != nil {
			return nil, err
		}
		// What serve fills in at start, so that scontrol show config
		// does not change for it.
		setAccounting(s)
		for _, d := range []struct{ what, was, now string }{
			{"listen address", started.listen, s.listen},
			{"state directory", started.stateDir, s.stateDir},
			{"MUNGE key", started.mungeKey, s.mungeKey},
			{"engine", started.backend, s.backend},
			{"Backend.AI endpoint", started.baiEndpoint, s.baiEndpoint},
			{"Backend.AI keypair", started.baiKeypair, s.baiKeypair},
			{"cluster name", started.clusterName, s.clusterName},
			{"metrics address", started.metricsListen, s.metricsListen},
			{"accounting port", started.cfg.Get("AccountingStoragePort", ""), s.cfg.Get("AccountingStoragePort", "")},
		} {
			if d.was != d.now {
				logger.Printf("reconfigure: the %s changed (%q -> %q): it takes effect at the next start", d.what, d.was, d.now)
			}
		}
		return s.cfg, nil
	}
}

// shutdownRequest is scontrol shutdown's way to the serve loop: the
// first call closes C.
type shutdownRequest struct {
	once sync.Once
	C    chan struct{}
}

func newShutdownRequest() *shutdownRequest { return &shutdownRequest{C: make(chan struct{})} }

func (r *shutdownRequest) request() { r.once.Do(func() { close(r.C) }) }
