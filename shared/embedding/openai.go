package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/upstream"
)

// DefaultOpenAIBaseURL is OpenAI's API.
const DefaultOpenAIBaseURL = upstream.DefaultOpenAIBaseURL

// DefaultOpenAIModel is the model used with EMBEDDING_PROVIDER=openai when none is named: it
// takes a "dimensions" parameter, so it can give the 384 values the schema stores.
const DefaultOpenAIModel = "text-embedding-3-small"

// OpenAIConfig configures an OpenAI-compatible embeddings endpoint.
type OpenAIConfig struct {
	// BaseURL locates the endpoint; default DefaultOpenAIBaseURL. See EndpointURL for the
	// request URL it gives.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>", or as "api-key: <key>" to an Azure
	// OpenAI host (*.openai.azure.com, *.cognitiveservices.azure.com,
	// *.services.ai.azure.com). Empty sends neither (Ollama, vLLM and LM Studio need none).
	APIKey string
	// Model is the request's "model"; required.
	Model string
	// Dimensions is the length every vector must have; required.
	Dimensions int
	// SendDimensions adds "dimensions": Dimensions to the request, which OpenAI's
	// text-embedding-3 models need to shorten their vectors; servers of fixed-size models may
	// refuse the field.
	SendDimensions bool
	// MaxBatch is the most texts one request carries; default 64.
	MaxBatch int
	// Timeout bounds one request; default 10s.
	Timeout time.Duration
	// Retry bounds the retries of one Embed call.
	Retry RetryPolicy
	// HTTPClient sends the requests; default a client of its own with no overall timeout (each
	// request is bounded by Timeout through its context).
	HTTPClient *http.Client
	// Logger receives a warning when the provider is given up on; default none.
	Logger *slog.Logger
}

// OpenAI embeds with an OpenAI-compatible embeddings API: OpenAI, Azure OpenAI, Ollama, vLLM,
// LM Studio, or a Supabase Edge Function that answers the same JSON. It speaks plain net/http
// and encoding/json: the wire format is one small request and one response, and a client
// library would bring a dependency tree, its own retries (which would multiply ours) and
// OpenAI-only assumptions (URLs, headers) that the other servers do not share.
type OpenAI struct {
	cfg   OpenAIConfig
	api   *upstream.OpenAIClient
	retry *upstream.Retrier
}

// NewOpenAI checks cfg and returns the embedder.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if cfg.Model == "" {
		return nil, errors.New("openai embeddings: a model is required")
	}
	if cfg.Dimensions <= 0 {
		return nil, errors.New("openai embeddings: dimensions must be positive")
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 64
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	api, err := upstream.NewOpenAIClient(cfg.BaseURL, embeddingsAPI, "embedding", cfg.APIKey, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	return &OpenAI{cfg: cfg, api: api, retry: newRetrier("openai", cfg.Retry, cfg.Timeout, cfg.Logger)}, nil
}

// embeddingsAPI is the path of the embeddings API (see upstream.OpenAIEndpoint).
const embeddingsAPI = "/embeddings"

// EndpointURL is where an OpenAI-compatible base URL receives embedding requests (see
// upstream.OpenAIEndpoint): http://localhost:11434 (Ollama) gets /v1/embeddings,
// https://api.openai.com/v1 gets /embeddings, and an Azure deployment's
// .../openai/deployments/<name>/embeddings?api-version=... is the endpoint itself.
func EndpointURL(base string) (string, error) {
	return upstream.OpenAIEndpoint(base, embeddingsAPI, "embedding")
}

// Model implements Embedder.
func (o *OpenAI) Model() string { return o.cfg.Model }

// Dimensions implements Embedder.
func (o *OpenAI) Dimensions() int { return o.cfg.Dimensions }

// Embed implements Embedder. Texts go in batches of MaxBatch; a text without anything but
// white space gets the zero vector without a request (the API refuses an empty input).
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var idx []int
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, o.cfg.Dimensions)
			continue
		}
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return out, nil
	}
	ctx, cancel := o.retry.Budget(ctx)
	defer cancel()
	for start := 0; start < len(idx); start += o.cfg.MaxBatch {
		part := idx[start:min(start+o.cfg.MaxBatch, len(idx))]
		batch := make([]string, len(part))
		for k, i := range part {
			batch[k] = texts[i]
		}
		var vs [][]float32
		err := o.retry.Do(ctx, func(ctx context.Context) error {
			var err error
			vs, err = o.request(ctx, batch)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("embed %d texts: %w", len(batch), err)
		}
		for k, i := range part {
			out[i] = vs[k]
		}
	}
	return out, nil
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type openAIResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

type openAIError struct {
	Error struct {
		Type string `json:"type"`
		Code any    `json:"code"`
	} `json:"error"`
}

// maxResponseBytes caps an answer: 64 vectors of 3,072 values in JSON are about 4 MB.
const maxResponseBytes = 64 << 20

// request sends one batch and checks the answer.
func (o *OpenAI) request(ctx context.Context, batch []string) ([][]float32, error) {
	body := openAIRequest{Model: o.cfg.Model, Input: batch, EncodingFormat: "float"}
	if o.cfg.SendDimensions {
		body.Dimensions = o.cfg.Dimensions
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	res, err := o.api.Post(ctx, raw)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		// The body may explain, but only its error type and code are kept: the message can
		// quote the key or the input.
		var e openAIError
		_ = json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&e)
		code := e.Error.Type
		if c, ok := e.Error.Code.(string); ok && c != "" {
			code = c
		}
		if upstream.RetryableStatus(res.StatusCode) {
			return nil, upstream.Temporary(fmt.Errorf("status %d", res.StatusCode), upstream.RetryAfter(res.Header, time.Now()))
		}
		return nil, &StatusError{Provider: "openai", Status: res.StatusCode, Code: code}
	}
	var parsed openAIResponse
	dec := json.NewDecoder(io.LimitReader(res.Body, maxResponseBytes))
	if err := dec.Decode(&parsed); err != nil {
		var netErr net.Error
		if ctx.Err() != nil || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) {
			// The connection broke, or the attempt's time ran out, while the answer came.
			return nil, upstream.Temporary(fmt.Errorf("read response: %w", err), 0)
		}
		return nil, fmt.Errorf("%w: openai: decode response: %v", ErrInvalidResponse, err)
	}
	if len(parsed.Data) != len(batch) {
		return nil, fmt.Errorf("%w: openai: %d vectors for %d texts", ErrInvalidResponse, len(parsed.Data), len(batch))
	}
	out := make([][]float32, len(batch))
	for _, d := range parsed.Data {
		if d.Index == nil || *d.Index < 0 || *d.Index >= len(batch) || out[*d.Index] != nil {
			return nil, fmt.Errorf("%w: openai: missing, out-of-range or repeated index", ErrInvalidResponse)
		}
		v, err := toVector(d.Embedding, o.cfg.Dimensions)
		if err != nil {
			return nil, fmt.Errorf("%w: openai: %v", ErrInvalidResponse, err)
		}
		out[*d.Index] = v
	}
	return out, nil
}

// toVector checks a vector's length and values and converts it.
func toVector(v []float64, dims int) ([]float32, error) {
	if len(v) != dims {
		return nil, fmt.Errorf("a vector of %d values, want %d", len(v), dims)
	}
	out := make([]float32, dims)
	for i, x := range v {
		f := float32(x)
		if math.IsNaN(x) || math.IsInf(float64(f), 0) {
			return nil, errors.New("a vector value that is not a finite number")
		}
		out[i] = f
	}
	return out, nil
}
