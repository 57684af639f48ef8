package ctld

import (
	"sort"
	"strconv"
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// arrayRange is a parsed --array spec: "0-15", "1,3,5-7", "0-15:4",
// "1-100%5". Tasks are kept sorted and unique.
type arrayRange struct {
	tasks []uint32
	limit uint32 // %N: at most N tasks running at once (0 = no limit)
}

// parseArray parses spec, refusing what slurmctld refuses with
// ESLURM_INVALID_ARRAY (empty, reversed ranges, more than maxSize tasks
// or an index at or above maxSize).
func parseArray(spec string, maxSize uint32) (*arrayRange, error) {
	a := &arrayRange{}
	body := spec
	if i := strings.IndexByte(spec, '%'); i >= 0 {
		n, err := strconv.ParseUint(spec[i+1:], 10, 32)
		if err != nil {
			return nil, codec.Errorf(codec.ESLURM_INVALID_ARRAY, "bad array limit in %q", spec)
		}
		a.limit = uint32(n)
		body = spec[:i]
	}
	seen := map[uint32]bool{}
	for _, part := range strings.Split(body, ",") {
		if part == "" {
			return nil, codec.Errorf(codec.ESLURM_INVALID_ARRAY, "empty element in %q", spec)
		}
		step := uint64(1)
		if r, s, ok := strings.Cut(part, ":"); ok {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil || v == 0 {
				return nil, codec.Errorf(codec.ESLURM_INVALID_ARRAY, "bad step in %q", spec)
			}
			part, step = r, v
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a0, err1 := strconv.ParseUint(lo, 10, 32)
		a1 := a0
		var err2 error
		if isRange {
			a1, err2 = strconv.ParseUint(hi, 10, 32)
		}
		if err1 != nil || err2 != nil || a1 < a0 {
			return nil, codec.Errorf(codec.ESLURM_INVALID_ARRAY, "bad range %q", part)
		}
		if a1 >= uint64(maxSize) {
			return nil, codec.Errorf(codec.ESLURM_INVALID_ARRAY, "index %d beyond MaxArraySize %d", a1, maxSize)
		}
		for v := a0; v <= a1; v += step {
			if !seen[uint32(v)] {
				seen[uint32(v)] = true
				a.tasks = append(a.tasks, uint32(v))
			}
		}
	}
	if len(a.tasks) == 0 || uint32(len(a.tasks)) > maxSize {
		return nil, codec.Errorf(codec.ESLURM_INVALID_ARRAY, "bad array %q", spec)
	}
	sort.Slice(a.tasks, func(i, j int) bool { return a.tasks[i] < a.tasks[j] })
	return a, nil
}

func (a *arrayRange) count() int  { return len(a.tasks) }
func (a *arrayRange) min() uint32 { return a.tasks[0] }
func (a *arrayRange) max() uint32 { return a.tasks[len(a.tasks)-1] }
func (a *arrayRange) contains(t uint32) bool {
	i := sort.Search(len(a.tasks), func(i int) bool { return a.tasks[i] >= t })
	return i < len(a.tasks) && a.tasks[i] == t
}

// step is the common stride of the tasks (1 when irregular), as in
// SLURM_ARRAY_TASK_STEP.
func (a *arrayRange) step() uint32 {
	if len(a.tasks) < 2 {
		return 1
	}
	s := a.tasks[1] - a.tasks[0]
	for i := 2; i < len(a.tasks); i++ {
		if a.tasks[i]-a.tasks[i-1] != s {
			return 1
		}
	}
	return s
}

// without returns the range minus task t.
func (a *arrayRange) without(t uint32) *arrayRange {
	out := &arrayRange{limit: a.limit}
	for _, v := range a.tasks {
		if v != t {
			out.tasks = append(out.tasks, v)
		}
	}
	return out
}

// String formats the tasks as Slurm does in squeue: "1-3,7,9-11" plus
// "%N" when limited.
func (a *arrayRange) String() string {
	var b strings.Builder
	for i := 0; i < len(a.tasks); {
		j := i
		for j+1 < len(a.tasks) && a.tasks[j+1] == a.tasks[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(a.tasks[i]), 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(uint64(a.tasks[j]), 10))
		}
		i = j + 1
	}
	if a.limit > 0 {
		b.WriteByte('%')
		b.WriteString(strconv.FormatUint(uint64(a.limit), 10))
	}
	return b.String()
}

// hex is the tasks as Slurm's hex bitmap text, most significant first.
func (a *arrayRange) hex() string { return a.hexOf(int(a.max()) + 1) }

// hexOf is hex for a bitmap n bits wide.
func (a *arrayRange) hexOf(n int) string { return string(codec.BitHex(nil, n, a.containsInt)) }

func (a *arrayRange) containsInt(i int) bool { return a.contains(uint32(i)) }
