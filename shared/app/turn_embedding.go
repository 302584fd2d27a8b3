package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// embedShare is the part of a request's remaining time an embedding may take: the rest is left
// to store without the vectors when the provider is slow.
const embedShare = 2

// embedBudget bounds an embedding made while a client waits to embedShare of the request's
// remaining time.
func embedBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithTimeout(ctx, time.Until(d)/embedShare)
	}
	return context.WithCancel(ctx)
}

// callerGone is the error to answer when ctx ended, nil while it runs.
func callerGone(ctx context.Context) error {
	if ctx.Err() != nil {
		return &apierror.Error{Code: apierror.Unavailable, Detail: "the request ran out of time; retry", Cause: ctx.Err()}
	}
	return nil
}

// vectorModel is what the configured embedder's vectors are of, as the store records it.
func (a *App) vectorModel() store.VectorModel {
	return store.VectorModel{Name: a.cfg.Embedder.Model(), Dims: a.cfg.Embedder.Dimensions()}
}

// EmbedForStorage embeds texts to be stored, before any transaction (no lock is held while a
// model works), within embedShare of the request's time. When the provider fails, every vector
// is nil: the rows are stored without one and EmbedPending embeds them later, so a write never
// fails for the provider's sake; only a caller that gave up (ctx done) fails it.
func (a *App) EmbedForStorage(ctx context.Context, texts []string) ([]*string, error) {
	ectx, cancel := embedBudget(ctx)
	defer cancel()
	vecs, err := a.embedVectors(ectx, texts)
	if err != nil {
		if err := callerGone(ctx); err != nil {
			return nil, err
		}
		a.log.WarnContext(ctx, "embedding failed; stored without vectors", "texts", len(texts), "error", errText(err))
		return make([]*string, len(texts)), nil
	}
	return vecs, nil
}

// EmbedQuery embeds a search's query in mode (memory.ModeText needs none: nil), within
// embedShare of the request's time. When the provider fails, mode vector answers unavailable
// (it cannot rank), and hybrid gets no vector: it ranks by full text alone, degraded, not failed.
func (a *App) EmbedQuery(ctx context.Context, query, mode string) (*string, error) {
	if mode == memory.ModeText {
		return nil, nil
	}
	ectx, cancel := embedBudget(ctx)
	defer cancel()
	vecs, err := a.embedVectors(ectx, []string{query})
	if err := callerGone(ctx); err != nil {
		return nil, err
	}
	if err != nil {
		if mode == memory.ModeVector {
			return nil, vectorSearchUnavailable(err)
		}
		return nil, nil
	}
	return vecs[0], nil
}

// vectorSearchUnavailable is the answer to a vector-only search without a query vector.
func vectorSearchUnavailable(err error) error {
	if errors.Is(err, embedding.ErrUnavailable) {
		return &apierror.Error{Code: apierror.Unavailable, Cause: err,
			Detail: "the embedding provider is unavailable, so mode vector cannot rank; retry, or use mode hybrid or text"}
	}
	return fmt.Errorf("embed query: %w", err)
}

// embedVectors embeds texts as pgvector literals with the configured model: all of them, or,
// with the error, none.
func (a *App) embedVectors(ctx context.Context, texts []string) ([]*string, error) {
	e := a.cfg.Embedder
	sctx, span := telemetry.StartEmbedding(ctx, e.Model(), len(texts))
	vs, err := e.Embed(sctx, texts)
	if err == nil && len(vs) != len(texts) {
		err = fmt.Errorf("%w: %d vectors for %d texts", embedding.ErrInvalidResponse, len(vs), len(texts))
	}
	var out []*string
	if err == nil {
		out, err = store.VectorLiterals(vs, e.Dimensions())
		if err != nil {
			err = fmt.Errorf("%w: %w", embedding.ErrInvalidResponse, err)
		}
	}
	span.End(err)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return out, nil
}

// errText is what is logged of an embedding error: the provider's status and kind, never text.
func errText(err error) string {
	switch {
	case errors.Is(err, embedding.ErrUnavailable):
		return "provider unavailable"
	case errors.Is(err, embedding.ErrInvalidResponse):
		return "invalid response"
	case errors.Is(err, context.DeadlineExceeded):
		return "out of time"
	}
	return "refused"
}

// embedTurn sets the vectors of p's memories, and of its messages when they are embedded at
// commit, in one call of the provider.
func (a *App) embedTurn(ctx context.Context, p *store.CommitParams) error {
	p.Model = a.cfg.Embedder.Model()
	texts := make([]string, 0, len(p.Memories)+len(p.Messages))
	for _, m := range p.Memories {
		texts = append(texts, m.Content)
	}
	var embedded []int // the messages embedded, in the order of texts
	if a.cfg.MessageEmbedding == memory.MessageEmbeddingCommit {
		for i, m := range p.Messages {
			if memory.EmbedsMessage(m.Role, m.Content) {
				texts = append(texts, store.EmbedText(m.Content))
				embedded = append(embedded, i)
			}
		}
	}
	if len(texts) == 0 {
		return nil
	}
	vecs, err := a.EmbedForStorage(ctx, texts)
	if err != nil {
		return err
	}
	p.MemoryVectors = vecs[:len(p.Memories)]
	if len(embedded) > 0 {
		p.MessageVectors = make([]*string, len(p.Messages))
		for j, i := range embedded {
			p.MessageVectors[i] = vecs[len(p.Memories)+j]
		}
	}
	return nil
}

