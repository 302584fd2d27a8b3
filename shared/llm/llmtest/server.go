// Package llmtest serves a chat model for tests, over the two wire protocols agentmem speaks:
// OpenAI's Chat Completions (POST .../chat/completions) and Amazon Bedrock's Converse (POST
// /model/{modelId}/converse, SigV4-signed). What the model answers is the test's: a function
// from the request, as the server decoded it, to a Reply. The servers check requests the way
// the real APIs do (unknown fields, message shapes, the structured-output fields) and answer
// failures in the providers' own formats.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Call is one request as the model sees it.
type Call struct {
	// System is the system prompt.
	System string
	// Messages are the messages after it, as role and text.
	Messages []Message
	// Schema is the answer's JSON schema (response_format's json_schema.schema, or the tool's
	// input schema); nil when the request carried none (json_object).
	Schema json.RawMessage
	// SchemaName is the schema's name (or the tool's).
	SchemaName string
	// Format is the structured-output mode: "json_schema" or "json_object" (Chat Completions),
	// "any", "tool", "auto" or "" (Converse's toolChoice).
	Format string
	// MaxTokens is the output cap the request set (max_tokens, max_completion_tokens or
	// inferenceConfig.maxTokens); 0 when none.
	MaxTokens int
	// Model is the model asked.
	Model string
	// Path is the request's path and query; Header its headers; Body its JSON, decoded.
	Path   string
	Header http.Header
	Body   map[string]any
}

// Message is one message of a Call.
type Message struct {
	Role, Content string
}

// Reply is what the model answers to a Call.
type Reply struct {
	// Output is the model's text: the message content (Chat Completions) or, when it is a JSON
	// object, the tool's input (Converse; other text is answered as a text block, the model
	// not calling the tool).
	Output string
	// Refusal answers a refusal (Chat Completions' message.refusal) instead of Output.
	Refusal string
	// Truncated answers finish_reason "length" (stopReason "max_tokens").
	Truncated bool
	// InputTokens and OutputTokens are the usage reported; 0 reports an estimate of four bytes
	// a token of the prompt and of the output.
	InputTokens, OutputTokens int
	// NoUsage leaves usage out of the answer, as some servers do.
	NoUsage bool
	// Status, when not 0 or 200, answers this HTTP status instead, in the provider's error
	// format, with Code as the error's type or code (Converse: its exception name) and
	// RetryAfter as the Retry-After header when set.
	Status     int
	Code       string
	RetryAfter string
	// RawBody, when set, is written as the whole 200 answer, as it is.
	RawBody string
}

// Server is a fake chat API. Its URL is the base URL to configure (CHAT_BASE_URL; for
// Converse, the endpoint that replaces the regional one).
type Server struct {
	*httptest.Server
	// Down makes every request answer 503 with Retry-After: 0.
	Down atomic.Bool
	// RefuseJSONSchema makes a Chat Completions server answer response_format json_schema
	// with a 400 naming it, as servers without structured outputs do.
	RefuseJSONSchema atomic.Bool
	// RefuseToolChoice makes a Converse server answer a request with toolChoice with a
	// ValidationException naming it, as models without forced tool use do.
	RefuseToolChoice atomic.Bool
	// Requests counts the requests that arrived.
	Requests atomic.Int64

	mu     sync.Mutex
	answer func(Call) Reply
	calls  []Call
}

// SetAnswer replaces the model.
func (s *Server) SetAnswer(answer func(Call) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = answer
}

// Calls are the requests the model answered so far (not those refused for their shape, nor
// those answered while Down).
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) record(c Call) Reply {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	answer := s.answer
	s.mu.Unlock()
	return answer(c)
}

// Always answers every call with r.
func Always(r Reply) func(Call) Reply { return func(Call) Reply { return r } }

// Sequence answers the n-th call with replies[n], and every call after the last with the last.
func Sequence(replies ...Reply) func(Call) Reply {
	var n atomic.Int64
	return func(Call) Reply {
		i := int(n.Add(1) - 1)
		return replies[min(i, len(replies)-1)]
	}
}

// estimate is the usage a Reply without one reports: four bytes a token.
func estimate(c Call, r Reply) (in, out int) {
	in, out = r.InputTokens, r.OutputTokens
	if in == 0 {
		n := len(c.System) + len(c.Schema)
		for _, m := range c.Messages {
			n += len(m.Content) + 4
		}
		in = (n + 3) / 4
	}
	if out == 0 {
		out = (len(r.Output) + 3) / 4
	}
	return in, out
}

