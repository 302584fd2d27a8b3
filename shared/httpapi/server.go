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
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/reqlog"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// Verifier checks a bearer token and says who is calling.
type Verifier interface {
	Verify(ctx context.Context, token string) (auth.Principal, error)
}

// Config configures the HTTP side of the functions.
type Config struct {
	// AllowedOrigins are the browser origins allowed by CORS; default ["*"].
	AllowedOrigins []string
	// RequestTimeout bounds one request when the caller's context has no sooner deadline;
	// default 25s.
	RequestTimeout time.Duration
	// RefuseAnonymous answers 403 to every request of a user of Supabase's anonymous sign-ins
	// (AUTH_ALLOW_ANONYMOUS=false); default false: they are served like any other user.
	RefuseAnonymous bool
	// AuthorizationServers issue the tokens the functions take, for the mcp function's
	// protected resource metadata: $SUPABASE_URL/auth/v1 when SUPABASE_URL is set; default
	// none.
	AuthorizationServers []string
	// MCP serves the mcp function's messages once the caller is authenticated (Caller gives
	// it): mcpserver.Handler. It is given rather than built here so that only the processes
	// serving mcp link the MCP SDK. Default none: mcp answers not_found.
	MCP http.Handler
}

// Server holds what every function needs. Build it once per process (per Lambda container).
type Server struct {
	app      *app.App
	verifier Verifier
	log      *slog.Logger
	cfg      Config
	origins  map[string]bool
	anyOrig  bool
}

// NewServer builds a Server over the use cases a.
func NewServer(a *app.App, v Verifier, log *slog.Logger, cfg Config) *Server {
	if len(cfg.AllowedOrigins) == 0 {
		cfg.AllowedOrigins = []string{"*"}
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 25 * time.Second
	}
	s := &Server{app: a, verifier: v, log: log, cfg: cfg, origins: map[string]bool{}}
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

// Functions lists the names of the functions this server serves, in the order of Routes.
func (s *Server) Functions() []string {
	routes := s.Routes()
	names := make([]string, len(routes))
	for i, rt := range routes {
		names[i] = rt.Name
	}
	return names
}

// handler is the http.Handler of one function; it ignores the path. Alone (in Lambda) it is
// the whole server and sets the request id and CORS headers itself; under Mux, which set them
// around everything, it takes the request id Mux stamped.
func (s *Server) handler(fn function) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := stampedID(r)
		if rid == "" {
			rid = s.stamp(w, r)
			if s.refuseLargeHeaders(w, r, rid) {
				return
			}
		}
		s.serve(w, r, rid, fn)
	})
}

// Mux serves every function of Routes at POST /v1/<name>, as the local server and API Gateway
// do. The request id and CORS headers are set once, around everything, so that every answer
// carries them: the functions', the health check's, a 404 and the redirects ServeMux answers
// for unclean paths.
func (s *Server) Mux() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.Routes() {
		mux.Handle("/v1/"+rt.Name, rt.Handler)
		if rt.Name == "mcp" {
			mux.Handle(ResourceMetadataPath+"/v1/mcp", rt.Handler)
		}
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.app.Ping(ctx); err != nil {
			rid := stampedID(r)
			s.log.WarnContext(r.Context(), "health check failed", "error", err)
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
		if s.refuseLargeHeaders(w, r, rid) {
			return
		}
		mux.ServeHTTP(w, r.WithContext(reqlog.WithRequestID(r.Context(), rid)))
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

// stampedID is the request id Mux set for r, "" outside Mux.
func stampedID(r *http.Request) string { return reqlog.RequestID(r.Context()) }

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
	name        string
	serviceOnly bool
	// resource marks a function whose 401 names its protected resource metadata (mcp).
	resource bool
	run      func(s *Server, ctx context.Context, c *call) (status int, body any, err error)
}

// serve runs one function; the request id and CORS headers are already set on w.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, rid string, fn function) {
	name := fn.name
	// Every line logged for the request, here and in the use cases, carries its id.
	ctx, span := telemetry.StartFunction(reqlog.WithRequestID(r.Context(), rid), name, rid)
	r = r.WithContext(ctx)
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	var code apierror.Code
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("panic: %v", p)
			code = apierror.Internal
			s.log.ErrorContext(r.Context(), "panic", "fn", name, "error", err)
			if rec.status == 0 {
				s.writeError(rec, r, rid, apierror.As(err))
			}
		}
		attrs := []any{"fn", name, "status", rec.status,
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000}
		if code != "" {
			attrs = append(attrs, "code", string(code))
		}
		s.log.InfoContext(r.Context(), "request", attrs...)
		span.EndFunction(r.Context(), rec.status, code)
	}()

	if r.Method == http.MethodOptions {
		s.preflight(rec, r)
		return
	}
	status, body, ans, err := s.handle(r, rid, fn, span)
	if err != nil {
		ae := app.Problem(err)
		code = ae.Code
		if !ae.Code.CallerFault() {
			s.log.ErrorContext(r.Context(), "request failed", "fn", name,
				"code", string(ae.Code), "error", errorForLog(ae))
		}
		if fn.resource && ae.Code == apierror.Unauthenticated {
			rec.Header().Set("WWW-Authenticate", challenge(r))
		}
		s.writeError(rec, r, rid, ae)
		return
	}
	if ans.position != "" {
		rec.Header().Set(PositionHeader, ans.position)
	}
	if a, ok := body.(*bufferedAnswer); ok {
		a.writeTo(rec)
		return
	}
	if ans.replayed {
		rec.Header().Set("Idempotent-Replayed", "true")
	}
	s.writeJSON(rec, r, rid, status, body)
}

