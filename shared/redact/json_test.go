package redact

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestDocument pins Document without a rule: every string and name at any depth redacted,
// numbers holding a value become its placeholder, inline data dropped, everything else kept
// byte for byte.
func TestDocument(t *testing.T) {
	r := testRedactor(t)
	png := base64.StdEncoding.EncodeToString([]byte("mail ada@example.com, call +44 20 7946 0958"))
	blob := strings.Repeat("QUJDRGVmZ2gxMjM0", 20) // 320 base64 characters: 240 bytes
	for _, c := range []struct {
		in, want string
		findings int
	}{
		{`{"phone": "+33 6 12 34 56 78", "n": 7, "list": ["x", "10.0.0.1", true, null]}`,
			`{"phone": "[PHONE]", "n": 7, "list": ["x", "[IP]", true, null]}`, 2},
		{`"mail a@b.co"`, `"mail [EMAIL]"`, 1},
		{`"\u0061\u0040b.co \"q\""`, `"[EMAIL] \"q\""`, 1},
		{`null`, `null`, 0},
		{` {"nothing": ["to", 1, "do"]} `, ` {"nothing": ["to", 1, "do"]} `, 0},
		// Names are redacted; two that redact alike stay two, never taking a name the object has.
		{`{"a@b.co": {"c@d.fr": 1, "[EMAIL]": 2}, "e@f.de": 3, "[EMAIL] 2": 4}`,
			`{"[EMAIL]": {"[EMAIL] 2": 1, "[EMAIL]": 2}, "[EMAIL] 3": 3, "[EMAIL] 2": 4}`, 3},
		// A number that is a card number.
		{`{"card": 4111111111111111, "amount": 12.5}`, `{"card": "[CARD]", "amount": 12.5}`, 1},
		// Content parts: every string of every part, whatever its type.
		{`[{"type":"text","text":"call 06 12 34 56 78"},{"type":"image_url","image_url":{"url":"https://x.io/a.png?e=ada%40example.com"}},` +
			`{"type":"file","file":{"filename":"ada@example.com.pdf"}}]`,
			`[{"type":"text","text":"call [PHONE]"},{"type":"image_url","image_url":{"url":"https://x.io/a.png?e=[EMAIL]"}},` +
				`{"type":"file","file":{"filename":"[EMAIL].pdf"}}]`, 3},
		// Inline data: a data: URL, whole or in text, and a long base64 run are dropped.
		{`{"url":"data:image/png;base64,` + png + `"}`, `{"url":"[DATA image/png 43 bytes]"}`, 0},
		{`"see ![x](data:text/plain,ada%40example.com) and <data:;base64,` + png + `>"`,
			`"see ![x]([DATA text/plain 15 bytes]) and <[DATA 43 bytes]>"`, 0},
		{`{"raw":"` + blob + `", "short":"QUJDRGVmZ2gxMjM0"}`, `{"raw":"[DATA 240 bytes]", "short":"QUJDRGVmZ2gxMjM0"}`, 0},
		{`{"` + blob + `": 1}`, `{"[DATA 240 bytes]": 1}`, 0},
		// Not inline data: prose after "data:", a run of one case, a media type that is a number.
		{`"data: the numbers, 0612345678"`, `"data: the numbers, [PHONE]"`, 1},
		{`"` + strings.Repeat("ab", 200) + `"`, `"` + strings.Repeat("ab", 200) + `"`, 0},
		{`"data:image/0612345678;base64,QUJD"`, `"[DATA 3 bytes]"`, 0},
	} {
		t.Run(c.in, func(t *testing.T) {
			out, findings, err := r.Document([]byte(c.in), nil)
			if err != nil || string(out) != c.want || len(findings) != c.findings {
				t.Errorf("Document(%s)\n = %s, %d findings, %v\nwant %s, %d", c.in, out, len(findings), err, c.want, c.findings)
			}
			if again, more, err := r.Document(out, nil); err != nil || string(again) != string(out) || len(more) != 0 {
				t.Errorf("Document(%s) = %s, then %s (%d findings, %v)", c.in, out, again, len(more), err)
			}
		})
	}
	for _, bad := range []string{``, ` `, `{`, `{"a":1} {}`, `[1,]`, `{"a"}`, `"\ud800"`, `[{"type":"text","text":"a@b.co"}`} {
		t.Run("bad "+bad, func(t *testing.T) {
			if out, _, err := r.Document([]byte(bad), nil); err == nil {
				t.Errorf("Document(%s) = %s, want an error", bad, out)
			}
		})
	}
}

