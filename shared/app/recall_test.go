package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

var recallModes = []string{"hybrid", "vector", "text"}

// discard is a logger that drops its lines.
func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fact is a memory to store: content and metadata (JSON text, "" for none).
type fact struct {
	content  string
	metadata string
}

// remember stores facts as memories of u through a turn in a new session of agent ("" for the
// default agent), and returns their ids in order (one id for a fact given twice).
func remember(t *testing.T, a *app.App, u auth.Principal, agent string, facts ...fact) []string {
	t.Helper()
	in := app.CommitTurnInput{SessionID: ptr(uuid.NewString()),
		Messages: []app.MessageInput{{Role: ptr("user"), Content: json.RawMessage(`"remember this"`)}}}
	if agent != "" {
		in.Agent = ptr(agent)
	}
	for _, f := range facts {
		m := app.MemoryInput{Content: ptr(f.content)}
		if f.metadata != "" {
			m.Metadata = json.RawMessage(f.metadata)
		}
		in.Memories = append(in.Memories, m)
	}
	res, err := a.CommitTurn(context.Background(), u, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != len(facts) {
		t.Fatalf("stored %d memories, want %d", len(res.Memories), len(facts))
	}
	ids := make([]string, len(res.Memories))
	for i, m := range res.Memories {
		ids[i] = m.ID.String()
	}
	return ids
}

// recall recalls for u and checks every result's fields and that they come best first.
func recall(t *testing.T, a *app.App, u auth.Principal, in app.RecallInput) []memory.Hit {
	t.Helper()
	res, err := a.Recall(context.Background(), u, in)
	if err != nil {
		t.Fatalf("recall %+v: %v", in, err)
	}
	prev := math.Inf(1)
	for _, h := range res.Results {
		if math.IsNaN(h.Score) || h.Score > prev {
			t.Errorf("results not best first: %v after %v", h.Score, prev)
		}
		prev = h.Score
		if _, err := uuid.Parse(h.ID); err != nil || h.Content == "" {
			t.Errorf("result without id or content: %+v", h)
		}
		if h.CreatedAt.IsZero() {
			t.Errorf("result without created_at: %+v", h)
		}
	}
	return res.Results
}

// contents are the hits' contents, sorted.
func contents(hits []memory.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Content)
	}
	sort.Strings(out)
	return out
}

// Every mode ranks the best match first with a positive score and its metadata; text finds only
// what shares a word; the default mode is hybrid; a query or a memory without words breaks
// nothing.
func TestRecallModes(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	u := user()
	best := "Ada prefers metric units for every measurement"
	remember(t, a, u, "",
		fact{best, `{"kind":"preference"}`},
		fact{"The user's cat is named Biscuit", ""},
		fact{"Favourite programming language is Go", ""},
		fact{"Metric conversions confuse the user's cat", ""},
	)
	for _, mode := range recallModes {
		hits := recall(t, a, u, app.RecallInput{Query: ptr("metric units measurement"), Mode: ptr(mode)})
		if len(hits) == 0 || hits[0].Content != best {
			t.Errorf("%s: best hit %v, want %q", mode, hits, best)
			continue
		}
		if hits[0].Score <= 0 {
			t.Errorf("%s: best score %v", mode, hits[0].Score)
		}
		var meta map[string]any
		if err := json.Unmarshal(hits[0].Metadata, &meta); err != nil || meta["kind"] != "preference" {
			t.Errorf("%s: metadata %s", mode, hits[0].Metadata)
		}
		if len(hits) > 1 && hits[1].Score >= hits[0].Score {
			t.Errorf("%s: the best match does not score higher than the next: %v", mode, hits)
		}
	}
	hits := recall(t, a, u, app.RecallInput{Query: ptr("metric"), Mode: ptr("text")})
	if got, want := contents(hits), []string{best, "Metric conversions confuse the user's cat"}; !slices.Equal(got, want) {
		t.Errorf("text: %v, want %v", got, want)
	}
	def := recall(t, a, u, app.RecallInput{Query: ptr("metric units measurement")})
	hyb := recall(t, a, u, app.RecallInput{Query: ptr("metric units measurement"), Mode: ptr("hybrid")})
	if len(def) != len(hyb) || len(def) == 0 || def[0].ID != hyb[0].ID || def[0].Score != hyb[0].Score {
		t.Errorf("default mode %v differs from hybrid %v", def, hyb)
	}
	remember(t, a, u, "", fact{"?!? ... !!!", ""})
	for _, mode := range recallModes {
		recall(t, a, u, app.RecallInput{Query: ptr("???"), Mode: ptr(mode)})
		recall(t, a, u, app.RecallInput{Query: ptr("cat"), Mode: ptr(mode), K: ptr(int64(100))})
	}
}

