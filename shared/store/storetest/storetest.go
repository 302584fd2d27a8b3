// Package storetest opens stores over fresh test databases and writes the rows tests need.
//
// A test asks for a store with the options it cares about (pool size, adapters, ranking, the
// pooler) and gets one over a database of its own, made from the migrations by shared/testdb and
// dropped when the test ends; the factories write users' rows as the store does (turns, memories,
// knowledge chunks) or, for seeding many rows at once, as the superuser, with the vectors of the
// built-in embedder (embedding.Hash).
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/testdb"
)

// TTL is the retention of the rows the factories write.
const TTL = time.Hour

// Option sets up the store New and Open give.
type Option func(*options)

type options struct {
	cfg    store.Config
	pooled bool
}

// MaxConns caps the store's pool (memory.DefaultMaxConns when not given).
func MaxConns(n int32) Option { return func(o *options) { o.cfg.MaxConns = n } }

// Adapters enables the named adapters: the store writes their jobs.
func Adapters(names ...string) Option { return func(o *options) { o.cfg.Adapters = names } }

// Ranking tunes the store's recall and knowledge search.
func Ranking(r store.Ranking) Option { return func(o *options) { o.cfg.Ranking = r } }

// Pooled opens the store through the transaction-mode pooler when on (the test fails when
// testdb.EnvPoolerURL is not set), directly otherwise.
func Pooled(on bool) Option { return func(o *options) { o.pooled = o.pooled || on } }

// Config sets any other field of the store's configuration (DatabaseURL is the test's).
func Config(f func(*store.Config)) Option { return func(o *options) { f(&o.cfg) } }

// Env is a store over a test database of its own.
type Env struct {
	DB    testdb.DB
	Store *store.Store
}

// New makes a fresh database and opens a store over it; both go when the test ends.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	db := testdb.New(t)
	return &Env{DB: db, Store: Open(t, db, opts...)}
}

// Open opens a store over db, closed when the test ends.
func Open(t testing.TB, db testdb.DB, opts ...Option) *store.Store {
	t.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	return OpenURL(t, URL(t, db, o.pooled), opts...)
}

