// Package config reads agentmem's configuration from the environment, with the defaults of a
// local stack (`supabase start` or `make dev`), and checks it once at start-up.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/envvar"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/redact"
)

// Local defaults, the same as `supabase start` uses.
const (
	LocalDatabaseURL = "postgresql://postgres:postgres@127.0.0.1:54322/postgres"
	LocalJWTSecret   = "super-secret-jwt-token-with-at-least-32-characters-long"
)

// DefaultAuthAllowAnonymous is AUTH_ALLOW_ANONYMOUS when unset: users of Supabase's anonymous
// sign-ins are served like any other user.
const DefaultAuthAllowAnonymous = true

// The LLM features are off by default: they call the configured chat model, a third party
// that costs tokens (see the README's cost per turn).
const (
	// DefaultExtractFacts is EXTRACT_FACTS when unset.
	DefaultExtractFacts = false
	// DefaultSummaries is SUMMARIES when unset.
	DefaultSummaries = false
)

// Rate limits by default: none. A limit costs every request one more round trip to the
// database, and the right number depends on the workload (an agent looping on tools makes many
// more requests than a person chatting), so a deployment chooses its own; an upgrade never
// starts refusing clients that worked before.
const (
	DefaultRateLimitUserPerMinute   = 0
	DefaultRateLimitTenantPerMinute = 0
	// MaxRateLimitPerMinute bounds both settings.
	MaxRateLimitPerMinute = 1_000_000
)

// DefaultRateLimitBackfillPerHour is RATE_LIMIT_BACKFILL_PER_HOUR's default, a limit on by
// default unlike the others: a backfillSession intent sends every message of a session to every
// adapter (third parties, billed per call), and no client needs many in an hour. A session's
// backfills that are still pending coalesce anyway; this bounds a user's backfills of many
// sessions, or of one again and again.
const DefaultRateLimitBackfillPerHour = 30

// MaxRateLimitBackfillPerHour bounds RATE_LIMIT_BACKFILL_PER_HOUR.
const MaxRateLimitBackfillPerHour = 1_000_000