// k caps the results (default 10) and must be 1 to 100.
func TestRecallK(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	u := user()
	var facts []fact
	for _, w := range []string{"apple", "brick", "cloud", "daisy", "ember", "fjord", "grape"} {
		facts = append(facts, fact{"zebra " + w, ""})
	}
	remember(t, a, u, "", facts...)
	for _, mode := range recallModes {
		for k, want := range map[int64]int{1: 1, 3: 3, 7: 7, 100: 7} {
			if n := len(recall(t, a, u, app.RecallInput{Query: ptr("zebra"), Mode: ptr(mode), K: ptr(k)})); n != want {
				t.Errorf("%s k=%d: %d results, want %d", mode, k, n, want)
			}
		}
		if n := len(recall(t, a, u, app.RecallInput{Query: ptr("zebra"), Mode: ptr(mode)})); n != 7 {
			t.Errorf("%s default k: %d results, want 7", mode, n)
		}
	}
	for _, k := range []int64{0, 101, -1, 1e9} {
		_, err := a.Recall(context.Background(), u, app.RecallInput{Query: ptr("zebra"), K: ptr(k)})
		wantField(t, fmt.Sprintf("k=%d", k), err, "k")
	}
	var more []fact
	for i := range 12 {
		more = append(more, fact{fmt.Sprintf("yak number %d %s", i, strings.Repeat("x", i+1)), ""})
	}
	remember(t, a, u, "", more...)
	if n := len(recall(t, a, u, app.RecallInput{Query: ptr("yak"), Mode: ptr("text")})); n != 10 {
		t.Errorf("default k: %d results, want 10", n)
	}
}

// filter keeps the memories whose metadata contains it (jsonb containment, case-sensitive);
// anything but an object, or a value jsonb refuses, is the client's mistake.
func TestRecallFilter(t *testing.T) {
	t.Parallel()
	a, count := newApp(t)
	u := user()
	facts := []fact{
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
	remember(t, a, u, "", facts...)
	all := make([]string, len(facts))
	for i, f := range facts {
		all[i] = f.content
	}
	for _, tt := range []struct {
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
	} {
		t.Run(tt.filter, func(t *testing.T) {
			for _, mode := range recallModes {
				hits := recall(t, a, u, app.RecallInput{Query: ptr("walrus"), Mode: ptr(mode), K: ptr(int64(100)),
					Filter: json.RawMessage(tt.filter)})
				want := slices.Clone(tt.want)
				sort.Strings(want)
				if got := contents(hits); !slices.Equal(got, want) {
					t.Errorf("%s filter %s: %v, want %v", mode, tt.filter, got, want)
				}
			}
		})
	}
	for _, bad := range []string{`[]`, `"kind"`, `1`, `true`, `[{"kind":"preference"}]`} {
		t.Run(bad, func(t *testing.T) {
			_, err := a.Recall(context.Background(), u, app.RecallInput{Query: ptr("walrus"), Filter: json.RawMessage(bad)})
			wantField(t, "filter "+bad, err, "filter")
		})
	}
	// Values JSON allows and the database's jsonb refuses are the client's mistake too.
	for _, bad := range []string{`{"kind":"\ud800"}`, `{"kind":1e200000}`} {
		t.Run(bad, func(t *testing.T) {
			_, err := a.Recall(context.Background(), u, app.RecallInput{Query: ptr("walrus"), Filter: json.RawMessage(bad)})
			if p := app.Problem(err); err == nil || p.Code != apierror.InvalidRequest {
				t.Errorf("filter %s: %v, want invalid_request", bad, err)
			}
		})
	}
	if n := count(`select count(*) from agentmem.memories where user_id = $1`, u.UserID); n != len(facts) {
		t.Errorf("%d memories, want %d", n, len(facts))
	}
}

// agent narrows recall (and get-context's memories) to that agent's memories and those of no
// agent; without agent, recall takes in every agent's.
func TestRecallAgent(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.MaxConns(4))
	a := app.New(e.Store, discard(), app.Config{})
	u := user()
	remember(t, a, u, "bot-a", fact{"otter fact of bot a", ""})
	remember(t, a, u, "bot-b", fact{"otter fact of bot b", ""})
	remember(t, a, u, "", fact{"otter fact of the default agent", ""})
	shared := "otter fact every agent shares"
	// No function writes a memory of no agent: straight into the table.
	e.Exec(t, `insert into agentmem.memories (tenant_id, user_id, agent, content, content_key, metadata, embedding,
		  embedding_model, expires_at)
		values ('', $1, '', $2, $3, '{}', $4::extensions.vector, $5, now() + interval '1 day')`,
		u.UserID, shared, store.ContentKey(shared), storetest.HashLiteral(shared), a.Embedder().Model())
	for agent, want := range map[string][]string{
		"bot-a":   {"otter fact of bot a", shared},
		"bot-b":   {"otter fact of bot b", shared},
		"default": {"otter fact of the default agent", shared},
		"bot-c":   {shared},
		"":        {"otter fact of bot a", "otter fact of bot b", "otter fact of the default agent", shared},
	} {
		t.Run(fmt.Sprintf("agent %q", agent), func(t *testing.T) {
			sort.Strings(want)
			for _, mode := range recallModes {
				in := app.RecallInput{Query: ptr("otter fact"), Mode: ptr(mode)}
				if agent != "" {
					in.Agent = ptr(agent)
				}
				if got := contents(recall(t, a, u, in)); !slices.Equal(got, want) {
					t.Errorf("agent %q, %s: %v, want %v", agent, mode, got, want)
				}
			}
			if agent == "" {
				return
			}
			c, err := a.GetContext(context.Background(), u, app.GetContextInput{SessionID: ptr(uuid.NewString()),
				Agent: ptr(agent), Query: ptr("otter fact"), RecallK: ptr(int64(50))})
			if err != nil {
				t.Fatal(err)
			}
			if got := contents(c.Memories); !slices.Equal(got, want) {
				t.Errorf("get-context agent %q: memories %v, want %v", agent, got, want)
			}
		})
	}
	for _, bad := range []string{"", "bad agent", strings.Repeat("a", 65), "bot/a"} {
		_, err := a.Recall(context.Background(), u, app.RecallInput{Query: ptr("otter"), Agent: ptr(bad)})
		wantField(t, fmt.Sprintf("agent %q", bad), err, "agent")
	}
}

