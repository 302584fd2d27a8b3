package main

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/testdb"
)

// TestOffTopicSubjects checks that the off-topic questions ask about nothing stored: no word
// of a question's subject is, as PostgreSQL's english lexemes (what recall's full text
// matches), in any fact of the labelled set or any turn of the conversation set, and each
// subject word is in its question.
func TestOffTopicSubjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stored []string
	for _, u := range bench.Labelled() {
		for _, f := range u.Facts {
			stored = append(stored, f.Content)
		}
	}
	for _, c := range bench.Conversations() {
		for _, s := range c.Sessions {
			for _, tr := range s.Turns {
				stored = append(stored, tr.Text)
			}
		}
	}
	var texts []string
	for _, q := range bench.OffTopic() {
		texts = append(texts, q.Text)
		texts = append(texts, q.Subject...)
	}
	lex, err := lexemes(ctx, testdb.ServerURL(t), append(texts, stored...))
	if err != nil {
		t.Fatal(err)
	}
	storedWords := map[string]bool{}
	for _, l := range lex[len(texts):] {
		for w := range l {
			storedWords[w] = true
		}
	}
	next := 0
	for _, q := range bench.OffTopic() {
		question := lex[next]
		next++
		if len(q.Subject) == 0 {
			t.Errorf("%q has no subject", q.Text)
		}
		for _, word := range q.Subject {
			for w := range lex[next] {
				if storedWords[w] {
					t.Errorf("%q: its subject word %q (%s) is stored", q.Text, word, w)
				}
				if _, ok := question[w]; !ok {
					t.Errorf("%q does not hold its subject word %q (%s)", q.Text, word, w)
				}
			}
			next++
		}
	}
}
