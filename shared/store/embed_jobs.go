package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	pgvector "github.com/pgvector/pgvector-go"
)

// VectorModel is what a vector is of: an embedding model's name and its dimension. Rows record
// the model of their vector; only vectors of one model and dimension rank together.
type VectorModel struct {
	Name string
	Dims int
}

// MaxDimensions is the largest vector the database stores (pgvector's limit for the vector
// type); vectors of up to 2,000 dimensions also get an HNSW index per model (see
// EnsureEmbeddingIndexes).
const MaxDimensions = 16_000

// maxEmbedChars is the most characters of a text that are embedded: as many as a memory may
// hold, which every supported model takes. A longer message (up to 100,000 characters) is
// embedded by its beginning, so that it neither fails its turn's embedding nor stays pending for
// good; full-text search still covers all of it.
const maxEmbedChars = 20_000

// EmbedText is what is embedded of a stored text: its first maxEmbedChars characters.
func EmbedText(text string) string {
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
	UserID *string
	// Tables chooses the tables; default PendingAll.
	Tables PendingTables
}

// BackfillParams says what a backfill embeds (see app.Backfill).
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
	Progress func(done int64, res memory.EmbedPendingResult)
}

// MaxBackfillBatch is the largest BackfillParams.BatchSize: a batch's texts and vectors are held
// in memory and written in one statement.
const MaxBackfillBatch = 1000

// pendingTable is a table whose rows wait for vectors (see ReadPending).
type pendingTable struct {
	name   string
	tables PendingTables
	// ofUsers: the rows belong to users (memories and messages do, chunks do not).
	ofUsers bool
	pending func(*memory.PendingCount) *int64
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
		func(c *memory.PendingCount) *int64 { return &c.Memories },
		"and expires_at > now()",
		"and ($3::text is null or tenant_id = $3::text) and ($4::text is null or user_id = $4::text)", false},
	{"knowledge_chunks", PendingKnowledge, false,
		func(c *memory.PendingCount) *int64 { return &c.KnowledgeChunks },
		"",
		"and ($3::text is null or tenant_id = $3::text) and $4::uuid is null", false},
	// Last: after an upgrade every earlier message waits, and memories should not wait for them.
	{"messages", PendingMessages, true,
		func(c *memory.PendingCount) *int64 { return &c.Messages },
		"and expires_at > now() and role <> 'tool' and content <> ''",
		"and ($3::text is null or tenant_id = $3::text) and ($4::text is null or user_id = $4::text)", true},
}

// messagesPending is the messages' entry of pendingTables.
var messagesPending = pendingTables[len(pendingTables)-1]

// pendingWhere selects the rows to embed: without a vector, or with a vector of another model
// than $1, or of another dimension than $2 (a model may give several sizes). Written so that the
// indexes of migration add_embedding_pending_indexes serve it. A row embedded by the configured
// model at its dimension is never selected: this is what makes a backfill resumable.
const pendingWhere = `(embedding is null or embedding_model is null
  or embedding_model < $1::text or embedding_model > $1::text or embedding_dims <> $2::int)`

// pendingQuery is what every statement of a backfill shares: the model ($1) and dimension ($2)
// the rows should have, and the scope.
type pendingQuery struct {
	model string
	dims  int
	scope PendingScope
}

func newPendingQuery(m VectorModel, sc PendingScope) pendingQuery {
	return pendingQuery{model: m.Name, dims: m.Dims, scope: sc}
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

// PendingTablesOf are the tables of a scope whose rows wait for vectors, in the order a backfill
// embeds them (messages last: after an upgrade every earlier message waits, and memories should
// not wait for them).
func PendingTablesOf(sc PendingScope) []PendingTables {
	var out []PendingTables
	for _, t := range newPendingQuery(VectorModel{}, sc).tables() {
		out = append(out, t.tables)
	}
	return out
}

// Counter is the field of r that counts the rows of table t (one of PendingMemories,
// PendingKnowledge, PendingMessages) embedded.
func (t PendingTables) Counter(r *memory.EmbedPendingResult) *int64 {
	switch t {
	case PendingMemories:
		return &r.Memories
	case PendingKnowledge:
		return &r.KnowledgeChunks
	case PendingMessages:
		return &r.Messages
	}
	return new(int64)
}

func pendingTableOf(t PendingTables) (pendingTable, error) {
	for _, pt := range pendingTables {
		if pt.tables == t {
			return pt, nil
		}
	}
	return pendingTable{}, fmt.Errorf("pending rows: no table %d", t)
}

// PendingKey is where a batch of a table's pending rows starts after; the zero value is the
// start of the table.
type PendingKey struct {
	id  uuid.UUID
	seq int64
}

// PendingRow is a row that waits for a vector: its key and its text as stored.
type PendingRow struct {
	Key     PendingKey
	Content string
	// user is the row's user ("" for a knowledge chunk): storing its vector names the user, so
	// that the write reads the user's partition only (agentmem.partition_by_user).
	user string
}

// CountPending counts the rows of a scope that wait for a vector of model m: what a backfill
// has left to do. It runs as service_role.
func (s *Store) CountPending(ctx context.Context, m VectorModel, sc PendingScope) (memory.PendingCount, error) {
	var c memory.PendingCount
	q := newPendingQuery(m, sc)
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		for _, t := range q.tables() {
			b.Queue(`select count(*) from agentmem.`+t.name+` where `+q.where(t), q.args()...).QueryRow(func(row pgx.Row) error {
				return row.Scan(t.pending(&c))
			})
		}
	})
	if err != nil {
		return memory.PendingCount{}, fmt.Errorf("count pending rows: %w", err)
	}
	return c, nil
}

