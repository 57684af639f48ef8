package local

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupSetup is what the engine found out about cgroups at start.
type cgroupSetup struct {
	Version int      // 1, 2, or 0 = not usable
	Base    []string // per hierarchy: the directory job cgroups go under
	Home    []string // per hierarchy: the engine's own cgroup (shims start there)
	Ctrl    []string // per hierarchy (v1): "memory" or "cpu"; v2: ""
	Why     string   // when Version == 0: why not
}

// cgroupPlan is one job's cgroups, handed to its shim.
type cgroupPlan struct {
	Version  int      `json:"version"`
	Dirs     []string `json:"dirs"`
	Home     []string `json:"home"`
	Ctrl     []string `json:"ctrl,omitempty"`
	MemBytes uint64   `json:"mem_bytes,omitempty"`
	CPUs     float64  `json:"cpus,omitempty"`
}

const cgroup2Magic = 0x63677270

// probeCgroups finds a cgroup hierarchy where this process may create
// job cgroups with memory and CPU limits: cgroup v2 (unified, needs the
// memory and cpu controllers delegated), else cgroup v1 memory and cpu
// hierarchies (hybrid hosts). It creates "slurm-frontend" under the
// engine's own cgroup and checks that a child can be made and limited.
func probeCgroups() cgroupSetup {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys/fs/cgroup", &st); err != nil {
		return cgroupSetup{Why: "no /sys/fs/cgroup: " + err.Error()}
	}
	if st.Type == cgroup2Magic {
		return probeV2("/sys/fs/cgroup")
	}
	v1 := probeV1()
	if v1.Version == 0 {
		// Hybrid host whose controllers sit on the unified hierarchy.
		if m := unifiedMount(); m != "" {
			if v2 := probeV2(m); v2.Version != 0 {
				return v2
			}
		}
	}
	return v1
}

// unifiedMount is where a cgroup2 hierarchy is mounted besides v1 ones.
func unifiedMount() string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if ok && len(pf) >= 5 && len(qf) >= 1 && qf[0] == "cgroup2" {
			return pf[4]
		}
	}
	return ""
}

// ownCgroups reads /proc/self/cgroup: hierarchy controllers ("" for v2)
// → path.
func ownCgroups() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.SplitN(sc.Text(), ":", 3)
		if len(p) == 3 {
			out[p[1]] = p[2]
		}
	}
	return out
}

func probeV2(mnt string) cgroupSetup {
	own := ownCgroups()[""]
	if own == "" {
		return cgroupSetup{Why: "no cgroup v2 entry in /proc/self/cgroup"}
	}
	home := filepath.Join(mnt, own)
	b, _ := os.ReadFile(filepath.Join(home, "cgroup.controllers"))
	ctrls := " " + strings.TrimSpace(string(b)) + " "
	if !strings.Contains(ctrls, " memory ") || !strings.Contains(ctrls, " cpu ") {
		return cgroupSetup{Why: fmt.Sprintf("cgroup v2 %s does not have the memory and cpu controllers delegated (has %q)", home, strings.TrimSpace(string(b)))}
	}
	enable := func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +cpu"), 0)
	}
	base := home
	if err := enable(home); err != nil {
		if !errors.Is(err, syscall.EBUSY) {
			return cgroupSetup{Why: "cannot enable memory and cpu in " + home + ": " + err.Error()}
		}
		// "No internal processes": move this engine's processes into a
		// leaf so that home may delegate controllers to job cgroups.
		leaf := filepath.Join(home, "slurm-frontend.server")
		if err := os.Mkdir(leaf, 0o755); err != nil && !os.IsExist(err) {
			return cgroupSetup{Why: "cannot create " + leaf + ": " + err.Error()}
		}
		procs, _ := os.ReadFile(filepath.Join(home, "cgroup.procs"))
		for _, p := range strings.Fields(string(procs)) {
			_ = os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(p), 0)
		}
		if err := enable(home); err != nil {
			return cgroupSetup{Why: "cannot enable memory and cpu in " + home + " even after moving its processes to a leaf: " + err.Error()}
		}
		home = leaf
	}
	jobs := filepath.Join(base, "slurm-frontend.jobs")
	if err := os.Mkdir(jobs, 0o755); err != nil && !os.IsExist(err) {
		return cgroupSetup{Why: "cannot create " + jobs + ": " + err.Error()}
	}
	if err := enable(jobs); err != nil {
		return cgroupSetup{Why: "cannot enable memory and cpu in " + jobs + ": " + err.Error()}
	}
	s := cgroupSetup{Version: 2, Base: []string{jobs}, Home: []string{home}, Ctrl: []string{""}}
	if err := s.tryChild(); err != nil {
		return cgroupSetup{Why: err.Error()}
	}
	return s
}

