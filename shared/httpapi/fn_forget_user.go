package httpapi

import "context"

// forgetUser serves forget-user (see app.ForgetUser).
func (s *Server) forgetUser(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.ForgetUser, ok200)
}
