package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/llmtest"
)

// fastRetry keeps the tests quick: short waits, three attempts, no cooldown.
var fastRetry = llm.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond,
	MaxBackoff: 5 * time.Millisecond, MaxElapsed: 10 * time.Second, Cooldown: -1}

// secret is text that must never reach a log or an error: it stands for the prompt, the
// conversation and the answer.
const secret = "Ada's passport number is X1234567"

// testSchema is a schema in the strict subset.
const testSchema = `{"type":"object","properties":{"facts":{"type":"array","maxItems":5,"items":{"type":"string"}}},"required":["facts"],"additionalProperties":false}`

func testRequest() llm.Request {
	return llm.Request{
		System:     "Extract facts. " + secret,
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: "I live in Lyon. " + secret}},
		Schema:     json.RawMessage(testSchema),
		SchemaName: "facts",
	}
}

// logBuffer collects a logger's lines, safe for the concurrent writes of a test.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// slowFirst is a provider's handler that answers its first request only when released (or
// after 5 s), and every later one at once; release, registered with t.Cleanup after the
// server is made, lets the server close without waiting.
func slowFirst() (handler func(llmtest.Call) llmtest.Reply, release func()) {
	ch := make(chan struct{})
	var first sync.Once
	return func(llmtest.Call) llmtest.Reply {
		slow := false
		first.Do(func() { slow = true })
		if slow {
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
			}
		}
		return llmtest.Reply{Output: `{"facts":[]}`}
	}, func() { close(ch) }
}

// noSecrets fails the test when the key, the prompt or the answer shows in text.
func noSecrets(t *testing.T, what, text string, more ...string) {
	t.Helper()
	for _, s := range append([]string{secret, "sk-secret", "Lyon", "Extract facts"}, more...) {
		if strings.Contains(text, s) {
			t.Errorf("%s holds %q: %s", what, s, text)
		}
	}
}

func newOpenAI(t *testing.T, cfg llm.OpenAIConfig) *llm.OpenAI {
	t.Helper()
	if cfg.Retry == (llm.RetryPolicy{}) {
		cfg.Retry = fastRetry
	}
	c, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenAIStructuredCompletion(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":["lives in Lyon"]}`,
		InputTokens: 120, OutputTokens: 9}))
	var logs logBuffer
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-secret", Model: "gpt-test", Logger: logs.logger()})
	req := testRequest()
	req.SchemaDescription = "What to remember."
	got, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Output) != `{"facts":["lives in Lyon"]}` || got.Usage != (llm.Usage{InputTokens: 120, OutputTokens: 9}) || got.Model != "gpt-test" {
		t.Errorf("completion %+v", got)
	}
	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	call := calls[0]
	if call.Path != "/v1/chat/completions" || call.Header.Get("Authorization") != "Bearer sk-secret" || call.Header.Get("api-key") != "" {
		t.Errorf("posted to %s with headers %v", call.Path, call.Header)
	}
	if call.System != req.System || len(call.Messages) != 1 || call.Messages[0] != (llmtest.Message{Role: "user", Content: req.Messages[0].Content}) {
		t.Errorf("prompt %+v", call)
	}
	if call.Format != "json_schema" || call.SchemaName != "facts" || string(call.Schema) != testSchema {
		t.Errorf("format %s %s %s", call.Format, call.SchemaName, call.Schema)
	}
	rf := call.Body["response_format"].(map[string]any)["json_schema"].(map[string]any)
	if rf["strict"] != true || rf["description"] != "What to remember." {
		t.Errorf("json_schema %v", rf)
	}
	// Not api.openai.com: the older name of the cap, which every server knows.
	if call.MaxTokens != llm.DefaultMaxOutputTokens || call.Body["max_tokens"] == nil || call.Body["max_completion_tokens"] != nil {
		t.Errorf("cap %d in %v", call.MaxTokens, call.Body)
	}
	if call.Body["stream"] != false || call.Body["temperature"] != nil {
		t.Errorf("body %v", call.Body)
	}
	if l := logs.String(); l != "" {
		t.Errorf("a successful call logged %s", l)
	}
}

// dialTo makes a client that sends every request to srv, whatever the URL's host: a test of
// host-specific behaviour (Azure, OpenAI) without DNS.
func dialTo(srv *llmtest.Server) *http.Client {
	addr := srv.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
}

