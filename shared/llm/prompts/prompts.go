// Package prompts holds agentmem's prompts to a chat model, one versioned file each beside the
// JSON schema of its answer (extract_facts.v1.txt and extract_facts.v1.schema.json, ...), and
// runs them: it builds the request, asks the model (shared/llm), and checks the answer before
// anything may store it.
//
// An answer is checked twice, and both checks must pass or the answer is dropped and counted
// as malformed (Stats): first against the very schema the model was given, with a JSON Schema
// validator (github.com/santhosh-tekuri/jsonschema, draft 2020-12), so that what the model is
// asked for and what is accepted cannot drift apart and no hand-written copy of the schema has
// to be kept in step; then, decoded strictly into Go types, against what the portable schema
// subset cannot say (structured-output servers refuse string length bounds): texts not blank
// and within their length, at most one fact per existing memory. Providers constrain their
// output to the schema to a varying degree (a strict json_schema server fully, a Bedrock tool
// or a json_object server not at all), so the answer is never trusted.
//
// A prompt is never changed in place: a new wording is a new version (extract_facts.v2.txt),
// and what a prompt produced records the version that produced it.
package prompts

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentmem/agentmem/shared/llm"
)

//go:embed *.txt *.schema.json
var files embed.FS

// file is one embedded file; a missing one is a build mistake.
func file(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}

// Runner asks one chat model agentmem's prompts and counts what came back. It is safe for
// concurrent use; make one per process.
type Runner struct {
	chat           llm.Chat
	facts, summary counters
	summarySchema  *jsonschema.Schema
}

// New returns a Runner over chat.
func New(chat llm.Chat) (*Runner, error) {
	sch, err := compile(SummariseVersion, file(SummariseVersion+".schema.json"))
	if err != nil {
		return nil, err
	}
	return &Runner{chat: chat, summarySchema: sch}, nil
}

// Model names the model the Runner asks, for what its answers record.
func (r *Runner) Model() string { return r.chat.Model() }

// TaskStats counts the completions of one prompt since the Runner was made.
type TaskStats struct {
	// Calls is the completions asked.
	Calls int64 `json:"calls"`
	// Succeeded is the answers that passed every check.
	Succeeded int64 `json:"succeeded"`
	// Malformed is the answers dropped: a refusal, a cut or filtered answer, not one JSON
	// object, or not conforming to the schema and the checks beside it.
	Malformed int64 `json:"malformed"`
	// Failed is the calls that got no answer: the provider unavailable or refusing the
	// request.
	Failed int64 `json:"failed"`
	// InputTokens and OutputTokens add up the usage providers reported, of every answer
	// (malformed ones cost tokens too).
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Stats counts a Runner's completions, prompt by prompt.
type Stats struct {
	ExtractFacts TaskStats `json:"extract_facts"`
	Summarise    TaskStats `json:"summarise"`
}

// Stats is what the Runner did so far.
func (r *Runner) Stats() Stats {
	return Stats{ExtractFacts: r.facts.snapshot(), Summarise: r.summary.snapshot()}
}

type counters struct {
	calls, succeeded, malformed, failed, in, out atomic.Int64
}

func (c *counters) snapshot() TaskStats {
	return TaskStats{Calls: c.calls.Load(), Succeeded: c.succeeded.Load(), Malformed: c.malformed.Load(),
		Failed: c.failed.Load(), InputTokens: c.in.Load(), OutputTokens: c.out.Load()}
}

// complete asks for one answer and checks it with check, counting the outcome in c. An answer
// that fails the check is an error wrapping llm.ErrMalformedOutput, like a malformed answer of
// the provider.
func (r *Runner) complete(ctx context.Context, c *counters, req llm.Request, check func(json.RawMessage) error) (llm.Completion, error) {
	c.calls.Add(1)
	got, err := r.chat.Complete(ctx, req)
	c.in.Add(int64(got.Usage.InputTokens))
	c.out.Add(int64(got.Usage.OutputTokens))
	if err == nil {
		err = check(got.Output)
	}
	switch {
	case err == nil:
		c.succeeded.Add(1)
	case errors.Is(err, llm.ErrMalformedOutput):
		c.malformed.Add(1)
		got.Output = nil
	default:
		c.failed.Add(1)
	}
	return got, err
}

// refusingLoader lets a schema load nothing: the embedded schemas have no outside references.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas load nothing (%s)", url)
}

// compile compiles an embedded schema (draft 2020-12, which also checks it against the
// meta-schema).
func compile(name string, doc []byte) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	url := "urn:agentmem:" + name
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return sch, nil
}

// validate checks output against sch, and decodes it into v with unknown fields refused. The
// error says where and which keyword failed, never what the value was.
func validate(prompt string, sch *jsonschema.Schema, output []byte, v any) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(output))
	if err != nil {
		return fmt.Errorf("%w: %s: not JSON", llm.ErrMalformedOutput, prompt)
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%w: %s: does not conform to its schema (%s)", llm.ErrMalformedOutput, prompt, where(ve))
		}
		return fmt.Errorf("%w: %s: does not conform to its schema", llm.ErrMalformedOutput, prompt)
	}
	dec := json.NewDecoder(bytes.NewReader(output))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: decode: %s", llm.ErrMalformedOutput, prompt, kindOf(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: %s: more than one JSON value", llm.ErrMalformedOutput, prompt)
	}
	return nil
}

// knownSegment is an instance location segment safe to show: an index or one of the schemas'
// property names (any other key could be text the model chose).
var knownSegment = regexp.MustCompile(`^([0-9]+|facts|text|kind|updates|summary)$`)

// where describes the first failing leaf of a validation error: its instance location and
// keyword.
func where(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := make([]string, len(ve.InstanceLocation))
	for i, s := range ve.InstanceLocation {
		if knownSegment.MatchString(s) {
			loc[i] = s
		} else {
			loc[i] = "…"
		}
	}
	keyword := "?"
	if ve.ErrorKind != nil {
		if p := ve.ErrorKind.KeywordPath(); len(p) > 0 {
			keyword = p[len(p)-1]
		}
	}
	return fmt.Sprintf("at /%s: %s", strings.Join(loc, "/"), keyword)
}

// kindOf names a decoding error without the text it may quote.
func kindOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "a value of the wrong type"
	}
	return "not the expected object"
}

// clip shortens s to at most max characters, marking what it left out.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + fmt.Sprintf(" … [%d characters left out]", len(r)-max)
}

// inputJSON is the JSON the model reads as its input: no HTML escaping, which would only cost
// tokens.
func inputJSON(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}
