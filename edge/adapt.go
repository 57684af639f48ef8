package edge

import "github.com/lablup/slurm-frontend/translate/ctld"

// AdaptController lets the controller serve as the Handler. The request
// and reply types have identical layouts, so conversion copies nothing.
func AdaptController(c *ctld.Controller) Handler { return ctlHandler{c} }

type ctlHandler struct{ c *ctld.Controller }

func (h ctlHandler) Fast(req *Request) (Reply, bool) {
	r, ok := h.c.Fast((*ctld.Request)(req))
	return Reply(r), ok
}

func (h ctlHandler) Slow(req *Request) Reply {
	return Reply(h.c.Slow((*ctld.Request)(req)))
}

func (h ctlHandler) Waits(t uint16) bool { return h.c.Waits(t) }
