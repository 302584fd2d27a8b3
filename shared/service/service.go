// Package service assembles agentmem from its configuration: the database pool, the token
// verifier and the functions. Every entry point (Lambda binaries, the local server, the
// operator command) starts it the same way.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/dbsecret"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/httpapi"
	"github.com/agentmem/agentmem/shared/lambdainvoke"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/llm/prompts"
	"github.com/agentmem/agentmem/shared/redact"
	"github.com/agentmem/agentmem/shared/reqlog"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// Service is a started agentmem.
type Service struct {
	Config config.Config
	Log    *slog.Logger
	Store  *store.Store
	// App is the use cases every door calls: Server, the operator command, the jobs.
	App    *app.App
	Server *httpapi.Server
	// Telemetry is the OpenTelemetry export, nil when no OTLP endpoint is configured.
	Telemetry *telemetry.Telemetry
	// Kick wakes a delivery loop (RunDeliveryLoop) when a change wrote jobs; nil unless
	// JOBS_NOTIFY is process and an adapter is enabled.
	Kick *app.Kick

	// notifyLater is the Notifier when it calls the Lambda API, which a Lambda function with
	// its extension calls after the answer (see withAfterAnswer); nil otherwise.
	notifyLater *notifyLater
}

// Parts are the constructors of what only some functions use. A Lambda binary names those its
// function's use cases need (functions/<name>/main.go), so that the linker leaves the others
// out with the SDKs they bring: Bedrock (the embedder, the chat model), AWS Lambda (the
// notifier), go-redis (the adapters). scripts/check-binaries.sh fails when a binary's use
// cases reach a part it does not build. A nil constructor leaves its part out, as said below.
type Parts struct {
	// Embedder builds the configured embedder (NewEmbedder). Without it the service names the
	// configured model, and any attempt to embed fails.
	Embedder func(ctx context.Context, cfg config.Config, log *slog.Logger) (embedding.Embedder, error)
	// Chat builds the prompts of the configured chat model (NewChat), for fact extraction and
	// rolling summaries; without it those jobs fail, saying why.
	Chat func(ctx context.Context, cfg config.Config, log *slog.Logger) (*prompts.Runner, error)
	// Notifier builds what JOBS_NOTIFY names (NewNotifier); without it the jobs a change writes
	// wait for the next scheduled delivery.
	Notifier func(ctx context.Context, cfg config.Config, log *slog.Logger) (app.Notifier, *app.Kick, error)
	// Adapters builds the enabled adapters (NewAdapters), which deliver jobs, cache get-context
	// answers and add Mem0's results to recall; without it none of these happen here.
	Adapters func(cfg config.Config) (map[string]adapter.Adapter, error)
	// MCP builds the mcp function's MCP server (mcpserver.Handler). It is not among AllParts:
	// only what serves mcp (its binary, agentmem serve and lambda) names it, so that no other
	// binary links the MCP SDK. Without it mcp answers not_found.
	MCP func(a *app.App, log *slog.Logger) http.Handler
}

// AllParts builds every part: for the processes that run every function (the local server, the
// operator command, the container image).
func AllParts() Parts {
	return Parts{Embedder: NewEmbedder, Chat: NewChat, Notifier: NewNotifier, Adapters: NewAdapters}
}

// Start reads the configuration from the environment and builds everything. ctx bounds
// background work (the JWKS refresh) and should live as long as the process.
func Start(ctx context.Context) (*Service, error) { return StartParts(ctx, AllParts()) }

// StartParts is Start building only parts: what one function uses.
func StartParts(ctx context.Context, parts Parts) (*Service, error) {
	// DATABASE_URL_SECRET or DATABASE_URL_PARAMETER: DATABASE_URL from AWS, once per cold start.
	getenv, err := dbsecret.Getenv(ctx, os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return nil, err
	}
	log := slog.New(reqlog.NewHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})))
	// OpenTelemetry reads only its standard variables (OTEL_*), from the process environment.
	tel, err := telemetry.Setup(ctx, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	svc, err := NewParts(ctx, cfg, log, parts)
	if err != nil {
		tel.Shutdown(ctx) //nolint:errcheck // the start failed already
		return nil, err
	}
	svc.Telemetry = tel
	return svc, nil
}

// New builds a Service from cfg, with every part.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*Service, error) {
	return NewParts(ctx, cfg, log, AllParts())
}

