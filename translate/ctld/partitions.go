package ctld

import (
	"slices"
	"strings"

	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// A job may be submitted to several partitions (-p debug,cpu). Like
// slurmctld it shows the list while pending and the one it runs in once
// started. Difference from slurmctld, which keeps trying every listed
// partition until one can start the job: the job is handed to the engine
// for one partition (a Backend.AI session targets one resource group),
// chosen when it becomes eligible: the first that can start it then, else
// the first that could ever hold it.

// partitionsOf returns the configured partitions a job names, in its order.
func (c *Controller) partitionsOf(j *state.Job) []*conf.Partition {
	var out []*conf.Partition
	parts := c.cluster().parts
	for _, name := range strings.Split(j.Partition, ",") {
		for i := range parts {
			if parts[i].Name == name {
				out = append(out, &parts[i])
			}
		}
	}
	return out
}

// runPartition is where a job runs: its partition, or for a list the
// choice above (nil when none of its partitions exists any more).
func (c *Controller) runPartition(j *state.Job) *conf.Partition {
	parts := c.partitionsOf(j)
	if len(parts) <= 1 {
		if len(parts) == 1 {
			return parts[0]
		}
		return nil
	}
	topo := c.currentTopology()
	for _, p := range parts {
		if _, _, ok := c.placeJob(j, p, topo, true); ok {
			return p
		}
	}
	for _, p := range parts {
		if c.fits(j, p) == nil {
			return p
		}
	}
	return parts[0]
}

// partitionWithNode picks, of a job's listed partitions, the first that
// has node (where the engine started it).
func (c *Controller) partitionWithNode(j *state.Job, node string) string {
	for _, p := range c.partitionsOf(j) {
		if slices.Contains(p.Nodes, node) {
			return p.Name
		}
	}
	return j.Partition
}
