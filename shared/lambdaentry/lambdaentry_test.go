package lambdaentry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// echoed is what echoHandler saw of the request.
type echoed struct {
	Method        string
	Path          string
	EscapedPath   string
	RawQuery      string
	Query         url.Values
	RequestURI    string
	Host          string
	RemoteAddr    string
	Proto         string
	Header        http.Header
	Body          string
	BodyErr       string
	ContentLength int64
	Deadline      time.Time
	HasDeadline   bool
}

// echoHandler answers with a JSON description of the request it received.
var echoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	e := echoed{
		Method: r.Method, Path: r.URL.Path, EscapedPath: r.URL.EscapedPath(),
		RawQuery: r.URL.RawQuery, Query: r.URL.Query(), RequestURI: r.RequestURI,
		Host: r.Host, RemoteAddr: r.RemoteAddr, Proto: r.Proto, Header: r.Header,
		Body: string(body), ContentLength: r.ContentLength,
	}
	if err != nil {
		e.BodyErr = err.Error()
	}
	e.Deadline, e.HasDeadline = r.Context().Deadline()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(e)
})

func readEvent(t *testing.T, name string) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// invokeEcho feeds a saved event through Handler(echoHandler) under a context with a deadline,
// as Lambda's is, and returns the response and what the handler saw.
func invokeEcho(t *testing.T, name string) (any, echoed, time.Time) {
	t.Helper()
	deadline := time.Date(2026, 11, 22, 9, 30, 27, 0, time.UTC)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)
	res, err := Handler(echoHandler, Options{})(ctx, readEvent(t, name))
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	var body string
	switch res := res.(type) {
	case HTTPResponse:
		if res.IsBase64Encoded {
			t.Fatalf("JSON answer sent as base64: %q", res.Body)
		}
		body = res.Body
	case RESTResponse:
		body = res.Body
	default:
		t.Fatalf("response type %T", res)
	}
	var got echoed
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("decode echo %q: %v", body, err)
	}
	return res, got, deadline
}

func assertEqual[T any](t *testing.T, field string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", field, got, want)
	}
}