// NewParts builds a Service from cfg with only parts.
func NewParts(ctx context.Context, cfg config.Config, log *slog.Logger, parts Parts) (*Service, error) {
	var emb embedding.Embedder = unbuiltEmbedder{store.VectorModel{Name: cfg.EmbeddingModel, Dims: cfg.EmbeddingDimensions}}
	if parts.Embedder != nil {
		var err error
		if emb, err = parts.Embedder(ctx, cfg, log); err != nil {
			return nil, err
		}
	}
	// Whether built or not, the configured model must fit the schema.
	if err := app.CheckEmbedder(emb); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, store.Config{DatabaseURL: cfg.DatabaseURL, MaxConns: cfg.MaxConns,
		Ranking: store.Ranking{TextWeight: cfg.RecallTextWeight, VectorWeight: cfg.RecallVectorWeight,
			RRFK: cfg.RecallRRFK, ExactLimit: cfg.RecallExactLimit,
			FollowWeight: followWeight(cfg.RecallFollowWeight)},
		MergeSimilarity: cfg.MemoryMergeSimilarity, Adapters: cfg.Adapters,
		ExtractFacts: cfg.ExtractFacts, Summaries: cfg.Summaries,
		ReadURLs: cfg.ReadURLs, ReplicaMaxLag: cfg.ReplicaMaxLag, ReplicaCheckInterval: cfg.ReplicaCheckInterval, Log: log})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	adapters := map[string]adapter.Adapter{}
	if parts.Adapters != nil {
		if adapters, err = parts.Adapters(cfg); err != nil {
			st.Close()
			return nil, err
		}
	}
	var redactor *redact.Redactor
	if len(cfg.Adapters) > 0 {
		if redactor, err = redact.New(cfg.PIIHashSalt); err != nil {
			st.Close()
			return nil, err
		}
	}
	var runner *prompts.Runner
	if parts.Chat != nil {
		if runner, err = parts.Chat(ctx, cfg, log); err != nil {
			st.Close()
			return nil, err
		}
	}
	var notifier app.Notifier
	var kick *app.Kick
	if parts.Notifier != nil {
		if notifier, kick, err = parts.Notifier(ctx, cfg, log); err != nil {
			st.Close()
			return nil, err
		}
	}
	var later *notifyLater
	if notifier != nil && strings.HasPrefix(cfg.JobsNotify, config.JobsNotifyLambdaPrefix) {
		later = &notifyLater{inner: notifier}
		notifier = later
	}
	v, err := newVerifier(ctx, cfg, log)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("token verifier: %w", err)
	}
	var recallExtra app.RecallSource
	if m, ok := adapters[adapter.Mem0].(*mem0.Mem0); ok && cfg.Mem0.Recall {
		recallExtra = m
	}
	a := app.New(st, log, app.Config{DefaultRetention: cfg.DefaultRetention, History: cfg.History, NotesMaxChars: cfg.NotesMaxChars,
		RateLimit: app.RateLimit{User: cfg.RateLimitUserPerMinute, Tenant: cfg.RateLimitTenantPerMinute,
			Backfill: cfg.RateLimitBackfillPerHour},
		Jobs: app.JobsConfig(cfg.Jobs), Adapters: adapters, Notifier: notifier, Redactor: redactor, RecallExtra: recallExtra,
		MessageEmbedding: cfg.MessageEmbedding, Embedder: emb, MinRelevance: cfg.RecallMinRelevance,
		MatchRelevance: cfg.RecallMatchRelevance, VectorBaseline: cfg.RecallVectorBaseline,
		Prompts: runner, Summary: cfg.Summary, InternalJobs: cfg.ExtractFacts || cfg.Summaries})
	hc := httpapi.Config{AllowedOrigins: cfg.AllowedOrigins, RefuseAnonymous: !cfg.AuthAllowAnonymous,
		AuthorizationServers: authorizationServers(cfg.SupabaseURL)}
	if parts.MCP != nil {
		hc.MCP = parts.MCP(a, log)
	}
	srv := httpapi.NewServer(a, v, log, hc)
	return &Service{Config: cfg, Log: log, Store: st, App: a, Server: srv, Kick: kick, notifyLater: later}, nil
}

// authorizationServers is the Supabase Auth server of SUPABASE_URL, which issues the tokens
// the functions take; none without SUPABASE_URL.
func authorizationServers(supabaseURL string) []string {
	if supabaseURL == "" {
		return nil
	}
	return []string{supabaseURL + "/auth/v1"}
}

// followWeight is store.Ranking.FollowWeight for RECALL_FOLLOW_WEIGHT, where 0 means none
// (the Ranking's zero value means its default).
func followWeight(w float64) float64 {
	if w == 0 {
		return -1
	}
	return w
}

// NewChat builds the prompts of the configured chat model; nil when none is configured.
func NewChat(ctx context.Context, cfg config.Config, log *slog.Logger) (*prompts.Runner, error) {
	if cfg.Chat.Provider == "" {
		return nil, nil
	}
	chatCfg := cfg.Chat
	chatCfg.Logger = log
	chat, err := llm.New(ctx, chatCfg)
	if err != nil {
		return nil, fmt.Errorf("chat model: %w", err)
	}
	return prompts.New(chat)
}

// NewAdapters builds the enabled adapters, by name.
func NewAdapters(cfg config.Config) (map[string]adapter.Adapter, error) {
	out := map[string]adapter.Adapter{}
	for _, name := range cfg.Adapters {
		switch name {
		case adapter.Webhook:
			w, err := webhook.New(cfg.Webhook)
			if err != nil {
				return nil, fmt.Errorf("webhook adapter: %w", err)
			}
			out[name] = w
		case adapter.Redis:
			r, err := redis.New(cfg.Redis)
			if err != nil {
				return nil, fmt.Errorf("redis adapter: %w", err)
			}
			out[name] = r
		case adapter.Mem0:
			m, err := mem0.New(cfg.Mem0)
			if err != nil {
				return nil, fmt.Errorf("mem0 adapter: %w", err)
			}
			out[name] = m
		default:
			return nil, fmt.Errorf("adapter %q has no constructor", name) // adapter.Known lists it
		}
	}
	return out, nil
}

