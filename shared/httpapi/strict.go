package httpapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentmem/agentmem/shared/apierror"
)

// checkJSON holds a request body to the rules encoding/json does not enforce, before
// encoding/json binds it (whose error messages the rest of decode keeps):
//
//   - a member name of a request's own objects matches a field exactly (encoding/json would
//     take "SESSION_ID" for session_id);
//   - no object, at any depth, names a member twice: not the request's own objects, nor the
//     free-form ones (metadata, filter, value), where a repeated key would be ambiguous (one
//     reader keeps the first, another the last);
//   - every string is valid Unicode: an unpaired UTF-16 surrogate escape ("\ud800"), which
//     encoding/json would silently turn into U+FFFD, is refused wherever it is.
//
// Each refusal is a 400 naming the field path ("messages[0].metadata.lang"). It reads the text
// with jsontext, the tokenizer of the Go team's JSON v2 (github.com/go-json-experiment/json),
// which checks names for duplicates and escapes for surrogates as it goes. t is the Go type the
// body will be decoded into; nil checks only duplicates and Unicode. A body that is not JSON
// at all passes, for encoding/json to report as malformed.
func checkJSON(body []byte, t reflect.Type) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	var stack []frame
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return tokenError(err, body, stack)
		}
		kind := tok.Kind()
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantName {
			if kind == '}' {
				stack = stack[:len(stack)-1]
			} else {
				name := tok.String()
				top.name, top.wantName = name, false
				top.next = nil
				if top.fields != nil {
					ft, ok := top.fields[name]
					if !ok {
						return apierror.Invalid(fieldPath(stack), "is not a known field")
					}
					top.next = ft
				} else if top.t != nil {
					top.next = top.t.Elem() // a map's values
				}
				continue
			}
		} else {
			var vt reflect.Type
			if top != nil {
				vt = top.next
			} else {
				vt = t
			}
			switch kind {
			case '{':
				stack = append(stack, objectFrame(vt))
				continue
			case '[':
				stack = append(stack, arrayFrame(vt))
				continue
			case ']':
				stack = stack[:len(stack)-1]
			}
		}
		// A value ended: the enclosing object wants a name next, the enclosing array counts it.
		if len(stack) == 0 {
			return nil // trailing data, if any, is encoding/json's to report
		}
		if top := &stack[len(stack)-1]; top.object {
			top.wantName = true
		} else {
			top.index++
		}
	}
}

// frame is one open object or array on the way down a body.
type frame struct {
	object   bool
	t        reflect.Type            // the container's Go type after pointers; nil: free-form
	fields   map[string]reflect.Type // a struct's fields by exact JSON name; nil: any name
	next     reflect.Type            // the Go type of the value being read
	wantName bool
	name     string // the member being read (objects)
	index    int    // the element being read (arrays)
}

func objectFrame(t reflect.Type) frame {
	f := frame{object: true, wantName: true}
	switch t = typed(t); {
	case t == nil:
	case t.Kind() == reflect.Struct:
		f.t, f.fields = t, structFields(t)
	case t.Kind() == reflect.Map:
		f.t = t
	}
	return f
}

func arrayFrame(t reflect.Type) frame {
	f := frame{}
	if t = typed(t); t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		f.t, f.next = t, t.Elem()
	}
	return f
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// typed is t without pointers, or nil when its JSON is free-form: an interface, or a type that
// decodes itself (json.RawMessage keeps whatever it is given).
func typed(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface ||
		reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	return t
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// structFields maps the JSON names of t's fields, as encoding/json names them (the tag's name,
// else the field's; embedded structs' fields promoted), to their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	addFields(m, t)
	fieldCache.Store(t, m)
	return m
}

func addFields(m map[string]reflect.Type, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			if ft := sf.Type; ft.Kind() == reflect.Struct {
				addFields(m, ft)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		m[name] = sf.Type
	}
}

// fieldPath names the value being read, as the errors of the contract do: "messages[2].role".
func fieldPath(stack []frame) string {
	var b strings.Builder
	for _, f := range stack {
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.name)
		} else {
			fmt.Fprintf(&b, "[%d]", f.index)
		}
	}
	return b.String()
}

// tokenError turns what jsontext refused into a 400 naming the field, or nil when it is a
// syntax error encoding/json reports as well.
func tokenError(err error, body []byte, stack []frame) error {
	var serr *jsontext.SyntacticError
	if !errors.As(err, &serr) {
		return nil // io.EOF (an empty body) and the like: encoding/json's to report
	}
	path := pointerPath(serr.JSONPointer, stack)
	switch {
	case errors.Is(serr.Err, jsontext.ErrDuplicateName):
		if path == "" {
			return apierror.New(apierror.InvalidRequest, "an object names a member twice")
		}
		return apierror.Invalid(path, "is given twice: every member name of an object must be unique")
	case json.Valid(body):
		// Valid JSON to encoding/json, and (readBody saw to it) valid UTF-8: what jsontext
		// refuses is then an escape that is not a character, an unpaired UTF-16 surrogate.
		const msg = `holds an unpaired UTF-16 surrogate escape (such as \ud800): strings must be valid Unicode`
		if path == "" {
			return apierror.New(apierror.InvalidRequest, "the body "+msg)
		}
		return apierror.Invalid(path, msg)
	}
	return nil
}

// pointerPath writes a JSON pointer in the contract's form, telling array indexes from member
// names by the containers open at the error.
func pointerPath(p jsontext.Pointer, stack []frame) string {
	var b strings.Builder
	i := 0
	for tok := range p.Tokens() {
		if i < len(stack) && !stack[i].object {
			if _, err := strconv.Atoi(tok); err == nil {
				b.WriteString("[" + tok + "]")
				i++
				continue
			}
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
		i++
	}
	return b.String()
}
