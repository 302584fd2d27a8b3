package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SchemaVersion numbers the layout of results.json; it changes when a figure moves or goes.
const SchemaVersion = 1

// Results is everything one run measured: results.json.
type Results struct {
	SchemaVersion int       `json:"schema_version"`
	Mode          string    `json:"mode"`
	StartedAt     time.Time `json:"started_at"`
	DurationS     float64   `json:"duration_s"`
	Sizes         Sizes     `json:"sizes"`
	Env           Env       `json:"env"`
	Workloads     Workloads `json:"workloads"`
	Goals         []Goal    `json:"goals"`
	// Runs is how many times the compared workloads (W1, W2, W2-growth, W3) ran: the first run
	// is Workloads, the others are Repeats (holding those workloads only).
	Runs    int         `json:"runs"`
	Repeats []Workloads `json:"repeats,omitempty"`
	// RunLoadAvg is the machine's 1-minute load average at the end of each run (agentmem's
	// compared workloads and the peers after them).
	RunLoadAvg []float64 `json:"load_avg_1m_per_run"`
	// Peers are the other systems measured side by side (null when the run had none);
	// Comparison sets agentmem's store next to them and checks the targets on the medians.
	Peers      *Peers      `json:"peers,omitempty"`
	Comparison *Comparison `json:"comparison,omitempty"`
	// Notes are remarks of the run (a skipped part, a workload that failed).
	Notes []string `json:"notes"`
}

// Sizes are the sizes a run used (the specification's at full size).
type Sizes struct {
	Sessions           int      `json:"sessions"`
	MessagesPerSession int      `json:"messages_per_session"`
	GrowthLengths      []int    `json:"growth_lengths"`
	GrowthPerLength    int      `json:"growth_sessions_per_length"`
	GrowthReads        int      `json:"growth_reads_per_length"`
	Users              int      `json:"users"`
	MemoriesPerUser    int      `json:"memories_per_user"`
	LargeUsers         int      `json:"large_users"`
	Queries            int      `json:"queries"`
	WarmupQueries      int      `json:"warmup_queries"`
	Turns              int      `json:"turns"`
	Reads              int      `json:"reads"`
	Warmup             int      `json:"warmup_ops"`
	Clients            int      `json:"clients"`
	SweepExpired       int      `json:"sweep_expired_rows"`
	SweepLive          int      `json:"sweep_live_rows"`
	SweepBatch         int      `json:"sweep_batch_size"`
	SweepBaseline      int      `json:"sweep_baseline_turns"`
	W5Clients          int      `json:"w5_clients"`
	W5Seconds          float64  `json:"w5_seconds"`
	W6Functions        []string `json:"w6_functions"`
	W6Runs             int      `json:"w6_runs"`
	// HistoryMessages and HistorySessions size the history workload's user; HistoryReads is
	// the number of reads of each kind of page.
	HistoryMessages int `json:"history_messages"`
	HistorySessions int `json:"history_sessions"`
	HistoryReads    int `json:"history_reads"`
	// QualityCopies is how many times the quality workload stores the labelled set, each copy
	// under users of its own: memory ids are random and the store breaks ties of score by id,
	// so the mean over copies is steadier than any one copy.
	QualityCopies int `json:"quality_copies"`
	// QualityConversations is how many conversations of the conversation set the quality
	// workload stores and asks about (the first ones).
	QualityConversations int `json:"quality_conversations"`
	// SourcesRows is how many memories, and as many messages, the user of W3-sources holds
	// (other users hold as many again of each).
	SourcesRows int `json:"sources_rows"`
	// WordsMessages is how many messages the words workload's user holds (other users hold
	// twenty thirds as many messages, in WordsOtherUsers conversations, and as many memories).
	WordsMessages int `json:"words_messages"`
	// SourcesQueries is how many queries W3-sources asks of each source in each mode.
	SourcesQueries int `json:"sources_queries"`
	// OutageSeconds is how long the outbox workload keeps the webhook receiver down.
	OutageSeconds float64 `json:"outage_seconds"`
}

