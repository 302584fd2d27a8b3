package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/mem0/mem0test"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/redis/redistest"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/llmtest"
	"github.com/agentmem/agentmem/shared/llm/prompts"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/store"
)

// piiPlant is one kind of personal data as clients write it: planted in every field an event
// can carry, it must reach no adapter in any of its spellings.
type piiPlant struct {
	kind redact.Kind
	// spellings go in every field that takes text.
	spellings []string
	// query is the value as a URL's query holds it.
	query string
	// agent is the value as an agent's name can hold it ("" when it cannot: no '@').
	agent string
	// number is the value as a JSON number, when it can be one.
	number string
	// needles are what no string of any payload may hold, compared as piiNorm leaves them.
	needles []string
}

var piiPlants = []piiPlant{
	{kind: redact.Email, spellings: []string{"ada.lovelace@example.com", "ada.lovelace%40example.com",
		"ada.lovelace＠example.com", "ａｄａ．ｌｏｖｅｌａｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ"},
		query: "ada.lovelace%40example.com", needles: []string{"lovelace"}},
	{kind: redact.Phone, spellings: []string{"+44 20 7946 0958", "020 7946 0958", "%2B44%2020%207946%200958"},
		query: "%2B44%2020%207946%200958", agent: "020-7946-0958", needles: []string{"79460958"}},
	{kind: redact.Card, spellings: []string{"4111 1111 1111 1111", "4111-1111-1111-1111"},
		query: "4111111111111111", agent: "4111111111111111", number: "4111111111111111", needles: []string{"4111111111111111"}},
	{kind: redact.IBAN, spellings: []string{"DE89 3704 0044 0532 0130 00", "DE89370400440532013000"},
		query: "DE89370400440532013000", agent: "DE89370400440532013000", needles: []string{"370400440532013000"}},
	{kind: redact.IP, spellings: []string{"203.0.113.42", "2001:db8::42"},
		query: "203.0.113.42", agent: "203.0.113.42", needles: []string{"203011342", "2001db842"}},
}

// piiNorm is s as the needles are compared with it: full-width forms folded, %XX escapes
// decoded (three times, for an escape escaped again), lower case, and no separators, so that
// a value written another way is still found.
func piiNorm(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			return r - 0xFEE0
		case r == '。' || r == '｡':
			return '.'
		}
		return r
	}, s)
	unhex := func(c byte) (byte, bool) {
		switch {
		case '0' <= c && c <= '9':
			return c - '0', true
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			return c | 0x20 - 'a' + 10, true
		}
		return 0, false
	}
	for range 3 {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '%' && i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					b.WriteByte(hi<<4 | lo)
					i += 2
					continue
				}
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(" \t\n-.():/+_", r) {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// jsonStrings calls fn with every member name, string and number of the JSON document doc,
// at any depth.
func jsonStrings(t *testing.T, doc []byte, fn func(string)) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("payload is not JSON: %v", err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, v := range x {
				fn(k)
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		case string:
			fn(x)
		case json.Number:
			fn(x.String())
		}
	}
	walk(v)
}

// piiEnv is a server with the webhook, Mem0 and Redis adapters enabled and rolling summaries
// on (a fake chat model), over a database of its own.
type piiEnv struct {
	*env
	rec   *webhooktest.Receiver
	mem0  *mem0test.Server
	redis *goredis.Client
}