func TestFunctionURLRequest(t *testing.T) {
	t.Parallel()
	res, got, deadline := invokeEcho(t, "function-url-request.json")

	assertEqual(t, "Method", got.Method, "POST")
	assertEqual(t, "Path", got.Path, "/")
	assertEqual(t, "RawQuery", got.RawQuery, "trace=1&trace=2&q=metric%20units")
	assertEqual(t, "Query", got.Query, url.Values{"trace": {"1", "2"}, "q": {"metric units"}})
	assertEqual(t, "RequestURI", got.RequestURI, "/?trace=1&trace=2&q=metric%20units")
	assertEqual(t, "Host", got.Host, "a1b2c3d4e5f6g7h8i9j0klmnop.lambda-url.eu-west-1.on.aws")
	assertEqual(t, "Header[Host]", got.Header.Values("Host"), []string(nil))
	assertEqual(t, "RemoteAddr", got.RemoteAddr, "203.0.113.7")
	assertEqual(t, "Proto", got.Proto, "HTTP/1.1")
	assertEqual(t, "Body", got.Body, "{\"agent\":\"support-bot\",\"mode\":\"new\"}\n")
	assertEqual(t, "ContentLength", got.ContentLength, int64(37))
	assertEqual(t, "HasDeadline", got.HasDeadline, true)
	assertEqual(t, "Deadline", got.Deadline.Equal(deadline), true)

	// Header names arrive lower-case and are canonicalised; values are kept whole.
	assertEqual(t, "Authorization", got.Header.Values("Authorization"), []string{"Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"})
	assertEqual(t, "Idempotency-Key", got.Header.Values("Idempotency-Key"), []string{"turn-7"})
	assertEqual(t, "X-Request-Id", got.Header.Values("X-Request-Id"), []string{"req-123"})
	assertEqual(t, "X-Custom-List", got.Header.Values("X-Custom-List"), []string{"a,b"})
	assertEqual(t, "Accept-Encoding", got.Header.Values("Accept-Encoding"), []string{"gzip, deflate, br"})
	assertEqual(t, "User-Agent", got.Header.Values("User-Agent"), []string{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)"})
	// The cookie header and the cookies array carry the same cookies: one Cookie header.
	assertEqual(t, "Cookie", got.Header.Values("Cookie"), []string{"theme=dark; sb-session=abc123"})

	v2 := res.(HTTPResponse)
	assertEqual(t, "StatusCode", v2.StatusCode, http.StatusOK)
	assertEqual(t, "Content-Type", v2.Headers["Content-Type"], "application/json")
}

func TestHTTPAPIRequestWithBase64Body(t *testing.T) {
	t.Parallel()
	_, got, _ := invokeEcho(t, "http-api-v2-request-base64-body.json")

	want := `{"session_id":"6f1c2a8e-2b0e-4d4b-9a55-0c9b7f3e1d42","messages":[{"role":"user","content":"Grüße, I prefer metric units."}]}`
	assertEqual(t, "Method", got.Method, "POST")
	assertEqual(t, "Path", got.Path, "/v1/commit-turn")
	assertEqual(t, "RawQuery", got.RawQuery, "")
	assertEqual(t, "RequestURI", got.RequestURI, "/v1/commit-turn")
	assertEqual(t, "Body", got.Body, want)
	assertEqual(t, "BodyErr", got.BodyErr, "")
	assertEqual(t, "ContentLength", got.ContentLength, int64(len(want)))
	assertEqual(t, "Host", got.Host, "k3x9q2w7ab.execute-api.eu-west-1.amazonaws.com")
	assertEqual(t, "RemoteAddr", got.RemoteAddr, "198.51.100.23")
	assertEqual(t, "Content-Type", got.Header.Get("Content-Type"), "application/json; charset=utf-8")
	assertEqual(t, "Cookie", got.Header.Values("Cookie"), []string(nil))
	assertEqual(t, "HasDeadline", got.HasDeadline, true)
}

func TestHTTPAPIPreflight(t *testing.T) {
	t.Parallel()
	_, got, _ := invokeEcho(t, "http-api-v2-preflight.json")

	assertEqual(t, "Method", got.Method, "OPTIONS")
	assertEqual(t, "Path", got.Path, "/v1/recall")
	assertEqual(t, "Body", got.Body, "")
	assertEqual(t, "ContentLength", got.ContentLength, int64(0))
	assertEqual(t, "RemoteAddr", got.RemoteAddr, "2001:db8::7")
	assertEqual(t, "Origin", got.Header.Get("Origin"), "https://app.example.com")
	assertEqual(t, "Access-Control-Request-Method", got.Header.Get("Access-Control-Request-Method"), "POST")
	assertEqual(t, "Access-Control-Request-Headers", got.Header.Get("Access-Control-Request-Headers"), "authorization,content-type,x-request-id")
}

func TestRESTRequest(t *testing.T) {
	t.Parallel()
	res, got, _ := invokeEcho(t, "rest-api-v1-request.json")

	assertEqual(t, "Method", got.Method, "POST")
	assertEqual(t, "Path", got.Path, "/v1/recall")
	assertEqual(t, "Query", got.Query, url.Values{"debug": {"1", "2"}})
	assertEqual(t, "Host", got.Host, "r7t8y9u0io.execute-api.eu-west-1.amazonaws.com")
	assertEqual(t, "RemoteAddr", got.RemoteAddr, "192.0.2.44")
	assertEqual(t, "Body", got.Body, `{"query":"metric","k":3}`)
	assertEqual(t, "ContentLength", got.ContentLength, int64(24))
	assertEqual(t, "X-Tag", got.Header.Values("X-Tag"), []string{"one", "two"})
	assertEqual(t, "X-Request-Id", got.Header.Values("X-Request-Id"), []string{"req-v1"})
	assertEqual(t, "HasDeadline", got.HasDeadline, true)
	if _, ok := res.(RESTResponse); !ok {
		t.Errorf("REST event answered with %T, want RESTResponse", res)
	}
}

func TestRESTResponseCookies(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Header().Add("Vary", "Origin")
		w.Header().Add("Vary", "Accept")
		w.WriteHeader(http.StatusCreated)
	})
	res, err := Handler(h, Options{})(context.Background(), readEvent(t, "rest-api-v1-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := res.(RESTResponse)
	assertEqual(t, "StatusCode", got.StatusCode, http.StatusCreated)
	assertEqual(t, "Headers", got.Headers, map[string]string{"Vary": "Origin, Accept"})
	assertEqual(t, "MultiValueHeaders", got.MultiValueHeaders, map[string][]string{"Set-Cookie": {"a=1", "b=2"}})
}

func TestBadBase64BodyReachesHandler(t *testing.T) {
	t.Parallel()
	raw := readEvent(t, "http-api-v2-request-base64-body.json")
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	ev["body"] = "not base64!"
	raw, _ = json.Marshal(ev)

	res, err := Handler(echoHandler, Options{})(context.Background(), raw)
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	var got echoed
	if err := json.Unmarshal([]byte(res.(HTTPResponse).Body), &got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.BodyErr, "not valid base64") {
		t.Errorf("BodyErr = %q, want a base64 error", got.BodyErr)
	}
	assertEqual(t, "ContentLength", got.ContentLength, int64(-1))
}

func TestResponse(t *testing.T) {
	t.Parallel()
	binary := []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    HTTPResponse
	}{{
		name: "status, repeated headers and cookies",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.Header().Add("Vary", "Origin")
			w.Header().Add("Vary", "Access-Control-Request-Headers")
			w.Header().Set("X-Request-Id", "req-123")
			http.SetCookie(w, &http.Cookie{Name: "a", Value: "1", HttpOnly: true})
			http.SetCookie(w, &http.Cookie{Name: "b", Value: "2"})
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, `{"title":"I'm a teapot","status":418}`)
		},
		want: HTTPResponse{
			StatusCode: http.StatusTeapot,
			Headers: map[string]string{
				"Content-Type": "application/problem+json",
				"Vary":         "Origin, Access-Control-Request-Headers",
				"X-Request-Id": "req-123",
			},
			Cookies: []string{"a=1; HttpOnly", "b=2"},
			Body:    `{"title":"I'm a teapot","status":418}`,
		},
	}, {
		name: "binary body is base64",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(binary)
		},
		want: HTTPResponse{
			StatusCode:      http.StatusOK,
			Headers:         map[string]string{"Content-Type": "image/png"},
			Body:            base64.StdEncoding.EncodeToString(binary),
			IsBase64Encoded: true,
		},
	}, {
		name: "textual type but invalid UTF-8 is base64",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("caf\xe9"))
		},
		want: HTTPResponse{
			StatusCode:      http.StatusOK,
			Headers:         map[string]string{"Content-Type": "text/plain; charset=utf-8"},
			Body:            base64.StdEncoding.EncodeToString([]byte("caf\xe9")),
			IsBase64Encoded: true,
		},
	}, {
		name: "UTF-8 text is sent as is",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/markdown")
			_, _ = io.WriteString(w, "# Grüße\n")
		},
		want: HTTPResponse{
			StatusCode: http.StatusOK,
			Headers:    map[string]string{"Content-Type": "text/markdown"},
			Body:       "# Grüße\n",
		},
	}, {
		name: "untyped body gets a sniffed type",
		handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "hello")
		},
		want: HTTPResponse{
			StatusCode: http.StatusOK,
			Headers:    map[string]string{"Content-Type": "text/plain; charset=utf-8"},
			Body:       "hello",
		},
	}, {
		name:    "handler that writes nothing is a 200",
		handler: func(w http.ResponseWriter, r *http.Request) {},
		want:    HTTPResponse{StatusCode: http.StatusOK, Headers: map[string]string{}},
	}, {
		name: "status only",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.WriteHeader(http.StatusNoContent)
		},
		want: HTTPResponse{
			StatusCode: http.StatusNoContent,
			Headers:    map[string]string{"Access-Control-Allow-Origin": "*"},
		},
	}, {
		name: "headers changed after WriteHeader are not sent",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			w.WriteHeader(http.StatusInternalServerError)
			w.Header().Set("X-Late", "1")
			_, _ = io.WriteString(w, `{}`)
		},
		want: HTTPResponse{
			StatusCode: http.StatusCreated,
			Headers:    map[string]string{"Content-Type": "application/json"},
			Body:       `{}`,
		},
	}, {
		name: "informational status is skipped",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusAccepted)
		},
		want: HTTPResponse{StatusCode: http.StatusAccepted, Headers: map[string]string{}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Handler(tc.handler, Options{})(context.Background(), readEvent(t, "function-url-request.json"))
			if err != nil {
				t.Fatal(err)
			}
			assertEqual(t, "response", res, any(tc.want))
		})
	}
}

