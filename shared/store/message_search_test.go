package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
	"github.com/agentmem/agentmem/shared/testdb"
)

// commitMessages commits msgs (and facts) to session sid of sc and returns where each message landed.
func commitMessages(t *testing.T, st *store.Store, sc memory.Scope, sid uuid.UUID, msgs []memory.NewMessage, facts ...string) memory.CommitResult {
	t.Helper()
	p := store.CommitParams{Scope: sc, SessionID: sid, TTL: time.Hour, Messages: msgs}
	for _, f := range facts {
		p.Memories = append(p.Memories, memory.NewMemory{Content: f})
	}
	res, _, err := commitTurn(st, context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func msg(role, content string) memory.NewMessage {
	m := memory.NewMessage{Role: role, Content: content}
	if role == memory.RoleTool {
		id := "call_1"
		m.ToolCallID = &id
	}
	return m
}

// key is a hit's place: a memory's id, or a message's session and seq.
func key(h memory.Hit) string {
	if h.Source == memory.HitMessage {
		return fmt.Sprintf("message %s/%d", h.SessionID, *h.Seq)
	}
	return "memory " + h.ID
}

func keys(hits []memory.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = key(h)
	}
	return out
}

// vectorRows counts the messages of a user that hold a vector of model, by role.
func vectorRows(t *testing.T, conn *pgx.Conn, user string, model string) map[string]int {
	t.Helper()
	rows, err := conn.Query(context.Background(), `select role, count(*) from agentmem.messages
		where user_id = $1 and embedding is not null and embedding_model = $2 group by role`, user, model)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	var role string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&role, &n}, func() error { out[role] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Recall over messages ranks the caller's unexpired messages by each mode, of the agent asked,
// with the metadata filter and min_score; each result names its session, seq and role; tool
// messages are found by full text but hold no vector; another user's messages, expired ones and
// memories never come back; the default source is still the memories alone.
func TestRecallMessages(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user, other := uuid.New(), uuid.New()
	support := memory.Scope{UserID: user.String(), Agent: "support"}
	s1, s2 := uuid.New(), uuid.New()
	flight := msg(memory.RoleUser, "My flight to Porto leaves on Friday morning")
	flight.Metadata = json.RawMessage(`{"topic":"travel"}`)
	r1 := commitMessages(t, e.st, support, s1, []memory.NewMessage{
		flight,
		msg(memory.RoleAssistant, "I will remind you of the Porto flight on Thursday evening"),
		msg(memory.RoleTool, `{"forecast": "rain in Porto on Friday"}`),
		msg(memory.RoleUser, "I also need a vegetarian restaurant near the hotel"),
	}, "User flies to Porto often")
	r2 := commitMessages(t, e.st, memory.Scope{UserID: user.String(), Agent: "sales"}, s2, []memory.NewMessage{
		msg(memory.RoleUser, "The Porto office opens at nine on Friday"),
	})
	commitMessages(t, e.st, memory.Scope{UserID: other.String(), Agent: "support"}, uuid.New(), []memory.NewMessage{
		msg(memory.RoleUser, "My flight to Porto leaves on Friday morning too"),
	})
	expired := commitMessages(t, e.st, support, uuid.New(), []memory.NewMessage{msg(memory.RoleUser, "An old flight to Porto on Friday")})
	if _, err := e.conn.Exec(ctx, `update agentmem.messages set expires_at = now() - interval '1 second'
		where session_id = $1`, expired.SessionID); err != nil {
		t.Fatal(err)
	}

	// Every message with text but the tool's output holds a vector of the configured model.
	if got, want := vectorRows(t, e.conn, user.String(), embedding.Hash{}.Model()), map[string]int{"user": 4, "assistant": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages with a vector, by role: %v, want %v", got, want)
	}

	recallP := func(p store.RecallParams) []memory.Hit {
		t.Helper()
		if p.Scope.UserID == "" {
			p.Scope.UserID = user.String()
		}
		p.Source, p.K = memory.SourceMessages, max(p.K, 10)
		hits, err := recall(e.st, ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if h.Source != memory.HitMessage || h.SessionID == nil || h.Seq == nil || h.Role == nil {
				t.Fatalf("%s: result %d is not a message with its place: %+v", p.Mode, i, h)
			}
			if *h.SessionID != s1 && *h.SessionID != s2 {
				t.Fatalf("%s: a message of session %s, which is expired or another user's", p.Mode, h.SessionID)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("%s: not best first: %v", p.Mode, contents(hits))
			}
		}
		return hits
	}
	q := "flight to Porto on Friday"
	for _, mode := range []string{memory.ModeText, memory.ModeVector, memory.ModeHybrid} {
		hits := recallP(store.RecallParams{Query: q, Mode: mode})
		if len(hits) == 0 || hits[0].Content != flight.Content {
			t.Fatalf("%s: %v, want %q first", mode, contents(hits), flight.Content)
		}
		h := hits[0]
		if h.ID != r1.Messages[0].ID || *h.SessionID != s1 || *h.Seq != r1.Messages[0].Seq || *h.Role != memory.RoleUser ||
			string(h.Metadata) != `{"topic": "travel"}` || !h.CreatedAt.Equal(r1.Messages[0].CreatedAt) {
			t.Errorf("%s: first result %+v, want the stored message %+v with its metadata", mode, h, r1.Messages[0])
		}
		tool := slices.ContainsFunc(hits, func(h memory.Hit) bool { return *h.Role == memory.RoleTool })
		if mode != memory.ModeVector && !tool {
			t.Errorf("%s: the tool message, which says Porto and Friday, was not found: %v", mode, contents(hits))
		}
		if mode == memory.ModeVector && tool {
			t.Errorf("vector: a tool message ranked, though it holds no vector")
		}
	}
	// Full text finds only what shares a word, with every filter.
	sorted := func(hits []memory.Hit) []string {
		out := contents(hits)
		sort.Strings(out)
		return out
	}
	if got, want := sorted(recallP(store.RecallParams{Query: "vegetarian", Mode: memory.ModeText})),
		[]string{"I also need a vegetarian restaurant near the hotel"}; !slices.Equal(got, want) {
		t.Errorf("text: %v, want %v", got, want)
	}
	for _, mode := range []string{memory.ModeText, memory.ModeVector, memory.ModeHybrid} {
		got := recallP(store.RecallParams{Scope: memory.Scope{Agent: "sales"}, Query: q, Mode: mode})
		if len(got) != 1 || *got[0].SessionID != s2 || got[0].ID != r2.Messages[0].ID {
			t.Errorf("%s, agent sales: %v, want the sales session's message only", mode, contents(got))
		}
		got = recallP(store.RecallParams{Query: q, Mode: mode, Filter: json.RawMessage(`{"topic":"travel"}`)})
		if len(got) != 1 || got[0].Content != flight.Content {
			t.Errorf("%s, filter: %v, want the message of that metadata only", mode, contents(got))
		}
		all := recallP(store.RecallParams{Query: q, Mode: mode})
		if len(all) < 3 || all[0].Score == all[len(all)-1].Score {
			t.Fatalf("%s: %d results of one score; the cut below proves nothing", mode, len(all))
		}
		cut := (all[0].Score + all[len(all)-1].Score) / 2
		want := 0
		for _, h := range all {
			if h.Score >= cut {
				want++
			}
		}
		got = recallP(store.RecallParams{Query: q, Mode: mode, MinScore: cut})
		if len(got) != want {
			t.Errorf("%s min_score %v: %d results, want %d of %d", mode, cut, len(got), want, len(all))
		}
	}
	// The other user sees their own message only.
	for _, mode := range []string{memory.ModeText, memory.ModeVector, memory.ModeHybrid} {
		hits, err := recall(e.st, ctx, store.RecallParams{Scope: memory.Scope{UserID: other.String()}, Source: memory.SourceMessages,
			Query: q, K: 10, Mode: mode})
		if err != nil || len(hits) != 1 || hits[0].Content != "My flight to Porto leaves on Friday morning too" {
			t.Errorf("%s, other user: %v, %v", mode, contents(hits), err)
		}
	}
	// The default source is the memories, as before, and they say so.
	hits, err := recall(e.st, ctx, store.RecallParams{Scope: memory.Scope{UserID: user.String()}, Query: q, K: 10})
	if err != nil || len(hits) != 1 || hits[0].Content != "User flies to Porto often" || hits[0].Source != memory.HitMemory ||
		hits[0].SessionID != nil || hits[0].Seq != nil || hits[0].Role != nil {
		t.Errorf("default source: %+v, %v; want the memory alone", hits, err)
	}
	if _, err := recall(e.st, ctx, store.RecallParams{Scope: memory.Scope{UserID: user.String()}, Source: "sessions", Query: q, K: 10}); err == nil {
		t.Error("an unknown source searched something")
	}
}

// Source all is one ranking over memories and messages together: in text and vector modes the
// rows of both sources ordered by their own scores, and in hybrid mode the reciprocal-rank
// fusion of those two rankings, ties by source and then key.
func TestRecallAllIsOneFusedRanking(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	ctx := context.Background()
	user := uuid.New()
	sc := memory.Scope{UserID: user.String(), Agent: memory.DefaultAgent}
	var facts []string
	for i := range 12 {
		facts = append(facts, rankFact(i))
	}
	for i := range 6 {
		commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{
			msg(memory.RoleUser, "Tell me about "+rankFact(20+i)),
			msg(memory.RoleAssistant, "Here is a note on "+rankFact(40+i)),
		}, facts[2*i], facts[2*i+1])
	}
	q := "tea hiking chess with Porto"
	get := func(source, mode string) []memory.Hit {
		t.Helper()
		hits, err := recall(e.st, ctx, store.RecallParams{Scope: memory.Scope{UserID: user.String()}, Source: source, Query: q,
			K: 100, Mode: mode, MinScore: -1})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	byScore := func(hits []memory.Hit) {
		sort.SliceStable(hits, func(i, j int) bool {
			if hits[i].Score != hits[j].Score {
				return hits[i].Score > hits[j].Score
			}
			return tieKey(hits[i]) < tieKey(hits[j])
		})
	}
	ranked := map[string][]memory.Hit{}
	for _, mode := range []string{memory.ModeText, memory.ModeVector} {
		all := get(memory.SourceAll, mode)
		merged := append(get(memory.SourceMemories, mode), get(memory.SourceMessages, mode)...)
		byScore(merged)
		if !slices.Equal(keys(all), keys(merged)) {
			t.Errorf("%s: all ranks\n%v\nwant the two sources merged by score\n%v", mode, keys(all), keys(merged))
		}
		sources := map[string]bool{}
		for _, h := range all[:min(8, len(all))] {
			sources[h.Source] = true
		}
		if !sources[memory.HitMemory] || !sources[memory.HitMessage] {
			t.Errorf("%s: the best of all are of one source only: %v", mode, keys(all))
		}
		ranked[mode] = all
	}
	// Hybrid: text_weight / (50 + text rank) + vector_weight / (50 + vector rank), weights 1,
	// + DefaultRelevanceWeight x relevance.
	score := map[string]float64{}
	for _, mode := range []string{memory.ModeText, memory.ModeVector} {
		for i, h := range ranked[mode] {
			score[key(h)] += 1 / float64(50+i+1)
		}
	}
	hybrid := get(memory.SourceAll, memory.ModeHybrid)
	if len(hybrid) != len(score) {
		t.Fatalf("hybrid: %d results, want %d (every row either side ranked)", len(hybrid), len(score))
	}
	for _, h := range hybrid {
		score[key(h)] += store.DefaultRelevanceWeight * *h.Relevance
	}
	want := slices.Clone(hybrid)
	for i := range want {
		want[i].Score = score[key(want[i])]
	}
	byScore(want)
	if !slices.Equal(keys(hybrid), keys(want)) {
		t.Errorf("hybrid ranks\n%v\nwant the fusion of the text and vector rankings\n%v", keys(hybrid), keys(want))
	}
	for i, h := range hybrid {
		if math.Abs(h.Score-score[key(h)]) > 1e-12 {
			t.Errorf("hybrid: %s scores %v, want %v", key(h), h.Score, score[key(h)])
		}
		if i >= 10 {
			break
		}
	}
	// k cuts the fused ranking, and the agent rule holds for both sources.
	top, err := recall(e.st, ctx, store.RecallParams{Scope: memory.Scope{UserID: user.String()}, Source: memory.SourceAll, Query: q, K: 5})
	if err != nil || !slices.Equal(keys(top), keys(hybrid[:5])) {
		t.Errorf("k 5: %v, %v; want %v", keys(top), err, keys(hybrid[:5]))
	}
	none, err := recall(e.st, ctx, store.RecallParams{Scope: memory.Scope{UserID: user.String(), Agent: "other"}, Source: memory.SourceAll, Query: q, K: 5})
	if err != nil || len(none) != 0 {
		t.Errorf("another agent: %v, %v; want nothing", keys(none), err)
	}
}

// tieKey orders hits of equal score as recall does: by source, then id (a memory) or session
// and seq (a message).
func tieKey(h memory.Hit) string {
	if h.Source == memory.HitMessage {
		return fmt.Sprintf("message %s %020d", h.SessionID, *h.Seq)
	}
	return "memory " + h.ID
}

// seedMessages stores messages of user (agent, metadata) with the built-in embedder's vectors,
// ten to a session.
func (e *rankEnv) seedMessages(t *testing.T, user uuid.UUID, agent string, texts, metadata []string) {
	t.Helper()
	storetest.SeedMessages(t, e.conn, user.String(), agent, texts, metadata)
}

// A user with more messages than the exact limit is ranked through the model's HNSW index on
// messages, whose iterative scan still finds k messages behind a selective agent or metadata
// filter, and agrees with the exact ranking; full text planned for the query finds what the
// exact match finds.
func TestRecallMessagesLargeScopeUsesTheIndex(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: seeds hundreds of messages for the HNSW index path")
	}
	e := newRankEnv(t, store.Ranking{ExactLimit: 50})
	ctx := context.Background()
	user := uuid.New()
	var common, rare, meta []string
	for i := range 300 {
		if i%10 == 0 {
			rare = append(rare, rankFact(i))
		} else {
			common = append(common, rankFact(i))
			meta = append(meta, fmt.Sprintf(`{"i": %d}`, i%3))
		}
	}
	e.seedMessages(t, user, "common", common, meta)
	e.seedMessages(t, user, "rare", rare, slices.Repeat([]string{`{}`}, len(rare)))
	for range 20 { // other users' messages share the index
		var texts []string
		for i := range 50 {
			texts = append(texts, rankFact(1000+i))
		}
		e.seedMessages(t, uuid.New(), "common", texts, slices.Repeat([]string{`{}`}, len(texts)))
	}
	if _, err := e.conn.Exec(ctx, "analyze agentmem.messages"); err != nil {
		t.Fatal(err)
	}
	e.indexAgreesWithExact(t, user, memory.SourceMessages, rare)

	for limit, want := range map[int]bool{300: false, 301: true} {
		var small bool
		if err := e.conn.QueryRow(ctx, `select agentmem.message_scope_is_small($1, '', $2)`, user, limit).Scan(&small); err != nil {
			t.Fatal(err)
		}
		if small != want {
			t.Errorf("message_scope_is_small at limit %d = %v, want %v", limit, small, want)
		}
	}
	vec := pgvector.NewVector(embedding.Hash{}.Vector(rankFact(1))).String()
	neighbours := `select m.content
		from agentmem.message_neighbours($1, '', $2, '{}', '', '', null, null, $3::extensions.vector, $5, 10, $4) n
		join agentmem.messages m on m.session_id = n.session_id and m.seq = n.seq`
	plans, got := explain(t, e.url, neighbours, user, "rare", vec, false, embedding.HashModel)
	if !strings.Contains(plans, "Index Scan using messages_embedding_") {
		t.Errorf("above the exact limit the plan does not scan the HNSW index:\n%s", plans)
	}
	if len(got) != 10 {
		t.Errorf("through the HNSW index: %d messages of agent rare, want 10", len(got))
	}
	for _, c := range got {
		if !slices.Contains(rare, c) {
			t.Errorf("through the HNSW index: %q is not of agent rare", c)
		}
	}
	plans, _ = explain(t, e.url, neighbours, user, "rare", vec, true, embedding.HashModel)
	// (Partitioned by user, the user's rows are a larger share of their partition, whose
	// planner may find them through another of its indexes.)
	if strings.Contains(plans, "messages_embedding_") ||
		(testdb.UserPartitions(t) == 1 && !strings.Contains(plans, "messages_owner_created_idx")) {
		t.Errorf("below the exact limit the plan is not an exact scan of the user's rows:\n%s", plans)
	}
}

// With the provider down a turn's messages are stored without vectors: hybrid recall finds them
// by full text, vector recall answers unavailable; EmbedPending then embeds the messages that
// take a vector (not the tool's output, not an assistant's bare tool call), and vector recall
// finds them.
func TestMessagesOutliveAnEmbeddingOutage(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	call := msg(memory.RoleAssistant, "")
	call.ToolCalls = []memory.ToolCall{{ID: "call_1", Type: "function", Function: memory.FunctionCall{Name: "weather", Arguments: "{}"}}}
	e.provider.Down.Store(true)
	res := commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{
		msg(memory.RoleUser, "What is the weather in Lisbon tomorrow?"),
		call,
		msg(memory.RoleTool, `{"lisbon": "sunny, 24 degrees"}`),
		msg(memory.RoleAssistant, "Sunny in Lisbon tomorrow, around 24 degrees."),
	})
	var stored int
	e.admin(func(conn *pgx.Conn) {
		if err := conn.QueryRow(ctx, `select count(*) from agentmem.messages where session_id = $1 and embedding is null`,
			res.SessionID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
	})
	if stored != 4 {
		t.Fatalf("%d messages stored without a vector during the outage, want 4", stored)
	}
	p := store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: "Lisbon weather", K: 10}
	hits, err := recall(e.st, ctx, p)
	if err != nil || len(hits) != 3 {
		t.Fatalf("hybrid recall during the outage: %v, %v; want the three messages that say Lisbon, by text", contents(hits), err)
	}
	p.Mode = memory.ModeVector
	if _, err := recall(e.st, ctx, p); app.Problem(err).Code != apierror.Unavailable {
		t.Errorf("vector recall during the outage: %v, want unavailable", err)
	}
	if c, err := countPending(e.st, ctx, store.PendingScope{UserID: &sc.UserID}); err != nil || c.Messages != 2 {
		t.Errorf("pending: %+v, %v; want the user's and the assistant's answer", c, err)
	}

	e.provider.Down.Store(false)
	done, err := embedPending(e.st, ctx, 100)
	if err != nil || done.Messages != 2 || done.More || done.Failed != 0 {
		t.Fatalf("EmbedPending: %+v, %v; want 2 messages embedded", done, err)
	}
	e.admin(func(conn *pgx.Conn) {
		if got, want := vectorRows(t, conn, sc.UserID, fakeModel), map[string]int{"user": 1, "assistant": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("messages with a vector after EmbedPending: %v, want %v", got, want)
		}
	})
	hits, err = recall(e.st, ctx, p)
	if err != nil || len(hits) != 2 {
		t.Errorf("vector recall after EmbedPending: %v, %v; want the two embedded messages", contents(hits), err)
	}
	before := e.provider.Requests.Load()
	if again, err := embedPending(e.st, ctx, 100); err != nil || again != (memory.EmbedPendingResult{}) ||
		e.provider.Requests.Load() != before {
		t.Errorf("second EmbedPending: %+v, %v; want nothing done and no call", again, err)
	}
}

