package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/lablup/slurm-frontend/translate"
)

// KillStepTasks ends what is left of a step's tasks in a session when the
// server that relayed them is gone (translate/ctld's lost steps): every
// process in the job's PID namespace whose environment names the job and
// the step (SLURM_JOB_ID, SLURM_STEP_ID, as the node stand-in set them
// for the task and its children inherit them). It returns how many it
// killed. Each is held by a pidfd while it is checked and signalled, so a
// pid reused meanwhile is never signalled.
func (e *Engine) KillStepTasks(_ context.Context, id translate.SessionID, jobID, stepID uint32) (int, error) {
	x, err := e.exec()
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	s := x.sessions[id]
	var pid int
	var start uint64
	if s != nil {
		pid, start = s.shimPID, s.shimStart
	}
	x.mu.Unlock()
	if s == nil || pid == 0 || !alive(pid, start) {
		return 0, nil // no session: nothing of it is left
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return 0, err
	}
	// The shim is the namespace's init: its tasks share its namespace.
	want := [][]byte{
		[]byte("SLURM_JOB_ID=" + strconv.FormatUint(uint64(jobID), 10)),
		[]byte("SLURM_STEP_ID=" + strconv.FormatUint(uint64(stepID), 10)),
	}
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	killed := 0
	for _, n := range names {
		p, err := strconv.Atoi(n)
		if err != nil || p == pid {
			continue
		}
		fd, err := unix.PidfdOpen(p, 0)
		if err != nil {
			continue
		}
		if inNamespace(p, ns) && hasEnv(p, want) && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
			killed++
		}
		unix.Close(fd)
	}
	return killed, nil
}

// inNamespace: process p is in the PID namespace ns (a /proc/PID/ns/pid
// link's text).
func inNamespace(p int, ns string) bool {
	got, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", p))
	return err == nil && got == ns
}

func hasEnv(p int, want [][]byte) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
	if err != nil {
		return false
	}
	for _, w := range want {
		found := false
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(kv, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
