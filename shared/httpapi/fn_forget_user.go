package httpapi

import (
	"context"
	"net/http"
)

// ForgetUser is the handler of forget-user.
func (s *Server) ForgetUser() http.Handler {
	return s.handler(function{name: "forget-user", run: (*Server).forgetUser})
}

// forgetUser serves forget-user (see app.ForgetUser).
func (s *Server) forgetUser(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.ForgetUser, ok200)
}