// TestThroughRuntime invokes through aws-lambda-go's own handler adapter, so the signature is
// one lambda.Start accepts and the JSON on the wire has the fields Function URLs read.
func TestThroughRuntime(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Set-Cookie", "a=1")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	out, err := lambda.NewHandler(Handler(h, Options{})).Invoke(context.Background(), readEvent(t, "function-url-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	if err := json.Unmarshal(out, &wire); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	assertEqual(t, "statusCode", wire["statusCode"], any(float64(201)))
	assertEqual(t, "body", wire["body"], any(`{"ok":true}`))
	assertEqual(t, "cookies", wire["cookies"], any([]any{"a=1"}))
	assertEqual(t, "headers", wire["headers"], any(map[string]any{"Content-Type": "application/json"}))
}

// No answer, of either payload version, carries a null field: an empty one is left out.
func TestResponsesHaveNoNullFields(t *testing.T) {
	t.Parallel()
	plain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	for _, name := range []string{"function-url-request.json", "http-api-v2-request-base64-body.json", "http-api-v2-preflight.json", "rest-api-v1-request.json"} {
		out, err := lambda.NewHandler(Handler(plain, Options{})).Invoke(context.Background(), readEvent(t, name))
		if err != nil {
			t.Fatal(err)
		}
		var wire map[string]any
		if err := json.Unmarshal(out, &wire); err != nil {
			t.Fatalf("%s: decode %s: %v", name, out, err)
		}
		for k, v := range wire {
			if v == nil {
				t.Errorf("%s: %q is null in %s", name, k, out)
			}
		}
		if wire["statusCode"] != float64(200) || wire["body"] != `{"ok":true}` || wire["isBase64Encoded"] != false {
			t.Errorf("%s: %s", name, out)
		}
	}
}

