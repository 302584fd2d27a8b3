package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/agentmem/agentmem/shared/llm"
)

// fuzzAnswer is what a fake provider answers next: one fuzz input at a time.
type fuzzAnswer struct {
	mu         sync.Mutex
	status     int
	retryAfter string
	body       []byte
}

func (a *fuzzAnswer) set(status uint16, retryAfter string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status = int(status)
	if a.status < 200 || a.status > 599 {
		a.status = http.StatusOK
	}
	a.retryAfter, a.body = retryAfter, body
}

func (a *fuzzAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	if a.status >= 400 {
		w.Header().Set("X-Amzn-ErrorType", "ValidationException")
	}
	w.WriteHeader(a.status)
	w.Write(a.body) //nolint:errcheck
}

// oneTry makes one request per call and remembers no failure, so every input is judged alone.
var oneTry = llm.RetryPolicy{MaxAttempts: 1, MaxElapsed: 5 * time.Second, Cooldown: -1}

// checkCompleted holds what every answer to Complete must be: one JSON object, or an error of
// the package's vocabulary, with no output.
func checkCompleted(t *testing.T, got llm.Completion, err error) {
	t.Helper()
	if got.Usage.InputTokens < 0 || got.Usage.OutputTokens < 0 {
		t.Fatalf("negative usage %+v", got.Usage)
	}
	if err != nil {
		var se *llm.StatusError
		if !errors.Is(err, llm.ErrInvalidResponse) && !errors.Is(err, llm.ErrUnavailable) &&
			!errors.Is(err, llm.ErrMalformedOutput) && !errors.As(err, &se) {
			t.Fatalf("an error outside the vocabulary: %v", err)
		}
		if got.Output != nil {
			t.Fatalf("an output beside the error %v", err)
		}
		return
	}
	var obj map[string]any
	if err := json.Unmarshal(got.Output, &obj); err != nil || obj == nil {
		t.Fatalf("output %q is not one JSON object: %v", got.Output, err)
	}
}

// FuzzOpenAIResponse: whatever a Chat Completions API answers (status, Retry-After, body),
// Complete gives one JSON object or a defined error, and never panics.
func FuzzOpenAIResponse(f *testing.F) {
	f.Add(uint16(200), "", []byte(`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"facts\":[]}","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`))
	f.Add(uint16(200), "", []byte(`{"choices":[{"message":{"content":"`+"```json\\n{}\\n```"+`"},"finish_reason":"stop"}]}`))
	f.Add(uint16(200), "", []byte(`{"choices":[{"message":{"content":"[1]"},"finish_reason":"stop"}],"usage":{"prompt_tokens":-5}}`))
	f.Add(uint16(200), "", []byte(`{"choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}]}`))
	f.Add(uint16(200), "", []byte(`{"choices":[{"message":{"content":"{}"},"finish_reason":"length"}]}`))
	f.Add(uint16(200), "", []byte(`{"choices":[]}`))
	f.Add(uint16(200), "", []byte(`{"choices":[null]}`))
	f.Add(uint16(200), "", []byte(`Internal error`))
	f.Add(uint16(200), "", []byte(``))
	f.Add(uint16(429), "2", []byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`))
	f.Add(uint16(400), "", []byte(`{"object":"error","message":"json_schema is not supported","type":"BadRequestError","code":400}`))
	f.Add(uint16(401), "", []byte(`{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`))
	ans := &fuzzAnswer{}
	srv := httptest.NewServer(ans)
	f.Cleanup(srv.Close)
	c, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, Retry: oneTry})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status uint16, retryAfter string, body []byte) {
		ans.set(status, retryAfter, body)
		got, err := c.Complete(context.Background(), testRequest())
		checkCompleted(t, got, err)
	})
}

// FuzzConverseResponse: whatever Bedrock's Converse answers, Complete gives one JSON object or
// a defined error, and never panics.
func FuzzConverseResponse(f *testing.F) {
	f.Add(uint16(200), "", []byte(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t","name":"facts","input":{"facts":[]}}}]}},"stopReason":"tool_use","usage":{"inputTokens":5,"outputTokens":3,"totalTokens":8},"metrics":{"latencyMs":1}}`))
	f.Add(uint16(200), "", []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"hi"},{"toolUse":{"toolUseId":"t","name":"facts","input":"x"}}]}},"stopReason":"tool_use"}`))
	f.Add(uint16(200), "", []byte(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"name":"facts"}}]}},"stopReason":"max_tokens","usage":{"inputTokens":-1}}`))
	f.Add(uint16(200), "", []byte(`{"output":{"unknown":{}},"stopReason":"end_turn"}`))
	f.Add(uint16(200), "", []byte(`{"output":null}`))
	f.Add(uint16(200), "", []byte(`Internal error`))
	f.Add(uint16(429), "3", []byte(`{"message":"Too many requests"}`))
	f.Add(uint16(400), "", []byte(`{"message":"This model doesn't support the toolConfig.toolChoice field."}`))
	f.Add(uint16(500), "", []byte(`{"message":`))
	ans := &fuzzAnswer{}
	srv := httptest.NewServer(ans)
	f.Cleanup(srv.Close)
	c, err := llm.NewBedrock(context.Background(), llm.BedrockConfig{
		Region: "eu-west-1", BaseEndpoint: srv.URL, Retry: oneTry,
		AWS: &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status uint16, retryAfter string, body []byte) {
		ans.set(status, retryAfter, body)
		got, err := c.Complete(context.Background(), testRequest())
		checkCompleted(t, got, err)
	})
}
