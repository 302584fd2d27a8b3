package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// SetUserState sets the user's mode in a single statement; created reports that the user had
// none. Scope.Agent is not used.
func (s *Store) SetUserState(ctx context.Context, sc memory.Scope, mode string) (st memory.UserState, created bool, err error) {
	err = s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(upsertLockSQL, upsertLockKey("user_state", sc.TenantID, sc.UserID))
		b.Queue(`
			insert into agentmem.user_state as u (tenant_id, user_id, mode)
			values ($1, $2, $3)
			on conflict (user_id, tenant_id)
			do update set mode = excluded.mode, updated_at = now()
			returning u.mode, u.updated_at, `+insertedSQL("u", "user_state", "p.user_id = $2 and p.tenant_id = $1"),
			sc.TenantID, sc.UserID, mode).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&st.Mode, &st.UpdatedAt, &created); err != nil {
				return fmt.Errorf("upsert user state: %w", err)
			}
			return nil
		})
		s.queueUserDataJobs(b, sc)
	})
	st.UpdatedAt = st.UpdatedAt.UTC()
	return st, created, err
}

// GetUserState reads the user's mode; a user without one is not_found.
func (s *Store) GetUserState(ctx context.Context, sc memory.Scope) (memory.UserState, error) {
	var st memory.UserState
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`select mode, updated_at from agentmem.user_state
			where user_id = $1 and tenant_id = $2`, sc.UserID, sc.TenantID).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&st.Mode, &st.UpdatedAt)
			if err = notFoundAs(err, userStateNotFound); err != nil {
				return fmt.Errorf("select user state: %w", err)
			}
			return nil
		})
	})
	st.UpdatedAt = st.UpdatedAt.UTC()
	return st, err
}

// DeleteUserState removes the user's mode; a user without one is not_found.
func (s *Store) DeleteUserState(ctx context.Context, sc memory.Scope) error {
	return s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`delete from agentmem.user_state where user_id = $1 and tenant_id = $2 returning true`,
			sc.UserID, sc.TenantID).QueryRow(oneRow("delete user state", userStateNotFound))
		s.queueUserDataJobs(b, sc)
	})
}

// userStateNotFound answers for a user without a mode.
const userStateNotFound = "the user has no state"
