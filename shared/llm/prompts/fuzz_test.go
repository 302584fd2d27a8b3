package prompts_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/llmtest"
	"github.com/agentmem/agentmem/shared/llm/prompts"
)

// FuzzFactsOutput: whatever a model answers to fact extraction, with 0 to MaxExistingMemories
// memories shown, the answer is either dropped as malformed or gives at most MaxFacts facts,
// each with a text within its bounds, a known kind, and an update of a memory shown, no memory
// updated twice; and it never panics.
func FuzzFactsOutput(f *testing.F) {
	for _, seed := range []string{
		`{"facts":[]}`,
		`{"facts":[{"text":"The user likes tea.","kind":"preference","updates":null}]}`,
		`{"facts":[{"text":"The user moved to Lyon.","kind":"fact","updates":"m2"},{"text":"The user chose Go.","kind":"decision","updates":"m1"}]}`,
		`{"facts":[{"text":"a","kind":"fact","updates":"m1"},{"text":"b","kind":"fact","updates":"m1"}]}`,
		`{"facts":[{"text":"a","kind":"opinion","updates":null}]}`,
		`{"facts":[{"text":" ","kind":"fact","updates":null}]}`,
		`{"facts":[{"text":"a","kind":"fact","updates":"m0"}]}`,
		`{"facts":[{"text":"a","kind":"fact","updates":null,"x":1}]}`,
		`{"facts":[{"text":"a","kind":"fact","updates":null}]} {}`,
		`{"facts":"a"}`,
		`[]`,
		`{"facts":[{"text":"\u0000","kind":"constraint","updates":null}]}`,
	} {
		f.Add([]byte(seed), uint8(0))
		f.Add([]byte(seed), uint8(2))
	}
	f.Fuzz(func(t *testing.T, output []byte, n uint8) {
		n %= prompts.MaxExistingMemories + 1
		ids := make([]uuid.UUID, n)
		for i := range ids {
			ids[i] = uuid.New()
		}
		facts, err := prompts.CheckFacts(output, ids)
		if err != nil {
			if !errors.Is(err, llm.ErrMalformedOutput) || facts != nil {
				t.Fatalf("%v with %d facts, want ErrMalformedOutput and none", err, len(facts))
			}
			return
		}
		if len(facts) > prompts.MaxFacts {
			t.Fatalf("%d facts", len(facts))
		}
		updated := map[uuid.UUID]bool{}
		for _, fact := range facts {
			if c := utf8.RuneCountInString(fact.Text); strings.TrimSpace(fact.Text) == "" || c > prompts.MaxFactChars {
				t.Fatalf("fact text of %d characters: %q", c, fact.Text)
			}
			if !slices.Contains([]string{prompts.KindPreference, prompts.KindDecision, prompts.KindConstraint, prompts.KindFact}, fact.Kind) {
				t.Fatalf("kind %q", fact.Kind)
			}
			if fact.Updates != nil {
				if !slices.Contains(ids, *fact.Updates) || updated[*fact.Updates] {
					t.Fatalf("update of %s (shown %v, updated before %v)", fact.Updates, ids, updated[*fact.Updates])
				}
				updated[*fact.Updates] = true
			}
		}
	})
}

// FuzzSummaryOutput: whatever a model answers to a summary, the answer is either dropped as
// malformed or is a text within its bounds; and it never panics.
func FuzzSummaryOutput(f *testing.F) {
	for _, seed := range []string{
		`{"summary":"The user asked about the weather in Lyon; it was 12°C and raining."}`,
		`{"summary":""}`,
		`{"summary":"a","title":"b"}`,
		`{"summary":null}`,
		`{}`,
		`"summary"`,
		`{"summary":"a"}{"summary":"b"}`,
	} {
		f.Add([]byte(seed))
	}
	srv := llmtest.NewChatCompletions(f, llmtest.Always(llmtest.Reply{Output: `{"summary":"x"}`}))
	c, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL})
	if err != nil {
		f.Fatal(err)
	}
	r, err := prompts.New(c)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, output []byte) {
		text, err := prompts.CheckSummary(r, output)
		if err != nil {
			if !errors.Is(err, llm.ErrMalformedOutput) || text != "" {
				t.Fatalf("%v with %q, want ErrMalformedOutput and no text", err, text)
			}
			return
		}
		if c := utf8.RuneCountInString(text); strings.TrimSpace(text) == "" || c > prompts.MaxSummaryChars || text != strings.TrimSpace(text) {
			t.Fatalf("summary of %d characters: %q", c, text)
		}
	})
}

// BenchmarkCheckFacts measures checking one answer of three facts, one an update, against the
// schema for ten memories shown.
func BenchmarkCheckFacts(b *testing.B) {
	ids := make([]uuid.UUID, 10)
	for i := range ids {
		ids[i] = uuid.New()
	}
	output := []byte(`{"facts":[{"text":"The user prefers metric units for distances and weights.","kind":"preference","updates":"m3"},
		{"text":"The user is planning a trip to Japan in April.","kind":"fact","updates":null},
		{"text":"The user chose the window seat.","kind":"decision","updates":null}]}`)
	for b.Loop() {
		if _, err := prompts.CheckFacts(output, ids); err != nil {
			b.Fatal(err)
		}
	}
}
