package app

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
)

// piiText holds one value of every kind the redactor finds.
const piiText = "ada@example.com +44 20 7946 0958 4111 1111 1111 1111 DE89 3704 0044 0532 0130 00 203.0.113.42"

// piiNeedles are the parts of piiText no redacted event may hold.
var piiNeedles = []string{"ada@", "7946", "4111", "3704", "203.0"}

// fillStrings sets every string of v (a pointer), at any depth, to piiText: string fields,
// pointers to strings, one element of each slice, one member of each map, and JSON
// documents (metadata, content parts) holding it in names and values. So a field added to the
// event later is filled too, without a word here.
func fillStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillStrings(v.Elem())
	case reflect.String:
		v.SetString(piiText)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillStrings(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			doc, _ := json.Marshal(map[string]any{piiText: []any{piiText, map[string]string{"x": piiText}}})
			v.SetBytes(doc)
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillStrings(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf(piiText), reflect.ValueOf(piiText))
		v.Set(m)
	}
}

// jsonPaths calls fn with the path ("messages/*/role") and text of every string and member
// name of doc.
func jsonPaths(t *testing.T, doc []byte, fn func(path, s string)) {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				fn(strings.Join(append(path, "(name)"), "/"), k)
				walk(append(slices.Clone(path), k), e)
			}
		case []any:
			for _, e := range x {
				walk(append(slices.Clone(path), "*"), e)
			}
		case string:
			fn(strings.Join(path, "/"), x)
		}
	}
	walk(nil, v)
}

// Every string an event can carry is redacted, found by reflection over adapter.Event so that
// a field added later is covered: with every string of the event set to personal data (content
// parts, tool calls and ids, names, metadata names and values, memories, the session, the
// tenant and the agent), the redacted event holds none, but in the two strings agentmem
// itself writes from a closed set (the event's type, a message's role), which pass as they
// are; tenants, agents and tool call ids are redacted as names, distinct and stable.
func TestScrubEventRedactsEveryString(t *testing.T) {
	r, err := redact.New("a-salt-of-more-than-sixteen-bytes")
	if err != nil {
		t.Fatal(err)
	}
	var ev adapter.Event
	fillStrings(reflect.ValueOf(&ev))
	ev.Messages[0].Parts = json.RawMessage(`[{"type":"text","text":"` + piiText + `"},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/a.png?e=ada%40example.com&ip=203.0.113.42"}},` +
		`{"type":"input_audio","input_audio":{"data":"QUJD","format":"wav"}},` +
		`{"type":"file","file":{"filename":"ada@example.com.pdf","file_data":"data:application/pdf;base64,QUJD"}}]`)
	ev.Messages[0].ToolCalls[0].Function.Arguments = `{"to":"ada@example.com"}`
	ev.Messages = append(ev.Messages, memory.Message{Role: "tool", ToolCallID: &ev.Messages[0].ToolCalls[0].ID})
	clean, err := scrubEvent(r, ev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(clean)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	jsonPaths(t, out, func(path, s string) {
		for _, n := range piiNeedles {
			if strings.Contains(s, n) {
				kept[path] = true
			}
		}
	})
	var paths []string
	for p := range kept {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	// The user's and the messages' ids pass as they are (see eventKeep): adapters address the
	// user and match messages by them.
	if want := []string{"messages/*/id", "messages/*/role", "removed/message_ids/*", "type", "user_id"}; !slices.Equal(paths, want) {
		t.Errorf("personal data left at %q, want only at %q\n%s", paths, want, out)
	}
	if !clean.PIIScrubbed || clean.Metadata["pii"] == nil || !strings.HasPrefix(*clean.TenantID, "[EMAIL] [PHONE] [CARD] [IBAN] [IP]#") {
		t.Errorf("scrubbed %v, tenant %q, metadata %v", clean.PIIScrubbed, *clean.TenantID, clean.Metadata)
	}
	if *clean.Agent != *clean.TenantID || *clean.Messages[1].ToolCallID != clean.Messages[0].ToolCalls[0].ID {
		t.Errorf("names redacted unalike: agent %q, tenant %q, call %q, answer %q", *clean.Agent, *clean.TenantID,
			clean.Messages[0].ToolCalls[0].ID, *clean.Messages[1].ToolCallID)
	}
	parts := string(clean.Messages[0].Parts)
	for _, want := range []string{`"input_audio":{"data":"[DATA 3 bytes]","format":"wav"}`, `"file_data":"[DATA application/pdf 3 bytes]"`,
		`"filename":"[EMAIL].pdf"`, `"url":"https://example.com/a.png?e=[EMAIL]&ip=[IP]"`} {
		if !strings.Contains(parts, want) {
			t.Errorf("parts %s lack %s", parts, want)
		}
	}
	// The event given is left as it was.
	if ev.Messages[0].Content != piiText || *ev.TenantID != piiText {
		t.Error("scrubEvent changed its input")
	}
}
