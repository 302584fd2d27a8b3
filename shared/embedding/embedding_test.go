package embedding_test

import (
	"context"
	"math"
	"testing"

	"github.com/agentmem/agentmem/shared/embedding"
)

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func TestHashIsDeterministicNormalisedAndSimilarityAware(t *testing.T) {
	t.Parallel()
	var h embedding.Hash
	vs, err := h.Embed(context.Background(), []string{
		"User prefers metric units.",
		"The user prefers METRIC units",
		"Favourite colour is green",
		"",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 4 {
		t.Fatalf("got %d vectors", len(vs))
	}
	for i, v := range vs[:3] {
		if len(v) != embedding.HashDimensions {
			t.Fatalf("vector %d has %d dimensions", i, len(v))
		}
		if n := cosine(v, v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d not normalised: %v", i, n)
		}
	}
	again := h.Vector("User prefers metric units.")
	for i := range again {
		if again[i] != vs[0][i] {
			t.Fatal("same text gave a different vector")
		}
	}
	near, far := cosine(vs[0], vs[1]), cosine(vs[0], vs[2])
	if near < 0.7 || far > 0.3 || near <= far {
		t.Errorf("similar texts %.3f, different texts %.3f", near, far)
	}
	for _, x := range vs[3] {
		if x != 0 {
			t.Fatal("empty text must give the zero vector")
		}
	}
}

func BenchmarkHashVector(b *testing.B) {
	var h embedding.Hash
	text := "what units does the user like for distances and weights when travelling abroad"
	for b.Loop() {
		h.Vector(text)
	}
}
