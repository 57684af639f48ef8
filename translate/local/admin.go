package local

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Node administration on the embedded engine: nodes taken out of
// scheduling (translate.Scheduling, Slurm's drain) and a config read
// again (translate.Reconfigurer, scontrol reconfigure).
//
// A node out of scheduling keeps its running sessions; the scheduler
// places nothing new there, and a session that can only run there waits
// (it is not failed: the node comes back). The set is kept in the spool
// (fUnschedulable), as Backend.AI's manager keeps an agent's schedulable
// flag in its database, so that a restart never places a session on a
// drained node before the controller could say so again.

// fUnschedulable is the spool file holding the nodes out of scheduling
// (a JSON list of names).
const fUnschedulable = "unschedulable.json"

// SetSchedulable takes nodes out of scheduling (false) or back (true).
// Unknown names are an error wrapping translate.ErrNoAgent; the known
// ones are changed all the same.
func (e *Engine) SetSchedulable(ctx context.Context, nodes []string, schedulable bool) error {
	e.mu.Lock()
	var unknown []string
	next := make(map[string]bool, len(e.off)+len(nodes))
	for n := range e.off {
		next[n] = true
	}
	for _, n := range nodes {
		if e.cfg.Node(n) == nil {
			unknown = append(unknown, n)
			continue
		}
		if schedulable {
			delete(next, n)
		} else {
			next[n] = true
		}
	}
	var err error
	if e.x != nil {
		// Durable before it is acted on: a crash right after never
		// forgets a drain the controller was told of.
		err = e.x.setUnschedulable(next)
	}
	if err == nil {
		e.off = next
	}
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("embedded engine: recording the nodes out of scheduling: %w", err)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("embedded engine: %v: %w", unknown, translate.ErrNoAgent)
	}
	return nil
}

// Reconfigure takes a newly read config: its nodes and partitions are
// those the engine advertises and places sessions on from now on.
// Sessions running on nodes the new config no longer has run on; what
// they hold is forgotten with the node.
func (e *Engine) Reconfigure(cfg *conf.Config) error {
	if len(cfg.Nodes) == 0 {
		AddThisHost(cfg)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg = cfg
	off := make(map[string]bool, len(e.off)) // a new map: Topology reads the old one unlocked
	for n := range e.off {
		if cfg.Node(n) != nil {
			off[n] = true
		}
	}
	e.off = off
	if e.x != nil {
		e.x.reconfigure(cfg, e.off)
	}
	return nil
}

// loadUnschedulable reads the spool's set (empty when none).
func loadUnschedulable(spool string) map[string]bool {
	out := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(spool, fUnschedulable))
	if err != nil {
		return out
	}
	var names []string
	if json.Unmarshal(b, &names) == nil {
		for _, n := range names {
			out[n] = true
		}
	}
	return out
}

// setUnschedulable records off in the spool and has the scheduler
// honour it.
func (x *executor) setUnschedulable(off map[string]bool) error {
	names := make([]string, 0, len(off))
	for n := range off {
		names = append(names, n)
	}
	sort.Strings(names)
	b, _ := json.Marshal(names)
	if err := writeFileAtomic(filepath.Join(x.spool, fUnschedulable), b, 0o600, true); err != nil {
		return spoolErr(err)
	}
	x.mu.Lock()
	x.pl.setHeld(off)
	x.mu.Unlock()
	x.kickSched()
	return nil
}

// reconfigure replaces the placer with one over cfg, keeping what the
// live sessions hold.
func (x *executor) reconfigure(cfg *conf.Config, off map[string]bool) {
	x.mu.Lock()
	pl := newPlacer(cfg)
	for _, s := range x.sessions {
		if s.alloc != nil && s.final == nil {
			pl.reserve(s.alloc)
		}
	}
	pl.setHeld(off)
	x.pl = pl
	x.mu.Unlock()
	x.kickSched()
}

// setHeld marks the nodes in off as out of scheduling, the others in.
func (p *placer) setHeld(off map[string]bool) {
	for name, n := range p.nodes {
		n.held = off[name]
	}
}
