package memory

import (
	"encoding/json"
	"log/slog"

	"github.com/google/uuid"
)

// IngestResult is the answer of a knowledge ingest (the store's IngestKnowledge): the source
// stored as chunks.
type IngestResult struct {
	Source   string `json:"source"`
	TenantID string `json:"tenant_id"`
	// Chunks is how many chunks the source has now.
	Chunks int `json:"chunks"`
	// Replaced is how many chunks of an earlier ingest of the source were removed.
	Replaced int64 `json:"replaced"`
}

// KnowledgeHit is a chunk of the knowledge base found by a search.
type KnowledgeHit struct {
	ID         uuid.UUID       `json:"id"`
	Source     string          `json:"source"`
	ChunkIndex int             `json:"chunk_index"`
	Content    string          `json:"content"`
	Score      float64         `json:"score"`
	Metadata   json.RawMessage `json:"metadata"`
}

// LogValue keeps chunk content out of logs.
func (h KnowledgeHit) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", h.ID.String()), slog.Int("chunk_index", h.ChunkIndex),
		slog.Int("content_len", len(h.Content)))
}
