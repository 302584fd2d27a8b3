package service

import (
	"context"
	"sync/atomic"

	"github.com/agentmem/agentmem/shared/app"
)

// notifyLater is a Notifier (JOBS_NOTIFY=lambda:<function>, a call of the Lambda API) that a
// Lambda function with its extension tells after the answer rather than in the request: while
// deferring, Notify only notes that jobs were written, and flush, which the extension runs once
// the invocation has answered, makes the one call. Until deferring is set (the extension
// registered), or without it, Notify calls at once, as before.
type notifyLater struct {
	inner     app.Notifier
	deferring atomic.Bool
	pending   atomic.Bool
}

func (n *notifyLater) Notify(ctx context.Context) {
	if n.deferring.Load() {
		n.pending.Store(true)
		return
	}
	n.inner.Notify(ctx)
}

// flush makes the call noted since the last flush, if any.
func (n *notifyLater) flush(ctx context.Context) {
	if n.pending.Swap(false) {
		n.inner.Notify(ctx)
	}
}