// jobsWritten reports whether changes write jobs: an adapter is enabled, or fact extraction or
// rolling summaries are.
func jobsWritten(cfg config.Config) bool {
	return len(cfg.Adapters) > 0 || cfg.ExtractFacts || cfg.Summaries
}

// NewNotifier builds what JOBS_NOTIFY names, and the Kick of a process that delivers its own
// jobs; nothing when no job is written.
func NewNotifier(ctx context.Context, cfg config.Config, log *slog.Logger) (app.Notifier, *app.Kick, error) {
	if !jobsWritten(cfg) {
		return nil, nil, nil
	}
	switch {
	case cfg.JobsNotify == config.JobsNotifyProcess:
		k := app.NewKick()
		return k, k, nil
	case strings.HasPrefix(cfg.JobsNotify, config.JobsNotifyLambdaPrefix):
		inv, err := lambdainvoke.New(ctx, lambdainvoke.Config{Function: strings.TrimPrefix(cfg.JobsNotify, config.JobsNotifyLambdaPrefix),
			Region: cfg.AWSRegion, Log: log})
		if err != nil {
			return nil, nil, err
		}
		return inv, nil, nil
	}
	return nil, nil, nil
}

// RunDeliveryLoop delivers the outbox's jobs until ctx ends, in a long-running process: at
// once after each change of this process (JOBS_NOTIFY=process), and every JOBS_POLL_INTERVAL.
// It returns at once when no job is written (no adapter, fact extraction nor summaries).
func (s *Service) RunDeliveryLoop(ctx context.Context) {
	if !jobsWritten(s.Config) {
		return
	}
	kick := s.Kick
	if kick == nil {
		kick = app.NewKick() // notified elsewhere (lambda, none): poll only
	}
	s.App.DeliveryLoop(ctx, kick, s.Config.JobsPollInterval)
}

// newVerifier builds the token verifier cfg.AuthVerify names. In auth-server mode the JWT
// verifier, when a secret or JWKS is configured, checks service_role tokens only.
func newVerifier(ctx context.Context, cfg config.Config, log *slog.Logger) (httpapi.Verifier, error) {
	var jwtV *auth.Verifier
	if cfg.AuthVerify != config.AuthVerifyAuthServer || cfg.JWTSecret != "" || cfg.JWKSURL != "" {
		v, err := auth.NewVerifier(ctx, auth.Config{
			JWTSecret: cfg.JWTSecret, JWKSURL: cfg.JWKSURL, JWKSRefresh: cfg.JWKSRefresh, Issuer: cfg.JWTIssuer,
			Logger: log,
		})
		if err != nil {
			return nil, err
		}
		jwtV = v
	}
	if cfg.AuthVerify != config.AuthVerifyAuthServer {
		return jwtV, nil
	}
	asv, err := auth.NewAuthServerVerifier(auth.AuthServerConfig{
		URL: cfg.SupabaseURL, APIKey: cfg.AnonKey, ServiceTokens: jwtV,
	})
	if err != nil {
		return nil, err
	}
	return asv, nil
}

// NewEmbedder builds the configured embedder (NewParts checks that the schema can store its
// vectors).
func NewEmbedder(ctx context.Context, cfg config.Config, log *slog.Logger) (embedding.Embedder, error) {
	emb, err := embedding.New(ctx, embedding.Config{
		Provider: cfg.EmbeddingProvider, Model: cfg.EmbeddingModel, Dimensions: cfg.EmbeddingDimensions,
		SendDimensions: cfg.EmbeddingSendDimensions, BaseURL: cfg.EmbeddingBaseURL, APIKey: cfg.EmbeddingAPIKey,
		Timeout: cfg.EmbeddingTimeout, MaxRetryTime: cfg.EmbeddingMaxRetryTime, MaxBatch: cfg.EmbeddingBatchSize,
		Concurrency: cfg.EmbeddingConcurrency, Region: cfg.AWSRegion, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	return emb, nil
}

// errNoEmbedder is what a binary built without an embedder answers if asked to embed.
var errNoEmbedder = errors.New("this binary holds no embedder: its function's service.Parts leave it out")

// unbuiltEmbedder stands for the configured embedder in a binary whose function embeds
// nothing: it names the configured model, so that what it reads and writes is of that model,
// and refuses to embed.
type unbuiltEmbedder struct{ m store.VectorModel }

func (u unbuiltEmbedder) Model() string   { return u.m.Name }
func (u unbuiltEmbedder) Dimensions() int { return u.m.Dims }
func (u unbuiltEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errNoEmbedder
}

// Close releases the pool and exports what telemetry holds.
func (s *Service) Close() {
	s.Store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Telemetry.Shutdown(ctx); err != nil {
		s.Log.Warn("telemetry shutdown", "error", err)
	}
}
