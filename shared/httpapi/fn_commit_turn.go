package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
)

// CommitTurn is the handler of commit-turn.
func (s *Server) CommitTurn() http.Handler {
	return s.handler(function{name: "commit-turn", run: (*Server).commitTurn})
}

// commitTurn serves commit-turn: 201, with Idempotent-Replayed: true on a replayed answer.
func (s *Server) commitTurn(ctx context.Context, c *call) (int, any, error) {
	commit := func(ctx context.Context, p auth.Principal, in app.CommitTurnInput) (app.CommitTurnOutput, error) {
		in.Idempotency = idempotencyKey(c)
		out, err := s.app.CommitTurn(ctx, p, in)
		c.replayed = out.Replayed
		return out, err
	}
	return run(ctx, c, commit, func(app.CommitTurnOutput) int { return http.StatusCreated })
}

// idempotencyKey is the Idempotency-Key the request carries, with the digest of its body; nil
// without the header.
func idempotencyKey(c *call) *app.IdempotencyKey {
	if len(c.r.Header.Values("Idempotency-Key")) == 0 {
		return nil
	}
	return &app.IdempotencyKey{Key: c.r.Header.Get("Idempotency-Key"), Present: true, RequestHash: app.RequestHash(c.body)}
}
