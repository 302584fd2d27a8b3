// Package app is agentmem's use cases: what each function does once its request is decoded,
// whoever asks (the HTTP handlers, in the local server and in Lambda, the operator command, the
// scheduled jobs). It owns validation, the scope rule (whose data a request touches), the
// embedding budget, idempotency and what is logged; it takes typed inputs and answers typed
// outputs. Below it the store only reads and writes; above it the HTTP layer only decodes,
// authenticates and renders.
package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/llm/prompts"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/store"
)

// Config configures the use cases.
type Config struct {
	// DefaultRetention is the lifetime of stored rows when a request sets none; default
	// memory.DefaultRetention.
	DefaultRetention time.Duration
	// History is the sweep's history cap; its zero value caps only the sessions a service gave
	// a keep_messages of their own (see memory.HistoryCap).
	History memory.HistoryCap
	// NotesMaxChars is the size limit of one agent's notes about a user, in characters;
	// default memory.DefaultNotesMaxChars (20,000).
	NotesMaxChars int
	// RateLimit limits the requests of each user and tenant; default none.
	RateLimit RateLimit
	// Jobs configures the delivery of the outbox's jobs; zero fields take their defaults.
	Jobs JobsConfig
	// Adapters deliver the jobs, by name: the enabled ones (the store writes their jobs). A
	// process that never delivers may leave it empty; a job of an adapter missing here fails.
	Adapters map[string]adapter.Adapter
	// Notifier is told when a change wrote jobs, so delivery starts soon; nil leaves the jobs
	// to the next scheduled run.
	Notifier Notifier
	// Redactor removes personal data from every event's content before any adapter; without
	// one, no job is delivered (each fails, saying why).
	Redactor *redact.Redactor
	// MinRelevance is recall's min_relevance when a request gives none; 0 keeps every
	// result. The service sets the deployment's (RECALL_MIN_RELEVANCE).
	MinRelevance float64
	// MatchRelevance is the relevance recall's best result must reach for its answer to say
	// matched; 0 means memory.DefaultMatchRelevance. The service sets the deployment's
	// (RECALL_MATCH_RELEVANCE).
	MatchRelevance float64
	// VectorBaseline, when set, is the cosine similarity of unrelated texts' vectors of the
	// embedder's model, above which recall credits similarity in relevance
	// (store.RecallParams.VectorBaseline); nil means embedding.SimilarityBaseline of the
	// model. The service sets the deployment's (RECALL_VECTOR_BASELINE).
	VectorBaseline *float64
	// Embedder embeds what is stored and searched (memories, messages, knowledge chunks,
	// queries); default embedding.Hash. The store embeds nothing: every call of the provider
	// is made here, within the request's budget.
	Embedder embedding.Embedder
	// MessageEmbedding is when a turn's messages are embedded (MESSAGE_EMBEDDING):
	// memory.MessageEmbeddingDeferred (the default) or memory.MessageEmbeddingCommit.
	MessageEmbedding string
	// Prompts asks the chat model for fact extraction and rolling summaries (the
	// adapter.Extract and adapter.Summarize jobs); nil when no chat model is configured,
	// and those jobs then fail, saying why.
	Prompts *prompts.Runner
	// Summary says when a session's rolling summary advances; zero fields take
	// memory.DefaultSummaryPolicy's.
	Summary memory.SummaryPolicy
	// InternalJobs says the store writes adapter.Extract or adapter.Summarize jobs, so that a
	// commit notifies delivery even without adapters.
	InternalJobs bool
	// CacheSettle is how long after a delivery to the get-context cache its answers wait to
	// be served again; default DefaultCacheSettle (tests shorten it).
	CacheSettle time.Duration
	// RecallExtra, when set, is searched alongside the database by recall, its results merged
	// into the database's (MEM0_RECALL); it never fails recall. It gets the query redacted,
	// so it needs Redactor.
	RecallExtra RecallSource
}

// App runs the use cases. Build it once per process (per Lambda container); it is safe for
// concurrent use.
type App struct {
	store *store.Store
	log   *slog.Logger
	cfg   Config
	// later embeds the messages of committed turns, after their commit (see MessageEmbedding).
	later *laterEmbedder

	extractCount extractCounters
	summaryCount summaryCounters
	// cache is the get-context cache (an adapter.ContextCache among cfg.Adapters whose jobs
	// the store writes); nil when there is none.
	cache adapter.ContextCache
}

// New builds an App over st.
func New(st *store.Store, log *slog.Logger, cfg Config) *App {
	if cfg.DefaultRetention <= 0 {
		cfg.DefaultRetention = memory.DefaultRetention
	}
	if cfg.NotesMaxChars <= 0 {
		cfg.NotesMaxChars = memory.DefaultNotesMaxChars
	}
	if cfg.CacheSettle <= 0 {
		cfg.CacheSettle = DefaultCacheSettle
	}
	if cfg.RateLimit.Period <= 0 {
		cfg.RateLimit.Period = DefaultRateLimitPeriod
	}
	if cfg.RateLimit.BackfillPeriod <= 0 {
		cfg.RateLimit.BackfillPeriod = DefaultBackfillLimitPeriod
	}
	if cfg.Summary.TriggerTokens <= 0 {
		cfg.Summary = memory.DefaultSummaryPolicy
	}
	if cfg.RateLimit.Limiter == nil && st != nil {
		cfg.RateLimit.Limiter = st
	}
	if cfg.Embedder == nil {
		cfg.Embedder = embedding.Hash{}
	}
	if cfg.MessageEmbedding == "" {
		cfg.MessageEmbedding = memory.DefaultMessageEmbedding
	}
	a := &App{store: st, log: log, cfg: cfg, cache: contextCache(st, cfg.Adapters)}
	a.later = newLaterEmbedder(a)
	return a
}

// Ping checks that the database answers.
func (a *App) Ping(ctx context.Context) error { return a.store.Ping(ctx) }

// WritePosition is the position after the writes of a request run in ctx (store.NoteWrites),
// for its answer to carry; ok is false when there is none to give (no read replicas, no
// writes).
func (a *App) WritePosition(ctx context.Context) (p store.Position, ok bool, err error) {
	if a.store == nil {
		return 0, false, nil
	}
	return a.store.WritePosition(ctx)
}

// WorkDeadline is when work given budget d from now must end: d from now, or sooner when ctx's
// own deadline (a Lambda invocation's) leaves less, keeping headroom to send the answer, so a
// client gets a 503 with Retry-After rather than the platform's bare timeout.
func WorkDeadline(ctx context.Context, d time.Duration) time.Time {
	end := time.Now().Add(d)
	if cd, ok := ctx.Deadline(); ok {
		headroom := min(time.Second, time.Until(cd)/10)
		if cd.Add(-headroom).Before(end) {
			end = cd.Add(-headroom)
		}
	}
	return end
}
