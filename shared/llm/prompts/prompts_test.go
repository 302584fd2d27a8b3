package prompts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/llmtest"
	"github.com/agentmem/agentmem/shared/llm/prompts"
	"github.com/agentmem/agentmem/shared/memory"
)

var fastRetry = llm.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond,
	MaxBackoff: 2 * time.Millisecond, MaxElapsed: 5 * time.Second, Cooldown: -1}

func openAIRunner(t *testing.T, srv *llmtest.Server) *prompts.Runner {
	t.Helper()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, Model: "gpt-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	r, err := prompts.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bedrockRunner(t *testing.T, srv *llmtest.Server) *prompts.Runner {
	t.Helper()
	c, err := llm.NewBedrock(context.Background(), llm.BedrockConfig{Region: "us-east-1", BaseEndpoint: srv.URL, Retry: fastRetry,
		AWS: &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := prompts.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func msg(seq int64, role, content string) memory.Message {
	return memory.Message{Seq: seq, Role: role, Content: content}
}

// factsInput is the input the fake model reads (the user message of the request).
type factsInput struct {
	Existing []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"existing_memories"`
	Turn []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"turn"`
}

// readingModel is a fake model that reads the input as a model would: it states each user
// message as a preference, and updates the existing memory that shares the message's last word.
func readingModel(c llmtest.Call) llmtest.Reply {
	var in factsInput
	if len(c.Messages) != 1 || json.Unmarshal([]byte(c.Messages[0].Content), &in) != nil {
		return llmtest.Reply{Status: http.StatusBadRequest, Code: "invalid_request_error"}
	}
	type fact struct {
		Text    string  `json:"text"`
		Kind    string  `json:"kind"`
		Updates *string `json:"updates"`
	}
	facts := []fact{}
	for _, m := range in.Turn {
		if m.Role != "user" {
			continue
		}
		f := fact{Text: "The user said: " + m.Content, Kind: "preference"}
		words := strings.Fields(strings.Trim(m.Content, "."))
		for _, e := range in.Existing {
			if len(words) > 0 && strings.Contains(e.Text, words[len(words)-1]) {
				f.Updates = &e.ID
			}
		}
		facts = append(facts, f)
	}
	out, _ := json.Marshal(map[string]any{"facts": facts})
	return llmtest.Reply{Output: string(out), InputTokens: 400, OutputTokens: 30}
}

func TestExtractFacts(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, readingModel)
	r := openAIRunner(t, srv)
	metric, green := uuid.New(), uuid.New()
	got, err := r.ExtractFacts(context.Background(), prompts.FactsInput{
		Turn: []memory.Message{
			msg(7, memory.RoleUser, "I prefer imperial units."),
			{Seq: 8, Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{ID: "c1", Type: "function",
				Function: memory.FunctionCall{Name: "convert", Arguments: `{"secret":"tool-arguments"}`}}}},
			msg(9, memory.RoleTool, "tool output text"),
			msg(10, memory.RoleAssistant, "Noted: miles and pounds from now on."),
		},
		Existing: []prompts.Memory{{ID: green, Text: "The user's favourite colour is green."},
			{ID: metric, Text: "The user prefers metric units."}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Facts) != 1 || got.Facts[0].Text != "The user said: I prefer imperial units." || got.Facts[0].Kind != prompts.KindPreference ||
		got.Facts[0].Updates == nil || *got.Facts[0].Updates != metric {
		t.Fatalf("facts %+v", got.Facts)
	}
	if got.Usage != (llm.Usage{InputTokens: 400, OutputTokens: 30}) || got.Prompt != "extract_facts.v1" || got.Model != "gpt-test" {
		t.Errorf("extraction %+v", got)
	}
	call := srv.Calls()[0]
	var in factsInput
	if err := json.Unmarshal([]byte(call.Messages[0].Content), &in); err != nil {
		t.Fatal(err)
	}
	// The model sees short ids, nearest first, and the turn's user and assistant text only.
	if len(in.Existing) != 2 || in.Existing[0].ID != "m1" || in.Existing[1].ID != "m2" || in.Existing[1].Text != "The user prefers metric units." {
		t.Errorf("existing memories shown: %+v", in.Existing)
	}
	if len(in.Turn) != 2 || in.Turn[0].Role != "user" || in.Turn[1].Content != "Noted: miles and pounds from now on." {
		t.Errorf("turn shown: %+v", in.Turn)
	}
	if strings.Contains(call.Messages[0].Content, "tool") || strings.Contains(call.Messages[0].Content, uuid.UUID(metric).String()) {
		t.Errorf("the input shows tool messages or memory ids: %s", call.Messages[0].Content)
	}
	// "updates" may only name the ids shown.
	var schema map[string]any
	json.Unmarshal(call.Schema, &schema)
	updates := schema["properties"].(map[string]any)["facts"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["updates"].(map[string]any)
	if fmt.Sprint(updates["anyOf"]) != "[map[enum:[m1 m2] type:string] map[type:null]]" {
		t.Errorf("updates schema %v", updates)
	}
	if call.System != mustRead(t, "extract_facts.v1.txt") {
		t.Error("the system prompt is not the prompt file")
	}
	if s := r.Stats().ExtractFacts; s != (prompts.TaskStats{Calls: 1, Succeeded: 1, InputTokens: 400, OutputTokens: 30}) {
		t.Errorf("stats %+v", s)
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Without existing memories, "updates" can only be null; without user text nothing is asked.
func TestExtractFactsWithoutMemoriesOrUserText(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[{"text":"The user lives in Lyon.","kind":"fact","updates":null}]}`}))
	r := openAIRunner(t, srv)
	got, err := r.ExtractFacts(context.Background(), prompts.FactsInput{Turn: []memory.Message{msg(1, memory.RoleUser, "I live in Lyon.")}})
	if err != nil || len(got.Facts) != 1 || got.Facts[0].Updates != nil || got.Facts[0].Kind != prompts.KindFact {
		t.Fatalf("%+v, %v", got, err)
	}
	if !strings.Contains(string(srv.Calls()[0].Schema), `"updates":{"description":`) ||
		!strings.Contains(string(srv.Calls()[0].Schema), `"type":"null"`) || strings.Contains(string(srv.Calls()[0].Schema), "MEMORY_IDS") {
		t.Errorf("schema %s", srv.Calls()[0].Schema)
	}
	got, err = r.ExtractFacts(context.Background(), prompts.FactsInput{Turn: []memory.Message{
		msg(2, memory.RoleAssistant, "Hello!"), msg(3, memory.RoleUser, "   ")}})
	if err != nil || len(got.Facts) != 0 || got.Facts == nil || srv.Requests.Load() != 1 {
		t.Errorf("a turn without user text: %+v, %v after %d requests", got, err, srv.Requests.Load())
	}
}

// Every answer that breaks the schema or the checks beside it is dropped and counted; none
// gives a fact.
func TestExtractFactsDropsMalformedAnswers(t *testing.T) {
	t.Parallel()
	six := `{"facts":[` + strings.Repeat(`{"text":"a","kind":"fact","updates":null},`, 5) + `{"text":"b","kind":"fact","updates":null}]}`
	for name, reply := range map[string]llmtest.Reply{
		"unknown kind":           {Output: `{"facts":[{"text":"The user likes tea.","kind":"opinion","updates":null}]}`},
		"updates missing":        {Output: `{"facts":[{"text":"The user likes tea.","kind":"preference"}]}`},
		"extra property":         {Output: `{"facts":[{"text":"The user likes tea.","kind":"preference","updates":null,"confidence":0.9}]}`},
		"extra top-level":        {Output: `{"facts":[],"note":"none"}`},
		"six facts":              {Output: six},
		"unknown memory id":      {Output: `{"facts":[{"text":"The user likes tea.","kind":"preference","updates":"m9"}]}`},
		"a uuid for an id":       {Output: `{"facts":[{"text":"The user likes tea.","kind":"preference","updates":"` + uuid.NewString() + `"}]}`},
		"blank text":             {Output: `{"facts":[{"text":"  \n ","kind":"preference","updates":null}]}`},
		"text too long":          {Output: `{"facts":[{"text":"` + strings.Repeat("tea ", 200) + `","kind":"preference","updates":null}]}`},
		"one memory twice":       {Output: `{"facts":[{"text":"The user likes tea.","kind":"preference","updates":"m1"},{"text":"The user likes coffee.","kind":"preference","updates":"m1"}]}`},
		"facts not a list":       {Output: `{"facts":"The user likes tea."}`},
		"text not a string":      {Output: `{"facts":[{"text":42,"kind":"preference","updates":null}]}`},
		"not an object":          {Output: `The user likes tea.`},
		"refusal":                {Refusal: "I can't help with that."},
		"cut at the limit":       {Output: `{"facts":[{"text":"The user likes`, Truncated: true},
		"nothing but whitespace": {Output: " "},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewChatCompletions(t, llmtest.Always(reply))
			r := openAIRunner(t, srv)
			got, err := r.ExtractFacts(context.Background(), prompts.FactsInput{
				Turn:     []memory.Message{msg(1, memory.RoleUser, "I like tea.")},
				Existing: []prompts.Memory{{ID: uuid.New(), Text: "The user likes coffee."}},
			})
			if !errors.Is(err, llm.ErrMalformedOutput) || len(got.Facts) != 0 {
				t.Fatalf("%+v, %v; want ErrMalformedOutput and no facts", got.Facts, err)
			}
			if s := r.Stats().ExtractFacts; s.Calls != 1 || s.Malformed != 1 || s.Succeeded != 0 || s.Failed != 0 || s.InputTokens == 0 {
				t.Errorf("stats %+v", s)
			}
			if strings.Contains(err.Error(), "tea") || strings.Contains(err.Error(), "opinion") || strings.Contains(err.Error(), "confidence") {
				t.Errorf("the error quotes the answer: %v", err)
			}
		})
	}
}

// Identical facts in one answer are kept once.
func TestExtractFactsKeepsRepeatsOnce(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[
		{"text":"The user likes tea.","kind":"preference","updates":null},
		{"text":"the user  likes TEA.","kind":"preference","updates":null},
		{"text":"The user drinks it without sugar.","kind":"preference","updates":null}]}`}))
	got, err := openAIRunner(t, srv).ExtractFacts(context.Background(), prompts.FactsInput{Turn: []memory.Message{msg(1, memory.RoleUser, "I like tea, no sugar.")}})
	if err != nil || len(got.Facts) != 2 || got.Facts[1].Text != "The user drinks it without sugar." {
		t.Fatalf("%+v, %v", got.Facts, err)
	}
}

// A provider that cannot answer is counted as failed, not as malformed, and its error is
// returned for the caller to retry later.
func TestExtractFactsProviderDown(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`}))
	srv.Down.Store(true)
	r := openAIRunner(t, srv)
	_, err := r.ExtractFacts(context.Background(), prompts.FactsInput{Turn: []memory.Message{msg(1, memory.RoleUser, "I like tea.")}})
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	if s := r.Stats().ExtractFacts; s.Calls != 1 || s.Failed != 1 || s.Malformed != 0 {
		t.Errorf("stats %+v", s)
	}
}

// Long texts are shown clipped, and only the nearest MaxExistingMemories memories.
func TestExtractFactsBoundsTheInput(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`}))
	existing := make([]prompts.Memory, prompts.MaxExistingMemories+5)
	for i := range existing {
		existing[i] = prompts.Memory{ID: uuid.New(), Text: strings.Repeat("m", prompts.MaxMemoryChars*2)}
	}
	_, err := openAIRunner(t, srv).ExtractFacts(context.Background(), prompts.FactsInput{
		Turn: []memory.Message{msg(1, memory.RoleUser, strings.Repeat("ü", prompts.MaxMessageChars*3))}, Existing: existing})
	if err != nil {
		t.Fatal(err)
	}
	var in factsInput
	json.Unmarshal([]byte(srv.Calls()[0].Messages[0].Content), &in)
	if len(in.Existing) != prompts.MaxExistingMemories || !strings.HasPrefix(in.Existing[0].Text, strings.Repeat("m", prompts.MaxMemoryChars)+" … [") {
		t.Errorf("%d memories shown, the first %d characters long", len(in.Existing), len(in.Existing[0].Text))
	}
	if n := len([]rune(in.Turn[0].Content)); n > prompts.MaxMessageChars+40 || n < prompts.MaxMessageChars {
		t.Errorf("a message of %d characters shown", n)
	}
}

// summaryInput is the input the fake model reads for a summary.
type summaryInput struct {
	Previous *string `json:"summary_so_far"`
	Messages []struct {
		Seq       int64  `json:"seq"`
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID, Name, Arguments string
		} `json:"tool_calls"`
		ToolCallID *string `json:"tool_call_id"`
	} `json:"messages"`
}

// foldingModel summarises by appending "seq:role" of each message to the summary so far.
func foldingModel(c llmtest.Call) llmtest.Reply {
	var in summaryInput
	if json.Unmarshal([]byte(c.Messages[0].Content), &in) != nil {
		return llmtest.Reply{Status: http.StatusBadRequest, Code: "ValidationException"}
	}
	parts := []string{}
	if in.Previous != nil {
		parts = append(parts, *in.Previous)
	}
	for _, m := range in.Messages {
		p := fmt.Sprintf("%d:%s", m.Seq, m.Role)
		for _, tc := range m.ToolCalls {
			p += "(" + tc.Name + ")"
		}
		parts = append(parts, p)
	}
	out, _ := json.Marshal(map[string]string{"summary": strings.Join(parts, " ")})
	return llmtest.Reply{Output: string(out)}
}

// Summaries fold the messages into the summary so far, here over Bedrock's Converse.
func TestSummarise(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewConverse(t, foldingModel)
	r := bedrockRunner(t, srv)
	callID := "call_1"
	got, err := r.Summarise(context.Background(), prompts.SummaryInput{Messages: []memory.Message{
		msg(1, memory.RoleUser, "What's the weather in Lyon?"),
		{Seq: 2, Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{ID: callID, Type: "function",
			Function: memory.FunctionCall{Name: "weather", Arguments: `{"city":"Lyon"}`}}}},
		{Seq: 3, Role: memory.RoleTool, ToolCallID: &callID, Content: "12°C, rain"},
	}})
	if err != nil || got.Text != "1:user 2:assistant(weather) 3:tool" || got.Prompt != "summarise.v1" || got.Usage.InputTokens == 0 {
		t.Fatalf("%+v, %v", got, err)
	}
	got, err = r.Summarise(context.Background(), prompts.SummaryInput{Previous: got.Text,
		Messages: []memory.Message{msg(4, memory.RoleAssistant, "It's 12°C and raining in Lyon.")}})
	if err != nil || got.Text != "1:user 2:assistant(weather) 3:tool 4:assistant" {
		t.Fatalf("%+v, %v", got, err)
	}
	calls := srv.Calls()
	var first, second summaryInput
	json.Unmarshal([]byte(calls[0].Messages[0].Content), &first)
	json.Unmarshal([]byte(calls[1].Messages[0].Content), &second)
	if first.Previous != nil || second.Previous == nil || first.Messages[2].ToolCallID == nil || *first.Messages[2].ToolCallID != "call_1" ||
		first.Messages[1].ToolCalls[0].Arguments != `{"city":"Lyon"}` || first.Messages[2].Content != "12°C, rain" {
		t.Errorf("inputs %+v %+v", first, second)
	}
	if calls[0].SchemaName != "summarise" || calls[0].Format != "any" || calls[0].System != mustRead(t, "summarise.v1.txt") {
		t.Errorf("call %s %s", calls[0].SchemaName, calls[0].Format)
	}
	if s := r.Stats().Summarise; s.Calls != 2 || s.Succeeded != 2 {
		t.Errorf("stats %+v", s)
	}
	if _, err := r.Summarise(context.Background(), prompts.SummaryInput{Previous: "x"}); err == nil {
		t.Error("a summary of no messages was asked")
	}
}

func TestSummariseDropsMalformedAnswers(t *testing.T) {
	t.Parallel()
	for name, reply := range map[string]llmtest.Reply{
		"blank":          {Output: `{"summary":"   "}`},
		"too long":       {Output: `{"summary":"` + strings.Repeat("a", prompts.MaxSummaryChars+1) + `"}`},
		"extra property": {Output: `{"summary":"The user asked.","title":"Weather"}`},
		"not a string":   {Output: `{"summary":["The user asked."]}`},
		"missing":        {Output: `{}`},
		"prose":          {Output: "The user asked about the weather."},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewConverse(t, llmtest.Always(reply))
			r := bedrockRunner(t, srv)
			got, err := r.Summarise(context.Background(), prompts.SummaryInput{Messages: []memory.Message{msg(1, memory.RoleUser, "Weather?")}})
			if !errors.Is(err, llm.ErrMalformedOutput) || got.Text != "" {
				t.Fatalf("%+v, %v", got, err)
			}
			if s := r.Stats().Summarise; s.Malformed != 1 || s.Calls != 1 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// The schemas stay in the subset every structured-output implementation takes (OpenAI's strict
// mode is the narrowest): an object at the root, every object closed with every property
// required, no length, numeric or format bounds, no references.
func TestSchemasAreInTheStrictSubset(t *testing.T) {
	t.Parallel()
	allowed := []string{"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf",
		"description", "maxItems"}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		s, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: not a schema object", path)
			return
		}
		for k := range s {
			if !slices.Contains(allowed, k) {
				t.Errorf("%s: keyword %s is outside the strict subset", path, k)
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			if s["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", path)
			}
			var req []string
			for _, r := range s["required"].([]any) {
				req = append(req, r.(string))
			}
			for k, p := range props {
				if !slices.Contains(req, k) {
					t.Errorf("%s: property %s is not required", path, k)
				}
				walk(path+"/"+k, p)
			}
		}
		if items, ok := s["items"]; ok {
			walk(path+"[]", items)
		}
		if anyOf, ok := s["anyOf"].([]any); ok {
			for i, a := range anyOf {
				walk(fmt.Sprintf("%s|%d", path, i), a)
			}
		}
	}
	for _, n := range []int{0, 1, prompts.MaxExistingMemories} {
		schema, err := prompts.FactsSchema(n)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		json.Unmarshal(schema, &doc)
		if doc["type"] != "object" {
			t.Errorf("facts schema root %v", doc["type"])
		}
		walk(fmt.Sprintf("extract_facts(%d)", n), doc)
		if got := doc["properties"].(map[string]any)["facts"].(map[string]any)["maxItems"]; got != float64(prompts.MaxFacts) {
			t.Errorf("maxItems %v, want MaxFacts", got)
		}
	}
	var doc map[string]any
	json.Unmarshal([]byte(mustRead(t, "summarise.v1.schema.json")), &doc)
	walk("summarise", doc)
}

// Each prompt is a versioned file with its schema beside it, and says what the checks hold it
// to.
func TestPromptFiles(t *testing.T) {
	t.Parallel()
	name := regexp.MustCompile(`^([a-z_]+\.v[0-9]+)\.(txt|schema\.json)$`)
	seen := map[string][]string{}
	err := fs.WalkDir(os.DirFS("."), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") || strings.HasPrefix(p, "testdata") {
			return err
		}
		m := name.FindStringSubmatch(p)
		if m == nil {
			t.Errorf("%s: not <name>.v<N>.txt or .schema.json", p)
			return nil
		}
		seen[m[1]] = append(seen[m[1]], m[2])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || len(seen[prompts.ExtractFactsVersion]) != 2 || len(seen[prompts.SummariseVersion]) != 2 {
		t.Errorf("prompt files %v", seen)
	}
	if p := mustRead(t, "extract_facts.v1.txt"); !strings.Contains(p, fmt.Sprintf("at most %d facts", prompts.MaxFacts)) {
		t.Error("the extraction prompt does not state MaxFacts")
	}
}
