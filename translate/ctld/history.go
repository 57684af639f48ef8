package ctld

import (
	"fmt"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// Accounting history of steps: a step's record goes to the store when it
// ends (its job's own record goes with the job's final state, state.Store
// Put). Written by one goroutine, in order, off the step's path.

type histWriter struct {
	mu      sync.Mutex
	pending []histItem
	kick    chan struct{}
	once    sync.Once
}

type histItem struct {
	job  uint32
	step state.HistStep
}

// sigOOM: slurmstepd's status of a task the OOM killer met.
const sigOOM = 253

// stepState is the state accounting gives a step that ended with raw
// status rc, as slurmstepd reports it.
func stepState(s *step, rc uint32) uint32 {
	switch {
	case s.timedOut:
		return codec.JOB_TIMEOUT
	case rc&0xff == sigOOM:
		return codec.JOB_OOM
	case s.killedBy != 0:
		return codec.JOB_CANCELLED
	case rc != 0:
		return codec.JOB_FAILED
	}
	return codec.JOB_COMPLETE
}

// recordStep queues the history record of step s of job jobID, which
// ended at end with raw status rc (c.mu held).
func (c *Controller) recordStep(jobID uint32, s *step, rc uint32, state_ uint32, end int64) {
	if c.opt.Store == nil {
		return
	}
	req := uint32(codec.NoVal)
	if s.killedBy != 0 {
		req = s.killedBy - 1
	}
	h := state.HistStep{ID: s.id, Name: s.name, Nodes: s.nodeList, NNodes: uint32(len(s.nodes)), NTasks: s.tasks,
		CPUs: s.cpus, Start: s.start, End: end, ExitCode: rc, State: state_, ReqUID: req, SubmitLine: s.submitLine,
		TresAlloc: fmt.Sprintf("1=%d,4=%d", s.cpus, len(s.nodes)), TaskDist: taskDistBlock}
	if u := s.usage; u.Measured {
		h.UserCPUus, h.SysCPUus = uint64(u.UserCPU.Microseconds()), uint64(u.SysCPU.Microseconds())
		h.MaxRSS, h.MaxRSSTask, h.MaxRSSNode = u.MaxRSS, u.MaxRSSTask, u.MaxRSSNode
	}
	w := &c.hist
	w.once.Do(func() {
		w.kick = make(chan struct{}, 1)
		go c.writeHistory()
	})
	w.mu.Lock()
	w.pending = append(w.pending, histItem{jobID, h})
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (c *Controller) writeHistory() {
	w := &c.hist
	for range w.kick {
		w.mu.Lock()
		items := w.pending
		w.pending = nil
		w.mu.Unlock()
		for _, it := range items {
			if err := c.opt.Store.PutStep(it.job, &it.step); err != nil {
				c.logf("job %d: step %d's accounting record: %v", it.job, it.step.ID, err)
			}
		}
	}
}

// historyRetention is how long finished jobs stay in the history
// (FrontendHistoryRetention, days; default a year, as slurmdbd sites
// commonly purge).
func (c *Controller) historyRetention() time.Duration {
	days := int64(365)
	if v := c.config().Get("FrontendHistoryRetention", ""); v != "" {
		if n, err := parseUint32(v); err == nil && n > 0 {
			days = int64(n)
		}
	}
	return time.Duration(days) * 24 * time.Hour
}

// purgeHistory drops history past the retention, once at start and then
// daily.
func (c *Controller) purgeHistoryLoop(stop <-chan struct{}) {
	if c.opt.Store != nil {
		// A store from before the history: its finished jobs, once.
		if n, err := c.opt.Store.BackfillHistory(); err != nil {
			c.logf("history: writing the records of jobs that ended before it: %v", err)
		} else if n > 0 {
			c.logf("history: %d jobs that ended before it recorded", n)
		}
		if err := c.opt.Store.BackfillSpan(); err != nil {
			c.logf("history: the longest run: %v", err)
		}
		if _, err := c.opt.Store.BackfillAssocs(); err != nil {
			c.logf("history: the associations of the jobs before them: %v", err)
		}
	}
	t := time.NewTicker(24 * time.Hour)
	defer t.Stop()
	for {
		if c.opt.Store != nil {
			if n, err := c.opt.Store.PurgeHistory(time.Now().Add(-c.historyRetention())); err != nil {
				c.logf("history retention: %v", err)
			} else if n > 0 {
				c.logf("history retention: %d jobs older than %v purged", n, c.historyRetention())
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}
