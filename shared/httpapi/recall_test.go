package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
)

var isoModes = []string{"hybrid", "vector", "text"}

// isoMem is a memory to store: content and metadata (JSON text, "" for none).
type isoMem struct {
	content  string
	metadata string
}

// isoRemember stores memories for token's user through commit-turn, in a new session of
// agent ("" for the default agent).
func isoRemember(t *testing.T, e *env, token, agent string, mems ...isoMem) {
	t.Helper()
	items := make([]any, len(mems))
	for i, m := range mems {
		o := map[string]any{"content": m.content}
		if m.metadata != "" {
			o["metadata"] = json.RawMessage(m.metadata)
		}
		items[i] = o
	}
	body := isoTurn(uuid.New(), agent, []string{"remember this"})
	body["memories"] = items
	r := e.call(token, "commit-turn", body).must(t, http.StatusCreated)
	if n := len(list(r.body["memories"])); n != len(mems) {
		t.Fatalf("stored %d memories, want %d", n, len(mems))
	}
}

// isoRecall calls recall and checks the shape of every result and their order.
func isoRecall(t *testing.T, e *env, token string, body map[string]any) []map[string]any {
	t.Helper()
	r := e.call(token, "recall", body).must(t, http.StatusOK)
	res, ok := r.body["results"].([]any)
	if !ok {
		t.Fatalf("results is not a list: %s", r.raw)
	}
	var out []map[string]any
	prev := math.Inf(1)
	for _, x := range res {
		h := obj(x)
		score, ok := h["score"].(float64)
		if !ok || math.IsNaN(score) {
			t.Errorf("result without a numeric score: %v", h)
		}
		if score > prev {
			t.Errorf("results not best first: %v after %v (%s)", score, prev, r.raw)
		}
		prev = score
		if _, err := uuid.Parse(str(h["id"])); err != nil || str(h["content"]) == "" {
			t.Errorf("result without id or content: %v", h)
		}
		if _, ok := h["metadata"].(map[string]any); !ok {
			t.Errorf("metadata is not an object: %v", h)
		}
		if ts, err := time.Parse(time.RFC3339Nano, str(h["created_at"])); err != nil || ts.Location() != time.UTC {
			t.Errorf("created_at %v is not RFC 3339 UTC", h["created_at"])
		}
		out = append(out, h)
	}
	return out
}

// recall's body decodes into its typed input: a field of the wrong JSON type is refused as
// 400 invalid_request naming the field, as is a value out of range (the use case's refusal,
// rendered); the ranges themselves are tested on the use case (shared/app).
func TestRecallDecoding(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	for _, b := range []struct {
		body  string
		field string
	}{
		{`{"query":7}`, "query"},
		{`{"query":"heron","k":2.5}`, "k"},
		{`{"query":"heron","k":"3"}`, "k"},
		{`{"query":"heron","k":true}`, "k"},
		{`{"query":"heron","k":1e9}`, "k"},
		{`{"query":"heron","mmr_lambda":"high"}`, "mmr_lambda"},
		{`{"query":"heron","min_score":"high"}`, ""},
		{`{"query":"heron","source":1}`, "source"},
		{`{"query":"heron","source":["messages"]}`, "source"},
		{`{"query":"heron","filter":[]}`, "filter"},
		{`{"query":"heron","filter":{"kind":"\ud800"}}`, ""},
		{`{"query":"heron","mode":"keyword"}`, "mode"},
		{`{"query":"heron","agent":"bad agent"}`, "agent"},
	} {
		t.Run(b.body, func(t *testing.T) {
			wantProblem(t, e.call(u.token, "recall", b.body), http.StatusBadRequest, "invalid_request", b.field)
		})
	}
	isoRemember(t, e, u.token, "", isoMem{"heron", ""})
	if hits := isoRecall(t, e, u.token, map[string]any{"query": "heron", "k": 1, "filter": nil}); len(hits) != 1 {
		t.Errorf("%d results, want 1", len(hits))
	}
}

