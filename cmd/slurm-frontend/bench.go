package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/bench"
	"github.com/lablup/slurm-frontend/codec"
)

const benchUsage = `usage: slurm-frontend bench COMMAND [flags]

Load generators that speak Slurm's wire protocol natively (one new TCP
connection per RPC, a fresh MUNGE credential per message, like stock
clients) against any controller: slurm-frontend, a real slurmctld, or the
null server.

  bench run    --target NAME=HOST:PORT[,pid=PID][,pidfile=FILE][,aux=LABEL:PID] ...
               [--workload squeue,ping,...] [--sweep 1,8,64,256 | --rate N,...]
               [--duration 10s] [--warmup 1s] [--munge-key FILE]
               [--label SCENARIO] [--repeat N] [--hold N --hold-mode idle|slow]
               [--copy-replies] [--report out.html] [--json out.json]
      Measure each workload at each load point against each target in
      turn (targets interleaved per point). The first target is compared
      with the others (ratios). Workloads: squeue (JOB_INFO+PARTITION_INFO),
      jobstate (JOB_STATE, squeue --only-job-state, 24.05+), sinfo (PARTITION_INFO+NODE_INFO), ping, sbatch (held jobs), storm (JOB_INFO 50%, PARTITION_INFO 20%, SUBMIT 20%, KILL_JOB 10% of the worker's own jobs), mix
      (JOB_INFO 45%, PARTITION_INFO 35%, NODE_INFO 10%, PING 8%, SUBMIT 2%).
      --sweep is closed loop (concurrent clients); --rate is open loop
      (ops/s, latency from the scheduled send time). --repeat measures each
      point N times and reports the median; --hold keeps N idle or slow
      connections open to the target during each run.

  bench fill   --target HOST:PORT --jobs N [--concurrency 16] [--munge-key FILE]
      Submit N held jobs (sbatch --hold --wrap "sleep 100") concurrently.

  bench fill-slurmdbd --dsn USER@unix(SOCKET)/slurm_acct_db [--cluster NAME]
               [--jobs 100000] [--users 100] [--user-names slurm,...]
               [--start 2026-11-01] [--days 30] [--seed 1]
      Write N finished jobs (a batch step each, an srun step for one in
      five; COMPLETED, FAILED, CANCELLED, TIMEOUT) into a slurmdbd
      database's job and step tables, as slurmdbd 24.11 stores them,
      submissions spread over the days, for sacct history benchmarks
      (tools/bench-sacct.sh). Users with an association get its account.

  bench null   --listen HOST:PORT [--reply-size N | --reply-from HOST:PORT]
      Null server: accept, read one request frame, write a prebuilt reply,
      close. --reply-from copies a controller's replies (refetched on
      SIGHUP); --reply-size makes a RESPONSE_JOB_INFO of N bytes.

  bench size   [--jobs 100000] [--listen 127.0.0.1:26900] [--munge-key FILE]
      What a queue costs this server: starts it on an empty state dir
      (baseline), submits one held job, copies it to N jobs in the store,
      restarts it, and reports the time to serving and to the first whole
      squeue listing, and RSS per job beyond the baseline.

  bench report FILE.json ... [--report out.html] [--json out.json]
      Merge the JSON of several runs into one report and print the ratios.

Run 'slurm-frontend bench COMMAND -h' for every flag.
`

func benchMain(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, benchUsage)
		return errors.New("bench: missing command")
	}
	switch args[0] {
	case "run":
		return benchRun(args[1:])
	case "fill":
		return benchFill(args[1:])
	case "fill-slurmdbd":
		return benchFillSlurmdbd(args[1:])
	case "null":
		return benchNull(args[1:])
	case "size":
		return benchSize(args[1:])
	case "report":
		return benchReport(args[1:])
	case "-h", "--help", "help":
		fmt.Print(benchUsage)
		return nil
	}
	fmt.Fprint(os.Stderr, benchUsage)
	return fmt.Errorf("bench: unknown command %q", args[0])
}

type targetList []bench.Target

func (t *targetList) String() string { return fmt.Sprint(len(*t)) }
func (t *targetList) Set(s string) error {
	tg, err := bench.ParseTarget(s)
	if err != nil {
		return err
	}
	*t = append(*t, tg)
	return nil
}

// common flags of the commands that send requests.
type mintFlags struct {
	key      *string
	proto    *string
	slurmUID *uint
	ttl      *uint
}

