package bench

import (
	"cmp"
	"math"
	"slices"
)

// Ranking is one answer to a question scored against its labels: the keys of what was found,
// best first, their scores, and the keys of what answers the question (one or several).
//
// Entries of equal score are tied. A store orders a tie by something unrelated to the question
// (an id), so every metric is the mean over the orders the tie can take: a labelled entry tied
// with others above and below a cut counts the chance that it lands above it. A tie is seen only
// within Ranked. Without Scores (nil), the place in the list is the rank.
type Ranking struct {
	Ranked   []string
	Scores   []float64
	Relevant []string
}

// group is a run of tied entries: places lo to hi (0-based, inclusive) holding m relevant ones.
type group struct{ lo, hi, m int }

func (r Ranking) groups() []group {
	rel := make(map[string]bool, len(r.Relevant))
	for _, k := range r.Relevant {
		rel[k] = true
	}
	var gs []group
	for i := 0; i < len(r.Ranked); {
		j := i
		if len(r.Scores) == len(r.Ranked) {
			for j+1 < len(r.Ranked) && r.Scores[j+1] == r.Scores[i] {
				j++
			}
		}
		g := group{lo: i, hi: j}
		for _, k := range r.Ranked[i : j+1] {
			if rel[k] {
				g.m++
			}
		}
		gs = append(gs, g)
		i = j + 1
	}
	return gs
}

// relevantCount is the number of distinct relevant keys.
func (r Ranking) relevantCount() int {
	return len(slices.Compact(slices.Sorted(slices.Values(r.Relevant))))
}

