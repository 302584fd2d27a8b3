package redact

import (
	"strings"
)

// A cluster is a run of digit groups joined by separators: "+44 (0)20 7946 0958" is the groups
// 44, 0, 20, 7946, 0958. Phone numbers, cards and IPv4 addresses are spans of consecutive
// groups of one cluster, tried from each group, the longest span first in effect.
type group struct{ start, end int }

// sepInfo is what joins two groups: an optional ')', then one space (or no-break space) or one
// joiner ('-', '.', '/'), then an optional '('; at least one of them.
type sepInfo struct {
	space       bool
	joiner      byte
	open, close bool
}

// Bounds of a span: no value has more than 19 digits (a card; a phone number has at most 15
// after its country code, plus "00" and a "(0)" trunk) or more than 7 groups ("00 33 6 12 34
// 56 78").
const (
	maxSpanDigits = 19
	maxSpanGroups = 7
)

// nbspLen returns the length of a no-break space (U+00A0) or narrow no-break space (U+202F,
// the French thousands and phone-group separator) at the start of s, or 0.
func nbspLen(s string) int {
	switch {
	case strings.HasPrefix(s, "\u00a0"):
		return 2
	case strings.HasPrefix(s, "\u202f"):
		return 3
	}
	return 0
}

// separator reads the separator at pos, if a digit follows it.
func (sc *scanner) separator(pos int) (sepInfo, int, bool) {
	s := sc.s
	q := pos
	var sp sepInfo
	if q < sc.limit && s[q] == ')' {
		sp.close = true
		q++
	}
	if q < sc.limit {
		switch c := s[q]; c {
		case ' ':
			sp.space = true
			q++
		case '-', '.', '/':
			sp.joiner = c
			q++
		default:
			if n := nbspLen(s[q:sc.limit]); n > 0 {
				sp.space = true
				q += n
			}
		}
	}
	if q < sc.limit && s[q] == '(' {
		sp.open = true
		q++
	}
	if q == pos || q >= sc.limit || !isDigit(s[q]) {
		return sp, pos, false
	}
	return sp, q, true
}

// cluster reads the cluster starting at the digit at p, emits the values in it and returns
// where it ends.
func (sc *scanner) cluster(p int) int {
	s := sc.s
	sc.groups, sc.seps = sc.groups[:0], sc.seps[:0]
	pos := p
	for {
		a := pos
		for pos < sc.limit && isDigit(s[pos]) {
			pos++
		}
		sc.groups = append(sc.groups, group{a, pos})
		sp, q, ok := sc.separator(pos)
		if !ok {
			break
		}
		sc.seps = append(sc.seps, sp)
		pos = q
	}
	g := sc.groups
	for i := 0; i < len(g); {
		var best Match
		bestJ := -1
		nd := 0
		for j := i; j < len(g) && j < i+maxSpanGroups; j++ {
			nd += g[j].end - g[j].start
			if nd > maxSpanDigits+2 {
				break
			}
			if m, ok := sc.span(i, j, nd); ok && m.End-m.Start > best.End-best.Start {
				best, bestJ = m, j
			}
		}
		if bestJ < 0 {
			i++
			continue
		}
		sc.emit(best)
		i = bestJ + 1
	}
	return pos
}

// span tries groups i..j (nd digits) as an IPv4 address, a card number and a phone number.
func (sc *scanner) span(i, j, nd int) (Match, bool) {
	if j == i+3 {
		if m, ok := sc.ipv4(i); ok {
			return m, true
		}
	}
	if nd >= 13 && nd <= maxSpanDigits {
		if m, ok := sc.card(i, j, nd); ok {
			return m, true
		}
	}
	if nd >= 8 {
		return sc.phone(i, j)
	}
	return Match{}, false
}

func (sc *scanner) digits(i, j int, buf []byte) []byte {
	for k := i; k <= j; k++ {
		buf = append(buf, sc.s[sc.groups[k].start:sc.groups[k].end]...)
	}
	return buf
}

// ipv4 tries groups i..i+3 as a dotted quad in decimal, without leading zeros (which net/netip
// refuses too: "010" is octal to some parsers). "1.2.3.4" is taken for an address unless it
// follows a stop word such as "version": a version that is also a valid address is ambiguous,
// and taking it for personal data is the safe side.
func (sc *scanner) ipv4(i int) (Match, bool) {
	g := sc.groups
	for k := i; k < i+3; k++ {
		if sp := sc.seps[k]; sp.joiner != '.' || sp.space || sp.open || sp.close {
			return Match{}, false
		}
	}
	for k := i; k <= i+3; k++ {
		d := sc.s[g[k].start:g[k].end]
		if len(d) > 3 || len(d) > 1 && d[0] == '0' || len(d) == 3 && d > "255" {
			return Match{}, false
		}
	}
	m := Match{Kind: IP, Start: g[i].start, End: g[i+3].end}
	if !sc.leftOK(m.Start, IP) || !sc.rightOK(m.End, IP) || sc.afterStopWord(m.Start) {
		return Match{}, false
	}
	return m, true
}

