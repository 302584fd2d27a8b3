// Package config reads agentmem's configuration from the environment, with the defaults of a
// local stack (`supabase start` or `make dev`), and checks it once at start-up.
package config

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/memory"
)

// Config is everything a function needs to start.
type Config struct {
	// DatabaseURL (DATABASE_URL); default LocalDatabaseURL. Pooler URLs work.
	DatabaseURL string
	// ReadURLs (DATABASE_READ_URL: one URL, or several separated by commas) are streaming
	// read replicas of DatabaseURL; default none. get-context, recall, sessions history and
	// the lists of sessions and memories read from one that has replayed what the caller
	// wrote (store.MayReadReplica); everything else uses DatabaseURL.
	ReadURLs []string
	// ReplicaMaxLag (REPLICA_MAX_LAG, a Go duration of at least 100ms) is how far behind the
	// primary a replica may be and still serve reads; default memory.DefaultReplicaMaxLag (5s).
	ReplicaMaxLag time.Duration
	// ReplicaCheckInterval (REPLICA_CHECK_INTERVAL, a Go duration of at least 10ms, below
	// REPLICA_MAX_LAG) is how often the replicas' replay positions are read; default
	// memory.DefaultReplicaCheckInterval (1s).
	ReplicaCheckInterval time.Duration
	// SupabaseURL (SUPABASE_URL); default none.
	SupabaseURL string
	// AuthVerify (SUPABASE_AUTH_VERIFY) says how access tokens are verified: AuthVerifyJWT
	// (default: signatures checked locally with JWKSURL and/or JWTSecret) or
	// AuthVerifyAuthServer (user tokens are sent to $SUPABASE_URL/auth/v1/user, answers cached
	// for at most 60 s; needs SupabaseURL and AnonKey). The Auth server does not describe
	// service keys, so in auth-server mode a service_role token is checked locally with
	// JWTSecret and/or JWKSURL, and refused when neither is set: neither defaults in this mode,
	// so accepting service tokens is a choice made by setting one.
	AuthVerify string
	// AnonKey (SUPABASE_ANON_KEY) is the project's publishable or anon key, sent as the
	// apikey header Supabase's API gateway requires; default none, required with
	// AuthVerifyAuthServer.
	AnonKey string
	// JWTSecret (SUPABASE_JWT_SECRET), the HS256 secret; default LocalJWTSecret only in jwt
	// mode when no other way to verify tokens is configured, the database is on this machine
	// and the process is not a Lambda function (elsewhere that is a start-up error).
	JWTSecret string
	// JWKSURL (SUPABASE_JWKS_URL); default $SUPABASE_URL/auth/v1/.well-known/jwks.json when
	// SUPABASE_URL is set, in jwt mode only.
	JWKSURL string
	// JWKSRefresh (SUPABASE_JWKS_REFRESH, a Go duration of at least 1s) is the age at which the
	// cached JWKS is fetched again before a token is checked with it, so a key removed from the
	// set is refused from then on (while the set cannot be fetched, the last keys fetched stay
	// in use); default auth.DefaultJWKSRefresh, 5m.
	JWKSRefresh time.Duration
	// JWTIssuer (JWT_ISSUER); default none (not checked).
	JWTIssuer string
	// AuthAllowAnonymous (AUTH_ALLOW_ANONYMOUS, true or false) says whether users of
	// Supabase's anonymous sign-ins (is_anonymous: true) may call the functions; when false,
	// every function answers them 403. Default DefaultAuthAllowAnonymous (true).
	AuthAllowAnonymous bool
	// DefaultRetention (DEFAULT_RETENTION, a Go duration); default 720h.
	DefaultRetention time.Duration
	// History (HISTORY_KEEP_MESSAGES: how many messages of a session stay live, 0 or 500 to
	// 1,000,000; HISTORY_OVERFLOW: archive or delete the older ones) is the sweep's history cap;
	// default 0, off (see memory.HistoryCap).
	History memory.HistoryCap
	// AllowedOrigins (CORS_ALLOWED_ORIGINS, comma-separated); default "*".
	AllowedOrigins []string
	// LogLevel (LOG_LEVEL: debug, info, warn, error); default info.
	LogLevel slog.Level
	// MaxConns (DB_MAX_CONNS) caps the database pool; default 4.
	MaxConns int32
	// NotesMaxChars (NOTES_MAX_CHARS) limits one agent's notes about a user, in characters;
	// default 20,000.
	NotesMaxChars int
	// Addr (ADDR) is where the local server listens; default :$PORT when PORT is set, else
	// 127.0.0.1:9000.
	Addr string
	// MessageEmbedding (MESSAGE_EMBEDDING) is when commit-turn's messages are embedded:
	// "deferred" (default, memory.DefaultMessageEmbedding: right after the answer, outside the
	// request) or "commit" (before the commit, in the request).
	MessageEmbedding string

	// EmbeddingProvider (EMBEDDING_PROVIDER) chooses who embeds memories, knowledge and
	// queries: "local" (default: the built-in hashing embedder, no network, no model),
	// "openai" (any OpenAI-compatible embeddings API: OpenAI, Azure OpenAI, Ollama, vLLM,
	// LM Studio, a Supabase Edge Function) or "bedrock" (Amazon Bedrock, Titan Text
	// Embeddings v2).
	EmbeddingProvider string
	// EmbeddingModel (EMBEDDING_MODEL); default agentmem-hash-384-v2 (local, its only model),
	// text-embedding-3-small (openai), amazon.titan-embed-text-v2:0 (bedrock). Every stored
	// vector records it, and only vectors of this model rank: after a change, rows of the old
	// model are re-embedded by the sweep's scheduled run or `agentmem embed-pending`.
	EmbeddingModel string
	// EmbeddingDimensions (EMBEDDING_DIMENSIONS) is the length of the vectors, 1 to 16000;
	// default 384 (1024 for bedrock, Titan v2's own default). Rows record their model and
	// dimension: vectors of one model at two sizes never compare either. Vectors of up to 2,000
	// dimensions get an HNSW index per model (`agentmem index`).
	EmbeddingDimensions int
	// EmbeddingSendDimensions sends "dimensions" to an OpenAI-compatible endpoint; true when
	// EMBEDDING_DIMENSIONS is set, and always for OpenAI's text-embedding-3 models.
	EmbeddingSendDimensions bool
	// EmbeddingBaseURL (EMBEDDING_BASE_URL) locates an OpenAI-compatible endpoint; default
	// https://api.openai.com/v1. A base ending in /v1 gets /embeddings, one ending in
	// /embeddings is used as it is (Azure deployments: .../openai/deployments/<name>/embeddings
	// ?api-version=...), any other gets /v1/embeddings (Ollama: http://localhost:11434). With
	// bedrock it replaces the regional endpoint (a VPC endpoint); default none.
	EmbeddingBaseURL string
	// EmbeddingAPIKey (EMBEDDING_API_KEY) authenticates to an OpenAI-compatible endpoint, as
	// a bearer token (an api-key header for Azure OpenAI hosts); default none, required with
	// OpenAI's own API.
	EmbeddingAPIKey string
	// EmbeddingTimeout (EMBEDDING_TIMEOUT, a Go duration) bounds one request to the provider;
	// default 10s.
	EmbeddingTimeout time.Duration
	// EmbeddingMaxRetryTime (EMBEDDING_MAX_RETRY_TIME, a Go duration) bounds one embedding
	// with its retries (429, 5xx, network errors; exponential backoff with jitter, Retry-After
	// honoured); default 20s. A request waiting for an answer gives it at most half of its
	// remaining time, then stores without vectors or searches by text alone.
	EmbeddingMaxRetryTime time.Duration
	// EmbeddingBatchSize (EMBEDDING_BATCH_SIZE) is the most texts one request to an
	// OpenAI-compatible endpoint carries; default 64.
	EmbeddingBatchSize int
	// EmbeddingConcurrency (EMBEDDING_CONCURRENCY) is the most Bedrock requests in flight per
	// process (Titan v2 embeds one text per request); default 4.
	EmbeddingConcurrency int

	// Chat configures the chat model that fact extraction and rolling summaries ask:
	// CHAT_PROVIDER ("" by default: off, no chat model is ever called; "openai": any
	// OpenAI-compatible Chat Completions API, OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio;
	// "bedrock": Amazon Bedrock's Converse API), CHAT_MODEL (default llm.DefaultOpenAIModel or
	// llm.DefaultBedrockModel), CHAT_BASE_URL (default https://api.openai.com/v1; the same
	// rules as EMBEDDING_BASE_URL, with /chat/completions), CHAT_API_KEY (required with
	// OpenAI's API), CHAT_TIMEOUT (one request, default llm.DefaultTimeout),
	// CHAT_MAX_RETRY_TIME (one completion with its retries, default llm.DefaultMaxRetryTime),
	// CHAT_MAX_OUTPUT_TOKENS (default llm.DefaultMaxOutputTokens), CHAT_RESPONSE_FORMAT
	// (json_schema, the default, or json_object), and AWS_REGION for bedrock. Its Logger is
	// left for the caller to set.
	Chat llm.Config
	// Summary says when a session's rolling summary advances: SUMMARY_TRIGGER_TOKENS (default
	// memory.DefaultSummaryTriggerTokens), SUMMARY_KEEP_TOKENS (default
	// memory.DefaultSummaryKeepTokens, below the trigger) and SUMMARY_MAX_INPUT_TOKENS
	// (default memory.DefaultSummaryMaxInputTokens; 0 for no bound).
	Summary memory.SummaryPolicy
	// ExtractFacts (EXTRACT_FACTS, true or false) turns fact extraction on: every committed
	// turn with new messages writes a job that asks the chat model for the facts worth
	// remembering and stores them as memories (commit-turn's extract: false opts a turn out).
	// Default DefaultExtractFacts (false); true requires CHAT_PROVIDER.
	ExtractFacts bool
	// Summaries (SUMMARIES, true or false) turns rolling summaries on: every committed turn
	// with new messages writes a job that advances the session's summary once its
	// unsummarised messages pass SUMMARY_TRIGGER_TOKENS. Default DefaultSummaries (false);
	// true requires CHAT_PROVIDER.
	Summaries bool
	// RecallTextWeight (RECALL_TEXT_WEIGHT) and RecallVectorWeight (RECALL_VECTOR_WEIGHT)
	// weigh the full-text and vector ranks in hybrid recall and knowledge search (reciprocal
	// rank fusion); default 1 each. RecallRRFK (RECALL_RRF_K) is fusion's rank constant;
	// default 50.
	RecallTextWeight, RecallVectorWeight float64
	RecallRRFK                           int
	// RecallExactLimit (RECALL_EXACT_LIMIT): a user with fewer memories is ranked exactly,
	// a user with more through the model's HNSW index; default 2000.
	RecallExactLimit int
	// RecallMinRelevance (RECALL_MIN_RELEVANCE, 0 to 1) is recall's min_relevance when a
	// request gives none; default memory.DefaultMinRelevance.
	RecallMinRelevance float64
	// RecallMatchRelevance (RECALL_MATCH_RELEVANCE, above 0 and at most 1) is the relevance
	// recall's best result must reach for its answer to say matched; default
	// memory.DefaultMatchRelevance.
	RecallMatchRelevance float64
	// RecallVectorBaseline (RECALL_VECTOR_BASELINE, 0 to 0.99), when set, is the cosine
	// similarity of unrelated texts' vectors of the configured model, above which recall
	// credits similarity in relevance; unset: embedding.SimilarityBaseline of the model
	// (HashSimilarityBaseline for the built-in embedder, else 0).
	RecallVectorBaseline *float64
	// RecallFollowWeight (RECALL_FOLLOW_WEIGHT, 0 to 1) is store.Ranking.FollowWeight;
	// default memory.DefaultFollowWeight.
	RecallFollowWeight float64
	// MemoryMergeSimilarity (MEMORY_MERGE_SIMILARITY) is the cosine similarity from which a
	// fact stored by commit-turn merges into a near-duplicate memory of the same user, tenant
	// and agent (same embedding model and dimension), when their texts also keep much the same
	// word order, instead of taking a row of its own; default 0.95. A number above 1 turns near-duplicate merging off: only facts of the same normalised
	// text merge then.
	MemoryMergeSimilarity float64
	// RateLimitUserPerMinute (RATE_LIMIT_USER_PER_MINUTE) is the most requests of one user a
	// minute, across every container, with a burst of as many; 0, the default
	// (DefaultRateLimitUserPerMinute), is no limit. A service caller acting for a user counts
	// against that user.
	RateLimitUserPerMinute int
	// RateLimitTenantPerMinute (RATE_LIMIT_TENANT_PER_MINUTE) is the most requests of all the
	// users of one tenant a minute; 0, the default (DefaultRateLimitTenantPerMinute), is no limit.
	RateLimitTenantPerMinute int
	// RateLimitBackfillPerHour (RATE_LIMIT_BACKFILL_PER_HOUR) is the most backfillSession intents
	// of one user an hour, counted apart from (and besides) RateLimitUserPerMinute; default
	// DefaultRateLimitBackfillPerHour, 0 is no limit.
	RateLimitBackfillPerHour int
	// AWSRegion (AWS_REGION) is the region of the Bedrock endpoint; default none (Lambda sets
	// it; elsewhere the AWS shared configuration may name it). Credentials come from the AWS
	// SDK's default chain (the Lambda role, AWS_ACCESS_KEY_ID..., shared files).
	AWSRegion string

	// Adapters (ADAPTERS, comma-separated: webhook, redis) are the adapters every change is delivered
	// to, through the outbox; default none (no job is written). An unknown name stops the
	// start.
	Adapters []string
	// Jobs (JOBS_MAX_ATTEMPTS, JOBS_BACKOFF_BASE, JOBS_BACKOFF_MAX, JOBS_LEASE,
	// JOBS_CONCURRENCY, JOBS_DONE_RETENTION) configures delivery; defaults memory.DefaultJobs*.
	Jobs JobsSettings
	// JobsPollInterval (JOBS_POLL_INTERVAL, a Go duration) is how often a long-running process
	// (agentmem serve) looks for due jobs besides its own changes' (retries, other processes');
	// default memory.DefaultJobsPollInterval.
	JobsPollInterval time.Duration
	// JobsNotify (JOBS_NOTIFY) says how delivery starts after a change wrote jobs: "process"
	// (this process delivers at once: agentmem serve), "lambda:<function name or ARN>" (an
	// asynchronous invocation of the process-jobs function), or "none" (the next scheduled
	// run). Default "process", and "none" in a Lambda function.
	JobsNotify string
	// Webhook configures the webhook adapter (WEBHOOK_URL, WEBHOOK_SECRET, WEBHOOK_TIMEOUT,
	// QSTASH_TOKEN, QSTASH_URL, QSTASH_RETRIES), checked when ADAPTERS names it.
	Webhook webhook.Config
	// Redis configures the Redis adapter, the get-context cache (REDIS_URL, REDIS_TTL,
	// REDIS_TIMEOUT, REDIS_USER_WINDOWS, REDIS_USER_BYTES), checked when ADAPTERS names it.
	Redis redis.Config
	// Mem0 configures the Mem0 adapter (MEM0_API_KEY, MEM0_URL, MEM0_ORG_ID, MEM0_PROJECT_ID,
	// MEM0_TIMEOUT, MEM0_RECALL, MEM0_RECALL_TIMEOUT), checked when ADAPTERS names it.
	Mem0 mem0.Config
	// PIIHashSalt (PII_HASH_SALT) keys the hashes of the personal data redacted from events
	// before any adapter (shared/redact); no default, required when ADAPTERS names an adapter.
	PIIHashSalt string
}

