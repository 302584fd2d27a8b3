package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/memory"
)

// embeddingTurn is a turn of a user message, an assistant's tool call, the tool's output and an
// assistant answer: two of them are embedded (tool outputs and bare tool calls are not).
func embeddingTurn(session uuid.UUID, word string) map[string]any {
	return map[string]any{"session_id": session.String(), "messages": []any{
		map[string]any{"role": "user", "content": "Where does the " + word + " live?"},
		map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "lookup", "arguments": "{}"}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": `{"habitat": "river"}`},
		map[string]any{"role": "assistant", "content": "The " + word + " lives by the river."},
	}}
}

// With MESSAGE_EMBEDDING=deferred (the default), commit-turn answers before its messages are
// embedded; the process embeds them right after (user and assistant text, not the tool's output
// nor the bare tool call), and vector recall then finds them. Full text finds them at once.
func TestMessagesAreEmbeddedAfterTheAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	session := uuid.New()
	word := "axolotl" + uuid.NewString()[:6]
	e.call(u.token, "commit-turn", embeddingTurn(session, word)).must(t, http.StatusCreated)
	r := e.call(u.token, "recall", map[string]any{"query": word, "mode": "text", "source": "messages"}).must(t, http.StatusOK)
	if n := len(list(r.body["results"])); n != 2 {
		t.Errorf("text recall right after the answer: %d messages, want 2: %s", n, r.raw)
	}
	e.app.WaitEmbedded()
	if n := e.count("messages", "session_id = $1 and embedding is not null", session); n != 2 {
		t.Errorf("%d messages with a vector, want 2 (the user's and the assistant's text)", n)
	}
	r = e.call(u.token, "recall", map[string]any{"query": word + " river", "mode": "vector", "source": "messages"}).must(t, http.StatusOK)
	if n := len(list(r.body["results"])); n != 2 {
		t.Errorf("vector recall after the embedding: %d messages, want 2: %s", n, r.raw)
	}
	// A retry of the same messages by id stores nothing again and embeds nothing again.
	if n := e.count("messages", "session_id = $1", session); n != 4 {
		t.Errorf("%d messages stored, want 4", n)
	}
}

// With MESSAGE_EMBEDDING=commit the vectors are stored by the commit itself: there when it
// answers.
func TestMessagesEmbeddedAtCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false).withConfigs(t, httpapi.Config{}, app.Config{MessageEmbedding: memory.MessageEmbeddingCommit})
	u := e.newUser("")
	session := uuid.New()
	e.call(u.token, "commit-turn", embeddingTurn(session, "narwhal")).must(t, http.StatusCreated)
	if n := e.count("messages", "session_id = $1 and embedding is not null", session); n != 2 {
		t.Errorf("%d messages with a vector when commit-turn answered, want 2", n)
	}
}
