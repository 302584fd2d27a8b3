package embedding_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/agentmem/agentmem/shared/embedding"
)

// fuzzAnswer is what a fake provider answers next: one fuzz input at a time.
type fuzzAnswer struct {
	mu         sync.Mutex
	status     int
	retryAfter string
	body       []byte
}

func (a *fuzzAnswer) set(status uint16, retryAfter string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status = int(status)
	if a.status < 200 || a.status > 599 {
		a.status = http.StatusOK
	}
	a.retryAfter, a.body = retryAfter, body
}

func (a *fuzzAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	if a.status >= 400 {
		w.Header().Set("X-Amzn-ErrorType", "ThrottlingException")
	}
	w.WriteHeader(a.status)
	w.Write(a.body) //nolint:errcheck
}

// oneTry makes one request per call and remembers no failure, so every input is judged alone.
var oneTry = embedding.RetryPolicy{MaxAttempts: 1, MaxElapsed: 5 * time.Second, Cooldown: -1}

// checkEmbedded holds what every answer to Embed must be: vectors of the configured size and
// finite values for every text, or an error of the package's vocabulary.
func checkEmbedded(t *testing.T, vecs [][]float32, err error, texts, dims int) {
	t.Helper()
	if err != nil {
		var se *embedding.StatusError
		if !errors.Is(err, embedding.ErrInvalidResponse) && !errors.Is(err, embedding.ErrUnavailable) && !errors.As(err, &se) {
			t.Fatalf("an error outside the vocabulary: %v", err)
		}
		return
	}
	if len(vecs) != texts {
		t.Fatalf("%d vectors for %d texts", len(vecs), texts)
	}
	for _, v := range vecs {
		if len(v) != dims {
			t.Fatalf("a vector of %d values, want %d", len(v), dims)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("a vector holds %v", x)
			}
		}
	}
}

// FuzzOpenAIResponse: whatever an OpenAI-compatible API answers (status, Retry-After, body),
// Embed gives a vector per text or a defined error, and never panics.
func FuzzOpenAIResponse(f *testing.F) {
	f.Add(uint16(200), "", []byte(`{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0.1,0.2]},{"object":"embedding","index":0,"embedding":[0.3,0.4]}],"model":"m"}`))
	f.Add(uint16(200), "", []byte(`{"data":[{"index":0,"embedding":[0.1,0.2]},{"index":0,"embedding":[0.1,0.2]}]}`))
	f.Add(uint16(200), "", []byte(`{"data":[{"index":0,"embedding":[0.1]},{"index":1,"embedding":[1e400,0]}]}`))
	f.Add(uint16(200), "", []byte(`{"data":[{"index":-1,"embedding":[0.1,0.2]},{"embedding":[0.1,0.2]}]}`))
	f.Add(uint16(200), "", []byte(`{"data":null}`))
	f.Add(uint16(200), "", []byte(`{"data":"AAAA"}`))
	f.Add(uint16(200), "", []byte(`Internal error`))
	f.Add(uint16(200), "", []byte(``))
	f.Add(uint16(429), "2", []byte(`{"error":{"message":"slow down","type":"rate_limit_exceeded","code":"rate_limit"}}`))
	f.Add(uint16(429), "1e20", []byte(`{}`))
	f.Add(uint16(503), "Sun, 06 Nov 2094 08:49:37 GMT", []byte(`{"error":{"code":42}}`))
	f.Add(uint16(401), "", []byte(`{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`))
	ans := &fuzzAnswer{}
	srv := httptest.NewServer(ans)
	f.Cleanup(srv.Close)
	const dims = 2
	e, err := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: srv.URL, Model: "text-embedding-3-small", Dimensions: dims, Retry: oneTry})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status uint16, retryAfter string, body []byte) {
		ans.set(status, retryAfter, body)
		vecs, err := e.Embed(context.Background(), []string{"a", "b"})
		checkEmbedded(t, vecs, err, 2, dims)
	})
}

// FuzzBedrockResponse: whatever Bedrock Runtime answers for Titan, Embed gives a vector or a
// defined error, and never panics.
func FuzzBedrockResponse(f *testing.F) {
	vec := "[0.5" + strings.Repeat(",0.25", 255) + "]"
	f.Add(uint16(200), "", []byte(`{"embedding":`+vec+`,"embeddingsByType":{"float":`+vec+`},"inputTextTokenCount":3}`))
	f.Add(uint16(200), "", []byte(`{"embedding":`+strings.Replace(vec, "0.5", "1e400", 1)+`}`))
	f.Add(uint16(200), "", []byte(`{"inputTextTokenCount":3}`))
	f.Add(uint16(200), "", []byte(`{"embedding":[0.1,0.2,0.3]}`))
	f.Add(uint16(200), "", []byte(`{"embedding":"AAAA"}`))
	f.Add(uint16(200), "", []byte(`{"embedding":[1e400,0]}`))
	f.Add(uint16(200), "", []byte(`Internal error`))
	f.Add(uint16(429), "3", []byte(`{"message":"Too many requests"}`))
	f.Add(uint16(500), "", []byte(`{"message":`))
	f.Add(uint16(400), "", []byte(`{"message":"Malformed input request"}`))
	ans := &fuzzAnswer{}
	srv := httptest.NewServer(ans)
	f.Cleanup(srv.Close)
	const dims = 256
	e, err := embedding.NewBedrock(context.Background(), embedding.BedrockConfig{
		Region: "eu-west-1", BaseEndpoint: srv.URL, Dimensions: dims, Retry: oneTry,
		AWS: &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status uint16, retryAfter string, body []byte) {
		ans.set(status, retryAfter, body)
		vecs, err := e.Embed(context.Background(), []string{"a"})
		checkEmbedded(t, vecs, err, 1, dims)
	})
}
