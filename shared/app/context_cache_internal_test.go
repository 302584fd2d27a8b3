package app

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
)

// fullWindow is a cached window with every field set: content parts, tool calls, metadata,
// times to the nanosecond in and out of UTC.
func fullWindow() cachedWindow {
	sid := uuid.MustParse("0b6e9e52-9d0c-4c61-9a51-5b3c1b2e8f10")
	name, callID, state, notes := "lookup", "call_1", "paused", "# Notes\nLikes trains."
	expires := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	return cachedWindow{
		FilledAt: time.Date(2026, 11, 26, 10, 11, 12, 987654321, time.UTC),
		Messages: []cachedMessage{
			{SessionID: &sid, ID: uuid.MustParse("5f0c2c1e-0d7e-4f57-8a39-0c9a0c6c1a01").String(), Seq: 1, Role: "user", Content: "héllo 👋 \"quoted\"\n",
				Parts:     json.RawMessage(`[{"type":"text","text":"héllo"},{"type":"image","url":"https://example.com/a.png"}]`),
				Metadata:  json.RawMessage(`{"lang":"fr","n":[1,2.5,null]}`),
				CreatedAt: time.Date(2026, 11, 26, 9, 0, 0, 123456000, time.FixedZone("CET", 3600)), Tokens: 7},
			{ID: uuid.MustParse("5f0c2c1e-0d7e-4f57-8a39-0c9a0c6c1a02").String(), Seq: 2, Role: "assistant", Content: "",
				ToolCalls: []memory.ToolCall{{ID: "call_1", Type: "function",
					Function: memory.FunctionCall{Name: "lookup", Arguments: `{"q":"trains"}`}}},
				CreatedAt: time.Date(2026, 11, 26, 9, 0, 1, 0, time.UTC), Tokens: 12},
			{ID: uuid.MustParse("5f0c2c1e-0d7e-4f57-8a39-0c9a0c6c1a03").String(), Seq: 3, Role: "tool", Content: "{}", Name: &name, ToolCallID: &callID,
				ToolCalls: []memory.ToolCall{}, CreatedAt: time.Date(2026, 11, 26, 9, 0, 2, 1, time.UTC)},
		},
		Usage:      memory.Usage{Messages: 3, TokenEstimate: 19, Truncated: true, DroppedMessages: 1, DroppedParts: 2},
		UserMemory: map[string]json.RawMessage{"city": json.RawMessage(`{"name":"Lyon"}`), "n": json.RawMessage(`4`)},
		State:      &state,
		Notes:      &notes,
		Summary:    &memory.Summary{Content: "They talked of trains.", ThroughSeq: 40, UpdatedAt: time.Date(2026, 11, 25, 8, 0, 0, 5, time.UTC)},
		ExpiresAt:  &expires,
	}
}

// FuzzCachedWindow: whatever bytes Redis holds for a window (whoever can write to Redis can
// write any), decoding them never panics, and either gives a window or a miss. A window
// decoded renders in every format of get-context to JSON that reads back, and encodes again
// to a payload that decodes to itself.
func FuzzCachedWindow(f *testing.F) {
	full := fullWindow()
	bad := fullWindow()
	bad.Messages[0].Metadata = json.RawMessage(`{not json`)
	odd := fullWindow()
	odd.Messages[1].Role = "intruder"
	odd.UserMemory["k"] = json.RawMessage(`{`)
	for _, w := range []cachedWindow{full, bad, odd, {FilledAt: full.FilledAt, Messages: []cachedMessage{}, UserMemory: map[string]json.RawMessage{}},
		{FilledAt: full.FilledAt}} {
		p, err := cacheEncoding.Marshal(w)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
		f.Add(p[:len(p)/2])
	}
	for _, p := range []string{"", "\xff", "\xa0", "\x80", "\xf6", "\x83\x01\x02\x03", "\xa1\x68messages\x81\xa0",
		"\xa1\x68messages\x81\xa1\x68metadata\x41{", "\xa1\x69filled_at\x74" + "0000-01-01T00:00:00Z"} {
		f.Add([]byte(p))
	}
	session := uuid.MustParse("0b6e9e52-9d0c-4c61-9a51-5b3c1b2e8f10")
	f.Fuzz(func(t *testing.T, payload []byte) {
		w, msgs, ok := decodeWindow(payload)
		if !ok {
			return // a miss: the database answers
		}
		c := w.context(session, msgs)
		for _, format := range []string{FormatRaw, FormatOpenAI, FormatLangChain, FormatAnthropic} {
			b, err := json.Marshal(RenderContext(ContextOutput{Context: c, Format: format}))
			if err != nil || !json.Valid(b) {
				t.Fatalf("%s: a window decoded from the input does not render: %v", format, err)
			}
		}
		again, err := cacheEncoding.Marshal(w)
		if err != nil {
			t.Fatalf("a window decoded from the input does not encode: %v", err)
		}
		w2, _, ok := decodeWindow(again)
		if !ok {
			t.Fatal("a window decoded from the input, encoded again, does not decode")
		}
		if a, b := canonical(t, w), canonical(t, w2); !bytes.Equal(a, b) {
			t.Fatalf("a window decoded from the input changes when encoded and decoded again:\n%x\n%x", a, b)
		}
	})
}

