package httpapi

import (
	"context"
	"errors"
	"time"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
)

// scheduledEmbedLimit is the most rows one scheduled run embeds; the time budget usually ends
// it first.
const scheduledEmbedLimit = 2000

// scheduledResponse is the answer of the scheduled run: the sweep's, and the embedding of the
// rows that wait for one.
type scheduledResponse struct {
	sweepResponse
	Embedded store.EmbedPendingResult `json:"embedded"`
}

// EmbedPending embeds up to limit rows that have no vector of the configured model (stored
// while the embedding provider was down, or embedded by another model), within budget and
// leaving headroom before ctx's deadline. A provider still unavailable is logged and reported
// as more: true, not an error: the rows wait for the next run.
func (s *Server) EmbedPending(ctx context.Context, limit int, budget time.Duration) (store.EmbedPendingResult, error) {
	start := time.Now()
	ctx, cancel := context.WithDeadline(ctx, workDeadline(ctx, budget))
	defer cancel()
	res, err := s.store.EmbedPending(ctx, limit)
	unavailable := errors.Is(err, embedding.ErrUnavailable)
	if err != nil && !unavailable {
		return res, err
	}
	s.log.InfoContext(ctx, "embed pending", "memories", res.Memories, "knowledge_chunks", res.KnowledgeChunks,
		"failed", res.Failed, "more", res.More, "provider_unavailable", unavailable,
		"duration_ms", time.Since(start).Milliseconds())
	return res, nil
}
