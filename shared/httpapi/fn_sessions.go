package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
)

// Sessions is the handler of sessions.
func (s *Server) Sessions() http.Handler {
	return s.handler(function{name: "sessions", run: (*Server).sessions})
}

// sessions serves the operations on a user's sessions: list them, page through one's messages
// (or the user's across sessions), reset, delete, delete one message, set a title or the
// metadata, clear every message. A session that is missing, expired or someone else's is not
// found (404), whatever the operation.
func (s *Server) sessions(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.SessionsOpList, app.SessionsOpHistory, app.SessionsOpReset, app.SessionsOpDelete,
		app.SessionsOpDeleteMessage, app.SessionsOpSetTitle, app.SessionsOpSetMetadata, app.SessionsOpClear)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case app.SessionsOpList:
		return run(ctx, c, s.app.ListSessions, ok200)
	case app.SessionsOpHistory:
		return run(ctx, c, s.app.SessionHistory, ok200)
	case app.SessionsOpSetTitle:
		return run(ctx, c, s.app.SetSessionTitle, ok200)
	case app.SessionsOpSetMetadata:
		return run(ctx, c, s.app.SetSessionMetadata, ok200)
	case app.SessionsOpReset:
		return run(ctx, c, s.app.ResetSession, ok200)
	case app.SessionsOpDelete:
		return run(ctx, c, s.app.DeleteSession, ok200)
	case app.SessionsOpClear:
		return run(ctx, c, s.app.ClearMessages, ok200)
	default:
		return run(ctx, c, s.app.DeleteMessage, ok200)
	}
}