// Env says where the figures come from.
type Env struct {
	Go         string            `json:"go"`
	PostgreSQL string            `json:"postgresql"`
	Pgvector   string            `json:"pgvector"`
	Commit     string            `json:"commit"`
	Dirty      bool              `json:"dirty"`
	Machine    Machine           `json:"machine"`
	PGSettings map[string]string `json:"pg_settings"`
	// Connection describes how the store reaches the database (direct or through a pooler).
	Connection string `json:"connection"`
	// UserPartitions is the number of partitions of each user-owned table (1: one table each,
	// as the migrations make them; see agentmem.partition_by_user).
	UserPartitions int `json:"user_partitions,omitempty"`
}

// Machine describes the host.
type Machine struct {
	Cores       int     `json:"cores"`
	MemoryBytes int64   `json:"memory_bytes"`
	CPUModel    string  `json:"cpu_model"`
	OS          string  `json:"os"`
	Arch        string  `json:"arch"`
	LoadAvg1    float64 `json:"load_avg_1m_at_start"`
}

// Phase is one measured run of a workload: ops operations by clients clients.
type Phase struct {
	Clients   int     `json:"clients"`
	Ops       int     `json:"ops"`
	Errors    int     `json:"errors"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	Latency   Latency `json:"latency"`
	// FirstError is the text of the first error, for the report ("" when none).
	FirstError string `json:"first_error,omitempty"`
}

// Floor is what the simplest database calls cost from this process, for scale: a store call
// cannot be cheaper than its round trips.
type Floor struct {
	// SelectOne is `select 1` on a pooled connection.
	SelectOne Phase `json:"select_1"`
	// Transaction is begin; select 1; commit.
	Transaction Phase `json:"transaction"`
}

// Workloads holds each workload's figures; a workload not run is null.
type Workloads struct {
	Floor    *Floor            `json:"floor"`
	W1       *Levels[W1]       `json:"w1_commit"`
	W2       *Levels[W2]       `json:"w2_context"`
	W2Growth *Levels[W2Growth] `json:"w2_growth"`
	W3       *Levels[W3]       `json:"w3_recall"`
	W3Large  *Levels[W3]       `json:"w3_recall_large"`
	// W3Sources is recall by source (memories, messages, all) for one user with many of each.
	W3Sources *W3Sources `json:"w3_sources"`
	// W3SourcesClustered is W3-sources over clustered texts (topics and near-duplicates, as a
	// real model's vectors are); W3Sources is over random texts, the worst case.
	W3SourcesClustered *W3Sources `json:"w3_sources_clustered,omitempty"`
	// Words is recall over messages for a user whose questions share a word with most of
	// the user's messages.
	Words   *RecallWords     `json:"words"`
	W4      *W4              `json:"w4_sweep"`
	W5      *W5              `json:"w5_end_to_end"`
	W6      *W6              `json:"w6_startup"`
	Quality *Quality         `json:"quality"`
	History *Levels[History] `json:"history"`
	Outbox  *Outbox          `json:"outbox"`
	Cache   *Cache           `json:"cache"`
	// Replica is reads through a streaming read replica; run only with -replica-url.
	Replica *Replica `json:"replica,omitempty"`
}

// Levels are a workload's figures with the store called directly and through the HTTP
// functions (real JWT verification, row-level security).
type Levels[T any] struct {
	Store *T `json:"store"`
	HTTP  *T `json:"http"`
}

// W1 is the commit workload: turns/s and latency, sequential then concurrent.
type W1 struct {
	Sequential Phase `json:"sequential"`
	Concurrent Phase `json:"concurrent"`
	// SequentialCPU and ConcurrentCPU are what each phase cost in CPU, when the server runs
	// on this machine.
	SequentialCPU *CPUCost `json:"sequential_cpu,omitempty"`
	ConcurrentCPU *CPUCost `json:"concurrent_cpu,omitempty"`
}

// W2 is the context workload: the last 12 messages of a session, sequential.
type W2 struct {
	Sequential Phase `json:"sequential"`
}

// GrowthPoint is W2 on sessions of one length.
type GrowthPoint struct {
	Length int   `json:"length"`
	Phase  Phase `json:"phase"`
}

// W2Growth is W2 over sessions of growing length.
type W2Growth struct {
	Points []GrowthPoint `json:"points"`
	// P50Ratio is the p50 of the longest sessions over the p50 of the shortest.
	P50Ratio float64 `json:"p50_ratio_longest_to_shortest"`
}

// W3 is the recall workload.
type W3 struct {
	Memories   int    `json:"memories"`
	Users      int    `json:"users"`
	Mode       string `json:"mode"`
	Sequential Phase  `json:"sequential"`
	Concurrent Phase  `json:"concurrent"`
	// RecallAt10 is the mean share of the exact top 10 returned (sequential run).
	RecallAt10 float64 `json:"recall_at_10"`
	// Hybrid is the default (hybrid) mode, sequential, for comparison; store level only.
	Hybrid *Phase `json:"hybrid,omitempty"`
	// LoadSeconds is the time to load the memories and build the indexes.
	LoadSeconds float64 `json:"load_seconds"`
}

// W3Sources is recall by source for one user holding Rows memories and Rows messages, among
// the memories and messages of other users that share the tables and their indexes (store
// level, top 10, queries interleaved across the sources so that the machine's drift weighs on
// each alike).
type W3Sources struct {
	// Vectors is bench.VectorsRandom or bench.VectorsClustered: how the texts were drawn.
	Vectors string `json:"vectors,omitempty"`
	Rows    int    `json:"rows"`
	// OtherMemories (W3's) and OtherMessages are the other users' rows with vectors.
	OtherMemories int     `json:"other_memories"`
	OtherMessages int     `json:"other_messages"`
	LoadSeconds   float64 `json:"load_seconds"`
	// Vector and Hybrid are the phases of each mode (hybrid is recall's default).
	Vector SourcePhases `json:"vector"`
	Hybrid SourcePhases `json:"hybrid"`
	// RecallAt10Memories and RecallAt10Messages are vector mode's share of the exact top 10 of
	// the user's rows of that source (as W3 counts it), over the first RecallQueries queries.
	RecallAt10Memories float64 `json:"recall_at_10_memories"`
	RecallAt10Messages float64 `json:"recall_at_10_messages"`
	RecallQueries      int     `json:"recall_queries"`
	// MessagesToMemoriesP50 is the p50 of recall over messages over the p50 over memories, in
	// the default (hybrid) mode.
	MessagesToMemoriesP50 float64 `json:"messages_to_memories_p50_ratio"`
	// Commits are commit-turns of two messages into the user's sessions, sequential: each
	// embeds its messages and adds them to the messages' HNSW index, which holds the rows above.
	Commits Phase `json:"commits"`
	// CommitsDeferred are the same commit-turns with MESSAGE_EMBEDDING=deferred (the default):
	// the messages are stored without vectors, embedded after the answer, off the request.
	CommitsDeferred Phase `json:"commits_deferred"`
}

// RecallWords is recall over the messages of one user (UserMessages) whose every question
// names a speaker whose name is in CommonShare of them (as speaker or in the text), among
// other users' rows sharing the tables and indexes; store level, top 10, built-in embedder.
// Text and Hybrid are asked with the default exact limit (the user's scope is larger: the
// full-text and HNSW indexes serve it), ExactText and ExactHybrid with one above it (the scope
// is read row by row).
type RecallWords struct {
	UserMessages  int     `json:"user_messages"`
	OtherMessages int     `json:"other_messages"`
	OtherMemories int     `json:"other_memories"`
	CommonShare   float64 `json:"common_share"`
	Embedder      string  `json:"embedder"`
	LoadSeconds   float64 `json:"load_seconds"`
	Queries       int     `json:"queries"`
	Text          Phase   `json:"text"`
	Hybrid        Phase   `json:"hybrid"`
	ExactText     Phase   `json:"exact_text"`
	ExactHybrid   Phase   `json:"exact_hybrid"`
	// The talk user holds TalkMessages messages of natural conversation (TalkConversations)
	// in the same tables, and is asked TalkQueries of their labelled questions in each mode,
	// with the default exact limit; the three asked in turn, question by question.
	TalkMessages int   `json:"talk_messages"`
	TalkQueries  int   `json:"talk_queries"`
	TalkText     Phase `json:"talk_text"`
	TalkVector   Phase `json:"talk_vector"`
	TalkHybrid   Phase `json:"talk_hybrid"`
}

// SourcePhases are one mode's phases, one per source.
type SourcePhases struct {
	Memories Phase `json:"memories"`
	Messages Phase `json:"messages"`
	All      Phase `json:"all"`
}

// SweepCounts counts deleted rows per kind.
type SweepCounts struct {
	Messages        int64 `json:"messages"`
	Memories        int64 `json:"memories"`
	Sessions        int64 `json:"sessions"`
	IdempotencyKeys int64 `json:"idempotency_keys"`
}

// W4 is the sweep workload.
type W4 struct {
	ExpiredRows    int         `json:"expired_rows"`
	LiveRows       int         `json:"live_rows"`
	LoadSeconds    float64     `json:"load_seconds"`
	SweepSeconds   float64     `json:"sweep_seconds"`
	Deleted        SweepCounts `json:"deleted"`
	RowsDeleted    int64       `json:"rows_deleted"`
	RowsPerSec     float64     `json:"rows_deleted_per_sec"`
	Batches        int         `json:"batches"`
	BatchSize      int         `json:"batch_size"`
	SweepErrors    int         `json:"sweep_errors"`
	CommitsWithout Phase       `json:"commits_without_sweep"`
	CommitsDuring  Phase       `json:"commits_during_sweep"`
	// P99Ratio is the commit p99 during the sweep over the p99 without.
	P99Ratio float64 `json:"commit_p99_ratio"`
}

// W5 is the end-to-end workload through the HTTP server.
type W5 struct {
	Clients        int            `json:"clients"`
	Seconds        float64        `json:"seconds"`
	Requests       int            `json:"requests"`
	Errors         int            `json:"errors"`
	RequestsPerSec float64        `json:"requests_per_sec"`
	Latency        Latency        `json:"latency"`
	GetContext     Latency        `json:"get_context"`
	CommitTurn     Latency        `json:"commit_turn"`
	ErrorsByStatus map[string]int `json:"errors_by_status"`
	FirstError     string         `json:"first_error,omitempty"`
}

// History is the history workload: one user's messages across many sessions, paged through
// sessions history without session_id (50 a page, each answer with its total), and cleared.
type History struct {
	Messages int `json:"messages"`
	Sessions int `json:"sessions"`
	Agents   int `json:"agents"`
	// FirstPage is the newest page; DeepPage a newest-first page from a cursor in the older
	// half; AgentPage the newest page of one agent; SincePage the oldest-first page of the
	// messages since the middle of the history.
	FirstPage Phase `json:"first_page"`
	DeepPage  Phase `json:"deep_page"`
	AgentPage Phase `json:"agent_page"`
	SincePage Phase `json:"since_page"`
	// WalkSeconds is the time to page through the whole history, WalkPages pages of 200.
	WalkSeconds float64 `json:"walk_seconds"`
	WalkPages   int     `json:"walk_pages"`
	// ClearScope is what this level cleared ("agent a0" or "all"), ClearDeleted the messages
	// deleted and ClearSeconds the time of that one clear.
	ClearScope   string  `json:"clear_scope"`
	ClearDeleted int64   `json:"clear_deleted"`
	ClearSeconds float64 `json:"clear_seconds"`
	// LoadSeconds is the time to load the user's messages.
	LoadSeconds float64 `json:"load_seconds"`
}

// Startup is the start-up of one binary, over several runs.
type Startup struct {
	Name        string `json:"name"`
	BinaryBytes int64  `json:"binary_bytes"`
	Runs        int    `json:"runs"`
	Errors      int    `json:"errors"`
	// StartMS is the median time from process start to the first answered request.
	StartMS    float64   `json:"start_ms"`
	StartAllMS []float64 `json:"start_all_ms"`
	// InitMS is the median time from process start until it is ready: its first call for an
	// invocation (Lambda), or its first answer of any kind (the server).
	InitMS float64 `json:"init_ms"`
	// PeakRSSKiB is the median of VmHWM after the first answer.
	PeakRSSKiB float64 `json:"peak_rss_kib"`
	// Status is the HTTP status of the first answer (the last run's).
	Status     int    `json:"status"`
	FirstError string `json:"first_error,omitempty"`
}

// W6 is the start-up workload.
type W6 struct {
	// Lambda holds each function binary started as Lambda starts it (Runtime API).
	Lambda []Startup `json:"lambda"`
	// Server is `agentmem serve` until /healthz answers.
	Server *Startup `json:"server"`
	// BuildFlags are the flags the binaries were built with.
	BuildFlags []string `json:"build_flags"`
}

// Quality is the retrieval-quality workload: the labelled set (Labelled) stored through the
// store with the built-in embedder, every question asked in each recall mode, store level only.
type Quality struct {
	// Users and Facts count one copy of the set; Copies is how many were stored and asked.
	Users    int          `json:"users"`
	Facts    int          `json:"facts"`
	Embedder string       `json:"embedder"`
	K        int          `json:"k"`
	Copies   int          `json:"copies"`
	Text     QualityScore `json:"text"`
	Vector   QualityScore `json:"vector"`
	Hybrid   QualityScore `json:"hybrid"`
	// Matching is, per mode, how the relevance of the answers tells the off-topic questions
	// (OffTopic, asked of each user of the first copy) from the labelled ones.
	Matching []Matching `json:"matching"`
	// Conversations is recall over the messages of the conversation set (Conversations).
	Conversations *ConversationQuality `json:"conversations"`
}

// Matching is how well the best relevance of recall's results, in one mode, tells questions
// about nothing stored (OffTopic) from labelled ones: what a gate at each floor does to both.
type Matching struct {
	Mode string `json:"mode"`
	// OnTopic and OffTopic count the questions.
	OnTopic  int `json:"on_topic"`
	OffTopic int `json:"off_topic"`
	// OffTopicEmpty is the share of off-topic questions answered with no result at all, with
	// the request's defaults.
	OffTopicEmpty float64 `json:"off_topic_empty"`
	// OffTopicBestMedian and OffTopicBestMax are the median and the highest best relevance of
	// the off-topic answers.
	OffTopicBestMedian float64 `json:"off_topic_best_median"`
	OffTopicBestMax    float64 `json:"off_topic_best_max"`
	// Flagged is the share of off-topic and of labelled questions that recall, with its
	// defaults, said matched nothing well (store.WellMatched false).
	OffTopicFlagged float64 `json:"off_topic_flagged"`
	OnTopicFlagged  float64 `json:"on_topic_flagged"`
	// Gates are the floors of MatchFloors.
	Gates []MatchGate `json:"gates"`
}

// MatchGate is what answering "nothing matched well" below a floor of best relevance does.
type MatchGate struct {
	Floor float64 `json:"floor"`
	// OffTopicFlagged and OnTopicFlagged are the shares of off-topic and of labelled questions
	// whose best result is below Floor.
	OffTopicFlagged float64 `json:"off_topic_flagged"`
	OnTopicFlagged  float64 `json:"on_topic_flagged"`
	// HitAt5, HitAt10 and MRR are the labelled questions' figures when a flagged answer counts
	// as nothing found.
	HitAt5  float64 `json:"hit_at_5"`
	HitAt10 float64 `json:"hit_at_10"`
	MRR     float64 `json:"mrr"`
}

// ConversationQuality is how well recall with source messages finds the turns that answer
// questions about long conversations, beside two baselines that need no search engine.
type ConversationQuality struct {
	// SetID is ConversationSetID: figures of different sets do not compare.
	SetID         string `json:"set_id"`
	Conversations int    `json:"conversations"`
	Sessions      int    `json:"sessions"`
	Turns         int    `json:"turns"`
	Questions     int    `json:"questions"`
	Embedder      string `json:"embedder"`
	// Matching is, per recall mode, how the relevance of the answers tells the off-topic
	// questions (OffTopic, asked of each conversation about its two speakers in turn) from the
	// labelled ones.
	Matching []Matching `json:"matching"`
	// Systems are recall in each mode (text, vector, hybrid), then the baselines: BM25 over
	// PostgreSQL's lexemes of the same texts (bm25) and the last messages of the conversation,
	// newest first (last-messages).
	Systems []ConversationSystem `json:"systems"`
}

// ConversationSystem is one system's scores: over every question, by kind (QuestionKinds), and
// over the questions that share no word with their evidence (Paraphrase) and the others
// (Lexical).
type ConversationSystem struct {
	Name       string                       `json:"name"`
	All        ConversationScore            `json:"all"`
	ByKind     map[string]ConversationScore `json:"by_kind"`
	Paraphrase ConversationScore            `json:"paraphrase"`
	Lexical    ConversationScore            `json:"lexical"`
}

// ConversationScore is the mean of each metric over a set of questions. A question's evidence
// may be several turns: a hit is any of them.
type ConversationScore struct {
	Questions int `json:"questions"`
	// HitAtN is the share of questions with an evidence turn among the first N results.
	HitAt1  float64 `json:"hit_at_1"`
	HitAt5  float64 `json:"hit_at_5"`
	HitAt10 float64 `json:"hit_at_10"`
	HitAt25 float64 `json:"hit_at_25"`
	// RecallAt10 is the mean share of a question's evidence turns among the first 10.
	RecallAt10 float64 `json:"recall_at_10"`
	// MRR is the mean of 1 / the rank of the first evidence turn, 0 below 10.
	MRR float64 `json:"mrr"`
	// HitAt10Neighbour is HitAt10 counting the turn before or after an evidence turn as a hit
	// (the question that the answer follows, the reply that repeats it).
	HitAt10Neighbour float64 `json:"hit_at_10_neighbour"`
}

// QualityScore is how well one recall mode ranks the labelled facts.
type QualityScore struct {
	// Questions counts the distinct questions; each copy of the set asks them all.
	Questions int `json:"questions"`
	// HitAt1 is the share of questions whose fact ranks first; HitAt5 in the first five.
	HitAt1 float64 `json:"hit_at_1"`
	HitAt5 float64 `json:"hit_at_5"`
	// MRR is the mean of 1/rank of the fact, counting 0 when it is not in the first K.
	MRR float64 `json:"mrr"`
}

// Goal is one target of the issue, checked against this run.
type Goal struct {
	Name   string  `json:"name"`
	Target string  `json:"target"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Met    bool    `json:"met"`
}

