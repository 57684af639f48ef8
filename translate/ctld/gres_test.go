package ctld

import (
	"testing"

	"github.com/lablup/slurm-frontend/state"
)

// The GPU type a job names, in the TRES forms of every release (22.05
// writes "gres:gpu:…", later ones "gres/gpu:…").
func TestGresGPUType(t *testing.T) {
	for tres, want := range map[string]string{
		"gres:gpu:2": "", "gres/gpu:2": "", "gres/gpu:a100:2": "a100", "gres:gpu:rocm:1": "rocm",
		"gres/gpu:h100": "h100", "gres/shard:50": "", "cpu:2,gres/gpu:rocm:4": "rocm",
	} {
		if got := gresGPUType(&state.Job{TresPerNode: tres}); got != want {
			t.Errorf("%q: type %q, want %q", tres, got, want)
		}
	}
	if got := gpuTypes("gpu:a100:2,gpu:V100:1,shard:200,gpu:3"); got["a100"] != 2 || got["v100"] != 1 || len(got) != 2 {
		t.Errorf("gpuTypes: %v", got)
	}
}