// The ways to verify access tokens (SUPABASE_AUTH_VERIFY).
const (
	// AuthVerifyJWT checks each token's signature locally, with the JWKS and/or the HS256 secret.
	AuthVerifyJWT = "jwt"
	// AuthVerifyAuthServer asks the project's Auth server who each user token belongs to.
	AuthVerifyAuthServer = "auth-server"
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

// JobsSettings are the settings of job delivery; the service hands them to the use cases as
// their JobsConfig, whose fields they mirror one for one.
type JobsSettings struct {
	// MaxAttempts (JOBS_MAX_ATTEMPTS, 1 to 100) is the attempt cap.
	MaxAttempts int
	// BackoffBase and BackoffMax (JOBS_BACKOFF_BASE, JOBS_BACKOFF_MAX) shape the wait before
	// a retry.
	BackoffBase, BackoffMax time.Duration
	// Lease (JOBS_LEASE) is how long a claimed job stays its worker's.
	Lease time.Duration
	// Concurrency (JOBS_CONCURRENCY, 1 to 64) is the most deliveries in flight in one run.
	Concurrency int
	// DoneRetention (JOBS_DONE_RETENTION) is how long delivered jobs are kept.
	DoneRetention time.Duration
}

// DefaultMem0Recall is MEM0_RECALL's default: recall asks only the database.
const DefaultMem0Recall = mem0.DefaultRecall

// The values of JOBS_NOTIFY.
const (
	JobsNotifyProcess = "process"
	JobsNotifyNone    = "none"
	// JobsNotifyLambdaPrefix starts "lambda:<function name or ARN>".
	JobsNotifyLambdaPrefix = "lambda:"
)

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
	switch c.AuthVerify {
	case "":
		c.AuthVerify = AuthVerifyJWT
	case AuthVerifyJWT:
	case AuthVerifyAuthServer:
		if err := c.checkAuthServer(); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("SUPABASE_AUTH_VERIFY must be jwt or auth-server, not %q", c.AuthVerify)
	}
	if c.AuthVerify == AuthVerifyJWT && c.JWKSURL == "" && c.SupabaseURL != "" {
		c.JWKSURL = c.SupabaseURL + "/auth/v1/.well-known/jwks.json"
	}
	if c.AuthVerify == AuthVerifyJWT && c.JWTSecret == "" && c.JWKSURL == "" {
		// The local default secret is public: it may only ever guard a local database served
		// to this machine alone, never a deployed function nor a server that others can reach,
		// or anyone could mint a service token.
		if getenv("AWS_LAMBDA_FUNCTION_NAME") != "" || !isLocalURL(c.DatabaseURL) {
			return c, fmt.Errorf("no way to verify tokens: set SUPABASE_URL (its JWKS is used), SUPABASE_JWKS_URL or SUPABASE_JWT_SECRET; the local default secret only serves a local database")
		}
		if !LoopbackAddr(c.Addr) {
			return c, fmt.Errorf("no way to verify tokens on %s, which other machines can reach: set SUPABASE_URL (its JWKS is used), SUPABASE_JWKS_URL or SUPABASE_JWT_SECRET, or listen on a loopback ADDR such as 127.0.0.1:9000; the local default secret is public and only serves this machine", c.Addr)
		}
		c.JWTSecret = LocalJWTSecret
	}
	var err error
	if c.JWKSRefresh, err = envvar.Duration(getenv, "SUPABASE_JWKS_REFRESH", auth.DefaultJWKSRefresh, auth.MinJWKSRefresh); err != nil {
		return c, err
	}
	if c.AuthAllowAnonymous, err = envvar.Bool(getenv, "AUTH_ALLOW_ANONYMOUS", DefaultAuthAllowAnonymous); err != nil {
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
	if c.RateLimitUserPerMinute, err = envvar.Int(getenv, "RATE_LIMIT_USER_PER_MINUTE",
		DefaultRateLimitUserPerMinute, 0, MaxRateLimitPerMinute); err != nil {
		return c, err
	}
	if c.RateLimitTenantPerMinute, err = envvar.Int(getenv, "RATE_LIMIT_TENANT_PER_MINUTE",
		DefaultRateLimitTenantPerMinute, 0, MaxRateLimitPerMinute); err != nil {
		return c, err
	}
	if c.RateLimitBackfillPerHour, err = envvar.Int(getenv, "RATE_LIMIT_BACKFILL_PER_HOUR",
		DefaultRateLimitBackfillPerHour, 0, MaxRateLimitBackfillPerHour); err != nil {
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

// loadReplicas reads DATABASE_READ_URL, REPLICA_MAX_LAG and REPLICA_CHECK_INTERVAL.
func (c *Config) loadReplicas(getenv func(string) string) error {
	c.ReadURLs = splitURLs(getenv("DATABASE_READ_URL"))
	for i, u := range c.ReadURLs {
		// The URL holds a password: the message names its place only.
		if _, err := pgx.ParseConfig(u); err != nil {
			return fmt.Errorf("DATABASE_READ_URL: URL %d of %d is not a PostgreSQL URL", i+1, len(c.ReadURLs))
		}
	}
	for _, d := range []struct {
		name     string
		to       *time.Duration
		def, min time.Duration
	}{
		{"REPLICA_MAX_LAG", &c.ReplicaMaxLag, memory.DefaultReplicaMaxLag, 100 * time.Millisecond},
		{"REPLICA_CHECK_INTERVAL", &c.ReplicaCheckInterval, memory.DefaultReplicaCheckInterval, 10 * time.Millisecond},
	} {
		var err error
		if *d.to, err = envvar.Duration(func(name string) string { return envvar.String(getenv, name) }, d.name, d.def, d.min); err != nil {
			return err
		}
	}
	if c.ReplicaCheckInterval >= c.ReplicaMaxLag {
		return fmt.Errorf("REPLICA_CHECK_INTERVAL (%s) must be shorter than REPLICA_MAX_LAG (%s): a replica's lag is "+
			"known only as often as it is checked", c.ReplicaCheckInterval, c.ReplicaMaxLag)
	}
	return nil
}

// splitURLs splits a comma-separated list of PostgreSQL URLs. A URL may itself hold commas (the
// hosts of a multi-host URL, postgresql://h1:5432,h2:5432/db): a new URL begins only where a
// piece starts with its scheme. A value that does not start with one (a key=value connection
// string) is one entry.
func splitURLs(v string) []string {
	var out []string
	for _, piece := range strings.Split(v, ",") {
		piece = strings.TrimSpace(piece)
		starts := strings.HasPrefix(piece, "postgres://") || strings.HasPrefix(piece, "postgresql://")
		switch {
		case piece == "":
		case starts || len(out) == 0:
			out = append(out, piece)
		default:
			out[len(out)-1] += "," + piece
		}
	}
	return out
}

// loadJobs reads ADAPTERS, the JOBS_* settings and those of the enabled adapters.
func (c *Config) loadJobs(getenv func(string) string) error {
	var err error
	if c.Adapters, err = adapter.ParseNames(getenv("ADAPTERS")); err != nil {
		return fmt.Errorf("ADAPTERS: %w", err)
	}
	if c.Jobs.MaxAttempts, err = envvar.Int(getenv, "JOBS_MAX_ATTEMPTS", memory.DefaultJobsMaxAttempts, 1, 100); err != nil {
		return err
	}
	durations := []struct {
		name     string
		to       *time.Duration
		def, min time.Duration
	}{
		{"JOBS_BACKOFF_BASE", &c.Jobs.BackoffBase, memory.DefaultJobsBackoffBase, time.Millisecond},
		{"JOBS_BACKOFF_MAX", &c.Jobs.BackoffMax, memory.DefaultJobsBackoffMax, time.Millisecond},
		{"JOBS_LEASE", &c.Jobs.Lease, memory.DefaultJobsLease, time.Second},
		{"JOBS_DONE_RETENTION", &c.Jobs.DoneRetention, memory.DefaultJobsDoneRetention, time.Second},
		{"JOBS_POLL_INTERVAL", &c.JobsPollInterval, memory.DefaultJobsPollInterval, 10 * time.Millisecond},
	}
	for _, d := range durations {
		if *d.to, err = envvar.Duration(getenv, d.name, d.def, d.min); err != nil {
			return err
		}
	}
	if c.Jobs.BackoffMax < c.Jobs.BackoffBase {
		return fmt.Errorf("JOBS_BACKOFF_MAX (%s) must not be below JOBS_BACKOFF_BASE (%s)", c.Jobs.BackoffMax, c.Jobs.BackoffBase)
	}
	if c.Jobs.Concurrency, err = envvar.Int(getenv, "JOBS_CONCURRENCY", memory.DefaultJobsConcurrency, 1, 64); err != nil {
		return err
	}
	c.JobsNotify = strings.TrimSpace(getenv("JOBS_NOTIFY"))
	switch {
	case c.JobsNotify == "" && getenv("AWS_LAMBDA_FUNCTION_NAME") != "":
		c.JobsNotify = JobsNotifyNone
	case c.JobsNotify == "":
		c.JobsNotify = JobsNotifyProcess
	case c.JobsNotify == JobsNotifyProcess, c.JobsNotify == JobsNotifyNone:
	case strings.HasPrefix(c.JobsNotify, JobsNotifyLambdaPrefix) && len(c.JobsNotify) > len(JobsNotifyLambdaPrefix):
	default:
		return fmt.Errorf("JOBS_NOTIFY must be process, none or lambda:<function name or ARN>, not %q", c.JobsNotify)
	}

	// Each adapter reads its own settings, whether ADAPTERS names it or not, so that a
	// mistyped value stops the start either way.
	if c.Webhook, err = webhook.ConfigFromEnv(getenv); err != nil {
		return err
	}
	if c.Redis, err = redis.ConfigFromEnv(getenv); err != nil {
		return err
	}
	if c.Mem0, err = mem0.ConfigFromEnv(getenv); err != nil {
		return err
	}
	c.PIIHashSalt = getenv(redact.SaltEnv)
	if len(c.Adapters) > 0 {
		if c.PIIHashSalt == "" {
			return fmt.Errorf("ADAPTERS is set, so %s is required: content is redacted before any adapter, and the "+
				"hashes of what is removed are keyed with it (at least %d bytes: openssl rand -hex 32)", redact.SaltEnv, redact.MinSaltLen)
		}
		if _, err := redact.New(c.PIIHashSalt); err != nil {
			return err
		}
	}
	if (c.ExtractFacts || c.Summaries) && c.Chat.Timeout >= c.Jobs.Lease {
		return fmt.Errorf("CHAT_TIMEOUT (%s) must be shorter than JOBS_LEASE (%s): fact extraction and summaries ask the "+
			"chat model within a job's lease", c.Chat.Timeout, c.Jobs.Lease)
	}
	if slices.Contains(c.Adapters, adapter.Webhook) {
		if c.Webhook.Timeout >= c.Jobs.Lease {
			return fmt.Errorf("WEBHOOK_TIMEOUT (%s) must be shorter than JOBS_LEASE (%s): a delivery must end within its lease",
				c.Webhook.Timeout, c.Jobs.Lease)
		}
		if _, err := webhook.New(c.Webhook); err != nil {
			return fmt.Errorf("ADAPTERS names webhook: %w", err)
		}
	}
	if slices.Contains(c.Adapters, adapter.Redis) {
		if c.Redis.Timeout > time.Second {
			return fmt.Errorf("REDIS_TIMEOUT (%s) must be at most 1s: it is how long a request may wait on Redis before reading the database", c.Redis.Timeout)
		}
		if redis.DeliverTimeout >= c.Jobs.Lease {
			return fmt.Errorf("JOBS_LEASE (%s) must be longer than a Redis delivery (%s)", c.Jobs.Lease, redis.DeliverTimeout)
		}
		if err := redis.Check(c.Redis); err != nil {
			return fmt.Errorf("ADAPTERS names redis: %w", err)
		}
	}
	if slices.Contains(c.Adapters, adapter.Mem0) {
		if c.Mem0.Timeout >= c.Jobs.Lease {
			return fmt.Errorf("MEM0_TIMEOUT (%s) must be shorter than JOBS_LEASE (%s): a delivery must end within its lease",
				c.Mem0.Timeout, c.Jobs.Lease)
		}
		if _, err := mem0.New(c.Mem0); err != nil {
			return fmt.Errorf("ADAPTERS names mem0: %w", err)
		}
	} else if c.Mem0.Recall {
		return errors.New("MEM0_RECALL=true needs the Mem0 adapter: add mem0 to ADAPTERS")
	}
	return nil
}

// loadRanking reads the RECALL_* settings.
func (c *Config) loadRanking(getenv func(string) string) error {
	c.RecallTextWeight, c.RecallVectorWeight = memory.DefaultTextWeight, memory.DefaultVectorWeight
	c.RecallRRFK, c.RecallExactLimit = memory.DefaultRRFK, memory.DefaultExactLimit
	c.RecallMinRelevance, c.RecallFollowWeight = memory.DefaultMinRelevance, memory.DefaultFollowWeight
	c.RecallMatchRelevance = memory.DefaultMatchRelevance
	// The weights are above 0 and at most 100; the floor and the follow weight from 0 to 1.
	for _, w := range []struct {
		name      string
		to        *float64
		zero, max float64
		rule      string
	}{
		{"RECALL_TEXT_WEIGHT", &c.RecallTextWeight, 0, 100, "a number above 0 and at most 100"},
		{"RECALL_VECTOR_WEIGHT", &c.RecallVectorWeight, 0, 100, "a number above 0 and at most 100"},
		{"RECALL_MIN_RELEVANCE", &c.RecallMinRelevance, 1, 1, "a number from 0 to 1"},
		{"RECALL_FOLLOW_WEIGHT", &c.RecallFollowWeight, 1, 1, "a number from 0 to 1"},
		{"RECALL_MATCH_RELEVANCE", &c.RecallMatchRelevance, 0, 1, "a number above 0 and at most 1"},
	} {
		if v := getenv(w.name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			// zero 1: 0 is allowed; zero 0: it is not
			if err != nil || !(f > 0 || (f == 0 && w.zero == 1)) || f > w.max {
				return fmt.Errorf("%s must be %s, not %q", w.name, w.rule, v)
			}
			*w.to = f
		}
	}
	for _, n := range []struct {
		name     string
		to       *int
		min, max int
	}{{"RECALL_RRF_K", &c.RecallRRFK, 1, 10_000}, {"RECALL_EXACT_LIMIT", &c.RecallExactLimit, 1, 10_000_000}} {
		if v := getenv(n.name); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < n.min || i > n.max {
				return fmt.Errorf("%s must be a number from %d to %d, not %q", n.name, n.min, n.max, v)
			}
			*n.to = i
		}
	}
	if v := getenv("RECALL_VECTOR_BASELINE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		// 1 would credit no similarity at all: mode vector would never match
		if err != nil || !(f >= 0 && f <= 0.99) {
			return fmt.Errorf("RECALL_VECTOR_BASELINE must be a number from 0 to 0.99, not %q", v)
		}
		c.RecallVectorBaseline = &f
	}
	return nil
}

// checkAuthServer checks what SUPABASE_AUTH_VERIFY=auth-server needs.
func (c *Config) checkAuthServer() error {
	if c.SupabaseURL == "" {
		return errors.New("SUPABASE_AUTH_VERIFY=auth-server needs SUPABASE_URL, e.g. https://<ref>.supabase.co")
	}
	if u, err := url.Parse(c.SupabaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("SUPABASE_URL must be an http or https URL, not %q", c.SupabaseURL)
	}
	if c.AnonKey == "" {
		return errors.New("SUPABASE_AUTH_VERIFY=auth-server needs SUPABASE_ANON_KEY, the project's publishable or anon key")
	}
	return nil
}

// loadEmbedding reads the EMBEDDING_* settings and AWS_REGION.
func (c *Config) loadEmbedding(getenv func(string) string) error {
	c.EmbeddingProvider = strings.TrimSpace(getenv("EMBEDDING_PROVIDER"))
	switch c.EmbeddingProvider {
	case "":
		c.EmbeddingProvider = embedding.ProviderLocal
	case embedding.ProviderLocal, embedding.ProviderOpenAI, embedding.ProviderBedrock:
	default:
		return fmt.Errorf("EMBEDDING_PROVIDER must be local, openai or bedrock, not %q", c.EmbeddingProvider)
	}
	c.EmbeddingModel = strings.TrimSpace(getenv("EMBEDDING_MODEL"))
	if c.EmbeddingModel == "" {
		c.EmbeddingModel = embedding.DefaultModel(c.EmbeddingProvider)
	}
	c.EmbeddingDimensions = embedding.DefaultDimensions(c.EmbeddingProvider, c.EmbeddingModel)
	if v := getenv("EMBEDDING_DIMENSIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > embedding.MaxDimensions {
			return fmt.Errorf("EMBEDDING_DIMENSIONS must be a number from 1 to %d, not %q", embedding.MaxDimensions, v)
		}
		c.EmbeddingDimensions, c.EmbeddingSendDimensions = n, true
	}
	c.EmbeddingBaseURL = strings.TrimSpace(getenv("EMBEDDING_BASE_URL"))
	c.EmbeddingAPIKey = getenv("EMBEDDING_API_KEY")
	if c.EmbeddingProvider == embedding.ProviderOpenAI {
		if c.EmbeddingBaseURL == "" {
			c.EmbeddingBaseURL = embedding.DefaultOpenAIBaseURL
		}
		if _, err := embedding.EndpointURL(c.EmbeddingBaseURL); err != nil {
			return fmt.Errorf("EMBEDDING_BASE_URL must be an http or https URL, not %q", c.EmbeddingBaseURL)
		}
		if c.EmbeddingAPIKey == "" && strings.HasPrefix(c.EmbeddingBaseURL, "https://api.openai.com/") {
			return errors.New("EMBEDDING_API_KEY is required with OpenAI's API (EMBEDDING_BASE_URL " + c.EmbeddingBaseURL + ")")
		}
	}
	var err error
	if c.EmbeddingTimeout, err = envvar.PositiveDuration(getenv, "EMBEDDING_TIMEOUT", 10*time.Second); err != nil {
		return err
	}
	if c.EmbeddingMaxRetryTime, err = envvar.PositiveDuration(getenv, "EMBEDDING_MAX_RETRY_TIME", 20*time.Second); err != nil {
		return err
	}
	if c.EmbeddingBatchSize, err = envvar.Int(getenv, "EMBEDDING_BATCH_SIZE", 64, 1, 2048); err != nil {
		return err
	}
	if c.EmbeddingConcurrency, err = envvar.Int(getenv, "EMBEDDING_CONCURRENCY", 4, 1, 64); err != nil {
		return err
	}
	c.AWSRegion = strings.TrimSpace(getenv("AWS_REGION"))
	return nil
}

// loadChat reads the CHAT_* and SUMMARY_* settings; AWS_REGION is read before.
func (c *Config) loadChat(getenv func(string) string) error {
	ch := llm.Config{Provider: strings.TrimSpace(getenv("CHAT_PROVIDER")), Region: c.AWSRegion}
	switch ch.Provider {
	case "", llm.ProviderOpenAI, llm.ProviderBedrock:
	default:
		return fmt.Errorf("CHAT_PROVIDER must be empty (off), openai or bedrock, not %q", ch.Provider)
	}
	ch.Model = strings.TrimSpace(getenv("CHAT_MODEL"))
	if ch.Model == "" && ch.Provider != "" {
		ch.Model = llm.DefaultModel(ch.Provider)
	}
	ch.BaseURL = strings.TrimSpace(getenv("CHAT_BASE_URL"))
	ch.APIKey = getenv("CHAT_API_KEY")
	if ch.Provider == llm.ProviderOpenAI && ch.BaseURL == "" {
		ch.BaseURL = llm.DefaultOpenAIBaseURL
	}
	if ch.BaseURL != "" {
		if _, err := llm.EndpointURL(ch.BaseURL); err != nil {
			return fmt.Errorf("CHAT_BASE_URL must be an http or https URL, not %q", ch.BaseURL)
		}
	}
	if ch.Provider == llm.ProviderOpenAI && ch.APIKey == "" && strings.HasPrefix(ch.BaseURL, "https://api.openai.com/") {
		return errors.New("CHAT_API_KEY is required with OpenAI's API (CHAT_BASE_URL " + ch.BaseURL + ")")
	}
	ch.ResponseFormat = strings.TrimSpace(getenv("CHAT_RESPONSE_FORMAT"))
	switch ch.ResponseFormat {
	case "":
		ch.ResponseFormat = llm.DefaultResponseFormat
	case llm.ResponseFormatJSONSchema, llm.ResponseFormatJSONObject:
	default:
		return fmt.Errorf("CHAT_RESPONSE_FORMAT must be %s or %s, not %q", llm.ResponseFormatJSONSchema,
			llm.ResponseFormatJSONObject, ch.ResponseFormat)
	}
	var err error
	if ch.Timeout, err = envvar.PositiveDuration(getenv, "CHAT_TIMEOUT", llm.DefaultTimeout); err != nil {
		return err
	}
	if ch.MaxRetryTime, err = envvar.PositiveDuration(getenv, "CHAT_MAX_RETRY_TIME", llm.DefaultMaxRetryTime); err != nil {
		return err
	}
	if ch.MaxOutputTokens, err = envvar.Int(getenv, "CHAT_MAX_OUTPUT_TOKENS", llm.DefaultMaxOutputTokens, 1,
		llm.MaxOutputTokensLimit); err != nil {
		return err
	}
	c.Chat = ch
	for _, b := range []struct {
		name string
		dst  *bool
		def  bool
	}{{"EXTRACT_FACTS", &c.ExtractFacts, DefaultExtractFacts}, {"SUMMARIES", &c.Summaries, DefaultSummaries}} {
		*b.dst = b.def
		if v := strings.TrimSpace(getenv(b.name)); v != "" {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s must be true or false, not %q", b.name, v)
			}
			*b.dst = on
		}
		if *b.dst && ch.Provider == "" {
			return fmt.Errorf("%s is true, so CHAT_PROVIDER is required: it names the chat model that does the work", b.name)
		}
	}
	s := &c.Summary
	if s.TriggerTokens, err = envvar.Int(getenv, "SUMMARY_TRIGGER_TOKENS", memory.DefaultSummaryTriggerTokens, 1, 10_000_000); err != nil {
		return err
	}
	if s.KeepTokens, err = envvar.Int(getenv, "SUMMARY_KEEP_TOKENS", memory.DefaultSummaryKeepTokens, 0, 10_000_000); err != nil {
		return err
	}
	if s.MaxInputTokens, err = envvar.Int(getenv, "SUMMARY_MAX_INPUT_TOKENS", memory.DefaultSummaryMaxInputTokens, 0, 10_000_000); err != nil {
		return err
	}
	if err := s.Check(); err != nil {
		return fmt.Errorf("SUMMARY_KEEP_TOKENS (%d) must be below SUMMARY_TRIGGER_TOKENS (%d): %w", s.KeepTokens, s.TriggerTokens, err)
	}
	return nil
}