// Write writes results.json and results.md into dir, and the charts (PNG) beside them.
func Write(dir string, r *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	charts, err := WriteCharts(dir, r)
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(Markdown(r, charts)), 0o644)
}

// Cache is get-context from the database and through the Redis adapter's cache, read after
// read back to back through the use case, for W2's windows and longer ones.
type Cache struct {
	Windows []CacheWindow `json:"windows"`
}

// CacheWindow is one window size of the cache workload. Both phases' Seconds are the whole
// interleaved run.
type CacheWindow struct {
	// Messages is the window (max_messages); Sessions how many sessions the reads cycle over.
	Messages int   `json:"messages"`
	Sessions int   `json:"sessions"`
	Reads    int   `json:"reads"`
	Database Phase `json:"database"`
	Cached   Phase `json:"cached"`
	// P50Speedup and P99Speedup are the database's latency over the cache's.
	P50Speedup float64 `json:"p50_speedup"`
	P99Speedup float64 `json:"p99_speedup"`
	// Misses counts the cached reads the cache did not answer during the measurement, each of
	// which filled it (0: every cached read was a hit).
	Misses int `json:"misses"`
}

// Replica is reads through a streaming read replica of the bench server (DATABASE_READ_URL),
// through the use cases: reads with nothing written meanwhile, from the primary alone and with
// the replica, and clients that commit turns and read them back with their positions.
type Replica struct {
	// Context is W2's get-context reads; Recall W3's queries in hybrid mode.
	Context *ReplicaReads `json:"context"`
	Recall  *ReplicaReads `json:"recall,omitempty"`
	// Mixed is one run of committing clients per pause between a commit and its read.
	Mixed []ReplicaMixed `json:"mixed"`
}

