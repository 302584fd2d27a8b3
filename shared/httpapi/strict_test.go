package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// Field names match exactly, no object names a member twice (the request's own objects or the
// free-form ones), and no string holds an unpaired surrogate: each is a 400 invalid_request
// naming the field, and nothing is stored.
func TestStrictBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	sub := func(old, new string) string { return isoValidTurnWith(t, sid, old, new) }
	tests := []struct {
		name  string
		fn    string
		body  string
		field string
	}{
		// Names spelled otherwise than the contract's.
		{"upper-case field", "commit-turn", sub(`"session_id"`, `"SESSION_ID"`), "SESSION_ID"},
		{"title-case field", "commit-turn", sub(`"ttl_seconds"`, `"Ttl_Seconds"`), "Ttl_Seconds"},
		{"upper-case message field", "commit-turn", sub(`"role":"user"`, `"ROLE":"user"`), "messages[0].ROLE"},
		{"upper-case tool call field", "commit-turn", sub(`"arguments"`, `"Arguments"`), "messages[1].tool_calls[0].function.Arguments"},
		{"upper-case acting-for field", "recall", `{"query":"x","USER_ID":"` + u.id.String() + `"}`, "USER_ID"},
		{"upper-case active-session field", "active-session", `{"SESSION_ID":"` + sid.String() + `","mode":"activate"}`, "SESSION_ID"},
		{"upper-case op", "sessions", `{"OP":"list"}`, "op"},
		{"upper-case op beside op", "sessions", `{"op":"list","OP":"history"}`, "OP"},
		// Names given twice.
		{"duplicate field", "commit-turn", sub(`"ttl_seconds":3600`, `"ttl_seconds":3600,"ttl_seconds":60`), "ttl_seconds"},
		{"duplicate message field", "commit-turn", sub(`"role":"user"`, `"role":"user","role":"system"`), "messages[0].role"},
		{"duplicate metadata key", "commit-turn", sub(`"lang":"en"`, `"lang":"en","lang":"fr"`), "messages[0].metadata.lang"},
		{"duplicate nested metadata key", "commit-turn", sub(`"kind":"profile"`, `"kind":{"a":[{"b":1,"b":2}]}`), "memories[0].metadata.kind.a[0].b"},
		{"duplicate op", "sessions", `{"op":"list","op":"history"}`, "op"},
		{"duplicate filter key", "recall", `{"query":"x","filter":{"k":1,"k":2}}`, "filter.k"},
		{"duplicate value key", "user-memory", `{"op":"set","key":"k","value":{"a":1,"a":1}}`, "value.a"},
		// Unpaired surrogates, in every kind of field.
		{"surrogate in content", "commit-turn", sub("My name is Ada.", `My name is \ud800.`), "messages[0].content"},
		{"low surrogate in content", "commit-turn", sub("Noted, Ada.", `Noted, \udc00Ada.`), "messages[3].content"},
		{"reversed pair in memory", "commit-turn", sub("User is called Ada.", `\udc00\ud800`), "memories[0].content"},
		{"surrogate in name", "commit-turn", sub(`"name":"lookup"}`, `"name":"look\ud800up"}`), "messages[2].name"},
		{"surrogate in function name", "commit-turn", sub(`"name":"lookup"`, `"name":"look\ud800up"`), "messages[1].tool_calls[0].function.name"},
		{"surrogate in agent", "commit-turn", sub(`"support-bot"`, `"support\ud800bot"`), "agent"},
		{"surrogate in tool arguments", "commit-turn", sub(`{\"q\":\"units\"}`, `\ud800`), "messages[1].tool_calls[0].function.arguments"},
		{"surrogate in metadata", "commit-turn", sub(`"lang":"en"`, `"lang":"\ud800"`), "messages[0].metadata.lang"},
		{"surrogate in metadata key", "commit-turn", sub(`"lang":"en"`, `"l\ud800":"en"`), "messages[0].metadata"},
		{"surrogate in query", "recall", `{"query":"\ud800"}`, "query"},
		{"surrogate in op", "sessions", `{"op":"li\ud800st"}`, "op"},
		{"surrogate in title", "sessions", `{"op":"set_title","session_id":"` + sid.String() + `","title":"\ud800"}`, "title"},
		{"surrogate in notes", "notes", `{"op":"overwrite","content":"a\udfffb"}`, "content"},
		{"surrogate in state", "user-state", `{"op":"set","mode":"\ud800"}`, "mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := *e
			e.t = t
			wantProblem(t, e.call(u.token, tt.fn, tt.body), http.StatusBadRequest, "invalid_request", tt.field)
		})
	}
	for _, table := range []string{"sessions", "messages", "memories", "active_sessions", "user_memory", "user_state", "notes"} {
		if n := e.count(table, "user_id = $1", u.id); n != 0 {
			t.Errorf("%d rows in %s after refused bodies", n, table)
		}
	}
	// A surrogate pair is a character like any other, and stored as sent.
	e.call(u.token, "commit-turn", sub("My name is Ada.", `My name is \ud83d\ude00.`)).must(t, http.StatusCreated)
	if n := e.count("messages", "user_id = $1 and content = $2", u.id, "My name is 😀."); n != 1 {
		t.Errorf("the escaped pair was not stored as one character")
	}
}
