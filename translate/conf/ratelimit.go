package conf

import (
	"fmt"
	"strconv"
	"strings"
)

// Bucket is one token bucket: Size tokens at most, Rate tokens added
// every Period seconds.
type Bucket struct {
	Size, Rate, Period uint32
}

// RateLimits is the RPC rate limiting of SlurmctldParameters.
//
// Per user, slurmctld's own keys (23.02+, src/slurmctld/rate_limit.c):
// rl_enable turns it on; rl_bucket_size (30), rl_refill_rate (2),
// rl_refill_period (1 s), rl_table_size (8192 users) and rl_log_freq (0:
// log every refusal; -1: never; N: at most once per N s per user).
//
// Per source host, the frontend's own keys (slurmctld has none):
// rl_host_bucket_size and rl_host_refill_rate turn it on,
// rl_host_refill_period (1 s) as above. A host's bucket pays for every
// request it sends and for every connection the kernel saw from it that
// brought no request (counted by the eBPF filter on the listener): a
// host that floods the port with idle or unauthenticated connections is
// told to back off like one that floods it with requests.
type RateLimits struct {
	User      Bucket // Size 0: off
	TableSize uint32
	LogFreq   int
	Host      Bucket // Size 0: off
}

// RateLimits reads SlurmctldParameters' rl_* keys. Values must be
// positive integers (26.05 refuses to start otherwise; older releases
// took atoi's 0 and refused every RPC).
func (c *Config) RateLimits() (RateLimits, error) {
	params := c.Get("SlurmctldParameters", "")
	rl := RateLimits{TableSize: 8192}
	opts := map[string]string{}
	enabled := false
	for _, f := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		k = strings.ToLower(k)
		if k == "rl_enable" {
			enabled = true
		}
		if strings.HasPrefix(k, "rl_") {
			opts[k] = v
		}
	}
	num := func(key string, def uint32) (uint32, error) {
		v, ok := opts[key]
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("SlurmctldParameters: %s=%s is invalid, must be a positive non-zero integer", key, v)
		}
		return uint32(n), nil
	}
	var err error
	get := func(dst *uint32, key string, def uint32) {
		if err == nil {
			*dst, err = num(key, def)
		}
	}
	if enabled {
		get(&rl.TableSize, "rl_table_size", 8192)
		get(&rl.User.Size, "rl_bucket_size", 30)
		get(&rl.User.Rate, "rl_refill_rate", 2)
		get(&rl.User.Period, "rl_refill_period", 1)
		if v, ok := opts["rl_log_freq"]; ok && err == nil {
			n, perr := strconv.Atoi(v)
			if perr != nil || n < -1 {
				err = fmt.Errorf("SlurmctldParameters: rl_log_freq=%s is invalid, must be -1, 0, or a positive integer", v)
			}
			rl.LogFreq = n
		}
	}
	_, size := opts["rl_host_bucket_size"]
	_, rate := opts["rl_host_refill_rate"]
	if size || rate {
		if !size || !rate {
			return rl, fmt.Errorf("SlurmctldParameters: per-host rate limiting needs both rl_host_bucket_size and rl_host_refill_rate")
		}
		get(&rl.Host.Size, "rl_host_bucket_size", 0)
		get(&rl.Host.Rate, "rl_host_refill_rate", 0)
		get(&rl.Host.Period, "rl_host_refill_period", 1)
	}
	return rl, err
}
