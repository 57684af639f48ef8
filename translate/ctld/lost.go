package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate"
)

// Steps lost with the server. A step's tasks are relayed to srun by this
// process (the node stand-ins are slurmstepd here), so a step does not
// outlive it: a stop or a crash is, to the step, the failure of its
// nodes. Without a word srun would wait for ever for its tasks' exits.
// So srun is told as slurmctld tells it of a failed node (SRUN_NODE_FAIL:
// "srun: error: Node failure on n1", exit 1), and the step's tasks are
// ended, at a clean stop for the steps then live and, after a crash, at
// the next start from the list kept here (meta "steps").

// lostStep is what telling srun and ending the tasks take.
type lostStep struct {
	Job     uint32 `json:"job"`
	Step    uint32 `json:"step"`
	Nodes   string `json:"nodes"`
	Srun    string `json:"srun,omitempty"` // srun's step port
	Version uint16 `json:"version"`
	UID     uint32 `json:"uid"`
	Session string `json:"session"`
}

// StepReaper is an engine that can end a step's tasks in a session by
// the step's id alone (after a restart, when no task handle is left).
type StepReaper interface {
	KillStepTasks(ctx context.Context, id translate.SessionID, jobID, stepID uint32) (int, error)
}

type stepSaver struct {
	once sync.Once
	kick chan struct{}
}

// stepsChanged asks for the live steps' list to be written (c.mu held):
// by one goroutine, the latest list each time, so writes never reorder
// and a burst of steps costs one write.
func (c *Controller) stepsChanged() {
	if c.opt.Store == nil {
		return
	}
	c.saver.once.Do(func() {
		c.saver.kick = make(chan struct{}, 1)
		go func() {
			for range c.saver.kick {
				c.mu.Lock()
				list := c.liveSteps()
				c.mu.Unlock()
				b, _ := json.Marshal(list)
				if err := c.opt.Store.PutMeta("steps", b); err != nil {
					c.logf("recording the live steps: %v", err)
				}
			}
		}()
	})
	select {
	case c.saver.kick <- struct{}{}:
	default:
	}
}

// liveSteps lists the live steps (c.mu held).
func (c *Controller) liveSteps() []lostStep {
	out := []lostStep{}
	for jobID, js := range c.steps {
		e := c.entry(jobID)
		if e == nil {
			continue
		}
		j := e.job()
		for _, s := range js.live {
			l := lostStep{Job: jobID, Step: s.id, Nodes: s.nodeList, Version: s.version, UID: j.UserID, Session: j.SessionID}
			if s.srun.IsValid() {
				l.Srun = s.srun.String()
			}
			out = append(out, l)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		return out[a].Job < out[b].Job || out[a].Job == out[b].Job && out[a].Step < out[b].Step
	})
	return out
}

// takeLostSteps reads (and clears) the steps the last run left live: it
// crashed with them. Called at start, before any step of this run.
func (c *Controller) takeLostSteps() []lostStep {
	if c.opt.Store == nil {
		return nil
	}
	b, err := c.opt.Store.Meta("steps")
	if err != nil || len(b) == 0 {
		return nil
	}
	var list []lostStep
	if err := json.Unmarshal(b, &list); err != nil {
		c.logf("the last run's live steps: %v", err)
	}
	if len(list) > 0 {
		_ = c.opt.Store.PutMeta("steps", []byte("[]"))
	}
	return list
}

// StopSteps ends the live steps at a clean stop: srun is told their
// nodes failed, their tasks are ended. The list stays for the next start
// only if this does not finish.
func (c *Controller) StopSteps(ctx context.Context) {
	c.mu.Lock()
	list := c.liveSteps()
	c.mu.Unlock()
	if len(list) == 0 {
		return
	}
	c.logf("stopping: %d live steps end with the server (their sruns are told their nodes failed)", len(list))
	c.loseSteps(ctx, list)
	// An srun that made its own allocation gives it back on hearing of
	// the failure: a moment for that to reach the controller, still up
	// (salloc's allocations stay, and so cost the whole moment).
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		c.mu.Lock()
		held := false
		for _, l := range list {
			if e := c.entry(l.Job); e != nil {
				j := e.job()
				held = held || j.Origin == originAlloc && codec.JobIsRunning(j.State) && j.State&codec.JOB_COMPLETING == 0
			}
		}
		c.mu.Unlock()
		if !held {
			break
		}
	}
	if c.opt.Store != nil {
		_ = c.opt.Store.PutMeta("steps", []byte("[]"))
	}
}

func (c *Controller) loseSteps(ctx context.Context, list []lostStep) {
	var wg sync.WaitGroup
	for _, l := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.loseStep(ctx, l)
		}()
	}
	wg.Wait()
}

// StepAbandoner is a StepSignaller that can stop telling srun of a step
// (its tasks' exits) once srun has heard that the step's nodes failed.
type StepAbandoner interface {
	AbandonStep(jobID, stepID uint32)
}

func (c *Controller) loseStep(ctx context.Context, l lostStep) {
	if a, ok := c.opt.Steps.(StepAbandoner); ok {
		a.AbandonStep(l.Job, l.Step)
	}
	told := "no srun port known"
	if to, err := netip.ParseAddrPort(l.Srun); err == nil && c.opt.Caller != nil {
		m := codec.SrunNodeFail{StepID: codec.JobStepID{JobID: l.Job, StepID: l.Step, StepHetComp: codec.NoVal}, NodeList: l.Nodes}
		var w codec.Writer
		m.Encode(&w, l.Version)
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := c.opt.Caller.Call(cctx, to, l.Version, codec.SRUN_NODE_FAIL, w.B, l.UID, false)
		cancel()
		told = "srun told (SRUN_NODE_FAIL)"
		if err != nil {
			told = "srun not reached: " + err.Error()
		}
	}
	killed := "tasks left to the job's end"
	if r, ok := c.opt.Exec.(StepReaper); ok && l.Session != "" {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := r.KillStepTasks(cctx, translate.SessionID(l.Session), l.Job, l.Step)
		cancel()
		if err != nil {
			killed = "its tasks not ended: " + err.Error()
		} else {
			killed = fmt.Sprintf("%d processes of its tasks ended", n)
		}
	}
	c.logf("job %d: step %d on %s lost: %s; %s", l.Job, l.Step, l.Nodes, told, killed)
}
