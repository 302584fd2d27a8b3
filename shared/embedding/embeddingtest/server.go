// Package embeddingtest serves an OpenAI-compatible embeddings API (POST .../embeddings) for
// tests: one model, the built-in embedder's vectors folded to the size asked, and the failures
// of a real provider on demand (down, an input refused for good, a slow request).
package embeddingtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/shared/embedding"
)

// Server is the API. Its URL is the base URL to configure (embedding.OpenAIConfig.BaseURL,
// EMBEDDING_BASE_URL).
type Server struct {
	*httptest.Server
	// Down makes every request answer 503 with Retry-After: 0.
	Down atomic.Bool
	// Requests counts the requests that arrived, Texts the texts embedded.
	Requests, Texts atomic.Int64
	// Before, when set (before the first request), runs with each request's texts before it
	// is answered: a test can hold a request there.
	Before func(r *http.Request, input []string)

	refuse atomic.Value // string
}

// New serves model at dims dimensions until the test ends. A request for another model
// answers 400.
func New(t testing.TB, model string, dims int) *Server {
	t.Helper()
	s := &Server{}
	s.refuse.Store("")
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if s.Down.Load() {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`))
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != model {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if s.Before != nil {
			s.Before(r, req.Input)
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, text := range req.Input {
			if text == s.refuse.Load().(string) {
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"error":{"message":"input too long","type":"invalid_request_error"}}`))
				return
			}
			data[i] = item{i, Vector(text, dims)}
		}
		s.Texts.Add(int64(len(req.Input)))
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(s.Close)
	return s
}

// Refuse makes requests holding text answer 400, as a model answers an input it cannot take;
// "" refuses nothing.
func (s *Server) Refuse(text string) { s.refuse.Store(text) }

// Vector is the server's vector of text: the built-in embedder's, folded to dims values (the
// same vector at its own size, 384).
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	for j, x := range (embedding.Hash{}).Vector(text) {
		v[j%dims] += x
	}
	return v
}
