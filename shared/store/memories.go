package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// MemoryKey is the place of a memory in a listing, which orders by creation time, then id, both
// descending.
type MemoryKey struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// ListMemoriesParams asks for one page of a user's memories, or of the tenant's shared ones.
type ListMemoriesParams struct {
	// Scope.Agent, when set, lists that agent's and agent-less memories: what the agent recalls.
	// A shared scope (memory.SharedScope) lists the tenant's shared memories.
	Scope memory.Scope
	Limit int
	// After, when set, continues after that memory.
	After *MemoryKey
}

// MemoryPage is one page of memories.
type MemoryPage struct {
	Items []memory.MemoryItem
	// Next continues the listing; nil on the last page.
	Next *MemoryKey
}

const memoryColumns = `id, content, metadata, nullif(agent, ''), created_at, updated_at, expires_at, user_id = ''`

func scanMemoryItem(r pgx.CollectableRow) (memory.MemoryItem, error) {
	var m memory.MemoryItem
	var md []byte
	if err := r.Scan(&m.ID, &m.Content, &md, &m.Agent, &m.CreatedAt, &m.UpdatedAt, &m.ExpiresAt, &m.Shared); err != nil {
		return m, err
	}
	m.Metadata = json.RawMessage(md)
	m.CreatedAt, m.UpdatedAt, m.ExpiresAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), m.ExpiresAt.UTC()
	return m, nil
}

// ListMemories reads a page of the user's unexpired memories (or, for a shared scope, of the
// tenant's shared ones), the newest first, in the order of memories_owner_created_idx.
func (s *Store) ListMemories(ctx context.Context, p ListMemoriesParams) (MemoryPage, error) {
	out := MemoryPage{Items: []memory.MemoryItem{}}
	sc := p.Scope
	afterAt, afterID := afterArgs(p.After, func(k MemoryKey) (time.Time, uuid.UUID) { return k.CreatedAt, k.ID })
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`
			select `+memoryColumns+`
			from agentmem.memories
			where user_id = $1 and tenant_id = $2 and expires_at > now()
			  and ($3::text = '' or agent in ($3::text, ''))
			  and ($4::timestamptz is null or (created_at, id) < ($4::timestamptz, $5::uuid))
			order by created_at desc, id desc
			limit $6`, sc.UserID, sc.TenantID, sc.Agent, afterAt, afterID, p.Limit+1).Query(func(rows pgx.Rows) error {
			var err error
			if out.Items, err = pgx.CollectRows(rows, scanMemoryItem); err != nil {
				return fmt.Errorf("list memories: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return MemoryPage{}, err
	}
	out.Items, out.Next = pageOf(out.Items, p.Limit, func(m memory.MemoryItem) MemoryKey {
		return MemoryKey{CreatedAt: m.CreatedAt, ID: m.ID}
	})
	return out, nil
}

// GetMemory reads one unexpired memory the user sees: one of their own, or a shared memory of
// their tenant (marked Shared). For a shared scope, a shared memory of its tenant.
func (s *Store) GetMemory(ctx context.Context, sc memory.Scope, id uuid.UUID) (memory.MemoryItem, error) {
	var out memory.MemoryItem
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(selectVisibleMemorySQL, id, sc.UserID, sc.TenantID).Query(func(rows pgx.Rows) error {
			var err error
			out, err = collectMemory(rows)
			return err
		})
	})
	return out, err
}

// selectMemorySQL reads memory $1 of user $2 (memory.SharedUserID for a shared one) and tenant $3.
const selectMemorySQL = `select ` + memoryColumns + ` from agentmem.memories
	where id = $1 and user_id = $2 and tenant_id = $3 and expires_at > now()`

// selectVisibleMemorySQL is selectMemorySQL that also finds a shared memory of the tenant.
const selectVisibleMemorySQL = `select ` + memoryColumns + ` from agentmem.memories
	where id = $1 and user_id in ($2::text, '') and tenant_id = $3 and expires_at > now()`

// sharedMemoryWriteSQL says whether memory $1 is a shared memory of tenant $2, unexpired: what
// a user's change of a memory it did not find is refused for rather than not found.
const sharedMemoryWriteSQL = `select exists (select 1 from agentmem.memories
	where id = $1 and user_id = '' and tenant_id = $2 and expires_at > now())`

