package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/app"
)

// Intents is the handler of intents.
func (s *Server) Intents() http.Handler {
	return s.handler(function{name: "intents", run: (*Server).intents})
}

// intents serves the intents function: 202 with the jobs written for the enabled adapters.
func (s *Server) intents(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.CreateIntent, func(app.IntentOutput) int { return http.StatusAccepted })
}

// Jobs is the handler of jobs, for service callers only.
func (s *Server) Jobs() http.Handler {
	return s.handler(function{name: "jobs", serviceOnly: true, run: (*Server).jobs})
}

// jobs serves the operations on the outbox's jobs, for service callers: list, get, retry (a
// dead job; others 409), purge.
func (s *Server) jobs(ctx context.Context, c *call) (int, any, error) {
	op, err := opOf(c.body, app.JobsOpList, app.JobsOpGet, app.JobsOpRetry, app.JobsOpPurge)
	if err != nil {
		return 0, nil, err
	}
	switch op {
	case app.JobsOpList:
		return run(ctx, c, s.app.ListJobs, ok200)
	case app.JobsOpGet:
		return run(ctx, c, s.app.GetJob, ok200)
	case app.JobsOpRetry:
		return run(ctx, c, s.app.RetryJob, ok200)
	default:
		return run(ctx, c, s.app.PurgeJobs, ok200)
	}
}

// ProcessJobs is the handler of process-jobs, for service callers only. Its scheduled entry
// is ScheduledProcessJobs.
func (s *Server) ProcessJobs() http.Handler {
	return s.handler(function{name: "process-jobs", serviceOnly: true, run: (*Server).processJobs})
}

// processJobs serves process-jobs, for service callers: deliver due jobs within a budget.
func (s *Server) processJobs(ctx context.Context, c *call) (int, any, error) {
	return run(ctx, c, s.app.ProcessJobs, ok200)
}
