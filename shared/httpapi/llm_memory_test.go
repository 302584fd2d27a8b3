package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/llmtest"
	"github.com/agentmem/agentmem/shared/llm/prompts"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// llmEnv is a server whose fact extraction and rolling summaries ask a fake chat model.
type llmEnv struct {
	*env
	model  *llmtest.Server
	runner *prompts.Runner
}

// newLLMEnv serves over a database of its own, with fact extraction and summaries as asked,
// against chat (an OpenAI-compatible model when nil).
func newLLMEnv(t *testing.T, extract, summaries bool, policy memory.SummaryPolicy, jc app.JobsConfig, chat func(*llmtest.Server) llm.Chat) *llmEnv {
	t.Helper()
	model := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`}))
	var c llm.Chat
	if chat != nil {
		model = llmtest.NewConverse(t, llmtest.Always(llmtest.Reply{Output: `{"facts":[]}`}))
		c = chat(model)
	} else {
		var err error
		// Outages give up at once, and leave no cooldown behind: each job's attempt asks.
		c, err = llm.NewOpenAI(llm.OpenAIConfig{BaseURL: model.URL + "/v1", APIKey: "test-key",
			Retry: llm.RetryPolicy{MaxAttempts: 1, Cooldown: -1}})
		if err != nil {
			t.Fatal(err)
		}
	}
	runner, err := prompts.New(c)
	if err != nil {
		t.Fatal(err)
	}
	e := buildEnv(t, envConfig{own: true, store: store.Config{ExtractFacts: extract, Summaries: summaries},
		app: app.Config{Jobs: jc, Prompts: runner, Summary: policy, InternalJobs: true}})
	return &llmEnv{env: e, model: model, runner: runner}
}

// factsInput is the input the extraction prompt shows the model.
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

func readFactsInput(t *testing.T, c llmtest.Call) factsInput {
	t.Helper()
	var in factsInput
	if len(c.Messages) != 1 || json.Unmarshal([]byte(c.Messages[0].Content), &in) != nil {
		t.Errorf("extraction input is not the prompt's JSON: %d messages", len(c.Messages))
	}
	return in
}

// memoryRow is a stored memory as the superuser reads it.
type memoryRow struct {
	Content  string
	Metadata map[string]any
}

func (e *llmEnv) memories(u user) []memoryRow {
	e.t.Helper()
	conn := e.adminConn()
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `select content, metadata from agentmem.memories
		where user_id = $1 order by created_at, id`, u.id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []memoryRow
	for rows.Next() {
		var m memoryRow
		var raw []byte
		if err := rows.Scan(&m.Content, &raw); err != nil {
			e.t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &m.Metadata); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func facts(fs ...string) string {
	return `{"facts":[` + strings.Join(fs, ",") + `]}`
}

func fact(text, kind, updates string) string {
	u := "null"
	if updates != "" {
		u = `"` + updates + `"`
	}
	return fmt.Sprintf(`{"text":%q,"kind":%q,"updates":%s}`, text, kind, u)
}

// Fact extraction end to end: a committed turn writes an extract job (not with extract:
// false), process-jobs asks the model and stores its facts through the memories path with
// their source; a repeat merges, a contradiction replaces the memory's text and keeps the old
// one; a malformed answer is counted and dropped; the provider down makes the job retry, then
// die. The commit itself never asks the model.
func TestFactExtraction(t *testing.T) {
	t.Parallel()
	e := newLLMEnv(t, true, false, memory.SummaryPolicy{}, app.JobsConfig{MaxAttempts: 2, BackoffBase: time.Hour,
		BackoffMax: time.Hour}, nil)
	u := e.newUser("t1")
	sid := uuid.New()
	commit := func(body map[string]any) {
		t.Helper()
		e.call(u.token, "commit-turn", body).must(t, http.StatusCreated)
	}

	// Strict validation: nothing stored, no job.
	for _, bad := range []any{"no", 0, map[string]any{}, []any{true}} {
		body := jobTurn(sid, "coach", "hello")
		body["extract"] = bad
		r := e.call(u.token, "commit-turn", body)
		wantProblem(t, r, http.StatusBadRequest, "invalid_request", "extract")
	}
	if n := e.count("jobs", ""); n != 0 {
		t.Fatalf("refused commits wrote %d jobs", n)
	}

	// The first turn: two new facts.
	e.model.SetAnswer(func(c llmtest.Call) llmtest.Reply {
		in := readFactsInput(t, c)
		if len(in.Turn) != 2 || in.Turn[0].Content != "I use metric units. My daughter is Mia." || len(in.Existing) != 0 {
			t.Errorf("first extraction input: %+v", in)
		}
		return llmtest.Reply{Output: facts(fact("The user prefers metric units.", "preference", ""),
			fact("The user's daughter is called Mia.", "fact", ""))}
	})
	commit(jobTurn(sid, "coach", "I use metric units. My daughter is Mia.", "Noted."))
	if got := len(e.model.Calls()); got != 0 {
		t.Fatalf("the commit asked the model %d times", got)
	}
	if n := e.count("jobs", "adapter = 'extract' and status = 'pending' and session_id = $1", sid); n != 1 {
		t.Fatalf("%d pending extract jobs after a commit, want 1", n)
	}
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("process: %d done", done)
	}
	mems := e.memories(u)
	if len(mems) != 2 || mems[0].Content != "The user prefers metric units." || mems[1].Content != "The user's daughter is called Mia." {
		t.Fatalf("memories after the first turn: %+v", mems)
	}
	md := mems[0].Metadata
	if md["source"] != app.SourceExtraction || md["session_id"] != sid.String() || md["seq_from"] != 1.0 || md["seq_to"] != 2.0 ||
		md["kind"] != "preference" || md["prompt"] != prompts.ExtractFactsVersion || md["model"] == "" {
		t.Errorf("metadata of an extracted fact: %v", md)
	}

	// The second turn: a repeat (merged) and a contradiction (replaces the metric memory).
	e.model.SetAnswer(func(c llmtest.Call) llmtest.Reply {
		in := readFactsInput(t, c)
		metric := ""
		for _, m := range in.Existing {
			if strings.Contains(m.Text, "metric") {
				metric = m.ID
			}
		}
		if metric == "" {
			t.Errorf("the metric memory was not shown: %+v", in.Existing)
		}
		return llmtest.Reply{Output: facts(fact("the user's daughter is called mia", "fact", ""),
			fact("The user now prefers imperial units.", "preference", metric))}
	})
	commit(jobTurn(sid, "coach", "Actually I switched to imperial units; Mia says hi.", "Got it."))
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("process: %d done", done)
	}
	mems = e.memories(u)
	if len(mems) != 2 || mems[0].Content != "The user now prefers imperial units." {
		t.Fatalf("memories after the contradiction: %+v", mems)
	}
	prev, _ := mems[0].Metadata["previous"].([]any)
	if len(prev) != 1 || prev[0].(map[string]any)["content"] != "The user prefers metric units." ||
		mems[0].Metadata["seq_from"] != 3.0 {
		t.Errorf("the updated memory's metadata: %v", mems[0].Metadata)
	}
	if st := e.app.ExtractStats(); st.Created != 2 || st.Merged != 1 || st.Updated != 1 || st.Jobs != 2 {
		t.Errorf("extract stats: %+v", st)
	}

	// Opted out: no job.
	body := jobTurn(sid, "coach", "My password is hunter2.")
	body["extract"] = false
	commit(body)
	if n := e.count("jobs", "adapter = 'extract' and status = 'pending'"); n != 0 {
		t.Errorf("extract: false wrote %d extract jobs", n)
	}

	// Malformed answers: counted and dropped, the job done.
	for _, out := range []string{`not json`, `{"facts":[{"text":"x"}]}`, facts(fact("  ", "fact", "")),
		facts(fact("The user updates nothing.", "fact", "m99"))} {
		e.model.SetAnswer(llmtest.Always(llmtest.Reply{Output: out}))
		commit(jobTurn(sid, "coach", "I like tea."))
		if _, done, _, dead, _ := e.process(t); done != 1 || dead != 0 {
			t.Errorf("malformed %q: %d done, %d dead", out, done, dead)
		}
	}
	if st := e.app.ExtractStats(); st.Malformed != 4 {
		t.Errorf("malformed answers counted: %+v", st)
	}
	if st := e.runner.Stats(); st.ExtractFacts.Malformed != 4 {
		t.Errorf("runner stats: %+v", st.ExtractFacts)
	}
	if n := len(e.memories(u)); n != 2 {
		t.Errorf("malformed answers stored memories: %d", n)
	}

	// The provider down: retried, then dead; up again, a retried job stores.
	e.model.Down.Store(true)
	commit(jobTurn(sid, "coach", "I moved to Lisbon."))
	if _, _, retried, _, _ := e.process(t); retried != 1 {
		t.Fatalf("outage: %d retried", retried)
	}
	e.due()
	if p, d, r, dead, _ := e.process(t); dead != 1 {
		t.Fatalf("outage: %d dead (%d processed, %d done, %d retried)", dead, p, d, r)
	}
	var id uuid.UUID
	var lastError string
	conn := e.adminConn()
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `select id, last_error from agentmem.jobs
		where adapter = 'extract' and status = 'dead'`).Scan(&id, &lastError); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lastError, "unavailable") || strings.Contains(lastError, "Lisbon") {
		t.Errorf("dead job's last_error: %q", lastError)
	}
	e.model.Down.Store(false)
	e.model.SetAnswer(llmtest.Always(llmtest.Reply{Output: facts(fact("The user lives in Lisbon.", "fact", ""))}))
	e.call(e.serviceToken(), "jobs", map[string]any{"op": "retry", "id": id}).must(t, http.StatusOK)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatal("the retried job was not done")
	}
	if mems := e.memories(u); len(mems) != 3 || mems[2].Content != "The user lives in Lisbon." {
		t.Errorf("memories after the outage: %+v", mems)
	}
	// The jobs function filters by the internal kinds too.
	r := e.call(e.serviceToken(), "jobs", map[string]any{"op": "list", "adapter": "extract"}).must(t, http.StatusOK)
	if n := len(list(r.body["jobs"])); n < 7 {
		t.Errorf("jobs list adapter=extract: %d jobs", n)
	}
	if log := e.logBuf.String(); strings.Contains(log, "Lisbon") || strings.Contains(log, "Mia") || strings.Contains(log, "imperial") {
		t.Error("the log holds content")
	}
}

// A memory the user edits while the model answers is never overwritten by a fact the model
// drew from its older text, not even through a merge of a near-duplicate: the user's edit
// stays, and the fact is dropped.
func TestExtractionNeverOverwritesAnEdit(t *testing.T) {
	t.Parallel()
	e := newLLMEnv(t, true, false, memory.SummaryPolicy{}, app.JobsConfig{}, nil)
	u := e.newUser("t1")
	sid := uuid.New()
	e.model.SetAnswer(llmtest.Always(llmtest.Reply{Output: facts(fact("The user prefers metric units.", "preference", ""))}))
	e.call(u.token, "commit-turn", jobTurn(sid, "coach", "I use metric units.", "Noted.")).must(t, http.StatusCreated)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("process: %d done", done)
	}
	var memID string
	conn := e.adminConn()
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `select id::text from agentmem.memories where user_id = $1`, u.id).Scan(&memID); err != nil {
		t.Fatal(err)
	}
	const edited = "The user prefers metric units, except for cooking."
	e.model.SetAnswer(func(c llmtest.Call) llmtest.Reply {
		in := readFactsInput(t, c)
		metric := ""
		for _, m := range in.Existing {
			if m.Text == "The user prefers metric units." {
				metric = m.ID
			}
		}
		if metric == "" {
			t.Errorf("the metric memory was not shown: %+v", in.Existing)
		}
		// The user edits the memory while the model answers.
		e.call(u.token, "memories", map[string]any{"op": "update", "id": memID, "content": edited}).must(t, http.StatusOK)
		return llmtest.Reply{Output: facts(fact("The user now prefers imperial units.", "preference", metric))}
	})
	e.call(u.token, "commit-turn", jobTurn(sid, "coach", "I switched to imperial units.", "Got it.")).must(t, http.StatusCreated)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatalf("process: %d done", done)
	}
	mems := e.memories(u)
	if len(mems) != 1 || mems[0].Content != edited {
		t.Fatalf("memories: %+v", mems)
	}
	if _, ok := mems[0].Metadata["previous"]; ok {
		t.Errorf("the edited memory was rewritten: %v", mems[0].Metadata)
	}
	if st := e.app.ExtractStats(); st.Updated != 0 || st.Created != 1 || st.Dropped != 1 {
		t.Errorf("extract stats: %+v", st)
	}
}

// Without the deployment's switch, commit-turn writes no extract job, whatever the request.
func TestNoExtractionWhenOff(t *testing.T) {
	t.Parallel()
	e := newLLMEnv(t, false, false, memory.SummaryPolicy{}, app.JobsConfig{}, nil)
	u := e.newUser("")
	body := jobTurn(uuid.New(), "a", "I like tea.")
	body["extract"] = true
	e.call(u.token, "commit-turn", body).must(t, http.StatusCreated)
	if n := e.count("jobs", ""); n != 0 {
		t.Errorf("%d jobs written with extraction and summaries off", n)
	}
}

// The same extraction over Bedrock's Converse API (the schema as a forced tool).
func TestFactExtractionOverConverse(t *testing.T) {
	t.Parallel()
	e := newLLMEnv(t, true, false, memory.SummaryPolicy{}, app.JobsConfig{}, func(s *llmtest.Server) llm.Chat {
		c, err := llm.NewBedrock(context.Background(), llm.BedrockConfig{Region: "us-east-1", BaseEndpoint: s.URL,
			Retry: llm.RetryPolicy{MaxAttempts: 1, Cooldown: -1},
			AWS:   &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	e.model.SetAnswer(llmtest.Always(llmtest.Reply{Output: facts(fact("The user is vegetarian.", "constraint", ""))}))
	u := e.newUser("")
	e.call(u.token, "commit-turn", jobTurn(uuid.New(), "a", "I'm vegetarian.", "Noted.")).must(t, http.StatusCreated)
	if _, done, _, _, _ := e.process(t); done != 1 {
		t.Fatal("the extract job was not done")
	}
	if mems := e.memories(u); len(mems) != 1 || mems[0].Content != "The user is vegetarian." || mems[0].Metadata["kind"] != "constraint" {
		t.Errorf("memories: %+v", mems)
	}
	if calls := e.model.Calls(); len(calls) != 1 || calls[0].Format != "any" || calls[0].SchemaName != "extract_facts" {
		t.Errorf("converse calls: %+v", calls)
	}
}

// summaryOf reads get-context's summary and message seqs for a session.
func summaryOf(t *testing.T, e *env, u user, sid uuid.UUID, body map[string]any) (map[string]any, []int64) {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	body["session_id"] = sid
	body["agent"] = "a"
	r := e.call(u.token, "get-context", body).must(t, http.StatusOK)
	var seqs []int64
	for _, m := range list(r.body["messages"]) {
		seqs = append(seqs, int64(m.(map[string]any)["seq"].(float64)))
	}
	s, _ := r.body["summary"].(map[string]any)
	return s, seqs
}

// Rolling summaries end to end: below the trigger nothing is asked; past it the older
// messages are folded into the summary, get-context answers it with the messages after its
// through_seq; it advances incrementally from the summary so far; a reset, the deletion of a
// summarised message and a clear delete it.
func TestRollingSummaries(t *testing.T) {
	t.Parallel()
	// Each message below is 40 bytes: 10 tokens plus 4 of framing.
	policy := memory.SummaryPolicy{TriggerTokens: 60, KeepTokens: 30, MaxInputTokens: 0}
	e := newLLMEnv(t, false, true, policy, app.JobsConfig{}, nil)
	var inputs []string
	e.model.SetAnswer(func(c llmtest.Call) llmtest.Reply {
		inputs = append(inputs, c.Messages[0].Content)
		var in struct {
			Previous *string `json:"summary_so_far"`
			Messages []struct {
				Seq int64 `json:"seq"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(c.Messages[0].Content), &in); err != nil {
			t.Errorf("summary input: %v", err)
		}
		prev := ""
		if in.Previous != nil {
			prev = *in.Previous + " + "
		}
		return llmtest.Reply{Output: fmt.Sprintf(`{"summary":%q}`,
			fmt.Sprintf("%s%d..%d", prev, in.Messages[0].Seq, in.Messages[len(in.Messages)-1].Seq))}
	})
	u := e.newUser("")
	sid := uuid.New()
	msg := func(i int) string { return fmt.Sprintf("message number %02d of the test session!!", i) }
	n := 0
	turn := func() {
		t.Helper()
		n += 2
		e.call(u.token, "commit-turn", jobTurn(sid, "a", msg(n-1), msg(n))).must(t, http.StatusCreated)
		e.process(t)
	}
	turn()
	turn() // 4 messages, 56 tokens: below the trigger
	if s, seqs := summaryOf(t, e.env, u, sid, nil); s != nil || len(seqs) != 4 || len(e.model.Calls()) != 0 {
		t.Fatalf("below the trigger: summary %v, seqs %v, %d calls", s, seqs, len(e.model.Calls()))
	}
	turn() // 6 messages, 84 tokens: summarise 1..4, keep 5..6
	s, seqs := summaryOf(t, e.env, u, sid, nil)
	if s == nil || s["content"] != "1..4" || s["through_seq"] != 4.0 || fmt.Sprint(seqs) != "[5 6]" {
		t.Fatalf("first summary: %v, seqs %v", s, seqs)
	}
	turn()
	turn() // 5..10 unsummarised, 84 tokens: fold 5..8 into the summary so far
	s, seqs = summaryOf(t, e.env, u, sid, nil)
	if s == nil || s["content"] != "1..4 + 5..8" || s["through_seq"] != 8.0 || fmt.Sprint(seqs) != "[9 10]" {
		t.Fatalf("second summary: %v, seqs %v", s, seqs)
	}
	if len(inputs) != 2 || !strings.Contains(inputs[1], `"summary_so_far":"1..4"`) || strings.Contains(inputs[1], msg(4)) {
		t.Errorf("the second summary was not incremental: %q", inputs)
	}
	// The budget still holds: max_messages 1 gives the newest message after the summary.
	if _, seqs := summaryOf(t, e.env, u, sid, map[string]any{"max_messages": 1}); fmt.Sprint(seqs) != "[10]" {
		t.Errorf("max_messages 1: %v", seqs)
	}
	// The model down: the summary lags, the messages after it are all still answered.
	e.model.Down.Store(true)
	turn()
	turn()
	s, seqs = summaryOf(t, e.env, u, sid, nil)
	if s["through_seq"] != 8.0 || fmt.Sprint(seqs) != "[9 10 11 12 13 14]" {
		t.Errorf("lagging summary: %v, seqs %v", s, seqs)
	}
	e.model.Down.Store(false)
	// Deleting a message the summary covers deletes the summary.
	conn := e.adminConn()
	defer conn.Close(context.Background())
	var mid uuid.UUID
	if err := conn.QueryRow(context.Background(), `select id from agentmem.messages where session_id = $1 and seq = 2`, sid).Scan(&mid); err != nil {
		t.Fatal(err)
	}
	e.call(u.token, "sessions", map[string]any{"op": "delete_message", "session_id": sid, "message_id": mid}).must(t, http.StatusOK)
	if s, seqs := summaryOf(t, e.env, u, sid, map[string]any{"max_messages": 500}); s != nil || len(seqs) != 13 {
		t.Errorf("after deleting a summarised message: %v, %d messages", s, len(seqs))
	}
	turn() // summarised afresh from the start
	if s, _ := summaryOf(t, e.env, u, sid, nil); s == nil || !strings.HasPrefix(str(s["content"]), "1..") {
		t.Fatalf("summary after the deletion: %v", s)
	}
	e.call(u.token, "sessions", map[string]any{"op": "reset", "session_id": sid}).must(t, http.StatusOK)
	if s, seqs := summaryOf(t, e.env, u, sid, nil); s != nil || len(seqs) != 0 {
		t.Errorf("after a reset: %v, %v", s, seqs)
	}
	for range 3 {
		turn()
	}
	if s, _ := summaryOf(t, e.env, u, sid, nil); s == nil {
		t.Fatal("no summary after the reset's new messages")
	}
	e.call(u.token, "sessions", map[string]any{"op": "clear", "agent": "a"}).must(t, http.StatusOK)
	if n := e.count("session_summaries", "user_id = $1", u.id); n != 0 {
		t.Errorf("clear left %d summaries", n)
	}
	for range 3 {
		turn()
	}
	r := e.call(e.serviceToken(), "forget-user", map[string]any{"user_id": u.id}).must(t, http.StatusOK)
	if d, _ := r.body["deleted"].(map[string]any); d["session_summaries"] != 1.0 {
		t.Errorf("forget-user deleted: %v", r.body["deleted"])
	}
	if st := e.app.SummaryStats(); st.Saved < 4 || st.Failed < 1 {
		t.Errorf("summary stats: %+v", st)
	}
}
