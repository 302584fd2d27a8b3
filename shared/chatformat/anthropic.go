package chatformat

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/agentmem/agentmem/shared/memory"
)

// AnthropicMessage is exactly a message of the Anthropic Messages API.
type AnthropicMessage struct {
	// Role is user or assistant.
	Role string `json:"role"`
	// Content is a string (one message whose content was a string) or content blocks.
	Content json.RawMessage `json:"content"`
}

// AnthropicBlock is a content block of the Messages API: text, image, document, tool_use or
// tool_result (each with its own fields only).
type AnthropicBlock struct {
	Type string `json:"type"`
	// Text is the text of a text block.
	Text *string `json:"text,omitempty"`
	// Source is the data of an image or document block; Title a document's file name.
	Source *AnthropicSource `json:"source,omitempty"`
	Title  string           `json:"title,omitempty"`
	// ID, Name and Input are a tool_use block's.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID and Content are a tool_result block's (Content a string or blocks; absent
	// when the result has nothing the API can carry).
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// AnthropicSource is where an image or document block's data is: base64 data with its media
// type, or a URL.
type AnthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// AnthropicConversation is a window rendered for the Messages API.
type AnthropicConversation struct {
	// System is the text of the window's system messages joined by blank lines, nil when
	// there is none.
	System   *string
	Messages []AnthropicMessage
	// Carried counts the stored messages rendered (in System or Messages) and Tokens sums
	// their token estimates.
	Carried, Tokens int
	// DroppedMessages counts the stored messages left out; DroppedParts the content parts of
	// the messages carried that have no Messages API form.
	DroppedMessages, DroppedParts int
}

// Anthropic renders a window for the Messages API:
//
//   - System messages leave the list: their text, joined by blank lines, is System (content
//     parts that are not text are dropped and counted).
//   - User messages keep their role; assistant tool calls become tool_use blocks (input the
//     arguments' JSON object; arguments that are not one are kept as {"arguments": "<as
//     given>"}, since input must be an object); each tool message becomes a tool_result block
//     of a user message, right after the assistant message that called it.
//   - Content parts map to blocks: text to text (empty or blank text is left out, the API
//     refuses it), image_url to an image (a data: URL of a JPEG, PNG, GIF or WebP image as
//     base64 data, an http(s) URL as a URL source), file with a PDF data: URL to a document.
//     Any other part (input_audio, a file by id, refusal, ...) has no Messages API form: it
//     is dropped and counted in DroppedParts.
//   - Tool ids the API refuses (other than A-Z a-z 0-9 _ -) are replaced, the same way in
//     tool_use and tool_result, by a name derived from them that it takes.
//   - A user or assistant message left with no content is dropped (and counted); so are the
//     messages before the first user message (an assistant message with its tool results),
//     since the API wants a user message first.
//   - Consecutive messages of one role merge into one message whose content is their blocks
//     in order (tool results first, as they follow their call). A message that merged with
//     none and had string content keeps a string.
func Anthropic(msgs []memory.Message) AnthropicConversation {
	var out AnthropicConversation
	var system []string
	type item struct {
		role     string
		blocks   []AnthropicBlock
		plain    bool // one text block from string content
		tokens   int
		dropped  int // content parts left out
		leadable bool
	}
	var items []item
	for _, m := range msgs {
		switch m.Role {
		case memory.RoleSystem:
			if m.Parts != nil {
				out.DroppedParts += nonTextParts(m.Parts)
			}
			if strings.TrimSpace(m.Content) == "" {
				out.DroppedMessages++
				continue
			}
			system = append(system, m.Content)
			out.Carried++
			out.Tokens += m.Tokens
		case memory.RoleTool:
			res := AnthropicBlock{Type: "tool_result", ToolUseID: anthropicToolID(derefOr(m.ToolCallID))}
			if m.Parts == nil && strings.TrimSpace(m.Content) != "" {
				res.Content = committed(m)
			}
			var dropped int
			if m.Parts != nil {
				var blocks []AnthropicBlock
				blocks, dropped = contentBlocks(m)
				if len(blocks) > 0 {
					res.Content, _ = json.Marshal(blocks)
				}
			}
			items = append(items, item{role: memory.RoleUser, blocks: []AnthropicBlock{res}, tokens: m.Tokens, dropped: dropped})
		default: // user, assistant
			blocks, dropped := contentBlocks(m)
			for _, c := range m.ToolCalls {
				input, ok := ToolArguments(c.Function.Arguments)
				if !ok {
					input, _ = json.Marshal(map[string]string{"arguments": c.Function.Arguments})
				}
				blocks = append(blocks, AnthropicBlock{Type: "tool_use", ID: anthropicToolID(c.ID), Name: c.Function.Name, Input: input})
			}
			if len(blocks) == 0 {
				out.DroppedMessages++
				continue
			}
			items = append(items, item{role: m.Role, blocks: blocks, plain: m.Parts == nil && len(m.ToolCalls) == 0,
				tokens: m.Tokens, dropped: dropped, leadable: m.Role == memory.RoleUser})
		}
	}
	// The first message must be a user's own (not tool results, whose call would be gone).
	lead := 0
	for lead < len(items) && !items[lead].leadable {
		out.DroppedMessages++
		lead++
	}
	out.Messages = []AnthropicMessage{}
	for i := lead; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].role == items[i].role {
			j++
		}
		var content json.RawMessage
		if j == i+1 && items[i].plain {
			content, _ = json.Marshal(*items[i].blocks[0].Text)
		} else {
			var blocks []AnthropicBlock
			for _, it := range items[i:j] {
				blocks = append(blocks, it.blocks...)
			}
			content, _ = json.Marshal(blocks)
		}
		for _, it := range items[i:j] {
			out.Carried++
			out.Tokens += it.tokens
			out.DroppedParts += it.dropped
		}
		out.Messages = append(out.Messages, AnthropicMessage{Role: items[i].role, Content: content})
		i = j
	}
	if len(system) > 0 {
		s := strings.Join(system, "\n\n")
		out.System = &s
	}
	return out
}

