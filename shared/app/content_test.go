package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/apierror"
)

func TestContentField(t *testing.T) {
	t.Parallel()
	big := `{"type":"file","file":{"file_data":"` + strings.Repeat("a", maxPartBytes-39) + `"}}`
	if len(big) != maxPartBytes {
		t.Fatalf("big part is %d bytes", len(big))
	}
	cases := []struct {
		name, raw string
		present   bool
		text      string
		parts     string // compact; "" for none
		field     string // the first error's field; "" for none
	}{
		{"absent", ``, false, "", "", ""},
		{"null", `null`, false, "", "", ""},
		{"string", `"hi\nthere"`, true, "hi\nthere", "", ""},
		{"empty string", `""`, true, "", "", ""},
		{"parts, compacted", `[ {"type": "text", "text": "a"}, {"type":"image_url", "image_url": {"url": "https://x/y.png"}}, {"type":"text","text":"b"} ]`,
			true, "a\nb", `[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"text","text":"b"}]`, ""},
		{"no text part", `[{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]`, true, "", `[{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]`, ""},
		{"part of exactly 64 KiB", `[` + big + `]`, true, "", `[` + big + `]`, ""},
		{"part over 64 KiB", `[` + strings.Replace(big, `"a`, `"aa`, 1) + `]`, false, "", "", "content[0]"},
		{"a number", `5`, false, "", "", "content"},
		{"an object", `{"type":"text","text":"a"}`, false, "", "", "content"},
		{"empty array", `[]`, false, "", "", "content"},
		{"101 parts", `[` + strings.Repeat(`{"type":"text","text":"x"},`, 100) + `{"type":"text","text":"x"}]`, false, "", "", "content"},
		{"no type", `[{"type":"text","text":"a"},{"text":"b"}]`, false, "", "", "content[1].type"},
		{"type not a string", `[{"type":["text"]}]`, false, "", "", "content[0].type"},
		{"no text", `[{"type":"text"}]`, false, "", "", "content[0].text"},
		{"text not a string", `[{"type":"text","text":true}]`, false, "", "", "content[0].text"},
		{"part not an object", `[{"type":"text","text":"a"},1]`, false, "", "", "content[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var f apierror.Fields
			got := contentField(&f, "content", json.RawMessage(tc.raw))
			switch {
			case tc.field == "" && len(f) > 0:
				t.Fatalf("errors %v", f)
			case tc.field != "" && (len(f) == 0 || f[0].Field != tc.field):
				t.Fatalf("errors %v, want one for %s", f, tc.field)
			}
			if got.Present != tc.present || got.Text != tc.text || string(got.Parts) != tc.parts {
				t.Errorf("got %+v, want present %v text %q parts %s", got, tc.present, tc.text, tc.parts)
			}
		})
	}
}
