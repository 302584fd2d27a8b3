package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/memory"
)

// The window is the session's newest messages, oldest first: max_messages of them (default 20),
// then as many of those as fit max_tokens, dropping the oldest and saying so.
func TestGetContextRecentWindow(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	ctx := context.Background()
	u := user()
	sid := uuid.NewString()
	var all []string
	for i := 1; i <= 30; i++ {
		all = append(all, fmt.Sprintf("message %02d %s", i, strings.Repeat("x", i*3)))
	}
	for i := 0; i < 30; i += 10 {
		in := app.CommitTurnInput{SessionID: ptr(sid)}
		for j := i; j < i+10; j++ {
			role := "user"
			if (j+1)%2 == 0 {
				role = "assistant"
			}
			in.Messages = append(in.Messages, msg(role, all[j]))
		}
		if _, err := a.CommitTurn(ctx, u, in); err != nil {
			t.Fatal(err)
		}
	}
	tokens := func(i int) int64 { return int64(memory.EstimateTokens(all[i], nil, nil, nil)) }
	want := func(from, to int) []string { return all[from-1 : to] } // messages from..to, 1-based inclusive
	get := func(in app.GetContextInput) memory.Context {
		t.Helper()
		in.SessionID = ptr(sid)
		c, err := a.GetContext(ctx, u, in)
		if err != nil {
			t.Fatal(err)
		}
		return c.Context
	}
	contentsOf := func(c memory.Context) []string {
		var out []string
		for _, m := range c.Messages {
			out = append(out, m.Content)
		}
		return out
	}

	c := get(app.GetContextInput{})
	if got := contentsOf(c); !slices.Equal(got, want(11, 30)) {
		t.Errorf("default window %q, want the last 20 oldest first", got)
	}
	if c.SessionID.String() != sid || c.Usage.Truncated {
		t.Errorf("session_id %s truncated %v", c.SessionID, c.Usage.Truncated)
	}
	for _, n := range []int{1, 7, 30, 500} {
		if got := contentsOf(get(app.GetContextInput{MaxMessages: ptr(int64(n))})); !slices.Equal(got, want(max(1, 31-n), 30)) {
			t.Errorf("max_messages %d: %q", n, got)
		}
	}
	last3 := tokens(27) + tokens(28) + tokens(29)
	for _, tc := range []struct {
		budget    int64
		from      int
		truncated bool
	}{
		{last3, 28, true},
		{last3 + tokens(26) - 1, 28, true},
		{last3 + tokens(26), 27, true},
		{tokens(29), 30, true},
		{10_000_000, 11, false},
	} {
		c := get(app.GetContextInput{MaxTokens: ptr(tc.budget)})
		if got := contentsOf(c); !slices.Equal(got, want(tc.from, 30)) || c.Usage.Truncated != tc.truncated {
			t.Errorf("max_tokens %d: %q truncated %v, want from message %d truncated %v", tc.budget, got, c.Usage.Truncated, tc.from, tc.truncated)
		}
		if int64(c.Usage.TokenEstimate) > tc.budget {
			t.Errorf("max_tokens %d: token_estimate %d over the budget", tc.budget, c.Usage.TokenEstimate)
		}
	}
	c = get(app.GetContextInput{MaxTokens: ptr(tokens(29) - 1)})
	if len(c.Messages) != 0 || !c.Usage.Truncated || c.Usage.TokenEstimate != 0 {
		t.Errorf("tiny budget: %d messages, usage %+v", len(c.Messages), c.Usage)
	}
	if got := contentsOf(get(app.GetContextInput{MaxMessages: ptr(int64(2)), MaxTokens: ptr(int64(10_000))})); !slices.Equal(got, want(29, 30)) {
		t.Errorf("max_messages 2 with a large budget: %q", got)
	}
}

// get-context refuses a session id, window, recall_k, query, format or agent out of its range,
// naming the field; the edges of each range are served.
func TestGetContextValidation(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t)
	ctx := context.Background()
	u := user()
	sid := ptr(uuid.NewString())
	for _, c := range []struct {
		name  string
		in    app.GetContextInput
		field string
	}{
		{"session_id missing", app.GetContextInput{}, "session_id"},
		{"session_id not a UUID", app.GetContextInput{SessionID: ptr("abc")}, "session_id"},
		{"max_messages 0", app.GetContextInput{SessionID: sid, MaxMessages: ptr(int64(0))}, "max_messages"},
		{"max_messages 501", app.GetContextInput{SessionID: sid, MaxMessages: ptr(int64(501))}, "max_messages"},
		{"max_messages negative", app.GetContextInput{SessionID: sid, MaxMessages: ptr(int64(-1))}, "max_messages"},
		{"max_tokens 0", app.GetContextInput{SessionID: sid, MaxTokens: ptr(int64(0))}, "max_tokens"},
		{"max_tokens negative", app.GetContextInput{SessionID: sid, MaxTokens: ptr(int64(-10))}, "max_tokens"},
		{"recall_k 51", app.GetContextInput{SessionID: sid, Query: ptr("x"), RecallK: ptr(int64(51))}, "recall_k"},
		{"recall_k negative", app.GetContextInput{SessionID: sid, Query: ptr("x"), RecallK: ptr(int64(-1))}, "recall_k"},
		{"query over 4096 characters", app.GetContextInput{SessionID: sid, Query: ptr(strings.Repeat("é", 4097))}, "query"},
		{"format wrong case", app.GetContextInput{SessionID: sid, Format: ptr("OpenAI")}, "format"},
		{"format unknown", app.GetContextInput{SessionID: sid, Format: ptr("text")}, "format"},
		{"agent invalid", app.GetContextInput{SessionID: sid, Agent: ptr("bad agent!")}, "agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.GetContext(ctx, u, c.in)
			wantField(t, c.name, err, c.field)
		})
	}
	for _, in := range []app.GetContextInput{
		{SessionID: sid, MaxMessages: ptr(int64(1))}, {SessionID: sid, MaxMessages: ptr(int64(500))},
		{SessionID: sid, MaxTokens: ptr(int64(1))}, {SessionID: sid, Query: ptr("x"), RecallK: ptr(int64(0))},
		{SessionID: sid, Query: ptr("x"), RecallK: ptr(int64(50))}, {SessionID: sid, Query: ptr(strings.Repeat("é", 4096))},
		{SessionID: sid, Format: ptr("raw")}, {SessionID: sid, Format: ptr("openai")},
	} {
		if _, err := a.GetContext(ctx, u, in); err != nil {
			t.Errorf("%+v: %v", in, err)
		}
	}
}
