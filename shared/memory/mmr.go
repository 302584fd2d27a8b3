package memory

import "math"

// MMR orders up to k of the candidates by maximal marginal relevance: each next one maximises
// lambda x relevance - (1 - lambda) x its greatest cosine similarity to those already chosen.
// Relevance is each score divided by the best one (best 1), so that lambda weighs the same
// whatever the scores' scale (fused ranks or similarities); when the best score is not
// positive, the scores are scaled to 0..1 instead. A candidate without a vector (nil)
// is similar to nothing. Ties go to the better-ranked candidate (the lower index). It returns
// indexes into scores.
func MMR(scores []float64, vectors [][]float32, lambda float64, k int) []int {
	n := len(scores)
	k = min(k, n)
	if k <= 0 {
		return []int{}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	rel := make([]float64, n)
	for i, s := range scores {
		switch {
		case hi > 0:
			rel[i] = s / hi
		case hi > lo:
			rel[i] = (s - lo) / (hi - lo)
		default:
			rel[i] = 1
		}
	}
	norms := make([]float64, n)
	for i, v := range vectors {
		norms[i] = norm(v)
	}
	// nearest[i] is candidate i's greatest similarity to the chosen ones.
	nearest := make([]float64, n)
	for i := range nearest {
		nearest[i] = math.Inf(-1)
	}
	chosen := make([]bool, n)
	out := make([]int, 0, k)
	for len(out) < k {
		best, bestVal := -1, math.Inf(-1)
		for i := range n {
			if chosen[i] {
				continue
			}
			penalty := 0.0
			if len(out) > 0 {
				penalty = max(nearest[i], 0)
			}
			if v := lambda*rel[i] - (1-lambda)*penalty; v > bestVal {
				best, bestVal = i, v
			}
		}
		chosen[best] = true
		out = append(out, best)
		for i := range n {
			if !chosen[i] {
				nearest[i] = max(nearest[i], cosine(vectors[i], vectors[best], norms[i], norms[best]))
			}
		}
	}
	return out
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// cosine is the cosine similarity of a and b (of norms na and nb), 0 when either has no
// direction or their sizes differ.
func cosine(a, b []float32, na, nb float64) float64 {
	if len(a) != len(b) || na == 0 || nb == 0 {
		return 0
	}
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot / (na * nb)
}
