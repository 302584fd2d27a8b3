package bench

import (
	"math"
	"slices"
	"testing"
)

// TestRanking checks the metrics of answers with several labelled entries, with and without
// ties, on cases computed by hand.
func TestRanking(t *testing.T) {
	abcde := []string{"a", "b", "c", "d", "e"}
	for _, c := range []struct {
		name string
		r    Ranking
		k    int
		// hit, recall and rr are HitAt(k), RecallAt(k) and ReciprocalRank(k).
		hit, recall, rr float64
	}{
		// c at rank 3, e at 5, z not found: three distinct labels.
		{"several, cut above", Ranking{abcde, nil, []string{"c", "e", "z"}}, 2, 0, 0, 0},
		{"several, first found", Ranking{abcde, nil, []string{"c", "e", "z"}}, 3, 1, 1.0 / 3, 1.0 / 3},
		{"several, both found", Ranking{abcde, nil, []string{"c", "e", "z"}}, 5, 1, 2.0 / 3, 1.0 / 3},
		// A label given twice is one label.
		{"repeated label", Ranking{abcde, nil, []string{"b", "b"}}, 5, 1, 1, 0.5},
		{"nothing labelled", Ranking{abcde, nil, nil}, 5, 0, 0, 0},
		{"nothing found", Ranking{nil, nil, []string{"a"}}, 5, 0, 0, 0},
		// b, c, d tied at ranks 2 to 4, c and d labelled. At k = 2 one place of three is
		// inside: it holds a label with chance 2/3, and holds 1/3 of the labels' expected count
		// (2 x 1/3 of 2). The first label is at rank 2 unless b took it (chance 1/3), then at
		// rank 3: RR = 2/3 x 1/2 + 1/3 x 1/3 = 4/9; cut at 2, rank 3 counts 0: RR = 1/3.
		{"tie straddling k=2", Ranking{[]string{"a", "b", "c", "d"}, []float64{5, 3, 3, 3}, []string{"c", "d"}}, 2, 2.0 / 3, 1.0 / 3, 1.0 / 3},
		{"tie straddling k=3", Ranking{[]string{"a", "b", "c", "d"}, []float64{5, 3, 3, 3}, []string{"c", "d"}}, 3, 1, 2.0 / 3, 4.0 / 9},
		{"tie inside k", Ranking{[]string{"a", "b", "c", "d"}, []float64{5, 3, 3, 3}, []string{"c", "d"}}, 10, 1, 1, 4.0 / 9},
		{"tie at the top", Ranking{[]string{"a", "b", "c", "d"}, []float64{5, 3, 3, 3}, []string{"a"}}, 1, 1, 1, 1},
		// A tie of equal scores that are not next to each other is no tie.
		{"equal scores apart", Ranking{[]string{"a", "b", "c"}, []float64{3, 2, 3}, []string{"c"}}, 10, 1, 1, 1.0 / 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.HitAt(c.k); !near(got, c.hit) {
				t.Errorf("HitAt(%d) = %v, want %v", c.k, got, c.hit)
			}
			if got := c.r.RecallAt(c.k); !near(got, c.recall) {
				t.Errorf("RecallAt(%d) = %v, want %v", c.k, got, c.recall)
			}
			if got := c.r.ReciprocalRank(c.k); !near(got, c.rr) {
				t.Errorf("ReciprocalRank(%d) = %v, want %v", c.k, got, c.rr)
			}
		})
	}
}

// TestRankingTieByEnumeration checks the tie formulas against every order of a tie: five
// entries tied after one untied, two of them labelled.
func TestRankingTieByEnumeration(t *testing.T) {
	tied := []string{"b", "c", "d", "e", "f"}
	r := Ranking{Ranked: append([]string{"a"}, tied...), Scores: []float64{9, 1, 1, 1, 1, 1}, Relevant: []string{"d", "f"}}
	for k := 1; k <= 7; k++ {
		var hit, recall, rr float64
		orders := 0
		permute(slices.Clone(tied), 0, func(p []string) {
			plain := Ranking{Ranked: append([]string{"a"}, p...), Relevant: r.Relevant}
			hit += plain.HitAt(k)
			recall += plain.RecallAt(k)
			rr += plain.ReciprocalRank(k)
			orders++
		})
		n := float64(orders)
		if !near(r.HitAt(k), hit/n) || !near(r.RecallAt(k), recall/n) || !near(r.ReciprocalRank(k), rr/n) {
			t.Errorf("k=%d: tie formulas %v %v %v, mean over the %d orders %v %v %v", k,
				r.HitAt(k), r.RecallAt(k), r.ReciprocalRank(k), orders, hit/n, recall/n, rr/n)
		}
	}
}

func permute(s []string, i int, visit func([]string)) {
	if i == len(s) {
		visit(s)
		return
	}
	for j := i; j < len(s); j++ {
		s[i], s[j] = s[j], s[i]
		permute(s, i+1, visit)
		s[i], s[j] = s[j], s[i]
	}
}

// TestBM25 checks the scores on a corpus computed by hand: N = 3 documents of lengths 3, 1 and
// 2 (mean 2), k1 = 1.2, b = 0.75.
func TestBM25(t *testing.T) {
	m := NewBM25([]map[string]int{{"cat": 2, "dog": 1}, {"dog": 1}, {"bird": 1, "fish": 1}}, 1.2, 0.75)
	// cat: df 1, idf ln(1 + 2.5/1.5); document 0: tf 2, length norm 0.25 + 0.75 x 3/2.
	wantCat := math.Log(1+2.5/1.5) * 2 * 2.2 / (2 + 1.2*(0.25+0.75*1.5))
	if got := m.Score(0, []string{"cat", "cat"}); !near(got, wantCat) {
		t.Errorf("Score(cat) = %v, want %v (a repeated term counts once)", got, wantCat)
	}
	// dog: df 2, idf ln(1 + 1.5/2.5); the shorter document 1 ranks first.
	idf := math.Log(1 + 1.5/2.5)
	want0, want1 := idf*2.2/(1+1.2*(0.25+0.75*1.5)), idf*2.2/(1+1.2*(0.25+0.75*0.5))
	docs, scores := m.Top([]string{"dog", "unknown"}, 5)
	if !slices.Equal(docs, []int{1, 0}) || !near(scores[0], want1) || !near(scores[1], want0) {
		t.Errorf("Top(dog) = %v %v, want [1 0] [%v %v]", docs, scores, want1, want0)
	}
	if docs, _ := m.Top([]string{"dog"}, 1); !slices.Equal(docs, []int{1}) {
		t.Errorf("Top(dog, 1) = %v, want [1]", docs)
	}
	if docs, _ := m.Top([]string{"unknown"}, 5); len(docs) != 0 {
		t.Errorf("Top(unknown) = %v, want nothing", docs)
	}
}
