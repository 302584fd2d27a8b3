package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/shared/memory"
)

// Rows whose expiry came from the deployment's default retention follow it when it changes
// (migration follow_the_default_retention): a write whose TTL is the default says so to the
// database (the transaction's agentmem.default_retention), which records it on the rows it
// stamps; the sweep re-stamps the rows recorded under another default (restampSteps).

// defaultTTLKey carries, in the context of a store method's work, the default retention its
// writes are stamped with.
type defaultTTLKey struct{}

// withDefaultTTL is ctx for the work of a write whose TTL is ttl, the deployment's default
// when isDefault; otherwise ctx itself.
func withDefaultTTL(ctx context.Context, ttl time.Duration, isDefault bool) context.Context {
	if !isDefault {
		return ctx
	}
	return context.WithValue(ctx, defaultTTLKey{}, ttl)
}

// setDefaultRetentionSQL, appended to the statement that sets a transaction's claims, says
// that the transaction's writes are stamped with the default retention $4.
const setDefaultRetentionSQL = `,
	set_config('agentmem.default_retention', $4::text, true)`

// scopeStatement is claimsSQL, the statement that starts a user's transaction, and its
// arguments, with the default retention of ctx's writes when they have one.
func scopeStatement(ctx context.Context, claimsSQL string, args ...any) (string, []any) {
	d, ok := ctx.Value(defaultTTLKey{}).(time.Duration)
	if !ok {
		return claimsSQL, args
	}
	return claimsSQL + setDefaultRetentionSQL, append(args, fmt.Sprintf("%d microseconds", d.Microseconds()))
}

// restampSteps re-stamp, table by table, the rows whose expiry came from another default
// retention than $2: the time of their write (expires_at less the default they were stamped
// with) plus $2. The rows are found through the table's partial index of default_retention,
// at most $1 per batch, skipping rows a live request holds.
var restampSteps = []struct {
	count func(*memory.RestampCounts) *int64
	table string
}{
	{func(c *memory.RestampCounts) *int64 { return &c.Messages }, "messages"},
	{func(c *memory.RestampCounts) *int64 { return &c.ArchivedMessages }, "messages_archive"},
	{func(c *memory.RestampCounts) *int64 { return &c.Memories }, "memories"},
	{func(c *memory.RestampCounts) *int64 { return &c.Sessions }, "sessions"},
}

// restampSQL is a batch of restampSteps for table %s. Rows are told apart by (tableoid, ctid):
// each partition of a table partitioned by user numbers its own.
const restampSQL = `
	with doomed as (
	  select tableoid, ctid from agentmem.%[1]s
	  where default_retention < $2::interval or default_retention > $2::interval
	  limit $1 for update skip locked)
	update agentmem.%[1]s t
	set expires_at = t.expires_at - t.default_retention + $2::interval, default_retention = $2::interval
	from doomed where t.tableoid = doomed.tableoid and t.ctid = doomed.ctid`

// restampLeftSQL says whether table %s holds a row of another default retention than $1.
const restampLeftSQL = `select exists (select 1 from agentmem.%s
	where default_retention < $1::interval or default_retention > $1::interval)`

// restamp re-stamps the rows of every table stamped under another default retention than
// p.DefaultRetention, until none is left or p.Deadline passes; more reports rows left then.
func (s *Store) restamp(ctx context.Context, p SweepParams, res *memory.SweepResult) (more bool, err error) {
	d := fmt.Sprintf("%d microseconds", p.DefaultRetention.Microseconds())
	more, _, err = s.inBatches(ctx, p, res, len(restampSteps),
		func(i int) (string, []any, *int64) {
			return fmt.Sprintf(restampSQL, restampSteps[i].table), []any{p.BatchSize, d}, restampSteps[i].count(&res.Restamped)
		},
		func(i int) (string, []any) { return fmt.Sprintf(restampLeftSQL, restampSteps[i].table), []any{d} })
	if err != nil {
		return false, fmt.Errorf("re-stamp: %w", err)
	}
	return more, nil
}
