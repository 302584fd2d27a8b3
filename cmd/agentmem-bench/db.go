package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/schema"
	"github.com/agentmem/agentmem/shared/store"
)

// benchAgent is the agent of every chat session.
const benchAgent = memory.DefaultAgent

// retention is the lifetime of live rows, the functions' default.
const retention = memory.DefaultRetention

// benchDB is the database a run creates and loads as the superuser.
type benchDB struct {
	name, url, server string
}

// createDatabase drops and creates the database name on the server of serverURL, then applies
// the local bootstrap and the migrations, as shared/testdb does for the tests, and partitions
// the user-owned tables into partitions when more than 1.
func createDatabase(ctx context.Context, serverURL, name string, partitions int) (*benchDB, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redact(serverURL), err)
	}
	defer conn.Close(ctx)
	id := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "drop database if exists "+id+" with (force)"); err != nil {
		return nil, fmt.Errorf("drop database: %w", err)
	}
	if _, err := conn.Exec(ctx, "create database "+id+" template template0"); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	db := &benchDB{name: name, url: withDatabase(serverURL, name), server: serverURL}
	c, err := pgx.Connect(ctx, db.url)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	if err := schema.Bootstrap(ctx, c); err != nil {
		return nil, err
	}
	if err := schema.Migrate(ctx, c); err != nil {
		return nil, err
	}
	if partitions > 1 {
		if _, err := schema.PartitionByUser(ctx, c, partitions, 0); err != nil {
			return nil, err
		}
	}
	return db, nil
}

func (d *benchDB) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, d.server)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "drop database if exists "+pgx.Identifier{d.name}.Sanitize()+" with (force)")
	return err
}

// admin connects as the superuser, with the vector type known for COPY.
func (d *benchDB) admin(ctx context.Context) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig(d.url)
	if err != nil {
		return nil, err
	}
	cc.RuntimeParams["search_path"] = "public, extensions"
	cc.RuntimeParams["application_name"] = "agentmem-bench"
	c, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, err
	}
	if err := pgxvec.RegisterTypes(ctx, c); err != nil {
		c.Close(ctx)
		return nil, fmt.Errorf("register vector type: %w", err)
	}
	return c, nil
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the database URL"
	}
	return u.Redacted()
}

