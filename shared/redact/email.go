package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"
)

// Limits of RFC 5321: a local part of at most 64 characters, a domain of at most 253 (255
// with the dots of its encoding) in labels of at most 63. (The RFC counts octets of ASCII; an
// address in full-width forms or in another script is counted in characters.)
const (
	maxLocal  = 64
	maxDomain = 253
	maxLabel  = 63
)

// isLocalByte reports whether c may be part of an email's local part. RFC 5322 allows more
// (!#$&*/=?^`{|}~), but in chat those are punctuation around an address far more often than
// part of one. An apostrophe is kept inside ("o'connor@...") but not at the start, where it
// is a quotation mark ('a@b.cd').
func isLocalByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-' || c == '\''
}

func isDomainByte(c byte) bool { return isAlnum(c) || c == '-' || c == '.' }

func letterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// foldWidth reads the full-width forms of ASCII (U+FF01 to U+FF5E, what East Asian input
// methods type in full-width mode: "ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ") as the ASCII they stand
// for, the ideographic full stops IDNA takes for dots (U+3002, U+FF61) as '.', and the small
// commercial at (U+FE6B) as '@'; any other rune is itself.
func foldWidth(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	case r == 0x3002 || r == 0xFF61:
		return '.'
	case r == 0xFE6B:
		return '@'
	}
	return r
}

// runeAt is the rune of s at i, folded (foldWidth), and its width in bytes.
func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return foldWidth(r), n
}

// runeBefore is the rune of s ending at i, folded (foldWidth), and its width in bytes.
func runeBefore(s string, i int) (rune, int) {
	if c := s[i-1]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, n := utf8.DecodeLastRuneInString(s[:i])
	return foldWidth(r), n
}

// isLocalRune and isDomainRune are isLocalByte and isDomainByte for a folded rune: beyond
// ASCII, letters and digits of any script.
func isLocalRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isLocalByte(byte(r))
	}
	return letterOrDigit(r)
}

func isDomainRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isDomainByte(byte(r))
	}
	return letterOrDigit(r)
}

// wideAt is the width in bytes of the at sign other than '@' that starts s: the full-width
// '＠' (U+FF20) and the small '﹫' (U+FE6B) that some keyboards type and some people write to
// slip an address past filters; 0 when s starts with neither.
func wideAt(s string) int {
	if strings.HasPrefix(s, "＠") || strings.HasPrefix(s, "﹫") {
		return 3
	}
	return 0
}

// atSigns finds the at signs of a text in order. It remembers the next of each spelling it
// found, so that the search for one spelling never rescans the text for the other.
type atSigns struct {
	s           string
	ascii, wide int // the next one at or after the last offset asked; len(s) when none; -1 before the first search
}

// next returns the index and width of the first at sign at or after off, or -1.
func (a *atSigns) next(off int) (int, int) {
	if a.ascii < off {
		a.ascii = len(a.s)
		if i := strings.IndexByte(a.s[off:], '@'); i >= 0 {
			a.ascii = off + i
		}
	}
	if a.wide < off {
		// Both wide spellings start with the byte 0xEF.
		a.wide = len(a.s)
		for i := off; i < len(a.s); i++ {
			j := strings.IndexByte(a.s[i:], 0xEF)
			if j < 0 {
				break
			}
			if i += j; wideAt(a.s[i:]) > 0 {
				a.wide = i
				break
			}
		}
	}
	switch {
	case a.ascii < a.wide:
		return a.ascii, 1
	case a.wide < len(a.s):
		return a.wide, 3
	}
	return -1, 0
}

// findEmails appends the emails of s, in order: from each at sign ('@', or its full-width
// and small forms), the longest run of local-part characters before it and of domain
// characters after it. Letters and digits beyond ASCII are allowed on both sides (RFC 6531
// addresses, IDN domains), and full-width forms count as the ASCII they stand for. A run
// longer than its RFC limit (in characters), a domain without a dot or whose last label is
// not a top-level domain, or an address glued to another at sign is not an email. An address
// percent-encoded ("ada%40example.com") is found in the decoded text (findEncoded).
func findEmails(s string, out []Match) []Match {
	ats := atSigns{s: s, ascii: -1, wide: -1}
	for off := 0; off < len(s); {
		at, width := ats.next(off)
		if at < 0 {
			break
		}
		off = at + width
		a, ok := localStart(s, at)
		if !ok {
			continue
		}
		b, ok := domainEnd(s, at+width)
		if !ok {
			continue
		}
		out = append(out, Match{Kind: Email, Start: a, End: b})
		off = b
	}
	return out
}

// localStart returns where the local part ending at at starts.
func localStart(s string, at int) (int, bool) {
	a, n := at, 0
	for a > 0 {
		r, w := runeBefore(s, a)
		if !isLocalRune(r) {
			break
		}
		if n++; n > maxLocal {
			return 0, false
		}
		a -= w
	}
	if a > 0 {
		if r, _ := runeBefore(s, a); r == '@' {
			return 0, false
		}
	}
	for a < at {
		r, w := runeAt(s, a)
		if r != '.' && r != '\'' {
			break
		}
		a += w
	}
	if a == at {
		return 0, false
	}
	if r, _ := runeBefore(s, at); r == '.' {
		return 0, false
	}
	return a, true
}

// domainEnd returns where the domain starting at start (after the at sign) ends, without the
// dots and hyphens that end a sentence or a clause, nor what follows its top-level domain.
func domainEnd(s string, start int) (int, bool) {
	b, n := start, 0
	for b < len(s) {
		r, w := runeAt(s, b)
		if !isDomainRune(r) {
			break
		}
		if n++; n > maxDomain {
			return 0, false
		}
		b += w
	}
	if b < len(s) {
		if r, _ := runeAt(s, b); r == '@' || r == '_' || r == '+' || r == '%' {
			return 0, false
		}
	}
	for b > start {
		r, w := runeBefore(s, b)
		if r != '.' && r != '-' {
			break
		}
		b -= w
	}
	if b == start {
		return 0, false
	}
	// The domain ends with the last label that is a top-level domain, two labels in at least:
	// a file name or a word glued on after a dot is not part of it ("ada@example.com.pdf",
	// "ada@example.com.Thanks").
	labels, best := 0, -1
	for i := start; i < b; {
		from, count := i, 0
		var first, last rune
		for i < b {
			r, w := runeAt(s, i)
			if r == '.' {
				break
			}
			if count == 0 {
				first = r
			}
			last = r
			count++
			i += w
		}
		if count == 0 || count > maxLabel || first == '-' || last == '-' {
			break
		}
		if labels++; labels >= 2 && isTLD(s[from:i]) {
			best = i
		}
		if i < b {
			_, w := runeAt(s, i)
			i += w
		}
	}
	return best, best >= 0
}

// isTLD reports whether label is a top-level domain: one of ICANN's, from the Public Suffix
// List that golang.org/x/net/publicsuffix embeds, when it is ASCII once its full-width forms
// are folded ("png" in "icon@2x.png" is not, nor "local" or "internal"); any two letters or
// more when it is not (an IDN's Unicode form, which the list does not hold in that form).
func isTLD(label string) bool {
	label = strings.Map(foldWidth, label)
	ascii := true
	for i := 0; i < len(label); i++ {
		if label[i] >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii {
		n := 0
		for _, r := range label {
			if !unicode.IsLetter(r) {
				return false
			}
			n++
		}
		return n >= 2
	}
	_, icann := publicsuffix.PublicSuffix(strings.ToLower(label))
	return icann
}
