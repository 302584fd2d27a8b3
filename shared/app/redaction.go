package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/redact"
)

// errNoRedactor fails a delivery in a process that has no redactor: content never leaves
// unredacted for want of one.
var errNoRedactor = errors.New("no PII redactor is configured (PII_HASH_SALT); content is never sent unredacted")

// scrubEvent is the one place an event passes before any adapter. The event is redacted
// whole, as the JSON the webhook sends (shared/redact's Document): every string, every
// number and every member name at any depth goes through PII redaction, which replaces
// emails, phone numbers, card numbers, IBANs and IP addresses by typed placeholders, and
// inline binary data (data: URLs, base64) is dropped for a placeholder giving its type and
// size; then the event is read back from that JSON. Nothing is read field by field, so a
// field added to the event (or to a content part, or to metadata) is redacted without a word
// here; eventRule only lists what passes untouched, the identifiers agentmem itself
// generates and types. The salted hashes of what was removed go in the event's metadata
// ("pii", in document order), and pii_scrubbed is set only once all of it is done; on any
// failure the event is not delivered.
func scrubEvent(r *redact.Redactor, ev adapter.Event) (adapter.Event, error) {
	if r == nil {
		return ev, errNoRedactor
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return ev, fmt.Errorf("encode the event: %w", err)
	}
	out, found, err := r.Document(raw, eventRule)
	if err != nil {
		return ev, fmt.Errorf("redact the event: %w", err)
	}
	var clean adapter.Event
	if err := json.Unmarshal(out, &clean); err != nil {
		return ev, fmt.Errorf("decode the redacted event: %w", err)
	}
	for i, m := range clean.Messages {
		if m.Parts != nil {
			// The text of content parts, joined (what Mem0 gets), may join two halves of a
			// value: redacted again.
			text, f := r.Text(m.Content)
			clean.Messages[i].Content = text
			found = append(found, f...)
		}
	}
	if clean.Metadata == nil {
		clean.Metadata = map[string]any{}
	}
	if len(found) > 0 {
		clean.Metadata["pii"] = found
	}
	clean.PIIScrubbed = true
	return clean, nil
}

// eventKeep lists the paths of an event's JSON that pass as they are: the identifiers
// agentmem generates and types (UUIDs, timestamps, seqs, counts, the event's type, a
// message's role, which the contract restricts to four words). They hold no personal data, and
// a receiver matches events by them. The user id passes too, whatever its shape: it is the key
// every adapter addresses the user's data by (the Redis cache's keys, which forget-user and
// get-context compute from the id as given; Mem0's user_id), so a deployment that must not
// show an adapter its users' emails names them by opaque ids. Message ids pass alike: a
// client's own ids (a framework's run ids), which receivers match messages by. A path not listed here is redacted, so a field added to
// the event is redacted until it is listed.
var eventKeep = map[string]bool{
	"id": true, "type": true, "occurred_at": true, "user_id": true, "session_id": true, "seq_from": true, "seq_to": true,
	"messages/*/id": true, "messages/*/seq": true, "messages/*/role": true, "messages/*/created_at": true,
	"messages/*/session_id": true,
	"memories/*/id":         true, "memories/*/created_at": true, "memories/*/updated_at": true, "memories/*/expires_at": true,
	"removed/message_ids/*": true, "removed/memory_ids/*": true,
	"session/id": true, "session/last_seq": true, "session/message_count": true, "session/created_at": true,
	"session/last_active_at": true, "session/expires_at": true,
	"page/number": true, "page/of": true,
}

// eventNamed lists the names of an event that the deployment and its clients choose, which
// may hold anything, and which must stay distinct once redacted: tenants and agents (Mem0
// scopes memories by them), and tool call ids (a tool message names the call it answers).
// They are redacted as names (redact.Name): "call [EMAIL]#1f0c…", one name the same
// wherever it appears, two names two.
var eventNamed = map[string]bool{"tenant_id": true, "agent": true, "session/agent": true, "memories/*/agent": true,
	"messages/*/tool_calls/*/id": true, "messages/*/tool_call_id": true}

// eventRule is the treatment of each value of an event's JSON: eventKeep and eventNamed; tool
// call arguments, JSON in a string, redacted as JSON; the data of audio, file and base64 image
// parts dropped whatever it looks like (input_audio.data, file.file_data, an image source's
// data); everything else scanned.
func eventRule(path []string) redact.Treatment {
	p := strings.Join(path, "/")
	switch {
	case eventKeep[p]:
		return redact.Keep
	case eventNamed[p]:
		return redact.Named
	case p == "messages/*/tool_calls/*/function/arguments":
		return redact.Nested
	case len(path) > 4 && path[0] == "messages" && path[2] == "content" &&
		(path[len(path)-1] == "data" || path[len(path)-1] == "file_data"):
		return redact.Binary
	}
	return redact.Scan
}
