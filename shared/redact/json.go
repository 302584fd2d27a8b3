package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// edit replaces doc[start:end] with text.
type edit struct {
	start, end int
	text       []byte
}

func newDecoder(doc []byte) *jsontext.Decoder {
	// Duplicate names are valid JSON (RFC 8259 only advises against them); redaction keeps
	// them as they are.
	return jsontext.NewDecoder(bytes.NewReader(doc), jsontext.AllowDuplicateNames(true))
}

// Content redacts a message's content, given as JSON: a string is redacted as Text does; an
// array of content parts (OpenAI Chat Completions' form) has the "text" of each part whose
// "type" is "text" redacted, and every other part, member and byte kept exactly as given
// (image_url, input_audio, file parts: their data is not text to scan, and base64 is not
// rewritten); a part naming "type" or "text" twice has every "text" redacted when any "type"
// is "text". null is kept. Anything else is an error, as is malformed JSON. The findings of
// every part are returned in order; with none, content itself is returned.
func (r *Redactor) Content(content []byte) ([]byte, []Finding, error) {
	dec := newDecoder(content)
	var edits []edit
	var findings []Finding
	var err error
	switch dec.PeekKind() {
	case '"':
		edits, findings, err = r.stringValue(dec, edits, findings)
	case '[':
		edits, findings, err = r.parts(dec)
	case 'n':
		_, err = dec.ReadValue()
	case 0:
		if _, err = dec.ReadToken(); err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	default:
		err = errors.New("is neither a string nor an array of parts")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("redact content: %w", err)
	}
	if err := end(dec); err != nil {
		return nil, nil, fmt.Errorf("redact content: %w", err)
	}
	return apply(content, edits), findings, nil
}

// parts reads an array of content parts.
func (r *Redactor) parts(dec *jsontext.Decoder) ([]edit, []Finding, error) {
	var edits []edit
	var findings []Finding
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, err
	}
	for {
		switch dec.PeekKind() {
		case ']':
			_, err := dec.ReadToken()
			return edits, findings, err
		case '{':
		default:
			// Not a part: kept as it is.
			if err := dec.SkipValue(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, nil, err
		}
		// A part named twice ("type" or "text" repeated) is read as every reader might:
		// it is a text part if any "type" says so, and then every "text" is redacted.
		isText := false
		type quoted struct {
			at    int
			value jsontext.Value
		}
		var texts []quoted
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, nil, err
			}
			switch n := name.String(); {
			case n == "type" && dec.PeekKind() == '"':
				tok, err := dec.ReadToken()
				if err != nil {
					return nil, nil, err
				}
				isText = isText || tok.String() == "text"
			case n == "text" && dec.PeekKind() == '"':
				v, err := dec.ReadValue()
				if err != nil {
					return nil, nil, err
				}
				texts = append(texts, quoted{at: int(dec.InputOffset()) - len(v), value: v.Clone()})
			default:
				if err := dec.SkipValue(); err != nil {
					return nil, nil, err
				}
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, nil, err
		}
		if !isText {
			continue
		}
		for _, q := range texts {
			var err error
			edits, findings, err = r.redactQuoted(q.value, q.at, edits, findings)
			if err != nil {
				return nil, nil, err
			}
		}
	}
}

// JSON redacts every string value of a JSON document, at any depth, and keeps everything else
// as it is: numbers, the bytes between values, and object member names (a name is a key
// chosen by the program that wrote the document, and renaming two to "[EMAIL]" would make
// them one): for free-form metadata and tool-call arguments. Malformed JSON is an error.
func (r *Redactor) JSON(doc []byte) ([]byte, []Finding, error) {
	dec := newDecoder(doc)
	var edits []edit
	var findings []Finding
	top := false
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			_, err := dec.ReadToken()
			if err == io.EOF && top {
				break
			}
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, nil, fmt.Errorf("redact json: %w", err)
		}
		if dec.StackDepth() == 0 {
			if top {
				return nil, nil, errors.New("redact json: more than one value")
			}
			top = true
		}
		var err error
		switch kind {
		case '"':
			depth := dec.StackDepth()
			container, length := dec.StackIndex(depth)
			if container == '{' && length%2 == 0 {
				// A member name.
				_, err = dec.ReadValue()
			} else {
				edits, findings, err = r.stringValue(dec, edits, findings)
			}
		case '{', '}', '[', ']':
			_, err = dec.ReadToken()
		default:
			_, err = dec.ReadValue()
		}
		if err != nil {
			return nil, nil, fmt.Errorf("redact json: %w", err)
		}
	}
	return apply(doc, edits), findings, nil
}

// stringValue reads the string value next in dec and redacts it.
func (r *Redactor) stringValue(dec *jsontext.Decoder, edits []edit, findings []Finding) ([]edit, []Finding, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, nil, err
	}
	return r.redactQuoted(v, int(dec.InputOffset())-len(v), edits, findings)
}

// redactQuoted redacts the JSON string v found at offset at.
func (r *Redactor) redactQuoted(v jsontext.Value, at int, edits []edit, findings []Finding) ([]edit, []Finding, error) {
	raw, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return nil, nil, err
	}
	n := len(findings)
	out, findings := r.appendText(findings, string(raw))
	if len(findings) == n {
		return edits, findings, nil
	}
	quoted, err := jsontext.AppendQuote(nil, out)
	if err != nil {
		return nil, nil, err
	}
	return append(edits, edit{start: at, end: at + len(v), text: quoted}), findings, nil
}

// end checks that nothing but white space follows the value.
func end(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			return errors.New("more than one value")
		}
		return err
	}
	return nil
}

// apply returns doc with edits (in order, disjoint) made, or doc itself when there are none.
func apply(doc []byte, edits []edit) []byte {
	if len(edits) == 0 {
		return doc
	}
	out := make([]byte, 0, len(doc))
	last := 0
	for _, e := range edits {
		out = append(out, doc[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, doc[last:]...)
}
