package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// The baselines' names in ConversationQuality.Systems.
const (
	systemBM25         = "bm25"
	systemLastMessages = "last-messages"
)

// BM25's parameters: the usual ones (Lucene's and Elasticsearch's defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// runConversations stores the first n conversations of the conversation set through
// CommitTurn, as an application importing chat history would: one commit per session (its own
// session id), each message with its speaker's name in `name`, speaker 0 as the user and
// speaker 1 as the assistant, the session's day in its metadata (`session_date`: the store
// dates a message by its commit, so the day is not otherwise known), vectors of the built-in
// embedder. Each conversation is one user. Then it asks every question with recall over
// messages in each mode, at k 10 and at k 25, and scores where the labelled turns rank; beside
// it, two baselines over the same texts: BM25 over PostgreSQL's lexemes of each message
// (to_tsvector('english', content), asked once; the scores are computed here, over the user's
// messages only), and the conversation's last messages, newest first.
//
// The order is fixed: messages tied in score are ordered by session id (ConversationSessionID,
// fixed) and position, and the metrics count a visible tie over its orders; one copy suffices.
func runConversations(ctx context.Context, db *benchDB, st *store.Store, emb embedding.Embedder, n int) (*bench.ConversationQuality, error) {
	convs := bench.Conversations()
	convs = convs[:min(max(n, 0), len(convs))]
	cq := &bench.ConversationQuality{SetID: bench.ConversationSetID(), Conversations: len(convs), Embedder: emb.Model()}

	// turnOf maps each stored message to its turn, per conversation.
	turnOf := make([]map[uuid.UUID]bench.TurnRef, len(convs))
	for c, conv := range convs {
		turnOf[c] = map[uuid.UUID]bench.TurnRef{}
		for s, sess := range conv.Sessions {
			ids, err := commitSession(ctx, st, emb, c, s, conv)
			if err != nil {
				return nil, err
			}
			for t, id := range ids {
				turnOf[c][id] = bench.TurnRef{Session: s, Turn: t}
			}
			cq.Sessions++
			cq.Turns += len(sess.Turns)
		}
		cq.Questions += len(conv.Questions)
	}

	baselines, err := conversationBaselines(ctx, db.url, convs)
	if err != nil {
		return nil, err
	}
	for _, mode := range []string{memory.ModeText, memory.ModeVector, memory.ModeHybrid} {
		var answers []bench.ConversationAnswer
		var gated []bench.GatedAnswer
		var offBest []float64
		offEmpty := 0
		for c, conv := range convs {
			for i := range conv.Questions {
				q := &conv.Questions[i]
				a := bench.ConversationAnswer{Question: q}
				var best float64
				for _, k := range []int{bench.ConversationK, bench.ConversationDeepK} {
					r, b, err := recallTurns(ctx, st, emb, c, q.Text, mode, k, turnOf[c])
					if err != nil {
						return nil, err
					}
					if k == bench.ConversationK {
						a.Top, best = r, b
					} else {
						a.DeepTop = r
					}
				}
				answers = append(answers, a)
				gated = append(gated, a.Gated(best))
			}
			for i, q := range bench.OffTopic() {
				r, b, err := recallTurns(ctx, st, emb, c, q.For(conv.Speakers[i%2]), mode, bench.ConversationK, turnOf[c])
				if err != nil {
					return nil, err
				}
				if len(r.Ranked) == 0 {
					offEmpty++
				}
				offBest = append(offBest, b)
			}
		}
		cq.Systems = append(cq.Systems, bench.ScoreConversation(mode, answers))
		cq.Matching = append(cq.Matching, bench.ScoreMatching(mode, gated, offBest, offEmpty, memory.DefaultMatchRelevance))
	}
	cq.Systems = append(cq.Systems, baselines...)
	return cq, nil
}

// commitSession stores session s of conversation c in one commit-turn and returns the ids of
// its messages, in order.
func commitSession(ctx context.Context, st *store.Store, emb embedding.Embedder, c, s int, conv bench.Conversation) ([]uuid.UUID, error) {
	sess := conv.Sessions[s]
	meta, err := json.Marshal(map[string]string{"session_date": sess.Date})
	if err != nil {
		return nil, err
	}
	msgs := make([]memory.NewMessage, len(sess.Turns))
	texts := make([]string, len(sess.Turns))
	for t, tr := range sess.Turns {
		role := memory.RoleUser
		if tr.Speaker == 1 {
			role = memory.RoleAssistant
		}
		msgs[t] = memory.NewMessage{Role: role, Content: tr.Text, Name: &conv.Speakers[tr.Speaker], Metadata: meta}
		texts[t] = tr.Text
	}
	vecs, err := literals(ctx, emb, texts)
	if err != nil {
		return nil, fmt.Errorf("embed session %d of conversation %d: %w", s, c, err)
	}
	res, _, err := st.CommitTurn(ctx, store.CommitParams{
		Scope: conversationScope(c), SessionID: bench.ConversationSessionID(c, s), Messages: msgs,
		MessageVectors: vecs, Model: emb.Model(), TTL: retention, NoExtract: true,
	})
	if err != nil {
		return nil, fmt.Errorf("store session %d of conversation %d: %w", s, c, err)
	}
	if len(res.Messages) != len(msgs) {
		return nil, fmt.Errorf("session %d of conversation %d: %d messages stored, want %d", s, c, len(res.Messages), len(msgs))
	}
	ids := make([]uuid.UUID, len(res.Messages))
	for i, m := range res.Messages {
		ids[i] = uuid.MustParse(m.ID)
	}
	return ids, nil
}