// NewChatCompletions serves OpenAI's Chat Completions API until the test ends, answering with
// answer (which may be replaced with SetAnswer).
func NewChatCompletions(t testing.TB, answer func(Call) Reply) *Server {
	t.Helper()
	s := &Server{answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serveChatCompletions))
	t.Cleanup(s.Close)
	return s
}

// chatCompletionsRequest is the part of OpenAI's request this server takes; any other field is
// refused, so a client sending what it should not is found out.
type chatCompletionsRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Strict      *bool           `json:"strict"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Stream              *bool    `json:"stream"`
	Temperature         *float64 `json:"temperature"`
}

func openAIError(w http.ResponseWriter, status int, typ, param, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil}}
	if param != "" {
		body["error"].(map[string]any)["param"] = param
	}
	json.NewEncoder(w).Encode(body) //nolint:errcheck
}

func (s *Server) serveChatCompletions(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	if s.Down.Load() {
		w.Header().Set("Retry-After", "0")
		openAIError(w, http.StatusServiceUnavailable, "server_error", "", "The server is overloaded.")
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		openAIError(w, http.StatusNotFound, "invalid_request_error", "", "Unknown request URL: "+r.Method+" "+r.URL.Path)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var req chatCompletionsRequest
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if r.Header.Get("Content-Type") != "application/json" || dec.Decode(&req) != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request.")
		return
	}
	if req.Temperature != nil || (req.Stream != nil && *req.Stream) || req.Model == "" || len(req.Messages) < 2 ||
		req.Messages[0].Role != "system" || req.ResponseFormat == nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "messages", "Unexpected request shape.")
		return
	}
	c := Call{System: req.Messages[0].Content, Model: req.Model, Path: r.URL.RequestURI(), Header: r.Header.Clone()}
	json.Unmarshal(raw, &c.Body) //nolint:errcheck
	for _, m := range req.Messages[1:] {
		if m.Role != "user" && m.Role != "assistant" {
			openAIError(w, http.StatusBadRequest, "invalid_request_error", "messages", "Unexpected role.")
			return
		}
		c.Messages = append(c.Messages, Message{Role: m.Role, Content: m.Content})
	}
	switch {
	case req.MaxCompletionTokens != nil && req.MaxTokens != nil:
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "max_tokens", "max_tokens and max_completion_tokens are exclusive.")
		return
	case req.MaxCompletionTokens != nil:
		c.MaxTokens = *req.MaxCompletionTokens
	case req.MaxTokens != nil:
		c.MaxTokens = *req.MaxTokens
	}
	switch rf := req.ResponseFormat; rf.Type {
	case "json_schema":
		if s.RefuseJSONSchema.Load() {
			openAIError(w, http.StatusBadRequest, "invalid_request_error", "response_format",
				"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.")
			return
		}
		if rf.JSONSchema == nil || rf.JSONSchema.Name == "" || rf.JSONSchema.Strict == nil || !*rf.JSONSchema.Strict ||
			!json.Valid(rf.JSONSchema.Schema) {
			openAIError(w, http.StatusBadRequest, "invalid_request_error", "response_format", "Invalid schema for response_format.")
			return
		}
		c.Format, c.Schema, c.SchemaName = "json_schema", rf.JSONSchema.Schema, rf.JSONSchema.Name
	case "json_object":
		if rf.JSONSchema != nil || !strings.Contains(strings.ToLower(c.System), "json") {
			// OpenAI's rule: json_object needs the word JSON in the messages.
			openAIError(w, http.StatusBadRequest, "invalid_request_error", "messages",
				"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
			return
		}
		c.Format = "json_object"
	default:
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "response_format", "Unknown response_format type.")
		return
	}
	reply := s.record(c)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		openAIError(w, reply.Status, reply.Code, "", "The model failed (a message that quotes the input: "+c.System+").")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if reply.RawBody != "" {
		io.WriteString(w, reply.RawBody) //nolint:errcheck
		return
	}
	message := map[string]any{"role": "assistant", "content": reply.Output, "refusal": nil}
	finish := "stop"
	switch {
	case reply.Refusal != "":
		message["content"], message["refusal"] = nil, reply.Refusal
	case reply.Truncated:
		finish = "length"
	}
	body := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1764000000, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": message, "logprobs": nil, "finish_reason": finish}},
	}
	if !reply.NoUsage {
		in, out := estimate(c, reply)
		body["usage"] = map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
	}
	json.NewEncoder(w).Encode(body) //nolint:errcheck
}

// NewConverse serves Amazon Bedrock Runtime's Converse API until the test ends, answering with
// answer (which may be replaced with SetAnswer). Requests must be SigV4-signed (the signature
// is not checked: any credentials do).
func NewConverse(t testing.TB, answer func(Call) Reply) *Server {
	t.Helper()
	s := &Server{answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serveConverse))
	t.Cleanup(s.Close)
	return s
}

// converseRequest is the part of Converse's request this server takes; any other field is
// refused.
type converseRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Text *string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
	System []struct {
		Text *string `json:"text"`
	} `json:"system"`
	InferenceConfig *struct {
		MaxTokens *int `json:"maxTokens"`
	} `json:"inferenceConfig"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec *struct {
				Name        string  `json:"name"`
				Description *string `json:"description"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice map[string]json.RawMessage `json:"toolChoice"`
	} `json:"toolConfig"`
}

// BedrockError writes an error as Bedrock Runtime does: the exception in X-Amzn-ErrorType and
// a JSON message.
func BedrockError(w http.ResponseWriter, status int, exception, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", exception+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("X-Amzn-RequestId", "6f1c1b2e-0000-4b5c-8d6e-7f8091a2b3c4")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q}`, message)
}

