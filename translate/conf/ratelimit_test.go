package conf

import (
	"strings"
	"testing"
)

func TestRateLimits(t *testing.T) {
	for _, c := range []struct {
		params string
		want   RateLimits
		err    string
	}{
		{"", RateLimits{TableSize: 8192}, ""},
		{"enable_configless", RateLimits{TableSize: 8192}, ""},
		// slurmctld's defaults: 30 tokens, 2 a second.
		{"rl_enable", RateLimits{User: Bucket{30, 2, 1}, TableSize: 8192}, ""},
		{"enable_configless,RL_ENABLE,rl_bucket_size=50,rl_refill_rate=10,rl_refill_period=2,rl_table_size=100,rl_log_freq=-1",
			RateLimits{User: Bucket{50, 10, 2}, TableSize: 100, LogFreq: -1}, ""},
		// rl_* without rl_enable are ignored, as slurmctld does.
		{"rl_bucket_size=5", RateLimits{TableSize: 8192}, ""},
		{"rl_host_bucket_size=100,rl_host_refill_rate=20", RateLimits{TableSize: 8192, Host: Bucket{100, 20, 1}}, ""},
		{"rl_enable,rl_bucket_size=0", RateLimits{}, "rl_bucket_size=0 is invalid"},
		{"rl_enable,rl_refill_rate=x", RateLimits{}, "rl_refill_rate=x is invalid"},
		{"rl_enable,rl_log_freq=-2", RateLimits{}, "rl_log_freq=-2 is invalid"},
		{"rl_host_bucket_size=10", RateLimits{}, "needs both"},
	} {
		cfg := New()
		cfg.Set("SlurmctldParameters", c.params)
		got, err := cfg.RateLimits()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.params, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.params, got, err, c.want)
		}
	}
}