// embedLater hands the messages of a committed turn that are embedded but got no vector to the
// process's laterEmbedder.
func (a *App) embedLater(p store.CommitParams, res memory.CommitResult) {
	if a.cfg.MessageEmbedding != memory.MessageEmbeddingDeferred {
		return
	}
	var todo []store.MessageVector
	for i, m := range p.Messages {
		if i < len(res.Messages) && memory.EmbedsMessage(m.Role, m.Content) &&
			(i >= len(p.MessageVectors) || p.MessageVectors[i] == nil) {
			todo = append(todo, store.MessageVector{UserID: p.Scope.UserID, SessionID: res.SessionID, Seq: res.Messages[i].Seq, Content: m.Content})
		}
	}
	if len(todo) > 0 {
		a.later.add(todo)
	}
}

// Bounds of the work after commit.
const (
	// laterQueue is how many turns may wait for laterEmbedder; the messages of a turn that finds
	// the queue full wait for EmbedPending (the scheduled run) instead.
	laterQueue = 1024
	// laterBatch is the most messages embedded in one call of the provider.
	laterBatch = 64
	// laterTimeout bounds one batch: the call of the provider and the write of its vectors.
	laterTimeout = 30 * time.Second
)

// laterEmbedder embeds the messages of committed turns in the background, a batch at a time in
// one goroutine of the process, started on first use: in `agentmem serve` within moments of the
// answer; in a Lambda container before it is frozen (the functions that commit turns wait
// for it after each answer: lambdaentry.Options.AfterAnswer). Messages it could not embed (the
// provider down, the queue full, the process gone) keep no vector and wait for EmbedPending,
// which finds every such message; full-text search finds them meanwhile.
type laterEmbedder struct {
	a     *App
	queue chan []store.MessageVector
	start sync.Once
	// pending counts the turns queued and not yet embedded or given up; idle is closed when
	// it comes back to 0 (see wait), and a new one made when it leaves 0.
	mu      sync.Mutex
	pending int
	idle    chan struct{}
}

func newLaterEmbedder(a *App) *laterEmbedder {
	return &laterEmbedder{a: a, queue: make(chan []store.MessageVector, laterQueue)}
}

// add queues a turn's messages; it never blocks.
func (l *laterEmbedder) add(ms []store.MessageVector) {
	l.start.Do(func() { go l.run() })
	l.mu.Lock()
	if l.pending == 0 {
		l.idle = make(chan struct{})
	}
	l.pending++
	l.mu.Unlock()
	select {
	case l.queue <- ms:
	default:
		l.done(1)
		l.a.log.Warn("messages left to the scheduled embedding: the queue is full", "messages", len(ms))
	}
}

func (l *laterEmbedder) done(turns int) {
	l.mu.Lock()
	l.pending -= turns
	if l.pending == 0 {
		close(l.idle)
	}
	l.mu.Unlock()
}

// wait returns once every turn queued so far was embedded or given up (nil), or when ctx ends
// first (its error).
func (l *laterEmbedder) wait(ctx context.Context) error {
	l.mu.Lock()
	if l.pending == 0 {
		l.mu.Unlock()
		return nil
	}
	idle := l.idle
	l.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *laterEmbedder) run() {
	for first := range l.queue {
		batch, turns := first, 1
	fill:
		for len(batch) < laterBatch {
			select {
			case more := <-l.queue:
				batch, turns = append(batch, more...), turns+1
			default:
				break fill
			}
		}
		l.embed(batch)
		l.done(turns)
	}
}

// embed embeds one batch and stores its vectors.
func (l *laterEmbedder) embed(batch []store.MessageVector) {
	ctx, cancel := context.WithTimeout(context.Background(), laterTimeout)
	defer cancel()
	texts := make([]string, len(batch))
	for i, m := range batch {
		texts[i] = store.EmbedText(m.Content)
	}
	vecs, err := l.a.embedVectors(ctx, texts)
	if err != nil {
		l.a.log.Warn("messages left to the scheduled embedding", "messages", len(batch), "error", errText(err))
		return
	}
	for i := range batch {
		batch[i].Vector = *vecs[i]
	}
	if _, err := l.a.store.StoreMessageVectors(ctx, l.a.vectorModel(), batch); err != nil {
		l.a.log.Warn("messages left to the scheduled embedding", "messages", len(batch), "error", err.Error())
	}
}

// WaitEmbedded returns once the messages of every turn committed so far through this App are
// embedded, or left to the scheduled embedding (see memory.MessageEmbeddingDeferred).
func (a *App) WaitEmbedded() { a.later.wait(context.Background()) } //nolint:errcheck // never ends early

// WaitEmbeddedContext is WaitEmbedded until ctx ends: it returns ctx's error if ctx ends first.
func (a *App) WaitEmbeddedContext(ctx context.Context) error { return a.later.wait(ctx) }
