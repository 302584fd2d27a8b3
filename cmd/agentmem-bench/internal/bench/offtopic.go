package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// OffTopicQuestion is a question about something neither labelled set holds (Labelled,
// Conversations): recall should answer it with nothing, or say that nothing matched well. Half
// of them name the person asked about, as an agent's questions do, so that the name matches.
type OffTopicQuestion struct {
	// Text is the question; a %s in it is the name of the person asked about.
	Text string
	// Subject are the words that name what it asks about: no stored text of either set holds
	// one of them (as PostgreSQL's english lexemes; TestOffTopicSubjects checks it). Its other
	// words may be stored ("What is the capital of ...", "favourite").
	Subject []string
}

// For is the question asked about the person named name.
func (q OffTopicQuestion) For(name string) string {
	if strings.Contains(q.Text, "%s") {
		return fmt.Sprintf(q.Text, name)
	}
	return q.Text
}

// OffTopic returns the off-topic questions asked of every user of both labelled sets. The
// caller must not modify it.
func OffTopic() []OffTopicQuestion { return offTopic }

// OffTopicSetID is a fingerprint of the off-topic questions (the first 12 hex digits of the
// SHA-256 of their JSON): docs/benchmarks.md names the set its figures were measured on.
func OffTopicSetID() string {
	b, err := json.Marshal(offTopic)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return "offtopic-" + hex.EncodeToString(sum[:])[:12]
}

var offTopic = []OffTopicQuestion{
	{"What is the capital of Mongolia?", []string{"capital", "Mongolia"}},
	{"What is %s's blood type?", []string{"blood"}},
	{"Which rugby league does %s follow?", []string{"rugby", "league"}},
	{"How many moons does Jupiter have?", []string{"moons", "Jupiter"}},
	{"What is the boiling point of mercury?", []string{"boiling", "mercury"}},
	{"Who won the fencing championship in Reykjavik?", []string{"fencing", "championship", "Reykjavik"}},
	{"What is %s's shoe size?", []string{"shoe"}},
	{"Which submarine did %s command?", []string{"submarine", "command"}},
	{"What is the population of Lagos?", []string{"population", "Lagos"}},
	{"How do I reset the firmware of a router?", []string{"firmware", "router"}},
	{"What tattoo does %s have?", []string{"tattoo"}},
	{"Which volcano erupted in Iceland?", []string{"volcano", "erupted", "Iceland"}},
	{"Which cryptocurrency does %s own?", []string{"cryptocurrency"}},
	{"What is the atomic number of tungsten?", []string{"atomic", "tungsten"}},
	{"Who is %s's favourite poet?", []string{"poet"}},
	{"Which glacier did %s cross on a sledge?", []string{"glacier", "sledge"}},
	{"How tall is the Eiffel Tower?", []string{"tall", "Eiffel", "tower"}},
	{"What insurance policy does %s hold?", []string{"insurance", "policy"}},
	{"Which senator did %s vote for?", []string{"senator", "vote"}},
	{"What is the chemical formula of ozone?", []string{"chemical", "formula", "ozone"}},
}

// MatchFloors are the floors of best relevance the quality report tries as the gate of
// "nothing matched well" (MatchGate).
var MatchFloors = []float64{0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5}

// GatedAnswer is one labelled question's answer reduced to what a gate on its best relevance
// changes: the best relevance of its results (0 for none) and its figures when it is kept.
type GatedAnswer struct {
	Best                float64
	HitAt5, HitAt10, RR float64
}

// ScoreMatching scores, for each of MatchFloors, what a recall that answers "nothing matched
// well" when its best result's relevance is below the floor does: to the off-topic questions
// (offBest: each one's best relevance, 0 for none; offEmpty: how many got no result at all)
// and to the labelled ones, whose figures count a flagged answer as nothing found. The
// Flagged shares are those of the gate at floor, recall's default.
func ScoreMatching(mode string, on []GatedAnswer, offBest []float64, offEmpty int, floor float64) Matching {
	m := Matching{Mode: mode, OnTopic: len(on), OffTopic: len(offBest)}
	if len(offBest) > 0 {
		m.OffTopicEmpty = float64(offEmpty) / float64(len(offBest))
		s := slices.Clone(offBest)
		slices.Sort(s)
		m.OffTopicBestMedian, m.OffTopicBestMax = s[len(s)/2], s[len(s)-1]
	}
	for _, f := range MatchFloors {
		g := MatchGate{Floor: f}
		for _, b := range offBest {
			if b < f {
				g.OffTopicFlagged++
			}
		}
		for _, a := range on {
			if a.Best < f {
				g.OnTopicFlagged++
				continue
			}
			g.HitAt5 += a.HitAt5
			g.HitAt10 += a.HitAt10
			g.MRR += a.RR
		}
		if len(offBest) > 0 {
			g.OffTopicFlagged /= float64(len(offBest))
		}
		if n := float64(len(on)); n > 0 {
			g.OnTopicFlagged, g.HitAt5, g.HitAt10, g.MRR = g.OnTopicFlagged/n, g.HitAt5/n, g.HitAt10/n, g.MRR/n
		}
		m.Gates = append(m.Gates, g)
	}
	for _, b := range offBest {
		if b < floor {
			m.OffTopicFlagged++
		}
	}
	for _, a := range on {
		if a.Best < floor {
			m.OnTopicFlagged++
		}
	}
	if len(offBest) > 0 {
		m.OffTopicFlagged /= float64(len(offBest))
	}
	if len(on) > 0 {
		m.OnTopicFlagged /= float64(len(on))
	}
	return m
}
