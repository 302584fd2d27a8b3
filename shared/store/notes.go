package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// Notes is an agent's Markdown notes about a user, one text per (tenant, user, agent).
type Notes struct {
	Content string
	// UpdatedAt is nil when the agent has no notes for the user.
	UpdatedAt *time.Time
}

// LogValue keeps notes content out of logs.
func (n Notes) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("content_len", len(n.Content)))
}

// EditNotesParams changes the notes of Scope (tenant, user and agent).
type EditNotesParams struct {
	Scope memory.Scope
	Edit  memory.NotesEdit
	// MaxChars is the size limit of the notes, in characters; default
	// memory.DefaultNotesMaxChars. Every edit but delete_section is refused when its result
	// would pass it (removing a section never is: it is how notes over a lowered limit shrink).
	MaxChars int
}

// EditedNotes is the result of EditNotes.
type EditedNotes struct {
	Notes
	// Created reports that the agent had no notes for the user before.
	Created bool
	// SectionCreated reports that replace_section appended a section that did not exist.
	SectionCreated bool
}

// ReadNotes reads the notes of sc; notes never written read as "" with a nil UpdatedAt.
func (s *Store) ReadNotes(ctx context.Context, sc memory.Scope) (Notes, error) {
	var n Notes
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`select content, updated_at from agentmem.notes
			where user_id = $1 and tenant_id = $2 and agent = $3`, sc.UserID, sc.TenantID, sc.Agent).QueryRow(func(row pgx.Row) error {
			var at time.Time
			err := row.Scan(&n.Content, &at)
			if isNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("select notes: %w", err)
			}
			at = at.UTC()
			n.UpdatedAt = &at
			return nil
		})
	})
	return n, err
}

// EditNotes applies one edit atomically: the row is locked (created empty first when absent,
// so that concurrent first writes serialise too), the new text computed from the current one,
// checked against the limit and written back, all in one transaction. Concurrent edits of the
// same notes thus apply one after the other and none is lost. A refused edit changes nothing.
func (s *Store) EditNotes(ctx context.Context, p EditNotesParams) (EditedNotes, error) {
	sc := p.Scope
	limit := p.MaxChars
	if limit <= 0 {
		limit = memory.DefaultNotesMaxChars
	}
	var out EditedNotes
	err := s.inScope(ctx, sc, func(tx pgx.Tx) error {
		// One statement creates the notes empty when absent and locks them either way (the
		// conflict's update takes the row lock, as a first insert holds its new row), and
		// reads the current text, and whether it made them (after upsertLockSQL: insertedSQL).
		// The key's lock and the upsert go in one round trip.
		var current string
		b := &pgx.Batch{}
		b.Queue(upsertLockSQL, upsertLockKey("notes", sc.TenantID, sc.UserID, sc.Agent))
		b.Queue(`
			insert into agentmem.notes as n (tenant_id, user_id, agent, content) values ($1, $2, $3, '')
			on conflict (user_id, tenant_id, agent) do update set content = n.content
			returning n.content, `+insertedSQL("n", "notes", "p.user_id = $2 and p.tenant_id = $1 and p.agent = $3"),
			sc.TenantID, sc.UserID, sc.Agent).QueryRow(func(row pgx.Row) error {
			return row.Scan(&current, &out.Created)
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("lock notes: %w", err)
		}
		next, sectionCreated, err := p.Edit.Apply(current)
		if errors.Is(err, memory.ErrSectionNotFound) {
			return notFound("the notes have no such section")
		}
		if err != nil {
			return err
		}
		if n := memory.CharCount(next); n > limit && p.Edit.Op != memory.NotesDeleteSection {
			return NotesTooLong(n, limit)
		}
		var at time.Time
		err = tx.QueryRow(ctx, `update agentmem.notes set content = $4, updated_at = now()
			where user_id = $1 and tenant_id = $2 and agent = $3
			returning updated_at`, sc.UserID, sc.TenantID, sc.Agent, next).Scan(&at)
		if err != nil {
			return fmt.Errorf("update notes: %w", err)
		}
		at = at.UTC()
		out.Content, out.UpdatedAt, out.SectionCreated = next, &at, sectionCreated
		if args := s.userDataJobArgs(sc); args != nil {
			if _, err := tx.Exec(ctx, enqueueSQL, args...); err != nil {
				return fmt.Errorf("write jobs: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return EditedNotes{}, err
	}
	return out, nil
}

// ClearNotes deletes the notes of sc; deleted reports that there were any.
func (s *Store) ClearNotes(ctx context.Context, sc memory.Scope) (deleted bool, err error) {
	err = s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`delete from agentmem.notes where user_id = $1 and tenant_id = $2 and agent = $3 returning true`,
			sc.UserID, sc.TenantID, sc.Agent).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&deleted)
			if isNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("delete notes: %w", err)
			}
			return nil
		})
		s.queueUserDataJobs(b, sc)
	})
	return deleted, err
}

// NotesTooLong is the error of an edit that would make the notes chars characters long, over
// limit.
func NotesTooLong(chars, limit int) error {
	msg := fmt.Sprintf("would make the notes %d characters long; the limit is %d characters", chars, limit)
	return invalidField("content", msg, "content "+msg, nil)
}
