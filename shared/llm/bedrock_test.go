package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/llmtest"
)

func newBedrock(t *testing.T, srv *llmtest.Server, cfg llm.BedrockConfig) *llm.Bedrock {
	t.Helper()
	cfg.Region = "eu-west-1"
	cfg.BaseEndpoint = srv.URL
	cfg.AWS = &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	if cfg.Retry == (llm.RetryPolicy{}) {
		cfg.Retry = fastRetry
	}
	c, err := llm.NewBedrock(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The schema is the input schema of one tool, forced with toolChoice any; the tool's input is
// the answer.
func TestBedrockConverseWithAForcedTool(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewConverse(t, llmtest.Always(llmtest.Reply{Output: `{"facts":["lives in Lyon"]}`, InputTokens: 210, OutputTokens: 14}))
	var logs logBuffer
	c := newBedrock(t, srv, llm.BedrockConfig{Logger: logs.logger()})
	req := testRequest()
	req.SchemaDescription = "What to remember."
	req.MaxOutputTokens = 500
	got, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string][]string
	if json.Unmarshal(got.Output, &out) != nil || !reflect.DeepEqual(out, map[string][]string{"facts": {"lives in Lyon"}}) ||
		got.Usage != (llm.Usage{InputTokens: 210, OutputTokens: 14}) || got.Model != llm.DefaultBedrockModel {
		t.Errorf("completion %s %+v", got.Output, got)
	}
	call := srv.Calls()[0]
	if call.Path != "/model/amazon.nova-micro-v1%3A0/converse" {
		t.Errorf("posted to %s", call.Path)
	}
	if a := call.Header.Get("Authorization"); !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") ||
		!strings.Contains(a, "/eu-west-1/bedrock/aws4_request") || !strings.Contains(a, "Signature=") {
		t.Errorf("not SigV4-signed: %q", a)
	}
	if call.System != req.System || len(call.Messages) != 1 || call.Messages[0].Content != req.Messages[0].Content || call.MaxTokens != 500 {
		t.Errorf("prompt %+v", call)
	}
	var sent, want any
	json.Unmarshal(call.Schema, &sent)
	json.Unmarshal([]byte(testSchema), &want)
	if call.Format != "any" || call.SchemaName != "facts" || !reflect.DeepEqual(sent, want) {
		t.Errorf("tool %s %s %s", call.Format, call.SchemaName, call.Schema)
	}
	spec := call.Body["toolConfig"].(map[string]any)["tools"].([]any)[0].(map[string]any)["toolSpec"].(map[string]any)
	if spec["description"] != "What to remember." {
		t.Errorf("tool spec %v", spec)
	}
	if l := logs.String(); l != "" {
		t.Errorf("a successful call logged %s", l)
	}
}

// A model that refuses toolChoice is asked again without it, told to use the tool, and from
// then on without trying toolChoice again.
func TestBedrockFallsBackWithoutToolChoice(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewConverse(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`}))
	srv.RefuseToolChoice.Store(true)
	var logs logBuffer
	c := newBedrock(t, srv, llm.BedrockConfig{Model: "meta.llama3-1-70b-instruct-v1:0", Logger: logs.logger()})
	for i := range 2 {
		if got, err := c.Complete(context.Background(), testRequest()); err != nil || string(got.Output) != `{"facts":[]}` {
			t.Fatalf("call %d: %s, %v", i, got.Output, err)
		}
	}
	if n := srv.Requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	for _, call := range srv.Calls() {
		if call.Format != "" || !strings.Contains(call.System, "calling the tool facts") {
			t.Errorf("fallback call with toolChoice %q, system %q", call.Format, call.System)
		}
	}
	if strings.Count(logs.String(), "refused toolChoice") != 1 {
		t.Errorf("log %s", logs.String())
	}
	noSecrets(t, "log", logs.String())
}

func TestBedrockRetriesThrottling(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewConverse(t, llmtest.Sequence(
		llmtest.Reply{Status: http.StatusTooManyRequests, Code: "ThrottlingException"},
		llmtest.Reply{Output: `{"facts":[]}`}))
	c := newBedrock(t, srv, llm.BedrockConfig{})
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	if srv.Requests.Load() != 2 {
		t.Errorf("%d requests, want 2", srv.Requests.Load())
	}
}

func TestBedrockGivesUpWithErrUnavailable(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewConverse(t, llmtest.Always(llmtest.Reply{Status: http.StatusInternalServerError, Code: "InternalServerException"}))
	var logs logBuffer
	c := newBedrock(t, srv, llm.BedrockConfig{Logger: logs.logger()})
	_, err := c.Complete(context.Background(), testRequest())
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "InternalServerException") || srv.Requests.Load() != 3 {
		t.Fatalf("error %v after %d requests, want ErrUnavailable naming InternalServerException after 3", err, srv.Requests.Load())
	}
	noSecrets(t, "error", err.Error())
	noSecrets(t, "log", logs.String())
}

func TestBedrockRefusalIsNotRetried(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewConverse(t, llmtest.Always(llmtest.Reply{Status: http.StatusForbidden, Code: "AccessDeniedException"}))
	var logs logBuffer
	c := newBedrock(t, srv, llm.BedrockConfig{Logger: logs.logger()})
	_, err := c.Complete(context.Background(), testRequest())
	var se *llm.StatusError
	if !errors.As(err, &se) || se.Status != 403 || se.Code != "AccessDeniedException" || errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error %v, want a 403 AccessDeniedException", err)
	}
	if srv.Requests.Load() != 1 || !strings.Contains(logs.String(), "AccessDeniedException") {
		t.Errorf("%d requests, log %s", srv.Requests.Load(), logs.String())
	}
	noSecrets(t, "error", err.Error())
	noSecrets(t, "log", logs.String())
}

// The model not calling the tool, or cut at the token limit, is ErrMalformedOutput with its
// usage; a body that is not Converse's JSON is ErrInvalidResponse.
func TestBedrockMalformedAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		want  error
		usage bool
	}{
		{"text instead of the tool", llmtest.Reply{Output: "The user lives in Lyon."}, llm.ErrMalformedOutput, true},
		{"truncated", llmtest.Reply{Output: `{"facts":[]}`, Truncated: true}, llm.ErrMalformedOutput, true},
		{"another tool", llmtest.Reply{RawBody: `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"other","input":{}}}]}},"stopReason":"tool_use","usage":{"inputTokens":9,"outputTokens":2,"totalTokens":11}}`}, llm.ErrMalformedOutput, true},
		{"tool input not an object", llmtest.Reply{RawBody: `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"facts","input":["a"]}}]}},"stopReason":"tool_use","usage":{"inputTokens":9,"outputTokens":2,"totalTokens":11}}`}, llm.ErrMalformedOutput, true},
		{"guardrail", llmtest.Reply{RawBody: `{"output":{"message":{"role":"assistant","content":[{"text":"Sorry."}]}},"stopReason":"guardrail_intervened","usage":{"inputTokens":9,"outputTokens":2,"totalTokens":11}}`}, llm.ErrMalformedOutput, true},
		{"no output", llmtest.Reply{RawBody: `{"stopReason":"end_turn","usage":{"inputTokens":9,"outputTokens":2,"totalTokens":11}}`}, llm.ErrInvalidResponse, true},
		{"not JSON", llmtest.Reply{RawBody: `Internal error`}, llm.ErrInvalidResponse, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewConverse(t, llmtest.Always(tc.reply))
			var logs logBuffer
			c := newBedrock(t, srv, llm.BedrockConfig{Logger: logs.logger()})
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
			noSecrets(t, "error", err.Error())
			noSecrets(t, "log", logs.String())
		})
	}
}

// A Converse request that takes longer than Timeout is abandoned and retried.
func TestBedrockTimesOutSlowRequests(t *testing.T) {
	t.Parallel()
	slow, release := slowFirst()
	srv := llmtest.NewConverse(t, slow)
	t.Cleanup(release) // before the server's Close, which waits for handlers
	c := newBedrock(t, srv, llm.BedrockConfig{Timeout: 200 * time.Millisecond})
	start := time.Now()
	if _, err := c.Complete(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second || srv.Requests.Load() != 2 {
		t.Errorf("took %s and %d requests", took, srv.Requests.Load())
	}
}
