package httpapi

import (
	"net/http"
	"time"

	"github.com/agentmem/agentmem/shared/apierror"
)

// MaxHeaderBytes is the most a request's line and headers may take (names, values and the
// separators of the wire form). Over it a request answers 431 request_header_fields_too_large
// as problem+json, with the request id and CORS headers like every answer. No valid request
// comes near it: a token is at most 16 KiB.
const MaxHeaderBytes = 64 << 10

// listenMaxHeaderBytes is the local server's own cap on a request's headers, which net/http
// enforces before any handler runs with a bare text/plain 431. It is well above MaxHeaderBytes
// so that every request a browser or an ordinary client can send reaches the handler and gets
// the problem+json answer; only a request past it (a deliberate flood) meets the bare one.
const listenMaxHeaderBytes = 4 << 20

// NewHTTPServer is the local server's http.Server for h at addr: the timeouts of a server
// exposed to clients, and a header cap that leaves the 431 to the handler (see MaxHeaderBytes).
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    listenMaxHeaderBytes,
	}
}

// headerBytes is the size of r's request line and headers as they came on the wire.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.URL.RequestURI()) + 1 + len(r.Proto) + 2
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n + len(r.Host) + len("Host: \r\n")
}

// refuseLargeHeaders answers 431 to a request whose headers are over MaxHeaderBytes, the
// local server's and Lambda's alike (an event's headers are not bounded by the platform when
// the function is invoked directly), and reports whether it did.
func (s *Server) refuseLargeHeaders(w http.ResponseWriter, r *http.Request, rid string) bool {
	if headerBytes(r) <= MaxHeaderBytes {
		return false
	}
	s.log.InfoContext(r.Context(), "request", "request_id", rid, "status", http.StatusRequestHeaderFieldsTooLarge,
		"code", string(apierror.HeadersTooLarge))
	s.writeError(w, r, rid, apierror.Newf(apierror.HeadersTooLarge,
		"the request line and headers are over %d bytes", MaxHeaderBytes))
	return true
}
