// Command slurm-frontend-shim is the embedded engine's job supervisor on
// its own: the code of `slurm-frontend shim`, without the server's
// packages, so that it starts in a fraction of the time (it starts once
// per job and once per srun task).
package main

import (
	"fmt"
	"os"

	"github.com/lablup/slurm-frontend/translate/local"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "shim" {
		fmt.Fprintln(os.Stderr, "usage: slurm-frontend-shim shim run DIR (started by slurm-frontend, not by hand)")
		os.Exit(2)
	}
	if err := local.ShimMain(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "slurm-frontend-shim:", err)
		os.Exit(1)
	}
}
