package redact

import "strings"

// maxDecodes is how many times findEncoded decodes a text that still holds escapes after a
// decoding: a URL carried in another URL's query is encoded twice ("ada%2540example.com").
const maxDecodes = 3

// hasEscape reports whether s holds a %XX escape.
func hasEscape(s string) bool {
	for i := 0; ; i++ {
		j := strings.IndexByte(s[i:], '%')
		if j < 0 {
			return false
		}
		if i += j; i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
	}
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// unescape decodes the %XX escapes of s, once.
func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodedView is a text with its %XX escapes decoded, and for each of its bytes the span of
// the original text it came from: s[start[i]:end[i]]. A value found in the decoded text is
// replaced where it was written.
type decodedView struct {
	text       string
	start, end []int
}

// decode decodes the escapes of v once (and reads '+' as a space when plus: a form-encoded
// query), composing the spans with v's.
func (v decodedView) decode(plus bool) decodedView {
	s := v.text
	var b strings.Builder
	b.Grow(len(s))
	out := decodedView{start: make([]int, 0, len(s)), end: make([]int, 0, len(s))}
	for i := 0; i < len(s); {
		n := 1
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			n = 3
		case c == '+' && plus:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
		out.start = append(out.start, v.start[i])
		out.end = append(out.end, v.end[i+n-1])
		i += n
	}
	out.text = b.String()
	return out
}

// findEncoded appends the values of s that only its percent-decoded form shows: an email
// whose at sign is escaped ("ada%40example.com"), a phone number whose '+' and spaces are
// ("%2B44%2020%207946%200958", or '+' for the spaces of a form-encoded query), an address
// after an escaped '=' ("ip%3D10.1.2.3"). Each is given as the span of s it was decoded
// from, in order, without overlaps. Without escapes, s has none.
func findEncoded(s string, out []Match) []Match {
	if !hasEscape(s) {
		return out
	}
	first := len(out)
	raw := decodedView{text: s, start: make([]int, len(s)), end: make([]int, len(s))}
	for i := range s {
		raw.start[i], raw.end[i] = i, i+1
	}
	for _, plus := range []bool{false, true} {
		if plus && strings.IndexByte(s, '+') < 0 {
			continue
		}
		v := raw
		for level := 0; level < maxDecodes && hasEscape(v.text); level++ {
			v = v.decode(plus && level == 0)
			for _, m := range findAppend(v.text, nil) {
				out = append(out, Match{Kind: m.Kind, Start: v.start[m.Start], End: v.end[m.End-1]})
			}
		}
	}
	return append(out[:first], mergeSpans(out[first:])...)
}
