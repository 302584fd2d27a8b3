package store_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/store/storetest"
)

// The store embeds nothing: the use-case layer (shared/app) embeds before it calls the store,
// and runs the embed-pending loop. These helpers call the store as the use cases do, with the
// embedder a test chose for a store (embedding.Hash unless openWith named another).

// testEmbedders holds the embedder chosen for each store opened by openWith.
var testEmbedders sync.Map

// openWith opens a store over url whose use cases embed with emb, closed when the test ends.
func openWith(t testing.TB, url string, emb embedding.Embedder, opts ...storetest.Option) *store.Store {
	t.Helper()
	st := storetest.OpenURL(t, url, opts...)
	if emb != nil {
		testEmbedders.Store(st, emb)
	}
	return st
}

// embedderOf is the embedder of st's use cases.
func embedderOf(st *store.Store) embedding.Embedder {
	if e, ok := testEmbedders.Load(st); ok {
		return e.(embedding.Embedder)
	}
	return embedding.Hash{}
}

// useCases are the use cases over st, embedding with embedderOf(st).
func useCases(st *store.Store) *app.App {
	return app.New(st, slog.New(slog.DiscardHandler), app.Config{Embedder: embedderOf(st)})
}

// embedQuery embeds query for a search of mode (hybrid when "", which it sets) as the use
// cases do, with st's embedder, and returns the vector and its model.
func embedQuery(st *store.Store, ctx context.Context, query string, mode *string) (*string, string, error) {
	if *mode == "" {
		*mode = memory.ModeHybrid
	}
	v, err := useCases(st).EmbedQuery(ctx, query, *mode)
	return v, embedderOf(st).Model(), err
}

func recall(st *store.Store, ctx context.Context, p store.RecallParams) ([]memory.Hit, error) {
	var err error
	if p.QueryVector, p.Model, err = embedQuery(st, ctx, p.Query, &p.Mode); err != nil {
		return nil, err
	}
	return st.Recall(ctx, p)
}

func getContext(st *store.Store, ctx context.Context, p store.ContextParams) (memory.Context, error) {
	if p.Query != "" && p.RecallK > 0 {
		mode := memory.ModeHybrid
		var err error
		if p.QueryVector, p.Model, err = embedQuery(st, ctx, p.Query, &mode); err != nil {
			return memory.Context{}, err
		}
	}
	return st.GetContext(ctx, p)
}

func searchKnowledge(st *store.Store, ctx context.Context, p store.KnowledgeSearchParams) ([]memory.KnowledgeHit, error) {
	var err error
	if p.QueryVector, p.Model, err = embedQuery(st, ctx, p.Query, &p.Mode); err != nil {
		return nil, err
	}
	return st.SearchKnowledge(ctx, p)
}

func ingestKnowledge(st *store.Store, ctx context.Context, p store.IngestParams) (memory.IngestResult, error) {
	vs, err := useCases(st).EmbedChunks(ctx, p.Chunks)
	if err != nil {
		return memory.IngestResult{}, err
	}
	p.Vectors, p.Model = vs, embedderOf(st).Model()
	return st.IngestKnowledge(ctx, p)
}

func createMemory(st *store.Store, ctx context.Context, p store.CreateMemoryParams) (memory.CreatedMemory, bool, error) {
	if p.Idempotency != nil {
		if res, found, err := st.ReplayCreatedMemory(ctx, p.Scope, *p.Idempotency); err != nil || found {
			return res, found, err
		}
	}
	vs, err := useCases(st).EmbedForStorage(ctx, []string{p.Content})
	if err != nil {
		return memory.CreatedMemory{}, false, err
	}
	p.Vector, p.Model = vs[0], embedderOf(st).Model()
	return st.CreateMemory(ctx, p)
}

func updateMemory(st *store.Store, ctx context.Context, p store.UpdateMemoryParams) (memory.MemoryItem, error) {
	if p.Content != nil {
		vs, err := useCases(st).EmbedForStorage(ctx, []string{*p.Content})
		if err != nil {
			return memory.MemoryItem{}, err
		}
		p.Vector, p.Model = vs[0], embedderOf(st).Model()
	}
	return st.UpdateMemory(ctx, p)
}

func embedPending(st *store.Store, ctx context.Context, limit int) (memory.EmbedPendingResult, error) {
	return useCases(st).EmbedPendingRows(ctx, limit)
}

func backfill(st *store.Store, ctx context.Context, p store.BackfillParams) (memory.EmbedPendingResult, error) {
	return useCases(st).Backfill(ctx, p)
}

func countPending(st *store.Store, ctx context.Context, sc store.PendingScope) (memory.PendingCount, error) {
	return useCases(st).CountPending(ctx, sc)
}
