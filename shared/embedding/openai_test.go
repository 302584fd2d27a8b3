package embedding_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/embedding"
)

// fastRetry keeps the tests quick: short waits, three attempts, no cooldown.
var fastRetry = embedding.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond,
	MaxBackoff: 5 * time.Millisecond, MaxElapsed: 10 * time.Second, Cooldown: -1}

// openAIServer speaks OpenAI's embeddings API. Each request is passed to answer, which writes
// the response; requests are recorded.
type openAIServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []openAIRequest
	headers  []http.Header
	paths    []string
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     *int     `json:"dimensions"`
}

func newOpenAIServer(t *testing.T, answer func(n int, req openAIRequest, w http.ResponseWriter)) *openAIServer {
	t.Helper()
	s := &openAIServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req openAIRequest
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || dec.Decode(&req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.headers = append(s.headers, r.Header.Clone())
		s.paths = append(s.paths, r.URL.RequestURI())
		n := len(s.requests)
		s.mu.Unlock()
		answer(n, req, w)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *openAIServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// fakeVector is the vector the fake servers give a text: its length in the first value, a
// marker of the text's first byte in the second, the rest zero.
func fakeVector(text string, dims int) []float64 {
	v := make([]float64, dims)
	v[0] = float64(len(text))
	v[1] = float64(text[0])
	return v
}

// answerVectors answers every input, listing the vectors in reverse order: the client must
// order them by index.
func answerVectors(dims int) func(int, openAIRequest, http.ResponseWriter) {
	return func(_ int, req openAIRequest, w http.ResponseWriter) {
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, fakeVector(req.Input[i], dims)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}
}

func newOpenAI(t *testing.T, cfg embedding.OpenAIConfig) *embedding.OpenAI {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "text-embedding-3-small"
	}
	if cfg.Dimensions == 0 {
		cfg.Dimensions = 8
	}
	if cfg.Retry == (embedding.RetryPolicy{}) {
		cfg.Retry = fastRetry
	}
	e, err := embedding.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOpenAIEmbedsInBatchesInOrder(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, answerVectors(8))
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL, APIKey: "sk-test", MaxBatch: 2,
		Dimensions: 8, SendDimensions: true})
	texts := []string{"alpha", "bravo", "  ", "charlie", "delta", "echo"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, text := range texts {
		if strings.TrimSpace(text) == "" {
			for _, x := range vs[i] {
				if x != 0 {
					t.Errorf("blank text %d: want the zero vector, got %v", i, vs[i])
				}
			}
			continue
		}
		want := fakeVector(text, 8)
		if len(vs[i]) != 8 || vs[i][0] != float32(want[0]) || vs[i][1] != float32(want[1]) {
			t.Errorf("text %d (%q) got %v, want %v", i, text, vs[i], want)
		}
	}
	// Five texts worth sending, two per request; the blank one is never sent.
	if srv.count() != 3 {
		t.Fatalf("%d requests, want 3", srv.count())
	}
	var sent []string
	for i, req := range srv.requests {
		sent = append(sent, req.Input...)
		if req.Model != "text-embedding-3-small" || req.EncodingFormat != "float" ||
			req.Dimensions == nil || *req.Dimensions != 8 {
			t.Errorf("request %d: %+v", i, req)
		}
		if got := srv.headers[i].Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("request %d: Authorization %q", i, got)
		}
		if srv.paths[i] != "/v1/embeddings" {
			t.Errorf("request %d went to %s", i, srv.paths[i])
		}
	}
	if strings.Join(sent, ",") != "alpha,bravo,charlie,delta,echo" {
		t.Errorf("sent %q", sent)
	}
}

func TestOpenAIOmitsDimensionsAndKeyUnlessConfigured(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, answerVectors(8))
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "nomic-embed-text"})
	if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if srv.requests[0].Dimensions != nil {
		t.Errorf("dimensions sent: %d", *srv.requests[0].Dimensions)
	}
	if h := srv.headers[0]; h.Get("Authorization") != "" || h.Get("api-key") != "" {
		t.Errorf("credentials sent without a key: %v", h)
	}
	if srv.paths[0] != "/v1/embeddings" {
		t.Errorf("a base ending in /v1 posted to %s", srv.paths[0])
	}
}

