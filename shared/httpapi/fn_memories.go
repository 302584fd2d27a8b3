package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
)

// Memories is the handler of memories.
func (s *Server) Memories() http.Handler {
	return s.handler(function{name: "memories", run: (*Server).memories})
}

// memories serves the operations on a user's long-term memories: create (remember a fact
// without a turn; 201 for a new memory, 200 when it merged into one, Idempotent-Replayed: true
// on a replayed answer), list, get, update (re-embeds new content), delete. A memory that is
// missing, expired or someone else's is not found (404).
func (s *Server) memories(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.MemoriesOpList, app.MemoriesOpGet, app.MemoriesOpCreate, app.MemoriesOpUpdate,
		app.MemoriesOpDelete)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case app.MemoriesOpList:
		return run(ctx, c, s.app.ListMemories, ok200)
	case app.MemoriesOpCreate:
		create := func(ctx context.Context, p auth.Principal, in app.CreateMemoryInput) (app.CreateMemoryOutput, error) {
			in.Idempotency = idempotencyKey(c)
			out, err := s.app.CreateMemory(ctx, p, in)
			c.replayed = out.Replayed
			return out, err
		}
		return run(ctx, c, create, func(o app.CreateMemoryOutput) int { return createdOr200(!o.Merged) })
	case app.MemoriesOpUpdate:
		return run(ctx, c, s.app.UpdateMemory, ok200)
	case app.MemoriesOpGet:
		return run(ctx, c, s.app.GetMemory, ok200)
	default:
		return run(ctx, c, s.app.DeleteMemory, ok200)
	}
}
