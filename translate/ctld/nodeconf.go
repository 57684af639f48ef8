package ctld

import (
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
)

// The node stand-ins' config: what a configless slurmd keeps in its conf
// cache and gives its jobs as SLURM_CONF. Jobs of the embedded engine run
// on this host; the client commands in their scripts (squeue, scontrol,
// srun, sbatch of a follow-up job) read it and reach this server, whatever
// the submitter's own SLURM_CONF was (a path on a login node that may not
// exist here).

// nodeConfPath is the config file jobs get, "" if none is kept.
func (c *Controller) nodeConfPath() string {
	if c.opt.NodeConfDir == "" {
		return ""
	}
	return filepath.Join(c.opt.NodeConfDir, "slurm.conf")
}

// writeNodeConf writes the stand-ins' slurm.conf if it changed: the login
// nodes' one, with the server's address as this host reaches it (the
// loopback address when the server listens on every address). The file
// is replaced by a rename, so a job's client never reads half of it.
func (c *Controller) writeNodeConf() {
	path := c.nodeConfPath()
	if path == "" {
		return
	}
	var local netip.Addr
	if c.login().Addr == "" {
		local = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	text := c.loginSlurmConf(local)
	c.nodeConfMu.Lock()
	defer c.nodeConfMu.Unlock()
	if text == c.nodeConfText {
		return
	}
	// The directory is the server's (under its state directory, root's,
	// readable by all): no user can plant anything in it.
	if err := os.MkdirAll(c.opt.NodeConfDir, 0o755); err != nil {
		c.logf("node config: %v (jobs' client commands read the submitter's SLURM_CONF)", err)
		return
	}
	// The operator may name any directory: one another user could change
	// (theirs, writable by others, or a link) is not written into.
	if fi, err := os.Lstat(c.opt.NodeConfDir); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 ||
		fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		c.logf("node config: %s is not a directory of the server's that only it may write: not written", c.opt.NodeConfDir)
		return
	}
	f, err := os.CreateTemp(c.opt.NodeConfDir, ".slurm.conf.")
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		c.logf("node config: %v", err)
		return
	}
	c.nodeConfText = text
}
