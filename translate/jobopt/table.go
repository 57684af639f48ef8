package jobopt

// The option table of src/common/slurm_opt.c (common_options[]), merged
// over the three releases: one row per option and release range, in the
// table's order (getopt_long lists ambiguous abbreviations in this order,
// and an option's value is looked up as the first row carrying it).

type hasArg uint8

const (
	noArg hasArg = iota
	reqArg
	optArg
)

// Clients an option belongs to (set_func for all, or set_func_<client>).
type client uint8

const (
	cSalloc client = 1 << iota
	cSbatch
	cSrun
	cAll = cSalloc | cSbatch | cSrun
)

// Release behaviour groups: releases before 24.11 behave as 22.05, those
// before 26.05 as 24.11.
type rel uint8

const (
	r22 rel = iota
	r24
	r26
)

type optFlags uint8

const (
	sbEarly  optFlags = 1 << iota // sbatch: handled in the first pass only
	srEarly                       // srun: handled in the early pass only
	eachPass                      // reset before every het job component
)

// optDef is one row of common_options. val is the short option letter
// (one character) or the LONG_OPT_* name in lower case; rows sharing a
// val are the same option to slurm_process_option.
type optDef struct {
	name    string // long name; "" for environment-only options
	has     hasArg
	val     string
	clients client
	from    rel
	to      rel
	flags   optFlags
}