func TestScheduledEvent(t *testing.T) {
	t.Parallel()
	raw := readEvent(t, "eventbridge-scheduled-event.json")
	httpCalled := false
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { httpCalled = true })

	t.Run("handled by Scheduled", func(t *testing.T) {
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "invocation")
		var seen events.EventBridgeEvent
		opts := Options{Scheduled: func(ctx context.Context, ev events.EventBridgeEvent) (any, error) {
			if ctx.Value(key{}) != "invocation" {
				t.Error("Scheduled did not get the invocation context")
			}
			seen = ev
			return map[string]int{"deleted": 3}, nil
		}}
		res, err := Handler(h, opts)(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "result", res, any(map[string]int{"deleted": 3}))
		assertEqual(t, "ID", seen.ID, "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa")
		assertEqual(t, "DetailType", seen.DetailType, "Scheduled Event")
		assertEqual(t, "Source", seen.Source, "aws.events")
		assertEqual(t, "Time", seen.Time, time.Date(2026, 11, 22, 9, 45, 0, 0, time.UTC))
		assertEqual(t, "Detail", string(seen.Detail), "{}")
	})
	t.Run("error from Scheduled is the invocation's", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := Handler(h, Options{Scheduled: func(context.Context, events.EventBridgeEvent) (any, error) {
			return nil, boom
		}})(context.Background(), raw)
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want %v", err, boom)
		}
	})
	t.Run("without Scheduled it is an error", func(t *testing.T) {
		_, err := Handler(h, Options{})(context.Background(), raw)
		if !errors.Is(err, ErrUnsupportedEvent) {
			t.Errorf("err = %v, want ErrUnsupportedEvent", err)
		}
	})
	if httpCalled {
		t.Error("a scheduled event reached the HTTP handler")
	}
}

