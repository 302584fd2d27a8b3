package embedding

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// The providers New can build.
const (
	// ProviderLocal is the built-in Hash embedder: no network, no model files.
	ProviderLocal = "local"
	// ProviderOpenAI is any OpenAI-compatible embeddings API (see OpenAI).
	ProviderOpenAI = "openai"
	// ProviderBedrock is Amazon Bedrock with Titan Text Embeddings v2 (see Bedrock).
	ProviderBedrock = "bedrock"
)

// Config chooses and configures an embedder. Zero fields take the defaults of the chosen
// provider.
type Config struct {
	// Provider is ProviderLocal (default), ProviderOpenAI or ProviderBedrock.
	Provider string
	// Model is the model name; default DefaultModel(Provider). The local provider has one
	// model only.
	Model string
	// Dimensions is the length of the vectors; default DefaultDimensions(Provider, Model).
	Dimensions int
	// SendDimensions asks an OpenAI-compatible server for Dimensions explicitly (see
	// OpenAIConfig.SendDimensions).
	SendDimensions bool
	// BaseURL is the OpenAI-compatible endpoint's base (see EndpointURL); default
	// DefaultOpenAIBaseURL. For Bedrock, it replaces the regional endpoint.
	BaseURL string
	// APIKey authenticates to an OpenAI-compatible endpoint.
	APIKey string
	// Timeout bounds one request to the provider; default 10s.
	Timeout time.Duration
	// MaxBatch is the most texts per request to an OpenAI-compatible endpoint; default 64.
	MaxBatch int
	// Concurrency is the most Bedrock requests in flight; default 4.
	Concurrency int
	// MaxRetryTime bounds one Embed call, its retries included; default 20s.
	MaxRetryTime time.Duration
	// Region is the AWS region for Bedrock.
	Region string
	// Logger receives the providers' warnings; default none.
	Logger *slog.Logger
}

// DefaultModel is the model of a provider when none is configured.
func DefaultModel(provider string) string {
	switch provider {
	case ProviderOpenAI:
		return DefaultOpenAIModel
	case ProviderBedrock:
		return DefaultBedrockModel
	default:
		return Hash{}.Model()
	}
}

// DefaultDimensions is the vector size of a provider and model when none is configured: 1024
// for Titan v2 (its own default), else HashDimensions, the size the schema stores (OpenAI's
// text-embedding-3 models are asked for it, see SendsDimensions).
func DefaultDimensions(provider, model string) int {
	if provider == ProviderBedrock {
		return 1024
	}
	return HashDimensions
}

// SendsDimensions reports whether an OpenAI-compatible request for model carries the
// "dimensions" parameter when the configuration does not say: OpenAI's text-embedding-3 models
// take it (and give 1536 or 3072 values without it); other servers may refuse it.
func SendsDimensions(model string) bool {
	return strings.HasPrefix(model, "text-embedding-3")
}

// New builds the embedder cfg describes. It makes no request: a provider that is down is found
// out on first use, and the callers degrade then (see ErrUnavailable).
func New(ctx context.Context, cfg Config) (Embedder, error) {
	if cfg.Provider == "" {
		cfg.Provider = ProviderLocal
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel(cfg.Provider)
	}
	if cfg.Dimensions == 0 {
		cfg.Dimensions = DefaultDimensions(cfg.Provider, cfg.Model)
	}
	retry := RetryPolicy{MaxElapsed: cfg.MaxRetryTime}
	switch cfg.Provider {
	case ProviderLocal:
		if cfg.Model == hashModelV1 {
			return nil, fmt.Errorf("the local embedder's model %s is now %s: unset EMBEDDING_MODEL (or set it to %s); "+
				"rows of %s are re-embedded by the scheduled embed-pending run or `agentmem backfill`",
				hashModelV1, HashModel, HashModel, hashModelV1)
		}
		if cfg.Model != HashModel {
			return nil, fmt.Errorf("the local embedder's model is %s, not %q", HashModel, cfg.Model)
		}
		if cfg.Dimensions != HashDimensions {
			return nil, fmt.Errorf("the local embedder gives %d dimensions, not %d", HashDimensions, cfg.Dimensions)
		}
		return Hash{}, nil
	case ProviderOpenAI:
		return NewOpenAI(OpenAIConfig{
			BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Model: cfg.Model, Dimensions: cfg.Dimensions,
			SendDimensions: cfg.SendDimensions || SendsDimensions(cfg.Model),
			MaxBatch:       cfg.MaxBatch, Timeout: cfg.Timeout, Retry: retry, Logger: cfg.Logger,
		})
	case ProviderBedrock:
		return NewBedrock(ctx, BedrockConfig{
			Region: cfg.Region, Model: cfg.Model, Dimensions: cfg.Dimensions, Concurrency: cfg.Concurrency,
			Timeout: cfg.Timeout, Retry: retry, BaseEndpoint: cfg.BaseURL, Logger: cfg.Logger,
		})
	default:
		return nil, fmt.Errorf("unknown embedding provider %q: use %s, %s or %s", cfg.Provider,
			ProviderLocal, ProviderOpenAI, ProviderBedrock)
	}
}
