package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/memory"
)

// Limits of a message's content parts.
const (
	maxContentParts = memory.MaxContentParts
	maxPartBytes    = 64 << 10
)

// messageContent is the content of a message as committed.
type messageContent struct {
	// Present is false when content is absent or null.
	Present bool
	// Text is the message's text: the string, or the text parts joined by newlines.
	Text string
	// Parts is the array of content parts, compacted, or nil for a string.
	Parts json.RawMessage
}

// contentField reads a message's content: a string, or an array of 1 to maxContentParts
// content parts as the Chat Completions API takes them. Each part is an object with a string
// type; a text part has a string text; any other part is kept as given, up to maxPartBytes of
// compact JSON. Problems are added to f under field (and field[k].type, field[k].text, ...).
func contentField(f *apierror.Fields, field string, raw json.RawMessage) messageContent {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return messageContent{}
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			f.Add(field, "must be a string or an array of content parts")
			return messageContent{}
		}
		return messageContent{Present: true, Text: s}
	case '[':
	default:
		f.Addf(field, "must be a string or an array of content parts, not %s", jsonKindOf(raw))
		return messageContent{}
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		f.Add(field, "must be a string or an array of content parts")
		return messageContent{}
	}
	if len(parts) < 1 || len(parts) > maxContentParts {
		f.Addf(field, "must hold 1 to %d content parts", maxContentParts)
		return messageContent{}
	}
	before := len(*f)
	texts := make([]string, 0, len(parts))
	for k, p := range parts {
		pf := fmt.Sprintf("%s[%d]", field, k)
		p = bytes.TrimSpace(p)
		if len(p) == 0 || p[0] != '{' {
			f.Addf(pf, "must be a content part (an object with a type), not %s", jsonKindOf(p))
			continue
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(p, &members); err != nil {
			f.Add(pf, "must be a content part (an object with a type)")
			continue
		}
		var typ string
		switch t, ok := members["type"]; {
		case !ok || string(t) == "null":
			f.Add(pf+".type", "is required")
			continue
		case json.Unmarshal(t, &typ) != nil:
			f.Addf(pf+".type", "must be a string, not %s", jsonKindOf(t))
			continue
		case typ == "":
			f.Add(pf+".type", "must not be empty")
			continue
		}
		if typ == memory.PartText {
			var text string
			switch t, ok := members["text"]; {
			case !ok || string(t) == "null":
				f.Add(pf+".text", "is required on a text part")
			case json.Unmarshal(t, &text) != nil:
				f.Addf(pf+".text", "must be a string, not %s", jsonKindOf(t))
			default:
				texts = append(texts, text)
			}
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, p); err != nil || buf.Len() > maxPartBytes {
			f.Addf(pf, "must be at most %d bytes of JSON", maxPartBytes)
		}
	}
	if len(*f) != before {
		return messageContent{}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		f.Add(field, "must be a string or an array of content parts")
		return messageContent{}
	}
	return messageContent{Present: true, Text: strings.Join(texts, "\n"), Parts: buf.Bytes()}
}

// jsonKindOf names the kind of a JSON value as the errors of encoding/json do ("must be a
// string, not number").
func jsonKindOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
