package config_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/adapter/redis"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/llm"
	"github.com/agentmem/agentmem/shared/memory"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestEmbeddingDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vars       map[string]string
		provider   string
		model      string
		dims       int
		send       bool
		baseURL    string
		timeout    time.Duration
		retryTime  time.Duration
		batch, par int
	}{
		{map[string]string{}, "local", "agentmem-hash-384-v2", 384, false, "", 10 * time.Second, 20 * time.Second, 64, 4},
		{map[string]string{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_API_KEY": "sk"},
			"openai", "text-embedding-3-small", 384, false, "https://api.openai.com/v1", 10 * time.Second, 20 * time.Second, 64, 4},
		{map[string]string{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "http://localhost:11434",
			"EMBEDDING_MODEL": "all-minilm", "EMBEDDING_DIMENSIONS": "384", "EMBEDDING_TIMEOUT": "3s",
			"EMBEDDING_MAX_RETRY_TIME": "1m", "EMBEDDING_BATCH_SIZE": "16"},
			"openai", "all-minilm", 384, true, "http://localhost:11434", 3 * time.Second, time.Minute, 16, 4},
		{map[string]string{"EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "eu-west-1", "EMBEDDING_CONCURRENCY": "8"},
			"bedrock", "amazon.titan-embed-text-v2:0", 1024, false, "", 10 * time.Second, 20 * time.Second, 64, 8},
	} {
		t.Run(tc.model, func(t *testing.T) {
			c, err := config.Load(env(tc.vars))
			if err != nil {
				t.Errorf("%v: %v", tc.vars, err)
				return
			}
			if c.EmbeddingProvider != tc.provider || c.EmbeddingModel != tc.model || c.EmbeddingDimensions != tc.dims ||
				c.EmbeddingSendDimensions != tc.send || c.EmbeddingBaseURL != tc.baseURL || c.EmbeddingTimeout != tc.timeout ||
				c.EmbeddingMaxRetryTime != tc.retryTime || c.EmbeddingBatchSize != tc.batch || c.EmbeddingConcurrency != tc.par {
				t.Errorf("%v: got %+v", tc.vars, c)
			}
			if tc.provider == "bedrock" && c.AWSRegion != "eu-west-1" {
				t.Errorf("AWS_REGION read as %q", c.AWSRegion)
			}
		})
	}
}

func TestEmbeddingSettingsAreChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vars map[string]string
		want string // in the error
	}{
		{map[string]string{"EMBEDDING_PROVIDER": "cohere"}, "EMBEDDING_PROVIDER"},
		{map[string]string{"EMBEDDING_PROVIDER": "OpenAI"}, "EMBEDDING_PROVIDER"},
		{map[string]string{"EMBEDDING_DIMENSIONS": "0"}, "EMBEDDING_DIMENSIONS"},
		{map[string]string{"EMBEDDING_DIMENSIONS": "big"}, "EMBEDDING_DIMENSIONS"},
		{map[string]string{"EMBEDDING_TIMEOUT": "10"}, "EMBEDDING_TIMEOUT"},
		{map[string]string{"EMBEDDING_TIMEOUT": "-1s"}, "EMBEDDING_TIMEOUT"},
		{map[string]string{"EMBEDDING_MAX_RETRY_TIME": "soon"}, "EMBEDDING_MAX_RETRY_TIME"},
		{map[string]string{"EMBEDDING_BATCH_SIZE": "0"}, "EMBEDDING_BATCH_SIZE"},
		{map[string]string{"EMBEDDING_CONCURRENCY": "1000"}, "EMBEDDING_CONCURRENCY"},
		{map[string]string{"EMBEDDING_PROVIDER": "openai"}, "EMBEDDING_API_KEY"},
		{map[string]string{"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "localhost:11434"}, "EMBEDDING_BASE_URL"},
	} {
		t.Run(fmt.Sprint(tc.vars), func(t *testing.T) {
			_, err := config.Load(env(tc.vars))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %v, want one naming %s", tc.vars, err, tc.want)
			}
		})
	}
}

func TestChatDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Chat.Provider != "" || c.Chat.Model != "" || c.Chat.Timeout != llm.DefaultTimeout || c.Chat.MaxRetryTime != llm.DefaultMaxRetryTime ||
		c.Chat.MaxOutputTokens != llm.DefaultMaxOutputTokens || c.Chat.ResponseFormat != llm.ResponseFormatJSONSchema {
		t.Errorf("off by default: %+v", c.Chat)
	}
	if c.Summary != memory.DefaultSummaryPolicy {
		t.Errorf("summary policy %+v", c.Summary)
	}
	for _, tc := range []struct {
		vars map[string]string
		want llm.Config
	}{
		{map[string]string{"CHAT_PROVIDER": "openai", "CHAT_API_KEY": "sk"},
			llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, BaseURL: "https://api.openai.com/v1", APIKey: "sk"}},
		{map[string]string{"CHAT_PROVIDER": "openai", "CHAT_BASE_URL": "http://localhost:11434", "CHAT_MODEL": "llama3.2",
			"CHAT_TIMEOUT": "2m", "CHAT_MAX_RETRY_TIME": "5m", "CHAT_MAX_OUTPUT_TOKENS": "512", "CHAT_RESPONSE_FORMAT": "json_object"},
			llm.Config{Provider: "openai", Model: "llama3.2", BaseURL: "http://localhost:11434", Timeout: 2 * time.Minute,
				MaxRetryTime: 5 * time.Minute, MaxOutputTokens: 512, ResponseFormat: "json_object"}},
		{map[string]string{"CHAT_PROVIDER": "bedrock", "AWS_REGION": "eu-west-1", "CHAT_MODEL": "eu.amazon.nova-micro-v1:0"},
			llm.Config{Provider: "bedrock", Model: "eu.amazon.nova-micro-v1:0", Region: "eu-west-1"}},
	} {
		t.Run(fmt.Sprint(tc.vars), func(t *testing.T) {
			c, err := config.Load(env(tc.vars))
			if err != nil {
				t.Errorf("%v: %v", tc.vars, err)
				return
			}
			want := tc.want
			if want.Timeout == 0 {
				want.Timeout, want.MaxRetryTime, want.MaxOutputTokens = llm.DefaultTimeout, llm.DefaultMaxRetryTime, llm.DefaultMaxOutputTokens
				want.ResponseFormat = llm.DefaultResponseFormat
			}
			if c.Chat != want {
				t.Errorf("%v: %+v, want %+v", tc.vars, c.Chat, want)
			}
		})
	}
	c, err = config.Load(env(map[string]string{"SUMMARY_TRIGGER_TOKENS": "8000", "SUMMARY_KEEP_TOKENS": "0", "SUMMARY_MAX_INPUT_TOKENS": "0"}))
	if err != nil || c.Summary != (memory.SummaryPolicy{TriggerTokens: 8000}) {
		t.Errorf("summary policy %+v, %v", c.Summary, err)
	}
	if c.ExtractFacts || c.Summaries {
		t.Errorf("fact extraction %v and summaries %v on by default", c.ExtractFacts, c.Summaries)
	}
	c, err = config.Load(env(map[string]string{"CHAT_PROVIDER": "openai", "CHAT_API_KEY": "sk", "EXTRACT_FACTS": "true",
		"SUMMARIES": "1"}))
	if err != nil || !c.ExtractFacts || !c.Summaries {
		t.Errorf("EXTRACT_FACTS and SUMMARIES on: %v, %v, %v", c.ExtractFacts, c.Summaries, err)
	}
}

func TestChatSettingsAreChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vars map[string]string
		want string // in the error
	}{
		{map[string]string{"CHAT_PROVIDER": "anthropic"}, "CHAT_PROVIDER"},
		{map[string]string{"CHAT_PROVIDER": "off"}, "CHAT_PROVIDER"},
		{map[string]string{"CHAT_PROVIDER": "openai"}, "CHAT_API_KEY"},
		{map[string]string{"CHAT_PROVIDER": "openai", "CHAT_BASE_URL": "localhost:11434"}, "CHAT_BASE_URL"},
		{map[string]string{"CHAT_PROVIDER": "bedrock", "CHAT_BASE_URL": "vpce.example"}, "CHAT_BASE_URL"},
		{map[string]string{"CHAT_TIMEOUT": "30"}, "CHAT_TIMEOUT"},
		{map[string]string{"CHAT_MAX_RETRY_TIME": "-1m"}, "CHAT_MAX_RETRY_TIME"},
		{map[string]string{"CHAT_MAX_OUTPUT_TOKENS": "0"}, "CHAT_MAX_OUTPUT_TOKENS"},
		{map[string]string{"CHAT_MAX_OUTPUT_TOKENS": "1000000"}, "CHAT_MAX_OUTPUT_TOKENS"},
		{map[string]string{"CHAT_RESPONSE_FORMAT": "text"}, "CHAT_RESPONSE_FORMAT"},
		{map[string]string{"SUMMARY_TRIGGER_TOKENS": "0"}, "SUMMARY_TRIGGER_TOKENS"},
		{map[string]string{"SUMMARY_KEEP_TOKENS": "-1"}, "SUMMARY_KEEP_TOKENS"},
		{map[string]string{"SUMMARY_TRIGGER_TOKENS": "500", "SUMMARY_KEEP_TOKENS": "500"}, "SUMMARY_KEEP_TOKENS"},
		{map[string]string{"SUMMARY_MAX_INPUT_TOKENS": "many"}, "SUMMARY_MAX_INPUT_TOKENS"},
		{map[string]string{"EXTRACT_FACTS": "true"}, "CHAT_PROVIDER"},
		{map[string]string{"SUMMARIES": "true"}, "CHAT_PROVIDER"},
		{map[string]string{"CHAT_PROVIDER": "openai", "CHAT_API_KEY": "sk", "EXTRACT_FACTS": "yes"}, "EXTRACT_FACTS"},
		{map[string]string{"CHAT_PROVIDER": "openai", "CHAT_API_KEY": "sk", "SUMMARIES": "on"}, "SUMMARIES"},
		{map[string]string{"CHAT_PROVIDER": "openai", "CHAT_API_KEY": "sk", "SUMMARIES": "true", "CHAT_TIMEOUT": "2m"}, "JOBS_LEASE"},
	} {
		t.Run(fmt.Sprint(tc.vars), func(t *testing.T) {
			_, err := config.Load(env(tc.vars))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %v, want one naming %s", tc.vars, err, tc.want)
			}
		})
	}
}

