package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// Idempotency identifies a request made with an Idempotency-Key.
type Idempotency struct {
	// CallerRole separates a service's keys from the user's own: keys belong to their caller.
	CallerRole string
	// Function is the function the key was used with.
	Function string
	Key      string
	// RequestHash is a digest of the request; the same key with another request is a conflict.
	RequestHash []byte
}

// CommitParams is one turn to append to a session.
type CommitParams struct {
	Scope     memory.Scope
	SessionID uuid.UUID
	Messages  []memory.NewMessage
	Memories  []memory.NewMemory
	// MemoryVectors and MessageVectors are the vectors of the memories and messages, of model
	// Model, as pgvector literals (see VectorLiterals), one per row in order; a short slice or a
	// nil entry stores that row without a vector, for the embed-pending run (app.EmbedPending) to embed later. The store
	// embeds nothing itself: the caller embeds, outside any transaction.
	MemoryVectors, MessageVectors []*string
	// Model is the embedding model of the vectors.
	Model string
	// TTL is the retention of every row written.
	TTL time.Duration
	// TTLIsDefault says TTL is the deployment's default retention (no ttl_seconds): the rows
	// written record it, and follow a later change of the default (see retention.go).
	TTLIsDefault bool
	// Idempotency is nil for a request without a key.
	Idempotency *Idempotency
	// NoExtract opts the turn out of fact extraction (commit-turn's extract: false).
	NoExtract bool
	// KeepMessages, when set, is the session's own history cap from now on (see memory.HistoryCap;
	// 0: none).
	KeepMessages *int
	// SessionMetadata is the metadata of the session when this turn creates it (a JSON object;
	// nil for {}). A session that exists keeps its own.
	SessionMetadata json.RawMessage
}

// CommitTurn appends a turn to a session, creating the session on first use, all or nothing.
// Concurrent commits to one session serialise on the session row, so the messages of a turn
// get consecutive numbers in the order given and never interleave with another turn. A message
// whose client id the session already holds is not stored again; its original place is
// returned. With an idempotency key, a retry returns the first answer (replayed = true).
func (s *Store) CommitTurn(ctx context.Context, p CommitParams) (res memory.CommitResult, replayed bool, err error) {
	ctx = withDefaultTTL(ctx, p.TTL, p.TTLIsDefault)
	vectors := turnVectors{memories: p.MemoryVectors, messages: p.MessageVectors}
	if p.Idempotency == nil && !hasClientIDs(p.Messages) && len(p.Messages) > 0 {
		// Every message is new and nothing needs deciding between statements: the whole turn
		// goes in one round trip, one implicit transaction. (A turn without messages, such as
		// an answers-only turn of tool work alone, has no inserted row to tell that the session
		// is another agent's: it takes the path that locks the session and checks it.)
		res, err = s.appendTurn(ctx, p, vectors)
		return res, false, err
	}
	err = s.inScope(ctx, p.Scope, func(tx pgx.Tx) error {
		if p.Idempotency != nil {
			prior, found, err := s.claimKey(ctx, tx, p.Scope, *p.Idempotency)
			if err != nil {
				return err
			}
			if found {
				replayed = true
				res, err = decodeReplay(prior)
				return err
			}
		}
		var err error
		res, err = s.commit(ctx, tx, p, vectors)
		if err != nil {
			return err
		}
		if p.Idempotency != nil {
			return s.saveResponse(ctx, tx, p.Scope, *p.Idempotency, 201, res)
		}
		return nil
	})
	return res, replayed, err
}

