package ctld

import (
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

// setDebugLevel handles REQUEST_SET_DEBUG_LEVEL (scontrol setdebug): root
// and the SlurmUser only (slurmctld's validate_super_user: operators are
// refused EACCES as well), the level clamped to quiet..debug5, applied
// to the server's log at once (Options.SetDebugLevel) and shown by
// `scontrol show config` as SlurmctldDebug until the next setdebug or
// reconfigure.
func (c *Controller) setDebugLevel(req *Request) Reply {
	if req.UID != 0 && req.UID != c.opt.SlurmUID {
		c.logf("error: set debug level request from non-super user uid=%d", req.UID)
		return rcReply(codec.EACCES)
	}
	var m codec.SetDebugLevelRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	if c.opt.SetDebugLevel == nil {
		return rcReply(codec.ESLURM_NOT_SUPPORTED)
	}
	level := min(m.Level, logLevelEnd-1)
	c.opt.SetDebugLevel(int(level))
	c.debugLevel.Store(level + 1)
	c.logf("Set debug level to '%s'", logLevelNames[level])
	now := time.Now().Unix()
	c.mu.Lock()
	c.nodes.confUpdate = now // show config changed
	c.rebuild(now)
	c.mu.Unlock()
	return rcReply(codec.SLURM_SUCCESS)
}

var logLevelNames = [...]string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"}