func addMintFlags(fs *flag.FlagSet) mintFlags {
	return mintFlags{
		key:      fs.String("munge-key", "/etc/munge/munge.key", "MUNGE key the controllers share (credentials are minted with it)"),
		proto:    fs.String("proto", "24.11", "protocol version of the requests (22.05 … 26.05)"),
		slurmUID: fs.Uint("slurm-uid", 0, "the controllers' SlurmUser uid (REQUEST_PING credentials are restricted to it)"),
		ttl:      fs.Uint("cred-ttl", 0, "credential ttl in seconds (0 = munged's default, 300)"),
	}
}

func (f mintFlags) minter() (*bench.Minter, error) {
	m, err := bench.NewMinter(*f.key)
	if err != nil {
		return nil, fmt.Errorf("munge key: %w", err)
	}
	v, err := parseProto(*f.proto)
	if err != nil {
		return nil, err
	}
	m.Version = v
	m.TTL = uint32(*f.ttl)
	return m, nil
}

func parseProto(s string) (uint16, error) {
	for _, v := range codec.Versions {
		if codec.VersionName(v) == s {
			return v, nil
		}
	}
	return 0, fmt.Errorf("--proto %q: want one of 22.05 23.02 23.11 24.05 24.11 25.05 25.11 26.05", s)
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

func benchRun(args []string) error {
	fs := flag.NewFlagSet("bench run", flag.ContinueOnError)
	var targets targetList
	fs.Var(&targets, "target", "controller to measure: NAME=HOST:PORT[,pid=PID][,pidfile=FILE][,aux=LABEL:PID] (repeat; the first is compared with the others)")
	workloads := fs.String("workload", "squeue", "comma-separated workloads: "+strings.Join(bench.Workloads, ", "))
	sweep := fs.String("sweep", "1,8,64,256", "closed loop: comma-separated numbers of concurrent clients")
	rates := fs.String("rate", "", "open loop: comma-separated rates in operations/s (replaces --sweep)")
	conns := fs.Int("conns", 4096, "open loop: most operations in flight")
	duration := fs.Duration("duration", 10*time.Second, "measurement window per run")
	warmup := fs.Duration("warmup", time.Second, "load before each window, not counted")
	timeout := fs.Duration("timeout", 10*time.Second, "per-RPC timeout (stock clients: MessageTimeout, 10 s)")
	settle := fs.Bool("settle", true, "after each run wait (up to 20 s) until the target's CPU is quiet")
	label := fs.String("label", "", "scenario name recorded with every run (e.g. \"10000 jobs\")")
	hold := fs.Int("hold", 0, "connections held open to the target during each run")
	holdMode := fs.String("hold-mode", "idle", "held connections: idle (send nothing) or slow (one byte a second)")
	htmlOut := fs.String("report", "", "write an HTML report here")
	jsonOut := fs.String("json", "", "write the JSON results here")
	quiet := fs.Bool("quiet", false, "no progress line")
	copyReplies := fs.Bool("copy-replies", false, "copy whole replies into the generator (default: the first 64 KiB; the kernel drops the rest unread)")
	repeat := fs.Int("repeat", 1, "measure every point this many times (target order rotated); the report uses the median run")
	var notes []string
	fs.Func("note", "free text recorded in the report (repeat)", func(s string) error { notes = append(notes, s); return nil })
	mf := addMintFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: slurm-frontend bench run --target NAME=HOST:PORT[,pid=PID] ... [flags]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(targets) == 0 {
		fs.Usage()
		return errors.New("bench run: at least one --target")
	}
	m, err := mf.minter()
	if err != nil {
		return err
	}
	var points []float64
	open := *rates != ""
	list := *sweep
	if open {
		list = *rates
	}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 || (!open && v != float64(int(v))) {
			return fmt.Errorf("bench run: bad load point %q", s)
		}
		points = append(points, v)
	}
	if len(points) == 0 {
		return errors.New("bench run: empty --sweep/--rate")
	}
	var wls []*bench.Workload
	for _, name := range strings.Split(*workloads, ",") {
		wl, err := bench.NewWorkload(strings.TrimSpace(name), m.Version, uint32(*mf.slurmUID))
		if err != nil {
			return err
		}
		wls = append(wls, wl)
	}
	ctx, cancel := signalContext()
	defer cancel()
	report := bench.NewReport("slurm-frontend bench run " + strings.Join(args, " "))
	if !*copyReplies {
		report.Meta.Notes = append(report.Meta.Notes, "The generator copies in the first 64 KiB of each reply; the rest is received and dropped by the kernel (recv MSG_TRUNC), not copied (--copy-replies to copy all).")
	}
	report.Meta.Notes = notes
	for _, t := range targets {
		report.Meta.Targets = append(report.Meta.Targets, t.Name)
	}
	var progress io.Writer = os.Stderr
	if *quiet {
		progress = nil
	}
	var runErr error
outer:
	for rep := 0; rep < max(*repeat, 1); rep++ {
		for _, wl := range wls {
			for _, p := range points {
				for i := range targets {
					t := targets[(i+rep)%len(targets)]
					spec := bench.RunSpec{Target: t, Workload: wl, Label: *label, Warmup: *warmup, Duration: *duration,
						Timeout: *timeout, Settle: *settle, Hold: *hold, HoldMode: *holdMode, Progress: progress, CopyReplies: *copyReplies}
					if open {
						spec.Rate, spec.Concurrency = p, *conns
					} else {
						spec.Concurrency = int(p)
					}
					res, err := bench.Run(ctx, spec, m)
					if res != nil {
						res.Rep = rep
						report.Add(res, wl)
					}
					if err != nil {
						runErr = err
						break outer
					}
				}
			}
		}
	}
	if *quiet {
		for _, r := range report.Runs {
			fmt.Fprintln(os.Stderr, r.Line())
		}
	}
	report.WriteText(os.Stdout)
	if *jsonOut != "" {
		if err := report.WriteJSON(*jsonOut); err != nil {
			return err
		}
	}
	if *htmlOut != "" {
		if err := report.WriteHTML(*htmlOut); err != nil {
			return err
		}
	}
	if runErr != nil && errors.Is(runErr, context.Canceled) {
		return errors.New("interrupted (partial results written)")
	}
	return runErr
}

