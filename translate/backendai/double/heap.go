package double

import (
	"container/heap"
	"strings"
)

// agentHeap orders the candidate agents of one scheduling pass by the
// selection strategy's key for one request shape, so that placing many
// sessions does not scan every agent each time. It gives the same
// choice as pick over the whole candidate list (ties aside).
type agentHeap struct {
	req   slotList
	conc  bool
	items []*agent
	pos   map[*agent]int
}

func (h *agentHeap) key(a *agent) [9]int64 {
	var k [9]int64
	k[0] = -int64(unutilized(a, h.req))
	for i := 0; i < len(h.req) && i < 8; i++ {
		rem := agentFree(a, h.req[i].name)
		if h.conc {
			rem = -rem
		}
		k[i+1] = rem
	}
	return k
}

func (h *agentHeap) Len() int { return len(h.items) }
func (h *agentHeap) Less(i, j int) bool {
	a, b := h.key(h.items[i]), h.key(h.items[j])
	n := len(h.req) + 1
	if n > 9 {
		n = 9
	}
	if keyGreater(a[:n], b[:n]) {
		return true
	}
	if keyGreater(b[:n], a[:n]) {
		return false
	}
	return h.items[i].id < h.items[j].id
}
func (h *agentHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i]] = i
	h.pos[h.items[j]] = j
}
func (h *agentHeap) Push(x any) {
	a := x.(*agent)
	h.pos[a] = len(h.items)
	h.items = append(h.items, a)
}
func (h *agentHeap) Pop() any {
	n := len(h.items)
	a := h.items[n-1]
	h.items = h.items[:n-1]
	delete(h.pos, a)
	return a
}

func shapeSig(strategy string, req slotList) string {
	var b strings.Builder
	b.WriteString(strategy)
	for _, q := range req {
		b.WriteByte('|')
		b.WriteString(q.name)
		if q.q > 0 {
			b.WriteByte('+')
		}
	}
	return b.String()
}

type heapSet struct {
	heaps map[string]*agentHeap
}

func (hs *heapSet) get(strategy string, cands []*agent, req slotList, arch string) *agentHeap {
	sig := arch + "#" + shapeSig(strategy, req)
	if h, ok := hs.heaps[sig]; ok {
		return h
	}
	h := &agentHeap{req: append(slotList(nil), req...), conc: strategy == "concentrated", pos: map[*agent]int{}}
	for _, a := range cands {
		h.pos[a] = len(h.items)
		h.items = append(h.items, a)
	}
	heap.Init(h)
	hs.heaps[sig] = h
	return h
}

// pick takes the best agent that fits req.
func (h *agentHeap) pick(req slotList) *agent {
	var skipped []*agent
	var found *agent
	for h.Len() > 0 {
		a := heap.Pop(h).(*agent)
		skipped = append(skipped, a)
		if fits(a, req, nil) {
			found = a
			break
		}
	}
	for _, a := range skipped {
		heap.Push(h, a)
	}
	return found
}

// changed re-positions an agent whose free resources changed.
func (hs *heapSet) changed(a *agent) {
	for _, h := range hs.heaps {
		if i, ok := h.pos[a]; ok {
			heap.Fix(h, i)
		}
	}
}
