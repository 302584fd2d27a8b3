package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/auth"
)

// ResourceMetadataPath is where the mcp function's OAuth protected resource metadata (RFC
// 9728) is served: at the root of a Function URL, and before /v1/mcp under the local server
// and API Gateway, as RFC 9728 places it for a resource with a path.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// MCP is the handler of mcp: a Model Context Protocol server over the Streamable HTTP
// transport, stateless, so that any container answers any request. The bearer token is
// checked like every function's before any MCP message is read; then Config.MCP (package
// mcpserver) serves the message, its tools acting as Caller. A GET of ResourceMetadataPath answers the resource metadata that a
// 401's WWW-Authenticate points to, without a token.
func (s *Server) MCP() http.Handler {
	fn := s.handler(function{name: "mcp", resource: true, run: (*Server).mcp})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, ResourceMetadataPath) && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			s.resourceMetadata(w, r)
			return
		}
		fn.ServeHTTP(w, r)
	})
}

// principalKey carries the verified caller of an MCP request to its tools.
type principalKey struct{}

// Caller is the authenticated caller of the mcp request whose context ctx is: what its tools
// act for.
func Caller(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// DecodeStrict decodes a JSON object into dst by the rules of every function's body (unknown
// fields, NUL characters, duplicate names, trailing data are invalid_request naming what is
// wrong), for the arguments of the mcp function's tools.
func DecodeStrict(body []byte, dst any) error { return decode(body, dst) }

// RetryAfter is the wait in seconds that a 429 or 503 of e tells a client.
func RetryAfter(e *apierror.Error) int { return retryAfter(e) }

// mcp serves one MCP message (or batch) once the transport rules have passed: the body
// read is handed to the SDK's handler, and its answer is written as it comes, but a plain
// text error of the SDK's transport becomes a problem like every other function's.
func (s *Server) mcp(ctx context.Context, c *call) (int, any, error) {
	if s.cfg.MCP == nil {
		return 0, nil, apierror.New(apierror.NotFound, "this process does not serve mcp")
	}
	r := c.r.Clone(context.WithValue(ctx, principalKey{}, c.principal))
	r.Body = io.NopCloser(bytes.NewReader(c.body))
	r.ContentLength = int64(len(c.body))
	buf := &bufferedAnswer{header: http.Header{}}
	s.cfg.MCP.ServeHTTP(buf, r)
	if buf.status >= 400 && !strings.HasPrefix(buf.header.Get("Content-Type"), "application/json") {
		return 0, nil, transportProblem(buf.status, buf.body.String())
	}
	return 0, buf, nil
}

// transportProblem is the problem of a plain text error of the SDK's transport (a missing
// Accept, a body that is not JSON-RPC).
func transportProblem(status int, text string) error {
	code := apierror.InvalidRequest
	for c, st := range statuses {
		if st == status && c.CallerFault() {
			code = c
		}
	}
	return apierror.New(code, strings.TrimSpace(text))
}

// bufferedAnswer holds what the SDK's handler answered, to be written as it is: in the
// JSONResponse mode every answer is one JSON document, so nothing streams.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// writeTo writes the answer to w, keeping what w already carries (request id, CORS).
func (b *bufferedAnswer) writeTo(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	h.Set("Cache-Control", "no-store")
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	w.Write(b.body.Bytes()) //nolint:errcheck
}

// resourceURL is the URL the client called the mcp function at, the resource of RFC 9728: a
// loopback host is served over http, anything else over https (Function URLs, API Gateway),
// unless a proxy says otherwise.
func resourceURL(r *http.Request) (resource, metadata string) {
	scheme := "https"
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	} else if host, _, err := net.SplitHostPort(r.Host); (err == nil && isLoopback(host)) || isLoopback(r.Host) {
		scheme = "http"
	}
	path := strings.TrimPrefix(r.URL.Path, ResourceMetadataPath)
	if path == "/" {
		path = ""
	}
	base := scheme + "://" + r.Host
	return base + path, base + ResourceMetadataPath + path
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// challenge is the WWW-Authenticate of a 401 from mcp, naming the resource metadata as
// MCP's authorization spec asks.
func challenge(r *http.Request) string {
	_, metadata := resourceURL(r)
	return `Bearer realm="agentmem", resource_metadata="` + metadata + `"`
}

// resourceMetadata answers the OAuth protected resource metadata of the mcp function: the
// resource, the Supabase Auth server that issues its tokens when one is configured, and that
// tokens go in the Authorization header.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	s.stamp(w, r)
	resource, _ := resourceURL(r)
	md := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name"`
	}{resource, s.cfg.AuthorizationServers, []string{"header"}, "agentmem"}
	b, _ := json.Marshal(md)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(append(b, '\n')) //nolint:errcheck
	}
}
