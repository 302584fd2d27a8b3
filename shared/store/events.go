package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// jobRefs is every field a job's refs may hold (see the refs types in outbox.go). Its JSON
// tags are a stored format, the jsonb column agentmem.jobs.refs (also written by the SQL
// function agentmem.write_turn_jobs), not the API's: no client reads them.
type jobRefs struct {
	SeqFrom    *int64      `json:"seq_from"`
	SeqTo      *int64      `json:"seq_to"`
	MemoryIDs  []uuid.UUID `json:"memory_ids"`
	MemoryID   *uuid.UUID  `json:"memory_id"`
	MessageID  *string     `json:"message_id"`
	Seq        *int64      `json:"seq"`
	AllTenants bool        `json:"all_tenants"`
}

// LoadEvents reads what a claimed job delivers: its event, with the content the database holds
// now (a message or memory deleted since is no longer in it), as service_role filtered to the
// job's user and tenant. A backfill gives one event per page of adapter.BackfillPageSeqs seqs.
func (s *Store) LoadEvents(ctx context.Context, j ClaimedJob) ([]adapter.Event, error) {
	var refs jobRefs
	if len(j.Refs) > 0 {
		if err := json.Unmarshal(j.Refs, &refs); err != nil {
			return nil, fmt.Errorf("decode job refs: %w", err)
		}
	}
	ev := adapter.Event{ID: j.EventID, Type: j.Intent, OccurredAt: j.CreatedAt, UserID: j.UserID,
		Shared: j.UserID == memory.SharedUserID, SessionID: j.SessionID, Messages: []memory.Message{},
		Memories: []adapter.Memory{}, Metadata: map[string]any{}}
	tenant := j.TenantID
	ev.TenantID = &tenant
	if j.Agent != "" {
		agent := j.Agent
		ev.Agent = &agent
	}
	sc := memory.Scope{TenantID: j.TenantID, UserID: j.UserID, Agent: j.Agent}

	switch j.Intent {
	case adapter.TurnCommitted:
		ev.SeqFrom, ev.SeqTo = refs.SeqFrom, refs.SeqTo
		err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
			if j.SessionID != nil && refs.SeqFrom != nil && refs.SeqTo != nil && *refs.SeqFrom <= *refs.SeqTo {
				queueMessages(b, sc, *j.SessionID, *refs.SeqFrom, *refs.SeqTo, &ev.Messages)
			}
			if len(refs.MemoryIDs) > 0 {
				b.Queue(`select `+eventMemoryColumns+` from agentmem.memories
					where id = any($1::uuid[]) and user_id = $2 and tenant_id = $3 and expires_at > now()
					order by created_at, id`, refs.MemoryIDs, sc.UserID, sc.TenantID).
					Query(collectEventMemories(&ev.Memories))
			}
		})
		return []adapter.Event{ev}, err
	case adapter.MemoryCreated, adapter.MemoryUpdated:
		if refs.MemoryID == nil {
			return nil, errors.New("job refs name no memory")
		}
		err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
			b.Queue(`select `+eventMemoryColumns+` from agentmem.memories
				where id = $1 and user_id = $2 and tenant_id = $3 and expires_at > now()`,
				*refs.MemoryID, sc.UserID, sc.TenantID).Query(collectEventMemories(&ev.Memories))
		})
		return []adapter.Event{ev}, err
	case adapter.MemoryDeleted:
		if refs.MemoryID == nil {
			return nil, errors.New("job refs name no memory")
		}
		ev.Removed = &adapter.Removed{MessageIDs: []string{}, MemoryIDs: []uuid.UUID{*refs.MemoryID}}
		return []adapter.Event{ev}, nil
	case adapter.MessageDeleted:
		if refs.MessageID == nil {
			return nil, errors.New("job refs name no message")
		}
		ev.SeqFrom, ev.SeqTo = refs.Seq, refs.Seq
		ev.Removed = &adapter.Removed{MessageIDs: []string{*refs.MessageID}, MemoryIDs: []uuid.UUID{}}
		return []adapter.Event{ev}, nil
	case adapter.SessionReset:
		ev.SeqTo = refs.SeqTo
		ev.Removed = &adapter.Removed{MessageIDs: []string{}, MemoryIDs: []uuid.UUID{}, AllMessages: true}
		return []adapter.Event{ev}, nil
	case adapter.SummaryUpdated:
		// What get-context answers for the session changed: its summary now covers the
		// messages up to SeqTo (the summary's text is not sent: it is read where it is needed).
		ev.SeqTo = refs.SeqTo
		return []adapter.Event{ev}, nil
	case adapter.MessagesCleared:
		ev.Removed = &adapter.Removed{MessageIDs: []string{}, MemoryIDs: []uuid.UUID{}, AllMessages: true}
		return []adapter.Event{ev}, nil
	case adapter.SessionDeleted:
		ev.Removed = &adapter.Removed{MessageIDs: []string{}, MemoryIDs: []uuid.UUID{}, AllMessages: true, Session: true}
		return []adapter.Event{ev}, nil
	case adapter.UserDataChanged:
		// Nothing to read: the adapters that get it only drop what they cached.
		return []adapter.Event{ev}, nil
	case adapter.UserForgotten:
		if refs.AllTenants {
			ev.TenantID = nil
		}
		ev.Removed = &adapter.Removed{MessageIDs: []string{}, MemoryIDs: []uuid.UUID{}, AllMessages: true, User: true}
		return []adapter.Event{ev}, nil
	case adapter.SyncSession:
		if j.SessionID == nil {
			return nil, errors.New("job names no session")
		}
		err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
			b.Queue(`
				select s.id, s.agent, s.title, s.last_seq,
				  (select count(*) from agentmem.messages m where m.session_id = s.id and m.expires_at > now()),
				  s.created_at, s.last_active_at, s.expires_at
				from agentmem.sessions s
				where s.id = $1 and s.user_id = $2 and s.tenant_id = $3 and s.expires_at > now()`,
				*j.SessionID, sc.UserID, sc.TenantID).Query(func(rows pgx.Rows) error {
				sess, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (adapter.Session, error) {
					var x adapter.Session
					err := r.Scan(&x.ID, &x.Agent, &x.Title, &x.LastSeq, &x.MessageCount, &x.CreatedAt, &x.LastActiveAt, &x.ExpiresAt)
					x.CreatedAt, x.LastActiveAt, x.ExpiresAt = x.CreatedAt.UTC(), x.LastActiveAt.UTC(), x.ExpiresAt.UTC()
					return x, err
				})
				if len(sess) == 1 {
					ev.Session = &sess[0]
				}
				return err
			})
		})
		if err == nil && ev.Session == nil {
			// Gone since the intent: the adapters learn that it is gone.
			ev.Removed = &adapter.Removed{MessageIDs: []string{}, MemoryIDs: []uuid.UUID{}, AllMessages: true, Session: true}
		}
		return []adapter.Event{ev}, err
	case adapter.BackfillSession:
		if j.SessionID == nil || refs.SeqTo == nil {
			return nil, errors.New("job names no session or seq")
		}
		return s.backfillPages(ctx, ev, sc, *j.SessionID, *refs.SeqTo)
	}
	return nil, fmt.Errorf("job of unknown intent %q", j.Intent)
}