func (s *Server) serveConverse(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	if s.Down.Load() {
		w.Header().Set("Retry-After", "0")
		BedrockError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", "Service is unavailable.")
		return
	}
	model, ok := strings.CutPrefix(r.URL.Path, "/model/")
	model, ok2 := strings.CutSuffix(model, "/converse")
	if r.Method != http.MethodPost || !ok || !ok2 || model == "" {
		BedrockError(w, http.StatusNotFound, "UnknownOperationException", "Unknown operation.")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=") {
		BedrockError(w, http.StatusForbidden, "AccessDeniedException", "Missing Authentication Token")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var req converseRequest
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if dec.Decode(&req) != nil || len(req.Messages) == 0 {
		BedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again.")
		return
	}
	c := Call{Model: model, Path: r.URL.RequestURI(), Header: r.Header.Clone()}
	json.Unmarshal(raw, &c.Body) //nolint:errcheck
	for _, b := range req.System {
		if b.Text != nil {
			c.System += *b.Text
		}
	}
	for i, m := range req.Messages {
		want := []string{"user", "assistant"}[i%2]
		if m.Role != want || len(m.Content) == 0 {
			BedrockError(w, http.StatusBadRequest, "ValidationException",
				"A conversation must alternate between user and assistant roles.")
			return
		}
		text := ""
		for _, b := range m.Content {
			if b.Text != nil {
				text += *b.Text
			}
		}
		c.Messages = append(c.Messages, Message{Role: m.Role, Content: text})
	}
	if req.InferenceConfig != nil && req.InferenceConfig.MaxTokens != nil {
		c.MaxTokens = *req.InferenceConfig.MaxTokens
	}
	if tc := req.ToolConfig; tc != nil {
		if len(tc.Tools) != 1 || tc.Tools[0].ToolSpec == nil || !json.Valid(tc.Tools[0].ToolSpec.InputSchema.JSON) {
			BedrockError(w, http.StatusBadRequest, "ValidationException", "The toolConfig field is invalid.")
			return
		}
		c.SchemaName, c.Schema = tc.Tools[0].ToolSpec.Name, tc.Tools[0].ToolSpec.InputSchema.JSON
		for k := range tc.ToolChoice {
			c.Format = k
		}
		if c.Format != "" && s.RefuseToolChoice.Load() {
			BedrockError(w, http.StatusBadRequest, "ValidationException",
				"This model doesn't support the toolConfig.toolChoice field. Remove toolConfig.toolChoice and try again.")
			return
		}
	}
	reply := s.record(c)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		code := reply.Code
		if code == "" {
			code = "InternalServerException"
		}
		BedrockError(w, reply.Status, code, "The model failed (a message that quotes the input: "+c.System+").")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if reply.RawBody != "" {
		io.WriteString(w, reply.RawBody) //nolint:errcheck
		return
	}
	var content []any
	stop := "end_turn"
	var input map[string]any
	if c.SchemaName != "" && json.Unmarshal([]byte(reply.Output), &input) == nil && input != nil && reply.Refusal == "" {
		content = append(content, map[string]any{"toolUse": map[string]any{
			"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": c.SchemaName, "input": input}})
		stop = "tool_use"
	} else {
		text := reply.Output
		if reply.Refusal != "" {
			text = reply.Refusal
		}
		content = append(content, map[string]any{"text": text})
	}
	if reply.Truncated {
		stop = "max_tokens"
	}
	body := map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"metrics":    map[string]any{"latencyMs": 412},
	}
	if !reply.NoUsage {
		in, out := estimate(c, reply)
		body["usage"] = map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out}
	}
	json.NewEncoder(w).Encode(body) //nolint:errcheck
}
