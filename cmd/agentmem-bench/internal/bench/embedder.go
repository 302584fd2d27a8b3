package bench

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
)

// Dimensions is the length of the workload embedder's vectors.
const Dimensions = 384

// signDraws is the number of u32 draws that give a word's 384 sign bits.
const signDraws = Dimensions / 32

// Embedder is the workload embedder of the specification, so that every system measured gets
// identical vectors: each word seeds mulberry32 with the FNV-1a 32-bit hash of its UTF-8 bytes,
// and 12 draws give 384 sign bits (bit b of draw k is dimension 32k + b; 1 is +1, 0 is -1).
// A text's vector is the sum of its words' sign vectors (words split on white space),
// L2-normalised; a text without words is the zero vector. It implements embedding.Embedder and
// is safe for concurrent use.
type Embedder struct{}

// vocabSigns caches the sign bits of the vocabulary's words.
var vocabSigns = func() map[string][signDraws]uint32 {
	m := make(map[string][signDraws]uint32, VocabSize)
	for _, w := range Vocab {
		m[w] = wordSigns(w)
	}
	return m
}()

func wordSigns(word string) [signDraws]uint32 {
	h := fnv.New32a()
	h.Write([]byte(word))
	r := NewRand(h.Sum32())
	var out [signDraws]uint32
	for k := range out {
		out[k] = r.Uint32()
	}
	return out
}

// Model implements embedding.Embedder.
func (Embedder) Model() string { return "agentmem-bench-fnv-signs-384" }

// Dimensions implements embedding.Embedder.
func (Embedder) Dimensions() int { return Dimensions }

// Embed implements embedding.Embedder.
func (e Embedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.Vector(t)
	}
	return out, nil
}

// Vector is the embedding of one text.
func (Embedder) Vector(text string) []float32 {
	var sum [Dimensions]int32
	for _, w := range strings.Fields(text) {
		signs, ok := vocabSigns[w]
		if !ok {
			signs = wordSigns(w)
		}
		for k, bits := range signs {
			for b := 0; b < 32; b++ {
				if bits>>b&1 == 1 {
					sum[32*k+b]++
				} else {
					sum[32*k+b]--
				}
			}
		}
	}
	var norm float64
	for _, v := range sum {
		norm += float64(v) * float64(v)
	}
	out := make([]float32, Dimensions)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, v := range sum {
		out[i] = float32(float64(v) / norm)
	}
	return out
}

// CosineDistance is 1 - cos(a, b), computed in float64, as pgvector's <=> defines it.
func CosineDistance(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return math.NaN()
	}
	return 1 - dot/math.Sqrt(na*nb)
}
