package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
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

// list's items and update's answer have exactly the contract's fields, an agent-less memory's
// agent is null, and an update to a fact another memory holds is 409 conflict without the
// content; the rules behind them are tested on the use cases (shared/app
// TestListMemoriesPagesAndKeepsOneRowPerFact, TestListMemoriesOfAnAgent, TestUpdateMemory,
// TestUpdateMemoryToAnExistingFact).
func TestMemoriesAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	ids := smRemember(e, u.token, "", smFact("Likes tea", "kind", "pref"), smFact("Lives in Oslo"))
	e.exec(`insert into agentmem.memories (user_id, agent, content, content_key, expires_at)
		values ($1, '', 'shared fact', 'shared', now() + interval '1 day')`, u.id)
	fields := func(m map[string]any) []string {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys
	}
	want := []string{"agent", "content", "created_at", "expires_at", "id", "metadata", "updated_at"}
	r := smOp(e, u.token, "memories", "list").must(t, http.StatusOK)
	items := list(r.body["items"])
	if len(items) != 3 || r.body["next_cursor"] != nil {
		t.Fatalf("listing %s, want three memories", r.raw)
	}
	for _, it := range items {
		if got := fields(obj(it)); !slices.Equal(got, want) {
			t.Errorf("item fields %v, want %v", got, want)
		}
		if v, ok := obj(it)["agent"]; obj(it)["content"] == "shared fact" && (!ok || v != nil) {
			t.Errorf("the agent-less memory lists agent %v, want null", v)
		}
	}
	r = smOp(e, u.token, "memories", "update", "id", ids[1], "content", "Lives in Bergen").must(t, http.StatusOK)
	if got := fields(r.body); !slices.Equal(got, want) || r.body["content"] != "Lives in Bergen" {
		t.Errorf("update answered %s", r.raw)
	}
	r = smOp(e, u.token, "memories", "update", "id", ids[1], "content", "likes TEA.")
	wantProblem(t, r, http.StatusConflict, "conflict")
	if !strings.Contains(str(r.body["detail"]), ids[0]) || strings.Contains(string(r.raw), "Bergen") || strings.Contains(string(r.raw), "TEA") || strings.Contains(string(r.raw), "Likes tea") {
		t.Errorf("conflict answered %s", r.raw)
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

// The memories function's body decodes into the operation's input: a missing or unknown op, an
// unknown field (an agent where a memory id names the memory), a value of the wrong JSON type or
// trailing data is 400 invalid_request and changes nothing; the operations' own ranges are
// tested on the use cases (shared/app TestMemoriesRefuseBadInput).
func TestMemoriesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	ids := smRemember(e, u.token, "", smFact("one"), smFact("two"))
	id := ids[0]
	before := smSnapshot(e, u.id)
	cases := []struct {
		name  string
		body  string
		field string
	}{
		{"no op", `{"id":"` + id + `"}`, "op"},
		{"unknown op", `{"op":"merge"}`, "op"},
		{"list unknown field", `{"op":"list","query":"x"}`, "query"},
		{"get agent", fmt.Sprintf(`{"op":"get","id":%q,"agent":"default"}`, id), "agent"},
		{"delete id type", `{"op":"delete","id":1}`, "id"},
		{"update content type", fmt.Sprintf(`{"op":"update","id":%q,"content":5}`, id), "content"},
		{"update null content", fmt.Sprintf(`{"op":"update","id":%q,"content":null}`, id), "content"},
		{"update agent", fmt.Sprintf(`{"op":"update","id":%q,"content":"new","agent":"bot"}`, id), "agent"},
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