// appendSQL creates the session or locks it, takes the next numbers for the new messages and
// stores them (with their vectors, of model @model, where they have one), in one statement. A
// message is created at the time given for it (@created_at, imported histories) or at the commit's
// time; the session's activity and every expiry count from the commit's time. A session it
// creates takes the metadata @session_metadata. It stores nothing, and returns no row, when the session
// belongs to another agent; another user's session fails it with a row-level security error.
const appendSQL = `
with sess as (
  insert into agentmem.sessions as s (id, tenant_id, user_id, agent, last_seq, expires_at, metadata)
  values (@session_id, @tenant_id, @user_id, @agent, @count, now() + make_interval(secs => @ttl_seconds::float8), coalesce(@session_metadata::jsonb, '{}'::jsonb))
  on conflict on constraint sessions_pkey do update
    set last_seq = s.last_seq + excluded.last_seq,
        last_active_at = now(),
        expires_at = greatest(s.expires_at, excluded.expires_at)
    where s.agent = excluded.agent
  returning last_seq
)
insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
  parts, name, tool_calls, tool_call_id, metadata, token_estimate, expires_at, embedding, embedding_model,
  created_at)
select @session_id, sess.last_seq - @count + m.ord, m.id, @tenant_id, @user_id, @agent, m.role, m.content, m.parts::jsonb, m.name,
  m.tool_calls::jsonb, m.tool_call_id, m.metadata::jsonb, m.tokens,
  now() + make_interval(secs => @ttl_seconds::float8),
  m.embedding::extensions.vector, case when m.embedding is not null then @model::text end,
  coalesce(m.created_at, now())
from sess, unnest(@ids::text[], @roles::text[], @contents::text[], @names::text[], @tool_calls::text[], @tool_call_ids::text[],
  @metadata::text[], @tokens::int[], @parts::text[], @embeddings::text[], @created_at::timestamptz[])
  with ordinality as m(id, role, content, name, tool_calls, tool_call_id, metadata, tokens, parts, embedding,
    created_at, ord)
returning id, seq, created_at`

// newMessages holds the columns of the messages to insert, and where each answer goes.
type newMessages struct {
	ids                                  []string
	roles, contents                      []string
	names, toolCalls, toolCallIDs, metas []*string
	parts                                []*string
	tokens                               []int32
	embeds                               []*string    // nil: no vector (not embedded, or the provider failed)
	times                                []*time.Time // nil: the commit's time
	slot                                 []int        // the index in the request of each row
}

// collectNew gathers the messages of msgs not yet stored, with their vectors (vecs, one per
// message or nil).
func collectNew(msgs []memory.NewMessage, vecs []*string, stored map[string]memory.StoredMessage) newMessages {
	var n newMessages
	for i, m := range msgs {
		id := uuid.NewString()
		if m.ID != nil {
			if _, ok := stored[*m.ID]; ok {
				continue
			}
			id = *m.ID
		}
		n.ids = append(n.ids, id)
		n.roles = append(n.roles, m.Role)
		n.contents = append(n.contents, m.Content)
		n.names = append(n.names, m.Name)
		n.toolCallIDs = append(n.toolCallIDs, m.ToolCallID)
		n.toolCalls = append(n.toolCalls, jsonOrNil(m.ToolCalls))
		n.metas = append(n.metas, rawOrNil(m.Metadata))
		n.parts = append(n.parts, rawOrNil(m.Parts))
		n.tokens = append(n.tokens, int32(memory.EstimateTokens(m.Content, m.Name, m.ToolCalls, m.ToolCallID)))
		var vec *string
		if i < len(vecs) {
			vec = vecs[i]
		}
		n.embeds = append(n.embeds, vec)
		n.times = append(n.times, m.CreatedAt)
		n.slot = append(n.slot, i)
	}
	return n
}

func appendArgs(p CommitParams, n newMessages) pgx.NamedArgs {
	sc := p.Scope
	return pgx.NamedArgs{"session_id": p.SessionID, "tenant_id": sc.TenantID, "user_id": sc.UserID, "agent": sc.Agent,
		"count": len(n.ids), "ttl_seconds": p.TTL.Seconds(), "ids": n.ids, "roles": n.roles, "contents": n.contents,
		"names": n.names, "tool_calls": n.toolCalls, "tool_call_ids": n.toolCallIDs, "metadata": n.metas,
		"tokens": n.tokens, "parts": n.parts, "embeddings": n.embeds, "model": p.Model, "created_at": n.times,
		"session_metadata": rawOrNil(p.SessionMetadata)}
}

// turnVectors are the vectors of a turn (CommitParams.MemoryVectors and MessageVectors).
type turnVectors struct {
	memories, messages []*string
}

// placeAppended puts the rows appendSQL returned at their places in res.
func placeAppended(rows pgx.Rows, n newMessages, res *memory.CommitResult) error {
	stored, err := pgx.CollectRows(rows, pgx.RowToStructByPos[memory.StoredMessage])
	if err != nil {
		return fmt.Errorf("insert messages: %w", err)
	}
	if len(stored) != len(n.ids) {
		// Another agent's session: the statement stored nothing.
		return notFound("session not found")
	}
	sort.Slice(stored, func(a, b int) bool { return stored[a].Seq < stored[b].Seq })
	for k, st := range stored {
		st.CreatedAt = st.CreatedAt.UTC()
		res.Messages[n.slot[k]] = st
	}
	return nil
}

