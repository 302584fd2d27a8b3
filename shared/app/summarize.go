package app

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/llm/prompts"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Rolling summaries, an adapter.Summarize job of the outbox written with every committed turn
// that stored new messages (store.Config.Summaries) and run by process-jobs.
//
// The job reads the session's summary and the messages after its through_seq, and asks
// memory.PlanSummary (Config.Summary) whether they pass the trigger and which of them to fold
// in: the oldest, never parting a tool call from its results, leaving the newest unsummarised.
// Below the trigger it is done at once, without asking the model. Otherwise the model folds the
// range into the summary so far (prompts.Summarise) and the store saves it only if the session
// did not move meanwhile (store.SaveSummary); a session still above the trigger afterwards (one
// that was far behind) is summarised again in the same job, up to maxSummariesPerJob times.
//
// get-context never waits for a summary: it answers the summary as saved and every message
// after its through_seq that its budget holds, so a lagging summary leaves no gap.

// maxSummariesPerJob bounds the summaries one job makes for a session far behind; the next
// commit's job goes on.
const maxSummariesPerJob = 4

// SummaryStats counts what rolling summaries did since the process started.
type SummaryStats struct {
	// Jobs is the summarize jobs run to an end; Saved the summaries saved; Stale those made
	// for a session that moved meanwhile and not saved; Malformed the answers dropped; Failed
	// the jobs that failed (to be retried).
	Jobs, Saved, Stale, Malformed, Failed int64
}

type summaryCounters struct {
	modelJobCounts
	saved, stale atomic.Int64
}

// SummaryStats is what rolling summaries did so far.
func (a *App) SummaryStats() SummaryStats {
	c := &a.summaryCount
	return SummaryStats{Jobs: c.jobs.Load(), Saved: c.saved.Load(), Stale: c.stale.Load(),
		Malformed: c.malformed.Load(), Failed: c.failed.Load()}
}

// summarize runs one summarize job.
func (a *App) summarize(ctx context.Context, j store.ClaimedJob) error {
	if a.cfg.Prompts == nil {
		return errNoChat
	}
	if j.SessionID == nil {
		return errors.New("summarize job names no session")
	}
	sc := memory.Scope{TenantID: j.TenantID, UserID: j.UserID, Agent: j.Agent}
	// A malformed answer is dropped; the next commit's job asks again.
	return a.summaryCount.end(ctx, a.log, j, a.SummarizeSession(ctx, sc, *j.SessionID), "summary")
}

// SummarizeSession advances a session's rolling summary as far as its policy calls for (see
// above): nothing when its unsummarised messages are below the trigger.
func (a *App) SummarizeSession(ctx context.Context, sc memory.Scope, session uuid.UUID) error {
	if a.cfg.Prompts == nil {
		return errNoChat
	}
	for range maxSummariesPerJob {
		in, err := a.store.SummaryInput(ctx, sc, session)
		if err != nil {
			return fmt.Errorf("read summary: %w", err)
		}
		if !in.Found {
			return nil // the session went
		}
		var through int64
		previous := ""
		if in.Summary != nil {
			through, previous = in.Summary.ThroughSeq, in.Summary.Content
		}
		plan, ok := memory.PlanSummary(in.Messages, through, a.cfg.Summary)
		if !ok {
			return nil
		}
		var msgs []memory.Message
		for _, m := range in.Messages {
			if m.Seq >= plan.FromSeq && m.Seq <= plan.ThroughSeq {
				msgs = append(msgs, m)
			}
		}
		sum, err := a.cfg.Prompts.Summarise(ctx, prompts.SummaryInput{Previous: previous, Messages: msgs})
		if err != nil {
			return err
		}
		_, err = a.store.SaveSummary(ctx, store.SaveSummaryParams{Scope: sc, SessionID: session, PreviousThroughSeq: through,
			FromSeq: plan.FromSeq, ThroughSeq: plan.ThroughSeq, Messages: len(msgs), Content: sum.Text,
			Prompt: sum.Prompt, Model: sum.Model, InputTokens: sum.Usage.InputTokens, OutputTokens: sum.Usage.OutputTokens})
		if errors.Is(err, store.ErrSummaryStale) {
			// Another job saved one first, or the session changed: whatever is left is for the
			// next job, which starts from what is stored then.
			a.summaryCount.stale.Add(1)
			return nil
		}
		if err != nil {
			return fmt.Errorf("save summary: %w", err)
		}
		a.summaryCount.saved.Add(1)
		a.log.InfoContext(ctx, "summary advanced", "session_id", session.String(), "through_seq", plan.ThroughSeq,
			"messages", len(msgs), "pending_tokens", plan.Pending, "input_tokens", sum.Usage.InputTokens,
			"output_tokens", sum.Usage.OutputTokens)
		if a.cfg.Notifier != nil && len(a.store.Adapters()) > 0 {
			a.cfg.Notifier.Notify(ctx)
		}
	}
	return nil
}
