package store_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// Hybrid recall scores each result as the fusion of its text and vector ranks plus
// DefaultRelevanceWeight x its relevance, and its relevance is the greater of its text
// relevance and its similarity credited above the vector baseline: both computed here from
// the same query asked in text and vector modes, over memories and over messages.
func TestHybridScoreAndRelevance(t *testing.T) {
	t.Parallel()
	st := storetest.New(t, storetest.MaxConns(2)).Store
	ctx := t.Context()
	sc := memory.Scope{TenantID: "t1", UserID: uuid.NewString(), Agent: memory.DefaultAgent}
	facts := []string{
		"Plays the violin in a string quartet on Sundays",
		"Learned the violin as a child and the viola later",
		"Her string quartet rehearses in a church hall",
		"Takes the train to work in Berlin",
		"Sister Lena plays the cello",
		"Keeps a sourdough starter in the fridge",
	}
	var mems []memory.NewMemory
	var msgs []memory.NewMessage
	for _, f := range facts {
		mems = append(mems, memory.NewMemory{Content: f})
		msgs = append(msgs, memory.NewMessage{Role: memory.RoleUser, Content: f})
	}
	if _, _, err := commitTurn(st, ctx, store.CommitParams{Scope: sc, SessionID: uuid.New(), TTL: time.Hour, Messages: msgs, Memories: mems}); err != nil {
		t.Fatal(err)
	}
	const baseline = 0.21 // embedding.HashSimilarityBaseline, fixed here
	for _, source := range []string{memory.SourceMemories, memory.SourceMessages} {
		ask := func(mode string) []memory.Hit {
			t.Helper()
			hits, err := recall(st, ctx, store.RecallParams{Scope: sc, Source: source, Query: "Which string instrument does she play?",
				K: 10, Mode: mode, VectorBaseline: baseline, MinScore: -1})
			if err != nil {
				t.Fatal(err)
			}
			return hits
		}
		type side struct {
			rank int
			rel  float64
		}
		text, vector := map[uuid.UUID]side{}, map[uuid.UUID]side{}
		for i, h := range ask(memory.ModeText) {
			text[uuid.MustParse(h.ID)] = side{i + 1, *h.Relevance}
		}
		for i, h := range ask(memory.ModeVector) {
			vector[uuid.MustParse(h.ID)] = side{i + 1, math.Max(0, (h.Score-baseline)/(1-baseline))}
			if !close9(*h.Relevance, vector[uuid.MustParse(h.ID)].rel) {
				t.Errorf("%s, vector: %q similarity %v, relevance %v, want %v", source, h.Content, h.Score, *h.Relevance, vector[uuid.MustParse(h.ID)].rel)
			}
		}
		hybrid := ask(memory.ModeHybrid)
		if len(hybrid) < 4 || len(text) < 2 {
			t.Fatalf("%s: hybrid %d results, text %d", source, len(hybrid), len(text))
		}
		for _, h := range hybrid {
			tx, inText := text[uuid.MustParse(h.ID)]
			vx, inVector := vector[uuid.MustParse(h.ID)]
			var fused float64
			if inText {
				fused += 1.0 / float64(50+tx.rank)
			}
			if inVector {
				fused += 1.0 / float64(50+vx.rank)
			}
			rel := math.Max(tx.rel, vx.rel)
			if !close9(*h.Relevance, rel) || !close9(h.Score, fused+store.DefaultRelevanceWeight*rel) {
				t.Errorf("%s, hybrid: %q score %v relevance %v, want %v and %v", source, h.Content, h.Score, *h.Relevance,
					fused+store.DefaultRelevanceWeight*rel, rel)
			}
		}
	}
	// Without a baseline, the relevance of the vector side is the similarity itself.
	hits, err := recall(st, ctx, store.RecallParams{Scope: sc, Query: "sourdough bread", K: 10, Mode: memory.ModeVector})
	if err != nil || len(hits) == 0 {
		t.Fatalf("%v %v", hits, err)
	}
	for _, h := range hits {
		if !close9(*h.Relevance, math.Max(h.Score, 0)) {
			t.Errorf("no baseline: %q similarity %v, relevance %v", h.Content, h.Score, *h.Relevance)
		}
	}
}

func close9(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
