package httpapi

import (
	"context"
	"encoding/json"

	"github.com/agentmem/agentmem/shared/app"
)

// limit takes the call's slot from its user's and tenant's rate limits (app.LimitRequest)
// before the function runs. A service caller's user is read from the body leniently here: a
// body the function will refuse (400) goes unlimited to that refusal, which writes nothing.
func (s *Server) limit(ctx context.Context, c *call) error {
	var a app.ActingFor
	if c.principal.IsService() && json.Unmarshal(c.body, &a) != nil {
		return nil
	}
	return s.app.LimitRequest(ctx, c.principal, a)
}
