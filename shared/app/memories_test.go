package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// memories create validates everything before storing anything; agent defaults to that of a
// turn without one, so the same fact from a turn and from create is one memory.
func TestCreateMemoryThroughTheUseCase(t *testing.T) {
	t.Parallel()
	a, count := newApp(t)
	ctx := context.Background()
	u := user()
	key := func(k string) *app.IdempotencyKey {
		return &app.IdempotencyKey{Key: k, Present: true, RequestHash: app.RequestHash([]byte(k))}
	}
	for _, c := range []struct {
		name  string
		in    app.CreateMemoryInput
		field string
	}{
		{"no content", app.CreateMemoryInput{}, "content"},
		{"blank content", app.CreateMemoryInput{Content: ptr(" \n\t")}, "content"},
		{"long content", app.CreateMemoryInput{Content: ptr(strings.Repeat("é", 20_001))}, "content"},
		{"metadata not an object", app.CreateMemoryInput{Content: ptr("x"), Metadata: []byte(`[1]`)}, "metadata"},
		{"metadata too large", app.CreateMemoryInput{Content: ptr("x"), Metadata: []byte(`{"a":"` + strings.Repeat("x", 16<<10) + `"}`)}, "metadata"},
		{"ttl 0", app.CreateMemoryInput{Content: ptr("x"), TTLSeconds: ptr(int64(0))}, "ttl_seconds"},
		{"agent", app.CreateMemoryInput{Content: ptr("x"), Agent: ptr("no spaces")}, "agent"},
		{"idempotency key", app.CreateMemoryInput{Content: ptr("x"), Idempotency: key("")}, "Idempotency-Key"},
		{"idempotency key not ASCII", app.CreateMemoryInput{Content: ptr("x"), Idempotency: key("ключ")}, "Idempotency-Key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.CreateMemory(ctx, u, c.in)
			wantField(t, c.name, err, c.field)
		})
	}
	if n := count(`select count(*) from agentmem.memories where user_id = $1`, u.UserID); n != 0 {
		t.Fatalf("refused requests stored %d memories", n)
	}
	out, err := a.CreateMemory(ctx, u, app.CreateMemoryInput{Content: ptr("Prefers metric units"), Metadata: []byte(`{"kind":"preference"}`),
		TTLSeconds: ptr(int64(3600))})
	if err != nil || out.Merged {
		t.Fatalf("create: %+v, %v", out, err)
	}
	res, err := a.CommitTurn(ctx, u, app.CommitTurnInput{SessionID: ptr(uuid.NewString()),
		Messages: []app.MessageInput{{Role: ptr("user"), Content: json.RawMessage(`"I like metric"`)}},
		Memories: []app.MemoryInput{{Content: ptr("prefers metric units.")}}})
	if err != nil || len(res.Memories) != 1 || res.Memories[0].ID != out.ID {
		t.Errorf("the same fact in a turn without agent: %+v, %v; want memory %s", res.Memories, err, out.ID)
	}
	if n := count(`select count(*) from agentmem.memories where user_id = $1 and agent = 'default'
		and expires_at > now() + interval '29 days'`, u.UserID); n != 1 {
		t.Errorf("the turn's default retention did not extend the memory: %d rows", n)
	}
	again, err := a.CreateMemory(ctx, u, app.CreateMemoryInput{Content: ptr("Prefers metric units")})
	if err != nil || !again.Merged || again.ID != out.ID || again.Replayed {
		t.Errorf("create again: %+v, %v", again, err)
	}
}

