package prompts

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/memory"
)

// ExtractFactsVersion names the fact-extraction prompt (extract_facts.v1.txt and its schema);
// what it produces records it.
const ExtractFactsVersion = "extract_facts.v1"

// The kinds of a fact.
const (
	KindPreference = "preference"
	KindDecision   = "decision"
	KindConstraint = "constraint"
	KindFact       = "fact"
)

// Limits of fact extraction.
const (
	// MaxFacts is the most facts one turn gives (the schema's maxItems).
	MaxFacts = 5
	// MaxFactChars is the longest fact kept, in characters: a fact is one sentence.
	MaxFactChars = 500
	// MaxExistingMemories is the most existing memories shown to the model; the nearest come
	// first, and those beyond are left out.
	MaxExistingMemories = 20
	// MaxMemoryChars is the most characters of an existing memory shown to the model.
	MaxMemoryChars = 1000
	// MaxMessageChars is the most characters of one message shown to the model (its start).
	MaxMessageChars = 4000
)

// memoryIDsPlaceholder stands in the schema file for the ids of the existing memories.
const memoryIDsPlaceholder = "$MEMORY_IDS"

// Memory is an existing memory shown to the model, so that a fact can update it rather than
// add a second one.
type Memory struct {
	ID   uuid.UUID
	Text string
}

// FactsInput is one turn and the user's existing memories nearest to it.
type FactsInput struct {
	// Turn is the turn's messages, oldest first. User and assistant messages are shown (the
	// assistant's text only, not its tool calls); tool and system messages are not.
	Turn []memory.Message
	// Existing is the user's memories nearest to the turn, nearest first; at most
	// MaxExistingMemories are shown.
	Existing []Memory
}

// Fact is one fact the model extracted.
type Fact struct {
	// Text is the fact, one sentence; not blank, at most MaxFactChars characters.
	Text string
	// Kind is KindPreference, KindDecision, KindConstraint or KindFact.
	Kind string
	// Updates is the existing memory the fact contradicts, corrects or refines, whose text
	// it replaces; nil for a new fact. No two facts update the same memory.
	Updates *uuid.UUID
}

// Facts is what one extraction gave.
type Facts struct {
	// Facts are 0 to MaxFacts facts.
	Facts []Fact
	// Usage is what the completion cost (zero when no completion was needed).
	Usage llm.Usage
	// Prompt is ExtractFactsVersion; Model the model that answered.
	Prompt, Model string
}

// factsAnswer is the answer the schema describes.
type factsAnswer struct {
	Facts []struct {
		Text    string  `json:"text"`
		Kind    string  `json:"kind"`
		Updates *string `json:"updates"`
	} `json:"facts"`
}

// factsTurnMessage and factsMemory are the input the model reads.
type factsTurnMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type factsMemory struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// shortID is the id the model sees for the i-th existing memory: short, so that it costs a
// token or two and is copied without mistakes.
func shortID(i int) string { return "m" + strconv.Itoa(i+1) }

// factsRequest builds the request for in, and the ids the model may name.
func factsRequest(in FactsInput) (llm.Request, []uuid.UUID, bool, error) {
	var turn []factsTurnMessage
	hasUser := false
	for _, m := range in.Turn {
		if (m.Role != memory.RoleUser && m.Role != memory.RoleAssistant) || strings.TrimSpace(m.Content) == "" {
			continue
		}
		hasUser = hasUser || m.Role == memory.RoleUser
		turn = append(turn, factsTurnMessage{Role: m.Role, Content: clip(m.Content, MaxMessageChars)})
	}
	existing := in.Existing[:min(len(in.Existing), MaxExistingMemories)]
	mems := make([]factsMemory, len(existing))
	ids := make([]uuid.UUID, len(existing))
	for i, m := range existing {
		mems[i] = factsMemory{ID: shortID(i), Text: clip(m.Text, MaxMemoryChars)}
		ids[i] = m.ID
	}
	schema, err := factsSchemas[len(existing)]()
	if err != nil {
		return llm.Request{}, nil, false, err
	}
	input, err := inputJSON(struct {
		Existing []factsMemory      `json:"existing_memories"`
		Turn     []factsTurnMessage `json:"turn"`
	}{mems, turn})
	if err != nil {
		return llm.Request{}, nil, false, err
	}
	return llm.Request{
		System:            string(file(ExtractFactsVersion + ".txt")),
		Messages:          []llm.Message{{Role: llm.RoleUser, Content: input}},
		Schema:            schema.doc,
		SchemaName:        "extract_facts",
		SchemaDescription: "The facts worth remembering from one turn.",
	}, ids, hasUser, nil
}

// compiledFactsSchema is the facts schema for n existing memories, sent and compiled once per n
// (it depends on nothing else).
type compiledFactsSchema struct {
	doc json.RawMessage
	sch *jsonschema.Schema
}

