package redact

import (
	"testing"
)

func TestContent(t *testing.T) {
	r := testRedactor(t)
	for _, c := range []struct {
		in, want string
		findings int
	}{
		{`"mail a@b.co"`, `"mail [EMAIL]"`, 1},
		{`"nothing"`, `"nothing"`, 0},
		{`null`, `null`, 0},
		{`"\u0061@b.co \"q\""`, `"[EMAIL] \"q\""`, 1},
		{
			` [ {"type": "text", "text": "call 06 12 34 56 78"},  {"type":"image_url","image_url":{"url":"data:image/png;base64,MDYxMjM0NTY3OA=="}, "text": "a@b.co"} ] `,
			` [ {"type": "text", "text": "call [PHONE]"},  {"type":"image_url","image_url":{"url":"data:image/png;base64,MDYxMjM0NTY3OA=="}, "text": "a@b.co"} ] `,
			1,
		},
		// "type" after "text", unknown members kept, parts that are not objects kept.
		{`[{"text":"a@b.co","x":[1,"c@d.fr"],"type":"text"},7,"e@f.de"]`, `[{"text":"[EMAIL]","x":[1,"c@d.fr"],"type":"text"},7,"e@f.de"]`, 1},
		// Names given twice: every "text" of a part any "type" calls text.
		{`[{"type":"text","text":"a@b.co","text":"c@d.fr","type":"image_url"}]`, `[{"type":"text","text":"[EMAIL]","text":"[EMAIL]","type":"image_url"}]`, 2},
	} {
		t.Run(c.in, func(t *testing.T) {
			out, findings, err := r.Content([]byte(c.in))
			if err != nil || string(out) != c.want || len(findings) != c.findings {
				t.Errorf("Content(%s) = %s, %d findings, %v; want %s, %d", c.in, out, len(findings), err, c.want, c.findings)
			}
		})
	}
	for _, bad := range []string{``, `1`, `{"type":"text"}`, `"a@b.co" "x"`, `[{"type":"text","text":"a@b.co"}`, `"\ud800"`} {
		t.Run(bad, func(t *testing.T) {
			if out, _, err := r.Content([]byte(bad)); err == nil {
				t.Errorf("Content(%s) = %s, want an error", bad, out)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	r := testRedactor(t)
	in := `{"a@b.co": {"phone": "+33 6 12 34 56 78", "n": 4111111111111111, "list": ["x", "10.0.0.1", true, null]}}`
	want := `{"a@b.co": {"phone": "[PHONE]", "n": 4111111111111111, "list": ["x", "[IP]", true, null]}}`
	out, findings, err := r.JSON([]byte(in))
	if err != nil || string(out) != want || len(findings) != 2 {
		t.Errorf("JSON = %s, %v, %v; want %s", out, findings, err, want)
	}
	// Tool-call arguments are JSON inside a string: both layers stay valid.
	args := `{"arguments": "{\"email\":\"a@b.co\"}"}`
	out, _, err = r.JSON([]byte(args))
	if err != nil || string(out) != `{"arguments": "{\"email\":\"[EMAIL]\"}"}` {
		t.Errorf("JSON(%s) = %s, %v", args, out, err)
	}
	for _, bad := range []string{``, `{`, `{"a":1} {}`, `[1,]`} {
		t.Run(bad, func(t *testing.T) {
			if out, _, err := r.JSON([]byte(bad)); err == nil {
				t.Errorf("JSON(%s) = %s, want an error", bad, out)
			}
		})
	}
}
