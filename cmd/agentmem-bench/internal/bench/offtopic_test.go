package bench

import (
	"os"
	"strings"
	"testing"
)

// TestScoreMatching checks the gates on a case computed by hand: two labelled answers (best
// relevance 0.5, found first; 0.12, found third) and three off-topic ones (0, 0.12, 0.4).
func TestScoreMatching(t *testing.T) {
	on := []GatedAnswer{{Best: 0.5, HitAt5: 1, HitAt10: 1, RR: 1}, {Best: 0.12, HitAt5: 1, HitAt10: 1, RR: 1.0 / 3}}
	m := ScoreMatching("hybrid", on, []float64{0, 0.12, 0.4}, 1, 0.2)
	if m.OnTopic != 2 || m.OffTopic != 3 || !near(m.OffTopicEmpty, 1.0/3) || m.OffTopicBestMedian != 0.12 || m.OffTopicBestMax != 0.4 {
		t.Errorf("counts: %+v", m)
	}
	if !near(m.OffTopicFlagged, 2.0/3) || !near(m.OnTopicFlagged, 0.5) {
		t.Errorf("flagged at 0.2: off-topic %v, labelled %v; want 2/3 and 1/2", m.OffTopicFlagged, m.OnTopicFlagged)
	}
	want := map[float64]MatchGate{
		0:    {Floor: 0, OffTopicFlagged: 0, OnTopicFlagged: 0, HitAt5: 1, HitAt10: 1, MRR: 2.0 / 3},
		0.1:  {Floor: 0.1, OffTopicFlagged: 1.0 / 3, OnTopicFlagged: 0, HitAt5: 1, HitAt10: 1, MRR: 2.0 / 3},
		0.15: {Floor: 0.15, OffTopicFlagged: 2.0 / 3, OnTopicFlagged: 0.5, HitAt5: 0.5, HitAt10: 0.5, MRR: 0.5},
		0.5:  {Floor: 0.5, OffTopicFlagged: 1, OnTopicFlagged: 0.5, HitAt5: 0.5, HitAt10: 0.5, MRR: 0.5},
	}
	seen := 0
	for _, g := range m.Gates {
		w, ok := want[g.Floor]
		if !ok {
			continue
		}
		seen++
		if !near(g.OffTopicFlagged, w.OffTopicFlagged) || !near(g.OnTopicFlagged, w.OnTopicFlagged) ||
			!near(g.HitAt5, w.HitAt5) || !near(g.HitAt10, w.HitAt10) || !near(g.MRR, w.MRR) {
			t.Errorf("floor %v: %+v, want %+v", g.Floor, g, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the floors %v scored", seen, want)
	}
}

// TestOffTopicDocumented checks that docs/benchmarks.md reports figures of the current
// off-topic questions: changing them changes OffTopicSetID, and the figures must be measured
// again (make bench ARGS='-only quality') and written there with the new id.
func TestOffTopicDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	if id := OffTopicSetID(); !strings.Contains(string(doc), "`"+id+"`") {
		t.Errorf("docs/benchmarks.md reports no figures of the off-topic questions %s: run make bench ARGS='-only quality' and update them", id)
	}
}
