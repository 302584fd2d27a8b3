package main

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/testdb"
)

// TestConversationParaphrase checks the Paraphrase mark of every question of the conversation
// set against PostgreSQL's english lexemes (what recall's full text and the BM25 baseline
// match): a question marked so shares no lexeme with its evidence turns but the speakers'
// names, and every other question shares at least one.
func TestConversationParaphrase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	convs := bench.Conversations()
	var texts []string
	for _, c := range convs {
		texts = append(texts, c.Speakers[0]+" "+c.Speakers[1])
		for _, q := range c.Questions {
			texts = append(texts, q.Text)
			for _, e := range q.Evidence {
				texts = append(texts, c.Sessions[e.Session].Turns[e.Turn].Text)
			}
		}
	}
	lex, err := lexemes(ctx, testdb.ServerURL(t), texts)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for ci, c := range convs {
		names := lex[next]
		next++
		for _, q := range c.Questions {
			words := map[string]bool{}
			for w := range lex[next] {
				if _, name := names[w]; !name {
					words[w] = true
				}
			}
			next++
			shared := map[string]bool{}
			for range q.Evidence {
				for w := range lex[next] {
					if words[w] {
						shared[w] = true
					}
				}
				next++
			}
			if q.Paraphrase && len(shared) > 0 {
				t.Errorf("conversation %d: %q is marked paraphrase but shares %v with its evidence", ci, q.Text, slices.Sorted(maps.Keys(shared)))
			}
			if !q.Paraphrase && len(shared) == 0 {
				t.Errorf("conversation %d: %q shares no word with its evidence: mark it paraphrase", ci, q.Text)
			}
		}
	}
}

// TestConversationBaselines runs the baselines of the conversation workload (the part that
// needs no stored rows) twice: BM25 over PostgreSQL's lexemes must give the same figures both
// times, within bounds that say the set is neither trivial nor out of reach of word matching
// (a question sharing a word with its answer is found in the top 10 most of the time, one
// sharing none hardly ever: only a speaker's name can match), and the last messages must find almost nothing, the labelled turns
// being spread over months of sessions.
func TestConversationBaselines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := testdb.ServerURL(t)
	convs := bench.Conversations()
	first, err := conversationBaselines(ctx, url, convs)
	if err != nil {
		t.Fatal(err)
	}
	second, err := conversationBaselines(ctx, url, convs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the baselines differ between two runs:\n%+v\n%+v", first, second)
	}
	if len(first) != 2 || first[0].Name != systemBM25 || first[1].Name != systemLastMessages {
		t.Fatalf("baselines %v, want bm25 and last-messages", first)
	}
	bm25, last := first[0], first[1]
	total := 0
	for _, c := range convs {
		total += len(c.Questions)
	}
	if bm25.All.Questions != total || bm25.Lexical.Questions+bm25.Paraphrase.Questions != total {
		t.Errorf("BM25 scored %d questions (%d + %d), want %d", bm25.All.Questions, bm25.Lexical.Questions, bm25.Paraphrase.Questions, total)
	}
	a := bm25.All
	if !(0 <= a.HitAt1 && a.HitAt1 <= a.HitAt5 && a.HitAt5 <= a.HitAt10 && a.HitAt10 <= a.HitAt25 && a.HitAt25 <= 1) ||
		a.HitAt10Neighbour < a.HitAt10 || a.RecallAt10 > a.HitAt10 || a.MRR > a.HitAt10 || a.MRR < a.HitAt1 {
		t.Errorf("BM25 figures out of order: %+v", a)
	}
	if a.HitAt10 < 0.2 || a.HitAt10 > 0.8 {
		t.Errorf("BM25 hit@10 = %.3f over the set: want 0.2 to 0.8", a.HitAt10)
	}
	if l := bm25.Lexical.HitAt10; l < 0.5 {
		t.Errorf("BM25 hit@10 = %.3f on questions sharing a word with their answer: want at least 0.5", l)
	}
	if p := bm25.Paraphrase.HitAt10; p > 0.1 {
		t.Errorf("BM25 hit@10 = %.3f on questions sharing no word with their answer: want at most 0.1", p)
	}
	if l := last.All.HitAt25; l > 0.1 {
		t.Errorf("the last 25 messages hold an answer for %.3f of the questions: want at most 0.1", l)
	}
}
