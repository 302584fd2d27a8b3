package memory_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/agentmem/agentmem/shared/memory"
)

func TestPlanSummary(t *testing.T) {
	t.Parallel()
	policy := memory.SummaryPolicy{TriggerTokens: 100, KeepTokens: 30, MaxInputTokens: 0}
	cases := []struct {
		name    string
		msgs    []memory.Message
		through int64
		policy  memory.SummaryPolicy
		want    *memory.SummaryPlan
	}{
		{"nothing", nil, 0, policy, nil},
		{"under the trigger", []memory.Message{user(1, 40), say(2, 40), user(3, 20)}, 0, policy, nil},
		{"over it: keep the newest within 30 tokens",
			[]memory.Message{user(1, 40), say(2, 40), user(3, 20), say(4, 10)}, 0, policy,
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 2, Messages: 2, Tokens: 80, Pending: 30}},
		{"messages up to through_seq are summarised already",
			[]memory.Message{user(1, 400), say(2, 40), user(3, 40), say(4, 40), user(5, 10)}, 1, policy,
			&memory.SummaryPlan{FromSeq: 2, ThroughSeq: 4, Messages: 3, Tokens: 120, Pending: 10}},
		{"the newest message is kept even when it alone is over the keep",
			[]memory.Message{user(1, 40), say(2, 80)}, 0, policy,
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 1, Messages: 1, Tokens: 40, Pending: 80}},
		{"one message over the trigger: nothing to summarise", []memory.Message{user(1, 500)}, 0, policy, nil},
		{"the end moves before a call whose result is kept",
			[]memory.Message{user(1, 50), say(2, 50), calls(3, 5, "c1"), result(4, 5, "c1"), say(5, 10)}, 0, policy,
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 2, Messages: 2, Tokens: 100, Pending: 20}},
		{"a call with results far apart stays whole",
			[]memory.Message{user(1, 50), calls(2, 5, "c1", "c2"), result(3, 5, "c1"), user(4, 50), result(5, 5, "c2"), say(6, 10)}, 0, policy,
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 5, Messages: 5, Tokens: 115, Pending: 10}},
		{"a call still waiting for its results is not summarised",
			[]memory.Message{user(1, 60), say(2, 60), calls(3, 5, "c1", "c2"), result(4, 5, "c1")}, 0, policy,
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 2, Messages: 2, Tokens: 120, Pending: 10}},
		{"nor are the results it has, whatever other results follow",
			[]memory.Message{user(1, 60), say(2, 60), calls(3, 5, "c1", "c2"), result(4, 5, "c1"), result(5, 5, "elsewhere")}, 0,
			memory.SummaryPolicy{TriggerTokens: 100, KeepTokens: 9},
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 2, Messages: 2, Tokens: 120, Pending: 15}},
		{"an abandoned call ends nothing",
			[]memory.Message{user(1, 60), calls(2, 60, "c1"), user(3, 10)}, 0, policy,
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 2, Messages: 2, Tokens: 120, Pending: 10}},
		{"a reused call id answers the nearest call",
			[]memory.Message{calls(1, 50, "call_0"), result(2, 5, "call_0"), calls(3, 50, "call_0"), result(4, 5, "call_0"), say(5, 10)}, 0, policy,
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 4, Messages: 4, Tokens: 110, Pending: 10}},
		{"a result whose call was summarised before ends nothing",
			[]memory.Message{calls(1, 5, "c1"), result(2, 90, "c1"), user(3, 20), say(4, 10)}, 1, memory.SummaryPolicy{TriggerTokens: 100, KeepTokens: 30},
			&memory.SummaryPlan{FromSeq: 2, ThroughSeq: 2, Messages: 1, Tokens: 90, Pending: 30}},
		{"a long backlog is summarised a piece at a time",
			[]memory.Message{user(1, 40), say(2, 40), user(3, 40), say(4, 40), user(5, 40), say(6, 10)}, 0,
			memory.SummaryPolicy{TriggerTokens: 100, KeepTokens: 30, MaxInputTokens: 90},
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 2, Messages: 2, Tokens: 80, Pending: 130}},
		{"a piece larger than the bound is summarised alone",
			[]memory.Message{calls(1, 100, "c1"), result(2, 100, "c1"), user(3, 40), say(4, 10)}, 0,
			memory.SummaryPolicy{TriggerTokens: 100, KeepTokens: 30, MaxInputTokens: 90},
			&memory.SummaryPlan{FromSeq: 1, ThroughSeq: 2, Messages: 2, Tokens: 200, Pending: 50}},
		{"seqs with gaps", []memory.Message{user(3, 60), say(7, 60), user(9, 10)}, 0, policy,
			&memory.SummaryPlan{FromSeq: 3, ThroughSeq: 7, Messages: 2, Tokens: 120, Pending: 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := memory.PlanSummary(tc.msgs, tc.through, tc.policy)
			switch {
			case tc.want == nil && ok:
				t.Errorf("%s: planned %+v, want nothing", tc.name, got)
			case tc.want != nil && (!ok || got != *tc.want):
				t.Errorf("%s: planned %+v (%v), want %+v", tc.name, got, ok, *tc.want)
			}
		})
	}
}

