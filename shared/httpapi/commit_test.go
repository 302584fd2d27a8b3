package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/auth"
)

// ---- helpers of the commit-turn, get-context and active-session tests ----

// ctFor is e reporting to t, for parallel subtests sharing e's server and pool.
func ctFor(e *env, t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// ctMsg builds one message of a commit-turn request; kv adds fields (name, value, ...).
func ctMsg(role, content string, kv ...any) map[string]any {
	m := map[string]any{"role": role, "content": content}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// ctToolCall is one tool call as Chat Completions shapes it.
func ctToolCall(id, name, args string) map[string]any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
}

// ctCalls is an assistant message with empty content calling the tools named by ids.
func ctCalls(ids ...string) map[string]any {
	calls := make([]any, len(ids))
	for i, id := range ids {
		calls[i] = ctToolCall(id, "lookup", `{"q":"`+id+`"}`)
	}
	return ctMsg("assistant", "", "tool_calls", calls)
}

// ctResult is the tool message answering call id.
func ctResult(id string) map[string]any {
	return ctMsg("tool", `{"ok":"`+id+`"}`, "tool_call_id", id)
}

// ctTurn is a commit-turn body for session sid.
func ctTurn(sid uuid.UUID, msgs ...map[string]any) map[string]any {
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = m
	}
	return map[string]any{"session_id": sid.String(), "messages": list}
}

type ctStored struct {
	ID        string `json:"id"`
	Seq       int64  `json:"seq"`
	CreatedAt string `json:"created_at"`
}

type ctCommitResult struct {
	SessionID string     `json:"session_id"`
	Messages  []ctStored `json:"messages"`
	Memories  []struct {
		ID string `json:"id"`
	} `json:"memories"`
}

// ctStrict decodes raw into a T, failing on any key T does not declare: the response shape
// must be exactly the contract's.
func ctStrict[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, raw)
	}
	return v
}

// ctCommit commits a turn as token and requires 201.
func ctCommit(t *testing.T, e *env, token string, body any, headers ...string) ctCommitResult {
	t.Helper()
	r := e.call(token, "commit-turn", body, headers...).must(t, http.StatusCreated)
	return ctStrict[ctCommitResult](t, r.raw)
}

// ctUTC requires s to be an RFC 3339 timestamp in UTC.
func ctUTC(t *testing.T, what, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		t.Errorf("%s = %q, want an RFC 3339 timestamp in UTC (err %v)", what, s, err)
	}
	return ts
}