// factsSchemas holds the schema for each count of existing memories, built on first use.
var factsSchemas = func() (s [MaxExistingMemories + 1]func() (compiledFactsSchema, error)) {
	for n := range s {
		s[n] = sync.OnceValues(func() (compiledFactsSchema, error) {
			doc, err := factsSchema(n)
			if err != nil {
				return compiledFactsSchema{}, err
			}
			sch, err := compile(ExtractFactsVersion, doc)
			return compiledFactsSchema{doc, sch}, err
		})
	}
	return s
}()

// factsSchema is the schema file with the ids of n existing memories as the values "updates"
// may take (null alone when there are none).
func factsSchema(n int) (json.RawMessage, error) {
	var doc map[string]any
	if err := json.Unmarshal(file(ExtractFactsVersion+".schema.json"), &doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", ExtractFactsVersion, err)
	}
	updates, ok := dig(doc, "properties", "facts", "items", "properties", "updates")
	anyOf, _ := updates["anyOf"].([]any)
	var ids map[string]any
	if len(anyOf) == 2 {
		ids, _ = anyOf[0].(map[string]any)
	}
	if !ok || ids == nil || fmt.Sprint(ids["enum"]) != "["+memoryIDsPlaceholder+"]" {
		return nil, fmt.Errorf("schema %s: no updates.anyOf[0].enum [%q] to fill", ExtractFactsVersion, memoryIDsPlaceholder)
	}
	if n == 0 {
		delete(updates, "anyOf")
		updates["type"] = "null"
	} else {
		enum := make([]any, n)
		for i := range enum {
			enum[i] = shortID(i)
		}
		ids["enum"] = enum
	}
	return json.Marshal(doc)
}

// dig walks nested objects by key.
func dig(doc map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := doc[k].(map[string]any)
		if !ok {
			return nil, false
		}
		doc = next
	}
	return doc, true
}

// ExtractFacts asks the model for the facts of one turn worth remembering. A turn without a
// user message with text gives no facts and asks nothing. An answer that fails its checks
// gives an error wrapping llm.ErrMalformedOutput, counted in Stats, and no facts; a provider
// that cannot answer gives its error (llm.ErrUnavailable, *llm.StatusError, ...).
func (r *Runner) ExtractFacts(ctx context.Context, in FactsInput) (Facts, error) {
	out := Facts{Prompt: ExtractFactsVersion, Facts: []Fact{}}
	req, ids, hasUser, err := factsRequest(in)
	if err != nil {
		return out, err
	}
	if !hasUser {
		return out, nil
	}
	got, err := r.complete(ctx, &r.facts, req, func(output json.RawMessage) error {
		facts, cerr := checkFacts(output, ids)
		out.Facts = facts
		return cerr
	})
	out.Usage, out.Model = got.Usage, got.Model
	if err != nil {
		out.Facts = []Fact{}
		return out, fmt.Errorf("%s: %w", ExtractFactsVersion, err)
	}
	return out, nil
}

// checkFacts validates an answer against the request's schema and the checks beside it, and
// maps the short ids back to memory ids. A fact repeating an earlier one of the answer (the
// same text, ignoring case and spaces, and the same update) is dropped.
func checkFacts(output []byte, ids []uuid.UUID) ([]Fact, error) {
	if len(ids) > MaxExistingMemories {
		return nil, fmt.Errorf("check facts: %d memories shown, more than %d", len(ids), MaxExistingMemories)
	}
	schema, err := factsSchemas[len(ids)]()
	if err != nil {
		return nil, err
	}
	var a factsAnswer
	if err := validate(ExtractFactsVersion, schema.sch, output, &a); err != nil {
		return nil, err
	}
	facts := []Fact{}
	seen := map[string]bool{}
	updated := map[uuid.UUID]bool{}
	for i, f := range a.Facts {
		text := strings.Join(strings.Fields(f.Text), " ")
		switch n := len([]rune(text)); {
		case n == 0:
			return nil, fmt.Errorf("%w: fact %d is blank", llm.ErrMalformedOutput, i)
		case n > MaxFactChars:
			return nil, fmt.Errorf("%w: fact %d has %d characters, more than %d", llm.ErrMalformedOutput, i, n, MaxFactChars)
		}
		fact := Fact{Text: text, Kind: f.Kind}
		if f.Updates != nil {
			k, err := strconv.Atoi(strings.TrimPrefix(*f.Updates, "m"))
			if !strings.HasPrefix(*f.Updates, "m") || err != nil || k < 1 || k > len(ids) {
				// The schema's enum lets no other id through; this guards a schema edit.
				return nil, fmt.Errorf("%w: fact %d updates an unknown memory", llm.ErrMalformedOutput, i)
			}
			id := ids[k-1]
			if updated[id] {
				return nil, fmt.Errorf("%w: two facts update memory %s", llm.ErrMalformedOutput, *f.Updates)
			}
			updated[id] = true
			fact.Updates = &id
		}
		key := strings.ToLower(text)
		if fact.Updates != nil {
			key += "\x00" + fact.Updates.String()
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		facts = append(facts, fact)
	}
	return facts, nil
}
