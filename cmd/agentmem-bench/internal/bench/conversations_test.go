package bench

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestConversationsShape checks the sizes the report states and what the store needs: sessions
// on distinct, increasing days, both speakers in every session, at most 100 messages in a
// session (one commit-turn each), and every kind of question asked.
func TestConversationsShape(t *testing.T) {
	convs := Conversations()
	if len(convs) != 5 {
		t.Fatalf("%d conversations, want 5", len(convs))
	}
	turns, questions := 0, 0
	kinds := map[string]int{}
	for ci, c := range convs {
		if c.Speakers[0] == "" || c.Speakers[0] == c.Speakers[1] {
			t.Errorf("conversation %d: speakers %q", ci, c.Speakers)
		}
		if len(c.Sessions) < 15 || len(c.Sessions) > 25 {
			t.Errorf("conversation %d has %d sessions, want 15 to 25", ci, len(c.Sessions))
		}
		n := 0
		var prev time.Time
		for si, s := range c.Sessions {
			d, err := time.Parse(time.DateOnly, s.Date)
			if err != nil || !d.After(prev) {
				t.Errorf("conversation %d session %d: date %q is not a day after the last session's", ci, si, s.Date)
			}
			prev = d
			if len(s.Turns) < 10 || len(s.Turns) > 100 {
				t.Errorf("conversation %d session %d has %d turns, want 10 to 100", ci, si, len(s.Turns))
			}
			spoke := [2]bool{}
			for _, tr := range s.Turns {
				if tr.Speaker != 0 && tr.Speaker != 1 || strings.TrimSpace(tr.Text) == "" || strings.ContainsAny(tr.Text, "{}") {
					t.Errorf("conversation %d session %d: turn %+v", ci, si, tr)
					continue
				}
				spoke[tr.Speaker] = true
			}
			if !spoke[0] || !spoke[1] {
				t.Errorf("conversation %d session %d: a speaker never speaks", ci, si)
			}
			n += len(s.Turns)
		}
		if n < 500 || n > 1200 {
			t.Errorf("conversation %d has %d turns, want 500 to 1,200", ci, n)
		}
		turns += n
		questions += len(c.Questions)
		for _, q := range c.Questions {
			kinds[q.Kind]++
		}
	}
	if turns < 2500 || turns > 6000 || questions < 150 || questions > 300 {
		t.Errorf("the set has %d turns and %d questions: want 2,500 to 6,000 and 150 to 300", turns, questions)
	}
	for _, k := range QuestionKinds {
		if kinds[k] < 10 {
			t.Errorf("%d questions of kind %s, want at least 10", kinds[k], k)
		}
		delete(kinds, k)
	}
	if len(kinds) > 0 {
		t.Errorf("questions of unknown kinds: %v", kinds)
	}
}

