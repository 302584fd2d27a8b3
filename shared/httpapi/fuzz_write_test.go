package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The operations that write, fuzzed through the handler over the real database as the other
// function-level targets are, with one more property: a refused request (any 4xx) changes no
// row of the caller, and an accepted one answers what it did.

// userTables are the tables that hold a user's rows, which a refused write must leave as they
// were.
var userTables = []string{"sessions", "messages", "memories", "active_sessions", "idempotency_keys", "jobs",
	"session_summaries"}

// adminConn is a superuser connection to the fuzz database, for rowVersions.
func (ft *fuzzTarget) adminConn(f *testing.F) *pgx.Conn {
	conn, err := pgx.Connect(context.Background(), ft.dbURL)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// rowVersions is a fingerprint of every row of the fuzz user, by table: each row's place and
// the transaction that wrote it, so an insert, an update or a delete of any of them changes it.
func (ft *fuzzTarget) rowVersions(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	ft.app.WaitEmbedded() // vectors written after a commit are not the request's change
	var q []string
	for _, table := range userTables {
		q = append(q, `select '`+table+`', coalesce(string_agg(x.ctid::text || x.xmin::text, ',' order by x.ctid), '')
			from agentmem.`+table+` x where user_id = $1`)
	}
	rows, err := conn.Query(context.Background(), strings.Join(q, " union all "), ft.uid)
	if err != nil {
		t.Fatalf("read the user's rows: %v", err)
	}
	out := map[string]string{}
	var table, versions string
	if _, err := pgx.ForEachRow(rows, []any{&table, &versions}, func() error {
		out[table] = versions
		return nil
	}); err != nil || len(out) != len(userTables) {
		t.Fatalf("read the user's rows: %v (%d tables)", err, len(out))
	}
	return out
}

// checkStatus requires the contract's answers: a success, 400 invalid_request, or another 4xx
// with its own code; never a 5xx.
func checkStatus(t *testing.T, what string, body []byte, status int, out map[string]any) {
	t.Helper()
	code, _ := out["code"].(string)
	switch {
	case status >= 200 && status < 300:
	case status == http.StatusBadRequest && code == "invalid_request":
	case status > 400 && status < 500 && code != "" && code != "invalid_request":
	default:
		t.Fatalf("%s %q: %d %v", what, body, status, out)
	}
}

// opOf is the op of a body the function took (so one of its exact spelling, named once).
func opOf(body []byte) string {
	var v struct {
		Op string `json:"op"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Op
}

// checkUnchanged requires a refused request to have left the user's rows as they were.
func checkUnchanged(t *testing.T, what string, body []byte, status int, before, after map[string]string) {
	t.Helper()
	for _, table := range userTables {
		if before[table] != after[table] {
			t.Fatalf("%s %q answered %d and changed %s:\n before %s\n after  %s", what, body, status, table, before[table], after[table])
		}
	}
}

// FuzzMemoriesCreate: whatever the body and the Idempotency-Key, memories create answers 201
// {id, merged: false} or 200 {id, merged: true} naming a memory of the caller, or a 4xx
// problem and nothing changed; never a 5xx.
func FuzzMemoriesCreate(f *testing.F) {
	for _, s := range []struct {
		body, key string
		withKey   bool
	}{
		{`{"op":"create","content":"Prefers metric units."}`, "", false},
		{`{"op":"create","content":"prefers metric units","metadata":{"kind":"preference"},"agent":"bot","ttl_seconds":3600}`, "", false},
		{`{"op":"create","content":"Has a cat named Miso"}`, "cat-1", true},
		{`{"op":"create","content":"Has two cats"}`, "cat-1", true},
		{`{"op":"create","content":"x"}`, "", true},
		{`{"op":"create","content":"x"}`, "k\x00ey", true},
		{`{"op":"create","user_id":"$UID","content":"Lives in Lisbon"}`, "", false},
		{`{"op":"create","user_id":"` + uuid.NewString() + `","content":"planted"}`, "", false},
		{`{"op":"create"}`, "", false},
		{`{"op":"create","content":null}`, "", false},
		{`{"op":"create","content":"  \n"}`, "", false},
		{`{"op":"create","content":["x"]}`, "", false},
		{`{"op":"create","content":"x","metadata":[]}`, "", false},
		{`{"op":"create","content":"x","metadata":{"k":1,"k":2}}`, "", false},
		{`{"op":"create","content":"x","ttl_seconds":0}`, "", false},
		{`{"op":"create","content":"x","ttl_seconds":1.5}`, "", false},
		{`{"op":"create","content":"x","agent":"a/b"}`, "", false},
		{`{"op":"create","content":"x","id":"$MEM"}`, "", false},
		{`{"op":"create","content":"a\u0000b"}`, "", false},
		{`{"op":"create","content":"\ud800"}`, "", false},
		{`{"op":"create","content":"x","metadata":{"k":"\u0000"}}`, "", false},
	} {
		f.Add([]byte(s.body), s.key, s.withKey)
	}
	for _, s := range commonSeeds {
		f.Add([]byte(s), "", false)
	}
	ft := newFuzzTarget(f)
	conn := ft.adminConn(f)
	f.Fuzz(func(t *testing.T, body []byte, key string, withKey bool) {
		body = ft.expand(body)
		var headers []string
		if withKey {
			headers = []string{"Idempotency-Key", key}
		}
		before := ft.rowVersions(t, conn)
		status, out := ft.post(ft.user, "memories", body, headers...)
		checkStatus(t, "memories", body, status, out)
		if status >= 300 {
			checkUnchanged(t, "memories", body, status, before, ft.rowVersions(t, conn))
			return
		}
		if opOf(body) != "create" {
			return // another op of the function (list, delete...), fuzzed by its own target
		}
		// An accepted create: its answer, and the memory it names.
		id, _ := out["id"].(string)
		merged, isBool := out["merged"].(bool)
		changed, changedIsBool := out["content_changed"].(bool)
		if len(out) != 3 || uuid.Validate(id) != nil || !isBool || !changedIsBool || (status == http.StatusCreated) == merged ||
			(changed && !merged) {
			t.Fatalf("memories %q: %d %v", body, status, out)
		}
		var n int
		if err := conn.QueryRow(context.Background(), `select count(*) from agentmem.memories where id = $1 and user_id = $2`,
			id, ft.uid).Scan(&n); err != nil || n != 1 {
			t.Fatalf("memories %q answered %v, which names %d memories of the caller (%v)", body, out, n, err)
		}
	})
}

// FuzzSessionsClear: whatever the body, sessions clear answers {deleted: n} having deleted n
// of the caller's messages, or a 4xx problem and nothing changed; never a 5xx. The user has
// messages before every input, so a refused clear has something to leave alone.
func FuzzSessionsClear(f *testing.F) {
	for _, s := range []string{
		`{"op":"clear"}`, `{"op":"clear","agent":"bot"}`, `{"op":"clear","agent":"default"}`, `{"op":"clear","agent":""}`,
		`{"op":"clear","agent":"a/b"}`, `{"op":"clear","agent":1}`, `{"op":"clear","agent":null}`,
		`{"op":"clear","user_id":"$UID"}`, `{"op":"clear","user_id":"` + uuid.NewString() + `"}`,
		`{"op":"clear","session_id":"$SID"}`, `{"op":"clear","tenant_id":"acme"}`, `{"op":"clear","agent":"\u0000"}`,
		`{"op":"clear"} {"op":"clear"}`, `{"op":"clear","op":"list"}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range commonSeeds {
		f.Add([]byte(s))
	}
	ft := newFuzzTarget(f)
	conn := ft.adminConn(f)
	count := func(t *testing.T) int64 {
		var n int64
		if err := conn.QueryRow(context.Background(), `select count(*) from agentmem.messages where user_id = $1`, ft.uid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		body = ft.expand(body)
		if count(t) == 0 {
			if status, out := ft.post(ft.user, "commit-turn", []byte(`{"session_id":"`+ft.sid+`","messages":[{"role":"user","content":"I like tea."}]}`)); status != http.StatusCreated {
				t.Fatalf("commit: %d %v", status, out)
			}
		}
		before, n := ft.rowVersions(t, conn), count(t)
		status, out := ft.post(ft.user, "sessions", body)
		checkStatus(t, "sessions", body, status, out)
		if status >= 300 {
			checkUnchanged(t, "sessions", body, status, before, ft.rowVersions(t, conn))
			return
		}
		if opOf(body) != "clear" {
			return // another op of the function (list, history...), fuzzed by its own target
		}
		deleted, ok := out["deleted"].(float64)
		if left := count(t); !ok || len(out) != 1 || int64(deleted) != n-left {
			t.Fatalf("sessions %q answered %v, and %d of %d messages are left", body, out, left, n)
		}
	})
}
