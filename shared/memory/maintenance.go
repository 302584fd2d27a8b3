package memory

// SweepResult is the answer of a sweep of expired rows (the store's Sweep).
type SweepResult struct {
	Deleted SweepCounts `json:"deleted"`
	Batches int         `json:"batches"`
	// More reports that expired rows remain because the time ran out.
	More bool `json:"more"`
	// Capped is what the history cap did (zero when it is off).
	Capped CapCounts `json:"capped"`
	// Restamped counts the rows whose expiry followed a changed default retention.
	Restamped RestampCounts `json:"restamped"`
}

// RestampCounts counts, per kind, the rows a sweep re-stamped: stamped with an earlier default
// retention, their expiry now counts from the deployment's.
type RestampCounts struct {
	Messages         int64 `json:"messages"`
	ArchivedMessages int64 `json:"archived_messages"`
	Memories         int64 `json:"memories"`
	Sessions         int64 `json:"sessions"`
}

// SweepCounts counts rows per kind.
type SweepCounts struct {
	Messages        int64 `json:"messages"`
	Memories        int64 `json:"memories"`
	Sessions        int64 `json:"sessions"`
	IdempotencyKeys int64 `json:"idempotency_keys"`
	// RequestRates counts rate-limit counters whose bucket was full again (see the store's TakeRequestSlot):
	// deleting one changes no limit.
	RequestRates int64 `json:"request_rates"`
	// ArchivedMessages counts expired messages of the history archive.
	ArchivedMessages int64 `json:"archived_messages"`
}

// EmbedPendingResult counts what an embed-pending run or a backfill did (see app.EmbedPending).
type EmbedPendingResult struct {
	// Memories, KnowledgeChunks and Messages count the rows embedded.
	Memories        int64 `json:"memories"`
	KnowledgeChunks int64 `json:"knowledge_chunks"`
	Messages        int64 `json:"messages"`
	// Failed counts rows the provider refused for good (an input the model does not take);
	// they stay pending and are tried again by the next run.
	Failed int64 `json:"failed"`
	// More reports that pending rows may remain: the limit or the time ran out, or the
	// provider is unavailable.
	More bool `json:"more"`
}

// Total is the rows embedded in every table.
func (r EmbedPendingResult) Total() int64 { return r.Memories + r.KnowledgeChunks + r.Messages }

// PendingCount counts the rows of a backfill's scope (the store's PendingScope) that wait for
// a vector of the configured model and dimension.
type PendingCount struct {
	Memories        int64 `json:"memories"`
	KnowledgeChunks int64 `json:"knowledge_chunks"`
	Messages        int64 `json:"messages"`
}

// Total is the rows of every table.
func (c PendingCount) Total() int64 { return c.Memories + c.KnowledgeChunks + c.Messages }
