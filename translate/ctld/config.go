package ctld

import (
	"github.com/lablup/slurm-frontend/codec"
)

// versionString names the Slurm release a client of this protocol
// version expects its controller to run (scontrol show config prints it).
func versionString(v uint16) string {
	switch v {
	case codec.V22_05:
		return "22.05.8"
	case codec.V23_02:
		return "23.02.7"
	case codec.V23_11:
		return "23.11.10"
	case codec.V24_05:
		return "24.05.8"
	case codec.V24_11:
		return "24.11.5"
	case codec.V25_05:
		return "25.05.0"
	case codec.V25_11:
		return "25.11.0"
	}
	return "26.05.5"
}

// buildInfo renders the controller configuration for scontrol show config.
func (c *Controller) buildInfo(s *Snapshot) codec.BuildInfo {
	bi := codec.BuildInfo{}
	bi.LastUpdate = s.ConfUpdate
	bi.ClusterName = c.opt.ClusterName
	bi.ControlMachine = []string{c.opt.ServerHost}
	bi.ControlAddr = []string{c.opt.ServerAddr}
	bi.AuthType = "auth/munge"
	bi.CredType = "cred/munge"
	bi.BootTime = c.started.Unix()
	bi.MsgTimeout = 10
	return bi
}

// statsInfo answers sdiag from the edge's RPC counters.
func (c *Controller) statsInfo(req *Request) Reply {
	return rcReply(codec.ESLURM_NOT_SUPPORTED)
}
