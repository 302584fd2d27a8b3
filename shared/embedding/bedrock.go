package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/agentmem/agentmem/shared/upstream"
)

// DefaultBedrockModel is Amazon Titan Text Embeddings v2, the model used with
// EMBEDDING_PROVIDER=bedrock when none is named.
const DefaultBedrockModel = "amazon.titan-embed-text-v2:0"

// TitanV2Dimensions are the vector sizes Titan Text Embeddings v2 can give.
var TitanV2Dimensions = []int{256, 512, 1024}

// BedrockConfig configures Amazon Bedrock embeddings.
type BedrockConfig struct {
	// Region is the AWS region of the Bedrock endpoint (AWS_REGION); required unless AWS
	// carries one.
	Region string
	// Model is the model id; default DefaultBedrockModel. Titan Text Embeddings v2 ids, or the
	// ARN of a provisioned or imported copy of it (whose size is then not checked here).
	Model string
	// Dimensions is the size of the vectors: 256, 512 or 1024 for Titan v2; default 1024.
	Dimensions int
	// Concurrency is the most requests in flight at once across all calls of this embedder
	// (Titan v2 embeds one text per request); default 4.
	Concurrency int
	// Timeout bounds one request; default 10s.
	Timeout time.Duration
	// Retry bounds the retries of one Embed call. The SDK's own retries are turned off, so
	// that this policy alone decides.
	Retry RetryPolicy
	// AWS is the SDK configuration (credentials, HTTP client); default the SDK's default chain
	// (environment, shared files, the Lambda or container role) for Region.
	AWS *aws.Config
	// BaseEndpoint replaces the regional endpoint: a VPC endpoint, or a test server.
	BaseEndpoint string
	// Logger receives a warning when the provider is given up on; default none.
	Logger *slog.Logger
}

// Bedrock embeds with Amazon Bedrock's InvokeModel and Titan Text Embeddings v2: one text per
// request, body {"inputText", "dimensions", "normalize": true}, answer {"embedding": [...]}.
type Bedrock struct {
	cfg    BedrockConfig
	client *bedrockruntime.Client
	retry  *upstream.Retrier
	// slots bounds the requests in flight.
	slots chan struct{}
}

// NewBedrock checks cfg, loads the AWS configuration when none is given, and returns the
// embedder. It makes no request.
func NewBedrock(ctx context.Context, cfg BedrockConfig) (*Bedrock, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultBedrockModel
	}
	if cfg.Dimensions == 0 {
		cfg.Dimensions = 1024
	}
	switch {
	case strings.Contains(cfg.Model, "titan-embed-text-v2"):
		if !slices.Contains(TitanV2Dimensions, cfg.Dimensions) {
			return nil, fmt.Errorf("bedrock embeddings: %s gives vectors of 256, 512 or 1024 dimensions, not %d",
				cfg.Model, cfg.Dimensions)
		}
	case strings.HasPrefix(cfg.Model, "arn:"):
	default:
		return nil, fmt.Errorf("bedrock embeddings: model %q is not supported; use %s (Titan Text Embeddings v2)",
			cfg.Model, DefaultBedrockModel)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	client, err := upstream.NewBedrock(ctx, cfg.AWS, cfg.Region, cfg.BaseEndpoint, "bedrock embeddings")
	if err != nil {
		return nil, err
	}
	return &Bedrock{
		cfg:    cfg,
		client: client,
		retry:  newRetrier("bedrock", cfg.Retry, cfg.Timeout, cfg.Logger),
		slots:  make(chan struct{}, cfg.Concurrency),
	}, nil
}

// Model implements Embedder.
func (b *Bedrock) Model() string { return b.cfg.Model }

// Dimensions implements Embedder.
func (b *Bedrock) Dimensions() int { return b.cfg.Dimensions }

// Embed implements Embedder: one request per text, at most Concurrency at once. The first
// failure cancels the rest. A text without anything but white space gets the zero vector
// without a request (the model refuses an empty input).
func (b *Bedrock) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	ctx, cancel := b.retry.Budget(ctx)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err; stop(err) })
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, b.cfg.Dimensions)
			continue
		}
		select {
		case b.slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-b.slots }()
			err := b.retry.Do(ctx, func(ctx context.Context) error {
				v, err := b.invoke(ctx, t)
				out[i] = v
				return err
			})
			if err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, fmt.Errorf("embed %d texts: %w", len(texts), first)
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up, or the budget ran out, while requests were queued.
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: bedrock: %w", ErrUnavailable, err)
		}
		return nil, err
	}
	return out, nil
}

type titanRequest struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions"`
	Normalize  bool   `json:"normalize"`
}

type titanResponse struct {
	Embedding []float64 `json:"embedding"`
}

// invoke embeds one text.
func (b *Bedrock) invoke(ctx context.Context, text string) ([]float32, error) {
	body, err := json.Marshal(titanRequest{InputText: text, Dimensions: b.cfg.Dimensions, Normalize: true})
	if err != nil {
		return nil, err
	}
	res, err := b.client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(b.cfg.Model),
		Body:        body,
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
	})
	if err != nil {
		return nil, upstream.ClassifyAWS("bedrock", err)
	}
	var parsed titanResponse
	if err := json.Unmarshal(res.Body, &parsed); err != nil {
		return nil, fmt.Errorf("%w: bedrock: decode response: %v", ErrInvalidResponse, err)
	}
	v, err := toVector(parsed.Embedding, b.cfg.Dimensions)
	if err != nil {
		return nil, fmt.Errorf("%w: bedrock: %v", ErrInvalidResponse, err)
	}
	return v, nil
}