// ctRaw POSTs without touching t, so goroutines may use it.
func ctRaw(e *env, token, fn, body string, headers ...string) (int, http.Header, []byte) {
	req := httptest.NewRequest(http.MethodPost, "/v1/"+fn, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	raw, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, rec.Result().Header, raw
}

// ctJSON marshals v.
func ctJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type ctRow struct {
	ID         string
	Seq        int64
	Role       string
	Content    string
	ToolCallID *string
}

// ctMessages reads a session's stored messages by seq, as the superuser.
func ctMessages(t *testing.T, e *env, sid uuid.UUID) []ctRow {
	t.Helper()
	conn := e.adminConn()
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(),
		`select id::text, seq, role, content, tool_call_id from agentmem.messages where session_id = $1 order by seq`, sid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []ctRow
	for rows.Next() {
		var r ctRow
		if err := rows.Scan(&r.ID, &r.Seq, &r.Role, &r.Content, &r.ToolCallID); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ctScalar reads one value as the superuser.
func ctScalar[T any](t *testing.T, e *env, q string, args ...any) T {
	t.Helper()
	conn := e.adminConn()
	defer conn.Close(context.Background())
	var v T
	if err := conn.QueryRow(context.Background(), q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// ctNothingStored requires that no row of any table belongs to user id (one query: a
// connection costs more than the counts).
func ctNothingStored(t *testing.T, e *env, id uuid.UUID) {
	t.Helper()
	got := ctScalar[string](t, e, `select concat_ws(',',
		  nullif('sessions=' || (select count(*) from agentmem.sessions where user_id = $1), 'sessions=0'),
		  nullif('messages=' || (select count(*) from agentmem.messages where user_id = $1), 'messages=0'),
		  nullif('memories=' || (select count(*) from agentmem.memories where user_id = $1), 'memories=0'),
		  nullif('active_sessions=' || (select count(*) from agentmem.active_sessions where user_id = $1), 'active_sessions=0'),
		  nullif('idempotency_keys=' || (select count(*) from agentmem.idempotency_keys where user_id = $1), 'idempotency_keys=0'))`, id)
	if got != "" {
		t.Errorf("rows stored for the user: %s", got)
	}
}

// ctToken mints a user token for a given user id and tenant.
func ctToken(t *testing.T, id uuid.UUID, tenant string) string {
	t.Helper()
	tok, err := auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: id.String(), TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// ---- commit-turn ----

func TestCommitTurnHappyPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	body := ctTurn(sid,
		ctMsg("user", "My name is Ada and I prefer metric units."),
		ctCalls("call_1"),
		ctResult("call_1"),
		ctMsg("assistant", "Noted, Ada.", "metadata", map[string]any{"model": "x", "tokens": 12}),
	)
	body["agent"] = "support-bot"
	body["memories"] = []any{map[string]any{"content": "User prefers metric units.", "metadata": map[string]any{"kind": "preference"}}}
	before := time.Now().Add(-time.Minute)
	res := ctCommit(t, e, u.token, body)

	if res.SessionID != sid.String() {
		t.Errorf("session_id %q, want %s", res.SessionID, sid)
	}
	if len(res.Messages) != 4 || len(res.Memories) != 1 {
		t.Fatalf("%d messages and %d memories returned, want 4 and 1", len(res.Messages), len(res.Memories))
	}
	ids := map[string]bool{}
	for i, m := range res.Messages {
		if _, err := uuid.Parse(m.ID); err != nil || ids[m.ID] {
			t.Errorf("messages[%d].id %q is not a fresh UUID", i, m.ID)
		}
		ids[m.ID] = true
		if i > 0 && m.Seq <= res.Messages[i-1].Seq {
			t.Errorf("seq %d after %d: not strictly increasing in the order given", m.Seq, res.Messages[i-1].Seq)
		}
		ts := ctUTC(t, fmt.Sprintf("messages[%d].created_at", i), m.CreatedAt)
		if ts.Before(before) || ts.After(time.Now().Add(time.Minute)) {
			t.Errorf("created_at %s is not about now", ts)
		}
	}
	if _, err := uuid.Parse(res.Memories[0].ID); err != nil {
		t.Errorf("memories[0].id %q is not a UUID", res.Memories[0].ID)
	}

	// The session was created and belongs to the caller and the agent.
	if n := e.count("sessions", "id = $1 and user_id = $2 and tenant_id = '' and agent = 'support-bot'", sid, u.id); n != 1 {
		t.Fatalf("session rows owned by the caller: %d, want 1", n)
	}
	stored := ctMessages(t, e, sid)
	wantRoles := []string{"user", "assistant", "tool", "assistant"}
	if len(stored) != 4 {
		t.Fatalf("%d stored messages, want 4", len(stored))
	}
	for i, r := range stored {
		if r.ID != res.Messages[i].ID || r.Seq != res.Messages[i].Seq || r.Role != wantRoles[i] {
			t.Errorf("stored[%d] = %s/%d/%s, want %s/%d/%s", i, r.ID, r.Seq, r.Role, res.Messages[i].ID, res.Messages[i].Seq, wantRoles[i])
		}
	}
	if n := e.count("memories", "id = $1 and user_id = $2 and agent = 'support-bot'", res.Memories[0].ID, u.id); n != 1 {
		t.Errorf("memory rows: %d, want 1", n)
	}

	// A later turn continues after the first.
	res2 := ctCommit(t, e, u.token, map[string]any{"session_id": sid.String(), "agent": "support-bot",
		"messages": []any{ctMsg("user", "And my cat is Tom."), ctMsg("assistant", "Hello Tom.")}})
	if res2.Messages[0].Seq <= res.Messages[3].Seq || res2.Messages[1].Seq <= res2.Messages[0].Seq {
		t.Errorf("second turn seqs %d, %d do not follow %d", res2.Messages[0].Seq, res2.Messages[1].Seq, res.Messages[3].Seq)
	}
	if len(res2.Memories) != 0 || !bytes.Contains(e.call(u.token, "commit-turn", ctTurn(uuid.New(), ctMsg("user", "x"))).raw, []byte(`"memories":[]`)) {
		t.Errorf("a turn without memories must answer memories: []")
	}

	// A tenant's user owns its sessions within its tenant.
	tu := e.newUser("tenant-a")
	tsid := uuid.New()
	ctCommit(t, e, tu.token, ctTurn(tsid, ctMsg("user", "hi")))
	if n := e.count("sessions", "id = $1 and user_id = $2 and tenant_id = 'tenant-a' and agent = 'default'", tsid, tu.id); n != 1 {
		t.Errorf("tenant session rows: %d, want 1", n)
	}
}

func TestCommitTurnConcurrentOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	const turns = 20
	type turn struct {
		contents []string
		res      ctCommitResult
		status   int
		raw      []byte
	}
	ts := make([]turn, turns)
	bodies := make([]string, turns)
	for g := range ts {
		n := 2 + g%2
		msgs := make([]map[string]any, n)
		for j := range msgs {
			c := fmt.Sprintf("turn %02d message %d", g, j)
			ts[g].contents = append(ts[g].contents, c)
			role := "user"
			if j%2 == 1 {
				role = "assistant"
			}
			msgs[j] = ctMsg(role, c)
			// Half the turns carry client ids, which take the other path through the store.
			if g%4 < 2 {
				msgs[j]["id"] = uuid.NewString()
			}
		}
		bodies[g] = ctJSON(t, ctTurn(sid, msgs...))
	}
	turnOf := map[string]int{}
	for g := range ts {
		for _, c := range ts[g].contents {
			turnOf[c] = g
		}
	}
	// A reader polls while the turns land: it sees every turn whole or not at all.
	done := make(chan struct{})
	var readerErrs []string
	reads := 0
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		ctxBody := ctJSON(t, map[string]any{"session_id": sid.String(), "max_messages": 500})
		for {
			select {
			case <-done:
				return
			default:
			}
			status, _, raw := ctRaw(e, u.token, "get-context", ctxBody)
			var c struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if status != http.StatusOK || json.Unmarshal(raw, &c) != nil {
				readerErrs = append(readerErrs, fmt.Sprintf("get-context %d: %s", status, raw))
				return
			}
			seen := map[int]int{}
			for _, m := range c.Messages {
				seen[turnOf[m.Content]]++
			}
			for g, n := range seen {
				if n != len(ts[g].contents) {
					readerErrs = append(readerErrs, fmt.Sprintf("a read saw %d of turn %d's %d messages", n, g, len(ts[g].contents)))
				}
			}
			reads++
		}
	}()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, _, raw := ctRaw(e, u.token, "commit-turn", bodies[g])
			ts[g].status, ts[g].raw = status, raw
			_ = json.Unmarshal(raw, &ts[g].res)
		}()
	}
	close(start)
	wg.Wait()
	close(done)
	<-readerDone
	for _, msg := range readerErrs {
		t.Error(msg)
	}
	t.Logf("%d concurrent reads", reads)

	total := 0
	owner := map[int64]int{}
	for g, tr := range ts {
		if tr.status != http.StatusCreated || len(tr.res.Messages) != len(tr.contents) {
			t.Fatalf("turn %d: status %d: %s", g, tr.status, tr.raw)
		}
		for j, m := range tr.res.Messages {
			if j > 0 && m.Seq <= tr.res.Messages[j-1].Seq {
				t.Errorf("turn %d: seq %d after %d", g, m.Seq, tr.res.Messages[j-1].Seq)
			}
			if prev, dup := owner[m.Seq]; dup {
				t.Errorf("seq %d given to turns %d and %d", m.Seq, prev, g)
			}
			owner[m.Seq] = g
		}
		total += len(tr.contents)
	}

	// The database holds every message once, the turns whole and in their order.
	stored := ctMessages(t, e, sid)
	if len(stored) != total {
		t.Fatalf("%d stored messages, want %d", len(stored), total)
	}
	ctCheckTurns(t, "stored", stored, func(g int) []string { return ts[g].contents }, turns)

	// get-context reads back the same order.
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "max_messages": 500}).must(t, http.StatusOK)
	var got []ctRow
	for _, m := range list(r.body["messages"]) {
		got = append(got, ctRow{ID: str(obj(m)["id"]), Seq: int64(obj(m)["seq"].(float64)), Content: str(obj(m)["content"])})
	}
	if len(got) != total {
		t.Fatalf("get-context returned %d messages, want %d", len(got), total)
	}
	for i := range got {
		if got[i].ID != stored[i].ID || got[i].Seq != stored[i].Seq {
			t.Fatalf("get-context message %d is %s/%d, the database has %s/%d", i, got[i].ID, got[i].Seq, stored[i].ID, stored[i].Seq)
		}
	}
	ctCheckTurns(t, "get-context", got, func(g int) []string { return ts[g].contents }, turns)
}