// refuseSharedWrite turns notFound, the answer of a change of memory id in sc that found no
// memory of sc, into a refusal when id is a shared memory of sc's tenant: a user sees it (in
// recall) and may not change it; only the shared scope of a service caller does. Any other
// error, and notFound for a memory the user does not see, is returned as it is.
func (s *Store) refuseSharedWrite(ctx context.Context, sc memory.Scope, id uuid.UUID, notFound error) error {
	if sc.Shared || !errors.Is(notFound, ErrNotFound) {
		return notFound
	}
	var shared bool
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(sharedMemoryWriteSQL, id, sc.TenantID).QueryRow(func(row pgx.Row) error { return row.Scan(&shared) })
	})
	switch {
	case err != nil:
		return err
	case shared:
		return &Error{Kind: ErrForbidden, Err: ErrSharedMemoryWrite,
			Detail: "this is a shared memory of the tenant: only a service caller changes it, with shared: true and no user_id"}
	}
	return notFound
}

// ErrSharedMemoryWrite is in the chain of the refusal (forbidden) of a user's change (update,
// delete) of a shared memory of their tenant: they read it, and only a service caller changes it.
var ErrSharedMemoryWrite = errors.New("a user's change of a shared memory")

func selectMemory(ctx context.Context, tx pgx.Tx, sc memory.Scope, id uuid.UUID, lock bool) (memory.MemoryItem, error) {
	q := selectMemorySQL
	if lock {
		q += ` for update`
	}
	rows, err := tx.Query(ctx, q, id, sc.UserID, sc.TenantID)
	if err != nil {
		return memory.MemoryItem{}, fmt.Errorf("select memory: %w", err)
	}
	return collectMemory(rows)
}

// collectMemory reads the one row of selectMemorySQL; none is not found.
func collectMemory(rows pgx.Rows) (memory.MemoryItem, error) {
	m, err := pgx.CollectExactlyOneRow(rows, scanMemoryItem)
	if err = notFoundAs(err, memoryNotFound); err != nil {
		return m, fmt.Errorf("select memory: %w", err)
	}
	return m, nil
}

// UpdateMemoryParams changes a memory.
type UpdateMemoryParams struct {
	Scope memory.Scope
	ID    uuid.UUID
	// Content, when set, replaces the text and its content key is recomputed.
	Content *string
	// Vector is the new content's vector, a pgvector literal of model Model, embedded by the
	// caller; nil leaves the memory without one, for the embed-pending run. Ignored without Content.
	Vector *string
	Model  string
	// Metadata, when set (a JSON object), replaces the metadata as a whole.
	Metadata json.RawMessage
	// IfUpdatedAt, when set, is the updated_at of the memory the caller read and based the
	// update on: the memory is updated only while it is unchanged since (checked with the row
	// locked), a conflict otherwise.
	IfUpdatedAt *time.Time
}

// ErrMemoryChanged is in the chain of UpdateMemory's conflict when the memory changed since
// UpdateMemoryParams.IfUpdatedAt.
var ErrMemoryChanged = errors.New("memory changed since it was read")

