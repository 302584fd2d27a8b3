package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
)

// UserState is the handler of user-state.
func (s *Server) UserState() http.Handler {
	return s.handler(function{name: "user-state", run: (*Server).userState})
}

// userState serves the operations of user-state (see app.UserStateInput): set answers 201 when
// the user had no mode, 200 when it replaced one.
func (s *Server) userState(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.UserStateOpSet, app.UserStateOpGet, app.UserStateOpDelete)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case app.UserStateOpSet:
		return run(ctx, c, s.app.SetUserState, func(o app.UserStateSet) int { return createdOr200(o.Created) })
	case app.UserStateOpGet:
		return run(ctx, c, s.app.GetUserState, ok200)
	default:
		return run(ctx, c, s.app.DeleteUserState, ok200)
	}
}
