package app

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
)

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
			{SessionID: &sid, ID: uuid.New(), Seq: 1, Role: "user", Content: "héllo 👋 \"quoted\"\n",
				Parts:     json.RawMessage(`[{"type":"text","text":"héllo"},{"type":"image","url":"https://example.com/a.png"}]`),
				Metadata:  json.RawMessage(`{"lang":"fr","n":[1,2.5,null]}`),
				CreatedAt: time.Date(2026, 11, 26, 9, 0, 0, 123456000, time.UTC), Tokens: 7},
			{ID: uuid.New(), Seq: 2, Role: "assistant", Content: "",
				ToolCalls: []memory.ToolCall{{ID: "call_1", Type: "function",
					Function: memory.FunctionCall{Name: "lookup", Arguments: `{"q":"trains"}`}}},
				CreatedAt: time.Date(2026, 11, 26, 9, 0, 1, 0, time.UTC), Tokens: 12},
			{ID: uuid.New(), Seq: 3, Role: "tool", Content: "{}", Name: &name, ToolCallID: &callID,
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
