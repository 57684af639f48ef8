package bench

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Hist is a log-linear (HDR-style) latency histogram in nanoseconds with
// 128 sub-buckets per power of two: any recorded value is reported within
// 1/128 (0.8 %) of itself, from 1 ns to about 4,800 s, in a fixed 36 KiB.
// Record is lock-free (atomic adds), so every worker of a run shares one.
type Hist struct {
	counts [histBuckets]atomic.Uint64
	n      atomic.Uint64
	sum    atomic.Uint64 // ns
	max    atomic.Int64  // ns, exact
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits       // 128
	histLinear  = 2 * histSub            // values below 256 ns get their own bucket
	histMaxExp  = 42 - (histSubBits + 1) // 2^42 ns = 73 min
	histBuckets = (histMaxExp+1)*histSub + histSub
)

func histIndex(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	e := bits.Len64(v) - (histSubBits + 1) // >= 1
	if e > histMaxExp {
		return histBuckets - 1
	}
	return e*histSub + int(v>>uint(e))
}

// histValue is the midpoint of bucket i.
func histValue(i int) uint64 {
	if i < histLinear {
		return uint64(i)
	}
	e := i/histSub - 1
	m := uint64(i%histSub + histSub)
	lo := m << uint(e)
	return lo + (uint64(1)<<uint(e))/2
}

// Record adds one latency.
func (h *Hist) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[histIndex(uint64(v))].Add(1)
	h.n.Add(1)
	h.sum.Add(uint64(v))
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			break
		}
	}
}

// Count is the number of values recorded.
func (h *Hist) Count() uint64 { return h.n.Load() }

// Merge adds o's counts into h.
func (h *Hist) Merge(o *Hist) {
	for i := range o.counts {
		if c := o.counts[i].Load(); c > 0 {
			h.counts[i].Add(c)
		}
	}
	h.n.Add(o.n.Load())
	h.sum.Add(o.sum.Load())
	if m := o.max.Load(); m > h.max.Load() {
		h.max.Store(m)
	}
}

// Quantile returns the q-quantile (0 <= q <= 1) in ns; the maximum is
// exact, the others are bucket midpoints clamped to the maximum.
func (h *Hist) Quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	mx := h.max.Load()
	if q >= 1 {
		return time.Duration(mx)
	}
	rank := uint64(math.Ceil(q * float64(n)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return time.Duration(min(int64(histValue(i)), mx))
		}
	}
	return time.Duration(mx)
}

// Summary is a histogram's digest, in milliseconds for the report.
type Summary struct {
	Count  uint64  `json:"count"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Summarize digests h.
func (h *Hist) Summarize() Summary {
	n := h.n.Load()
	if n == 0 {
		return Summary{}
	}
	return Summary{
		Count:  n,
		MeanMs: float64(h.sum.Load()) / float64(n) / 1e6,
		P50Ms:  ms(h.Quantile(0.50)),
		P90Ms:  ms(h.Quantile(0.90)),
		P99Ms:  ms(h.Quantile(0.99)),
		P999Ms: ms(h.Quantile(0.999)),
		MaxMs:  ms(h.Quantile(1)),
	}
}