func TestUnsupportedEvents(t *testing.T) {
	t.Parallel()
	for name, raw := range map[string]string{
		"not JSON":           `{"version":`,
		"array":              `[]`,
		"string":             `"hello"`,
		"null":               `null`,
		"empty object":       `{}`,
		"v2 without method":  `{"version":"2.0","rawPath":"/","requestContext":{}}`,
		"other EventBridge":  `{"version":"0","source":"aws.s3","detail-type":"Object Created","detail":{}}`,
		"S3 notification":    `{"Records":[{"eventSource":"aws:s3","s3":{"bucket":{"name":"b"}}}]}`,
		"SQS batch":          `{"Records":[{"messageId":"1","body":"secret content","eventSource":"aws:sqs"}]}`,
		"method of bad type": `{"httpMethod":7}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			called := false
			h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })
			sched := func(context.Context, events.EventBridgeEvent) (any, error) {
				called = true
				return nil, nil
			}
			res, err := Handler(h, Options{Scheduled: sched})(context.Background(), json.RawMessage(raw))
			if !errors.Is(err, ErrUnsupportedEvent) {
				t.Errorf("err = %v, want ErrUnsupportedEvent", err)
			}
			// Lambda reports the error's type name (its pointee's, for a pointer) as errorType.
			var ee *EventError
			if typ := reflect.TypeOf(err); !errors.As(err, &ee) || typ.Kind() != reflect.Pointer || typ.Elem().Name() != "EventError" {
				t.Errorf("error of type %v, want *EventError (errorType EventError)", typ)
			}
			if res != nil || called {
				t.Errorf("res = %v, called = %v; want nothing run", res, called)
			}
			if err != nil && strings.Contains(err.Error(), "secret content") {
				t.Errorf("error %q repeats event content", err)
			}
		})
	}
}

func FuzzHandler(f *testing.F) {
	for _, name := range []string{"function-url-request.json", "http-api-v2-request-base64-body.json",
		"http-api-v2-preflight.json", "rest-api-v1-request.json", "eventbridge-scheduled-event.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"version":"2.0","rawPath":"%zz","rawQueryString":"a=%","requestContext":{"http":{"method":"POST"}}}`))
	handler := Handler(echoHandler, Options{Scheduled: func(context.Context, events.EventBridgeEvent) (any, error) {
		return "ok", nil
	}})
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := handler(context.Background(), raw)
		if err == nil && res == nil {
			t.Fatal("nil response without an error")
		}
		if v2, ok := res.(HTTPResponse); ok && v2.StatusCode != http.StatusOK {
			t.Fatalf("echo handler answered %d", v2.StatusCode)
		}
	})
}

// ProcessJobsEvent, what a function that wrote jobs sends process-jobs, goes to Scheduled like
// a scheduled event, and is refused by a function that takes none.
func TestProcessJobsEvent(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the event reached the HTTP handler") })
	var seen events.EventBridgeEvent
	res, err := Handler(h, Options{Scheduled: func(_ context.Context, ev events.EventBridgeEvent) (any, error) {
		seen = ev
		return "ran", nil
	}})(context.Background(), ProcessJobsEvent)
	if err != nil || res != "ran" {
		t.Fatalf("res %v, err %v", res, err)
	}
	assertEqual(t, "Source", seen.Source, "agentmem")
	assertEqual(t, "DetailType", seen.DetailType, "Process Jobs")
	if _, err := Handler(h, Options{})(context.Background(), ProcessJobsEvent); !errors.Is(err, ErrUnsupportedEvent) {
		t.Errorf("without Scheduled: %v", err)
	}
	// Another source with that detail type is not it.
	if _, err := Handler(h, Options{Scheduled: func(context.Context, events.EventBridgeEvent) (any, error) {
		return nil, nil
	}})(context.Background(), json.RawMessage(`{"source":"someone","detail-type":"Process Jobs"}`)); !errors.Is(err, ErrUnsupportedEvent) {
		t.Errorf("another source: %v", err)
	}
}
