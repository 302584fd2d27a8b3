package redact

import (
	"net/netip"
	"strings"
)

// maxIPv6 is the longest textual IPv6 address: eight groups with an IPv4 tail,
// "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255".
const maxIPv6 = 45

func isV6Byte(c byte) bool { return isHex(c) || c == ':' || c == '.' }

// ipv6 tries the run of hex digits, colons and dots around the colon at c as an IPv6 address,
// as net/netip parses it. Runs that read as something else are refused: fewer than two colons
// (times "10:30" have one, and fail to parse with two), no decimal digit ("dead::beef" in
// code), a compressed form with fewer than two groups ("::1", "::").
func (sc *scanner) ipv6(c int) (Match, bool) {
	s := sc.s
	a := c
	for a > sc.lo && isV6Byte(s[a-1]) {
		if a--; c-a > maxIPv6 {
			return Match{}, false
		}
	}
	b := c
	for b < sc.limit && isV6Byte(s[b]) {
		if b++; b-a > maxIPv6 {
			return Match{}, false
		}
	}
	for b > c+1 && s[b-1] == '.' {
		b--
	}
	tok := s[a:b]
	if strings.Count(tok, ":") < 2 || !strings.ContainsAny(tok, "0123456789") {
		return Match{}, false
	}
	// Shapes net/netip refuses, refused here without the cost of its error.
	if strings.Contains(tok, ":::") || tok[0] == ':' && tok[1] != ':' || tok[len(tok)-1] == ':' && tok[len(tok)-2] != ':' {
		return Match{}, false
	}
	for f := range strings.SplitSeq(tok, ":") {
		if len(f) > 4 && strings.IndexByte(f, '.') < 0 {
			return Match{}, false
		}
	}
	if strings.Contains(tok, "::") {
		groups := 0
		for f := range strings.SplitSeq(tok, ":") {
			if f != "" {
				groups++
			}
		}
		if groups < 2 {
			return Match{}, false
		}
	}
	addr, err := netip.ParseAddr(tok)
	if err != nil || !addr.Is6() {
		return Match{}, false
	}
	if !sc.leftOK(a, IP) {
		return Match{}, false
	}
	// A zone ("%eth0") may follow.
	if !(b+1 < sc.limit && s[b] == '%' && isAlnum(s[b+1])) && !sc.rightOK(b, IP) {
		return Match{}, false
	}
	return Match{Kind: IP, Start: a, End: b}, true
}