// ReplicaReads is one kind of read, each read made from the primary alone and with the
// replica, back to back in alternating order.
type ReplicaReads struct {
	Reads   int   `json:"reads"`
	Primary Phase `json:"primary"`
	Replica Phase `json:"replica"`
	// ReplicaShare is the share of the replica side's reads the replica answered (the rest,
	// the primary).
	ReplicaShare float64 `json:"replica_share"`
	// P50Ratio is the replica side's p50 over the primary's.
	P50Ratio float64 `json:"p50_ratio"`
}

// ReplicaMixed is clients committing turns, each read back (get-context) ThinkMS after its
// answer with the position the answer gave.
type ReplicaMixed struct {
	Clients int     `json:"clients"`
	Turns   int     `json:"turns"`
	ThinkMS float64 `json:"think_ms"`
	Commit  Phase   `json:"commit"`
	Read    Phase   `json:"read"`
	// ReplicaShare is the share of the reads the replica answered.
	ReplicaShare float64 `json:"replica_share"`
	// Stale counts the reads that missed their own turn (must be 0).
	Stale int `json:"stale"`
	// Checks counts the direct questions to the replica about its replay position.
	Checks int64 `json:"checks"`
}

// Outbox is the orchestrator's workload: the outbox's cost to a commit, the delay from a commit
// to a webhook receiver, and an outage of the receiver.
type Outbox struct {
	// Commit is the cost with the server's settings; CommitNoFlushWait with synchronous_commit
	// off, which leaves out the wait for the disk (the outbox adds a few hundred bytes to a
	// flush that a commit waits for anyway).
	Commit            OutboxCost `json:"commit"`
	CommitNoFlushWait OutboxCost `json:"commit_no_flush_wait"`
	// Extraction is the cost fact extraction adds to a commit: the extract job written in the
	// commit's transaction (the model is asked later, by process-jobs).
	Extraction ExtractionCost `json:"extraction"`
	// ExtractionNoFlushWait is the same with synchronous_commit off.
	ExtractionNoFlushWait ExtractionCost `json:"extraction_no_flush_wait"`
	Delivery              Delivery       `json:"delivery"`
	Outage                Outage         `json:"outage"`
	// Mem0Delivery is Delivery to a local server speaking Mem0's API (the Mem0 adapter's
	// add-memories request) instead of a webhook receiver.
	Mem0Delivery *Delivery `json:"mem0_delivery,omitempty"`
}