// The same fact, however written, is one memory (the latest wording and metadata); list pages
// through the live memories of the user newest first, each once, and never another user's or
// an expired one.
func TestListMemoriesPagesAndKeepsOneRowPerFact(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	a, ctx, u := r.a, context.Background(), user()
	first := remember(t, a, u, "", fact{"User likes tea.", `{"kind":"x"}`}, fact{"Lives in Oslo", ""}, fact{"user likes TEA", ""})
	again := remember(t, a, u, "", fact{"User   likes tea!", `{"kind":"pref"}`})
	if first[0] != first[2] || again[0] != first[0] {
		t.Fatalf("the same fact got several ids: %v %v", first, again)
	}
	l, err := a.ListMemories(ctx, u, app.ListMemoriesInput{})
	if err != nil || len(l.Items) != 2 || l.NextCursor != nil {
		t.Fatalf("listing %+v, %v; want the two facts", l, err)
	}
	i := slices.IndexFunc(l.Items, func(m memory.MemoryItem) bool { return m.ID.String() == first[0] })
	var md map[string]any
	if i < 0 || l.Items[i].Content != "User   likes tea!" || l.Items[i].Agent == nil || *l.Items[i].Agent != "default" ||
		json.Unmarshal(l.Items[i].Metadata, &md) != nil || len(md) != 1 || md["kind"] != "pref" {
		t.Errorf("tea is listed as %+v", l.Items)
	}
	for batch := range 3 {
		var facts []fact
		for i := range 15 {
			facts = append(facts, fact{fmt.Sprintf("fact %d of batch %d", i, batch), ""})
		}
		remember(t, a, u, "", facts...)
	}
	r.env.Exec(t, `insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		select $1, 'default', 'gone ' || g, 'gone' || g, now() - interval '1 second' from generate_series(1, 3) g`, u.UserID)
	r.env.Exec(t, `insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		values ($1, 'default', 'theirs', 'theirs', now() + interval '1 day')`, uuid.NewString())
	rows, err := r.env.Admin(t).Query(ctx, `select id::text from agentmem.memories where user_id = $1 and expires_at > now()
		order by created_at desc, id desc`, u.UserID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	pages := 0
	in := app.ListMemoriesInput{Limit: ptr(int64(10))}
	for {
		pages++
		l, err := a.ListMemories(ctx, u, in)
		if err != nil || len(l.Items) > 10 || pages > 10 {
			t.Fatalf("page %d: %d items, %v", pages, len(l.Items), err)
		}
		for _, m := range l.Items {
			ids = append(ids, m.ID.String())
		}
		if l.NextCursor == nil {
			break
		}
		in.Cursor = l.NextCursor
	}
	if pages != 5 || len(want) != 47 {
		t.Errorf("%d pages of %d memories, want 5 of 47", pages, len(want))
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("paged listing differs from (created_at desc, id desc): %v\nwant %v", ids, want)
	}
}

// With agent, list holds that agent's memories and the agent-less ones (nil agent): what the
// agent recalls.
func TestListMemoriesOfAnAgent(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	a, ctx, u := r.a, context.Background(), user()
	remember(t, a, u, "", fact{"default agent fact", ""})
	remember(t, a, u, "bot", fact{"bot fact", ""})
	r.env.Exec(t, `insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		values ($1, '', 'shared fact', 'shared', now() + interval '1 day')`, u.UserID)
	listed := func(agent *string) map[string]string {
		t.Helper()
		l, err := a.ListMemories(ctx, u, app.ListMemoriesInput{Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, m := range l.Items {
			ag := "<nil>"
			if m.Agent != nil {
				ag = *m.Agent
			}
			out[m.Content] = ag
		}
		return out
	}
	if all := listed(nil); !maps.Equal(all, map[string]string{"default agent fact": "default", "bot fact": "bot", "shared fact": "<nil>"}) {
		t.Errorf("without agent: %v", all)
	}
	if bot := listed(ptr("bot")); !maps.Equal(bot, map[string]string{"bot fact": "bot", "shared fact": "<nil>"}) {
		t.Errorf("agent bot: %v, want its own and the agent-less one", bot)
	}
}

// update embeds new content again and keys it again, keeping metadata and expiry; metadata
// replaces the object as a whole; recall finds the memory by its new text only.
func TestUpdateMemory(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	a, ctx, u := r.a, context.Background(), user()
	id := remember(t, a, u, "", fact{"Likes green tea", `{"kind":"pref","source":"chat"}`})[0]
	type row struct {
		content, key, model, vector string
		expires, updated            time.Time
	}
	read := func() row {
		t.Helper()
		var x row
		if err := r.env.Admin(t).QueryRow(ctx, `select content, content_key, coalesce(embedding_model, ''),
			coalesce(embedding::text, ''), expires_at, updated_at from agentmem.memories where id = $1`, id).
			Scan(&x.content, &x.key, &x.model, &x.vector, &x.expires, &x.updated); err != nil {
			t.Fatal(err)
		}
		return x
	}
	before := read()
	m, err := a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(id), Content: ptr("Drinks espresso daily")})
	if err != nil {
		t.Fatal(err)
	}
	after := read()
	if want := storetest.HashLiteral("Drinks espresso daily"); after.vector != want || after.vector == before.vector {
		t.Errorf("the new content was not embedded again")
	}
	if after.key != store.ContentKey("Drinks espresso daily") || after.content != "Drinks espresso daily" || after.model != a.Embedder().Model() {
		t.Errorf("stored %+v", after)
	}
	if !after.expires.Equal(before.expires) || !after.updated.After(before.updated) {
		t.Errorf("expiry %v -> %v, updated_at %v -> %v", before.expires, after.expires, before.updated, after.updated)
	}
	// meta decodes metadata into a map of its own (nil when it is not an object).
	meta := func(raw json.RawMessage) map[string]any {
		var md map[string]any
		if json.Unmarshal(raw, &md) != nil {
			return nil
		}
		return md
	}
	if md := meta(m.Metadata); m.Content != "Drinks espresso daily" || md["source"] != "chat" || m.ID.String() != id {
		t.Errorf("update answered %+v", m)
	}
	if hits := recall(t, a, u, app.RecallInput{Query: ptr("espresso"), Mode: ptr("vector"), K: ptr(int64(1))}); len(hits) != 1 || hits[0].ID != id {
		t.Errorf("recall by the new content: %v", hits)
	}
	if hits := recall(t, a, u, app.RecallInput{Query: ptr("green tea"), Mode: ptr("text")}); len(hits) != 0 {
		t.Errorf("the old text is still found: %v", hits)
	}
	m, err = a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(id), Metadata: json.RawMessage(`{"kind":"habit"}`)})
	if md := meta(m.Metadata); err != nil || len(md) != 1 || md["kind"] != "habit" || m.Content != "Drinks espresso daily" {
		t.Errorf("metadata update answered %+v, %v", m, err)
	}
	if read().vector != after.vector {
		t.Error("a metadata update changed the embedding")
	}
	m, err = a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(id), Metadata: json.RawMessage(`{}`)})
	if md := meta(m.Metadata); err != nil || md == nil || len(md) != 0 {
		t.Errorf("emptying metadata answered %+v, %v", m, err)
	}
	m, err = a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(id), Content: ptr("drinks ESPRESSO daily."), Metadata: json.RawMessage(`{"n":1}`)})
	if md := meta(m.Metadata); err != nil || m.Content != "drinks ESPRESSO daily." || md["n"] != float64(1) {
		t.Errorf("update of both answered %+v, %v", m, err)
	}
	got, err := a.GetMemory(ctx, u, app.OneMemoryInput{ID: ptr(id)})
	if err != nil || got.Content != m.Content || string(got.Metadata) != string(m.Metadata) || !got.UpdatedAt.Equal(m.UpdatedAt) {
		t.Errorf("get %+v, %v differs from the update's answer %+v", got, err, m)
	}
}