// UpdateMemory changes the content and/or metadata of an unexpired memory and keeps its expiry.
// New content that is the same fact (same content key) as another unexpired memory of the same
// user and agent is a conflict: one row per fact and scope stays true, and the caller decides
// which of the two to keep. An expired memory holding that key is deleted to make room.
func (s *Store) UpdateMemory(ctx context.Context, p UpdateMemoryParams) (memory.MemoryItem, error) {
	sc := p.Scope
	var vector, key *string
	if p.Content != nil {
		k := ContentKey(*p.Content)
		vector, key = p.Vector, &k
	}
	var metadata *string
	if p.Metadata != nil {
		m := string(p.Metadata)
		metadata = &m
	}
	var out memory.MemoryItem
	err := s.inScope(ctx, sc, func(tx pgx.Tx) error {
		cur, err := selectMemory(ctx, tx, sc, p.ID, true)
		if err != nil {
			return err
		}
		if p.IfUpdatedAt != nil && !cur.UpdatedAt.Equal(*p.IfUpdatedAt) {
			return &Error{Kind: ErrConflict, Detail: "the memory changed since it was read", Err: ErrMemoryChanged}
		}
		agent := ""
		if cur.Agent != nil {
			agent = *cur.Agent
		}
		if key != nil {
			if err := clearContentKey(ctx, tx, sc, agent, *key, p.ID); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `
			update agentmem.memories set
			  content = coalesce($4::text, content),
			  content_key = coalesce($5::text, content_key),
			  embedding = case when $4::text is null then embedding else $6::extensions.vector end,
			  embedding_model = case when $4::text is null then embedding_model
			                         when $6::extensions.vector is null then null else $7::text end,
			  metadata = coalesce($8::jsonb, metadata),
			  updated_at = now()
			where id = $1 and user_id = $2 and tenant_id = $3
			returning `+memoryColumns,
			p.ID, sc.UserID, sc.TenantID, p.Content, key, vector, p.Model, metadata)
		if err != nil {
			return fmt.Errorf("update memory: %w", err)
		}
		out, err = pgx.CollectExactlyOneRow(rows, scanMemoryItem)
		if memoryKeyTaken(err) {
			// A concurrent request stored the same fact between the check and the update.
			return sameFactConflict(nil)
		}
		if err != nil {
			return fmt.Errorf("update memory: %w", err)
		}
		_, _, err = s.enqueue(ctx, tx, change{intent: adapter.MemoryUpdated,
			sc: memory.Scope{TenantID: sc.TenantID, UserID: sc.UserID, Agent: agent, Shared: sc.Shared}, refs: memoryRefs{MemoryID: p.ID}})
		return err
	})
	if err != nil {
		return out, s.refuseSharedWrite(ctx, sc, p.ID, err)
	}
	return out, nil
}

// clearContentKey makes room for a memory to take key in its scope: an expired memory holding
// it is deleted (it is invisible already); an unexpired one is a conflict.
func clearContentKey(ctx context.Context, tx pgx.Tx, sc memory.Scope, agent, key string, self uuid.UUID) error {
	var other uuid.UUID
	var expired bool
	err := tx.QueryRow(ctx, `
		select id, expires_at <= now() from agentmem.memories
		where user_id = $1 and tenant_id = $2 and agent = $3 and content_key = $4 and id <> $5
		for update`, sc.UserID, sc.TenantID, agent, key, self).Scan(&other, &expired)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("select same fact: %w", err)
	}
	if !expired {
		return sameFactConflict(&other)
	}
	if _, err := tx.Exec(ctx, `delete from agentmem.memories where id = $1`, other); err != nil {
		return fmt.Errorf("delete expired same fact: %w", err)
	}
	return nil
}

func sameFactConflict(other *uuid.UUID) error {
	if other == nil {
		return conflict("another memory of this user and agent already holds the same content; update or delete that one instead")
	}
	return conflictf("memory %s of this user and agent already holds the same content; update or delete that one instead", other)
}

// DeleteMemory deletes one unexpired memory of the user (or, for a shared scope, a shared
// memory of its tenant). A user's deletion of a shared memory of their tenant is forbidden
// (ErrSharedMemoryWrite), and deletes nothing.
func (s *Store) DeleteMemory(ctx context.Context, sc memory.Scope, id uuid.UUID) error {
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		if s.outboxOn() {
			n := s.newJobs()
			b.Queue(deleteMemoryWithJobsSQL, id, sc.UserID, sc.TenantID, n.event, n.adapters, n.ids).
				QueryRow(oneRow("delete memory", memoryNotFound))
			return
		}
		b.Queue(`
			delete from agentmem.memories
			where id = $1 and user_id = $2 and tenant_id = $3 and expires_at > now()
			returning true`, id, sc.UserID, sc.TenantID).QueryRow(oneRow("delete memory", memoryNotFound))
	})
	if err != nil {
		return s.refuseSharedWrite(ctx, sc, id, err)
	}
	return nil
}

// deleteMemoryWithJobsSQL is DeleteMemory's statement when adapters are enabled: it also
// writes the jobs of the deletion ($4 the event id, $5 adapters, $6 job ids), only when it
// deleted the memory.
const deleteMemoryWithJobsSQL = `
with gone as (
  delete from agentmem.memories
  where id = $1 and user_id = $2 and tenant_id = $3 and expires_at > now()
  returning id, tenant_id, user_id, agent),
jobs as (
  insert into agentmem.jobs (id, event_id, tenant_id, user_id, agent, session_id, intent, adapter, refs)
  select a.id, $4, g.tenant_id, g.user_id, g.agent, null, '` + adapter.MemoryDeleted + `', a.name,
    jsonb_build_object('memory_id', g.id)
  from gone g, unnest($5::text[], $6::uuid[]) as a(name, id))
select true from gone`