// ExtractionCost is W1's sequential turns committed through the store with fact extraction off
// and on (EXTRACT_FACTS: one extract job per turn), no adapter enabled, turn by turn
// alternately.
type ExtractionCost struct {
	Off Phase `json:"off"`
	On  Phase `json:"on"`
	// AddedP50MS is the p50 with extraction on less the p50 with it off.
	AddedP50MS float64 `json:"added_p50_ms"`
	// PairedMedianMS is the median, over the turns, of the on commit's time less the off
	// commit's, the two committed back to back.
	PairedMedianMS float64 `json:"paired_median_added_ms"`
}

// OutboxCost is W1's sequential turns committed through the store with no adapter enabled and
// with the webhook adapter (one job per turn), turn by turn alternately.
type OutboxCost struct {
	NoAdapter  Phase `json:"no_adapter"`
	OneAdapter Phase `json:"one_adapter"`
	// AddedP50MS is the p50 with one adapter less the p50 with none.
	AddedP50MS float64 `json:"added_p50_ms"`
	// PairedMedianMS is the median, over the turns, of the one-adapter commit's time less the
	// no-adapter commit's, the two committed back to back.
	PairedMedianMS float64 `json:"paired_median_added_ms"`
}

// Delivery is the delay from a commit's answer to the receipt of its event by a local webhook
// receiver, delivery started by the commit (the in-process delivery loop of agentmem serve).
type Delivery struct {
	Commits      int `json:"commits"`
	CommitErrors int `json:"commit_errors"`
	// Delivered counts the commits whose event arrived.
	Delivered int     `json:"delivered"`
	Delay     Latency `json:"delay"`
	// Attempts counts deliveries started; FailedAttempts those that failed, FailedShare their
	// share.
	Attempts       int     `json:"attempts"`
	FailedAttempts int     `json:"failed_attempts"`
	FailedShare    float64 `json:"failed_share"`
}

