package ctld

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// expandPath turns an sbatch -o/-e/-i pattern into the path slurmd opens:
// %% %A %a %j %J %s %u %x %t %n %b, with optional zero padding (%5j),
// relative to the work directory. %N (the first node's name) is left for
// the engine, which alone knows the placement.
func expandPath(pattern string, j *state.Job) string {
	if pattern == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		ch := pattern[i]
		if ch != '%' || i+1 >= len(pattern) {
			b.WriteByte(ch)
			continue
		}
		k := i + 1
		width := 0
		for k < len(pattern) && pattern[k] >= '0' && pattern[k] <= '9' {
			width = width*10 + int(pattern[k]-'0')
			k++
		}
		if k >= len(pattern) {
			b.WriteString(pattern[i:])
			break
		}
		pad := func(v uint64) string {
			s := strconv.FormatUint(v, 10)
			for len(s) < width && width <= 10 {
				s = "0" + s
			}
			return s
		}
		switch pattern[k] {
		case '%':
			b.WriteByte('%')
		case 'A':
			if j.ArrayJobID != 0 {
				b.WriteString(pad(uint64(j.ArrayJobID)))
			} else {
				b.WriteString(pad(uint64(j.ID)))
			}
		case 'a':
			if j.ArrayTaskID != codec.NoVal && j.ArrayJobID != 0 {
				b.WriteString(pad(uint64(j.ArrayTaskID)))
			} else {
				// slurmd writes NO_VAL for a non-array job's %a.
				b.WriteString(strconv.FormatUint(uint64(codec.NoVal), 10))
			}
		case 'b':
			if j.ArrayTaskID != codec.NoVal {
				b.WriteString(pad(uint64(j.ArrayTaskID % 10)))
			} else {
				b.WriteString(pad(0))
			}
		case 'j':
			b.WriteString(pad(uint64(j.ID)))
		case 'J':
			b.WriteString(pad(uint64(j.ID)) + ".batch")
		case 's':
			b.WriteString("batch")
		case 'u':
			b.WriteString(j.UserName)
		case 'x':
			b.WriteString(j.Name)
		case 't', 'n':
			b.WriteString(pad(0))
		case 'N':
			b.WriteString(pattern[i : k+1])
		default:
			// Unknown escapes are kept as written, as slurmd does.
			b.WriteString(pattern[i : k+1])
		}
		i = k
	}
	p := b.String()
	if !filepath.IsAbs(p) && j.WorkDir != "" {
		p = filepath.Join(j.WorkDir, p)
	}
	return p
}

// jobEnv is the environment the batch script sees: what sbatch sent (the
// exported variables and the SBATCH-set SLURM_* ones) plus what slurmd
// adds for the job. Placement-dependent variables (node list, CPUs on the
// node, GPUs) are the engine's to add.
func (c *Controller) jobEnv(j *state.Job, sent []string, tasks *arrayRange) []string {
	set := map[string]string{
		"SLURM_JOB_ID":         itoa(uint64(j.ID)),
		"SLURM_JOBID":          itoa(uint64(j.ID)),
		"SLURM_JOB_NAME":       j.Name,
		"SLURM_JOB_USER":       j.UserName,
		"SLURM_JOB_UID":        itoa(uint64(j.UserID)),
		"SLURM_JOB_GID":        itoa(uint64(j.GroupID)),
		"SLURM_JOB_PARTITION":  j.Partition,
		"SLURM_CLUSTER_NAME":   c.opt.ClusterName,
		"SLURM_NODEID":         "0",
		"SLURM_PROCID":         "0",
		"SLURM_LOCALID":        "0",
		"SLURM_TASK_PID":       "0",
		"SLURM_GTIDS":          "0",
		"SLURM_PRIO_PROCESS":   "0",
		"ENVIRONMENT":          "BATCH",
		"SLURM_JOB_START_TIME": itoa(uint64(max(j.StartTime, 0))),
	}
	if j.Account != "" {
		set["SLURM_JOB_ACCOUNT"] = j.Account
	}
	if j.QOS != "" {
		set["SLURM_JOB_QOS"] = j.QOS
	}
	if j.DescFlags&jobNtasksSet != 0 {
		set["SLURM_NTASKS"] = itoa(uint64(j.NumTasks))
		set["SLURM_NPROCS"] = itoa(uint64(j.NumTasks))
	}
	if j.CPUsPerTask > 1 || j.DescFlags&jobCPUsSet != 0 {
		set["SLURM_CPUS_PER_TASK"] = itoa(uint64(j.CPUsPerTask))
	}
	if j.MemPerNodeMB > 0 {
		set["SLURM_MEM_PER_NODE"] = itoa(j.MemPerNodeMB)
	}
	if j.MemPerCPUMB > 0 {
		set["SLURM_MEM_PER_CPU"] = itoa(j.MemPerCPUMB)
	}
	if j.TimeLimit != codec.Infinite && j.StartTime > 0 {
		set["SLURM_JOB_END_TIME"] = itoa(uint64(j.StartTime) + uint64(j.TimeLimit)*60)
	}
	if j.ArrayJobID != 0 && j.ArrayTaskID != codec.NoVal {
		set["SLURM_ARRAY_JOB_ID"] = itoa(uint64(j.ArrayJobID))
		set["SLURM_ARRAY_TASK_ID"] = itoa(uint64(j.ArrayTaskID))
		if tasks != nil {
			set["SLURM_ARRAY_TASK_COUNT"] = itoa(uint64(tasks.count()))
			set["SLURM_ARRAY_TASK_MIN"] = itoa(uint64(tasks.min()))
			set["SLURM_ARRAY_TASK_MAX"] = itoa(uint64(tasks.max()))
			set["SLURM_ARRAY_TASK_STEP"] = itoa(uint64(tasks.step()))
		}
	}
	set["SLURM_TASKS_PER_NODE"] = tasksPerNode(j)
	if p := c.nodeConfPath(); p != "" {
		// slurmd forces its own config on the job (the submitter's path
		// may not exist on the node), and drops SLURM_CONF_SERVER.
		set["SLURM_CONF"] = p
	}
	out := make([]string, 0, len(sent)+len(set))
	for _, kv := range sent {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := set[k]; over {
			continue
		}
		if k == "SLURM_CONF_SERVER" && c.nodeConfPath() != "" {
			continue
		}
		if strings.HasPrefix(k, "SLURM_RLIMIT_") {
			// sbatch forwards its limits for slurmd to apply; slurmd
			// removes them from the job's environment.
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// tasksPerNode is SLURM_TASKS_PER_NODE: tasks spread evenly, the first
// nodes taking the remainder, in Slurm's compressed "2(x3),1" form.
func tasksPerNode(j *state.Job) string {
	nodes := max(j.MinNodes, 1)
	base, extra := j.NumTasks/nodes, j.NumTasks%nodes
	if base == 0 {
		base, extra = 1, 0
	}
	var parts []string
	add := func(v, n uint32) {
		if n == 0 {
			return
		}
		p := itoa(uint64(v))
		if n > 1 {
			p += "(x" + itoa(uint64(n)) + ")"
		}
		parts = append(parts, p)
	}
	add(base+1, extra)
	add(base, nodes-extra)
	return strings.Join(parts, ",")
}
