package llm

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentmem/agentmem/shared/upstream"
)

// The providers New can build. There is no default: without a provider (CHAT_PROVIDER empty)
// no chat model is called and the features that need one are off.
const (
	// ProviderOpenAI is any OpenAI-compatible Chat Completions API (see OpenAI).
	ProviderOpenAI = "openai"
	// ProviderBedrock is Amazon Bedrock's Converse API (see Bedrock).
	ProviderBedrock = "bedrock"
)

// Defaults of Config.
const (
	// DefaultOpenAIBaseURL is OpenAI's API.
	DefaultOpenAIBaseURL = upstream.DefaultOpenAIBaseURL
	// DefaultOpenAIModel is the model asked with CHAT_PROVIDER=openai when none is named: small,
	// cheap, and it takes strict JSON schemas.
	DefaultOpenAIModel = "gpt-4o-mini"
	// DefaultBedrockModel is the model asked with CHAT_PROVIDER=bedrock when none is named:
	// Amazon Nova Micro, the least costly Bedrock model that takes a forced tool. Regions that
	// serve it through a cross-region inference profile need the profile's id
	// (eu.amazon.nova-micro-v1:0, apac.amazon.nova-micro-v1:0).
	DefaultBedrockModel = "amazon.nova-micro-v1:0"
	// DefaultTimeout bounds one request to the provider: a completion takes seconds, a long
	// summary on a busy server tens of seconds.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetryTime bounds one completion, its retries included (the caller's deadline
	// bounds it too).
	DefaultMaxRetryTime = 60 * time.Second
	// DefaultMaxOutputTokens caps an answer when the request sets no cap: room for a summary
	// of several hundred words, or for the reasoning tokens of a reasoning model, which count
	// against the same cap.
	DefaultMaxOutputTokens = 2048
	// MaxOutputTokensLimit is the largest cap CHAT_MAX_OUTPUT_TOKENS takes.
	MaxOutputTokensLimit = 65536
)

// The ways an OpenAI-compatible API is asked for JSON (CHAT_RESPONSE_FORMAT).
const (
	// ResponseFormatJSONSchema sends the schema as response_format {"type": "json_schema",
	// "json_schema": {"name", "strict": true, "schema"}}: the server constrains the answer to
	// it. A server that refuses json_schema (a 400 naming response_format or json_schema) is
	// asked with ResponseFormatJSONObject from then on, for the life of the process.
	ResponseFormatJSONSchema = "json_schema"
	// ResponseFormatJSONObject sends response_format {"type": "json_object"} and the schema in
	// the system prompt: the server guarantees JSON, and the caller's validation the shape.
	// For servers that take json_schema but follow it badly.
	ResponseFormatJSONObject = "json_object"
	// DefaultResponseFormat is CHAT_RESPONSE_FORMAT when unset.
	DefaultResponseFormat = ResponseFormatJSONSchema
)

// Config chooses and configures a chat model. Zero fields take the defaults of the chosen
// provider.
type Config struct {
	// Provider is ProviderOpenAI or ProviderBedrock; required.
	Provider string
	// Model is the model name (OpenAI-compatible) or model or inference profile id or ARN
	// (Bedrock); default DefaultOpenAIModel or DefaultBedrockModel. Azure OpenAI takes the
	// deployment from the base URL and ignores it.
	Model string
	// BaseURL is the OpenAI-compatible endpoint's base (see EndpointURL); default
	// DefaultOpenAIBaseURL. For Bedrock, it replaces the regional endpoint.
	BaseURL string
	// APIKey authenticates to an OpenAI-compatible endpoint.
	APIKey string
	// Timeout bounds one request; default DefaultTimeout.
	Timeout time.Duration
	// MaxRetryTime bounds one Complete call, its retries included; default DefaultMaxRetryTime.
	MaxRetryTime time.Duration
	// MaxOutputTokens caps an answer when the request sets no cap; default
	// DefaultMaxOutputTokens.
	MaxOutputTokens int
	// ResponseFormat is ResponseFormatJSONSchema (default) or ResponseFormatJSONObject; for
	// OpenAI-compatible APIs only.
	ResponseFormat string
	// Region is the AWS region for Bedrock.
	Region string
	// Logger receives the providers' warnings; default none.
	Logger *slog.Logger
}

// DefaultModel is the model of a provider when none is configured.
func DefaultModel(provider string) string {
	if provider == ProviderBedrock {
		return DefaultBedrockModel
	}
	return DefaultOpenAIModel
}

// New builds the chat model cfg describes. It makes no request: a provider that is down is
// found out on first use.
func New(ctx context.Context, cfg Config) (Chat, error) {
	retry := RetryPolicy{MaxElapsed: cfg.MaxRetryTime}
	if retry.MaxElapsed <= 0 {
		retry.MaxElapsed = DefaultMaxRetryTime
	}
	switch cfg.Provider {
	case ProviderOpenAI:
		return NewOpenAI(OpenAIConfig{
			BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Model: cfg.Model, ResponseFormat: cfg.ResponseFormat,
			MaxOutputTokens: cfg.MaxOutputTokens, Timeout: cfg.Timeout, Retry: retry, Logger: cfg.Logger,
		})
	case ProviderBedrock:
		return NewBedrock(ctx, BedrockConfig{
			Region: cfg.Region, Model: cfg.Model, MaxOutputTokens: cfg.MaxOutputTokens, Timeout: cfg.Timeout,
			Retry: retry, BaseEndpoint: cfg.BaseURL, Logger: cfg.Logger,
		})
	default:
		return nil, fmt.Errorf("unknown chat provider %q: use %s or %s", cfg.Provider, ProviderOpenAI, ProviderBedrock)
	}
}
