package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
)

// UserMemory is the handler of user-memory.
func (s *Server) UserMemory() http.Handler {
	return s.handler(function{name: "user-memory", run: (*Server).userMemory})
}

// userMemory serves the operations of user-memory (see app.UserMemoryInput): set answers 201
// for a new key, 200 when it replaced a value.
func (s *Server) userMemory(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.UserMemoryOpSet, app.UserMemoryOpGet, app.UserMemoryOpList, app.UserMemoryOpDelete,
		app.UserMemoryOpClear)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case app.UserMemoryOpSet:
		return run(ctx, c, s.app.SetUserMemory, func(o app.UserMemorySet) int { return createdOr200(o.Created) })
	case app.UserMemoryOpGet:
		return run(ctx, c, s.app.GetUserMemory, ok200)
	case app.UserMemoryOpList:
		return run(ctx, c, s.app.ListUserMemory, ok200)
	case app.UserMemoryOpDelete:
		return run(ctx, c, s.app.DeleteUserMemory, ok200)
	default:
		return run(ctx, c, s.app.ClearUserMemory, ok200)
	}
}
