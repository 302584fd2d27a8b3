package app

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
)

// Limits of the user context text, in estimated tokens (memory.EstimateTokens' four bytes a
// token).
const (
	DefaultUserContextTokens = 500
	maxUserContextTokens     = 4000
)

// UserContextInput is the request of the user context text.
type UserContextInput struct {
	ActingFor
	Agent     *string `json:"agent"`
	MaxTokens *int64  `json:"max_tokens"`
}

// UserContext is a short text about the user for a prompt: their mode, key/value memory and
// the agent's notes, in that order, cut to a token budget.
type UserContext struct {
	Agent         string `json:"agent"`
	Text          string `json:"text"`
	TokenEstimate int    `json:"token_estimate"`
	Truncated     bool   `json:"truncated"`
}

// UserContext builds the user's context text from what they have stored; a user with nothing
// stored gets "" rather than not found, so an agent can always ask.
func (a *App) UserContext(ctx context.Context, pr auth.Principal, in UserContextInput) (UserContext, error) {
	var f apierror.Fields
	sc, err := scope(pr, in.ActingFor, in.Agent, memory.DefaultAgent, &f)
	if err != nil {
		return UserContext{}, err
	}
	budget := int(intField(&f, "max_tokens", in.MaxTokens, DefaultUserContextTokens, 1, maxUserContextTokens))
	if err := f.Err(); err != nil {
		return UserContext{}, err
	}
	items, err := a.store.ListUserMemory(ctx, sc)
	if err != nil {
		return UserContext{}, err
	}
	var state *string
	st, err := a.store.GetUserState(ctx, sc)
	switch {
	case err == nil:
		state = &st.Mode
	case Problem(err).Code == apierror.NotFound:
	default:
		return UserContext{}, err
	}
	n, err := a.store.ReadNotes(ctx, sc)
	if err != nil {
		return UserContext{}, err
	}
	kv := make(map[string]json.RawMessage, len(items))
	for _, it := range items {
		kv[it.Key] = it.Value
	}
	var notes *string
	if n.Content != "" {
		notes = &n.Content
	}
	text, truncated := UserContextText(kv, state, notes, budget)
	return UserContext{Agent: sc.Agent, Text: text, TokenEstimate: textTokens(text), Truncated: truncated}, nil
}

// UserContextText renders a user's mode, key/value memory (one "key: value" line each, by key)
// and notes as one short text of at most maxTokens estimated tokens, cut at a character
// boundary when longer (truncated true). get-context's user_context and the MCP tool
// get_user_context give this same text.
func UserContextText(userMemory map[string]json.RawMessage, state, notes *string, maxTokens int) (text string, truncated bool) {
	var b strings.Builder
	if state != nil && *state != "" {
		b.WriteString("Mode: " + *state + "\n")
	}
	if len(userMemory) > 0 {
		keys := make([]string, 0, len(userMemory))
		for k := range userMemory {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString("About the user:\n")
		for _, k := range keys {
			var v bytes.Buffer
			if json.Compact(&v, userMemory[k]) != nil {
				v.Reset()
				v.Write(userMemory[k])
			}
			b.WriteString("- " + k + ": " + v.String() + "\n")
		}
	}
	if notes != nil && strings.TrimSpace(*notes) != "" {
		b.WriteString("Notes:\n" + strings.TrimSpace(*notes) + "\n")
	}
	text = strings.TrimRight(b.String(), "\n")
	limit := max(maxTokens, 1) * 4
	if len(text) <= limit {
		return text, false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut], true
}

// textTokens is memory.EstimateTokens' count for a bare text, without message framing.
func textTokens(s string) int { return (len(s) + 3) / 4 }