// Azure OpenAI: the deployment URL is the endpoint itself, its api-version kept, and the key
// goes in the api-key header.
func TestOpenAIAzureEndpointAndHeader(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, answerVectors(8))
	addr := srv.Listener.Addr().String()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	e := newOpenAI(t, embedding.OpenAIConfig{
		BaseURL:    "http://myres.openai.azure.com/openai/deployments/emb/embeddings?api-version=2024-10-21",
		APIKey:     "azure-key",
		HTTPClient: client,
	})
	if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	h := srv.headers[0]
	if h.Get("api-key") != "azure-key" || h.Get("Authorization") != "" {
		t.Errorf("headers %v", h)
	}
	if srv.paths[0] != "/openai/deployments/emb/embeddings?api-version=2024-10-21" {
		t.Errorf("posted to %s", srv.paths[0])
	}
}

func TestEndpointURL(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"https://api.openai.com/v1":                                                "https://api.openai.com/v1/embeddings",
		"https://api.openai.com/v1/":                                               "https://api.openai.com/v1/embeddings",
		"http://localhost:11434":                                                   "http://localhost:11434/v1/embeddings",
		"http://localhost:8000/v1":                                                 "http://localhost:8000/v1/embeddings",
		"https://ref.supabase.co/functions/v1/embed":                               "https://ref.supabase.co/functions/v1/embed/v1/embeddings",
		"https://r.openai.azure.com/openai/v1":                                     "https://r.openai.azure.com/openai/v1/embeddings",
		"https://r.openai.azure.com/openai/deployments/d/embeddings?api-version=1": "https://r.openai.azure.com/openai/deployments/d/embeddings?api-version=1",
	} {
		t.Run(base, func(t *testing.T) {
			got, err := embedding.EndpointURL(base)
			if err != nil || got != want {
				t.Errorf("EndpointURL(%q) = %q, %v; want %q", base, got, err, want)
			}
		})
	}
	for _, bad := range []string{"", "localhost:11434", "ftp://x/v1", "http://"} {
		t.Run(bad, func(t *testing.T) {
			if got, err := embedding.EndpointURL(bad); err == nil {
				t.Errorf("EndpointURL(%q) = %q, want an error", bad, got)
			}
		})
	}
}

// A 429 with Retry-After is waited out, then the request succeeds.
func TestOpenAIRetriesRateLimitHonouringRetryAfter(t *testing.T) {
	t.Parallel()
	ok := answerVectors(8)
	srv := newOpenAIServer(t, func(n int, req openAIRequest, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		ok(n, req, w)
	})
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL})
	start := time.Now()
	vs, err := e.Embed(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0][0] != 5 {
		t.Errorf("got %v", vs)
	}
	if srv.count() != 2 {
		t.Errorf("%d requests, want 2", srv.count())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %s, before the Retry-After of 1s", waited)
	}
}

// Azure's retry-after-ms is honoured as well, and 502/503/504 are retried like 429.
func TestOpenAIRetriesServerErrors(t *testing.T) {
	t.Parallel()
	ok := answerVectors(8)
	srv := newOpenAIServer(t, func(n int, req openAIRequest, w http.ResponseWriter) {
		switch n {
		case 1:
			w.Header().Set("retry-after-ms", "300")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
		default:
			ok(n, req, w)
		}
	})
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL})
	start := time.Now()
	if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if srv.count() != 3 {
		t.Errorf("%d requests, want 3", srv.count())
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("retried after %s, before retry-after-ms 300", waited)
	}
}

