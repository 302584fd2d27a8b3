package main

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/bench"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// runQuality stores the labelled set through CommitTurn, one turn per user, with the built-in
// embedder (what a deployment ranks with when it configures no model; the other workloads use
// the specification's embedder so that every system measured gets the same vectors), then asks
// every question in each recall mode and scores where the labelled fact ranks. It runs at the
// store level only: ranking does not depend on the transport.
func runQuality(ctx context.Context, db *benchDB) (*bench.Quality, error) {
	emb := embedding.Hash{}
	st, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: 2, Embedder: emb})
	if err != nil {
		return nil, err
	}
	defer st.Close()

	users := bench.Labelled()
	q := &bench.Quality{Users: len(users), Embedder: emb.Model(), K: bench.QualityK}
	keyOf := make([]map[uuid.UUID]string, len(users))
	for u, lu := range users {
		mems := make([]memory.NewMemory, len(lu.Facts))
		for i, f := range lu.Facts {
			mems[i] = memory.NewMemory{Content: f.Content}
		}
		res, _, err := st.CommitTurn(ctx, store.CommitParams{
			Scope: qualityScope(u), SessionID: uuid.New(), TTL: retention, Memories: mems,
			Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: fmt.Sprintf("Things to remember about %s.", lu.Name)}},
		})
		if err != nil {
			return nil, fmt.Errorf("store the facts of labelled user %d: %w", u, err)
		}
		if len(res.Memories) != len(lu.Facts) {
			return nil, fmt.Errorf("labelled user %d: %d facts stored, want %d", u, len(res.Memories), len(lu.Facts))
		}
		keyOf[u] = make(map[uuid.UUID]string, len(lu.Facts))
		for i, m := range res.Memories {
			keyOf[u][m.ID] = lu.Facts[i].Key
		}
		q.Facts += len(lu.Facts)
	}

	for _, m := range []struct {
		mode  string
		score *bench.QualityScore
	}{{memory.ModeText, &q.Text}, {memory.ModeVector, &q.Vector}, {memory.ModeHybrid, &q.Hybrid}} {
		var answers []bench.Answer
		for u, lu := range users {
			for _, question := range lu.Questions {
				hits, err := st.Recall(ctx, store.RecallParams{Scope: qualityScope(u), Query: question.Text, K: bench.QualityK, Mode: m.mode})
				if err != nil {
					return nil, fmt.Errorf("recall (%s) for labelled user %d: %w", m.mode, u, err)
				}
				ranked := make([]string, len(hits))
				for i, h := range hits {
					ranked[i] = keyOf[u][h.ID]
				}
				answers = append(answers, bench.Answer{Ranked: ranked, Want: question.Fact})
			}
		}
		*m.score = bench.ScoreAnswers(answers)
	}
	return q, nil
}

func qualityScope(u int) memory.Scope {
	return memory.Scope{UserID: bench.LabelledUserID(u), Agent: benchAgent}
}