// LoopbackAddr reports whether a listening address (host:port) can be reached from this
// machine only: its host is "localhost" or a loopback IP literal. An empty host (":8080")
// or 0.0.0.0 listens on every interface.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && LoopbackHost(host)
}

// LoopbackHost reports whether host (without a port; IPv6 with or without brackets) is
// "localhost" or a loopback IP literal.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

// isLocalURL reports whether a database URL points at this machine.
func isLocalURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// historyCap reads HISTORY_KEEP_MESSAGES and HISTORY_OVERFLOW.
func historyCap(getenv func(string) string) (memory.HistoryCap, error) {
	var h memory.HistoryCap
	if v := strings.TrimSpace(getenv("HISTORY_KEEP_MESSAGES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n != 0 && (n < memory.MinHistoryKeep || n > memory.MaxHistoryKeep) {
			return h, fmt.Errorf("HISTORY_KEEP_MESSAGES must be 0 (off) or %d to %d, not %q",
				memory.MinHistoryKeep, memory.MaxHistoryKeep, v)
		}
		h.Keep = n
	}
	switch v := strings.TrimSpace(getenv("HISTORY_OVERFLOW")); v {
	case "", memory.HistoryArchive:
	case memory.HistoryDelete:
		h.Delete = true
	default:
		return h, fmt.Errorf("HISTORY_OVERFLOW must be %s or %s, not %q", memory.HistoryArchive, memory.HistoryDelete, v)
	}
	return h, nil
}
