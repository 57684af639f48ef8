package main

import "github.com/lablup/slurm-frontend/translate/local"

// shimMain is the hidden "shim" subcommand: the embedded engine re-executes
// this binary (/proc/self/exe shim run DIR) to supervise one batch job, so
// that the job outlives the server. Not meant to be run by hand.
func shimMain(args []string) error { return local.ShimMain(args) }
