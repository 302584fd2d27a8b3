package httpapi_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedWorld is a server over a database of its own (its shared memories of no tenant would
// reach every tenant-less user of the package's shared database) with shared memories written
// by a service caller: tenant A's, tenant B's and the deployment's (no tenant), and users alice
// and amy of tenant A, bob of B and carol of no tenant, each with a memory of their own.
type sharedWorld struct {
	e                            *env
	svc                          string
	alice, amy, bob, carol       user
	sharedA, sharedB, sharedNone string
	own                          map[user]string
}

// smShared creates a shared memory as the service caller, in tenant (nil: no tenant).
func smShared(e *env, svc string, tenant *string, content string) response {
	e.t.Helper()
	body := map[string]any{"op": "create", "shared": true, "content": content}
	if tenant != nil {
		body["tenant_id"] = *tenant
	}
	return e.call(svc, "memories", body)
}

func newSharedWorld(t *testing.T) *sharedWorld {
	t.Helper()
	e := newEnv(t, true)
	w := &sharedWorld{e: e, svc: e.serviceToken(), alice: e.newUser("A"), amy: e.newUser("A"), bob: e.newUser("B"),
		carol: e.newUser(""), own: map[user]string{}}
	a, b := "A", "B"
	w.sharedA = str(smShared(e, w.svc, &a, "The office is closed on Fridays.").must(t, http.StatusCreated).body["id"])
	w.sharedB = str(smShared(e, w.svc, &b, "The office is closed on Mondays.").must(t, http.StatusCreated).body["id"])
	w.sharedNone = str(smShared(e, w.svc, nil, "The office is closed on public holidays.").must(t, http.StatusCreated).body["id"])
	for _, u := range []user{w.alice, w.amy, w.bob, w.carol} {
		w.own[u] = str(smOp(e, u.token, "memories", "create", "content", "I visit the office on Fridays "+u.id.String()).
			must(t, http.StatusCreated).body["id"])
	}
	return w
}

// recalled is what a recall (or get-context's memories) answered: each memory's id and its
// shared field as the JSON carries it ("true", or "absent").
func recalled(t *testing.T, results []any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range results {
		m := obj(r)
		if m["source"] == "message" {
			continue
		}
		switch v, ok := m["shared"]; {
		case !ok:
			out[str(m["id"])] = "absent"
		case v == true:
			out[str(m["id"])] = "true"
		default:
			t.Errorf("result %v: shared %v, want true or absent", m["id"], v)
		}
	}
	return out
}

// Recall and get-context give each user their own memories and their tenant's shared ones,
// marked "shared": true (absent on their own): alice of tenant A never recalls B's shared
// memory, the deployment's (written without a tenant: only the users without a tenant recall
// it), nor amy's memory; include_shared false leaves the shared ones out. A service caller
// acting for a user recalls as that user in the tenant it names.
func TestSharedMemoriesAreRecalledByTheirTenant(t *testing.T) {
	t.Parallel()
	w := newSharedWorld(t)
	e := w.e
	query := "office closed Fridays"
	for _, source := range []string{"memories", "all"} {
		for _, c := range []struct {
			name   string
			u      user
			shared string
		}{{"alice of A", w.alice, w.sharedA}, {"amy of A", w.amy, w.sharedA}, {"bob of B", w.bob, w.sharedB},
			{"carol of no tenant", w.carol, w.sharedNone}} {
			r := e.call(c.u.token, "recall", map[string]any{"query": query, "source": source, "k": 50}).must(t, http.StatusOK)
			want := map[string]string{w.own[c.u]: "absent", c.shared: "true"}
			if got := recalled(t, list(r.body["results"])); !maps.Equal(got, want) {
				t.Errorf("%s recalls (%s): %v, want %v", c.name, source, got, want)
			}
			r = e.call(c.u.token, "recall", map[string]any{"query": query, "source": source, "k": 50, "include_shared": false}).must(t, http.StatusOK)
			if got := recalled(t, list(r.body["results"])); !maps.Equal(got, map[string]string{w.own[c.u]: "absent"}) {
				t.Errorf("%s recalls (%s) without shared: %v, want only their own", c.name, source, got)
			}
		}
	}
	// get-context's memories.
	for _, shared := range []bool{true, false} {
		r := e.call(w.alice.token, "get-context", map[string]any{"session_id": uuid.New(), "query": query, "recall_k": 10,
			"include_shared": shared}).must(t, http.StatusOK)
		want := map[string]string{w.own[w.alice]: "absent"}
		if shared {
			want[w.sharedA] = "true"
		}
		if got := recalled(t, list(r.body["memories"])); !maps.Equal(got, want) {
			t.Errorf("get-context as alice, include_shared %v: %v, want %v", shared, got, want)
		}
	}
	r := e.call(w.alice.token, "get-context", map[string]any{"session_id": uuid.New(), "query": query}).must(t, http.StatusOK)
	if got := recalled(t, list(r.body["memories"])); got[w.sharedA] != "true" {
		t.Errorf("get-context as alice by default: %v, want tenant A's shared memory", got)
	}
	// A service caller acting for alice: in tenant A as she is, or in no tenant (where she has
	// no memory, and the deployment's shared memory is what its users recall).
	r = e.call(w.svc, "recall", map[string]any{"query": query, "user_id": w.alice.id, "tenant_id": "A"}).must(t, http.StatusOK)
	if got := recalled(t, list(r.body["results"])); !maps.Equal(got, map[string]string{w.own[w.alice]: "absent", w.sharedA: "true"}) {
		t.Errorf("service for alice in A: %v", got)
	}
	r = e.call(w.svc, "recall", map[string]any{"query": query, "user_id": w.alice.id}).must(t, http.StatusOK)
	if got := recalled(t, list(r.body["results"])); !maps.Equal(got, map[string]string{w.sharedNone: "true"}) {
		t.Errorf("service for alice without a tenant: %v, want the deployment's shared memory alone", got)
	}
	for _, body := range []map[string]any{{"query": query, "include_shared": "no"}, {"query": query, "include_shared": nil, "x": 1}} {
		if r := e.call(w.alice.token, "recall", body); r.status != http.StatusBadRequest {
			t.Errorf("recall %v: %d %s, want 400", body, r.status, r.raw)
		}
	}
}

// The memories function serves shared memories to service callers with shared: true: created
// without user_id in a tenant or in none, merged only with the same scope's, listed, read,
// changed and deleted within their tenant. Users list and read their own tenant's; every write
// of theirs is forbidden (403) and changes nothing, and another tenant's shared memory is not
// found (404) for them.
func TestSharedMemoriesAreWrittenByServiceCallersOnly(t *testing.T) {
	t.Parallel()
	w := newSharedWorld(t)
	e := w.e
	a := "A"
	again := smShared(e, w.svc, &a, "the office is closed on fridays").must(t, http.StatusOK)
	if again.body["merged"] != true || str(again.body["id"]) != w.sharedA {
		t.Errorf("A's shared fact again: %s, want merged into %s", again.raw, w.sharedA)
	}
	// alice's own same fact is hers; B's and the deployment's shared scopes keep their own.
	if r := smOp(e, w.alice.token, "memories", "create", "content", "The office is closed on Fridays.").must(t, http.StatusCreated); str(r.body["id"]) == w.sharedA {
		t.Errorf("alice's same fact went into the shared memory: %s", r.raw)
	}
	if r := smShared(e, w.svc, nil, "The office is closed on Fridays.").must(t, http.StatusCreated); str(r.body["id"]) == w.sharedA {
		t.Errorf("the deployment's same fact went into A's shared memory: %s", r.raw)
	}

	listed := func(token string, kv ...any) []string {
		t.Helper()
		r := smOp(e, token, "memories", "list", kv...).must(t, http.StatusOK)
		var ids []string
		for _, it := range list(r.body["items"]) {
			ids = append(ids, str(obj(it)["id"]))
			if shared := obj(it)["shared"]; (shared == true) != (len(kv) > 0 && kv[1] == true) {
				t.Errorf("list %v: item %v has shared %v", kv, obj(it)["id"], shared)
			}
		}
		return ids
	}
	if got := listed(w.svc, "shared", true, "tenant_id", "A"); len(got) != 1 || got[0] != w.sharedA {
		t.Errorf("service lists A's shared: %v, want %s", got, w.sharedA)
	}
	if got := listed(w.svc, "shared", true); len(got) != 2 || !slices.Contains(got, w.sharedNone) {
		t.Errorf("service lists the deployment's shared: %v, want two with %s", got, w.sharedNone)
	}
	if got := listed(w.alice.token, "shared", true); len(got) != 1 || got[0] != w.sharedA {
		t.Errorf("alice lists her tenant's shared: %v, want %s", got, w.sharedA)
	}
	if got := listed(w.alice.token); len(got) != 2 || slices.Contains(got, w.sharedA) {
		t.Errorf("alice lists her memories: %v, want her two own", got)
	}

	// Reading: alice reads A's shared memory, marked; not B's, not the deployment's.
	g := smOp(e, w.alice.token, "memories", "get", "id", w.sharedA).must(t, http.StatusOK)
	if g.body["shared"] != true || g.body["content"] != "The office is closed on Fridays." {
		t.Errorf("alice gets A's shared: %s", g.raw)
	}
	for _, c := range []struct {
		u  user
		id string
	}{{w.alice, w.sharedB}, {w.alice, w.sharedNone}, {w.carol, w.sharedA}, {w.bob, w.sharedA}} {
		for _, body := range []map[string]any{{"op": "get", "id": c.id}, {"op": "update", "id": c.id, "content": "x"},
			{"op": "delete", "id": c.id}} {
			if r := e.call(c.u.token, "memories", body); r.status != http.StatusNotFound || r.problemCode() != "not_found" {
				t.Errorf("%s of %s by a user of another tenant: %d %s, want 404", body["op"], c.id, r.status, r.raw)
			}
		}
	}

	// Every write of a user is refused, and changes nothing.
	before := e.count("memories", "user_id = ''")
	var rowBefore smMemoryRow = smReadMemory(e, w.sharedA)
	for _, body := range []map[string]any{
		{"op": "create", "shared": true, "content": "Planted by a user."},
		{"op": "create", "shared": true, "content": "Planted by a user.", "tenant_id": "A"},
		{"op": "update", "id": w.sharedA, "content": "The office is open on Fridays."},
		{"op": "update", "id": w.sharedA, "shared": true, "metadata": map[string]any{"x": 1}},
		{"op": "delete", "id": w.sharedA},
		{"op": "delete", "id": w.sharedA, "shared": true},
	} {
		r := e.call(w.alice.token, "memories", body)
		if r.status != http.StatusForbidden || r.problemCode() != "forbidden" {
			t.Errorf("alice %v: %d %s, want 403 forbidden", body, r.status, r.raw)
		}
	}
	// A service acting for alice is alice: it may not change the shared memory either.
	if r := e.call(w.svc, "memories", map[string]any{"op": "delete", "id": w.sharedA, "user_id": w.alice.id, "tenant_id": "A"}); r.status != http.StatusForbidden {
		t.Errorf("a service acting for alice deletes A's shared: %d %s, want 403", r.status, r.raw)
	}
	if after := e.count("memories", "user_id = ''"); after != before {
		t.Errorf("shared memories: %d before the refused writes, %d after", before, after)
	}
	if row := smReadMemory(e, w.sharedA); row != rowBefore {
		t.Errorf("A's shared memory changed under the refused writes: %+v, was %+v", row, rowBefore)
	}
	// A shared memory has no user: naming one is a bad request.
	if r := e.call(w.svc, "memories", map[string]any{"op": "create", "shared": true, "content": "x", "user_id": w.alice.id}); r.status != http.StatusBadRequest || !namesField(r, "user_id") {
		t.Errorf("shared create naming a user: %d %s, want 400 naming user_id", r.status, r.raw)
	}
	if r := e.call(w.svc, "memories", map[string]any{"op": "create", "content": "x"}); r.status != http.StatusBadRequest || !namesField(r, "user_id") {
		t.Errorf("a service's create of neither a user's nor a shared memory: %d %s, want 400 naming user_id", r.status, r.raw)
	}

	// The service changes and deletes it in its tenant only.
	for _, tenant := range []any{"B", nil} {
		body := map[string]any{"op": "update", "id": w.sharedA, "shared": true, "content": "The office is open on Fridays."}
		if tenant != nil {
			body["tenant_id"] = tenant
		}
		if r := e.call(w.svc, "memories", body); r.status != http.StatusNotFound {
			t.Errorf("update of A's shared in tenant %v: %d %s, want 404", tenant, r.status, r.raw)
		}
	}
	u := e.call(w.svc, "memories", map[string]any{"op": "update", "id": w.sharedA, "shared": true, "tenant_id": "A",
		"content": "The office is open on Fridays."}).must(t, http.StatusOK)
	if u.body["shared"] != true || u.body["content"] != "The office is open on Fridays." {
		t.Errorf("service updates A's shared: %s", u.raw)
	}
	r := e.call(w.amy.token, "recall", map[string]any{"query": "office open Fridays"}).must(t, http.StatusOK)
	if got := recalled(t, list(r.body["results"])); got[w.sharedA] != "true" {
		t.Errorf("amy after the update: %v", got)
	}
	e.call(w.svc, "memories", map[string]any{"op": "delete", "id": w.sharedA, "shared": true, "tenant_id": "A"}).must(t, http.StatusOK)
	r = e.call(w.amy.token, "recall", map[string]any{"query": "office open Fridays"}).must(t, http.StatusOK)
	if got := recalled(t, list(r.body["results"])); len(got) != 1 || got[w.own[w.amy]] != "absent" {
		t.Errorf("amy after the deletion: %v, want her own alone", got)
	}
}

// forget-user never erases shared memories: a user erasing themself, and a service erasing a
// user in one tenant or in all, leave every shared memory, which the tenant's other users
// still recall.
func TestForgetUserKeepsSharedMemories(t *testing.T) {
	t.Parallel()
	w := newSharedWorld(t)
	e := w.e
	before := e.count("memories", "user_id = ''")
	if before != 3 {
		t.Fatalf("%d shared memories, want 3", before)
	}
	e.call(w.alice.token, "forget-user", map[string]any{}).must(t, http.StatusOK)
	e.call(w.svc, "forget-user", map[string]any{"user_id": w.bob.id, "tenant_id": "B"}).must(t, http.StatusOK)
	e.call(w.svc, "forget-user", map[string]any{"user_id": w.carol.id}).must(t, http.StatusOK)
	if r := e.call(w.svc, "forget-user", map[string]any{"user_id": ""}); r.status != http.StatusBadRequest {
		t.Errorf("forget-user of the empty user id: %d %s, want 400", r.status, r.raw)
	}
	if after := e.count("memories", "user_id = ''"); after != before {
		t.Errorf("shared memories after the erasures: %d, want %d", after, before)
	}
	if n := e.count("memories", "user_id in ($1, $2, $3)", w.alice.id.String(), w.bob.id.String(), w.carol.id.String()); n != 0 {
		t.Errorf("%d memories of the erased users remain", n)
	}
	r := e.call(w.amy.token, "recall", map[string]any{"query": "office closed Fridays"}).must(t, http.StatusOK)
	if got := recalled(t, list(r.body["results"])); got[w.sharedA] != "true" {
		t.Errorf("amy after alice's erasure: %v, want A's shared memory", got)
	}
}

// The MCP tools mark shared memories and take include_shared; forget_memory refuses a shared
// one.
func TestMCPToolsMarkSharedMemories(t *testing.T) {
	t.Parallel()
	w := newSharedWorld(t)
	ts := httptest.NewServer(w.e.h)
	t.Cleanup(ts.Close)
	cs := mcpSession(t, ts.URL+"/v1/mcp", w.alice.token)
	out := okTool(t, cs, "recall_memory", map[string]any{"query": "office closed Fridays"})
	if got := recalled(t, list(out["results"])); !maps.Equal(got, map[string]string{w.own[w.alice]: "absent", w.sharedA: "true"}) {
		t.Errorf("recall_memory: %v", got)
	}
	out = okTool(t, cs, "recall_memory", map[string]any{"query": "office closed Fridays", "include_shared": false})
	if got := recalled(t, list(out["results"])); !maps.Equal(got, map[string]string{w.own[w.alice]: "absent"}) {
		t.Errorf("recall_memory without shared: %v", got)
	}
	out = okTool(t, cs, "get_context", map[string]any{"session_id": uuid.NewString(), "query": "office closed Fridays"})
	if got := recalled(t, list(out["memories"])); got[w.sharedA] != "true" {
		t.Errorf("get_context: %v", got)
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "forget_memory", Arguments: map[string]any{"id": w.sharedA}})
	if err == nil || w.e.count("memories", "id = $1", w.sharedA) != 1 {
		t.Errorf("forget_memory of A's shared memory: %v; want it refused and the memory kept", err)
	}
}
