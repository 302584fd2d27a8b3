package memory_test

import (
	"reflect"
	"testing"

	"github.com/agentmem/agentmem/shared/memory"
)

// The fixtures name messages by seq and give each a token cost directly, so budgets are exact.

func user(seq int64, tokens int) memory.Message {
	return memory.Message{Seq: seq, Role: memory.RoleUser, Content: "u", Tokens: tokens}
}

func say(seq int64, tokens int) memory.Message {
	return memory.Message{Seq: seq, Role: memory.RoleAssistant, Content: "a", Tokens: tokens}
}

func calls(seq int64, tokens int, ids ...string) memory.Message {
	m := memory.Message{Seq: seq, Role: memory.RoleAssistant, Tokens: tokens}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, memory.ToolCall{ID: id, Type: "function", Function: memory.FunctionCall{Name: "f", Arguments: "{}"}})
	}
	return m
}

func result(seq int64, tokens int, id string) memory.Message {
	return memory.Message{Seq: seq, Role: memory.RoleTool, Content: "r", ToolCallID: &id, Tokens: tokens}
}

func seqsOf(msgs []memory.Message) []int64 {
	out := []int64{}
	for _, m := range msgs {
		out = append(out, m.Seq)
	}
	return out
}

func TestWindow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		msgs      []memory.Message
		maxTokens int
		want      []int64
		tokens    int
		truncated bool
	}{
		{"nil input", nil, 0, []int64{}, 0, false},
		{"empty input with a budget", []memory.Message{}, 10, []int64{}, 0, false},
		{"plain messages", []memory.Message{user(1, 5), say(2, 6), user(3, 7)}, 0, []int64{1, 2, 3}, 18, false},
		{"orphan result at the start", []memory.Message{result(1, 5, "c0"), say(2, 6), user(3, 7)}, 0, []int64{2, 3}, 13, true},
		{"orphan results of a multi-call group at the start",
			[]memory.Message{result(1, 5, "c1"), result(2, 5, "c2"), say(3, 6)}, 0, []int64{3}, 6, true},
		{"only orphans", []memory.Message{result(1, 5, "c1")}, 0, []int64{}, 0, true},
		{"complete group", []memory.Message{user(1, 1), calls(2, 2, "c1"), result(3, 3, "c1"), say(4, 4)}, 0, []int64{1, 2, 3, 4}, 10, false},
		{"multi-call group, results in another order",
			[]memory.Message{calls(1, 2, "c1", "c2", "c3"), result(2, 1, "c3"), result(3, 1, "c1"), result(4, 1, "c2"), say(5, 1)}, 0,
			[]int64{1, 2, 3, 4, 5}, 6, false},
		{"call without results at the end", []memory.Message{user(1, 1), calls(2, 2, "c1")}, 0, []int64{1}, 1, true},
		{"multi-call group missing one result",
			[]memory.Message{user(1, 1), calls(2, 2, "c1", "c2"), result(3, 3, "c1")}, 0, []int64{1}, 1, true},
		{"incomplete group in the middle",
			[]memory.Message{user(1, 1), calls(2, 2, "c1", "c2"), result(3, 3, "c2"), user(4, 4), say(5, 5)}, 0, []int64{1, 4, 5}, 10, true},
		{"results separated from their call",
			[]memory.Message{calls(1, 2, "c1"), user(2, 1), result(3, 3, "c1"), say(4, 1)}, 0, []int64{2, 4}, 2, true},
		{"result answering another call",
			[]memory.Message{calls(1, 2, "c1"), result(2, 3, "zz"), result(3, 3, "c1")}, 0, []int64{}, 0, true},
		{"duplicate result", []memory.Message{calls(1, 2, "c1"), result(2, 3, "c1"), result(3, 3, "c1"), say(4, 1)}, 0, []int64{1, 2, 4}, 6, true},
		{"tool message without tool_call_id",
			[]memory.Message{user(1, 1), {Seq: 2, Role: memory.RoleTool, Content: "r", Tokens: 2}, say(3, 1)}, 0, []int64{1, 3}, 2, true},
		{"two groups back to back",
			[]memory.Message{calls(1, 1, "a"), result(2, 1, "a"), calls(3, 1, "b"), result(4, 1, "b")}, 0, []int64{1, 2, 3, 4}, 4, false},
		{"system message kept", []memory.Message{{Seq: 1, Role: memory.RoleSystem, Content: "s", Tokens: 3}, user(2, 1)}, 0, []int64{1, 2}, 4, false},

		// Budgets: the oldest units go first, a group always whole.
		{"budget fits exactly", []memory.Message{user(1, 10), calls(2, 5, "c1"), result(3, 5, "c1"), say(4, 10)}, 30, []int64{1, 2, 3, 4}, 30, false},
		{"budget drops the oldest message", []memory.Message{user(1, 10), calls(2, 5, "c1"), result(3, 5, "c1"), say(4, 10)}, 29, []int64{2, 3, 4}, 20, true},
		{"budget cuts a group: the group goes whole",
			[]memory.Message{user(1, 10), calls(2, 5, "c1"), result(3, 5, "c1"), say(4, 10)}, 19, []int64{4}, 10, true},
		{"budget with room for the results but not the call",
			[]memory.Message{calls(1, 5, "c1", "c2"), result(2, 5, "c1"), result(3, 5, "c2"), say(4, 10)}, 24, []int64{4}, 10, true},
		{"budget below the newest message", []memory.Message{user(1, 10), say(2, 10)}, 9, []int64{}, 0, true},
		{"budget below a trailing group", []memory.Message{user(1, 1), calls(2, 5, "c1"), result(3, 5, "c1")}, 9, []int64{}, 0, true},
		{"no budget is no limit", []memory.Message{user(1, 1000000), say(2, 1000000)}, 0, []int64{1, 2}, 2000000, false},
		{"orphan and budget together",
			[]memory.Message{result(1, 50, "c0"), user(2, 10), say(3, 10), user(4, 10)}, 25, []int64{3, 4}, 20, true},
		{"budget larger than everything", []memory.Message{user(1, 3), say(2, 3)}, 1000, []int64{1, 2}, 6, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := append([]memory.Message(nil), tc.msgs...)
			kept, tokens, truncated := memory.Window(tc.msgs, tc.maxTokens)
			if kept == nil {
				t.Errorf("kept is nil; an empty window must be an empty slice")
			}
			if got := seqsOf(kept); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("kept seqs %v, want %v", got, tc.want)
			}
			if tokens != tc.tokens || truncated != tc.truncated {
				t.Errorf("tokens %d truncated %v, want %d %v", tokens, truncated, tc.tokens, tc.truncated)
			}
			sum := 0
			for _, m := range kept {
				sum += m.Tokens
			}
			if sum != tokens {
				t.Errorf("tokens %d, but the kept messages cost %d", tokens, sum)
			}
			if tc.maxTokens > 0 && tokens > tc.maxTokens {
				t.Errorf("tokens %d over the budget %d", tokens, tc.maxTokens)
			}
			if len(in) != len(tc.msgs) || (len(in) > 0 && !reflect.DeepEqual(in, tc.msgs)) {
				t.Errorf("Window changed its input")
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	name, id := "ada", "call_1"
	call := []memory.ToolCall{{ID: "c1", Type: "function", Function: memory.FunctionCall{Name: "lookup", Arguments: `{"q":1}`}}}
	cases := []struct {
		name       string
		content    string
		msgName    *string
		calls      []memory.ToolCall
		toolCallID *string
		want       int
	}{
		{"empty message still costs its framing", "", nil, nil, nil, 4},
		{"four bytes are a token", "abcd", nil, nil, nil, 5},
		{"a partial token counts", "abcde", nil, nil, nil, 6},
		{"bytes, not characters", "éé", nil, nil, nil, 5},
		{"name counts", "abcd", &name, nil, nil, 6},
		{"tool_call_id counts", "", nil, nil, &id, 6},
		{"tool calls count", "", nil, call, nil, (2+8+6+7+12+3)/4 + 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := memory.EstimateTokens(tc.content, tc.msgName, tc.calls, tc.toolCallID); got != tc.want {
				t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
			}
		})
	}
}

func TestCharCount(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "😀😀": 2, "a\u0301": 2} {
		t.Run(s, func(t *testing.T) {
			if got := memory.CharCount(s); got != want {
				t.Errorf("CharCount(%q) = %d, want %d", s, got, want)
			}
		})
	}
}
