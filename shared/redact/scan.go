package redact

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Match is one detected value: its kind and its byte offsets in the text, s[Start:End].
type Match struct {
	Kind       Kind
	Start, End int
}

// Find returns the values detected in s, in order, without overlaps: one round of the
// detection Text repeats, on s as it is written (Text also reads s with its %XX escapes
// decoded). It allocates only when it finds something.
func Find(s string) []Match {
	return findAppend(s, nil)
}

// trigger marks the bytes the scan stops at: digits (phone numbers, cards, IBANs' check
// digits, IPv4) and ':' (IPv6). Emails are found beforehand from each '@'.
var trigger = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t[':'] = true
	return t
}()

// scanner holds one round's state. Left of lo and from limit on lies text that another
// match replaces: the boundary rules see it as a placeholder would look (neutral), so that a
// round over the redacted text decides the same way.
type scanner struct {
	s      string
	lo     int
	limit  int
	out    []Match
	groups []group
	seps   []sepInfo
}

func findAppend(s string, out []Match) []Match {
	emails := findEmails(s, nil)
	sc := scanners.Get().(*scanner)
	sc.s, sc.out, sc.lo, sc.limit = s, out, 0, 0
	defer sc.release()
	first := len(out)
	ei := 0
	for i := 0; i < len(s); {
		i = nextTrigger(s, i)
		if i == len(s) {
			break
		}
		// Emails are taken first; the rest of the scan treats them as placeholders.
		for ei < len(emails) && emails[ei].End <= i {
			sc.lo = max(sc.lo, emails[ei].End)
			ei++
		}
		sc.limit = len(s)
		if ei < len(emails) {
			if emails[ei].Start <= i {
				i = emails[ei].End
				sc.lo = i
				continue
			}
			sc.limit = emails[ei].Start
		}
		if s[i] == ':' {
			if m, ok := sc.ipv6(i); ok {
				sc.emit(m)
				i = m.End
				continue
			}
			i++
			continue
		}
		if m, ok, shaped := sc.iban(i); ok {
			sc.emit(m)
			i = m.End
			continue
		} else if shaped {
			// An IBAN with a wrong check: an account number all the same, not a phone
			// number hiding in its groups.
			i = m.End
			continue
		}
		i = sc.cluster(i)
	}
	if len(emails) == 0 {
		return sc.out
	}
	if len(sc.out) == first {
		return append(sc.out, emails...)
	}
	// Merge the two ordered lists.
	others := append([]Match(nil), sc.out[first:]...)
	res := sc.out[:first]
	a, b := 0, 0
	for a < len(emails) || b < len(others) {
		if b == len(others) || a < len(emails) && emails[a].Start < others[b].Start {
			res = append(res, emails[a])
			a++
		} else {
			res = append(res, others[b])
			b++
		}
	}
	return res
}

// Word-at-a-time constants: lo8 has 0x01 in every byte, hi8 0x80.
const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// nextTrigger returns the index of the first trigger byte of s from i on, or len(s). The
// triggers, '0' to '9' and ':', are the bytes 0x30 to 0x3A, so eight bytes at a time are
// tested for one in that range, without branching on each byte (the "hasbetween" test of
// Sean Anderson's bit twiddling hacks; bytes of 0x80 and above never count).
func nextTrigger(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		low := x & (lo8 * 127)
		if (lo8*(127+0x3b)-low)&^x&(low+lo8*(127-0x2f))&hi8 == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if trigger[s[j]] {
				return j
			}
		}
	}
	for ; i < len(s); i++ {
		if trigger[s[i]] {
			return i
		}
	}
	return i
}

// scanners keeps the group buffers of finished scans, so that a scan allocates nothing.
var scanners = sync.Pool{New: func() any {
	return &scanner{groups: make([]group, 0, 32), seps: make([]sepInfo, 0, 32)}
}}

