package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/embedding/embeddingtest"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/memory"
)

const isoProviderModel = "iso-provider-384"

// newProviderEnv is newEnv over a database of its own whose use cases embed with the provider.
func newProviderEnv(t *testing.T, p *embeddingtest.Server) *env {
	t.Helper()
	emb, err := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: p.URL, Model: isoProviderModel, Dimensions: 384,
		Retry: embedding.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, Cooldown: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return buildEnv(t, envConfig{own: true, maxConns: 4, app: app.Config{Embedder: emb},
		http: httpapi.Config{AllowedOrigins: []string{"https://app.example.com"}}})
}

// With the embedding provider answering 503, a turn and its memories are still stored,
// hybrid recall, get-context and knowledge search answer by full text, and only mode vector
// answers 503 (with Retry-After). No stored text reaches the log.
func TestFunctionsWithoutTheEmbeddingProvider(t *testing.T) {
	t.Parallel()
	p := embeddingtest.New(t, isoProviderModel, 384)
	e := newProviderEnv(t, p)
	p.Down.Store(true)
	u := e.newUser("")

	session := uuid.New()
	body := isoTurn(session, "", []string{"I am planning a trip to Kyoto"})
	body["memories"] = []any{map[string]any{"content": "User is travelling to Kyoto in April"}}
	r := e.call(u.token, "commit-turn", body).must(t, http.StatusCreated)
	if len(list(r.body["memories"])) != 1 || len(list(r.body["messages"])) != 1 {
		t.Fatalf("commit-turn during the outage: %s", r.raw)
	}
	if n := e.count("memories", "user_id = $1 and embedding is null and embedding_model is null", u.id); n != 1 {
		t.Errorf("%d memories stored without a vector, want 1", n)
	}

	hits := isoRecall(t, e, u.token, map[string]any{"query": "Kyoto trip"})
	if len(hits) != 1 || hits[0]["content"] != "User is travelling to Kyoto in April" {
		t.Errorf("hybrid recall during the outage: %v", hits)
	}
	r = e.call(u.token, "get-context", map[string]any{"session_id": session, "query": "when is the Kyoto trip"}).must(t, http.StatusOK)
	if mems := list(r.body["memories"]); len(mems) != 1 || len(list(r.body["messages"])) != 1 {
		t.Errorf("get-context during the outage: %s", r.raw)
	}
	r = e.call(u.token, "recall", map[string]any{"query": "Kyoto trip", "mode": "vector"}).must(t, http.StatusServiceUnavailable)
	if r.problemCode() != "unavailable" || r.header.Get("Retry-After") == "" {
		t.Errorf("vector recall during the outage: %v %s", r.header, r.raw)
	}

	svc := e.serviceToken()
	e.call(svc, "knowledge", map[string]any{"op": "ingest", "source": "kyoto.md",
		"content": "Kyoto has over a thousand temples."}).must(t, http.StatusCreated)
	r = e.call(u.token, "knowledge", map[string]any{"op": "search", "query": "temples"}).must(t, http.StatusOK)
	if len(list(r.body["results"])) != 1 {
		t.Errorf("knowledge search during the outage: %s", r.raw)
	}

	logs := e.logBuf.String()
	for _, fixture := range []string{"Kyoto", "temples", "travelling"} {
		if strings.Contains(logs, fixture) {
			t.Errorf("the log holds %q", fixture)
		}
	}
}

// The scheduled run embeds what was stored during an outage, with the configured model.
func TestScheduledRunEmbedsPendingRows(t *testing.T) {
	t.Parallel()
	p := embeddingtest.New(t, isoProviderModel, 384)
	e := newProviderEnv(t, p)
	u := e.newUser("")
	p.Down.Store(true)
	isoRemember(t, e, u.token, "", isoMem{content: "User prefers tea"}, isoMem{content: "User has a cat"})
	if n := e.count("memories", "user_id = $1 and embedding is null", u.id); n != 2 {
		t.Fatalf("%d memories pending, want 2", n)
	}
	// Still down: the run sweeps, embeds nothing and says more.
	out, err := e.app.ScheduledSweep(isoLambdaCtx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	var got struct {
		Deleted  map[string]int64          `json:"deleted"`
		Embedded memory.EmbedPendingResult `json:"embedded"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || got.Deleted == nil || got.Embedded.Memories != 0 || !got.Embedded.More {
		t.Errorf("scheduled run while down: %s", raw)
	}

	p.Down.Store(false)
	out, err = e.app.ScheduledSweep(isoLambdaCtx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(out)
	if err := json.Unmarshal(raw, &got); err != nil || got.Embedded.Memories != 2 || got.Embedded.More {
		t.Errorf("scheduled run: %s", raw)
	}
	if n := e.count("memories", "user_id = $1 and embedding is not null and embedding_model = $2", u.id, isoProviderModel); n != 2 {
		t.Errorf("%d memories embedded with %s, want 2", n, isoProviderModel)
	}
	hits := isoRecall(t, e, u.token, map[string]any{"query": "tea", "mode": "vector", "k": 1})
	if len(hits) != 1 || hits[0]["content"] != "User prefers tea" {
		t.Errorf("vector recall after the run: %v", hits)
	}
}
