package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// CacheCheck is what decides whether a get-context answer cached by an adapter may be served
// (see adapter/redis).
type CacheCheck struct {
	// Unsettled is true while a job of the user for the cache's adapter is not done, or was
	// done less than the settle time ago.
	Unsettled bool
	// LastExpired is the latest expiry, at or before now, of a message of the session still
	// stored (the sweep deletes them later); nil when there is none. A cached window filled
	// before it may hold a message that has expired since.
	LastExpired *time.Time
	// Generation changes with every acknowledged change of the user's or the session's cached
	// answer (the migration count_cache_generations), and never returns to an earlier value: a
	// window filled under another generation is older than the database, whatever Redis says.
	Generation string
}

// CheckContextCache reads CacheCheck for sc's session in one statement, without the request's
// transaction set-up (role, claims, the user's lock): agentmem.check_context_cache, which only
// the functions' role may call, answers for the user, tenant and session the caller has
// verified; adapter names the cache's jobs.
func (s *Store) CheckContextCache(ctx context.Context, sc memory.Scope, sessionID uuid.UUID, adapter string, settle time.Duration) (CacheCheck, error) {
	var out CacheCheck
	b := &pgx.Batch{}
	b.Queue(`select unsettled, last_expired, generation from agentmem.check_context_cache(p_user_id => $1::text,
		p_tenant_id => $2::text, p_session_id => $3::uuid, p_adapter => $4::text, p_settle_ms => $5::integer)`,
		sc.UserID, sc.TenantID, sessionID, adapter, int32(settle.Milliseconds())).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&out.Unsettled, &out.LastExpired, &out.Generation); err != nil {
			return fmt.Errorf("select cache check: %w", err)
		}
		return nil
	})
	return out, s.sendBatch(ctx, b)
}