// memoryNotFound answers for a memory that is missing, expired or (row-level security hides
// it) another user's.
const memoryNotFound = "memory not found"

// memoryKeyTaken reports a unique violation (interpret's ErrConflict): another row took the
// content key meanwhile.
func memoryKeyTaken(err error) bool { return errors.Is(interpret(err), ErrConflict) }

// CreateMemoryParams is one long-term fact to remember without a turn.
type CreateMemoryParams struct {
	// Scope.Agent is the fact's agent, as a turn's facts take their session's.
	Scope    memory.Scope
	Content  string
	Metadata json.RawMessage
	// Vector is Content's vector, a pgvector literal of model Model, embedded by the caller; nil
	// stores the memory without one, for the embed-pending run.
	Vector *string
	Model  string
	// TTL is the retention of the memory (a merged one keeps the later of its expiry and this).
	TTL time.Duration
	// TTLIsDefault says TTL is the deployment's default retention (no ttl_seconds): the rows
	// written record it, and follow a later change of the default (see retention.go).
	TTLIsDefault bool
	// Idempotency is nil for a request without a key.
	Idempotency *Idempotency
	// Source, when set, names the messages the fact was drawn from (fact extraction): it is
	// stored only while every one of them still is, checked and held (FOR KEY SHARE) in its
	// transaction, so a fact never outlives a deletion or an erasure that came first.
	Source *MessageRange
}

// MessageRange is the messages of a session from SeqFrom to SeqTo.
type MessageRange struct {
	SessionID      uuid.UUID
	SeqFrom, SeqTo int64
}

// ErrSourceGone is the answer of CreateMemory when a message of its Source is gone (deleted,
// reset, cleared, expired or erased) since the fact was drawn: nothing is stored.
var ErrSourceGone = errors.New("the messages the fact was drawn from are gone")

// holdSourceSQL locks the stored, unexpired messages of a range against deletion until the
// transaction ends, and returns them.
const holdSourceSQL = `select seq from agentmem.messages
	where session_id = $1 and user_id = $2 and tenant_id = $3 and seq between $4 and $5 and expires_at > now()
	for key share`

