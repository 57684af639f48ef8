package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// procStart returns the start time (clock ticks after boot, field 22 of
// /proc/PID/stat) of a live, non-zombie process, or ok=false. Together
// with the pid it names a process unambiguously across pid reuse.
func procStart(pid int) (start uint64, ok bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces and parentheses: split
	// after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return start, err == nil
}

// alive reports whether pid is still the process that started at start.
func alive(pid int, start uint64) bool {
	s, ok := procStart(pid)
	return ok && (start == 0 || s == start)
}

// nsMembers lists the host pids of the processes in the PID namespace
// whose init (seen from the host) is initPID, without the init itself,
// each with its pid inside that namespace.
func nsMembers(initPID int) (map[int]int, error) {
	ns, err := os.Readlink("/proc/" + strconv.Itoa(initPID) + "/ns/pid")
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == initPID {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err != nil || l != ns {
			continue
		}
		out[pid] = innerPID(pid)
	}
	return out, nil
}

// innerPID is the pid of a host process in its innermost PID namespace
// (last field of NSpid in /proc/PID/status), 0 if unknown.
func innerPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}

// signalNamespace delivers sig from the host side to the processes of the
// PID namespace of initPID (the shim): all of them but the shim, or only
// the one whose pid inside the namespace is batchPID.
func signalNamespace(initPID int, sig syscall.Signal, batchPID int) (int, error) {
	members, err := nsMembers(initPID)
	if err != nil {
		return 0, err
	}
	n := 0
	for pid, inner := range members {
		if batchPID > 0 && inner != batchPID {
			continue
		}
		if syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n, nil
}

// newSessionID returns a random UUID (version 4), the form Backend.AI
// gives its session ids.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// writeFileAtomic replaces path with data (write to a unique temporary
// name in the same directory, optionally fsync, rename, fsync the
// directory).
func writeFileAtomic(path string, data []byte, perm os.FileMode, durable bool) error {
	var r [6]byte
	_, _ = rand.Read(r[:])
	tmp := path + "." + hex.EncodeToString(r[:]) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if durable {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// readClaim parses a claim file: "PID START\n".
func readClaim(path string) (pid int, start uint64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	var p int
	var s uint64
	if _, err := fmt.Sscanf(string(b), "%d %d", &p, &s); err != nil {
		return 0, 0, false
	}
	return p, s, true
}

// cloexecFrom marks every open descriptor from lowest up close-on-exec,
// so that no child gets what this process inherited or opened without
// it (a job starts with stdin, stdout and stderr only, as under slurmd).
func cloexecFrom(lowest int) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= lowest {
			syscall.CloseOnExec(fd)
		}
	}
}

// noEINTR calls f again for as long as a signal interrupts it.
func noEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}
