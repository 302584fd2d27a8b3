package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// get-context's langchain format writes data.name as messages_to_dict does: the message's name,
// and null (not absent) when it has none, so that readers expecting the key find it.
func TestGetContextLangChainName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	sid := uuid.New()
	ctCommit(t, e, u.token, ctTurn(sid,
		ctMsg("system", "Be brief."),
		ctMsg("user", "Hello.", "name", "Ada"),
		ctCalls("c1"), ctResult("c1"),
		ctMsg("assistant", "Hi Ada.")))
	r := e.call(u.token, "get-context", map[string]any{"session_id": sid.String(), "format": "langchain"}).must(t, http.StatusOK)
	msgs := list(r.body["messages"])
	if len(msgs) != 5 {
		t.Fatalf("%d messages, want 5: %s", len(msgs), r.raw)
	}
	for i, m := range msgs {
		data := obj(obj(m)["data"])
		name, ok := data["name"]
		if !ok {
			t.Errorf("messages[%d].data has no name key: %v", i, data)
			continue
		}
		want := any(nil)
		if i == 1 {
			want = "Ada"
		}
		if name != want {
			t.Errorf("messages[%d].data.name = %v, want %v", i, name, want)
		}
	}
}
