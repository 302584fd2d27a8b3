package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/store"
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

// isoAgentless stores a memory with an empty agent (a memory of the user every agent may recall),
// which no function writes, straight into the table.
func isoAgentless(t *testing.T, e *env, u user, content string) {
	t.Helper()
	vs, err := e.app.Embedder().Embed(t.Context(), []string{content})
	if err != nil {
		t.Fatal(err)
	}
	parts := make([]string, len(vs[0]))
	for i, f := range vs[0] {
		parts[i] = strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	e.exec(`insert into agentmem.memories (tenant_id, user_id, agent, content, content_key, metadata, embedding,
		  embedding_model, expires_at)
		values ($1, $2, '', $3, $4, '{}', $5::extensions.vector, $6, now() + interval '1 day')`,
		u.tenant, u.id, content, store.ContentKey(content), "["+strings.Join(parts, ",")+"]", e.app.Embedder().Model())
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

func isoSorted(hits []map[string]any) []string {
	var out []string
	for _, h := range hits {
		out = append(out, str(h["content"]))
	}
	sort.Strings(out)
	return out
}

func TestRecallModes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	best := "Ada prefers metric units for every measurement"
	isoRemember(t, e, u.token, "",
		isoMem{best, `{"kind":"preference"}`},
		isoMem{"The user's cat is named Biscuit", ""},
		isoMem{"Favourite programming language is Go", ""},
		isoMem{"Metric conversions confuse the user's cat", ""},
	)
	for _, mode := range isoModes {
		hits := isoRecall(t, e, u.token, map[string]any{"query": "metric units measurement", "mode": mode})
		if len(hits) == 0 || hits[0]["content"] != best {
			t.Errorf("%s: best hit %v, want %q", mode, hits, best)
			continue
		}
		if hits[0]["score"].(float64) <= 0 {
			t.Errorf("%s: best score %v", mode, hits[0]["score"])
		}
		if obj(hits[0]["metadata"])["kind"] != "preference" {
			t.Errorf("%s: metadata %v", mode, hits[0]["metadata"])
		}
		if len(hits) > 1 && hits[1]["score"].(float64) >= hits[0]["score"].(float64) {
			t.Errorf("%s: the best match does not score higher than the next: %v", mode, hits)
		}
	}
	// Full text finds only what shares a word; the default mode is hybrid.
	hits := isoRecall(t, e, u.token, map[string]any{"query": "metric", "mode": "text"})
	if got, want := isoSorted(hits), []string{best, "Metric conversions confuse the user's cat"}; !slices.Equal(got, want) {
		t.Errorf("text: %v, want %v", got, want)
	}
	def := isoRecall(t, e, u.token, map[string]any{"query": "metric units measurement"})
	hyb := isoRecall(t, e, u.token, map[string]any{"query": "metric units measurement", "mode": "hybrid"})
	if len(def) != len(hyb) || len(def) == 0 || def[0]["id"] != hyb[0]["id"] || def[0]["score"] != hyb[0]["score"] {
		t.Errorf("default mode %v differs from hybrid %v", def, hyb)
	}
	// A query or a memory without words ranks nothing and breaks nothing.
	isoRemember(t, e, u.token, "", isoMem{"?!? ... !!!", ""})
	for _, mode := range isoModes {
		isoRecall(t, e, u.token, map[string]any{"query": "???", "mode": mode})
		isoRecall(t, e, u.token, map[string]any{"query": "cat", "mode": mode, "k": 100})
	}
}

func TestRecallK(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	var mems []isoMem
	for _, w := range []string{"apple", "brick", "cloud", "daisy", "ember", "fjord", "grape"} {
		mems = append(mems, isoMem{"zebra " + w, ""})
	}
	isoRemember(t, e, u.token, "", mems...)
	for _, mode := range isoModes {
		for k, want := range map[int]int{1: 1, 3: 3, 7: 7, 100: 7} {
			if n := len(isoRecall(t, e, u.token, map[string]any{"query": "zebra", "mode": mode, "k": k})); n != want {
				t.Errorf("%s k=%d: %d results, want %d", mode, k, n, want)
			}
		}
		if n := len(isoRecall(t, e, u.token, map[string]any{"query": "zebra", "mode": mode})); n != 7 {
			t.Errorf("%s default k: %d results, want 7", mode, n)
		}
	}
	for _, k := range []any{0, 101, -1, 1e9, 2.5, "3", true} {
		r := e.call(u.token, "recall", map[string]any{"query": "zebra", "k": k}).must(t, http.StatusBadRequest)
		if !namesField(r, "k") {
			t.Errorf("k=%v: %s", k, r.raw)
		}
	}
	// Ten default results out of more.
	var more []isoMem
	for i := range 12 {
		more = append(more, isoMem{"yak number " + strconv.Itoa(i) + " " + strings.Repeat("x", i+1), ""})
	}
	isoRemember(t, e, u.token, "", more...)
	if n := len(isoRecall(t, e, u.token, map[string]any{"query": "yak", "mode": "text"})); n != 10 {
		t.Errorf("default k: %d results, want 10", n)
	}
}

func TestRecallFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	mems := []isoMem{
		{"walrus a", `{"kind":"preference"}`},
		{"walrus b", `{"kind":"preferences"}`},
		{"walrus c", ``},
		{"walrus d", `{"kind":"preference","source":"chat"}`},
		{"walrus e", `{"kind":["preference"]}`},
		{"walrus f", `{"kind":{"v":"preference"}}`},
		{"walrus g", `{"Kind":"preference"}`},
		{"walrus h", `{"kind":"Preference"}`},
		{"walrus i", `{"tags":{"x":1}}`},
		{"walrus j", `{"tags":{"x":1,"y":2}}`},
		{"walrus k", `{"list":["p"]}`},
		{"walrus l", `{"list":["p","q"]}`},
		{"walrus m", `{"kind":null}`},
		{"walrus n", `{"meta":{"kind":"preference"}}`},
	}
	isoRemember(t, e, u.token, "", mems...)
	all := make([]string, len(mems))
	for i, m := range mems {
		all[i] = m.content
	}
	tests := []struct {
		filter string
		want   []string
	}{
		{`{"kind":"preference"}`, []string{"walrus a", "walrus d"}},
		{`{"kind":"preference","source":"chat"}`, []string{"walrus d"}},
		{`{"kind":["preference"]}`, []string{"walrus e"}},
		{`{"kind":{"v":"preference"}}`, []string{"walrus f"}},
		{`{"tags":{"x":1}}`, []string{"walrus i"}},
		{`{"list":["p"]}`, []string{"walrus k"}},
		{`{"kind":null}`, []string{"walrus m"}},
		{`{"kind":"nothing"}`, nil},
		{`{}`, all},
		{`null`, all},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			for _, mode := range isoModes {
				hits := isoRecall(t, e, u.token, map[string]any{"query": "walrus", "mode": mode, "k": 100, "filter": json.RawMessage(tt.filter)})
				want := slices.Clone(tt.want)
				sort.Strings(want)
				if got := isoSorted(hits); !slices.Equal(got, want) {
					t.Errorf("%s filter %s: %v, want %v", mode, tt.filter, got, want)
				}
			}
		})
	}
	// Values JSON allows and the database's jsonb refuses are the client's mistake too.
	for _, bad := range []string{`{"kind":"\ud800"}`, `{"kind":1e200000}`} {
		t.Run(bad, func(t *testing.T) {
			e.call(u.token, "recall", `{"query":"walrus","filter":`+bad+`}`).must(t, http.StatusBadRequest)
		})
	}
	for _, bad := range []string{`[]`, `"kind"`, `1`, `true`, `[{"kind":"preference"}]`} {
		t.Run(bad, func(t *testing.T) {
			r := e.call(u.token, "recall", `{"query":"walrus","filter":`+bad+`}`).must(t, http.StatusBadRequest)
			if !namesField(r, "filter") {
				t.Errorf("filter %s: %s", bad, r.raw)
			}
		})
	}
}

func TestRecallAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	isoRemember(t, e, u.token, "bot-a", isoMem{"otter fact of bot a", ""})
	isoRemember(t, e, u.token, "bot-b", isoMem{"otter fact of bot b", ""})
	isoRemember(t, e, u.token, "", isoMem{"otter fact of the default agent", ""})
	isoAgentless(t, e, u, "otter fact every agent shares")
	shared := "otter fact every agent shares"
	tests := map[string][]string{
		"bot-a":   {"otter fact of bot a", shared},
		"bot-b":   {"otter fact of bot b", shared},
		"default": {"otter fact of the default agent", shared},
		"bot-c":   {shared},
		"":        {"otter fact of bot a", "otter fact of bot b", "otter fact of the default agent", shared},
	}
	for agent, want := range tests {
		t.Run(fmt.Sprintf("agent %q", agent), func(t *testing.T) {
			sort.Strings(want)
			for _, mode := range isoModes {
				body := map[string]any{"query": "otter fact", "mode": mode}
				if agent != "" {
					body["agent"] = agent
				}
				if got := isoSorted(isoRecall(t, e, u.token, body)); !slices.Equal(got, want) {
					t.Errorf("agent %q, %s: %v, want %v", agent, mode, got, want)
				}
			}
			if agent == "" {
				return
			}
			r := e.call(u.token, "get-context", map[string]any{"session_id": uuid.NewString(), "agent": agent, "query": "otter fact", "recall_k": 50}).
				must(t, http.StatusOK)
			got := isoContents(r.body["memories"])
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("get-context agent %q: memories %v, want %v", agent, got, want)
			}
		})
	}
	for _, bad := range []string{"", "bad agent", strings.Repeat("a", 65), "bot/a"} {
		t.Run(bad, func(t *testing.T) {
			r := e.call(u.token, "recall", map[string]any{"query": "otter", "agent": bad}).must(t, http.StatusBadRequest)
			if !namesField(r, "agent") {
				t.Errorf("agent %q: %s", bad, r.raw)
			}
		})
	}
}