func TestTokenVerificationSettings(t *testing.T) {
	t.Parallel()
	const remote = "postgresql://postgres.ref:pw@aws-0-eu-west-1.pooler.supabase.com:6543/postgres"
	for _, tc := range []struct {
		name         string
		vars         map[string]string
		secret, jwks string
		fails        bool
	}{
		{"local stack", map[string]string{}, config.LocalJWTSecret, "", false},
		{"local database by name", map[string]string{"DATABASE_URL": "postgres://u:p@localhost:5432/db"}, config.LocalJWTSecret, "", false},
		{"deployed database, nothing to verify with", map[string]string{"DATABASE_URL": remote}, "", "", true},
		{"Lambda, nothing to verify with", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "recall"}, "", "", true},
		{"secret", map[string]string{"DATABASE_URL": remote, "SUPABASE_JWT_SECRET": "s3cr3t"}, "s3cr3t", "", false},
		{"project url", map[string]string{"DATABASE_URL": remote, "SUPABASE_URL": "https://ref.supabase.co/"},
			"", "https://ref.supabase.co/auth/v1/.well-known/jwks.json", false},
		{"project url and legacy secret", map[string]string{"DATABASE_URL": remote, "SUPABASE_URL": "https://ref.supabase.co", "SUPABASE_JWT_SECRET": "s"},
			"s", "https://ref.supabase.co/auth/v1/.well-known/jwks.json", false},
		{"explicit jwks", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "recall", "SUPABASE_JWKS_URL": "https://keys.example/jwks.json"},
			"", "https://keys.example/jwks.json", false},
		// The public local secret never guards a server that other machines can reach.
		{"every interface", map[string]string{"ADDR": "0.0.0.0:9000"}, "", "", true},
		{"every interface, no host", map[string]string{"ADDR": ":9000"}, "", "", true},
		{"every interface, IPv6", map[string]string{"ADDR": "[::]:9000"}, "", "", true},
		{"a network address", map[string]string{"ADDR": "192.168.1.5:9000"}, "", "", true},
		{"a host name", map[string]string{"ADDR": "dev.example.com:9000"}, "", "", true},
		{"PORT, as the container image sets it", map[string]string{"PORT": "8080"}, "", "", true},
		{"loopback ADDR", map[string]string{"ADDR": "127.0.0.1:9100"}, config.LocalJWTSecret, "", false},
		{"localhost ADDR", map[string]string{"ADDR": "localhost:9100"}, config.LocalJWTSecret, "", false},
		{"IPv6 loopback ADDR", map[string]string{"ADDR": "[::1]:9100"}, config.LocalJWTSecret, "", false},
		{"ADDR wins over PORT", map[string]string{"ADDR": "127.0.0.1:9100", "PORT": "8080"}, config.LocalJWTSecret, "", false},
		{"every interface with a secret", map[string]string{"ADDR": "0.0.0.0:9000", "SUPABASE_JWT_SECRET": "s3cr3t"}, "s3cr3t", "", false},
		{"PORT with a key set", map[string]string{"PORT": "8080", "SUPABASE_JWKS_URL": "https://keys.example/jwks.json"},
			"", "https://keys.example/jwks.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(env(tc.vars))
			if tc.fails {
				if err == nil || !strings.Contains(err.Error(), "SUPABASE_JWT_SECRET") {
					t.Errorf("%s: err %v, want a start-up error naming the settings", tc.name, err)
				}
				return
			}
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				return
			}
			if c.JWTSecret != tc.secret || c.JWKSURL != tc.jwks {
				t.Errorf("%s: secret %q jwks %q, want %q %q", tc.name, c.JWTSecret, c.JWKSURL, tc.secret, tc.jwks)
			}
		})
	}
}

func TestAuthServerVerificationSettings(t *testing.T) {
	t.Parallel()
	const remote = "postgresql://postgres.ref:pw@aws-0-eu-west-1.pooler.supabase.com:6543/postgres"
	server := func(extra map[string]string) map[string]string {
		vars := map[string]string{"DATABASE_URL": remote, "SUPABASE_AUTH_VERIFY": "auth-server",
			"SUPABASE_URL": "https://ref.supabase.co/", "SUPABASE_ANON_KEY": "sb_publishable_abc"}
		for k, v := range extra {
			vars[k] = v
		}
		return vars
	}
	for _, tc := range []struct {
		name               string
		vars               map[string]string
		mode, secret, jwks string
		fails              string // in the error
	}{
		{name: "default", vars: map[string]string{"SUPABASE_URL": "https://ref.supabase.co"}, mode: "jwt",
			jwks: "https://ref.supabase.co/auth/v1/.well-known/jwks.json"},
		{name: "jwt", vars: map[string]string{"SUPABASE_AUTH_VERIFY": "jwt"}, mode: "jwt", secret: config.LocalJWTSecret},
		// Neither the JWKS nor the local secret is a default here: service tokens are refused.
		{name: "auth server", vars: server(nil), mode: "auth-server"},
		{name: "auth server on a local database", vars: server(map[string]string{"DATABASE_URL": config.LocalDatabaseURL}), mode: "auth-server"},
		{name: "auth server with the legacy secret for service tokens", vars: server(map[string]string{"SUPABASE_JWT_SECRET": "s"}),
			mode: "auth-server", secret: "s"},
		{name: "auth server with a JWKS for service tokens", vars: server(map[string]string{"SUPABASE_JWKS_URL": "https://keys.example/jwks.json"}),
			mode: "auth-server", jwks: "https://keys.example/jwks.json"},
		{name: "auth server without url", vars: server(map[string]string{"SUPABASE_URL": ""}), fails: "SUPABASE_URL"},
		{name: "auth server without key", vars: server(map[string]string{"SUPABASE_ANON_KEY": " "}), fails: "SUPABASE_ANON_KEY"},
		{name: "auth server, url not http", vars: server(map[string]string{"SUPABASE_URL": "ref.supabase.co"}), fails: "SUPABASE_URL"},
		{name: "unknown mode", vars: map[string]string{"SUPABASE_AUTH_VERIFY": "gotrue"}, fails: "SUPABASE_AUTH_VERIFY"},
		{name: "mode in capitals", vars: map[string]string{"SUPABASE_AUTH_VERIFY": "JWT"}, fails: "SUPABASE_AUTH_VERIFY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(env(tc.vars))
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Errorf("%s: err %v, want a start-up error naming %s", tc.name, err, tc.fails)
				}
				return
			}
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				return
			}
			if c.AuthVerify != tc.mode || c.JWTSecret != tc.secret || c.JWKSURL != tc.jwks {
				t.Errorf("%s: mode %q secret %q jwks %q, want %q %q %q", tc.name, c.AuthVerify, c.JWTSecret, c.JWKSURL,
					tc.mode, tc.secret, tc.jwks)
			}
			if tc.mode == config.AuthVerifyAuthServer && (c.SupabaseURL != "https://ref.supabase.co" || c.AnonKey != "sb_publishable_abc") {
				t.Errorf("%s: url %q key %q", tc.name, c.SupabaseURL, c.AnonKey)
			}
		})
	}
}

