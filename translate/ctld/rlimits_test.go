package ctld

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// What sbatch 24.11 sends under "ulimit -S -n 1024 -c 0" (values from a
// real sbatch's environment), read under each slurm.conf setting.
func TestJobRlimits(t *testing.T) {
	sent := []string{
		"PATH=/usr/bin", "SLURM_RLIMIT_CPU=18446744073709551615", "SLURM_RLIMIT_CORE=0",
		"SLURM_RLIMIT_NOFILE=1024", "SLURM_RLIMIT_STACK=8388608", "SLURM_RLIMIT_BOGUS=1",
		"SLURM_RLIMIT_AS=not-a-number",
	}
	userSent := []string{"SLURM_RLIMIT_NOFILE=U1024", "SLURM_RLIMIT_CORE=U0"}
	all := []translate.Rlimit{{Name: "CPU", Soft: 1<<64 - 1}, {Name: "CORE"}, {Name: "NOFILE", Soft: 1024}, {Name: "STACK", Soft: 8388608}}
	for _, tc := range []struct {
		conf string
		sent []string
		want []translate.Rlimit
	}{
		{"", sent, all},
		{"PropagateResourceLimits=ALL", sent, all},
		{"PropagateResourceLimits=NONE", sent, nil},
		{"PropagateResourceLimits=NOFILE,RLIMIT_CORE", sent, []translate.Rlimit{{Name: "CORE"}, {Name: "NOFILE", Soft: 1024}}},
		{"PropagateResourceLimitsExcept=NOFILE", sent, []translate.Rlimit{{Name: "CPU", Soft: 1<<64 - 1}, {Name: "CORE"}, {Name: "STACK", Soft: 8388608}}},
		{"PropagateResourceLimitsExcept=ALL", sent, nil},
		// --propagate (the "U" marker) wins over slurm.conf and is strict.
		{"PropagateResourceLimits=NONE", userSent, []translate.Rlimit{{Name: "NOFILE", Soft: 1024, Strict: true}, {Name: "CORE", Strict: true}}},
	} {
		cfg, err := conf.Parse(strings.NewReader(tc.conf + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		c := &Controller{opt: Options{Conf: cfg}}
		if got := c.jobRlimits(tc.sent); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.conf, got, tc.want)
		}
	}
}
