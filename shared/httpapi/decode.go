package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/shared/apierror"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBody {
		return nil, apierror.Newf(apierror.PayloadTooLarge, "the body is over %d bytes", MaxBody)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return nil, apierror.Wrap(apierror.InvalidRequest, "the body could not be read", err)
	}
	if len(body) > MaxBody {
		return nil, apierror.Newf(apierror.PayloadTooLarge, "the body is over %d bytes", MaxBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		// No body at all means no parameters, whatever the content type says.
		return []byte("{}"), nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || !(mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))) {
		return nil, apierror.New(apierror.UnsupportedMediaType, "the body must be JSON (Content-Type: application/json)")
	}
	if !utf8.Valid(body) {
		return nil, apierror.New(apierror.InvalidRequest, "the body is not valid UTF-8")
	}
	return body, nil
}

// decode reads a JSON object into dst strictly: unknown fields, names not spelled exactly,
// repeated names, unpaired surrogates, trailing data, NUL characters and invalid JSON are all
// 400s naming what is wrong.
func decode(body []byte, dst any) error {
	// encoding/json takes null for a struct and leaves it empty: only an object is a request.
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] != '{' {
		return apierror.New(apierror.InvalidRequest, "the body must be a JSON object")
	}
	if err := checkJSON(body, reflect.TypeOf(dst)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apierror.New(apierror.InvalidRequest, "the body must hold exactly one JSON object; found data after it")
	}
	if hasNUL(body) {
		return apierror.New(apierror.InvalidRequest, `strings must not contain the NUL character (\u0000)`)
	}
	return nil
}

func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return apierror.Newf(apierror.InvalidRequest, "malformed JSON at byte %d", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apierror.New(apierror.InvalidRequest, "malformed JSON: the body ends early")
	case errors.As(err, &typ):
		// Fields of the embedded app.ActingFor are top-level JSON fields: drop the Go type
		// name encoding/json puts in their path.
		field := strings.TrimPrefix(typ.Field, "ActingFor.")
		if field == "" {
			return apierror.Newf(apierror.InvalidRequest, "the body must be a JSON object, not %s", typ.Value)
		}
		return apierror.Invalid(field, typeMessage(typ))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apierror.Invalid(name, "is not a known field")
	}
	return apierror.Wrap(apierror.InvalidRequest, "malformed JSON", err)
}

// typeMessage says what is wrong with a JSON value its Go field cannot hold: the wrong kind of
// value, a number with a fraction or an exponent where an integer belongs, or a number beyond
// the field's range.
func typeMessage(e *json.UnmarshalTypeError) string {
	t := e.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	got := e.Value
	if num, ok := strings.CutPrefix(got, "number "); ok {
		switch {
		case isInteger(t) && strings.ContainsAny(num, ".eE"):
			return "must be an integer"
		case isInteger(t), t.Kind() == reflect.Float32, t.Kind() == reflect.Float64:
			return "is out of range"
		}
		got = "number"
	}
	return fmt.Sprintf("must be %s, not %s", jsonKind(t), got)
}

// jsonKind names the JSON value a Go type takes.
func jsonKind(t reflect.Type) string {
	if t == reflect.TypeFor[json.Number]() {
		return "a number"
	}
	if isInteger(t) {
		return "an integer"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// hasNUL reports whether a JSON text has a \u0000 escape inside a string. Raw control
// characters cannot appear in valid JSON strings, so escapes are the only way in.
func hasNUL(body []byte) bool {
	if !bytes.Contains(body, []byte(`u0000`)) {
		return false
	}
	in := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !in {
			if c == '"' {
				in = true
			}
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			if i+1 < len(body) && body[i+1] == 'u' && i+5 < len(body) && string(body[i+2:i+6]) == "0000" {
				return true
			}
			i++ // skip the escaped character
		}
	}
	return false
}

// opOf reads the "op" of a request to a function that takes several operations; the body is
// then decoded strictly into that operation's request (which declares the op field too).
func opOf(body []byte, allowed ...string) (string, error) {
	// Not strict about names here: the other fields belong to the operation's request. But
	// the body's text is checked first, and "op" is looked up by its exact name, so that "op"
	// twice, or "OP", is never taken for the op.
	if err := checkJSON(body, nil); err != nil {
		return "", err
	}
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] != '{' {
		return "", apierror.New(apierror.InvalidRequest, "the body must be a JSON object")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return "", decodeError(err)
	}
	raw, ok := members["op"]
	if !ok || string(raw) == "null" {
		return "", apierror.Invalid("op", "is required: one of "+strings.Join(allowed, ", "))
	}
	var op string
	if err := json.Unmarshal(raw, &op); err != nil {
		return "", apierror.Invalid("op", "must be a string, not "+jsonValueKind(raw))
	}
	for _, a := range allowed {
		if op == a {
			return a, nil
		}
	}
	return "", apierror.Invalid("op", "must be one of "+strings.Join(allowed, ", "))
}

// jsonValueKind names the kind of a JSON value as encoding/json's errors do.
func jsonValueKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	}
	return "number"
}