// v1Mounts maps each v1 controller to its mount point and mount root
// (from /proc/self/mountinfo).
func v1Mounts() map[string][2]string {
	out := map[string][2]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		l := sc.Text()
		pre, post, ok := strings.Cut(l, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" {
			continue
		}
		for _, o := range strings.Split(qf[2], ",") {
			if o == "memory" || o == "cpu" {
				out[o] = [2]string{pf[4], pf[3]}
			}
		}
	}
	return out
}

func probeV1() cgroupSetup {
	mnts := v1Mounts()
	own := ownCgroups()
	s := cgroupSetup{Version: 1}
	for _, ctrl := range []string{"memory", "cpu"} {
		m, ok := mnts[ctrl]
		if !ok {
			return cgroupSetup{Why: "no cgroup v2 at /sys/fs/cgroup and no cgroup v1 " + ctrl + " hierarchy mounted"}
		}
		var path string
		for k, v := range own {
			for _, c := range strings.Split(k, ",") {
				if c == ctrl {
					path = v
				}
			}
		}
		rel := path
		if m[1] != "/" {
			rel = strings.TrimPrefix(path, m[1])
		}
		home := filepath.Join(m[0], rel)
		base := filepath.Join(home, "slurm-frontend")
		if err := os.Mkdir(base, 0o755); err != nil && !os.IsExist(err) {
			return cgroupSetup{Why: "cgroup v1 " + ctrl + ": cannot create " + base + ": " + err.Error()}
		}
		s.Base = append(s.Base, base)
		s.Home = append(s.Home, home)
		s.Ctrl = append(s.Ctrl, ctrl)
	}
	if err := s.tryChild(); err != nil {
		return cgroupSetup{Why: err.Error()}
	}
	return s
}

// tryChild creates a probe cgroup, sets limits, and removes it.
func (s cgroupSetup) tryChild() error {
	p := s.plan(fmt.Sprintf("probe-%d", os.Getpid()), 1<<40, 1)
	defer p.remove()
	if err := p.create(); err != nil {
		return fmt.Errorf("cgroup v%d: %v", s.Version, err)
	}
	return nil
}

// plan names a job's cgroups (not created yet).
func (s cgroupSetup) plan(name string, memBytes uint64, cpus float64) *cgroupPlan {
	if s.Version == 0 {
		return nil
	}
	p := &cgroupPlan{Version: s.Version, Home: s.Home, Ctrl: s.Ctrl, MemBytes: memBytes, CPUs: cpus}
	for _, b := range s.Base {
		p.Dirs = append(p.Dirs, filepath.Join(b, name))
	}
	return p
}

const cfsPeriod = 100000

