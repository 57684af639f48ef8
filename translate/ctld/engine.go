package ctld

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/translate"
)

// How the controller calls the engine: every call with a deadline, many
// calls (a scancel -u of 1,000 jobs) spread over a bounded number of
// goroutines, and every error the engine gives mapped to the Slurm error
// a user should see.

// engineTimeout bounds one engine call (an HTTP request to Backend.AI's
// manager with its retries; the embedded engine answers in
// milliseconds).
const engineTimeout = 30 * time.Second

// engineParallel bounds the engine calls in flight for one batch of work.
const engineParallel = 16

// engineCtx is the context of one engine call.
func engineCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), engineTimeout)
}

// engineCode maps an engine's error to the Slurm error it becomes.
func engineCode(err error) uint32 {
	switch {
	case err == nil:
		return codec.SLURM_SUCCESS
	case errors.Is(err, translate.ErrNoSession), errors.Is(err, translate.ErrNotRunning):
		return codec.ESLURM_ALREADY_DONE
	case errors.Is(err, translate.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		// sbatch and other clients retry on EAGAIN ("Slurm temporarily
		// unable to accept job, sleeping and retrying").
		return codec.EAGAIN
	case errors.Is(err, translate.ErrNotSupported):
		return codec.ESLURM_NOT_SUPPORTED
	case errors.Is(err, translate.ErrOverLimit):
		return codec.ESLURM_ACCOUNTING_POLICY
	case errors.Is(err, translate.ErrImpossible):
		return codec.ESLURM_REQUESTED_NODE_CONFIG_UNAVAIL
	case errors.Is(err, translate.ErrNoAccount):
		return codec.ESLURM_USER_ID_MISSING
	case errors.Is(err, translate.ErrForbidden):
		return codec.ESLURM_ACCESS_DENIED
	case errors.Is(err, translate.ErrInvalidImage):
		return codec.ESLURM_CONTAINER_NOT_CONFIGURED
	}
	if e, ok := err.(*codec.Error); ok {
		return e.Code
	}
	return codec.ESLURM_INTERNAL
}

// eachBounded calls fn for every item, at most engineParallel at once,
// and returns when all are done.
func eachBounded[T any](items []T, fn func(T)) { eachN(items, engineParallel, fn) }

// eachN runs fn over items, n at a time, in their order of start.
func eachN[T any](items []T, n int, fn func(T)) {
	if len(items) == 1 {
		fn(items[0])
		return
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(it)
		}()
	}
	wg.Wait()
}

// destroy ends one session with a deadline, logging a failure: a session
// the engine no longer has, or one already ended, is not one; one the
// engine cannot end now is ended by the next resync.
func (c *Controller) destroy(jobID uint32, sid string, forced bool) {
	if c.opt.Exec == nil || sid == "" || sid == sessionCreating {
		return
	}
	ctx, cancel := engineCtx()
	defer cancel()
	if err := c.opt.Exec.DestroySession(ctx, translate.SessionID(sid), forced); err != nil && !errors.Is(err, translate.ErrNoSession) {
		c.logf("job %d: ending session %s: %v (the next resync retries)", jobID, sid, err)
	}
}
