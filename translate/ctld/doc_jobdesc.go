package ctld

// How each job_desc field of sbatch is treated (honest compatibility: a
// field the engine can honour is translated; one it cannot is refused at
// submit time with the Slurm error that says so, never silently ignored).
//
//	field (sbatch option)                 treatment
//	-J name, --comment, -A, --qos         kept and shown (no accounting: as slurmctld without slurmdbd)
//	-p (comma list)                       first usable listed partition; unknown → ESLURM_INVALID_PARTITION_NAME
//	-N, -n, --ntasks-per-node, -c         sizes the session (nodes × CPUs per node); impossible → CPU count per node can not be satisfied
//	--mem, --mem-per-cpu                  memory per node for placement and the cgroup limit; none → whole node (CR_Core_Memory)
//	--gres / --gpus-per-node              GPUs per node (fake devices on the embedded engine), CUDA_VISIBLE_DEVICES
//	-t, --time-min                        time limit enforced by the engine (SIGTERM, SIGKILL after KillWait)
//	-o/-e/-i with %j %A %a %x %u %N ...   expanded as slurmd does; %N by the engine at placement
//	--open-mode                           append/truncate of the output files
//	-D, --export (ALL, NONE, lists)       work directory; the environment sbatch sends, plus slurmd's SLURM_* variables
//	--array (ranges, steps, lists, %max)  one session per task, throttled; tasks addressable as N_T
//	--dependency (after*, singleton, ?,)  evaluated by the controller; unsatisfiable → DependencyNeverSatisfied
//	--kill-on-invalid-dep                 cancels such a job
//	--begin, --deadline                   eligibility time; past deadline → DEADLINE
//	-H/--hold, --nice, --priority (ops)   holds, priority order of hand-over to the engine
//	--requeue/--no-requeue                kept; scontrol requeue runs the job again (output appended)
//	--signal[=B:]SIG@TIME                 sent by the engine TIME seconds before the limit
//	--exclusive, -w, -x                   whole nodes; required / excluded nodes for placement
//	-C features                           must name features some node offers, else ESLURM_INVALID_FEATURE
//	--container                           the session image (Backend.AI); on the embedded engine an OCI
//	                                      bundle run with crun, as slurmd with oci.conf (refused
//	                                      without crun or when the path is no bundle)
//	--mail-type/--mail-user               MailProg runs on begin/end/fail; refused when no MailProg can run
//	--wrap, --parsable, --wait            client side (sbatch --wait polls the controller)
//	--test-only                           REQUEST_JOB_WILL_RUN: validated as a submission, nothing stored; start/nodes/CPUs from the engine's free CPUs
//	--reservation                         refused: ESLURM_RESERVATION_INVALID (no reservations)
//	-L licenses                           refused: ESLURM_INVALID_LICENSES (none configured)
//	--bb, --bbf                           refused: ESLURM_INVALID_BURST_BUFFER_REQUEST
//	-M clusters, --reboot, --core-spec,
//	--thread-spec, --x11, --switches      refused: ESLURM_NOT_SUPPORTED with the reason
//	--cpu-freq, --gpu-freq, --profile,
//	--acctg-freq, --network, --wckey,
//	--mcs-label, --prefer, --tmp, task
//	layout and binding (--distribution,
//	--cpu-bind, --ntasks-per-core ...)    kept as hints; slurmctld with these plugins off accepts them alike.
//	                                      The list is the hints table in check.go: the migration audit
//	                                      reports each as a documented difference, and a submission
//	                                      using one is logged at debug level
const _ = 0
