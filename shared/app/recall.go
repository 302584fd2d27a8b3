package app

import (
	"context"
	"encoding/json"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/embedding"
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
	// MinRelevance (0 to 1) drops results whose relevance is below it; default
	// Config.MinRelevance.
	MinRelevance *float64 `json:"min_relevance"`
	// MMRLambda, when given, diversifies the answer (see store.RecallParams.MMRLambda).
	MMRLambda *float64 `json:"mmr_lambda"`
	// Since and Until (RFC 3339) keep what was created in [since, until).
	Since *string `json:"since"`
	Until *string `json:"until"`
	// Speaker and Role keep the messages of that speaker (name) and role: messages or all only.
	Speaker *string `json:"speaker"`
	Role    *string `json:"role"`
	// Neighbours (0 to MaxRecallNeighbours) adds to each message result the turns around it.
	Neighbours *int64 `json:"neighbours"`
	// IncludeShared (default true) recalls the tenant's shared memories beside the user's own,
	// marked shared; false leaves them out.
	IncludeShared *bool `json:"include_shared"`
}

// MaxRecallNeighbours bounds RecallInput.Neighbours: turns on each side of a message result.
const MaxRecallNeighbours = 5

// RecallResults is the answer of recall, best first: memories and messages (each result names
// its source).
type RecallResults struct {
	Results []memory.Hit `json:"results"`
	// Matched says that the best result's relevance reaches the deployment's floor
	// (Config.MatchRelevance): false when nothing was found, or when what was found matches
	// the query poorly, as for a question about nothing stored. Only agentmem's own results
	// count (another source's carry no relevance).
	Matched bool `json:"matched"`
}

// Recall searches the caller's long-term memories, past messages, or both (see store.Recall).
func (a *App) Recall(ctx context.Context, pr auth.Principal, req RecallInput) (RecallResults, error) {
	var f apierror.Fields
	sc, err := scope(pr, req.ActingFor, req.Agent, "", &f)
	if err != nil {
		return RecallResults{}, err
	}
	p := store.RecallParams{Scope: sc, IncludeShared: req.IncludeShared == nil || *req.IncludeShared}
	p.Query, p.K, p.Mode = searchFields(&f, req.Query, req.K, req.Mode)
	p.Source = oneOf(&f, "source", req.Source, memory.SourceMemories,
		memory.SourceMemories, memory.SourceMessages, memory.SourceAll)
	p.Filter = objectField(&f, "filter", req.Filter, maxMetadataBytes)
	if req.MinScore != nil {
		p.MinScore = *req.MinScore
	}
	p.MinRelevance = a.cfg.MinRelevance
	if req.MinRelevance != nil {
		if r := *req.MinRelevance; r < 0 || r > 1 {
			f.Add("min_relevance", "must be a number from 0 to 1")
		} else {
			p.MinRelevance = r
		}
	}
	if req.MMRLambda != nil {
		if l := *req.MMRLambda; l < 0 || l > 1 {
			f.Add("mmr_lambda", "must be a number from 0 to 1")
		} else {
			p.MMRLambda = &l
		}
	}
	p.Since = timeField(&f, "since", req.Since)
	p.Until = timeField(&f, "until", req.Until)
	if p.Since != nil && p.Until != nil && !p.Until.After(*p.Since) {
		f.Add("until", "must be after since")
	}
	if req.Speaker != nil {
		if n := memory.CharCount(*req.Speaker); n < 1 || n > maxNameChars {
			f.Addf("speaker", "must be 1 to %d characters", maxNameChars)
		}
		p.Speaker = *req.Speaker
	}
	if req.Role != nil {
		p.Role = oneOf(&f, "role", req.Role, "", memory.RoleUser, memory.RoleAssistant, memory.RoleSystem, memory.RoleTool)
	}
	if (p.Speaker != "" || p.Role != "") && p.Source == memory.SourceMemories {
		f.Add("source", "must be messages or all with speaker or role: memories have neither")
	}
	neighbours := 0
	if req.Neighbours != nil {
		if n := *req.Neighbours; n < 0 || n > MaxRecallNeighbours {
			f.Addf("neighbours", "must be an integer from 0 to %d", MaxRecallNeighbours)
		} else {
			neighbours = int(n)
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
	p.VectorBaseline = embedding.SimilarityBaseline(p.Model)
	if a.cfg.VectorBaseline != nil {
		p.VectorBaseline = *a.cfg.VectorBaseline
	}
	// The results and their neighbours may come from a read replica that has replayed the
	// caller's writes (store.MayReadReplica).
	ctx = store.MayReadReplica(ctx)
	hits, err := a.store.Recall(ctx, p)
	if err != nil {
		return RecallResults{}, err
	}
	if neighbours > 0 {
		if hits, err = a.withNeighbours(ctx, sc, hits, neighbours); err != nil {
			return RecallResults{}, err
		}
	}
	floor := a.cfg.MatchRelevance
	if floor <= 0 {
		floor = memory.DefaultMatchRelevance
	}
	matched := len(hits) > 0 && memory.BestRelevance(hits) >= floor
	return RecallResults{Results: mergeHits(hits, extra(), p.K), Matched: matched}, nil
}

// withNeighbours gives each message result the n turns on each side of it in its session, in
// order, without a turn that is a result itself or was given beside a better result.
func (a *App) withNeighbours(ctx context.Context, sc memory.Scope, hits []memory.Hit, n int) ([]memory.Hit, error) {
	var places []memory.Place
	shown := map[memory.Place]bool{}
	for _, h := range hits {
		if h.Source == memory.HitMessage && h.SessionID != nil && h.Seq != nil {
			pl := memory.Place{SessionID: *h.SessionID, Seq: *h.Seq}
			places = append(places, pl)
			shown[pl] = true
		}
	}
	if len(places) == 0 {
		return hits, nil
	}
	around, err := a.store.MessageTurnsAround(ctx, sc, places, n)
	if err != nil {
		return nil, err
	}
	for i, h := range hits {
		if h.Source != memory.HitMessage || h.SessionID == nil || h.Seq == nil {
			continue
		}
		turns := []memory.Turn{}
		for _, t := range around[memory.Place{SessionID: *h.SessionID, Seq: *h.Seq}] {
			pl := memory.Place{SessionID: *h.SessionID, Seq: t.Seq}
			if !shown[pl] {
				shown[pl] = true
				turns = append(turns, t)
			}
		}
		hits[i].Context = turns
	}
	return hits, nil
}
