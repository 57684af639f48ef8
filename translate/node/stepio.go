package node

import (
	"net"
	"sort"

	"github.com/lablup/slurm-frontend/bpf"
)

// A step's I/O traffic: the bytes of its connection to srun on each node,
// each way, framing included (what crosses the network). The kernel counts
// them where it can (Service.Meter, eBPF); the relay counts them too and
// its figure stands where the kernel's cannot.

// StepIO is one step's I/O on one node.
type StepIO struct {
	Job, Step uint32
	Node      string
	Out, In   uint64 // to srun, from srun
	Counter   string // "ebpf" or "userspace"
	// What the relay wrote and read: the same as Out and In where the
	// relay counts; beside the kernel's figures, a check of them.
	RelayOut, RelayIn uint64
}

type liveIO struct {
	cc   *bpf.CountConn
	flow bpf.Flow // nil: counted in userspace
	done bool
	fig  StepIO
}

func (l *liveIO) read(k stepKey) StepIO {
	f := StepIO{Job: k.job, Step: k.step, Node: k.node, Counter: "userspace"}
	io := l.cc.IO()
	if l.flow != nil {
		io, f.Counter = l.flow.Read(), "ebpf"
	}
	f.Out, f.In = io.Out, io.In
	r := l.cc.IO()
	f.RelayOut, f.RelayIn = r.Out, r.In
	return f
}

// ioStart counts a step's connection to srun from now on; what the relay
// writes and reads must go through the connection it returns.
func (s *Service) ioStart(k stepKey, c net.Conn) *bpf.CountConn {
	l := &liveIO{cc: &bpf.CountConn{Conn: c}}
	if s.Meter != nil {
		if f, err := s.Meter.Track(c); err != nil {
			s.logf("node %s: step %d.%d: I/O counted in userspace: %v", k.node, k.job, k.step, err)
		} else {
			l.flow = f
		}
	}
	s.ioMu.Lock()
	if s.ioLive == nil {
		s.ioLive = map[stepKey]*liveIO{}
	}
	s.ioLive[k] = l
	s.ioMu.Unlock()
	return l.cc
}

// ioEnd stops counting the step's connection (the first call does; later
// ones return the same figures) and adds them to the totals.
func (s *Service) ioEnd(k stepKey) StepIO {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	l := s.ioLive[k]
	if l == nil {
		return StepIO{Job: k.job, Step: k.step, Node: k.node, Counter: "userspace"}
	}
	if l.done {
		return l.fig
	}
	l.fig = l.read(k)
	if l.flow != nil {
		io := l.flow.Close()
		l.fig.Out, l.fig.In = io.Out, io.In
	}
	l.done = true
	delete(s.ioLive, k)
	if s.ioTotal == nil {
		s.ioTotal = map[string]*bpf.IO{}
	}
	t := s.ioTotal[l.fig.Counter]
	if t == nil {
		t = &bpf.IO{}
		s.ioTotal[l.fig.Counter] = t
	}
	t.Out += l.fig.Out
	t.In += l.fig.In
	return l.fig
}

// RunningStepIO is the I/O so far of every step running on a node here.
func (s *Service) RunningStepIO() []StepIO {
	s.ioMu.Lock()
	out := make([]StepIO, 0, len(s.ioLive))
	for k, l := range s.ioLive {
		out = append(out, l.read(k))
	}
	s.ioMu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Job != b.Job {
			return a.Job < b.Job
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Node < b.Node
	})
	return out
}

// StepIOTotals is all steps' I/O, ended and running, by counter.
func (s *Service) StepIOTotals() map[string]bpf.IO {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	out := map[string]bpf.IO{}
	for c, t := range s.ioTotal {
		out[c] = *t
	}
	for k, l := range s.ioLive {
		f := l.read(k)
		t := out[f.Counter]
		t.Out += f.Out
		t.In += f.In
		out[f.Counter] = t
	}
	return out
}
