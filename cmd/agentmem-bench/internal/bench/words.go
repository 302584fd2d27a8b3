package bench

import (
	"fmt"

	"github.com/google/uuid"
)

// The streams of the common-words workload: its data (stream 9, seed 51) and its queries
// (stream 10, seed 52).
const (
	StreamWords        = 9
	StreamWordsQueries = 10
)

// The words workload's shape (besides Sizes.WordsMessages): how many other users hold the
// other messages, the messages of a session, and the words of a message besides the names.
const (
	WordsOtherUsers     = 40
	WordsPerSession     = 100
	WordsMessageWords   = 12
	WordsSpeakerA       = "John"
	WordsSpeakerB       = "Maria"
	wordsMentionPercent = 50
)

// WordsUserID is the user of the words workload: 00000000-0000-4000-f000-000000000001.
var WordsUserID = uuid.MustParse("00000000-0000-4000-f000-000000000001")

// WordsOtherUserID is other user u of the words workload: 00000000-0000-4000-f100- + u as 12
// decimal digits.
func WordsOtherUserID(u int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-f100-%012d", u))
}

// WordsSessionID is session s of user u of the words workload (u -1: the workload's user).
func WordsSessionID(u, s int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-f2%02d-%012d", u+1, s))
}

// WordsMessage is one message of the words workload.
type WordsMessage struct {
	Name, Text string
	// Words are the vocabulary words of Text.
	Words []uint16
}

// WordsMessages draws n messages of a conversation between WordsSpeakerA (even positions) and
// WordsSpeakerB (odd ones) from r: WordsMessageWords vocabulary words each, and half of B's
// messages name A at a drawn position. A's name is thus in three quarters of the messages'
// full text (as the speaker's name or in the text) and B's in half: the common words of a
// question about them.
func WordsMessages(r *Rand, n int) []WordsMessage {
	out := make([]WordsMessage, n)
	for i := range out {
		words := Words(r, WordsMessageWords)
		text := Join(words)
		name := WordsSpeakerA
		if i%2 == 1 {
			name = WordsSpeakerB
			if r.Int(100) < wordsMentionPercent {
				at := r.Int(len(words) + 1)
				text = joinWith(words[:at], WordsSpeakerA, words[at:])
			}
		}
		out[i] = WordsMessage{Name: name, Text: text, Words: words}
	}
	return out
}

func joinWith(before []uint16, word string, after []uint16) string {
	s := Join(before)
	if s != "" {
		s += " "
	}
	s += word
	if len(after) > 0 {
		s += " " + Join(after)
	}
	return s
}

// WordsQuery draws a question of the words workload from r about msgs: "What did John say to
// Maria about X and Y?", X and Y two distinct words of a drawn message. Its lexemes are A's
// name (in three quarters of the messages), B's (in half), "say" and two words of the
// vocabulary (each in about WordsMessageWords / VocabSize of the messages).
func WordsQuery(r *Rand, msgs []WordsMessage) string {
	m := msgs[r.Int(len(msgs))]
	a := r.Int(len(m.Words))
	b := r.Int(len(m.Words) - 1)
	if b >= a {
		b++
	}
	return fmt.Sprintf("What did %s say to %s about %s and %s?", WordsSpeakerA, WordsSpeakerB, Vocab[m.Words[a]], Vocab[m.Words[b]])
}

// StreamTalk draws the conversations the words workload's talk user holds beyond the
// labelled set's (stream 12, seed 54).
const StreamTalk = 12

// TalkUserID is the words workload's user of natural conversation:
// 00000000-0000-4000-f300-000000000001.
var TalkUserID = uuid.MustParse("00000000-0000-4000-f300-000000000001")

// TalkSessionID is session s of conversation c of the talk user.
func TalkSessionID(c, s int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-f400-%06d%06d", c, s))
}

// TalkConversations are the talk user's conversations: the labelled set's and as many again
// drawn from StreamTalk (the same pairs of people, other facts and sessions), about 7,000
// turns in all. Each keeps its questions, so the user is asked what a person would ask.
func TalkConversations() []Conversation {
	return append(append([]Conversation(nil), Conversations()...), generateConversations(Stream(StreamTalk))...)
}
