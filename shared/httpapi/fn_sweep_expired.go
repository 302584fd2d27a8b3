package httpapi

import (
	"context"
	"net/http"
)

// SweepExpired is the handler of sweep-expired, for service callers only. Its scheduled entry
// is ScheduledSweep.
func (s *Server) SweepExpired() http.Handler {
	return s.handler(function{name: "sweep-expired", serviceOnly: true, run: (*Server).sweepExpired})
}

// sweepExpired serves sweep-expired, for service callers.
func (s *Server) sweepExpired(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.SweepExpired, ok200)
}