// card tries groups i..j as a payment card number: 13 to 19 digits, in one run or in groups
// of four (the last shorter) or Amex's and Diners' 4-6-5 and 4-6-4, all joined by single
// spaces or all by hyphens; a prefix and length of a card network; the Luhn check.
func (sc *scanner) card(i, j, nd int) (Match, bool) {
	g := sc.groups
	if j > i {
		first := sc.seps[i]
		if first.open || first.close || first.space == (first.joiner != 0) || first.joiner != 0 && first.joiner != '-' {
			return Match{}, false
		}
		for k := i + 1; k < j; k++ {
			if sc.seps[k] != first {
				return Match{}, false
			}
		}
		var sizes [maxSpanGroups]int
		n := j - i + 1
		for k := range n {
			sizes[k] = g[i+k].end - g[i+k].start
		}
		if !cardGrouping(sizes[:n]) {
			return Match{}, false
		}
	}
	var buf [maxSpanDigits + 2]byte
	d := sc.digits(i, j, buf[:0])
	if !cardNetwork(d) || !luhn(d) {
		return Match{}, false
	}
	m := Match{Kind: Card, Start: g[i].start, End: g[j].end}
	if !sc.leftOK(m.Start, Card) || !sc.rightOK(m.End, Card) || sc.afterStopWord(m.Start) {
		return Match{}, false
	}
	return m, true
}

func cardGrouping(sizes []int) bool {
	switch {
	case len(sizes) == 3 && sizes[0] == 4 && sizes[1] == 6 && (sizes[2] == 5 || sizes[2] == 4):
		return true
	case len(sizes) == 3 && sizes[0] == 4 && sizes[1] == 4 && sizes[2] == 5:
		return true
	}
	for k, n := range sizes {
		if n != 4 && (k < len(sizes)-1 || n < 1 || n > 4) {
			return false
		}
	}
	return true
}

// cardNetwork reports whether d starts like a card of a network that issues cards of its
// length: Visa, Mastercard (and 2-series), American Express, Diners, JCB, Discover, UnionPay,
// Maestro, Mir, RuPay.
func cardNetwork(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch d[0] {
	case '4':
		return n == 13 || n == 16 || n == 19
	case '5':
		return (p2 >= 51 && p2 <= 55 && n == 16) || p2 == 50 || p2 >= 56
	case '2':
		return (p4 >= 2221 && p4 <= 2720 && n == 16) || (p4 >= 2200 && p4 <= 2204 && n >= 16)
	case '3':
		switch {
		case p2 == 34 || p2 == 37:
			return n == 15
		case p4 >= 3528 && p4 <= 3589:
			return n >= 16
		case p2 == 30 || p2 == 36 || p2 == 38 || p2 == 39:
			return n >= 14
		}
	case '6':
		return n >= 16
	}
	return false
}