// min_score drops the results scoring below it; the default 0 drops vector results of negative
// similarity.
func TestRecallMinScore(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	u := user()
	remember(t, a, u, "",
		fact{"ibis ibis ibis nests by the river", ""},
		fact{"an ibis was seen", ""},
		fact{"the ibis and the heron and the ibis chick", ""},
		fact{"unrelated text about bicycles", ""},
	)
	for _, mode := range recallModes {
		all := recall(t, a, u, app.RecallInput{Query: ptr("ibis"), Mode: ptr(mode)})
		if len(all) < 3 {
			t.Fatalf("%s: %d results", mode, len(all))
		}
		cut := all[1].Score
		want := 0
		for _, h := range all {
			if h.Score >= cut {
				want++
			}
		}
		if want >= len(all) {
			t.Fatalf("%s: scores %v leave nothing below the second; the cut proves nothing", mode, all)
		}
		got := recall(t, a, u, app.RecallInput{Query: ptr("ibis"), Mode: ptr(mode), MinScore: ptr(cut)})
		if len(got) != want {
			t.Errorf("%s min_score %v: %d results, want %d", mode, cut, len(got), want)
		}
		for _, h := range got {
			if h.Score < cut {
				t.Errorf("%s: score %v below min_score %v", mode, h.Score, cut)
			}
		}
		if n := len(recall(t, a, u, app.RecallInput{Query: ptr("ibis"), Mode: ptr(mode), MinScore: ptr(1e9)})); n != 0 {
			t.Errorf("%s min_score 1e9: %d results", mode, n)
		}
		wantAll := len(all)
		if mode == "vector" {
			wantAll = 4
		}
		if n := len(recall(t, a, u, app.RecallInput{Query: ptr("ibis"), Mode: ptr(mode), MinScore: ptr(-1e9)})); n != wantAll {
			t.Errorf("%s min_score -1e9: %d results, want %d", mode, n, wantAll)
		}
	}
}