func newResult(p CommitParams) memory.CommitResult {
	return memory.CommitResult{SessionID: p.SessionID, Messages: make([]memory.StoredMessage, len(p.Messages)), Memories: []memory.StoredMemory{}}
}

// appendTurn commits a turn whose messages are all new in one round trip.
func (s *Store) appendTurn(ctx context.Context, p CommitParams, vectors turnVectors) (memory.CommitResult, error) {
	res := newResult(p)
	n := collectNew(p.Messages, vectors.messages, nil)
	var mems memoryRows
	if len(p.Memories) > 0 {
		mems = newMemoryRows(p.Memories, vectors.memories)
	}
	jobs := s.turnJobs(p, len(n.ids), mems.ckeys)
	more := len(p.Memories) > 0 || jobs != nil || p.KeepMessages != nil
	// The append has one plan whatever the values (the session's key, the messages' rows), and
	// PostgreSQL, left to choose, planned it at every commit on a large table: it runs on its
	// generic plan, and the statements after it on the plans the connection's settings choose.
	err := s.batchInScopeGeneric(ctx, p.Scope, true, func(b *pgx.Batch, generic bool) {
		b.Queue(appendStatement.sql, appendStatement.args(appendArgs(p, n))...).Query(func(rows pgx.Rows) error {
			return placeAppended(rows, n, &res)
		})
		if generic && more {
			queueResetPlans(b)
		}
		if len(p.Memories) > 0 {
			b.Queue(storeMemoriesStatement.sql, storeMemoriesStatement.args(s.memoryArgs(p.Scope, &p.SessionID, p.TTL, p.Model, mems))...).Query(func(rows pgx.Rows) error {
				facts, err := mems.facts(rows)
				for _, f := range facts {
					res.Memories = append(res.Memories, memory.StoredMemory{ID: f.ID})
				}
				return err
			})
		}
		if jobs != nil {
			b.Queue(turnJobsSQL, jobs...)
		}
		if p.KeepMessages != nil {
			b.Queue(setKeepMessagesSQL, keepMessagesArgs(p)...)
		}
	})
	// Row-level security refuses another user's session.
	return res, notFoundAs(err, "session not found")
}

