package httpapi

import (
	"context"
	"net/http"
)

// Recall is the handler of recall.
func (s *Server) Recall() http.Handler {
	return s.handler(function{name: "recall", run: (*Server).recall})
}

// recall serves recall.
func (s *Server) recall(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.Recall, ok200)
}
