// Package lambdaentry runs an ordinary http.Handler as an AWS Lambda function.
//
// Every agentmem function is an http.Handler, so the local dev server, the tests and Lambda
// run the same code. This package is the Lambda side of that: it turns the invocation event
// into an *http.Request, runs the handler against an in-memory response writer, and turns what
// the handler wrote into the response object Lambda expects. It understands:
//
//   - Lambda Function URL events and API Gateway HTTP API events with payload format 2.0
//     (one shape: "version": "2.0", requestContext.http.method);
//   - API Gateway REST API proxy events and HTTP API payload format 1.0 (httpMethod);
//   - EventBridge scheduled events, and [ProcessJobsEvent], handed to [Options.Scheduled].
//
// The response is buffered: the handler runs to completion and its whole body is returned in
// one JSON response object, which is what Function URLs in the BUFFERED invoke mode, API
// Gateway and `sam local start-api` all accept. aws-lambda-go's lambdaurl.Start streams
// instead and only works behind a Function URL in RESPONSE_STREAM mode, which neither API
// Gateway nor `sam local` can serve; agentmem's answers are small JSON documents, so streaming
// buys nothing and buffering keeps one binary valid behind every front door. Buffered responses
// are subject to Lambda's 6 MB response payload limit.
//
// The handler's context is the invocation context, so it carries the Lambda deadline
// (ctx.Deadline) that request budgets derive from.
package lambdaentry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// Options configures a Lambda entry point.
type Options struct {
	// Scheduled, when non-nil, handles EventBridge scheduled events
	// ({"source":"aws.events","detail-type":"Scheduled Event",...}); its result is the
	// invocation's result. Functions that take no scheduled event leave it nil (the default);
	// such an event is then an error.
	//
	// A scheduled event only arrives by direct invocation (EventBridge, or an IAM principal
	// allowed lambda:InvokeFunction): Function URLs and API Gateway always wrap what a client
	// sends in an HTTP event, so no HTTP client can pass one off as a schedule.
	Scheduled func(ctx context.Context, event events.EventBridgeEvent) (any, error)
	// AfterAnswer, when non-nil, returns once the work the invocations so far left for after
	// their answers is done (a committed turn's messages, embedded after the answer), or when
	// ctx ends. The function then runs an internal Lambda extension (shared/lambdaext) that
	// keeps the environment from being frozen after each invocation until AfterAnswer returns.
	AfterAnswer func(ctx context.Context)
}

// ProcessJobsEvent is the event a function that wrote jobs sends the process-jobs function
// (shared/lambdainvoke, an asynchronous invocation) to start delivering them at once. It goes
// to Options.Scheduled, like a scheduled event: only an IAM principal allowed
// lambda:InvokeFunction can send it, never an HTTP client.
var ProcessJobsEvent = []byte(`{"source":"` + processJobsSource + `","detail-type":"` + processJobsDetailType + `","detail":{}}`)

const (
	processJobsSource     = "agentmem"
	processJobsDetailType = "Process Jobs"
)

// ErrUnsupportedEvent is returned (wrapped) for an event that is neither an HTTP request nor a
// scheduled event this function accepts. The invocation fails; there is nobody to answer.
var ErrUnsupportedEvent = errors.New("unsupported event")

// EventError is the error of an invocation whose event cannot be served: Lambda reports the
// name of the error's type as the invocation's errorType, so this names what went wrong where a
// wrapped error would say only "wrapError". It wraps ErrUnsupportedEvent, or the error decoding
// an event that looked like one this function serves.
type EventError struct {
	err error
}

// Error says what the event was (never its content).
func (e *EventError) Error() string { return e.err.Error() }

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *EventError) Unwrap() error { return e.err }

// eventError formats an EventError as fmt.Errorf does.
func eventError(format string, args ...any) error {
	return &EventError{err: fmt.Errorf(format, args...)}
}

// HTTPResponse is the answer to an HTTP API (payload 2.0) or Function URL event: the fields of
// events.APIGatewayV2HTTPResponse, with those that are empty left out of the JSON rather than
// sent as null (multiValueHeaders, which payload 2.0 has no use for, and cookies).
type HTTPResponse struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded"`
	Cookies           []string            `json:"cookies,omitempty"`
}

// RESTResponse is the answer to a REST API (payload 1.0) event: the fields of
// events.APIGatewayProxyResponse, multiValueHeaders left out when empty rather than null.
type RESTResponse struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded"`
}

