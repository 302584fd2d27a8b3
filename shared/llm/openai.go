package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentmem/agentmem/shared/upstream"
)

// OpenAIConfig configures an OpenAI-compatible Chat Completions endpoint.
type OpenAIConfig struct {
	// BaseURL locates the endpoint; default DefaultOpenAIBaseURL. See EndpointURL for the
	// request URL it gives.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>", or as "api-key: <key>" to an Azure
	// OpenAI host (see upstream.AzureOpenAIHost). Empty sends neither (Ollama, vLLM and
	// LM Studio need none).
	APIKey string
	// Model is the request's "model"; default DefaultOpenAIModel.
	Model string
	// ResponseFormat is ResponseFormatJSONSchema (default) or ResponseFormatJSONObject.
	ResponseFormat string
	// MaxOutputTokens caps an answer when the request sets no cap; default
	// DefaultMaxOutputTokens. It is sent as max_completion_tokens to OpenAI and Azure OpenAI
	// (their reasoning models refuse max_tokens) and as max_tokens to every other server (not
	// all of them know the newer name).
	MaxOutputTokens int
	// Timeout bounds one request; default DefaultTimeout.
	Timeout time.Duration
	// Retry bounds the retries of one Complete call.
	Retry RetryPolicy
	// HTTPClient sends the requests; default a client of its own with no overall timeout (each
	// request is bounded by Timeout through its context).
	HTTPClient *http.Client
	// Logger receives a warning when the provider is given up on, and when a server refuses
	// json_schema; default none.
	Logger *slog.Logger
}

// OpenAI completes with an OpenAI-compatible Chat Completions API: POST {base}/chat/completions
// with the system prompt as the first message and the schema as response_format. Like the
// embedding client, it speaks plain net/http and encoding/json rather than a client library,
// whose retries would multiply ours and whose URLs and headers are OpenAI's alone.
//
// Structured output: json_schema with "strict": true, which OpenAI, Azure OpenAI (api-version
// 2024-08-01-preview and later), Ollama (0.5 and later), vLLM and LM Studio all take. A server
// that refuses it with a 400 naming response_format or json_schema (an older model or server)
// is asked again at once with json_object, the schema then given in the system prompt, and
// from then on for the life of the client: one refused request per process, not per call.
// The answer is not trusted either way; the caller validates it against the schema.
//
// No temperature is sent: reasoning models refuse any but their own, and the servers' defaults
// serve extraction and summaries well enough.
type OpenAI struct {
	cfg       OpenAIConfig
	api       *upstream.OpenAIClient
	newTokens bool
	retry     *upstream.Retrier
	log       *slog.Logger
	// jsonObject is set once the server refused json_schema.
	jsonObject atomic.Bool
}