// A provider that keeps failing gives ErrUnavailable after MaxAttempts requests; then, during
// the cooldown, calls fail at once without a request.
func TestOpenAIGivesUpWithErrUnavailable(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(_ int, _ openAIRequest, w http.ResponseWriter) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"The server had an error","type":"server_error"}}`)
	})
	policy := fastRetry
	policy.Cooldown = time.Hour
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL, Retry: policy})
	_, err := e.Embed(context.Background(), []string{"hello"})
	if !errors.Is(err, embedding.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "status 500") || srv.count() != 3 {
		t.Errorf("error %q after %d requests, want status 500 after 3", err, srv.count())
	}
	_, err = e.Embed(context.Background(), []string{"again"})
	if !errors.Is(err, embedding.ErrUnavailable) || srv.count() != 3 {
		t.Errorf("during the cooldown: %v after %d requests, want ErrUnavailable without a request", err, srv.count())
	}
}

// A Retry-After longer than the retry budget is not waited for: the call gives up at once.
func TestOpenAIDoesNotWaitPastTheBudget(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(_ int, _ openAIRequest, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	policy := fastRetry
	policy.MaxElapsed = 2 * time.Second
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL, Retry: policy})
	start := time.Now()
	_, err := e.Embed(context.Background(), []string{"hello"})
	if !errors.Is(err, embedding.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > time.Second || srv.count() != 1 {
		t.Errorf("gave up after %s and %d requests", took, srv.count())
	}
}

// An unreachable provider is unavailable.
func TestOpenAIUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: "http://" + addr})
	_, err = e.Embed(context.Background(), []string{"hello"})
	if !errors.Is(err, embedding.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
}

// A request that takes longer than Timeout is abandoned and retried.
func TestOpenAITimesOutSlowRequests(t *testing.T) {
	t.Parallel()
	ok := answerVectors(8)
	release := make(chan struct{})
	srv := newOpenAIServer(t, func(n int, req openAIRequest, w http.ResponseWriter) {
		if n == 1 {
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
			return
		}
		ok(n, req, w)
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL, Timeout: 200 * time.Millisecond})
	start := time.Now()
	if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second || srv.count() != 2 {
		t.Errorf("took %s and %d requests", took, srv.count())
	}
}

// Answers that do not fit the request fail at once, without a retry, and are not mistaken for
// an outage.
func TestOpenAIRejectsMalformedResponses(t *testing.T) {
	t.Parallel()
	vec := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = "0.5"
		}
		return "[" + strings.Join(v, ",") + "]"
	}
	for name, body := range map[string]string{
		"not json":           `<html>Bad gateway</html>`,
		"data not a list":    `{"data": "nope"}`,
		"no data":            `{"object": "list"}`,
		"too few vectors":    `{"data": [{"index": 0, "embedding": ` + vec(8) + `}]}`,
		"too many vectors":   `{"data": [{"index": 0, "embedding": ` + vec(8) + `}, {"index": 1, "embedding": ` + vec(8) + `}, {"index": 2, "embedding": ` + vec(8) + `}]}`,
		"missing index":      `{"data": [{"embedding": ` + vec(8) + `}, {"index": 1, "embedding": ` + vec(8) + `}]}`,
		"repeated index":     `{"data": [{"index": 0, "embedding": ` + vec(8) + `}, {"index": 0, "embedding": ` + vec(8) + `}]}`,
		"index out of range": `{"data": [{"index": 0, "embedding": ` + vec(8) + `}, {"index": 2, "embedding": ` + vec(8) + `}]}`,
		"wrong dimensions":   `{"data": [{"index": 0, "embedding": ` + vec(8) + `}, {"index": 1, "embedding": ` + vec(7) + `}]}`,
		"base64 instead":     `{"data": [{"index": 0, "embedding": "AAAAAA=="}, {"index": 1, "embedding": "AAAAAA=="}]}`,
		"value too large":    `{"data": [{"index": 0, "embedding": ` + vec(8) + `}, {"index": 1, "embedding": [1e300,0,0,0,0,0,0,0]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newOpenAIServer(t, func(_ int, _ openAIRequest, w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body)
			})
			e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL})
			vs, err := e.Embed(context.Background(), []string{"one", "two"})
			if !errors.Is(err, embedding.ErrInvalidResponse) || errors.Is(err, embedding.ErrUnavailable) {
				t.Fatalf("got %v, %v; want ErrInvalidResponse", vs, err)
			}
			if srv.count() != 1 {
				t.Errorf("%d requests, want 1", srv.count())
			}
		})
	}
}