// A message longer than any model takes is embedded by its first 20,000 characters, at commit
// and by EmbedPending, and keeps its whole text for full-text search.
func TestALongMessageIsEmbeddedByItsBeginning(t *testing.T) {
	t.Parallel()
	e := newEmbedEnv(t)
	ctx := context.Background()
	sc := storetest.Scope(memory.DefaultAgent)
	long := strings.Repeat("é", 19_990) + " pelican " + strings.Repeat("z", 10_000) + " cormorant"
	var longest atomic.Int64
	e.provider.Before = func(_ *http.Request, input []string) {
		for _, s := range input {
			if n := int64(len([]rune(s))); n > longest.Load() {
				longest.Store(n)
			}
		}
	}
	commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{msg(memory.RoleUser, long)})
	if n := longest.Load(); n != 20_000 {
		t.Errorf("the provider was sent %d characters, want 20,000", n)
	}
	e.provider.Down.Store(true)
	commitMessages(t, e.st, sc, uuid.New(), []memory.NewMessage{msg(memory.RoleUser, long+" again")})
	e.provider.Down.Store(false)
	longest.Store(0)
	if res, err := embedPending(e.st, ctx, 10); err != nil || res.Messages != 1 {
		t.Fatalf("EmbedPending: %+v, %v", res, err)
	}
	if n := longest.Load(); n != 20_000 {
		t.Errorf("EmbedPending sent %d characters, want 20,000", n)
	}
	hits, err := recall(e.st, ctx, store.RecallParams{Scope: sc, Source: memory.SourceMessages, Query: "cormorant", K: 5, Mode: memory.ModeText})
	if err != nil || len(hits) != 2 || !slices.Contains(contents(hits), long) {
		t.Errorf("full text after the embedded part: %d hits, %v", len(hits), err)
	}
}
