package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// DefaultRateLimitPeriod is the window of the rate limits when RateLimit.Period is not set.
const DefaultRateLimitPeriod = time.Minute

// RateLimit limits the requests of each user, and of each tenant's users together, across every
// process that shares the database. A limit of n lets a burst of n requests through, then one
// more every Period / n (a token bucket refilled continuously), so n is also the most requests
// in one Period after an idle one.
//
// A user caller counts against (its token's tenant, itself) and its tenant. A service caller
// acting for a user (user_id in the body) counts against that user and the tenant_id it names,
// as the user's own requests would: the limits are the user's, whoever relays them. Service
// calls for no user (sweep-expired, process-jobs, knowledge ingest) are not limited.
type RateLimit struct {
	// User is the most requests of one user per Period; default 0, no limit.
	User int
	// Tenant is the most requests of all the users of one tenant per Period, for users that
	// have a tenant; default 0, no limit.
	Tenant int
	// Period is the window of both limits; default DefaultRateLimitPeriod.
	Period time.Duration
	// Limiter keeps the counters; default the Server's store, whose counters live in PostgreSQL.
	Limiter Limiter
}

// Limiter takes a request's slot from its user's and tenant's limits, all or nothing.
// *store.Store is the one agentmem uses.
type Limiter interface {
	TakeRequestSlot(ctx context.Context, p store.RequestSlotParams) (store.RequestSlot, error)
}

// on reports whether any limit is set.
func (l RateLimit) on() bool { return l.User > 0 || l.Tenant > 0 }

// limit takes the call's slot before the function runs. A call over a limit answers 429
// rate_limited with Retry-After (the seconds until a slot is free) and runs nothing. When the
// counters cannot be read (the database is unreachable or busy) the call answers 503
// unavailable with Retry-After rather than run unlimited: the function would need the same
// database, and a limit is never silently lifted.
func (s *Server) limit(ctx context.Context, c *call) error {
	rl := s.cfg.RateLimit
	if !rl.on() {
		return nil
	}
	sc, ok := c.limitScope()
	if !ok {
		return nil
	}
	slot, err := rl.Limiter.TakeRequestSlot(ctx, store.RequestSlotParams{
		TenantID: sc.TenantID, UserID: sc.UserID, UserLimit: rl.User, TenantLimit: rl.Tenant, Period: rl.Period,
	})
	if err != nil {
		return err
	}
	if slot.Taken {
		return nil
	}
	secs := max(int((slot.RetryAfter+time.Second-1)/time.Second), 1)
	who := "this user"
	if slot.LimitedBy == "tenant" {
		who = "this tenant's users"
	}
	return &apierror.Error{Code: apierror.RateLimited, RetryAfter: secs,
		Detail: fmt.Sprintf("too many requests for %s; retry in %d s", who, secs)}
}

// limitScope is the (tenant, user) a call counts against, and false for a call that acts for
// no user. A service caller's user is read from the body leniently here: a body the function
// will refuse (400) goes unlimited to that refusal, which writes nothing.
func (c *call) limitScope() (memory.Scope, bool) {
	var a actingFor
	if c.principal.IsService() {
		if json.Unmarshal(c.body, &a) != nil || a.UserID == nil {
			return memory.Scope{}, false
		}
	}
	var f apierror.Fields
	sc, err := c.scope(a, nil, "", &f)
	if err != nil || f.Err() != nil || sc.UserID == uuid.Nil {
		return memory.Scope{}, false
	}
	return sc, true
}
