package bench

import (
	"fmt"

	"github.com/google/uuid"
)

// Sizes of the texts of the specification, in words.
const (
	MessageWords = 30
	MemoryWords  = 20
	QueryWords   = 5
)

// GrowthSessionBase numbers the growth sessions after the 2,000 chat sessions, so that their
// ids never meet a chat session's: growth session i is session GrowthSessionBase + i.
const GrowthSessionBase = 2000

// ChatUserID owns every chat and growth session: 00000000-0000-4000-8000-000000000001.
var ChatUserID = uuid.MustParse("00000000-0000-4000-8000-000000000001")

// SessionID is the UUID of chat session s: 00000000-0000-4000-8000- + s as 12 decimal digits.
func SessionID(s int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-8000-%012d", s))
}

// GrowthSessionID is the UUID of growth session i (in generation order).
func GrowthSessionID(i int) uuid.UUID { return SessionID(GrowthSessionBase + i) }

// UserID is the UUID of memory user u: 00000000-0000-4000-9000- + u as 12 decimal digits.
func UserID(u int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-9000-%012d", u))
}

// Role is the role of message m of a session: the user's when m is even, else the assistant's.
func Role(m int) string {
	if m%2 == 0 {
		return "user"
	}
	return "assistant"
}

// GenerateChat draws sessions x perSession messages of MessageWords words from r (the
// messages stream), session by session, message by message, and hands each to emit.
func GenerateChat(r *Rand, sessions, perSession int, emit func(session, msg int, text string) error) error {
	for s := 0; s < sessions; s++ {
		for m := 0; m < perSession; m++ {
			if err := emit(s, m, Text(r, MessageWords)); err != nil {
				return err
			}
		}
	}
	return nil
}

// GenerateGrowth draws the growth sessions from r (the growth stream): for each length in
// order, perLength sessions of that many messages, message by message. index numbers the
// sessions in generation order (GrowthSessionID(index) is the session's id).
func GenerateGrowth(r *Rand, lengths []int, perLength int, emit func(index, length, msg int, text string) error) error {
	index := 0
	for _, n := range lengths {
		for k := 0; k < perLength; k++ {
			for m := 0; m < n; m++ {
				if err := emit(index, n, m, Text(r, MessageWords)); err != nil {
					return err
				}
			}
			index++
		}
	}
	return nil
}

// Corpus is the long-term memories: Users x PerUser memories of MemoryWords words, kept as
// word indices.
type Corpus struct {
	Users, PerUser int
	words          []uint16
}

// GenerateCorpus draws users x perUser memories from r (the memories stream), user by user.
func GenerateCorpus(r *Rand, users, perUser int) *Corpus {
	c := &Corpus{Users: users, PerUser: perUser, words: make([]uint16, users*perUser*MemoryWords)}
	for i := range c.words {
		c.words[i] = uint16(r.Int(VocabSize))
	}
	return c
}

// Words are the word indices of memory m of user u.
func (c *Corpus) Words(u, m int) []uint16 {
	i := (u*c.PerUser + m) * MemoryWords
	return c.words[i : i+MemoryWords]
}

// Text is the text of memory m of user u.
func (c *Corpus) Text(u, m int) string { return Join(c.Words(u, m)) }

// Query is one recall query of W3.
type Query struct {
	User, Memory int
	// Positions are the word positions taken from the memory, in draw order.
	Positions []int
	Text      string
}

// GenerateQueries draws n queries from r (the queries stream, or the warmup stream for the
// warm-up queries): user = int(users), memory = int(perUser), then QueryWords distinct word
// positions int(MemoryWords), a repeat drawn again; the query is those words, in draw order.
func GenerateQueries(r *Rand, n int, c *Corpus) []Query {
	out := make([]Query, n)
	for i := range out {
		q := Query{User: r.Int(c.Users), Memory: r.Int(c.PerUser)}
		seen := map[int]bool{}
		for len(q.Positions) < QueryWords {
			p := r.Int(MemoryWords)
			if seen[p] {
				continue
			}
			seen[p] = true
			q.Positions = append(q.Positions, p)
		}
		words := c.Words(q.User, q.Memory)
		pick := make([]uint16, len(q.Positions))
		for k, p := range q.Positions {
			pick[k] = words[p]
		}
		q.Text = Join(pick)
		out[i] = q
	}
	return out
}

// Turn is one W1 commit: a user message and the assistant's answer, to one session.
type Turn struct {
	Session   int
	User      string
	Assistant string
}

// GenerateTurns draws n turns from r (the ops stream): session = int(sessions), then a
// MessageWords-word user message and a MessageWords-word assistant message.
func GenerateTurns(r *Rand, n, sessions int) []Turn {
	out := make([]Turn, n)
	for i := range out {
		out[i].Session = r.Int(sessions)
		out[i].User = Text(r, MessageWords)
		out[i].Assistant = Text(r, MessageWords)
	}
	return out
}

// GenerateReads draws n W2 reads from r (the ops stream): the session of each, int(sessions).
func GenerateReads(r *Rand, n, sessions int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = r.Int(sessions)
	}
	return out
}