// Azure OpenAI: the deployment URL is the endpoint itself, its api-version kept, the key goes
// in the api-key header, and the cap is max_completion_tokens.
func TestOpenAIAzureEndpointAndHeader(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`}))
	c := newOpenAI(t, llm.OpenAIConfig{
		BaseURL:    "http://myres.openai.azure.com/openai/deployments/mini/chat/completions?api-version=2024-10-21",
		APIKey:     "azure-key",
		HTTPClient: dialTo(srv),
	})
	req := testRequest()
	req.MaxOutputTokens = 300
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	call := srv.Calls()[0]
	if call.Header.Get("api-key") != "azure-key" || call.Header.Get("Authorization") != "" {
		t.Errorf("headers %v", call.Header)
	}
	if call.Path != "/openai/deployments/mini/chat/completions?api-version=2024-10-21" {
		t.Errorf("posted to %s", call.Path)
	}
	if call.Body["max_completion_tokens"] != float64(300) || call.Body["max_tokens"] != nil {
		t.Errorf("cap in %v", call.Body)
	}
}

// Ollama: a bare base gets /v1/chat/completions, and no key sends no credentials.
func TestOpenAIOllamaBaseWithoutKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`, NoUsage: true}))
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, Model: "llama3.2"})
	got, err := c.Complete(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got.Usage != (llm.Usage{}) {
		t.Errorf("usage %+v from a server that reported none", got.Usage)
	}
	call := srv.Calls()[0]
	if call.Path != "/v1/chat/completions" || call.Model != "llama3.2" || call.Header.Get("Authorization") != "" {
		t.Errorf("call %s %s %v", call.Path, call.Model, call.Header)
	}
}

func TestEndpointURL(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"https://api.openai.com/v1":            "https://api.openai.com/v1/chat/completions",
		"https://api.openai.com/v1/":           "https://api.openai.com/v1/chat/completions",
		"http://localhost:11434":               "http://localhost:11434/v1/chat/completions",
		"http://localhost:8000/v1":             "http://localhost:8000/v1/chat/completions",
		"http://localhost:1234/v1":             "http://localhost:1234/v1/chat/completions",
		"https://r.openai.azure.com/openai/v1": "https://r.openai.azure.com/openai/v1/chat/completions",
		"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=1": "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=1",
	} {
		t.Run(base, func(t *testing.T) {
			got, err := llm.EndpointURL(base)
			if err != nil || got != want {
				t.Errorf("EndpointURL(%q) = %q, %v; want %q", base, got, err, want)
			}
		})
	}
	for _, bad := range []string{"", "localhost:11434", "ftp://x/v1", "http://"} {
		t.Run(bad, func(t *testing.T) {
			if got, err := llm.EndpointURL(bad); err == nil {
				t.Errorf("EndpointURL(%q) = %q, want an error", bad, got)
			}
		})
	}
}

// A server that refuses json_schema is asked again at once with json_object and the schema in
// the system prompt, and from then on without trying json_schema again.
func TestOpenAIFallsBackToJSONObject(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":["a"]}`}))
	srv.RefuseJSONSchema.Store(true)
	var logs logBuffer
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, Logger: logs.logger()})
	for i := range 2 {
		got, err := c.Complete(context.Background(), testRequest())
		if err != nil || string(got.Output) != `{"facts":["a"]}` {
			t.Fatalf("call %d: %s, %v", i, got.Output, err)
		}
	}
	if n := srv.Requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (one refused, then two json_object)", n)
	}
	for _, call := range srv.Calls() {
		if call.Format != "json_object" || !strings.HasSuffix(call.System, llm.JSONObjectInstruction+testSchema) {
			t.Errorf("fallback call %s with system %q", call.Format, call.System)
		}
	}
	if l := logs.String(); strings.Count(l, "refused response_format json_schema") != 1 {
		t.Errorf("log %s, want one warning", l)
	}
	noSecrets(t, "log", logs.String())
}

