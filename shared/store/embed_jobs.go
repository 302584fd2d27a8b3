package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// CheckEmbedder refuses an embedder whose vectors the database cannot store. Vectors of up to
// 2,000 dimensions also get an HNSW index per model (see EnsureEmbeddingIndexes); larger ones
// are ranked exactly.
func CheckEmbedder(e embedding.Embedder) error {
	if d := e.Dimensions(); d < 1 || d > embedding.MaxDimensions {
		return fmt.Errorf("embedding model %s gives %d dimensions; the database stores vectors of 1 to %d",
			e.Model(), d, embedding.MaxDimensions)
	}
	if e.Model() == "" {
		return errors.New("the embedding model has no name: rows record it to keep models apart")
	}
	return nil
}

// embedShare is the part of a request's remaining time an embedding may take: the rest is left
// to store or search without the vector when the provider is slow.
const embedShare = 2

// embedBudget bounds an embedding made while a client waits.
func embedBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithTimeout(ctx, time.Until(d)/embedShare)
	}
	return context.WithCancel(ctx)
}

// embedForStorage embeds texts to be stored, before any transaction (no lock is held while a
// model works). When the provider fails, every vector is nil: the rows are stored without one
// and EmbedPending embeds them later, so a write never fails for the provider's sake. The
// error is then reported (for the caller to log or ignore); only a caller that gave up (ctx
// done) should fail the write.
func (s *Store) embedForStorage(ctx context.Context, texts []string) ([]*string, error) {
	ectx, cancel := embedBudget(ctx)
	defer cancel()
	return s.embedVectors(ectx, texts)
}

// embedVectors embeds texts as pgvector literals: all of them, or, with the error, none.
func (s *Store) embedVectors(ctx context.Context, texts []string) ([]*string, error) {
	out := make([]*string, len(texts))
	sctx, span := telemetry.StartEmbedding(ctx, s.embedder.Model(), len(texts))
	vs, err := s.embedder.Embed(sctx, texts)
	if err == nil && len(vs) != len(texts) {
		err = fmt.Errorf("%w: %d vectors for %d texts", embedding.ErrInvalidResponse, len(vs), len(texts))
	}
	span.End(err)
	if err != nil {
		return out, fmt.Errorf("embed: %w", err)
	}
	for i, v := range vs {
		if len(v) != s.embedder.Dimensions() {
			return make([]*string, len(texts)), fmt.Errorf("embed: %w: a vector of %d values, want %d",
				embedding.ErrInvalidResponse, len(v), s.embedder.Dimensions())
		}
		str := pgvector.NewVector(v).String()
		out[i] = &str
	}
	return out, nil
}

// callerGone is the error to answer when ctx ended, nil while it runs.
func callerGone(ctx context.Context) error {
	if ctx.Err() != nil {
		return interpret(ctx.Err())
	}
	return nil
}

// maxEmbedChars is the most characters of a text that are embedded: as many as a memory may
// hold, which every supported model takes. A longer message (up to 100,000 characters) is
// embedded by its beginning, so that it neither fails its turn's embedding nor stays pending for
// good; full-text search still covers all of it.
const maxEmbedChars = 20_000

// embedText is what is embedded of a stored text: its first maxEmbedChars characters.
func embedText(text string) string {
	if len(text) <= maxEmbedChars { // bytes, at least as many as characters
		return text
	}
	n := 0
	for i := range text {
		if n == maxEmbedChars {
			return text[:i]
		}
		n++
	}
	return text
}

// embedQuery embeds a search query. The error says why there is no vector; searches that can
// rank by text alone go on without it.
func (s *Store) embedQuery(ctx context.Context, query string) (string, error) {
	vs, err := s.embedForStorage(ctx, []string{query})
	if err != nil {
		return "", err
	}
	return *vs[0], nil
}

