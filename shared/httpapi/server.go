// Package httpapi serves agentmem's functions over HTTP: one http.Handler per function, the same
// in the local server, in Lambda and in tests. It owns the transport rules of the contract:
// authentication first, POST only, JSON bodies decoded strictly, problem+json errors, CORS and
// request ids.
package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
)

// Verifier checks a bearer token and says who is calling.
type Verifier interface {
	Verify(ctx context.Context, token string) (auth.Principal, error)
}

// Config configures the functions.
type Config struct {
	// AllowedOrigins are the browser origins allowed by CORS; default ["*"].
	AllowedOrigins []string
	// DefaultRetention is the lifetime of stored rows when a request sets none; default 720h.
	DefaultRetention time.Duration
	// NotesMaxChars is the size limit of one agent's notes about a user, in characters;
	// default memory.DefaultNotesMaxChars (20,000).
	NotesMaxChars int
	// RequestTimeout bounds one request when the caller's context has no sooner deadline;
	// default 25s.
	RequestTimeout time.Duration
}

// Server holds what every function needs. Build it once per process (per Lambda container).
type Server struct {
	store    *store.Store
	verifier Verifier
	log      *slog.Logger
	cfg      Config
	origins  map[string]bool
	anyOrig  bool
}

// NewServer builds a Server.
func NewServer(st *store.Store, v Verifier, log *slog.Logger, cfg Config) *Server {
	if len(cfg.AllowedOrigins) == 0 {
		cfg.AllowedOrigins = []string{"*"}
	}
	if cfg.DefaultRetention <= 0 {
		cfg.DefaultRetention = 720 * time.Hour
	}
	if cfg.NotesMaxChars <= 0 {
		cfg.NotesMaxChars = memory.DefaultNotesMaxChars
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 25 * time.Second
	}
	s := &Server{store: st, verifier: v, log: log, cfg: cfg, origins: map[string]bool{}}
	for _, o := range cfg.AllowedOrigins {
		o = strings.TrimSpace(o)
		if o == "*" {
			s.anyOrig = true
		} else if o != "" {
			s.origins[strings.TrimRight(o, "/")] = true
		}
	}
	return s
}

// Functions lists the names of the functions this server serves.
func (s *Server) Functions() []string { return FunctionNames() }

// FunctionNames lists every function's name, sorted: the set is fixed at build time.
func FunctionNames() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Handler is the http.Handler of one function; it ignores the path. It panics on an unknown
// name: the set of functions is fixed at build time. It sets the request id and CORS headers
// itself, as it is the whole server in Lambda.
func (s *Server) Handler(name string) http.Handler {
	fn, ok := functions[name]
	if !ok {
		panic("httpapi: unknown function " + name)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, s.stamp(w, r), name, fn) })
}

// Mux serves every function at POST /v1/<name>, as the local server and API Gateway do. The
// request id and CORS headers are set once, around everything, so that every answer carries
// them: the functions', the health check's, a 404 and the redirects ServeMux answers for
// unclean paths.
func (s *Server) Mux() http.Handler {
	mux := http.NewServeMux()
	for _, name := range s.Functions() {
		fn := functions[name]
		mux.HandleFunc("/v1/"+name, func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, stampedID(r), name, fn) })
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.store.Ping(ctx); err != nil {
			rid := stampedID(r)
			s.log.WarnContext(r.Context(), "health check failed", "request_id", rid, "error", err)
			s.writeError(w, r, rid, apierror.New(apierror.Unavailable, "the database is unavailable"))
			return
		}
		w.Write([]byte("ok\n")) //nolint:errcheck
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, stampedID(r), apierror.Newf(apierror.NotFound, "no function at %s; functions are served at POST /v1/<name>", r.URL.Path))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := s.stamp(w, r)
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, rid)))
	})
}

// stamp sets what every answer carries, the request id and, for a browser, the CORS headers,
// and returns the request id.
func (s *Server) stamp(w http.ResponseWriter, r *http.Request) string {
	rid := requestID(r)
	w.Header().Set("X-Request-Id", rid)
	s.cors(w, r)
	return rid
}

// requestIDKey holds, in a request's context, the request id Mux stamped on its answer.
type requestIDKey struct{}

