package httpapi

import (
	"context"

	"github.com/agentmem/agentmem/shared/app"
)

// memories serves the operations on a user's long-term memories: list, get, update (re-embeds
// new content), delete. A memory that is missing, expired or someone else's is not found (404).
func (s *Server) memories(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.MemoriesOpList, app.MemoriesOpGet, app.MemoriesOpUpdate, app.MemoriesOpDelete)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case app.MemoriesOpList:
		return run(ctx, c, s.app.ListMemories, ok200)
	case app.MemoriesOpUpdate:
		return run(ctx, c, s.app.UpdateMemory, ok200)
	case app.MemoriesOpGet:
		return run(ctx, c, s.app.GetMemory, ok200)
	default:
		return run(ctx, c, s.app.DeleteMemory, ok200)
	}
}