// holdSource checks, in tx, that every message of r is stored, and holds them.
func holdSource(ctx context.Context, tx pgx.Tx, sc memory.Scope, r MessageRange) error {
	rows, err := tx.Query(ctx, holdSourceSQL, r.SessionID, sc.UserID, sc.TenantID, r.SeqFrom, r.SeqTo)
	if err != nil {
		return fmt.Errorf("hold source messages: %w", err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("hold source messages: %w", err)
	}
	if int64(len(seqs)) != r.SeqTo-r.SeqFrom+1 {
		return ErrSourceGone
	}
	return nil
}

// ReplayCreatedMemory reads the recorded answer of a CreateMemory with key k, without locking:
// what a retry is answered from before anything is embedded again. found is false when the key
// has no answer in its window yet; a key used with another request is a conflict.
func (s *Store) ReplayCreatedMemory(ctx context.Context, sc memory.Scope, k Idempotency) (out memory.CreatedMemory, found bool, err error) {
	prior, found, err := s.findResponse(ctx, sc, k)
	if err != nil || !found {
		return out, false, err
	}
	out, err = decodeCreated(prior)
	return out, err == nil, err
}

// CreateMemory stores one long-term fact of the scope as a turn's facts are stored, through the
// same statement (storeMemoriesSQL, without a session): the same text or a near-duplicate merges
// into the memory holding it. As in CommitTurn, the caller embeds the fact before (p.Vector); a
// fact without a vector waits for the embed-pending run. With an idempotency key, a retry
// returns the first answer (replayed = true), and the key used with another request is a
// conflict; the caller answers a retry before embedding with ReplayCreatedMemory.
func (s *Store) CreateMemory(ctx context.Context, p CreateMemoryParams) (out memory.CreatedMemory, replayed bool, err error) {
	ctx = withDefaultTTL(ctx, p.TTL, p.TTLIsDefault)
	rows := newMemoryRows([]memory.NewMemory{{Content: p.Content, Metadata: p.Metadata}}, []*string{p.Vector})
	args := s.memoryArgs(p.Scope, nil, p.TTL, p.Model, rows)
	read := func(r pgx.Rows) error {
		facts, err := rows.facts(r)
		if err != nil {
			return err
		}
		if len(facts) != 1 {
			return fmt.Errorf("store memory: %d facts stored, want 1", len(facts))
		}
		out = memory.CreatedMemory{ID: facts[0].ID, Merged: facts[0].Merged, ContentChanged: facts[0].ContentChanged}
		return nil
	}
	jobs := s.memoryJobsArgs(p.Scope, rows.ckeys[0])
	// store stores the fact and its jobs in tx.
	store := func(tx pgx.Tx) error {
		r, err := tx.Query(ctx, storeMemoriesStatement.sql, storeMemoriesStatement.args(args)...)
		if err != nil {
			return fmt.Errorf("store memory: %w", err)
		}
		if err := read(r); err != nil {
			return err
		}
		if jobs != nil {
			if _, err := tx.Exec(ctx, memoryJobsSQL, jobs...); err != nil {
				return fmt.Errorf("write jobs: %w", err)
			}
		}
		return nil
	}
	if p.Source != nil {
		err = s.inScope(ctx, p.Scope, func(tx pgx.Tx) error {
			if err := holdSource(ctx, tx, p.Scope, *p.Source); err != nil {
				return err
			}
			return store(tx)
		})
		return out, false, err
	}
	if p.Idempotency == nil {
		err = s.batchInScope(ctx, p.Scope, func(b *pgx.Batch) {
			b.Queue(storeMemoriesStatement.sql, storeMemoriesStatement.args(args)...).Query(read)
			if jobs != nil {
				b.Queue(memoryJobsSQL, jobs...)
			}
		})
		return out, false, err
	}
	err = s.inScope(ctx, p.Scope, func(tx pgx.Tx) error {
		prior, found, err := s.claimKey(ctx, tx, p.Scope, *p.Idempotency)
		if err != nil {
			return err
		}
		if found {
			replayed = true
			out, err = decodeCreated(prior)
			return err
		}
		if err := store(tx); err != nil {
			return err
		}
		status := 201
		if out.Merged {
			status = 200
		}
		return s.saveResponse(ctx, tx, p.Scope, *p.Idempotency, status, out)
	})
	return out, replayed, err
}

// memoryJobsSQL writes the jobs of a fact stored without a turn, in its transaction after the
// fact: the memory of the scope holding the fact's content key ($5) is the one it went to,
// created (onMemoryCreated: created in this transaction, now() being its start) or merged into
// (onMemoryUpdated).
const memoryJobsSQL = `
insert into agentmem.jobs (id, event_id, tenant_id, user_id, agent, session_id, intent, adapter, refs)
select a.id, $1, m.tenant_id, m.user_id, m.agent, null,
  case when m.created_at = now() then '` + adapter.MemoryCreated + `' else '` + adapter.MemoryUpdated + `' end, a.name,
  jsonb_build_object('memory_id', m.id)
from agentmem.memories m, unnest($6::text[], $7::uuid[]) as a(name, id)
where m.user_id = $2 and m.tenant_id = $3 and m.agent = $4 and m.content_key = $5 and m.expires_at > now()`

// memoryJobsArgs are memoryJobsSQL's arguments for the fact of key in sc; nil without adapters.
func (s *Store) memoryJobsArgs(sc memory.Scope, key string) []any {
	if !s.outboxOn() {
		return nil
	}
	n := s.newJobs()
	return []any{n.event, sc.UserID, sc.TenantID, sc.Agent, key, n.adapters, n.ids}
}

// decodeCreated reads the answer stored for an idempotency key of CreateMemory; a body that
// does not decode is an error, never a half-filled answer.
func decodeCreated(prior []byte) (memory.CreatedMemory, error) {
	var out memory.CreatedMemory
	if err := json.Unmarshal(prior, &out); err != nil {
		return memory.CreatedMemory{}, fmt.Errorf("decode stored idempotent answer: %w", err)
	}
	if out.ID == uuid.Nil {
		return memory.CreatedMemory{}, errors.New("decode stored idempotent answer: no memory id")
	}
	return out, nil
}
