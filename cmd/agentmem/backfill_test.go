package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/embedding/embeddingtest"
	"github.com/agentmem/agentmem/shared/memory"
)

// useEmbedder configures the commands' embedder: model at dims from the fake API.
func useEmbedder(t *testing.T, f *embeddingtest.Server, model string, dims int) {
	t.Setenv("EMBEDDING_PROVIDER", "openai")
	t.Setenv("EMBEDDING_BASE_URL", f.URL)
	t.Setenv("EMBEDDING_MODEL", model)
	t.Setenv("EMBEDDING_DIMENSIONS", fmt.Sprint(dims))
	t.Setenv("EMBEDDING_MAX_RETRY_TIME", "1s")
}

// embeddingIndexes are the names of the HNSW indexes of model at dims, as
// agentmem.embedding_index_statements names them, that exist.
func embeddingIndexes(t *testing.T, conn *pgx.Conn, model string, dims int) []string {
	t.Helper()
	sum := md5.Sum([]byte(fmt.Sprintf("%s/%d", model, dims)))
	suffix := "_embedding_" + hex.EncodeToString(sum[:])[:12] + "_idx"
	rows, err := conn.Query(context.Background(), `select indexname from pg_indexes
		where schemaname = 'agentmem' and indexname = any($1) and indexdef like '%USING hnsw%' order by indexname`,
		[]string{"knowledge_chunks" + suffix, "memories" + suffix, "messages" + suffix})
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// backfill against a real database: --dry-run counts; with the provider down it fails, saying
// to run it again, and changes nothing; then it makes the model's indexes (not before: those
// runs were --dry-run and --no-index), embeds the user's scope only with a progress bar and a
// summary, and a second run embeds nothing again; --limit stops a run that the next finishes.
func TestBackfillCommand(t *testing.T) {
	ctx := context.Background()
	conn := commandDB(t)
	userA, userB := uuid.New(), uuid.New()
	if _, err := conn.Exec(ctx, `
		insert into agentmem.memories (tenant_id, user_id, content, content_key, embedding, embedding_model, expires_at)
		select 'acme', u, u::text || ' fact ' || i, 'k' || i, array_fill(0.1, array[384])::extensions.vector,
		       $3, now() + interval '1 day'
		from unnest(array[$1::uuid, $2::uuid]) as u, generate_series(1, 5) as i`, userA, userB, embedding.HashModel); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `insert into agentmem.knowledge_chunks (tenant_id, source, chunk_index, content)
		values ('acme', 'doc', 0, 'a chunk')`); err != nil {
		t.Fatal(err)
	}
	// A message of user A stored before messages were embedded, and a tool's output, which is
	// never embedded.
	if _, err := conn.Exec(ctx, `
		with s as (insert into agentmem.sessions (id, tenant_id, user_id, agent, last_seq, expires_at)
		           values (gen_random_uuid(), 'acme', $1, 'default', 2, now() + interval '1 day') returning id)
		insert into agentmem.messages (session_id, seq, id, tenant_id, user_id, agent, role, content, tool_call_id,
		  token_estimate, expires_at)
		select s.id, m.seq, gen_random_uuid(), 'acme', $1, 'default', m.role, m.content, m.call, 5, now() + interval '1 day'
		from s, (values (1, 'user', 'a message', null), (2, 'tool', '{"ok": true}', 'call_1')) as m(seq, role, content, call)`,
		userA); err != nil {
		t.Fatal(err)
	}
	const model, dims = "fake-embed-8", 8
	// models counts the rows of each "model/dims" (user A's, then the rest).
	models := func() (a, rest map[string]int) {
		t.Helper()
		a, rest = map[string]int{}, map[string]int{}
		rows, err := conn.Query(ctx, `select coalesce(user_id = $1, false), coalesce(embedding_model, '-') || '/' || coalesce(embedding_dims, 0)
			from (select user_id, embedding_model, embedding_dims from agentmem.memories
			      union all select null, embedding_model, embedding_dims from agentmem.knowledge_chunks) x`, userA)
		if err != nil {
			t.Fatal(err)
		}
		var ofA bool
		var m string
		if _, err := pgx.ForEachRow(rows, []any{&ofA, &m}, func() error {
			if ofA {
				a[m]++
			} else {
				rest[m]++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return a, rest
	}
	_, restBefore := models()
	api := embeddingtest.New(t, model, dims)
	useEmbedder(t, api, model, dims)
	run := func(args ...string) (stdout, stderr string, summary backfillSummary, err error) {
		t.Helper()
		var out, errb bytes.Buffer
		err = runBackfill(ctx, args, console{out: &out, err: &errb, tty: true})
		if out.Len() > 0 {
			if jerr := json.Unmarshal(out.Bytes(), &summary); jerr != nil {
				t.Fatalf("summary %q: %v", out.String(), jerr)
			}
		}
		return out.String(), errb.String(), summary, err
	}

	_, _, sum, err := run("--user", userA.String(), "--dry-run")
	if err != nil || sum.Pending.Memories != 5 || sum.Pending.KnowledgeChunks != 0 || sum.Pending.Messages != 1 ||
		sum.Embedded != 0 || sum.Remaining == nil || *sum.Remaining != 6 || sum.Model != model || sum.Dimensions != dims {
		t.Errorf("--dry-run: %+v, %v", sum, err)
	}
	_, _, sum, err = run("--table", "messages", "--dry-run")
	if err != nil || sum.Pending != (memory.PendingCount{Messages: 1}) {
		t.Errorf("--table messages --dry-run: %+v, %v", sum, err)
	}
	if api.Texts.Load() != 0 {
		t.Error("--dry-run embedded")
	}

	api.Down.Store(true)
	_, _, sum, err = run("--user", userA.String(), "--no-index")
	if !errors.Is(err, embedding.ErrUnavailable) || !strings.Contains(err.Error(), "run agentmem backfill again") {
		t.Errorf("backfill with the provider down: %v; want unavailable, saying to run it again", err)
	}
	if sum.Embedded != 0 || sum.Remaining == nil || *sum.Remaining != 6 {
		t.Errorf("summary with the provider down: %+v", sum)
	}
	if a, _ := models(); a[embedding.HashModel+"/384"] != 5 {
		t.Errorf("user A's rows after a failed run: %v", a)
	}
	api.Down.Store(false)

	if got := embeddingIndexes(t, conn, model, dims); len(got) != 0 {
		t.Fatalf("indexes of %s before the backfill (--dry-run, --no-index): %v", model, got)
	}
	_, stderr, sum, err := run("--user", userA.String(), "--batch", "2")
	if err != nil {
		t.Fatalf("backfill: %v\n%s", err, stderr)
	}
	t.Logf("stderr:\n%s", stderr)
	if sum.Embedded != 6 || sum.Failed != 0 || sum.Remaining == nil || *sum.Remaining != 0 || sum.Pending.Memories != 5 {
		t.Errorf("summary: %+v", sum)
	}
	for _, want := range []string{"create index concurrently if not exists", "100%", "(6/6", "rows/s",
		"embedded 6 rows (5 memories, 0 knowledge chunks, 1 messages) with fake-embed-8 (8 dimensions)", "0 failed, 0 remaining"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if got := embeddingIndexes(t, conn, model, dims); len(got) != 3 {
		t.Errorf("indexes of %s after the backfill: %v, want one on each table", model, got)
	}
	a, rest := models()
	if !maps.Equal(a, map[string]int{model + "/8": 5}) {
		t.Errorf("user A's rows after the backfill: %v", a)
	}
	if !maps.Equal(rest, restBefore) {
		t.Errorf("the other rows after user A's backfill: %v, were %v", rest, restBefore)
	}
	if api.Texts.Load() != 6 {
		t.Errorf("the provider embedded %d texts, want 6", api.Texts.Load())
	}

	// Nothing left in the scope: no bar, nothing embedded again.
	_, stderr, sum, err = run("--user", userA.String(), "--no-index")
	if err != nil || sum.Embedded != 0 || api.Texts.Load() != 6 {
		t.Errorf("second run: %+v, %v, %d texts embedded in all", sum, err, api.Texts.Load())
	}
	if strings.Contains(stderr, "|") || !strings.Contains(stderr, "embedded 0 rows") {
		t.Errorf("second run's stderr: %q, want a summary and no bar", stderr)
	}
	// The tenant's chunk and user B's memories, two rows per run.
	_, _, sum, err = run("--tenant", "acme", "--limit", "2", "--no-index")
	if err != nil || sum.Embedded != 2 || sum.Remaining == nil || *sum.Remaining != 4 {
		t.Errorf("run with --limit 2: %+v, %v", sum, err)
	}
	_, _, sum, err = run("--tenant", "acme")
	if err != nil || sum.Embedded != 4 || sum.Remaining == nil || *sum.Remaining != 0 || api.Texts.Load() != 12 {
		t.Errorf("last run: %+v, %v, %d texts embedded in all (want 12)", sum, err, api.Texts.Load())
	}

	for _, args := range [][]string{
		{"--table", "nope"}, {"--user", "no\x01pe"}, {"--batch", "0"}, {"--batch", "1001"}, {"--limit", "-1"},
		{"--user", userA.String(), "--table", "knowledge"}, {"extra"},
	} {
		if _, _, _, err := run(args...); err == nil {
			t.Errorf("backfill %q: no error", args)
		}
	}
}

// index makes the configured model's HNSW indexes, prints the statements, and can run again.
func TestIndexCommand(t *testing.T) {
	ctx := context.Background()
	conn := commandDB(t)
	const model, dims = "fake-embed-16", 16
	useEmbedder(t, embeddingtest.New(t, model, dims), model, dims)
	if got := embeddingIndexes(t, conn, model, dims); len(got) != 0 {
		t.Fatalf("indexes before: %v", got)
	}
	for range 2 {
		var out, errb bytes.Buffer
		if err := runIndex(ctx, nil, console{out: &out, err: &errb}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 || !slices.ContainsFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, "create index concurrently if not exists memories_embedding_") &&
				strings.Contains(l, "vector(16)") && strings.Contains(l, "'fake-embed-16'")
		}) {
			t.Errorf("printed %q", out.String())
		}
		if got := embeddingIndexes(t, conn, model, dims); len(got) != 3 {
			t.Errorf("indexes after: %v, want one on each table", got)
		}
	}
	if err := runIndex(ctx, []string{"extra"}, console{out: &bytes.Buffer{}, err: &bytes.Buffer{}}); err == nil {
		t.Error("index with an argument: no error")
	}
}