func TestSummaryPolicyCheck(t *testing.T) {
	t.Parallel()
	if err := memory.DefaultSummaryPolicy.Check(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	for _, p := range []memory.SummaryPolicy{
		{TriggerTokens: 0},
		{TriggerTokens: 100, KeepTokens: 100},
		{TriggerTokens: 100, KeepTokens: -1},
		{TriggerTokens: 100, KeepTokens: 10, MaxInputTokens: -1},
	} {
		if p.Check() == nil {
			t.Errorf("%+v passed", p)
		}
	}
}

// conversation draws a session as agents write them: user and assistant messages, assistant
// tool calls (ids unique or reused per turn, as some frameworks do), their results in any
// order, late, missing or interleaved with other messages, results whose call is not in the
// session, and seqs with gaps where messages expired.
func conversation(t *rapid.T) []memory.Message {
	n := rapid.IntRange(0, 40).Draw(t, "events")
	reuse := rapid.Bool().Draw(t, "reuse ids")
	var msgs []memory.Message
	var seq int64
	next := func() int64 {
		seq += int64(rapid.IntRange(1, 3).Draw(t, "gap"))
		return seq
	}
	tokens := func() int { return rapid.IntRange(0, 300).Draw(t, "tokens") }
	var pending []string // calls made but not answered yet
	for i := range n {
		switch rapid.IntRange(0, 5).Draw(t, "kind") {
		case 0:
			msgs = append(msgs, user(next(), tokens()))
		case 1:
			msgs = append(msgs, say(next(), tokens()))
		case 2:
			k := rapid.IntRange(1, 3).Draw(t, "calls")
			ids := make([]string, k)
			for j := range ids {
				if reuse {
					ids[j] = fmt.Sprintf("call_%d", j)
				} else {
					ids[j] = fmt.Sprintf("call_%d_%d", i, j)
				}
			}
			msgs = append(msgs, calls(next(), tokens(), ids...))
			pending = append(pending, ids...)
		case 3, 4:
			if len(pending) > 0 {
				j := rapid.IntRange(0, len(pending)-1).Draw(t, "answer")
				msgs = append(msgs, result(next(), tokens(), pending[j]))
				pending = append(pending[:j], pending[j+1:]...)
			}
		case 5:
			msgs = append(msgs, result(next(), tokens(), "call_elsewhere"))
		}
	}
	return msgs
}

// policy draws a valid policy.
func policy(t *rapid.T) memory.SummaryPolicy {
	trigger := rapid.IntRange(1, 3000).Draw(t, "trigger")
	return memory.SummaryPolicy{
		TriggerTokens:  trigger,
		KeepTokens:     rapid.IntRange(0, trigger-1).Draw(t, "keep"),
		MaxInputTokens: rapid.SampledFrom([]int{0, 1, 100, 500, 2000, 5000}).Draw(t, "max input"),
	}
}

// parts reports, by brute force, whether ending a range after u[c] would part a call from a
// result, or leave out results an unanswered trailing call may still get.
func parts(u []memory.Message, c int) bool {
	for r := c + 1; r < len(u); r++ {
		if u[r].Role != memory.RoleTool || u[r].ToolCallID == nil {
			continue
		}
		// The result's call: the nearest earlier assistant message that made it.
		for a := r - 1; a >= 0; a-- {
			if u[a].Role == memory.RoleAssistant && hasCall(u[a], *u[r].ToolCallID) {
				if a <= c {
					return true
				}
				break
			}
		}
	}
	// An assistant message with calls, then only tool messages, not all calls answered.
	for a := 0; a <= c; a++ {
		if u[a].Role != memory.RoleAssistant || len(u[a].ToolCalls) == 0 {
			continue
		}
		onlyTools, answered := true, map[string]bool{}
		for _, m := range u[a+1:] {
			if m.Role != memory.RoleTool {
				onlyTools = false
				break
			}
			answered[*m.ToolCallID] = true
		}
		for _, call := range u[a].ToolCalls {
			if onlyTools && !answered[call.ID] {
				return true
			}
		}
	}
	return false
}

func hasCall(m memory.Message, id string) bool {
	for _, c := range m.ToolCalls {
		if c.ID == id {
			return true
		}
	}
	return false
}

func sum(msgs []memory.Message) int {
	n := 0
	for _, m := range msgs {
		n += m.Tokens
	}
	return n
}

// The plan is the one its rule describes, found here by brute force over every end.
func TestPlanSummaryProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		msgs := conversation(t)
		p := policy(t)
		var through int64
		if len(msgs) > 0 && rapid.Bool().Draw(t, "has a summary") {
			through = msgs[rapid.IntRange(0, len(msgs)-1).Draw(t, "through")].Seq
		}
		var u []memory.Message
		for _, m := range msgs {
			if m.Seq > through {
				u = append(u, m)
			}
		}
		total := sum(u)
		// Every end, by brute force: before the newest message, parting nothing.
		var ends []int
		for c := 0; c+1 < len(u); c++ {
			if !parts(u, c) {
				ends = append(ends, c)
			}
		}
		plan, ok := memory.PlanSummary(msgs, through, p)
		if total <= p.TriggerTokens || len(ends) == 0 {
			if ok {
				t.Fatalf("planned %+v with %d tokens pending (trigger %d) and ends %v", plan, total, p.TriggerTokens, ends)
			}
			return
		}
		if !ok {
			t.Fatalf("nothing planned with %d tokens pending (trigger %d) and ends %v", total, p.TriggerTokens, ends)
		}
		// The rule: the earliest end keeping at most KeepTokens, else the latest; then, past
		// MaxInputTokens, the latest end within it, else the earliest.
		want := ends[len(ends)-1]
		for _, c := range ends {
			if total-sum(u[:c+1]) <= p.KeepTokens {
				want = c
				break
			}
		}
		if p.MaxInputTokens > 0 && sum(u[:want+1]) > p.MaxInputTokens {
			bounded := ends[0]
			for _, c := range ends {
				if c <= want && sum(u[:c+1]) <= p.MaxInputTokens {
					bounded = c
				}
			}
			want = bounded
		}
		if plan.ThroughSeq != u[want].Seq {
			t.Fatalf("through %d, want %d (ends %v)", plan.ThroughSeq, u[want].Seq, ends)
		}
		if plan.FromSeq != u[0].Seq || plan.Messages != want+1 || plan.Tokens != sum(u[:want+1]) || plan.Pending != total-plan.Tokens {
			t.Fatalf("plan %+v", plan)
		}
		if parts(u, want) || plan.ThroughSeq >= u[len(u)-1].Seq {
			t.Fatalf("the plan parts a call from its results or takes the newest message: %+v", plan)
		}
	})
}