// vectorSearchUnavailable is the answer to a vector-only search without a query vector.
func vectorSearchUnavailable(err error) error {
	if errors.Is(err, embedding.ErrUnavailable) {
		return &apierror.Error{Code: apierror.Unavailable, Cause: err,
			Detail: "the embedding provider is unavailable, so mode vector cannot rank; retry, or use mode hybrid or text"}
	}
	return fmt.Errorf("embed query: %w", err)
}

// EmbedPendingResult counts what EmbedPending did.
type EmbedPendingResult struct {
	// Memories, KnowledgeChunks and Messages count the rows embedded.
	Memories        int64 `json:"memories"`
	KnowledgeChunks int64 `json:"knowledge_chunks"`
	Messages        int64 `json:"messages"`
	// Failed counts rows the provider refused for good (an input the model does not take);
	// they stay pending and are tried again by the next run.
	Failed int64 `json:"failed"`
	// More reports that pending rows may remain: the limit or the time ran out, or the
	// provider is unavailable.
	More bool `json:"more"`
}

// PendingTables chooses the tables a backfill covers, as a set.
type PendingTables uint8

const (
	// PendingMemories is agentmem.memories (unexpired rows only: expired ones wait for the sweep).
	PendingMemories PendingTables = 1 << iota
	// PendingKnowledge is agentmem.knowledge_chunks.
	PendingKnowledge
	// PendingMessages is agentmem.messages (unexpired rows with text, but tool messages: see
	// memory.EmbedsMessage).
	PendingMessages
	// PendingAll is every table; the zero value means it too.
	PendingAll = PendingMemories | PendingKnowledge | PendingMessages
)

// PendingScope is the part of the database a backfill covers. The zero value is everything.
type PendingScope struct {
	// TenantID limits the scope to one tenant's memories, messages and knowledge chunks ("" is
	// the tenant-less scope); nil is every tenant.
	TenantID *string
	// UserID limits the scope to one user's memories and messages. Knowledge chunks belong to
	// no user: a user's scope holds none. nil is every user.
	UserID *uuid.UUID
	// Tables chooses the tables; default PendingAll.
	Tables PendingTables
}

// PendingCount counts the rows of a scope that wait for a vector of the configured model and
// dimension.
type PendingCount struct {
	Memories        int64 `json:"memories"`
	KnowledgeChunks int64 `json:"knowledge_chunks"`
	Messages        int64 `json:"messages"`
}

// Total is the rows of every table.
func (c PendingCount) Total() int64 { return c.Memories + c.KnowledgeChunks + c.Messages }

// Total is the rows embedded in every table.
func (r EmbedPendingResult) Total() int64 { return r.Memories + r.KnowledgeChunks + r.Messages }

// BackfillParams says what Backfill embeds.
type BackfillParams struct {
	// Scope is the rows to embed; default every row.
	Scope PendingScope
	// Limit is the most rows to take (embedded or refused); default (0) no limit.
	Limit int
	// BatchSize is the rows of one batch: one read, one call of the embedder (which may split
	// it into several requests), one write; default 64, at most MaxBackfillBatch.
	BatchSize int
	// Progress, when set, is called after each batch with the rows taken so far (embedded,
	// refused, or changed by a writer meanwhile and so left to it) and what was done. It runs
	// on the caller's goroutine, between batches.
	Progress func(done int64, res EmbedPendingResult)
}

// MaxBackfillBatch is the largest BackfillParams.BatchSize: a batch's texts and vectors are held
// in memory and written in one statement.
const MaxBackfillBatch = 1000

// pendingTable is a table whose rows EmbedPending embeds.
type pendingTable struct {
	name   string
	tables PendingTables
	// ofUsers: the rows belong to users (memories and messages do, chunks do not).
	ofUsers bool
	count   func(*EmbedPendingResult) *int64
	pending func(*PendingCount) *int64
	// live limits the rows worth embedding (memories and messages expire; chunks do not; tool
	// messages and messages without text are not embedded).
	live string
	// scope filters the rows by the scope's tenant ($3) and user ($4), each ignored when null.
	// Chunks belong to no user: a user's scope ($4 not null) has none.
	scope string
	// bySeq: a row is (session_id, seq), as messages are; else id.
	bySeq bool
}

