// Package knowledge splits documents into overlapping chunks for retrieval. It is pure text
// processing: no storage, no embedding.
//
// Cuts prefer, in order, paragraph breaks (a blank line), sentence ends and line breaks, word
// boundaries (white space, or between two characters of a script written without spaces such as
// Chinese and Japanese), and only then any character: a word is cut only when it alone is longer
// than a chunk.
package knowledge

import (
	"unicode"
	"unicode/utf8"
)

// Defaults of Options.
const (
	// DefaultSize is the default largest chunk, in characters: about 250 tokens of English,
	// small enough for a precise embedding, large enough to hold an idea with its context.
	DefaultSize = 1000
	// DefaultOverlap is the default number of characters a chunk repeats from the end of the
	// previous one, so a sentence cut at a border is whole in one of them.
	DefaultOverlap = 150
)

// Options configures Split.
type Options struct {
	// Size is the largest chunk in characters (Unicode code points); default DefaultSize.
	Size int
	// Overlap is how many characters, at most, a chunk repeats from the end of the previous
	// chunk; default DefaultOverlap when zero, none when negative. It is capped at half of Size
	// so that every chunk moves on by at least half a chunk.
	Overlap int
}

func (o Options) withDefaults() Options {
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	switch {
	case o.Overlap == 0:
		o.Overlap = DefaultOverlap
	case o.Overlap < 0:
		o.Overlap = 0
	}
	if o.Overlap > o.Size/2 {
		o.Overlap = o.Size / 2
	}
	return o
}

// Chunk is one piece of a document.
type Chunk struct {
	// Index numbers the chunks of a document from 0, in document order.
	Index int
	// Content is the chunk's text: text[Start:End], without leading or trailing white space.
	Content string
	// Start and End are the byte offsets of Content in the document.
	Start, End int
}

// Break strengths: what a cut before a given character would split.
const (
	breakNone      = iota // inside a word
	breakWord             // between words
	breakSentence         // after a sentence or at a line break
	breakParagraph        // at a blank line, or the end of the text
)

// Split cuts text into chunks of at most o.Size characters. A chunk cut inside a paragraph is
// followed by one that repeats up to o.Overlap characters of its end, starting at a sentence
// or, failing that, a word; a chunk cut at a paragraph break is followed by the next paragraph.
// A text of nothing but white space gives no chunk.
func Split(text string, o Options) []Chunk {
	o = o.withDefaults()
	runes := []rune(text)
	n := len(runes)
	// offs[i] is the byte offset of runes[i]; offs[n] is len(text).
	offs := make([]int, n+1)
	for i, b := 0, 0; i < n; i++ {
		offs[i] = b
		b += utf8.RuneLen(runes[i])
		if runes[i] == utf8.RuneError {
			// An invalid byte decodes to RuneError but occupies one byte.
			if _, size := utf8.DecodeRuneInString(text[offs[i]:]); size == 1 {
				b = offs[i] + 1
			}
		}
	}
	offs[n] = len(text)
	pri := breaks(runes)

	var out []Chunk
	s := skipSpace(runes, 0)
	minCut := s + 1
	for s < n {
		e := n
		if n-s > o.Size {
			e = cut(pri, s, max(minCut, s+1), s+o.Size)
		}
		content := trimmed(runes, s, e)
		if content[1] > content[0] {
			out = append(out, Chunk{
				Index:   len(out),
				Content: text[offs[content[0]]:offs[content[1]]],
				Start:   offs[content[0]],
				End:     offs[content[1]],
			})
		}
		if skipSpace(runes, e) >= n {
			break
		}
		// The next chunk must take in at least one character the previous one did not. A cut
		// at a paragraph break splits nothing: the next chunk starts with the next paragraph.
		next := skipSpace(runes, e)
		if pri[e] < breakParagraph {
			s = nextStart(runes, pri, s, e, o.Overlap)
		} else {
			s = next
		}
		minCut = next + 1
		if minCut > s+o.Size {
			s = next // the overlap would leave no room: start afresh
		}
	}
	return out
}

