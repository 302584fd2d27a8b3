package bench

import (
	"slices"
	"testing"
)

// vectorShape is what a sample of a corpus' message vectors looks like: the mean cosine of
// unrelated pairs, the mean cosine of each row's nearest and 10th nearest neighbour, and the
// share of rows with a near-duplicate (cosine >= 0.9).
type vectorShape struct {
	pairs, nearest, tenth, nearDup float64
}

func shapeOf(c *SourcesCorpus, n int) vectorShape {
	var emb Embedder
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = emb.Vector(Join(c.MessageWords(i)))
	}
	var s vectorShape
	sims := make([]float64, 0, n)
	for i, a := range vecs {
		sims = sims[:0]
		for j, b := range vecs {
			if i != j {
				sims = append(sims, 1-CosineDistance(a, b))
			}
		}
		s.pairs += sims[(i*7919)%len(sims)]
		slices.Sort(sims)
		s.nearest += sims[len(sims)-1]
		s.tenth += sims[len(sims)-10]
		if sims[len(sims)-1] >= 0.9 {
			s.nearDup++
		}
	}
	f := float64(n)
	return vectorShape{s.pairs / f, s.nearest / f, s.tenth / f, s.nearDup / f}
}

// TestClusteredVectorsHaveARealModelsShape checks that the clustered corpus has what the
// random one lacks and a real embedding model's vectors have: unrelated texts at a small
// positive cosine, close neighbours on the same topic, and near-duplicates.
func TestClusteredVectorsHaveARealModelsShape(t *testing.T) {
	const rows = 1500
	random := shapeOf(GenerateSources(Stream(StreamSources), rows, 10), rows)
	clustered := shapeOf(GenerateClusteredSources(Stream(StreamSourcesClustered), rows, 10), rows)
	t.Logf("random:    pair cosine %.3f, nearest %.3f, 10th nearest %.3f, near-duplicates %.3f", random.pairs, random.nearest, random.tenth, random.nearDup)
	t.Logf("clustered: pair cosine %.3f, nearest %.3f, 10th nearest %.3f, near-duplicates %.3f", clustered.pairs, clustered.nearest, clustered.tenth, clustered.nearDup)
	if random.pairs > 0.05 || random.tenth > 0.3 || random.nearDup > 0 {
		t.Errorf("random vectors are not nearly orthogonal: %+v", random)
	}
	if clustered.pairs < 0.05 || clustered.pairs > 0.35 {
		t.Errorf("clustered pair cosine %.3f, want a small positive one (0.05 to 0.35)", clustered.pairs)
	}
	if clustered.nearest < 0.5 || clustered.tenth < random.tenth+0.1 {
		t.Errorf("clustered neighbours at cosine %.3f (nearest) and %.3f (10th), want topics (>= 0.5, and >= %.3f)",
			clustered.nearest, clustered.tenth, random.tenth+0.1)
	}
	c := GenerateClusteredSources(Stream(StreamSourcesClustered), 20_000, 10)
	texts := map[string]bool{}
	for m := range c.Rows {
		texts[Join(c.MemoryWords(m))] = true
	}
	if len(texts) != c.Rows {
		t.Errorf("%d distinct memories of %d: memories are unique per text", len(texts), c.Rows)
	}
	if clustered.nearDup < 0.1 || clustered.nearDup > 0.4 {
		t.Errorf("clustered near-duplicate share %.3f, want 0.1 to 0.4", clustered.nearDup)
	}
}