// answered is what an answer's headers say besides its body.
type answered struct {
	// replayed marks an answer replayed for an idempotent retry.
	replayed bool
	// position is the PositionHeader of an answer to writes, "" for none.
	position string
}

func (s *Server) handle(r *http.Request, rid string, fn function, span telemetry.Span) (int, any, answered, error) {
	// Authentication comes before everything else.
	token, err := auth.ParseBearer(r.Header.Get("Authorization"))
	if err != nil {
		return 0, nil, answered{}, err
	}
	ctx, cancel := context.WithDeadline(r.Context(), app.WorkDeadline(r.Context(), s.cfg.RequestTimeout))
	defer cancel()
	principal, err := s.verifier.Verify(ctx, token)
	if err != nil {
		return 0, nil, answered{}, err
	}
	if r.Method != http.MethodPost {
		return 0, nil, answered{}, apierror.Newf(apierror.MethodNotAllowed, "%s is not allowed; use POST", r.Method)
	}
	if principal.Anonymous && s.cfg.RefuseAnonymous {
		return 0, nil, answered{}, apierror.New(apierror.Forbidden, "anonymous users are not accepted by this deployment; sign in first")
	}
	if fn.serviceOnly && !principal.IsService() {
		return 0, nil, answered{}, apierror.Newf(apierror.Forbidden, "%s is for service callers only", fn.name)
	}
	body, err := readBody(r)
	span.SetCaller(principal.Role, len(body))
	if err != nil {
		return 0, nil, answered{}, err
	}
	if ctx, err = readAfter(ctx, r); err != nil {
		return 0, nil, answered{}, err
	}
	c := &call{principal: principal, body: body, r: r, requestID: rid}
	// The rate limit comes before any work, so a request over it changes nothing.
	if err := s.limit(ctx, c); err != nil {
		return 0, nil, answered{}, err
	}
	ctx = store.NoteWrites(ctx)
	status, out, err := fn.run(s, ctx, c)
	if err != nil {
		return 0, nil, answered{}, err
	}
	ans := answered{replayed: c.replayed}
	if pos, ok, err := s.app.WritePosition(ctx); err != nil {
		// The writes are done: the answer goes without a position, and this process sends the
		// users' reads to the primary for a while (see store.Store.WritePosition).
		s.log.WarnContext(ctx, "write position unknown", "fn", fn.name, "error", err)
	} else if ok {
		ans.position = pos.String()
	}
	return status, out, ans, nil
}

// PositionHeader carries a position in the primary's write-ahead log (store.Position): an
// answer to writes gives the position after them, when the deployment has read replicas; a
// request that sends it back is answered from a replica only once that replica has replayed it,
// so that it sees those writes.
const PositionHeader = "Agentmem-Position"

// readAfter is ctx whose reads see the position r carries in PositionHeader; a header that is
// not a position answers invalid_request.
func readAfter(ctx context.Context, r *http.Request) (context.Context, error) {
	values := r.Header.Values(PositionHeader)
	if len(values) == 0 {
		return ctx, nil
	}
	p, err := store.ParsePosition(values[0])
	if err != nil || len(values) > 1 {
		var f apierror.Fields
		f.Add(PositionHeader, "must be one position, 16 hexadecimal digits, as an answer's "+PositionHeader+" gave it")
		return ctx, f.Err()
	}
	return store.ReadAfter(ctx, p), nil
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
	if id != "" && len(id) <= 128 && app.PrintableASCII(id) {
		return id
	}
	return uuid.NewString()
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