// TestConversationLabels checks every label against the text: the evidence turns exist, each
// holds one of the answer's key words and every key word is in one of them; a question about one
// person is answered by that person's turns, and an adversarial one names the other person; a
// question asked of a time ("in late May 2023") is answered in a session a week or less after
// that time. Most questions name a speaker, as questions about a conversation do.
func TestConversationLabels(t *testing.T) {
	windowRE := regexp.MustCompile(`in (early|mid-|late) ?(January|February|March|April|May|June|July|August|September|October|November|December) (\d{4})`)
	named := 0
	total := 0
	for ci, c := range Conversations() {
		seen := map[string]bool{}
		for _, q := range c.Questions {
			total++
			if seen[q.Text] {
				t.Errorf("conversation %d: question %q asked twice", ci, q.Text)
			}
			seen[q.Text] = true
			if len(q.Evidence) == 0 || len(q.Keys) == 0 {
				t.Errorf("conversation %d: %q has no evidence or no keys", ci, q.Text)
				continue
			}
			if q.Kind == KindMultiHop && len(q.Evidence) < 2 {
				t.Errorf("conversation %d: multi-hop %q has one evidence turn", ci, q.Text)
			}
			var texts []string
			speakers := map[int]bool{}
			for _, e := range q.Evidence {
				if e.Session < 0 || e.Session >= len(c.Sessions) || e.Turn < 0 || e.Turn >= len(c.Sessions[e.Session].Turns) {
					t.Fatalf("conversation %d: %q is labelled with turn %+v, which does not exist", ci, q.Text, e)
				}
				tr := c.Sessions[e.Session].Turns[e.Turn]
				texts = append(texts, tr.Text)
				speakers[tr.Speaker] = true
				if !slices.ContainsFunc(q.Keys, func(k string) bool { return containsWords(tr.Text, k) }) {
					t.Errorf("conversation %d: %q: evidence %+v %q holds none of %q", ci, q.Text, e, tr.Text, q.Keys)
				}
			}
			for _, k := range q.Keys {
				if !slices.ContainsFunc(texts, func(s string) bool { return containsWords(s, k) }) {
					t.Errorf("conversation %d: %q: key %q is in none of its evidence %q", ci, q.Text, k, texts)
				}
			}
			asked := map[int]bool{}
			for sp, name := range c.Speakers {
				if containsWords(q.Text, name) {
					asked[sp] = true
				}
			}
			if len(asked) > 0 {
				named++
			}
			switch {
			case q.Kind == KindAdversarial:
				if len(asked) != 1 || speakers[firstKey(asked)] {
					t.Errorf("conversation %d: adversarial %q must name the one speaker who did not say it (evidence by %v)", ci, q.Text, speakers)
				}
			case len(asked) == 1 && !reflect.DeepEqual(asked, speakers):
				t.Errorf("conversation %d: %q asks about speaker %v, but its evidence is said by %v", ci, q.Text, asked, speakers)
			}
			if m := windowRE.FindStringSubmatch(q.Text); m != nil {
				from, err := time.Parse("January 2006", m[2]+" "+m[3])
				if err != nil {
					t.Fatal(err)
				}
				lo, hi := from, from.AddDate(0, 1, -1)
				switch m[1] {
				case "early":
					hi = from.AddDate(0, 0, 9)
				case "mid-":
					lo, hi = from.AddDate(0, 0, 10), from.AddDate(0, 0, 19)
				case "late":
					lo = from.AddDate(0, 0, 20)
				}
				for _, e := range q.Evidence {
					d, _ := time.Parse(time.DateOnly, c.Sessions[e.Session].Date)
					if d.Before(lo) || d.After(hi.AddDate(0, 0, 7)) {
						t.Errorf("conversation %d: %q is answered on %s, not within a week after %s to %s",
							ci, q.Text, c.Sessions[e.Session].Date, lo.Format(time.DateOnly), hi.Format(time.DateOnly))
					}
				}
			}
		}
	}
	if named*10 < total*9 {
		t.Errorf("%d of %d questions name a speaker, want at least 90%%", named, total)
	}
}

// containsWords reports whether s holds phrase as whole words, ignoring case.
func containsWords(s, phrase string) bool {
	re := regexp.MustCompile(`(?i)(^|[^\pL\pN])` + regexp.QuoteMeta(phrase) + `($|[^\pL\pN])`)
	return re.MatchString(s)
}

func firstKey(m map[int]bool) int {
	for k := range m {
		return k
	}
	return -1
}

// TestConversationsDeterministic checks that the set is generated the same on every call from
// its stream, and that docs/benchmarks.md reports figures of this set: a change to the
// catalogue or the generator changes ConversationSetID, and the figures must be measured again
// (make bench ARGS='-only quality') and written there with the new id.
func TestConversationsDeterministic(t *testing.T) {
	again := generateConversations(Stream(StreamConversations))
	if !reflect.DeepEqual(again, Conversations()) {
		t.Fatal("the conversation set differs between two generations")
	}
	doc, err := os.ReadFile("../../../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	if id := ConversationSetID(); !strings.Contains(string(doc), "`"+id+"`") {
		t.Errorf("docs/benchmarks.md reports no figures of the conversation set %s: run make bench ARGS='-only quality' and update its table", id)
	}
}
