package bench

import (
	"math"
	"strings"
	"testing"
)

func TestScoreAnswers(t *testing.T) {
	eleven := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}
	for _, c := range []struct {
		name    string
		answers []Answer
		want    QualityScore
	}{
		{"none", nil, QualityScore{}},
		{"all first", []Answer{{[]string{"x", "y"}, nil, "x"}, {[]string{"y"}, nil, "y"}},
			QualityScore{Questions: 2, HitAt1: 1, HitAt5: 1, MRR: 1}},
		// Ranks 1, 2, 5, 6, absent: hit@1 = 1/5, hit@5 = 3/5,
		// MRR = (1 + 1/2 + 1/5 + 1/6 + 0) / 5 = (30 + 15 + 6 + 5) / 150 = 56/150.
		{"mixed", []Answer{
			{eleven, nil, "a"}, {eleven, nil, "b"}, {eleven, nil, "e"}, {eleven, nil, "f"}, {[]string{"a", "b"}, nil, "z"},
		}, QualityScore{Questions: 5, HitAt1: 0.2, HitAt5: 0.6, MRR: 56.0 / 150}},
		// Rank 10 counts 1/10; rank 11 counts nothing: MRR = 0.1 / 2.
		{"cut at k", []Answer{{eleven, nil, "j"}, {eleven, nil, "k"}},
			QualityScore{Questions: 2, HitAt1: 0, HitAt5: 0, MRR: 0.05}},
		// Without scores, or with distinct ones, the place in the list is the rank.
		{"no tie", []Answer{{[]string{"x", "y"}, []float64{0.9, 0.8}, "y"}},
			QualityScore{Questions: 1, HitAt1: 0, HitAt5: 1, MRR: 0.5}},
		// Tied with the first: rank 1 or 2, each half the time: hit@1 = 1/2, RR = (1 + 1/2) / 2.
		{"tie at the top", []Answer{{[]string{"x", "y", "z"}, []float64{0.5, 0.5, 0.1}, "y"}},
			QualityScore{Questions: 1, HitAt1: 0.5, HitAt5: 1, MRR: 0.75}},
		// Listed first but tied with ranks 2 and 3: the place in the list does not count.
		{"tie listed first", []Answer{{[]string{"x", "y", "z", "w"}, []float64{0.3, 0.3, 0.3, 0.1}, "x"}},
			QualityScore{Questions: 1, HitAt1: 1.0 / 3, HitAt5: 1, MRR: (1 + 1.0/2 + 1.0/3) / 3}},
		// Tied over ranks 4 to 7: hit@5 = 2/4, RR = (1/4 + 1/5 + 1/6 + 1/7) / 4.
		{"tie across 5", []Answer{{eleven[:8], []float64{9, 8, 7, 6, 6, 6, 6, 1}, "g"}},
			QualityScore{Questions: 1, HitAt1: 0, HitAt5: 0.5, MRR: (1.0/4 + 1.0/5 + 1.0/6 + 1.0/7) / 4}},
		// Tied over ranks 10 and 11: the 11th place counts nothing, RR = (1/10 + 0) / 2.
		{"tie across k", []Answer{{eleven, []float64{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 2}, "k"}},
			QualityScore{Questions: 1, HitAt1: 0, HitAt5: 0, MRR: 0.05}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ScoreAnswers(c.answers)
			if got.Questions != c.want.Questions || !near(got.HitAt1, c.want.HitAt1) ||
				!near(got.HitAt5, c.want.HitAt5) || !near(got.MRR, c.want.MRR) {
				t.Errorf("%s: ScoreAnswers = %+v, want %+v", c.name, got, c.want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestLabelledIntegrity checks the set: every question names an existing fact of its own
// user, no user holds the same fact twice (as the store's content key folds them), and the
// sizes stay where the report says.
func TestLabelledIntegrity(t *testing.T) {
	users := Labelled()
	facts, questions := 0, 0
	names := map[string]bool{}
	for _, u := range users {
		if u.Name == "" || names[u.Name] {
			t.Errorf("user name %q is empty or repeated", u.Name)
		}
		names[u.Name] = true
		if len(u.Facts) > QualityK {
			// Recall then returns every fact of the user in vector mode, so a tie is seen whole.
			t.Errorf("%s has %d facts: want at most QualityK (%d)", u.Name, len(u.Facts), QualityK)
		}
		if len(u.Facts) < 5 || len(u.Questions) < 5 {
			t.Errorf("%s has %d facts and %d questions: want several of each, so that facts compete",
				u.Name, len(u.Facts), len(u.Questions))
		}
		keys := map[string]bool{}
		contents := map[string]string{}
		for _, f := range u.Facts {
			if f.Key == "" || strings.TrimSpace(f.Content) == "" {
				t.Errorf("%s has a fact with an empty key or content: %+v", u.Name, f)
			}
			if keys[f.Key] {
				t.Errorf("%s: fact key %q repeated", u.Name, f.Key)
			}
			keys[f.Key] = true
			norm := strings.TrimRight(strings.Join(strings.Fields(strings.ToLower(f.Content)), " "), ".!?;, ")
			if k, ok := contents[norm]; ok {
				t.Errorf("%s: facts %q and %q are the same fact", u.Name, k, f.Key)
			}
			contents[norm] = f.Key
		}
		asked := map[string]bool{}
		for _, q := range u.Questions {
			if !keys[q.Fact] {
				t.Errorf("%s: question %q is labelled %q, which is not one of the user's facts", u.Name, q.Text, q.Fact)
			}
			if asked[q.Text] {
				t.Errorf("%s: question %q repeated", u.Name, q.Text)
			}
			asked[q.Text] = true
		}
		facts += len(u.Facts)
		questions += len(u.Questions)
	}
	if facts < 40 || facts > 60 || questions < 60 || questions > 100 {
		t.Errorf("the set has %d facts and %d questions: want 40-60 and 60-100", facts, questions)
	}
	if LabelledUserID(0) == LabelledUserID(1) || LabelledUserID(0) == UserID(0) || LabelledUserID(0) == ChatUserID {
		t.Error("labelled users must have ids of their own")
	}
}
