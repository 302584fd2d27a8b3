package app

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
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
	// Backfill is the most backfillSession intents of one user per BackfillPeriod, counted apart
	// from (and besides) User: each sends every message of a session to every adapter. Default
	// 0, no limit (the service's setting has a default of its own).
	Backfill int
	// BackfillPeriod is the window of Backfill; default DefaultBackfillLimitPeriod.
	BackfillPeriod time.Duration
	// Limiter keeps the counters; default the App's store, whose counters live in PostgreSQL.
	Limiter Limiter
}

// DefaultBackfillLimitPeriod is the window of RateLimit.Backfill when BackfillPeriod is not set.
const DefaultBackfillLimitPeriod = time.Hour

// Limiter takes a request's slot from its user's and tenant's limits, all or nothing.
// *store.Store is the one agentmem uses.
type Limiter interface {
	TakeRequestSlot(ctx context.Context, p store.RequestSlotParams) (store.RequestSlot, error)
}

// on reports whether any limit is set.
func (l RateLimit) on() bool { return l.User > 0 || l.Tenant > 0 }

// LimitRequest takes a request's slot before its function runs; a is what the request names to
// act for (read leniently by the caller: a request the function will refuse goes unlimited to
// that refusal, which writes nothing). A request over a limit is a rate_limited error with
// RetryAfter (the seconds until a slot is free), and nothing runs. When the counters cannot be
// read (the database is unreachable or busy) it is unavailable rather than unlimited: the
// function would need the same database, and a limit is never silently lifted. Requests that
// act for no user are not limited.
func (a *App) LimitRequest(ctx context.Context, p auth.Principal, act ActingFor) error {
	rl := a.cfg.RateLimit
	if !rl.on() {
		return nil
	}
	if p.IsService() && act.UserID == nil {
		return nil
	}
	var f apierror.Fields
	sc, err := scope(p, act, nil, "", &f)
	if err != nil || f.Err() != nil || sc.UserID == "" {
		return nil
	}
	slot, err := rl.Limiter.TakeRequestSlot(ctx, store.RequestSlotParams{
		TenantID: sc.TenantID, UserID: sc.UserID, UserLimit: rl.User, TenantLimit: rl.Tenant, Period: rl.Period,
	})
	if err != nil {
		return err
	}
	return refused(slot, "requests")
}

// refused is nil for a slot taken, else the rate_limited error of a refused one, for what (the
// kind of request) of the full counter's user or tenant.
func refused(slot store.RequestSlot, what string) error {
	if slot.Taken {
		return nil
	}
	secs := max(int((slot.RetryAfter+time.Second-1)/time.Second), 1)
	who := "this user"
	if slot.LimitedBy == "tenant" {
		who = "this tenant's users"
	}
	return &apierror.Error{Code: apierror.RateLimited, RetryAfter: secs,
		Detail: fmt.Sprintf("too many %s for %s; retry in %d s", what, who, secs)}
}

// limitBackfill takes a backfill's slot of its user's Backfill limit, once the request is known
// to be a valid backfill and before anything is written: a refused one changes nothing. As
// LimitRequest, a limiter that cannot be read is unavailable, never unlimited.
func (a *App) limitBackfill(ctx context.Context, sc memory.Scope) error {
	rl := a.cfg.RateLimit
	if rl.Backfill <= 0 {
		return nil
	}
	slot, err := rl.Limiter.TakeRequestSlot(ctx, store.RequestSlotParams{TenantID: sc.TenantID, UserID: sc.UserID,
		UserLimit: rl.Backfill, Period: rl.BackfillPeriod, Bucket: store.BucketBackfill})
	if err != nil {
		return err
	}
	return refused(slot, "backfills")
}