// ctCheckTurns requires rows (ordered by seq) to have strictly increasing seqs and every turn's
// messages next to each other in the order given.
func ctCheckTurns(t *testing.T, what string, rows []ctRow, contents func(int) []string, turns int) {
	t.Helper()
	pos := map[string]int{}
	for i, r := range rows {
		if i > 0 && r.Seq <= rows[i-1].Seq {
			t.Errorf("%s: seq %d after %d", what, r.Seq, rows[i-1].Seq)
		}
		pos[r.Content] = i
	}
	for g := 0; g < turns; g++ {
		cs := contents(g)
		first, ok := pos[cs[0]]
		if !ok {
			t.Errorf("%s: turn %d missing", what, g)
			continue
		}
		for j, c := range cs {
			if p, ok := pos[c]; !ok || p != first+j {
				t.Errorf("%s: turn %d message %d at position %d, want %d (interleaved or reordered)", what, g, j, p, first+j)
			}
		}
	}
}

func TestCommitTurnIdempotentReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	body := ctTurn(sid, ctMsg("user", "hello"), ctMsg("assistant", "hi there"))
	body["memories"] = []any{map[string]any{"content": "User says hello."}}
	key := "turn-" + uuid.NewString()

	first := e.call(u.token, "commit-turn", body, "Idempotency-Key", key).must(t, http.StatusCreated)
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("first answer carries Idempotent-Replayed: %q", first.header.Get("Idempotent-Replayed"))
	}
	lastSeq := ctScalar[int64](t, e, `select last_seq from agentmem.sessions where id = $1`, sid)

	// The same body, also with other spacing, replays the first answer byte for byte.
	spaced, _ := json.MarshalIndent(body, "", "  ")
	for _, b := range []any{body, string(spaced)} {
		again := e.call(u.token, "commit-turn", b, "Idempotency-Key", key).must(t, http.StatusCreated)
		if again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay without Idempotent-Replayed: true")
		}
		if !bytes.Equal(again.raw, first.raw) {
			t.Errorf("replayed body differs:\n%s\n%s", again.raw, first.raw)
		}
	}
	if n := e.count("messages", "session_id = $1", sid); n != 2 {
		t.Errorf("%d messages after replays, want 2", n)
	}
	if n := e.count("memories", "user_id = $1", u.id); n != 1 {
		t.Errorf("%d memories after replays, want 1", n)
	}
	if got := ctScalar[int64](t, e, `select last_seq from agentmem.sessions where id = $1`, sid); got != lastSeq {
		t.Errorf("last_seq moved from %d to %d on replay", lastSeq, got)
	}
	// The answer is kept for at least 24 hours.
	if !ctScalar[bool](t, e, `select expires_at >= now() + interval '23 hours 59 minutes'
		from agentmem.idempotency_keys where user_id = $1 and key = $2`, u.id, key) {
		t.Errorf("idempotency record kept for less than 24 hours")
	}

	// The same key with another body is a conflict and stores nothing.
	other := ctTurn(sid, ctMsg("user", "hello"), ctMsg("assistant", "something else"))
	r := e.call(u.token, "commit-turn", other, "Idempotency-Key", key)
	wantProblem(t, r, http.StatusConflict, "conflict", "")
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("a conflict is marked replayed")
	}
	if n := e.count("messages", "session_id = $1", sid); n != 2 {
		t.Errorf("%d messages after the conflict, want 2", n)
	}

	// Without a key, the same body is a new turn.
	ctCommit(t, e, u.token, body)
	if n := e.count("messages", "session_id = $1", sid); n != 4 {
		t.Errorf("%d messages after a keyless repeat, want 4", n)
	}
}

func TestCommitTurnIdempotentRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	body := ctJSON(t, ctTurn(sid, ctMsg("user", "race"), ctMsg("assistant", "won")))
	key := "race-" + uuid.NewString()
	const n = 10
	type answer struct {
		status   int
		replayed string
		raw      []byte
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, h, raw := ctRaw(e, u.token, "commit-turn", body, "Idempotency-Key", key)
			answers[i] = answer{status, h.Get("Idempotent-Replayed"), raw}
		}()
	}
	close(start)
	wg.Wait()
	originals := 0
	for i, a := range answers {
		// The store makes a racing duplicate wait for the first and replay it.
		if a.status != http.StatusCreated {
			t.Fatalf("answer %d: status %d: %s", i, a.status, a.raw)
		}
		if !bytes.Equal(a.raw, answers[0].raw) {
			t.Errorf("answer %d differs:\n%s\n%s", i, a.raw, answers[0].raw)
		}
		if a.replayed == "" {
			originals++
		}
	}
	if originals != 1 {
		t.Errorf("%d answers not marked replayed, want exactly 1", originals)
	}
	if got := e.count("messages", "session_id = $1", sid); got != 2 {
		t.Errorf("%d messages stored, want exactly one copy (2)", got)
	}
}

