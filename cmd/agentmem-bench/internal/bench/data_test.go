package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// refMulberry32 is the specification's formula written again, JavaScript style: every step on
// 64-bit integers masked to 32 bits, imul as a masked product. It checks Rand independently.
func refMulberry32(seed uint32) func() uint32 {
	const mask = 0xFFFFFFFF
	a := uint64(seed)
	imul := func(x, y uint64) uint64 { return (x * y) & mask }
	return func() uint32 {
		a = (a + 0x6D2B79F5) & mask
		t := imul(a^(a>>15), 1|a)
		t = ((t + imul(t^(t>>7), 61|t)) & mask) ^ t
		return uint32((t ^ (t >> 14)) & mask)
	}
}

func TestRandPinnedDraws(t *testing.T) {
	// Values computed with a separate implementation of the specification's formula.
	want := []uint32{2581720956, 1925393290, 3661312704, 2876485805, 750819978}
	r := Stream(0) // seeded 42
	for i, w := range want {
		if got := r.Uint32(); got != w {
			t.Fatalf("draw %d of seed 42 = %d, want %d", i, got, w)
		}
	}
	r = Stream(StreamMemories) // seeded 43
	for i, w := range []uint32{4294155937, 1187139027, 2273823768} {
		if got := r.Uint32(); got != w {
			t.Fatalf("draw %d of seed 43 = %d, want %d", i, got, w)
		}
	}
}

func TestRandMatchesReference(t *testing.T) {
	for _, seed := range []uint32{0, 1, 42, 47, 0xFFFFFFFF, 0x6D2B79F5} {
		r, ref := NewRand(seed), refMulberry32(seed)
		for i := 0; i < 10000; i++ {
			if got, want := r.Uint32(), ref(); got != want {
				t.Fatalf("seed %d draw %d = %d, want %d", seed, i, got, want)
			}
		}
	}
}

func TestRandIntAndFloat(t *testing.T) {
	r, ref := NewRand(42), refMulberry32(42)
	for i := 0; i < 1000; i++ {
		u := ref()
		want := int(math.Floor(float64(u) / 4294967296 * 5000))
		if got := r.Int(5000); got != want {
			t.Fatalf("int(5000) draw %d = %d, want %d", i, got, want)
		}
	}
	r = NewRand(7)
	for i := 0; i < 1000; i++ {
		if f := r.Float(); f < 0 || f >= 1 {
			t.Fatalf("float() = %v, want [0, 1)", f)
		}
	}
}

func TestVocabulary(t *testing.T) {
	if len(Vocab) != VocabSize || len(syllables) != 90 {
		t.Fatalf("vocabulary of %d words from %d syllables, want 5000 from 90", len(Vocab), len(syllables))
	}
	for i, want := range map[int]string{0: "bababa", 1: "beba", 2: "biba", 3: "bobage", 90: "babeba", 4999: "mupa"} {
		if Vocab[i] != want {
			t.Errorf("word %d = %q, want %q", i, Vocab[i], want)
		}
	}
	seen := map[string]int{}
	for i, w := range Vocab {
		if j, ok := seen[w]; ok {
			t.Fatalf("words %d and %d are both %q", j, i, w)
		}
		seen[w] = i
	}
}

func TestFirstChatMessage(t *testing.T) {
	var first string
	err := GenerateChat(Stream(StreamMessages), 1, 1, func(s, m int, text string) error {
		first = text
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "kajo weguhi jimi fokike rucu gihu fefa rojuwe cimo gehepi vudo bamuba kole cafi zeda " +
		"tohi doko wojo fuba dohe meme vebi wejihi sibe tudu kobo hoda milo lehu mabema"
	if first != want {
		t.Fatalf("message 0 of session 0 =\n%q\nwant\n%q", first, want)
	}
}

func TestIDs(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{SessionID(0).String(), "00000000-0000-4000-8000-000000000000"},
		{SessionID(1999).String(), "00000000-0000-4000-8000-000000001999"},
		{GrowthSessionID(0).String(), "00000000-0000-4000-8000-000000002000"},
		{ChatUserID.String(), "00000000-0000-4000-8000-000000000001"},
		{UserID(0).String(), "00000000-0000-4000-9000-000000000000"},
		{UserID(9999).String(), "00000000-0000-4000-9000-000000009999"},
	} {
		t.Run(fmt.Sprint(c.got), func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %s, want %s", c.got, c.want)
			}
		})
	}
	if Role(0) != "user" || Role(1) != "assistant" || Role(198) != "user" {
		t.Error("even messages are the user's, odd ones the assistant's")
	}
}

