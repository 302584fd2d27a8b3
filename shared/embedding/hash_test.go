package embedding_test

import (
	"context"
	"testing"

	"github.com/agentmem/agentmem/shared/embedding"
)

// same says whether two texts embed to the very same vector.
func same(a, b string) bool {
	var h embedding.Hash
	va, vb := h.Vector(a), h.Vector(b)
	for i := range va {
		if va[i] != vb[i] {
			return false
		}
	}
	return true
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func TestHashIgnoresStopWords(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{
		{"The user prefers metric units.", "user prefers metric units"},
		{"What is the name of her niece?", "name niece"},
		{"I'm allergic to peanuts, and so is he.", "allergic peanuts"},
		{"She didn't like it at all", "not like"},
	} {
		if !same(c[0], c[1]) {
			t.Errorf("%q and %q embed differently", c[0], c[1])
		}
	}
	if same("user prefers metric units", "user prefers imperial units") {
		t.Error("different content words embed alike")
	}
}

// A negation is not a stop word here: a fact and its negation stay apart, below the similarity
// at which near-duplicate memories merge (0.95 by default).
func TestHashKeepsNegations(t *testing.T) {
	t.Parallel()
	var h embedding.Hash
	for _, c := range [][2]string{
		{"User likes dogs", "User doesn't like dogs"},
		{"Allergic to peanuts", "Not allergic to peanuts"},
		{"Has a car", "Has no car"},
	} {
		if sim := cosine(h.Vector(c[0]), h.Vector(c[1])); sim >= 0.95 {
			t.Errorf("%q and %q: cosine %.3f", c[0], c[1], sim)
		}
	}
	if !same("She can't swim", "She does not swim") {
		t.Error("a negated auxiliary does not read as a negation")
	}
}

func TestHashIgnoresTheNameOfWhomAMessageAddresses(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{
		{"How was your weekend, Maria?", "How was your weekend?"},
		{"Hi Tom! Long time no talk.", "Hi! Long time no talk."},
		{"Way to go, Caroline! That's a great time.", "Way to go! That's a great time."},
		{"Our family grew again, John: we brought home a rabbit.", "Our family grew again: we brought home a rabbit."},
	} {
		if !same(c[0], c[1]) {
			t.Errorf("%q and %q embed differently", c[0], c[1])
		}
	}
	// A name that is not addressed is part of what the text says.
	for _, c := range [][2]string{
		{"Maria ran the race", "ran the race"},
		{"I met Maria at the station.", "I met at the station."},
		{"How is Maria doing?", "How is doing?"},
	} {
		if same(c[0], c[1]) {
			t.Errorf("%q and %q embed alike: the name was dropped", c[0], c[1])
		}
	}
}

func TestHashStemsWords(t *testing.T) {
	t.Parallel()
	var h embedding.Hash
	// One stem each ("finish", "race", "cri"): the vectors differ only by the words' lengths.
	if c := cosine(h.Vector("She finished the race and cried"), h.Vector("finishing races, crying")); c < 0.95 {
		t.Errorf("inflections of the same words: cosine %.3f", c)
	}
	if c := cosine(h.Vector("finished"), h.Vector("furnished")); c > 0.5 {
		t.Errorf("different words sharing letters: cosine %.3f", c)
	}
}

// A number weighs as a word: facts that differ by a number stay apart, below the similarity at
// which near-duplicate memories merge.
func TestHashWeighsNumbers(t *testing.T) {
	t.Parallel()
	var h embedding.Hash
	for _, c := range [][2]string{
		{"fact 0 of batch 0", "fact 0 of batch 1"},
		{"fact 10 of batch 0", "fact 10 of batch 1"},
		{"Room 101 is the office", "Room 102 is the office"},
	} {
		if sim := cosine(h.Vector(c[0]), h.Vector(c[1])); sim >= 0.95 {
			t.Errorf("%q and %q: cosine %.3f", c[0], c[1], sim)
		}
	}
}

func TestHashRanksRelatedTextsAboveUnrelatedOnes(t *testing.T) {
	t.Parallel()
	var h embedding.Hash
	for _, c := range []struct {
		query, related string
		unrelated      []string
	}{
		{
			"Which band did Maria see live?",
			"I saw a Fleetwood Mac tribute band live at a tiny pub last night.",
			[]string{"Hey Maria, how have you been?", "Did you see the news about the new tram line?", "What do you get up to on weekends, Maria?"},
		},
		{
			"What did John name the puppy?",
			"Guess what, we adopted a puppy from the shelter on Saturday! We named her Luna.",
			[]string{"How's your family doing, John?", "Proud of you, John! Very grown up.", "It was so good catching up, John."},
		},
		{
			"What is Maya allergic to?",
			"Allergic to peanuts and carries an EpiPen",
			[]string{"Vegetarian since 2019, but eats fish occasionally", "Sister Lena lives in Lisbon and works as a nurse"},
		},
	} {
		q := h.Vector(c.query)
		near := cosine(q, h.Vector(c.related))
		for _, u := range c.unrelated {
			if far := cosine(q, h.Vector(u)); far >= near {
				t.Errorf("%q: %q (%.3f) is not above %q (%.3f)", c.query, c.related, near, u, far)
			}
		}
	}
}

func TestHashGivesTheZeroVectorWithoutWords(t *testing.T) {
	t.Parallel()
	var h embedding.Hash
	vs, err := h.Embed(context.Background(), []string{"", "   ", "?! ...", "It is what it is.", "Did you?", "And you, Maria?"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != embedding.HashDimensions || !isZero(v) {
			t.Errorf("text %d: want the zero vector of %d dimensions", i, embedding.HashDimensions)
		}
	}
	if isZero(h.Vector("Thanks")) {
		t.Error("a word alone gave the zero vector")
	}
}