// NewOpenAI checks cfg and returns the client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultOpenAIModel
	}
	switch cfg.ResponseFormat {
	case "":
		cfg.ResponseFormat = DefaultResponseFormat
	case ResponseFormatJSONSchema, ResponseFormatJSONObject:
	default:
		return nil, fmt.Errorf("openai chat: response format must be %s or %s, not %q",
			ResponseFormatJSONSchema, ResponseFormatJSONObject, cfg.ResponseFormat)
	}
	if cfg.MaxOutputTokens <= 0 {
		cfg.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	api, err := upstream.NewOpenAIClient(cfg.BaseURL, chatAPI, "chat", cfg.APIKey, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := &OpenAI{
		cfg:   cfg,
		api:   api,
		retry: newRetrier(ProviderOpenAI, cfg.Retry, cfg.Timeout, cfg.Logger),
		log:   log,
	}
	o.newTokens = api.Azure || strings.EqualFold(api.Host, "api.openai.com")
	o.jsonObject.Store(cfg.ResponseFormat == ResponseFormatJSONObject)
	return o, nil
}

// chatAPI is the path of the Chat Completions API (see upstream.OpenAIEndpoint).
const chatAPI = "/chat/completions"

// EndpointURL is where an OpenAI-compatible base URL receives chat completions (see
// upstream.OpenAIEndpoint): http://localhost:11434 (Ollama) gets /v1/chat/completions,
// https://api.openai.com/v1 gets /chat/completions, and an Azure deployment's
// .../openai/deployments/<name>/chat/completions?api-version=... is the endpoint itself.
func EndpointURL(base string) (string, error) {
	return upstream.OpenAIEndpoint(base, chatAPI, "chat")
}

// Provider implements Chat.
func (o *OpenAI) Provider() string { return ProviderOpenAI }

// Model implements Chat.
func (o *OpenAI) Model() string { return o.cfg.Model }

// Complete implements Chat.
func (o *OpenAI) Complete(ctx context.Context, req Request) (Completion, error) {
	if err := checkRequest(req); err != nil {
		return Completion{}, err
	}
	ctx, cancel := o.retry.Budget(ctx)
	defer cancel()
	var out Completion
	err := o.retry.Do(ctx, func(ctx context.Context) error {
		jsonObject := o.jsonObject.Load()
		var err error
		out, err = o.request(ctx, req, jsonObject)
		var refused *schemaRefusedError
		if !jsonObject && errors.As(err, &refused) {
			o.jsonObject.Store(true)
			o.log.WarnContext(ctx, "chat server refused response_format json_schema; asking for json_object from now on",
				"provider", ProviderOpenAI, "status", refused.Status, "code", refused.Code)
			out, err = o.request(ctx, req, true)
		}
		return err
	})
	if err != nil {
		return out, fmt.Errorf("complete %s: %w", req.SchemaName, err)
	}
	return out, nil
}

// checkRequest refuses a request no provider could answer.
func checkRequest(req Request) error {
	if req.SchemaName == "" || len(req.SchemaName) > 64 || strings.TrimLeft(req.SchemaName,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		return fmt.Errorf("chat request: schema name %q must be 1 to 64 letters, digits, _ or -", req.SchemaName)
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(req.Schema, &root); err != nil || root == nil {
		return fmt.Errorf("chat request: the schema must be a JSON object (%d bytes)", len(req.Schema))
	}
	if len(req.Messages) == 0 || req.Messages[0].Role != RoleUser {
		return errors.New("chat request: the messages must start with a user message")
	}
	for i, m := range req.Messages {
		if want := []string{RoleUser, RoleAssistant}[i%2]; m.Role != want {
			return fmt.Errorf("chat request: message %d is %q, want %q (user and assistant alternate)", i, m.Role, want)
		}
	}
	return nil
}

type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	ResponseFormat      responseFormat `json:"response_format"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	Stream              bool           `json:"stream"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *jsonSchemaFormat `json:"json_schema,omitempty"`
}

type jsonSchemaFormat struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Strict      bool            `json:"strict"`
	Schema      json.RawMessage `json:"schema"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// maxResponseBytes caps an answer: a completion of a few thousand tokens is some kilobytes.
const maxResponseBytes = 4 << 20

// maxErrorBytes caps how much of an error body is read to classify it.
const maxErrorBytes = 64 << 10

// schemaRefusedError is a 400 that names response_format or json_schema: the server does not
// take structured outputs (or not this schema).
type schemaRefusedError struct{ *StatusError }

func (e *schemaRefusedError) Unwrap() error { return e.StatusError }

// JSONObjectInstruction introduces the schema in the system prompt when a server is asked for
// json_object, which constrains the answer to JSON but not to a shape.
const JSONObjectInstruction = "\n\nAnswer with one JSON object and nothing else. It must conform to this JSON schema:\n"

// request sends one completion request and reads the answer.
func (o *OpenAI) request(ctx context.Context, req Request, jsonObject bool) (Completion, error) {
	body := chatRequest{Model: o.cfg.Model, Messages: make([]chatMessage, 0, len(req.Messages)+1)}
	system := req.System
	if jsonObject {
		body.ResponseFormat = responseFormat{Type: "json_object"}
		system += JSONObjectInstruction + string(req.Schema)
	} else {
		body.ResponseFormat = responseFormat{Type: "json_schema", JSONSchema: &jsonSchemaFormat{
			Name: req.SchemaName, Description: req.SchemaDescription, Strict: true, Schema: req.Schema}}
	}
	body.Messages = append(body.Messages, chatMessage{Role: "system", Content: system})
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, chatMessage(m))
	}
	maxTokens := req.MaxOutputTokens
	if maxTokens <= 0 {
		maxTokens = o.cfg.MaxOutputTokens
	}
	if o.newTokens {
		body.MaxCompletionTokens = maxTokens
	} else {
		body.MaxTokens = maxTokens
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return Completion{}, err
	}
	res, err := o.api.Post(ctx, raw)
	if err != nil {
		return Completion{}, err
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return Completion{}, statusError(res, jsonObject)
	}
	var parsed chatResponse
	dec := json.NewDecoder(io.LimitReader(res.Body, maxResponseBytes))
	if err := dec.Decode(&parsed); err != nil {
		var netErr net.Error
		if ctx.Err() != nil || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) {
			// The connection broke, or the attempt's time ran out, while the answer came.
			return Completion{}, upstream.Temporary(fmt.Errorf("read response: %w", err), 0)
		}
		return Completion{}, fmt.Errorf("%w: openai: decode response: %v", ErrInvalidResponse, err)
	}
	out := Completion{Model: parsed.Model}
	if parsed.Usage != nil {
		out.Usage = Usage{InputTokens: max(parsed.Usage.PromptTokens, 0), OutputTokens: max(parsed.Usage.CompletionTokens, 0)}
	}
	if len(parsed.Choices) == 0 || parsed.Choices[0].Message == nil {
		return out, fmt.Errorf("%w: openai: no choice with a message", ErrInvalidResponse)
	}
	choice := parsed.Choices[0]
	finish := ""
	if choice.FinishReason != nil {
		finish = *choice.FinishReason
	}
	switch {
	case choice.Message.Refusal != nil && *choice.Message.Refusal != "":
		return out, fmt.Errorf("%w: openai: the model refused", ErrMalformedOutput)
	case finish == "length":
		return out, fmt.Errorf("%w: openai: the answer was cut at the token limit", ErrMalformedOutput)
	case finish == "content_filter":
		return out, fmt.Errorf("%w: openai: the answer was filtered", ErrMalformedOutput)
	case choice.Message.Content == nil:
		return out, fmt.Errorf("%w: openai: no content (finish reason %q)", ErrMalformedOutput, finish)
	}
	obj, err := jsonObjectOf(*choice.Message.Content)
	if err != nil {
		return out, fmt.Errorf("%w: openai: %v", ErrMalformedOutput, err)
	}
	out.Output = obj
	return out, nil
}

// statusError reads a refusal: its error type or code (never its message, which may quote the
// key or the input), whether it is worth retrying, and whether it refuses the response format.
func statusError(res *http.Response, jsonObject bool) error {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBytes))
	if upstream.RetryableStatus(res.StatusCode) {
		return upstream.Temporary(fmt.Errorf("status %d", res.StatusCode), upstream.RetryAfter(res.Header, time.Now()))
	}
	se := &StatusError{Provider: ProviderOpenAI, Status: res.StatusCode, Code: errorCode(raw)}
	if !jsonObject && (res.StatusCode == http.StatusBadRequest || res.StatusCode == http.StatusUnprocessableEntity) {
		lower := bytes.ToLower(raw)
		if bytes.Contains(lower, []byte("response_format")) || bytes.Contains(lower, []byte("json_schema")) {
			return &schemaRefusedError{se}
		}
	}
	return se
}

// errorCode is the error's code or type, as OpenAI ({"error": {"type", "code"}}) or vLLM
// ({"type", "code"} at the top) give it; "" when neither is a short string.
func errorCode(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
		Type  any             `json:"type"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	var inner struct {
		Type any `json:"type"`
		Code any `json:"code"`
	}
	_ = json.Unmarshal(e.Error, &inner)
	for _, c := range []any{inner.Code, inner.Type, e.Type} {
		if s, ok := c.(string); ok && s != "" && len(s) <= 64 && !strings.ContainsAny(s, " \n") {
			return s
		}
	}
	return ""
}

// jsonObjectOf is the one JSON object a model's text holds: the text itself, or the inside of
// the ```json fence some models wrap it in.
func jsonObjectOf(text string) (json.RawMessage, error) {
	s := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		if inner, ok := strings.CutSuffix(strings.TrimSpace(rest), "```"); ok {
			s = strings.TrimSpace(inner)
		}
	}
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("the answer is not one JSON object (%d bytes)", len(text))
	}
	return json.RawMessage(s), nil
}