// Outage is the receiver down while W1's concurrent turns are committed, then back.
type Outage struct {
	DownSeconds  float64 `json:"down_seconds"`
	Clients      int     `json:"clients"`
	Turns        int     `json:"turns"`
	CommitErrors int     `json:"commit_errors"`
	FirstError   string  `json:"first_error,omitempty"`
	// RefusedWhileDown counts the deliveries the receiver refused while down.
	RefusedWhileDown int `json:"refused_while_down"`
	// DrainSeconds is the time from the receiver's return until no job was left open.
	DrainSeconds float64 `json:"drain_seconds"`
	// Jobs counts the jobs written; Delivered the changes whose event the receiver kept; Lost
	// those it never got; Dead the jobs that went dead.
	Jobs      int `json:"jobs"`
	Delivered int `json:"delivered"`
	Lost      int `json:"lost"`
	Dead      int `json:"dead"`
	// Duplicates counts verified repeats of an event the receiver already had (dropped by id);
	// Rejected the deliveries it could not verify.
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
}

// CPUCost is the CPU a phase of Ops operations cost, per 1,000 operations: the client
// process' (agentmem's Go process, or a peer's Node process) and the database server's (the
// backends connected to the workload's database), in CPU seconds. With both sides on the same cores, a lower total is what
// lets more turns through.
type CPUCost struct {
	Ops                   int     `json:"ops"`
	ProcessSecondsPer1000 float64 `json:"process_seconds_per_1000"`
	ServerSecondsPer1000  float64 `json:"server_seconds_per_1000"`
	TotalSecondsPer1000   float64 `json:"total_seconds_per_1000"`
}

// NewCPUCost is the cost of ops operations that took process and server CPU time.
func NewCPUCost(ops int, process, server time.Duration) *CPUCost {
	per := 1000 / float64(ops)
	c := &CPUCost{Ops: ops, ProcessSecondsPer1000: process.Seconds() * per, ServerSecondsPer1000: server.Seconds() * per}
	c.TotalSecondsPer1000 = c.ProcessSecondsPer1000 + c.ServerSecondsPer1000
	return c
}
