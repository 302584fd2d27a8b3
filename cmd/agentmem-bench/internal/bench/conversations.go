package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The kinds of question of the conversation set, as long-conversation benchmarks name them.
const (
	// KindSingleHop is answered by one turn.
	KindSingleHop = "single-hop"
	// KindMultiHop needs turns of different sessions together.
	KindMultiHop = "multi-hop"
	// KindTemporal asks when, or what held before a change, or what happened at a time.
	KindTemporal = "temporal"
	// KindOpenDomain needs knowledge of the world besides the turn (the country of a city).
	KindOpenDomain = "open-domain"
	// KindAdversarial asks of one speaker what only the other said: the answer is that they
	// never did, and the turn labelled is the one that shows whose it is.
	KindAdversarial = "adversarial"
)

// QuestionKinds are the kinds in the order the report lists them.
var QuestionKinds = []string{KindSingleHop, KindMultiHop, KindTemporal, KindOpenDomain, KindAdversarial}

// Conversation is one long conversation between two people over many sessions on distinct
// days, and the questions asked of it. Speaker 0 speaks as the user and speaker 1 as the
// assistant when it is stored.
type Conversation struct {
	Speakers  [2]string              `json:"speakers"`
	Sessions  []ConversationSession  `json:"sessions"`
	Questions []ConversationQuestion `json:"questions"`
}

// ConversationSession is one day's conversation.
type ConversationSession struct {
	// Date is the day of the session, YYYY-MM-DD; "yesterday" in a turn is the day before.
	Date  string             `json:"date"`
	Turns []ConversationTurn `json:"turns"`
}

// ConversationTurn is one message: who said it (0 or 1) and what.
type ConversationTurn struct {
	Speaker int    `json:"speaker"`
	Text    string `json:"text"`
}

// TurnRef places a turn: session index and turn index within the session, both from 0.
type TurnRef struct {
	Session int `json:"session"`
	Turn    int `json:"turn"`
}

// Key names the turn in a Ranking.
func (t TurnRef) Key() string { return fmt.Sprintf("%d/%d", t.Session, t.Turn) }

// ConversationQuestion is a question asked of a conversation, labelled with the turns that
// hold its answer.
type ConversationQuestion struct {
	Text string `json:"text"`
	Kind string `json:"kind"`
	// Evidence are the turns that answer it (two or more for a multi-hop question).
	Evidence []TurnRef `json:"evidence"`
	// Keys are words of the answer found in the evidence: every key is in some evidence
	// turn, and every evidence turn holds a key.
	Keys []string `json:"keys"`
	// Paraphrase says the question shares no word with its evidence but the speakers' names
	// (compared as PostgreSQL's english lexemes): only meaning finds it.
	Paraphrase bool `json:"paraphrase"`
}

// ConversationUserID is the UUID of the user that holds conversation c when it is stored:
// 00000000-0000-4000-d000- + c as 12 decimal digits, apart from every other workload's users.
func ConversationUserID(c int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-d000-%012d", c))
}

// ConversationSessionID is the UUID of session s of conversation c: a name-based (SHA-1) UUID,
// so that the store's order among tied rows (by session id) is fixed but unrelated to the
// order of the sessions.
func ConversationSessionID(c, s int) uuid.UUID {
	return uuid.NewSHA1(conversationNamespace, []byte(fmt.Sprintf("conversation %d session %d", c, s)))
}

var conversationNamespace = uuid.MustParse("6f1c2a4e-5b7d-4e8f-9a0b-1c2d3e4f5a6b")

var (
	conversationsOnce sync.Once
	conversations     []Conversation
)

// Conversations returns the conversation set: five pairs of people, each talking over 16 to 24
// sessions, with questions labelled with the turns that answer them. It is generated from
// stream StreamConversations and the catalogue of conversationFacts, so it is the same on every
// run; ConversationSetID names it. The caller must not modify it.
func Conversations() []Conversation {
	conversationsOnce.Do(func() { conversations = generateConversations(Stream(StreamConversations)) })
	return conversations
}

// ConversationSetID is a fingerprint of the conversation set (the first 12 hex digits of the
// SHA-256 of its JSON): figures measured on one set are comparable only with figures of the
// same set.
func ConversationSetID() string {
	b, err := json.Marshal(Conversations())
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return "conv-" + hex.EncodeToString(sum[:])[:12]
}

