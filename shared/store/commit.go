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
	"github.com/jackc/pgx/v5/pgconn"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/apierror"
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
	// TTL is the retention of every row written.
	TTL time.Duration
	// Idempotency is nil for a request without a key.
	Idempotency *Idempotency
}

// StoredMessage is where a committed message landed.
type StoredMessage struct {
	ID        uuid.UUID `json:"id"`
	Seq       int64     `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
}

// StoredMemory identifies a committed memory.
type StoredMemory struct {
	ID uuid.UUID `json:"id"`
}

// CommitResult is the answer of CommitTurn, also what a replay returns.
type CommitResult struct {
	SessionID uuid.UUID       `json:"session_id"`
	Messages  []StoredMessage `json:"messages"`
	Memories  []StoredMemory  `json:"memories"`
}

// CommitTurn appends a turn to a session, creating the session on first use, all or nothing.
// Concurrent commits to one session serialise on the session row, so the messages of a turn
// get consecutive numbers in the order given and never interleave with another turn. A message
// whose client id the session already holds is not stored again; its original place is
// returned. With an idempotency key, a retry returns the first answer (replayed = true).
func (s *Store) CommitTurn(ctx context.Context, p CommitParams) (res CommitResult, replayed bool, err error) {
	// Embed before the transaction: no row lock is held while a model works.
	var vectors []string
	if len(p.Memories) > 0 {
		texts := make([]string, len(p.Memories))
		for i, m := range p.Memories {
			texts[i] = m.Content
		}
		vs, err := s.embedder.Embed(ctx, texts)
		if err != nil {
			return res, false, fmt.Errorf("embed memories: %w", err)
		}
		vectors = make([]string, len(vs))
		for i, v := range vs {
			vectors[i] = pgvector.NewVector(v).String()
		}
	}
	err = s.inScope(ctx, p.Scope, func(tx pgx.Tx) error {
		if p.Idempotency != nil {
			prior, found, err := s.claimKey(ctx, tx, p.Scope, *p.Idempotency)
			if err != nil {
				return err
			}
			if found {
				replayed = true
				return json.Unmarshal(prior, &res)
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

func (s *Store) commit(ctx context.Context, tx pgx.Tx, p CommitParams, vectors []string) (CommitResult, error) {
	sc := p.Scope
	res := CommitResult{SessionID: p.SessionID, Messages: make([]StoredMessage, len(p.Messages)), Memories: []StoredMemory{}}
	ttl := p.TTL.Seconds()

	var clientIDs []uuid.UUID
	for _, m := range p.Messages {
		if m.ID != nil {
			clientIDs = append(clientIDs, *m.ID)
		}
	}
	// Without client ids every message is new and one statement creates or locks the session
	// and reserves their numbers. With them, lock first, then see which ids are stored already.
	reserve := len(p.Messages)
	if len(clientIDs) > 0 {
		reserve = 0
	}
	var lastSeq int64
	err := tx.QueryRow(ctx, `
		insert into agentmem.sessions as s (id, tenant_id, user_id, agent, last_seq, expires_at)
		values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::float8))
		on conflict (id) do update
		  set last_seq = s.last_seq + excluded.last_seq,
		      last_active_at = now(),
		      expires_at = greatest(s.expires_at, excluded.expires_at)
		  where s.agent = excluded.agent
		returning last_seq`,
		p.SessionID, sc.TenantID, sc.UserID, sc.Agent, reserve, ttl).Scan(&lastSeq)
	if errors.Is(err, pgx.ErrNoRows) || isRLSViolation(err) {
		// Another agent's session, or (row-level security says) another user's.
		return res, apierror.New(apierror.NotFound, "session not found")
	}
	if err != nil {
		return res, fmt.Errorf("upsert session: %w", err)
	}

	existing := map[uuid.UUID]StoredMessage{}
	if len(clientIDs) > 0 {
		rows, err := tx.Query(ctx, `
			select id, seq, created_at from agentmem.messages
			where session_id = $1 and id = any($2::uuid[])`, p.SessionID, clientIDs)
		if err != nil {
			return res, fmt.Errorf("select stored messages: %w", err)
		}
		stored, err := pgx.CollectRows(rows, pgx.RowToStructByPos[StoredMessage])
		if err != nil {
			return res, fmt.Errorf("select stored messages: %w", err)
		}
		for _, m := range stored {
			existing[m.ID] = m
		}
		reserve = 0
		for _, m := range p.Messages {
			if m.ID == nil || !has(existing, *m.ID) {
				reserve++
			}
		}
		if err := tx.QueryRow(ctx, `update agentmem.sessions set last_seq = last_seq + $2 where id = $1 returning last_seq`,
			p.SessionID, reserve).Scan(&lastSeq); err != nil {
			return res, fmt.Errorf("reserve seq: %w", err)
		}
	}

	base := lastSeq - int64(reserve)
	var (
		ids                              []uuid.UUID
		seqs                             []int64
		roles, contents                  []string
		names, toolCalls, toolIDs, metas []*string
		tokens                           []int32
		slot                             = make([]int, 0, reserve)
	)
	for i, m := range p.Messages {
		if m.ID != nil {
			if st, ok := existing[*m.ID]; ok {
				res.Messages[i] = st
				continue
			}
		}
		id := uuid.New()
		if m.ID != nil {
			id = *m.ID
		}
		base++
		ids = append(ids, id)
		seqs = append(seqs, base)
		roles = append(roles, m.Role)
		contents = append(contents, m.Content)
		names = append(names, m.Name)
		toolIDs = append(toolIDs, m.ToolCallID)
		toolCalls = append(toolCalls, jsonOrNil(m.ToolCalls))
		metas = append(metas, rawOrNil(m.Metadata))
		tokens = append(tokens, int32(memory.EstimateTokens(m.Content, m.Name, m.ToolCalls, m.ToolCallID)))
		slot = append(slot, i)
	}
	if len(ids) > 0 {
		rows, err := tx.Query(ctx, `
			insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content,
			  name, tool_calls, tool_call_id, metadata, token_estimate, expires_at)
			select $1, m.seq, m.id, $2, $3, $4, m.role, m.content, m.name, m.tool_calls::jsonb,
			  m.tool_call_id, m.metadata::jsonb, m.tokens, now() + make_interval(secs => $5::float8)
			from unnest($6::bigint[], $7::uuid[], $8::text[], $9::text[], $10::text[], $11::text[],
			  $12::text[], $13::text[], $14::int[])
			  as m(seq, id, role, content, name, tool_calls, tool_call_id, metadata, tokens)
			returning id, seq, created_at`,
			p.SessionID, sc.TenantID, sc.UserID, sc.Agent, ttl,
			seqs, ids, roles, contents, names, toolCalls, toolIDs, metas, tokens)
		if err != nil {
			return res, fmt.Errorf("insert messages: %w", err)
		}
		stored, err := pgx.CollectRows(rows, pgx.RowToStructByPos[StoredMessage])
		if err != nil {
			return res, fmt.Errorf("insert messages: %w", err)
		}
		sort.Slice(stored, func(a, b int) bool { return stored[a].Seq < stored[b].Seq })
		for k, st := range stored {
			res.Messages[slot[k]] = st
		}
	}

	// Timestamps are answered in UTC, whatever the process's local time zone.
	for i := range res.Messages {
		res.Messages[i].CreatedAt = res.Messages[i].CreatedAt.UTC()
	}

	if len(p.Memories) > 0 {
		ids, err := insertMemories(ctx, tx, sc, p.Memories, vectors, s.embedder.Model(), ttl)
		if err != nil {
			return res, err
		}
		for _, id := range ids {
			res.Memories = append(res.Memories, StoredMemory{ID: id})
		}
	}
	return res, nil
}

// insertMemories stores facts, one row per normalised text and scope: storing a fact again
// refreshes it (content, embedding, expiry) and merges its metadata. It returns one id per
// input, in order.
func insertMemories(ctx context.Context, tx pgx.Tx, sc memory.Scope, mems []memory.NewMemory, vectors []string, model string, ttl float64) ([]uuid.UUID, error) {
	keys := make([]string, len(mems))
	last := map[string]int{} // the last input of each key wins within one request
	meta := map[string]json.RawMessage{}
	for i, m := range mems {
		keys[i] = ContentKey(m.Content)
		last[keys[i]] = i
		// Metadata merges across the repeats of one request as it does across requests.
		meta[keys[i]] = mergeObjects(meta[keys[i]], objectOrEmpty(m.Metadata))
	}
	var contents, ckeys, metas, vecs []string
	for i, m := range mems {
		if last[keys[i]] != i {
			continue
		}
		contents = append(contents, m.Content)
		ckeys = append(ckeys, keys[i])
		metas = append(metas, string(meta[keys[i]]))
		vecs = append(vecs, vectors[i])
	}
	rows, err := tx.Query(ctx, `
		insert into agentmem.memories as m (tenant_id, user_id, agent, content, content_key, metadata,
		  embedding, embedding_model, expires_at)
		select $1, $2, $3, x.content, x.key, x.metadata::jsonb, x.embedding::extensions.vector, $4,
		  now() + make_interval(secs => $5::float8)
		from unnest($6::text[], $7::text[], $8::text[], $9::text[]) as x(content, key, metadata, embedding)
		on conflict (user_id, tenant_id, agent, content_key) do update
		  set content = excluded.content,
		      metadata = m.metadata || excluded.metadata,
		      embedding = excluded.embedding,
		      embedding_model = excluded.embedding_model,
		      updated_at = now(),
		      expires_at = case when m.expires_at <= now() then excluded.expires_at
		                        else greatest(m.expires_at, excluded.expires_at) end,
		      created_at = case when m.expires_at <= now() then now() else m.created_at end
		returning id, content_key`,
		sc.TenantID, sc.UserID, sc.Agent, model, ttl, contents, ckeys, metas, vecs)
	if err != nil {
		return nil, fmt.Errorf("insert memories: %w", err)
	}
	byKey := map[string]uuid.UUID{}
	var id uuid.UUID
	var key string
	if _, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error { byKey[key] = id; return nil }); err != nil {
		return nil, fmt.Errorf("insert memories: %w", err)
	}
	out := make([]uuid.UUID, len(mems))
	for i := range mems {
		out[i] = byKey[keys[i]]
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
		return nil, false, apierror.New(apierror.Conflict, "Idempotency-Key was already used with a different request")
	}
	return []byte(body), true, nil
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

func isRLSViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}

func has(m map[uuid.UUID]StoredMessage, id uuid.UUID) bool { _, ok := m[id]; return ok }

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

// mergeObjects is a || b for two JSON objects, as jsonb's || merges them: b's top-level keys win.
func mergeObjects(a, b json.RawMessage) json.RawMessage {
	if len(a) == 0 {
		return b
	}
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
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