func TestMemoryMergeSimilarity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  float64
	}{{"", 0.95}, {"0.9", 0.9}, {" 0.85 ", 0.85}, {"1", 1}, {"1.5", 1.5}, {"2", 2}} {
		t.Run(tc.value, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{"MEMORY_MERGE_SIMILARITY": tc.value}))
			if err != nil || c.MemoryMergeSimilarity != tc.want {
				t.Errorf("%q: %v, %v; want %v", tc.value, c.MemoryMergeSimilarity, err, tc.want)
			}
		})
	}
	for _, v := range []string{"0", "-0.5", "high", "95%", "NaN", "Inf", "0,9"} {
		_, err := config.Load(env(map[string]string{"MEMORY_MERGE_SIMILARITY": v}))
		if err == nil || !strings.Contains(err.Error(), "MEMORY_MERGE_SIMILARITY") || !strings.Contains(err.Error(), "above 1 to turn") {
			t.Errorf("%q: error %v, want one naming MEMORY_MERGE_SIMILARITY and its range", v, err)
		}
	}
}

func TestRankingSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	if err != nil || c.RecallTextWeight != 1 || c.RecallVectorWeight != 1 || c.RecallRRFK != 50 || c.RecallExactLimit != 2000 {
		t.Fatalf("defaults: %v %v %v %v, %v", c.RecallTextWeight, c.RecallVectorWeight, c.RecallRRFK, c.RecallExactLimit, err)
	}
	if c.RecallMinRelevance != 0 || c.RecallFollowWeight != 0.5 {
		t.Errorf("defaults: min relevance %v, follow weight %v", c.RecallMinRelevance, c.RecallFollowWeight)
	}
	if c.RecallMatchRelevance != memory.DefaultMatchRelevance || c.RecallVectorBaseline != nil {
		t.Errorf("defaults: match relevance %v, vector baseline %v", c.RecallMatchRelevance, c.RecallVectorBaseline)
	}
	c, err = config.Load(env(map[string]string{"RECALL_MIN_RELEVANCE": "0.3", "RECALL_FOLLOW_WEIGHT": "0"}))
	if err != nil || c.RecallMinRelevance != 0.3 || c.RecallFollowWeight != 0 {
		t.Errorf("set: min relevance %v, follow weight %v, %v", c.RecallMinRelevance, c.RecallFollowWeight, err)
	}
	c, err = config.Load(env(map[string]string{"RECALL_MATCH_RELEVANCE": "0.4", "RECALL_VECTOR_BASELINE": "0"}))
	if err != nil || c.RecallMatchRelevance != 0.4 || c.RecallVectorBaseline == nil || *c.RecallVectorBaseline != 0 {
		t.Errorf("set: match relevance %v, vector baseline %v, %v", c.RecallMatchRelevance, c.RecallVectorBaseline, err)
	}
	c, err = config.Load(env(map[string]string{"RECALL_TEXT_WEIGHT": "0.5", "RECALL_VECTOR_WEIGHT": "2",
		"RECALL_RRF_K": "60", "RECALL_EXACT_LIMIT": "10000"}))
	if err != nil || c.RecallTextWeight != 0.5 || c.RecallVectorWeight != 2 || c.RecallRRFK != 60 || c.RecallExactLimit != 10000 {
		t.Errorf("set: %v %v %v %v, %v", c.RecallTextWeight, c.RecallVectorWeight, c.RecallRRFK, c.RecallExactLimit, err)
	}
	for name, values := range map[string][]string{
		"RECALL_TEXT_WEIGHT":     {"0", "-1", "101", "NaN", "heavy"},
		"RECALL_VECTOR_WEIGHT":   {"0", "Inf", "1,5"},
		"RECALL_RRF_K":           {"0", "10001", "1.5", "k"},
		"RECALL_EXACT_LIMIT":     {"0", "-5", "10000001", "all"},
		"RECALL_MIN_RELEVANCE":   {"-0.1", "1.01", "NaN", "high"},
		"RECALL_FOLLOW_WEIGHT":   {"-1", "2", "Inf", "half"},
		"RECALL_MATCH_RELEVANCE": {"0", "-0.1", "1.5", "NaN", "some"},
		"RECALL_VECTOR_BASELINE": {"-0.1", "1", "NaN", "low"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, v := range values {
				if _, err := config.Load(env(map[string]string{name: v})); err == nil || !strings.Contains(err.Error(), name) {
					t.Errorf("%s=%q: error %v, want one naming %s", name, v, err, name)
				}
			}
		})
	}
}

