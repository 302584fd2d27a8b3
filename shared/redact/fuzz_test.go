package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are texts at the edges of the rules, beside the labelled set.
var fuzzSeeds = []string{
	"", "@", "a@b", "a@b.co", "a@b.com@c.com", "x@example.org::1:2:3", "[EMAIL]x@y.com",
	"0612345678 x0612345678-0698765432", "+", "+1", "(", "(0)", "+44 (0)", "1.2.3.4.5",
	"::", ":::", "::1", "1::2", "fe80::1%", "fe80::1%eth0", "1.2.3.4:", "1.2.3.4/", "DE89",
	"DE89 3704 0044 0532 0130 0", "4111 1111 1111 1111 1111", "\u00a0\u202f", "0\u00a0",
	"01 23 45 67 89 01 23 45 67 89 01 23 45 67 89", "\xff\xfe@\xff.com", "é@é.fr",
	strings.Repeat("1 ", 200), strings.Repeat(":", 100), strings.Repeat("a@", 50) + "b.com",
	strings.Repeat("0612345678-", 20), "%", "%4", "%40", "a%40b.co", "a%2540b.co", "%2B44%2020%207946%200958",
	"q=%2B44+20+7946+0958", "%3D10.0.0.1%26", "%%40a.co", "ａ＠ｂ．ｃｏ", "a＠b.co＠c.co", "a﹫b。co", "\xef\xbc",
}

// FuzzRedact checks Text on any input: it does not panic; no value it removed is left in the
// output; the output redacts to itself; valid UTF-8 stays valid; there is one placeholder
// more in the output per finding, and each finding's hash is 64 hex digits.
func FuzzRedact(f *testing.F) {
	for _, row := range loadLabelled(f) {
		f.Add(row.Text)
	}
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	r := testRedactor(f)
	f.Fuzz(func(t *testing.T, s string) {
		var removed []string
		out, findings := r.run(nil, s, func(_ Kind, v string) { removed = append(removed, v) })
		if len(removed) != len(findings) {
			t.Fatalf("%d values removed, %d findings", len(removed), len(findings))
		}
		for _, v := range removed {
			if strings.Contains(out, v) {
				t.Fatalf("Text(%q) = %q still holds %q", s, out, v)
			}
		}
		if again, more := r.Text(out); again != out || len(more) != 0 {
			t.Fatalf("Text(%q) = %q, but Text(%q) = %q (%d findings)", s, out, out, again, len(more))
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q is not valid UTF-8", s, out)
		}
		for _, k := range Kinds {
			n := 0
			for _, f := range findings {
				if f.Kind == k {
					n++
				}
				if len(f.Hash) != 64 || strings.Trim(f.Hash, "0123456789abcdef") != "" {
					t.Fatalf("hash %q", f.Hash)
				}
			}
			ph := k.Placeholder()
			if got := strings.Count(out, ph) - strings.Count(s, ph); got != n {
				t.Fatalf("Text(%q) = %q: %d more %s, %d findings", s, out, got, ph, n)
			}
		}
		if len(findings) == 0 && out != s {
			t.Fatalf("Text(%q) = %q without findings", s, out)
		}
	})
}