// Summaries applied one after another, as a job would, while the session grows: each starts
// right after the last (no message is skipped or summarised twice), through_seq only moves
// forward, and after a catch-up the session is under the trigger or has no possible end left.
func TestPlanSummaryCatchesUp(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		msgs := conversation(t)
		p := policy(t)
		var through int64
		grown := 0
		for grown < len(msgs) {
			grown += rapid.IntRange(1, 8).Draw(t, "commit")
			session := msgs[:min(grown, len(msgs))]
			for range len(session) + 1 {
				plan, ok := memory.PlanSummary(session, through, p)
				if !ok {
					break
				}
				firstAfter := int64(-1)
				for _, m := range session {
					if m.Seq > through {
						firstAfter = m.Seq
						break
					}
				}
				if plan.FromSeq != firstAfter || plan.ThroughSeq < plan.FromSeq {
					t.Fatalf("through %d, then %+v: a gap or an overlap", through, plan)
				}
				through = plan.ThroughSeq
			}
			var u []memory.Message
			for _, m := range session {
				if m.Seq > through {
					u = append(u, m)
				}
			}
			if _, ok := memory.PlanSummary(session, through, p); ok {
				t.Fatalf("still planning after %d summaries of %d messages", len(session)+1, len(session))
			}
			if sum(u) > p.TriggerTokens {
				for c := 0; c+1 < len(u); c++ {
					if !parts(u, c) {
						t.Fatalf("%d tokens pending over the trigger %d, and an end after %d was possible", sum(u), p.TriggerTokens, u[c].Seq)
					}
				}
			}
		}
	})
}

// BenchmarkPlanSummary plans over a session of 2,000 messages, a third of them tool exchanges,
// none summarised yet.
func BenchmarkPlanSummary(b *testing.B) {
	var msgs []memory.Message
	for i := int64(1); len(msgs) < 2000; i += 6 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs, user(i, 40), calls(i+1, 20, id), result(i+2, 120, id), say(i+3, 60))
	}
	for b.Loop() {
		if _, ok := memory.PlanSummary(msgs, 0, memory.DefaultSummaryPolicy); !ok {
			b.Fatal("nothing planned")
		}
	}
}
