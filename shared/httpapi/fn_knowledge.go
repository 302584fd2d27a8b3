package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/memory"
)

// Knowledge is the handler of knowledge.
func (s *Server) Knowledge() http.Handler {
	return s.handler(function{name: "knowledge", run: (*Server).knowledge})
}

// knowledge serves the operations on the tenant's knowledge base (see app.KnowledgeOpAllowed):
// ingest answers 201. A user asking for an operation of service callers gets 403 whatever
// the rest of the request holds.
func (s *Server) knowledge(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.KnowledgeOpIngest, app.KnowledgeOpSearch, app.KnowledgeOpDelete)
	if err != nil {
		return 0, nil, err
	}
	if err := app.KnowledgeOpAllowed(c.principal, op); err != nil {
		return 0, nil, err
	}
	switch op {
	case app.KnowledgeOpIngest:
		return run(ctx, c, s.app.KnowledgeIngest, func(memory.IngestResult) int { return http.StatusCreated })
	case app.KnowledgeOpSearch:
		return run(ctx, c, s.app.SearchKnowledge, ok200)
	default:
		return run(ctx, c, s.app.DeleteKnowledge, ok200)
	}
}
