package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// Rolling summaries (migration create_session_summaries): a session's summary covers its
// messages up to through_seq; get-context answers it and the messages after it. The summarize
// job reads the summary and the messages after it (SummaryInput), asks the model, and saves
// the new summary (SaveSummary) only if nothing moved meanwhile: the summary is still the one
// it read, and every message it summarised is still stored. A reset, a clear or the deletion
// of a summarised message deletes the summary in its own transaction, and the foreign key to
// the session takes it with the session.

// MaxSummaryScan bounds the messages after a summary that SummaryInput reads: a session further
// behind is summarised from its oldest unsummarised messages, over several summaries.
const MaxSummaryScan = 2000

// SessionSummaryInput is what the next summary of a session starts from.
type SessionSummaryInput struct {
	// Summary is the current summary; nil when the session has none.
	Summary *memory.Summary
	// Messages are the unexpired messages after the summary's through_seq (all of them when
	// there is none), oldest first, at most MaxSummaryScan.
	Messages []memory.Message
	// Found is false when the session is gone (or not the scope's).
	Found bool
}

// SummaryInput reads a session's summary and the messages after it, as the session's user, in
// one statement: one snapshot, so that the messages begin right after the summary read.
func (s *Store) SummaryInput(ctx context.Context, sc memory.Scope, session uuid.UUID) (SessionSummaryInput, error) {
	var out SessionSummaryInput
	err := s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`
			select s.id is not null, x.content, x.through_seq, x.updated_at
			from (select 1) one
			left join agentmem.sessions s on s.id = $1 and s.user_id = $2 and s.tenant_id = $3 and s.agent = $4
			left join agentmem.session_summaries x on x.session_id = s.id`,
			session, sc.UserID, sc.TenantID, sc.Agent).QueryRow(func(row pgx.Row) error {
			var content *string
			var through *int64
			var updated *time.Time
			if err := row.Scan(&out.Found, &content, &through, &updated); err != nil {
				return fmt.Errorf("select summary: %w", err)
			}
			if content != nil && through != nil && updated != nil {
				out.Summary = &memory.Summary{Content: *content, ThroughSeq: *through, UpdatedAt: updated.UTC()}
			}
			return nil
		})
	})
	if err != nil || !out.Found {
		return out, err
	}
	var through int64
	if out.Summary != nil {
		through = out.Summary.ThroughSeq
	}
	// The summary read above can only have advanced since: saving checks it did not.
	err = s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`
			select `+messageColumns+` from agentmem.messages
			where session_id = $1 and user_id = $2 and tenant_id = $3 and seq > $4 and expires_at > now()
			order by seq
			limit $5`, session, sc.UserID, sc.TenantID, through, MaxSummaryScan).Query(func(rows pgx.Rows) error {
			var err error
			if out.Messages, err = pgx.CollectRows(rows, scanMessage); err != nil {
				return fmt.Errorf("select messages: %w", err)
			}
			return nil
		})
	})
	return out, err
}

// SaveSummaryParams is a new summary of a session.
type SaveSummaryParams struct {
	Scope     memory.Scope
	SessionID uuid.UUID
	// PreviousThroughSeq is the through_seq of the summary the new one was made from; 0 when
	// there was none.
	PreviousThroughSeq int64
	// FromSeq..ThroughSeq are the messages folded in, Messages how many they were.
	FromSeq, ThroughSeq int64
	Messages            int
	Content             string
	// Prompt and Model made it; InputTokens and OutputTokens are what it cost.
	Prompt, Model             string
	InputTokens, OutputTokens int
}

// ErrSummaryStale reports a summary not saved because the session moved while it was made:
// another summary was saved, the session was reset, cleared or deleted, or a message it
// summarised was deleted.
var ErrSummaryStale = errors.New("the session changed while its summary was made")

// SaveSummary stores a new summary of a session, in one transaction as the session's user, if
// the current summary is still PreviousThroughSeq's and every message it folds in is still
// stored: those messages are locked (key share) first, so a deletion of one waits for the save
// and then deletes the summary, or went first and the save finds it missing. Otherwise it
// answers ErrSummaryStale and changes nothing. The adapters learn of a saved summary
// (adapter.SummaryUpdated), in the same transaction.
func (s *Store) SaveSummary(ctx context.Context, p SaveSummaryParams) (memory.Summary, error) {
	sc := p.Scope
	var out memory.Summary
	err := s.inScope(ctx, sc, func(tx pgx.Tx) error {
		var n int
		err := tx.QueryRow(ctx, `
			select count(*) from (
			  select 1 from agentmem.messages
			  where session_id = $1 and user_id = $2 and tenant_id = $3 and seq between $4 and $5 and expires_at > now()
			  for key share) m`, p.SessionID, sc.UserID, sc.TenantID, p.FromSeq, p.ThroughSeq).Scan(&n)
		if err != nil {
			return fmt.Errorf("lock summarised messages: %w", err)
		}
		if n != p.Messages {
			return ErrSummaryStale
		}
		if p.PreviousThroughSeq == 0 {
			// The first summary: another made meanwhile wins (conflict, no row).
			err = tx.QueryRow(ctx, `
				insert into agentmem.session_summaries (session_id, tenant_id, user_id, agent, content, through_seq,
				  prompt, model, input_tokens, output_tokens)
				select s.id, s.tenant_id, s.user_id, s.agent, $5, $6, $7, $8, $9, $10
				from agentmem.sessions s
				where s.id = $1 and s.user_id = $2 and s.tenant_id = $3 and s.agent = $4
				on conflict on constraint session_summaries_pkey do nothing
				returning through_seq, updated_at`,
				p.SessionID, sc.UserID, sc.TenantID, sc.Agent, p.Content, p.ThroughSeq, p.Prompt, p.Model,
				p.InputTokens, p.OutputTokens).Scan(&out.ThroughSeq, &out.UpdatedAt)
		} else {
			err = tx.QueryRow(ctx, `
				update agentmem.session_summaries set content = $5, through_seq = $6, prompt = $7, model = $8,
				  input_tokens = input_tokens + $9, output_tokens = output_tokens + $10, updated_at = now()
				where session_id = $1 and user_id = $2 and tenant_id = $3 and agent = $4 and through_seq = $11
				returning through_seq, updated_at`,
				p.SessionID, sc.UserID, sc.TenantID, sc.Agent, p.Content, p.ThroughSeq, p.Prompt, p.Model,
				p.InputTokens, p.OutputTokens, p.PreviousThroughSeq).Scan(&out.ThroughSeq, &out.UpdatedAt)
		}
		if isNotFound(err) {
			return ErrSummaryStale
		}
		if err != nil {
			return fmt.Errorf("save summary: %w", err)
		}
		out.Content, out.UpdatedAt = p.Content, out.UpdatedAt.UTC()
		_, _, err = s.enqueue(ctx, tx, change{intent: adapter.SummaryUpdated, sc: sc, session: &p.SessionID,
			refs: seqRefs{SeqTo: out.ThroughSeq}})
		return err
	})
	return out, err
}

// deleteSummarySQL deletes the summary of user $1's session $2 when it covers seq $3 or later
// (0: any).
const deleteSummarySQL = `delete from agentmem.session_summaries where user_id = $1 and session_id = $2 and through_seq >= $3`