func TestRecallMinScore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	isoRemember(t, e, u.token, "",
		isoMem{"ibis ibis ibis nests by the river", ""},
		isoMem{"an ibis was seen", ""},
		isoMem{"the ibis and the heron and the ibis chick", ""},
		isoMem{"unrelated text about bicycles", ""},
	)
	for _, mode := range isoModes {
		all := isoRecall(t, e, u.token, map[string]any{"query": "ibis", "mode": mode})
		if len(all) < 3 {
			t.Fatalf("%s: %d results", mode, len(all))
		}
		cut := all[1]["score"].(float64)
		want := 0
		for _, h := range all {
			if h["score"].(float64) >= cut {
				want++
			}
		}
		got := isoRecall(t, e, u.token, map[string]any{"query": "ibis", "mode": mode, "min_score": cut})
		if want >= len(all) {
			t.Fatalf("%s: scores %v leave nothing below the second; the cut proves nothing", mode, all)
		}
		if len(got) != want {
			t.Errorf("%s min_score %v: %d results, want %d", mode, cut, len(got), want)
		}
		for _, h := range got {
			if h["score"].(float64) < cut {
				t.Errorf("%s: score %v below min_score %v", mode, h["score"], cut)
			}
		}
		if n := len(isoRecall(t, e, u.token, map[string]any{"query": "ibis", "mode": mode, "min_score": 1e9})); n != 0 {
			t.Errorf("%s min_score 1e9: %d results", mode, n)
		}
		// Vector mode ranks every memory, and the default min_score 0 drops those of negative
		// similarity; the other modes' scores are positive.
		wantAll := len(all)
		if mode == "vector" {
			wantAll = 4
		}
		if n := len(isoRecall(t, e, u.token, map[string]any{"query": "ibis", "mode": mode, "min_score": -1e9})); n != wantAll {
			t.Errorf("%s min_score -1e9: %d results, want %d", mode, n, wantAll)
		}
	}
	e.call(u.token, "recall", map[string]any{"query": "ibis", "min_score": "high"}).must(t, http.StatusBadRequest)
}