func benchFill(args []string) error {
	fs := flag.NewFlagSet("bench fill", flag.ContinueOnError)
	target := fs.String("target", "", "controller HOST:PORT (or NAME=HOST:PORT)")
	jobs := fs.Int("jobs", 10000, "held jobs to submit")
	conc := fs.Int("concurrency", 16, "concurrent submitters")
	timeout := fs.Duration("timeout", 30*time.Second, "per-submission timeout")
	run := fs.Bool("run", false, "submit jobs the engine starts, not held ones")
	mf := addMintFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *target == "" {
		fs.Usage()
		return errors.New("bench fill: --target")
	}
	jd, kind := bench.HeldJobDesc(), "held"
	if *run {
		jd, kind = bench.RunnableJobDesc(), "runnable"
	}
	t, err := bench.ParseTarget(*target)
	if err != nil {
		return err
	}
	m, err := mf.minter()
	if err != nil {
		return err
	}
	ctx, cancel := signalContext()
	defer cancel()
	res, err := bench.FillWith(ctx, t.Addr, jd, *jobs, *conc, m, *timeout, os.Stderr)
	if res != nil {
		fmt.Printf("fill %s: %d "+kind+" jobs in %.1f s (%.0f/s), job ids %d-%d", t.Addr, res.Submitted, res.Seconds, res.PerSec, res.FirstID, res.LastID)
		if len(res.Errors) > 0 {
			fmt.Printf(", retried errors: %v", res.Errors)
		}
		fmt.Println()
	}
	return err
}