func TestOpenAIJSONObjectConfigured(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`}))
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, ResponseFormat: llm.ResponseFormatJSONObject})
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	if call := srv.Calls()[0]; call.Format != "json_object" || srv.Requests.Load() != 1 {
		t.Errorf("format %s after %d requests", call.Format, srv.Requests.Load())
	}
	if _, err := llm.NewOpenAI(llm.OpenAIConfig{ResponseFormat: "xml"}); err == nil {
		t.Error("an unknown response format was taken")
	}
}

// A 429 with Retry-After is waited out, then the request succeeds.
func TestOpenAIRetriesRateLimitHonouringRetryAfter(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Sequence(
		llmtest.Reply{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded", RetryAfter: "1"},
		llmtest.Reply{Output: `{"facts":[]}`}))
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL})
	start := time.Now()
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	if srv.Requests.Load() != 2 {
		t.Errorf("%d requests, want 2", srv.Requests.Load())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %s, before the Retry-After of 1s", waited)
	}
}

// A provider that keeps failing gives ErrUnavailable after MaxAttempts requests; then, during
// the cooldown, calls fail at once without a request. Neither the error nor the log holds the
// provider's message (which quotes the input).
func TestOpenAIGivesUpWithErrUnavailable(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Status: http.StatusInternalServerError, Code: "server_error"}))
	policy := fastRetry
	policy.Cooldown = time.Hour
	var logs logBuffer
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, Retry: policy, APIKey: "sk-secret", Logger: logs.logger()})
	_, err := c.Complete(context.Background(), testRequest())
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "status 500") || srv.Requests.Load() != 3 {
		t.Fatalf("error %v after %d requests, want ErrUnavailable naming status 500 after 3", err, srv.Requests.Load())
	}
	_, err = c.Complete(context.Background(), testRequest())
	if !errors.Is(err, llm.ErrUnavailable) || srv.Requests.Load() != 3 {
		t.Errorf("during the cooldown: %v after %d requests, want ErrUnavailable without a request", err, srv.Requests.Load())
	}
	if !strings.Contains(logs.String(), "chat provider unavailable") {
		t.Errorf("log %s", logs.String())
	}
	noSecrets(t, "error", err.Error())
	noSecrets(t, "log", logs.String())
}

// A refusal (bad key, unknown model) is not retried, and its message is not kept.
func TestOpenAIRefusalIsNotRetried(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Status: http.StatusUnauthorized, Code: "invalid_api_key"}))
	var logs logBuffer
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, APIKey: "sk-secret", Logger: logs.logger()})
	_, err := c.Complete(context.Background(), testRequest())
	var se *llm.StatusError
	if !errors.As(err, &se) || se.Status != 401 || se.Code != "invalid_api_key" || errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error %v, want a 401 StatusError", err)
	}
	if srv.Requests.Load() != 1 || !strings.Contains(logs.String(), "invalid_api_key") {
		t.Errorf("%d requests, log %s", srv.Requests.Load(), logs.String())
	}
	noSecrets(t, "error", err.Error())
	noSecrets(t, "log", logs.String())
}

// A request that takes longer than Timeout is abandoned and retried.
func TestOpenAITimesOutSlowRequests(t *testing.T) {
	t.Parallel()
	slow, release := slowFirst()
	srv := llmtest.NewChatCompletions(t, slow)
	t.Cleanup(release) // before the server's Close, which waits for handlers
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, Timeout: 200 * time.Millisecond})
	start := time.Now()
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second || srv.Requests.Load() != 2 {
		t.Errorf("took %s and %d requests", took, srv.Requests.Load())
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
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: "http://" + addr})
	if _, err := c.Complete(context.Background(), testRequest()); !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
}

// Answers whose model output cannot be used are ErrMalformedOutput, with the usage they cost;
// answers that are not the API's JSON are ErrInvalidResponse. Neither is retried, nor taken
// for an outage.
func TestOpenAIMalformedAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		want  error
		usage bool
	}{
		{"prose", llmtest.Reply{Output: "The user lives in Lyon."}, llm.ErrMalformedOutput, true},
		{"an array", llmtest.Reply{Output: `["lives in Lyon"]`}, llm.ErrMalformedOutput, true},
		{"two objects", llmtest.Reply{Output: `{"facts":[]} {"facts":[]}`}, llm.ErrMalformedOutput, true},
		{"cut JSON", llmtest.Reply{Output: `{"facts":["lives in`}, llm.ErrMalformedOutput, true},
		{"empty", llmtest.Reply{Output: ""}, llm.ErrMalformedOutput, true},
		{"truncated", llmtest.Reply{Output: `{"facts":[]}`, Truncated: true}, llm.ErrMalformedOutput, true},
		{"refusal", llmtest.Reply{Refusal: "I can't help with that."}, llm.ErrMalformedOutput, true},
		{"null content", llmtest.Reply{RawBody: `{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":1}}`}, llm.ErrMalformedOutput, true},
		{"filtered", llmtest.Reply{RawBody: `{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":7,"completion_tokens":1}}`}, llm.ErrMalformedOutput, true},
		{"no choices", llmtest.Reply{RawBody: `{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":1}}`}, llm.ErrInvalidResponse, true},
		{"no message", llmtest.Reply{RawBody: `{"choices":[{"index":0,"finish_reason":"stop"}]}`}, llm.ErrInvalidResponse, false},
		{"not JSON", llmtest.Reply{RawBody: `<html>Bad gateway</html>`}, llm.ErrInvalidResponse, false},
		{"choices not a list", llmtest.Reply{RawBody: `{"choices":"nope"}`}, llm.ErrInvalidResponse, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewChatCompletions(t, llmtest.Always(tc.reply))
			var logs logBuffer
			c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, Logger: logs.logger()})
			got, err := c.Complete(context.Background(), testRequest())
			if !errors.Is(err, tc.want) || errors.Is(err, llm.ErrUnavailable) || got.Output != nil {
				t.Fatalf("got %s, %v; want %v", got.Output, err, tc.want)
			}
			if srv.Requests.Load() != 1 {
				t.Errorf("%d requests, want 1", srv.Requests.Load())
			}
			if tc.usage && got.Usage.InputTokens == 0 {
				t.Errorf("the usage of a malformed answer was lost: %+v", got.Usage)
			}
			noSecrets(t, "error", err.Error(), "I can't help")
			noSecrets(t, "log", logs.String(), "I can't help")
		})
	}
}

