package lambdainvoke_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/agentmem/agentmem/shared/lambdaentry"
	"github.com/agentmem/agentmem/shared/lambdainvoke"
)

// fakeLambda speaks Lambda's Invoke API: POST /2015-03-31/functions/<name>/invocations,
// signed with Signature Version 4, the invocation type in X-Amz-Invocation-Type; an
// asynchronous invocation answers 202 with no body.
type fakeLambda struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
	status   int
}

func (f *fakeLambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r)
	f.bodies = append(f.bodies, body)
	status := f.status
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "8f5c2a4e-0000-4000-8000-000000000001")
	if status != http.StatusAccepted {
		w.Header().Set("X-Amzn-Errortype", "ServiceException")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"Type":"Service","Message":"boom"}`))
		return
	}
	w.WriteHeader(status)
}

func newInvoker(t *testing.T, url string, log *slog.Logger) *lambdainvoke.Invoker {
	t.Helper()
	inv, err := lambdainvoke.New(t.Context(), lambdainvoke.Config{Function: "agentmem-ProcessJobsFunction-abc",
		Region: "eu-west-1", BaseEndpoint: url, Log: log,
		AWS: &aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestInvokeSendsTheProcessJobsEventAsynchronously(t *testing.T) {
	t.Parallel()
	f := &fakeLambda{status: http.StatusAccepted}
	srv := httptest.NewServer(f)
	defer srv.Close()
	inv := newInvoker(t, srv.URL, nil)
	if err := inv.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	inv.Notify(t.Context())
	if len(f.requests) != 2 {
		t.Fatalf("%d requests", len(f.requests))
	}
	r := f.requests[0]
	if r.Method != http.MethodPost || r.URL.Path != "/2015-03-31/functions/agentmem-ProcessJobsFunction-abc/invocations" ||
		r.Header.Get("X-Amz-Invocation-Type") != "Event" ||
		!strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") ||
		!strings.Contains(r.Header.Get("Authorization"), "/eu-west-1/lambda/aws4_request") {
		t.Errorf("request %s %s, headers %v", r.Method, r.URL.Path, r.Header)
	}
	if !bytes.Equal(f.bodies[0], lambdaentry.ProcessJobsEvent) {
		t.Errorf("payload %s", f.bodies[0])
	}
}

// A failed invocation is an error to Invoke and a warning to Notify: the change that wrote the
// jobs still succeeds, and the schedule delivers them.
func TestNotifyNeverFailsTheChange(t *testing.T) {
	t.Parallel()
	f := &fakeLambda{status: http.StatusInternalServerError}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var buf bytes.Buffer
	inv := newInvoker(t, srv.URL, slog.New(slog.NewJSONHandler(&buf, nil)))
	if err := inv.Invoke(t.Context()); err == nil {
		t.Error("a 500 was taken for an invocation")
	}
	inv.Notify(t.Context())
	if !strings.Contains(buf.String(), "could not start process-jobs") {
		t.Errorf("log %q", buf.String())
	}
	srv.Close()
	if err := inv.Invoke(t.Context()); err == nil {
		t.Error("an unreachable endpoint was taken for an invocation")
	}
}