func (s *Store) commit(ctx context.Context, tx pgx.Tx, p CommitParams, vectors turnVectors) (memory.CommitResult, error) {
	sc := p.Scope
	res := newResult(p)
	// Lock the session (creating it if need be) before looking for the client ids it holds, so
	// that concurrent retries of the same messages store them once.
	var lastSeq int64
	err := tx.QueryRow(ctx, `
		insert into agentmem.sessions as s (id, tenant_id, user_id, agent, expires_at, metadata)
		values ($1, $2, $3, $4, now() + make_interval(secs => $5::float8), coalesce($6::jsonb, '{}'::jsonb))
		on conflict on constraint sessions_pkey do update
		  set last_active_at = now(), expires_at = greatest(s.expires_at, excluded.expires_at)
		  where s.agent = excluded.agent
		returning last_seq`,
		p.SessionID, sc.TenantID, sc.UserID, sc.Agent, p.TTL.Seconds(), rawOrNil(p.SessionMetadata)).Scan(&lastSeq)
	if err = interpret(err); errors.Is(err, ErrNotFound) {
		// Another agent's session, or (row-level security says) another user's.
		return res, notFoundAs(err, "session not found")
	}
	if err != nil {
		return res, fmt.Errorf("lock session: %w", err)
	}

	stored := map[string]memory.StoredMessage{}
	var clientIDs []string
	for _, m := range p.Messages {
		if m.ID != nil {
			clientIDs = append(clientIDs, *m.ID)
		}
	}
	if len(clientIDs) > 0 {
		// A client id whose message expired (and awaits the sweep) is free again: its old row
		// goes, so the message is stored anew and nothing expired is answered. A message the
		// history cap archived is as stored as a live one.
		rows, err := tx.Query(ctx, `
			with expired as (
			  delete from agentmem.messages
			  where user_id = $3 and session_id = $1 and id = any($2::text[]) and expires_at <= now()),
			expired_archived as (
			  delete from agentmem.messages_archive
			  where user_id = $3 and session_id = $1 and id = any($2::text[]) and expires_at <= now())
			select id, seq, created_at from agentmem.messages
			where user_id = $3 and session_id = $1 and id = any($2::text[]) and expires_at > now()
			union all
			select id, seq, created_at from agentmem.messages_archive
			where user_id = $3 and session_id = $1 and id = any($2::text[]) and expires_at > now()`,
			p.SessionID, clientIDs, sc.UserID)
		if err != nil {
			return res, fmt.Errorf("select stored messages: %w", err)
		}
		found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[memory.StoredMessage])
		if err != nil {
			return res, fmt.Errorf("select stored messages: %w", err)
		}
		for _, m := range found {
			m.CreatedAt = m.CreatedAt.UTC()
			stored[m.ID] = m
		}
		for i, m := range p.Messages {
			if m.ID != nil {
				if st, ok := stored[*m.ID]; ok {
					res.Messages[i] = st
				}
			}
		}
	}

	n := collectNew(p.Messages, vectors.messages, stored)
	if len(n.ids) > 0 {
		rows, err := tx.Query(ctx, appendStatement.sql, appendStatement.args(appendArgs(p, n))...)
		if err != nil {
			return res, fmt.Errorf("insert messages: %w", err)
		}
		if err := placeAppended(rows, n, &res); err != nil {
			return res, err
		}
	}

	var keys []string
	if len(p.Memories) > 0 {
		mems := newMemoryRows(p.Memories, vectors.memories)
		rows, err := tx.Query(ctx, storeMemoriesStatement.sql, storeMemoriesStatement.args(s.memoryArgs(p.Scope, &p.SessionID, p.TTL, p.Model, mems))...)
		if err != nil {
			return res, fmt.Errorf("store memories: %w", err)
		}
		facts, err := mems.facts(rows)
		if err != nil {
			return res, err
		}
		for _, f := range facts {
			res.Memories = append(res.Memories, memory.StoredMemory{ID: f.ID})
		}
		keys = mems.ckeys
	}
	if args := s.turnJobs(p, len(n.ids), keys); args != nil {
		if _, err := tx.Exec(ctx, turnJobsSQL, args...); err != nil {
			return res, fmt.Errorf("write jobs: %w", err)
		}
	}
	if p.KeepMessages != nil {
		if _, err := tx.Exec(ctx, setKeepMessagesSQL, keepMessagesArgs(p)...); err != nil {
			return res, fmt.Errorf("set keep_messages: %w", err)
		}
	}
	return res, nil
}

// setKeepMessagesSQL sets session $1's history cap to $2, after the turn stored (or locked) the
// session, when it is the scope's ($3, $4, $5): a turn refused for another agent's session
// changes nothing. A changed cap makes the sweep look at the session again at its next run.
const setKeepMessagesSQL = `
	update agentmem.sessions
	set keep_messages = $2::int,
	    history_checked_seq = case when keep_messages is distinct from $2::int then 0 else history_checked_seq end
	where id = $1 and user_id = $3 and tenant_id = $4 and agent = $5`

func keepMessagesArgs(p CommitParams) []any {
	return []any{p.SessionID, *p.KeepMessages, p.Scope.UserID, p.Scope.TenantID, p.Scope.Agent}
}

// storeMemoriesSQL stores the facts of a turn, or one fact remembered without a turn, in one
// statement, agentmem.store_memories (migrations merge_near_duplicate_memories and
// store_a_memory_without_a_turn, keep_the_better_formed_memory_text). A fact goes into the
// unexpired memory of its scope holding the same normalised text, which keeps its own text
// unless the fact's is better formed (agentmem.memory_text_form); else, when it has a vector and
// @min_similarity is at most 1, into the nearest memory of its scope whose vector (same model
// and dimension) has a cosine similarity of at least @min_similarity with its own, which takes
// the fact's text and vector unless the fact's text is less well formed, and the later expiry,
// and merges its metadata; else into a row of its own. It answers each fact's key, the memory
// it went to, whether that memory existed before (merged) and whether the merge gave it the
// fact's text. Concurrent turns of one scope write their facts one after the other (an
// advisory lock of the scope), so near-duplicates they store at once still end in one memory.
// With a session (@session_id), it stores nothing unless the session is the caller's and this
// agent's, so that a turn refused for its session keeps none of its memories even when both
// statements share one implicit transaction; with none (@session_id null), the fact belongs to
// no turn.
const storeMemoriesSQL = `
select fact_key, memory_id, merged, content_changed from agentmem.store_memories(p_tenant_id => @tenant_id::text, p_user_id => @user_id::text,
  p_agent => @agent::text, p_session_id => @session_id::uuid, p_contents => @contents::text[], p_keys => @keys::text[],
  p_metadata => @metadata::text[], p_embeddings => @embeddings::text[], p_model => @model::text,
  p_ttl_seconds => @ttl_seconds::float8, min_similarity => @min_similarity::float8)`

