package httpapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
)

// smRemember stores long-term memories through commit-turn (agent "" = default) and returns
// their ids in order.
func smRemember(e *env, token, agent string, mems ...map[string]any) []string {
	e.t.Helper()
	body := map[string]any{"session_id": uuid.New(), "messages": []any{map[string]any{"role": "user", "content": "note this"}},
		"memories": mems}
	if agent != "" {
		body["agent"] = agent
	}
	r := e.call(token, "commit-turn", body).must(e.t, http.StatusCreated)
	var ids []string
	for _, m := range list(r.body["memories"]) {
		ids = append(ids, str(obj(m)["id"]))
	}
	return ids
}

func smFact(content string, kv ...any) map[string]any {
	m := map[string]any{"content": content}
	if len(kv) > 0 {
		md := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			md[kv[i].(string)] = kv[i+1]
		}
		m["metadata"] = md
	}
	return m
}

// smMemoryRow reads what the store holds for a memory, as the superuser.
type smMemoryRow struct {
	content, key, model, embedding string
	expiresAt, updatedAt           time.Time
}

func smReadMemory(e *env, id string) smMemoryRow {
	e.t.Helper()
	conn := e.adminConn()
	defer conn.Close(context.Background())
	var r smMemoryRow
	err := conn.QueryRow(context.Background(), `select content, content_key, coalesce(embedding_model, ''),
		coalesce(embedding::text, ''), expires_at, updated_at from agentmem.memories where id = $1`, id).
		Scan(&r.content, &r.key, &r.model, &r.embedding, &r.expiresAt, &r.updatedAt)
	if err != nil {
		e.t.Fatalf("read memory %s: %v", id, err)
	}
	return r
}

func TestMemoriesListPagesAndKeepsOneRowPerFact(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	// The same fact twice in one request and again, differently written, in a later one.
	first := smRemember(e, u.token, "", smFact("User likes tea.", "kind", "x"), smFact("Lives in Oslo"), smFact("user likes TEA"))
	again := smRemember(e, u.token, "", smFact("User   likes tea!", "kind", "pref"))
	if first[0] != first[2] || again[0] != first[0] {
		t.Fatalf("the same fact got several ids: %v %v", first, again)
	}
	r := smOp(e, u.token, "memories", "list").must(t, http.StatusOK)
	items := list(r.body["items"])
	if len(items) != 2 || r.body["next_cursor"] != nil {
		t.Fatalf("listing %s, want the two facts", r.raw)
	}
	var tea map[string]any
	for _, it := range items {
		if obj(it)["id"] == first[0] {
			tea = obj(it)
		}
	}
	if tea == nil || tea["content"] != "User   likes tea!" || tea["agent"] != "default" {
		t.Errorf("tea is listed as %v", tea)
	}
	if md := obj(tea["metadata"]); md["kind"] != "pref" {
		t.Errorf("tea metadata %v", md)
	}
	var keys []string
	for k := range tea {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"agent", "content", "created_at", "expires_at", "id", "metadata", "updated_at"}; !slices.Equal(keys, want) {
		t.Errorf("item fields %v, want %v", keys, want)
	}

	// 45 more facts over three requests; pages of 10 give each once, newest first.
	for batch := 0; batch < 3; batch++ {
		var mems []map[string]any
		for i := 0; i < 15; i++ {
			mems = append(mems, smFact(fmt.Sprintf("fact %d of batch %d", i, batch)))
		}
		smRemember(e, u.token, "", mems...)
	}
	// Expired memories and another user's are never listed.
	e.exec(`insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		select $1, 'default', 'gone ' || g, 'gone' || g, now() - interval '1 second' from generate_series(1, 3) g`, u.id)
	e.exec(`insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		values ($1, 'default', 'theirs', 'theirs', now() + interval '1 day')`, uuid.New())
	want := smIDs(e, `select id from agentmem.memories where user_id = $1 and expires_at > now()
		order by created_at desc, id desc`, u.id)
	got, pages := smPageAll(e, u.token, "memories", "items", 10, nil)
	if pages != 5 || len(want) != 47 {
		t.Errorf("%d pages of %d memories, want 5 of 47", pages, len(want))
	}
	var ids []string
	for _, it := range got {
		ids = append(ids, str(it["id"]))
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("paged listing differs from (created_at desc, id desc): %v\nwant %v", ids, want)
	}
}

func TestMemoriesListAgentFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	mine := smRemember(e, u.token, "", smFact("default agent fact"))
	bots := smRemember(e, u.token, "bot", smFact("bot fact"))
	e.exec(`insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		values ($1, '', 'shared fact', 'shared', now() + interval '1 day')`, u.id)
	shared := smIDs(e, `select id from agentmem.memories where user_id = $1 and agent = ''`, u.id)[0]

	listed := func(kv ...any) map[string]any {
		r := smOp(e, u.token, "memories", "list", kv...).must(t, http.StatusOK)
		out := map[string]any{}
		for _, it := range list(r.body["items"]) {
			out[str(obj(it)["id"])] = obj(it)["agent"]
		}
		return out
	}
	all := listed()
	if len(all) != 3 || all[mine[0]] != "default" || all[bots[0]] != "bot" || all[shared] != nil {
		t.Errorf("without agent: %v", all)
	}
	if v, ok := all[shared]; !ok || v != nil {
		t.Errorf("the agent-less memory lists agent %v, want null", v)
	}
	bot := listed("agent", "bot")
	if _, ok := bot[mine[0]]; len(bot) != 2 || ok || bot[bots[0]] != "bot" {
		t.Errorf("agent bot: %v, want its own and the agent-less one", bot)
	}
}

func TestMemoriesGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	ids := smRemember(e, u.token, "", smFact("Prefers metric units.", "kind", "preference"), smFact("Short-lived"))
	r := smOp(e, u.token, "memories", "get", "id", ids[0]).must(t, http.StatusOK)
	if r.body["id"] != ids[0] || r.body["content"] != "Prefers metric units." || obj(r.body["metadata"])["kind"] != "preference" || r.body["agent"] != "default" {
		t.Errorf("get %s", r.raw)
	}
	for _, f := range []string{"created_at", "updated_at", "expires_at"} {
		if ts, err := time.Parse(time.RFC3339Nano, str(r.body[f])); err != nil || !strings.HasSuffix(str(r.body[f]), "Z") || ts.IsZero() {
			t.Errorf("%s %v is not RFC 3339 UTC", f, r.body[f])
		}
	}
	if exp, _ := time.Parse(time.RFC3339Nano, str(r.body["expires_at"])); exp.Before(time.Now().Add(24 * time.Hour)) {
		t.Errorf("expires_at %v is not the default retention", r.body["expires_at"])
	}
	e.exec(`update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, ids[1])
	for _, op := range []string{"get", "delete"} {
		smOp(e, u.token, "memories", op, "id", ids[1]).must(t, http.StatusNotFound)
	}
	smOp(e, u.token, "memories", "update", "id", ids[1], "content", "revived?").must(t, http.StatusNotFound)
	if n := e.count("memories", "id = $1 and content = 'Short-lived'", ids[1]); n != 1 {
		t.Error("an expired memory was changed")
	}
	r = smOp(e, u.token, "memories", "list").must(t, http.StatusOK)
	if got := list(r.body["items"]); len(got) != 1 || obj(got[0])["id"] != ids[0] {
		t.Errorf("list shows the expired memory: %s", r.raw)
	}
	smOp(e, u.token, "memories", "get", "id", uuid.New()).must(t, http.StatusNotFound)
}

func TestMemoriesUpdate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	id := smRemember(e, u.token, "", smFact("Likes green tea", "kind", "pref", "source", "chat"))[0]
	before := smReadMemory(e, id)

	// Content: embedded again, keyed again, metadata and expiry kept.
	r := smOp(e, u.token, "memories", "update", "id", id, "content", "Drinks espresso daily").must(t, http.StatusOK)
	after := smReadMemory(e, id)
	wantVec := pgvector.NewVector(embedding.Hash{}.Vector("Drinks espresso daily")).String()
	if after.embedding != wantVec || after.embedding == before.embedding {
		t.Errorf("the new content was not embedded again")
	}
	if after.key != store.ContentKey("Drinks espresso daily") || after.content != "Drinks espresso daily" || after.model != (embedding.Hash{}).Model() {
		t.Errorf("stored %+v", after)
	}
	if !after.expiresAt.Equal(before.expiresAt) || !after.updatedAt.After(before.updatedAt) {
		t.Errorf("expiry %v -> %v, updated_at %v -> %v", before.expiresAt, after.expiresAt, before.updatedAt, after.updatedAt)
	}
	if r.body["content"] != "Drinks espresso daily" || obj(r.body["metadata"])["source"] != "chat" || r.body["id"] != id {
		t.Errorf("update answered %s", r.raw)
	}
	rec := e.call(u.token, "recall", map[string]any{"query": "espresso", "mode": "vector", "k": 1}).must(t, http.StatusOK)
	if hits := list(rec.body["results"]); len(hits) != 1 || obj(hits[0])["id"] != id {
		t.Errorf("recall by the new content: %s", rec.raw)
	}
	rec = e.call(u.token, "recall", map[string]any{"query": "green tea", "mode": "text"}).must(t, http.StatusOK)
	if len(list(rec.body["results"])) != 0 {
		t.Errorf("the old text is still found: %s", rec.raw)
	}

	// Metadata replaces the object as a whole; {} empties it; content stays.
	r = smOp(e, u.token, "memories", "update", "id", id, "metadata", map[string]any{"kind": "habit"}).must(t, http.StatusOK)
	if md := obj(r.body["metadata"]); len(md) != 1 || md["kind"] != "habit" || r.body["content"] != "Drinks espresso daily" {
		t.Errorf("metadata update answered %s", r.raw)
	}
	if smReadMemory(e, id).embedding != wantVec {
		t.Error("a metadata update changed the embedding")
	}
	r = smOp(e, u.token, "memories", "update", "id", id, "metadata", map[string]any{}).must(t, http.StatusOK)
	if string(r.raw) == "" || len(obj(r.body["metadata"])) != 0 || r.body["metadata"] == nil {
		t.Errorf("emptying metadata answered %s", r.raw)
	}
	// Both at once; the same fact written differently keeps its row.
	r = smOp(e, u.token, "memories", "update", "id", id, "content", "drinks ESPRESSO daily.", "metadata", map[string]any{"n": 1}).must(t, http.StatusOK)
	if r.body["content"] != "drinks ESPRESSO daily." || obj(r.body["metadata"])["n"] != float64(1) {
		t.Errorf("update of both answered %s", r.raw)
	}
	got := smOp(e, u.token, "memories", "get", "id", id).must(t, http.StatusOK)
	delete(got.body, "updated_at")
	delete(r.body, "updated_at")
	if fmt.Sprint(got.body) != fmt.Sprint(r.body) {
		t.Errorf("get %v differs from the update's answer %v", got.body, r.body)
	}
}

func TestMemoriesUpdateToAnExistingFact(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	ids := smRemember(e, u.token, "", smFact("Likes tea"), smFact("Lives in Oslo"), smFact("Likes coffee"))
	tea, oslo, coffee := ids[0], ids[1], ids[2]
	other := smRemember(e, u.token, "bot", smFact("Has a cat"))[0]
	before := smSnapshot(e, u.id)

	r := smOp(e, u.token, "memories", "update", "id", oslo, "content", "likes TEA.").must(t, http.StatusConflict)
	if r.problemCode() != "conflict" || !strings.Contains(str(r.body["detail"]), tea) || strings.Contains(string(r.raw), "Oslo") {
		t.Errorf("conflict answered %s", r.raw)
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("a conflicting update changed something")
	}
	// The same fact under another agent is another scope: no conflict.
	smOp(e, u.token, "memories", "update", "id", other, "content", "Likes tea").must(t, http.StatusOK)

	// An expired memory holding the fact makes room.
	e.exec(`update agentmem.memories set expires_at = now() - interval '1 second' where id = $1`, coffee)
	smOp(e, u.token, "memories", "update", "id", oslo, "content", "Likes coffee!").must(t, http.StatusOK)
	if n := e.count("memories", "id = $1", coffee); n != 0 {
		t.Errorf("the expired memory with the same fact is still there")
	}
	// And the fact stored again through commit-turn lands on the updated row.
	again := smRemember(e, u.token, "", smFact("likes coffee"))
	if again[0] != oslo {
		t.Errorf("storing the fact again made %s, want the updated memory %s", again[0], oslo)
	}
	r = smOp(e, u.token, "memories", "list", "agent", "default").must(t, http.StatusOK)
	if n := len(list(r.body["items"])); n != 2 {
		t.Errorf("%d memories of the default agent, want 2: %s", n, r.raw)
	}
}

func TestMemoriesDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	ids := smRemember(e, u.token, "", smFact("one"), smFact("two"))
	r := smOp(e, u.token, "memories", "delete", "id", ids[0]).must(t, http.StatusOK)
	if string(r.raw) != "{\"deleted\":true}\n" {
		t.Errorf("delete answered %s", r.raw)
	}
	if n := e.count("memories", "id = $1", ids[0]); n != 0 {
		t.Error("the memory is still stored")
	}
	smOp(e, u.token, "memories", "delete", "id", ids[0]).must(t, http.StatusNotFound)
	smOp(e, u.token, "memories", "get", "id", ids[0]).must(t, http.StatusNotFound)
	smOp(e, u.token, "memories", "delete", "id", uuid.New()).must(t, http.StatusNotFound)
	if n := e.count("memories", "id = $1", ids[1]); n != 1 {
		t.Error("the other memory went too")
	}
}

func TestMemoriesIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a := e.newUser("t1")
	b := e.newUser("t1")
	id := smRemember(e, a.token, "", smFact("a secret fact"))[0]
	before := smSnapshot(e, a.id)
	tokens := map[string]string{"another user": b.token, "another tenant": smToken(t, a.id, "t2"), "no tenant": smToken(t, a.id, "")}
	for name, token := range tokens {
		r := smOp(e, token, "memories", "list").must(t, http.StatusOK)
		if len(list(r.body["items"])) != 0 {
			t.Errorf("%s lists %s", name, r.raw)
		}
		for _, kv := range [][]any{
			{"get", "id", id},
			{"update", "id", id, "content", "overwritten"},
			{"update", "id", id, "metadata", map[string]any{"x": 1}},
			{"delete", "id", id},
		} {
			r := smOp(e, token, "memories", kv[0].(string), kv[1:]...)
			if r.status != http.StatusNotFound || r.problemCode() != "not_found" || strings.Contains(string(r.raw), "secret") {
				t.Errorf("%s %v: %d %s, want 404", name, kv[0], r.status, r.raw)
			}
		}
	}
	if smSnapshot(e, a.id) != before {
		t.Fatal("another user or tenant changed the memory")
	}

	svc := e.serviceToken()
	r := smOp(e, svc, "memories", "get", "user_id", a.id, "tenant_id", "t1", "id", id).must(t, http.StatusOK)
	if r.body["content"] != "a secret fact" {
		t.Errorf("service get %s", r.raw)
	}
	r = smOp(e, svc, "memories", "list", "user_id", a.id, "tenant_id", "t1").must(t, http.StatusOK)
	if len(list(r.body["items"])) != 1 {
		t.Errorf("service list %s", r.raw)
	}
	smOp(e, svc, "memories", "get", "user_id", a.id, "id", id).must(t, http.StatusNotFound)
	smOp(e, svc, "memories", "get", "user_id", b.id, "tenant_id", "t1", "id", id).must(t, http.StatusNotFound)
	smOp(e, svc, "memories", "get", "id", id).must(t, http.StatusBadRequest)
	smOp(e, b.token, "memories", "get", "user_id", a.id, "id", id).must(t, http.StatusForbidden)
	smOp(e, svc, "memories", "update", "user_id", a.id, "tenant_id", "t1", "id", id, "content", "set by service").must(t, http.StatusOK)
	smOp(e, svc, "memories", "delete", "user_id", a.id, "tenant_id", "t1", "id", id).must(t, http.StatusOK)
	if n := e.count("memories", "id = $1", id); n != 0 {
		t.Error("service delete left the memory")
	}
}

func TestMemoriesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	ids := smRemember(e, u.token, "", smFact("one"), smFact("two"))
	id := ids[0]
	memCursor := smOp(e, u.token, "memories", "list", "limit", 1).must(t, http.StatusOK).body["next_cursor"]
	sessCursor := base64.RawURLEncoding.EncodeToString(append([]byte{'s'}, make([]byte, 24)...))
	if memCursor == nil {
		t.Fatal("fixture has no cursor")
	}
	before := smSnapshot(e, u.id)
	cases := []struct {
		name  string
		body  string
		field string
	}{
		{"no op", `{"id":"` + id + `"}`, "op"},
		{"unknown op", `{"op":"merge"}`, "op"},
		{"list limit 0", `{"op":"list","limit":0}`, "limit"},
		{"list limit 101", `{"op":"list","limit":101}`, "limit"},
		{"list bad agent", `{"op":"list","agent":"x y"}`, "agent"},
		{"list sessions cursor", fmt.Sprintf(`{"op":"list","cursor":%q}`, sessCursor), "cursor"},
		{"list truncated cursor", fmt.Sprintf(`{"op":"list","cursor":%q}`, str(memCursor)[:10]), "cursor"},
		{"list unknown field", `{"op":"list","query":"x"}`, "query"},
		{"get no id", `{"op":"get"}`, "id"},
		{"get bad id", `{"op":"get","id":"12"}`, "id"},
		{"get agent", fmt.Sprintf(`{"op":"get","id":%q,"agent":"default"}`, id), "agent"},
		{"delete no id", `{"op":"delete"}`, "id"},
		{"delete id type", `{"op":"delete","id":1}`, "id"},
		{"update nothing", fmt.Sprintf(`{"op":"update","id":%q}`, id), "content"},
		{"update no id", `{"op":"update","content":"x"}`, "id"},
		{"update empty content", fmt.Sprintf(`{"op":"update","id":%q,"content":""}`, id), "content"},
		{"update blank content", fmt.Sprintf(`{"op":"update","id":%q,"content":" \n "}`, id), "content"},
		{"update long content", fmt.Sprintf(`{"op":"update","id":%q,"content":%q}`, id, strings.Repeat("x", 20_001)), "content"},
		{"update content type", fmt.Sprintf(`{"op":"update","id":%q,"content":5}`, id), "content"},
		{"update null content", fmt.Sprintf(`{"op":"update","id":%q,"content":null}`, id), "content"},
		{"update metadata array", fmt.Sprintf(`{"op":"update","id":%q,"metadata":[1]}`, id), "metadata"},
		{"update metadata string", fmt.Sprintf(`{"op":"update","id":%q,"metadata":"x"}`, id), "metadata"},
		{"update metadata null", fmt.Sprintf(`{"op":"update","id":%q,"metadata":null}`, id), "metadata"},
		{"update metadata too big", fmt.Sprintf(`{"op":"update","id":%q,"metadata":{"k":%q}}`, id, strings.Repeat("x", 17_000)), "metadata"},
		{"update good content bad metadata", fmt.Sprintf(`{"op":"update","id":%q,"content":"new","metadata":[]}`, id), "metadata"},
		{"update agent", fmt.Sprintf(`{"op":"update","id":%q,"content":"new","agent":"bot"}`, id), "agent"},
		{"update nul", fmt.Sprintf(`{"op":"update","id":%q,"content":"a\u0000b"}`, id), ""},
		{"trailing data", fmt.Sprintf(`{"op":"delete","id":%q}x`, id), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, e.call(u.token, "memories", tc.body), http.StatusBadRequest, "invalid_request", tc.field)
		})
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("a refused request changed something")
	}
}
