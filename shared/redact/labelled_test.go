package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// labelled is one line of testdata/labelled.jsonl: a text and the personal data in it (none
// for the negatives).
type labelled struct {
	Text string `json:"text"`
	PII  []struct {
		Kind  Kind   `json:"kind"`
		Value string `json:"value"`
	} `json:"pii"`
	Note string `json:"note"`
}

func loadLabelled(t testing.TB) []labelled {
	t.Helper()
	f, err := os.Open("testdata/labelled.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []labelled
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var row labelled
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		for _, p := range row.PII {
			if !strings.Contains(row.Text, p.Value) {
				t.Fatalf("line %d: %q is not in the text", line, p.Value)
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

type score struct{ tp, fp, fn int }

func (s score) precision() float64 {
	if s.tp+s.fp == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fp)
}

func (s score) recall() float64 {
	if s.tp+s.fn == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fn)
}

// TestLabelled measures precision and recall on the labelled set, through Text as callers use
// it: a finding counts as right when its kind and hash are those of a labelled value, so a
// value found with the wrong extent counts as a false positive and a miss.
func TestLabelled(t *testing.T) {
	r := testRedactor(t)
	rows := loadLabelled(t)
	if len(rows) < 200 {
		t.Fatalf("the labelled set has %d texts, want at least 200", len(rows))
	}
	scores := map[Kind]*score{}
	for _, k := range Kinds {
		scores[k] = &score{}
	}
	var all score
	positives, negatives := 0, 0
	for _, row := range rows {
		if len(row.PII) == 0 {
			negatives++
		} else {
			positives++
		}
		out, findings := r.Text(row.Text)
		want := map[Finding]int{}
		values := map[Finding]string{}
		h := r.newHash()
		for _, p := range row.PII {
			f := Finding{Kind: p.Kind, Hash: r.sum(h, p.Kind, p.Value)}
			want[f]++
			values[f] = p.Value
		}
		for _, f := range findings {
			if want[f] > 0 {
				want[f]--
				scores[f.Kind].tp++
				if strings.Contains(out, values[f]) {
					t.Errorf("%q: %s %q found but still in the output %q", row.Text, f.Kind, values[f], out)
				}
				continue
			}
			scores[f.Kind].fp++
			t.Logf("false positive %s in %q -> %q", f.Kind, row.Text, out)
		}
		for f, n := range want {
			scores[f.Kind].fn += n
			if n > 0 {
				t.Logf("missed %s %q in %q -> %q %s", f.Kind, values[f], row.Text, out, row.Note)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "labelled set: %d texts (%d with personal data, %d without)\n", len(rows), positives, negatives)
	fmt.Fprintf(&b, "%-8s %5s %4s %4s %9s %7s\n", "kind", "tp", "fp", "fn", "precision", "recall")
	for _, k := range Kinds {
		s := *scores[k]
		all.tp, all.fp, all.fn = all.tp+s.tp, all.fp+s.fp, all.fn+s.fn
		fmt.Fprintf(&b, "%-8s %5d %4d %4d %9.3f %7.3f\n", k, s.tp, s.fp, s.fn, s.precision(), s.recall())
	}
	fmt.Fprintf(&b, "%-8s %5d %4d %4d %9.3f %7.3f", "overall", all.tp, all.fp, all.fn, all.precision(), all.recall())
	t.Log("\n" + b.String())

	// Floors: what this set shows today, rounded down, so that a regression fails.
	floors := map[Kind][2]float64{
		Email: {0.95, 0.95},
		Phone: {0.95, 0.90},
		Card:  {0.95, 0.95},
		IBAN:  {0.95, 0.95},
		IP:    {0.95, 0.95},
	}
	for _, k := range Kinds {
		s := *scores[k]
		if s.precision() < floors[k][0] || s.recall() < floors[k][1] {
			t.Errorf("%s: precision %.3f, recall %.3f; want at least %.2f and %.2f", k, s.precision(), s.recall(), floors[k][0], floors[k][1])
		}
	}
	if all.precision() < 0.98 || all.recall() < 0.95 {
		t.Errorf("overall: precision %.3f, recall %.3f; want at least 0.98 and 0.95", all.precision(), all.recall())
	}
}
