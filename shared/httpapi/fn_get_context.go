package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
)

// GetContext is the handler of get-context.
func (s *Server) GetContext() http.Handler {
	return s.handler(function{name: "get-context", run: (*Server).getContext})
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