// The pairs, their first session, and how many facts of the catalogue each person has.
var conversationPairs = []struct {
	names [2]string
	start string
}{
	{[2]string{"Caroline", "Melanie"}, "2023-03-04"},
	{[2]string{"John", "Maria"}, "2023-01-14"},
	{[2]string{"Nadia", "Oliver"}, "2023-05-20"},
	{[2]string{"Grace", "Tomas"}, "2022-09-03"},
	{[2]string{"Priya", "Dev"}, "2023-02-25"},
}

const factsPerPerson = 10

// A line of a block: spoken by the owner of the fact (0) or the other person (1); ev marks the
// line that states the fact.
type line struct {
	who  int
	text string
	ev   bool
}

func o(text string) line  { return line{who: 0, text: text} }
func x(text string) line  { return line{who: 1, text: text} }
func oe(text string) line { return line{who: 0, text: text, ev: true} }

// stage is one exchange in which a fact is stated (a fact that changes has two). when, if set,
// is the phrase of its evidence line that dates the event: "yesterday", "last night", "this
// morning", "on Saturday" or "on Sunday".
type stage struct {
	lines []line
	when  string
}

// qt is a question template. ev are the stages whose evidence lines answer it; keys name the
// slots whose values are the answer's key words. adv lets the question be asked of the other
// person, as an adversarial one, when that person has no such fact.
type qt struct {
	text string
	kind string
	ev   []int
	keys []string
	para bool
	adv  bool
}

// option fills the slots of a fact; questions are asked only with this option.
type option struct {
	slots     map[string]string
	questions []qt
}

// fact is a kind of thing people tell each other: its stages, an optional follow-up in a later
// session (the other asks about it again: the same words, but no answer), and its questions.
// both, when both people have a fact of the kind, asks about the two at once: {a} and {b} are
// the names of speakers 0 and 1, and its stages and keys are taken from each person's fact.
type fact struct {
	id        string
	options   []option
	stages    []stage
	followup  []line
	questions []qt
	both      *qt
}

// A block of lines placed in a session; evidence marks which fact stage it states.
type block struct {
	turns []ConversationTurn
	fact  int // index in the pair's facts, or -1
	stage int
	ev    []int // indices in turns of evidence lines
}

// placed is a fact of one person in one conversation.
type placed struct {
	owner    int
	kind     *fact
	opt      option
	sessions []int // one per stage
	follow   int   // session of the follow-up, or -1
	evidence [][]TurnRef
	dates    []time.Time // event date per stage (zero when undated)
}

func generateConversations(r *Rand) []Conversation {
	out := make([]Conversation, len(conversationPairs))
	for p, pair := range conversationPairs {
		out[p] = generateConversation(r, pair.names, pair.start)
	}
	return out
}

func generateConversation(r *Rand, names [2]string, start string) Conversation {
	c := Conversation{Speakers: names}
	nSessions := 16 + r.Int(9)
	day, err := time.Parse(time.DateOnly, start)
	if err != nil {
		panic(err)
	}
	dates := make([]time.Time, nSessions)
	for s := range dates {
		dates[s] = day
		day = day.AddDate(0, 0, 3+r.Int(10))
	}

	// Each person draws facts from the catalogue; when both have the same kind, their
	// options differ.
	var facts []*placed
	chosen := [2]map[string]int{{}, {}}
	for owner := 0; owner < 2; owner++ {
		for _, k := range shuffled(r, len(conversationFacts))[:factsPerPerson] {
			kind := &conversationFacts[k]
			oi := r.Int(len(kind.options))
			if other, ok := chosen[1-owner][kind.id]; ok && other == oi {
				oi = (oi + 1) % len(kind.options)
			}
			chosen[owner][kind.id] = oi
			f := &placed{owner: owner, kind: kind, opt: kind.options[oi], follow: -1}
			switch len(kind.stages) {
			case 1:
				f.sessions = []int{r.Int(nSessions)}
			default:
				first := r.Int(nSessions / 2)
				f.sessions = []int{first, first + 3 + r.Int(nSessions-first-3)}
			}
			if last := f.sessions[len(f.sessions)-1]; kind.followup != nil && last < nSessions-1 {
				f.follow = last + 1 + r.Int(nSessions-last-1)
			}
			f.evidence = make([][]TurnRef, len(kind.stages))
			f.dates = make([]time.Time, len(kind.stages))
			facts = append(facts, f)
		}
	}

	for s := 0; s < nSessions; s++ {
		c.Sessions = append(c.Sessions, buildSession(r, names, s, dates[s], facts))
	}
	for _, f := range facts {
		for i := range f.dates {
			if w := f.kind.stages[i].when; w != "" {
				f.dates[i] = eventDate(dates[f.sessions[i]], w)
			}
		}
	}
	c.Questions = askQuestions(r, names, facts, chosen)
	return c
}

