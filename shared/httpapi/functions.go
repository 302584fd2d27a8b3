package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
)

// activeSession serves active-session: 201 when it created the session, else 200.
func (s *Server) activeSession(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.ActiveSession, func(o memory.ActiveSession) int { return createdOr200(o.Created) })
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

// getContext serves get-context, rendering the window in the format asked for.
func (s *Server) getContext(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, func(ctx context.Context, p auth.Principal, in app.GetContextInput) (any, error) {
		out, err := s.app.GetContext(ctx, p, in)
		if err != nil {
			return nil, err
		}
		return app.RenderContext(out), nil
	}, ok200)
}

// recall serves recall.
func (s *Server) recall(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.Recall, ok200)
}

// sweepExpired serves sweep-expired, for service callers.
func (s *Server) sweepExpired(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.SweepExpired, ok200)
}