func benchFillSlurmdbd(args []string) error {
	fs := flag.NewFlagSet("bench fill-slurmdbd", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "the slurmdbd database: USER[:PASS]@tcp(HOST:3306)/slurm_acct_db or USER@unix(SOCKET)/slurm_acct_db")
	cluster := fs.String("cluster", "", "the cluster's name in the database (default: the only one there)")
	jobs := fs.Int("jobs", 100000, "finished jobs to write")
	users := fs.Int("users", 100, "users the jobs are spread over")
	names := fs.String("user-names", "", "comma-separated real users taking the first user slots (sacct -u needs them in the clients' passwd); the others are u001, u002, … with uids from --first-uid")
	firstUID := fs.Uint("first-uid", 20000, "the made-up users' first uid")
	start := fs.String("start", "", "the first submission, 2006-01-02 or 2006-01-02T15:04:05 UTC (default: --days before now)")
	days := fs.Float64("days", 30, "submissions spread over this many days")
	firstID := fs.Uint("first-id", 0, "the first job id (default: the largest in the table + 1)")
	seed := fs.Int64("seed", 1, "random seed (the same seed, the same jobs)")
	batch := fs.Int("batch", 1000, "jobs per INSERT")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" {
		fs.Usage()
		return errors.New("bench fill-slurmdbd: --dsn")
	}
	o := bench.DBDFillOptions{DSN: *dsn, Cluster: *cluster, Jobs: *jobs, Users: *users, FirstUID: uint32(*firstUID),
		Span: time.Duration(*days * float64(24*time.Hour)), FirstID: uint32(*firstID), Seed: *seed, Batch: *batch}
	if *names != "" {
		o.UserNames = strings.Split(*names, ",")
	}
	if *start != "" {
		var err error
		if o.Start, err = time.ParseInLocation("2006-01-02T15:04:05", *start, time.UTC); err != nil {
			if o.Start, err = time.ParseInLocation("2006-01-02", *start, time.UTC); err != nil {
				return fmt.Errorf("--start %q: want 2006-01-02 or 2006-01-02T15:04:05", *start)
			}
		}
	}
	ctx, cancel := signalContext()
	defer cancel()
	tenth := 0
	o.Progress = func(done, total int) {
		if t := done * 10 / total; t > tenth {
			tenth = t
			fmt.Fprintf(os.Stderr, "fill-slurmdbd: %d/%d jobs\n", done, total)
		}
	}
	res, err := bench.FillSlurmdbd(ctx, o)
	if res != nil && res.Jobs > 0 {
		fmt.Printf("fill-slurmdbd %s: %d jobs, %d steps in %.1f s (%.0f jobs/s), job ids %d-%d, submitted from %s, the last ended %s\n",
			res.Cluster, res.Jobs, res.Steps, res.Seconds, float64(res.Jobs)/max(res.Seconds, 1e-3), res.FirstID, res.LastID,
			res.FirstSubmit.UTC().Format(time.RFC3339), res.LastEnd.UTC().Format(time.RFC3339))
		fmt.Printf("states: COMPLETED %d, FAILED %d, CANCELLED %d, TIMEOUT %d\n",
			res.States["COMPLETED"], res.States["FAILED"], res.States["CANCELLED"], res.States["TIMEOUT"])
		withAssoc := 0
		for _, u := range res.Users {
			if u.Assoc != 0 {
				withAssoc++
			}
		}
		fmt.Printf("%d users (%d with an association)", len(res.Users), withAssoc)
		for i, u := range res.Users {
			if i >= max(len(o.UserNames), 3) {
				break
			}
			fmt.Printf("; %s (uid %d, account %q): %d jobs", u.Name, u.UID, u.Account, u.Jobs)
		}
		fmt.Println()
	}
	return err
}

