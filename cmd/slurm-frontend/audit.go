package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/audit"
	"github.com/lablup/slurm-frontend/translate/ctld"
)

// auditMain is "slurm-frontend audit": the site's job scripts (and
// optionally its sacct history) classified against this configuration
// and engine by the server's own submit-time checks. It keeps nothing:
// the controller it asks runs on a state directory of its own, removed
// at the end, and starts no job.
func auditMain(args []string, stdout io.Writer) error {
	var (
		release, userName, sacct, htmlOut, histState string
		asJSON, verbose, format                      bool
	)
	s, paths, err := loadSettingsWith("audit", args, false, func(fs *flag.FlagSet) {
		fs.StringVar(&release, "release", "24.11", "client release the scripts are read as (22.05, 24.11 or 26.05)")
		fs.StringVar(&userName, "user", "", "submit every job as this user (default: each script's owner)")
		fs.StringVar(&sacct, "sacct", "", "a site's job history: sacct --parsable2 output (see --sacct-format)")
		fs.StringVar(&histState, "history-state", "", "a state directory's job history (what import-slurmdbd read from a slurmdbd database); the server using it must be stopped")
		fs.BoolVar(&format, "sacct-format", false, "print the sacct -o field list the history audit reads, and exit")
		fs.BoolVar(&asJSON, "json", false, "the report as JSON on standard output")
		fs.StringVar(&htmlOut, "html", "", "also write a self-contained HTML report to this file")
		fs.BoolVar(&verbose, "v", false, "list every job, not only those that differ or are refused")
	})
	if err != nil {
		return err
	}
	if format {
		fmt.Fprintln(stdout, audit.HistoryColumns)
		return nil
	}
	if len(paths) == 0 && sacct == "" && histState == "" {
		return errors.New("audit: name the job scripts (files or directories), or a history with --sacct or --history-state")
	}
	if sacct != "" && histState != "" {
		return errors.New("audit: --sacct or --history-state, not both")
	}
	var version uint16
	for _, v := range []uint16{codec.V22_05, codec.V24_11, codec.V26_05} {
		if codec.VersionName(v) == release {
			version = v
		}
	}
	if version == 0 {
		return fmt.Errorf("audit: --release %q: 22.05, 24.11 or 26.05", release)
	}
	a := &audit.Auditor{Version: version, Env: os.Environ()}
	if userName != "" {
		u, err := user.Lookup(userName)
		if err != nil {
			return fmt.Errorf("audit: --user: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		u32, g32 := uint32(uid), uint32(gid)
		a.UID, a.GID = &u32, &g32
	}
	if g := s.cfg.Get("GresTypes", ""); g != "" {
		a.GresTypes = strings.Split(g, ",")
	}
	ctl, done, err := auditController(s)
	if err != nil {
		return err
	}
	defer done()
	a.Check = ctl

	r := &audit.Report{Generated: time.Now()}
	if len(paths) > 0 {
		if r, err = a.Scripts(paths); err != nil {
			return err
		}
	}
	r.Config = s.cfg.Get("FrontendConfigPath", "(built-in default)")
	r.Backend = s.backend
	if s.backend == "backendai" {
		r.Backend = "Backend.AI " + s.baiEndpoint
	} else {
		r.Backend = "embedded"
	}
	r.Release = release
	if sacct != "" {
		f, err := os.Open(sacct)
		if err != nil {
			return fmt.Errorf("audit: --sacct: %w", err)
		}
		h, err := a.History(f, sacct)
		f.Close()
		if err != nil {
			return fmt.Errorf("audit: --sacct: %w", err)
		}
		r.History = h
	}
	if histState != "" {
		if st, err := os.Stat(histState); err != nil || !st.IsDir() {
			return fmt.Errorf("audit: --history-state %s: not a state directory", histState)
		}
		store, err := state.Open(histState)
		if err != nil {
			return fmt.Errorf("audit: --history-state: %w", err)
		}
		h, err := a.HistoryStore(store, histState)
		store.Close()
		if err != nil {
			return fmt.Errorf("audit: --history-state: %w", err)
		}
		r.History = h
	}
	if htmlOut != "" {
		f, err := os.Create(htmlOut)
		if err != nil {
			return err
		}
		if err := audit.WriteHTML(f, r); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if asJSON {
		return audit.WriteJSON(stdout, r)
	}
	return audit.WriteText(stdout, r, verbose)
}

// auditController is a controller on the site's configuration and
// engine, with a state directory of its own: the checks without the
// server. The engine is asked for its nodes (the partitions' sizes) and
// nothing else; no job is handed to it.
func auditController(s *settings) (*ctld.Controller, func(), error) {
	dir, err := os.MkdirTemp("", "slurm-frontend-audit-")
	if err != nil {
		return nil, nil, err
	}
	s.stateDir = dir
	s.cfg.Set("FrontendStateDir", dir)
	logger := log.New(io.Discard, "", 0)
	store, err := state.Open(filepath.Join(dir, "state"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	engine, exec, closeEngine, err := openEngine(s, logger)
	if err != nil {
		store.Close()
		os.RemoveAll(dir)
		return nil, nil, err
	}
	slurmUser, slurmUID := currentUser()
	ctl, err := ctld.New(context.Background(), ctld.Options{
		Conf: s.cfg, Store: store, Backend: engine, Exec: exec, Stats: state.NewRPCStats(),
		ClusterName: s.clusterName, SlurmUser: slurmUser, SlurmUID: slurmUID, Log: logger,
	})
	done := func() {
		closeEngine()
		store.Close()
		os.RemoveAll(dir)
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return ctl, done, nil
}