var pendingTables = []pendingTable{
	{"memories", PendingMemories, true,
		func(r *EmbedPendingResult) *int64 { return &r.Memories },
		func(c *PendingCount) *int64 { return &c.Memories },
		"and expires_at > now()",
		"and ($3::text is null or tenant_id = $3::text) and ($4::uuid is null or user_id = $4::uuid)", false},
	{"knowledge_chunks", PendingKnowledge, false,
		func(r *EmbedPendingResult) *int64 { return &r.KnowledgeChunks },
		func(c *PendingCount) *int64 { return &c.KnowledgeChunks },
		"",
		"and ($3::text is null or tenant_id = $3::text) and $4::uuid is null", false},
	// Last: after an upgrade every earlier message waits, and memories should not wait for them.
	{"messages", PendingMessages, true,
		func(r *EmbedPendingResult) *int64 { return &r.Messages },
		func(c *PendingCount) *int64 { return &c.Messages },
		"and expires_at > now() and role <> 'tool' and content <> ''",
		"and ($3::text is null or tenant_id = $3::text) and ($4::uuid is null or user_id = $4::uuid)", true},
}

// pendingKey is where a batch of a table's pending rows starts after: id, or (session id, seq).
type pendingKey struct {
	id  uuid.UUID
	seq int64
}

// pendingWhere selects the rows to embed: without a vector, or with a vector of another model
// than $1, or of another dimension than $2 (a model may give several sizes). Written so that the
// indexes of migration add_embedding_pending_indexes serve it. A row embedded by the configured
// model at its dimension is never selected: this is what makes a backfill resumable.
const pendingWhere = `(embedding is null or embedding_model is null
  or embedding_model < $1::text or embedding_model > $1::text or embedding_dims <> $2::int)`

// embedPendingBatch is the most rows one batch embeds by default.
const embedPendingBatch = 64

// pendingQuery is what every statement of a backfill shares: the configured model ($1) and
// dimension ($2), and the scope.
type pendingQuery struct {
	model string
	dims  int
	scope PendingScope
}

func (s *Store) pendingQuery(sc PendingScope) pendingQuery {
	return pendingQuery{model: s.embedder.Model(), dims: s.embedder.Dimensions(), scope: sc}
}

// tables are the tables of the scope, in the order they are embedded.
func (q pendingQuery) tables() []pendingTable {
	want := q.scope.Tables
	if want == 0 {
		want = PendingAll
	}
	var out []pendingTable
	for _, t := range pendingTables {
		if want&t.tables != 0 && (t.ofUsers || q.scope.UserID == nil) {
			out = append(out, t)
		}
	}
	return out
}

// args are $1 to $4 of every statement, then more.
func (q pendingQuery) args(more ...any) []any {
	return append([]any{q.model, q.dims, q.scope.TenantID, q.scope.UserID}, more...)
}

// where selects t's rows of the scope that wait for a vector.
func (q pendingQuery) where(t pendingTable) string {
	return pendingWhere + ` ` + t.live + ` ` + t.scope
}

// EmbedPending embeds up to limit rows that have no vector of the configured model: memories
// (unexpired ones) and knowledge chunks stored while the provider was down, or embedded by
// another model. Each batch reads its rows without locking them, asks the provider, then stores
// each vector in one short statement, only where the row still holds the text embedded and
// still waits for a vector of this model: no lock is held while the provider works, a row
// changed or embedded meanwhile keeps what it has, and two runs at once store each vector once
// (though both may ask the provider for it). It stops at ctx's deadline, when limit rows are
// done, or when the provider is unavailable (the error wraps embedding.ErrUnavailable; the
// result counts what was done). It runs as service_role, as Sweep does (see
// batchAsServiceRole): for trusted callers only.
func (s *Store) EmbedPending(ctx context.Context, limit int) (EmbedPendingResult, error) {
	return s.embedPending(ctx, BackfillParams{}, limit)
}

