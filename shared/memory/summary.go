package memory

import (
	"errors"
	"fmt"
)

// Defaults of SummaryPolicy (SUMMARY_TRIGGER_TOKENS, SUMMARY_KEEP_TOKENS,
// SUMMARY_MAX_INPUT_TOKENS).
const (
	// DefaultSummaryTriggerTokens: a session is summarised once its unsummarised messages are
	// estimated above 4,000 tokens.
	DefaultSummaryTriggerTokens = 4000
	// DefaultSummaryKeepTokens: a summary leaves the newest messages, up to 1,000 tokens,
	// unsummarised, so that the latest exchange is always read word for word.
	DefaultSummaryKeepTokens = 1000
	// DefaultSummaryMaxInputTokens: one summary folds in at most 12,000 tokens of messages; a
	// session further behind catches up in several summaries.
	DefaultSummaryMaxInputTokens = 12000
)

// SummaryPolicy says when a session's rolling summary advances, and over which messages.
type SummaryPolicy struct {
	// TriggerTokens: a summary is planned once the messages after the summary's through_seq
	// are estimated above this many tokens.
	TriggerTokens int
	// KeepTokens: the newest messages up to this many tokens stay out of the summary (at
	// least the newest message always does); below TriggerTokens, so that a summary brings
	// the session back under the trigger.
	KeepTokens int
	// MaxInputTokens bounds the messages one summary folds in (0: no bound), which bounds
	// the prompt; a single message or tool exchange larger than it is still summarised
	// alone, clipped by the prompt.
	MaxInputTokens int
}

// DefaultSummaryPolicy is the policy with every default.
var DefaultSummaryPolicy = SummaryPolicy{TriggerTokens: DefaultSummaryTriggerTokens,
	KeepTokens: DefaultSummaryKeepTokens, MaxInputTokens: DefaultSummaryMaxInputTokens}

// Check reports a policy that could not work.
func (p SummaryPolicy) Check() error {
	switch {
	case p.TriggerTokens < 1:
		return errors.New("the summary trigger must be at least 1 token")
	case p.KeepTokens < 0 || p.KeepTokens >= p.TriggerTokens:
		return fmt.Errorf("the tokens a summary keeps (%d) must be at least 0 and below its trigger (%d)",
			p.KeepTokens, p.TriggerTokens)
	case p.MaxInputTokens < 0:
		return errors.New("a summary's most input tokens must be 0 (no bound) or more")
	}
	return nil
}

// SummaryPlan is the range of messages the next summary folds in.
type SummaryPlan struct {
	// FromSeq and ThroughSeq are the first and last message of the range, whose seqs are
	// FromSeq..ThroughSeq (seqs may have gaps where messages expired). The summary's new
	// through_seq is ThroughSeq.
	FromSeq, ThroughSeq int64
	// Messages and Tokens count the range's messages and their estimated tokens.
	Messages, Tokens int
	// Pending is the estimated tokens that stay unsummarised after it.
	Pending int
}

// PlanSummary chooses the messages the next rolling summary should fold in, or reports that
// none should be made yet. msgs are a session's messages, oldest first (by seq; any at or
// before throughSeq are ignored), with their token estimates; throughSeq is the current
// summary's through_seq (0 when there is none).
//
// Nothing is planned until the messages after throughSeq are estimated above TriggerTokens.
// Then the range starts at the first of them and ends where the newest messages left out fit
// in KeepTokens, or when no such end is possible, as late as it can, always before the newest
// message. A range longer than MaxInputTokens ends earlier, at the last possible end within it
// (or the first possible end, when none is); the session catches up over several summaries.
//
// A range never ends between an assistant message's tool calls and their results: a tool
// message answers the nearest earlier assistant message that made a call of its tool_call_id,
// and the two are always on the same side of the end. Nor does it end after an assistant
// message whose calls are still waiting for results (one that only tool messages follow): those
// results may still come. Calls abandoned (a user or assistant message came first) end nothing.
func PlanSummary(msgs []Message, throughSeq int64, p SummaryPolicy) (SummaryPlan, bool) {
	start := 0
	for start < len(msgs) && msgs[start].Seq <= throughSeq {
		start++
	}
	u := msgs[start:]
	n := len(u)
	total := 0
	for _, m := range u {
		total += max(m.Tokens, 0)
	}
	if n < 2 || total <= p.TriggerTokens {
		return SummaryPlan{}, false
	}
	// open[c] > 0 after the prefix sum: ending after u[c] would part a call from its result.
	open := make([]int, n+1)
	caller := map[string]int{}
	for i, m := range u {
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				caller[c.ID] = i
			}
		case m.Role == RoleTool && m.ToolCallID != nil:
			if a, ok := caller[*m.ToolCallID]; ok {
				open[a]++
				open[i]--
			}
		}
	}
	// An assistant message with calls that only tool messages follow may still get results:
	// no range may end at or after it until it is answered or abandoned.
	last := n - 1
	for last >= 0 && u[last].Role == RoleTool {
		last--
	}
	waiting := n
	if last >= 0 && u[last].Role == RoleAssistant && len(u[last].ToolCalls) > 0 {
		answered := map[string]bool{}
		for _, m := range u[last+1:] {
			if m.ToolCallID != nil {
				answered[*m.ToolCallID] = true
			}
		}
		for _, c := range u[last].ToolCalls {
			if !answered[c.ID] {
				waiting = last
				break
			}
		}
	}
	// The possible ends c (the range is u[0..c]), with the tokens up to each.
	var ends, upTo []int
	depth, sum := 0, 0
	for c := 0; c < min(n-1, waiting); c++ {
		depth += open[c]
		sum += max(u[c].Tokens, 0)
		if depth == 0 {
			ends = append(ends, c)
			upTo = append(upTo, sum)
		}
	}
	if len(ends) == 0 {
		return SummaryPlan{}, false
	}
	// The earliest end that keeps the rest within KeepTokens, else the latest end.
	k := len(ends) - 1
	for i := range ends {
		if total-upTo[i] <= p.KeepTokens {
			k = i
			break
		}
	}
	if p.MaxInputTokens > 0 && upTo[k] > p.MaxInputTokens {
		for k > 0 && upTo[k] > p.MaxInputTokens {
			k--
		}
	}
	c := ends[k]
	return SummaryPlan{FromSeq: u[0].Seq, ThroughSeq: u[c].Seq, Messages: c + 1, Tokens: upTo[k],
		Pending: total - upTo[k]}, true
}
