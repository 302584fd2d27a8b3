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