// TestDocumentRule checks each treatment at the path a rule gives it, and the paths rules see.
func TestDocumentRule(t *testing.T) {
	r := testRedactor(t)
	png := base64.StdEncoding.EncodeToString([]byte("0612345678"))
	in := `{"id": "10.0.0.1", "seq": 4111111111111111, "agent": "0612345678", "args": "{\"to\":\"a@b.co\",\"x\":1}",` +
		` "bad_args": "to a@b.co", "data": "` + png + `", "list": [{"id": "10.0.0.1"}], "tenant": "acme"}`
	var paths []string
	rule := func(path []string) Treatment {
		paths = append(paths, strings.Join(path, "/"))
		switch strings.Join(path, "/") {
		case "id", "seq":
			return Keep
		case "agent", "tenant":
			return Named
		case "args", "bad_args":
			return Nested
		case "data":
			return Binary
		}
		return Scan
	}
	out, findings, err := r.Document([]byte(in), rule)
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := r.Name("0612345678")
	want := `{"id": "10.0.0.1", "seq": 4111111111111111, "agent": "` + agent + `", "args": "{\"to\":\"[EMAIL]\",\"x\":1}",` +
		` "bad_args": "to [EMAIL]", "data": "[DATA 10 bytes]", "list": [{"id": "[IP]"}], "tenant": "acme"}`
	if string(out) != want || len(findings) != 4 {
		t.Errorf("Document = %s, %d findings\nwant %s", out, len(findings), want)
	}
	if !strings.HasPrefix(agent, "[PHONE]#") || len(agent) != len("[PHONE]#")+16 {
		t.Errorf("Name = %q", agent)
	}
	wantPaths := []string{"id", "seq", "agent", "args", "bad_args", "data", "list/*/id", "tenant"}
	if !slices.Equal(paths, wantPaths) {
		t.Errorf("paths %q, want %q", paths, wantPaths)
	}
}

// TestName checks Name: names without personal data kept, two names with it kept apart, one
// name alike wherever it is redacted, and stable when redacted again.
func TestName(t *testing.T) {
	r := testRedactor(t)
	if got, f := r.Name("support-bot"); got != "support-bot" || f != nil {
		t.Errorf("Name(support-bot) = %q, %v", got, f)
	}
	a, fa := r.Name("0612345678")
	b, _ := r.Name("0698765432")
	again, _ := r.Name("0612345678")
	if a == b || a != again || len(fa) != 1 || fa[0].Kind != Phone || strings.Contains(a, "0612345678") {
		t.Errorf("Name: %q, %q, %q, %v", a, b, again, fa)
	}
	if got, f := r.Name(a); got != a || len(f) != 0 {
		t.Errorf("Name(%q) = %q, %v", a, got, f)
	}
	other, err := New("another-salt-of-enough-length")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := other.Name("0612345678"); o == a {
		t.Error("two salts gave the same name")
	}
	// A suffix made of digits only still redacts to itself: it follows '#'.
	for _, s := range []string{"[PHONE]#0612345678901234", "[IP]#4111111111111111", "[EMAIL]#be68539007547034"} {
		if got, f := r.Text(s); got != s || len(f) != 0 {
			t.Errorf("Text(%q) = %q", s, got)
		}
	}
}

// TestDataPlaceholder pins the placeholder of inline data: decoded sizes, the media types kept.
func TestDataPlaceholder(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"data:image/png;base64,QUJD", "[DATA image/png 3 bytes]"},
		{"DATA:Image/PNG;name=a%40b.co;base64,QUJDRA==", "[DATA image/png 4 bytes]"},
		{"data:,a%20b", "[DATA 3 bytes]"},
		{"data:audio/mp4;base64,QUJD", "[DATA audio/mp4 3 bytes]"},
		{"data:x/1234;base64,QUJD", "[DATA 3 bytes]"},
		{"QUJD\nRA==", "[DATA 4 bytes]"},
		{"not base64 at all", "[DATA 17 bytes]"},
	} {
		if got := DataPlaceholder(c.in); got != c.want {
			t.Errorf("DataPlaceholder(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzDocument checks Document on any bytes: an error, or valid JSON (when the input was)
// that redacts to itself, with findings only when something but inline data changed.
func FuzzDocument(f *testing.F) {
	for _, s := range []string{
		`"call 06 12 34 56 78"`, `null`, `[]`, `{}`, `1`, `"`, `[{"type":"text","text":"a@b.com"}]`,
		`[{"text":"a@b.com","type":"text"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]`,
		`{"a@b.com":1,"c@d.com":2,"[EMAIL]":3}`, `{"n":4111111111111111}`, `["x"] 1`, `"ada%40example.com"`,
		`{"a":{"a@b.co":{"a@b.co":"a@b.co"}}}`, `"data:,x data:;base64,"`,
	} {
		f.Add([]byte(s))
	}
	r := testRedactor(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _, err := r.Document(b, nil)
		if err != nil {
			return
		}
		if !json.Valid(out) && json.Valid(b) {
			t.Fatalf("Document(%q) = %q is not JSON", b, out)
		}
		again, more, err := r.Document(out, nil)
		if err != nil || string(again) != string(out) || len(more) != 0 {
			t.Fatalf("Document(%q) = %q, then %q, %d findings, %v", b, out, again, len(more), err)
		}
	})
}
