package app

import (
	"context"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
)

// The operator's embedding work: what `agentmem backfill`, `agentmem index` and
// `agentmem embed-pending` run. They act on every user's rows, so they are for the operator
// and the scheduled jobs only, never a request.

// Embedder is the configured embedder (its model and dimension name what backfill embeds with).
func (a *App) Embedder() embedding.Embedder { return a.store.Embedder() }

// CountPending counts the rows of a scope that hold no vector of the configured model and
// dimension.
func (a *App) CountPending(ctx context.Context, sc store.PendingScope) (store.PendingCount, error) {
	return a.store.CountPending(ctx, sc)
}

// EnsureEmbeddingIndexes makes the configured model's HNSW indexes where missing and returns
// the statements it ran.
func (a *App) EnsureEmbeddingIndexes(ctx context.Context) ([]string, error) {
	return a.store.EnsureEmbeddingIndexes(ctx)
}

// Backfill embeds the pending rows of a scope (see store.Backfill).
func (a *App) Backfill(ctx context.Context, p store.BackfillParams) (store.EmbedPendingResult, error) {
	return a.store.Backfill(ctx, p)
}

// EmbedPendingRows embeds up to limit pending rows of every scope, with no time budget of its
// own; an unavailable provider is an error (embedding.ErrUnavailable), for the operator to see.
func (a *App) EmbedPendingRows(ctx context.Context, limit int) (store.EmbedPendingResult, error) {
	return a.store.EmbedPending(ctx, limit)
}
