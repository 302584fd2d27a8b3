package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
)

// umUserAs mints a token for an existing user id in a tenant, for the same user in two tenants.
func umUserAs(e *env, id uuid.UUID, tenant string) user {
	e.t.Helper()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: id.String(), TenantID: tenant})
	if err != nil {
		e.t.Fatal(err)
	}
	return user{id: id, tenant: tenant, token: tok}
}

// umSnapshot is everything the user-memory function shows a user, to compare before and after.
func umSnapshot(e *env, u user) string {
	e.t.Helper()
	r := e.call(u.token, "user-memory", map[string]any{"op": "list"}).must(e.t, http.StatusOK)
	return string(r.raw)
}

// umJSONEqual compares two JSON texts as values; numbers compare exactly (as rationals), never
// through float64.
func umJSONEqual(a, b []byte) (bool, error) {
	var va, vb any
	for _, x := range []struct {
		raw []byte
		dst *any
	}{{a, &va}, {b, &vb}} {
		d := json.NewDecoder(bytes.NewReader(x.raw))
		d.UseNumber()
		if err := d.Decode(x.dst); err != nil {
			return false, err
		}
	}
	return umValueEqual(va, vb), nil
}

func umValueEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, ok1 := new(big.Rat).SetString(string(x))
		ry, ok2 := new(big.Rat).SetString(string(y))
		return ok1 && ok2 && rx.Cmp(ry) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !umValueEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !umValueEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func TestUserMemoryLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")

	r := e.call(u.token, "user-memory", map[string]any{"op": "get", "key": "profile"})
	wantProblem(t, r, http.StatusNotFound, "not_found", "")

	r = e.call(u.token, "user-memory", map[string]any{"op": "set", "key": "profile", "value": map[string]any{"name": "Ada"}}).
		must(t, http.StatusCreated)
	if r.body["created"] != true || str(r.body["key"]) != "profile" || obj(r.body["value"])["name"] != "Ada" || str(r.body["updated_at"]) == "" {
		t.Fatalf("set new: %s", r.raw)
	}
	first := str(r.body["updated_at"])

	r = e.call(u.token, "user-memory", map[string]any{"op": "set", "key": "profile", "value": map[string]any{"name": "Ada L."}}).
		must(t, http.StatusOK)
	if r.body["created"] != false || obj(r.body["value"])["name"] != "Ada L." || str(r.body["updated_at"]) < first {
		t.Fatalf("set replace: %s", r.raw)
	}
	if n := e.count("user_memory", "user_id = $1", u.id); n != 1 {
		t.Fatalf("%d rows after replacing a key, want 1", n)
	}

	r = e.call(u.token, "user-memory", map[string]any{"op": "get", "key": "profile"}).must(t, http.StatusOK)
	if len(r.body) != 3 || str(r.body["key"]) != "profile" || obj(r.body["value"])["name"] != "Ada L." {
		t.Fatalf("get: %s", r.raw)
	}

	for _, k := range []string{"b", "a", "B", "é", "a b"} {
		e.call(u.token, "user-memory", map[string]any{"op": "set", "key": k, "value": map[string]any{"k": k}}).must(t, http.StatusCreated)
	}
	r = e.call(u.token, "user-memory", map[string]any{"op": "list"}).must(t, http.StatusOK)
	var keys []string
	for _, it := range list(r.body["items"]) {
		keys = append(keys, str(obj(it)["key"]))
		if len(obj(it)) != 3 || obj(it)["value"] == nil || str(obj(it)["updated_at"]) == "" {
			t.Errorf("list item %v", it)
		}
	}
	if want := "B|a|a b|b|profile|é"; strings.Join(keys, "|") != want {
		t.Fatalf("list keys %q, want %s", keys, want)
	}

	r = e.call(u.token, "user-memory", map[string]any{"op": "delete", "key": "profile"}).must(t, http.StatusOK)
	if r.body["deleted"] != float64(1) {
		t.Fatalf("delete: %s", r.raw)
	}
	wantProblem(t, e.call(u.token, "user-memory", map[string]any{"op": "get", "key": "profile"}), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.call(u.token, "user-memory", map[string]any{"op": "delete", "key": "profile"}), http.StatusNotFound, "not_found", "")

	r = e.call(u.token, "user-memory", map[string]any{"op": "clear"}).must(t, http.StatusOK)
	if r.body["deleted"] != float64(5) {
		t.Fatalf("clear: %s", r.raw)
	}
	r = e.call(u.token, "user-memory", map[string]any{"op": "list"}).must(t, http.StatusOK)
	if items, ok := r.body["items"].([]any); !ok || len(items) != 0 {
		t.Fatalf("list after clear: %s", r.raw)
	}
	r = e.call(u.token, "user-memory", map[string]any{"op": "clear"}).must(t, http.StatusOK)
	if r.body["deleted"] != float64(0) {
		t.Fatalf("second clear: %s", r.raw)
	}
}

func TestUserMemoryValueRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	value := `{"big": 12345678901234567890, "neg": -98765432109876543210.5, "price": 1.10,
		"tiny": 1.000000000000000000000000000001, "exp": 6.02e23, "zero": 0, "t": true, "f": false,
		"nil": null, "s": "Ünïcödé 🙂 \"quoted\" \\ \n tab\t", "arr": [1, "two", [3.30, {"four": 4}], [], {}],
		"deep": {"a": {"b": {"c": {"d": {"e": [12345678901234567891]}}}}}, "": "empty key"}`
	body := `{"op": "set", "key": "facts", "value": ` + value + `}`

	r := e.call(u.token, "user-memory", body).must(t, http.StatusCreated)
	check := func(what string, raw []byte) {
		t.Helper()
		var env struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		eq, err := umJSONEqual([]byte(value), env.Value)
		if err != nil || !eq {
			t.Fatalf("%s: value %s is not %s (%v)", what, env.Value, value, err)
		}
		// The digits themselves, not a float64 rounding of them.
		for _, lit := range []string{"12345678901234567890", "-98765432109876543210.5", "1.10", "3.30",
			"1.000000000000000000000000000001", "12345678901234567891"} {
			if !bytes.Contains(env.Value, []byte(lit)) {
				t.Errorf("%s: %s lost %s", what, env.Value, lit)
			}
		}
	}
	check("set", r.raw)
	check("get", e.call(u.token, "user-memory", map[string]any{"op": "get", "key": "facts"}).must(t, http.StatusOK).raw)

	r = e.call(u.token, "user-memory", map[string]any{"op": "list"}).must(t, http.StatusOK)
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(r.raw, &l); err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %s", r.raw)
	}
	check("list", l.Items[0])

	// In the database the numbers are jsonb numerics with every digit.
	conn := e.adminConn()
	defer conn.Close(context.Background())
	var bigNum, price string
	if err := conn.QueryRow(context.Background(), `select value->>'big', value->>'price' from agentmem.user_memory
		where user_id = $1 and key = 'facts'`, u.id).Scan(&bigNum, &price); err != nil {
		t.Fatal(err)
	}
	if bigNum != "12345678901234567890" || price != "1.10" {
		t.Fatalf("stored big=%s price=%s", bigNum, price)
	}
}

func TestUserMemoryLimitsAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	key := strings.Repeat("é", 128) // 128 characters, 256 bytes
	e.call(u.token, "user-memory", map[string]any{"op": "set", "key": key, "value": map[string]any{}}).must(t, http.StatusCreated)
	// A value of exactly 64 KiB once compacted; spaces around it do not count.
	pad := 64<<10 - len(`{"p":""}`)
	value := `{ "p" : "` + strings.Repeat("x", pad) + `" }`
	e.call(u.token, "user-memory", `{"op":"set","key":"big","value":`+value+`}`).must(t, http.StatusCreated)
	r := e.call(u.token, "user-memory", map[string]any{"op": "get", "key": key}).must(t, http.StatusOK)
	if str(r.body["key"]) != key {
		t.Fatalf("get long key: %s", r.raw)
	}
	// Deep nesting within the size limit round-trips.
	deep := `{"a":` + strings.Repeat("[", 5000) + "7" + strings.Repeat("]", 5000) + `}`
	e.call(u.token, "user-memory", `{"op":"set","key":"deep","value":`+deep+`}`).must(t, http.StatusCreated)
	r = e.call(u.token, "user-memory", map[string]any{"op": "get", "key": "deep"}).must(t, http.StatusOK)
	var got struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(r.raw, &got); err != nil || string(got.Value) != deep {
		t.Fatalf("deep value came back as %.80s… (%v)", got.Value, err)
	}
}

