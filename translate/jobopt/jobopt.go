// Package jobopt parses sbatch, salloc and srun options (command line,
// #SBATCH directives, SBATCH_*/SALLOC_*/SLURM_* input variables) the way
// the stock clients of each supported release do, into the job
// descriptors (codec.JobDesc) they would send. It is pure: the caller
// hands it the arguments, script, environment, working directory, ids
// and the time; nothing is read from the machine.
//
// The behaviour follows src/common/slurm_opt.c, src/common/proc_args.c,
// src/common/parse_time.c, src/sbatch/opt.c and sbatch.c,
// src/salloc/opt.c and src/srun/opt.c of slurm-22-05-8-1,
// slurm-24-11-5-1 and slurm-26-05-3-1; releases in between behave as the
// older of the two around them. cmd/slurm-frontend/jobopt_real_test.go
// compares the result with what the real clients send.
package jobopt

import (
	"fmt"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

// Input is one client invocation.
type Input struct {
	Args   []string // argv after the program name
	Script []byte   // the script named in Args (nil with --wrap, or when the script comes on stdin)
	Stdin  []byte   // the script when no script argument is given (`sbatch <<EOF`)
	Env    []string // the client's environment, NAME=value
	Cwd    string   // working directory (default of --chdir, base of relative paths)
	UID    uint32
	GID    uint32
	// Version is the release's protocol version (codec.V22_05 ...).
	Version uint16
	// Now is the client's clock for --begin/--deadline; its Location is
	// the client's time zone. Zero means time.Now() in time.Local.
	Now time.Time
	// GresTypes are the GRES names of the client's slurm.conf
	// (GresTypes=); the clients check --gres/--gpus* against them. nil
	// skips that check (as with --clusters).
	GresTypes []string
	// Exists says whether a file exists (sbatch resolves a script name
	// found in the working directory or PATH to its full path). nil: a
	// plain name is taken to be in Cwd.
	Exists func(path string) bool
	// LookupUser and LookupGroup resolve --uid/--gid (a name, or a
	// number that must exist) as the submit host's user database does.
	// nil: no user or group is known, and both options fail.
	LookupUser func(name string) (uint32, bool)
	// Cluster is the ClusterName of the client's slurm.conf (salloc and
	// srun send it as origin_cluster).
	Cluster string
	// Shell is the user's login shell, the command salloc runs when
	// given none ("/bin/sh" when empty).
	Shell string
	// TaskAffinity: the client's TaskPlugin is not task/none; srun
	// --cpu-bind notes when it is.
	TaskAffinity bool
	LookupGroup  func(name string) (uint32, bool)
}

// Use is one option as applied.
type Use struct {
	Name    string // canonical long name, "--partition"
	Written string // as written: "-p", "--part", or the variable name
	Value   string // the argument ("" for flags)
	Source  string // "command line", "#SBATCH", or the variable (SBATCH_PARTITION)
	Line    int    // script line for "#SBATCH"
	Comp    int    // het job component
}

// Result is what the client would send.
type Result struct {
	Jobs     []codec.JobDesc // one per het job component
	Uses     []Use           // options applied, in order, after overrides
	Client   []Use           // options only the client acts on (--wait, --parsable, --test-only ...)
	TestOnly bool            // --test-only: REQUEST_JOB_WILL_RUN instead of a submission
	Wait     bool            // sbatch --wait
	Parsable bool
	Quiet    bool
	Warnings []string // non-fatal lines the client prints on stderr
	// Stderr is everything the client prints on stderr before it sends
	// the request (warnings and ignored-option errors).
	Stderr []string
	// Unmodelled lists what the client would also take into account
	// that jobopt does not reproduce (files it would read, #PBS/#BSUB
	// translation, X11 cookies): the result may differ there.
	Unmodelled []string
}

// ClientError is a client's refusal: the lines it prints on stderr and
// its exit status.
type ClientError struct {
	Lines  []string
	Exit   int
	Option string // the option at fault, when known ("--time")
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("%s (exit %d)", strings.Join(e.Lines, "; "), e.Exit)
}

// exitPanic carries a client exit through the parser's call chain.
type exitPanic struct{ err *ClientError }

func relOf(v uint16) rel {
	switch {
	case v >= codec.V26_05:
		return r26
	case v >= codec.V24_11:
		return r24
	}
	return r22
}

// Sbatch parses an sbatch invocation.
func Sbatch(in Input) (res *Result, err error) {
	p := newParser(in, cSbatch, "sbatch")
	defer p.recover(&res, &err)
	return p.sbatch(), nil
}

// Salloc parses a salloc invocation: the REQUEST_RESOURCE_ALLOCATION
// job descriptors.
func Salloc(in Input) (res *Result, err error) {
	p := newParser(in, cSalloc, "salloc")
	defer p.recover(&res, &err)
	return p.salloc(), nil
}

// Srun parses an srun run outside an allocation: the job descriptors
// of the allocation it requests.
func Srun(in Input) (res *Result, err error) {
	p := newParser(in, cSrun, "srun")
	defer p.recover(&res, &err)
	return p.srun(), nil
}

func (p *parser) recover(res **Result, err *error) {
	r := recover()
	if r == nil {
		return
	}
	e, ok := r.(exitPanic)
	if !ok {
		panic(r)
	}
	*res = nil
	*err = e.err
}
