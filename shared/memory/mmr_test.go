package memory

import (
	"slices"
	"testing"
)

func TestMMR(t *testing.T) {
	// 0 and 1 are the same direction; 2 is orthogonal to both, and ranks last.
	vecs := [][]float32{{1, 0}, {1, 0}, {0, 1}}
	scores := []float64{0.9, 0.8, 0.5}
	cases := []struct {
		name   string
		lambda float64
		k      int
		want   []int
	}{
		{"relevance only keeps the order", 1, 3, []int{0, 1, 2}},
		{"balanced skips the duplicate", 0.5, 2, []int{0, 2}},
		{"balanced then the duplicate", 0.5, 3, []int{0, 2, 1}},
		{"k beyond the candidates", 1, 10, []int{0, 1, 2}},
		{"k zero", 0.5, 0, []int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := MMR(scores, vecs, c.lambda, c.k); !slices.Equal(got, c.want) {
				t.Fatalf("MMR(lambda %v, k %d) = %v, want %v", c.lambda, c.k, got, c.want)
			}
		})
	}
}

func TestMMRWithoutVectors(t *testing.T) {
	// No vectors: nothing is similar, so the order is relevance's, even at lambda 0.5.
	got := MMR([]float64{3, 2, 1}, [][]float32{nil, nil, nil}, 0.5, 3)
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("got %v, want [0 1 2]", got)
	}
	// Equal scores: every relevance is 1; ties go to the lower index.
	got = MMR([]float64{1, 1}, [][]float32{{1, 0}, {0, 1}}, 0.7, 2)
	if !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("equal scores: got %v, want [0 1]", got)
	}
}
