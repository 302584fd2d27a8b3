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
}

// CheckContextCache reads CacheCheck for sc's session in one round trip, as the caller under
// row-level security; adapter names the cache's jobs.
func (s *Store) CheckContextCache(ctx context.Context, sc memory.Scope, sessionID uuid.UUID, adapter string, settle time.Duration) (CacheCheck, error) {
	var out CacheCheck
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`select agentmem.cache_unsettled($1, $2),
			(select max(expires_at) from agentmem.messages
			  where session_id = $3 and user_id = $4 and tenant_id = $5 and expires_at <= now())`,
			adapter, int32(settle.Milliseconds()), sessionID, sc.UserID, sc.TenantID).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&out.Unsettled, &out.LastExpired); err != nil {
				return fmt.Errorf("select cache check: %w", err)
			}
			return nil
		})
	})
	return out, err
}
