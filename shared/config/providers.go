package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/envvar"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/memory"
)

// The LLM features are off by default: they call the configured chat model, a third party
// that costs tokens (see the README's cost per turn).
const (
	// DefaultExtractFacts is EXTRACT_FACTS when unset.
	DefaultExtractFacts = false
	// DefaultSummaries is SUMMARIES when unset.
	DefaultSummaries = false
)

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