// source chooses what recall searches: the memories (the default), the messages of past
// conversations, or both as one ranking. Every result names its source; a message also its
// session, seq and role, and its metadata ({} when it has none, as get-context gives it). get-context's memories are
// as before.
func TestRecallSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	session := uuid.New()
	body := map[string]any{"session_id": session.String(), "agent": "guide",
		"messages": []any{
			map[string]any{"role": "user", "content": "Where do herons nest in Lisbon?", "metadata": map[string]any{"lang": "en"}},
			map[string]any{"role": "assistant", "content": "Herons nest by the Tagus river."},
		},
		"memories": []any{map[string]any{"content": "User watches herons", "metadata": map[string]any{"kind": "hobby"}}},
	}
	r := e.call(u.token, "commit-turn", body).must(t, http.StatusCreated)
	e.app.WaitEmbedded() // the messages are embedded right after the answer (MESSAGE_EMBEDDING=deferred)
	stored := list(r.body["messages"])
	window := list(e.call(u.token, "get-context", map[string]any{"session_id": body["session_id"], "agent": body["agent"]}).must(t, http.StatusOK).body["messages"])
	recall := func(b map[string]any) []map[string]any {
		t.Helper()
		r := e.call(u.token, "recall", b).must(t, http.StatusOK)
		var out []map[string]any
		for _, x := range list(r.body["results"]) {
			out = append(out, obj(x))
		}
		return out
	}
	for _, mode := range isoModes {
		msgs := recall(map[string]any{"query": "herons nest", "mode": mode, "source": "messages"})
		if len(msgs) != 2 {
			t.Fatalf("%s, messages: %v, want the two messages", mode, msgs)
		}
		for _, h := range msgs {
			if h["source"] != "message" || h["session_id"] != session.String() || h["role"] == nil {
				t.Errorf("%s: message result %v", mode, h)
			}
			i := slices.IndexFunc(stored, func(x any) bool { return obj(x)["id"] == h["id"] })
			if i < 0 || h["seq"] != obj(stored[i])["seq"] || h["created_at"] != obj(stored[i])["created_at"] {
				t.Errorf("%s: %v is not a stored message %v", mode, h, stored)
				continue
			}
			role, meta := []string{"user", "assistant"}[i], h["metadata"]
			// The message's metadata exactly as get-context gives it: {} when it has none.
			if h["role"] != role || len(window) != 2 || fmt.Sprint(meta) != fmt.Sprint(obj(window[i])["metadata"]) || len(obj(meta)) != 1-i ||
				(i == 0 && obj(meta)["lang"] != "en") {
				t.Errorf("%s: message %d: role %v, metadata %v", mode, i, h["role"], meta)
			}
		}
		all := recall(map[string]any{"query": "herons nest", "mode": mode, "source": "all", "agent": "guide"})
		var sources []string
		for _, h := range all {
			sources = append(sources, str(h["source"]))
			if h["source"] == "memory" {
				for _, k := range []string{"session_id", "seq", "role"} {
					if _, ok := h[k]; ok {
						t.Errorf("%s: a memory result carries %s: %v", mode, k, h)
					}
				}
				if obj(h["metadata"])["kind"] != "hobby" {
					t.Errorf("%s: memory result %v", mode, h)
				}
			}
		}
		sort.Strings(sources)
		if !slices.Equal(sources, []string{"memory", "message", "message"}) {
			t.Errorf("%s, all: sources %v, want the memory and the two messages", mode, sources)
		}
		def := recall(map[string]any{"query": "herons nest", "mode": mode})
		if len(def) != 1 || def[0]["source"] != "memory" || def[0]["content"] != "User watches herons" {
			t.Errorf("%s, default source: %v, want the memory alone", mode, def)
		}
		if n := len(recall(map[string]any{"query": "herons nest", "mode": mode, "source": "messages", "agent": "other"})); n != 0 {
			t.Errorf("%s: %d messages of another agent", mode, n)
		}
	}
	r = e.call(u.token, "get-context", map[string]any{"session_id": session.String(), "agent": "guide", "query": "herons"}).
		must(t, http.StatusOK)
	for _, m := range list(r.body["memories"]) {
		if _, ok := obj(m)["source"]; ok {
			t.Errorf("get-context memory %v carries a source", m)
		}
	}
}
