// Package bench measures Slurm controllers the way stock clients load
// them: load generators that speak the wire protocol natively (codec
// frames, MUNGE credentials minted from the site key, one new TCP
// connection per RPC), against any controller address: slurm-frontend,
// a real slurmctld, or the NullServer that marks the machine's ceiling.
//
// Workloads (NewWorkload): "squeue" (REQUEST_JOB_INFO then
// REQUEST_PARTITION_INFO, as stock squeue sends them), "jobstate"
// (REQUEST_JOB_STATE of every job, squeue --only-job-state, 24.05+), "sinfo"
// (PARTITION_INFO + NODE_INFO), "ping" (REQUEST_PING), "sbatch" (held
// submissions) and "mix" (one RPC per operation with the weights of
// MixWeights: JOB_INFO 45 %, PARTITION_INFO 35 %, NODE_INFO 10 %,
// PING 8 %, SUBMIT_BATCH_JOB 2 %).
//
// Run measures one workload against one target, in closed loop (N
// clients back to back) or open loop (a fixed rate; latency from the
// scheduled send time, so there is no coordinated omission). Results
// carry ops/s, RPC/s, HDR-style latency percentiles, errors by kind and
// the server's CPU and RSS read from /proc; Report turns them into JSON,
// a text table with ratios, and a self-contained HTML page with SVG
// charts. Fill submits N held jobs; Hold keeps idle or slow connections
// open during a run.
//
// The command line is `slurm-frontend bench` (cmd/slurm-frontend/bench.go)
// and `make bench` runs the whole comparison (tools/bench.sh).
package bench
