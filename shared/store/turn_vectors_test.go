package store_test

import (
	"context"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// commitTurn commits p as the use-case layer does with MESSAGE_EMBEDDING=commit (the store
// embeds nothing itself): a retry with a key is answered from the record first; then the
// turn's memories and the text of its messages are embedded with st's embedder in one call,
// every vector nil when the provider fails; then the turn is committed with them.
func commitTurn(st *store.Store, ctx context.Context, p store.CommitParams) (memory.CommitResult, bool, error) {
	if p.Idempotency != nil && len(p.Memories) > 0 {
		if res, found, err := st.Replay(ctx, p.Scope, *p.Idempotency); err != nil || found {
			return res, found, err
		}
	}
	var texts []string
	for _, m := range p.Memories {
		texts = append(texts, m.Content)
	}
	var embedded []int
	for i, m := range p.Messages {
		if memory.EmbedsMessage(m.Role, m.Content) {
			texts = append(texts, store.EmbedText(m.Content))
			embedded = append(embedded, i)
		}
	}
	if len(texts) > 0 && p.MemoryVectors == nil && p.MessageVectors == nil {
		e := embedderOf(st)
		vecs := make([]*string, len(texts))
		if vs, err := e.Embed(ctx, texts); err == nil && len(vs) == len(texts) {
			if lits, err := store.VectorLiterals(vs, e.Dimensions()); err == nil {
				vecs = lits
			}
		}
		if err := ctx.Err(); err != nil {
			return memory.CommitResult{}, false, err
		}
		p.MemoryVectors = vecs[:len(p.Memories)]
		p.Model = e.Model()
		p.MessageVectors = make([]*string, len(p.Messages))
		for j, i := range embedded {
			p.MessageVectors[i] = vecs[len(p.Memories)+j]
		}
	}
	return st.CommitTurn(ctx, p)
}
