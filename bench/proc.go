package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clkTck is USER_HZ, 100 on every Linux architecture Go supports.
const clkTck = 100

// ProcCPU returns a process's user+system CPU time (all threads, not
// its children) from /proc/PID/stat.
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// comm may contain spaces and parentheses: fields start after the
	// last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no comm", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return time.Duration(ut+st) * time.Second / clkTck, nil
}

// ProcMem returns VmRSS and VmHWM (peak RSS since the process started)
// in KiB from /proc/PID/status.
func ProcMem(pid int) (rss, hwm int64, err error) {
	m, err := ProcStatus(pid, "VmRSS", "VmHWM")
	return m["VmRSS"], m["VmHWM"], err
}

// ProcStatus returns the named kB fields of /proc/PID/status (VmRSS,
// RssAnon, RssFile, ...); missing ones are absent from the map.
func ProcStatus(pid int, names ...string) (map[string]int64, error) {
	out := map[string]int64{}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if fs := strings.Fields(rest); len(fs) >= 1 {
			out[name], _ = strconv.ParseInt(fs[0], 10, 64)
		}
	}
	return out, sc.Err()
}

// ProcMemFiles returns the memory held by the anonymous memory files
// (memfd) a process has open, in KiB of allocated pages. They are not
// in its RSS until mapped and touched: slurm-frontend keeps large job
// listings in sealed memory files and sends them with sendfile.
func ProcMemFiles(pid int) (int64, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var blocks int64
	for _, e := range ents {
		p := dir + "/" + e.Name()
		if l, err := os.Readlink(p); err != nil || !strings.HasPrefix(l, "/memfd:") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			blocks += st.Blocks
		}
	}
	return blocks * 512 / 1024, nil
}

// ProcMemory is a process's memory in KiB: resident pages (VmRSS, less
// the shared-memory pages in it, RssShmem) plus its memory files'
// pages, each counted once whether mapped or not.
func ProcMemory(pid int) (int64, error) {
	st, err := ProcStatus(pid, "VmRSS", "RssShmem")
	if err != nil {
		return 0, err
	}
	files, err := ProcMemFiles(pid)
	if err != nil {
		return 0, err
	}
	return st["VmRSS"] - st["RssShmem"] + files, nil
}

// ProcName returns /proc/PID/comm.
func ProcName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// machineCPU returns the busy and total CPU time of the whole machine
// (all cores) from /proc/stat.
func machineCPU() (busy, total time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	var sum, idle uint64
	for i, s := range f[1:] {
		v, _ := strconv.ParseUint(s, 10, 64)
		if i >= 8 { // guest and guest_nice are already in user/nice
			break
		}
		sum += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	return time.Duration(sum-idle) * time.Second / clkTck, time.Duration(sum) * time.Second / clkTck
}

// loadAvg returns the 1-minute load average.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// Machine describes where a run happened.
type Machine struct {
	Host       string `json:"host"`
	CPUModel   string `json:"cpu_model"`
	CPUs       int    `json:"cpus"`
	MemMiB     int64  `json:"mem_mib"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// ThisMachine fills a Machine from /proc.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	m.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					m.CPUModel = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(string(b), "MemTotal: %d kB", &kb)
		m.MemMiB = kb / 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// cpuSnap is the CPU used so far by the watched processes, this
// process and the whole machine.
type cpuSnap struct {
	t     time.Time
	pids  []time.Duration
	self  time.Duration
	busy  time.Duration
	total time.Duration
}

func takeSnap(pids []int) cpuSnap {
	s := cpuSnap{t: time.Now(), pids: make([]time.Duration, len(pids))}
	for i, p := range pids {
		s.pids[i], _ = ProcCPU(p)
	}
	s.self, _ = ProcCPU(os.Getpid())
	s.busy, s.total = machineCPU()
	return s
}

// rssWatch samples VmRSS of a set of processes every 100 ms and keeps
// the peak.
type rssWatch struct {
	pids    []int
	peakRSS []int64
	stop    chan struct{}
	done    chan struct{}
}

func startRSSWatch(pids []int) *rssWatch {
	w := &rssWatch{pids: pids, peakRSS: make([]int64, len(pids)), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			for i, p := range w.pids {
				// Shared-memory pages are the memory files' (counted
				// apart, once, at the end of the run).
				st, err := ProcStatus(p, "VmRSS", "RssShmem")
				if rss := st["VmRSS"] - st["RssShmem"]; err == nil && rss > w.peakRSS[i] {
					w.peakRSS[i] = rss
				}
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *rssWatch) finish() []int64 {
	close(w.stop)
	<-w.done
	return w.peakRSS
}

// ProcStats is what a run reports for one process: CPU over the
// measurement window, memory over the whole run.
type ProcStats struct {
	Label      string  `json:"label"`
	PID        int     `json:"pid"`
	Comm       string  `json:"comm,omitempty"`
	CPUSeconds float64 `json:"cpu_seconds"`  // during the measurement window
	CPUCores   float64 `json:"cpu_cores"`    // CPU seconds / window seconds
	PeakRSSKiB int64   `json:"peak_rss_kib"` // highest VmRSS-RssShmem sampled (every 100 ms) during the run
	VmHWMKiB   int64   `json:"vmhwm_kib"`    // peak RSS since the process started (/proc/PID/status VmHWM)
	// MemFilesKiB is the memory files (memfd) held open at the end of
	// the run: memory outside RSS (slurm-frontend's sealed listings).
	MemFilesKiB int64  `json:"mem_files_kib,omitempty"`
	Err         string `json:"error,omitempty"`
}

// procStats turns two snapshots and the RSS peaks into per-process stats.
// PeakMemKiB is the run's peak memory: peak RSS plus the memory files.
func (s *ProcStats) PeakMemKiB() int64 { return s.PeakRSSKiB + s.MemFilesKiB }

func procStats(pids []int, labels []string, a, b cpuSnap, peak []int64) []ProcStats {
	wall := b.t.Sub(a.t).Seconds()
	var out []ProcStats
	for i, p := range pids {
		s := ProcStats{Label: labels[i], PID: p, Comm: ProcName(p), PeakRSSKiB: peak[i]}
		if s.Comm == "" {
			s.Err = "process not found"
		}
		s.CPUSeconds = (b.pids[i] - a.pids[i]).Seconds()
		if wall > 0 {
			s.CPUCores = s.CPUSeconds / wall
		}
		_, s.VmHWMKiB, _ = ProcMem(p)
		s.MemFilesKiB, _ = ProcMemFiles(p)
		out = append(out, s)
	}
	return out
}

// cores returns the generator's own and the machine's busy cores between
// two snapshots.
func cores(a, b cpuSnap) (gen, machine float64) {
	wall := b.t.Sub(a.t).Seconds()
	if wall <= 0 {
		return 0, 0
	}
	gen = (b.self - a.self).Seconds() / wall
	if b.total > a.total {
		machine = float64(runtime.NumCPU()) * float64(b.busy-a.busy) / float64(b.total-a.total)
	}
	return gen, machine
}