// A refusal (bad key, unknown model) is not retried, and its message (which may quote the
// key) is not kept.
func TestOpenAIRefusalIsNotRetried(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(_ int, _ openAIRequest, w http.ResponseWriter) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-secret","type":"invalid_request_error","code":"invalid_api_key"}}`)
	})
	var logs strings.Builder
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL, APIKey: "sk-secret",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	_, err := e.Embed(context.Background(), []string{"hello"})
	// The operator learns of it from the log (callers carry on without vectors), without the
	// key or the text.
	if l := logs.String(); !strings.Contains(l, "invalid_api_key") || strings.Contains(l, "sk-secret") || strings.Contains(l, "hello") {
		t.Errorf("log: %q", l)
	}
	var se *embedding.StatusError
	if !errors.As(err, &se) || se.Status != 401 || se.Code != "invalid_api_key" {
		t.Fatalf("error %v, want a 401 StatusError", err)
	}
	if errors.Is(err, embedding.ErrUnavailable) || strings.Contains(err.Error(), "sk-secret") || srv.count() != 1 {
		t.Errorf("error %q after %d requests", err, srv.count())
	}
}

// A caller that gives up gets its own cancellation back, not ErrUnavailable.
func TestOpenAICallerCancels(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(_ int, _ openAIRequest, w http.ResponseWriter) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	policy := fastRetry
	policy.MaxAttempts = 1000
	policy.InitialBackoff, policy.MaxBackoff = 50*time.Millisecond, 50*time.Millisecond
	e := newOpenAI(t, embedding.OpenAIConfig{BaseURL: srv.URL, Retry: policy})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	_, err := e.Embed(ctx, []string{"hello"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, embedding.ErrUnavailable) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestNewChoosesTheProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := embedding.New(ctx, embedding.Config{})
	if err != nil || e.Model() != (embedding.Hash{}).Model() || e.Dimensions() != embedding.HashDimensions {
		t.Errorf("default: %v, %v", e, err)
	}
	e, err = embedding.New(ctx, embedding.Config{Provider: "openai", APIKey: "k"})
	if err != nil || e.Model() != "text-embedding-3-small" || e.Dimensions() != 384 {
		t.Errorf("openai: %v, %v", e, err)
	}
	e, err = embedding.New(ctx, embedding.Config{Provider: "bedrock", Region: "eu-west-1"})
	if err != nil || e.Model() != "amazon.titan-embed-text-v2:0" || e.Dimensions() != 1024 {
		t.Errorf("bedrock: %v, %v", e, err)
	}
	for _, bad := range []embedding.Config{
		{Provider: "cohere"},
		{Provider: "local", Model: "other"},
		{Provider: "local", Dimensions: 768},
		{Provider: "openai", BaseURL: "localhost:11434"},
		{Provider: "bedrock", Region: "eu-west-1", Dimensions: 384},
		{Provider: "bedrock", Region: "eu-west-1", Model: "cohere.embed-english-v3"},
	} {
		if e, err := embedding.New(ctx, bad); err == nil {
			t.Errorf("New(%+v) = %v, want an error", bad, e)
		}
	}
	// A configuration that still names the first version is told what replaced it.
	_, err = embedding.New(ctx, embedding.Config{Provider: "local", Model: "agentmem-hash-384-v1"})
	if err == nil || !strings.Contains(err.Error(), "is now "+embedding.HashModel) || !strings.Contains(err.Error(), "backfill") {
		t.Errorf("v1: %v", err)
	}
}