// Backfill is EmbedPending over a scope (a tenant, a user, a table), in batches of the size
// asked, reporting its progress: what re-embeds a deployment after a change of model, or
// finishes the rows stored while the provider was down. Each batch is stored when it is done,
// and rows that hold a vector of the configured model and dimension are never selected, so a
// run stopped by ctx (an interrupt, a deadline) or by a crash is resumed by running it again:
// the next run goes on with the rows left and embeds none again. CountPending counts the rows
// it has left.
func (s *Store) Backfill(ctx context.Context, p BackfillParams) (EmbedPendingResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = math.MaxInt
	}
	return s.embedPending(ctx, p, limit)
}

// embedPending is EmbedPending and Backfill: up to limit rows of p's scope.
func (s *Store) embedPending(ctx context.Context, p BackfillParams, limit int) (EmbedPendingResult, error) {
	var res EmbedPendingResult
	q := s.pendingQuery(p.Scope)
	batch := p.BatchSize
	if batch <= 0 {
		batch = embedPendingBatch
	}
	batch = min(batch, MaxBackfillBatch)
	left := limit
	var done int64
	for _, t := range q.tables() {
		var after pendingKey
		for {
			if left <= 0 {
				more, err := s.anyPending(ctx, q)
				res.More = more
				return res, err
			}
			if ctx.Err() != nil {
				res.More = true
				return res, nil
			}
			n, last, tableDone, err := s.embedPendingBatch(ctx, t, q, after, min(left, batch), &res)
			if err != nil {
				if ctx.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) {
					// Out of time mid-batch: the batch rolled back and waits for the next run.
					res.More = true
					return res, nil
				}
				res.More = true
				return res, err
			}
			left -= n
			after = last
			done += int64(n)
			if p.Progress != nil && n > 0 {
				p.Progress(done, res)
			}
			if tableDone {
				break
			}
		}
	}
	return res, nil
}

// CountPending counts the rows of a scope that wait for a vector of the configured model and
// dimension: what Backfill has left to do. It runs as service_role.
func (s *Store) CountPending(ctx context.Context, sc PendingScope) (PendingCount, error) {
	var c PendingCount
	q := s.pendingQuery(sc)
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		for _, t := range q.tables() {
			b.Queue(`select count(*) from agentmem.`+t.name+` where `+q.where(t), q.args()...).QueryRow(func(row pgx.Row) error {
				return row.Scan(t.pending(&c))
			})
		}
	})
	if err != nil {
		return PendingCount{}, fmt.Errorf("count pending rows: %w", err)
	}
	return c, nil
}

// anyPending reports whether a row of q's scope waits for an embedding.
func (s *Store) anyPending(ctx context.Context, q pendingQuery) (bool, error) {
	var exists []string
	for _, t := range q.tables() {
		exists = append(exists, `exists (select 1 from agentmem.`+t.name+` where `+q.where(t)+`)`)
	}
	if len(exists) == 0 {
		return false, nil
	}
	var pending bool
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(`select `+strings.Join(exists, " or "), q.args()...).QueryRow(func(row pgx.Row) error {
			return row.Scan(&pending)
		})
	})
	return pending, err
}