func TestAuthAllowAnonymous(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  bool
		fails bool
	}{
		{"", config.DefaultAuthAllowAnonymous, false},
		{"true", true, false},
		{"false", false, false},
		{" false ", false, false},
		{"0", false, false},
		{"1", true, false},
		{"no", false, true},
		{"maybe", false, true},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(env(map[string]string{"AUTH_ALLOW_ANONYMOUS": tc.value}))
			if tc.fails {
				if err == nil || !strings.Contains(err.Error(), "AUTH_ALLOW_ANONYMOUS") {
					t.Fatalf("err %v, want a start-up error naming AUTH_ALLOW_ANONYMOUS", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.AuthAllowAnonymous != tc.want {
				t.Errorf("AuthAllowAnonymous = %v, want %v", c.AuthAllowAnonymous, tc.want)
			}
		})
	}
	if !config.DefaultAuthAllowAnonymous {
		t.Error("anonymous users are refused by default; the contract says they are accepted")
	}
}

func TestJWKSRefresh(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  time.Duration // 0: refused
	}{
		{"", auth.DefaultJWKSRefresh},
		{"30s", 30 * time.Second},
		{"1s", time.Second},
		{"1h", time.Hour},
		{"999ms", 0},
		{"0", 0},
		{"-5m", 0},
		{"300", 0},
		{"soon", 0},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(env(map[string]string{"SUPABASE_JWKS_REFRESH": tc.value}))
			if tc.want == 0 {
				if err == nil || !strings.Contains(err.Error(), "SUPABASE_JWKS_REFRESH") {
					t.Errorf("error %v, want one naming SUPABASE_JWKS_REFRESH", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.JWKSRefresh != tc.want {
				t.Errorf("JWKSRefresh = %v, want %v", c.JWKSRefresh, tc.want)
			}
		})
	}
}

func TestRateLimitSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	if err != nil || c.RateLimitUserPerMinute != config.DefaultRateLimitUserPerMinute ||
		c.RateLimitTenantPerMinute != config.DefaultRateLimitTenantPerMinute {
		t.Fatalf("defaults: %d %d, %v", c.RateLimitUserPerMinute, c.RateLimitTenantPerMinute, err)
	}
	c, err = config.Load(env(map[string]string{"RATE_LIMIT_USER_PER_MINUTE": "120", "RATE_LIMIT_TENANT_PER_MINUTE": "1000000"}))
	if err != nil || c.RateLimitUserPerMinute != 120 || c.RateLimitTenantPerMinute != 1_000_000 {
		t.Errorf("set: %d %d, %v", c.RateLimitUserPerMinute, c.RateLimitTenantPerMinute, err)
	}
	c, err = config.Load(env(map[string]string{"RATE_LIMIT_USER_PER_MINUTE": "0", "RATE_LIMIT_TENANT_PER_MINUTE": "0"}))
	if err != nil || c.RateLimitUserPerMinute != 0 || c.RateLimitTenantPerMinute != 0 {
		t.Errorf("off: %d %d, %v", c.RateLimitUserPerMinute, c.RateLimitTenantPerMinute, err)
	}
	if c, err = config.Load(env(nil)); err != nil || c.RateLimitBackfillPerHour != config.DefaultRateLimitBackfillPerHour ||
		config.DefaultRateLimitBackfillPerHour <= 0 {
		t.Errorf("backfill limit by default: %d, %v; want %d, on", c.RateLimitBackfillPerHour, err, config.DefaultRateLimitBackfillPerHour)
	}
	for v, want := range map[string]int{"0": 0, "5": 5, "1000000": 1_000_000} {
		if c, err = config.Load(env(map[string]string{"RATE_LIMIT_BACKFILL_PER_HOUR": v})); err != nil || c.RateLimitBackfillPerHour != want {
			t.Errorf("RATE_LIMIT_BACKFILL_PER_HOUR=%s: %d, %v", v, c.RateLimitBackfillPerHour, err)
		}
	}
	for _, name := range []string{"RATE_LIMIT_USER_PER_MINUTE", "RATE_LIMIT_TENANT_PER_MINUTE", "RATE_LIMIT_BACKFILL_PER_HOUR"} {
		for _, v := range []string{"-1", "1000001", "1.5", "10/m", "many"} {
			if _, err := config.Load(env(map[string]string{name: v})); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: error %v, want one naming %s", name, v, err, name)
			}
		}
	}
}

func TestJobsAndAdapterSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Adapters) != 0 || c.Jobs.MaxAttempts != memory.DefaultJobsMaxAttempts || c.Jobs.BackoffBase != memory.DefaultJobsBackoffBase ||
		c.Jobs.BackoffMax != memory.DefaultJobsBackoffMax || c.Jobs.Lease != memory.DefaultJobsLease ||
		c.Jobs.Concurrency != memory.DefaultJobsConcurrency || c.Jobs.DoneRetention != memory.DefaultJobsDoneRetention ||
		c.JobsPollInterval != memory.DefaultJobsPollInterval || c.JobsNotify != config.JobsNotifyProcess ||
		c.Webhook.Timeout != webhook.DefaultTimeout || c.Webhook.QStashURL != webhook.DefaultQStashURL || c.Webhook.QStashRetries != nil ||
		c.Redis.TTL != redis.DefaultTTL || c.Redis.UserWindows != redis.DefaultUserWindows || c.Redis.UserBytes != redis.DefaultUserBytes ||
		c.Redis.Timeout != redis.DefaultTimeout || c.Redis.URL != "" {
		t.Errorf("defaults: %+v", c)
	}
	// In a Lambda function nothing runs after the answer: no notification unless configured.
	if c, err := config.Load(env(map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "f", "SUPABASE_JWT_SECRET": "s"})); err != nil ||
		c.JobsNotify != config.JobsNotifyNone {
		t.Errorf("in Lambda: %q %v", c.JobsNotify, err)
	}
	secret := webhooktest.NewSecret()
	salt := "a-salt-of-more-than-sixteen-bytes"
	c, err = config.Load(env(map[string]string{"ADAPTERS": " webhook ", "PII_HASH_SALT": salt, "WEBHOOK_URL": "https://hooks.example.com/agentmem",
		"WEBHOOK_SECRET": secret, "WEBHOOK_TIMEOUT": "3s", "JOBS_MAX_ATTEMPTS": "5", "JOBS_BACKOFF_BASE": "250ms",
		"JOBS_BACKOFF_MAX": "10m", "JOBS_LEASE": "30s", "JOBS_CONCURRENCY": "8", "JOBS_DONE_RETENTION": "1h",
		"JOBS_POLL_INTERVAL": "1s", "JOBS_NOTIFY": "lambda:agentmem-ProcessJobsFunction-1", "QSTASH_RETRIES": "3"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Adapters) != 1 || c.Adapters[0] != "webhook" || c.Webhook.Secret != secret || c.Webhook.Timeout != 3*time.Second ||
		c.Jobs.MaxAttempts != 5 || c.Jobs.BackoffBase != 250*time.Millisecond || c.Jobs.BackoffMax != 10*time.Minute ||
		c.Jobs.Lease != 30*time.Second || c.Jobs.Concurrency != 8 || c.Jobs.DoneRetention != time.Hour ||
		c.JobsPollInterval != time.Second || c.JobsNotify != "lambda:agentmem-ProcessJobsFunction-1" ||
		c.Webhook.QStashRetries == nil || *c.Webhook.QStashRetries != 3 || c.PIIHashSalt != salt {
		t.Errorf("set: %+v", c)
	}
	// Through QStash, no secret is needed.
	if _, err := config.Load(env(map[string]string{"ADAPTERS": "webhook", "WEBHOOK_URL": "https://hooks.example.com/a",
		"QSTASH_TOKEN": "tok", "QSTASH_URL": "https://qstash.example.com/", "PII_HASH_SALT": salt})); err != nil {
		t.Errorf("through QStash: %v", err)
	}
	// The Redis cache, beside the webhook.
	c, err = config.Load(env(map[string]string{"ADAPTERS": "webhook,redis", "PII_HASH_SALT": salt,
		"WEBHOOK_URL": "https://hooks.example.com/a", "WEBHOOK_SECRET": secret,
		"REDIS_URL": "rediss://default:pw-of-redis@eu1-example.upstash.io:6379", "REDIS_TTL": "90s", "REDIS_TIMEOUT": "40ms",
		"REDIS_USER_WINDOWS": "100", "REDIS_USER_BYTES": "1048576"}))
	if err != nil || len(c.Adapters) != 2 || c.Adapters[1] != "redis" || c.Redis.TTL != 90*time.Second ||
		c.Redis.UserWindows != 100 || c.Redis.UserBytes != 1<<20 ||
		c.Redis.Timeout != 40*time.Millisecond || c.Redis.URL != "rediss://default:pw-of-redis@eu1-example.upstash.io:6379" {
		t.Errorf("redis: %+v %v", c.Redis, err)
	}
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"ADAPTERS": "redis", "PII_HASH_SALT": salt}, "REDIS_URL must be"},
		{map[string]string{"ADAPTERS": "redis", "PII_HASH_SALT": salt, "REDIS_URL": "http://pw-of-redis@h:6379"}, "REDIS_URL must be"},
		{map[string]string{"ADAPTERS": "redis", "PII_HASH_SALT": salt, "REDIS_URL": "redis://:pw-of-redis@h:6379/x"}, "REDIS_URL is not a valid"},
		{map[string]string{"ADAPTERS": "redis", "PII_HASH_SALT": salt, "REDIS_URL": "redis://h:6379", "REDIS_TIMEOUT": "2s"}, "REDIS_TIMEOUT (2s) must be at most 1s"},
		{map[string]string{"ADAPTERS": "redis", "PII_HASH_SALT": salt, "REDIS_URL": "redis://h:6379", "JOBS_LEASE": "5s"}, "JOBS_LEASE (5s) must be longer"},
		{map[string]string{"REDIS_TTL": "10ms"}, "REDIS_TTL must be"},
		{map[string]string{"REDIS_TIMEOUT": "soon"}, "REDIS_TIMEOUT must be"},
		{map[string]string{"REDIS_USER_WINDOWS": "0"}, "REDIS_USER_WINDOWS must be a number from 1"},
		{map[string]string{"REDIS_USER_BYTES": "4MiB"}, "REDIS_USER_BYTES must be a number from 1024"},
		{map[string]string{"ADAPTERS": "mem0x"}, `ADAPTERS: unknown adapter "mem0x"`},
		{map[string]string{"ADAPTERS": "webhook,webhook"}, "named twice"},
		{map[string]string{"ADAPTERS": "webhook", "PII_HASH_SALT": salt}, "WEBHOOK_URL"},
		{map[string]string{"ADAPTERS": "webhook", "WEBHOOK_URL": "https://h.example.com", "WEBHOOK_SECRET": secret}, "PII_HASH_SALT is required"},
		{map[string]string{"ADAPTERS": "webhook", "WEBHOOK_URL": "https://h.example.com", "WEBHOOK_SECRET": secret,
			"PII_HASH_SALT": "short"}, "PII_HASH_SALT must be at least"},
		{map[string]string{"ADAPTERS": "webhook", "PII_HASH_SALT": salt, "WEBHOOK_URL": "https://h.example.com"}, "WEBHOOK_SECRET is required"},
		{map[string]string{"ADAPTERS": "webhook", "PII_HASH_SALT": salt, "WEBHOOK_URL": "https://h.example.com", "WEBHOOK_SECRET": "short"}, "WEBHOOK_SECRET must be"},
		{map[string]string{"ADAPTERS": "webhook", "PII_HASH_SALT": salt, "WEBHOOK_URL": "https://h.example.com", "WEBHOOK_SECRET": secret,
			"WEBHOOK_TIMEOUT": "2m"}, "must be shorter than JOBS_LEASE"},
		{map[string]string{"JOBS_MAX_ATTEMPTS": "0"}, "JOBS_MAX_ATTEMPTS"},
		{map[string]string{"JOBS_MAX_ATTEMPTS": "101"}, "JOBS_MAX_ATTEMPTS"},
		{map[string]string{"JOBS_BACKOFF_BASE": "soon"}, "JOBS_BACKOFF_BASE"},
		{map[string]string{"JOBS_BACKOFF_BASE": "1m", "JOBS_BACKOFF_MAX": "30s"}, "JOBS_BACKOFF_MAX"},
		{map[string]string{"JOBS_LEASE": "500ms"}, "JOBS_LEASE"},
		{map[string]string{"JOBS_CONCURRENCY": "0"}, "JOBS_CONCURRENCY"},
		{map[string]string{"JOBS_DONE_RETENTION": "-1h"}, "JOBS_DONE_RETENTION"},
		{map[string]string{"JOBS_POLL_INTERVAL": "1ms"}, "JOBS_POLL_INTERVAL"},
		{map[string]string{"JOBS_NOTIFY": "lambda:"}, "JOBS_NOTIFY"},
		{map[string]string{"JOBS_NOTIFY": "sqs"}, "JOBS_NOTIFY"},
		{map[string]string{"QSTASH_RETRIES": "-1"}, "QSTASH_RETRIES"},
	} {
		t.Run(fmt.Sprint(tc.vars), func(t *testing.T) {
			_, err := config.Load(env(tc.vars))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v, want %q", tc.vars, err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), salt) || strings.Contains(err.Error(), "pw-of-redis")) {
				t.Errorf("%v: the error holds a secret", tc.vars)
			}
		})
	}
}