// Some models wrap their JSON in a Markdown fence; the object inside is the answer.
func TestOpenAIUnwrapsAFencedObject(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: "```json\n{\"facts\": []}\n```\n"}))
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL})
	got, err := c.Complete(context.Background(), testRequest())
	if err != nil || string(got.Output) != `{"facts": []}` {
		t.Fatalf("got %q, %v", got.Output, err)
	}
}

// A caller that gives up gets its own cancellation back, not ErrUnavailable.
func TestOpenAICallerCancels(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Status: http.StatusServiceUnavailable}))
	policy := fastRetry
	policy.MaxAttempts = 1000
	policy.InitialBackoff, policy.MaxBackoff = 50*time.Millisecond, 50*time.Millisecond
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL, Retry: policy})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	_, err := c.Complete(ctx, testRequest())
	if !errors.Is(err, context.Canceled) || errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// Requests no API would take are refused before any is sent.
func TestCompleteChecksTheRequest(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{}`}))
	c := newOpenAI(t, llm.OpenAIConfig{BaseURL: srv.URL})
	for name, change := range map[string]func(*llm.Request){
		"no schema name":     func(r *llm.Request) { r.SchemaName = "" },
		"schema name spaces": func(r *llm.Request) { r.SchemaName = "the facts" },
		"schema name long":   func(r *llm.Request) { r.SchemaName = strings.Repeat("a", 65) },
		"schema not object":  func(r *llm.Request) { r.Schema = json.RawMessage(`[1]`) },
		"schema not JSON":    func(r *llm.Request) { r.Schema = json.RawMessage(`{`) },
		"schema null":        func(r *llm.Request) { r.Schema = json.RawMessage(`null`) },
		"no messages":        func(r *llm.Request) { r.Messages = nil },
		"assistant first":    func(r *llm.Request) { r.Messages[0].Role = llm.RoleAssistant },
		"two user messages": func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: "again"})
		},
	} {
		t.Run(name, func(t *testing.T) {
			req := testRequest()
			change(&req)
			if _, err := c.Complete(context.Background(), req); err == nil {
				t.Errorf("%s: no error", name)
			}
		})
	}
	if srv.Requests.Load() != 0 {
		t.Errorf("%d requests sent", srv.Requests.Load())
	}
}

func TestNewChoosesTheProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := llm.New(ctx, llm.Config{Provider: "openai", APIKey: "k"})
	if err != nil || c.Provider() != "openai" || c.Model() != llm.DefaultOpenAIModel {
		t.Errorf("openai: %v, %v", c, err)
	}
	c, err = llm.New(ctx, llm.Config{Provider: "bedrock", Region: "eu-west-1"})
	if err != nil || c.Provider() != "bedrock" || c.Model() != llm.DefaultBedrockModel {
		t.Errorf("bedrock: %v, %v", c, err)
	}
	for _, bad := range []llm.Config{
		{},
		{Provider: "anthropic"},
		{Provider: "openai", BaseURL: "localhost:11434"},
		{Provider: "openai", ResponseFormat: "text"},
	} {
		if c, err := llm.New(ctx, bad); err == nil {
			t.Errorf("New(%+v) = %v, want an error", bad, c)
		}
	}
}

// A request, a message or a completion logged shows sizes and names, never content.
func TestLogValuesHoldNoContent(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	log := logs.logger()
	req := testRequest()
	log.Info("completion", "request", req, "message", req.Messages[0],
		"completion", llm.Completion{Output: json.RawMessage(`{"facts":["Lyon"]}`), Usage: llm.Usage{InputTokens: 3}})
	l := logs.String()
	noSecrets(t, "log", l)
	for _, want := range []string{`"schema":"facts"`, `"prompt_bytes":`, `"content_len":`, `"output_bytes":18`, `"input_tokens":3`} {
		if !strings.Contains(l, want) {
			t.Errorf("log %s lacks %s", l, want)
		}
	}
}
