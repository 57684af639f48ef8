package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/slurmdbd"
)

// import-slurmdbd: an existing slurmdbd database's job history into the
// state dir, so sacct keeps showing a site's years of jobs after the
// switch. Run it with the server stopped (the store is the server's);
// running it again adds only what is new.
func importSlurmdbd(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("import-slurmdbd", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "the server's config (for FrontendStateDir and ClusterName)")
	stateDir := fs.String("state-dir", "", "the server's state dir (default FrontendStateDir, else /var/lib/slurm-frontend)")
	dsn := fs.String("dsn", "", "the slurmdbd database: USER[:PASS]@tcp(HOST:3306)/slurm_acct_db or USER@unix(SOCKET)/slurm_acct_db")
	cluster := fs.String("cluster", "", "the cluster's name in the database (default: the config's ClusterName if given, else the only cluster there)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" {
		return errors.New("import-slurmdbd needs --dsn")
	}
	cfg := conf.New()
	if *cfgPath != "" {
		var err error
		if cfg, err = conf.ParseFile(*cfgPath); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		if *cluster == "" {
			*cluster = cfg.Get("ClusterName", "")
		}
	}
	dir := *stateDir
	if dir == "" {
		dir = cfg.Get("FrontendStateDir", "/var/lib/slurm-frontend")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := state.Open(dir)
	if err != nil {
		return fmt.Errorf("%w (stop the server first: the import writes its store)", err)
	}
	defer st.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := newProgress(stderr, *quiet)
	t0 := time.Now()
	res, err := slurmdbd.Import(ctx, st, slurmdbd.Options{DSN: *dsn, Cluster: *cluster, Progress: bar.show})
	bar.done()
	if res != nil {
		fmt.Fprintf(stderr, "cluster %s: %d finished jobs read, %d added to the history, %d already there, %d not finished (left out)",
			res.Cluster, res.Read, res.Added, res.Skipped, res.Unended)
		if res.Clashes > 0 {
			fmt.Fprintf(stderr, ", %d whose job id already had steps of another run (their steps left out)", res.Clashes)
		}
		fmt.Fprintf(stderr, "; %.1f s\n", time.Since(t0).Seconds())
		if res.MaxJobID > 0 {
			fmt.Fprintf(stderr, "new jobs are numbered from %d on\n", st.NextID())
		}
	}
	return err
}

// progress is a one-line bar on a terminal, and a line per tenth
// elsewhere (a log).
type progress struct {
	w     io.Writer
	tty   bool
	off   bool
	t0    time.Time
	tenth int
	drawn bool
}

func newProgress(w io.Writer, off bool) *progress {
	p := &progress{w: w, off: off, t0: time.Now()}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) show(done, total int) {
	if p.off || total <= 0 {
		return
	}
	frac := min(float64(done)/float64(total), 1)
	rate := float64(done) / max(time.Since(p.t0).Seconds(), 1e-3)
	if p.tty {
		n := int(frac * 30)
		fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% %d/%d jobs, %.0f/s", strings.Repeat("#", n), strings.Repeat(" ", 30-n), frac*100, done, total, rate)
		p.drawn = true
		return
	}
	if t := int(frac * 10); t > p.tenth {
		p.tenth = t
		fmt.Fprintf(p.w, "import: %d/%d jobs (%.0f%%), %.0f/s\n", done, total, frac*100, rate)
	}
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}