func TestMessageEmbedding(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]string{"": "deferred", "deferred": "deferred", " commit ": "commit"} {
		t.Run(value, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{"MESSAGE_EMBEDDING": value}))
			if err != nil || c.MessageEmbedding != want {
				t.Errorf("%q: %q, %v; want %q", value, c.MessageEmbedding, err, want)
			}
		})
	}
	for _, v := range []string{"later", "Commit", "async"} {
		_, err := config.Load(env(map[string]string{"MESSAGE_EMBEDDING": v}))
		if err == nil || !strings.Contains(err.Error(), "MESSAGE_EMBEDDING must be one of deferred, commit") {
			t.Errorf("%q: error %v, want one naming MESSAGE_EMBEDDING and its values", v, err)
		}
	}
}

func TestMem0Settings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Mem0.URL != mem0.DefaultURL || c.Mem0.Timeout != mem0.DefaultTimeout || c.Mem0.RecallTimeout != mem0.DefaultRecallTimeout ||
		c.Mem0.Recall != config.DefaultMem0Recall || c.Mem0.APIKey != "" {
		t.Errorf("defaults: %+v", c.Mem0)
	}
	salt := "a-salt-of-more-than-sixteen-bytes"
	const key = "m0-a-key-of-the-test"
	c, err = config.Load(env(map[string]string{"ADAPTERS": "webhook, mem0", "PII_HASH_SALT": salt,
		"WEBHOOK_URL": "https://hooks.example.com/a", "WEBHOOK_SECRET": webhooktest.NewSecret(),
		"MEM0_API_KEY": key, "MEM0_URL": "https://mem0.example.com/", "MEM0_ORG_ID": "org_1", "MEM0_PROJECT_ID": "proj_1",
		"MEM0_TIMEOUT": "20s", "MEM0_RECALL": "true", "MEM0_RECALL_TIMEOUT": "300ms"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Adapters) != 2 || c.Adapters[1] != "mem0" || c.Mem0.APIKey != key || c.Mem0.URL != "https://mem0.example.com" ||
		c.Mem0.OrgID != "org_1" || c.Mem0.ProjectID != "proj_1" || c.Mem0.Timeout != 20*time.Second || !c.Mem0.Recall ||
		c.Mem0.RecallTimeout != 300*time.Millisecond {
		t.Errorf("set: %+v", c.Mem0)
	}
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"ADAPTERS": "mem0", "PII_HASH_SALT": salt}, "MEM0_API_KEY is required"},
		{map[string]string{"ADAPTERS": "mem0", "MEM0_API_KEY": key}, "PII_HASH_SALT is required"},
		{map[string]string{"ADAPTERS": "mem0", "PII_HASH_SALT": salt, "MEM0_API_KEY": key, "MEM0_URL": "mem0.ai"}, "MEM0_URL"},
		{map[string]string{"ADAPTERS": "mem0", "PII_HASH_SALT": salt, "MEM0_API_KEY": key, "MEM0_ORG_ID": "org_1"}, "MEM0_PROJECT_ID"},
		{map[string]string{"ADAPTERS": "mem0", "PII_HASH_SALT": salt, "MEM0_API_KEY": key, "MEM0_TIMEOUT": "2m"}, "shorter than JOBS_LEASE"},
		{map[string]string{"ADAPTERS": "mem0", "PII_HASH_SALT": salt, "MEM0_API_KEY": key, "MEM0_RECALL": "maybe"}, "MEM0_RECALL"},
		{map[string]string{"MEM0_RECALL": "true"}, "add mem0 to ADAPTERS"},
		{map[string]string{"MEM0_RECALL_TIMEOUT": "fast"}, "MEM0_RECALL_TIMEOUT"},
	} {
		t.Run(fmt.Sprint(tc.vars), func(t *testing.T) {
			_, err := config.Load(env(tc.vars))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v, want %q", tc.vars, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("%v: the error holds the key", tc.vars)
			}
		})
	}
}