// AnyPending reports whether a row of the scope waits for a vector of model m.
func (s *Store) AnyPending(ctx context.Context, m VectorModel, sc PendingScope) (bool, error) {
	q := newPendingQuery(m, sc)
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

// ReadPending reads up to n rows of table (of the scope) that wait for a vector of model m,
// after the row `after`, in key order, without locking them: no lock is held while a provider
// embeds them (see StorePending). It runs as service_role: for trusted callers only.
func (s *Store) ReadPending(ctx context.Context, m VectorModel, sc PendingScope, table PendingTables,
	after PendingKey, n int) ([]PendingRow, error) {
	t, err := pendingTableOf(table)
	if err != nil {
		return nil, err
	}
	q := newPendingQuery(m, sc)
	user := "''::text"
	if t.ofUsers {
		user = "user_id"
	}
	sel, args := `select id, 0::bigint, content, `+user+` from agentmem.`+t.name+`
		where `+q.where(t)+` and id > $5
		order by id limit $6`, q.args(after.id, n)
	if t.bySeq {
		sel, args = `select session_id, seq, content, `+user+` from agentmem.`+t.name+`
			where `+q.where(t)+` and (session_id, seq) > ($5, $7::bigint)
			order by session_id, seq limit $6`, q.args(after.id, n, after.seq)
	}
	var out []PendingRow
	err = s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(sel, args...).Query(func(rows pgx.Rows) error {
			var r PendingRow
			_, err := pgx.ForEachRow(rows, []any{&r.Key.id, &r.Key.seq, &r.Content, &r.user}, func() error {
				out = append(out, r)
				return nil
			})
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("select pending %s: %w", t.name, err)
	}
	return out, nil
}

// StorePending stores the vectors (pgvector literals of model m) of rows read by ReadPending
// from table, in one short statement, only where a row still holds the text embedded and still
// waits for a vector of m: a row changed or embedded meanwhile keeps what it has, and two runs
// at once store each vector once. A nil vector skips its row, and so does a row another
// transaction holds locked (see storePendingSQL): it stays pending. It answers how many rows
// took their vector. It runs as service_role.
func (s *Store) StorePending(ctx context.Context, m VectorModel, table PendingTables, rows []PendingRow,
	vectors []*string) (int64, error) {
	t, err := pendingTableOf(table)
	if err != nil {
		return 0, err
	}
	var ids []uuid.UUID
	var seqs []int64
	var texts, vecs, users []string
	for i, r := range rows {
		if i >= len(vectors) || vectors[i] == nil {
			continue
		}
		ids, seqs = append(ids, r.Key.id), append(seqs, r.Key.seq)
		texts, vecs = append(texts, r.Content), append(vecs, *vectors[i])
		users = append(users, r.user)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	args := []any{m.Name, ids, texts, vecs, m.Dims}
	if t.ofUsers {
		args = append(args, users)
	}
	if t.bySeq {
		args = append(args, seqs)
	}
	var n int64
	err = s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		b.Queue(storePendingSQL(t, false), args...).Exec(func(tag pgconn.CommandTag) error {
			n = tag.RowsAffected()
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("store %s embeddings: %w", t.name, err)
	}
	return n, nil
}

// storePendingSQL stores the vectors ($4) of the texts ($3) of rows ($2: ids, or session ids
// with the seqs $7; of the users $6 where the rows are users') of t, as embedded by model $1 at
// dimension $5, where the row still holds that text and has no vector of that model and
// dimension. A row is found by its whole key, its user first, so that on tables partitioned by
// user each row is looked for in its user's partition only.
//
// It never waits for a row lock: rows another transaction holds are skipped (skip locked) and
// keep waiting for a vector, which the next embed-pending run gives them if they are still
// there. The rows of one write belong to many sessions and users, in the order their turns came
// in, while a reset, a clear or a forget-user deletes a session's or a user's rows in the order
// of its own plan: a writer that waited for their locks while holding others could close a
// cycle with them (a deadlock, which fails one side). Skipping, the writer waits for nobody,
// and the deletions only ever wait for its one short statement to end. What a writer skips is
// mostly being deleted, or being embedded by another writer, anyway.
//
// oneUser writes a statement for the rows of one user, $6 (a text, not an array), which reads
// that user's partition alone.
func storePendingSQL(t pendingTable, oneUser bool) string {
	cols, rows, join := `r.id`, `unnest($2::uuid[], $3::text[], $4::text[]) as x(id, content, embedding)`, `r.id = x.id`
	match := `r.id = l.id`
	switch {
	case t.bySeq && oneUser:
		cols, rows = `r.user_id, r.session_id, r.seq`,
			`unnest($2::uuid[], $3::text[], $4::text[], $7::bigint[]) as x(id, content, embedding, seq)`
		join = `r.user_id = $6::text and r.session_id = x.id and r.seq = x.seq`
		match = `r.user_id = $6::text and r.session_id = l.session_id and r.seq = l.seq`
	case t.bySeq:
		cols, rows = `r.user_id, r.session_id, r.seq`,
			`unnest($2::uuid[], $3::text[], $4::text[], $6::text[], $7::bigint[]) as x(id, content, embedding, user_id, seq)`
		join = `r.user_id = x.user_id and r.session_id = x.id and r.seq = x.seq`
		match = `r.user_id = l.user_id and r.session_id = l.session_id and r.seq = l.seq`
	case t.ofUsers:
		cols, rows = `r.user_id, r.id`, `unnest($2::uuid[], $3::text[], $4::text[], $6::text[]) as x(id, content, embedding, user_id)`
		join, match = `r.user_id = x.user_id and r.id = x.id`, `r.user_id = l.user_id and r.id = l.id`
	}
	return `with l as (
		  select ` + cols + `, x.embedding
		  from agentmem.` + t.name + ` r join ` + rows + ` on ` + join + `
		  where r.content = x.content
		    and (r.embedding is null or r.embedding_model is distinct from $1::text
		         or r.embedding_dims is distinct from $5::int)
		  for no key update of r skip locked)
		update agentmem.` + t.name + ` r
		set embedding = l.embedding::extensions.vector, embedding_model = $1
		from l where ` + match
}

// VectorLiterals turns the vectors of an embedding into pgvector literals, as CommitParams and
// StoreMessageVectors take them; a vector of another length than dims is an error.
func VectorLiterals(vs [][]float32, dims int) ([]*string, error) {
	out := make([]*string, len(vs))
	for i, v := range vs {
		if len(v) != dims {
			return make([]*string, len(vs)), fmt.Errorf("%w: a vector of %d values, want %d",
				ErrVectorSize, len(v), dims)
		}
		str := pgvector.NewVector(v).String()
		out[i] = &str
	}
	return out, nil
}

// ErrVectorSize is VectorLiterals' error for a vector of another length than the dimension.
var ErrVectorSize = errors.New("a vector of the wrong size")

// MessageVector is the vector of a stored message, embedded after its commit: the message is
// (SessionID, Seq), Content the text that was embedded (the whole text, as stored).
type MessageVector struct {
	// UserID is the message's user.
	UserID    string
	SessionID uuid.UUID
	Seq       int64
	Content   string
	Vector    string // a pgvector literal of the model StoreMessageVectors is given
}

// StoreMessageVectors stores vectors (of model m) of messages committed without one, as
// StorePending does: only where the message still holds the text embedded and has no vector of m
// and dimension (a message cleared, forgotten or embedded meanwhile keeps what it has), and is
// not locked by a transaction in flight (a reset, clear or forget-user deleting it: it is
// skipped, never waited for, and if it stays, embed-pending embeds it later). It
// answers how many messages took their vector. It runs as service_role: for the use-case layer
// only, with keys of messages it has just committed for their user.
func (s *Store) StoreMessageVectors(ctx context.Context, m VectorModel, vs []MessageVector) (int64, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	// One statement per user (in one round trip), each of which names its user.
	type rows struct {
		ids         []uuid.UUID
		seqs        []int64
		texts, vecs []string
	}
	var users []string
	byUser := map[string]*rows{}
	for _, v := range vs {
		r := byUser[v.UserID]
		if r == nil {
			r = &rows{}
			byUser[v.UserID] = r
			users = append(users, v.UserID)
		}
		r.ids, r.seqs = append(r.ids, v.SessionID), append(r.seqs, v.Seq)
		r.texts, r.vecs = append(r.texts, v.Content), append(r.vecs, v.Vector)
	}
	var n int64
	err := s.batchAsServiceRole(ctx, func(b *pgx.Batch) {
		for _, u := range users {
			r := byUser[u]
			b.Queue(storePendingSQL(messagesPending, true), m.Name, r.ids, r.texts, r.vecs, m.Dims, u, r.seqs).
				Exec(func(tag pgconn.CommandTag) error {
					n += tag.RowsAffected()
					return nil
				})
		}
	})
	if err != nil {
		return 0, fmt.Errorf("store message embeddings: %w", err)
	}
	return n, nil
}
