package app

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// The operator's embedding work: what `agentmem backfill`, `agentmem index` and
// `agentmem embed-pending` run. They act on every user's rows, so they are for the operator
// and the scheduled jobs only, never a request.

// CheckEmbedder refuses an embedder whose vectors the database cannot store. Vectors of up to
// 2,000 dimensions also get an HNSW index per model (see store.EnsureEmbeddingIndexes); larger
// ones are searched exactly.
func CheckEmbedder(e embedding.Embedder) error {
	if d := e.Dimensions(); d < 1 || d > store.MaxDimensions {
		return fmt.Errorf("embedding model %s gives %d dimensions; the database stores vectors of 1 to %d",
			e.Model(), d, store.MaxDimensions)
	}
	if e.Model() == "" {
		return errors.New("the embedding model has no name: rows record it to keep models apart")
	}
	return nil
}

// Embedder is the configured embedder (its model and dimension name what backfill embeds with).
func (a *App) Embedder() embedding.Embedder { return a.cfg.Embedder }

// CountPending counts the rows of a scope that hold no vector of the configured model and
// dimension.
func (a *App) CountPending(ctx context.Context, sc store.PendingScope) (memory.PendingCount, error) {
	return a.store.CountPending(ctx, a.vectorModel(), sc)
}

// EnsureEmbeddingIndexes makes the configured model's HNSW indexes where missing and returns
// the statements it ran.
func (a *App) EnsureEmbeddingIndexes(ctx context.Context) ([]string, error) {
	return a.store.EnsureEmbeddingIndexes(ctx, a.vectorModel())
}

// Backfill is EmbedPendingRows over a scope (a tenant, a user, a table), in batches of the size
// asked, reporting its progress: what re-embeds a deployment after a change of model, or
// finishes the rows stored while the provider was down. Each batch is stored when it is done,
// and rows that hold a vector of the configured model and dimension are never selected, so a
// run stopped by ctx (an interrupt, a deadline) or by a crash is resumed by running it again:
// the next run goes on with the rows left and embeds none again. CountPending counts the rows
// it has left.
func (a *App) Backfill(ctx context.Context, p store.BackfillParams) (memory.EmbedPendingResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = math.MaxInt
	}
	return a.embedPending(ctx, p, limit)
}

// EmbedPendingRows embeds up to limit rows that have no vector of the configured model:
// memories (unexpired ones), knowledge chunks and messages stored while the provider was down,
// or embedded by another model, with no time budget of its own. Each batch reads its rows
// without locking them (store.ReadPending), asks the provider, then stores the vectors in one
// short statement (store.StorePending), only where a row still holds the text embedded and
// still waits: no lock is held while the provider works, a row changed or embedded meanwhile
// keeps what it has, and two runs at once store each vector once (though both may ask the
// provider for it). It stops at ctx's deadline, when limit rows are done, or when the provider
// is unavailable (the error wraps embedding.ErrUnavailable, for the operator to see; the
// result counts what was done).
func (a *App) EmbedPendingRows(ctx context.Context, limit int) (memory.EmbedPendingResult, error) {
	return a.embedPending(ctx, store.BackfillParams{}, limit)
}

// embedPendingBatch is the most rows one batch embeds by default.
const embedPendingBatch = 64

// embedPending is EmbedPendingRows and Backfill: up to limit rows of p's scope.
func (a *App) embedPending(ctx context.Context, p store.BackfillParams, limit int) (memory.EmbedPendingResult, error) {
	var res memory.EmbedPendingResult
	m := a.vectorModel()
	batch := p.BatchSize
	if batch <= 0 {
		batch = embedPendingBatch
	}
	batch = min(batch, store.MaxBackfillBatch)
	left := limit
	var done int64
	for _, t := range store.PendingTablesOf(p.Scope) {
		var after store.PendingKey
		for {
			if left <= 0 {
				more, err := a.store.AnyPending(ctx, m, p.Scope)
				res.More = more
				return res, err
			}
			if ctx.Err() != nil {
				res.More = true
				return res, nil
			}
			n, last, tableDone, err := a.embedPendingBatch(ctx, m, p.Scope, t, after, min(left, batch), &res)
			if err != nil {
				if ctx.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) {
					// Out of time mid-batch: the batch waits for the next run.
					res.More = true
					return res, nil
				}
				res.More = true
				return res, err
			}
			left -= n
			after = last
			done += int64(n)
			if p.Progress != nil && n > 0 {
				p.Progress(done, res)
			}
			if tableDone {
				break
			}
		}
	}
	return res, nil
}

// embedPendingBatch embeds up to n pending rows of table t after the row `after`, in key order.
// It returns how many rows it took, the last key, and whether t has no more after them.
func (a *App) embedPendingBatch(ctx context.Context, m store.VectorModel, sc store.PendingScope, t store.PendingTables,
	after store.PendingKey, n int, res *memory.EmbedPendingResult) (took int, last store.PendingKey, done bool, err error) {
	rows, err := a.store.ReadPending(ctx, m, sc, t, after, n)
	if err != nil {
		return 0, after, false, err
	}
	took, done, last = len(rows), len(rows) < n, after
	if len(rows) == 0 {
		return took, last, done, nil
	}
	last = rows[len(rows)-1].Key
	inputs := make([]string, len(rows))
	for i, r := range rows {
		inputs[i] = store.EmbedText(r.Content)
	}
	vectors, err := a.embedPendingTexts(ctx, inputs)
	if err != nil {
		return took, last, done, err
	}
	for _, v := range vectors {
		if v == nil {
			res.Failed++
		}
	}
	stored, err := a.store.StorePending(ctx, m, t, rows, vectors)
	if err != nil {
		return took, last, done, err
	}
	*t.Counter(res) += stored
	return took, last, done, nil
}

// embedPendingTexts embeds a batch. When the provider refuses the batch for good, the texts
// are embedded one by one, so that one input the model does not take (nil in the answer)
// does not hold back the others. An unavailable provider fails the whole batch.
func (a *App) embedPendingTexts(ctx context.Context, texts []string) ([]*string, error) {
	out, err := a.embedVectors(ctx, texts)
	if err == nil {
		return out, nil
	}
	if errors.Is(err, embedding.ErrUnavailable) || ctx.Err() != nil {
		return nil, fmt.Errorf("embed pending rows: %w", err)
	}
	out = make([]*string, len(texts))
	if len(texts) == 1 {
		return out, nil // refused for good: stays pending, counted as failed
	}
	for i, t := range texts {
		one, err := a.embedPendingTexts(ctx, []string{t})
		if err != nil {
			return nil, err
		}
		out[i] = one[0]
	}
	return out, nil
}
