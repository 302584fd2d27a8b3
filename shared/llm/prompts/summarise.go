package prompts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/memory"
)

// SummariseVersion names the rolling-summary prompt (summarise.v1.txt and its schema); a
// summary records it.
const SummariseVersion = "summarise.v1"

// Limits of a summary.
const (
	// MaxSummaryChars is the longest summary kept, in characters (the prompt asks for at most
	// 300 words, about 2,000).
	MaxSummaryChars = 10_000
	// MaxToolArgumentsChars is the most characters of one tool call's arguments shown.
	MaxToolArgumentsChars = 1000
)

// SummaryInput is the summary so far and the messages to fold into it.
type SummaryInput struct {
	// Previous is the summary so far; "" when there is none.
	Previous string
	// Messages are the messages after the summary's through_seq that it is to cover, oldest
	// first (memory.PlanSummary chooses them); at least one. Their text is shown up to
	// MaxMessageChars characters each.
	Messages []memory.Message
}

// Summary is the new rolling summary.
type Summary struct {
	// Text is the summary: not blank, at most MaxSummaryChars characters.
	Text string
	// Usage is what the completion cost.
	Usage llm.Usage
	// Prompt is SummariseVersion; Model the model that answered.
	Prompt, Model string
}

type summaryAnswer struct {
	Summary string `json:"summary"`
}

type summaryToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type summaryMessage struct {
	Seq        int64             `json:"seq"`
	Role       string            `json:"role"`
	Name       *string           `json:"name,omitempty"`
	Content    string            `json:"content"`
	ToolCalls  []summaryToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string           `json:"tool_call_id,omitempty"`
}

// summaryRequest builds the request for in.
func summaryRequest(in SummaryInput) (llm.Request, error) {
	if len(in.Messages) == 0 {
		return llm.Request{}, errors.New("summarise: no messages to summarise")
	}
	msgs := make([]summaryMessage, len(in.Messages))
	for i, m := range in.Messages {
		sm := summaryMessage{Seq: m.Seq, Role: m.Role, Name: m.Name, Content: clip(m.Content, MaxMessageChars), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			sm.ToolCalls = append(sm.ToolCalls, summaryToolCall{ID: c.ID, Name: c.Function.Name,
				Arguments: clip(c.Function.Arguments, MaxToolArgumentsChars)})
		}
		msgs[i] = sm
	}
	var previous *string
	if strings.TrimSpace(in.Previous) != "" {
		p := clip(in.Previous, MaxSummaryChars)
		previous = &p
	}
	input, err := inputJSON(struct {
		Previous *string          `json:"summary_so_far"`
		Messages []summaryMessage `json:"messages"`
	}{previous, msgs})
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{
		System:            string(file(SummariseVersion + ".txt")),
		Messages:          []llm.Message{{Role: llm.RoleUser, Content: input}},
		Schema:            file(SummariseVersion + ".schema.json"),
		SchemaName:        "summarise",
		SchemaDescription: "The new rolling summary of the conversation.",
	}, nil
}

// Summarise asks the model for the new rolling summary: the previous one with the messages
// folded in. An answer that fails its checks gives an error wrapping llm.ErrMalformedOutput,
// counted in Stats; a provider that cannot answer gives its error.
func (r *Runner) Summarise(ctx context.Context, in SummaryInput) (Summary, error) {
	out := Summary{Prompt: SummariseVersion}
	req, err := summaryRequest(in)
	if err != nil {
		return out, err
	}
	got, err := r.complete(ctx, &r.summary, req, func(output json.RawMessage) error {
		text, cerr := checkSummary(r, output)
		out.Text = text
		return cerr
	})
	out.Usage, out.Model = got.Usage, got.Model
	if err != nil {
		out.Text = ""
		return out, fmt.Errorf("%s: %w", SummariseVersion, err)
	}
	return out, nil
}

// checkSummary validates an answer against the schema and the checks beside it.
func checkSummary(r *Runner, output []byte) (string, error) {
	var a summaryAnswer
	if err := validate(SummariseVersion, r.summarySchema, output, &a); err != nil {
		return "", err
	}
	text := strings.TrimSpace(a.Summary)
	switch n := len([]rune(text)); {
	case n == 0:
		return "", fmt.Errorf("%w: the summary is blank", llm.ErrMalformedOutput)
	case n > MaxSummaryChars:
		return "", fmt.Errorf("%w: the summary has %d characters, more than %d", llm.ErrMalformedOutput, n, MaxSummaryChars)
	}
	return text, nil
}