// user-memory's body decodes into the operation's input: a missing or unknown op, an unknown
// field, a value of the wrong JSON type, JSON too deep or not one object is 400 invalid_request
// (an unpaired surrogate named by its path), acting for another user is 403, and nothing changes;
// the keys' and values' own rules are tested on the use cases (shared/app
// TestUserMemoryRefusesBadInput).
func TestUserMemoryBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	e.call(u.token, "user-memory", map[string]any{"op": "set", "key": "k", "value": map[string]any{"v": 1}}).must(t, http.StatusCreated)
	before := umSnapshot(e, u)

	tests := []struct {
		name, body, field string
	}{
		{"no op", `{"key":"k"}`, "op"},
		{"unknown op", `{"op":"upsert","key":"k","value":{}}`, "op"},
		{"op in the wrong case", `{"op":"SET","key":"k","value":{}}`, "op"},
		{"op not a string", `{"op":1}`, "op"},
		{"key not a string", `{"op":"get","key":5}`, "key"},
		{"null value", `{"op":"set","key":"k","value":null}`, "value"},
		{"unpaired surrogate in value", `{"op":"set","key":"k","value":{"s":"\ud800"}}`, "value.s"},
		{"unknown field", `{"op":"set","key":"k","value":{},"vaule":{}}`, "vaule"},
		{"nesting deeper than JSON decoding allows", `{"op":"set","key":"k","value":{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, ""},
		{"malformed JSON", `{"op":"set","key":"k","value":{`, ""},
		{"trailing data", `{"op":"clear"} {"op":"clear"}`, ""},
		{"not an object", `["clear"]`, ""},
		{"service user_id from a user", `{"op":"clear","user_id":"` + uuid.NewString() + `"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(u.token, "user-memory", tt.body)
			if tt.name == "service user_id from a user" {
				wantProblem(t, r, http.StatusForbidden, "forbidden", "")
			} else {
				wantProblem(t, r, http.StatusBadRequest, "invalid_request", tt.field)
			}
		})
	}
	if after := umSnapshot(e, u); after != before {
		t.Fatalf("bad requests changed the memory:\n%s\n%s", before, after)
	}
	if n := e.count("user_memory", "user_id = $1", u.id); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
	// A field set to null counts as absent, as everywhere in the API.
	r := e.call(u.token, "user-memory", `{"op":"get","key":"k","value":null,"user_id":null}`).must(t, http.StatusOK)
	if obj(r.body["value"])["v"] != float64(1) {
		t.Fatalf("get with null fields: %s", r.raw)
	}
}

func TestUserMemoryConcurrentSetCreatesOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	const n = 12
	createdOnce(t, n, func(i int) response {
		return e.call(u.token, "user-memory", map[string]any{"op": "set", "key": "race", "value": map[string]any{"i": i}})
	})
	if c := e.count("user_memory", "user_id = $1", u.id); c != 1 {
		t.Fatalf("%d rows, want 1", c)
	}
}

func TestUserMemoryIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a := e.newUser("t1")
	b := e.newUser("t1")
	aOther := umUserAs(e, a.id, "t2") // the same user id in another tenant
	aNoTenant := umUserAs(e, a.id, "")
	e.call(a.token, "user-memory", map[string]any{"op": "set", "key": "secret", "value": map[string]any{"v": "a"}}).must(t, http.StatusCreated)
	before := umSnapshot(e, a)

	for name, other := range map[string]user{"other user": b, "other tenant": aOther, "no tenant": aNoTenant} {
		t.Run(name, func(t *testing.T) {
			wantProblem(t, e.call(other.token, "user-memory", map[string]any{"op": "get", "key": "secret"}), http.StatusNotFound, "not_found", "")
			wantProblem(t, e.call(other.token, "user-memory", map[string]any{"op": "delete", "key": "secret"}), http.StatusNotFound, "not_found", "")
			r := e.call(other.token, "user-memory", map[string]any{"op": "list"}).must(t, http.StatusOK)
			if len(list(r.body["items"])) != 0 {
				t.Fatalf("list shows another's keys: %s", r.raw)
			}
			r = e.call(other.token, "user-memory", map[string]any{"op": "clear"}).must(t, http.StatusOK)
			if r.body["deleted"] != float64(0) {
				t.Fatalf("clear: %s", r.raw)
			}
		})
	}
	// B's own key of the same name is B's own row.
	e.call(b.token, "user-memory", map[string]any{"op": "set", "key": "secret", "value": map[string]any{"v": "b"}}).must(t, http.StatusCreated)
	e.call(aOther.token, "user-memory", map[string]any{"op": "set", "key": "secret", "value": map[string]any{"v": "t2"}}).must(t, http.StatusCreated)
	if after := umSnapshot(e, a); after != before {
		t.Fatalf("others changed A's memory:\n%s\n%s", before, after)
	}
	r := e.call(aOther.token, "user-memory", map[string]any{"op": "get", "key": "secret"}).must(t, http.StatusOK)
	if obj(r.body["value"])["v"] != "t2" {
		t.Fatalf("tenant t2 reads %s", r.raw)
	}

	// A service caller acts for the user it names, in the tenant it names.
	svc := e.serviceToken()
	r = e.call(svc, "user-memory", map[string]any{"op": "get", "key": "secret", "user_id": a.id.String(), "tenant_id": "t1"}).must(t, http.StatusOK)
	if obj(r.body["value"])["v"] != "a" {
		t.Fatalf("service get: %s", r.raw)
	}
	wantProblem(t, e.call(svc, "user-memory", map[string]any{"op": "get", "key": "secret", "user_id": a.id.String()}), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.call(svc, "user-memory", map[string]any{"op": "list"}), http.StatusBadRequest, "invalid_request", "user_id")
	e.call(svc, "user-memory", map[string]any{"op": "set", "key": "by-service", "value": map[string]any{}, "user_id": a.id.String(), "tenant_id": "t1"}).must(t, http.StatusCreated)
	e.call(a.token, "user-memory", map[string]any{"op": "get", "key": "by-service"}).must(t, http.StatusOK)

	// A user may name themself, never another.
	e.call(a.token, "user-memory", map[string]any{"op": "list", "user_id": a.id.String(), "tenant_id": "t1"}).must(t, http.StatusOK)
	wantProblem(t, e.call(a.token, "user-memory", map[string]any{"op": "list", "user_id": b.id.String()}), http.StatusForbidden, "forbidden", "")
	wantProblem(t, e.call(a.token, "user-memory", map[string]any{"op": "list", "tenant_id": "t2"}), http.StatusForbidden, "forbidden", "")
}

func TestFurtherFunctionsNeedAToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	for _, fn := range []string{"user-memory", "user-state", "notes"} {
		wantProblem(t, e.call("", fn, `{"op":"nonsense"`), http.StatusUnauthorized, "unauthenticated", "")
		wantProblem(t, e.call("not-a-jwt", fn, map[string]any{"op": "clear"}), http.StatusUnauthorized, "unauthenticated", "")
	}
}

// TestGetContextShowsUserMemoryStateAndNotes checks that what these functions store is what
// get-context gives an agent: the user's key/value memory and state, and the notes of the agent
// asked for only.
func TestGetContextShowsUserMemoryStateAndNotes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("acme")
	e.call(u.token, "user-memory", `{"op":"set","key":"units","value":{"system":"metric","precision":12345678901234567890}}`).must(t, http.StatusCreated)
	e.call(u.token, "user-memory", map[string]any{"op": "set", "key": "name", "value": map[string]any{"first": "Ada"}}).must(t, http.StatusCreated)
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "halted"}).must(t, http.StatusCreated)
	notes := "# Ada\n\n## Preferences\n- metric\n"
	e.call(u.token, "notes", map[string]any{"op": "overwrite", "agent": "support-bot", "content": notes}).must(t, http.StatusCreated)

	session := uuid.NewString()
	r := e.call(u.token, "get-context", map[string]any{"session_id": session, "agent": "support-bot"}).must(t, http.StatusOK)
	um := obj(r.body["user_memory"])
	if len(um) != 2 || obj(um["units"])["system"] != "metric" || obj(um["name"])["first"] != "Ada" {
		t.Fatalf("user_memory: %s", r.raw)
	}
	if !bytes.Contains(r.raw, []byte("12345678901234567890")) {
		t.Fatalf("get-context rounded a number: %s", r.raw)
	}
	if str(r.body["state"]) != "halted" || str(r.body["notes"]) != notes {
		t.Fatalf("state or notes: %s", r.raw)
	}

	// Another agent of the same user: the same key/value memory and state, no notes.
	r = e.call(u.token, "get-context", map[string]any{"session_id": session, "agent": "other"}).must(t, http.StatusOK)
	if len(obj(r.body["user_memory"])) != 2 || str(r.body["state"]) != "halted" || r.body["notes"] != nil {
		t.Fatalf("other agent: %s", r.raw)
	}

	// Another user sees none of it.
	v := e.newUser("acme")
	r = e.call(v.token, "get-context", map[string]any{"session_id": session, "agent": "support-bot"}).must(t, http.StatusOK)
	if len(obj(r.body["user_memory"])) != 0 || r.body["state"] != nil || r.body["notes"] != nil {
		t.Fatalf("another user: %s", r.raw)
	}

	// After deletion get-context follows.
	e.call(u.token, "user-state", map[string]any{"op": "delete"}).must(t, http.StatusOK)
	e.call(u.token, "notes", map[string]any{"op": "clear", "agent": "support-bot"}).must(t, http.StatusOK)
	e.call(u.token, "user-memory", map[string]any{"op": "delete", "key": "units"}).must(t, http.StatusOK)
	r = e.call(u.token, "get-context", map[string]any{"session_id": session, "agent": "support-bot"}).must(t, http.StatusOK)
	if len(obj(r.body["user_memory"])) != 1 || r.body["state"] != nil || r.body["notes"] != nil {
		t.Fatalf("after deletes: %s", r.raw)
	}
}
