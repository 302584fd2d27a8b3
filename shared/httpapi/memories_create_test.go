package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/embedding/embeddingtest"
)

// memories create stores one fact without a turn: 201 {id, merged: false, content_changed:
// false} for a new memory, 200 {id, merged: true, content_changed} when it merged into one (the
// same fact, or the same fact from a turn), keeping the better-formed text;
// it is then listed, got and recalled like a turn's. With an Idempotency-Key a retry answers
// the same (status included) with Idempotent-Replayed, and the key with another body is 409.
func TestMemoriesCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	r := smOp(e, u.token, "memories", "create", "content", "Prefers metric units.", "metadata", map[string]any{"kind": "preference"},
		"ttl_seconds", 3600).must(t, http.StatusCreated)
	id := str(r.body["id"])
	if len(r.body) != 3 || r.body["merged"] != false || r.body["content_changed"] != false || uuid.Validate(id) != nil {
		t.Fatalf("create: %s", r.raw)
	}
	got := smOp(e, u.token, "memories", "get", "id", id).must(t, http.StatusOK)
	if got.body["content"] != "Prefers metric units." || obj(got.body["metadata"])["kind"] != "preference" || got.body["agent"] != "default" {
		t.Errorf("get: %s", got.raw)
	}
	if exp := ctUTC(t, "expires_at", str(got.body["expires_at"])); time.Until(exp) > time.Hour || time.Until(exp) < 50*time.Minute {
		t.Errorf("expires_at %s, want an hour from now", exp)
	}
	r = smOp(e, u.token, "memories", "create", "content", "prefers metric units", "metadata", map[string]any{"source": "settings"}).must(t, http.StatusOK)
	if string(r.raw) != fmt.Sprintf("{\"id\":%q,\"merged\":true,\"content_changed\":false}\n", id) {
		t.Errorf("the same fact again: %s", r.raw)
	}
	if got := smOp(e, u.token, "memories", "get", "id", id).must(t, http.StatusOK); got.body["content"] != "Prefers metric units." {
		t.Errorf("the same fact in lower case replaced the memory's text: %s", got.raw)
	}
	// The README's example: "user lives in lisbon!" leaves "User lives in Lisbon." as it is,
	// and the better-formed wording of a fact replaces a worse one, saying so.
	home := str(smOp(e, u.token, "memories", "create", "content", "User lives in Lisbon.").must(t, http.StatusCreated).body["id"])
	r = smOp(e, u.token, "memories", "create", "content", "user lives in lisbon!").must(t, http.StatusOK)
	if string(r.raw) != fmt.Sprintf("{\"id\":%q,\"merged\":true,\"content_changed\":false}\n", home) {
		t.Errorf("the same fact in worse form: %s", r.raw)
	}
	if got := smOp(e, u.token, "memories", "get", "id", home).must(t, http.StatusOK); got.body["content"] != "User lives in Lisbon." {
		t.Errorf("after the worse form: %s", got.raw)
	}
	tea := str(smOp(e, u.token, "memories", "create", "content", "likes green tea").must(t, http.StatusCreated).body["id"])
	r = smOp(e, u.token, "memories", "create", "content", "Likes green tea.").must(t, http.StatusOK)
	if string(r.raw) != fmt.Sprintf("{\"id\":%q,\"merged\":true,\"content_changed\":true}\n", tea) {
		t.Errorf("the same fact better formed: %s", r.raw)
	}
	if got := smOp(e, u.token, "memories", "get", "id", tea).must(t, http.StatusOK); got.body["content"] != "Likes green tea." {
		t.Errorf("after the better form: %s", got.raw)
	}
	if got := smOp(e, u.token, "memories", "get", "id", id).must(t, http.StatusOK); obj(got.body["metadata"])["source"] != "settings" ||
		obj(got.body["metadata"])["kind"] != "preference" {
		t.Errorf("merged metadata: %s", got.raw)
	}
	// The same fact from a turn goes into it too; another agent's is its own.
	if ids := smRemember(e, u.token, "", smFact("Prefers metric units")); ids[0] != id {
		t.Errorf("a turn's same fact went to %s, want %s", ids[0], id)
	}
	r = smOp(e, u.token, "memories", "create", "content", "Prefers metric units.", "agent", "bot").must(t, http.StatusCreated)
	if r.body["id"] == id {
		t.Errorf("another agent's fact merged into the default agent's")
	}
	hits := e.call(u.token, "recall", map[string]any{"query": "metric units", "agent": "bot"}).must(t, http.StatusOK)
	if n := len(list(hits.body["results"])); n != 1 {
		t.Errorf("recall for bot: %d results, want 1: %s", n, hits.raw)
	}

	// Idempotency: the replay answers the first request's status and body.
	body := map[string]any{"op": "create", "content": "Has a cat named Miso"}
	first := e.call(u.token, "memories", body, "Idempotency-Key", "cat-1").must(t, http.StatusCreated)
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("first request marked replayed")
	}
	again := e.call(u.token, "memories", body, "Idempotency-Key", "cat-1").must(t, http.StatusCreated)
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.raw) != string(first.raw) {
		t.Errorf("replay: %v %s, want %s", again.header, again.raw, first.raw)
	}
	merged := e.call(u.token, "memories", body, "Idempotency-Key", "cat-2").must(t, http.StatusOK)
	if replay := e.call(u.token, "memories", body, "Idempotency-Key", "cat-2").must(t, http.StatusOK); replay.header.Get("Idempotent-Replayed") != "true" ||
		string(replay.raw) != string(merged.raw) {
		t.Errorf("replay of a merge: %s", replay.raw)
	}
	before := smSnapshot(e, u.id)
	r = e.call(u.token, "memories", map[string]any{"op": "create", "content": "Has two cats"}, "Idempotency-Key", "cat-1").must(t, http.StatusConflict)
	if r.problemCode() != "conflict" || smSnapshot(e, u.id) != before {
		t.Errorf("same key, other body: %s", r.raw)
	}
	// Keys belong to their caller: another user's request with the key is new.
	b := e.newUser("")
	e.call(b.token, "memories", body, "Idempotency-Key", "cat-1").must(t, http.StatusCreated)
	if n := e.count("memories", "user_id = $1", b.id); n != 1 {
		t.Errorf("another user's memories: %d, want 1", n)
	}
	// A service stores for the user it names; a user may not name another.
	svc := e.serviceToken()
	r = smOp(e, svc, "memories", "create", "user_id", u.id, "content", "Lives in Lisbon").must(t, http.StatusCreated)
	if n := e.count("memories", "user_id = $1 and id = $2", u.id, r.body["id"]); n != 1 {
		t.Errorf("the service's memory is not the user's")
	}
	smOp(e, b.token, "memories", "create", "user_id", u.id, "content", "planted").must(t, http.StatusForbidden)
	if n := e.count("memories", "content = 'planted'"); n != 0 {
		t.Errorf("a refused create stored a memory")
	}
}