// canonical is w's encoding with map keys sorted (the cache's own leaves them in Go's order).
func canonical(t *testing.T, w cachedWindow) []byte {
	t.Helper()
	m, err := cbor.EncOptions{Time: cbor.TimeRFC3339Nano, Sort: cbor.SortCoreDeterministic}.EncMode()
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A cached window comes back from its encoding exactly as it went, every field set or left
// empty: content parts, tool calls, metadata, times to the nanosecond in and out of UTC, nil
// beside empty.
func TestCachedWindowRoundTrips(t *testing.T) {
	sid := uuid.New()
	name, callID, state, notes := "lookup", "call_1", "paused", "# Notes\nLikes trains."
	expires := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	full := cachedWindow{
		FilledAt: time.Date(2026, 11, 26, 10, 11, 12, 987654321, time.UTC),
		Messages: []cachedMessage{
			{SessionID: &sid, ID: uuid.NewString(), Seq: 1, Role: "user", Content: "héllo 👋 \"quoted\"\n",
				Parts:     json.RawMessage(`[{"type":"text","text":"héllo"},{"type":"image","url":"https://example.com/a.png"}]`),
				Metadata:  json.RawMessage(`{"lang":"fr","n":[1,2.5,null]}`),
				CreatedAt: time.Date(2026, 11, 26, 9, 0, 0, 123456000, time.UTC), Tokens: 7},
			{ID: uuid.NewString(), Seq: 2, Role: "assistant", Content: "",
				ToolCalls: []memory.ToolCall{{ID: "call_1", Type: "function",
					Function: memory.FunctionCall{Name: "lookup", Arguments: `{"q":"trains"}`}}},
				CreatedAt: time.Date(2026, 11, 26, 9, 0, 1, 0, time.UTC), Tokens: 12},
			{ID: uuid.NewString(), Seq: 3, Role: "tool", Content: "{}", Name: &name, ToolCallID: &callID,
				ToolCalls: []memory.ToolCall{}, CreatedAt: time.Date(2026, 11, 26, 9, 0, 2, 1, time.UTC)},
		},
		Usage:      memory.Usage{Messages: 3, TokenEstimate: 19, Truncated: true, DroppedMessages: 1, DroppedParts: 2},
		UserMemory: map[string]json.RawMessage{"city": json.RawMessage(`{"name":"Lyon"}`), "n": json.RawMessage(`4`)},
		State:      &state,
		Notes:      &notes,
		Summary:    &memory.Summary{Content: "They talked of trains.", ThroughSeq: 40, UpdatedAt: time.Date(2026, 11, 25, 8, 0, 0, 5, time.UTC)},
		ExpiresAt:  &expires,
	}
	for name, w := range map[string]cachedWindow{
		"every field":     full,
		"empty":           {FilledAt: full.FilledAt, Messages: []cachedMessage{}, UserMemory: map[string]json.RawMessage{}},
		"nil collections": {FilledAt: full.FilledAt},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := cacheEncoding.Marshal(w)
			if err != nil {
				t.Fatal(err)
			}
			var got cachedWindow
			if err := cacheDecoding.Unmarshal(p, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("round trip\n got %+v\nwant %+v", got, w)
			}
		})
	}
}

// BenchmarkDecodeWindow decodes a cached window of 100 messages (a fifth with content parts and
// metadata): as a hit decoded it before windows were checked (the CBOR and the conversion of
// its messages), and checked.
func BenchmarkDecodeWindow(b *testing.B) {
	w := fullWindow()
	w.Messages = nil
	for i := range 100 {
		m := cachedMessage{ID: uuid.NewString(), Seq: int64(i + 1), Role: "user", Content: "a question of a few words, and a few more",
			CreatedAt: time.Now(), Tokens: 12}
		if i%2 == 1 {
			m.Role = "assistant"
		}
		if i%5 == 0 {
			m.Parts = json.RawMessage(`[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]`)
			m.Metadata = json.RawMessage(`{"client":"web","tokens":12}`)
		}
		w.Messages = append(w.Messages, m)
	}
	p, err := cacheEncoding.Marshal(w)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("unchecked", func(b *testing.B) {
		for b.Loop() {
			var got cachedWindow
			if err := cacheDecoding.Unmarshal(p, &got); err != nil {
				b.Fatal(err)
			}
			_ = fromCached(got.Messages)
		}
	})
	b.Run("checked", func(b *testing.B) {
		for b.Loop() {
			if _, _, ok := decodeWindow(p); !ok {
				b.Fatal("not a window")
			}
		}
	})
}