// create makes the job's cgroups and writes the limits.
func (p *cgroupPlan) create() error {
	for i, d := range p.Dirs {
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return err
		}
		w := func(file, val string) error {
			if err := os.WriteFile(filepath.Join(d, file), []byte(val), 0); err != nil {
				return fmt.Errorf("%s=%s: %w", filepath.Join(d, file), val, err)
			}
			return nil
		}
		switch {
		case p.Version == 2:
			if p.MemBytes > 0 {
				if err := w("memory.max", strconv.FormatUint(p.MemBytes, 10)); err != nil {
					return err
				}
			}
			if p.CPUs > 0 {
				if err := w("cpu.max", fmt.Sprintf("%d %d", int64(p.CPUs*cfsPeriod), cfsPeriod)); err != nil {
					return err
				}
			}
		case p.Ctrl[i] == "memory":
			if p.MemBytes > 0 {
				if err := w("memory.limit_in_bytes", strconv.FormatUint(p.MemBytes, 10)); err != nil {
					return err
				}
			}
		case p.Ctrl[i] == "cpu":
			if p.CPUs > 0 {
				if err := w("cpu.cfs_period_us", strconv.Itoa(cfsPeriod)); err != nil {
					return err
				}
				if err := w("cpu.cfs_quota_us", strconv.FormatInt(int64(p.CPUs*cfsPeriod), 10)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// start starts the command mk makes inside the job's cgroups without
// moving a whole process there, which takes the kernel's global
// threadgroup lock and so waits for an RCU grace period (milliseconds
// per job or task start): on cgroup v2 the child is born
// there (bornIn); on v1 the calling thread alone goes in ("0" in tasks
// takes no global lock), forks the child, which inherits that thread's
// cgroups, and comes back. cgErr: the child could not be put there and
// runs where the caller is (err is the start's own).
//
// The times say how long each part took, for a start the kernel held up.
func (p *cgroupPlan) start(mk func() *exec.Cmd) (cmd *exec.Cmd, cgErr, err error, took startTimes) {
	t0 := time.Now()
	if p.Version == 2 {
		cmd, cgErr, err = bornIn(mk, p.Dirs[0])
		took.fork = time.Since(t0)
		return cmd, cgErr, err, took
	}
	runtime.LockOSThread()
	moved := 0
	for _, d := range p.Dirs {
		if cgErr = os.WriteFile(filepath.Join(d, "tasks"), []byte("0"), 0); cgErr != nil {
			break
		}
		moved++
	}
	t1 := time.Now()
	cmd = mk()
	err = cmd.Start()
	t2 := time.Now()
	var back error
	for _, d := range p.Home[:moved] {
		if e := os.WriteFile(filepath.Join(d, "tasks"), []byte("0"), 0); e != nil && back == nil {
			back = e
		}
	}
	if back == nil {
		runtime.UnlockOSThread()
	} // else this thread stays with its goroutine: no other may inherit its cgroups
	took = startTimes{moveIn: t1.Sub(t0), fork: t2.Sub(t1), moveBack: time.Since(t2)}
	return cmd, cgErr, err, took
}

// startTimes are the parts of a job process's start: the cgroup v1
// moves of the starting thread, and the fork and exec (on cgroup v2, a
// clone into the cgroup).
type startTimes struct{ moveIn, fork, moveBack time.Duration }

func (t startTimes) String() string {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	if t.moveIn == 0 && t.moveBack == 0 {
		return "fork and exec " + ms(t.fork)
	}
	return fmt.Sprintf("into the cgroups %s, fork and exec %s, back %s", ms(t.moveIn), ms(t.fork), ms(t.moveBack))
}

// cloneCmd is a new, unstarted copy of c's settings.
func cloneCmd(c *exec.Cmd) *exec.Cmd {
	n := &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir,
		Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, ExtraFiles: c.ExtraFiles}
	if c.SysProcAttr != nil {
		a := *c.SysProcAttr
		n.SysProcAttr = &a
	}
	return n
}

// bornIn starts the command mk makes as a child of the cgroup v2
// directory dir (clone3's CLONE_INTO_CGROUP): nothing is migrated. A
// kernel without it (before 5.7) gets the command started again, where
// the caller is, and cgErr says so.
func bornIn(mk func() *exec.Cmd, dir string) (cmd *exec.Cmd, cgErr, err error) {
	fd, oerr := syscall.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if oerr == nil {
		cmd = mk()
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		err = cmd.Start()
		syscall.Close(fd)
		if err == nil {
			return cmd, nil, nil
		}
		oerr = err
	}
	cmd = mk()
	return cmd, fmt.Errorf("starting in %s: %w", dir, oerr), cmd.Start()
}

// oomKills reads the number of OOM kills in the job's memory cgroup.
func (p *cgroupPlan) oomKills() int {
	for i, d := range p.Dirs {
		file := "memory.events"
		if p.Version == 1 {
			if p.Ctrl[i] != "memory" {
				continue
			}
			file = "memory.oom_control"
		}
		b, err := os.ReadFile(filepath.Join(d, file))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "oom_kill "); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
	}
	return 0
}

// remove deletes the job's cgroups, retrying while the last processes
// are still exiting.
func (p *cgroupPlan) remove() {
	if p == nil {
		return
	}
	for _, d := range p.Dirs {
		for i := 0; i < 50; i++ {
			err := os.Remove(d)
			if err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