// luhn reports whether the digits d pass the Luhn (mod 10) check.
func luhn(d []byte) bool {
	sum := 0
	double := false
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// phone tries groups i..j as a phone number, in one of three shapes:
//
//   - international: '+' or "00", a country calling code, 8 to 15 digits in all (11 for +1
//     and +7), in any grouping ("+49 30 1234567", "+44 (0)20 7946 0958", "0033 6 12 34 56 78");
//   - North American: 3-3-4 digits, optionally after a 1 ("(555) 123-4567", "1-800-555-0199",
//     "555.123.4567"); joined by spaces alone ("212 555 0123"), only with an area code and an
//     exchange starting with 2 to 9, as real ones do;
//   - national with a trunk 0: 10 or 11 digits in one run ("0612345678"), or 9 to 12 digits
//     in groups joined alike: an area part of 2 to 5 digits then groups of 3 to 8 digits ("020
//     7946 0958", "030/1234567"), or then pairs, ten digits in all ("06 12 34 56 78", "0475 12 34 56").
//
// Parentheses must pair up, and '/' only joins the two groups of a national number. A
// 10-digit run without separators ("5551234567") or a 7-digit local number ("555-1234") is not
// taken: in chat those are more often order numbers and amounts than phone numbers.
func (sc *scanner) phone(i, j int) (Match, bool) {
	s, g := sc.s, sc.groups
	start := g[i].start
	open := start-1 >= sc.lo && s[start-1] == '(' && i < j && sc.seps[i].close
	if open {
		start--
	}
	plus := start-1 >= sc.lo && s[start-1] == '+'
	if plus {
		start--
	}
	// Parentheses pair up; '/' joins only two groups.
	depth := 0
	if open {
		depth = 1
	}
	slash := false
	for k := i; k < j; k++ {
		sp := sc.seps[k]
		if sp.close {
			if depth == 0 {
				return Match{}, false
			}
			depth--
		}
		if sp.open {
			if depth == 1 {
				return Match{}, false
			}
			depth++
		}
		slash = slash || sp.joiner == '/'
	}
	if depth != 0 || slash && (j != i+1 || plus) {
		return Match{}, false
	}
	var buf [maxSpanDigits + 4]byte
	var ok bool
	first := g[i].end - g[i].start
	switch {
	case plus || first >= 2 && s[g[i].start] == '0' && s[g[i].start+1] == '0':
		// A "(0)" trunk inside an international number is not dialled.
		d := buf[:0]
		for k := i; k <= j; k++ {
			if k > i && k < j && sc.seps[k-1].open && sc.seps[k].close && s[g[k].start:g[k].end] == "0" {
				continue
			}
			d = append(d, s[g[k].start:g[k].end]...)
		}
		if !plus {
			d = d[2:]
		}
		ok = international(d)
	case s[g[i].start] == '0':
		ok = sc.national(i, j, open)
	default:
		ok = sc.northAmerican(i, j)
	}
	if !ok {
		return Match{}, false
	}
	m := Match{Kind: Phone, Start: start, End: g[j].end}
	if !sc.leftOK(m.Start, Phone) || !sc.rightOK(m.End, Phone) || sc.afterStopWord(m.Start) {
		return Match{}, false
	}
	return m, true
}

// international checks the digits after '+' or "00".
func international(d []byte) bool {
	if len(d) < 8 || len(d) > 15 {
		return false
	}
	cc := callingCodeLen(d)
	if cc == 0 || len(d)-cc < 4 {
		return false
	}
	if d[0] == '1' || d[0] == '7' {
		return len(d) == 11
	}
	// "+20000000" is a score or an amount: no subscriber number is all zeros.
	for _, c := range d[cc:] {
		if c != '0' {
			return true
		}
	}
	return false
}

func (sc *scanner) national(i, j int, open bool) bool {
	s, g := sc.s, sc.groups
	if s[g[i].start+1] == '0' {
		return false
	}
	size := func(k int) int { return g[k].end - g[k].start }
	if i == j {
		return size(i) == 10 || size(i) == 11
	}
	nd := 0
	for k := i; k <= j; k++ {
		nd += size(k)
	}
	if nd < 9 || nd > 12 || size(i) < 2 || size(i) > 5 {
		return false
	}
	// The groups after the area part are joined alike, without parentheses; an area part in
	// parentheses may be joined to the rest by anything.
	from := i
	if open {
		from = i + 1
	}
	for k := from; k < j; k++ {
		if sp := sc.seps[k]; sp != sc.seps[from] || sp.open || sp.close {
			return false
		}
	}
	if j-i+1 >= 4 {
		// Pairs: ten digits in all, so that two numbers in a row are two numbers.
		for k := i + 1; k <= j; k++ {
			if size(k) != 2 {
				return false
			}
		}
		return size(i) <= 4 && nd == 10
	}
	for k := i + 1; k <= j; k++ {
		if size(k) < 3 || size(k) > 8 {
			return false
		}
	}
	return true
}

func (sc *scanner) northAmerican(i, j int) bool {
	s, g := sc.s, sc.groups
	size := func(k int) int { return g[k].end - g[k].start }
	if j == i+3 && size(i) == 1 && s[g[i].start] == '1' {
		i++
	}
	if j != i+2 || size(i) != 3 || size(i+1) != 3 || size(i+2) != 4 {
		return false
	}
	// Spaces alone also join lists of numbers: then the area code and the exchange must be
	// valid ones (2 to 9 first). Hyphens, dots and parentheses make the shape a phone number's
	// even when the digits are made up, as in "(555) 123-4567".
	if sc.seps[i].space && !sc.seps[i].close && sc.seps[i+1].space {
		return s[g[i].start] >= '2' && s[g[i+1].start] >= '2'
	}
	return true
}
