// Package embedding turns text into vectors for similarity search.
package embedding

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

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

// HashDimensions is the size of the built-in embedder's vectors, matching the schema's column.
const HashDimensions = 384

// Hash is the built-in embedder: it needs no network and no model files, and is deterministic.
//
// A text is lower-cased and split into words (runs of letters and digits). Every word adds a
// feature for itself (weight 1) and one for each character trigram of "<word>" (weight 0.5),
// so that inflections and typos still land near each other. A feature is hashed with 64-bit
// FNV-1a; the hash modulo 384 chooses the dimension and its top bit the sign (the "hashing
// trick"). The sum is L2-normalised, so cosine distance compares texts. A text with no words
// gives the zero vector.
//
// It finds texts that share words or word pieces; it knows nothing of synonyms. Real
// deployments configure a model-backed embedder.
type Hash struct{}

// Model implements Embedder.
func (Hash) Model() string { return "agentmem-hash-384-v1" }

// Dimensions implements Embedder.
func (Hash) Dimensions() int { return HashDimensions }

// Embed implements Embedder.
func (h Hash) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.Vector(t)
	}
	return out, nil
}

// Vector is the embedding of one text.
func (Hash) Vector(text string) []float32 {
	acc := make([]float64, HashDimensions)
	add := func(feature string, weight float64) {
		f := fnv.New64a()
		f.Write([]byte(feature))
		sum := f.Sum64()
		d := sum % HashDimensions
		if sum>>63 == 1 {
			acc[d] -= weight
		} else {
			acc[d] += weight
		}
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		add("w:"+w, 1)
		padded := []rune("<" + w + ">")
		for i := 0; i+3 <= len(padded); i++ {
			add("t:"+string(padded[i:i+3]), 0.5)
		}
	}
	var norm float64
	for _, v := range acc {
		norm += v * v
	}
	vec := make([]float32, HashDimensions)
	if norm == 0 {
		return vec
	}
	norm = math.Sqrt(norm)
	for i, v := range acc {
		vec[i] = float32(v / norm)
	}
	return vec
}
