package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// SetUserMemoryParams stores Value under Key for the scope's user (Scope.Agent is not used:
// key/value memory belongs to the user, every agent sees it).
type SetUserMemoryParams struct {
	Scope memory.Scope
	Key   string
	// Value is a JSON object.
	Value json.RawMessage
}

// SetUserMemory inserts or replaces one key in a single statement, so concurrent sets of a key
// never fail and the last one wins; created reports that the key was new.
func (s *Store) SetUserMemory(ctx context.Context, p SetUserMemoryParams) (item memory.UserMemoryItem, created bool, err error) {
	sc := p.Scope
	err = s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(upsertLockSQL, upsertLockKey("user_memory", sc.TenantID, sc.UserID, p.Key))
		b.Queue(`
			insert into agentmem.user_memory as m (tenant_id, user_id, key, value)
			values ($1, $2, $3, $4::jsonb)
			on conflict (user_id, tenant_id, key)
			do update set value = excluded.value, updated_at = now()
			returning m.value, m.updated_at, `+insertedSQL("m", "user_memory", "p.user_id = $2 and p.tenant_id = $1 and p.key = $3"),
			sc.TenantID, sc.UserID, p.Key, string(p.Value)).QueryRow(func(row pgx.Row) error {
			var value []byte
			if err := row.Scan(&value, &item.UpdatedAt, &created); err != nil {
				return userMemoryValueError(fmt.Errorf("upsert user memory: %w", err))
			}
			item.Key, item.Value = p.Key, value
			return nil
		})
		s.queueUserDataJobs(b, sc)
	})
	item.UpdatedAt = item.UpdatedAt.UTC()
	return item, created, err
}

// GetUserMemory reads one key; a key the user has not set is not_found.
func (s *Store) GetUserMemory(ctx context.Context, sc memory.Scope, key string) (memory.UserMemoryItem, error) {
	var item memory.UserMemoryItem
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`select key, value, updated_at from agentmem.user_memory
			where user_id = $1 and tenant_id = $2 and key = $3`, sc.UserID, sc.TenantID, key).Query(func(rows pgx.Rows) error {
			var err error
			item, err = pgx.CollectExactlyOneRow(rows, scanUserMemoryItem)
			if err = notFoundAs(err, userMemoryNotFound); err != nil {
				return fmt.Errorf("select user memory: %w", err)
			}
			return nil
		})
	})
	return item, err
}

// ListUserMemory reads every key of the user, ordered by key (bytewise).
func (s *Store) ListUserMemory(ctx context.Context, sc memory.Scope) ([]memory.UserMemoryItem, error) {
	items := []memory.UserMemoryItem{}
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`select key, value, updated_at from agentmem.user_memory
			where user_id = $1 and tenant_id = $2 order by key collate "C"`, sc.UserID, sc.TenantID).Query(func(rows pgx.Rows) error {
			list, err := pgx.CollectRows(rows, scanUserMemoryItem)
			if err != nil {
				return fmt.Errorf("select user memory: %w", err)
			}
			items = append(items, list...)
			return nil
		})
	})
	return items, err
}

// DeleteUserMemory deletes one key; a key the user has not set is not_found.
func (s *Store) DeleteUserMemory(ctx context.Context, sc memory.Scope, key string) error {
	return s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`delete from agentmem.user_memory
			where user_id = $1 and tenant_id = $2 and key = $3
			returning true`, sc.UserID, sc.TenantID, key).QueryRow(oneRow("delete user memory", userMemoryNotFound))
		s.queueUserDataJobs(b, sc)
	})
}

// ClearUserMemory deletes every key of the user and counts them.
func (s *Store) ClearUserMemory(ctx context.Context, sc memory.Scope) (int64, error) {
	var n int64
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`with gone as (
			  delete from agentmem.user_memory where user_id = $1 and tenant_id = $2 returning 1)
			select count(*) from gone`, sc.UserID, sc.TenantID).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&n); err != nil {
				return fmt.Errorf("clear user memory: %w", err)
			}
			return nil
		})
		s.queueUserDataJobs(b, sc)
	})
	return n, err
}

func scanUserMemoryItem(row pgx.CollectableRow) (memory.UserMemoryItem, error) {
	var item memory.UserMemoryItem
	var value []byte
	if err := row.Scan(&item.Key, &value, &item.UpdatedAt); err != nil {
		return item, err
	}
	item.Value = value
	item.UpdatedAt = item.UpdatedAt.UTC()
	return item, nil
}

// userMemoryNotFound answers for a key the user has not set.
const userMemoryNotFound = "no value is stored under this key"

// userMemoryValueError names the value in an error of the upsert that interpret answers as
// text the database cannot store (an unpaired UTF-16 surrogate escape such as "\ud800", a
// number beyond numeric's range, nesting too deep for the server's stack): the handler checks
// the key's length and characters first, so only the value can hold it, and the client can fix
// it where retrying cannot.
func userMemoryValueError(err error) error {
	if errors.Is(interpret(err), ErrInvalid) {
		return invalidField("value", "holds JSON the database cannot store",
			"value holds JSON the database cannot store (e.g. an unpaired surrogate escape)", err)
	}
	return err
}