// HISTORY_KEEP_MESSAGES is off by default, else 500 (a whole get-context window) to 1,000,000;
// HISTORY_OVERFLOW archives by default, or deletes; anything else stops the start naming it.
func TestHistoryCapSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		keep, overflow string
		want           memory.HistoryCap
		fails          string
	}{
		{"", "", memory.HistoryCap{}, ""},
		{"0", "archive", memory.HistoryCap{}, ""},
		{"500", "", memory.HistoryCap{Keep: 500}, ""},
		{" 1000000 ", "delete", memory.HistoryCap{Keep: 1_000_000, Delete: true}, ""},
		{"499", "", memory.HistoryCap{}, "HISTORY_KEEP_MESSAGES"},
		{"1000001", "", memory.HistoryCap{}, "HISTORY_KEEP_MESSAGES"},
		{"-1", "", memory.HistoryCap{}, "HISTORY_KEEP_MESSAGES"},
		{"lots", "", memory.HistoryCap{}, "HISTORY_KEEP_MESSAGES"},
		{"", "truncate", memory.HistoryCap{}, "HISTORY_OVERFLOW"},
		{"", "Archive", memory.HistoryCap{}, "HISTORY_OVERFLOW"},
	} {
		t.Run(tc.keep+"/"+tc.overflow, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(env(map[string]string{"HISTORY_KEEP_MESSAGES": tc.keep, "HISTORY_OVERFLOW": tc.overflow}))
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Fatalf("err %v, want a start-up error naming %s", err, tc.fails)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.History != tc.want {
				t.Errorf("History = %+v, want %+v", c.History, tc.want)
			}
		})
	}
}

func TestReadReplicaSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ReadURLs) != 0 || c.ReplicaMaxLag != memory.DefaultReplicaMaxLag || c.ReplicaCheckInterval != memory.DefaultReplicaCheckInterval {
		t.Errorf("defaults: %q, %s, %s", c.ReadURLs, c.ReplicaMaxLag, c.ReplicaCheckInterval)
	}
	for _, tc := range []struct {
		value string
		want  []string
	}{
		{"postgresql://u:p@r1:5432/postgres", []string{"postgresql://u:p@r1:5432/postgres"}},
		{" postgresql://u:p@r1/db , postgres://u:p@r2/db,", []string{"postgresql://u:p@r1/db", "postgres://u:p@r2/db"}},
		// A multi-host URL holds commas of its own.
		{"postgresql://u:p@h1:5432,h2:5432/db?target_session_attrs=any,postgresql://u:p@r3/db",
			[]string{"postgresql://u:p@h1:5432,h2:5432/db?target_session_attrs=any", "postgresql://u:p@r3/db"}},
		{"host=r1 port=5432 user=u password=p dbname=db", []string{"host=r1 port=5432 user=u password=p dbname=db"}},
	} {
		c, err := config.Load(env(map[string]string{"DATABASE_READ_URL": tc.value}))
		if err != nil {
			t.Errorf("%q: %v", tc.value, err)
			continue
		}
		if fmt.Sprint(c.ReadURLs) != fmt.Sprint(tc.want) {
			t.Errorf("%q: read as %q, want %q", tc.value, c.ReadURLs, tc.want)
		}
	}
	c, err = config.Load(env(map[string]string{"REPLICA_MAX_LAG": "2s", "REPLICA_CHECK_INTERVAL": "250ms"}))
	if err != nil || c.ReplicaMaxLag != 2*time.Second || c.ReplicaCheckInterval != 250*time.Millisecond {
		t.Errorf("REPLICA_MAX_LAG 2s, REPLICA_CHECK_INTERVAL 250ms: %s, %s, %v", c.ReplicaMaxLag, c.ReplicaCheckInterval, err)
	}
	for _, bad := range []map[string]string{
		{"DATABASE_READ_URL": "postgresql://u:secret@r1:notaport/db"},
		{"REPLICA_MAX_LAG": "10ms"},
		{"REPLICA_MAX_LAG": "soon"},
		{"REPLICA_CHECK_INTERVAL": "1ms"},
		{"REPLICA_MAX_LAG": "1s", "REPLICA_CHECK_INTERVAL": "1s"},
	} {
		_, err := config.Load(env(bad))
		if err == nil {
			t.Errorf("%v: accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: the error shows the password: %v", bad, err)
		}
	}
}