// backfillPages reads a backfill's pages: seqs 1 to seqTo, adapter.BackfillPageSeqs per page,
// each page an event of its own (adapter.PageID), empty pages left out (one page at least).
func (s *Store) backfillPages(ctx context.Context, ev adapter.Event, sc memory.Scope, session uuid.UUID, seqTo int64) ([]adapter.Event, error) {
	pages := int((seqTo + adapter.BackfillPageSeqs - 1) / adapter.BackfillPageSeqs)
	out := make([]adapter.Event, max(pages, 1))
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		for i := range out {
			page := ev
			page.ID = adapter.PageID(ev.ID, i+1)
			page.Page = &adapter.Page{Number: i + 1, Of: len(out)}
			page.Messages = []memory.Message{}
			page.Metadata = map[string]any{}
			from, to := int64(i)*adapter.BackfillPageSeqs+1, min(int64(i+1)*adapter.BackfillPageSeqs, seqTo)
			page.SeqFrom, page.SeqTo = &from, &to
			out[i] = page
			if from <= to {
				queueMessages(b, sc, session, from, to, &out[i].Messages)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var kept []adapter.Event
	for _, p := range out {
		if len(p.Messages) > 0 {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		kept = append(kept, out[len(out)-1])
	}
	return kept, nil
}

// queueMessages reads a session's unexpired messages from seq from to seq to into dst.
func queueMessages(b *pgx.Batch, sc memory.Scope, session uuid.UUID, from, to int64, dst *[]memory.Message) {
	b.Queue(`
		select `+messageColumns+`
		from agentmem.messages
		where session_id = $1 and user_id = $2 and tenant_id = $3 and seq between $4 and $5 and expires_at > now()
		order by seq`, session, sc.UserID, sc.TenantID, from, to).Query(func(rows pgx.Rows) error {
		msgs, err := pgx.CollectRows(rows, scanMessage)
		if err != nil {
			return fmt.Errorf("select messages: %w", err)
		}
		*dst = append(*dst, msgs...)
		return nil
	})
}

const eventMemoryColumns = `id, content, metadata, nullif(agent, ''), created_at, updated_at, expires_at`

func collectEventMemories(dst *[]adapter.Memory) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		mems, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (adapter.Memory, error) {
			var m adapter.Memory
			var md []byte
			err := r.Scan(&m.ID, &m.Content, &md, &m.Agent, &m.CreatedAt, &m.UpdatedAt, &m.ExpiresAt)
			m.Metadata = json.RawMessage(md)
			m.CreatedAt, m.UpdatedAt, m.ExpiresAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), m.ExpiresAt.UTC()
			return m, err
		})
		if err != nil {
			return fmt.Errorf("select memories: %w", err)
		}
		*dst = append(*dst, mems...)
		return nil
	}
}
