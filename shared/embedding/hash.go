package embedding

import (
	"bytes"
	"context"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// HashDimensions is the size of the built-in embedder's vectors, matching the schema's column.
const HashDimensions = 384

// HashModel names the vectors of Hash. Version 1 (agentmem-hash-384-v1: every word and all its
// trigrams, stop words and names included) is not comparable with it: its rows rank only once
// re-embedded, like rows of any other model.
const HashModel = "agentmem-hash-384-v2"

// hashModelV1 is the model name of the built-in embedder's first version, which configurations
// may still name.
const hashModelV1 = "agentmem-hash-384-v1"

// Hash is the built-in embedder: it needs no network and no model files, and is deterministic.
// It is lexical: it finds texts that share words, stems or beginnings of words with the query,
// and knows nothing of synonyms or paraphrases ("favourite food" does not find "mushroom
// risotto"). Real deployments configure a model-backed embedder.
//
// A text is split into words (runs of letters and digits; an apostrophe inside a word keeps it
// whole). A clitic is cut off ("John's" reads "john", "I've" "i") and a negated auxiliary
// ("didn't") reads "not". Words that say nothing of what the text is about are left out:
//   - English stop words, the Snowball list that PostgreSQL's english configuration uses too
//     (english.IsStopWord): "the", "what", "did", ...; but not "no", "not" and "nor", one
//     feature "not", lest a fact and its negation embed alike (near-duplicate memories merge
//     by their vectors);
//   - vocatives: a capitalised word after a comma or a greeting ("hi", "thanks", ...) and before
//     a punctuation mark or the end ("How was your weekend, Maria?", "Hi Tom!"). Messages name
//     the one they address all the time; that name is not what they are about, and it would
//     bring every short reply to the top of a question about that person.
//
// Each other word adds a feature for its Porter2 stem (english.Stem, the algorithm of
// PostgreSQL's english_stem: "finishing" and "finished" are one feature) and one for each
// character trigram of "<" + stem (hashTrigramWeight each), so that words sharing a beginning
// (compounds, typos, forms the stemmer keeps apart) still land near each other; trigrams at the
// end of a word would mostly say which suffix it has, and are left out. Weights stand in for an
// inverse document frequency without a corpus (wordWeight): a long word weighs more than a short
// one, for frequent words are short; a capitalised word inside a sentence hashNameWeight of that,
// for it is mostly a name, and the names of the people talking recur in most of their messages.
//
// A feature is hashed with 64-bit FNV-1a; the hash modulo 384 chooses the dimension and its top
// bit the sign (the "hashing trick"). The sum is L2-normalised, so cosine distance compares
// texts. A text with no word left gives the zero vector, which ranks nowhere.
type Hash struct{}

// The weights of Hash's features, relative to the word's own.
const (
	hashTrigramWeight = 0.85
	hashNameWeight    = 0.3
)

// Model implements Embedder.
func (Hash) Model() string { return HashModel }

// Dimensions implements Embedder.
func (Hash) Dimensions() int { return HashDimensions }

// Embed implements Embedder.
func (h Hash) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.Vector(t)
	}
	return out, nil
}

// Vector is the embedding of one text.
func (Hash) Vector(text string) []float32 {
	var acc hashSum
	var buf [64]byte
	afterGreeting, prevEnd := false, 0
	for i := 0; ; {
		w, ok := nextWord(text, i, buf[:0])
		if !ok {
			break
		}
		greeted := afterGreeting && onlySpace(text[prevEnd:w.start])
		afterGreeting, prevEnd, i = isGreeting(w.lower), w.end, w.end
		negation := isNegation(w.lower)
		if len(w.lower) == 0 || !negation && english.IsStopWord(string(w.lower)) {
			continue
		}
		prev := runeBefore(text, w.start)
		if w.upper && (greeted || prev == ',') && endsPhrase(text, w.end) {
			continue // a vocative
		}
		weight := wordWeight(w.lower)
		if w.upper && prev != 0 && !strings.ContainsRune(".!?:", prev) {
			weight *= hashNameWeight
		}
		stem := "not"
		if !negation {
			stem = english.Stem(string(w.lower), true)
		}
		acc.add(fnvString(fnvWord, stem), weight)
		acc.addTrigrams(stem, hashTrigramWeight*weight)
	}
	return acc.normalised()
}

// wordWeight is a word's weight: ln(1 + its length in letters), for frequent words are short;
// and that of a four-letter word at least for a number, as specific as a longer word however
// short ("2", "10k").
func wordWeight(w []byte) float64 {
	n := utf8.RuneCount(w)
	if n < 4 && bytes.ContainsFunc(w, unicode.IsDigit) {
		n = 4
	}
	return math.Log1p(float64(n))
}

// hashSum is the sum of a text's hashed features.
type hashSum [HashDimensions]float64