// mmr_lambda diversifies: at 1 the ranking's order, lower a memory unlike the first comes before
// the near-copies of it.
func TestRecallMMRLambda(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	u := user()
	remember(t, a, u, "",
		fact{"the heron fishes at dawn by the river", ""},
		fact{"every dawn the heron fishes in the river", ""},
		fact{"the heron fishes the river at dawn with patience", ""},
		fact{"the heron flew over the city", ""},
	)
	order := func(lambda *float64) []string {
		t.Helper()
		// Not recall(): diversified results need not come best score first.
		res, err := a.Recall(context.Background(), u, app.RecallInput{Query: ptr("heron fishes at dawn river"),
			Mode: ptr("vector"), K: ptr(int64(4)), MMRLambda: lambda})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range res.Results {
			out = append(out, h.Content)
		}
		return out
	}
	plain := order(nil)
	if len(plain) != 4 || plain[3] != "the heron flew over the city" {
		t.Fatalf("the odd memory should rank last without MMR: %v", plain)
	}
	if got := order(ptr(1.0)); !slices.Equal(got, plain) {
		t.Errorf("mmr_lambda 1: %v, want %v", got, plain)
	}
	if got := order(ptr(0.2)); len(got) != 4 || got[0] != plain[0] || got[1] != "the heron flew over the city" {
		t.Errorf("mmr_lambda 0.2: %v; want %q first, then the odd one", got, plain[0])
	}
}

// Neither recall nor get-context gives a memory past its expiry.
func TestRecallNeverReturnsExpired(t *testing.T) {
	t.Parallel()
	e := storetest.New(t, storetest.MaxConns(4))
	a := app.New(e.Store, discard(), app.Config{})
	u := user()
	remember(t, a, u, "", fact{"narwhal tusk facts, expired", ""}, fact{"narwhal tusk facts, live", ""})
	e.Exec(t, `update agentmem.memories set expires_at = now() - interval '1 minute' where user_id = $1 and content like '%expired'`, u.UserID)
	for _, mode := range recallModes {
		got := contents(recall(t, a, u, app.RecallInput{Query: ptr("narwhal tusk facts expired"), Mode: ptr(mode)}))
		if !slices.Equal(got, []string{"narwhal tusk facts, live"}) {
			t.Errorf("%s: %v, want the live memory only", mode, got)
		}
	}
	c, err := a.GetContext(context.Background(), u, app.GetContextInput{SessionID: ptr(uuid.NewString()), Query: ptr("narwhal tusk facts expired")})
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(c.Memories); !slices.Equal(got, []string{"narwhal tusk facts, live"}) {
		t.Errorf("get-context memories %v, want the live memory only", got)
	}
}

// recall refuses a query, mode, source, mmr_lambda or min_score out of their ranges, naming the
// field; the query's limit counts characters, not bytes.
func TestRecallValidation(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	u := user()
	remember(t, a, u, "", fact{"heron", ""})
	q := ptr("heron")
	for _, c := range []struct {
		in    app.RecallInput
		field string
	}{
		{app.RecallInput{}, "query"},
		{app.RecallInput{Query: ptr("")}, "query"},
		{app.RecallInput{Query: ptr(strings.Repeat("a", 4097))}, "query"},
		{app.RecallInput{Query: ptr(strings.Repeat("é", 4097))}, "query"},
		{app.RecallInput{Query: q, Mode: ptr("Hybrid")}, "mode"},
		{app.RecallInput{Query: q, Mode: ptr("TEXT")}, "mode"},
		{app.RecallInput{Query: q, Mode: ptr("")}, "mode"},
		{app.RecallInput{Query: q, Mode: ptr("keyword")}, "mode"},
		{app.RecallInput{Query: q, MMRLambda: ptr(1.5)}, "mmr_lambda"},
		{app.RecallInput{Query: q, MMRLambda: ptr(-0.1)}, "mmr_lambda"},
		{app.RecallInput{Query: q, Source: ptr("sessions")}, "source"},
		{app.RecallInput{Query: q, Source: ptr("Messages")}, "source"},
		{app.RecallInput{Query: q, Source: ptr("memory")}, "source"},
		{app.RecallInput{Query: q, Source: ptr("")}, "source"},
	} {
		t.Run(fmt.Sprintf("%+v", c.in), func(t *testing.T) {
			_, err := a.Recall(context.Background(), u, c.in)
			wantField(t, c.field, err, c.field)
		})
	}
	for _, q := range []string{strings.Repeat("a", 4096), strings.Repeat("é", 4096), "heron " + strings.Repeat("é", 4090)} {
		recall(t, a, u, app.RecallInput{Query: ptr(q)})
	}
}
