package app

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
)

// errNoRedactor fails a delivery in a process that has no redactor: content never leaves
// unredacted for want of one.
var errNoRedactor = errors.New("no PII redactor is configured (PII_HASH_SALT); content is never sent unredacted")

// scrubEvent is the one place an event's content passes before any adapter: every content
// field through PII redaction (shared/redact), which replaces emails, phone numbers, card
// numbers, IBANs and IP addresses by typed placeholders. Messages' content (a string, or the
// text of its content parts), tool call arguments and metadata; memories' content and
// metadata; the session's title. The salted
// hashes of what was removed go in the event's metadata ("pii", in the order found), and
// pii_scrubbed says it ran. ev's slices are copied, never written in place.
func scrubEvent(r *redact.Redactor, ev adapter.Event) (adapter.Event, error) {
	if r == nil {
		return ev, errNoRedactor
	}
	var found []redact.Finding
	text := func(s string) string {
		out, f := r.Text(s)
		found = append(found, f...)
		return out
	}
	// doc redacts every string of a JSON document; text that is not JSON (tool call arguments
	// as a model wrote them) is redacted as text.
	doc := func(raw []byte) ([]byte, error) {
		if len(raw) == 0 || string(raw) == "null" {
			return raw, nil
		}
		if !json.Valid(raw) {
			return []byte(text(string(raw))), nil
		}
		out, f, err := r.JSON(raw)
		if err != nil {
			return nil, err
		}
		found = append(found, f...)
		return out, nil
	}
	msgs := make([]memory.Message, len(ev.Messages))
	for i, m := range ev.Messages {
		if len(m.Parts) > 0 {
			// Content parts are what the event carries: the text of each text part is
			// redacted, other parts are kept as given. The joined text follows them.
			parts, f, err := r.Content(m.Parts)
			if err != nil {
				return ev, fmt.Errorf("redact content parts: %w", err)
			}
			found = append(found, f...)
			m.Parts = parts
			m.Content, _ = r.Text(m.Content)
		} else {
			m.Content = text(m.Content)
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]memory.ToolCall, len(m.ToolCalls))
			for k, c := range m.ToolCalls {
				args, err := doc([]byte(c.Function.Arguments))
				if err != nil {
					return ev, fmt.Errorf("redact tool call arguments: %w", err)
				}
				c.Function.Arguments = string(args)
				calls[k] = c
			}
			m.ToolCalls = calls
		}
		md, err := doc(m.Metadata)
		if err != nil {
			return ev, fmt.Errorf("redact message metadata: %w", err)
		}
		m.Metadata = md
		msgs[i] = m
	}
	ev.Messages = msgs
	mems := make([]adapter.Memory, len(ev.Memories))
	for i, m := range ev.Memories {
		m.Content = text(m.Content)
		md, err := doc(m.Metadata)
		if err != nil {
			return ev, fmt.Errorf("redact memory metadata: %w", err)
		}
		m.Metadata = md
		mems[i] = m
	}
	ev.Memories = mems
	if ev.Session != nil && ev.Session.Title != nil {
		s := *ev.Session
		t := text(*s.Title)
		s.Title = &t
		ev.Session = &s
	}
	ev.PIIScrubbed = true
	meta := make(map[string]any, len(ev.Metadata)+1)
	for k, v := range ev.Metadata {
		meta[k] = v
	}
	if len(found) > 0 {
		meta["pii"] = found
	}
	ev.Metadata = meta
	return ev, nil
}
