package main

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// runQuality stores the labelled set of memories through CommitTurn, one turn per user, with
// the built-in embedder (what a deployment ranks with when it configures no model; the other workloads use
// the specification's embedder so that every system measured gets the same vectors), then asks
// every question in each recall mode and scores where the labelled fact ranks. It runs at the
// store level only: ranking does not depend on the transport.
//
// The store breaks ties of score by memory id, which is random. A tie in the answer itself is
// scored as every order of it; a tie inside one of the lists hybrid fuses is not visible, so
// the set is stored sz.QualityCopies times, each copy under users of its own (new ids), and
// the figures are the mean over the copies.
//
// Then it measures recall over messages on the conversation set (runConversations).
func runQuality(ctx context.Context, db *benchDB, sz bench.Sizes) (*bench.Quality, error) {
	emb := embedding.Hash{}
	st, err := store.Open(ctx, store.Config{DatabaseURL: db.url, MaxConns: 2})
	if err != nil {
		return nil, err
	}
	defer st.Close()

	users := bench.Labelled()
	copies := max(sz.QualityCopies, 1)
	q := &bench.Quality{Users: len(users), Embedder: emb.Model(), K: bench.QualityK, Copies: copies}
	for _, lu := range users {
		q.Facts += len(lu.Facts)
	}
	// keyOf maps the stored memories of each (copy, user) to their fact keys.
	keyOf := make([]map[uuid.UUID]string, copies*len(users))
	for c := 0; c < copies; c++ {
		for u, lu := range users {
			n := c*len(users) + u
			mems := make([]memory.NewMemory, len(lu.Facts))
			texts := make([]string, len(lu.Facts))
			for i, f := range lu.Facts {
				mems[i] = memory.NewMemory{Content: f.Content}
				texts[i] = f.Content
			}
			vecs, err := literals(ctx, emb, texts)
			if err != nil {
				return nil, fmt.Errorf("embed the facts of labelled user %d: %w", n, err)
			}
			res, _, err := st.CommitTurn(ctx, store.CommitParams{
				Scope: qualityScope(n), SessionID: uuid.New(), TTL: retention, Memories: mems, MemoryVectors: vecs, Model: emb.Model(),
				Messages: []memory.NewMessage{{Role: memory.RoleUser, Content: fmt.Sprintf("Things to remember about %s.", lu.Name)}},
			})
			if err != nil {
				return nil, fmt.Errorf("store the facts of labelled user %d: %w", n, err)
			}
			if len(res.Memories) != len(lu.Facts) {
				return nil, fmt.Errorf("labelled user %d: %d facts stored, want %d", n, len(res.Memories), len(lu.Facts))
			}
			keyOf[n] = make(map[uuid.UUID]string, len(lu.Facts))
			for i, m := range res.Memories {
				keyOf[n][m.ID] = lu.Facts[i].Key
			}
		}
	}

	for _, m := range []struct {
		mode  string
		score *bench.QualityScore
	}{{memory.ModeText, &q.Text}, {memory.ModeVector, &q.Vector}, {memory.ModeHybrid, &q.Hybrid}} {
		var answers []bench.Answer
		var gated []bench.GatedAnswer
		for n := range keyOf {
			for _, question := range users[n%len(users)].Questions {
				p, err := withQuery(ctx, emb, store.RecallParams{Scope: qualityScope(n), Query: question.Text, K: bench.QualityK, Mode: m.mode})
				if err != nil {
					return nil, fmt.Errorf("embed a question for labelled user %d: %w", n, err)
				}
				hits, err := st.Recall(ctx, p)
				if err != nil {
					return nil, fmt.Errorf("recall (%s) for labelled user %d: %w", m.mode, n, err)
				}
				a := bench.Answer{Ranked: make([]string, len(hits)), Scores: make([]float64, len(hits)), Want: question.Fact}
				for i, h := range hits {
					a.Ranked[i], a.Scores[i] = keyOf[n][uuid.MustParse(h.ID)], h.Score
				}
				answers = append(answers, a)
				gated = append(gated, a.Gated(memory.BestRelevance(hits)))
			}
		}
		// The off-topic questions, of each user of the first copy.
		var offBest []float64
		offEmpty := 0
		for n := range users {
			for _, question := range bench.OffTopic() {
				p, err := withQuery(ctx, emb, store.RecallParams{Scope: qualityScope(n), Query: question.For(users[n].Name), K: bench.QualityK, Mode: m.mode})
				if err != nil {
					return nil, fmt.Errorf("embed an off-topic question for labelled user %d: %w", n, err)
				}
				hits, err := st.Recall(ctx, p)
				if err != nil {
					return nil, fmt.Errorf("recall (%s) an off-topic question for labelled user %d: %w", m.mode, n, err)
				}
				if len(hits) == 0 {
					offEmpty++
				}
				offBest = append(offBest, memory.BestRelevance(hits))
			}
		}
		q.Matching = append(q.Matching, bench.ScoreMatching(m.mode, gated, offBest, offEmpty, memory.DefaultMatchRelevance))
		// Every copy asks every question once: the mean over all answers is the mean of the
		// copies' means, and the questions are counted once.
		*m.score = bench.ScoreAnswers(answers)
		m.score.Questions /= copies
	}
	if q.Conversations, err = runConversations(ctx, db, st, emb, sz.QualityConversations); err != nil {
		return nil, err
	}
	return q, nil
}

// qualityScope is labelled user n: copy n / len(Labelled()) of user n % len(Labelled()).
func qualityScope(n int) memory.Scope {
	return memory.Scope{UserID: bench.LabelledUserID(n).String(), Agent: benchAgent}
}

// literals embeds texts with e as the use-case layer does before a commit or a search (the
// store embeds nothing itself), as pgvector literals for store.CommitParams and RecallParams.
func literals(ctx context.Context, e embedding.Embedder, texts []string) ([]*string, error) {
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	return store.VectorLiterals(vs, e.Dimensions())
}

// withQuery sets the query vector of p (of e's model) and the model's similarity baseline as
// the use-case layer does before recall; mode text takes no vector.
func withQuery(ctx context.Context, e embedding.Embedder, p store.RecallParams) (store.RecallParams, error) {
	p.Model, p.VectorBaseline = e.Model(), embedding.SimilarityBaseline(e.Model())
	if p.Mode == memory.ModeText {
		return p, nil
	}
	vs, err := literals(ctx, e, []string{p.Query})
	if err != nil {
		return p, err
	}
	p.QueryVector = vs[0]
	return p, nil
}
