package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequestSlotParams names the counters one request takes a slot of. A limit of 0 is no limit.
type RequestSlotParams struct {
	// TenantID is the tenant the request acts in, "" for none. The tenant's counter is kept
	// only for a tenant that is not "".
	TenantID string
	// UserID is the user the request acts for; the user's counter is keyed by (TenantID, UserID).
	UserID string
	// UserLimit is the most requests of the user per Period; TenantLimit the most of all the
	// tenant's users together.
	UserLimit, TenantLimit int
	// Period is the window of the limits; a limit lets a burst of itself through, then one more
	// request every Period / limit.
	Period time.Duration
	// Bucket names the counters: "" those of every request, or a kind of request that is
	// limited on its own besides (BucketBackfill), whose counters are apart from the general ones.
	Bucket string
}

// BucketBackfill is the bucket of the backfillSession intents: each sends every message of a
// session to every adapter, so they have a limit of their own.
const BucketBackfill = "backfillSession"

// RequestSlot is the answer of TakeRequestSlot.
type RequestSlot struct {
	// Taken reports that the request may go on: its slot is taken from every counter.
	Taken bool
	// RetryAfter is, for a request refused, how long until a slot is free.
	RetryAfter time.Duration
	// LimitedBy is, for a request refused, the counter that is full: "user" or "tenant".
	LimitedBy string
}

// takeRequestSlotSQL takes a slot from the counters of a user and a tenant in one statement,
// all or nothing (see agentmem.take_request_slot in the migrations).
const takeRequestSlotSQL = `select retry_after_ms, coalesce(limited_by, '')
	from agentmem.take_request_slot($1::text, $2::text, $3::integer, $4::integer, $5::integer, $6::text)`

// setLimiterRoleSQL makes the rest of the limiter's transaction run as service_role, the one
// role allowed to take request slots, with $1 as its statement timeout (see statementTimeout),
// and commit without waiting for the WAL to reach the disk: the counters live in an unlogged
// table, which a crash empties anyway, so waiting would buy nothing and costs a flush (about
// half the limiter's time, measured).
const setLimiterRoleSQL = `select set_config('role', 'service_role', true),
	set_config('statement_timeout', $1::text, true),
	set_config('synchronous_commit', 'off', true)`

// TakeRequestSlot counts one request against the limits of p, in the database that every
// container shares, before the request does anything: a request refused has changed no
// counter and may change nothing else. It runs as its own short transaction (one round trip),
// as service_role whatever role the request's own transaction takes, and is bounded by ctx's
// deadline on the server too, so a request that gave up does not take its slot afterwards.
// A database that cannot be reached answers the store's usual unavailable error.
func (s *Store) TakeRequestSlot(ctx context.Context, p RequestSlotParams) (RequestSlot, error) {
	if p.Period <= 0 || (p.UserLimit <= 0 && (p.TenantLimit <= 0 || p.TenantID == "")) {
		return RequestSlot{Taken: true}, nil
	}
	var (
		waitMS int32
		by     string
	)
	b := &pgx.Batch{}
	b.Queue(setLimiterRoleSQL, statementTimeout(ctx))
	b.Queue(takeRequestSlotSQL, p.TenantID, p.UserID, int32(max(p.UserLimit, 0)), int32(max(p.TenantLimit, 0)),
		int32(min(p.Period.Milliseconds(), 1<<31-1)), p.Bucket).QueryRow(func(row pgx.Row) error {
		return row.Scan(&waitMS, &by)
	})
	if err := interpret(s.pool.SendBatch(ctx, b).Close()); err != nil {
		return RequestSlot{}, fmt.Errorf("take request slot: %w", err)
	}
	if waitMS > 0 {
		return RequestSlot{RetryAfter: time.Duration(waitMS) * time.Millisecond, LimitedBy: by}, nil
	}
	return RequestSlot{Taken: true}, nil
}
