package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestText pins the output of Text on the cases each rule is for.
func TestText(t *testing.T) {
	r := testRedactor(t)
	for _, c := range []struct{ in, want string }{
		// Emails: punctuation around them stays.
		{"write to john.doe@example.com.", "write to [EMAIL]."},
		{"<a@b.co>, 'k@example.jp'", "<[EMAIL]>, '[EMAIL]'"},
		{"icon@2x.png user@localhost", "icon@2x.png user@localhost"},
		{"a@b.com@c.com", "a@b.com@c.com"},
		{"ada@example.com.pdf, ada@example.com.Thanks, a@b.example.org.", "[EMAIL].pdf, [EMAIL].Thanks, [EMAIL]."},
		// Emails percent-encoded, as URLs carry them: the escapes go with the address.
		{"ada%40example.com", "[EMAIL]"},
		{"https://x.io/cb?email=ada%40example.com&ip=10.1.2.3", "https://x.io/cb?email=[EMAIL]&ip=[IP]"},
		{"/u/ada%40example.com/avatar.png", "/u/[EMAIL]/avatar.png"},
		{"?next=https%3A%2F%2Fx.io%2F%3Fe%3Dada%2540example.com%26ip%3D10.1.2.3", "?next=https%3A%2F%2Fx.io%2F%3Fe%3D[EMAIL]%26ip%3D[IP]"},
		{"%3Cada%40example.com%3E", "%3C[EMAIL]%3E"},
		{"ADA%40EXAMPLE.COM", "[EMAIL]"},
		{"icon%402x.png user%40localhost 100%40 %40example.com", "icon%402x.png user%40localhost 100%40 %40example.com"},
		// Emails with a full-width or small at sign, or all in full-width forms.
		{"ada＠example.com, ada﹫example.com", "[EMAIL], [EMAIL]"},
		{"ａｄａ．ｌｏｖｅｌａｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ。", "[EMAIL]。"},
		{"mail: ada＠example。com", "mail: [EMAIL]"},
		{"icon＠2x.png a＠b", "icon＠2x.png a＠b"},
		{"a@b.com＠c.com", "a@b.com＠c.com"},
		// Phones.
		{"call (555) 123-4567 now", "call [PHONE] now"},
		{"+44 (0)20 7946 0958", "[PHONE]"},
		{"06 12 34 56 78 06 98 76 54 32", "[PHONE] [PHONE]"},
		{"0612345678 and x0612345678", "[PHONE] and x[PHONE]"},
		{"ORD-0612345678", "ORD-0612345678"},
		{"order 0612345678", "order 0612345678"},
		{"+20000000 points", "+20000000 points"},
		{"2024-01-15 10:30:00", "2024-01-15 10:30:00"},
		// Cards: Luhn, network prefixes, grouping.
		{"4111 1111 1111 1111", "[CARD]"},
		{"4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"4111 1111-1111 1111", "4111 1111-1111 1111"},
		{"9111111111111111", "9111111111111111"},
		// IBANs: the check, the printed groups of four.
		{"DE89 3704 0044 0532 0130 00", "[IBAN]"},
		{"DE89 3704 0044 0532 0130 01", "DE89 3704 0044 0532 0130 01"},
		{"XDE89370400440532013000", "XDE89370400440532013000"},
		// IPs: ports, prefixes, paths and zones stay; versions and longer dotted runs are not IPs.
		{"10.0.0.1:8080 10.0.0.0/8 http://10.0.0.1/x", "[IP]:8080 [IP]/8 http://[IP]/x"},
		{"fe80::1%eth0 [2001:db8::1]:443", "[IP]%eth0 [[IP]]:443"},
		{"version 1.2.3.4, v1.2.3.4, 1.2.3.4.5, 256.1.1.1", "version 1.2.3.4, v1.2.3.4, 1.2.3.4.5, 256.1.1.1"},
		{"10:30:45 std::vector ::1", "10:30:45 std::vector ::1"},
		{"ssh root@10.0.0.1", "ssh root@[IP]"},
		// Values behind escapes: an escaped '+' and spaces, an escaped '=' before them.
		{"?tel=%2B44%2020%207946%200958&card=4111%201111%201111%201111", "?tel=[PHONE]&card=[CARD]"},
		{"tel=%2B44+20+7946+0958", "tel=[PHONE]"},
		{"q%3D10.1.2.3%26x", "q%3D[IP]%26x"},
		{"50%25 off, 100%, fe80::1%25eth0", "50%25 off, 100%, [IP]%25eth0"},
		{"ORD%2D0612345678", "ORD%2D0612345678"},
		// Nothing to do.
		{"", ""},
		{"no personal data here, 42 times", "no personal data here, 42 times"},
	} {
		t.Run(c.in, func(t *testing.T) {
			if got, _ := r.Text(c.in); got != c.want {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestFindingHash checks the documented hash: hex(HMAC-SHA256(salt, kind ":" canonical)),
// computed here with crypto/hmac directly, and that one value written two ways hashes alike.
func TestFindingHash(t *testing.T) {
	r := testRedactor(t)
	want := func(k Kind, canonical string) string {
		m := hmac.New(sha256.New, []byte(testSalt))
		m.Write([]byte(string(k) + ":" + canonical))
		return hex.EncodeToString(m.Sum(nil))
	}
	for _, c := range []struct {
		in        string
		kind      Kind
		canonical string
	}{
		{"mail John.Doe@Example.COM", Email, "john.doe@example.com"},
		{"+33 6 12 34 56 78", Phone, "+33612345678"},
		{"0033 6 12 34 56 78", Phone, "+33612345678"},
		{"+44 (0)20 7946 0958", Phone, "+442079460958"},
		{"(555) 123-4567", Phone, "5551234567"},
		{"4111-1111-1111-1111", Card, "4111111111111111"},
		{"de89 3704 0044 0532 0130 00", IBAN, "DE89370400440532013000"},
		{"2001:0DB8:0000:0000:0000:0000:0000:0001", IP, "2001:db8::1"},
		// Escaped and full-width spellings hash as the plain one.
		{"Ada%40Example.com", Email, "ada@example.com"},
		{"ada%2540example.com", Email, "ada@example.com"},
		{"ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ", Email, "ada@example.com"},
		{"ada﹫example。com", Email, "ada@example.com"},
		{"%2B44%2020%207946%200958", Phone, "+442079460958"},
	} {
		t.Run(c.in, func(t *testing.T) {
			_, findings := r.Text(c.in)
			if len(findings) != 1 || findings[0] != (Finding{Kind: c.kind, Hash: want(c.kind, c.canonical)}) {
				t.Errorf("Text(%q) findings %v, want one %s with the hash of %q", c.in, findings, c.kind, c.canonical)
			}
		})
	}
	other, err := New("another-salt-of-enough-length")
	if err != nil {
		t.Fatal(err)
	}
	_, a := r.Text("a@b.co")
	_, b := other.Text("a@b.co")
	if a[0].Hash == b[0].Hash {
		t.Error("two salts gave the same hash")
	}
}

// TestSalt checks the salt's rules and that the Redactor never prints it.
func TestSalt(t *testing.T) {
	if _, err := New("short"); !errors.Is(err, ErrSaltTooShort) {
		t.Errorf("New(short): %v", err)
	}
	if _, err := FromEnv(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), SaltEnv) {
		t.Errorf("FromEnv(unset): %v", err)
	}
	r, err := FromEnv(func(k string) string {
		if k == SaltEnv {
			return testSalt
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("start", "redactor", r)
	printed := fmt.Sprintf("%v %+v %#v %s", r, r, r, r) + logs.String()
	if strings.Contains(printed, testSalt) || strings.Contains(printed, fmt.Sprint([]byte(testSalt))) {
		t.Errorf("the salt is printed: %s", printed)
	}
}

// TestTextNoAlloc checks that text without personal data costs no allocation.
func TestTextNoAlloc(t *testing.T) {
	r := testRedactor(t)
	s := chatLines[7] + " " + chatLines[12] + " " + chatLines[14]
	if n := testing.AllocsPerRun(100, func() { r.Text(s) }); n != 0 {
		t.Errorf("Text allocates %.0f times on text without personal data", n)
	}
}

// TestFind checks offsets and order, across kinds found by the two passes.
func TestFind(t *testing.T) {
	s := "x 4111111111111111 a@b.co 10.0.0.1"
	got := Find(s)
	want := []Match{{Card, 2, 18}, {Email, 19, 25}, {IP, 26, 34}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Find(%q) = %v, want %v", s, got, want)
	}
}

// TestTextManyValues checks that the search for other occurrences, by rolling hashes past
// sixteen distinct values, finds the glued copies.
func TestTextManyValues(t *testing.T) {
	r := testRedactor(t)
	var in, want strings.Builder
	for i := range 40 {
		fmt.Fprintf(&in, "u%d@example.com x06123456%02d ", i, i)
		want.WriteString("[EMAIL] x[PHONE] ")
	}
	// The phone numbers glued to x are found only as copies of the detected ones.
	for i := range 40 {
		fmt.Fprintf(&in, "06123456%02d ", i)
		want.WriteString("[PHONE] ")
	}
	got, findings := r.Text(in.String())
	if got != want.String() || len(findings) != 120 {
		t.Errorf("Text = %q (%d findings), want %q", got, len(findings), want.String())
	}
}

// TestNextTrigger compares the eight-bytes-at-a-time search with a plain loop, on every
// offset of texts holding every byte value.
func TestNextTrigger(t *testing.T) {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
		all.WriteString("abcdefghij\x80\xff")
	}
	for _, s := range []string{all.String(), "héllo wörld / ; 9", strings.Repeat("x", 17) + ":"} {
		for i := 0; i <= len(s); i++ {
			want := i
			for want < len(s) && !trigger[s[want]] {
				want++
			}
			if got := nextTrigger(s, i); got != want {
				t.Fatalf("nextTrigger(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
	}
}
