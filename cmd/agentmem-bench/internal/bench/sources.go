package bench

import (
	"fmt"

	"github.com/google/uuid"
)

// The streams of the recall-by-source workload (W3-sources), after the specification's six and
// History's: its data (stream 7, seed 49) and its queries (stream 8, seed 50).
const (
	StreamSources        = 7
	StreamSourcesQueries = 8
)

// SourcesPerSession is the number of messages of each W3-sources session.
const SourcesPerSession = 100

// SourcesUserID is the user of W3-sources, who holds Rows memories and Rows messages:
// 00000000-0000-4000-c000-000000000001.
var SourcesUserID = uuid.MustParse("00000000-0000-4000-c000-000000000001")

// SourcesSessionID is the UUID of the W3-sources user's session s:
// 00000000-0000-4000-d000- + s as 12 decimal digits.
func SourcesSessionID(s int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-d000-%012d", s))
}

// OtherSessionID is the UUID of the session that holds the W3-sources messages of memory user
// u (UserID(u)): 00000000-0000-4000-e000- + u as 12 decimal digits.
func OtherSessionID(u int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-e000-%012d", u))
}

// SourcesCorpus is the data of W3-sources, drawn from the sources stream in this order: the
// user's Rows messages (MessageWords words each, SourcesPerSession to a session, roles
// alternating as in the chat data), the user's Rows memories (MemoryWords words), then Rows
// messages of other users (Others users in turn, Rows / Others each), which share the tables
// and their indexes with the user's as the W3 memories of other users do. Texts are kept as
// word indices.
type SourcesCorpus struct {
	Rows, Others int
	// Vectors is VectorsRandom or VectorsClustered: how the texts were drawn.
	Vectors  string
	messages []uint16
	memories []uint16
	others   []uint16
}

// GenerateSources draws the W3-sources data from r (the sources stream).
func GenerateSources(r *Rand, rows, others int) *SourcesCorpus {
	c := &SourcesCorpus{Rows: rows, Others: others, Vectors: VectorsRandom,
		messages: make([]uint16, rows*MessageWords), memories: make([]uint16, rows*MemoryWords),
		others: make([]uint16, rows*MessageWords)}
	for _, words := range [][]uint16{c.messages, c.memories, c.others} {
		for i := range words {
			words[i] = uint16(r.Int(VocabSize))
		}
	}
	return c
}

// MessageWords are the word indices of the user's message m.
func (c *SourcesCorpus) MessageWords(m int) []uint16 {
	return c.messages[m*MessageWords : (m+1)*MessageWords]
}

// MemoryWords are the word indices of the user's memory m.
func (c *SourcesCorpus) MemoryWords(m int) []uint16 {
	return c.memories[m*MemoryWords : (m+1)*MemoryWords]
}

// OtherText is the text of other message m (of user m / (Rows / Others)).
func (c *SourcesCorpus) OtherText(m int) string {
	return Join(c.others[m*MessageWords : (m+1)*MessageWords])
}

// SourcesQuery is one W3-sources query: QueryWords words of one of the user's messages
// (FromMessage) or memories, Row its index.
type SourcesQuery struct {
	FromMessage bool
	Row         int
	Text        string
}

// GenerateSourcesQueries draws n queries from r: the source (int(2) == 1: a message), the row
// int(Rows), then QueryWords distinct word positions of that text (redrawing repeats), the
// query being those words in draw order, as W3's queries are made.
func GenerateSourcesQueries(r *Rand, n int, c *SourcesCorpus) []SourcesQuery {
	out := make([]SourcesQuery, n)
	for i := range out {
		q := SourcesQuery{FromMessage: r.Int(2) == 1, Row: r.Int(c.Rows)}
		words := c.MemoryWords(q.Row)
		if q.FromMessage {
			words = c.MessageWords(q.Row)
		}
		seen := map[int]bool{}
		var pick []uint16
		for len(pick) < QueryWords {
			p := r.Int(len(words))
			if seen[p] {
				continue
			}
			seen[p] = true
			pick = append(pick, words[p])
		}
		q.Text = Join(pick)
		out[i] = q
	}
	return out
}