// stampedID is the request id Mux set for r.
func stampedID(r *http.Request) string {
	rid, _ := r.Context().Value(requestIDKey{}).(string)
	return rid
}

// call is one request on its way through a function.
type call struct {
	principal auth.Principal
	body      []byte
	r         *http.Request
	requestID string
	// replayed marks an answer replayed for an idempotent retry.
	replayed bool
}

// function is what each function does once the transport rules have passed.
type function struct {
	serviceOnly bool
	run         func(s *Server, ctx context.Context, c *call) (status int, body any, err error)
}

var functions = map[string]function{}

// serve runs one function; the request id and CORS headers are already set on w.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, rid, name string, fn function) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	var code apierror.Code
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("panic: %v", p)
			code = apierror.Internal
			s.log.ErrorContext(r.Context(), "panic", "request_id", rid, "fn", name, "error", err)
			if rec.status == 0 {
				s.writeError(rec, r, rid, apierror.As(err))
			}
		}
		attrs := []any{"request_id", rid, "fn", name, "status", rec.status,
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000}
		if code != "" {
			attrs = append(attrs, "code", string(code))
		}
		s.log.InfoContext(r.Context(), "request", attrs...)
	}()

	if r.Method == http.MethodOptions {
		s.preflight(rec, r)
		return
	}
	status, body, replayed, err := s.handle(r, rid, name, fn)
	if err != nil {
		ae := apierror.As(err)
		code = ae.Code
		if ae.Code.Status() >= 500 {
			s.log.ErrorContext(r.Context(), "request failed", "request_id", rid, "fn", name,
				"code", string(ae.Code), "error", errorForLog(ae))
		}
		s.writeError(rec, r, rid, ae)
		return
	}
	if replayed {
		rec.Header().Set("Idempotent-Replayed", "true")
	}
	s.writeJSON(rec, r, rid, status, body)
}

func (s *Server) handle(r *http.Request, rid, name string, fn function) (int, any, bool, error) {
	// Authentication comes before everything else.
	token, err := auth.ParseBearer(r.Header.Get("Authorization"))
	if err != nil {
		return 0, nil, false, err
	}
	ctx, cancel := context.WithDeadline(r.Context(), workDeadline(r.Context(), s.cfg.RequestTimeout))
	defer cancel()
	principal, err := s.verifier.Verify(ctx, token)
	if err != nil {
		return 0, nil, false, err
	}
	if r.Method != http.MethodPost {
		return 0, nil, false, apierror.Newf(apierror.MethodNotAllowed, "%s is not allowed; use POST", r.Method)
	}
	if fn.serviceOnly && !principal.IsService() {
		return 0, nil, false, apierror.Newf(apierror.Forbidden, "%s is for service callers only", name)
	}
	body, err := readBody(r)
	if err != nil {
		return 0, nil, false, err
	}
	c := &call{principal: principal, body: body, r: r, requestID: rid}
	status, out, err := fn.run(s, ctx, c)
	return status, out, c.replayed, err
}

// workDeadline is when work given budget d from now must end: d from now, or sooner when ctx's
// own deadline (a Lambda invocation's) leaves less, keeping headroom to send the answer, so a
// client gets a 503 with Retry-After rather than the platform's bare timeout.
func workDeadline(ctx context.Context, d time.Duration) time.Time {
	end := time.Now().Add(d)
	if cd, ok := ctx.Deadline(); ok {
		headroom := min(time.Second, time.Until(cd)/10)
		if cd.Add(-headroom).Before(end) {
			end = cd.Add(-headroom)
		}
	}
	return end
}

// errorForLog is the cause of an error without anything a client sent.
func errorForLog(e *apierror.Error) string {
	if e.Cause != nil {
		return e.Cause.Error()
	}
	return e.Detail
}

// requestID echoes a sane X-Request-Id or makes one.
func requestID(r *http.Request) string {
	id := r.Header.Get("X-Request-Id")
	if id != "" && len(id) <= 128 && printableASCII(id) {
		return id
	}
	return uuid.NewString()
}

// printableASCII reports whether s is printable ASCII, all a header value we echo or key on
// may hold.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}
