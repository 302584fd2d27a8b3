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

// ContextParams asks for what the next prompt of a session needs.
type ContextParams struct {
	Scope     memory.Scope
	SessionID uuid.UUID
	// MaxMessages is how many of the most recent messages to consider.
	MaxMessages int
	// MaxTokens, when > 0, bounds the window's token estimate.
	MaxTokens int
	// Query, when not empty, recalls up to RecallK long-term memories.
	Query   string
	RecallK int
	// IncludeShared recalls the tenant's shared memories beside the user's own (see
	// RecallParams.IncludeShared).
	IncludeShared bool
	// QueryVector is Query's vector (see RecallParams.QueryVector), of model Model; nil ranks
	// the recalled memories by full text alone.
	QueryVector *string
	Model       string
	// Since, when not nil, leaves out the messages created before it.
	Since *time.Time
	// AnswersOnly leaves out tool messages, the tool calls of assistant messages, and the
	// assistant messages that have no text.
	AnswersOnly bool
	// WindowExpiry also reads when the first of the window's messages expires (memory.Context's
	// WindowExpiresAt), for an answer that is kept (a cache's fill).
	WindowExpiry bool
}

// windowSQL selects a session's recent window, newest first: $1 session, $2 user, $3 tenant,
// $4 agent, $5 how many, $6 since (or null), $7 answers only.
const windowSQL = `
	from agentmem.messages
	where session_id = $1 and user_id = $2 and tenant_id = $3 and agent = $4 and expires_at > now()
	  and ($6::timestamptz is null or created_at >= $6::timestamptz)
	  and (not $7::boolean or ` + answerSQL + `)
	order by seq desc
	limit $5`

// answerSQL is memory.IsAnswer in SQL: the stored messages answers_only keeps. get-context's
// window and history's pages filter with it in the statement, so that the messages left out
// take no place of a window or a page; memory.AnswersOnly then strips what is read.
const answerSQL = `(role <> 'tool' and not (role = 'assistant' and content = ''))`

// windowSQL's statements: the window's messages, and when the first of them expires.
const (
	windowMessagesSQL = `select ` + messageColumns + windowSQL
	windowExpirySQL   = `select min(expires_at) from (select expires_at` + windowSQL + `) w`
)

// userDataSQL reads the user's ($1, tenant $2) state, notes (of agent $3), key/value memory
// (as one JSON object) and the summary of session $4.
const userDataSQL = `
			select (select mode from agentmem.user_state where user_id = $1 and tenant_id = $2),
			       (select content from agentmem.notes where user_id = $1 and tenant_id = $2 and agent = $3),
			       (select jsonb_object_agg(key, value) from agentmem.user_memory where user_id = $1 and tenant_id = $2),
			       s.content, s.through_seq, s.updated_at
			from (select) one
			left join agentmem.session_summaries s
			  on s.session_id = $4 and s.user_id = $1 and s.tenant_id = $2 and s.agent = $3`

