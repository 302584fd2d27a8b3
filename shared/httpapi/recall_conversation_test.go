package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
)

// recallConversation commits one conversation between Caroline (user) and Melanie
// (assistant) for u and returns its session.
func recallConversation(t *testing.T, e *env, token string) uuid.UUID {
	t.Helper()
	session := uuid.New()
	turn := func(role, name, content string) map[string]any {
		return map[string]any{"role": role, "name": name, "content": content}
	}
	e.call(token, "commit-turn", map[string]any{"session_id": session.String(), "agent": "chat",
		"messages": []any{
			turn("user", "Caroline", "Good morning! How was the weekend?"),
			turn("assistant", "Melanie", "Lovely, we went to the lake with the kids"),
			turn("user", "Caroline", "What instruments do you play these days?"),
			turn("assistant", "Melanie", "The violin, and a little clarinet on weekends"),
			turn("user", "Caroline", "Wow, the violin! I went hiking with my dog"),
			turn("assistant", "Melanie", "Hiking sounds fun"),
		}}).must(t, http.StatusCreated)
	e.app.WaitEmbedded()
	return session
}

func recallResults(t *testing.T, e *env, token string, body map[string]any) []map[string]any {
	t.Helper()
	r := e.call(token, "recall", body).must(t, http.StatusOK)
	var out []map[string]any
	for _, x := range list(r.body["results"]) {
		out = append(out, obj(x))
	}
	return out
}

// recall over messages names each message's speaker, filters by speaker (case-insensitive)
// and role, and gives every result a relevance from 0 to 1 that min_relevance thresholds.
func TestRecallSpeakerRoleAndRelevance(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	recallConversation(t, e, u.token)
	for _, mode := range isoModes {
		hits := recallResults(t, e, u.token, map[string]any{"query": "violin", "source": "messages", "mode": mode, "k": 10})
		if len(hits) == 0 {
			t.Fatalf("%s: nothing found", mode)
		}
		for _, h := range hits {
			rel, ok := h["relevance"].(float64)
			if !ok || rel < 0 || rel > 1 {
				t.Errorf("%s: relevance %v of %v, want a number from 0 to 1", mode, h["relevance"], h["content"])
			}
			if h["name"] != "Caroline" && h["name"] != "Melanie" {
				t.Errorf("%s: result %v names no speaker", mode, h)
			}
		}
		only := recallResults(t, e, u.token, map[string]any{"query": "violin", "source": "messages", "mode": mode, "speaker": "melanie"})
		for _, h := range only {
			if h["name"] != "Melanie" {
				t.Errorf("%s, speaker melanie: %v", mode, h)
			}
		}
		if !slices.Contains(uhContents(only), "The violin, and a little clarinet on weekends") {
			t.Errorf("%s, speaker melanie: %v, want her answer", mode, uhContents(only))
		}
		for _, h := range recallResults(t, e, u.token, map[string]any{"query": "violin hiking", "source": "all", "mode": mode, "role": "user"}) {
			if h["role"] != "user" || h["source"] != "message" {
				t.Errorf("%s, role user: %v", mode, h)
			}
		}
	}
	// In text mode, the relevance is the share of the query's BM25 weight a message holds:
	// a message holding every word of the query outranks, on this scale, one holding a
	// single word, and min_relevance keeps only what reaches it.
	hits := recallResults(t, e, u.token, map[string]any{"query": "violin clarinet weekends", "source": "messages", "mode": "text"})
	if len(hits) < 2 || hits[0]["content"] != "The violin, and a little clarinet on weekends" {
		t.Fatalf("text: %v", uhContents(hits))
	}
	top, last := hits[0]["relevance"].(float64), hits[len(hits)-1]["relevance"].(float64)
	if !(top > last) {
		t.Errorf("relevance of the best %v, of the last %v: want the best higher", top, last)
	}
	kept := recallResults(t, e, u.token, map[string]any{"query": "violin clarinet weekends", "source": "messages", "mode": "text", "min_relevance": (top + last) / 2})
	if len(kept) == 0 || len(kept) >= len(hits) || kept[0]["content"] != hits[0]["content"] {
		t.Errorf("min_relevance %v kept %v of %v", (top+last)/2, uhContents(kept), uhContents(hits))
	}
	for _, h := range kept {
		if h["relevance"].(float64) < (top+last)/2 {
			t.Errorf("min_relevance kept %v", h)
		}
	}
}

// neighbours gives each message result the turns around it in its session, in order, each
// turn once: a turn that is a result itself, or shown beside a better result, is not repeated.
func TestRecallNeighbours(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	recallConversation(t, e, u.token)
	hits := recallResults(t, e, u.token, map[string]any{"query": "lake", "source": "messages", "mode": "text", "neighbours": 1})
	if len(hits) != 1 || hits[0]["content"] != "Lovely, we went to the lake with the kids" {
		t.Fatalf("hits %v", uhContents(hits))
	}
	var seqs []any
	for _, x := range list(hits[0]["context"]) {
		c := obj(x)
		seqs = append(seqs, c["seq"])
		if c["created_at"] == nil || c["role"] == nil || c["content"] == nil {
			t.Errorf("context turn %v", c)
		}
	}
	if fmt.Sprint(seqs) != "[1 3]" {
		t.Errorf("context seqs %v, want [1 3]", seqs)
	}
	hits = recallResults(t, e, u.token, map[string]any{"query": "violin", "source": "messages", "mode": "text", "neighbours": 2})
	shown := map[any]int{}
	for _, h := range hits {
		shown[h["seq"]]++
		var prev float64
		for _, x := range list(h["context"]) {
			c := obj(x)
			shown[c["seq"]]++
			if s := c["seq"].(float64); s <= prev {
				t.Errorf("context not in order: %v", h["context"])
			} else {
				prev = s
			}
		}
	}
	for seq, n := range shown {
		if n != 1 {
			t.Errorf("turn %v shown %d times in %v", seq, n, hits)
		}
	}
	// The two answers are turns 4 and 5: with 2 on each side, turns 2 to 6 (7 is none).
	for seq := 2.0; seq <= 6; seq++ {
		if shown[seq] != 1 {
			t.Errorf("turn %v not shown: %v", seq, shown)
		}
	}
	if len(shown) != 5 {
		t.Errorf("%d turns shown, want turns 2 to 6: %v", len(shown), shown)
	}
	// Without neighbours, no context.
	for _, h := range recallResults(t, e, u.token, map[string]any{"query": "violin", "source": "messages"}) {
		if _, ok := h["context"]; ok {
			t.Errorf("context without neighbours: %v", h)
		}
	}
}