// cut chooses where the chunk that starts at s ends, within (lo-1, hi]: the latest strongest
// break in the second half of the window, else the latest break between words anywhere in it,
// else hi itself (a single word longer than a chunk).
func cut(pri []int, s, lo, hi int) int {
	half := max(lo, s+(hi-s)/2+1)
	for level := breakParagraph; level >= breakWord; level-- {
		for e := hi; e >= half; e-- {
			if pri[e] >= level {
				return e
			}
		}
	}
	for e := hi; e >= lo; e-- {
		if pri[e] >= breakWord {
			return e
		}
	}
	return hi
}

// nextStart chooses where the chunk after [s, e) starts: the earliest sentence start within
// the overlap, else the earliest word start, else e (no overlap).
func nextStart(runes []rune, pri []int, s, e, overlap int) int {
	if overlap > 0 {
		from := max(e-overlap, s+1)
		for _, level := range []int{breakSentence, breakWord} {
			for p := from; p < e; p++ {
				if pri[p] >= level {
					if q := skipSpace(runes, p); q < e {
						return q
					}
					break
				}
			}
		}
	}
	return skipSpace(runes, e)
}

// breaks rates every position i (a cut before runes[i]); position len(runes) is the end.
func breaks(runes []rune) []int {
	n := len(runes)
	pri := make([]int, n+1)
	pri[n] = breakParagraph
	for i := 1; i < n; i++ {
		prev, cur := runes[i-1], runes[i]
		switch {
		case unicode.IsSpace(cur) && !unicode.IsSpace(prev):
			newlines := 0
			for j := i; j < n && unicode.IsSpace(runes[j]); j++ {
				if runes[j] == '\n' {
					newlines++
				}
			}
			switch {
			case newlines >= 2:
				pri[i] = breakParagraph
			case newlines == 1 || endsSentence(runes[:i]):
				pri[i] = breakSentence
			default:
				pri[i] = breakWord
			}
		case unicode.IsSpace(cur) || unicode.IsSpace(prev):
			// Inside a run of white space or at the start of a word: the same cut, once
			// trimmed, as at the start of the run.
			pri[i] = breakWord
		case closesSentenceNoSpace(prev) && !isClosing(cur):
			pri[i] = breakSentence
		case unspaced(prev) || unspaced(cur):
			pri[i] = breakWord
		}
	}
	return pri
}

// endsSentence reports whether text ends a sentence: a terminal mark, perhaps followed by
// closing quotes or brackets.
func endsSentence(text []rune) bool {
	for i := len(text) - 1; i >= 0 && i >= len(text)-4; i-- {
		r := text[i]
		switch {
		case r == '.' || r == '!' || r == '?' || r == '…' || closesSentenceNoSpace(r):
			return true
		case isClosing(r):
			continue
		default:
			return false
		}
	}
	return false
}

// closesSentenceNoSpace reports the sentence marks of scripts written without spaces.
func closesSentenceNoSpace(r rune) bool {
	switch r {
	case '。', '！', '？', '｡', '．':
		return true
	}
	return false
}

func isClosing(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '»', '”', '’', '」', '』', '）', '】', '〉', '》':
		return true
	}
	return false
}

// unspaced reports characters of scripts written without spaces between words, where a line
// may break between any two characters.
func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		(r >= 0x3000 && r <= 0x303f) || // CJK symbols and punctuation
		(r >= 0xff00 && r <= 0xffef) // full-width forms
}

func skipSpace(runes []rune, i int) int {
	for i < len(runes) && unicode.IsSpace(runes[i]) {
		i++
	}
	return i
}

// trimmed is [s, e) without white space at either end, as rune indexes.
func trimmed(runes []rune, s, e int) [2]int {
	for s < e && unicode.IsSpace(runes[s]) {
		s++
	}
	for e > s && unicode.IsSpace(runes[e-1]) {
		e--
	}
	return [2]int{s, e}
}
