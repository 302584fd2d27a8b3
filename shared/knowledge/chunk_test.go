package knowledge

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func knSentences(n int) string {
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("Sentence")
		for k := 0; k < 6+i%5; k++ {
			b.WriteByte(' ')
			b.WriteString(words[(i+k)%len(words)])
		}
		b.WriteByte('.')
	}
	return b.String()
}

func knParagraph(chars int, seed string) string {
	var b strings.Builder
	for b.Len() < chars {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(seed)
	}
	return b.String()
}

// knCheck asserts what every split must satisfy and returns the chunks' contents.
func knCheck(t *testing.T, text string, o Options, chunks []Chunk, mayCutWords bool) {
	t.Helper()
	o = o.withDefaults()
	covered := make([]bool, len(text))
	for i, c := range chunks {
		if c.Index != i {
			t.Errorf("chunk %d has index %d", i, c.Index)
		}
		if c.Content == "" || strings.TrimSpace(c.Content) != c.Content {
			t.Errorf("chunk %d is empty or untrimmed: %q", i, c.Content)
		}
		if text[c.Start:c.End] != c.Content {
			t.Errorf("chunk %d: content is not text[%d:%d]", i, c.Start, c.End)
		}
		if n := utf8.RuneCountInString(c.Content); n > o.Size {
			t.Errorf("chunk %d has %d characters, more than %d", i, n, o.Size)
		}
		if i > 0 {
			prev := chunks[i-1]
			if c.Start <= prev.Start || c.End <= prev.End {
				t.Errorf("chunk %d [%d,%d) does not move on from [%d,%d)", i, c.Start, c.End, prev.Start, prev.End)
			}
			if ov := prev.End - c.Start; ov > 0 && utf8.RuneCountInString(text[c.Start:prev.End]) > o.Overlap {
				t.Errorf("chunk %d overlaps the previous by %d bytes, more than %d characters", i, ov, o.Overlap)
			}
		}
		if !mayCutWords {
			if knInsideWord(text, c.Start) || knInsideWord(text, c.End) {
				t.Errorf("chunk %d [%d,%d) cuts a word: %q", i, c.Start, c.End, c.Content)
			}
		}
		for k := c.Start; k < c.End; k++ {
			covered[k] = true
		}
	}
	for i, r := range text {
		if !unicode.IsSpace(r) && !covered[i] {
			t.Fatalf("character %q at byte %d is in no chunk", r, i)
		}
	}
}