// memories create refuses bad input with the field's path and stores nothing.
func TestMemoriesCreateBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	before := smSnapshot(e, u.id)
	for _, c := range []struct {
		name, body, field string
		headers           []string
	}{
		{"no content", `{"op":"create"}`, "content", nil},
		{"null content", `{"op":"create","content":null}`, "content", nil},
		{"empty content", `{"op":"create","content":""}`, "content", nil},
		{"blank content", `{"op":"create","content":"  \n"}`, "content", nil},
		{"content type", `{"op":"create","content":["x"]}`, "content", nil},
		{"long content", fmt.Sprintf(`{"op":"create","content":%q}`, strings.Repeat("x", 20_001)), "content", nil},
		{"metadata array", `{"op":"create","content":"x","metadata":[]}`, "metadata", nil},
		{"metadata too big", fmt.Sprintf(`{"op":"create","content":"x","metadata":{"k":%q}}`, strings.Repeat("x", 17_000)), "metadata", nil},
		{"metadata repeated key", `{"op":"create","content":"x","metadata":{"k":1,"k":2}}`, "metadata.k", nil},
		{"ttl 0", `{"op":"create","content":"x","ttl_seconds":0}`, "ttl_seconds", nil},
		{"ttl fraction", `{"op":"create","content":"x","ttl_seconds":1.5}`, "ttl_seconds", nil},
		{"agent", `{"op":"create","content":"x","agent":"a/b"}`, "agent", nil},
		{"id", `{"op":"create","content":"x","id":"0b6e9e52-9d0c-4c61-9a51-5b3c1b2e8f10"}`, "id", nil},
		{"unknown field", `{"op":"create","content":"x","session_id":"0b6e9e52-9d0c-4c61-9a51-5b3c1b2e8f10"}`, "session_id", nil},
		{"bad key", `{"op":"create","content":"x"}`, "Idempotency-Key", []string{"Idempotency-Key", strings.Repeat("k", 256)}},
		{"nul", `{"op":"create","content":"a\u0000b"}`, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, e.call(u.token, "memories", c.body, c.headers...), http.StatusBadRequest, "invalid_request", c.field)
		})
	}
	if smSnapshot(e, u.id) != before {
		t.Fatal("a refused create stored something")
	}
}

// With the embedding provider down, memories create still stores the fact (without a vector:
// embed-pending embeds it later) and answers 201.
func TestMemoriesCreateWithoutTheEmbeddingProvider(t *testing.T) {
	t.Parallel()
	p := embeddingtest.New(t, isoProviderModel, 384)
	e := newProviderEnv(t, p)
	p.Down.Store(true)
	u := e.newUser("")
	r := smOp(e, u.token, "memories", "create", "content", "Travels to Kyoto in April").must(t, http.StatusCreated)
	if n := e.count("memories", "id = $1 and embedding is null", r.body["id"]); n != 1 {
		t.Fatalf("the memory is not stored without a vector")
	}
	p.Down.Store(false)
	if _, err := e.app.EmbedPendingRows(t.Context(), 10); err != nil {
		t.Fatal(err)
	}
	if n := e.count("memories", "id = $1 and embedding is not null", r.body["id"]); n != 1 {
		t.Errorf("embed-pending did not embed the memory")
	}
}