func TestCommitTurnIdempotencyKeysBelongToTheirCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a, b := e.newUser(""), e.newUser("")
	sidA, sidB := uuid.New(), uuid.New()
	key := "shared-" + uuid.NewString()
	bodyA := ctTurn(sidA, ctMsg("user", "from a"))
	resA := ctCommit(t, e, a.token, bodyA, "Idempotency-Key", key)

	// B sending A's very body with A's key is B's own request: A's session is not B's, so 404,
	// never A's answer.
	r := e.call(b.token, "commit-turn", bodyA, "Idempotency-Key", key)
	wantProblem(t, r, http.StatusNotFound, "not_found", "")
	if bytes.Contains(r.raw, []byte(resA.Messages[0].ID)) {
		t.Fatalf("another user's key replayed A's answer: %s", r.raw)
	}
	// The failed request did not take the key: B's own turn with it is new.
	r = e.call(b.token, "commit-turn", ctTurn(sidB, ctMsg("user", "from b")), "Idempotency-Key", key).must(t, http.StatusCreated)
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("B's first use of the key was replayed")
	}
	if n := e.count("messages", "session_id = $1", sidB); n != 1 {
		t.Errorf("B's session holds %d messages, want 1", n)
	}

	// A service acting for A with A's key is another caller: a new request, not a conflict.
	svc := e.serviceToken()
	bodySvc := ctTurn(sidA, ctMsg("user", "from a"))
	bodySvc["user_id"] = a.id.String()
	r = e.call(svc, "commit-turn", bodySvc, "Idempotency-Key", key).must(t, http.StatusCreated)
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the service's request was replayed from the user's")
	}
	if n := e.count("messages", "session_id = $1", sidA); n != 2 {
		t.Errorf("A's session holds %d messages, want 2", n)
	}
	// ... and the service's retry replays the service's answer.
	again := e.call(svc, "commit-turn", bodySvc, "Idempotency-Key", key).must(t, http.StatusCreated)
	if again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.raw, r.raw) {
		t.Errorf("the service's retry was not replayed: %s", again.raw)
	}
	// A's retry still replays A's first answer.
	again = e.call(a.token, "commit-turn", bodyA, "Idempotency-Key", key).must(t, http.StatusCreated)
	if again.header.Get("Idempotent-Replayed") != "true" || ctStrict[ctCommitResult](t, again.raw).Messages[0].ID != resA.Messages[0].ID {
		t.Errorf("A's retry was not A's answer: %s", again.raw)
	}
	if n := e.count("messages", "session_id = $1", sidA); n != 2 {
		t.Errorf("A's session holds %d messages after the retries, want 2", n)
	}
}

// Client message ids, whatever framework chose them (UUIDs, LangGraph's run-..., LangChain's
// lc_run--...), are stored once per session.
func TestCommitTurnClientMessageIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	for name, newID := range map[string]func() string{
		"uuid":      uuid.NewString,
		"langgraph": func() string { return "run-" + uuid.NewString() },
		"langchain": func() string { return "lc_run--" + uuid.NewString() + "-0" },
		"any":       func() string { return "msg é|{}*" + uuid.NewString()[:8] },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := *e
			e.t = t
			u := e.newUser("")
			sid := uuid.New()
			m1, m2, m3 := newID(), newID(), newID()
			first := ctCommit(t, &e, u.token, ctTurn(sid,
				ctMsg("user", "one", "id", m1),
				ctMsg("assistant", "two", "id", m2)))
			if first.Messages[0].ID != m1 || first.Messages[1].ID != m2 {
				t.Fatalf("client ids not kept: %+v", first.Messages)
			}

			// A resent turn stores only what is new; the resent message keeps its place.
			second := ctCommit(t, &e, u.token, ctTurn(sid,
				ctMsg("assistant", "two, edited on retry", "id", m2),
				ctMsg("user", "three", "id", m3),
				ctMsg("assistant", "four")))
			if second.Messages[0] != first.Messages[1] {
				t.Errorf("resent message answered %+v, want its original %+v", second.Messages[0], first.Messages[1])
			}
			if second.Messages[1].ID != m3 || second.Messages[1].Seq <= first.Messages[1].Seq || second.Messages[2].Seq != second.Messages[1].Seq+1 {
				t.Errorf("new messages of the resent turn: %+v", second.Messages[1:])
			}
			stored := ctMessages(t, &e, sid)
			if len(stored) != 4 {
				t.Fatalf("%d stored messages, want 4", len(stored))
			}
			if stored[1].ID != m2 || stored[1].Content != "two" {
				t.Errorf("resent message changed: %+v", stored[1])
			}
			// Resending everything stores nothing.
			third := ctCommit(t, &e, u.token, ctTurn(sid, ctMsg("user", "one", "id", m1), ctMsg("user", "three", "id", m3)))
			if third.Messages[0] != first.Messages[0] || third.Messages[1] != second.Messages[1] {
				t.Errorf("resent messages answered %+v", third.Messages)
			}
			if n := e.count("messages", "session_id = $1", sid); n != 4 {
				t.Errorf("%d stored messages after resending, want 4", n)
			}

			// Client ids are unique per session, not globally: another session of the user and
			// another user's session take the same id.
			other := uuid.New()
			r := ctCommit(t, &e, u.token, ctTurn(other, ctMsg("user", "one elsewhere", "id", m1)))
			if r.Messages[0].ID != m1 || r.Messages[0].Seq != 1 {
				t.Errorf("the id in another session answered %+v", r.Messages[0])
			}
			v := e.newUser("")
			ctCommit(t, &e, v.token, ctTurn(uuid.New(), ctMsg("user", "one of v", "id", m1)))
			if n := e.count("messages", "id = $1", m1); n != 3 {
				t.Errorf("%d rows with the id, want 3 (one per session)", n)
			}

			// The same client ids sent by racing requests are stored once.
			race := uuid.New()
			ids := []string{newID(), newID()}
			body := ctJSON(t, ctTurn(race, ctMsg("user", "racing", "id", ids[0]), ctMsg("assistant", "racing too", "id", ids[1])))
			raws := make([][]byte, 8)
			statuses := make([]int, len(raws))
			var wg sync.WaitGroup
			for i := range raws {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i], _, raws[i] = ctRaw(&e, u.token, "commit-turn", body)
				}()
			}
			wg.Wait()
			for i := range raws {
				if statuses[i] != http.StatusCreated || string(raws[i]) != string(raws[0]) {
					t.Errorf("racing resend %d: %d %s, first: %s", i, statuses[i], raws[i], raws[0])
				}
			}
			if n := e.count("messages", "session_id = $1", race); n != 2 {
				t.Errorf("%d messages stored by racing resends, want 2", n)
			}

			// The same id twice in one request is refused, and nothing is stored.
			w := e.newUser("")
			dup := e.call(w.token, "commit-turn", ctTurn(uuid.New(), ctMsg("user", "a", "id", m1), ctMsg("user", "b", "id", m1)))
			wantProblem(t, dup, http.StatusBadRequest, "invalid_request", "messages[1].id")
			ctNothingStored(t, &e, w.id)
		})
	}
}

func TestCommitTurnAllOrNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	body := ctTurn(sid,
		ctMsg("user", "hello", "id", uuid.NewString()),
		ctMsg("assistant", "hi"),
		ctMsg("robot", "beep"),
		ctMsg("user", "bye"))
	body["memories"] = []any{map[string]any{"content": "Something worth keeping."}}
	r := e.call(u.token, "commit-turn", body, "Idempotency-Key", "k-"+uuid.NewString())
	wantProblem(t, r, http.StatusBadRequest, "invalid_request", "messages[2].role")
	if d := str(r.body["detail"]); !strings.Contains(d, "messages[2].role") {
		t.Errorf("detail %q does not name the field", d)
	}
	if n := e.count("sessions", "id = $1", sid); n != 0 {
		t.Errorf("the session was created")
	}
	if n := e.count("messages", "session_id = $1", sid); n != 0 {
		t.Errorf("%d messages stored", n)
	}
	ctNothingStored(t, e, u.id)

	// A valid turn whose memory is invalid stores no message either.
	body = ctTurn(sid, ctMsg("user", "hello"))
	body["memories"] = []any{map[string]any{"content": "fine"}, map[string]any{"content": "   "}}
	wantProblem(t, e.call(u.token, "commit-turn", body), http.StatusBadRequest, "invalid_request", "memories[1].content")
	ctNothingStored(t, e, u.id)
}

// commit-turn's body and headers decode into the use case's input: JSON of the wrong shape,
// unknown fields and headers out of range are 400 invalid_request naming the field, and store
// nothing; the use case's own rules (roles, contents, tool calls, lengths, agent, retention) are
// tested on it (shared/app TestCommitTurnValidation), a refusal of its rendered here once.
func TestCommitTurnValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	long := func(n int, s string) string { return strings.Repeat(s, n) }
	with := func(sid uuid.UUID, k string, v any, msgs ...map[string]any) map[string]any {
		if len(msgs) == 0 {
			msgs = []map[string]any{ctMsg("user", "hi")}
		}
		b := ctTurn(sid, msgs...)
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	msg := func(sid uuid.UUID, m map[string]any) map[string]any { return ctTurn(sid, m) }
	drop := func(m map[string]any, k string) map[string]any { delete(m, k); return m }

	cases := []struct {
		name   string
		body   func(sid uuid.UUID) any
		header []string
		status int
		field  string
	}{
		{"session_id a number", func(s uuid.UUID) any { return with(s, "session_id", 5) }, nil, 400, "session_id"},
		{"messages null", func(s uuid.UUID) any { return fmt.Sprintf(`{"session_id":%q,"messages":null}`, s) }, nil, 400, "messages"},
		{"messages a string", func(s uuid.UUID) any { return with(s, "messages", "hi") }, nil, 400, "messages"},
		{"message not an object", func(s uuid.UUID) any { return with(s, "messages", []any{"hi"}) }, nil, 400, "messages"},
		{"role unknown", func(s uuid.UUID) any { return msg(s, ctMsg("robot", "hi")) }, nil, 400, "messages[0].role"},
		{"role a number", func(s uuid.UUID) any { return msg(s, ctMsg("user", "hi", "role", 1)) }, nil, 400, "messages.role"},
		{"content a number", func(s uuid.UUID) any { return msg(s, ctMsg("user", "", "content", 5)) }, nil, 400, "messages[0].content"},
		{"tool_calls an object", func(s uuid.UUID) any { return msg(s, ctMsg("assistant", "", "tool_calls", map[string]any{})) }, nil, 400, "messages.tool_calls"},
		{"ttl_seconds fractional", func(s uuid.UUID) any { return with(s, "ttl_seconds", 1.5) }, nil, 400, "ttl_seconds"},
		{"ttl_seconds a string", func(s uuid.UUID) any { return with(s, "ttl_seconds", "60") }, nil, 400, "ttl_seconds"},
		{"unknown top-level field", func(s uuid.UUID) any { return with(s, "sesion_id", s.String()) }, nil, 400, "sesion_id"},
		{"unknown field in a message", func(s uuid.UUID) any { return msg(s, drop(ctMsg("user", "", "contnet", "hi"), "content")) }, nil, 400, "messages[0].contnet"},
		{"unknown field in a memory", func(s uuid.UUID) any {
			return with(s, "memories", []any{map[string]any{"content": "x", "meta": map[string]any{}}})
		}, nil, 400, "memories[0].meta"},
		{"memories an object", func(s uuid.UUID) any { return with(s, "memories", map[string]any{}) }, nil, 400, "memories"},
		{"trailing object", func(s uuid.UUID) any { return ctJSON(t, ctTurn(s, ctMsg("user", "hi"))) + ` {}` }, nil, 400, ""},
		{"trailing garbage", func(s uuid.UUID) any { return ctJSON(t, ctTurn(s, ctMsg("user", "hi"))) + `x` }, nil, 400, ""},
		{"truncated JSON", func(s uuid.UUID) any { j := ctJSON(t, ctTurn(s, ctMsg("user", "hi"))); return j[:len(j)-1] }, nil, 400, ""},
		{"body null", func(uuid.UUID) any { return `null` }, nil, 400, ""},
		{"body an array", func(uuid.UUID) any { return `[]` }, nil, 400, ""},
		{"body a string", func(uuid.UUID) any { return `"x"` }, nil, 400, ""},
		{"body a number", func(uuid.UUID) any { return `5` }, nil, 400, ""},
		{"Idempotency-Key of 256 characters", func(s uuid.UUID) any { return ctTurn(s, ctMsg("user", "hi")) },
			[]string{"Idempotency-Key", long(256, "k")}, 400, "Idempotency-Key"},
		{"agent a number", func(s uuid.UUID) any { return with(s, "agent", 7) }, nil, 400, "agent"},

		// The edges that are valid.
		{"100,000 characters of 4 bytes", func(s uuid.UUID) any { return msg(s, ctMsg("user", long(100_000, "😀"))) }, nil, 201, ""},
		{"Idempotency-Key of 255 characters", func(s uuid.UUID) any { return ctTurn(s, ctMsg("user", "hi")) },
			[]string{"Idempotency-Key", long(255, "k")}, 201, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := ctFor(e, t)
			u := e.newUser("")
			sid := uuid.New()
			r := e.call(u.token, "commit-turn", tc.body(sid), tc.header...)
			if tc.status == http.StatusCreated {
				r.must(t, http.StatusCreated)
				if e.count("messages", "session_id = $1 and user_id = $2", sid, u.id) == 0 {
					t.Errorf("nothing stored")
				}
				if strings.Contains(tc.name, "100,000") {
					if n := ctScalar[int](t, e, `select char_length(content) from agentmem.messages where session_id = $1`, sid); n != 100_000 {
						t.Errorf("stored %d characters, want 100000", n)
					}
				}
				return
			}
			wantProblem(t, r, tc.status, "invalid_request", tc.field)
			ctNothingStored(t, e, u.id)
			if n := e.count("sessions", "id = $1", sid); n != 0 {
				t.Errorf("the session was created")
			}
		})
	}
}

func TestCommitTurnTransportLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	// 100 messages of 20,000 characters: each valid, together over the 1 MiB body limit.
	msgs := make([]map[string]any, 100)
	for i := range msgs {
		msgs[i] = ctMsg("user", strings.Repeat("z", 20_000))
	}
	wantProblem(t, e.call(u.token, "commit-turn", ctTurn(sid, msgs...)), http.StatusRequestEntityTooLarge, "payload_too_large", "")
	// An Idempotency-Key header that is present but empty is not 1 to 255 characters.
	status, _, raw := ctRaw(e, u.token, "commit-turn", ctJSON(t, ctTurn(sid, ctMsg("user", "hi"))), "Idempotency-Key", "")
	if status != http.StatusBadRequest || !strings.Contains(string(raw), `"field":"Idempotency-Key"`) {
		t.Errorf("empty Idempotency-Key: %d %s", status, raw)
	}
	// Not JSON.
	r := e.call(u.token, "commit-turn", ctJSON(t, ctTurn(sid, ctMsg("user", "hi"))), "Content-Type", "text/plain")
	wantProblem(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
	ctNothingStored(t, e, u.id)
}

func TestCommitTurnForeignSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a, b := e.newUser(""), e.newUser("")
	sid := uuid.New()
	ctCommit(t, e, a.token, ctTurn(sid, ctMsg("user", "private to a")))

	attempts := []struct {
		name  string
		token string
		body  map[string]any
	}{
		{"another user", b.token, ctTurn(sid, ctMsg("user", "intruder"))},
		{"another user with client ids", b.token, ctTurn(sid, ctMsg("user", "intruder", "id", uuid.NewString()))},
		{"another user with memories", b.token, func() map[string]any {
			m := ctTurn(sid, ctMsg("user", "intruder"))
			m["memories"] = []any{map[string]any{"content": "planted"}}
			return m
		}()},
		{"a service acting for another user", e.serviceToken(), func() map[string]any {
			m := ctTurn(sid, ctMsg("user", "intruder"))
			m["user_id"] = b.id.String()
			return m
		}()},
		{"the same user id in another tenant", ctToken(t, a.id, "tenant-x"), ctTurn(sid, ctMsg("user", "intruder"))},
		{"the owner as another agent", a.token, func() map[string]any {
			m := ctTurn(sid, ctMsg("user", "wrong agent"))
			m["agent"] = "other-agent"
			return m
		}()},
		{"the owner as another agent with client ids", a.token, func() map[string]any {
			m := ctTurn(sid, ctMsg("user", "wrong agent", "id", uuid.NewString()))
			m["agent"] = "other-agent"
			return m
		}()},
	}
	var notFound []byte
	for _, at := range attempts {
		t.Run(at.name, func(t *testing.T) {
			r := e.call(at.token, "commit-turn", at.body)
			wantProblem(t, r, http.StatusNotFound, "not_found", "")
			// Indistinguishable from a missing session except for the request id.
			delete(r.body, "request_id")
			b, _ := json.Marshal(r.body)
			if notFound == nil {
				notFound = b
			} else if !bytes.Equal(b, notFound) {
				t.Errorf("%s: problem %s differs from %s", at.name, b, notFound)
			}
		})
	}
	msgs := ctMessages(t, e, sid)
	if len(msgs) != 1 || msgs[0].Content != "private to a" {
		t.Errorf("the session changed: %+v", msgs)
	}
	ctNothingStored(t, e, b.id)
	if n := e.count("sessions", "id = $1 and user_id = $2 and agent = 'default' and tenant_id = ''", sid, a.id); n != 1 {
		t.Errorf("the session's owner changed")
	}
	if n := e.count("memories", "content = 'planted'"); n != 0 {
		t.Errorf("a memory was planted")
	}
}

