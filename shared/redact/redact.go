package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"math/bits"
	"net/netip"
	"sort"
	"strings"
)

// Kind is the kind of a value Find detects; its text is the one findings carry.
type Kind string

// The kinds of personal data detected.
const (
	Email Kind = "email"
	Phone Kind = "phone"
	Card  Kind = "card"
	IBAN  Kind = "iban"
	IP    Kind = "ip"
)

// Kinds lists every kind, in a fixed order.
var Kinds = []Kind{Email, Phone, Card, IBAN, IP}

// Placeholder is the text that replaces a value of the kind, its name in upper case between
// square brackets:
//
//	[EMAIL]  [PHONE]  [CARD]  [IBAN]  [IP]
//
// None holds a digit, '@' or ':', so redacted text redacts to itself.
func (k Kind) Placeholder() string {
	switch k {
	case Email:
		return "[EMAIL]"
	case Phone:
		return "[PHONE]"
	case Card:
		return "[CARD]"
	case IBAN:
		return "[IBAN]"
	case IP:
		return "[IP]"
	}
	return "[REDACTED]"
}

// SaltEnv is the environment variable FromEnv reads the hashing secret from.
const SaltEnv = "PII_HASH_SALT"

// MinSaltLen is the shortest salt New accepts, in bytes: shorter secrets can be guessed, and a
// guessed salt turns every hash of a phone number back into the number (there are only about
// 10^11 of them).
const MinSaltLen = 16

// ErrSaltTooShort is New's error for a salt shorter than MinSaltLen bytes (an empty one included).
var ErrSaltTooShort = fmt.Errorf("redact: %s must be at least %d bytes", SaltEnv, MinSaltLen)

// Finding records one value that was removed: its kind and the salted hash of its canonical
// form, so that an audit can tell whether a known value was seen without the value being kept.
type Finding struct {
	Kind Kind `json:"kind"`
	// Hash is hex(HMAC-SHA256(salt, kind + ":" + canonical value)), 64 lower-case hex digits.
	Hash string `json:"hash"`
}

// Redactor replaces personal data in text with placeholders and hashes what it removes. It is
// safe for concurrent use. It never prints its salt: String, GoString and LogValue hide it.
type Redactor struct {
	key []byte
}

// New returns a Redactor whose hashes are keyed with salt (at least MinSaltLen bytes, for
// example `openssl rand -hex 32`). The salt is a secret: with it, anyone can confirm a guess
// of a removed value from its hash.
func New(salt string) (*Redactor, error) {
	if len(salt) < MinSaltLen {
		return nil, ErrSaltTooShort
	}
	return &Redactor{key: []byte(salt)}, nil
}

// FromEnv returns a Redactor keyed with the value of PII_HASH_SALT as getenv (os.Getenv in
// production) gives it. The setting has no default: a default salt would be public, and a
// public salt makes every hash reversible by enumeration.
func FromEnv(getenv func(string) string) (*Redactor, error) {
	salt := getenv(SaltEnv)
	if salt == "" {
		return nil, errors.New("redact: " + SaltEnv + " is not set")
	}
	return New(salt)
}

// String describes r without its salt.
func (r *Redactor) String() string { return "redact.Redactor{salt: hidden}" }

// GoString describes r without its salt, for %#v.
func (r *Redactor) GoString() string { return r.String() }

// LogValue keeps the salt out of logs.
func (r *Redactor) LogValue() slog.Value { return slog.StringValue(r.String()) }

// maxPasses bounds the rounds of Text. A round only finds something new when removing a
// value changed what a later value is glued to, which takes text built for it; the bound keeps
// such text linear.
const maxPasses = 8

// Text returns s with every value Find detects replaced by its kind's placeholder, and one
// finding per replaced occurrence, in the order they were replaced. Values written with %XX
// escapes (URL encoding: "ada%40example.com", "%2B44%2020%207946%200958") are found in the
// decoded text, and replaced where they were written, escapes included. Once a value is detected,
// its other occurrences in s are replaced too, even where they are glued to other text (the
// same phone number inside "x0612345678" is still that number). Then s is scanned again, until
// a round finds nothing (at most 8 rounds), so Text(Text(s)) == Text(s). Text with nothing to
// remove is returned as is, without allocating.
func (r *Redactor) Text(s string) (string, []Finding) {
	return r.appendText(nil, s)
}

func (r *Redactor) appendText(findings []Finding, s string) (string, []Finding) {
	return r.run(findings, s, nil)
}

// run is Text; removed, when not nil, is told each value replaced.
func (r *Redactor) run(findings []Finding, s string, removed func(Kind, string)) (string, []Finding) {
	var h hash.Hash
	var buf []Match
	for range maxPasses {
		buf = findAppend(s, buf[:0])
		if len(buf) == 0 {
			// Only once the text itself shows nothing more: what its escapes hide.
			if buf = findEncoded(s, buf); len(buf) == 0 {
				break
			}
		}
		if h == nil {
			h = hmac.New(sha256.New, r.key)
		}
		s, findings = r.replace(h, s, buf, findings, removed)
	}
	return s, findings
}