// add adds a feature of hash h: to the dimension h modulo 384, negated when h's top bit is set.
func (s *hashSum) add(h uint64, weight float64) {
	d := h % HashDimensions
	if h>>63 == 1 {
		s[d] -= weight
	} else {
		s[d] += weight
	}
}

// addTrigrams adds the character trigrams of "<" + stem, without allocating.
func (s *hashSum) addTrigrams(stem string, weight float64) {
	_, n1 := utf8.DecodeRuneInString(stem)
	if n1 == 0 || n1 == len(stem) {
		return // fewer than two letters: no trigram
	}
	_, n2 := utf8.DecodeRuneInString(stem[n1:])
	s.add(fnvString(fnvByte(fnvTrigram, '<'), stem[:n1+n2]), weight)
	// the trigram starting at a; b and c start its second and third letters
	for a, b, c := 0, n1, n1+n2; c < len(stem); {
		_, n := utf8.DecodeRuneInString(stem[c:])
		s.add(fnvString(fnvTrigram, stem[a:c+n]), weight)
		a, b, c = b, c, c+n
	}
}

// normalised is s scaled to length 1, or the zero vector.
func (s *hashSum) normalised() []float32 {
	var norm float64
	for _, v := range s {
		norm += v * v
	}
	vec := make([]float32, HashDimensions)
	if norm == 0 {
		return vec
	}
	norm = math.Sqrt(norm)
	for i, v := range s {
		vec[i] = float32(v / norm)
	}
	return vec
}

// 64-bit FNV-1a, inline: hash/fnv's Hash64 takes a []byte, and the features are substrings.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// The hashes of the features' prefixes, as version 1 named them: "w:" + stem, "t:" + trigram.
var (
	fnvWord    = fnvString(fnvOffset, "w:")
	fnvTrigram = fnvString(fnvOffset, "t:")
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = fnvByte(h, s[i])
	}
	return h
}

// hashWord is a word of a text as Hash reads it.
type hashWord struct {
	// lower is the word lower-cased, its clitic cut off; empty for a negated auxiliary.
	lower []byte
	// start and end are the byte offsets of the whole word in the text.
	start, end int
	// upper says it begins with an upper-case letter.
	upper bool
}

// isWordRune says whether r belongs to a word.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isApostrophe says whether r is an apostrophe, typed or typographic.
func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// nextWord is the first word of text at or after byte i, lower-cased into buf; ok is false when
// there is none.
func nextWord(text string, i int, buf []byte) (w hashWord, ok bool) {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			w.upper = unicode.IsUpper(r)
			break
		}
		i += n
	}
	if i >= len(text) {
		return w, false
	}
	w.start = i
	apostrophe := -1 // where in buf the first apostrophe is
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if isApostrophe(r) && i+n < len(text) {
			if next, _ := utf8.DecodeRuneInString(text[i+n:]); isWordRune(next) {
				if apostrophe < 0 {
					apostrophe = len(buf)
				}
				buf = append(buf, '\'')
				i += n
				continue
			}
		}
		if !isWordRune(r) {
			break
		}
		buf = utf8.AppendRune(buf, unicode.ToLower(r))
		i += n
	}
	w.end = i
	if apostrophe >= 0 {
		switch string(buf[apostrophe+1:]) {
		case "t": // didn't, can't: a negated auxiliary, read as "not"
			buf = append(buf[:0], "not"...)
		case "s", "m", "re", "ve", "ll", "d": // a clitic
			buf = buf[:apostrophe]
		default: // o'clock, rock'n'roll
			kept := buf[:0]
			for _, b := range buf {
				if b != '\'' {
					kept = append(kept, b)
				}
			}
			buf = kept
		}
	}
	w.lower = buf
	return w, true
}

// runeBefore is the last rune before byte i of text that is not a space, or 0.
func runeBefore(text string, i int) rune {
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(text[:i])
		if !unicode.IsSpace(r) {
			return r
		}
		i -= n
	}
	return 0
}

// endsPhrase says whether the text from byte i on is spaces up to a punctuation mark that
// closes a phrase, or the end.
func endsPhrase(text string, i int) bool {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			return strings.ContainsRune(",;:.!?", r)
		}
		i += n
	}
	return true
}

// isNegation says whether w negates: the stop words "no", "not" and "nor" are kept, as one
// feature, so that a fact and its negation are not embedded alike.
func isNegation(w []byte) bool {
	switch string(w) {
	case "no", "not", "nor":
		return true
	}
	return false
}

// onlySpace says whether s is spaces only.
func onlySpace(s string) bool { return strings.TrimSpace(s) == "" }

// isGreeting says whether a capitalised word right after w is most likely a vocative ("Hi Tom",
// "Thanks Ana").
func isGreeting(w []byte) bool {
	switch string(w) {
	case "hi", "hey", "hello", "bye", "goodbye", "thanks", "dear", "morning", "night", "evening",
		"congrats", "congratulations", "welcome", "sorry", "cheers", "oh", "yes", "no", "ok",
		"okay", "well", "ah", "wow":
		return true
	}
	return false
}