// choose is the binomial coefficient C(n, k) as a float (0 when k is out of range).
func choose(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// HitAt is the chance that at least one relevant entry ranks in the first k.
func (r Ranking) HitAt(k int) float64 {
	miss := 1.0 // the chance that none does
	for _, g := range r.groups() {
		if g.lo >= k || g.m == 0 {
			continue
		}
		n, slots := g.hi-g.lo+1, min(k, g.hi+1)-g.lo
		// A tie straddling the cut puts its relevant entries in random places of the group.
		miss *= choose(n-g.m, slots) / choose(n, slots)
	}
	return 1 - miss
}

// RecallAt is the expected share of the distinct relevant keys that rank in the first k.
func (r Ranking) RecallAt(k int) float64 {
	want := r.relevantCount()
	if want == 0 {
		return 0
	}
	found := 0.0
	for _, g := range r.groups() {
		if g.lo >= k || g.m == 0 {
			continue
		}
		n, slots := g.hi-g.lo+1, min(k, g.hi+1)-g.lo
		found += float64(g.m) * float64(slots) / float64(n)
	}
	return found / float64(want)
}

// ReciprocalRank is the expected 1/rank of the first relevant entry, counting 0 when it ranks
// below k or is not found.
func (r Ranking) ReciprocalRank(k int) float64 {
	for _, g := range r.groups() {
		if g.m == 0 {
			continue
		}
		// The first relevant entry of the group is its j-th place with chance
		// C(n-j, m-1) / C(n, m).
		n, rr := g.hi-g.lo+1, 0.0
		for j := 1; j <= n-g.m+1 && g.lo+j <= k; j++ {
			rr += choose(n-j, g.m-1) / choose(n, g.m) / float64(g.lo+j)
		}
		return rr
	}
	return 0
}

// BM25 is Okapi BM25 over a fixed set of documents, each given as the counts of its terms (as
// PostgreSQL's to_tsvector gives lexemes and their positions). The idf is Lucene's,
// ln(1 + (N - n + 0.5) / (n + 0.5)), which is never negative; a document's length is the sum of
// its counts. It is the baseline the full-text ranking of recall is measured against.
type BM25 struct {
	k1, b float64
	docs  []map[string]int
	lens  []float64
	avg   float64
	df    map[string]int
}

// NewBM25 indexes docs with the parameters k1 and b (1.2 and 0.75 are the usual ones).
func NewBM25(docs []map[string]int, k1, b float64) *BM25 {
	m := &BM25{k1: k1, b: b, docs: docs, lens: make([]float64, len(docs)), df: map[string]int{}}
	total := 0.0
	for i, d := range docs {
		for t, n := range d {
			m.lens[i] += float64(n)
			m.df[t]++
		}
		total += m.lens[i]
	}
	if len(docs) > 0 {
		m.avg = total / float64(len(docs))
	}
	return m
}

// Score is the score of document i for the query terms; a term given twice counts once.
func (m *BM25) Score(i int, query []string) float64 {
	n := float64(len(m.docs))
	s := 0.0
	for j, t := range query {
		if slices.Contains(query[:j], t) {
			continue
		}
		tf := float64(m.docs[i][t])
		if tf == 0 {
			continue
		}
		df := float64(m.df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		norm := 1 - m.b
		if m.avg > 0 {
			norm += m.b * m.lens[i] / m.avg
		}
		s += idf * tf * (m.k1 + 1) / (tf + m.k1*norm)
	}
	return s
}

// Top returns the (at most) k documents that score above 0 for the query, best first (a tie in
// the order of the documents), with their scores.
func (m *BM25) Top(query []string, k int) (docs []int, scores []float64) {
	type hit struct {
		doc   int
		score float64
	}
	var hits []hit
	for i := range m.docs {
		if s := m.Score(i, query); s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	for _, h := range hits[:min(k, len(hits))] {
		docs, scores = append(docs, h.doc), append(scores, h.score)
	}
	return docs, scores
}

// ConversationAnswer is what one system answered to one question of the conversation set: its
// first ConversationK results and its first ConversationDeepK (the keys are TurnRef.Key()).
// Relevant is filled from the question's evidence by ScoreConversation.
type ConversationAnswer struct {
	Question     *ConversationQuestion
	Top, DeepTop Ranking
}

// The depths of the conversation scores: most figures look at the first ConversationK results
// (recall's k in an agent's prompt), hit@25 at ConversationDeepK asked for separately (the
// store's hybrid mode fuses a longer list of candidates for a larger k).
const (
	ConversationK     = 10
	ConversationDeepK = 25
)

// ScoreConversation scores the answers of one system: over all questions, by kind, and for the
// questions that share no word with their evidence (Paraphrase) and the others.
func ScoreConversation(name string, answers []ConversationAnswer) ConversationSystem {
	sys := ConversationSystem{Name: name, ByKind: map[string]ConversationScore{}}
	var para, lex []ConversationAnswer
	byKind := map[string][]ConversationAnswer{}
	for _, a := range answers {
		byKind[a.Question.Kind] = append(byKind[a.Question.Kind], a)
		if a.Question.Paraphrase {
			para = append(para, a)
		} else {
			lex = append(lex, a)
		}
	}
	sys.All = scoreConversationAnswers(answers)
	sys.Paraphrase = scoreConversationAnswers(para)
	sys.Lexical = scoreConversationAnswers(lex)
	for k, as := range byKind {
		sys.ByKind[k] = scoreConversationAnswers(as)
	}
	return sys
}

// Gated is a reduced to what a gate on its best relevance (best) changes (ScoreMatching): its
// hit@5, hit@10 and reciprocal rank at ConversationK.
func (a ConversationAnswer) Gated(best float64) GatedAnswer {
	top := a.Top
	for _, e := range a.Question.Evidence {
		top.Relevant = append(top.Relevant, e.Key())
	}
	return GatedAnswer{Best: best, HitAt5: top.HitAt(5), HitAt10: top.HitAt(ConversationK), RR: top.ReciprocalRank(ConversationK)}
}

func scoreConversationAnswers(answers []ConversationAnswer) ConversationScore {
	s := ConversationScore{Questions: len(answers)}
	if len(answers) == 0 {
		return s
	}
	for _, a := range answers {
		var evidence, near []string
		for _, e := range a.Question.Evidence {
			evidence = append(evidence, e.Key())
			for d := -1; d <= 1; d++ {
				near = append(near, TurnRef{Session: e.Session, Turn: e.Turn + d}.Key())
			}
		}
		top, deep := a.Top, a.DeepTop
		top.Relevant, deep.Relevant = evidence, evidence
		s.HitAt1 += top.HitAt(1)
		s.HitAt5 += top.HitAt(5)
		s.HitAt10 += top.HitAt(ConversationK)
		s.HitAt25 += deep.HitAt(ConversationDeepK)
		s.RecallAt10 += top.RecallAt(ConversationK)
		s.MRR += top.ReciprocalRank(ConversationK)
		top.Relevant = near
		s.HitAt10Neighbour += top.HitAt(ConversationK)
	}
	n := float64(len(answers))
	s.HitAt1 /= n
	s.HitAt5 /= n
	s.HitAt10 /= n
	s.HitAt25 /= n
	s.RecallAt10 /= n
	s.MRR /= n
	s.HitAt10Neighbour /= n
	return s
}