// embedPendingBatch embeds up to n pending rows of t after the row `after`, in key order. It
// returns how many rows it took, the last key, and whether t has no more after them.
func (s *Store) embedPendingBatch(ctx context.Context, t pendingTable, q pendingQuery, after pendingKey, n int,
	res *EmbedPendingResult) (took int, last pendingKey, done bool, err error) {
	last = after
	var ids []uuid.UUID
	var seqs []int64
	var texts []string
	sel, args := `select id, 0::bigint, content from agentmem.`+t.name+`
		where `+q.where(t)+` and id > $5
		order by id limit $6`, q.args(after.id, n)
	if t.bySeq {
		sel, args = `select session_id, seq, content from agentmem.`+t.name+`
			where `+q.where(t)+` and (session_id, seq) > ($5, $7::bigint)
			order by session_id, seq limit $6`, q.args(after.id, n, after.seq)
	}
	err = s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(sel, args...).Query(func(rows pgx.Rows) error {
			var id uuid.UUID
			var seq int64
			var text string
			_, err := pgx.ForEachRow(rows, []any{&id, &seq, &text}, func() error {
				ids, seqs, texts = append(ids, id), append(seqs, seq), append(texts, text)
				return nil
			})
			return err
		})
	})
	if err != nil {
		return 0, last, false, fmt.Errorf("select pending %s: %w", t.name, err)
	}
	took, done = len(ids), len(ids) < n
	if len(ids) == 0 {
		return took, last, done, nil
	}
	last = pendingKey{id: ids[len(ids)-1], seq: seqs[len(seqs)-1]}
	inputs := make([]string, len(texts))
	for i, text := range texts {
		inputs[i] = embedText(text)
	}
	vectors, err := s.embedPendingTexts(ctx, inputs)
	if err != nil {
		return took, last, done, err
	}
	var keepIDs []uuid.UUID
	var keepSeqs []int64
	var keepTexts, keepVecs []string
	for i, v := range vectors {
		if v == nil {
			res.Failed++
			continue
		}
		keepIDs, keepSeqs = append(keepIDs, ids[i]), append(keepSeqs, seqs[i])
		keepTexts, keepVecs = append(keepTexts, texts[i]), append(keepVecs, *v)
	}
	if len(keepIDs) == 0 {
		return took, last, done, nil
	}
	args = []any{q.model, keepIDs, keepTexts, keepVecs, q.dims}
	if t.bySeq {
		args = append(args, keepSeqs)
	}
	err = s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(storePendingSQL(t), args...).Exec(func(tag pgconn.CommandTag) error {
			*t.count(res) += tag.RowsAffected()
			return nil
		})
	})
	if err != nil {
		return took, last, done, fmt.Errorf("store %s embeddings: %w", t.name, err)
	}
	return took, last, done, nil
}

// storePendingSQL stores the vectors ($4) of the texts ($3) of rows ($2: ids, or session ids
// with the seqs $6) of t, as embedded by model $1 at dimension $5, where the row still holds that
// text and has no vector of that model and dimension.
func storePendingSQL(t pendingTable) string {
	rows := `unnest($2::uuid[], $3::text[], $4::text[]) as x(id, content, embedding)
		where r.id = x.id`
	if t.bySeq {
		rows = `unnest($2::uuid[], $3::text[], $4::text[], $6::bigint[]) as x(id, content, embedding, seq)
		where r.session_id = x.id and r.seq = x.seq`
	}
	return `update agentmem.` + t.name + ` r
		set embedding = x.embedding::extensions.vector, embedding_model = $1
		from ` + rows + ` and r.content = x.content
		  and (r.embedding is null or r.embedding_model is distinct from $1::text
		       or r.embedding_dims is distinct from $5::int)`
}

// embedPendingTexts embeds a batch. When the provider refuses the batch for good, the texts
// are embedded one by one, so that one input the model does not take (nil in the answer)
// does not hold back the others. An unavailable provider fails the whole batch.
func (s *Store) embedPendingTexts(ctx context.Context, texts []string) ([]*string, error) {
	out, err := s.embedVectors(ctx, texts)
	if err == nil {
		return out, nil
	}
	if errors.Is(err, embedding.ErrUnavailable) || ctx.Err() != nil {
		return nil, fmt.Errorf("embed pending rows: %w", err)
	}
	if len(texts) == 1 {
		return out, nil // refused for good: stays pending, counted as failed
	}
	for i, t := range texts {
		one, err := s.embedPendingTexts(ctx, []string{t})
		if err != nil {
			return nil, err
		}
		out[i] = one[0]
	}
	return out, nil
}