// recallTurns asks recall over the messages of conversation c and returns the turns found,
// best first, with their scores, and the best relevance among them.
func recallTurns(ctx context.Context, st *store.Store, emb embedding.Embedder, c int, query, mode string, k int, turnOf map[uuid.UUID]bench.TurnRef) (bench.Ranking, float64, error) {
	p, err := withQuery(ctx, emb, store.RecallParams{Scope: conversationScope(c), Source: memory.SourceMessages, Query: query, K: k, Mode: mode})
	if err != nil {
		return bench.Ranking{}, 0, fmt.Errorf("embed a question of conversation %d: %w", c, err)
	}
	hits, err := st.Recall(ctx, p)
	if err != nil {
		return bench.Ranking{}, 0, fmt.Errorf("recall (%s) over conversation %d: %w", mode, c, err)
	}
	r := bench.Ranking{Ranked: make([]string, len(hits)), Scores: make([]float64, len(hits))}
	for i, h := range hits {
		t, ok := turnOf[uuid.MustParse(h.ID)]
		if !ok {
			return r, 0, fmt.Errorf("recall (%s) over conversation %d returned message %s, which is not one of its turns", mode, c, h.ID)
		}
		r.Ranked[i], r.Scores[i] = t.Key(), h.Score
	}
	return r, memory.BestRelevance(hits), nil
}

func conversationScope(c int) memory.Scope {
	return memory.Scope{UserID: bench.ConversationUserID(c).String(), Agent: benchAgent}
}

// conversationBaselines scores BM25 and the last messages on every question of convs. It needs
// only PostgreSQL's text search configuration, not the stored rows.
func conversationBaselines(ctx context.Context, url string, convs []bench.Conversation) ([]bench.ConversationSystem, error) {
	var texts []string
	for _, conv := range convs {
		for _, s := range conv.Sessions {
			for _, t := range s.Turns {
				texts = append(texts, t.Text)
			}
		}
		for _, q := range conv.Questions {
			texts = append(texts, q.Text)
		}
	}
	lex, err := lexemes(ctx, url, texts)
	if err != nil {
		return nil, err
	}
	var bm25, last []bench.ConversationAnswer
	next := 0
	for _, conv := range convs {
		var docs []map[string]int
		var refs []bench.TurnRef
		for s, sess := range conv.Sessions {
			for t := range sess.Turns {
				docs = append(docs, lex[next])
				refs = append(refs, bench.TurnRef{Session: s, Turn: t})
				next++
			}
		}
		index := bench.NewBM25(docs, bm25K1, bm25B)
		// The newest turns first: what a window of the last messages holds.
		var newest bench.Ranking
		for i := len(refs) - 1; i >= 0 && len(newest.Ranked) < bench.ConversationDeepK; i-- {
			newest.Ranked = append(newest.Ranked, refs[i].Key())
		}
		for i := range conv.Questions {
			q := &conv.Questions[i]
			// Sorted, so that the scores add up in the same order on every run.
			terms := slices.Sorted(maps.Keys(lex[next]))
			next++
			found, scores := index.Top(terms, bench.ConversationDeepK)
			r := bench.Ranking{Scores: scores}
			for _, d := range found {
				r.Ranked = append(r.Ranked, refs[d].Key())
			}
			bm25 = append(bm25, bench.ConversationAnswer{Question: q, Top: r, DeepTop: r})
			last = append(last, bench.ConversationAnswer{Question: q, Top: newest, DeepTop: newest})
		}
	}
	return []bench.ConversationSystem{bench.ScoreConversation(systemBM25, bm25), bench.ScoreConversation(systemLastMessages, last)}, nil
}

// lexemes asks PostgreSQL for the lexemes of each text (to_tsvector('english', text), as the
// messages' full-text column holds them) and how many times each occurs, in one round trip.
func lexemes(ctx context.Context, url string, texts []string) ([]map[string]int, error) {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `select t.i, l.lexeme, coalesce(cardinality(l.positions), 1)
from unnest($1::text[]) with ordinality as t(content, i)
cross join lateral unnest(to_tsvector('english'::regconfig, t.content)) as l`, texts)
	if err != nil {
		return nil, fmt.Errorf("lexemes: %w", err)
	}
	out := make([]map[string]int, len(texts))
	for i := range out {
		out[i] = map[string]int{}
	}
	var i int64
	var lexeme string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&i, &lexeme, &n}, func() error {
		out[i-1][lexeme] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lexemes: %w", err)
	}
	return out, nil
}
