// Package redact removes personal data from text before it leaves for a third party (the
// adapters of the orchestrator: caches, webhooks, Mem0; never the database itself, which keeps
// what the user sent): email addresses, phone numbers, payment card numbers, IBANs and IP
// addresses.
//
// # What is replaced, and by what
//
// Each value found is replaced by the placeholder of its kind, exactly one of
//
//	[EMAIL]  [PHONE]  [CARD]  [IBAN]  [IP]
//
// and reported as a Finding: the kind and
// hex(HMAC-SHA256(salt, kind + ":" + canonical value)), so that an audit holding a value can
// tell whether it was seen (`printf %s 'phone:+33612345678' | openssl dgst -sha256 -hmac
// "$PII_HASH_SALT"`) while the event carries no value. Canonical forms (see Canonical) make one
// value written two ways hash alike. HMAC is the standard way to key SHA-256 (a plain
// SHA-256(salt || value) would do here too; HMAC costs nothing more and has no length-extension
// caveat).
//
//   - Email: local part of letters, digits and . _ % + - ' (not leading dots or quotes), '@', a
//     domain of two labels or more ending with a top-level domain of ICANN's (Unicode letters
//     allowed: "jürgen@beispiel.de", "dmitri@пример.рф"; what is glued on after it is not
//     part of it: "ada@example.com.pdf"). The at sign may be the full-width '＠' or the small
//     '﹫', and the whole address in full-width forms ("ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ", as East
//     Asian input methods type it). Not: "user@localhost", "icon@2x.png", "name at example
//     dot com".
//   - Phone: international ('+' or "00", a country calling code of E.164, 8 to 15 digits,
//     "(0)" allowed: "+44 (0)20 7946 0958", "+49 30 1234567", "+14155552671"), North American
//     3-3-4 ("(555) 123-4567", "555.123.4567", "1-800-555-0199") and national numbers with a
//     trunk 0 ("020 7946 0958", "06 12 34 56 78", "030/1234567", "0612345678"). Not: 7-digit
//     local numbers ("555-1234"), 10-digit runs without separators or trunk 0 ("5551234567"),
//     national forms without a trunk 0 (Spain's "912 34 56 78"): in chat those are more often
//     order numbers, amounts and ids.
//   - Card: 13 to 19 digits, in one run or in groups of four (Amex and Diners: 4-6-5, 4-6-4)
//     joined alike by spaces or hyphens, with the prefix and length of a card network, passing
//     the Luhn check.
//   - IBAN: a country of the IBAN registry, its exact length, in one run or groups of four,
//     passing the mod-97 check; either case. A text shaped like an IBAN that fails the check is
//     left alone as a whole.
//   - IP: IPv4 dotted quads (decimal, no leading zeros) and IPv6 addresses as net/netip parses
//     them; a port, prefix length, URL path or zone after them stays.
//
// Text written with %XX escapes, as URLs and form posts carry it, is also read decoded (up to
// three times, for a URL in another URL's query; '+' read as a space too), and a value found
// there is replaced where it was written: "?email=ada%40example.com&tel=%2B44%2020%207946%200958"
// becomes "?email=[EMAIL]&tel=[PHONE]". Canonical decodes and folds alike, so each spelling
// of a value hashes as the plain one.
//
// A number glued to other text is part of something else and left alone: "ORD-0612345678",
// "x0612345678", "#0612345678", "12:0612345678", "0612345678%", UUIDs, hashes, "$4111...". So is
// a number after a reference word (order, invoice, ticket, tracking, ref, serial, sku, imei,
// isbn, version, ver, release, build, section): "order 0612345678", "version 1.2.3.4".
//
// A dotted quad that is a valid address but is a version number ("upgrade to 10.4.2.1") cannot
// be told apart from an address: it is taken for an address (redacting a version number loses
// little; leaking an address is what this package is for), except after a reference word
// ("version 1.2.3.4") or glued to a letter ("v1.2.3.4"). Runs of more than four dotted numbers
// ("1.2.3.4.5") are not addresses.
//
// Once a value is found, every other occurrence of the same text is replaced too, glued or not
// ("x0612345678" after "0612345678"), and the text is scanned again until nothing more is found,
// so Text is idempotent: redacted text redacts to itself. Placeholders hold no digit, '@' or
// ':', so they are never taken for a value.
//
// # The salt
//
// The salt is a secret of at least MinSaltLen bytes, given as PII_HASH_SALT (FromEnv), with no
// default: a public salt would let anyone reverse a phone number's hash by trying the ~10^11
// numbers. Changing it makes new hashes incomparable with old ones. The Redactor never prints
// it (String, GoString and LogValue hide it).
//
// # Documents and events
//
// Text redacts a string. Document redacts a whole JSON document: every string, member name and
// number at any depth, unless a Rule says otherwise for a path (Keep for the program's own
// ids, Named for names that must stay distinct, Binary for base64 fields, Nested for JSON in a
// string). It drops inline binary data (data: URLs, long base64 runs) for a placeholder giving
// its media type and size (DataPlaceholder): a scan sees nothing of what it encodes, and
// rewriting its digits would corrupt it. Name redacts a name (a tenant, an agent) so that two
// stay two. Each returns the findings, in order, for the event's metadata.
//
// # Own code, and the libraries used
//
// The scan is hand-written: one pass over the bytes that stops only at digits and ':' (eight
// bytes at a time are tested for one), plus strings.IndexByte for each '@'. Around each stop it
// reads the cluster of digit groups and separators once and tries every span of it, so the time
// is linear in the text. Regular expressions do not fit: RE2 (Go's regexp) has no lookbehind
// for the context rules, and without a literal prefix to search for it is slow: the bare
// candidate patterns as one alternation (BenchmarkRegexpBaseline) run at about 7 MB per CPU
// second on the chat text where the whole redaction, with every check, runs at about 400
// (BenchmarkText, held to 50 MB/s; figures in docs/benchmarks.md).
//
// Libraries: net/netip parses IPv6 addresses; golang.org/x/net/publicsuffix (ICANN's list of
// top-level domains) decides what ends an email address. github.com/nyaruka/phonenumbers
// (libphonenumber's Go port) is not used: it validates a number it is given, it does not find
// numbers in text; it needs a region to read national forms; it rejects the fictional 555
// numbers people paste; it adds about 7.5 MB to each binary that links it (measured: 2.4 MB to
// 9.9 MB for a program that parses one number) and takes about 60 µs a number. The IBAN
// libraries on the module proxy (github.com/almerlucke/go-iban) are unmaintained, and the check
// is ten lines; the Luhn check is eight. Country calling codes and IBAN lengths are tables from
// ITU-T E.164 and the SWIFT IBAN registry.
package redact