// knInsideWord reports whether byte offset p falls between two letters of one spaced word.
func knInsideWord(text string, p int) bool {
	if p <= 0 || p >= len(text) {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(text[:p])
	cur, _ := utf8.DecodeRuneInString(text[p:])
	if unicode.IsSpace(prev) || unicode.IsSpace(cur) || unspaced(prev) || unspaced(cur) {
		return false
	}
	return true
}

func TestSplit(t *testing.T) {
	t.Parallel()
	para := func(i int) string { return knParagraph(380, "Paragraph "+string(rune('A'+i))+" talks about things.") }
	cjkSentence := "我们今天讨论知识库的设计和检索增强生成的实现方法。"
	tests := []struct {
		name        string
		text        string
		opts        Options
		chunks      int // -1: any number above 1
		mayCutWords bool
		check       func(t *testing.T, chunks []Chunk)
	}{
		{name: "empty", text: "", chunks: 0},
		{name: "blank", text: " \n\n\t \r\n ", chunks: 0},
		{name: "short", text: "  Hello, world.\n", chunks: 1, check: func(t *testing.T, c []Chunk) {
			if c[0].Content != "Hello, world." {
				t.Errorf("content %q", c[0].Content)
			}
		}},
		{name: "exactly one chunk", text: strings.Repeat("x", 1000), chunks: 1},
		{
			name: "paragraphs are kept whole", chunks: 2,
			text: para(0) + "\n\n" + para(1) + "\n\n" + para(2) + "\n\n" + para(3),
			check: func(t *testing.T, c []Chunk) {
				if !strings.HasSuffix(c[0].Content, "things.") || !strings.HasPrefix(c[1].Content, "Paragraph") {
					t.Errorf("first chunk does not end at a paragraph: ...%q", c[0].Content[len(c[0].Content)-30:])
				}
				if c[1].Start < c[0].End {
					t.Error("a chunk cut at a paragraph break is overlapped by the next")
				}
				if strings.Count(c[0].Content, "\n\n") != 1 {
					t.Errorf("first chunk should hold two paragraphs: %d breaks", strings.Count(c[0].Content, "\n\n"))
				}
			},
		},
		{
			name: "CRLF paragraphs", chunks: 2,
			text: para(0) + "\r\n\r\n" + para(1) + "\r\n\r\n" + para(2),
			check: func(t *testing.T, c []Chunk) {
				if !strings.HasSuffix(c[0].Content, "things.") {
					t.Errorf("first chunk does not end at a paragraph")
				}
			},
		},
		{
			name: "very long paragraph splits at sentences", text: knSentences(120), chunks: -1,
			check: func(t *testing.T, c []Chunk) {
				for i, ch := range c {
					if !strings.HasPrefix(ch.Content, "Sentence") {
						t.Errorf("chunk %d does not start a sentence: %q", i, ch.Content[:20])
					}
					if !strings.HasSuffix(ch.Content, ".") {
						t.Errorf("chunk %d does not end a sentence", i)
					}
					if i > 0 && ch.Start >= c[i-1].End {
						t.Errorf("chunk %d does not overlap the previous one", i)
					}
					if n := utf8.RuneCountInString(ch.Content); i < len(c)-1 && n < 500 {
						t.Errorf("chunk %d has only %d characters", i, n)
					}
				}
			},
		},
		{
			name: "lines of a list break like sentences", opts: Options{Size: 60, Overlap: -1},
			text:   "- first item of the list\n- second item of the list\n- third item of the list\n- fourth",
			chunks: 2,
			check: func(t *testing.T, c []Chunk) {
				if c[0].Content != "- first item of the list\n- second item of the list" {
					t.Errorf("first chunk %q", c[0].Content)
				}
			},
		},
		{
			name: "CJK text without spaces splits at sentence marks", text: strings.Repeat(cjkSentence, 120), chunks: -1,
			check: func(t *testing.T, c []Chunk) {
				for i, ch := range c[:len(c)-1] {
					if !strings.HasSuffix(ch.Content, "。") {
						t.Errorf("chunk %d does not end at a sentence mark", i)
					}
				}
			},
		},
		{
			name: "CJK text without any mark splits between characters", text: strings.Repeat("知识库设计检索增强生成", 250), chunks: 4,
			check: func(t *testing.T, c []Chunk) {
				if n := utf8.RuneCountInString(c[0].Content); n != 1000 {
					t.Errorf("first chunk has %d characters, want 1000", n)
				}
				if c[1].Start >= c[0].End {
					t.Error("no overlap between CJK chunks")
				}
			},
		},
		{
			name: "a single huge word is cut where it must", text: strings.Repeat("a", 2500), chunks: 3, mayCutWords: true,
			check: func(t *testing.T, c []Chunk) {
				want := []int{1000, 1000, 500}
				for i, ch := range c {
					if len(ch.Content) != want[i] {
						t.Errorf("chunk %d has %d characters, want %d", i, len(ch.Content), want[i])
					}
				}
			},
		},
		{
			name: "words around a huge word stay whole", mayCutWords: true, chunks: -1,
			text: "some words before " + strings.Repeat("b", 1500) + " and some words after",
			check: func(t *testing.T, c []Chunk) {
				if c[0].Content != "some words before" {
					t.Errorf("first chunk %q", c[0].Content)
				}
				if !strings.HasSuffix(c[len(c)-1].Content, " and some words after") {
					t.Errorf("last chunk %q", c[len(c)-1].Content)
				}
			},
		},
		{
			name: "small chunks with overlap", opts: Options{Size: 40, Overlap: 15}, chunks: -1,
			text: "One two three. Four five six seven. Eight nine ten eleven twelve. Thirteen fourteen.",
		},
		{
			name: "overlap is capped at half a chunk", opts: Options{Size: 30, Overlap: 1000}, chunks: -1,
			text: knSentences(10),
		},
		{
			name: "mixed scripts", chunks: -1, opts: Options{Size: 50, Overlap: 10},
			text: "Knowledge base 知识库。Retrieval augmented generation 检索增强生成！ It works. ありがとうございます。",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			chunks := Split(tc.text, tc.opts)
			switch {
			case tc.chunks >= 0 && len(chunks) != tc.chunks:
				t.Fatalf("%d chunks, want %d", len(chunks), tc.chunks)
			case tc.chunks < 0 && len(chunks) < 2:
				t.Fatalf("%d chunks, want several", len(chunks))
			}
			knCheck(t, tc.text, tc.opts, chunks, tc.mayCutWords)
			if tc.check != nil {
				tc.check(t, chunks)
			}
		})
	}
}

func TestSplitLarge(t *testing.T) {
	t.Parallel()
	// About 1 MiB, the most one request can carry, in one paragraph.
	text := knSentences(14000)
	chunks := Split(text, Options{})
	knCheck(t, text, Options{}, chunks, false)
	if len(chunks) < len(text)/1000 {
		t.Errorf("%d chunks for %d bytes", len(chunks), len(text))
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Hello world. Second sentence!\n\nNew paragraph", 20, 5)
	f.Add(strings.Repeat("知识库。", 30), 16, 4)
	f.Add(strings.Repeat("x", 300), 50, 10)
	f.Add("  \n \t", 10, 2)
	f.Add("a\xffb c\xfe. d", 3, 1)
	f.Fuzz(func(t *testing.T, text string, size, overlap int) {
		if size < 1 || size > 2000 || overlap < -1 || overlap > 4000 || len(text) > 1<<16 {
			t.Skip()
		}
		o := Options{Size: size, Overlap: overlap}
		chunks := Split(text, o)
		if !utf8.ValidString(text) {
			return // offsets hold; content checks assume valid text
		}
		knCheck(t, text, o, chunks, true)
	})
}
