package app

import (
	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/memory"
)

// piiFinding is one value redaction removed from an event's content: its kind and a salted
// hash, kept in the event's metadata for audit.
type piiFinding struct {
	Kind string `json:"kind"`
	Hash string `json:"hash"`
}

// redactText is the one place every text an adapter receives passes first: PII redaction
// replaces what it finds with typed placeholders and reports salted hashes of it. Until a
// redactor is wired in, text passes unchanged and scrubbed is false, which the event says
// (pii_scrubbed: false).
func redactText(s string) (out string, found []piiFinding, scrubbed bool) {
	return s, nil, false
}

// scrubEvent passes every content field of ev through redactText: messages' content and tool
// call arguments, memories' content, the session's title. It sets pii_scrubbed and puts the
// hashes of what was removed in the event's metadata ("pii"). ev's slices are copied, never
// written in place.
func scrubEvent(ev adapter.Event) adapter.Event {
	var found []piiFinding
	scrubbed := true
	text := func(s string) string {
		out, f, ok := redactText(s)
		found = append(found, f...)
		scrubbed = scrubbed && ok
		return out
	}
	msgs := make([]memory.Message, len(ev.Messages))
	for i, m := range ev.Messages {
		m.Content = text(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := make([]memory.ToolCall, len(m.ToolCalls))
			for k, c := range m.ToolCalls {
				c.Function.Arguments = text(c.Function.Arguments)
				calls[k] = c
			}
			m.ToolCalls = calls
		}
		msgs[i] = m
	}
	ev.Messages = msgs
	mems := make([]adapter.Memory, len(ev.Memories))
	for i, m := range ev.Memories {
		m.Content = text(m.Content)
		mems[i] = m
	}
	ev.Memories = mems
	if ev.Session != nil && ev.Session.Title != nil {
		s := *ev.Session
		t := text(*s.Title)
		s.Title = &t
		ev.Session = &s
	}
	// An event with no content at all has nothing to scrub: it says so only when a redactor
	// would have run.
	_, _, on := redactText("")
	ev.PIIScrubbed = scrubbed && on
	meta := make(map[string]any, len(ev.Metadata)+1)
	for k, v := range ev.Metadata {
		meta[k] = v
	}
	if len(found) > 0 {
		meta["pii"] = found
	}
	ev.Metadata = meta
	return ev
}