// buildSession lays out session s: a greeting, the facts stated that day and the follow-ups,
// among small talk, and a goodbye.
func buildSession(r *Rand, names [2]string, s int, date time.Time, facts []*placed) ConversationSession {
	var content []block
	for fi, f := range facts {
		vars := factVars(names, f)
		for st, fs := range f.sessions {
			if fs == s {
				content = append(content, render(f.kind.stages[st].lines, f.owner, vars, fi, st))
			}
		}
		if f.follow == s {
			content = append(content, render(f.kind.followup, f.owner, vars, -1, 0))
		}
	}
	target := 24 + r.Int(21)
	n := 0
	for _, b := range content {
		n += len(b.turns)
	}
	for n < target-4 {
		b := smallTalk(r, names, date)
		content = append(content, b)
		n += len(b.turns)
	}
	order := shuffled(r, len(content))
	first := r.Int(2)
	blocks := []block{pick(r, greetings).render(names, first, date, r)}
	for _, i := range order {
		blocks = append(blocks, content[i])
	}
	blocks = append(blocks, pick(r, goodbyes).render(names, r.Int(2), date, r))

	sess := ConversationSession{Date: date.Format(time.DateOnly)}
	for _, b := range blocks {
		for _, e := range b.ev {
			f := facts[b.fact]
			f.evidence[b.stage] = append(f.evidence[b.stage], TurnRef{Session: s, Turn: len(sess.Turns) + e})
		}
		sess.Turns = append(sess.Turns, b.turns...)
	}
	return sess
}

// factVars are the values of a fact's placeholders: its slots, and {o} and {x}, the names of
// its owner and of the other person.
func factVars(names [2]string, f *placed) map[string]string {
	vars := map[string]string{"o": names[f.owner], "x": names[1-f.owner]}
	for k, v := range f.opt.slots {
		vars[k] = v
	}
	return vars
}

func render(lines []line, owner int, vars map[string]string, fact, st int) block {
	b := block{fact: fact, stage: st}
	for i, l := range lines {
		speaker := owner
		if l.who == 1 {
			speaker = 1 - owner
		}
		b.turns = append(b.turns, ConversationTurn{Speaker: speaker, Text: fill(l.text, vars)})
		if l.ev && fact >= 0 {
			b.ev = append(b.ev, i)
		}
	}
	return b
}

// askQuestions instantiates the questions of every fact, and asks some of them of the other
// person (adversarial) when that person has no fact of the kind.
func askQuestions(r *Rand, names [2]string, facts []*placed, chosen [2]map[string]int) []ConversationQuestion {
	// A window ("in late May 2023") names an event only when its owner has no other dated
	// event in it.
	windows := map[string]int{}
	for _, f := range facts {
		for _, d := range f.dates {
			if !d.IsZero() {
				windows[fmt.Sprint(f.owner, window(d))]++
			}
		}
	}
	var qs []ConversationQuestion
	for _, f := range facts {
		vars := factVars(names, f)
		for _, q := range slices.Concat(f.kind.questions, f.opt.questions) {
			ev := slices.Concat(pickStages(f.evidence, q.ev)...)
			if strings.Contains(q.text, "{window}") {
				d := f.dates[q.ev[0]]
				if windows[fmt.Sprint(f.owner, window(d))] > 1 {
					continue
				}
				vars["window"] = window(d)
			}
			keys := make([]string, len(q.keys))
			for i, k := range q.keys {
				keys[i] = vars[k]
			}
			qs = append(qs, ConversationQuestion{Text: fill(q.text, vars), Kind: q.kind, Evidence: ev, Keys: keys, Paraphrase: q.para})
			if _, theirs := chosen[1-f.owner][f.kind.id]; q.adv && !theirs && r.Int(3) != 0 {
				swapped := merged(vars, map[string]string{"o": vars["x"], "x": vars["o"]})
				qs = append(qs, ConversationQuestion{Text: fill(q.text, swapped), Kind: KindAdversarial, Evidence: ev, Keys: keys, Paraphrase: q.para})
			}
		}
	}
	for _, kind := range conversationFacts {
		_, has0 := chosen[0][kind.id]
		_, has1 := chosen[1][kind.id]
		if kind.both == nil || !has0 || !has1 {
			continue
		}
		q := ConversationQuestion{Text: fill(kind.both.text, map[string]string{"a": names[0], "b": names[1]}),
			Kind: KindMultiHop, Paraphrase: kind.both.para}
		for _, f := range facts {
			if f.kind.id == kind.id {
				q.Evidence = append(q.Evidence, slices.Concat(pickStages(f.evidence, kind.both.ev)...)...)
				for _, k := range kind.both.keys {
					q.Keys = append(q.Keys, f.opt.slots[k])
				}
			}
		}
		qs = append(qs, q)
	}
	return qs
}

