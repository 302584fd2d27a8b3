package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/memory"
)

// ActiveSession is the handler of active-session.
func (s *Server) ActiveSession() http.Handler {
	return s.handler(function{name: "active-session", run: (*Server).activeSession})
}

// activeSession serves active-session: 201 when it created the session, else 200.
func (s *Server) activeSession(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.ActiveSession, func(o memory.ActiveSession) int { return createdOr200(o.Created) })
}