func TestCommitTurnMemories(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	commit := func(agent string, mems ...map[string]any) ctCommitResult {
		t.Helper()
		b := ctTurn(sid, ctMsg("user", "hi"))
		if agent != "" {
			b["agent"] = agent
		}
		l := make([]any, len(mems))
		for i, m := range mems {
			l[i] = m
		}
		b["memories"] = l
		return ctCommit(t, e, u.token, b)
	}
	mem := func(content string, meta map[string]any) map[string]any {
		m := map[string]any{"content": content}
		if meta != nil {
			m["metadata"] = meta
		}
		return m
	}
	metaOf := func(id string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(ctScalar[string](t, e, `select metadata::text from agentmem.memories where id = $1`, id)), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	r1 := commit("", mem("User prefers metric units.", map[string]any{"kind": "preference"}))
	r2 := commit("", mem("  user PREFERS   metric units  ", map[string]any{"source": "chat"}))
	if r1.Memories[0].ID != r2.Memories[0].ID {
		t.Errorf("the same fact got ids %s and %s", r1.Memories[0].ID, r2.Memories[0].ID)
	}
	if n := e.count("memories", "user_id = $1", u.id); n != 1 {
		t.Fatalf("%d memory rows for one fact, want 1", n)
	}
	if got, want := metaOf(r1.Memories[0].ID), map[string]any{"kind": "preference", "source": "chat"}; !reflect.DeepEqual(got, want) {
		t.Errorf("metadata %v, want merged %v", got, want)
	}

	// Twice in one request: one row, one id for both, metadata merged as across requests.
	r3 := commit("", mem("Likes green tea!", map[string]any{"a": 1.0}), mem("likes Green tea", map[string]any{"b": 2.0}), mem("Has a cat.", nil))
	if len(r3.Memories) != 3 || r3.Memories[0].ID != r3.Memories[1].ID || r3.Memories[2].ID == r3.Memories[0].ID {
		t.Errorf("memory ids %+v: want the first two equal, the third different", r3.Memories)
	}
	if n := e.count("memories", "user_id = $1", u.id); n != 3 {
		t.Errorf("%d memory rows, want 3", n)
	}
	if got, want := metaOf(r3.Memories[0].ID), map[string]any{"a": 1.0, "b": 2.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("metadata %v, want merged %v", got, want)
	}
	if got := metaOf(r3.Memories[2].ID); len(got) != 0 {
		t.Errorf("metadata %v, want {}", got)
	}

	// Another agent's scope keeps its own row (its session: a session belongs to one agent).
	sid = uuid.New()
	r4 := commit("other", mem("User prefers metric units", nil))
	if r4.Memories[0].ID == r1.Memories[0].ID {
		t.Errorf("another agent's fact shares a row")
	}
	if n := e.count("memories", "user_id = $1 and agent = 'other'", u.id); n != 1 {
		t.Errorf("%d rows for the other agent, want 1", n)
	}
	// Different facts stay apart.
	if n := e.count("memories", "user_id = $1 and agent = 'default'", u.id); n != 3 {
		t.Errorf("%d rows for the default agent, want 3", n)
	}
}

func TestCommitTurnExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "kept one"), ctMsg("assistant", "kept two")))
	short := ctTurn(sid, ctMsg("user", "fleeting one"), ctMsg("assistant", "fleeting two"))
	short["ttl_seconds"] = 1
	short["memories"] = []any{map[string]any{"content": "The user owns a zeppelin."}}
	ctCommit(t, e, u.token, short)
	long := ctTurn(sid, ctMsg("user", "hourly"))
	long["ttl_seconds"] = 3600
	long["memories"] = []any{map[string]any{"content": "The user rides a unicycle."}}
	ctCommit(t, e, u.token, long)

	// expires_at is now + ttl_seconds, or now + the default retention (720h).
	for _, c := range []struct {
		content string
		ttl     string
	}{{"kept one", "720 hours"}, {"fleeting one", "1 second"}, {"hourly", "1 hour"}} {
		t.Run(c.content, func(t *testing.T) {
			if !ctScalar[bool](t, e, `select abs(extract(epoch from expires_at - (created_at + $2::interval))) < 5
			from agentmem.messages where session_id = $1 and content = $3`, sid, c.ttl, c.content) {
				t.Errorf("%q: expires_at is not created_at + %s", c.content, c.ttl)
			}
		})
	}

	// Move the short-lived rows into the past instead of sleeping; nothing sweeps them.
	e.exec(`update agentmem.messages set expires_at = now() - interval '1 second' where session_id = $1 and content like 'fleeting%'`, sid)
	e.exec(`update agentmem.memories set expires_at = now() - interval '1 second' where user_id = $1 and content like '%zeppelin%'`, u.id)

	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "max_messages": 500,
		"query": "zeppelin unicycle", "recall_k": 50}).must(t, http.StatusOK)
	var contents []string
	for _, m := range list(r.body["messages"]) {
		contents = append(contents, str(obj(m)["content"]))
	}
	if want := []string{"kept one", "kept two", "hourly"}; !reflect.DeepEqual(contents, want) {
		t.Errorf("get-context messages %q, want %q", contents, want)
	}
	if u := obj(r.body["usage"]); u["messages"] != 3.0 {
		t.Errorf("usage.messages %v, want 3", u["messages"])
	}
	var mems []string
	for _, m := range list(r.body["memories"]) {
		mems = append(mems, str(obj(m)["content"]))
	}
	if want := []string{"The user rides a unicycle."}; !reflect.DeepEqual(mems, want) {
		t.Errorf("get-context memories %q, want %q", mems, want)
	}
	for _, mode := range []string{"hybrid", "text", "vector"} {
		rr := e.call(u.token, "recall", map[string]any{"query": "zeppelin", "mode": mode, "k": 100}).must(t, http.StatusOK)
		if bytes.Contains(rr.raw, []byte("zeppelin")) {
			t.Errorf("recall (%s) returned an expired memory: %s", mode, rr.raw)
		}
	}
	// The rows are still there: they are hidden, not swept.
	if n := e.count("messages", "session_id = $1", sid); n != 5 {
		t.Errorf("%d message rows, want 5 (expired ones included)", n)
	}
	if n := e.count("memories", "user_id = $1", u.id); n != 2 {
		t.Errorf("%d memory rows, want 2", n)
	}

	// Storing an expired fact again brings it back as new.
	again := ctTurn(sid, ctMsg("user", "zeppelin again"))
	again["memories"] = []any{map[string]any{"content": "the user owns a zeppelin"}}
	ctCommit(t, e, u.token, again)
	rr := e.call(u.token, "recall", map[string]any{"query": "zeppelin", "k": 10}).must(t, http.StatusOK)
	if !bytes.Contains(rr.raw, []byte("the user owns a zeppelin")) {
		t.Errorf("a re-stored fact is not recalled: %s", rr.raw)
	}
}

