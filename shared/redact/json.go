package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Treatment is what Document does with one value of a document, as a Rule decides from where
// the value lies.
type Treatment uint8

const (
	// Scan redacts a string as Text does, after dropping the inline binary data it holds
	// (see Document); a number whose digits Text would replace becomes the placeholder, a
	// string. The default.
	Scan Treatment = iota
	// Keep leaves the value as it is: for what the program itself generated and typed (ids,
	// timestamps, sequence numbers, enumerations), which holds no personal data and must not
	// change.
	Keep
	// Named redacts a string as Name does: a name that scopes data in the system the document
	// goes to, which must stay distinct from other names once redacted.
	Named
	// Binary drops a string whatever it holds (DataPlaceholder): data that is binary by
	// definition (base64), where no scan can see the personal data.
	Binary
	// Nested redacts a string that holds a JSON document (tool-call arguments) as Document
	// does with no rule, and as Scan when it holds none.
	Nested
)

// Rule gives the treatment of the value at path: the member names from the document's root,
// "*" standing for an array's element. A nil Rule scans every value.
type Rule func(path []string) Treatment

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

// Document redacts a whole JSON document: every string and number as rule says for its
// path, and every member name as Scan does, at any depth. It is the structural way to redact
// what goes to a third party: nothing is read by field, so a field added later is redacted
// too, and only what rule names explicitly (Keep) passes as it is.
//
// Inline binary data in a scanned string or name is dropped, since its personal data is
// encoded where no scan sees it and rewriting its digits would corrupt it: a data: URL
// (RFC 2397), and a run of at least 256 base64 characters holding an upper-case letter, a
// lower-case letter and a digit. Each is replaced by DataPlaceholder's text, which keeps its
// media type and size.
//
// Two names of one object that redact alike ("a@b.co" and "c@d.fr", both "[EMAIL]") stay two:
// the later ones get " 2", " 3"... ("[EMAIL] 2"), never a name the object already has.
// Everything else is kept byte for byte: white space, literals, numbers without personal
// data, strings and names with nothing to remove. Malformed JSON is an error. The findings
// are in document order.
func (r *Redactor) Document(doc []byte, rule Rule) ([]byte, []Finding, error) {
	w := walker{r: r, rule: rule, dec: newDecoder(doc)}
	if err := w.value(); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, fmt.Errorf("redact json: %w", err)
	}
	if err := end(w.dec); err != nil {
		return nil, nil, fmt.Errorf("redact json: %w", err)
	}
	return apply(doc, w.edits), w.findings, nil
}

// walker is one run of Document.
type walker struct {
	r        *Redactor
	rule     Rule
	dec      *jsontext.Decoder
	path     []string
	edits    []edit
	findings []Finding
}

func (w *walker) treatment() Treatment {
	if w.rule == nil {
		return Scan
	}
	return w.rule(w.path)
}

// value reads and redacts the value next in the document.
func (w *walker) value() error {
	switch w.dec.PeekKind() {
	case '{':
		return w.object()
	case '[':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		w.path = append(w.path, "*")
		for w.dec.PeekKind() != ']' {
			if err := w.value(); err != nil {
				return err
			}
		}
		w.path = w.path[:len(w.path)-1]
		_, err := w.dec.ReadToken()
		return err
	case '"':
		v, err := w.dec.ReadValue()
		if err != nil {
			return err
		}
		return w.str(v, int(w.dec.InputOffset())-len(v))
	case '0':
		v, err := w.dec.ReadValue()
		if err != nil {
			return err
		}
		if w.treatment() == Keep {
			return nil
		}
		n := len(w.findings)
		var out string
		if out, w.findings = w.r.appendText(w.findings, string(v)); len(w.findings) == n {
			return nil
		}
		return w.replace(int(w.dec.InputOffset())-len(v), len(v), out)
	}
	// A literal, or the decoder's error (nothing more, malformed JSON).
	_, err := w.dec.ReadValue()
	return err
}

// object reads and redacts an object, its names included.
func (w *walker) object() error {
	if _, err := w.dec.ReadToken(); err != nil {
		return err
	}
	type renamed struct {
		edit int
		name string
	}
	var names map[string]bool // the names kept as they are
	var renames []renamed
	for w.dec.PeekKind() != '}' {
		v, err := w.dec.ReadValue()
		if err != nil {
			return err
		}
		if v.Kind() != '"' {
			return errors.New("a member name is not a string")
		}
		raw, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return err
		}
		name := string(raw)
		if out, changed := w.scan(name); changed {
			// The name's text is set once the object's names are all known.
			w.edits = append(w.edits, edit{start: int(w.dec.InputOffset()) - len(v), end: int(w.dec.InputOffset())})
			renames = append(renames, renamed{edit: len(w.edits) - 1, name: out})
		} else {
			if names == nil {
				names = map[string]bool{}
			}
			names[name] = true
		}
		w.path = append(w.path, name)
		err = w.value()
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
	}
	if _, err := w.dec.ReadToken(); err != nil {
		return err
	}
	for _, rn := range renames {
		name := rn.name
		for n := 2; names[name]; n++ {
			name = rn.name + " " + strconv.Itoa(n)
		}
		if names == nil {
			names = map[string]bool{}
		}
		names[name] = true
		q, err := jsontext.AppendQuote(nil, name)
		if err != nil {
			return err
		}
		w.edits[rn.edit].text = q
	}
	return nil
}

// str redacts the JSON string v found at offset at, as its treatment says.
func (w *walker) str(v jsontext.Value, at int) error {
	t := w.treatment()
	if t == Keep {
		return nil
	}
	raw, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return err
	}
	s := string(raw)
	out, changed := s, false
	switch t {
	case Named:
		n := len(w.findings)
		var f []Finding
		out, f = w.r.Name(s)
		w.findings = append(w.findings, f...)
		changed = len(w.findings) > n
	case Binary:
		if s != "" {
			out, changed = DataPlaceholder(s), true
		}
	case Nested:
		if jsontext.Value(raw).IsValid() {
			doc, f, err := w.r.Document(raw, nil)
			if err != nil {
				return err
			}
			w.findings = append(w.findings, f...)
			out, changed = string(doc), !bytes.Equal(doc, raw)
			break
		}
		out, changed = w.scan(s)
	default:
		out, changed = w.scan(s)
	}
	if !changed {
		return nil
	}
	return w.replace(at, len(v), out)
}

// scan is Scan's redaction of s: its inline data dropped, then Text.
func (w *walker) scan(s string) (string, bool) {
	out, dropped := dropInlineData(s)
	n := len(w.findings)
	out, w.findings = w.r.appendText(w.findings, out)
	return out, dropped || len(w.findings) > n
}

// replace makes the value of n bytes at offset at the JSON string of text.
func (w *walker) replace(at, n int, text string) error {
	q, err := jsontext.AppendQuote(nil, text)
	if err != nil {
		return err
	}
	w.edits = append(w.edits, edit{start: at, end: at + n, text: q})
	return nil
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