func benchNull(args []string) error {
	fs := flag.NewFlagSet("bench null", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	size := fs.Int("reply-size", 635822, "bytes of the RESPONSE_JOB_INFO frame (default: the 24.11 reply for 1,000 held jobs)")
	from := fs.String("reply-from", "", "copy the replies of this controller (HOST:PORT) instead; refetched on SIGHUP")
	mf := addMintFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	s := bench.NewNullServer(*size)
	fetch := func() error {
		if *from == "" {
			return nil
		}
		m, err := mf.minter()
		if err != nil {
			return err
		}
		r, err := bench.FetchReplies(*from, m, uint32(*mf.slurmUID), 30*time.Second)
		if err != nil {
			return err
		}
		s.SetReplies(r)
		return nil
	}
	if err := fetch(); err != nil {
		return err
	}
	if err := s.Listen(*listen); err != nil {
		return err
	}
	fmt.Printf("null server on %s (pid %d), reply bytes %v\n", s.Addr(), os.Getpid(), s.ReplySizes())
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	errc := make(chan error, 1)
	go func() { errc <- s.Serve() }()
	for {
		select {
		case err := <-errc:
			return err
		case sg := <-sig:
			if sg == syscall.SIGHUP {
				if err := fetch(); err != nil {
					fmt.Fprintln(os.Stderr, "null server: refetch:", err)
				} else {
					fmt.Printf("null server: reply bytes %v\n", s.ReplySizes())
				}
				continue
			}
			s.Close()
			fmt.Printf("null server: %d requests answered\n", s.Served())
			return nil
		}
	}
}

func benchReport(args []string) error {
	fs := flag.NewFlagSet("bench report", flag.ContinueOnError)
	report := fs.String("report", "", "write the merged HTML report here")
	jsonOut := fs.String("json", "", "write the merged JSON here")
	var notes []string
	fs.Func("note", "free text recorded in the report (repeat)", func(s string) error { notes = append(notes, s); return nil })
	// Flags may follow the file names.
	var files []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 {
		return errors.New("bench report: no JSON files")
	}
	var rep *bench.Report
	for _, f := range files {
		r, err := bench.ReadReport(f)
		if err != nil {
			return err
		}
		if rep == nil {
			rep = r
		} else {
			rep.Merge(r)
		}
	}
	rep.Meta.Notes = append(rep.Meta.Notes, notes...)
	rep.WriteText(os.Stdout)
	if *jsonOut != "" {
		if err := rep.WriteJSON(*jsonOut); err != nil {
			return err
		}
	}
	if *report != "" {
		return rep.WriteHTML(*report)
	}
	return nil
}

func benchSize(args []string) error {
	fs := flag.NewFlagSet("bench size", flag.ContinueOnError)
	jobs := fs.Int("jobs", 100000, "jobs in the queue")
	listen := fs.String("listen", "127.0.0.1:26900", "address the measured server listens on")
	stateDir := fs.String("state-dir", "", "state dir to fill (default: a temporary one, removed after)")
	timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for the server")
	mf := addMintFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, err := mf.minter()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir := *stateDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "slurm-frontend-size-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	argv := []string{self, "serve", "--state-dir", dir, "--listen", *listen, "--munge-key", *mf.key}
	ctx, cancel := signalContext()
	defer cancel()

	fmt.Printf("bench size: %s, %d jobs\n", strings.Join(argv, " "), *jobs)
	base, err := bench.MeasureStart(ctx, argv, *listen, m, *timeout, func() error {
		_, err := bench.Fill(ctx, *listen, 1, 1, m, *timeout, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	fmt.Printf("baseline: serving after %v, memory %.1f MiB\n", base.Serving.Round(time.Millisecond), float64(base.MemKiB)/1024)
	start := time.Now()
	added, err := bench.CloneJobs(dir, *jobs)
	if err != nil {
		return err
	}
	fmt.Printf("stored %d more held jobs in %.1f s\n", added, time.Since(start).Seconds())
	full, err := bench.MeasureStart(ctx, argv, *listen, m, *timeout, nil)
	if err != nil {
		return fmt.Errorf("with %d jobs: %w", *jobs, err)
	}
	perJob := float64(full.MemKiB-base.MemKiB) * 1024 / float64(full.Jobs)
	settled := float64(full.SettledMemKiB-base.SettledMemKiB) * 1024 / float64(full.Jobs)
	fmt.Printf("%d jobs: serving after %v, first whole squeue listing (%d jobs, %.1f MB) after %v\n",
		*jobs, full.Serving.Round(time.Millisecond), full.Jobs, float64(full.ListingBytes)/1e6, full.FirstListing.Round(time.Millisecond))
	fmt.Printf("memory (RSS + memory files) %.1f MiB (peak RSS %.1f MiB), baseline %.1f MiB: %.0f bytes per job beyond the baseline\n",
		float64(full.MemKiB)/1024, float64(full.HWMKiB)/1024, float64(base.MemKiB)/1024, perJob)
	fmt.Printf("after %v idle: memory %.1f MiB, baseline %.1f MiB: %.0f bytes per job beyond the baseline\n",
		bench.Settle, float64(full.SettledMemKiB)/1024, float64(base.SettledMemKiB)/1024, settled)
	fmt.Printf("  of which anonymous (heap) %.0f, mapped files (store) %.0f and memory files (encoded listings) %.0f bytes per job\n",
		float64(full.SettledAnonKiB-base.SettledAnonKiB)*1024/float64(full.Jobs),
		float64(full.SettledFileKiB-base.SettledFileKiB)*1024/float64(full.Jobs),
		float64(full.SettledMemFilesKiB-base.SettledMemFilesKiB)*1024/float64(full.Jobs))
	if int(full.Jobs) != *jobs {
		return fmt.Errorf("the listing has %d jobs, want %d", full.Jobs, *jobs)
	}
	return nil
}
