package embedding_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// bedrockServer speaks Bedrock Runtime's InvokeModel for Titan Text Embeddings v2.
type bedrockServer struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   []map[string]any
	paths    []string
	auth     []string
	inFlight int
	maxIn    int
}

// bedrockAnswer writes the answer to the n-th request (from 1) for its inputText.
type bedrockAnswer func(n int, text string, w http.ResponseWriter)

func newBedrockServer(t *testing.T, answer bedrockAnswer) *bedrockServer {
	t.Helper()
	s := &bedrockServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if r.Method != http.MethodPost || json.Unmarshal(raw, &body) != nil {
			bedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request")
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.paths = append(s.paths, r.URL.Path)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		n := len(s.bodies)
		s.inFlight++
		s.maxIn = max(s.maxIn, s.inFlight)
		s.mu.Unlock()
		defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
		text, _ := body["inputText"].(string)
		answer(n, text, w)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *bedrockServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// bedrockError writes an error as Bedrock Runtime does: the exception in X-Amzn-ErrorType and
// a JSON message.
func bedrockError(w http.ResponseWriter, status int, exception, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", exception+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("X-Amzn-RequestId", "6f1c1b2e-0000-4b5c-8d6e-7f8091a2b3c4")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q}`, message)
}

// titanVectors answers as Titan v2 does, with the vector fakeVector gives the text; a delay
// holds each answer a little so concurrent requests overlap.
func titanVectors(dims int, delay time.Duration) bedrockAnswer {
	return func(_ int, text string, w http.ResponseWriter) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", "3")
		json.NewEncoder(w).Encode(map[string]any{"embedding": fakeVector(text, dims),
			"embeddingsByType": map[string]any{"float": fakeVector(text, dims)}, "inputTextTokenCount": 3})
	}
}

func newBedrock(t *testing.T, srv *bedrockServer, cfg embedding.BedrockConfig) *embedding.Bedrock {
	t.Helper()
	cfg.Region = "eu-west-1"
	cfg.BaseEndpoint = srv.URL
	cfg.AWS = &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	if cfg.Dimensions == 0 {
		cfg.Dimensions = 256
	}
	if cfg.Retry == (embedding.RetryPolicy{}) {
		cfg.Retry = fastRetry
	}
	e, err := embedding.NewBedrock(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestBedrockInvokesTitanPerText(t *testing.T) {
	t.Parallel()
	srv := newBedrockServer(t, titanVectors(256, 30*time.Millisecond))
	e := newBedrock(t, srv, embedding.BedrockConfig{Concurrency: 2})
	texts := []string{"alpha", "bravo", "", "charlie", "delta", "echo"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if text == "" {
			if len(vs[i]) != 256 || vs[i][0] != 0 {
				t.Errorf("blank text: %v", vs[i][:2])
			}
			continue
		}
		if len(vs[i]) != 256 || vs[i][0] != float32(len(text)) || vs[i][1] != float32(text[0]) {
			t.Errorf("text %d (%q): vector starts %v", i, text, vs[i][:2])
		}
	}
	if srv.count() != 5 {
		t.Fatalf("%d requests, want one per non-blank text (5)", srv.count())
	}
	if srv.maxIn > 2 || srv.maxIn < 2 {
		t.Errorf("%d requests in flight at most, want 2", srv.maxIn)
	}
	for i, body := range srv.bodies {
		if srv.paths[i] != "/model/amazon.titan-embed-text-v2:0/invoke" {
			t.Errorf("request %d went to %s", i, srv.paths[i])
		}
		if a := srv.auth[i]; !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") ||
			!strings.Contains(a, "/eu-west-1/bedrock/aws4_request") || !strings.Contains(a, "Signature=") {
			t.Errorf("request %d is not SigV4-signed: %q", i, a)
		}
		if len(body) != 3 || body["dimensions"] != float64(256) || body["normalize"] != true || body["inputText"] == "" {
			t.Errorf("request %d body %v", i, body)
		}
	}
}

func TestBedrockRetriesThrottling(t *testing.T) {
	t.Parallel()
	ok := titanVectors(256, 0)
	srv := newBedrockServer(t, func(n int, text string, w http.ResponseWriter) {
		if n == 1 {
			bedrockError(w, http.StatusTooManyRequests, "ThrottlingException", "Too many requests, please wait before trying again.")
			return
		}
		ok(n, text, w)
	})
	e := newBedrock(t, srv, embedding.BedrockConfig{})
	vs, err := e.Embed(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0][0] != 5 || srv.count() != 2 {
		t.Errorf("vector %v after %d requests", vs[0][:2], srv.count())
	}
}

func TestBedrockGivesUpWithErrUnavailable(t *testing.T) {
	t.Parallel()
	srv := newBedrockServer(t, func(_ int, _ string, w http.ResponseWriter) {
		bedrockError(w, http.StatusInternalServerError, "InternalServerException", "An internal server error occurred.")
	})
	e := newBedrock(t, srv, embedding.BedrockConfig{})
	_, err := e.Embed(context.Background(), []string{"hello"})
	if !errors.Is(err, embedding.ErrUnavailable) || !strings.Contains(err.Error(), "InternalServerException") {
		t.Fatalf("error %v, want ErrUnavailable naming InternalServerException", err)
	}
	if srv.count() != 3 {
		t.Errorf("%d requests, want 3", srv.count())
	}
}

func TestBedrockRefusalIsNotRetried(t *testing.T) {
	t.Parallel()
	srv := newBedrockServer(t, func(_ int, _ string, w http.ResponseWriter) {
		bedrockError(w, http.StatusForbidden, "AccessDeniedException", "You don't have access to the model with the specified model ID.")
	})
	e := newBedrock(t, srv, embedding.BedrockConfig{})
	_, err := e.Embed(context.Background(), []string{"hello"})
	var se *embedding.StatusError
	if !errors.As(err, &se) || se.Status != 403 || se.Code != "AccessDeniedException" || errors.Is(err, embedding.ErrUnavailable) {
		t.Fatalf("error %v, want a 403 AccessDeniedException", err)
	}
	if srv.count() != 1 {
		t.Errorf("%d requests, want 1", srv.count())
	}
}

func TestBedrockRejectsMalformedResponses(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not json":         `Internal error`,
		"no embedding":     `{"inputTextTokenCount": 3}`,
		"wrong dimensions": `{"embedding": [0.1, 0.2, 0.3], "inputTextTokenCount": 3}`,
		"not numbers":      `{"embedding": "AAAA", "inputTextTokenCount": 3}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newBedrockServer(t, func(_ int, _ string, w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body)
			})
			e := newBedrock(t, srv, embedding.BedrockConfig{})
			_, err := e.Embed(context.Background(), []string{"hello"})
			if !errors.Is(err, embedding.ErrInvalidResponse) || errors.Is(err, embedding.ErrUnavailable) {
				t.Fatalf("error %v, want ErrInvalidResponse", err)
			}
			if srv.count() != 1 {
				t.Errorf("%d requests, want 1", srv.count())
			}
		})
	}
}

// One text that fails fails the call, and stops the texts still waiting for a slot.
func TestBedrockOneFailureFailsTheCall(t *testing.T) {
	t.Parallel()
	ok := titanVectors(256, 20*time.Millisecond)
	srv := newBedrockServer(t, func(n int, text string, w http.ResponseWriter) {
		if text == "bad" {
			bedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request")
			return
		}
		ok(n, text, w)
	})
	e := newBedrock(t, srv, embedding.BedrockConfig{Concurrency: 1})
	texts := []string{"bad"}
	for i := range 20 {
		texts = append(texts, fmt.Sprintf("text %d", i))
	}
	_, err := e.Embed(context.Background(), texts)
	var se *embedding.StatusError
	if !errors.As(err, &se) || se.Code != "ValidationException" {
		t.Fatalf("error %v, want the ValidationException", err)
	}
	if srv.count() > 3 {
		t.Errorf("%d requests after the first failed", srv.count())
	}
}

func TestNewBedrockChecksTheModel(t *testing.T) {
	t.Parallel()
	creds := &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	for _, cfg := range []embedding.BedrockConfig{
		{Region: "us-east-1", Dimensions: 384},
		{Region: "us-east-1", Model: "amazon.titan-embed-text-v1"},
		{Region: "us-east-1", Model: "cohere.embed-english-v3", Dimensions: 1024},
		{Dimensions: 1024},
	} {
		cfg.AWS = creds
		if _, err := embedding.NewBedrock(context.Background(), cfg); err == nil {
			t.Errorf("NewBedrock(%+v) succeeded", cfg)
		}
	}
	for _, d := range embedding.TitanV2Dimensions {
		e, err := embedding.NewBedrock(context.Background(), embedding.BedrockConfig{Region: "us-east-1", Dimensions: d, AWS: creds})
		if err != nil || e.Dimensions() != d || e.Model() != embedding.DefaultBedrockModel {
			t.Errorf("Titan v2 with %d dimensions: %v", d, err)
		}
	}
}

// A request that takes longer than Timeout is abandoned and retried, not taken for a refusal.
func TestBedrockTimesOutSlowRequests(t *testing.T) {
	t.Parallel()
	ok := titanVectors(256, 0)
	release := make(chan struct{})
	srv := newBedrockServer(t, func(n int, text string, w http.ResponseWriter) {
		if n == 1 {
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
			return
		}
		ok(n, text, w)
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
	e := newBedrock(t, srv, embedding.BedrockConfig{Timeout: 200 * time.Millisecond})
	start := time.Now()
	if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second || srv.count() != 2 {
		t.Errorf("took %s and %d requests", took, srv.count())
	}
}