// memoryRows are the memories of one request, one row per fact: repeats of a fact within the
// request merge their metadata in order, and the last repeat's text wins. Rows are in the order
// of their last repeats, the order in which the statement stores them: of near-duplicates within
// one request, the last one's text wins too.
type memoryRows struct {
	keys                   []string  // per input
	contents, ckeys, metas []string  // per row
	embeds                 []*string // per row; nil while the provider is unavailable
}

func newMemoryRows(mems []memory.NewMemory, vectors []*string) memoryRows {
	r := memoryRows{keys: make([]string, len(mems))}
	last := map[string]int{}
	meta := map[string]json.RawMessage{}
	for i, m := range mems {
		r.keys[i] = ContentKey(m.Content)
		last[r.keys[i]] = i
		meta[r.keys[i]] = mergeObjects(meta[r.keys[i]], objectOrEmpty(m.Metadata))
	}
	for i, m := range mems {
		if last[r.keys[i]] != i {
			continue
		}
		r.contents = append(r.contents, m.Content)
		r.ckeys = append(r.ckeys, r.keys[i])
		r.metas = append(r.metas, string(meta[r.keys[i]]))
		var vec *string
		if i < len(vectors) {
			vec = vectors[i]
		}
		r.embeds = append(r.embeds, vec)
	}
	return r
}

// memoryArgs are the arguments of storeMemoriesSQL: the facts r of scope sc, kept for ttl, from
// a turn of session (a *uuid.UUID; nil for a fact remembered without a turn), their vectors of
// embedding model model.
func (s *Store) memoryArgs(sc memory.Scope, session *uuid.UUID, ttl time.Duration, model string, r memoryRows) pgx.NamedArgs {
	return pgx.NamedArgs{"tenant_id": sc.TenantID, "user_id": sc.UserID, "agent": sc.Agent, "session_id": session,
		"contents": r.contents, "keys": r.ckeys, "metadata": r.metas, "embeddings": r.embeds, "model": model,
		"ttl_seconds": ttl.Seconds(), "min_similarity": s.mergeSimilarity}
}

// storedFact is where one fact of a request went: the memory, whether that memory existed
// before (the fact merged into it) rather than being made for it, and whether the merge gave
// it the fact's text.
type storedFact struct {
	ID             uuid.UUID
	Merged         bool
	ContentChanged bool
}