// replace writes s with ms and every other occurrence of their values replaced.
func (r *Redactor) replace(h hash.Hash, s string, ms []Match, findings []Finding, removed func(Kind, string)) (string, []Finding) {
	values := make(map[string]Kind, len(ms))
	for _, m := range ms {
		values[s[m.Start:m.End]] = m.Kind
	}
	all := ms
	occurrences(s, values, func(start, end int, k Kind) {
		if !covered(ms, start, end) {
			all = append(all, Match{Kind: k, Start: start, End: end})
		}
	})
	if len(all) > len(ms) {
		all = mergeSpans(all)
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	sums := make(map[string]string, len(values))
	for _, m := range all {
		b.WriteString(s[last:m.Start])
		b.WriteString(m.Kind.Placeholder())
		v := s[m.Start:m.End]
		sum, ok := sums[v]
		if !ok {
			sum = r.sum(h, m.Kind, v)
			sums[v] = sum
		}
		findings = append(findings, Finding{Kind: m.Kind, Hash: sum})
		if removed != nil {
			removed(m.Kind, s[m.Start:m.End])
		}
		last = m.End
	}
	b.WriteString(s[last:])
	return b.String(), findings
}

// covered reports whether [start, end) overlaps a span of ms (sorted, disjoint).
func covered(ms []Match, start, end int) bool {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].End > start })
	return i < len(ms) && ms[i].Start < end
}

// occurrences calls fn for every occurrence of every value in s, in no particular order. A
// few values are each looked for with strings.Index; many (a pasted list of addresses) by
// rolling hashes, one pass over s per distinct length, so that the time stays linear in the
// length of s however many values there are (values are at most 318 bytes long).
func occurrences(s string, values map[string]Kind, fn func(start, end int, k Kind)) {
	if len(values) <= 16 {
		for v, k := range values {
			for off := 0; ; {
				j := strings.Index(s[off:], v)
				if j < 0 {
					break
				}
				fn(off+j, off+j+len(v), k)
				off += j + 1
			}
		}
		return
	}
	type lengthSet struct {
		hashes map[uint64][]string
		// bits is a Bloom filter of one hash function over hashes, so that most positions
		// cost a bit test, not a map lookup.
		bits  []uint64
		shift uint
	}
	byLen := map[int]*lengthSet{}
	for v := range values {
		set := byLen[len(v)]
		if set == nil {
			set = &lengthSet{hashes: map[uint64][]string{}}
			byLen[len(v)] = set
		}
		h := rollHash(v)
		set.hashes[h] = append(set.hashes[h], v)
	}
	for n, set := range byLen {
		if n > len(s) {
			continue
		}
		k := uint(bits.Len(uint(len(set.hashes)))) + 6 // 32 to 64 bits a value
		set.bits, set.shift = make([]uint64, max(1, (1<<k)/64)), 64-k
		for h := range set.hashes {
			b := h >> set.shift
			set.bits[b/64] |= 1 << (b % 64)
		}
		pow := uint64(1)
		for range n {
			pow *= rollBase
		}
		h := rollHash(s[:n])
		for p := 0; ; p++ {
			if b := h >> set.shift; set.bits[b/64]&(1<<(b%64)) != 0 {
				for _, v := range set.hashes[h] {
					if s[p:p+n] == v {
						fn(p, p+n, values[v])
					}
				}
			}
			if p+n >= len(s) {
				break
			}
			h = h*rollBase + uint64(s[p+n]) - uint64(s[p])*pow
		}
	}
}

const rollBase = 0x100000001b3

func rollHash(s string) uint64 {
	var h uint64
	for i := 0; i < len(s); i++ {
		h = h*rollBase + uint64(s[i])
	}
	return h
}

// mergeSpans sorts ms by start and drops every span that overlaps an earlier one.
func mergeSpans(ms []Match) []Match {
	// Insertion sort: the spans of one text are few.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && (ms[j].Start < ms[j-1].Start || ms[j].Start == ms[j-1].Start && ms[j].End > ms[j-1].End); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	out := ms[:0]
	end := -1
	for _, m := range ms {
		if m.Start >= end {
			out = append(out, m)
			end = m.End
		}
	}
	return out
}

// sum is the hex HMAC-SHA256 of kind:canonical(value).
func (r *Redactor) sum(h hash.Hash, k Kind, value string) string {
	h.Reset()
	h.Write([]byte(k))
	h.Write([]byte{':'})
	h.Write([]byte(Canonical(k, value)))
	var out [sha256.Size]byte
	return hex.EncodeToString(h.Sum(out[:0]))
}

// Canonical is the form of a detected value that is hashed, so that one value written two
// ways hashes the same. First its %XX escapes are decoded and its full-width forms read as
// ASCII (see findEmails); then it is: an email in lower case; a phone number's digits, after a '+' when it
// was written in international form ("00" prefix read as '+', a "(0)" trunk dropped); a card
// number's digits; an IBAN's letters and digits in upper case; an IP address as net/netip
// prints it (IPv6 compressed, lower case).
func Canonical(k Kind, value string) string {
	for range maxDecodes {
		if !hasEscape(value) {
			break
		}
		value = unescape(value)
	}
	value = strings.Map(foldWidth, value)
	switch k {
	case Email:
		return strings.ToLower(value)
	case Phone:
		intl := strings.HasPrefix(value, "+") || strings.HasPrefix(value, "(+") || strings.HasPrefix(value, "00")
		if intl {
			value = strings.Replace(value, "(0)", "", 1)
		}
		d := digitsOf(value)
		if !intl {
			return d
		}
		return "+" + strings.TrimPrefix(d, "00")
	case Card:
		return digitsOf(value)
	case IBAN:
		var b strings.Builder
		for i := 0; i < len(value); i++ {
			c := value[i]
			switch {
			case isDigit(c) || 'A' <= c && c <= 'Z':
				b.WriteByte(c)
			case 'a' <= c && c <= 'z':
				b.WriteByte(c - 'a' + 'A')
			}
		}
		return b.String()
	case IP:
		if a, err := netip.ParseAddr(value); err == nil {
			return a.String()
		}
	}
	return value
}

func digitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