func newPIIEnv(t *testing.T) *piiEnv {
	t.Helper()
	secret := webhooktest.NewSecret()
	rec, err := webhooktest.NewReceiver(secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	wh, err := webhook.New(webhook.Config{URL: rec.URL, Secret: secret, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fake := mem0test.New(mem0Key)
	t.Cleanup(fake.Close)
	m, err := mem0.New(mem0.Config{APIKey: mem0Key, URL: fake.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := redis.New(redis.Config{URL: redistest.URL(t), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	opt, err := goredis.ParseURL(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	client := goredis.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	model := llmtest.NewChatCompletions(t, llmtest.Always(llmtest.Reply{Output: `{"summary":"A talk about how to reach the user."}`}))
	chat, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: model.URL + "/v1", APIKey: "test-key",
		Retry: llm.RetryPolicy{MaxAttempts: 1, Cooldown: -1}})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := prompts.New(chat)
	if err != nil {
		t.Fatal(err)
	}
	// The memories planted hold the same personal data and little else: whatever the embedder,
	// they must not merge as near-duplicates (a merge answers 200, and creates no memory).
	e := buildEnv(t, envConfig{own: true, store: store.Config{Summaries: true, MergeSimilarity: 2}, app: app.Config{
		Adapters: map[string]adapter.Adapter{adapter.Webhook: wh, adapter.Mem0: m, adapter.Redis: cache},
		Redactor: testRedactor(t), Prompts: runner, InternalJobs: true,
		Summary: memory.SummaryPolicy{TriggerTokens: 60, KeepTokens: 30}}})
	return &piiEnv{env: e, rec: rec, mem0: fake, redis: client}
}

// drain runs process-jobs until nothing is left to do, and fails on any delivery that did
// not succeed (a redaction that fails delivers nothing).
func (e *piiEnv) drain(t *testing.T) {
	t.Helper()
	for range 10 {
		processed, _, retried, dead, _ := e.process(t)
		if retried != 0 || dead != 0 {
			conn := e.adminConn()
			var errs []string
			_ = conn.QueryRow(context.Background(), `select coalesce(array_agg(adapter || ' ' || intent || ': ' || last_error), '{}')
				from agentmem.jobs where last_error is not null`).Scan(&errs)
			conn.Close(context.Background())
			t.Fatalf("process-jobs: %d retried, %d dead: %q", retried, dead, errs)
		}
		if processed == 0 {
			return
		}
	}
	t.Fatal("process-jobs still busy after 10 runs")
}

// plant writes p in every field every kind of event carries, for a user of its own whose
// tenant and agent hold it too, and delivers each change to the adapters: a turn (content
// parts of every kind, a name, tool calls and their ids, a tool message, metadata keys and
// values, memories), a memory created and updated, a session's title synced, a backfill, a
// rolling summary, and the user's erasure.
func (e *piiEnv) plant(t *testing.T, p piiPlant) user {
	t.Helper()
	u := e.newUser(p.spellings[0])
	agent := p.agent
	if agent == "" {
		agent = "bot"
	}
	joined := strings.Join(p.spellings, " / ")
	b64 := base64.StdEncoding.EncodeToString([]byte("reach me at " + joined))
	link := "https://example.com/cb?v=" + p.query + "&note=ok"
	metadata := map[string]any{"note": joined, p.spellings[0]: "seen", "nested": map[string]any{"list": []any{joined, link}}}
	if p.number != "" {
		metadata["number"] = json.Number(p.number)
	}
	args, err := json.Marshal(map[string]any{"contact": joined, p.spellings[0]: true, "link": link})
	if err != nil {
		t.Fatal(err)
	}
	sid := uuid.New()
	e.call(u.token, "commit-turn", map[string]any{"session_id": sid, "agent": agent, "messages": []map[string]any{
		{"role": "user", "name": p.spellings[0], "metadata": metadata, "content": []map[string]any{
			{"type": "text", "text": "Reach me: " + joined},
			{"type": "image_url", "image_url": map[string]any{"url": link, "detail": "auto"}},
			{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + b64}},
			{"type": "input_audio", "input_audio": map[string]any{"data": b64, "format": "wav"}},
			{"type": "file", "file": map[string]any{"filename": p.spellings[0] + ".pdf", "file_data": "data:application/pdf;base64," + b64}},
			{"type": "x_profile", "x_profile": map[string]any{"contact": joined, p.spellings[0]: link}},
		}},
		{"role": "assistant", "content": "Noted: " + joined, "metadata": metadata, "tool_calls": []map[string]any{
			{"id": "call " + p.spellings[0], "type": "function", "function": map[string]any{"name": "save " + p.spellings[0], "arguments": string(args)}},
			{"id": "call " + p.spellings[1], "type": "function", "function": map[string]any{"name": "note", "arguments": "not JSON: " + joined}},
		}},
		{"role": "tool", "tool_call_id": "call " + p.spellings[0], "content": "Saved " + joined},
	}, "memories": []map[string]any{{"content": "Reach the user at " + joined, "metadata": metadata}}}).must(t, http.StatusCreated)
	c := e.call(u.token, "memories", map[string]any{"op": "create", "agent": agent, "content": "Contact: " + joined,
		"metadata": metadata}).must(t, http.StatusCreated)
	e.call(u.token, "memories", map[string]any{"op": "update", "id": str(c.body["id"]), "content": "Contact, again: " + joined}).
		must(t, http.StatusOK)
	e.call(u.token, "sessions", map[string]any{"op": "set_title", "session_id": sid, "title": "Contact " + joined}).must(t, http.StatusOK)
	e.call(u.token, "intents", map[string]any{"type": "syncSession", "session_id": sid}).must(t, http.StatusAccepted)
	e.call(u.token, "intents", map[string]any{"type": "backfillSession", "session_id": sid}).must(t, http.StatusAccepted)
	return u
}

// Personal data reaches no adapter, in any field of any event: each kind shared/redact
// detects, in each of its spellings (an email's %40 and full-width forms, a phone number
// percent-encoded in a URL's query, a card number as a JSON number), planted in every string
// a client can set (content text and parts, image URLs, file names, inline data, unknown
// parts, message names, tool call ids, names and arguments, tool_call_id, metadata keys and
// values, memories, a session's title, the tenant and the agent), is in no string of any
// webhook body, Mem0 request or Redis key and value, while every kind of event was delivered
// with pii_scrubbed true, each part kept its type, and tool calls their links.
func TestNoPersonalDataReachesAdapters(t *testing.T) {
	t.Parallel()
	e := newPIIEnv(t)
	users := map[redact.Kind]user{}
	for _, p := range piiPlants {
		users[p.kind] = e.plant(t, p)
	}
	e.drain(t)
	for _, p := range piiPlants {
		e.call(users[p.kind].token, "forget-user", map[string]any{}).must(t, http.StatusOK)
	}
	e.drain(t)

	// Every string of every payload, by the user it was for.
	payloads := map[uuid.UUID][]string{}
	bodies := e.rec.Bodies()
	for _, b := range bodies {
		var ev adapter.Event
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		jsonStrings(t, b, func(s string) { payloads[uuid.MustParse(ev.UserID)] = append(payloads[uuid.MustParse(ev.UserID)], s) })
	}
	mem0Requests := map[uuid.UUID]int{}
	for _, r := range e.mem0.Requests() {
		var uid uuid.UUID
		var out []string
		collect := func(s string) {
			out = append(out, s)
			if id, err := uuid.Parse(s); err == nil && uid == uuid.Nil {
				for _, u := range users {
					if u.id == id {
						uid = id
					}
				}
			}
		}
		for k, vs := range r.Query {
			collect(k)
			for _, v := range vs {
				collect(v)
			}
		}
		if len(r.Body) > 0 {
			jsonStrings(t, r.Body, collect)
		}
		if uid == uuid.Nil {
			t.Fatalf("a Mem0 request of no planted user: %s %s", r.Method, r.Path)
		}
		mem0Requests[uid]++
		payloads[uid] = append(payloads[uid], out...)
	}
	redisKeys := map[uuid.UUID]int{}
	ctx := context.Background()
	for _, u := range users {
		iter := e.redis.Scan(ctx, 0, "agentmem:{"+u.id.String()+"}*", 100).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			redisKeys[u.id]++
			payloads[u.id] = append(payloads[u.id], key)
			if v, err := e.redis.Get(ctx, key).Result(); err == nil {
				payloads[u.id] = append(payloads[u.id], v)
			} else if vs, err := e.redis.HGetAll(ctx, key).Result(); err == nil { // the user's windows
				for f, v := range vs {
					payloads[u.id] = append(payloads[u.id], f, v)
				}
			}
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
	}

	for _, p := range piiPlants {
		t.Run(string(p.kind), func(t *testing.T) {
			u := users[p.kind]
			b64 := base64.StdEncoding.EncodeToString([]byte("reach me at " + strings.Join(p.spellings, " / ")))
			needles := append([]string{b64}, p.needles...)
			all := 0
			for _, strs := range payloads {
				for _, s := range strs {
					all++
					for _, n := range needles {
						if strings.Contains(piiNorm(s), piiNorm(n)) {
							t.Errorf("a payload holds the %s (%q): %q", p.kind, n, s)
						}
					}
				}
			}
			// The payloads were there to look at: every kind of event, scrubbed.
			var types []string
			for _, ev := range e.rec.Events() {
				if ev.UserID != u.id.String() {
					continue
				}
				types = append(types, ev.Type)
				if !ev.PIIScrubbed {
					t.Errorf("%s event without pii_scrubbed", ev.Type)
				}
				if ev.Type == adapter.TurnCommitted && len(ev.Messages) > 0 {
					var parts []struct {
						Type string `json:"type"`
					}
					if err := json.Unmarshal(ev.Messages[0].Parts, &parts); err != nil {
						t.Fatalf("parts %s: %v", ev.Messages[0].Parts, err)
					}
					var got []string
					for _, part := range parts {
						got = append(got, part.Type)
					}
					if want := []string{"text", "image_url", "image_url", "input_audio", "file", "x_profile"}; !slices.Equal(got, want) {
						t.Errorf("part types %v, want %v", got, want)
					}
					if !strings.Contains(ev.Messages[0].Content, p.kind.Placeholder()) {
						t.Errorf("the user's text %q has no %s", ev.Messages[0].Content, p.kind.Placeholder())
					}
					// Tool call ids are redacted as names: two calls stay two, and the tool
					// message still names the call it answers.
					if calls := ev.Messages[1].ToolCalls; len(ev.Messages) != 3 || len(calls) != 2 || calls[0].ID == calls[1].ID ||
						ev.Messages[2].ToolCallID == nil || *ev.Messages[2].ToolCallID != calls[0].ID {
						t.Errorf("tool calls %+v, answered by %+v", calls, ev.Messages[2:])
					}
				}
			}
			slices.Sort(types)
			types = slices.Compact(types)
			want := []string{adapter.BackfillSession, adapter.MemoryCreated, adapter.MemoryUpdated, adapter.SummaryUpdated,
				adapter.TurnCommitted, adapter.UserForgotten, adapter.SyncSession}
			slices.Sort(want)
			if !slices.Equal(types, want) {
				t.Errorf("webhook events %v, want %v", types, want)
			}
			if mem0Requests[u.id] < 2 || redisKeys[u.id] == 0 || all == 0 {
				t.Errorf("%d Mem0 requests, %d Redis keys, %d strings in all", mem0Requests[u.id], redisKeys[u.id], all)
			}
		})
	}
}
