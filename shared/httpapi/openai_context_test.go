package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The openai format gives names the Chat Completions API takes (^[a-zA-Z0-9_-]{1,64}$): names
// that fit as stored, others with each run of other characters made "_" and cut to 64, and
// none when nothing of the name is left; the raw format gives every name as stored.
func TestGetContextOpenAINames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	long := strings.Repeat("n", 70)
	names := []string{"ada", "Ada Lovelace", "李雷", long, "-"}
	want := []any{"ada", "Ada_Lovelace", nil, long[:64], "-"}
	var msgs []any
	for _, n := range names {
		msgs = append(msgs, map[string]any{"role": "user", "content": "hello", "name": n})
	}
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid.String(), "messages": msgs}).must(t, http.StatusCreated)

	raw := e.call(u.token, "get-context", map[string]any{"session_id": sid.String()}).must(t, http.StatusOK)
	oa := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "openai"}).must(t, http.StatusOK)
	rm, om := list(raw.body["messages"]), list(oa.body["messages"])
	if len(rm) != len(names) || len(om) != len(names) {
		t.Fatalf("%d raw and %d openai messages, want %d", len(rm), len(om), len(names))
	}
	for i := range names {
		if got := obj(rm[i])["name"]; got != names[i] {
			t.Errorf("raw messages[%d].name = %v, want %q as stored", i, got, names[i])
		}
		got, present := obj(om[i])["name"]
		switch {
		case want[i] == nil && present:
			t.Errorf("openai messages[%d].name = %v, want none", i, got)
		case want[i] != nil && got != want[i]:
			t.Errorf("openai messages[%d].name = %v, want %v", i, got, want[i])
		}
	}
}
