package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// msg is a message of a turn: role and content (a JSON string).
func msg(role, content string) app.MessageInput {
	c, _ := json.Marshal(content)
	return app.MessageInput{Role: ptr(role), Content: c}
}

// toolCall is one tool call as Chat Completions shapes it.
func toolCall(id, name string) memory.ToolCall {
	return memory.ToolCall{ID: id, Type: "function", Function: memory.FunctionCall{Name: name, Arguments: "{}"}}
}

// idemKey is a present Idempotency-Key k.
func idemKey(k string) *app.IdempotencyKey {
	return &app.IdempotencyKey{Key: k, Present: true, RequestHash: app.RequestHash([]byte(k))}
}

// commit-turn validates every field of the turn before storing anything and names the field at
// fault; the edges that are valid are stored whole.
func TestCommitTurnValidation(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.MaxConns(4))
	a := app.New(e.Store, discard(), app.Config{})
	ctx := context.Background()
	// The parallel subtests count over a pool of their own, each reporting to its own t.
	pool, err := pgxpool.New(ctx, e.DB.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	countIn := func(t *testing.T) func(q string, args ...any) int {
		return func(q string, args ...any) int {
			t.Helper()
			var n int
			if err := pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	long := strings.Repeat
	many := func(n int) []app.MessageInput {
		out := make([]app.MessageInput, n)
		for i := range out {
			out[i] = msg("user", fmt.Sprintf("m%d", i))
		}
		return out
	}
	// turn is a valid turn of one message, changed by f.
	turn := func(f func(in *app.CommitTurnInput)) func(sid string) app.CommitTurnInput {
		return func(sid string) app.CommitTurnInput {
			in := app.CommitTurnInput{SessionID: ptr(sid), Messages: []app.MessageInput{msg("user", "hi")}}
			f(&in)
			return in
		}
	}
	// one is a turn of the one message m.
	one := func(m app.MessageInput) func(sid string) app.CommitTurnInput {
		return turn(func(in *app.CommitTurnInput) { in.Messages = []app.MessageInput{m} })
	}
	with := func(m app.MessageInput, f func(*app.MessageInput)) app.MessageInput { f(&m); return m }
	calls := with(msg("assistant", ""), func(m *app.MessageInput) { m.ToolCalls = []memory.ToolCall{toolCall("c1", "lookup")} })
	result := with(msg("tool", `{"ok":1}`), func(m *app.MessageInput) { m.ToolCallID = ptr("c1") })

	cases := []struct {
		name  string
		in    func(sid string) app.CommitTurnInput
		field string // "" with ok false: refused without a field
		ok    bool
	}{
		{"session_id missing", turn(func(in *app.CommitTurnInput) { in.SessionID = nil }), "session_id", false},
		{"session_id not a UUID", turn(func(in *app.CommitTurnInput) { in.SessionID = ptr("not-a-uuid") }), "session_id", false},
		{"session_id as URN", turn(func(in *app.CommitTurnInput) { in.SessionID = ptr("urn:uuid:" + *in.SessionID) }), "session_id", false},
		{"messages missing", turn(func(in *app.CommitTurnInput) { in.Messages = nil }), "messages", false},
		{"messages empty", turn(func(in *app.CommitTurnInput) { in.Messages = []app.MessageInput{} }), "messages", false},
		{"101 messages", turn(func(in *app.CommitTurnInput) { in.Messages = many(101) }), "messages", false},
		{"role missing", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.Role = nil })), "messages[0].role", false},
		{"role unknown", one(msg("robot", "hi")), "messages[0].role", false},
		{"role wrong case", one(msg("User", "hi")), "messages[0].role", false},
		{"content missing", one(with(msg("user", ""), func(m *app.MessageInput) { m.Content = nil })), "messages[0].content", false},
		{"content null", one(with(msg("user", ""), func(m *app.MessageInput) { m.Content = json.RawMessage(`null`) })), "messages[0].content", false},
		{"content empty on user", one(msg("user", "")), "messages[0].content", false},
		{"content empty on assistant without tool_calls", one(msg("assistant", "")), "messages[0].content", false},
		{"content empty on tool", one(with(msg("tool", ""), func(m *app.MessageInput) { m.ToolCallID = ptr("c1") })), "messages[0].content", false},
		{"content a number", one(with(msg("user", ""), func(m *app.MessageInput) { m.Content = json.RawMessage(`5`) })), "messages[0].content", false},
		{"content 100,001 characters", one(msg("user", long("a", 100_001))), "messages[0].content", false},
		{"content 100,001 multi-byte characters", one(msg("user", long("é", 100_001))), "messages[0].content", false},
		{"content with NUL", one(msg("user", "a\x00b")), "", false},
		{"tool without tool_call_id", one(msg("tool", "{}")), "messages[0].tool_call_id", false},
		{"tool with empty tool_call_id", one(with(msg("tool", "{}"), func(m *app.MessageInput) { m.ToolCallID = ptr("") })), "messages[0].tool_call_id", false},
		{"tool_call_id on a user message", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.ToolCallID = ptr("c1") })), "messages[0].tool_call_id", false},
		{"tool_calls on a user message", one(with(msg("user", "hi"), func(m *app.MessageInput) {
			m.ToolCalls = []memory.ToolCall{toolCall("c1", "f")}
		})), "messages[0].tool_calls", false},
		{"empty tool_calls on a user message", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.ToolCalls = []memory.ToolCall{} })), "messages[0].tool_calls", false},
		{"tool call without id", one(with(msg("assistant", ""), func(m *app.MessageInput) {
			m.ToolCalls = []memory.ToolCall{toolCall("", "f")}
		})), "messages[0].tool_calls[0].id", false},
		{"tool call of another type", one(with(msg("assistant", ""), func(m *app.MessageInput) {
			tc := toolCall("c1", "f")
			tc.Type = "code"
			m.ToolCalls = []memory.ToolCall{tc}
		})), "messages[0].tool_calls[0].type", false},
		{"tool call without function name", one(with(msg("assistant", ""), func(m *app.MessageInput) {
			m.ToolCalls = []memory.ToolCall{toolCall("c1", "")}
		})), "messages[0].tool_calls[0].function.name", false},
		{"name empty", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.Name = ptr("") })), "messages[0].name", false},
		{"message id not printable", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.ID = ptr("m\x011") })), "messages[0].id", false},
		{"metadata a string", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.Metadata = json.RawMessage(`"x"`) })), "messages[0].metadata", false},
		{"metadata an array", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.Metadata = json.RawMessage(`[1]`) })), "messages[0].metadata", false},
		{"metadata over 16 KiB", one(with(msg("user", "hi"), func(m *app.MessageInput) {
			m.Metadata = json.RawMessage(`{"blob":"` + long("x", 16<<10) + `"}`)
		})), "messages[0].metadata", false},
		{"ttl_seconds 0", turn(func(in *app.CommitTurnInput) { in.TTLSeconds = ptr(int64(0)) }), "ttl_seconds", false},
		{"ttl_seconds negative", turn(func(in *app.CommitTurnInput) { in.TTLSeconds = ptr(int64(-60)) }), "ttl_seconds", false},
		{"memory content missing", turn(func(in *app.CommitTurnInput) { in.Memories = []app.MemoryInput{{}} }), "memories[0].content", false},
		{"memory content blank", turn(func(in *app.CommitTurnInput) {
			in.Memories = []app.MemoryInput{{Content: ptr("fine")}, {Content: ptr("   ")}}
		}), "memories[1].content", false},
		{"memory metadata not an object", turn(func(in *app.CommitTurnInput) {
			in.Memories = []app.MemoryInput{{Content: ptr("x"), Metadata: json.RawMessage(`3`)}}
		}), "memories[0].metadata", false},
		{"Idempotency-Key of 256 characters", turn(func(in *app.CommitTurnInput) { in.Idempotency = idemKey(long("k", 256)) }), "Idempotency-Key", false},
		{"Idempotency-Key with a control character", turn(func(in *app.CommitTurnInput) { in.Idempotency = idemKey("a\x01b") }), "Idempotency-Key", false},
		{"Idempotency-Key empty", turn(func(in *app.CommitTurnInput) { in.Idempotency = idemKey("") }), "Idempotency-Key", false},
		{"agent with a space", turn(func(in *app.CommitTurnInput) { in.Agent = ptr("bad agent!") }), "agent", false},
		{"agent of 65 characters", turn(func(in *app.CommitTurnInput) { in.Agent = ptr(long("a", 65)) }), "agent", false},
		{"agent empty", turn(func(in *app.CommitTurnInput) { in.Agent = ptr("") }), "agent", false},
		{"an invalid message among valid ones", turn(func(in *app.CommitTurnInput) {
			in.Messages = []app.MessageInput{msg("user", "hello"), msg("assistant", "hi"), msg("robot", "beep"), msg("user", "bye")}
			in.Memories = []app.MemoryInput{{Content: ptr("Something worth keeping.")}}
			in.Idempotency = idemKey("k-" + uuid.NewString())
		}), "messages[2].role", false},

		// The edges that are valid.
		{"100,000 multi-byte characters", one(msg("user", long("é", 100_000))), "", true},
		{"100,000 characters of 4 bytes", one(msg("user", long("😀", 100_000))), "", true},
		{"empty content on assistant with tool_calls", turn(func(in *app.CommitTurnInput) { in.Messages = []app.MessageInput{calls, result} }), "", true},
		{"no content on assistant with tool_calls", turn(func(in *app.CommitTurnInput) {
			in.Messages = []app.MessageInput{with(calls, func(m *app.MessageInput) { m.Content = nil }), result}
		}), "", true},
		{"100 messages", turn(func(in *app.CommitTurnInput) { in.Messages = many(100) }), "", true},
		{"Idempotency-Key of 255 characters", turn(func(in *app.CommitTurnInput) { in.Idempotency = idemKey(long("k", 255)) }), "", true},
		{"agent of 64 characters", turn(func(in *app.CommitTurnInput) { in.Agent = ptr(long("a", 60) + "_.:-") }), "", true},
		{"metadata null", one(with(msg("user", "hi"), func(m *app.MessageInput) { m.Metadata = json.RawMessage(`null`) })), "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			count := countIn(t)
			u := user()
			sid := uuid.NewString()
			_, err := a.CommitTurn(ctx, u, tc.in(sid))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if n := count(`select count(*) from agentmem.messages where session_id = $1 and user_id = $2`, sid, u.UserID); n == 0 {
					t.Errorf("nothing stored")
				}
				if strings.Contains(tc.name, "100,000") {
					if n := count(`select char_length(content) from agentmem.messages where session_id = $1`, sid); n != 100_000 {
						t.Errorf("stored %d characters, want 100000", n)
					}
				}
				return
			}
			if tc.field != "" {
				wantField(t, tc.name, err, tc.field)
			} else if p := app.Problem(err); err == nil || p.Code != "invalid_request" {
				t.Errorf("%v, want invalid_request", err)
			}
			nothingStored(t, count, u.UserID)
		})
	}
	// A service caller names the user.
	_, err = a.CommitTurn(ctx, auth.Principal{Role: auth.RoleService}, app.CommitTurnInput{SessionID: ptr(uuid.NewString()),
		Messages: []app.MessageInput{msg("user", "hi")}})
	wantField(t, "service without user_id", err, "user_id")
}

// nothingStored fails if any row of the session tables belongs to user.
func nothingStored(t *testing.T, count func(q string, args ...any) int, user string) {
	t.Helper()
	for _, table := range []string{"sessions", "messages", "memories", "active_sessions", "idempotency_keys"} {
		if n := count(`select count(*) from agentmem.`+table+` where user_id = $1`, user); n != 0 {
			t.Errorf("%d rows of %s stored for the user", n, table)
		}
	}
}