var optTable = []optDef{
	{"", noArg, "?", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"accel-bind", reqArg, "accel_bind", cSrun, r22, r26, eachPass},
	{"account", reqArg, "A", cAll, r22, r26, 0},
	{"acctg-freq", reqArg, "acctg_freq", cAll, r22, r26, 0},
	{"", reqArg, "alloc_nodelist", cAll, r22, r26, eachPass},
	{"array", reqArg, "a", cSbatch, r22, r26, 0},
	{"argv", reqArg, "argv", 0, r22, r26, 0},
	{"async", noArg, "async", cSrun, r26, r26, 0},
	{"autocomplete", reqArg, "complete_flag", cAll, r24, r26, 0},
	{"batch", reqArg, "batch", cSbatch, r22, r26, 0},
	{"bcast", optArg, "bcast", cSrun, r22, r26, eachPass},
	{"bcast-exclude", reqArg, "bcast_exclude", cSrun, r22, r26, eachPass},
	{"begin", reqArg, "b", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"bell", noArg, "bell", cSalloc, r22, r26, 0},
	{"bb", reqArg, "burst_buffer_spec", cSalloc | cSbatch | cSrun, r22, r26, eachPass},
	{"bbf", reqArg, "burst_buffer_file", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"cluster-constraint", reqArg, "cluster_constraint", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"chdir", reqArg, "D", cAll, r22, r26, 0},
	{"cluster", reqArg, "cluster", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"clusters", reqArg, "M", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"comment", reqArg, "comment", cAll, r22, r26, 0},
	{"compress", optArg, "compress", cSrun, r22, r26, eachPass},
	{"consolidate-segments", noArg, "consolidate_segments", cAll, r26, r26, eachPass},
	{"container", reqArg, "container", cAll, r22, r26, 0},
	{"container-id", reqArg, "container_id", cAll, r24, r26, 0},
	{"container-type", reqArg, "container_type", cAll, r26, r26, 0},
	{"context", reqArg, "context", cAll, r22, r26, 0},
	{"contiguous", noArg, "contiguous", cAll, r22, r26, eachPass},
	{"constraint", reqArg, "C", cAll, r22, r26, eachPass},
	{"core-spec", reqArg, "S", cAll, r22, r26, eachPass},
	{"cores-per-socket", reqArg, "corespersocket", cAll, r22, r26, eachPass},
	{"cpu-bind", reqArg, "cpu_bind", cSrun, r22, r26, eachPass},
	{"cpu_bind", reqArg, "cpu_bind", cSrun, r22, r26, eachPass},
	{"cpu-freq", reqArg, "cpu_freq", cAll, r22, r26, eachPass},
	{"cpus-per-gpu", reqArg, "cpus_per_gpu", cAll, r22, r26, eachPass},
	{"cpus-per-task", reqArg, "c", cAll, r22, r26, eachPass},
	{"deadline", reqArg, "deadline", cAll, r22, r26, 0},
	{"debugger-test", noArg, "debugger_test", cSrun, r22, r26, 0},
	{"delay-boot", reqArg, "delay_boot", cAll, r22, r26, 0},
	{"environment", reqArg, "environment", 0, r22, r26, 0},
	{"dependency", reqArg, "d", cAll, r22, r26, 0},
	{"disable-status", noArg, "X", cSrun, r22, r26, 0},
	{"distribution", reqArg, "m", cAll, r22, r26, eachPass},
	{"epilog", reqArg, "epilog", cSrun, r22, r26, 0},
	{"error", reqArg, "e", cSbatch | cSrun, r22, r26, 0},
	{"exact", noArg, "exact", cSrun, r22, r26, 0},
	{"exclude", reqArg, "x", cAll, r22, r26, 0},
	{"exclusive", optArg, "exclusive", cAll, r22, r26, eachPass},
	{"export", reqArg, "export", cSbatch | cSrun, r22, r26, 0},
	{"export-file", reqArg, "export_file", cSbatch, r22, r26, 0},
	{"external", noArg, "external", cSbatch, r26, r26, eachPass},
	{"external-launcher", optArg, "external_launcher", cSrun, r24, r26, 0},
	{"extra", reqArg, "extra", cAll, r24, r26, 0},
	{"extra-node-info", reqArg, "B", cAll, r22, r26, eachPass},
	{"get-user-env", optArg, "get_user_env", cSalloc | cSbatch, r22, r22, 0},
	{"get-user-env", optArg, "get_user_env", cSbatch, r24, r24, 0},
	{"get-user-env", noArg, "get_user_env", cSbatch, r26, r26, 0},
	{"gid", reqArg, "gid", cAll, r22, r22, 0},
	{"gid", reqArg, "gid", cSbatch, r24, r26, 0},
	{"gpu-bind", reqArg, "gpu_bind", cAll, r22, r26, eachPass},
	{"gpu-freq", reqArg, "gpu_freq", cAll, r22, r26, eachPass},
	{"gpus", reqArg, "G", cAll, r22, r26, eachPass},
	{"gpus-per-node", reqArg, "gpus_per_node", cAll, r22, r26, eachPass},
	{"gpus-per-socket", reqArg, "gpus_per_socket", cAll, r22, r26, eachPass},
	{"gpus-per-task", reqArg, "gpus_per_task", cAll, r22, r26, eachPass},
	{"gres", reqArg, "gres", cAll, r22, r26, eachPass},
	{"gres-flags", reqArg, "gres_flags", cAll, r22, r26, eachPass},
	{"help", noArg, "h", cAll, r22, r26, sbEarly},
	{"het-group", reqArg, "het_group", cSrun, r22, r26, srEarly},
	{"hint", reqArg, "hint", cAll, r22, r26, eachPass},
	{"hold", noArg, "H", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"ignore-pbs", noArg, "ignore_pbs", cSbatch, r22, r26, 0},
	{"ignore-signals", reqArg, "ignore_signals", cSrun, r26, r26, eachPass},
	{"immediate", optArg, "I", cSalloc | cSrun, r22, r26, 0},
	{"input", reqArg, "i", cSbatch | cSrun, r22, r26, 0},
	{"interactive", noArg, "interactive", cSrun, r22, r26, 0},
	{"jobid", reqArg, "jobid", cSrun, r22, r26, 0},
	{"job-name", reqArg, "J", cAll, r22, r26, 0},
	{"kill-command", optArg, "K", cSalloc, r22, r26, 0},
	{"kill-on-bad-exit", optArg, "K", cSrun, r22, r26, 0},
	{"kill-on-invalid-dep", reqArg, "kill_inv_dep", cSbatch, r22, r26, 0},
	{"label", noArg, "l", cSrun, r22, r26, 0},
	{"licenses", reqArg, "L", cAll, r22, r26, eachPass},
	{"mail-type", reqArg, "mail_type", cAll, r22, r26, eachPass},
	{"mail-user", reqArg, "mail_user", cAll, r22, r26, eachPass},
	{"threads", reqArg, "T", cSrun, r22, r26, 0},
	{"mcs-label", reqArg, "mcs_label", cAll, r22, r26, 0},
	{"mem", reqArg, "mem", cAll, r22, r26, 0},
	{"mem-bind", reqArg, "mem_bind", cAll, r22, r26, eachPass},
	{"mem-per-cpu", reqArg, "mem_per_cpu", cAll, r22, r26, eachPass},
	{"mem-per-gpu", reqArg, "mem_per_gpu", cAll, r22, r26, eachPass},
	{"mem-update", reqArg, "mem_update", cAll, r26, r26, 0},
	{"mincpus", reqArg, "mincpus", cAll, r22, r26, eachPass},
	{"mpi", reqArg, "mpi", cSrun, r22, r26, 0},
	{"msg-timeout", reqArg, "msg_timeout", cSrun, r22, r26, 0},
	{"multi-prog", noArg, "multi", cSrun, r22, r26, 0},
	{"network", reqArg, "network", cAll, r22, r26, eachPass},
	{"nice", optArg, "nice", cAll, r22, r26, 0},
	{"no-allocate", noArg, "Z", cSrun, r22, r26, 0},
	{"no-bell", noArg, "no_bell", cSalloc, r22, r26, 0},
	{"no-kill", optArg, "k", cAll, r22, r26, 0},
	{"no-shell", noArg, "no_shell", cSalloc, r22, r26, 0},
	{"no-requeue", noArg, "no_requeue", cSbatch, r22, r26, 0},
	{"nodefile", reqArg, "F", cAll, r22, r26, eachPass},
	{"nodelist", reqArg, "w", cAll, r22, r26, eachPass},
	{"nodes", reqArg, "N", cAll, r22, r26, eachPass},
	{"ntasks", reqArg, "n", cAll, r22, r26, eachPass},
	{"ntasks-per-core", reqArg, "ntaskspercore", cAll, r22, r26, eachPass},
	{"ntasks-per-gpu", reqArg, "ntaskspergpu", cAll, r22, r26, eachPass},
	{"ntasks-per-node", reqArg, "ntaskspernode", cAll, r22, r26, eachPass},
	{"ntasks-per-socket", reqArg, "ntaskspersocket", cAll, r22, r26, eachPass},
	{"ntasks-per-tres", reqArg, "ntaskspertres", cAll, r22, r26, eachPass},
	{"oom-kill-step", optArg, "oomkillstep", cAll, r24, r26, 0},
	{"open-mode", reqArg, "open_mode", cSbatch | cSrun, r22, r26, 0},
	{"output", reqArg, "o", cSbatch | cSrun, r22, r26, 0},
	{"overcommit", noArg, "O", cAll, r22, r26, eachPass},
	{"overlap", optArg, "overlap", cSrun, r22, r26, 0},
	{"oversubscribe", noArg, "s", cAll, r22, r26, eachPass},
	{"pack-group", reqArg, "het_group", cSrun, r22, r26, srEarly},
	{"parsable", noArg, "parsable", cSbatch, r22, r24, 0},
	{"parsable", noArg, "parsable", cSbatch | cSrun, r26, r26, 0},
	{"partition", reqArg, "p", cAll, r22, r26, eachPass},
	{"power", reqArg, "power", cAll, r22, r22, eachPass},
	{"prefer", reqArg, "prefer", cSalloc | cSbatch | cSrun, r22, r26, 0},
	{"preserve-env", noArg, "E", cSrun, r22, r26, 0},
	{"priority", reqArg, "priority", cAll, r22, r26, 0},
	{"profile", reqArg, "profile", cAll, r22, r26, 0},
	{"prolog", reqArg, "prolog", cSrun, r22, r26, 0},
	{"propagate", optArg, "propagate", cSbatch | cSrun, r22, r26, 0},
	{"pty", noArg, "pty", cSrun, r22, r22, 0},
	{"pty", optArg, "pty", cSrun, r24, r26, 0},
	{"qos", reqArg, "q", cAll, r22, r26, 0},
	{"quiet", noArg, "Q", cAll, r22, r26, sbEarly},
	{"quit-on-interrupt", noArg, "quit_on_intr", cSrun, r22, r26, 0},
	{"reboot", noArg, "reboot", cAll, r22, r26, 0},
	{"relative", reqArg, "r", cSrun, r22, r26, eachPass},
	{"requeue", noArg, "requeue", cSbatch, r22, r24, 0},
	{"requeue", optArg, "requeue", cSbatch, r26, r26, 0},
	{"resources", reqArg, "resources", cAll, r26, r26, eachPass},
	{"reservation", reqArg, "reservation", cAll, r22, r26, 0},
	{"resv-ports", optArg, "resv_ports", cSrun, r22, r22, eachPass},
	{"resv-ports", optArg, "resv_ports", cAll, r24, r26, eachPass},
	{"segment", reqArg, "segment_size", cAll, r24, r26, eachPass},
	{"send-libs", optArg, "send_libs", cSrun, r22, r26, eachPass},
	{"signal", reqArg, "signal", cAll, r22, r26, 0},
	{"slurmd-debug", reqArg, "slurmd_debug", cSrun, r22, r26, 0},
	{"sockets-per-node", reqArg, "socketspernode", cAll, r22, r26, eachPass},
	{"spread-job", noArg, "spread_job", cAll, r22, r26, eachPass},
	{"spread-segments", noArg, "spread_segments", cAll, r26, r26, eachPass},
	{"stepmgr", noArg, "stepmgr", cAll, r24, r26, 0},
	{"", reqArg, "switch_req", cAll, r22, r26, eachPass},
	{"", reqArg, "switch_wait", cAll, r22, r26, eachPass},
	{"switches", reqArg, "switches", cAll, r22, r26, eachPass},
	{"task-epilog", reqArg, "task_epilog", cSrun, r22, r26, 0},
	{"task-prolog", reqArg, "task_prolog", cSrun, r22, r26, 0},
	{"tasks-per-node", reqArg, "ntaskspernode", cAll, r22, r26, eachPass},
	{"test-only", noArg, "test_only", cSbatch | cSrun, r22, r26, 0},
	{"thread-spec", reqArg, "thread_spec", cAll, r22, r26, eachPass},
	{"threads-per-core", reqArg, "threadspercore", cAll, r22, r26, eachPass},
	{"time", reqArg, "t", cAll, r22, r26, 0},
	{"time-min", reqArg, "time_min", cAll, r22, r26, 0},
	{"tmp", reqArg, "tmp", cAll, r22, r26, eachPass},
	{"treewidth", reqArg, "tree_width", cSrun, r24, r26, 0},
	{"tres-bind", reqArg, "tres_bind", cAll, r24, r26, eachPass},
	{"tres-per-task", reqArg, "tres_per_task", cAll, r24, r26, eachPass},
	{"uid", reqArg, "uid", cAll, r22, r22, 0},
	{"uid", reqArg, "uid", cSbatch, r24, r26, 0},
	{"unbuffered", noArg, "u", cSrun, r22, r26, 0},
	{"use-min-nodes", noArg, "use_min_nodes", cAll, r22, r26, eachPass},
	{"verbose", noArg, "v", cAll, r22, r26, sbEarly},
	{"version", noArg, "V", cAll, r22, r26, sbEarly},
	{"", noArg, "umask", cSbatch, r22, r26, eachPass},
	{"usage", noArg, "usage", cAll, r22, r26, sbEarly},
	{"wait", noArg, "W", cSbatch, r22, r26, 0},
	{"wait-all-nodes", reqArg, "wait_all_nodes", cSalloc | cSbatch, r22, r26, 0},
	{"wait", reqArg, "W", cSrun, r22, r26, 0},
	{"wait-for-children", noArg, "wait_for_children", cSrun, r26, r26, 0},
	{"wckey", reqArg, "wckey", cAll, r22, r26, 0},
	{"whole", noArg, "whole", cSrun, r22, r26, 0},
	{"wrap", reqArg, "wrap", cSbatch, r22, r26, sbEarly},
	{"x11", optArg, "x11", cSalloc | cSrun, r22, r26, 0},
}
