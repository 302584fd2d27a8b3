// Package adaptertest gives the adapters' fuzz targets a third party that answers whatever the
// fuzzer says: any status, headers and body, over real HTTP, so that an adapter meets the
// answers a broken, hostile or newer receiver (a webhook receiver, QStash, Mem0) could give.
package adaptertest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/upstream"
)

// Answer is what the server answers every request with.
type Answer struct {
	// Status is the final status, 200 to 999 (net/http's server takes no other).
	Status int
	// Header holds the answer's headers.
	Header http.Header
	// Body is the answer's body.
	Body []byte
}

// FuzzAnswer makes an Answer of fuzzed values: status folded into 200 to 999 (informational
// statuses are not final answers), the Retry-After and Retry-After-Ms headers the adapters
// read, one more header of any name, and the body repeated (for bodies past what an adapter
// reads; at most 80 KiB).
func FuzzAnswer(status uint16, retryAfter, retryAfterMs, name, value string, body []byte, repeat uint8) Answer {
	h := http.Header{}
	for k, v := range map[string]string{"Retry-After": retryAfter, "Retry-After-Ms": retryAfterMs, name: value} {
		if k != "" && v != "" {
			h[k] = append(h[k], v)
		}
	}
	if n := int(repeat); n > 1 && len(body) > 0 {
		body = bytes.Repeat(body, min(n, 80<<10/len(body)+1))
	}
	return Answer{Status: 200 + int(status)%800, Header: h, Body: body}
}

// Plain reports whether a's framing is the server's own: no header of the fuzzer's that
// changes how the body is delimited, and a status that may have a body. The client then reads
// the status, headers and body a holds, so an adapter's reading of them can be checked exactly.
func (a Answer) Plain() bool {
	for k, vs := range a.Header {
		switch http.CanonicalHeaderKey(strings.TrimSpace(k)) {
		case "Content-Length", "Transfer-Encoding", "Connection", "Trailer", "Content-Encoding":
			return false
		}
		for _, v := range vs {
			if !printable(v) {
				return false // a malformed answer, which the client refuses
			}
		}
	}
	return a.Status != http.StatusNoContent && a.Status != http.StatusNotModified
}

// printable reports whether a header value is printable ASCII.
func printable(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// Server is a third party answering every request with its current Answer.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	answer Answer
}

// NewServer starts a Server answering 200 with no body; it stops when the test ends.
func NewServer(tb testing.TB) *Server {
	s := &Server{answer: Answer{Status: http.StatusOK}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// Answer sets what the server answers from now on.
func (s *Server) Answer(a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = a
}

func (s *Server) serve(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	a := s.answer
	s.mu.Unlock()
	for k, vs := range a.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(a.Status)
	w.Write(a.Body) //nolint:errcheck // the client may hang up
}

// Outcome is how process-jobs takes an adapter's answer to a delivery.
type Outcome int

// The outcomes of a delivery.
const (
	// Delivered: the job is done.
	Delivered Outcome = iota
	// Retry: the job is tried again after its backoff (or the RetryAfter it asks for).
	Retry
	// Dead: the job goes dead at once (adapter.PermanentError).
	Dead
)

// String names the outcome in a failing target's message.
func (o Outcome) String() string { return [...]string{"delivered", "retry", "dead"}[o] }

// OutcomeOf is how process-jobs takes err.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Delivered
	case adapter.IsPermanent(err):
		return Dead
	}
	return Retry
}

// CheckFailure requires err, a failed delivery or request, to say neither the answer's body
// nor any of secrets, to ask for no wait longer than upstream.MaxRetryAfter, and not to be a
// time-out: the server answered at once, so an adapter that gave up waiting hung on the
// answer.
func CheckFailure(t *testing.T, err error, a Answer, secrets ...string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "no answer in time") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an answer of status %d timed out: %v", a.Status, err)
	}
	// (Long enough never to be a piece of the adapters' own wording by chance.)
	if b := strings.TrimSpace(string(a.Body)); len(b) >= 24 && strings.Contains(msg, b) {
		t.Fatalf("the error %q holds the answer's body", msg)
	}
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			t.Fatalf("the error %q holds a secret", msg)
		}
	}
	if d := adapter.RetryAfter(err); d < 0 || d > upstream.MaxRetryAfter {
		t.Fatalf("an answer of status %d asks to wait %v", a.Status, d)
	}
}