// GetContext reads the recent window of a session, the memories relevant to a query and the
// user's key/value memory, state and notes, in one read-only transaction. A session that does
// not exist, or is not the caller's, has no messages.
func (s *Store) GetContext(ctx context.Context, p ContextParams) (memory.Context, error) {
	out := memory.Context{SessionID: p.SessionID, Memories: []memory.Hit{}, UserMemory: map[string]json.RawMessage{}}
	var rp *RecallParams
	if p.Query != "" && p.RecallK > 0 {
		r, err := prepareRecall(RecallParams{Scope: p.Scope, Query: p.Query, K: p.RecallK, Mode: memory.ModeHybrid,
			QueryVector: p.QueryVector, Model: p.Model, IncludeShared: p.IncludeShared})
		if err != nil {
			return out, err
		}
		rp = &r
	}
	sc := p.Scope
	var msgs []memory.Message
	// Without Since, the window (and its expiry) is the session's primary key read backwards
	// whatever the values: it runs its generic plan. A window since a time is left to plans for
	// its values, which may read messages_owner_created_idx instead. The statements after the
	// window are planned as before: the summaries' table has a second index, which a generic
	// plan may take.
	err := s.batchInScopeGeneric(ctx, sc, p.Since == nil, func(b *pgx.Batch, generic bool) {
		b.Queue(windowMessagesSQL, p.SessionID, sc.UserID, sc.TenantID, sc.Agent, p.MaxMessages, p.Since, p.AnswersOnly).Query(func(rows pgx.Rows) error {
			var err error
			if msgs, err = pgx.CollectRows(rows, scanMessage); err != nil {
				return fmt.Errorf("select messages: %w", err)
			}
			return nil
		})
		if p.WindowExpiry {
			b.Queue(windowExpirySQL, p.SessionID, sc.UserID, sc.TenantID, sc.Agent, p.MaxMessages, p.Since, p.AnswersOnly).QueryRow(func(row pgx.Row) error {
				if err := row.Scan(&out.WindowExpiresAt); err != nil {
					return fmt.Errorf("select window expiry: %w", err)
				}
				return nil
			})
		}
		if generic {
			queueResetPlans(b)
		}
		if rp != nil {
			b.Queue(recallStatement.sql, recallStatement.args(s.recallArgs(*rp))...).Query(func(rows pgx.Rows) error {
				var err error
				out.Memories, err = recallHits(rows, *rp)
				// get-context's memories are as its contract has them: no relevance.
				for i := range out.Memories {
					out.Memories[i].Relevance = nil
				}
				return err
			})
		}
		// The key/value memory, the state, the notes and the summary in one statement: the
		// key/value pairs as one JSON object (their values are JSON already). The summary is
		// read after the messages, so in a snapshot no older than theirs: it covers at least
		// what it covered when they were read, and the messages kept below, those after its
		// through_seq, leave no gap between it and the window.
		var kv []byte
		var sumContent *string
		var sumThrough *int64
		var sumUpdated *time.Time
		b.Queue(userDataSQL, sc.UserID, sc.TenantID, sc.Agent, p.SessionID).QueryRow(func(row pgx.Row) error {
			// Set afresh: a read a replica failed runs again on the primary.
			out.Summary, out.UserMemory = nil, map[string]json.RawMessage{}
			if err := row.Scan(&out.State, &out.Notes, &kv, &sumContent, &sumThrough, &sumUpdated); err != nil {
				return fmt.Errorf("select state, notes, user memory and summary: %w", err)
			}
			if sumContent != nil && sumThrough != nil && sumUpdated != nil {
				out.Summary = &memory.Summary{Content: *sumContent, ThroughSeq: *sumThrough, UpdatedAt: sumUpdated.UTC()}
			}
			if kv != nil {
				if err := json.Unmarshal(kv, &out.UserMemory); err != nil {
					return fmt.Errorf("decode user memory: %w", err)
				}
			}
			return nil
		})
	})
	if err != nil {
		return out, err
	}
	slices.Reverse(msgs)
	if out.Summary != nil {
		// With a summary, the window begins after its through_seq: the messages it covers are
		// in it, and every later one read is kept (within the budget below).
		first := 0
		for first < len(msgs) && msgs[first].Seq <= out.Summary.ThroughSeq {
			first++
		}
		msgs = msgs[first:]
	}
	if p.AnswersOnly {
		// The query left the other messages out already, so that they take no place of the
		// window; what remains loses its tool calls.
		msgs = memory.AnswersOnly(msgs)
	}
	var tokens int
	out.Messages, tokens, out.Usage.Truncated = memory.Window(msgs, p.MaxTokens)
	out.Usage.Messages = len(out.Messages)
	out.Usage.TokenEstimate = tokens
	return out, err
}

// messageColumns are the columns of agentmem.messages scanMessage reads, in its order.
const messageColumns = `id, seq, role, content, name, tool_calls, tool_call_id, metadata, created_at, token_estimate, parts`

func scanMessage(row pgx.CollectableRow) (memory.Message, error) {
	var m memory.Message
	var toolCalls []byte
	var metadata []byte
	var parts []byte
	var tokens int32
	if err := row.Scan(&m.ID, &m.Seq, &m.Role, &m.Content, &m.Name, &toolCalls, &m.ToolCallID, &metadata, &m.CreatedAt, &tokens, &parts); err != nil {
		return m, err
	}
	if len(parts) > 0 {
		m.Parts = json.RawMessage(parts)
	}
	m.Tokens = int(tokens)
	m.CreatedAt = m.CreatedAt.UTC()
	calls, err := decodeToolCalls(toolCalls)
	if err != nil {
		return m, err
	}
	m.ToolCalls = calls
	if len(metadata) > 0 {
		m.Metadata = json.RawMessage(metadata)
	}
	return m, nil
}

// decodeToolCalls reads a message's stored tool_calls (jsonb; nil when SQL null): the calls, or
// an error for anything but an array of calls, never a panic.
func decodeToolCalls(raw []byte) ([]memory.ToolCall, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var calls []memory.ToolCall
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, fmt.Errorf("decode tool_calls: %w", err)
	}
	return calls, nil
}
