package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/shared/apierror"
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

// writeError renders every error of every function: the one place errors become HTTP.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, rid string, e *apierror.Error) {
	status := e.Code.Status()
	detail := e.Detail
	if status >= 500 && e.Code == apierror.Internal {
		detail = "an internal error occurred; the request id identifies it in the logs"
	}
	h := w.Header()
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		ra := e.RetryAfter
		if ra <= 0 {
			ra = 1
		}
		h.Set("Retry-After", strconv.Itoa(ra))
	}
	if status == http.StatusMethodNotAllowed {
		h.Set("Allow", "POST, OPTIONS")
	}
	if status == http.StatusUnauthorized {
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
	h.Set("Access-Control-Expose-Headers", "X-Request-Id, Idempotent-Replayed, Retry-After")
}

// preflight answers a browser's OPTIONS request.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, X-Request-Id")
		h.Set("Access-Control-Max-Age", "600")
	}
	h.Set("Allow", "POST, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
}