// A message id of any framework comes back as it was given, in every format, and names its
// message in sessions delete_message; a UUID in upper case is the message of its lower-case
// form; an id that is empty, too long or not printable answers 400 and stores nothing.
func TestMessageIDsOfAnyFramework(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	lc, lg, id := "lc_run--"+uuid.NewString()+"-0", "run-"+uuid.NewString(), uuid.NewString()
	ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "one", "id", lc), ctMsg("assistant", "two", "id", lg),
		ctMsg("user", "three", "id", id)))
	again := ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "three", "id", strings.ToUpper(id))))
	if again.Messages[0].ID != id || again.Messages[0].Seq != 3 {
		t.Errorf("a UUID in upper case answered %+v, want the stored message %s at seq 3", again.Messages[0], id)
	}
	for _, format := range []string{"raw", "langchain"} {
		r := e.call(u.token, "get-context", map[string]any{"session_id": sid, "format": format}).must(t, http.StatusOK)
		var got []string
		for _, m := range r.body["messages"].([]any) {
			if format == "langchain" {
				m = obj(m)["data"]
			}
			got = append(got, str(obj(m)["id"]))
		}
		if !slices.Equal(got, []string{lc, lg, id}) {
			t.Errorf("%s ids %q", format, got)
		}
	}
	e.call(u.token, "sessions", map[string]any{"op": "delete_message", "session_id": sid, "message_id": lg}).must(t, http.StatusOK)
	if n := e.count("messages", "session_id = $1", sid); n != 2 {
		t.Errorf("%d messages after deleting %s, want 2", n, lg)
	}
	wantProblem(t, e.call(u.token, "sessions", map[string]any{"op": "delete_message", "session_id": sid, "message_id": lg}),
		http.StatusNotFound, "not_found")
	for _, bad := range []string{"", strings.Repeat("é", 256), "run\x01", "run\n1", "run\u200b"} {
		w := e.newUser("")
		wantProblem(t, e.call(w.token, "commit-turn", ctTurn(uuid.New(), ctMsg("user", "a", "id", bad))),
			http.StatusBadRequest, "invalid_request", "messages[0].id")
		ctNothingStored(t, e, w.id)
		wantProblem(t, e.call(u.token, "sessions", map[string]any{"op": "delete_message", "session_id": sid, "message_id": bad}),
			http.StatusBadRequest, "invalid_request", "message_id")
	}
	long := strings.Repeat("é", 255)
	r := ctCommit(t, e, u.token, ctTurn(sid, ctMsg("user", "long id", "id", long)))
	if r.Messages[0].ID != long {
		t.Errorf("an id of 255 characters answered %q", r.Messages[0].ID)
	}
}

// Seed 003's answers-only saving: with answers_only, a commit stores the turn's system, user and
// assistant text only: no tool messages, no tool calls, no assistant message left without text.
// The whole turn is still validated, a retry stores nothing twice, and a turn of tool work alone
// stores nothing.
func TestCommitTurnAnswersOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	turn := func(msgs ...map[string]any) map[string]any {
		b := ctTurn(sid, msgs...)
		b["answers_only"] = true
		return b
	}
	withCall := ctMsg("assistant", "Let me look that up.", "id", "lc_run--3", "tool_calls", []any{ctToolCall("c2", "lookup", `{}`)})
	body := turn(ctMsg("system", "Be brief.", "id", "sys"), ctMsg("user", "Weather in Lisbon?", "id", "run-1"),
		ctCalls("c1"), ctResult("c1"), withCall, ctResult("c2"), ctMsg("assistant", "Sunny, 24 C.", "id", "run-2"))
	r := ctCommit(t, e, u.token, body)
	if len(r.Messages) != 4 {
		t.Fatalf("%d messages answered, want the 4 kept: %+v", len(r.Messages), r.Messages)
	}
	// stored is the session's messages: role, content and whether it has tool calls.
	stored := func() string {
		t.Helper()
		return ctScalar[string](t, e, `select coalesce(json_agg(json_build_array(role, content, tool_calls is not null) order by seq), '[]')::text
			from agentmem.messages where session_id = $1`, sid)
	}
	want := `[["system", "Be brief.", false], ["user", "Weather in Lisbon?", false], ["assistant", "Let me look that up.", false], ["assistant", "Sunny, 24 C.", false]]`
	if got := stored(); got != want {
		t.Errorf("stored %s, want %s", got, want)
	}
	// The same state saved again (as a graph saves its whole state each run, every message with
	// its id): nothing new.
	again := ctCommit(t, e, u.token, body)
	if got := stored(); got != want || again.Messages[1].Seq != r.Messages[1].Seq {
		t.Errorf("after the same turn again: stored %s, run-1 at %d then %d", got, r.Messages[1].Seq, again.Messages[1].Seq)
	}
	// A tool result without its call's id is refused as ever, and nothing is stored.
	bad := turn(ctMsg("user", "and tomorrow?"), ctMsg("tool", "{}"))
	e.call(u.token, "commit-turn", bad).must(t, http.StatusBadRequest)
	if got := stored(); got != want {
		t.Errorf("a refused turn changed the session: %s", got)
	}
	// A turn of tool work alone keeps nothing: the session is kept, no message is stored.
	toolsOnly := ctCommit(t, e, u.token, turn(ctCalls("c9"), ctResult("c9")))
	if len(toolsOnly.Messages) != 0 || stored() != want {
		t.Errorf("a turn of tool work alone: answered %+v, stored %s", toolsOnly.Messages, stored())
	}
	// Nor into another agent's session: that session is not found, as with messages.
	other := turn(ctCalls("c10"), ctResult("c10"))
	other["agent"] = "other-bot"
	e.call(u.token, "commit-turn", other).must(t, http.StatusNotFound)
	if stored() != want {
		t.Errorf("a tool-work turn for another agent changed the session: %s", stored())
	}
	// answers_only must be a boolean.
	wrong := ctTurn(sid, ctMsg("user", "hi"))
	wrong["answers_only"] = "yes"
	e.call(u.token, "commit-turn", wrong).must(t, http.StatusBadRequest)
	// Without it, tool work is stored as before.
	ctCommit(t, e, u.token, ctTurn(sid, ctCalls("c3"), ctResult("c3")))
	if n := e.count("messages", "session_id = $1", sid); n != 6 {
		t.Errorf("a turn without answers_only left %d messages, want 6", n)
	}
}