// loadChat loads the chat sessions (messages stream) and the growth sessions (growth stream)
// with COPY.
func loadChat(ctx context.Context, db *benchDB, sz bench.Sizes) error {
	c, err := db.admin(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	now := time.Now()
	expires := now.Add(retention)
	type sess struct {
		id uuid.UUID
		n  int
	}
	var sessions []sess
	for s := 0; s < sz.Sessions; s++ {
		sessions = append(sessions, sess{bench.SessionID(s), sz.MessagesPerSession})
	}
	i := 0
	for _, n := range sz.GrowthLengths {
		for k := 0; k < sz.GrowthPerLength; k++ {
			sessions = append(sessions, sess{bench.GrowthSessionID(i), n})
			i++
		}
	}
	rows := make([][]any, len(sessions))
	for k, s := range sessions {
		created := now.Add(-time.Duration(s.n+1) * time.Second)
		rows[k] = []any{s.id, "", bench.ChatUserID.String(), benchAgent, int64(s.n), created, now, expires}
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"agentmem", "sessions"},
		[]string{"id", "tenant_id", "user_id", "agent", "last_seq", "created_at", "last_active_at", "expires_at"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy sessions: %w", err)
	}

	msgCols := []string{"session_id", "seq", "id", "tenant_id", "user_id", "agent", "role", "content",
		"token_estimate", "created_at", "expires_at"}
	copyMessages := func(gen func(emit func(session uuid.UUID, length, m int, text string) error) error) error {
		ch := make(chan []any, 1024)
		errc := make(chan error, 1)
		go func() {
			errc <- gen(func(session uuid.UUID, length, m int, text string) error {
				created := now.Add(-time.Duration(length-m) * time.Second)
				row := []any{session, int64(m + 1), uuid.New(), "", bench.ChatUserID.String(), benchAgent, bench.Role(m), text,
					int32(memory.EstimateTokens(text, nil, nil, nil)), created, expires}
				select {
				case ch <- row:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			close(ch)
		}()
		_, err := c.CopyFrom(ctx, pgx.Identifier{"agentmem", "messages"}, msgCols, pgx.CopyFromFunc(func() ([]any, error) {
			row, ok := <-ch
			if !ok {
				return nil, <-errc
			}
			return row, nil
		}))
		if err != nil {
			for range ch {
			}
		}
		return err
	}
	err = copyMessages(func(emit func(uuid.UUID, int, int, string) error) error {
		return bench.GenerateChat(bench.Stream(bench.StreamMessages), sz.Sessions, sz.MessagesPerSession,
			func(s, m int, text string) error { return emit(bench.SessionID(s), sz.MessagesPerSession, m, text) })
	})
	if err != nil {
		return fmt.Errorf("copy chat messages: %w", err)
	}
	err = copyMessages(func(emit func(uuid.UUID, int, int, string) error) error {
		return bench.GenerateGrowth(bench.Stream(bench.StreamGrowth), sz.GrowthLengths, sz.GrowthPerLength,
			func(index, length, m int, text string) error {
				return emit(bench.GrowthSessionID(index), length, m, text)
			})
	})
	if err != nil {
		return fmt.Errorf("copy growth messages: %w", err)
	}
	return settle(ctx, c, "agentmem.sessions, agentmem.messages")
}

// settle vacuums and analyzes tables after a bulk load and forces a checkpoint, so that
// neither autovacuum nor the load's checkpoint runs during the measurements that follow.
func settle(ctx context.Context, c *pgx.Conn, tables string) error {
	if _, err := c.Exec(ctx, "vacuum (analyze) "+tables); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	if _, err := c.Exec(ctx, "checkpoint"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// memoryIndexes are rebuilt after a bulk load rather than maintained row by row; they are
// created again exactly as the migrations define them.
var memoryIndexes = []string{"memories_user_fts_idx"}

// loadMemories loads the memories of users from..corpus.Users-1 with COPY, their vectors from
// the workload embedder.
func loadMemories(ctx context.Context, db *benchDB, corpus *bench.Corpus, from int) error {
	c, err := db.admin(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	defs := map[string]string{}
	// HNSW indexes (one per model) are made again after the load, by EnsureEmbeddingIndexes.
	var hnsw []string
	rows, err := c.Query(ctx, `select indexname from pg_indexes
		where schemaname = 'agentmem' and tablename = 'memories' and indexdef like '%USING hnsw%'`)
	if err == nil {
		hnsw, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return fmt.Errorf("list hnsw indexes: %w", err)
	}
	for _, name := range hnsw {
		if _, err := c.Exec(ctx, "drop index agentmem."+pgx.Identifier{name}.Sanitize()); err != nil {
			return err
		}
	}
	for _, name := range memoryIndexes {
		var def string
		if err := c.QueryRow(ctx, `select replace(indexdef, ' ON ONLY ', ' ON ') from pg_indexes where schemaname = 'agentmem' and indexname = $1`, name).Scan(&def); err != nil {
			return fmt.Errorf("read definition of %s: %w", name, err)
		}
		defs[name] = def
		if _, err := c.Exec(ctx, "drop index agentmem."+pgx.Identifier{name}.Sanitize()); err != nil {
			return err
		}
	}
	var emb bench.Embedder
	now := time.Now()
	expires := now.Add(retention)
	empty := json.RawMessage("{}")
	u, m := from, 0
	_, err = c.CopyFrom(ctx, pgx.Identifier{"agentmem", "memories"},
		[]string{"tenant_id", "user_id", "agent", "content", "content_key", "metadata", "embedding",
			"embedding_model", "created_at", "updated_at", "expires_at"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if u >= corpus.Users {
				return nil, nil
			}
			text := corpus.Text(u, m)
			created := now.Add(-time.Duration(corpus.PerUser-m) * time.Second)
			row := []any{"", bench.UserID(u).String(), "", text, store.ContentKey(text), empty,
				pgvector.NewVector(emb.Vector(text)), emb.Model(), created, created, expires}
			if m++; m == corpus.PerUser {
				u, m = u+1, 0
			}
			return row, nil
		}))
	if err != nil {
		return fmt.Errorf("copy memories: %w", err)
	}
	if _, err := c.Exec(ctx, "set maintenance_work_mem = '3GB'"); err != nil {
		return err
	}
	for _, name := range memoryIndexes {
		if _, err := c.Exec(ctx, defs[name]); err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
	}
	// The workload model's HNSW index, as `agentmem index` makes it.
	if _, err := store.EnsureEmbeddingIndexes(ctx, c, store.VectorModel{Name: emb.Model(), Dims: emb.Dimensions()}, false); err != nil {
		return err
	}
	if err := settle(ctx, c, "agentmem.memories"); err != nil {
		return err
	}
	return prewarm(ctx, c, "agentmem.memories", "agentmem.memories_owner_created_idx")
}

// prewarm reads relations into shared buffers, as a database serving them would hold them: a
// bulk load and an index build go through small ring buffers, which would leave the first
// queries reading every page from the operating system. Without pg_prewarm it does nothing.
func prewarm(ctx context.Context, c *pgx.Conn, relations ...string) error {
	if _, err := c.Exec(ctx, "create extension if not exists pg_prewarm"); err != nil {
		return nil
	}
	for _, r := range relations {
		// A partitioned table or index has no pages of its own: its partitions' are read.
		if _, err := c.Exec(ctx, `select pg_prewarm(t.relid) from pg_partition_tree($1::regclass) t where t.isleaf`, r); err != nil {
			return fmt.Errorf("prewarm %s: %w", r, err)
		}
	}
	return nil
}