// contentBlocks maps a message's content to Messages API blocks, and counts the parts that
// have no such form.
func contentBlocks(m memory.Message) (blocks []AnthropicBlock, dropped int) {
	if m.Parts == nil {
		if strings.TrimSpace(m.Content) == "" {
			return nil, 0
		}
		text := m.Content
		return []AnthropicBlock{{Type: "text", Text: &text}}, 0
	}
	var parts []json.RawMessage
	if json.Unmarshal(m.Parts, &parts) != nil {
		return nil, 0
	}
	for _, p := range parts {
		b, ok, empty := partBlock(p)
		switch {
		case ok:
			blocks = append(blocks, b)
		case !empty:
			dropped++
		}
	}
	return blocks, dropped
}

// partBlock maps one content part of the Chat Completions API to a Messages API block. empty
// reports a text part with no text to carry (left out, but not a loss).
func partBlock(p json.RawMessage) (b AnthropicBlock, ok, empty bool) {
	var part struct {
		Type     string          `json:"type"`
		Text     *string         `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
		File     *struct {
			FileData string `json:"file_data"`
			Filename string `json:"filename"`
		} `json:"file"`
	}
	if json.Unmarshal(p, &part) != nil {
		return b, false, false
	}
	switch part.Type {
	case memory.PartText:
		if part.Text == nil || strings.TrimSpace(*part.Text) == "" {
			return b, false, true
		}
		return AnthropicBlock{Type: "text", Text: part.Text}, true, false
	case "image_url":
		// {"url": "...", "detail": "..."}, or (as LangChain also writes it) the URL alone.
		var url string
		var obj struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(part.ImageURL, &obj) == nil && obj.URL != "" {
			url = obj.URL
		} else if json.Unmarshal(part.ImageURL, &url) != nil {
			return b, false, false
		}
		if src, ok := imageSource(url); ok {
			return AnthropicBlock{Type: "image", Source: &src}, true, false
		}
	case "file":
		if part.File == nil {
			return b, false, false
		}
		if mt, data, ok := dataURL(part.File.FileData); ok && mt == "application/pdf" {
			return AnthropicBlock{Type: "document", Title: part.File.Filename,
				Source: &AnthropicSource{Type: "base64", MediaType: mt, Data: data}}, true, false
		}
	}
	return b, false, false
}

// anthropicImageTypes are the media types of the images the Messages API takes.
var anthropicImageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// imageSource is the Messages API source of an image URL: base64 data for a data: URL of an
// image type it takes, the URL for an http(s) URL.
func imageSource(url string) (AnthropicSource, bool) {
	if mt, data, ok := dataURL(url); ok {
		if anthropicImageTypes[mt] {
			return AnthropicSource{Type: "base64", MediaType: mt, Data: data}, true
		}
		return AnthropicSource{}, false
	}
	lower := strings.ToLower(url)
	if strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://") {
		return AnthropicSource{Type: "url", URL: url}, true
	}
	return AnthropicSource{}, false
}

// dataURL splits a base64 data: URL (data:<media type>[;params];base64,<data>) into its media
// type (lower case, without parameters) and data.
func dataURL(s string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(s, "data:")
	if !found {
		return "", "", false
	}
	head, data, found := strings.Cut(rest, ",")
	if !found || data == "" {
		return "", "", false
	}
	params := strings.Split(head, ";")
	if len(params) < 2 || !strings.EqualFold(params[len(params)-1], "base64") {
		return "", "", false
	}
	return strings.ToLower(strings.TrimSpace(params[0])), data, true
}

// nonTextParts counts the parts of an array of content parts that are not text.
func nonTextParts(parts json.RawMessage) int {
	var ps []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(parts, &ps) != nil {
		return 0
	}
	n := 0
	for _, p := range ps {
		if p.Type != memory.PartText {
			n++
		}
	}
	return n
}

// anthropicToolID is a tool call id the Messages API takes (^[a-zA-Z0-9_-]+$): the id itself
// when it fits, else its characters that fit followed by a digest of the whole id, so that
// distinct ids stay distinct and a call and its result still match.
func anthropicToolID(id string) string {
	ok := id != ""
	for i := 0; i < len(id) && ok; i++ {
		ok = idChar(id[i])
	}
	if ok {
		return id
	}
	var b strings.Builder
	for i := 0; i < len(id) && b.Len() < 64; i++ {
		if idChar(id[i]) {
			b.WriteByte(id[i])
		}
	}
	sum := sha256.Sum256([]byte(id))
	b.WriteString("_")
	b.WriteString(hex.EncodeToString(sum[:12]))
	return b.String()
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
