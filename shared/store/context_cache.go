package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// ContextFresh is what a get-context served from a cache reads from the database anyway: the
// parts of the answer no outbox job announces a change of (the user's key/value memory, state
// and notes), and what tells whether the cached window may be served.
type ContextFresh struct {
	UserMemory map[string]json.RawMessage
	State      *string
	Notes      *string
	// Undelivered is true while a job of the user for the cache's adapter is not done: a
	// change the cache may not have heard of yet.
	Undelivered bool
	// LastExpired is the latest expiry, at or before now, of a message of the session still
	// stored (the sweep deletes them later); nil when there is none. A cached window filled
	// before it may hold a message that has expired since.
	LastExpired *time.Time
}

// GetContextFresh reads ContextFresh for sc's session in one round trip, as the caller under
// row-level security; adapter names the cache's jobs.
func (s *Store) GetContextFresh(ctx context.Context, sc memory.Scope, sessionID uuid.UUID, adapter string) (ContextFresh, error) {
	out := ContextFresh{UserMemory: map[string]json.RawMessage{}}
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`select agentmem.undelivered_jobs($1),
			(select max(expires_at) from agentmem.messages
			  where session_id = $2 and user_id = $3 and tenant_id = $4 and expires_at <= now())`,
			adapter, sessionID, sc.UserID, sc.TenantID).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&out.Undelivered, &out.LastExpired); err != nil {
				return fmt.Errorf("select cache freshness: %w", err)
			}
			return nil
		})
		b.Queue(`select key, value from agentmem.user_memory
			where user_id = $1 and tenant_id = $2 order by key`, sc.UserID, sc.TenantID).Query(func(rows pgx.Rows) error {
			var key string
			var value json.RawMessage
			_, err := pgx.ForEachRow(rows, []any{&key, &value}, func() error {
				out.UserMemory[key] = slices.Clone(value)
				return nil
			})
			if err != nil {
				return fmt.Errorf("select user memory: %w", err)
			}
			return nil
		})
		b.Queue(`
			select (select mode from agentmem.user_state where user_id = $1 and tenant_id = $2),
			       (select content from agentmem.notes where user_id = $1 and tenant_id = $2 and agent = $3)`,
			sc.UserID, sc.TenantID, sc.Agent).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&out.State, &out.Notes); err != nil {
				return fmt.Errorf("select state and notes: %w", err)
			}
			return nil
		})
	})
	return out, err
}