// Updating a memory to a fact another memory of its scope holds is a conflict naming that memory
// (not its content) and changes nothing; another agent's scope, or an expired holder, is no
// conflict, and the fact stored again lands on the updated memory.
func TestUpdateMemoryToAnExistingFact(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	a, ctx, u := r.a, context.Background(), user()
	ids := remember(t, a, u, "", fact{"Likes tea", ""}, fact{"Lives in Oslo", ""}, fact{"Likes coffee", ""})
	tea, oslo, coffee := ids[0], ids[1], ids[2]
	other := remember(t, a, u, "bot", fact{"Has a cat", ""})[0]
	before := r.snapshot(t, u.UserID)
	_, err := a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(oslo), Content: ptr("likes TEA.")})
	if p := app.Problem(err); err == nil || p.Code != apierror.Conflict || !strings.Contains(p.Detail, tea) || strings.Contains(p.Detail, "Oslo") {
		t.Errorf("conflict: %v", err)
	}
	if r.snapshot(t, u.UserID) != before {
		t.Fatal("a conflicting update changed something")
	}
	if _, err := a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(other), Content: ptr("Likes tea")}); err != nil {
		t.Errorf("the same fact under another agent: %v", err)
	}
	r.env.Exec(t, `update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, coffee)
	if _, err := a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(oslo), Content: ptr("Likes coffee!")}); err != nil {
		t.Fatalf("update over an expired holder: %v", err)
	}
	if n := r.count(t, `select count(*) from agentmem.memories where id = $1`, coffee); n != 0 {
		t.Errorf("the expired memory with the same fact is still there")
	}
	if again := remember(t, a, u, "", fact{"likes coffee", ""}); again[0] != oslo {
		t.Errorf("storing the fact again made %s, want the updated memory %s", again[0], oslo)
	}
	if l, err := a.ListMemories(ctx, u, app.ListMemoriesInput{Agent: ptr("default")}); err != nil || len(l.Items) != 2 {
		t.Errorf("%d memories of the default agent, want 2 (%v)", len(l.Items), err)
	}
}

// get, delete and update find only a live memory of the caller; delete removes that one.
func TestOneMemoryNotFound(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	a, ctx, u := r.a, context.Background(), user()
	ids := remember(t, a, u, "", fact{"one", ""}, fact{"Short-lived", ""}, fact{"two", ""})
	r.env.Exec(t, `update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, ids[1])
	for _, id := range []string{ids[1], uuid.NewString()} {
		_, err := a.GetMemory(ctx, u, app.OneMemoryInput{ID: ptr(id)})
		wantNotFound(t, "get", err)
		_, err = a.DeleteMemory(ctx, u, app.OneMemoryInput{ID: ptr(id)})
		wantNotFound(t, "delete", err)
		_, err = a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: ptr(id), Content: ptr("revived?")})
		wantNotFound(t, "update", err)
	}
	if n := r.count(t, `select count(*) from agentmem.memories where id = $1 and content = 'Short-lived'`, ids[1]); n != 1 {
		t.Error("an expired memory was changed")
	}
	_, err := a.GetMemory(ctx, user(), app.OneMemoryInput{ID: ptr(ids[0])})
	wantNotFound(t, "another user's get", err)
	if res, err := a.DeleteMemory(ctx, u, app.OneMemoryInput{ID: ptr(ids[0])}); err != nil || !res.Deleted {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	_, err = a.GetMemory(ctx, u, app.OneMemoryInput{ID: ptr(ids[0])})
	wantNotFound(t, "get after delete", err)
	if n := r.count(t, `select count(*) from agentmem.memories where id = $1`, ids[2]); n != 1 {
		t.Error("the other memory went too")
	}
}