func TestQueries(t *testing.T) {
	c := GenerateCorpus(Stream(StreamMemories), 1000, 100)
	qs := GenerateQueries(Stream(StreamQueries), 3, c)
	want := []struct {
		user, memory int
		positions    []int
		text         string
	}{
		{629, 9, []int{9, 10, 13, 11, 0}, "janija rogowe fuku waga baboba"},
		{563, 12, []int{1, 7, 4, 10, 9}, "fime bapaba fafafa folake nudefo"},
		{797, 27, []int{14, 12, 15, 2, 11}, "miba gode gami rumi mica"},
	}
	for i, w := range want {
		q := qs[i]
		if q.User != w.user || q.Memory != w.memory || q.Text != w.text || len(q.Positions) != 5 {
			t.Fatalf("query %d = %+v, want %+v", i, q, w)
		}
		for k := range w.positions {
			if q.Positions[k] != w.positions[k] {
				t.Fatalf("query %d positions %v, want %v", i, q.Positions, w.positions)
			}
		}
	}
}

func TestFirstTurn(t *testing.T) {
	turns := GenerateTurns(Stream(StreamOps), 1, 2000)
	if turns[0].Session != 1672 || turns[0].User[:len("vococe pabu lulu")] != "vococe pabu lulu" {
		t.Fatalf("turn 0 = session %d, %q", turns[0].Session, turns[0].User)
	}
}

func TestEmbedder(t *testing.T) {
	var e Embedder
	if got := wordSigns("bababa"); got[0] != 336987883 || got[1] != 2987613435 {
		t.Fatalf("sign draws of bababa = %d, %d; want 336987883, 2987613435", got[0], got[1])
	}
	vs, err := e.Embed(context.Background(), []string{"bababa beba", "bababa beba bababa", ""})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float64{
		{0.07088812050083358, 0, -0.07088812050083358, 0.07088812050083358, 0, 0},
		{0.06748819059987712, 0.022496063533292376, -0.06748819059987712, 0.06748819059987712, -0.022496063533292376, 0.022496063533292376},
	} {
		if len(vs[i]) != Dimensions {
			t.Fatalf("vector of %d dimensions, want %d", len(vs[i]), Dimensions)
		}
		for d, w := range want {
			if math.Abs(float64(vs[i][d])-w) > 1e-7 {
				t.Fatalf("text %d dimension %d = %v, want %v", i, d, vs[i][d], w)
			}
		}
		var norm float64
		for _, x := range vs[i] {
			norm += float64(x) * float64(x)
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Fatalf("text %d: |v|^2 = %v, want 1", i, norm)
		}
	}
	for _, x := range vs[2] {
		if x != 0 {
			t.Fatal("a text without words must embed to the zero vector")
		}
	}
	if d := CosineDistance(vs[0], vs[0]); math.Abs(d) > 1e-6 {
		t.Fatalf("distance of a vector to itself = %v", d)
	}
}

// W3-sources' queries are QueryWords distinct words of the row they name, from both sources.
func TestSourcesQueries(t *testing.T) {
	c := GenerateSources(Stream(StreamSources), 300, 3)
	queries := GenerateSourcesQueries(Stream(StreamSourcesQueries), 200, c)
	again := GenerateSourcesQueries(Stream(StreamSourcesQueries), 200, GenerateSources(Stream(StreamSources), 300, 3))
	sources := map[bool]int{}
	for i, q := range queries {
		if q != again[i] {
			t.Fatalf("query %d differs between two draws: %+v, %+v", i, q, again[i])
		}
		sources[q.FromMessage]++
		words := c.MemoryWords(q.Row)
		if q.FromMessage {
			words = c.MessageWords(q.Row)
		}
		text := " " + Join(words) + " "
		for _, w := range strings.Fields(q.Text) {
			if !strings.Contains(text, " "+w+" ") {
				t.Fatalf("query %d: %q is not a word of its row", i, w)
			}
		}
		if len(strings.Fields(q.Text)) != QueryWords {
			t.Fatalf("query %d: %q is not %d words", i, q.Text, QueryWords)
		}
	}
	if sources[true] < 60 || sources[false] < 60 {
		t.Errorf("queries from messages / memories: %d / %d", sources[true], sources[false])
	}
	if c.OtherText(0) == Join(c.MessageWords(0)) {
		t.Error("the other users' messages repeat the user's")
	}
}
