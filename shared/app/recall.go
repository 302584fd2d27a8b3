package app

import (
	"context"
	"encoding/json"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// RecallInput is the request of recall.
type RecallInput struct {
	ActingFor
	Query    *string         `json:"query"`
	K        *int64          `json:"k"`
	Agent    *string         `json:"agent"`
	Mode     *string         `json:"mode"`
	Source   *string         `json:"source"` // memories (default), messages or all
	Filter   json.RawMessage `json:"filter"`
	MinScore *float64        `json:"min_score"`
	// MMRLambda, when given, diversifies the answer (see store.RecallParams.MMRLambda).
	MMRLambda *float64 `json:"mmr_lambda"`
}

// RecallResults is the answer of recall, best first: memories and messages (each result names
// its source).
type RecallResults struct {
	Results []memory.Hit `json:"results"`
}

// Recall searches the caller's long-term memories, past messages, or both (see store.Recall).
func (a *App) Recall(ctx context.Context, pr auth.Principal, req RecallInput) (RecallResults, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, "", &f)
	if err != nil {
		return RecallResults{}, err
	}
	p := store.RecallParams{Scope: sc}
	p.Query, p.K, p.Mode = searchFields(&f, req.Query, req.K, req.Mode)
	p.Source = oneOf(&f, "source", req.Source, memory.SourceMemories,
		memory.SourceMemories, memory.SourceMessages, memory.SourceAll)
	p.Filter = objectField(&f, "filter", req.Filter, maxMetadataBytes)
	if req.MinScore != nil {
		p.MinScore = *req.MinScore
	}
	if req.MMRLambda != nil {
		if l := *req.MMRLambda; l < 0 || l > 1 {
			f.Add("mmr_lambda", "must be a number from 0 to 1")
		} else {
			p.MMRLambda = &l
		}
	}
	if err := f.Err(); err != nil {
		return RecallResults{}, err
	}
	extra, stop := a.startRecallExtra(ctx, p)
	defer stop()
	if p.QueryVector, err = a.EmbedQuery(ctx, p.Query, p.Mode); err != nil {
		return RecallResults{}, err
	}
	p.Model = a.cfg.Embedder.Model()
	hits, err := a.store.Recall(ctx, p)
	if err != nil {
		return RecallResults{}, err
	}
	return RecallResults{Results: mergeHits(hits, extra(), p.K)}, nil
}