// The memories operations refuse a limit, agent, cursor, id, content or metadata out of its
// range, naming the field, and change nothing.
func TestMemoriesRefuseBadInput(t *testing.T) {
	t.Parallel()
	r := newSessionsRig(t)
	a, ctx, u := r.a, context.Background(), user()
	id := ptr(remember(t, a, u, "", fact{"one", ""}, fact{"two", ""})[0])
	l, err := a.ListMemories(ctx, u, app.ListMemoriesInput{Limit: ptr(int64(1))})
	if err != nil || l.NextCursor == nil {
		t.Fatalf("fixture has no cursor: %+v, %v", l, err)
	}
	sessCursor := base64.RawURLEncoding.EncodeToString(append([]byte{'s'}, make([]byte, 24)...))
	before := r.snapshot(t, u.UserID)
	list := func(in app.ListMemoriesInput) func() error {
		return func() error { _, err := a.ListMemories(ctx, u, in); return err }
	}
	update := func(in app.UpdateMemoryInput) func() error {
		return func() error { _, err := a.UpdateMemory(ctx, u, in); return err }
	}
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"list limit 0", list(app.ListMemoriesInput{Limit: ptr(int64(0))}), "limit"},
		{"list limit 101", list(app.ListMemoriesInput{Limit: ptr(int64(101))}), "limit"},
		{"list bad agent", list(app.ListMemoriesInput{Agent: ptr("x y")}), "agent"},
		{"list sessions cursor", list(app.ListMemoriesInput{Cursor: ptr(sessCursor)}), "cursor"},
		{"list truncated cursor", list(app.ListMemoriesInput{Cursor: ptr((*l.NextCursor)[:10])}), "cursor"},
		{"get no id", func() error { _, err := a.GetMemory(ctx, u, app.OneMemoryInput{}); return err }, "id"},
		{"get bad id", func() error { _, err := a.GetMemory(ctx, u, app.OneMemoryInput{ID: ptr("12")}); return err }, "id"},
		{"delete no id", func() error { _, err := a.DeleteMemory(ctx, u, app.OneMemoryInput{}); return err }, "id"},
		{"update nothing", update(app.UpdateMemoryInput{ID: id}), "content"},
		{"update no id", update(app.UpdateMemoryInput{Content: ptr("x")}), "id"},
		{"update empty content", update(app.UpdateMemoryInput{ID: id, Content: ptr("")}), "content"},
		{"update blank content", update(app.UpdateMemoryInput{ID: id, Content: ptr(" \n ")}), "content"},
		{"update long content", update(app.UpdateMemoryInput{ID: id, Content: ptr(strings.Repeat("x", 20_001))}), "content"},
		{"update metadata array", update(app.UpdateMemoryInput{ID: id, Metadata: json.RawMessage(`[1]`)}), "metadata"},
		{"update metadata string", update(app.UpdateMemoryInput{ID: id, Metadata: json.RawMessage(`"x"`)}), "metadata"},
		{"update metadata null", update(app.UpdateMemoryInput{ID: id, Metadata: json.RawMessage(`null`)}), "metadata"},
		{"update metadata too big", update(app.UpdateMemoryInput{ID: id, Metadata: json.RawMessage(`{"k":"` + strings.Repeat("x", 17_000) + `"}`)}), "metadata"},
		{"update good content bad metadata", update(app.UpdateMemoryInput{ID: id, Content: ptr("new"), Metadata: json.RawMessage(`[]`)}), "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField(t, tc.name, tc.call(), tc.field)
		})
	}
	if _, err := a.UpdateMemory(ctx, u, app.UpdateMemoryInput{ID: id, Content: ptr("a\x00b")}); err == nil || app.Problem(err).Code != apierror.InvalidRequest {
		t.Errorf("content with NUL: %v, want invalid_request", err)
	}
	if r.snapshot(t, u.UserID) != before {
		t.Fatal("a refused request changed something")
	}
}