// OpenURL opens a store over the database at url, closed when the test ends. The Pooled option
// does not apply: url says the way.
func OpenURL(t testing.TB, url string, opts ...Option) *store.Store {
	t.Helper()
	var o options
	for _, f := range opts {
		f(&o)
	}
	o.cfg.DatabaseURL = url
	st, err := store.Open(context.Background(), o.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// URL is db's URL, through the pooler when pooled (failing the test when no pooler is set).
func URL(t testing.TB, db testdb.DB, pooled bool) string {
	t.Helper()
	if !pooled {
		return db.URL
	}
	u := db.PoolerURL()
	if u == "" {
		t.Fatalf("the pooler is asked for but %s is not set", testdb.EnvPoolerURL)
	}
	return u
}

// Admin connects to the database at url as the superuser (row-level security does not apply),
// closed when the test ends.
func Admin(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs sql as the superuser over a connection of its own.
func Exec(t testing.TB, url, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// Admin connects to the env's database as the superuser, closed when the test ends.
func (e *Env) Admin(t testing.TB) *pgx.Conn { return Admin(t, e.DB.URL) }

// Exec runs sql on the env's database as the superuser.
func (e *Env) Exec(t testing.TB, sql string, args ...any) { Exec(t, e.DB.URL, sql, args...) }

// Scope is the scope of a new user (no tenant) and agent.
func Scope(agent string) memory.Scope { return memory.Scope{UserID: uuid.NewString(), Agent: agent} }

// Messages are n messages, from a user and an assistant in turn, their contents prefix and a
// number from 1.
func Messages(n int, prefix string) []memory.NewMessage {
	out := make([]memory.NewMessage, n)
	for i := range out {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		out[i] = memory.NewMessage{Role: role, Content: fmt.Sprintf("%s %d", prefix, i+1)}
	}
	return out
}

// Commit commits a turn of msgs (and facts as its memories) to session sid of sc, without
// vectors, kept for TTL, and returns where the rows landed.
func Commit(t testing.TB, st *store.Store, sc memory.Scope, sid uuid.UUID, msgs []memory.NewMessage, facts ...string) memory.CommitResult {
	t.Helper()
	p := store.CommitParams{Scope: sc, SessionID: sid, TTL: TTL, Messages: msgs}
	for _, f := range facts {
		p.Memories = append(p.Memories, memory.NewMemory{Content: f})
	}
	res, _, err := st.CommitTurn(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Memory stores a memory of sc with content, and its vector of the built-in embedder.
func Memory(t testing.TB, st *store.Store, sc memory.Scope, content string, metadata json.RawMessage) memory.CreatedMemory {
	t.Helper()
	v := HashLiteral(content)
	m, _, err := st.CreateMemory(context.Background(), store.CreateMemoryParams{Scope: sc, Content: content,
		Metadata: metadata, Vector: &v, Model: embedding.Hash{}.Model(), TTL: TTL})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Knowledge ingests a document of chunks into tenant's knowledge base under source, with the
// built-in embedder's vectors.
func Knowledge(t testing.TB, st *store.Store, tenant, source string, chunks ...string) memory.IngestResult {
	t.Helper()
	vs := make([]*string, len(chunks))
	for i, c := range chunks {
		v := HashLiteral(c)
		vs[i] = &v
	}
	res, err := st.IngestKnowledge(context.Background(), store.IngestParams{TenantID: tenant, Source: source,
		Chunks: chunks, Vectors: vs, Model: embedding.Hash{}.Model()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// HashLiteral is text's vector of the built-in embedder as a pgvector literal.
func HashLiteral(text string) string {
	return pgvector.NewVector(embedding.Hash{}.Vector(text)).String()
}

func hashLiterals(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		out[i] = HashLiteral(s)
	}
	return out
}

// SeedMemories writes memories of user and agent (texts, with metadata: JSON objects, one per
// text) as the superuser in one statement, with the built-in embedder's vectors: many rows at
// once, for ranking tests.
func SeedMemories(t testing.TB, conn *pgx.Conn, user string, agent string, texts, metadata []string) {
	t.Helper()
	_, err := conn.Exec(context.Background(), `insert into agentmem.memories
		(user_id, agent, content, content_key, metadata, embedding, embedding_model, expires_at)
		select $1, $2, x.content, md5(x.content), x.metadata::jsonb, x.embedding::extensions.vector, $3,
		       now() + interval '1 hour'
		from unnest($4::text[], $5::text[], $6::text[]) as x(content, metadata, embedding)`,
		user, agent, embedding.Hash{}.Model(), texts, metadata, hashLiterals(texts))
	if err != nil {
		t.Fatal(err)
	}
}

// SeedMessages writes user messages of user and agent (texts, with metadata) as the superuser in
// one statement, ten to a new session (its row written too), with the built-in embedder's vectors.
func SeedMessages(t testing.TB, conn *pgx.Conn, user string, agent string, texts, metadata []string) {
	t.Helper()
	var sessions []uuid.UUID
	for range (len(texts) + 9) / 10 {
		sessions = append(sessions, uuid.New())
	}
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `insert into agentmem.sessions (id, user_id, agent, last_seq, expires_at)
		select s, $2, $3, 10, now() + interval '1 hour' from unnest($1::uuid[]) s`, sessions, user, agent); err != nil {
		t.Fatal(err)
	}
	sids := make([]uuid.UUID, len(texts))
	for i := range texts {
		sids[i] = sessions[i/10]
	}
	_, err := conn.Exec(ctx, `insert into agentmem.messages
		(session_id, seq, id, user_id, agent, role, content, metadata, token_estimate, embedding, embedding_model, expires_at)
		select x.sid, (x.ord - 1) % 10 + 1, gen_random_uuid(), $2, $3, 'user', x.content, x.metadata::jsonb, 10,
		       x.embedding::extensions.vector, $4, now() + interval '1 hour'
		from unnest($1::uuid[], $5::text[], $6::text[], $7::text[]) with ordinality as x(sid, content, metadata, embedding, ord)`,
		sids, user, agent, embedding.Hash{}.Model(), texts, metadata, hashLiterals(texts))
	if err != nil {
		t.Fatal(err)
	}
}
