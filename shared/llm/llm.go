// Package llm asks a chat model for one structured answer: a system prompt and messages in,
// one JSON object shaped by a JSON schema out, with the tokens it cost. It speaks any
// OpenAI-compatible Chat Completions API (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio) and
// Amazon Bedrock's Converse API, under the same retry, timeout and cooldown rules as the
// embedding providers (shared/upstream). Nothing it logs or returns in an error holds a prompt,
// a message, an answer, a key or a token: only statuses, error codes, counts and sizes.
//
// It checks that the answer is one JSON object; whether that object conforms to the schema is
// the caller's to check (shared/llm/prompts validates it against the same schema).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/agentmem/agentmem/shared/upstream"
)

// Chat answers structured completions with one model. Implementations are safe for concurrent
// use.
type Chat interface {
	// Provider names the API ("openai", "bedrock").
	Provider() string
	// Model names the model asked.
	Model() string
	// Complete asks for one answer. On success, Completion.Output is one JSON object (not yet
	// checked against the schema). A model that answered without a usable object (a refusal,
	// an answer cut at the token limit, text that is not a JSON object) gives an error wrapping
	// ErrMalformedOutput, and a Completion whose Usage counts the tokens spent all the same.
	Complete(ctx context.Context, req Request) (Completion, error)
}

// The roles a Request's messages may take.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Request is one structured completion.
type Request struct {
	// System is the system prompt: the instructions.
	System string
	// Messages follow the system prompt, oldest first, alternating and starting with a user
	// message (RoleUser, RoleAssistant), as every chat API takes them.
	Messages []Message
	// Schema is the JSON schema of the answer, an object at its root. Keep it to the subset
	// every structured-output implementation takes (OpenAI's strict mode): every property
	// required, "additionalProperties": false on every object, a union with "null" for an
	// optional value, no string length or numeric bounds.
	Schema json.RawMessage
	// SchemaName names the schema to the model (OpenAI's json_schema name, Bedrock's tool
	// name): 1 to 64 letters, digits, '_' or '-'.
	SchemaName string
	// SchemaDescription tells the model what the answer is for; optional.
	SchemaDescription string
	// MaxOutputTokens caps the answer; 0 takes the client's default.
	MaxOutputTokens int
}

// LogValue keeps the prompt and the messages out of logs.
func (r Request) LogValue() slog.Value {
	n := len(r.System)
	for _, m := range r.Messages {
		n += len(m.Content)
	}
	return slog.GroupValue(slog.String("schema", r.SchemaName), slog.Int("messages", len(r.Messages)),
		slog.Int("prompt_bytes", n))
}

// Message is one message after the system prompt.
type Message struct {
	// Role is RoleUser or RoleAssistant.
	Role string
	// Content is the message's text.
	Content string
}

// LogValue keeps the content out of logs.
func (m Message) LogValue() slog.Value {
	return slog.GroupValue(slog.String("role", m.Role), slog.Int("content_len", len(m.Content)))
}

// Completion is a model's answer.
type Completion struct {
	// Output is the answer: one JSON object, as the model wrote it.
	Output json.RawMessage
	// Usage is what the request cost.
	Usage Usage
	// Model is the model that answered, as the provider names it ("" when it does not say).
	Model string
}

// LogValue keeps the answer out of logs.
func (c Completion) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("output_bytes", len(c.Output)), slog.Int("input_tokens", c.Usage.InputTokens),
		slog.Int("output_tokens", c.Usage.OutputTokens))
}

// Usage counts the tokens of one completion, as the provider reports them (0 when it does not).
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add is u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// ErrUnavailable reports that the chat provider could not be used right now: it kept answering
// 429 or 5xx, could not be reached, or did not answer in time, until the retry budget ran out
// (or an earlier call gave up moments ago, see RetryPolicy.Cooldown). The work can be tried
// again later.
var ErrUnavailable = errors.New("chat provider unavailable")

// ErrInvalidResponse reports an answer that is not what the provider's API describes (not its
// JSON, no choice, no message). It is not retried: the same request would get the same answer.
var ErrInvalidResponse = errors.New("chat provider gave an invalid response")

// ErrMalformedOutput reports a well-formed API answer whose model output cannot be used: a
// refusal, an answer cut at the token limit or filtered, no tool call where one was forced, or
// text that is not one JSON object. It is not retried here; callers count it and drop the
// answer.
var ErrMalformedOutput = errors.New("chat model gave a malformed output")

// StatusError is a request the provider refused for good (a 4xx other than 408, 425 and 429):
// a wrong key, an unknown model, a schema or an input the model does not take.
type StatusError = upstream.StatusError

// RetryPolicy bounds how long one Complete call keeps trying (see upstream.Policy); zero fields
// take their defaults, except MaxElapsed, which New sets from Config.MaxRetryTime.
type RetryPolicy = upstream.Policy

// newRetrier is the retrier of one chat provider.
func newRetrier(provider string, policy RetryPolicy, timeout time.Duration, log *slog.Logger) *upstream.Retrier {
	return upstream.NewRetrier("chat", provider, policy, timeout, ErrUnavailable, log)
}
