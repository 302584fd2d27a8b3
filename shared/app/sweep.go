package app

import (
	"context"
	"errors"
	"time"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// The defaults of a sweep (sweep-expired's batch_size and max_duration_ms, the scheduled sweep,
// agentmem sweep's --batch-size).
const (
	DefaultSweepBatch  = 5000
	DefaultSweepBudget = 20 * time.Second
)

// SweepInput is the request of sweep-expired.
type SweepInput struct {
	DryRun        *bool  `json:"dry_run"`
	BatchSize     *int64 `json:"batch_size"`
	MaxDurationMS *int64 `json:"max_duration_ms"`
}

// SweepOutput is the answer of sweep-expired.
type SweepOutput struct {
	memory.SweepResult
	DurationMS int64 `json:"duration_ms"`
}

// SweepExpired deletes expired rows for a service caller, within the request's budget.
func (a *App) SweepExpired(ctx context.Context, p auth.Principal, req SweepInput) (SweepOutput, error) {
	if !p.IsService() {
		return SweepOutput{}, apierror.New(apierror.Forbidden, "sweep-expired is for service callers only")
	}
	var f apierror.Fields
	batch := intField(&f, "batch_size", req.BatchSize, DefaultSweepBatch, 1, 50_000)
	budget := intField(&f, "max_duration_ms", req.MaxDurationMS, DefaultSweepBudget.Milliseconds(), 1, 900_000)
	if err := f.Err(); err != nil {
		return SweepOutput{}, err
	}
	return a.Sweep(ctx, req.DryRun != nil && *req.DryRun, int(batch), time.Duration(budget)*time.Millisecond)
}

// Sweep deletes expired rows within budget, leaving headroom before ctx's deadline to answer.
func (a *App) Sweep(ctx context.Context, dryRun bool, batch int, budget time.Duration) (SweepOutput, error) {
	start := time.Now()
	res, err := a.store.Sweep(ctx, store.SweepParams{DryRun: dryRun, BatchSize: batch, Deadline: WorkDeadline(ctx, budget),
		History: a.cfg.History, DefaultRetention: a.cfg.DefaultRetention})
	if err != nil {
		return SweepOutput{}, err
	}
	a.log.InfoContext(ctx, "sweep", "messages", res.Deleted.Messages, "memories", res.Deleted.Memories,
		"sessions", res.Deleted.Sessions, "idempotency_keys", res.Deleted.IdempotencyKeys,
		"request_rates", res.Deleted.RequestRates, "archived_messages", res.Deleted.ArchivedMessages,
		"capped_sessions", res.Capped.Sessions, "archived", res.Capped.Archived, "capped_deleted", res.Capped.Deleted,
		"restamped_messages", res.Restamped.Messages, "restamped_archived_messages", res.Restamped.ArchivedMessages,
		"restamped_memories", res.Restamped.Memories, "restamped_sessions", res.Restamped.Sessions,
		"batches", res.Batches, "more", res.More, "dry_run", dryRun)
	return SweepOutput{SweepResult: res, DurationMS: time.Since(start).Milliseconds()}, nil
}

// ScheduledSweep is the sweep a scheduler triggers (an EventBridge rule in AWS): the defaults of
// the contract, bounded by ctx's deadline. Only AWS can deliver such an event to the function.
// It then embeds the rows that wait for a vector (see EmbedPending).
func (a *App) ScheduledSweep(ctx context.Context) (ScheduledSweepOutput, error) {
	out, err := a.Sweep(ctx, false, DefaultSweepBatch, DefaultSweepBudget)
	if err != nil {
		return ScheduledSweepOutput{}, err
	}
	embedded, err := a.EmbedPending(ctx, scheduledEmbedLimit, 20*time.Second)
	if err != nil {
		return ScheduledSweepOutput{}, err
	}
	return ScheduledSweepOutput{SweepOutput: out, Embedded: embedded}, nil
}

// scheduledEmbedLimit is the most rows one scheduled run embeds; the time budget usually ends
// it first.
const scheduledEmbedLimit = 2000

// ScheduledSweepOutput is the answer of the scheduled run: the sweep's, and the embedding of
// the rows that wait for one.
type ScheduledSweepOutput struct {
	SweepOutput
	Embedded memory.EmbedPendingResult `json:"embedded"`
}

// EmbedPending embeds up to limit rows that have no vector of the configured model (stored
// while the embedding provider was down, or embedded by another model), within budget and
// leaving headroom before ctx's deadline. A provider still unavailable is logged and reported
// as more: true, not an error: the rows wait for the next run.
func (a *App) EmbedPending(ctx context.Context, limit int, budget time.Duration) (memory.EmbedPendingResult, error) {
	start := time.Now()
	ctx, cancel := context.WithDeadline(ctx, WorkDeadline(ctx, budget))
	defer cancel()
	res, err := a.EmbedPendingRows(ctx, limit)
	unavailable := errors.Is(err, embedding.ErrUnavailable)
	if err != nil && !unavailable {
		return res, err
	}
	a.log.InfoContext(ctx, "embed pending", "memories", res.Memories, "knowledge_chunks", res.KnowledgeChunks,
		"messages", res.Messages,
		"failed", res.Failed, "more", res.More, "provider_unavailable", unavailable,
		"duration_ms", time.Since(start).Milliseconds())
	return res, nil
}
