package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/schema"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// jsonSame reports whether two JSON texts hold the same value (jsonb keeps values, not the
// order of an object's keys).
func jsonSame(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// A message committed with content parts keeps its text in content, for search and budgets,
// and its parts as committed; get-context and history give them back.
func TestCommitContentParts(t *testing.T) {
	t.Parallel()
	st, _, _ := commitEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	sid := uuid.New()
	parts := json.RawMessage(`[{"type":"text","text":"What is on this picture?"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
		`{"type":"text","text":"Be brief."}]`)
	text, err := memory.ContentText(parts)
	if err != nil {
		t.Fatal(err)
	}
	p := store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour, Messages: []memory.NewMessage{
		{Role: memory.RoleUser, Content: text, Parts: parts},
		{Role: memory.RoleAssistant, Content: "A cat."},
	}}
	if _, _, err := commitTurn(st, ctx, p); err != nil {
		t.Fatal(err)
	}
	c, err := getContext(st, ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 2 {
		t.Fatalf("%d messages, want 2", len(c.Messages))
	}
	m := c.Messages[0]
	if m.Content != "What is on this picture?\nBe brief." || !jsonSame(t, m.Parts, parts) {
		t.Errorf("read back content %q, parts %s", m.Content, m.Parts)
	}
	if want := memory.EstimateTokens(text, nil, nil, nil); m.Tokens != want {
		t.Errorf("tokens %d, want %d (the estimate of the text)", m.Tokens, want)
	}
	if c.Messages[1].Parts != nil || c.Messages[1].Content != "A cat." {
		t.Errorf("a string message reads back as %q with parts %s", c.Messages[1].Content, c.Messages[1].Parts)
	}
	h, err := st.SessionHistory(ctx, store.HistoryParams{Scope: sc, SessionID: sid, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 2 || !jsonSame(t, h.Messages[0].Parts, parts) || h.Messages[1].Parts != nil {
		t.Errorf("history: %+v", h.Messages)
	}
}

// since leaves out the messages created before it; answers_only the tool traffic.
func TestGetContextSinceAndAnswersOnly(t *testing.T) {
	t.Parallel()
	st, _, exec := commitEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	sid := uuid.New()
	id := "c1"
	commit := func(msgs ...memory.NewMessage) {
		t.Helper()
		if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	commit(memory.NewMessage{Role: memory.RoleUser, Content: "old question"},
		memory.NewMessage{Role: memory.RoleAssistant, Content: "old answer"})
	// The first turn happened an hour ago.
	exec(`update agentmem.messages set created_at = now() - interval '1 hour' where session_id = $1`, sid)
	cutoff := time.Now().Add(-time.Minute)
	commit(memory.NewMessage{Role: memory.RoleUser, Content: "weather?"},
		memory.NewMessage{Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{ID: id, Type: "function", Function: memory.FunctionCall{Name: "weather"}}}},
		memory.NewMessage{Role: memory.RoleTool, Content: "rain", ToolCallID: &id},
		memory.NewMessage{Role: memory.RoleAssistant, Content: "Let me also check tomorrow.", ToolCalls: []memory.ToolCall{{ID: "c2", Type: "function", Function: memory.FunctionCall{Name: "weather"}}}},
		memory.NewMessage{Role: memory.RoleTool, Content: "sun", ToolCallID: ptr("c2")},
		memory.NewMessage{Role: memory.RoleAssistant, Content: "Rain today, sun tomorrow."})

	get := func(p store.ContextParams) []memory.Message {
		t.Helper()
		p.Scope, p.SessionID = sc, sid
		if p.MaxMessages == 0 {
			p.MaxMessages = 20
		}
		c, err := getContext(st, ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		tokens := 0
		for _, m := range c.Messages {
			tokens += m.Tokens
		}
		if c.Usage.Messages != len(c.Messages) || c.Usage.TokenEstimate != tokens {
			t.Errorf("usage %+v for %d messages of %d tokens", c.Usage, len(c.Messages), tokens)
		}
		if c.Summary != nil {
			t.Errorf("summary %+v, want none", c.Summary)
		}
		return c.Messages
	}
	contents := func(ms []memory.Message) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, m.Content)
		}
		return out
	}
	if got := contents(get(store.ContextParams{Since: &cutoff})); !reflect.DeepEqual(got,
		[]string{"weather?", "", "rain", "Let me also check tomorrow.", "sun", "Rain today, sun tomorrow."}) {
		t.Errorf("since: %q", got)
	}
	future := time.Now().Add(time.Hour)
	if got := get(store.ContextParams{Since: &future}); len(got) != 0 {
		t.Errorf("since the future: %q", contents(got))
	}
	answers := get(store.ContextParams{AnswersOnly: true})
	if got := contents(answers); !reflect.DeepEqual(got,
		[]string{"old question", "old answer", "weather?", "Let me also check tomorrow.", "Rain today, sun tomorrow."}) {
		t.Errorf("answers only: %q", got)
	}
	for _, m := range answers {
		if m.ToolCalls != nil || m.Role == memory.RoleTool {
			t.Errorf("answers only kept tool traffic: %+v", m)
		}
	}
	// The tool traffic takes no place of the window: the 3 most recent answers.
	if got := contents(get(store.ContextParams{AnswersOnly: true, MaxMessages: 3})); !reflect.DeepEqual(got,
		[]string{"weather?", "Let me also check tomorrow.", "Rain today, sun tomorrow."}) {
		t.Errorf("answers only, 3 messages: %q", got)
	}
	if got := contents(get(store.ContextParams{AnswersOnly: true, Since: &cutoff})); !reflect.DeepEqual(got,
		[]string{"weather?", "Let me also check tomorrow.", "Rain today, sun tomorrow."}) {
		t.Errorf("answers only since the cutoff: %q", got)
	}
}

func ptr[T any](v T) *T { return &v }

// The migration that adds content parts keeps every message stored before it valid: each reads
// back as the string it was, and new messages with parts go in beside them.
func TestContentPartsMigrationKeepsOldMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	server := testdb.ServerURL(t)
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := "agentmem_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	if _, err := admin.Exec(ctx, "create database "+pgx.Identifier{name}.Sanitize()+" template template0"); err != nil {
		t.Fatal(err)
	}
	db := testdb.Open(server, name)
	t.Cleanup(func() {
		if err := db.Drop(); err != nil {
			t.Log(err)
		}
	})
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := schema.Bootstrap(ctx, conn); err != nil {
		t.Fatal(err)
	}
	migs, err := agentmem.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	const partsMigration = "supabase/migrations/20261124020000_add_message_parts.sql"
	apply := func(m agentmem.Migration) {
		t.Helper()
		if _, err := conn.Exec(ctx, m.SQL, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("apply %s: %v", m.Name, err)
		}
	}
	i := 0
	for ; i < len(migs) && migs[i].Name < partsMigration; i++ {
		apply(migs[i])
	}
	if i == len(migs) || migs[i].Name != partsMigration {
		t.Fatalf("migration %s not found", partsMigration)
	}
	// Rows as the schema before it stored them: no parts column.
	sc := storetest.Scope(memory.DefaultAgent)
	sid := uuid.New()
	_, err = conn.Exec(ctx, `
		insert into agentmem.sessions (id, user_id, agent, last_seq, expires_at) values ($1, $2, 'default', 3, now() + interval '1 hour');
		`, sid, sc.UserID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `
		insert into agentmem.messages (session_id, seq, id, user_id, agent, role, content, tool_calls, tool_call_id, token_estimate, expires_at)
		values ($1, 1, gen_random_uuid(), $2, 'default', 'user', 'hello from before', null, null, 9, now() + interval '1 hour'),
		       ($1, 2, gen_random_uuid(), $2, 'default', 'assistant', '', '[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]', null, 9, now() + interval '1 hour'),
		       ($1, 3, gen_random_uuid(), $2, 'default', 'tool', 'ok', null, 'c1', 9, now() + interval '1 hour')`, sid, sc.UserID)
	if err != nil {
		t.Fatal(err)
	}
	for ; i < len(migs); i++ {
		apply(migs[i])
	}
	var nulls int
	if err := conn.QueryRow(ctx, `select count(*) from agentmem.messages where parts is null`).Scan(&nulls); err != nil || nulls != 3 {
		t.Fatalf("%d old rows with null parts (%v), want 3", nulls, err)
	}
	// The check holds for new rows.
	if _, err := conn.Exec(ctx, `update agentmem.messages set parts = '[]' where seq = 1`); err == nil {
		t.Error("an empty parts array was stored")
	}

	st := storetest.Open(t, db, storetest.MaxConns(2))
	parts := json.RawMessage(`[{"type":"text","text":"and after"},{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]`)
	if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour,
		Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: "and after", Parts: parts}}}); err != nil {
		t.Fatal(err)
	}
	c, err := getContext(st, ctx, store.ContextParams{Scope: sc, SessionID: sid, MaxMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 4 {
		t.Fatalf("%d messages, want 4", len(c.Messages))
	}
	raw, err := json.Marshal(c.Messages)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range []string{`"hello from before"`, `""`, `"ok"`, string(parts)} {
		if !jsonSame(t, got[k].Content, []byte(want)) {
			t.Errorf("message %d content %s, want %s", k+1, got[k].Content, want)
		}
	}
}