// mmr_lambda diversifies: at 1 the ranking's order, lower a memory unlike the first comes before
// the near-copies of it.
func TestRecallMMRLambda(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	isoRemember(t, e, u.token, "",
		isoMem{"the heron fishes at dawn by the river", ""},
		isoMem{"every dawn the heron fishes in the river", ""},
		isoMem{"the heron fishes the river at dawn with patience", ""},
		isoMem{"the heron flew over the city", ""},
	)
	// Not isoRecall: diversified results need not come best score first.
	order := func(body map[string]any) []string {
		t.Helper()
		r := e.call(u.token, "recall", body).must(t, http.StatusOK)
		var out []string
		for _, h := range r.body["results"].([]any) {
			out = append(out, str(obj(h)["content"]))
		}
		return out
	}
	q := map[string]any{"query": "heron fishes at dawn river", "mode": "vector", "k": 4}
	plain := order(q)
	if len(plain) != 4 || plain[3] != "the heron flew over the city" {
		t.Fatalf("the odd memory should rank last without MMR: %v", plain)
	}
	q["mmr_lambda"] = 1
	if got := order(q); !slices.Equal(got, plain) {
		t.Errorf("mmr_lambda 1: %v, want %v", got, plain)
	}
	q["mmr_lambda"] = 0.2
	if got := order(q); len(got) != 4 || got[0] != plain[0] || got[1] != "the heron flew over the city" {
		t.Errorf("mmr_lambda 0.2: %v; want %q first, then the odd one", got, plain[0])
	}
}

func TestRecallNeverReturnsExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	isoRemember(t, e, u.token, "", isoMem{"narwhal tusk facts, expired", ""}, isoMem{"narwhal tusk facts, live", ""})
	e.exec(`update agentmem.memories set expires_at = now() - interval '1 minute' where user_id = $1 and content like '%expired'`, u.id)
	for _, mode := range isoModes {
		got := isoSorted(isoRecall(t, e, u.token, map[string]any{"query": "narwhal tusk facts expired", "mode": mode}))
		if !slices.Equal(got, []string{"narwhal tusk facts, live"}) {
			t.Errorf("%s: %v, want the live memory only", mode, got)
		}
	}
	r := e.call(u.token, "get-context", map[string]any{"session_id": uuid.NewString(), "query": "narwhal tusk facts expired"}).
		must(t, http.StatusOK)
	if got := isoContents(r.body["memories"]); !slices.Equal(got, []string{"narwhal tusk facts, live"}) {
		t.Errorf("get-context memories %v, want the live memory only", got)
	}
}

func TestRecallValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	isoRemember(t, e, u.token, "", isoMem{"heron", ""})
	bad := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "query"},
		{map[string]any{"query": ""}, "query"},
		{map[string]any{"query": strings.Repeat("a", 4097)}, "query"},
		{map[string]any{"query": strings.Repeat("é", 4097)}, "query"},
		{map[string]any{"query": 7}, "query"},
		{map[string]any{"query": "heron", "mode": "Hybrid"}, "mode"},
		{map[string]any{"query": "heron", "mode": "TEXT"}, "mode"},
		{map[string]any{"query": "heron", "mode": ""}, "mode"},
		{map[string]any{"query": "heron", "mode": "keyword"}, "mode"},
		{map[string]any{"query": "heron", "mmr_lambda": 1.5}, "mmr_lambda"},
		{map[string]any{"query": "heron", "mmr_lambda": -0.1}, "mmr_lambda"},
		{map[string]any{"query": "heron", "mmr_lambda": "high"}, "mmr_lambda"},
		{map[string]any{"query": "heron", "source": "sessions"}, "source"},
		{map[string]any{"query": "heron", "source": "Messages"}, "source"},
		{map[string]any{"query": "heron", "source": "memory"}, "source"},
		{map[string]any{"query": "heron", "source": ""}, "source"},
		{map[string]any{"query": "heron", "source": 1}, "source"},
		{map[string]any{"query": "heron", "source": []any{"messages"}}, "source"},
	}
	for _, b := range bad {
		t.Run(fmt.Sprint(b.body), func(t *testing.T) {
			wantProblem(t, e.call(u.token, "recall", b.body), http.StatusBadRequest, "invalid_request", b.field)
		})
	}
	// The limit counts characters, not bytes.
	for _, q := range []string{strings.Repeat("a", 4096), strings.Repeat("é", 4096), "heron " + strings.Repeat("é", 4090)} {
		isoRecall(t, e, u.token, map[string]any{"query": q})
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
