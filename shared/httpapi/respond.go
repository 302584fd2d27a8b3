package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
)

// problem is an RFC 9457 problem details body.
type problem struct {
	Type      string                `json:"type"`
	Title     string                `json:"title"`
	Status    int                   `json:"status"`
	Code      apierror.Code         `json:"code"`
	Detail    string                `json:"detail"`
	Errors    []apierror.FieldError `json:"errors,omitempty"`
	RequestID string                `json:"request_id"`
}

// statuses maps each code of the vocabulary to its HTTP status; a code not in it is a 500.
var statuses = map[apierror.Code]int{
	apierror.InvalidRequest:       http.StatusBadRequest,
	apierror.Unauthenticated:      http.StatusUnauthorized,
	apierror.Forbidden:            http.StatusForbidden,
	apierror.NotFound:             http.StatusNotFound,
	apierror.MethodNotAllowed:     http.StatusMethodNotAllowed,
	apierror.Conflict:             http.StatusConflict,
	apierror.PayloadTooLarge:      http.StatusRequestEntityTooLarge,
	apierror.HeadersTooLarge:      http.StatusRequestHeaderFieldsTooLarge,
	apierror.UnsupportedMediaType: http.StatusUnsupportedMediaType,
	apierror.RateLimited:          http.StatusTooManyRequests,
	apierror.Unavailable:          http.StatusServiceUnavailable,
	apierror.Internal:             http.StatusInternalServerError,
}

// Status is the HTTP status of an error code.
func Status(c apierror.Code) int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// The Retry-After policy, in seconds, of a 503 or 429 whose error names no wait of its own.
const (
	// retryAfterBusy: a timeout, an overloaded server or pooler; a moment is enough.
	retryAfterBusy = 1
	// retryAfterDatabaseDown: the connection broke; a restart or failover takes longer.
	retryAfterDatabaseDown = 2
	// retryAfterEmbeddingDown: the embedding provider failed after its own retries.
	retryAfterEmbeddingDown = 5
)

// retryAfter is the Retry-After of an error: the wait it names, else the policy's by cause.
func retryAfter(e *apierror.Error) int {
	switch {
	case e.RetryAfter > 0:
		return e.RetryAfter
	case errors.Is(e, app.ErrDatabaseLost):
		return retryAfterDatabaseDown
	case errors.Is(e, app.ErrEmbeddingUnavailable):
		return retryAfterEmbeddingDown
	}
	return retryAfterBusy
}

// writeError renders every error of every function: the one place errors become HTTP.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, rid string, e *apierror.Error) {
	status := Status(e.Code)
	detail := e.Detail
	if status >= 500 && e.Code == apierror.Internal {
		detail = "an internal error occurred; the request id identifies it in the logs"
	}
	h := w.Header()
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		h.Set("Retry-After", strconv.Itoa(retryAfter(e)))
	}
	if status == http.StatusMethodNotAllowed {
		h.Set("Allow", "POST, OPTIONS")
	}
	if status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", `Bearer realm="agentmem"`)
	}
	body, _ := json.Marshal(problem{
		Type: "about:blank", Title: http.StatusText(status), Status: status, Code: e.Code,
		Detail: detail, Errors: e.Fields, RequestID: rid,
	})
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n')) //nolint:errcheck
}

func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, rid string, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		// Every response marshals; reaching this is a bug, answered like any other.
		s.log.ErrorContext(r.Context(), "encode response", "error", err)
		s.writeError(w, r, rid, apierror.As(err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) //nolint:errcheck
}

// cors adds the CORS headers of an allowed browser origin to every answer, errors included.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	switch {
	case s.anyOrig:
		h.Set("Access-Control-Allow-Origin", "*")
	case s.origins[strings.TrimRight(origin, "/")]:
		h.Set("Access-Control-Allow-Origin", origin)
	default:
		return
	}
	h.Set("Access-Control-Expose-Headers", "X-Request-Id, Idempotent-Replayed, Retry-After, WWW-Authenticate, "+PositionHeader)
}

// preflight answers a browser's OPTIONS request.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, X-Request-Id, Mcp-Protocol-Version, "+PositionHeader)
		h.Set("Access-Control-Max-Age", "600")
	}
	h.Set("Allow", "POST, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
}