// since and until keep what was created in [since, until).
func TestRecallTimeRange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	before := time.Now().UTC().Add(-time.Second)
	recallConversation(t, e, u.token)
	isoRemember(t, e, u.token, "chat", isoMem{"Melanie plays the violin", ""})
	after := time.Now().UTC().Add(time.Second)
	// Every source and mode, so that the full-text and the vector side of memories and of
	// messages each apply the range.
	for _, src := range []string{"memories", "messages", "all"} {
		for _, mode := range isoModes {
			ask := func(bound string, at time.Time) int {
				return len(recallResults(t, e, u.token, map[string]any{"query": "violin", "source": src, "mode": mode,
					bound: at.Format(time.RFC3339Nano)}))
			}
			if n := ask("since", before); n == 0 {
				t.Errorf("%s, %s, since before the turns: nothing", src, mode)
			}
			if n := ask("until", after); n == 0 {
				t.Errorf("%s, %s, until after the turns: nothing", src, mode)
			}
			if n := ask("since", after); n != 0 {
				t.Errorf("%s, %s, since after the turns: %d results", src, mode, n)
			}
			if n := ask("until", before); n != 0 {
				t.Errorf("%s, %s, until before the turns: %d results", src, mode, n)
			}
		}
	}
}

func TestRecallNewFieldsValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	for _, b := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"query": "x", "source": "messages", "neighbours": 6}, "neighbours"},
		{map[string]any{"query": "x", "source": "messages", "neighbours": -1}, "neighbours"},
		{map[string]any{"query": "x", "source": "messages", "neighbours": "2"}, "neighbours"},
		{map[string]any{"query": "x", "source": "messages", "speaker": ""}, "speaker"},
		{map[string]any{"query": "x", "speaker": "Melanie"}, "source"},
		{map[string]any{"query": "x", "source": "memories", "role": "user"}, "source"},
		{map[string]any{"query": "x", "source": "messages", "role": "robot"}, "role"},
		{map[string]any{"query": "x", "since": "yesterday"}, "since"},
		{map[string]any{"query": "x", "until": "2026-13-01T00:00:00Z"}, "until"},
		{map[string]any{"query": "x", "since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, "until"},
		{map[string]any{"query": "x", "min_relevance": 1.5}, "min_relevance"},
		{map[string]any{"query": "x", "min_relevance": -0.1}, "min_relevance"},
	} {
		t.Run(fmt.Sprint(b.body), func(t *testing.T) {
			wantProblem(t, e.call(u.token, "recall", b.body), http.StatusBadRequest, "invalid_request", b.field)
		})
	}
}

// recall says whether anything matched well: a question about nothing the user said finds
// some messages (the built-in embedder's vectors of unrelated texts are never quite apart),
// but their relevance stays below the match floor and the answer says matched false; a
// question about something said says matched true.
func TestRecallSaysWhenNothingMatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	recallConversation(t, e, u.token)
	matched := func(body map[string]any) (bool, []map[string]any) {
		t.Helper()
		r := e.call(u.token, "recall", body).must(t, http.StatusOK)
		m, ok := r.body["matched"].(bool)
		if !ok {
			t.Fatalf("%v: matched %v, want a boolean", body, r.body["matched"])
		}
		var out []map[string]any
		for _, x := range list(r.body["results"]) {
			out = append(out, obj(x))
		}
		return m, out
	}
	for _, mode := range isoModes {
		// The built-in embedder puts the second and third 0.09 and 0.15 from the nearest message.
		for _, q := range []string{"What is the capital of Mongolia?", "How many moons does Jupiter have?", "What insurance policy do you hold?"} {
			m, hits := matched(map[string]any{"query": q, "source": "messages", "mode": mode})
			if m {
				t.Errorf("%s: %q matched: %v", mode, q, hits)
			}
			for _, h := range hits {
				if rel := h["relevance"].(float64); rel >= memory.DefaultMatchRelevance {
					t.Errorf("%s: %q found %q of relevance %v", mode, q, h["content"], rel)
				}
			}
		}
		m, hits := matched(map[string]any{"query": "What instruments does Melanie play?", "source": "messages", "mode": mode})
		if !m || len(hits) == 0 {
			t.Errorf("%s: an on-topic question did not match: %v", mode, uhContents(hits))
		}
	}
	// Nothing stored at all: nothing matched.
	other := e.newUser("")
	r := e.call(other.token, "recall", map[string]any{"query": "violin"}).must(t, http.StatusOK)
	if r.body["matched"] != false || len(list(r.body["results"])) != 0 {
		t.Errorf("empty store: %v", r.body)
	}
}
