package memory_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
)

func TestContentText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ parts, want string }{
		{`[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"b"}]`, "a\nb"},
		{`[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]`, ""},
		{`[{"type":"text","text":""},{"type":"text","text":"x"}]`, "\nx"},
		{`[{"type":"refusal","refusal":"no"}]`, ""},
	} {
		t.Run(tc.parts, func(t *testing.T) {
			got, err := memory.ContentText(json.RawMessage(tc.parts))
			if err != nil || got != tc.want {
				t.Errorf("ContentText(%s) = %q, %v; want %q", tc.parts, got, err, tc.want)
			}
		})
	}
	if _, err := memory.ContentText(json.RawMessage(`{"type":"text"}`)); err == nil {
		t.Error("ContentText of an object: no error")
	}
}

// A message writes its content as committed, and reads back the same.
func TestMessageJSON(t *testing.T) {
	t.Parallel()
	parts := `[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]`
	for _, m := range []memory.Message{
		{ID: uuid.NewString(), Seq: 1, Role: "user", Content: "plain", Metadata: json.RawMessage(`{}`), CreatedAt: time.Unix(1, 0).UTC()},
		{ID: uuid.NewString(), Seq: 2, Role: "user", Content: "look", Parts: json.RawMessage(parts), Metadata: json.RawMessage(`{}`), CreatedAt: time.Unix(2, 0).UTC()},
	} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		want := `"plain"`
		if m.Parts != nil {
			want = parts
		}
		if string(fields["content"]) != want {
			t.Errorf("content = %s, want %s", fields["content"], want)
		}
		if len(fields) != 9 {
			t.Errorf("%d fields, want the 9 of the raw format: %s", len(fields), b)
		}
		var back memory.Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("read back %+v, want %+v", back, m)
		}
	}
}

func TestAnswersOnly(t *testing.T) {
	t.Parallel()
	withText := calls(3, 20, "c1")
	withText.Content = "Let me look."
	in := []memory.Message{user(1, 5), calls(2, 9, "c0"), result(3, 7, "c0"), withText, result(5, 7, "c1"), say(6, 5)}
	got := memory.AnswersOnly(in)
	if seqs := seqsOf(got); !reflect.DeepEqual(seqs, []int64{1, 3, 6}) {
		t.Fatalf("kept seqs %v, want [1 3 6]", seqs)
	}
	if got[1].ToolCalls != nil {
		t.Errorf("tool calls kept: %+v", got[1].ToolCalls)
	}
	if want := memory.EstimateTokens("Let me look.", nil, nil, nil); got[1].Tokens != want {
		t.Errorf("tokens %d, want %d re-estimated without the calls", got[1].Tokens, want)
	}
}

// A turn about to be stored keeps the same answers as one read back.
func TestAnswersOnlyNewMessages(t *testing.T) {
	t.Parallel()
	call := []memory.ToolCall{{ID: "c1", Type: "function", Function: memory.FunctionCall{Name: "f"}}}
	id := func(s string) *string { return &s }
	in := []memory.NewMessage{
		{ID: id("s"), Role: memory.RoleSystem, Content: "Be brief."},
		{ID: id("u"), Role: memory.RoleUser, Content: "Hi."},
		{ID: id("a1"), Role: memory.RoleAssistant, ToolCalls: call},
		{ID: id("t1"), Role: memory.RoleTool, Content: "{}", ToolCallID: id("c1")},
		{ID: id("a2"), Role: memory.RoleAssistant, Content: "Looking.", ToolCalls: call},
		{ID: id("a3"), Role: memory.RoleAssistant, Content: "Done."},
	}
	var ids []string
	for _, m := range memory.NewAnswersOnly(in) {
		ids = append(ids, *m.ID)
		if m.ToolCalls != nil {
			t.Errorf("%s keeps its tool calls", *m.ID)
		}
	}
	if want := []string{"s", "u", "a2", "a3"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("kept %v, want %v", ids, want)
	}
}
