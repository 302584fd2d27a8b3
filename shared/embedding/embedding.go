// Package embedding turns text into vectors for similarity search.
package embedding

import "context"

// Embedder turns texts into vectors of one model. Implementations must be safe for concurrent
// use and return one vector of Dimensions() values per text, in order.
type Embedder interface {
	// Model names the model; rows record it so vectors of different models never mix.
	Model() string
	// Dimensions is the length of every vector.
	Dimensions() int
	// Embed returns the vectors of texts.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// MaxDimensions is the largest vector pgvector stores, so the largest an embedder may give.
const MaxDimensions = 16000

// HashSimilarityBaseline is the cosine similarity the built-in embedder's vectors of unrelated
// texts reach: on the quality benchmark's questions about nothing stored (cmd/agentmem-bench,
// -only quality) the best result's similarity was 0.1 to 0.6 (they share hashed pieces of
// words), while the labelled questions' answers that only the vectors found were mostly above
// 0.25. Recall credits a result's similarity in its relevance only above it.
const HashSimilarityBaseline = 0.21

// SimilarityBaseline is the cosine similarity that vectors of model reach between unrelated
// texts, as far as the project has measured it: HashSimilarityBaseline for the built-in
// embedder, 0 (no baseline) for any other model, whose deployment sets its own
// (RECALL_VECTOR_BASELINE).
func SimilarityBaseline(model string) float64 {
	if model == HashModel {
		return HashSimilarityBaseline
	}
	return 0
}
