package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"
)

// Limits of RFC 5321: a local part of at most 64 bytes, a domain of at most 253 (255 with
// the dots of its encoding) in labels of at most 63.
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

// findEmails appends the emails of s, in order: from each '@', the longest run of local-part
// characters before it and of domain characters after it. Letters and digits beyond ASCII are
// allowed on both sides (RFC 6531 addresses, IDN domains). A run longer than its RFC limit,
// a domain without a dot or whose last label is not a top-level domain, or an address glued
// to another '@' is not an email.
func findEmails(s string, out []Match) []Match {
	for off := 0; off < len(s); {
		j := strings.IndexByte(s[off:], '@')
		if j < 0 {
			break
		}
		at := off + j
		off = at + 1
		a, ok := localStart(s, at)
		if !ok {
			continue
		}
		b, ok := domainEnd(s, at)
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
	a := at
	for a > 0 {
		if at-a > maxLocal {
			return 0, false
		}
		c := s[a-1]
		if c < utf8.RuneSelf {
			if !isLocalByte(c) {
				break
			}
			a--
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s[:a])
		if !letterOrDigit(r) {
			break
		}
		a -= n
	}
	if a > 0 && s[a-1] == '@' {
		return 0, false
	}
	for a < at && (s[a] == '.' || s[a] == '\'') {
		a++
	}
	if a == at || s[at-1] == '.' || at-a > maxLocal {
		return 0, false
	}
	return a, true
}

// domainEnd returns where the domain starting after at ends, without the dots and hyphens
// that end a sentence or a clause.
func domainEnd(s string, at int) (int, bool) {
	b := at + 1
	for b < len(s) {
		if b-at > maxDomain+1 {
			return 0, false
		}
		c := s[b]
		if c < utf8.RuneSelf {
			if !isDomainByte(c) {
				break
			}
			b++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[b:])
		if !letterOrDigit(r) {
			break
		}
		b += n
	}
	if b < len(s) && strings.IndexByte("@_+%", s[b]) >= 0 {
		return 0, false
	}
	for b > at+1 && (s[b-1] == '.' || s[b-1] == '-') {
		b--
	}
	d := s[at+1 : b]
	if len(d) == 0 || len(d) > maxDomain {
		return 0, false
	}
	labels := 0
	for len(d) > 0 {
		label := d
		if i := strings.IndexByte(d, '.'); i >= 0 {
			label, d = d[:i], d[i+1:]
		} else {
			d = ""
		}
		if len(label) == 0 || len(label) > maxLabel || label[0] == '-' || label[len(label)-1] == '-' {
			return 0, false
		}
		labels++
		if d == "" && (labels < 2 || !isTLD(label)) {
			return 0, false
		}
	}
	return b, true
}

// isTLD reports whether label is a top-level domain: one of ICANN's, from the Public Suffix
// List that golang.org/x/net/publicsuffix embeds, when it is ASCII ("png" in "icon@2x.png" is
// not, nor "local" or "internal"); any two letters or more when it is not (an IDN's Unicode
// form, which the list does not hold in that form).
func isTLD(label string) bool {
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
