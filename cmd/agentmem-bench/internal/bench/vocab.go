package bench

import "strings"

// VocabSize is the number of pseudo-words of the vocabulary.
const VocabSize = 5000

const (
	consonants = "bcdfghjklmnprstvwz"
	vowels     = "aeiou"
)

// syllables are each consonant followed by each vowel, in that nested order (90).
var syllables = func() []string {
	out := make([]string, 0, len(consonants)*len(vowels))
	for _, c := range consonants {
		for _, v := range vowels {
			out = append(out, string(c)+string(v))
		}
	}
	return out
}()

// Vocab is the vocabulary: word i = syl[i % 90] + syl[(i / 90) % 90] + (syl[(i * 7) % 90]
// when i % 3 == 0). No randomness is involved.
var Vocab = func() []string {
	n := len(syllables)
	out := make([]string, VocabSize)
	for i := range out {
		w := syllables[i%n] + syllables[(i/n)%n]
		if i%3 == 0 {
			w += syllables[(i*7)%n]
		}
		out[i] = w
	}
	return out
}()

// Words draws n word indices from r: n draws of int(5000).
func Words(r *Rand, n int) []uint16 {
	out := make([]uint16, n)
	for i := range out {
		out[i] = uint16(r.Int(VocabSize))
	}
	return out
}

// Text draws a text of n words from r: the words joined by single spaces.
func Text(r *Rand, n int) string { return Join(Words(r, n)) }

// Join spells word indices as a text.
func Join(words []uint16) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Vocab[w])
	}
	return b.String()
}