func pickStages(ev [][]TurnRef, stages []int) [][]TurnRef {
	out := make([][]TurnRef, len(stages))
	for i, s := range stages {
		out[i] = ev[s]
	}
	return out
}

func merged(base, over map[string]string) map[string]string {
	m := make(map[string]string, len(base))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// eventDate is the day an event of a session of day d happened, by the phrase that dates it.
func eventDate(d time.Time, when string) time.Time {
	switch when {
	case "yesterday", "last night":
		return d.AddDate(0, 0, -1)
	case "this morning":
		return d
	case "on Saturday", "on Sunday":
		wd := time.Saturday
		if when == "on Sunday" {
			wd = time.Sunday
		}
		back := (int(d.Weekday()) - int(wd) + 7) % 7
		if back == 0 {
			back = 7
		}
		return d.AddDate(0, 0, -back)
	}
	panic("unknown date phrase " + when)
}

// window names the third of the month of day d: "in early May 2023", "in mid-May 2023", "in
// late May 2023".
func window(d time.Time) string {
	switch {
	case d.Day() <= 10:
		return d.Format("in early January 2006")
	case d.Day() <= 20:
		return d.Format("in mid-January 2006")
	}
	return d.Format("in late January 2006")
}

// fill replaces {name} by vars[name], and {^name} by it with a capital first letter; a
// placeholder without a value is a mistake of the catalogue and panics.
func fill(tmpl string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			panic("unclosed placeholder in " + tmpl)
		}
		b.WriteString(tmpl[:i])
		name, capital := tmpl[i+1:i+j], false
		if strings.HasPrefix(name, "^") {
			name, capital = name[1:], true
		}
		v, ok := vars[name]
		if !ok {
			panic(fmt.Sprintf("no value for {%s} in %q", name, tmpl))
		}
		if capital {
			r, n := utf8.DecodeRuneInString(v)
			v = string(unicode.ToUpper(r)) + v[n:]
		}
		b.WriteString(v)
		tmpl = tmpl[i+j+1:]
	}
}

// shuffled is a permutation of 0..n-1 (Fisher-Yates, drawing from r).
func shuffled(r *Rand, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.Int(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

func pick[T any](r *Rand, xs []T) T { return xs[r.Int(len(xs))] }

// talk is a block of small talk: lines of the one who starts it (0) and the one who answers
// (1), with {s} and {r} their names, {month} and {weekday} the session's, and any pool of
// smallTalkPools drawn once per block.
type talk []line

func (t talk) render(names [2]string, starter int, date time.Time, r *Rand) block {
	vars := map[string]string{"s": names[starter], "r": names[1-starter],
		"month": date.Format("January"), "weekday": date.Format("Monday")}
	for _, k := range sortedKeys(smallTalkPools) {
		vars[k] = pick(r, smallTalkPools[k])
	}
	b := block{fact: -1}
	for _, l := range t {
		speaker := starter
		if l.who == 1 {
			speaker = 1 - starter
		}
		b.turns = append(b.turns, ConversationTurn{Speaker: speaker, Text: fill(l.text, vars)})
	}
	return b
}

func smallTalk(r *Rand, names [2]string, date time.Time) block {
	return pick(r, smallTalks).render(names, r.Int(2), date, r)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