// facts reads the statement's rows into one storedFact per input, in order.
func (r memoryRows) facts(rows pgx.Rows) ([]storedFact, error) {
	byKey := map[string]storedFact{}
	var f storedFact
	var key string
	if _, err := pgx.ForEachRow(rows, []any{&key, &f.ID, &f.Merged, &f.ContentChanged}, func() error { byKey[key] = f; return nil }); err != nil {
		return nil, fmt.Errorf("store memories: %w", err)
	}
	out := make([]storedFact, 0, len(r.keys))
	for _, k := range r.keys {
		if f, ok := byKey[k]; ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// ContentKey is the digest that makes two memories the same fact: the text lower-cased, with
// runs of white space folded and trailing sentence punctuation dropped.
func ContentKey(content string) string {
	norm := strings.Join(strings.Fields(strings.ToLower(content)), " ")
	norm = strings.TrimRight(norm, ".!?;, ")
	sum := sha256.Sum256([]byte(norm))
	return hex.EncodeToString(sum[:])
}

// claimKey takes an idempotency key for this request, or finds the answer of an earlier one.
// A concurrent request with the same key waits here until the first commits, then replays it.
func (s *Store) claimKey(ctx context.Context, tx pgx.Tx, sc memory.Scope, k Idempotency) (prior []byte, found bool, err error) {
	tag, err := tx.Exec(ctx, `
		insert into agentmem.idempotency_keys as k (tenant_id, user_id, caller_role, function, key,
		  request_hash, response_status, response_body, expires_at)
		values ($1, $2, $3, $4, $5, $6, 0, '', now() + make_interval(secs => $7::float8))
		on conflict (user_id, tenant_id, caller_role, function, key) do update
		  set request_hash = excluded.request_hash, response_status = 0, response_body = '',
		      created_at = now(), expires_at = excluded.expires_at
		  where k.expires_at <= now()`,
		sc.TenantID, sc.UserID, k.CallerRole, k.Function, k.Key, k.RequestHash, s.idemTTL.Seconds())
	if err != nil {
		return nil, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil, false, nil
	}
	var hash []byte
	var body string
	err = tx.QueryRow(ctx, `
		select request_hash, response_body from agentmem.idempotency_keys
		where user_id = $1 and tenant_id = $2 and caller_role = $3 and function = $4 and key = $5`,
		sc.UserID, sc.TenantID, k.CallerRole, k.Function, k.Key).Scan(&hash, &body)
	if err != nil {
		return nil, false, fmt.Errorf("select idempotency key: %w", err)
	}
	if !bytes.Equal(hash, k.RequestHash) {
		return nil, false, conflict("Idempotency-Key was already used with a different request")
	}
	return []byte(body), true, nil
}

// Replay answers a request made again with its Idempotency-Key from the record, before anything
// is embedded for it again: found is false when the key has no answer in its window yet; a key
// used with another request is a conflict.
func (s *Store) Replay(ctx context.Context, sc memory.Scope, k Idempotency) (res memory.CommitResult, found bool, err error) {
	prior, found, err := s.findResponse(ctx, sc, k)
	if err != nil || !found {
		return res, false, err
	}
	res, err = decodeReplay(prior)
	return res, err == nil, err
}

// findResponse reads the recorded answer of an idempotency key still in its window, without
// locking: a conflict when the key was used with another request.
func (s *Store) findResponse(ctx context.Context, sc memory.Scope, k Idempotency) (body []byte, found bool, err error) {
	var hash []byte
	err = s.batchInScope(ctx, sc, func(b *pgx.Batch) {
		b.Queue(`
			select request_hash, response_body from agentmem.idempotency_keys
			where user_id = $1 and tenant_id = $2 and caller_role = $3 and function = $4 and key = $5
			  and expires_at > now()`,
			sc.UserID, sc.TenantID, k.CallerRole, k.Function, k.Key).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&hash, &body)
			if isNotFound(err) {
				return nil
			}
			found = err == nil
			return err
		})
	})
	if err != nil || !found {
		return nil, false, err
	}
	if !bytes.Equal(hash, k.RequestHash) {
		return nil, false, conflict("Idempotency-Key was already used with a different request")
	}
	return body, true, nil
}

func (s *Store) saveResponse(ctx context.Context, tx pgx.Tx, sc memory.Scope, k Idempotency, status int, res any) error {
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `
		update agentmem.idempotency_keys set response_status = $6, response_body = $7
		where user_id = $1 and tenant_id = $2 and caller_role = $3 and function = $4 and key = $5`,
		sc.UserID, sc.TenantID, k.CallerRole, k.Function, k.Key, status, string(body))
	if err != nil {
		return fmt.Errorf("save idempotent response: %w", err)
	}
	return nil
}

func hasClientIDs(msgs []memory.NewMessage) bool {
	for _, m := range msgs {
		if m.ID != nil {
			return true
		}
	}
	return false
}

func jsonOrNil(calls []memory.ToolCall) *string {
	if len(calls) == 0 {
		return nil
	}
	b, _ := json.Marshal(calls)
	s := string(b)
	return &s
}

func rawOrNil(raw json.RawMessage) *string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	s := string(raw)
	return &s
}

// decodeReplay reads the answer stored for an idempotency key. The row is the store's own
// writing, but a database is not a type system: a body that does not decode is an error
// (the request fails as internal), never a panic or a half-filled answer.
func decodeReplay(prior []byte) (memory.CommitResult, error) {
	var res memory.CommitResult
	if err := json.Unmarshal(prior, &res); err != nil {
		return memory.CommitResult{}, fmt.Errorf("decode stored idempotent answer: %w", err)
	}
	return res, nil
}

// mergeObjects is a || b for two JSON objects, as jsonb's || merges them: b's top-level keys win.
func mergeObjects(a, b json.RawMessage) json.RawMessage {
	if len(a) == 0 {
		return b
	}
	var ma, mb map[string]json.RawMessage
	// a may be JSON null (a nil map, which cannot take b's keys) or not an object: b then
	// stands alone.
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil || ma == nil {
		return b
	}
	for k, v := range mb {
		ma[k] = v
	}
	out, err := json.Marshal(ma)
	if err != nil {
		return b
	}
	return out
}

func objectOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}
