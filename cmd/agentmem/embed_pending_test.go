package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/testdb"
)

// embed-pending embeds rows without a vector and rows of another model with the configured
// one; with the provider down it fails, saying so, and changes nothing.
func TestEmbedPendingCommand(t *testing.T) {
	ctx := context.Background()
	conn := commandDB(t)
	user := uuid.New()
	if _, err := conn.Exec(ctx, `
		insert into agentmem.memories (user_id, content, content_key, embedding, embedding_model, expires_at)
		values ($1, 'stored while the provider was down', 'k1', null, null, now() + interval '1 day'),
		       ($1, 'embedded by an older model', 'k2', array_fill(0.1, array[384])::extensions.vector,
		        'old-model', now() + interval '1 day')`, user); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `insert into agentmem.knowledge_chunks (source, chunk_index, content)
		values ('doc', 0, 'a chunk')`); err != nil {
		t.Fatal(err)
	}
	pending := func() int {
		var n int
		if err := conn.QueryRow(ctx, `select (select count(*) from agentmem.memories where embedding_model is distinct from $1)
			+ (select count(*) from agentmem.knowledge_chunks where embedding_model is distinct from $1)`,
			embedding.Hash{}.Model()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	t.Setenv("EMBEDDING_PROVIDER", "openai")
	t.Setenv("EMBEDDING_BASE_URL", down.URL)
	t.Setenv("EMBEDDING_MODEL", "some-384-model")
	t.Setenv("EMBEDDING_MAX_RETRY_TIME", "1s")
	if err := embedPending(ctx, nil); !errors.Is(err, embedding.ErrUnavailable) {
		t.Errorf("embed-pending with the provider down: %v, want ErrUnavailable", err)
	}
	if n := pending(); n != 3 {
		t.Fatalf("%d rows pending after a failed run, want 3", n)
	}

	t.Setenv("EMBEDDING_PROVIDER", "")
	t.Setenv("EMBEDDING_BASE_URL", "")
	t.Setenv("EMBEDDING_MODEL", "")
	if err := embedPending(ctx, []string{"--limit", "100"}); err != nil {
		t.Fatal(err)
	}
	if n := pending(); n != 0 {
		t.Errorf("%d rows pending after embed-pending, want 0", n)
	}
	if err := embedPending(ctx, []string{"--limit", "0"}); err == nil {
		t.Error("--limit 0 accepted")
	}
}

// commandDB gives a test a migrated database of its own, which the commands it runs use
// (DATABASE_URL), with quiet logs, and a superuser connection to it.
func commandDB(t *testing.T) *pgx.Conn {
	t.Helper()
	db := testdb.New(t)
	t.Setenv("DATABASE_URL", db.URL)
	t.Setenv("LOG_LEVEL", "error")
	conn, err := pgx.Connect(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
