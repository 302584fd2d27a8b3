package memory

import "time"

// The defaults of the settings that tune the store and the use cases. They live here, beside
// the domain types, so that the configuration that reads the environment, the store and the
// use cases that fill in unset fields share one value.

// The defaults of job delivery (JOBS_* settings). With them a job is tried 12 times over about
// two and a half hours (5 s, 10 s, 20 s, ... capped at an hour between tries) before it goes
// dead.
const (
	DefaultJobsMaxAttempts   = 12
	DefaultJobsBackoffBase   = 5 * time.Second
	DefaultJobsBackoffMax    = time.Hour
	DefaultJobsLease         = 60 * time.Second
	DefaultJobsConcurrency   = 4
	DefaultJobsDoneRetention = 24 * time.Hour
	DefaultJobsPollInterval  = 5 * time.Second
)

// When a turn's messages are embedded (MESSAGE_EMBEDDING).
const (
	// MessageEmbeddingDeferred: commit-turn stores the messages without a vector and answers;
	// the process embeds them right after, outside the request (see the use cases'
	// laterEmbedder). Until then recall finds them by full text (modes text and hybrid), not in mode vector.
	MessageEmbeddingDeferred = "deferred"
	// MessageEmbeddingCommit: the messages are embedded before the commit, in the same call of
	// the provider as the turn's memories, and stored with their vectors.
	MessageEmbeddingCommit = "commit"
	// DefaultMessageEmbedding is MESSAGE_EMBEDDING's default.
	DefaultMessageEmbedding = MessageEmbeddingDeferred
)

// MessageEmbeddings are MESSAGE_EMBEDDING's values.
var MessageEmbeddings = []string{MessageEmbeddingDeferred, MessageEmbeddingCommit}

// DefaultMergeSimilarity is the cosine similarity from which a new fact merges into a memory
// of its scope (the store's storeMemoriesSQL) when store.Config.MergeSimilarity is unset: close enough that
// only rephrasings of one fact reach it with the usual sentence-embedding models.
const DefaultMergeSimilarity = 0.95

// The defaults of hybrid fusion (store.Ranking; RECALL_TEXT_WEIGHT, RECALL_VECTOR_WEIGHT,
// RECALL_RRF_K, RECALL_EXACT_LIMIT): each rank weighs the same, the rank constant is
// Supabase's hybrid search's, and a user with fewer than 2,000 memories is ranked exactly.
const (
	DefaultTextWeight   = 1
	DefaultVectorWeight = 1
	DefaultRRFK         = 50
	DefaultExactLimit   = 2000
)

// DefaultFollowWeight is store.Ranking.FollowWeight's default, chosen on the labelled conversations
// of the quality benchmark (cmd/agentmem-bench, -only quality).
const DefaultFollowWeight = 0.5

// DefaultMinRelevance is recall's min_relevance when a request gives none (the
// deployment's RECALL_MIN_RELEVANCE): 0, every result is kept. On the quality benchmark
// (cmd/agentmem-bench, -only quality) a floor of 0.1 under each result costs the labelled
// facts' answers more than a sixth of their MRR; the answer's matched (DefaultMatchRelevance)
// says when nothing matched well without dropping anything.
const DefaultMinRelevance = 0

// DefaultMatchRelevance is the relevance the best result of recall must reach for its answer
// to count as matched (recall's "matched"; the deployment's RECALL_MATCH_RELEVANCE). It is
// chosen on the quality benchmark (cmd/agentmem-bench, -only quality), which asks questions
// about nothing stored beside the labelled ones, with the built-in embedder's baseline
// (embedding.HashSimilarityBaseline): a twentieth of the best BM25 score the query's words
// could get, or a similarity of 0.25. It flagged 98% of the off-topic questions of the
// labelled facts and 67% of those of the conversations (a name and one stored word match
// "Who is Caroline's favourite poet?"), and 7% and 10% of the labelled questions, almost all
// of the latter answered wrongly anyway.
const DefaultMatchRelevance = 0.05

// Defaults of the replica settings (store.Config).
const (
	// DefaultReplicaMaxLag is store.Config.ReplicaMaxLag when unset.
	DefaultReplicaMaxLag = 5 * time.Second
	// DefaultReplicaCheckInterval is store.Config.ReplicaCheckInterval when unset.
	DefaultReplicaCheckInterval = time.Second
)

// DefaultMaxConns caps the pool of a store whose store.Config leaves MaxConns unset: enough for one
// Lambda container, which serves one request at a time.
const DefaultMaxConns = 4