// Handler returns the function passed to lambda.Start: it takes the raw event and returns the
// response. HTTP events always reach h (a malformed body reaches it as a body whose Read
// fails), so every answer carries whatever h adds to all responses (CORS, X-Request-Id);
// only events that are not HTTP requests fail the invocation.
func Handler(h http.Handler, opts Options) func(ctx context.Context, raw json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var probe struct {
			Version        string `json:"version"`
			HTTPMethod     string `json:"httpMethod"`
			Source         string `json:"source"`
			DetailType     string `json:"detail-type"`
			RequestContext struct {
				HTTP struct {
					Method string `json:"method"`
				} `json:"http"`
			} `json:"requestContext"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, eventError("lambdaentry: decode event: %w", ErrUnsupportedEvent)
		}
		switch {
		case probe.RequestContext.HTTP.Method != "":
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, eventError("lambdaentry: decode HTTP (v2) event: %w", err)
			}
			return serveV2(ctx, h, &ev), nil
		case probe.Version == "2.0":
			return nil, eventError("lambdaentry: version 2.0 event without requestContext.http.method: %w", ErrUnsupportedEvent)
		case probe.HTTPMethod != "":
			var ev events.APIGatewayProxyRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, eventError("lambdaentry: decode REST (v1) event: %w", err)
			}
			return serveV1(ctx, h, &ev), nil
		case probe.Source == "aws.events" && probe.DetailType == "Scheduled Event",
			probe.Source == processJobsSource && probe.DetailType == processJobsDetailType:
			if opts.Scheduled == nil {
				return nil, eventError("lambdaentry: this function takes no scheduled event: %w", ErrUnsupportedEvent)
			}
			var ev events.EventBridgeEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, eventError("lambdaentry: decode scheduled event: %w", err)
			}
			return opts.Scheduled(ctx, ev)
		default:
			// Name only the top-level keys: the values may hold content or credentials.
			return nil, eventError("lambdaentry: event with keys %s: %w", topLevelKeys(raw), ErrUnsupportedEvent)
		}
	}
}

// Start calls lambda.Start(Handler(h, opts)); it never returns.
func Start(h http.Handler, opts Options) {
	lambda.Start(Handler(h, opts))
}

func serveV2(ctx context.Context, h http.Handler, ev *events.APIGatewayV2HTTPRequest) HTTPResponse {
	req := newRequest(ctx, ev.RequestContext.HTTP.Method, ev.RawPath, ev.RawQueryString, ev.Body, ev.IsBase64Encoded)
	for name, value := range ev.Headers {
		// AWS joins repeated headers into one comma-separated value. That is the same field
		// value for list headers (RFC 9110, section 5.3), and splitting it again would break
		// the ones whose values contain commas (Date, User-Agent), so it stays one value.
		req.Header.Add(name, value)
	}
	if len(ev.Cookies) > 0 {
		// Payload 2.0 moves cookies out of the headers; a Function URL may also keep the
		// cookie header. One Cookie header, built from the array, avoids counting them twice.
		req.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	finishRequest(req, ev.RequestContext.DomainName, ev.RequestContext.HTTP.SourceIP, ev.RequestContext.HTTP.Protocol)

	w := serve(h, req)
	res := HTTPResponse{StatusCode: w.status, Headers: map[string]string{}}
	for name, values := range w.header {
		if name == "Set-Cookie" {
			res.Cookies = slices.Clone(values)
			continue
		}
		res.Headers[name] = strings.Join(values, ", ")
	}
	res.Body, res.IsBase64Encoded = encodeBody(w.header.Get("Content-Type"), w.body.Bytes())
	return res
}

func serveV1(ctx context.Context, h http.Handler, ev *events.APIGatewayProxyRequest) RESTResponse {
	query := url.Values{}
	if len(ev.MultiValueQueryStringParameters) > 0 {
		for name, values := range ev.MultiValueQueryStringParameters {
			query[name] = slices.Clone(values)
		}
	} else {
		for name, value := range ev.QueryStringParameters {
			query.Set(name, value)
		}
	}
	// v1 events carry the decoded path; escape it again so the request looks as received.
	rawPath := (&url.URL{Path: ev.Path}).EscapedPath()
	req := newRequest(ctx, ev.HTTPMethod, rawPath, query.Encode(), ev.Body, ev.IsBase64Encoded)
	if len(ev.MultiValueHeaders) > 0 {
		for name, values := range ev.MultiValueHeaders {
			for _, value := range values {
				req.Header.Add(name, value)
			}
		}
	} else {
		for name, value := range ev.Headers {
			req.Header.Add(name, value)
		}
	}
	finishRequest(req, ev.RequestContext.DomainName, ev.RequestContext.Identity.SourceIP, ev.RequestContext.Protocol)

	w := serve(h, req)
	res := RESTResponse{StatusCode: w.status, Headers: map[string]string{}}
	for name, values := range w.header {
		if name == "Set-Cookie" {
			// Only multiValueHeaders can carry several Set-Cookie headers in payload 1.0.
			res.MultiValueHeaders = map[string][]string{name: slices.Clone(values)}
			continue
		}
		res.Headers[name] = strings.Join(values, ", ")
	}
	res.Body, res.IsBase64Encoded = encodeBody(w.header.Get("Content-Type"), w.body.Bytes())
	return res
}

// newRequest builds the request with everything but headers and connection details.
func newRequest(ctx context.Context, method, rawPath, rawQuery, body string, isBase64 bool) *http.Request {
	if rawPath == "" {
		rawPath = "/"
	}
	target := rawPath
	if rawQuery != "" {
		target += "?" + rawQuery
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		// AWS does not forward such paths, and the handlers ignore the path anyway: keep the
		// request rather than fail the invocation.
		u = &url.URL{Path: rawPath, RawQuery: rawQuery}
	}

	req := &http.Request{
		Method:     method,
		URL:        u,
		RequestURI: target,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     http.Header{},
		Body:       http.NoBody,
	}
	switch {
	case !isBase64:
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
			req.ContentLength = int64(len(body))
		}
	default:
		decoded, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			// The handler answers this like any unreadable body (a 400 with its usual headers).
			req.Body = io.NopCloser(errReader{fmt.Errorf("lambdaentry: request body is not valid base64: %w", err)})
			req.ContentLength = -1
		} else if len(decoded) > 0 {
			req.Body = io.NopCloser(bytes.NewReader(decoded))
			req.ContentLength = int64(len(decoded))
		}
	}
	return req.WithContext(ctx)
}

// finishRequest sets what net/http's server would: Host out of the header map, the peer
// address and the protocol version.
func finishRequest(req *http.Request, domainName, sourceIP, protocol string) {
	req.Host = req.Header.Get("Host")
	if req.Host == "" {
		req.Host = domainName
	}
	req.Header.Del("Host")
	// The client address alone: AWS does not pass the client's port.
	req.RemoteAddr = sourceIP
	if major, minor, ok := http.ParseHTTPVersion(protocol); ok {
		req.Proto, req.ProtoMajor, req.ProtoMinor = protocol, major, minor
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// serve runs h and returns what it wrote.
func serve(h http.Handler, req *http.Request) *responseWriter {
	w := &responseWriter{header: http.Header{}}
	h.ServeHTTP(w, req)
	w.WriteHeader(http.StatusOK) // no-op unless the handler never wrote anything
	if _, named := w.header["Content-Type"]; !named && w.body.Len() > 0 {
		// As net/http does for a handler that names no type (an empty value opts out).
		w.header.Set("Content-Type", http.DetectContentType(w.body.Bytes()))
	}
	return w
}

// responseWriter buffers a response. Like net/http's, it keeps the headers as they were when
// the status was written: later changes to the map are not sent.
type responseWriter struct {
	live   http.Header // what Header() returns
	header http.Header // the snapshot taken at WriteHeader
	status int
	body   bytes.Buffer
}

func (w *responseWriter) Header() http.Header {
	if w.live == nil {
		w.live = http.Header{}
	}
	return w.live
}

func (w *responseWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		// Informational responses cannot be relayed through a buffered response.
		return
	}
	w.status = code
	w.header = w.Header().Clone()
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush does nothing: the response is sent when the handler returns.
func (w *responseWriter) Flush() {}

// encodeBody returns the body as Lambda wants it: as text when it is valid UTF-8 of a textual
// type, else base64 (which API Gateway and Function URLs decode before sending).
func encodeBody(contentType string, body []byte) (string, bool) {
	if len(body) == 0 {
		return "", false
	}
	if isTextual(contentType) && utf8.Valid(body) {
		return string(body), false
	}
	return base64.StdEncoding.EncodeToString(body), true
}

func isTextual(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	if strings.HasPrefix(mediaType, "text/") ||
		strings.HasSuffix(mediaType, "+json") || strings.HasSuffix(mediaType, "+xml") {
		return true
	}
	switch mediaType {
	case "application/json", "application/x-ndjson", "application/xml",
		"application/javascript", "application/x-www-form-urlencoded", "application/yaml":
		return true
	}
	return false
}

// topLevelKeys lists the keys of a JSON object (at most 10), for an error message.
func topLevelKeys(raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "(not a JSON object)"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 10 {
		keys = append(keys[:10], "...")
	}
	return "[" + strings.Join(keys, " ") + "]"
}
