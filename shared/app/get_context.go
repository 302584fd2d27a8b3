package app

import (
	"context"
	"encoding/json"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/chatformat"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// GetContextInput is the request of get-context.
type GetContextInput struct {
	ActingFor
	SessionID   *string `json:"session_id"`
	Agent       *string `json:"agent"`
	MaxMessages *int64  `json:"max_messages"`
	MaxTokens   *int64  `json:"max_tokens"`
	Query       *string `json:"query"`
	RecallK     *int64  `json:"recall_k"`
	Format      *string `json:"format"`
	Since       *string `json:"since"`
	AnswersOnly *bool   `json:"answers_only"`
	// UserContext, when true, adds user_context: UserContextText of the answer's user memory,
	// state and notes, at DefaultUserContextTokens.
	UserContext *bool `json:"user_context"`
	// IncludeShared (default true) recalls the tenant's shared memories for query beside the
	// user's own, marked shared; false leaves them out.
	IncludeShared *bool `json:"include_shared"`
}

// The formats of get-context.
const (
	FormatRaw       = "raw"
	FormatOpenAI    = "openai"
	FormatLangChain = "langchain"
	FormatAnthropic = "anthropic"
)

// ContextOutput is the answer of get-context, and the format its messages are to be rendered in.
type ContextOutput struct {
	memory.Context
	Format string `json:"-"`
}

// intentFetchContext names get-context as the contract's intent, in spans.
const intentFetchContext = "fetchContext"

// GetContext reads everything an agent needs for its next prompt (see store.GetContext).
func (a *App) GetContext(ctx context.Context, pr auth.Principal, req GetContextInput) (ContextOutput, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return ContextOutput{}, err
	}
	p := store.ContextParams{Scope: sc, IncludeShared: req.IncludeShared == nil || *req.IncludeShared}
	if id := parseUUID(&f, "session_id", req.SessionID, true); id != nil {
		p.SessionID = *id
	}
	p.MaxMessages = int(intField(&f, "max_messages", req.MaxMessages, 20, 1, memory.MaxContextMessages))
	p.MaxTokens = int(intField(&f, "max_tokens", req.MaxTokens, 0, 1, 10_000_000))
	p.RecallK = int(intField(&f, "recall_k", req.RecallK, 5, 0, 50))
	if req.Query != nil {
		if memory.CharCount(*req.Query) > maxQueryChars {
			f.Addf("query", "must be at most %d characters", maxQueryChars)
		}
		p.Query = *req.Query
	}
	format := oneOf(&f, "format", req.Format, FormatRaw, FormatRaw, FormatOpenAI, FormatLangChain, FormatAnthropic)
	p.Since = timeField(&f, "since", req.Since)
	p.AnswersOnly = req.AnswersOnly != nil && *req.AnswersOnly
	if err := f.Err(); err != nil {
		return ContextOutput{}, err
	}
	// The window and the memories may come from a read replica that has replayed the caller's
	// writes (store.MayReadReplica).
	ictx, sp := telemetry.StartIntent(store.MayReadReplica(ctx), intentFetchContext)
	out, err := a.readContext(ictx, p)
	sp.End(err)
	if err == nil && req.UserContext != nil && *req.UserContext {
		text, _ := UserContextText(out.UserMemory, out.State, out.Notes, DefaultUserContextTokens)
		out.UserContext = &text
	}
	return ContextOutput{Context: out, Format: format}, err
}

// RawMessages renders messages in the raw format: every field, metadata {} when there is
// none, tool_calls null when there are none, and [] rather than null for no messages.
func RawMessages(msgs []memory.Message) []memory.Message {
	for i := range msgs {
		if msgs[i].Metadata == nil {
			msgs[i].Metadata = json.RawMessage("{}")
		}
	}
	if msgs == nil {
		msgs = []memory.Message{}
	}
	return msgs
}

// ContextOpenAI is get-context's answer in the openai format.
type ContextOpenAI struct {
	memory.Context
	Messages []chatformat.OpenAIMessage `json:"messages"`
}

// ContextLangChain is get-context's answer in the langchain format.
type ContextLangChain struct {
	memory.Context
	Messages []chatformat.LangChainMessage `json:"messages"`
}

// ContextAnthropic is get-context's answer in the anthropic format: System is the text of the
// window's system messages, which Messages leaves out.
type ContextAnthropic struct {
	memory.Context
	System   *string                       `json:"system"`
	Messages []chatformat.AnthropicMessage `json:"messages"`
}

// RenderContext gives get-context's answer in its format (see package chatformat). Every
// format carries content as committed where it can; usage counts what the anthropic format
// leaves out.
func RenderContext(out ContextOutput) any {
	switch out.Format {
	case FormatOpenAI:
		return ContextOpenAI{Context: out.Context, Messages: chatformat.OpenAI(out.Messages)}
	case FormatLangChain:
		return ContextLangChain{Context: out.Context, Messages: chatformat.LangChain(out.Messages)}
	case FormatAnthropic:
		conv := chatformat.Anthropic(out.Messages)
		c := out.Context
		c.Usage.Messages, c.Usage.TokenEstimate = conv.Carried, conv.Tokens
		c.Usage.DroppedMessages, c.Usage.DroppedParts = conv.DroppedMessages, conv.DroppedParts
		return ContextAnthropic{Context: c, System: conv.System, Messages: conv.Messages}
	}
	out.Messages = RawMessages(out.Messages)
	return out.Context
}
