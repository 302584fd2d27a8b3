package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Name redacts a name that scopes data in the system it is sent to (a tenant, an agent): as
// Text does, and, when anything was replaced, followed by '#' and 16 hex digits of
// HMAC-SHA256(salt, "name:" + s). Text alone would make "0612345678" and "0698765432" one
// name, "[PHONE]", and so merge what the system keeps apart under them; the keyed suffix keeps
// two names two ("[PHONE]#1f0c…", "[PHONE]#9a3e…") and one name the same wherever it is
// redacted, while it tells nothing of the name without the salt. A name without personal
// data is returned as it is, and Name(Name(s)) == Name(s) (the suffix follows '#', so no
// value is ever found in it).
func (r *Redactor) Name(s string) (string, []Finding) {
	out, findings := r.Text(s)
	if len(findings) == 0 {
		return s, nil
	}
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte("name:"))
	m.Write([]byte(s))
	return out + "#" + hex.EncodeToString(m.Sum(nil)[:8]), findings
}

// minBase64Run is the shortest run of base64 characters Document takes for binary data:
// about 190 bytes encoded. Shorter runs are more often ids and tokens, which are scanned.
const minBase64Run = 256

// maxTypeDigits bounds the digits a media type may hold to be kept in a placeholder ("mp4",
// "3gpp"): more could be a number written where a type goes.
const maxTypeDigits = 3

// DataPlaceholder is the text that replaces inline binary data (Document):
//
//	[DATA image/png 48213 bytes]   [DATA 48213 bytes]
//
// the data's size once decoded (from base64, or from %XX escapes), and the media type of a
// data: URL when it names a plain type/subtype (lower case, with at most 3 digits): what a
// receiver needs to know what was there, without the data.
func DataPlaceholder(s string) string {
	mt, payload, b64, ok := parseDataURL(s)
	if !ok {
		payload, b64 = s, true
		for i := 0; i < len(s) && b64; i++ {
			b64 = isBase64Byte(s[i]) || s[i] == '\r' || s[i] == '\n'
		}
	}
	size := len(unescape(payload))
	if b64 {
		n := 0
		for i := 0; i < len(payload); i++ {
			if isBase64Byte(payload[i]) && payload[i] != '=' {
				n++
			}
		}
		size = n * 6 / 8
	}
	digits := 0
	for i := 0; i < len(mt); i++ {
		if isDigit(mt[i]) {
			digits++
		}
	}
	if mt == "" || digits > maxTypeDigits || len(mt) > 64 {
		return "[DATA " + strconv.Itoa(size) + " bytes]"
	}
	return "[DATA " + strings.ToLower(mt) + " " + strconv.Itoa(size) + " bytes]"
}

// dropInlineData replaces the inline binary data of s, data: URLs and long base64 runs (see
// Document), by their placeholders, and says whether there was any.
func dropInlineData(s string) (string, bool) {
	var b strings.Builder
	last := 0
	// data: URLs, wherever they start: at the start of s, or after a byte that is no letter
	// or digit.
	for i := 0; ; i++ {
		j := strings.IndexByte(s[i:], ':')
		if j < 0 {
			break
		}
		i += j
		start := i - 4
		if start < last || !strings.EqualFold(s[start:i], "data") || start > 0 && isAlnum(s[start-1]) {
			continue
		}
		end := start + dataURLEnd(s[start:])
		if _, _, _, ok := parseDataURL(s[start:end]); !ok {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(DataPlaceholder(s[start:end]))
		last, i = end, end-1
	}
	if last > 0 {
		b.WriteString(s[last:])
		s = b.String()
	}
	dropped := last > 0
	if len(s) < minBase64Run {
		return s, dropped
	}
	// Base64 runs, line breaks included (MIME wraps base64 in lines).
	b.Reset()
	last = 0
	for i := 0; i < len(s); {
		if !isBase64Byte(s[i]) {
			i++
			continue
		}
		start, n := i, 0
		var upper, lower, digit bool
		for ; i < len(s) && (isBase64Byte(s[i]) || s[i] == '\r' || s[i] == '\n'); i++ {
			c := s[i]
			if isBase64Byte(c) {
				n++
			}
			upper = upper || 'A' <= c && c <= 'Z'
			lower = lower || 'a' <= c && c <= 'z'
			digit = digit || isDigit(c)
		}
		end := i
		for end > start && (s[end-1] == '\r' || s[end-1] == '\n') {
			end--
		}
		if n < minBase64Run || !upper || !lower || !digit {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(DataPlaceholder(s[start:end]))
		last = end
	}
	if last == 0 {
		return s, dropped
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// isBase64Byte reports whether c is a character of base64 (RFC 4648: standard or URL-safe
// alphabet, and padding).
func isBase64Byte(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_' || c == '='
}

// dataURLEnd is where the URL starting s ends: at white space, a quote, or a bracket that
// closes it in text ("![x](data:...)", "<data:...>").
func dataURLEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '"', '\'', '`', '<', '>', ')', ']':
			return i
		}
	}
	return len(s)
}

// parseDataURL reads s as a whole data: URL (RFC 2397: "data:" [type/subtype] *(";"
// attribute "=" value) [";base64"] "," data): its media type ("" when it names none), its
// data, and whether that is base64.
func parseDataURL(s string) (mediaType, data string, base64, ok bool) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return "", "", false, false
	}
	header, data, found := strings.Cut(s[5:], ",")
	if !found {
		return "", "", false, false
	}
	params := strings.Split(header, ";")
	mediaType = params[0]
	if mediaType != "" && !isMediaType(mediaType) {
		return "", "", false, false
	}
	for k, p := range params[1:] {
		if k == len(params)-2 && strings.EqualFold(p, "base64") {
			base64 = true
			continue
		}
		attr, value, found := strings.Cut(p, "=")
		if !found || !isToken(attr) || value == "" || strings.ContainsAny(value, " \t\r\n") {
			return "", "", false, false
		}
	}
	return mediaType, data, base64, true
}

// isMediaType reports whether s is type "/" subtype, each a token.
func isMediaType(s string) bool {
	typ, sub, found := strings.Cut(s, "/")
	return found && isToken(typ) && isToken(sub)
}

// isToken reports whether s is a token of RFC 6838's restricted names: letters, digits and
// ! # $ & - ^ _ . +, at most 127.
func isToken(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && strings.IndexByte("!#$&-^_.+", c) < 0 {
			return false
		}
	}
	return true
}