// Load reads the configuration through getenv (os.Getenv in production).
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL: getenv("DATABASE_URL"),
		SupabaseURL: strings.TrimRight(getenv("SUPABASE_URL"), "/"),
		JWTSecret:   getenv("SUPABASE_JWT_SECRET"),
		JWKSURL:     getenv("SUPABASE_JWKS_URL"),
		JWTIssuer:   getenv("JWT_ISSUER"),
		AuthVerify:  strings.TrimSpace(getenv("SUPABASE_AUTH_VERIFY")),
		AnonKey:     strings.TrimSpace(getenv("SUPABASE_ANON_KEY")),
		Addr:        getenv("ADDR"),
		MaxConns:    memory.DefaultMaxConns,
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = LocalDatabaseURL
	}
	if c.Addr == "" && getenv("PORT") != "" {
		// Cloud Run, Heroku-style platforms and the container image name the port in PORT,
		// on every interface.
		c.Addr = ":" + getenv("PORT")
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:9000"
	}
	if err := c.loadAuth(getenv); err != nil {
		return c, err
	}
	c.DefaultRetention = memory.DefaultRetention
	if v := getenv("DEFAULT_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("DEFAULT_RETENTION must be a positive Go duration such as 720h, not %q", v)
		}
		c.DefaultRetention = d
	}
	history, herr := historyCap(getenv)
	if herr != nil {
		return c, herr
	}
	c.History = history
	c.AllowedOrigins = []string{"*"}
	if v := getenv("CORS_ALLOWED_ORIGINS"); v != "" {
		c.AllowedOrigins = nil
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				c.AllowedOrigins = append(c.AllowedOrigins, o)
			}
		}
	}
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return c, fmt.Errorf("LOG_LEVEL must be debug, info, warn or error, not %q", v)
		}
	}
	if v := getenv("DB_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("DB_MAX_CONNS must be a number from 1 to 1000, not %q", v)
		}
		c.MaxConns = int32(n)
	}
	c.NotesMaxChars = memory.DefaultNotesMaxChars
	if v := getenv("NOTES_MAX_CHARS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return c, fmt.Errorf("NOTES_MAX_CHARS must be a number from 1 to 1000000, not %q", v)
		}
		c.NotesMaxChars = n
	}
	c.MessageEmbedding = memory.DefaultMessageEmbedding
	if v := strings.TrimSpace(getenv("MESSAGE_EMBEDDING")); v != "" {
		if !slices.Contains(memory.MessageEmbeddings, v) {
			return c, fmt.Errorf("MESSAGE_EMBEDDING must be one of %s, not %q", strings.Join(memory.MessageEmbeddings, ", "), v)
		}
		c.MessageEmbedding = v
	}
	if err := c.loadEmbedding(getenv); err != nil {
		return c, err
	}
	if err := c.loadChat(getenv); err != nil {
		return c, err
	}
	if err := c.loadRanking(getenv); err != nil {
		return c, err
	}
	c.MemoryMergeSimilarity = memory.DefaultMergeSimilarity
	if v := getenv("MEMORY_MERGE_SIMILARITY"); v != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return c, fmt.Errorf("MEMORY_MERGE_SIMILARITY must be a cosine similarity above 0 and at most 1 "+
				"(default %g), or a number above 1 to turn near-duplicate merging off, not %q",
				memory.DefaultMergeSimilarity, v)
		}
		c.MemoryMergeSimilarity = f
	}
	if err := c.loadRateLimits(getenv); err != nil {
		return c, err
	}
	if err := c.loadJobs(getenv); err != nil {
		return c, err
	}
	if err := c.loadReplicas(getenv); err != nil {
		return c, err
	}
	return c, nil
}
