package ctld

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// InactiveLimit (slurm.conf): an allocation whose salloc or srun stops
// answering is ended, as slurmctld ends it. Every InactiveLimit/3 the
// controller pings (SRUN_PING to the client's other port) the running
// allocations it has not heard from lately; an answer marks the job
// active; one not heard from for 4/3 of the limit (plus MessageTimeout)
// ends TIMEOUT with reason InactiveLimit. Batch jobs are not watched.

// inactiveLimit is InactiveLimit in seconds (0: none).
func (c *Controller) inactiveLimit() int64 {
	v, err := strconv.ParseInt(c.config().Get("InactiveLimit", "0"), 10, 32)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

func (c *Controller) msgTimeout() int64 {
	v, err := strconv.ParseInt(c.config().Get("MessageTimeout", "10"), 10, 32)
	if err != nil || v <= 0 {
		return 10
	}
	return v
}

// markActive records that job id's client was heard from (c.mu held).
func (c *Controller) markActive(id uint32, at time.Time) {
	if c.lastActive == nil {
		c.lastActive = map[uint32]time.Time{}
	}
	c.lastActive[id] = at
}

// watchInactive pings and ends inactive allocations.
func (c *Controller) watchInactive(ctx context.Context) {
	limit := c.inactiveLimit()
	if limit == 0 || c.opt.Caller == nil {
		return
	}
	every := time.Duration(max(limit/3, 1)) * time.Second
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.checkInactive(ctx, time.Now(), limit)
	}
}

type pingTarget struct {
	id, uid uint32
	v       uint16
	to      netip.AddrPort
}

// checkInactive is one round of watchInactive at now.
func (c *Controller) checkInactive(ctx context.Context, now time.Time, limit int64) {
	mt := c.msgTimeout()
	pingBefore := now.Add(-time.Duration(limit/3-mt-1) * time.Second)
	endBefore := now.Add(-time.Duration(limit*4/3+mt+1) * time.Second)
	var ping []pingTarget
	var end []uint32
	c.mu.Lock()
	for _, e := range c.jobs {
		j := e.job()
		if j.Origin != originAlloc || !codec.JobIsRunning(j.State) || j.State&codec.JOB_COMPLETING != 0 {
			continue
		}
		to, ok := clientAddr(j.RespHost, j.OtherPort)
		if !ok {
			continue // a client without a port to ping is not watched (slurmctld: other_port 0)
		}
		last, seen := c.lastActive[j.ID]
		if !seen {
			// Running since before this server started, or granted
			// before the watch: counted from now.
			c.markActive(j.ID, now)
			continue
		}
		switch {
		case !last.After(endBefore):
			end = append(end, j.ID)
		case !last.After(pingBefore):
			ping = append(ping, pingTarget{id: j.ID, uid: j.UserID, v: j.ProtoVersion, to: to})
		}
	}
	for id := range c.lastActive {
		if e := c.entry(id); e == nil || codec.JobIsFinished(e.job().State) {
			delete(c.lastActive, id)
		}
	}
	c.mu.Unlock()
	for _, id := range end {
		c.logf("job %d: inactivity time limit reached: ending it", id)
		c.mu.Lock()
		e := c.entry(id)
		var j state.Job
		if e != nil {
			j = *e.job()
		}
		c.mu.Unlock()
		if e == nil {
			continue
		}
		c.allocEnded(&j) // it may still hear: tell it, as the job's end is told
		c.endAllocation(id, codec.NoVal, codec.JOB_TIMEOUT, codec.FAIL_INACTIVE_LIMIT)
	}
	for _, p := range ping {
		go func() {
			pctx, cancel := context.WithTimeout(ctx, time.Duration(mt)*time.Second)
			defer cancel()
			var w codec.Writer
			(&codec.SrunPing{}).Encode(&w, p.v)
			if _, err := c.opt.Caller.Call(pctx, p.to, p.v, codec.SRUN_PING, w.B, p.uid, true); err == nil {
				c.mu.Lock()
				c.markActive(p.id, time.Now())
				c.mu.Unlock()
			}
		}()
	}
}