func (sc *scanner) release() {
	if cap(sc.groups) > 1024 || cap(sc.seps) > 1024 {
		// A long cluster: not worth keeping.
		sc.groups, sc.seps = make([]group, 0, 32), make([]sepInfo, 0, 32)
	}
	// Keep no reference to the text or the caller's slice.
	sc.s, sc.out = "", nil
	scanners.Put(sc)
}

func (sc *scanner) emit(m Match) {
	sc.out = append(sc.out, m)
	sc.lo = m.End
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// wordRune reports whether r glues to a number: a letter, a digit or a currency sign (an
// amount: "€1234567890", "1234567890₽").
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Sc, r)
}

// leftOK reports whether a value of kind k may start at start, judging by what is before it:
// nothing glued on (a letter, digit, '_', '@' but for an IP as in root@10.0.0.1, '+' of an
// arithmetic expression, '#' of an order number, '$' or another currency sign), and no joiner
// that ties it to a longer code: '-', '/' or '\' after a letter or digit ("ORD-0612345678"),
// '.', ',' or ':' after a digit ("1.10.0.0.1", "12:0612345678").
func (sc *scanner) leftOK(start int, k Kind) bool {
	s := sc.s
	if start <= sc.lo {
		return true
	}
	c := s[start-1]
	if c >= utf8.RuneSelf {
		r, _ := utf8.DecodeLastRuneInString(s[sc.lo:start])
		return !wordRune(r)
	}
	prev := byte(' ')
	if start-2 >= sc.lo {
		prev = s[start-2]
	}
	switch {
	case isAlnum(c) || c == '_' || c == '+' || c == '#' || c == '$' || c == '%':
		return false
	case c == '@':
		return k == IP
	case c == '-' || c == '/' || c == '\\':
		return !isAlnum(prev)
	case c == '.' || c == ',' || c == ':':
		return !isDigit(prev)
	}
	return true
}

// rightOK is leftOK's mirror for a value of kind k ending at end. An IP may be followed by a
// port (":8080"), a prefix length ("/24") or a URL's path ("/admin").
func (sc *scanner) rightOK(end int, k Kind) bool {
	s := sc.s
	if end >= sc.limit {
		return true
	}
	c := s[end]
	if c >= utf8.RuneSelf {
		r, _ := utf8.DecodeRuneInString(s[end:sc.limit])
		return !wordRune(r)
	}
	next := byte(' ')
	if end+1 < sc.limit {
		next = s[end+1]
	}
	switch {
	case isAlnum(c) || c == '_' || c == '@' || c == '+' || c == '%':
		return false
	case c == '/':
		return !isAlnum(next) || k == IP
	case c == '-' || c == '\\':
		return !isAlnum(next)
	case c == ':':
		return !isDigit(next) || k == IP
	case c == '.' || c == ',':
		return !isDigit(next)
	}
	return true
}

// stopWords are words after which a number is a reference, not personal data ("order
// 0612345678", "version 1.2.3.4").
var stopWords = map[string]bool{
	"isbn": true, "version": true, "ver": true, "release": true, "build": true, "order": true,
	"invoice": true, "tracking": true, "ref": true, "serial": true, "sku": true, "imei": true,
	"ticket": true, "section": true,
}

// afterStopWord reports whether the word just before start (past at most three spaces, dots,
// colons or '#') is a stop word.
func (sc *scanner) afterStopWord(start int) bool {
	s := sc.s
	j := start
	for n := 0; n < 3 && j > sc.lo && strings.IndexByte(" .:#", s[j-1]) >= 0; n++ {
		j--
	}
	e := j
	for j > sc.lo && e-j < 8 && isAlpha(s[j-1]) {
		j--
	}
	if j == e || j > sc.lo && isAlpha(s[j-1]) {
		return false
	}
	var w [8]byte
	for i := j; i < e; i++ {
		w[i-j] = s[i] | 0x20
	}
	return stopWords[string(w[:e-j])]
}
