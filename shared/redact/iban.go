package redact

// ibanLengths is the length of the IBANs of each country of the SWIFT IBAN registry (ISO
// 13616), by ISO 3166 code.
var ibanLengths = map[[2]byte]int{
	{'A', 'D'}: 24, {'A', 'E'}: 23, {'A', 'L'}: 28, {'A', 'T'}: 20, {'A', 'Z'}: 28, {'B', 'A'}: 20,
	{'B', 'E'}: 16, {'B', 'G'}: 22, {'B', 'H'}: 22, {'B', 'I'}: 27, {'B', 'R'}: 29, {'B', 'Y'}: 28,
	{'C', 'H'}: 21, {'C', 'R'}: 22, {'C', 'Y'}: 28, {'C', 'Z'}: 24, {'D', 'E'}: 22, {'D', 'J'}: 27,
	{'D', 'K'}: 18, {'D', 'O'}: 28, {'E', 'E'}: 20, {'E', 'G'}: 29, {'E', 'S'}: 24, {'F', 'I'}: 18,
	{'F', 'K'}: 18, {'F', 'O'}: 18, {'F', 'R'}: 27, {'G', 'B'}: 22, {'G', 'E'}: 22, {'G', 'I'}: 23,
	{'G', 'L'}: 18, {'G', 'R'}: 27, {'G', 'T'}: 28, {'H', 'N'}: 28, {'H', 'R'}: 21, {'H', 'U'}: 28,
	{'I', 'E'}: 22, {'I', 'L'}: 23, {'I', 'Q'}: 23, {'I', 'S'}: 26, {'I', 'T'}: 27, {'J', 'O'}: 30,
	{'K', 'W'}: 30, {'K', 'Z'}: 20, {'L', 'B'}: 28, {'L', 'C'}: 32, {'L', 'I'}: 21, {'L', 'T'}: 20,
	{'L', 'U'}: 20, {'L', 'V'}: 21, {'L', 'Y'}: 25, {'M', 'C'}: 27, {'M', 'D'}: 24, {'M', 'E'}: 22,
	{'M', 'K'}: 19, {'M', 'N'}: 20, {'M', 'R'}: 27, {'M', 'T'}: 31, {'M', 'U'}: 30, {'N', 'I'}: 28,
	{'N', 'L'}: 18, {'N', 'O'}: 15, {'O', 'M'}: 23, {'P', 'K'}: 24, {'P', 'L'}: 28, {'P', 'S'}: 29,
	{'P', 'T'}: 25, {'Q', 'A'}: 29, {'R', 'O'}: 24, {'R', 'S'}: 22, {'R', 'U'}: 33, {'S', 'A'}: 24,
	{'S', 'C'}: 31, {'S', 'D'}: 18, {'S', 'E'}: 24, {'S', 'I'}: 19, {'S', 'K'}: 24, {'S', 'M'}: 27,
	{'S', 'O'}: 23, {'S', 'T'}: 25, {'S', 'V'}: 28, {'T', 'L'}: 23, {'T', 'N'}: 24, {'T', 'R'}: 26,
	{'U', 'A'}: 29, {'V', 'A'}: 22, {'V', 'G'}: 24, {'X', 'K'}: 20, {'Y', 'E'}: 30,
}

// maxIBAN is the longest IBAN of the registry (Russia's).
const maxIBAN = 34

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// iban tries an IBAN whose check digits start at the digit at p: a country code of the
// registry before it, then exactly that country's number of letters and digits, in one run or
// in groups of four joined by single spaces (the printed form), and the ISO 7064 mod-97 check.
// Letters may be in either case. shaped reports text that has all of that but the check: the
// scan skips it (to m.End).
func (sc *scanner) iban(p int) (m Match, ok, shaped bool) {
	s := sc.s
	a := p - 2
	if a < sc.lo || !isAlpha(s[a]) || !isAlpha(s[a+1]) || !sc.leftOK(a, IBAN) {
		return Match{}, false, false
	}
	n := ibanLengths[[2]byte{upper(s[a]), upper(s[a+1])}]
	if n == 0 {
		return Match{}, false, false
	}
	var buf [maxIBAN]byte
	k, q := 0, a
	for k < n && q < sc.limit {
		c := s[q]
		if isAlnum(c) {
			buf[k] = upper(c)
			k++
			q++
			continue
		}
		if c == ' ' && k%4 == 0 && q+1 < sc.limit && isAlnum(s[q+1]) {
			q++
			continue
		}
		break
	}
	m = Match{Kind: IBAN, Start: a, End: q}
	if k < n || !isDigit(buf[3]) || !sc.rightOK(q, IBAN) {
		return Match{}, false, false
	}
	if !mod97(buf[:n]) {
		return m, false, true
	}
	return m, true, true
}

// mod97 reports whether the IBAN b (upper case) passes ISO 7064 MOD 97-10: its first four
// characters moved to the end, letters read as 10 to 35, the number is 1 modulo 97.
func mod97(b []byte) bool {
	r := 0
	for k := range b {
		c := b[(k+4)%len(b)]
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A'+10)) % 97
		}
	}
	return r == 1
}
